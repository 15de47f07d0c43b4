//! Tests of the greeting: only the job's mom is taken, silent peers do not keep it waiting, and
//! one address cannot hold every greeter.

use super::*;
use proto::frame;
use proto::interactive::{Handshake, MomToQsub, Prover, QsubToMom, INTERACTIVE_VERSION};
use std::net::SocketAddr;

/// How long a test waits for an outcome before it fails (far beyond any greeting here).
const DEADLINE: Duration = Duration::from_secs(60);

fn expected() -> Expected {
    Expected { job_id: "7.s".into(), secret: "5ec75ec75ec75ec7".into(), munge_socket: None }
}

/// A mom stand-in: challenges for `job_id`, reads qsub's proof, and answers with a proof
/// made with `secret`. Returns qsub's answer, if any.
fn mom(address: SocketAddr, job_id: &'static str, secret: &'static str) -> std::thread::JoinHandle<Option<QsubToMom>> {
    std::thread::spawn(move || {
        let mut stream = TcpStream::connect(address).unwrap();
        let mom_nonce = handshake::nonce().unwrap();
        let challenge =
            MomToQsub::Challenge { version: INTERACTIVE_VERSION, job_id: job_id.into(), nonce: mom_nonce.clone() };
        frame::write(&mut stream, &challenge).unwrap();
        let answer: QsubToMom = frame::read(&mut stream).ok()?;
        let QsubToMom::Proof { nonce, .. } = &answer else { return Some(answer) };
        let shake = Handshake { job_id, mom_nonce: &mom_nonce, qsub_nonce: nonce };
        let _ = frame::write(&mut stream, &MomToQsub::Proven { proof: handshake::proof(secret, Prover::Mom, &shake) });
        // Held open until qsub has taken the connection.
        let _ = frame::read::<QsubToMom>(&mut stream);
        Some(answer)
    })
}

#[test]
fn greeting_takes_only_the_mom_that_proves_it_holds_the_secret() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let expected = expected();
    for (job_id, secret, ok) in
        [("7.s", "5ec75ec75ec75ec7", true), ("7.s", "5ec85ec85ec85ec8", false), ("8.s", "5ec75ec75ec75ec7", false)]
    {
        let mom = mom(address, job_id, secret);
        let (stream, _) = listener.accept().unwrap();
        let greeted = greet(stream, &expected);
        assert_eq!(greeted.is_ok(), ok, "{job_id} {secret}: {greeted:?}");
        if let Ok(stream) = greeted {
            assert!(proto::keepalive::is_kept_alive(&stream), "a vanished mom host is noticed");
        }
        if let Some(QsubToMom::Proof { proof, credential, .. }) = mom.join().unwrap() {
            assert!(!proof.contains(&expected.secret) && credential.is_none());
        }
    }
    let mut stranger = TcpStream::connect(address).unwrap();
    frame::write(&mut stranger, &MomToQsub::Exit { status: 0 }).unwrap();
    let (stream, _) = listener.accept().unwrap();
    assert!(greet(stream, &expected).unwrap_err().contains("did not introduce itself"));
}

#[test]
fn silent_peers_do_not_keep_the_mom_waiting() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let greeter = Greeter::start(listener, expected()).unwrap();
    // Each would hold a one-at-a-time greeter for HELLO_TIMEOUT before the mom got its turn.
    let silent: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(address).unwrap()).collect();
    let mom = mom(address, "7.s", "5ec75ec75ec75ec7");
    match greeter.next(DEADLINE) {
        Ok(Greeted::Mom(_)) => {}
        Ok(Greeted::Refused(reason)) => panic!("a refusal came before the mom: {reason}"),
        Ok(Greeted::Closed(error)) => panic!("the port closed: {error}"),
        Err(error) => panic!("no mom within {DEADLINE:?}: {error}"),
    }
    drop(greeter);
    drop(silent);
    assert!(matches!(mom.join().unwrap(), Some(QsubToMom::Proof { .. })));
}

#[test]
fn one_address_holds_at_most_its_share_of_the_greeters() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let greeter = Greeter::start(listener, expected()).unwrap();
    let silent: Vec<TcpStream> = (0..GREETERS_PER_ADDRESS + 1).map(|_| TcpStream::connect(address).unwrap()).collect();
    match greeter.next(DEADLINE) {
        Ok(Greeted::Refused(reason)) => assert!(reason.contains("too many connections"), "{reason}"),
        Ok(Greeted::Mom(_)) => panic!("a silent peer was taken for the mom"),
        Ok(Greeted::Closed(error)) => panic!("the port closed: {error}"),
        Err(error) => panic!("the excess connection was not refused: {error}"),
    }
    drop(silent);
}
