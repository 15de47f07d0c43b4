-- up.sqlite.sql for PostgreSQL: the same columns, and the same move of each script out of its
-- spec with PostgreSQL's JSON functions (no PostgreSQL store predates this migration, so the
-- UPDATE finds no rows; it is here so both stores mean the same by this version).
ALTER TABLE jobs ADD COLUMN script TEXT;
ALTER TABLE jobs ADD COLUMN script_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE jobs
   SET script = spec_json::jsonb ->> 'script',
       script_bytes = octet_length(spec_json::jsonb ->> 'script'),
       spec_json = jsonb_set(spec_json::jsonb, '{script}', '""')::text
 WHERE spec_json <> '';
