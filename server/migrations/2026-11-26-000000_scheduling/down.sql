DROP TABLE fairshare_usage;
ALTER TABLE jobs DROP COLUMN sched_state;
