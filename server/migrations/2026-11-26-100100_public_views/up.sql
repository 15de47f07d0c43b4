-- Read-only views for SQL clients (docs/sql.md), part 2: the public views, portable SQL over
-- the `minipbs_*` views of the step before. Column names are OpenPBS attribute names; the
-- columns and their types are the same on SQLite and PostgreSQL. No view has a job's script,
-- environment (`Variable_List`), paths or interactive secret (store/tests/view_columns.rs checks).

-- Jobs not finished (array parents included, as qstat shows them), by id.
CREATE VIEW jobs AS
SELECT "Job_Id", "Job_Name", "Job_Owner", "job_state", "queue", "ctime",
       "qtime", "mtime", "etime", "stime", "obittime", "exec_host",
       "Resource_List", "Resource_List.select", "Resource_List.nodes", "Resource_List.ncpus", "Resource_List.ngpus", "Resource_List.mem",
       "Resource_List.walltime", "resources_used.cput", "resources_used.walltime", "resources_used.mem", "resources_used.ncpus", "Exit_status",
       "comment", "run_count", "Hold_Types", "Priority", "Account_Name", "euser",
       "egroup"
  FROM minipbs_job_rows WHERE job_state NOT IN ('F', 'X');

-- Finished jobs (`F`, and `X`: finished subjobs), as `qstat -x` shows them.
CREATE VIEW job_history AS
SELECT "Job_Id", "Job_Name", "Job_Owner", "job_state", "queue", "ctime",
       "qtime", "mtime", "etime", "stime", "obittime", "exec_host",
       "Resource_List", "Resource_List.select", "Resource_List.nodes", "Resource_List.ncpus", "Resource_List.ngpus", "Resource_List.mem",
       "Resource_List.walltime", "resources_used.cput", "resources_used.walltime", "resources_used.mem", "resources_used.ncpus", "Exit_status",
       "comment", "run_count", "Hold_Types", "Priority", "Account_Name", "euser",
       "egroup"
  FROM minipbs_job_rows WHERE job_state IN ('F', 'X');

-- One row per node of each job's allocation (running or not: a finished job keeps its last).
CREATE VIEW job_hosts AS
SELECT r."Job_Id", s.node, s.ncpus, s.ngpus, s.mem
  FROM minipbs_job_shares s JOIN minipbs_job_rows r ON r.seq = s.seq;

-- The nodes as registered (qmgr), with what the running jobs hold on each. Whether a node is
-- up is not stored: only `offline`.
CREATE VIEW nodes AS
SELECT n.name AS "name",
       n.np AS "resources_available.ncpus",
       n.mem_bytes AS "resources_available.mem",
       n.ngpus AS "resources_available.ngpus",
       n.properties AS "properties",
       n.offline AS "offline",
       n.comment AS "comment",
       COALESCE(h.ncpus, 0) AS "resources_assigned.ncpus",
       COALESCE(h.ngpus, 0) AS "resources_assigned.ngpus",
       h.jobs AS "jobs"
  FROM node_records n LEFT JOIN minipbs_node_jobs h ON h.node = n.name;

-- The queues (qmgr), their attributes in qmgr's text, and their jobs counted as qstat -Q does
-- (a running array parent, `B`, is counted by its subjobs).
CREATE VIEW queues AS
SELECT a.queue AS "name",
       CAST(MAX(CASE WHEN a.name = 'Priority' THEN a.value END) AS BIGINT) AS "Priority",
       MAX(CASE WHEN a.name = 'queue_type' THEN a.value END) AS "queue_type",
       MAX(CASE WHEN a.name = 'enabled' THEN a.value END) AS "enabled",
       MAX(CASE WHEN a.name = 'started' THEN a.value END) AS "started",
       MAX(CASE WHEN a.name = 'max_queued' THEN a.value END) AS "max_queued",
       MAX(CASE WHEN a.name = 'max_run' THEN a.value END) AS "max_run",
       MAX(CASE WHEN a.name = 'acl_user_enable' THEN a.value END) AS "acl_user_enable",
       MAX(CASE WHEN a.name = 'acl_users' THEN a.value END) AS "acl_users",
       MAX(CASE WHEN a.name = 'backfill_depth' THEN a.value END) AS "backfill_depth",
       MAX(CASE WHEN a.name = 'resources_max.ncpus' THEN a.value END) AS "resources_max.ncpus",
       MAX(CASE WHEN a.name = 'resources_max.mem' THEN a.value END) AS "resources_max.mem",
       MAX(CASE WHEN a.name = 'resources_max.ngpus' THEN a.value END) AS "resources_max.ngpus",
       MAX(CASE WHEN a.name = 'resources_max.walltime' THEN a.value END) AS "resources_max.walltime",
       MAX(CASE WHEN a.name = 'resources_min.walltime' THEN a.value END) AS "resources_min.walltime",
       MAX(CASE WHEN a.name = 'resources_default.ncpus' THEN a.value END) AS "resources_default.ncpus",
       MAX(CASE WHEN a.name = 'resources_default.mem' THEN a.value END) AS "resources_default.mem",
       MAX(CASE WHEN a.name = 'resources_default.walltime' THEN a.value END) AS "resources_default.walltime",
       c.total AS "total_jobs",
       'Transit:0 Queued:' || c.queued || ' Held:' || c.held || ' Waiting:' || c.waiting
         || ' Running:' || c.running || ' Exiting:' || c.exiting || ' Begun:0 ' AS "state_count"
  FROM queue_attrs a
  JOIN (SELECT q.queue,
               COUNT(j.seq) AS total,
               COUNT(CASE WHEN j.state = 'Q' THEN 1 END) AS queued,
               COUNT(CASE WHEN j.state = 'H' THEN 1 END) AS held,
               COUNT(CASE WHEN j.state = 'W' THEN 1 END) AS waiting,
               COUNT(CASE WHEN j.state IN ('R', 'S') THEN 1 END) AS running,
               COUNT(CASE WHEN j.state = 'E' THEN 1 END) AS exiting
          FROM (SELECT DISTINCT queue FROM queue_attrs) q
          LEFT JOIN job_records j ON j.queue = q.queue AND j.state IN ('Q', 'H', 'W', 'R', 'S', 'E')
         GROUP BY q.queue) c ON c.queue = a.queue
 GROUP BY a.queue, c.total, c.queued, c.held, c.waiting, c.running, c.exiting;
