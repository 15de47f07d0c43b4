//! Handler tests of issue 13 items 6 and 7 and the `-W` items the mom acts on: a directory
//! `-o` stays a directory and the mom is told the file names; `umask`, `group_list`,
//! `sandbox`, `stagein`/`stageout` are checked, stored, shown and sent to the mom.

use super::tests::{cluster, requester, spec, ALICE};
use super::*;
use crate::config::Flavor;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use job::exec_opts::{ExecOptions, GroupEntry, Sandbox, StageItem};
use job::JobSpec;
use proto::mom::JobLaunch;
use proto::{ErrorCode, ServerReply, ServerToMom};

fn submit_as(state: &mut ServerState, who: &Requester, spec: JobSpec) -> ServerReply {
    crate::shared::run_handler(state, 10, |state, out| submit_job::submit_job(state, out, who, 10, spec)).0
}

fn launches(state: &mut ServerState) -> Vec<JobLaunch> {
    let mut out = Outbox::default();
    schedule_pass(state, &mut out, 20);
    out.to_moms
        .into_iter()
        .filter_map(|(_, message)| match message {
            ServerToMom::RunJob(launch) => Some(*launch),
            _ => None,
        })
        .collect()
}

fn shown(state: &ServerState, id: &str, name: &str) -> Option<String> {
    let job = &state.jobs()[&state.find_job(id).unwrap()];
    let status = crate::status::job_status(job, "head", state.flavor, 0);
    status.attrs.iter().find(|attr| attr.name == name).map(|attr| attr.value.clone())
}

#[test]
fn a_directory_output_path_stays_a_directory_and_the_mom_names_the_files() {
    let mut state = cluster(1);
    let mut job = spec(&[("ncpus", "1")]);
    job.output_path = Some("login:/home/alice/logs/".to_string());
    job.error_path = Some("login:/home/alice/err/".to_string());
    let ServerReply::JobSubmitted { id } = submit_as(&mut state, &requester(ALICE), job) else { panic!() };
    assert_eq!(shown(&state, &id, "Output_Path").as_deref(), Some("login:/home/alice/logs/"));
    assert_eq!(shown(&state, &id, "Error_Path").as_deref(), Some("login:/home/alice/err/"));
    let launch = launches(&mut state).remove(0);
    assert_eq!(launch.output_path, "/home/alice/logs/");
    assert_eq!((launch.output_name.as_str(), launch.error_name.as_str()), ("job.sh.o1", "job.sh.e1"));
}

#[test]
fn subjobs_file_names_follow_the_flavor() {
    for (flavor, expected) in [(Flavor::OpenPbs, "job.sh.o1.3"), (Flavor::Torque, "job.sh.o1-3")] {
        let mut state = cluster(1);
        state.flavor = flavor;
        let mut job = spec(&[("ncpus", "1")]);
        job.output_path = Some("login:/home/alice/logs/".to_string());
        job.array = Some(job::array::ArraySpec { indices: "3".to_string(), limit: None });
        assert!(matches!(submit_as(&mut state, &requester(ALICE), job), ServerReply::JobSubmitted { .. }));
        assert_eq!(launches(&mut state).remove(0).output_name, expected);
    }
}

#[test]
fn exec_options_are_shown_and_sent() {
    let mut state = cluster(1);
    let mut job = spec(&[("ncpus", "1")]);
    let stage = |local: &str| vec![StageItem { local: local.into(), host: "login".into(), remote: "/d/x".into() }];
    job.exec = ExecOptions {
        umask: Some(0o22),
        group_list: Vec::new(),
        sandbox: Some(Sandbox::Private),
        stagein: stage("in"),
        stageout: stage("out"),
        pin: None,
    };
    let ServerReply::JobSubmitted { id } = submit_as(&mut state, &requester(ALICE), job) else { panic!() };
    assert_eq!(shown(&state, &id, "umask").as_deref(), Some("22"));
    state.flavor = Flavor::Torque;
    assert_eq!(shown(&state, &id, "umask").as_deref(), Some("18"), "TORQUE's qsub sends it converted from octal");
    state.flavor = Flavor::OpenPbs;
    assert_eq!(shown(&state, &id, "sandbox").as_deref(), Some("PRIVATE"));
    assert_eq!(shown(&state, &id, "stagein").as_deref(), Some("in@login:/d/x"));
    assert_eq!(shown(&state, &id, "stageout").as_deref(), Some("out@login:/d/x"));
    assert_eq!(shown(&state, &id, "group_list"), None);
    assert_eq!(launches(&mut state).remove(0).exec.umask, Some(0o22));
}

