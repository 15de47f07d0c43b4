-- up.sqlite.sql for PostgreSQL: an INSERT, UPDATE, DELETE or TRUNCATE on a store table is
-- refused unless the session set `minipbs.writer` to `pbs_server`, which the server's own
-- connection does at open (store/guard.rs). A guard against mistakes; what keeps other roles
-- out is privileges: docs/sql.md has a role that may read the views only.
CREATE FUNCTION minipbs_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('minipbs.writer', true) IS DISTINCT FROM 'pbs_server' THEN
        RAISE EXCEPTION 'minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr'
            USING ERRCODE = 'insufficient_privilege', DETAIL = 'table ' || TG_TABLE_NAME || ' is read-only outside pbs_server';
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON job_records
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON meta
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON node_records
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON queue_attrs
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON server_attrs
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON resource_defs
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON node_resources
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON accounting
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
CREATE TRIGGER minipbs_guard BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON fairshare_usage
    FOR EACH STATEMENT EXECUTE FUNCTION minipbs_guard();
