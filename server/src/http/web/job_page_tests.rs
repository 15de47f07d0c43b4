//! The job page: qstat's non-owner filter, escaping, unknown and over-long ids.

use super::*;
use crate::handlers::submit_job::submit_job;
use crate::handlers::tests::{cluster, requester, spec};
use crate::state::outbox::Outbox;

fn state_with_hostile_job() -> (ServerState, String) {
    let mut state = cluster(1);
    let mut spec = spec(&[]);
    spec.variables.push("SECRET_TOKEN", "hunter2");
    spec.submit_args = "-v SECRET_TOKEN=hunter2 job.sh".to_string();
    let id = match submit_job(&mut state, &mut Outbox::default(), &requester(1000), 10, spec) {
        proto::ServerReply::JobSubmitted { id } => id,
        other => panic!("{other:?}"),
    };
    // Submission refuses such a name (and qalter a comment is the operator's): one that got
    // in another way must still render as text.
    for job in state.jobs_mut() {
        std::sync::Arc::make_mut(&mut job.spec).name = "<script>alert(1)</script>".to_string();
        job.comment = Some("</td><img src=x onerror=alert(2)>".to_string());
        job.group = "staff".into();
    }
    (state, id)
}

#[test]
fn shows_what_a_non_owner_sees_escaped() {
    let (state, id) = state_with_hostile_job();
    let status = status(&state, &id, 20).expect("known job");
    let html = render(&status);
    assert!(html.contains("<th scope=\"row\">Job_Name</th><td>&lt;script&gt;alert(1)&lt;/script&gt;</td>"), "{html}");
    assert!(!html.contains("<script>") && !html.contains("<img"), "{html}");
    for private in ["Variable_List", "SECRET_TOKEN", "hunter2", "Submit_arguments", "schedselect"] {
        assert!(!html.contains(private), "{private} shown: {html}");
    }
    assert!(html.contains("Job_Owner") && html.contains("Resource_List.ncpus"), "{html}");
    assert!(html.contains("href=\"../style.css\"") && html.contains("href=\"../\""));
    insta::assert_snapshot!(html);
}

#[test]
fn unknown_and_over_long_ids_are_not_found() {
    let (state, id) = state_with_hostile_job();
    assert!(status(&state, "99", 20).is_none());
    assert!(status(&state, &format!("{id}{}", "x".repeat(MAX_ID_LEN)), 20).is_none());
    assert!(status(&state, &"1".repeat(MAX_ID_LEN + 1), 20).is_none());
    let page = not_found("<b>1</b>");
    assert!(page.contains("No job &lt;b&gt;1&lt;/b&gt;."), "{page}");
}
