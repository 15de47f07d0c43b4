//! Handler tests of `qsub --pin` (issue 18 item 3): a pin is checked at submit (a hostile
//! client can send any frame), shown by `qstat -f` only when set, survives the store's JSON and
//! reaches the mom with the job's `Keep_Files`.

use super::tests::{cluster, requester, spec, ALICE};
use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use job::pin::CodePin;
use job::JobSpec;
use proto::{ErrorCode, ServerReply, ServerToMom};

const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";
const STASH: &str = "89abcdef0123456789abcdef0123456789abcdef";

fn pinned() -> JobSpec {
    let mut job = spec(&[("ncpus", "1")]);
    job.exec.pin =
        Some(CodePin { repo: "/home/alice/proj".into(), commit: STASH.into(), head: HEAD.into(), changes: true });
    job
}

fn submit(state: &mut ServerState, job: JobSpec) -> ServerReply {
    crate::shared::run_handler(state, 10, |state, out| submit_job::submit_job(state, out, &requester(ALICE), 10, job)).0
}

fn code_attrs(state: &ServerState, id: &str) -> Vec<(String, String)> {
    let job = &state.jobs()[&state.find_job(id).unwrap()];
    let status = crate::status::job_status(job, "head", state.flavor, 0);
    status.attrs.into_iter().filter(|attr| attr.name.starts_with("code_")).map(|attr| (attr.name, attr.value)).collect()
}

#[test]
fn a_pinned_job_shows_its_code_version_and_the_mom_gets_it() {
    let mut state = cluster(1);
    let mut job = pinned();
    job.keep = "oe".into();
    let ServerReply::JobSubmitted { id } = submit(&mut state, job) else { panic!("refused") };
    let expected = [
        ("code_version", STASH),
        ("code_version_head", HEAD),
        ("code_version_changes", "True"),
        ("code_repository", "/home/alice/proj"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    assert_eq!(code_attrs(&state, &id), expected);
    let mut out = Outbox::default();
    schedule_pass(&mut state, &mut out, 20);
    let launch = out.to_moms.into_iter().find_map(|(_, message)| match message {
        ServerToMom::RunJob(launch) => Some(launch),
        _ => None,
    });
    let launch = launch.expect("the job was sent");
    assert_eq!(launch.exec.pin, pinned().exec.pin);
    assert_eq!(launch.keep, "oe");
}

#[test]
fn an_ordinary_job_shows_no_code_attribute_and_its_spec_json_is_unchanged() {
    let mut state = cluster(1);
    let ServerReply::JobSubmitted { id } = submit(&mut state, spec(&[("ncpus", "1")])) else { panic!() };
    assert_eq!(code_attrs(&state, &id), []);
    let text = serde_json::to_string(&spec(&[("ncpus", "1")])).unwrap();
    assert!(!text.contains("pin"), "{text}");
    let round: JobSpec = serde_json::from_str(&serde_json::to_string(&pinned()).unwrap()).unwrap();
    assert_eq!(round, pinned(), "a pin survives the store's JSON");
}

/// A change a hostile client makes to a pin.
type Edit = fn(&mut CodePin);

#[test]
fn a_forged_pin_is_refused_with_a_clear_error() {
    let forged = |edit: Edit| {
        let mut job = pinned();
        edit(job.exec.pin.as_mut().unwrap());
        job
    };
    let cases: [(Edit, &str); 5] = [
        (|pin| pin.commit = "HEAD~1".into(), "is not a commit id"),
        (|pin| pin.head = "--upload-pack=evil".into(), "is not a commit id"),
        (|pin| pin.repo = "proj".into(), "code_repository: not an absolute path"),
        (|pin| pin.repo = format!("/{}", "x".repeat(5000)), "code_repository"),
        (|pin| pin.changes = false, "uncommitted changes"),
    ];
    for (edit, text) in cases {
        let mut state = cluster(1);
        let ServerReply::Error(error) = submit(&mut state, forged(edit)) else { panic!("accepted: {text}") };
        assert_eq!(error.code, ErrorCode::BadAttributeValue);
        assert!(error.message.contains(text) && error.message.contains("pin: "), "{}", error.message);
        assert!(state.jobs().is_empty(), "nothing is stored");
    }
}
