//! Snapshot tests of what a person or a program reads after a job event: accounting records,
//! mail texts and server log texts, for one job through its whole life.

use crate::accounting::record;
use crate::config::Flavor;
use crate::mail::mail_for;
use crate::notices::log_text;
use crate::state::outbox::{Notice, NoticeKind};
use crate::state::{Job, JobTimes, NodeShare};
use insta::assert_snapshot;
use job::{JobId, JobSpec, JobState, ResourceRequest};
use pbslog::Tm;
use proto::mom::ResourcesUsed;

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
}

/// A `nodes=2:ppn=2` job of alice, queued.
fn queued() -> Job {
    let resources = pairs(&[("nodes", "2:ppn=2"), ("walltime", "01:00:00")]);
    let spec = JobSpec {
        resources: resources.clone(),
        mail_points: "abe".to_string(),
        submit_host: "login1".to_string(),
        submit_args: "job.sh".to_string(),
        ..JobSpec::new("myjob", "sleep 1\n")
    };
    let mut job = Job::new(
        JobId::new(123, "head"),
        spec.into(),
        ResourceRequest::from_list(&resources).expect("valid request"),
        JobState::Queued,
    );
    job.owner = "alice".into();
    job.owner_uid = 1000;
    job.group = "users".into();
    job.queue = "workq".into();
    job.times = JobTimes {
        ctime: 1_700_605_560,
        qtime: 1_700_605_560,
        mtime: 1_700_605_560,
        etime: 1_700_605_560,
        stime: None,
        obittime: None,
    };
    job.output_path = crate::state::StdPath::literal("login1:/home/alice/myjob.o123");
    job.error_path = crate::state::StdPath::literal("login1:/home/alice/myjob.e123");
    job
}

fn running() -> Job {
    let mut job = queued();
    job.set_state_for_test(JobState::Running);
    job.times.stime = Some(1_700_605_565);
    job.run_count = 1;
    job.exec = ["node1", "node2"]
        .iter()
        .map(|node| NodeShare {
            node: (*node).into(),
            slots: vec![0, 1],
            gpus: Vec::new(),
            mem_bytes: 0,
            mpiprocs: 2,
            mps: None,
            amounts: Vec::new(),
        })
        .collect();
    job
}

fn ended(exit_status: i32) -> Job {
    let mut job = running();
    job.set_state_for_test(JobState::Finished);
    job.session_id = Some(24567);
    job.exit_status = Some(exit_status);
    job.used = ResourcesUsed { cput_secs: 3, mem_kb: 4312, vmem_kb: 12960, walltime_secs: 7, ncpus: 4 };
    job
}

fn notice(kind: NoticeKind, job: Job, time: i64) -> Notice {
    Notice { kind, job: Box::new(job), time }
}

/// The life of job 123: queued, started, ended; and job 124, deleted while queued.
fn life() -> Vec<Notice> {
    let mut deleted = queued();
    deleted.id = JobId::new(124, "head");
    vec![
        notice(NoticeKind::Queued, queued(), 1_700_605_560),
        notice(NoticeKind::Started, running(), 1_700_605_565),
        notice(NoticeKind::Ended, ended(0), 1_700_605_572),
        notice(NoticeKind::Deleted { requestor: "alice@head".to_string() }, deleted, 1_700_605_620),
    ]
}

#[test]
fn accounting_records_of_a_job_life() {
    let records: Vec<String> = life().iter().map(|notice| record(notice, Flavor::OpenPbs, Tm::utc)).collect();
    assert_snapshot!(records.join("\n"));
}

#[test]
fn accounting_records_of_aborts_reruns_and_torque() {
    let mut lost = ended(-20);
    lost.comment = Some("ended: its mother superior lost the job".to_string());
    let mut requeued = queued();
    requeued.comment = Some("requeued: its mother superior lost the job".to_string());
    requeued.run_count = 1;
    let mut with_account = queued();
    std::sync::Arc::make_mut(&mut with_account.spec).account = Some("big project".to_string());
    let records = [
        record(&notice(NoticeKind::Aborted, lost, 1_700_605_600), Flavor::OpenPbs, Tm::utc),
        record(&notice(NoticeKind::Rerun, requeued, 1_700_605_600), Flavor::OpenPbs, Tm::utc),
        record(&notice(NoticeKind::Queued, with_account, 1_700_605_560), Flavor::OpenPbs, Tm::utc),
        record(&notice(NoticeKind::Queued, queued(), 1_700_605_560), Flavor::Torque, Tm::utc),
    ];
    assert_snapshot!(records.join("\n"));
}

