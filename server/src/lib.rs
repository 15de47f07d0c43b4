//! `pbs_server` as a library: [`run`] opens the store, recovers the state, listens on the
//! Unix socket (and on TCP with `listen`) and runs the scheduler loop until `shutdown` resolves. `main.rs` only parses
//! flags and calls it, so tests run servers in-process.
//!
//! Layout: `handlers/` (one file per request, pure); `state/` (jobs, nodes and queues in
//! memory, the rules several handlers share, the `Outbox` of effects and the `StoreOp`s it
//! records); `status.rs` (attribute lists); `flavor.rs` (the torque flavor's displays);
//! `bounds.rs` (what one request may name); `notices.rs` + `accounting.rs` +
//! `accounting_writer.rs` + `mail.rs` (what follows a job event: log line, accounting record,
//! mail); `sched_loop.rs` (state <-> crate `sched`); `store/` (diesel, the only database code);
//! `http/` (metrics and the web view; `metrics.rs` its counters); `shared.rs` + `listener.rs` + `peer.rs` + `client_conn.rs` + `mom_conn.rs` (async glue).

pub mod accounting;
pub mod accounting_writer;
pub mod bounds;
pub mod client_conn;
pub mod config;
pub mod flavor;
pub mod handlers;
pub mod http;
pub mod limits;
pub mod listener;
pub mod mail;
pub mod metrics;
pub mod mom_conn;
pub mod names;
pub mod notices;
pub mod peer;
pub mod run_limits;
pub mod sched_loop;
pub mod sched_text;
pub mod sched_view;
pub mod shared;
pub mod state;
pub mod status;
pub mod status_gpus;
pub mod store;

use anyhow::Context;
use config::ServerConfig;
use shared::{NoticeSink, Shared};
use state::ServerState;
use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

