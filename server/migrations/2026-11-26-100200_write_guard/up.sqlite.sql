-- SQLite only; up.postgresql.sql is the same step for PostgreSQL. Writes stay with the
-- server (docs/sql.md): an INSERT, UPDATE or DELETE on a store table from any connection but
-- pbs_server's is refused. The server's connection registers the SQL function
-- `minipbs_store_written_by_pbs_server_only` (store/guard.rs); on any other connection (the
-- sqlite3 shell, a script) such a statement fails to prepare with
-- "no such function: minipbs_store_written_by_pbs_server_only".
-- A guard against mistakes, not against the file's owner: the file is the server uid's only.
-- (The function is called, not looked up in pragma_function_list, which gives a nicer message
-- but made each row written four times slower.)
CREATE TRIGGER minipbs_guard_job_records_insert BEFORE INSERT ON job_records
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_job_records_update BEFORE UPDATE ON job_records
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_job_records_delete BEFORE DELETE ON job_records
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_meta_insert BEFORE INSERT ON meta
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_meta_update BEFORE UPDATE ON meta
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_meta_delete BEFORE DELETE ON meta
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_node_records_insert BEFORE INSERT ON node_records
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_node_records_update BEFORE UPDATE ON node_records
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_node_records_delete BEFORE DELETE ON node_records
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_queue_attrs_insert BEFORE INSERT ON queue_attrs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_queue_attrs_update BEFORE UPDATE ON queue_attrs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_queue_attrs_delete BEFORE DELETE ON queue_attrs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_server_attrs_insert BEFORE INSERT ON server_attrs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_server_attrs_update BEFORE UPDATE ON server_attrs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_server_attrs_delete BEFORE DELETE ON server_attrs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_resource_defs_insert BEFORE INSERT ON resource_defs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_resource_defs_update BEFORE UPDATE ON resource_defs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_resource_defs_delete BEFORE DELETE ON resource_defs
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_node_resources_insert BEFORE INSERT ON node_resources
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_node_resources_update BEFORE UPDATE ON node_resources
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_node_resources_delete BEFORE DELETE ON node_resources
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_accounting_insert BEFORE INSERT ON accounting
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_accounting_update BEFORE UPDATE ON accounting
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_accounting_delete BEFORE DELETE ON accounting
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_fairshare_usage_insert BEFORE INSERT ON fairshare_usage
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_fairshare_usage_update BEFORE UPDATE ON fairshare_usage
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
CREATE TRIGGER minipbs_guard_fairshare_usage_delete BEFORE DELETE ON fairshare_usage
 WHEN minipbs_store_written_by_pbs_server_only() IS NOT 1
 BEGIN SELECT RAISE(ABORT, 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'); END;
