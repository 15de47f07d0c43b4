-- SQLite only (json_extract, json_set); up.postgresql.sql is the same step for PostgreSQL.
-- Job scripts leave the spec (which the server keeps in memory) for a column of their own,
-- read only when a job starts; `script_bytes` is its size, which the server keeps in memory
-- for the per-user quota. A subjob row has no script: it runs its parent's (one that kept
-- its own spec after qalter of its array keeps its own script too).
ALTER TABLE jobs ADD COLUMN script TEXT;
ALTER TABLE jobs ADD COLUMN script_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE jobs
   SET script = json_extract(spec_json, '$.script'),
       script_bytes = length(CAST(json_extract(spec_json, '$.script') AS BLOB)),
       spec_json = json_set(spec_json, '$.script', '')
 WHERE spec_json <> '';
