-- up.sqlite.sql for PostgreSQL: the same table rename, node table and `minipbs_*` views, with
-- PostgreSQL's JSON and string functions; the views have the same columns and types.
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

CREATE VIEW minipbs_job_shares AS
SELECT seq, ord, node,
       CASE WHEN slots = '' THEN 0 ELSE length(slots) - length(replace(slots, ',', '')) + 1 END::BIGINT AS ncpus,
       CASE WHEN gpus = '' THEN 0 ELSE length(gpus) - length(replace(gpus, ',', '')) + 1 END::BIGINT AS ngpus,
       CAST(NULLIF(mem, '') AS BIGINT) AS mem,
       CAST(NULLIF(split_part(slots, ',', 1), '') AS BIGINT) AS first_slot
  FROM (SELECT j.seq, s.ord,
               split_part(s.share, '|', 1) AS node,
               split_part(s.share, '|', 2) AS slots,
               split_part(s.share, '|', 3) AS gpus,
               split_part(s.share, '|', 4) AS mem
          FROM job_records j,
               unnest(string_to_array(j.exec_hosts, ';')) WITH ORDINALITY AS s(share, ord)
         WHERE j.exec_hosts <> '') shares;

CREATE VIEW minipbs_job_rows AS
SELECT r.seq,
       (r.seq / 4294967296)
         || CASE WHEN r.seq % 4294967296 > 0 THEN '[' || (r.seq % 4294967296 - 1) || ']'
                 WHEN r.spec ->> 'array' IS NOT NULL THEN '[]'
                 ELSE '' END
         || COALESCE('.' || (SELECT value FROM meta WHERE key = 'server_name'), '') AS "Job_Id",
       r.spec ->> 'name' AS "Job_Name",
       r.owner || '@' || (r.spec ->> 'submit_host') AS "Job_Owner",
       r.state AS "job_state",
       r.queue AS "queue",
       r.ctime AS "ctime", r.qtime AS "qtime", r.mtime AS "mtime", r.etime AS "etime",
       r.stime AS "stime", r.obittime AS "obittime",
       (SELECT string_agg(node || '/' || COALESCE(first_slot, 0) || CASE WHEN ncpus > 1 THEN '*' || ncpus ELSE '' END,
                          '+' ORDER BY ord)
          FROM minipbs_job_shares s WHERE s.seq = r.seq) AS "exec_host",
       (SELECT string_agg((e.pair ->> 0) || '=' || (e.pair ->> 1), ',' ORDER BY e.n)
          FROM jsonb_array_elements(r.spec -> 'resources') WITH ORDINALITY AS e(pair, n)) AS "Resource_List",
       (SELECT e ->> 1 FROM jsonb_array_elements(r.spec -> 'resources') e
         WHERE lower(e ->> 0) = 'select' LIMIT 1) AS "Resource_List.select",
       (SELECT e ->> 1 FROM jsonb_array_elements(r.spec -> 'resources') e
         WHERE lower(e ->> 0) = 'nodes' LIMIT 1) AS "Resource_List.nodes",
       (SELECT e ->> 1 FROM jsonb_array_elements(r.spec -> 'resources') e
         WHERE lower(e ->> 0) = 'ncpus' LIMIT 1) AS "Resource_List.ncpus",
       (SELECT e ->> 1 FROM jsonb_array_elements(r.spec -> 'resources') e
         WHERE lower(e ->> 0) = 'ngpus' LIMIT 1) AS "Resource_List.ngpus",
       (SELECT e ->> 1 FROM jsonb_array_elements(r.spec -> 'resources') e
         WHERE lower(e ->> 0) = 'mem' LIMIT 1) AS "Resource_List.mem",
       (SELECT e ->> 1 FROM jsonb_array_elements(r.spec -> 'resources') e
         WHERE lower(e ->> 0) = 'walltime' LIMIT 1) AS "Resource_List.walltime",
       r.used_cput AS "resources_used.cput",
       r.used_walltime AS "resources_used.walltime",
       r.used_mem_kb AS "resources_used.mem",
       r.used_ncpus AS "resources_used.ncpus",
       r.exit_status AS "Exit_status",
       r.comment AS "comment",
       r.run_count AS "run_count",
       r.hold_types AS "Hold_Types",
       CAST(r.spec ->> 'priority' AS BIGINT) AS "Priority",
       r.spec ->> 'account' AS "Account_Name",
       r.owner AS "euser",
       r.grp AS "egroup"
  FROM (SELECT j.*, CAST(COALESCE(NULLIF(j.spec_json, ''), p.spec_json) AS JSONB) AS spec
          FROM job_records j
          LEFT JOIN job_records p ON j.spec_json = '' AND p.seq = j.seq - j.seq % 4294967296) r;

CREATE VIEW minipbs_node_jobs AS
SELECT p.node, string_agg(r."Job_Id", ', ' ORDER BY p.seq) AS jobs,
       SUM(p.ncpus)::BIGINT AS ncpus, SUM(p.ngpus)::BIGINT AS ngpus
  FROM (SELECT s.node, s.seq, SUM(s.ncpus) AS ncpus, SUM(s.ngpus) AS ngpus
          FROM minipbs_job_shares s JOIN job_records j ON j.seq = s.seq
         WHERE j.state IN ('R', 'S', 'E')
         GROUP BY s.node, s.seq) p
  JOIN minipbs_job_rows r ON r.seq = p.seq
 GROUP BY p.node;
