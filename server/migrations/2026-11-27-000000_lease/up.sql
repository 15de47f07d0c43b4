-- The lease of the active server (issue 17): two servers on one PostgreSQL store are a primary
-- and a standby; the one holding this row's lease is active. `epoch` grows at every takeover,
-- and every commit of the active checks (under a row lock) that it still holds the epoch it
-- took, so an old holder's writes are refused once another server took over. `expires_ms` is
-- in the database's clock (milliseconds since 1970). Unused on SQLite. Portable SQL.
CREATE TABLE server_lease (
    id INTEGER PRIMARY KEY NOT NULL,
    holder TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
