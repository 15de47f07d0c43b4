-- The durable job table and a key/value table for store-wide counters (next_seq).
-- Portable SQL: runs unchanged on SQLite and PostgreSQL (BIGINT, INTEGER, TEXT, BOOLEAN only).
-- Unsigned Rust integers (u32, u64) are stored as BIGINT; the store refuses values that do not
-- fit instead of wrapping them.

CREATE TABLE jobs (
    seq BIGINT PRIMARY KEY NOT NULL,
    state TEXT NOT NULL,
    owner TEXT NOT NULL,
    owner_uid BIGINT NOT NULL,
    grp TEXT NOT NULL,
    queue TEXT NOT NULL,
    hold_types TEXT NOT NULL,
    ctime BIGINT NOT NULL,
    qtime BIGINT NOT NULL,
    mtime BIGINT NOT NULL,
    etime BIGINT NOT NULL,
    stime BIGINT,
    obittime BIGINT,
    exec_hosts TEXT NOT NULL,
    session_id INTEGER,
    exit_status INTEGER,
    used_cput BIGINT NOT NULL,
    used_mem_kb BIGINT NOT NULL,
    used_vmem_kb BIGINT NOT NULL,
    used_walltime BIGINT NOT NULL,
    used_ncpus BIGINT NOT NULL,
    run_count BIGINT NOT NULL,
    comment TEXT,
    output_path TEXT NOT NULL,
    error_path TEXT NOT NULL,
    delete_requested BOOLEAN NOT NULL,
    spec_json TEXT NOT NULL
);

CREATE TABLE meta (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
