//! A cluster run in-process: `server::run` and two `mom::run` on one tokio runtime, talking
//! over the server's Unix socket in a temporary directory, driven through the client library.
//! The daemons are libraries with thin mains precisely so this works.

use client::conf::PbsConf;
use client::conn::Connection;
use job::JobSpec;
use proto::{ClientRequest, ServerReply};
use std::time::Duration;

fn spec(script: &str, workdir: &std::path::Path) -> JobSpec {
    JobSpec {
        shell: Some("/bin/sh".into()),
        submit_host: "localhost".into(),
        submit_args: "inproc".into(),
        ..JobSpec::new("inproc", script)
            .with_workdir(workdir.display().to_string())
            .with_resources(&[("nodes", "2:ppn=1")])
    }
}

#[test]
fn server_and_moms_in_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut config = server::config::ServerConfig::new(dir.path().join("state"), "inproc".into());
    // The test submits as whoever runs it, root included (a personal cluster).
    config.acl_roots = vec!["root".to_string()];
    let socket = config.socket_path.clone();
    let wait_stop = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };
    let server_task = runtime.spawn(server::run(config, wait_stop(stopped.clone())));
    let mut mom_tasks = Vec::new();
    for node in ["node1", "node2"] {
        let mut mom_config = mom::config::MomConfig::new(&socket, node);
        mom_config.np = 2;
        mom_config.spool_dir = dir.path().join(node);
        mom_config.tmpdir_base = dir.path().join("tmp");
        mom_config.kill_jobs_on_shutdown = true;
        mom_tasks.push(runtime.spawn(mom::run(mom_config, wait_stop(stopped.clone()))));
    }

    let server = client::conf::ServerAddr::Unix(socket);
    let conf = PbsConf {
        server_name: "inproc".into(),
        server,
        secondary: None,
        home: None,
        source: dir.path().join("pbs.conf"),
        server_uid: None,
    };
    let free_nodes = || {
        let mut conn = Connection::open_conf(&conf).ok()?;
        match conn.request(&ClientRequest::StatusNode { names: vec![] }).ok()? {
            ServerReply::Nodes { nodes, .. } => {
                (nodes.iter().filter(|node| node.get("state") == Some("free")).count() == 2).then_some(())
            }
            _ => None,
        }
    };
    tests::wait_for(Duration::from_secs(20), "two free nodes", free_nodes);

    let mut conn = Connection::open_conf(&conf).unwrap();
    let id = match conn.request(&ClientRequest::SubmitJob(Box::new(spec("exit 6\n", dir.path())))).unwrap() {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("{other:?}"),
    };
    assert_eq!(id, "1.inproc");
    let status = tests::wait_for(Duration::from_secs(20), "the job to finish", || {
        let request = ClientRequest::StatusJob {
            selectors: vec![id.clone()],
            history: true,
            users: vec![],
            attrs: None,
            subjobs: false,
            arrays_only: false,
            rows: false,
        };
        match conn.request_all(&request).ok()? {
            ServerReply::Jobs { jobs, .. } if jobs[0].get("job_state") == Some("F") => {
                jobs[0].get("Exit_status").map(str::to_string)
            }
            _ => None,
        }
    });
    assert_eq!(status, "6");
    assert!(dir.path().join("inproc.o1").exists(), "output delivered to the submit directory");

    stop.send(true).unwrap();
    runtime.block_on(async {
        server_task.await.unwrap().unwrap();
        for task in mom_tasks {
            task.await.unwrap().unwrap();
        }
    });
}
