//! `/metrics`: the server's figures in the Prometheus text format.
//! (Skeleton: the metrics themselves are issue 18, item 1.)

use crate::shared::Shared;
use std::sync::Arc;

pub fn routes() -> axum::Router<Arc<Shared>> {
    axum::Router::new()
}
