//! The active server's lease on a PostgreSQL store: two `pbs_server`s on one database are a
//! primary and a standby, and only the holder of the lease serves.
//!
//! The lease is the one row of `server_lease`: `holder` (host, pid and a random word: unique per
//! process), `epoch` (grows at every takeover) and `expires_ms`, in the database's clock, so the
//! two heads' clocks never matter. A server [`acquire`]s it before it loads anything: at once
//! if it is free or expired, else it waits as the standby. The holder renews it every
//! `ttl / 5` on a connection of its own ([`keep`]), and exits when a renewal finds another
//! holder (after a SIGSTOP past the ttl, say) or when no renewal has succeeded for twice the
//! ttl (cut off from the database): by then a standby may have taken over.
//!
//! Fencing does not rest on that exit: every commit first reads the lease row `FOR SHARE`
//! ([`check`]), inside its transaction, and refuses to write unless this server still holds the
//! epoch it took. A takeover's `UPDATE` of the row waits for such a commit to end and every
//! later commit of the old holder sees the new epoch, so an old holder's write either commits
//! before the takeover (and the new holder loads it) or not at all. A holder stopped inside a
//! transaction is ended by PostgreSQL after `idle_in_transaction_session_timeout` (set to the
//! ttl on the store's connection), which releases its row lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

use super::error::StoreError;

/// The database's clock, in milliseconds since 1970 (`clock_timestamp`: the time of the
/// statement, not of the transaction's start).
const NOW_MS: &str = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/// What this server holds: its name in the row and the epoch it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub holder: String,
    pub epoch: i64,
}

/// The lease row as read.
#[derive(Debug, QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    holder: String,
    #[diesel(sql_type = BigInt)]
    epoch: i64,
    #[diesel(sql_type = BigInt)]
    left_ms: i64,
}

/// A fresh holder name: `host:pid:random`.
pub fn holder_name() -> String {
    let host = nix::unistd::gethostname().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let mut random = [0u8; 6];
    // Invariant: the OS random source is available to a server that runs at all.
    getrandom::fill(&mut random).expect("random bytes");
    let word: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{host}:{}:{word}", std::process::id())
}

/// One attempt: takes the lease if it is free, expired, or already ours; `Ok(Err((holder,
/// milliseconds left)))` if another server holds it.
pub(super) fn try_take(
    connection: &mut PgConnection,
    holder: &str,
    ttl: Duration,
) -> Result<Result<Held, (String, i64)>, diesel::result::Error> {
    // The table is also its migration's; made here too because a server takes the lease before
    // it migrates the store (a fresh store has no tables yet).
    connection.batch_execute(
        "CREATE TABLE IF NOT EXISTS server_lease (id INTEGER PRIMARY KEY NOT NULL, holder TEXT NOT NULL, \
         epoch BIGINT NOT NULL, expires_ms BIGINT NOT NULL); \
         INSERT INTO server_lease (id, holder, epoch, expires_ms) VALUES (1, '', 0, 0) ON CONFLICT (id) DO NOTHING",
    )?;
    let taken = diesel::sql_query(format!(
        "UPDATE server_lease SET holder = $1, epoch = epoch + 1, expires_ms = {NOW_MS} + $2 \
         WHERE id = 1 AND (expires_ms < {NOW_MS} OR holder = '' OR holder = $1) \
         RETURNING holder, epoch, expires_ms - {NOW_MS} AS left_ms"
    ))
    .bind::<Text, _>(holder)
    .bind::<BigInt, _>(ttl_ms(ttl))
    .get_result::<Row>(connection)
    .optional()?;
    if let Some(row) = taken {
        return Ok(Ok(Held { holder: row.holder, epoch: row.epoch }));
    }
    let row = read(connection)?;
    Ok(Err((row.holder, row.left_ms)))
}

fn read(connection: &mut PgConnection) -> Result<Row, diesel::result::Error> {
    diesel::sql_query(format!("SELECT holder, epoch, expires_ms - {NOW_MS} AS left_ms FROM server_lease WHERE id = 1"))
        .get_result::<Row>(connection)
}

fn ttl_ms(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX / 4)
}

/// Waits until this server holds the lease, polling every `poll`; logs once that it is the
/// standby and whom it waits for.
pub(super) fn acquire(
    connection: &mut PgConnection,
    holder: &str,
    ttl: Duration,
    poll: Duration,
) -> Result<Held, StoreError> {
    let mut announced = false;
    loop {
        match try_take(connection, holder, ttl).map_err(|err| StoreError::database("taking the lease", err))? {
            Ok(held) => {
                tracing::info!(holder = %held.holder, epoch = held.epoch, "this server holds the store's lease: active");
                return Ok(held);
            }
            Err((other, left_ms)) => {
                if !announced {
                    tracing::info!(active = %other, left_ms, "standby: another server holds the store's lease; waiting");
                    announced = true;
                }
            }
        }
        std::thread::sleep(poll);
    }
}

