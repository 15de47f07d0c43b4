//! Messages as released builds wrote them still decode to what they meant (pueue keeps its old
//! state files the same way): a change to the encoding that a peer of the previous release
//! would not understand fails here, not in a mixed cluster.
//!
//! Fixtures: `tests/fixtures/<release>/<message>.json`, each the body of one frame exactly as
//! that release's `proto::frame::encode` wrote it (JSON; the 4-byte length prefix is left out).
//! Each release's samples are a function here ([`release_0_1_0`]) that built them; the test
//! decodes every fixture of every release and compares it with its sample.
//!
//! A new release adds its samples (a new function, listed in [`RELEASES`]) and writes its
//! directory once, with this build:
//!
//! ```text
//! MINIPBS_WRITE_FIXTURES=0.2.0 cargo test -p proto --test previous_release
//! ```
//!
//! (the variable names the release whose samples are written; an earlier release's directory
//! is never rewritten: its bytes are what that release sent). When a release stops accepting
//! the oldest one's peers ([`proto::ACCEPTED_PROTOCOLS`]), that release's fixtures go.

use job::depend::{DependItem, DependKind};
use job::{Attr, JobSpec};
use proto::error::RequestError;
use proto::mom::{HostAlloc, JobObit, Registration, ResourcesUsed, Undelivered};
use proto::{ClientRequest, ErrorCode, Hello, HelloReply, JobLaunch, JobStatus, MomToServer, Role, ServerReply};
use proto::{ServerToMom, ACCEPTED_PROTOCOLS, PROTOCOL_VERSION};
use std::path::PathBuf;

/// A message of any direction, as one sample.
#[derive(Debug, PartialEq)]
enum Sample {
    Hello(Hello),
    HelloReply(HelloReply),
    Request(ClientRequest),
    Reply(ServerReply),
    FromMom(MomToServer),
    ToMom(ServerToMom),
}

impl Sample {
    fn encode(&self) -> Vec<u8> {
        let frame = match self {
            Sample::Hello(message) => proto::frame::encode(message),
            Sample::HelloReply(message) => proto::frame::encode(message),
            Sample::Request(message) => proto::frame::encode(message),
            Sample::Reply(message) => proto::frame::encode(message),
            Sample::FromMom(message) => proto::frame::encode(message),
            Sample::ToMom(message) => proto::frame::encode(message),
        };
        frame.expect("encode")[4..].to_vec()
    }

    /// `body` decoded as the same type as `self`.
    fn decode_like(&self, body: &[u8]) -> Result<Sample, proto::FrameError> {
        use proto::frame::decode;
        Ok(match self {
            Sample::Hello(_) => Sample::Hello(decode(body)?),
            Sample::HelloReply(_) => Sample::HelloReply(decode(body)?),
            Sample::Request(_) => Sample::Request(decode(body)?),
            Sample::Reply(_) => Sample::Reply(decode(body)?),
            Sample::FromMom(_) => Sample::FromMom(decode(body)?),
            Sample::ToMom(_) => Sample::ToMom(decode(body)?),
        })
    }
}

/// A release's samples, by fixture name.
type Samples = Vec<(&'static str, Sample)>;

/// A release with fixtures, and the samples its build wrote.
struct Release {
    name: &'static str,
    samples: fn() -> Samples,
}

const RELEASES: &[Release] = &[Release { name: "0.1.0", samples: release_0_1_0 }];

fn fixture_dir(release: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(release)
}

#[test]
fn every_fixture_of_every_release_decodes_to_its_sample() {
    if let Ok(release) = std::env::var("MINIPBS_WRITE_FIXTURES") {
        write_fixtures(&release);
    }
    for Release { name: release, samples } in RELEASES {
        let samples = samples();
        let dir = fixture_dir(release);
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).expect("fixture dir").map(|entry| entry.unwrap().path()).collect();
        files.sort();
        let names: Vec<String> = samples.iter().map(|(name, _)| format!("{name}.json")).collect();
        let found: Vec<String> = files.iter().map(|path| path.file_name().unwrap().to_string_lossy().into()).collect();
        assert_eq!(sorted(names), found, "release {release}: one fixture per sample");
        for (name, sample) in &samples {
            let body = std::fs::read(dir.join(format!("{name}.json"))).unwrap();
            let decoded = sample.decode_like(&body).unwrap_or_else(|error| panic!("{release}/{name}: {error}"));
            assert_eq!(&decoded, sample, "{release}/{name} decodes to something else");
        }
    }
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// Writes the fixtures of `release` from its samples as this build encodes them.
fn write_fixtures(release: &str) {
    let samples =
        RELEASES.iter().find(|known| known.name == release).expect("MINIPBS_WRITE_FIXTURES: a release").samples;
    let dir = fixture_dir(release);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, sample) in samples() {
        std::fs::write(dir.join(format!("{name}.json")), sample.encode()).unwrap();
    }
}

#[test]
fn the_accepted_protocols_are_this_one_and_the_first_release() {
    assert_eq!(PROTOCOL_VERSION, 3);
    assert_eq!(ACCEPTED_PROTOCOLS, [1, 2, 3]);
    for version in [1, 2, 3] {
        assert!(proto::protocol_accepted(version), "{version}");
    }
    for version in [0, 4, 9, u32::MAX] {
        assert!(!proto::protocol_accepted(version), "{version} never existed or is newer");
    }
}

