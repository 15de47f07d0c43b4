//! The read-only web view. (Skeleton: the pages are issue 18, item 2.)

use crate::shared::Shared;
use std::sync::Arc;

pub fn routes() -> axum::Router<Arc<Shared>> {
    axum::Router::new()
}
