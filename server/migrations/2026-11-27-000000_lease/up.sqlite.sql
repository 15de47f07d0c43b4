-- The lease of the active server (issue 17): two servers on one PostgreSQL store are a primary
-- and a standby; the one holding this row's lease is active. `epoch` grows at every takeover,
-- and every commit of the active checks (under a row lock) that it still holds the epoch it
-- took, so an old holder's writes are refused once another server took over. `expires_ms` is
-- in the database's clock (milliseconds since 1970). Unused on SQLite. The write guard (2026-11-26-100200_write_guard) covers it too.
CREATE TABLE IF NOT EXISTS server_lease (
    id INTEGER PRIMARY KEY NOT NULL,
    holder TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE TRIGGER minipbs_guard_server_lease_insert BEFORE INSERT ON server_lease
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_server_lease_update BEFORE UPDATE ON server_lease
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_server_lease_delete BEFORE DELETE ON server_lease
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