#[test]
fn accounting_records_of_suspend_and_resume() {
    let mut suspended = running();
    suspended.set_state_for_test(JobState::Suspended);
    suspended.used = ResourcesUsed { cput_secs: 2, mem_kb: 4312, vmem_kb: 12960, walltime_secs: 5, ncpus: 4 };
    let notices = [
        notice(NoticeKind::Suspended, suspended, 1_700_605_570),
        notice(NoticeKind::Resumed, running(), 1_700_605_590),
    ];
    let mut texts: Vec<String> = notices.iter().map(|notice| record(notice, Flavor::OpenPbs, Tm::utc)).collect();
    for notice in &notices {
        texts.push(log_text(notice, "head"));
        assert_eq!(mail_for(notice), None, "no mail for {:?}", notice.kind);
        assert!(crate::accounting::is_recorded(&notice.kind, Flavor::OpenPbs));
        assert!(!crate::accounting::is_recorded(&notice.kind, Flavor::Torque), "TORQUE has no z/r records");
    }
    assert_snapshot!(texts.join("\n"));
}

#[test]
fn torque_accounting_records_of_a_job_life() {
    let mut over = ended(-29);
    over.id = JobId::new(125, "head");
    let mut notices = life();
    notices.push(notice(NoticeKind::Ended, over, 1_700_605_580));
    let records: Vec<String> = notices.iter().map(|notice| record(notice, Flavor::Torque, Tm::utc)).collect();
    assert_snapshot!(records.join("\n"));
}

#[test]
fn mail_texts() {
    let mut texts = Vec::new();
    for notice in life() {
        match mail_for(&notice) {
            Some(mail) => texts.push(format!("== {:?} -> {}\n{}", notice.kind, mail.recipients.join(" "), mail.text)),
            None => texts.push(format!("== {:?}: no mail\n", notice.kind)),
        }
    }
    let mut failed = ended(-1);
    std::sync::Arc::make_mut(&mut failed.spec).mail_users = vec!["someone@example.com".to_string(), "bob".to_string()];
    let mail = mail_for(&notice(NoticeKind::Ended, failed, 1_700_605_572)).expect("abort mail");
    texts.push(format!("== Ended -1 -> {}\n{}", mail.recipients.join(" "), mail.text));
    let mail = mail_for(&notice(NoticeKind::Ended, ended(-29), 1_700_605_572)).expect("abort mail");
    texts.push(format!("== Ended -29 -> {}\n{}", mail.recipients.join(" "), mail.text));
    let mut by_root = queued();
    std::sync::Arc::make_mut(&mut by_root.spec).mail_points = "n".to_string();
    let deleted = notice(NoticeKind::Deleted { requestor: "root@head".to_string() }, by_root, 1_700_605_620);
    let mail = mail_for(&deleted).expect("mail to the owner when someone else deletes the job");
    texts.push(format!("== Deleted by root -> {}\n{}", mail.recipients.join(" "), mail.text));
    assert_snapshot!(texts.join("\n"));
}

#[test]
fn mail_points_choose_the_mails() {
    let points = |points: &str| -> String {
        let mut job = ended(0);
        std::sync::Arc::make_mut(&mut job.spec).mail_points = points.to_string();
        let mut aborted = job.clone();
        aborted.exit_status = Some(-1);
        [
            notice(NoticeKind::Started, job.clone(), 0),
            notice(NoticeKind::Ended, job, 0),
            notice(NoticeKind::Ended, aborted.clone(), 0),
            notice(NoticeKind::Aborted, aborted, 0),
        ]
        .iter()
        .filter_map(mail_for)
        .map(|mail| mail.point)
        .collect()
    };
    assert_eq!(points(""), "aa", "the default is a");
    assert_eq!(points("a"), "aa");
    assert_eq!(points("be"), "be");
    assert_eq!(points("abe"), "beaa");
    assert_eq!(points("n"), "");
    let mut subjob = ended(0);
    subjob.id = JobId { array: Some(job::id::ArrayPart::Sub(3)), ..JobId::new(123, "head") };
    std::sync::Arc::make_mut(&mut subjob.spec).mail_points = "e".to_string();
    assert_eq!(mail_for(&notice(NoticeKind::Ended, subjob.clone(), 0)), None, "subjobs mail only with j");
    std::sync::Arc::make_mut(&mut subjob.spec).mail_points = "ej".to_string();
    assert!(mail_for(&notice(NoticeKind::Ended, subjob, 0)).is_some());
}

