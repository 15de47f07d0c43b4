-- Scheduling (issue 16). A job's scheduling state in one JSON column (`sched_state`, read by
-- store/models.rs, every key optional): its eligible time (OpenPBS `eligible_time`: seconds
-- accrued up to the last stop of its clock, and when the clock last started), when the
-- scheduler last preempted it (`sched_preempted`), and whether its node shares are given back
-- (`shares_released`: suspended by the scheduler, or being requeued for a preemptor), so a
-- restart does not take them again. One column, not four: diesel's tables stop at 32 columns
-- without its much slower to compile 64-column feature.
-- And the decayed fair-share usage of users and groups (weighted resource-hours as of `stamp`;
-- a user's `grp` is the group of its last charged job). Portable SQL (SQLite and PostgreSQL).
ALTER TABLE jobs ADD COLUMN sched_state TEXT NOT NULL DEFAULT '{}';

CREATE TABLE fairshare_usage (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    usage DOUBLE PRECISION NOT NULL,
    stamp BIGINT NOT NULL,
    grp TEXT NOT NULL,
    PRIMARY KEY (kind, name)
);
