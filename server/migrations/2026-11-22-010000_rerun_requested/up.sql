-- A qrerun is pending: the end report of the killed run queues the job again instead of
-- finishing it. Portable SQL (SQLite and PostgreSQL).
ALTER TABLE jobs ADD COLUMN rerun_requested BOOLEAN NOT NULL DEFAULT FALSE;
