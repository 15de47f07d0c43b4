DROP TABLE fairshare_usage;
ALTER TABLE jobs DROP COLUMN eligible_since;
ALTER TABLE jobs DROP COLUMN eligible_time;
