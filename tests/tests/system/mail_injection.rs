//! Mail recipients never become options of root's sendmail (issue 12, item 1). `-M` values
//! that could read as options are refused by qsub (also as a directive) and qalter with
//! `illegal -M value` and exit 2, and by the server when sent raw (PBSE_BADATVAL); a recording
//! sendmail, given one argument a line, sees `-f adm --` and then only addresses, for the
//! begin and end mails and for the forced mail of undeliverable output.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(60);

/// A sendmail that writes its arguments one a line, a blank line, then the message.
fn argv_recording_sendmail(dir: &Path) -> PathBuf {
    let path = dir.join("sendmail.sh");
    let script = "#!/bin/sh\nout=\"$(dirname \"$0\")/mail.$$\"\nfor arg in \"$@\"; do printf '%s\\n' \"$arg\"; done > \"$out.tmp\"\n\
                  echo >> \"$out.tmp\"\ncat >> \"$out.tmp\"\nmv \"$out.tmp\" \"$out\"\n";
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// Each recorded mail's arguments.
fn argvs(dir: &Path) -> Vec<Vec<String>> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|entry| {
            entry.file_name().to_string_lossy().starts_with("mail.")
                && !entry.file_name().to_string_lossy().ends_with(".tmp")
        })
        .map(|entry| {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            text.split("\n\n").next().unwrap().lines().map(str::to_string).collect()
        })
        .collect()
}

fn raw_request(cluster: &Cluster, request: proto::ClientRequest) -> proto::ServerReply {
    let mut peer = std::os::unix::net::UnixStream::connect(cluster.state.path().join("server.sock")).expect("connect");
    peer.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let hello = proto::Hello::new(proto::Role::Client, None);
    proto::frame::write(&mut peer, &hello).unwrap();
    let _: proto::HelloReply = proto::frame::read(&mut peer).unwrap();
    proto::frame::write(&mut peer, &request).unwrap();
    proto::frame::read(&mut peer).unwrap()
}

fn assert_usage_error(output: &std::process::Output, what: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{what}: {output:?}");
    assert!(stderr.contains("illegal -M value"), "{what}: {stderr}");
}

#[test]
fn an_option_as_mail_recipient_never_reaches_sendmail() {
    let mailbox = tempfile::tempdir().unwrap();
    let sendmail = argv_recording_sendmail(mailbox.path());
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--sendmail", sendmail.to_str().unwrap()]);
    let script = cluster.script("plain.sh", "true\n");
    for value in
        ["x@example.org,-be", "x@example.org,-X/tmp/f", "x@example.org, -be", "a b@example.org", "x@example.org\n-be"]
    {
        let output = cluster
            .command("qsub")
            .args(["-m", "abe", "-M", value])
            .arg(&script)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_usage_error(&output, &format!("qsub -M {value:?}"));
    }
    let directive = cluster.script("directive.sh", "#PBS -m abe\n#PBS -M x@example.org,-be\ntrue\n");
    let output = cluster.command("qsub").arg(&directive).stdin(Stdio::null()).output().unwrap();
    assert_usage_error(&output, "#PBS -M");
    let listing = cluster.run("qstat", &[]);
    assert!(listing.status.success() && listing.stdout.is_empty(), "nothing stored: {listing:?}");

    // A held job: qalter and a raw AlterJob cannot set such a recipient.
    let id = cluster.qsub(&script, &["-h", "-m", "be", "-M", "x@example.org"]);
    let output = cluster.run("qalter", &["-M", "x@example.org,-be", &id]);
    assert_usage_error(&output, "qalter -M");
    let changes = proto::JobAlteration { mail_users: Some(vec!["-be".to_string()]), ..Default::default() };
    match raw_request(&cluster, proto::ClientRequest::AlterJob { ids: vec![id.clone()], changes: Box::new(changes) }) {
        proto::ServerReply::Done { errors } => {
            assert_eq!(errors.iter().map(|error| error.code.number()).collect::<Vec<_>>(), [15014], "{errors:?}")
        }
        other => panic!("{other:?}"),
    }
    // (qstat does not show Mail_Users: the mails below prove the recipient is unchanged.)

    // A raw SubmitJob that skips qsub's check.
    let mut spec: job::JobSpec = serde_json::from_value(serde_json::json!({
        "name": "raw", "script": "true\n", "queue": null, "resources": [], "output_path": null,
        "error_path": null, "join": "No", "keep": "n", "user_hold": false, "rerunnable": true,
        "priority": 0, "variables": [], "shell": null, "init_dir": null, "mail_points": "abe",
        "mail_users": ["x@example.org", "-be", "-X/tmp/f"], "account": null, "submit_host": "h", "submit_args": ""
    }))
    .unwrap();
    spec.variables.push("PBS_O_WORKDIR", "/tmp");
    match raw_request(&cluster, proto::ClientRequest::SubmitJob(Box::new(spec))) {
        proto::ServerReply::Error(error) => assert_eq!(error.code.number(), 15014, "{error:?}"),
        other => panic!("the server took -be as a recipient: {other:?}"),
    }

    // The mails that are sent: begin and end of the held job, and the forced mail of output
    // that cannot be delivered (no -m).
    assert!(cluster.run("qrls", &[&id]).status.success());
    let lost = cluster.qsub(&script, &["-m", "n", "-M", "y@example.org", "-o", "/nonexistent.minipbs/dir/out"]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0);
    cluster.wait_finished(&lost, LIMIT);
    let mut argvs = wait_for(LIMIT, "three mails", || Some(argvs(mailbox.path())).filter(|argvs| argvs.len() == 3));
    argvs.sort();
    assert_eq!(argvs[0], ["-f", "adm", "--", "x@example.org"]);
    assert_eq!(argvs[1], ["-f", "adm", "--", "x@example.org"]);
    assert_eq!(argvs[2], ["-f", "adm", "--", "y@example.org"], "{}", cluster.logs());
}
