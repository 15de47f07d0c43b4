ALTER TABLE jobs DROP COLUMN rerun_requested;
