//! What one request may name: every list a command sends (job ids, destinations, node and queue
//! names, users, attribute names) is deduplicated before any handler sees it, and may hold at
//! most [`MAX_NAMES`] distinct entries; past that the whole request is refused with
//! `Invalid request` naming the list and the limit, and nothing is done. So repeating a name
//! (20,000 copies of `workq`) costs the server no more than naming it once, and what a request
//! makes the server do is bounded by the state it names (the handlers deduplicate what the names
//! resolve to: a job named by two ids, a queue by two spellings, `state::array`'s ranges).
//!
//! The decoder already keeps each name once (`proto::names`); this is the check, and the same
//! rule for requests built in process. Pure: no state, no I/O.

use proto::error::{ErrorCode, RequestError};
use proto::ClientRequest;
use std::collections::HashSet;

/// Most distinct names one list of a request may hold (far above any command line: the
/// kernel passes a command at most 2 MiB of arguments). A frame keeps at most one more when it
/// is decoded (`proto::names`), so a long list costs its reading, not its keeping.
pub use proto::names::MAX_NAMES;

/// Deduplicates every list of `request` (first occurrence kept, order kept), or refuses it when
/// a list holds more than [`MAX_NAMES`] distinct names.
pub fn bound(request: &mut ClientRequest) -> Result<(), RequestError> {
    match request {
        ClientRequest::StatusJob { selectors, users, attrs, .. } => {
            distinct("job ids or destinations", selectors)?;
            distinct("users", users)?;
            match attrs {
                Some(attrs) => distinct("attribute names", attrs),
                None => Ok(()),
            }
        }
        ClientRequest::DeleteJob { ids, .. }
        | ClientRequest::HoldJob { ids, .. }
        | ClientRequest::ReleaseJob { ids, .. }
        | ClientRequest::AlterJob { ids, .. }
        | ClientRequest::RerunJob { ids }
        | ClientRequest::SignalJob { ids, .. }
        | ClientRequest::MoveJob { ids, .. } => distinct("job ids", ids),
        ClientRequest::StatusNode { names } | ClientRequest::ManageNode { names, .. } => distinct("node names", names),
        ClientRequest::StatusQueue { names } => distinct("queue names", names),
        ClientRequest::StatusResource { names } => distinct("resource names", names),
        ClientRequest::SubmitJob(_)
        | ClientRequest::Manage { .. }
        | ClientRequest::StatusServer
        | ClientRequest::FairShare { .. } => Ok(()),
    }
}

/// Keeps the first occurrence of each name of `list`; refuses more than [`MAX_NAMES`] distinct.
fn distinct(what: &str, list: &mut Vec<String>) -> Result<(), RequestError> {
    let mut seen = HashSet::with_capacity(list.len().min(MAX_NAMES));
    let mut kept = Vec::new();
    for name in list.drain(..) {
        if seen.contains(name.as_str()) {
            continue;
        }
        if seen.len() == MAX_NAMES {
            let message = format!("{}: more than {MAX_NAMES} distinct {what}", ErrorCode::InvalidRequest.text());
            return Err(RequestError::new(ErrorCode::InvalidRequest, message));
        }
        seen.insert(name.clone());
        kept.push(name);
    }
    *list = kept;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(selectors: Vec<String>) -> ClientRequest {
        ClientRequest::StatusJob {
            selectors,
            history: false,
            users: vec!["bob".into(), "bob".into()],
            attrs: Some(vec!["job_state".into(); 3]),
            subjobs: false,
            arrays_only: false,
            rows: false,
        }
    }

    #[test]
    fn repeated_names_are_kept_once_in_order() {
        let mut request = status([["workq", "1", "workq"]; 20_000].concat().into_iter().map(String::from).collect());
        bound(&mut request).unwrap();
        let expected = ClientRequest::StatusJob {
            selectors: vec!["workq".into(), "1".into()],
            history: false,
            users: vec!["bob".into()],
            attrs: Some(vec!["job_state".into()]),
            subjobs: false,
            arrays_only: false,
            rows: false,
        };
        assert_eq!(request, expected);
        let mut delete = ClientRequest::DeleteJob { ids: vec!["7[0-9]".into(); 20_000], force: false, history: false };
        bound(&mut delete).unwrap();
        assert_eq!(delete, ClientRequest::DeleteJob { ids: vec!["7[0-9]".into()], force: false, history: false });
    }

    #[test]
    fn too_many_distinct_names_are_refused_whole() {
        let at_limit: Vec<String> = (0..MAX_NAMES).map(|n| n.to_string()).collect();
        let mut request =
            ClientRequest::HoldJob { ids: [at_limit.clone(), at_limit.clone()].concat(), hold_types: "u".into() };
        bound(&mut request).unwrap();
        let mut over = status([at_limit, vec!["workq".into()]].concat());
        let error = bound(&mut over).unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidRequest);
        assert_eq!(error.message, "Invalid request: more than 100000 distinct job ids or destinations");
    }
}