/// Runs a server until `shutdown` resolves.
pub async fn run(config: ServerConfig, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    std::fs::create_dir_all(&config.state_dir)
        .with_context(|| format!("cannot create state directory {}", config.state_dir.display()))?;
    keep_private(&config)?;
    let store =
        store::Store::connect(&config.store).with_context(|| format!("cannot open the job store {}", config.store))?;
    tokio::pin!(shutdown);
    let Some(mut store) = become_active(store, &config, &mut shutdown).await? else {
        tracing::info!("standby stopped before it became active");
        return Ok(());
    };
    // Only now: a standby of a newer release must not change the schema under the active server.
    store.migrate().with_context(|| format!("cannot migrate the job store {}", config.store))?;
    let loaded = store.load(&config.server_name).context("cannot load jobs from the store")?;
    let mut state =
        ServerState::new(&config.server_name, &config.default_queue, config.kill_delay, nix::unistd::getuid().as_raw());
    state.restore_next_seq(loaded.next_seq);
    state.configure_defaults(config.history_duration.as_secs() as i64, config.flavor);
    state.configure_acl_roots(&config.acl_roots);
    state.attrs.keep_completed = i64::try_from(config.keep_completed).unwrap_or(i64::MAX);
    for stored in &loaded.resource_defs {
        let def = job::resources::site::ResourceDef::from_words(&stored.name, Some(&stored.kind), Some(&stored.flags))
            .map_err(|err| anyhow::anyhow!("stored resource {} is corrupt: {err}", stored.name))?;
        state.resources.define(def).map_err(|err| anyhow::anyhow!("stored resource {}: {err}", stored.name))?;
    }
    if let Some(stored) = &loaded.config {
        state
            .load_config(&stored.queues, &stored.server_attrs)
            .map_err(|err| anyhow::anyhow!("the stored queue and server configuration is corrupt: {}", err.message))?;
    }
    state
        .configure_admins(&config.managers, &config.operators)
        .map_err(|err| anyhow::anyhow!("bad --managers or --operators: {}", err.message))?;
    for job in loaded.jobs {
        state.insert_job(job);
    }
    state::depend::rebuild(&mut state);
    state.fairshare.load(loaded.usage);
    // The store's rows and their JSON are freed by now: hand the pages back (10,000 loaded
    // jobs left 5 MiB of free heap resident otherwise).
    client_conn::release_free_memory();
    if let Some(path) = config.resource_group_path() {
        let tree = read_resource_group(&path)?;
        tracing::info!(file = %path.display(), entities = tree.len(), "fair-share tree loaded");
        state.fairshare.set_tree(tree, Some(path.display().to_string()));
    }
    // Known nodes come back down, until their moms register again.
    for stored in loaded.nodes {
        let mut node = state::Node::new(&stored.name, stored.np, stored.mem_bytes, stored.ngpus, stored.properties, 0);
        node.offline = stored.offline;
        node.operator_comment = stored.comment;
        state.insert_node(node);
    }
    for (node, name, value) in loaded.node_resources {
        if let Some(node) = state.node_mut(&node) {
            node.site.insert(name, value);
        }
    }
    for name in state.nodes().keys().cloned().collect::<Vec<_>>() {
        state.claim_shares_on(&name);
        if let Some(node) = state.node_mut(&name) {
            node.comment = Some("node down: waiting for its mom since the server started".to_string());
        }
    }
    tracing::info!(server = %config.server_name, jobs = state.jobs().len(), next_seq = state.next_seq(), "state loaded");

    let _ = std::fs::remove_file(&config.socket_path);
    let listener = tokio::net::UnixListener::bind(&config.socket_path)
        .with_context(|| format!("cannot listen on {}", config.socket_path.display()))?;
    // Anyone may connect: identity comes from SO_PEERCRED, and handlers authorise.
    std::fs::set_permissions(&config.socket_path, std::fs::Permissions::from_mode(0o666))?;

    let tcp = listen_tcp(&config).await?;

    let store = store::StoreHandle::spawn(store);
    // Records committed before a crash or a failed write are written first.
    let next_record = loaded.accounting.last().map_or(1, |record| record.id + 1);
    let forgetter = store.clone();
    let forget: accounting_writer::Forget = Box::new(move |last| {
        // Not awaited, and lazily: it rides the next commit (no fsync of its own); a failure
        // or a stop before it only means the records are found again (and not written twice)
        // at the next start.
        drop(forgetter.enqueue_lazily(vec![store::StoreOp::ForgetAccounting(last)]));
    });
    let accountant =
        accounting_writer::Accountant::spawn(accounting::accounting_dir(&config.state_dir), loaded.accounting, forget)
            .context("cannot start the accounting log")?;
    let mailer = mail::Mailer::spawn(config.sendmail.clone()).context("cannot start the mail thread")?;
    let sink = notice_sink(config.server_name.clone(), mailer);
    let shared = Arc::new(
        Shared::new(config, state, store).with_notice_sink(sink).with_accountant(accountant.clone(), next_record),
    );
    let accept = tokio::spawn(listener::accept_loop(shared.clone(), listener));
    let accept_tcp = tcp.map(|tcp| tokio::spawn(listener::accept_tcp(shared.clone(), tcp)));
    let http = match shared.config.http {
        Some(addr) => Some(tokio::spawn(http::serve(shared.clone(), http::bind(&shared, addr).await?))),
        None => None,
    };
    let scheduler = tokio::spawn(scheduler_loop(shared.clone()));
    let reload = tokio::spawn(reload_resource_group_on_hup(shared.clone()));
    tracing::info!(socket = %shared.config.socket_path.display(), "server ready");
    (&mut shutdown).await;
    accept.abort();
    for task in accept_tcp.into_iter().chain(http) {
        task.abort();
    }
    scheduler.abort();
    reload.abort();
    // Records of commits already made are queued: write them before the process ends.
    accountant.flush(std::time::Duration::from_secs(5));
    let _ = std::fs::remove_file(&shared.config.socket_path);
    tracing::info!("server stopped");
    Ok(())
}

/// On a PostgreSQL store, waits (as the standby) until this server holds the store's lease,
/// then keeps it (`store/lease.rs`): losing it ends the process. `None` if `shutdown` came
/// first. On SQLite: the store at once.
async fn become_active(
    mut store: store::Store,
    config: &ServerConfig,
    shutdown: &mut std::pin::Pin<&mut impl Future<Output = ()>>,
) -> anyhow::Result<Option<store::Store>> {
    let ttl = config.lease_ttl;
    let acquiring = tokio::task::spawn_blocking(move || {
        let held = store.acquire_lease(ttl, std::time::Duration::from_millis(250));
        (store, held)
    });
    let (store, held) = tokio::select! {
        joined = acquiring => joined.context("the lease task failed")?,
        () = shutdown.as_mut() => return Ok(None),
    };
    let held = held.context("cannot take the job store's lease")?;
    if let (Some(held), store::StoreLocation::Postgresql(url)) = (held, store.location()) {
        let on_loss: store::lease::OnLoss = Box::new(|why| {
            tracing::error!("{why}: this server stops now and writes nothing more");
            std::process::exit(pbslog::fatal::EXIT_SOFTWARE);
        });
        store::lease::keep(url.clone(), held, ttl, on_loss).context("cannot keep the job store's lease")?;
    }
    Ok(Some(store))
}

