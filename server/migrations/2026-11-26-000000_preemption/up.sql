-- Preemption (issue 16): when the scheduler last preempted a job (OpenPBS `sched_preempted`),
-- and whether an active job's node shares are given back (suspended by the scheduler, or
-- being requeued for a preemptor), so a restart does not take them again. Portable SQL.
ALTER TABLE jobs ADD COLUMN sched_preempted BIGINT;
ALTER TABLE jobs ADD COLUMN shares_released BOOLEAN NOT NULL DEFAULT FALSE;
