//! The read-only web view (docs/web.md): the cluster page (`/`), which renders JSON snapshots
//! pushed over server-sent events (`/events`, also `/view.json` once), and a page per job
//! (`/job/<id>`). Only GET (and HEAD) are routed; nothing here changes state.
//!
//! Why this shape: the page is static HTML, CSS and plain JS included in the binary (no build
//! step, no template engine): the script patches the DOM from each snapshot with `textContent`
//! only, so no user-controlled text is ever parsed as HTML. SSE rather than a websocket:
//! one-way, plain HTTP (a reverse proxy needs only `proxy_buffering off`), and `EventSource`
//! reconnects by itself. The job page is rendered here, every value HTML-escaped
//! (`job_page.rs`). Links are relative, so the view works behind a proxy under a sub-path.
//!
//! Every response carries a `Content-Security-Policy` that allows only this origin's script
//! and style files (no inline script, no other origin), `X-Content-Type-Options: nosniff`,
//! `Referrer-Policy: no-referrer`, and forbids framing.

mod events;
mod job_page;
mod view;

pub use events::{Hub, MAX_CLIENTS, PUSH_INTERVAL};
pub use job_page::MAX_ID_LEN;
pub use view::{view, View, MAX_FINISHED, MAX_WAITING};

use crate::shared::Shared;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Extension;
use std::sync::Arc;

/// The policy every response carries (see the module header).
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                       img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const INDEX_HTML: &str = include_str!("index.html");
const APP_JS: &str = include_str!("app.js");
const STYLE_CSS: &str = include_str!("style.css");

pub fn routes() -> axum::Router<Arc<Shared>> {
    axum::Router::new()
        .route("/", get(|| async { page(StatusCode::OK, "text/html; charset=utf-8", INDEX_HTML) }))
        .route("/app.js", get(|| async { page(StatusCode::OK, "text/javascript; charset=utf-8", APP_JS) }))
        .route("/style.css", get(|| async { page(StatusCode::OK, "text/css; charset=utf-8", STYLE_CSS) }))
        .route("/view.json", get(view_json))
        .route("/events", get(events::events))
        .route("/job/{id}", get(job))
        .layer(Extension(Arc::new(Hub::default())))
}

/// A response with the security headers of the module header.
pub fn page(status: StatusCode, content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    let mut response = (status, body.into()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    secure_headers(headers);
    response
}

/// Adds the security headers.
pub(crate) fn secure_headers(headers: &mut axum::http::HeaderMap) {
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

/// The current snapshot, as the page receives it (for scripts and the benchmark).
async fn view_json(State(shared): State<Arc<Shared>>, Extension(hub): Extension<Arc<Hub>>) -> Response {
    let frame = hub.snapshot(&shared);
    page(StatusCode::OK, "application/json", frame.json())
}

/// `/job/<id>`: what `qstat -f` shows a user who does not own the job.
async fn job(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    // The attributes under the lock; the page is written after it is released.
    let status = {
        let state = shared.state();
        job_page::status(&state, &id, crate::shared::now())
    };
    match status {
        Some(status) => page(StatusCode::OK, "text/html; charset=utf-8", job_page::render(&status)),
        None => page(StatusCode::NOT_FOUND, "text/html; charset=utf-8", job_page::not_found(&id)),
    }
}
