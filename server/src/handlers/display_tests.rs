//! What `qstat -f` shows of what the user wrote (issue 13): `Mail_Users`, `Shell_Path_List`,
//! `Resource_List.select`/`place`/`mem` as written, `schedselect` to managers only; the same
//! after qalter; and the shell and `OMP_NUM_THREADS` the mother superior is sent.

use super::status_job::{self, Query, Reader};
use super::tests::{cluster, requester, spec, ALICE};
use super::*;
use crate::config::Flavor;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use proto::{JobAlteration, JobStatus, ServerReply, ServerToMom};

/// `qsub -h -M a@b.org -S /bin/bash -l select=1:ncpus=2:mem=2gb:ompthreads=2 -l place=excl`.
fn must_hold_spec() -> job::JobSpec {
    let mut spec = spec(&[("select", "1:ncpus=2:mem=2gb:ompthreads=2"), ("place", "excl")]);
    spec.user_hold = true;
    spec.mail_users = vec!["a@b.org".to_string()];
    spec.shell = Some("/bin/bash".to_string());
    spec
}

fn submit_spec(state: &mut ServerState, spec: job::JobSpec) -> String {
    match submit_job::submit_job(state, &mut Outbox::default(), &requester(ALICE), 10, spec) {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("submit refused: {other:?}"),
    }
}

fn status(state: &ServerState, reader: Reader, id: &str) -> JobStatus {
    let selectors = [id.to_string()];
    let query = Query { selectors: &selectors, reader, ..Default::default() };
    match status_job::status_job(state, state.flavor, 20, query) {
        ServerReply::Jobs { mut jobs, .. } => jobs.remove(0),
        other => panic!("{other:?}"),
    }
}

/// The lines of what the user asked for (no times, ids or environment).
fn asked_lines(job: &JobStatus) -> String {
    let asked = |name: &str| {
        matches!(
            name,
            "Mail_Points" | "Mail_Users" | "Shell_Path_List" | "schedselect" | "Hold_Types" | "Resource_List"
        )
    };
    job.attrs
        .iter()
        .filter(|attr| asked(&attr.name))
        .map(|attr| format!("{} = {}\n", attr.full_name(), attr.value))
        .collect()
}

#[test]
fn the_must_hold_job_shows_what_was_written() {
    let mut text = String::new();
    for flavor in [Flavor::OpenPbs, Flavor::Torque] {
        let mut state = cluster(1);
        state.flavor = flavor;
        let id = submit_spec(&mut state, must_hold_spec());
        for (who, reader) in [("manager", Reader::Manager), ("owner", Reader::User(ALICE))] {
            let job = status(&state, reader, &id);
            assert_eq!(job.get("Mail_Users"), Some("a@b.org"));
            assert_eq!(job.get("Shell_Path_List"), Some("/bin/bash"));
            assert_eq!(job.get("Resource_List.select"), Some("1:ncpus=2:mem=2gb:ompthreads=2"));
            assert_eq!(job.get("Resource_List.place"), Some("excl"));
            assert_eq!(job.get("Resource_List.mem"), Some("2gb"));
            let sees = flavor == Flavor::OpenPbs && reader == Reader::Manager;
            assert_eq!(job.get("schedselect").is_some(), sees, "{flavor} {who}");
            text.push_str(&format!("--- {flavor}, {who}\n{}", asked_lines(&job)));
        }
    }
    insta::assert_snapshot!(text);
}

#[test]
fn only_managers_read_schedselect() {
    let mut state = cluster(1);
    state.configure_admins(&["user1003@*".to_string()], &["user1002@*".to_string()]).unwrap();
    let id = submit_spec(&mut state, must_hold_spec());
    for (uid, sees) in [(ALICE, false), (1001, false), (1002, false), (1003, true), (0, true)] {
        let job = status(&state, Reader::of(&state, &requester(uid)), &id);
        assert_eq!(job.get("schedselect"), sees.then_some("1:ncpus=2:mem=2gb:ompthreads=2"), "uid {uid}");
    }
}

#[test]
fn nothing_shown_for_what_was_not_asked() {
    let mut state = cluster(1);
    let id = submit_spec(&mut state, spec(&[("ncpus", "1")]));
    let job = status(&state, Reader::Manager, &id);
    assert_eq!((job.get("Mail_Users"), job.get("Shell_Path_List")), (None, None));
}

#[test]
fn qalter_changes_follow_the_same_rule() {
    let mut state = cluster(3);
    let id = submit_spec(&mut state, must_hold_spec());
    let changes = JobAlteration {
        mail_users: Some(vec!["c@d.org".into(), "e".into()]),
        shell: Some("/bin/sh@node2,/bin/zsh".into()),
        resources: vec![("select".into(), "2:mem=1GB:ncpus=1+1:mem=512mb".into()), ("place".into(), "vscatter".into())],
        ..Default::default()
    };
    let reply = alter_job::alter_job(
        &mut state,
        &mut Outbox::default(),
        &requester(ALICE),
        20,
        std::slice::from_ref(&id),
        &changes,
    );
    assert!(matches!(&reply, ServerReply::Done { errors } if errors.is_empty()), "{reply:?}");
    let job = status(&state, Reader::Manager, &id);
    insta::assert_snapshot!(asked_lines(&job));
}

/// The RunJob the mother superior gets for a job of `spec`.
fn launched(spec: job::JobSpec) -> proto::mom::JobLaunch {
    let mut state = cluster(1);
    submit_spec(&mut state, spec);
    let mut out = Outbox::default();
    schedule_pass(&mut state, &mut out, 30);
    let run = out.to_moms.iter().find_map(|(_, message)| match message {
        ServerToMom::RunJob(launch) => Some(launch.clone()),
        _ => None,
    });
    *run.expect("the job was started")
}

#[test]
fn the_mom_gets_the_shell_of_its_node_and_the_omp_threads() {
    let cases = [
        (None, None),
        (Some("/bin/bash"), Some("/bin/bash")),
        (Some("/bin/sh@node1,/bin/bash"), Some("/bin/sh")),
        (Some("/bin/sh@node2,/bin/bash"), Some("/bin/bash")),
        (Some("/bin/sh@node2"), None),
    ];
    for (list, shell) in cases {
        let mut spec = spec(&[("select", "1:ncpus=2:ompthreads=3")]);
        spec.shell = list.map(str::to_string);
        let launch = launched(spec);
        assert_eq!(launch.shell.as_deref(), shell, "{list:?}");
        assert_eq!((launch.first_ncpus, launch.omp_threads), (2, Some(3)));
    }
    assert_eq!(launched(spec(&[("nodes", "1:ppn=4")])).omp_threads, Some(4));
}

#[test]
fn a_nodes_word_naming_a_node_shows_as_a_host_in_the_select() {
    let mut state = cluster(2);
    let id = submit_spec(&mut state, spec(&[("nodes", "node1+1")]));
    let job = status(&state, Reader::Nobody, &id);
    let select = job.attrs.iter().find(|attr| attr.full_name() == "Resource_List.select").expect("a select");
    assert_eq!(select.value, "1:ncpus=1:host=node1+1:ncpus=1");
}
