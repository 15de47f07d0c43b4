ALTER TABLE jobs DROP COLUMN shares_released;
ALTER TABLE jobs DROP COLUMN sched_preempted;
