//! Handler tests of `Mail_Users` sent raw (issue 12, item 1): a recipient that could read as
//! an option of root's sendmail is refused at submit and at qalter, and nothing is stored.

use super::tests::{cluster, requester, spec, submit, ALICE};
use super::*;
use crate::state::outbox::Outbox;
use proto::{ErrorCode, JobAlteration, ServerReply};

const BAD: [&str; 4] = ["-be", "-X/tmp/f", "a b", "a\nBcc: x"];

#[test]
fn a_raw_submit_with_an_option_as_recipient_is_refused_and_stores_nothing() {
    for bad in BAD {
        let mut state = cluster(1);
        let mut job = spec(&[]);
        job.mail_users = vec!["x@example.org".to_string(), bad.to_string()];
        let mut out = Outbox::default();
        match submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 10, job) {
            ServerReply::Error(error) => {
                assert_eq!(error.code, ErrorCode::BadAttributeValue, "{bad:?}");
                assert!(error.message.contains("Mail_Users"), "{}", error.message);
            }
            other => panic!("{bad:?} accepted: {other:?}"),
        }
        assert!(out.persist.is_empty() && state.jobs().is_empty(), "{bad:?}: nothing stored");
    }
}

#[test]
fn a_raw_alter_with_an_option_as_recipient_is_refused_and_changes_nothing() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    for bad in BAD {
        let changes = JobAlteration { mail_users: Some(vec![bad.to_string()]), ..Default::default() };
        let mut out = Outbox::default();
        let reply =
            alter_job::alter_job(&mut state, &mut out, &requester(ALICE), 50, std::slice::from_ref(&id), &changes);
        match reply {
            ServerReply::Done { errors } => assert_eq!(errors.len(), 1, "{bad:?} accepted"),
            other => panic!("{other:?}"),
        }
        assert!(out.persist.is_empty(), "{bad:?}: nothing stored");
        assert!(state.jobs()[&state.find_job(&id).unwrap()].spec.mail_users.is_empty());
    }
    let good = JobAlteration { mail_users: Some(vec!["bob@example.org".to_string()]), ..Default::default() };
    let mut out = Outbox::default();
    alter_job::alter_job(&mut state, &mut out, &requester(ALICE), 50, std::slice::from_ref(&id), &good);
    assert_eq!(state.jobs()[&state.find_job(&id).unwrap()].spec.mail_users, ["bob@example.org"]);
}
