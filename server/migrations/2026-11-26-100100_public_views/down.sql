DROP VIEW queues;
DROP VIEW nodes;
DROP VIEW job_hosts;
DROP VIEW job_history;
DROP VIEW jobs;
