-- SQLite only (json_extract, json_each, a recursive split); up.postgresql.sql is the same step
-- for PostgreSQL. Read-only views for SQL clients (docs/sql.md), part 1: what needs a dialect.
-- The job table becomes `job_records` (the view `jobs` takes its name; the store's Rust code
-- still calls it `jobs`, schema.rs maps the name). `node_records` is the node list as a table
-- (the server still loads it from `meta`; it writes both and refills this one at each start).
-- The `minipbs_*` views are the dialect-specific parts the public views (next step) are built
-- on: not an interface, and never granted to readers.
ALTER TABLE jobs RENAME TO job_records;

CREATE TABLE node_records (
    name TEXT PRIMARY KEY NOT NULL,
    np BIGINT NOT NULL,
    mem_bytes BIGINT NOT NULL,
    ngpus BIGINT NOT NULL,
    properties TEXT NOT NULL,
    offline BOOLEAN NOT NULL,
    comment TEXT
);

-- One row per node share of each job's allocation (`exec_hosts`, store/exec_hosts.rs:
-- `node|slots|gpus|mem_bytes|mpiprocs...` joined by `;`), numbered from 1 in order.
CREATE VIEW minipbs_job_shares AS
WITH RECURSIVE split(seq, ord, share, rest) AS (
    SELECT seq, 0, NULL, exec_hosts || ';' FROM job_records WHERE exec_hosts <> ''
    UNION ALL
    SELECT seq, ord + 1, substr(rest, 1, instr(rest, ';') - 1), substr(rest, instr(rest, ';') + 1)
      FROM split WHERE rest <> ''
),
node AS (
    SELECT seq, ord, substr(share, 1, instr(share, '|') - 1) AS node, substr(share, instr(share, '|') + 1) AS r1
      FROM split WHERE share IS NOT NULL
),
slots AS (
    SELECT seq, ord, node, substr(r1, 1, instr(r1, '|') - 1) AS slots, substr(r1, instr(r1, '|') + 1) AS r2 FROM node
),
gpus AS (
    SELECT seq, ord, node, slots, substr(r2, 1, instr(r2, '|') - 1) AS gpus, substr(r2, instr(r2, '|') + 1) AS r3
      FROM slots
)
SELECT seq, ord, node,
       CASE WHEN slots = '' THEN 0 ELSE length(slots) - length(replace(slots, ',', '')) + 1 END AS ncpus,
       CASE WHEN gpus = '' THEN 0 ELSE length(gpus) - length(replace(gpus, ',', '')) + 1 END AS ngpus,
       CAST(substr(r3, 1, instr(r3 || '|', '|') - 1) AS BIGINT) AS mem,
       CAST(substr(slots, 1, instr(slots || ',', ',') - 1) AS BIGINT) AS first_slot
  FROM gpus;

-- Every job with its attributes (the public views select from it): a subjob's spec is its
-- array parent's row's.
CREATE VIEW minipbs_job_rows AS
SELECT r.seq,
       (r.seq / 4294967296)
         || CASE WHEN r.seq % 4294967296 > 0 THEN '[' || (r.seq % 4294967296 - 1) || ']'
                 WHEN json_extract(r.spec, '$.array') IS NOT NULL THEN '[]'
                 ELSE '' END
         || COALESCE('.' || (SELECT value FROM meta WHERE key = 'server_name'), '') AS "Job_Id",
       json_extract(r.spec, '$.name') AS "Job_Name",
       r.owner || '@' || json_extract(r.spec, '$.submit_host') AS "Job_Owner",
       r.state AS "job_state",
       r.queue AS "queue",
       r.ctime AS "ctime", r.qtime AS "qtime", r.mtime AS "mtime", r.etime AS "etime",
       r.stime AS "stime", r.obittime AS "obittime",
       (SELECT group_concat(host, '+') FROM (
            SELECT node || '/' || COALESCE(first_slot, 0) || CASE WHEN ncpus > 1 THEN '*' || ncpus ELSE '' END AS host
              FROM minipbs_job_shares s WHERE s.seq = r.seq ORDER BY ord)) AS "exec_host",
       (SELECT group_concat(json_extract(value, '$[0]') || '=' || json_extract(value, '$[1]'), ',')
          FROM json_each(r.spec, '$.resources')) AS "Resource_List",
       (SELECT json_extract(value, '$[1]') FROM json_each(r.spec, '$.resources')
         WHERE lower(json_extract(value, '$[0]')) = 'select' LIMIT 1) AS "Resource_List.select",
       (SELECT json_extract(value, '$[1]') FROM json_each(r.spec, '$.resources')
         WHERE lower(json_extract(value, '$[0]')) = 'nodes' LIMIT 1) AS "Resource_List.nodes",
       (SELECT json_extract(value, '$[1]') FROM json_each(r.spec, '$.resources')
         WHERE lower(json_extract(value, '$[0]')) = 'ncpus' LIMIT 1) AS "Resource_List.ncpus",
       (SELECT json_extract(value, '$[1]') FROM json_each(r.spec, '$.resources')
         WHERE lower(json_extract(value, '$[0]')) = 'ngpus' LIMIT 1) AS "Resource_List.ngpus",
       (SELECT json_extract(value, '$[1]') FROM json_each(r.spec, '$.resources')
         WHERE lower(json_extract(value, '$[0]')) = 'mem' LIMIT 1) AS "Resource_List.mem",
       (SELECT json_extract(value, '$[1]') FROM json_each(r.spec, '$.resources')
         WHERE lower(json_extract(value, '$[0]')) = 'walltime' LIMIT 1) AS "Resource_List.walltime",
       r.used_cput AS "resources_used.cput",
       r.used_walltime AS "resources_used.walltime",
       r.used_mem_kb AS "resources_used.mem",
       r.used_ncpus AS "resources_used.ncpus",
       r.exit_status AS "Exit_status",
       r.comment AS "comment",
       r.run_count AS "run_count",
       r.hold_types AS "Hold_Types",
       CAST(json_extract(r.spec, '$.priority') AS BIGINT) AS "Priority",
       json_extract(r.spec, '$.account') AS "Account_Name",
       r.owner AS "euser",
       r.grp AS "egroup"
  FROM (SELECT j.*, COALESCE(NULLIF(j.spec_json, ''), p.spec_json) AS spec
          FROM job_records j
          LEFT JOIN job_records p ON j.spec_json = '' AND p.seq = j.seq - j.seq % 4294967296) r;

-- What each node holds now: the jobs running, suspended or exiting on it, and their shares.
-- One pass over the shares (a subquery per node took seconds on a long history).
CREATE VIEW minipbs_node_jobs AS
SELECT node, group_concat(job_id, ', ') AS jobs, SUM(ncpus) AS ncpus, SUM(ngpus) AS ngpus
  FROM (SELECT p.node, r."Job_Id" AS job_id, p.ncpus, p.ngpus
          FROM (SELECT s.node, s.seq, SUM(s.ncpus) AS ncpus, SUM(s.ngpus) AS ngpus
                  FROM minipbs_job_shares s JOIN job_records j ON j.seq = s.seq
                 WHERE j.state IN ('R', 'S', 'E')
                 GROUP BY s.node, s.seq) p
          JOIN minipbs_job_rows r ON r.seq = p.seq
         ORDER BY p.node, p.seq) held
 GROUP BY node;
