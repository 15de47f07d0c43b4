-- The lease of the active server (issue 17): two servers on one PostgreSQL store are a primary
-- and a standby; the one holding this row's lease is active. `epoch` grows at every takeover,
-- and every commit of the active checks (under a row lock) that it still holds the epoch it
-- took, so an old holder's writes are refused once another server took over. `expires_ms` is
-- in the database's clock (milliseconds since 1970). Unused on SQLite. IF NOT EXISTS: a server takes
-- the lease (store/lease.rs makes this table) before it migrates the store. The write guard (2026-11-26-100200_write_guard) covers it too.
CREATE TABLE IF NOT EXISTS server_lease (
    id INTEGER PRIMARY KEY NOT NULL,
    holder TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON server_lease
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
