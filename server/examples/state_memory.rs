//! Heap bytes the server state holds per queued job: submits 10,000 jobs through the real
//! handler into a `ServerState` (and one array of 10,000 subjobs) and prints what a counting
//! allocator saw. Prints figures only.
//! `cargo run --release -p server --example state_memory`

use server::state::outbox::Outbox;
use server::state::{Requester, ServerState};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let mut state = ServerState::new("head", "workq", 10, 0);
    let requester = Requester { uid: 1000, gid: 1000, user: "alice".into() };
    let variables: Vec<(String, String)> = [
        ("PBS_O_HOME", "/home/alice"),
        ("PBS_O_LANG", "C.UTF-8"),
        ("PBS_O_LOGNAME", "alice"),
        ("PBS_O_PATH", "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"),
        ("PBS_O_SHELL", "/bin/bash"),
        ("PBS_O_WORKDIR", "/home/alice/project/run"),
        ("PBS_O_HOST", "login"),
        ("PBS_O_SYSTEM", "Linux"),
    ]
    .iter()
    .map(|(name, value)| (name.to_string(), value.to_string()))
    .collect();
    let spec = job::JobSpec {
        user_hold: true,
        variables: variables.into(),
        submit_host: "login".into(),
        submit_args: "-h job.sh".into(),
        ..job::JobSpec::new("job.sh", "#!/bin/sh\necho hello\n")
    };
    let before = LIVE.load(Ordering::Relaxed);
    for _ in 0..10_000 {
        let mut out = Outbox::default();
        server::handlers::submit_job::submit_job(&mut state, &mut out, &requester, 0, spec.clone());
    }
    let after = LIVE.load(Ordering::Relaxed);
    println!(
        "10,000 held jobs: {:.1} MiB of heap, {} bytes per job",
        (after - before) as f64 / 1048576.0,
        (after - before) / 10_000
    );
    println!("size_of::<Job>() = {} bytes", std::mem::size_of::<server::state::Job>());
    println!(
        "of which: JobId {}, ResourceRequest {}, JobTimes {}, ResourcesUsed {}, EligibleClock {}",
        std::mem::size_of::<job::JobId>(),
        std::mem::size_of::<job::ResourceRequest>(),
        std::mem::size_of::<server::state::JobTimes>(),
        std::mem::size_of::<proto::mom::ResourcesUsed>(),
        std::mem::size_of::<server::state::EligibleClock>()
    );

    // One array of 10,000 subjobs: they share the parent's spec.
    let mut state = ServerState::new("head", "workq", 10, 0);
    let mut array = spec.clone();
    array.array = Some(job::array::ArraySpec { indices: "1-10000".into(), limit: None });
    let before = LIVE.load(Ordering::Relaxed);
    let mut out = Outbox::default();
    server::handlers::submit_job::submit_job(&mut state, &mut out, &requester, 0, array);
    drop(out);
    let after = LIVE.load(Ordering::Relaxed);
    println!(
        "one array of 10,000 held subjobs: {:.1} MiB of heap, {} bytes per subjob",
        (after - before) as f64 / 1048576.0,
        (after - before) / 10_000
    );
}
