DROP VIEW minipbs_node_jobs;
DROP VIEW minipbs_job_rows;
DROP VIEW minipbs_job_shares;
DROP TABLE node_records;
ALTER TABLE job_records RENAME TO jobs;