#[test]
fn forged_exec_options_are_refused() {
    let mut state = cluster(1);
    let mut job = spec(&[("ncpus", "1")]);
    job.exec.umask = Some(0o7777);
    let ServerReply::Error(error) = submit_as(&mut state, &requester(ALICE), job) else { panic!() };
    assert_eq!(error.code, ErrorCode::BadAttributeValue);
    let mut job = spec(&[("ncpus", "1")]);
    job.exec.stagein = vec![StageItem { local: "-rf".into(), host: "h".into(), remote: "/x".into() }];
    assert!(matches!(submit_as(&mut state, &requester(ALICE), job), ServerReply::Error(_)));
}

/// `-W group_list` is a privilege boundary: a group the user is not in is refused at submit
/// (`Bad GID for job execution`), one they are in becomes `egroup` and is sent to the mom.
#[test]
fn group_list_only_a_group_the_user_is_in() {
    let mut state = cluster(1);
    let nobody = Requester { uid: 65534, gid: 65534, user: "nobody".to_string() };
    let mut job = spec(&[("ncpus", "1")]);
    job.exec.group_list = vec![GroupEntry { group: "root".into(), host: None }];
    let ServerReply::Error(error) = submit_as(&mut state, &nobody, job) else { panic!("a non-member got root") };
    assert_eq!(error.code, ErrorCode::BadGroup);
    assert!(error.message.starts_with("Bad GID for job execution"), "{}", error.message);
    let mut job = spec(&[("ncpus", "1")]);
    job.exec.group_list = vec![GroupEntry { group: "no-such-group-minipbs".into(), host: None }];
    assert!(matches!(submit_as(&mut state, &nobody, job), ServerReply::Error(e) if e.code == ErrorCode::BadGroup));
    let root = Requester { uid: 0, gid: 0, user: "root".to_string() };
    let mut job = spec(&[("ncpus", "1")]);
    job.exec.group_list = vec![GroupEntry { group: "other".into(), host: Some("elsewhere".into()) }];
    job.exec.group_list.push(GroupEntry { group: "root".into(), host: None });
    state.configure_acl_roots(&["root".to_string()]);
    let ServerReply::JobSubmitted { id } = submit_as(&mut state, &root, job) else { panic!("root refused root") };
    assert_eq!(shown(&state, &id, "group_list").as_deref(), Some("other@elsewhere,root"));
    assert_eq!(launches(&mut state).remove(0).group.as_deref(), Some("root"));
}

/// A failed `-W stagein` does not end the job: it waits on a user hold, the comment says why.
#[test]
fn a_failed_stagein_holds_the_job_with_the_reason() {
    let mut state = cluster(1);
    let ServerReply::JobSubmitted { id } = submit_as(&mut state, &requester(ALICE), spec(&[("ncpus", "1")])) else {
        panic!()
    };
    let launch = launches(&mut state).remove(0);
    let obit = proto::mom::JobObit {
        job_id: id.clone(),
        exit_status: -1,
        run_count: launch.run_count,
        stagein_failed: Some(format!("stagein of x from /d/x failed: {}", "y".repeat(5000))),
        ..Default::default()
    };
    crate::shared::run_handler(&mut state, 30, |state, out| job_ended::job_ended(state, out, "node1", obit, 30));
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert_eq!((job.state(), job.hold_types.as_str()), (job::JobState::Held, "u"));
    let comment = job.comment.clone().unwrap();
    assert!(comment.starts_with("Job held: stagein failed on node1: stagein of x from /d/x failed: "), "{comment}");
    assert!(comment.len() < 1200, "the mom's text is bounded in the comment");
    assert!(job.exec.is_empty(), "its node is free again");
}
