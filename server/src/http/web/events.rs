//! `/events`: the snapshots pushed to the cluster page over server-sent events.
//!
//! One [`Hub`] per listener caches the serialised snapshot for [`PUSH_INTERVAL`]: however many
//! pages are open, the state is read (under its lock, quickly: `view::view` builds owned rows)
//! and serialised (after the lock) at most once per interval. Each client wakes once per
//! interval and is sent the snapshot only when it differs from the last one it was sent, so an
//! idle cluster pushes nothing (the page ticks elapsed times itself; a comment keeps proxies
//! from closing the idle stream). A new client gets the current snapshot at once.
//!
//! Bounds (docs/security.md): at most [`MAX_CLIENTS`] streams at once; the next is refused
//! with 503 until one closes (its slot is freed when hyper drops the stream).

use super::view;
use crate::shared::Shared;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Event streams served at once.
pub const MAX_CLIENTS: usize = 64;
/// How often a snapshot is taken at most, and how often a client is sent one at most.
pub const PUSH_INTERVAL: Duration = Duration::from_secs(1);

/// One serialised snapshot and when it was taken.
#[derive(Debug)]
pub struct Frame {
    /// Epoch seconds of the snapshot (the page's clock for elapsed times).
    pub now: i64,
    /// The serialised [`view::View`].
    pub view: String,
}

impl Frame {
    /// `{"now":..,"view":{..}}`: what the page receives.
    pub fn json(&self) -> String {
        format!("{{\"now\":{},\"view\":{}}}", self.now, self.view)
    }
}

/// The stream slots and the cached snapshot of one listener.
pub struct Hub {
    clients: Arc<Semaphore>,
    cache: Mutex<Option<(Instant, Arc<Frame>)>>,
}

impl Default for Hub {
    fn default() -> Hub {
        Hub { clients: Arc::new(Semaphore::new(MAX_CLIENTS)), cache: Mutex::new(None) }
    }
}

impl Hub {
    /// The snapshot, taken anew when the cached one is older than [`PUSH_INTERVAL`].
    pub fn snapshot(&self, shared: &Shared) -> Arc<Frame> {
        let mut cache = pbslog::fatal::lock_or_exit(&self.cache, "web view cache");
        if let Some((_, frame)) = cache.as_ref().filter(|(at, _)| at.elapsed() < PUSH_INTERVAL) {
            return Arc::clone(frame);
        }
        let now = crate::shared::now();
        let view = {
            let state = shared.state();
            view::view(&state, now)
        };
        // A `View` is strings and numbers: serialising it cannot fail.
        let frame = Arc::new(Frame { now, view: serde_json::to_string(&view).unwrap_or_default() });
        *cache = Some((Instant::now(), Arc::clone(&frame)));
        frame
    }

    /// A stream slot, or `None` when [`MAX_CLIENTS`] are taken.
    pub fn admit(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.clients).try_acquire_owned().ok()
    }
}

/// One client's stream: its slot, and the snapshot it was last sent.
struct Client {
    shared: Arc<Shared>,
    hub: Arc<Hub>,
    _slot: OwnedSemaphorePermit,
    last: Option<Arc<Frame>>,
}

impl Client {
    /// Waits for the next snapshot that differs from the last one sent (the first at once).
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Client)> {
        loop {
            if self.last.is_some() {
                tokio::time::sleep(PUSH_INTERVAL).await;
            }
            let frame = self.hub.snapshot(&self.shared);
            let same = self.last.as_ref().is_some_and(|last| Arc::ptr_eq(last, &frame) || last.view == frame.view);
            if !same {
                let event = Event::default().event("view").data(frame.json());
                self.last = Some(frame);
                return Some((Ok(event), self));
            }
        }
    }
}

pub async fn events(
    axum::extract::State(shared): axum::extract::State<Arc<Shared>>,
    Extension(hub): Extension<Arc<Hub>>,
) -> Response {
    let Some(slot) = hub.admit() else {
        return super::page(StatusCode::SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", "too many viewers\n");
    };
    let client = Client { shared, hub, _slot: slot, last: None };
    let stream = futures_util::stream::unfold(client, Client::next);
    let mut response = Sse::new(stream).keep_alive(KeepAlive::default()).into_response();
    super::secure_headers(response.headers_mut());
    response
}