#[test]
fn server_log_texts() {
    let texts: Vec<String> = life().iter().map(|notice| log_text(notice, "head")).collect();
    assert_snapshot!(texts.join("\n"));
}

#[test]
fn undelivered_output_is_logged_commented_and_mailed_whatever_the_mail_points() {
    use crate::handlers::job_ended::{copy_failure_text, undelivered_comment};
    use proto::mom::Undelivered;
    let undelivered = [
        Undelivered {
            spool: "/var/spool/minipbs/mom/123.head.OU".to_string(),
            dest: "/etc/evil".to_string(),
            error: "sh: 1: cannot create /etc/evil: Permission denied".to_string(),
            kept: "/var/spool/minipbs/mom/undelivered/123.head.OU".to_string(),
        },
        Undelivered {
            spool: "/var/spool/minipbs/mom/123.head.ER".to_string(),
            dest: "/home/alice/missing/myjob.e123".to_string(),
            error: "sh: 1: cannot create /home/alice/missing/myjob.e123: Directory nonexistent".to_string(),
            kept: String::new(),
        },
    ];
    let mut job = ended(0);
    std::sync::Arc::make_mut(&mut job.spec).mail_points = "n".to_string();
    job.id = JobId { array: Some(job::id::ArrayPart::Sub(3)), ..JobId::new(123, "head") };
    let notice = notice(NoticeKind::CopyFailed { detail: copy_failure_text(&undelivered) }, job, 1_700_605_572);
    for flavor in [Flavor::OpenPbs, Flavor::Torque] {
        assert!(!crate::accounting::is_recorded(&notice.kind, flavor), "no accounting record");
    }
    let mail = mail_for(&notice).expect("mailed despite -m n, and for a subjob without j");
    let texts = [
        log_text(&notice, "head"),
        undelivered_comment(&undelivered, "node1"),
        format!("== -> {}\n{}", mail.recipients.join(" "), mail.text),
    ];
    assert_snapshot!(texts.join("\n"));
}

#[test]
fn recipients_stored_before_the_grammar_are_dropped_never_mailed() {
    // A job stored before `-M` was checked (or by a hand-written row) reaches no sendmail option.
    let mut job = ended(-1);
    std::sync::Arc::make_mut(&mut job.spec).mail_users = vec!["x@example.org".into(), "-be".into(), "-X/tmp/f".into()];
    let mail = mail_for(&notice(NoticeKind::Ended, job.clone(), 0)).expect("abort mail");
    assert_eq!(mail.recipients, ["x@example.org"]);
    assert!(!mail.text.contains("-be"), "{}", mail.text);
    std::sync::Arc::make_mut(&mut job.spec).mail_users = vec!["-be".into()];
    assert_eq!(mail_for(&notice(NoticeKind::Ended, job.clone(), 0)), None, "no valid recipient: no mail");
    // `#PBS -M $USER@site` is stored literally (OpenPBS does not expand directives): never mailed.
    std::sync::Arc::make_mut(&mut job.spec).mail_users = vec!["$USER@umich.edu".into(), "bob".into()];
    let mail = mail_for(&notice(NoticeKind::Ended, job.clone(), 0)).expect("abort mail");
    assert_eq!(mail.recipients, ["bob"]);
    let spec = std::sync::Arc::make_mut(&mut job.spec);
    spec.mail_users = vec![];
    spec.submit_host = "h\nBcc: x@evil".into();
    assert_eq!(mail_for(&notice(NoticeKind::Ended, job, 0)), None, "a bad submit host makes no owner address");
}
