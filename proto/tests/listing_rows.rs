//! A listing answered in rows (`StatusJob`'s `rows`, `ServerReply::Rows`) across releases:
//! a request without the field (every release before it) asks for `Jobs`; a request with it
//! still decodes where the field is unknown (a server of the previous release reads the request
//! it always did, and answers `Jobs`, which the new `qstat` still prints); and the new reply's
//! bytes stay readable.
//!
//! Fixtures: `tests/fixtures/rows/<message>.json`, frame bodies: `request_without_rows.json`
//! as releases before the field wrote a `StatusJob`; `request_rows.json` and `reply_rows.json`
//! as this build writes them (`MINIPBS_WRITE_FIXTURES=rows cargo test -p proto --test
//! listing_rows` writes those two again; never the first).

use proto::error::RequestError;
use proto::{ClientRequest, ErrorCode, Flavor, JobRow, ServerReply};
use serde::Deserialize;
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rows").join(name);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn columns() -> Vec<String> {
    ["Job_Name", "Job_Owner", "resources_used.cput", "job_state", "queue"].map(str::to_string).to_vec()
}

fn request(rows: bool) -> ClientRequest {
    ClientRequest::StatusJob {
        selectors: vec![],
        history: false,
        users: vec![],
        attrs: Some(columns()),
        subjobs: false,
        arrays_only: false,
        rows,
    }
}

fn reply() -> ServerReply {
    let held = JobRow {
        id: "12.head".into(),
        values: vec![
            Some("sim \"one\"".into()),
            Some("alice@login".into()),
            None,
            Some("H".into()),
            Some("workq".into()),
        ],
    };
    ServerReply::Rows {
        server: "head".into(),
        rows: vec![held, JobRow { id: "13[].head".into(), values: vec![None; 5] }],
        errors: vec![RequestError::new(ErrorCode::UnknownJobId, "Unknown Job Id 99.head")],
        more: false,
        flavor: Flavor::OpenPbs,
    }
}

/// `StatusJob` as the previous release's `proto` declared it (no `rows`).
#[derive(Debug, Deserialize, PartialEq)]
enum PreviousRequest {
    StatusJob {
        selectors: Vec<String>,
        history: bool,
        users: Vec<String>,
        #[serde(default)]
        attrs: Option<Vec<String>>,
        #[serde(default)]
        subjobs: bool,
        #[serde(default)]
        arrays_only: bool,
    },
}

fn write_if_asked() {
    if std::env::var("MINIPBS_WRITE_FIXTURES").as_deref() == Ok("rows") {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rows");
        let body = |frame: Vec<u8>| frame[4..].to_vec();
        std::fs::write(dir.join("request_rows.json"), body(proto::frame::encode(&request(true)).unwrap())).unwrap();
        std::fs::write(dir.join("reply_rows.json"), body(proto::frame::encode(&reply()).unwrap())).unwrap();
    }
}

#[test]
fn a_request_without_rows_asks_for_jobs() {
    let decoded: ClientRequest = proto::frame::decode(&fixture("request_without_rows.json")).unwrap();
    assert_eq!(decoded, request(false));
}

#[test]
fn a_request_in_rows_is_read_by_a_server_that_does_not_know_them() {
    write_if_asked();
    let body = fixture("request_rows.json");
    assert_eq!(proto::frame::decode::<ClientRequest>(&body).unwrap(), request(true));
    let previous: PreviousRequest = proto::frame::decode(&body).unwrap();
    let PreviousRequest::StatusJob { attrs, .. } = previous;
    assert_eq!(attrs, Some(columns()), "the previous release reads the same listing (and answers Jobs)");
}

#[test]
fn a_reply_in_rows_decodes_to_what_it_meant() {
    write_if_asked();
    assert_eq!(proto::frame::decode::<ServerReply>(&fixture("reply_rows.json")).unwrap(), reply());
}
