//! The server's HTTP listener (`pbs_server --http ADDR`, off by default): Prometheus metrics
//! (`metrics.rs`, `/metrics`) and the read-only web view (`web/`). Everything it serves is
//! read from the state under the lock, like a status request; nothing here changes state.
//!
//! Bounds (docs/security.md): at most [`MAX_CONNECTIONS`] connections at once (more wait in
//! the kernel's backlog), a request's head must arrive within [`HEADER_TIMEOUT`], and only GET
//! and HEAD are routed; no route reads a request body.

pub mod metrics;
pub mod web;

use crate::shared::Shared;
use anyhow::Context;
use std::sync::Arc;
use std::time::Duration;

/// Connections served at once; the rest wait to be accepted.
pub const MAX_CONNECTIONS: usize = 256;
/// How long a client may take to send a request's head (a slow client cannot hold a slot).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds `addr` and writes the bound port to `<state_dir>/server.http` (so `--http
/// 127.0.0.1:0` can be found, as `server.port` is for `--listen`).
pub async fn bind(shared: &Shared, addr: std::net::SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    let listener =
        tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr} (--http)"))?;
    let port = listener.local_addr()?.port();
    let port_file = shared.config.state_dir.join("server.http");
    std::fs::write(&port_file, format!("{port}\n")).with_context(|| format!("cannot write {}", port_file.display()))?;
    tracing::info!(address = %addr, port, "serving metrics and the web view over HTTP");
    Ok(listener)
}

/// Every route of the listener.
pub fn router(shared: Arc<Shared>) -> axum::Router {
    axum::Router::new().merge(metrics::routes()).merge(web::routes()).with_state(shared)
}

/// Accepts connections until aborted, each served by hyper with the bounds above.
pub async fn serve(shared: Arc<Shared>, listener: tokio::net::TcpListener) {
    let router = router(shared);
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else { return };
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!("http accept: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            // HTTP/1 only, without sniffing for HTTP/2: the sniff reads the first bytes with no
            // timeout, so a client sending nothing would hold its slot for ever. hyper's own
            // HTTP/1 server, not hyper-util's `auto` one: that one brings HTTP/2's code (h2) into
            // the binary even when unused (issue 19: the daemons' text is most of their RSS).
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
            let io = hyper_util::rt::TokioIo::new(stream);
            // A client that goes away mid-response is not an error worth a log line.
            let _ = builder.serve_connection(io, service).await;
            drop(permit);
        });
    }
}