/// Release 0.1.0 (protocol 2): a client's and a mom's handshake, a submission and its reply,
/// a status reply, a refusal, a mom's registration and obit, a launch and a kill.
fn release_0_1_0() -> Samples {
    vec![
        ("hello_client", Sample::Hello(Hello { role: Role::Client, protocol: 2, nonce: None })),
        ("hello_mom_sealed", Sample::Hello(Hello { role: Role::Mom, protocol: 2, nonce: Some(nonce()) })),
        (
            "welcome",
            Sample::HelloReply(HelloReply::Welcome { protocol: 2, server_name: "head".into(), nonce: Some(nonce()) }),
        ),
        (
            "refused",
            Sample::HelloReply(HelloReply::Refused {
                code: ErrorCode::ProtocolMismatch,
                message: "protocol version 3 not supported (server speaks 2)".into(),
            }),
        ),
        ("submit", Sample::Request(ClientRequest::SubmitJob(Box::new(submitted_spec())))),
        ("job_submitted", Sample::Reply(ServerReply::JobSubmitted { id: "12.head".into() })),
        ("status_jobs", Sample::Reply(status_reply())),
        ("register", Sample::FromMom(MomToServer::Register(registration()))),
        (
            "job_started",
            Sample::FromMom(MomToServer::JobStarted { job_id: "12.head".into(), session_id: 4242, run_count: 1 }),
        ),
        ("job_ended", Sample::FromMom(MomToServer::JobEnded(obit()))),
        ("run_job", Sample::ToMom(ServerToMom::RunJob(Box::new(launch())))),
        ("kill_job", Sample::ToMom(ServerToMom::KillJob { job_id: "12.head".into() })),
    ]
}

fn nonce() -> proto::seal::Nonce {
    proto::seal::Nonce(std::array::from_fn(|i| i as u8))
}

/// `qsub -N sim -l select=1:ncpus=2 -l walltime=1:00:00 -W depend=afterok:11.head -J 1-4 -m abe`.
fn submitted_spec() -> JobSpec {
    JobSpec {
        queue: Some("workq".into()),
        resources: vec![("select".into(), "1:ncpus=2".into()), ("walltime".into(), "1:00:00".into())],
        output_path: Some("login:/home/alice/out/".into()),
        join: job::spec::Join::OutErr,
        priority: 5,
        mail_points: "abe".into(),
        mail_users: vec!["alice@example.com".into()],
        account: Some("proj".into()),
        submit_host: "login".into(),
        submit_args: "-N sim -J 1-4 sim.sh".into(),
        depend: vec![DependItem::Jobs { kind: DependKind::AfterOk, jobs: vec!["11.head".into()] }],
        array: Some(job::array::ArraySpec { indices: "1-4".into(), limit: None }),
        ..JobSpec::new("sim", "#!/bin/sh\n#PBS -l walltime=1:00:00\n./sim\n").with_workdir("/home/alice")
    }
}

fn status_reply() -> ServerReply {
    let attrs = vec![
        Attr::new("Job_Name", "sim"),
        Attr::new("job_state", "Q"),
        Attr { name: "Resource_List".into(), resource: Some("walltime".into()), value: "01:00:00".into() },
    ];
    ServerReply::Jobs {
        server: "head".into(),
        jobs: vec![JobStatus { id: "12[].head".into(), attrs }],
        errors: vec![RequestError {
            code: ErrorCode::UnknownJobId,
            message: "Unknown Job Id 99.head".into(),
            detail: None,
        }],
        more: false,
        flavor: proto::Flavor::OpenPbs,
    }
}

fn registration() -> Registration {
    Registration {
        node: "node1".into(),
        np: 8,
        mem_bytes: 16 << 30,
        ngpus: 0,
        properties: vec!["fast".into()],
        start_id: "5f3c".into(),
        jobs: vec!["10.head".into()],
        port: 15002,
        gpus: Vec::new(),
        gpu_states: Vec::new(),
        task_socket: None,
        heartbeat_ms: 0,
    }
}

fn obit() -> JobObit {
    let used = ResourcesUsed { cput_secs: 30, mem_kb: 2048, vmem_kb: 4096, walltime_secs: 61, ncpus: 2 };
    let undelivered = Undelivered {
        spool: "/var/spool/pbs/12.head.OU".into(),
        dest: "login:/home/alice/out/sim.o12".into(),
        error: "No such file or directory".into(),
        kept: "/var/spool/pbs/undelivered/12.head.OU".into(),
    };
    JobObit {
        job_id: "12.head".into(),
        exit_status: 3,
        session_id: 4242,
        used,
        undelivered: vec![undelivered],
        run_count: 1,
        stagein_failed: None,
        mem_exceeded: false,
    }
}

fn launch() -> JobLaunch {
    let host = HostAlloc {
        node: "node1".into(),
        ncpus: 2,
        mpiprocs: 2,
        gpus: Vec::new(),
        mem_bytes: Some(1 << 30),
        gpu_uuids: Vec::new(),
        mps: None,
        mom_addr: None,
    };
    JobLaunch {
        job_id: "12[3].head".into(),
        name: "sim".into(),
        queue: "workq".into(),
        user: "alice".into(),
        group: Some("users".into()),
        script: "#!/bin/sh\n./sim\n".into(),
        variables: vec![("PBS_O_WORKDIR".to_string(), "/home/alice".to_string())].into(),
        hosts: vec![host],
        walltime: Some(3600),
        kill_delay: 10,
        output_path: "/home/alice/out/".into(),
        error_path: "/home/alice/sim.e12.3".into(),
        join: job::spec::Join::OutErr,
        shell: None,
        init_dir: None,
        num_ppn: 2,
        first_ncpus: 2,
        omp_threads: Some(2),
        cookie: "c00kie".into(),
        array_index: Some(3),
        array_id: Some("12[].head".into()),
        interactive: None,
        root_allowed: false,
        run_count: 1,
        script_args: Vec::new(),
        output_name: "sim.o12.3".into(),
        error_name: "sim.e12.3".into(),
        exec: Default::default(),
        keep: String::new(),
    }
}