/// The notice sink of a running server: log line and mail. (The accounting records are
/// committed with the change, `Shared::apply`, and written by `accounting_writer.rs`.)
fn notice_sink(server_name: String, mailer: mail::Mailer) -> NoticeSink {
    Arc::new(move |batch: Vec<state::outbox::Notice>| {
        for notice in batch {
            tracing::info!(job_id = %notice.job.id, "{}", notices::log_text(&notice, &server_name));
            if let Some(mail) = mail::mail_for(&notice) {
                mailer.send(mail);
            }
        }
    })
}

/// The TCP listener of cluster mode, after checking that munged answers (one clear error
/// line at start rather than refused connections later); the bound port goes to
/// `<state_dir>/server.port`.
async fn listen_tcp(config: &ServerConfig) -> anyhow::Result<Option<tokio::net::TcpListener>> {
    let Some(addr) = config.listen else { return Ok(None) };
    proto::munge::encode(&config.munge_socket, b"").context("the TCP transport needs MUNGE")?;
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    let port = listener.local_addr()?.port();
    let port_file = config.state_dir.join("server.port");
    std::fs::write(&port_file, format!("{port}\n")).with_context(|| format!("cannot write {}", port_file.display()))?;
    tracing::info!(address = %addr, port, "listening on TCP");
    Ok(Some(listener))
}

/// Wakes on events (coalesced over `sched_delay`) and on a slow timer, and runs a pass.
async fn scheduler_loop(shared: Arc<Shared>) {
    loop {
        let timer = tokio::select! {
            _ = shared.sched_wakeup.notified() => false,
            _ = tokio::time::sleep(shared.config.sched_interval) => true,
        };
        if timer {
            shared
                .apply(|state, out| {
                    let keep = state.attrs.job_history_duration;
                    handlers::purge_history::purge_history(state, out, shared::now(), keep)
                })
                .await;
            shared.apply(|state, out| handlers::node_fail::requeue_on_failed_nodes(state, out, shared::now())).await;
            shared.apply(|state, out| handlers::execution_time::settle_waiting(state, out, shared::now())).await;
        }
        tokio::time::sleep(shared.config.sched_delay).await;
        shared.apply(|state, out| shared.timed_pass(state, out)).await;
    }
}

/// What only the server may read, as in OpenPBS (`server_priv` is not for users, whatever
/// `query_other_jobs` says): the database (every job's script and environment; SQLite gives
/// its `-wal` and `-shm` files the database file's mode) is 0600, `server_priv` (the
/// accounting records) 0750. An existing database is narrowed too.
/// SIGHUP: reads the `resource_group` file again (as OpenPBS's scheduler does on HUP); a file
/// that does not parse is logged and the tree in use kept.
async fn reload_resource_group_on_hup(shared: Arc<Shared>) {
    let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else { return };
    while hup.recv().await.is_some() {
        let Some(path) = shared.config.resource_group_path() else {
            tracing::info!("SIGHUP: no resource_group file; the fair-share tree is unchanged");
            continue;
        };
        match read_resource_group(&path) {
            Ok(tree) => {
                tracing::info!(file = %path.display(), entities = tree.len(), "fair-share tree reloaded");
                let source = Some(path.display().to_string());
                shared.apply(move |state, _out| state.fairshare.set_tree(tree, source)).await;
            }
            Err(error) => tracing::error!("SIGHUP: {error:#}; the fair-share tree in use is kept"),
        }
    }
}

/// Reads and parses a `resource_group` file, bounded by `sched::fairshare::MAX_FILE_BYTES`.
pub fn read_resource_group(path: &std::path::Path) -> anyhow::Result<sched::fairshare::ShareTree> {
    use std::io::Read;
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut text = String::new();
    file.take(sched::fairshare::MAX_FILE_BYTES as u64 + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read {}", path.display()))?;
    sched::fairshare::ShareTree::parse(&text).with_context(|| format!("bad fair-share file {}", path.display()))
}

fn keep_private(config: &ServerConfig) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let priv_dir = config.state_dir.join("server_priv");
    std::fs::create_dir_all(&priv_dir).with_context(|| format!("cannot create {}", priv_dir.display()))?;
    std::fs::set_permissions(&priv_dir, std::fs::Permissions::from_mode(0o750))?;
    // A PostgreSQL store's privileges are the database's (docs/sql.md).
    let Some(db_path) = config.store.sqlite_path() else { return Ok(()) };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(db_path)
        .with_context(|| format!("cannot create the job store {}", db_path.display()))?;
    for suffix in ["", "-wal", "-shm"] {
        let mut path = db_path.as_os_str().to_owned();
        path.push(suffix);
        if std::path::Path::new(&path).exists() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}