/// Inside a commit's transaction: locks the lease row against a takeover until the commit
/// ends, and refuses the commit unless `held` is still the lease.
pub(super) fn check(connection: &mut PgConnection, held: &Held) -> Result<(), StoreError> {
    let row = diesel::sql_query(format!(
        "SELECT holder, epoch, expires_ms - {NOW_MS} AS left_ms FROM server_lease WHERE id = 1 FOR SHARE"
    ))
    .get_result::<Row>(connection)
    .map_err(|err| StoreError::database("checking the lease", err))?;
    if row.holder == held.holder && row.epoch == held.epoch {
        Ok(())
    } else {
        Err(StoreError::LeaseLost { holder: row.holder, epoch: row.epoch })
    }
}

/// Renews `held` once; `Err(LeaseLost)` if another server took it.
pub(super) fn renew(connection: &mut PgConnection, held: &Held, ttl: Duration) -> Result<(), StoreError> {
    let renewed = diesel::sql_query(format!(
        "UPDATE server_lease SET expires_ms = {NOW_MS} + $3 WHERE id = 1 AND holder = $1 AND epoch = $2"
    ))
    .bind::<Text, _>(&held.holder)
    .bind::<BigInt, _>(held.epoch)
    .bind::<BigInt, _>(ttl_ms(ttl))
    .execute(connection)
    .map_err(|err| StoreError::database("renewing the lease", err))?;
    if renewed == 1 {
        return Ok(());
    }
    let row = read(connection).map_err(|err| StoreError::database("reading the lease", err))?;
    Err(StoreError::LeaseLost { holder: row.holder, epoch: row.epoch })
}

/// How a kept lease ends: the server must stop at once.
pub type OnLoss = Box<dyn Fn(&str) + Send + Sync>;

/// Keeps `held` for as long as the process lives: a thread renews it every `ttl / 5` on its
/// own connection to `url` and calls `on_loss` when a renewal finds another holder; a
/// watchdog thread calls it when none has succeeded for twice the ttl while this process was
/// running (the network or the database hangs). After a stop (SIGSTOP) the renewer's next
/// round decides: the lease is still ours if nobody took it.
pub fn keep(url: String, held: Held, ttl: Duration, on_loss: OnLoss) -> Result<(), StoreError> {
    let mut connection = PgConnection::establish(&url)
        .map_err(|err| StoreError::Open { path: "the lease connection".to_string(), source: Arc::new(err) })?;
    connection
        .batch_execute("SET synchronous_commit = off")
        .map_err(|err| StoreError::database("setting up the lease connection", err))?;
    // The lease row is a store table: only the server's sessions may write it (the write guard).
    super::guard::claim_postgresql(&mut connection)
        .map_err(|err| StoreError::database("setting up the lease connection", err))?;
    let on_loss: Arc<OnLoss> = Arc::new(on_loss);
    let started = Instant::now();
    let last_ok = Arc::new(AtomicU64::new(0));
    let renewer_last_ok = Arc::clone(&last_ok);
    let renewer_loss = Arc::clone(&on_loss);
    let interval = ttl / 5;
    std::thread::Builder::new()
        .name("pbs-lease".to_string())
        .spawn(move || loop {
            match renew(&mut connection, &held, ttl) {
                Ok(()) => renewer_last_ok.store(started.elapsed().as_millis() as u64, Ordering::Relaxed),
                Err(StoreError::LeaseLost { holder, epoch }) => {
                    renewer_loss(&format!("the store's lease was taken by {holder} (epoch {epoch})"));
                    return;
                }
                Err(err) => tracing::warn!(error = %err.report(), "cannot renew the store's lease"),
            }
            std::thread::sleep(interval);
        })
        .map_err(|err| StoreError::database("starting the lease thread", err))?;
    std::thread::Builder::new()
        .name("pbs-lease-watch".to_string())
        .spawn(move || {
            let tick = interval / 2;
            let mut previous = Instant::now();
            loop {
                std::thread::sleep(tick);
                let woke = Instant::now();
                // A tick far longer than asked: this process was stopped (SIGSTOP, a paused VM).
                // Give the renewer a round to find out whether the lease is still ours.
                let paused = woke.duration_since(previous) > tick * 4;
                previous = woke;
                let since = started.elapsed().as_millis() as u64 - last_ok.load(Ordering::Relaxed);
                if !paused && since >= 2 * ttl.as_millis() as u64 {
                    on_loss(&format!(
                        "the store's lease could not be renewed for {since} ms (lease time {} ms)",
                        ttl.as_millis()
                    ));
                    return;
                }
            }
        })
        .map_err(|err| StoreError::database("starting the lease watchdog", err))?;
    Ok(())
}
