//! Fair share on a real cluster (issue 16): a user who has used the cluster waits behind one
//! who has not, `pbsfs` shows usage growing as jobs end, and a restarted server keeps it.
//! Needs root (creates two users).

use crate::users::{as_user, TestUser};
use std::collections::BTreeSet;
use std::time::Duration;
use tests::{Cluster, Shape};

fn submit_as(cluster: &Cluster, user: &TestUser, script: &std::path::Path) -> String {
    let output = as_user(cluster, user, "qsub").arg(script).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// `pbsfs -g NAME`'s `usage` line, in its seconds.
fn usage_of(cluster: &Cluster, name: &str) -> Option<f64> {
    let output = cluster.run("pbsfs", &["-g", name]);
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().find(|line| line.starts_with("usage\t"))?;
    line.split(':').nth(1)?.split_whitespace().next()?.parse().ok()
}

/// Ids of `user`'s jobs in state `state` (qselect, history included).
fn jobs_in(cluster: &Cluster, user: &TestUser, state: &str) -> BTreeSet<String> {
    let output = cluster.run("qselect", &["-x", "-u", &user.name, "-s", state]);
    String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect()
}

/// A job's `stime` (`Thu Nov 26 01:10:26 2026`) as a number that orders like the time.
fn stime(cluster: &Cluster, id: &str) -> Option<i64> {
    let text = cluster.job_attr(id, "stime")?;
    let words: Vec<&str> = text.split_whitespace().collect();
    let [_, month, day, clock, year] = words[..] else { return None };
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = months.iter().position(|name| *name == month)? as i64;
    let mut parts = clock.split(':').map(|part| part.parse::<i64>().ok());
    let (hours, minutes, seconds) = (parts.next()??, parts.next()??, parts.next()??);
    let days = (year.parse::<i64>().ok()? * 12 + month) * 31 + day.parse::<i64>().ok()?;
    Some(days * 86400 + hours * 3600 + minutes * 60 + seconds)
}

#[test]
fn a_user_who_used_the_cluster_waits_behind_one_who_did_not_and_usage_survives_a_restart() {
    if !tests::root_or_skip("fair share", "to create users") {
        return;
    }
    let alice = TestUser::create("fa");
    let bob = TestUser::create("fb");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let script = cluster.script("short.sh", "sleep 1\n");
    let started = std::time::Instant::now();
    let alice_jobs: Vec<String> = (0..200).map(|_| submit_as(&cluster, &alice, &script)).collect();
    eprintln!("alice's 200 jobs submitted in {:?}", started.elapsed());
    // Alice uses the cluster for a while: some of her jobs end and her usage grows.
    tests::wait_for(Duration::from_secs(60), "four of alice's jobs to end", || {
        (jobs_in(&cluster, &alice, "F").len() >= 4).then_some(())
    });
    let early = usage_of(&cluster, &alice.name).expect("pbsfs shows alice");
    // Until she has used three times what bob's ten jobs of a second will (usage counts running
    // jobs too: once bob has used more than she has, her jobs rightly go first again).
    tests::wait_for(Duration::from_secs(90), "alice's usage to grow as jobs end", || {
        let now = usage_of(&cluster, &alice.name)?;
        (now >= early + 2.0 && now >= 30.0).then_some(())
    });
    eprintln!("alice's usage grew at {:?}", started.elapsed());
    let bob_jobs: Vec<String> = (0..10).map(|_| submit_as(&cluster, &bob, &script)).collect();
    let alice_waiting = jobs_in(&cluster, &alice, "Q");
    assert!(alice_waiting.len() > 100, "alice still has most of her jobs queued");
    let limit = Duration::from_secs(60);
    for id in &bob_jobs {
        assert_eq!(cluster.wait_finished(id, limit), 0, "{}", cluster.logs());
    }
    let bob_last_start = bob_jobs.iter().filter_map(|id| stime(&cluster, id)).max().expect("bob's jobs started");
    for id in &alice_waiting {
        if let Some(started) = stime(&cluster, id) {
            assert!(
                started >= bob_last_start,
                "{id} of alice started at {started}, before bob's last ({bob_last_start})"
            );
        }
    }
    assert!(alice_jobs.len() == 200);
    // Stop alice's sweep, let the running ones end, and compare her usage across a restart.
    let queued: Vec<String> = jobs_in(&cluster, &alice, "Q").into_iter().collect();
    let mut qdel = cluster.command("qdel");
    assert!(qdel.args(&queued).status().unwrap().success());
    tests::wait_for(Duration::from_secs(30), "alice's running jobs to end", || {
        jobs_in(&cluster, &alice, "R").is_empty().then_some(())
    });
    let before = usage_of(&cluster, &alice.name).expect("alice's usage");
    assert!(before > 0.0);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(cluster.server_pid()), nix::sys::signal::Signal::SIGKILL)
        .unwrap();
    cluster.start_server();
    let after =
        tests::wait_for(Duration::from_secs(20), "the server to answer pbsfs", || usage_of(&cluster, &alice.name));
    assert!((after - before).abs() <= 1.0, "usage before the restart {before}, after {after}");
    assert!(usage_of(&cluster, &bob.name).is_some_and(|usage| usage >= 9.0), "bob's ten seconds count");
}

#[test]
fn the_resource_group_file_is_read_again_on_sighup_and_a_bad_one_is_refused() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let tree = || String::from_utf8_lossy(&cluster.run("pbsfs", &["-t"]).stdout).to_string();
    assert_eq!(tree(), " TREEROOT(0)\n     unknown(1)\n");
    let dir = cluster.state.path().join("sched_priv");
    std::fs::create_dir_all(&dir).unwrap();
    let hup = || {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(cluster.server_pid()), nix::sys::signal::Signal::SIGHUP)
            .unwrap()
    };
    std::fs::write(dir.join("resource_group"), "# the lab\nphysics 10 root 60\nalice 11 physics 1\n").unwrap();
    hup();
    tests::wait_for(Duration::from_secs(20), "the new tree", || {
        (tree() == " TREEROOT(0)\n     physics(10)\n          alice(11)\n     unknown(1)\n").then_some(())
    });
    std::fs::write(dir.join("resource_group"), "physics 10 nowhere 60\n").unwrap();
    hup();
    tests::wait_for(Duration::from_secs(20), "the refusal in the log", || {
        cluster.logs().contains("resgroup: error on line 1").then_some(())
    });
    assert!(tree().contains("physics(10)"), "the tree in use is kept");
    // The server still answers: SIGHUP did not end it.
    assert!(cluster.run("qstat", &[]).status.success());
}
