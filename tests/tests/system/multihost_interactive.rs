//! `qsub -I` across hosts over TCP + MUNGE when someone else answers at qsub's port: even a
//! peer that holds the job's secret gets no terminal unless its MUNGE credential is the job
//! owner's (`tests/src/netns.rs` hosts; `multihost.rs` has the working session).

use crate::multihost::recording_proxy;
use crate::users::TestUser;
use proto::interactive::{answer_challenge, QsubToMom, WindowSize};
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;
use tests::netcluster::{NetCluster, LOGIN, SERVER, SERVER_PORT};

/// The value of `"name":` in a recorded request (a number, or a string without quotes).
fn field(recorded: &str, name: &str) -> String {
    let start = recorded.find(&format!("\"{name}\":")).unwrap_or_else(|| panic!("no {name} in {recorded}"));
    let rest = recorded[start + name.len() + 3..].trim_start_matches('"');
    rest.chars().take_while(|c| c.is_ascii_alphanumeric()).collect()
}

/// The owner's `qsub -I` dies; another user on the login host, who learnt the secret (here:
/// from a recording of the submission), takes its port and answers the mom's challenge with a
/// right proof and a MUNGE credential of their own. The mom refuses: no terminal, the job ends
/// without a shell, and the mom's log says whose credential it was.
#[test]
fn a_peer_with_the_secret_but_another_users_munge_credential_gets_no_terminal() {
    let Some(cluster) = NetCluster::up(&["hosta"]) else { return };
    let login = cluster.host(LOGIN).clone();
    let (owner, intruder) = (TestUser::create("mio"), TestUser::create("mix"));
    let server = SocketAddr::from((cluster.host(SERVER).addr, SERVER_PORT));
    let proxy = cluster.net.in_host(&login, || TcpListener::bind((login.addr, 0)).unwrap());
    let proxy_port = proxy.local_addr().unwrap().port();
    let records = recording_proxy(login.clone(), proxy, server);
    let conf = cluster.net.dir.path().join("recorded.conf");
    let munge = login.munge_socket.display();
    std::fs::write(
        &conf,
        format!("PBS_SERVER={LOGIN}\nPBS_BATCH_SERVICE_PORT={proxy_port}\nPBS_MUNGE_SOCKET={munge}\n"),
    )
    .unwrap();
    let mut command = cluster.command_as("qsub", &owner.name, owner.uid, owner.gid);
    command.env("PBS_CONF_FILE", &conf).args(["-I", "-h"]);
    let mut qsub = rexpect::session::spawn_command(command, Some(30_000)).expect("qsub -I starts on a pty");
    let (_, waiting) = qsub.exp_regex(r"qsub: waiting for job \S+ to start").expect("the waiting line");
    let id = waiting.split_whitespace().nth(4).expect("an id").to_string();
    let recorded = tests::wait_for(Duration::from_secs(10), "the recorded submission", || {
        records
            .lock()
            .unwrap()
            .iter()
            .map(|sent| String::from_utf8_lossy(sent).into_owned())
            .find(|sent| sent.contains("\"secret\""))
    });
    let (secret, port) = (field(&recorded, "secret"), field(&recorded, "port").parse::<u16>().unwrap());
    qsub.process_mut().kill(rexpect::process::Signal::SIGKILL).unwrap();
    let ids = Some((intruder.uid, intruder.gid));
    let fake = tests::wait_for(Duration::from_secs(10), "the dead qsub's port", || {
        cluster.net.in_host_as(&login, ids, || TcpListener::bind((login.addr, port)).ok())
    });
    fake.set_nonblocking(true).unwrap();
    assert!(cluster.run("qrls", &[&id]).status.success());
    let (mut stream, _) = tests::wait_for(Duration::from_secs(30), "the mom to connect", || fake.accept().ok());
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let answered = cluster.net.in_host_as(&login, ids, || {
        let seal =
            |payload: &[u8]| proto::munge::encode(&login.munge_socket, payload).map(Some).map_err(|e| e.to_string());
        let answered = answer_challenge(&mut stream, &id, &secret, seal);
        let _ = proto::frame::write(&mut stream, &QsubToMom::Accept { term: None, size: WindowSize::default() });
        answered
    });
    assert!(answered.is_err(), "the mom proved itself to another user");
    let status = tests::wait_for(Duration::from_secs(30), "the job to end", || {
        let attrs = cluster.job_attrs(&id);
        (attrs.get("job_state").map(String::as_str) == Some("F")).then(|| attrs.get("Exit_status").cloned())
    });
    assert_eq!(status.as_deref(), Some("-1"), "no shell ran: {}", cluster.logs());
    let refusal = format!("runs as uid {}, not as the job's owner", intruder.uid);
    assert!(cluster.log("hosta").contains(&refusal), "{}", cluster.logs());
}
