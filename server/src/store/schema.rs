//! The diesel view of the tables created by `server/migrations/` (regenerate with
//! `diesel print_schema`, configured in the repository's `diesel.toml`, and keep this header).
//! Only `store/` may use these items; the rest of the server never sees them.

// @generated automatically by Diesel CLI, then: the table `job_records` keeps its Rust name
// `jobs` (the SQL name `jobs` is the view for SQL clients, docs/sql.md).

diesel::table! {
    #[sql_name = "job_records"]
    jobs (seq) {
        seq -> BigInt,
        state -> Text,
        owner -> Text,
        owner_uid -> BigInt,
        grp -> Text,
        queue -> Text,
        hold_types -> Text,
        ctime -> BigInt,
        qtime -> BigInt,
        mtime -> BigInt,
        etime -> BigInt,
        stime -> Nullable<BigInt>,
        obittime -> Nullable<BigInt>,
        exec_hosts -> Text,
        session_id -> Nullable<Integer>,
        exit_status -> Nullable<Integer>,
        used_cput -> BigInt,
        used_mem_kb -> BigInt,
        used_vmem_kb -> BigInt,
        used_walltime -> BigInt,
        used_ncpus -> BigInt,
        run_count -> BigInt,
        comment -> Nullable<Text>,
        output_path -> Text,
        error_path -> Text,
        delete_requested -> Bool,
        rerun_requested -> Bool,
        spec_json -> Text,
        script -> Nullable<Text>,
        script_bytes -> BigInt,
        sched_state -> Text,
    }
}

diesel::table! {
    fairshare_usage (kind, name) {
        kind -> Text,
        name -> Text,
        usage -> Double,
        stamp -> BigInt,
        grp -> Text,
    }
}

diesel::table! {
    accounting (id) {
        id -> BigInt,
        time -> BigInt,
        line -> Text,
    }
}

diesel::table! {
    meta (key) {
        key -> Text,
        value -> Text,
    }
}

diesel::table! {
    queue_attrs (queue, name) {
        queue -> Text,
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    resource_defs (name) {
        name -> Text,
        kind -> Text,
        flags -> Text,
    }
}

diesel::table! {
    node_resources (node, name) {
        node -> Text,
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    server_attrs (name) {
        name -> Text,
        value -> Text,
    }
}

diesel::table! {
    node_records (name) {
        name -> Text,
        np -> BigInt,
        mem_bytes -> BigInt,
        ngpus -> BigInt,
        properties -> Text,
        offline -> Bool,
        comment -> Nullable<Text>,
    }
}

diesel::allow_tables_to_appear_in_same_query!(
    accounting,
    fairshare_usage,
    jobs,
    meta,
    node_records,
    node_resources,
    queue_attrs,
    resource_defs,
    server_attrs,
);
