//! Tests on this host's real cgroups (root, v1 or v2): a process that leaves its session and
//! double-forks dies by `kill_all`, usage is counted, leftovers are cleaned, device rules are
//! written, the job's user cannot write its cgroup. Without root they fail under `CI` and are
//! skipped otherwise.

use super::*;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// This host's cgroups in a slice of its own, or `None` (not root, outside CI).
fn cgroups(test: &str) -> Option<Arc<Cgroups>> {
    let slice = format!("minipbs-test-{}-{test}.slice", std::process::id());
    let usable = nix::unistd::geteuid().is_root();
    if !usable {
        assert!(std::env::var_os("CI").is_none(), "cgroup tests need root under CI");
        eprintln!("skipped: cgroup tests need root");
        return None;
    }
    Some(Cgroups::detect(CgroupMode::Required, &slice).expect("cgroups on this host").expect("cgroups"))
}

/// Starts `script` under sh, joined to `cgroup` in pre_exec as the mom's spawn does.
fn spawn_in(cgroup: &JobCgroup, script: &str) -> std::process::Child {
    let fds = cgroup.attach_fds().unwrap();
    let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    let mut command = Command::new("/bin/sh");
    command.args(["-c", script]);
    // SAFETY: join_in_child and setsid are system calls only.
    unsafe {
        command.pre_exec(move || {
            join_in_child(&raw)?;
            libc::setsid();
            Ok(())
        });
    }
    command.spawn().unwrap()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, tail)| !tail.trim_start().starts_with('Z')))
}

#[test]
fn kill_all_kills_what_left_the_session() {
    let Some(cgroups) = cgroups("kill") else { return };
    let cgroup = cgroups.job("1.kill").unwrap();
    cgroup.create(&cgroups.limits("1.kill", 1, Some(256 << 20), &[], &[])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let script =
        format!("setsid sleep 1000 & echo $! >> {p}; (sleep 1000 & echo $! >> {p}) & sleep 1000", p = pids.display());
    let mut child = spawn_in(&cgroup, &script);
    wait_for("two pids", || std::fs::read_to_string(&pids).is_ok_and(|t| t.lines().count() == 2));
    let escaped: Vec<i32> = std::fs::read_to_string(&pids).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert!(escaped.iter().all(|pid| alive(*pid)));
    assert!(!cgroup.is_empty());
    assert!(cgroup.kill_all(Duration::from_millis(200)));
    let _ = child.wait();
    wait_for("escaped processes to die", || escaped.iter().all(|pid| !alive(*pid)));
    cgroup.remove();
    cgroups.remove_slice();
}

#[test]
fn usage_counts_cpu_and_memory() {
    let Some(cgroups) = cgroups("usage") else { return };
    let cgroup = cgroups.job("2.usage").unwrap();
    cgroup.create(&cgroups.limits("2.usage", 1, None, &[], &[])).unwrap();
    let mut child = spawn_in(&cgroup, "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done");
    let status = child.wait().unwrap();
    assert!(status.success());
    let usage = cgroup.usage();
    assert!(usage.mem_kb > 0, "{usage:?}");
    assert!(usage.vmem_kb >= usage.mem_kb, "{usage:?}");
    assert!(usage.cput_secs >= 1 || cpu_ns(&cgroups, "2.usage") > 0, "{usage:?}");
    assert!(!cgroup.oom_killed());
    cgroup.remove();
    cgroups.remove_slice();
}

/// The cpu time in nanoseconds, for a burn too short to reach a whole second.
fn cpu_ns(cgroups: &Cgroups, job: &str) -> u64 {
    match &cgroups.backend {
        Backend::V1(v1) => v1
            .mounts
            .get(&Controller::Cpuacct)
            .and_then(|m| files::read_u64(&m.join(&v1.slice).join(job).join("cpuacct.usage")))
            .unwrap_or(0),
        Backend::V2(v2) => {
            let stat = files::read(&v2.job_dir(job).join("cpu.stat")).unwrap_or_default();
            files::keyed(&stat, "usage_usec").unwrap_or(0) * 1000
        }
    }
}

#[test]
fn over_its_memory_only_the_job_is_killed() {
    let Some(cgroups) = cgroups("oom") else { return };
    let cgroup = cgroups.job("3.oom").unwrap();
    cgroup.create(&cgroups.limits("3.oom", 1, Some(32 << 20), &[], &[])).unwrap();
    let mut child = spawn_in(&cgroup, "exec python3 -c 'b = bytearray(128 << 20); print(len(b))'");
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(cgroup.oom_killed());
    cgroup.remove();
    cgroups.remove_slice();
}

#[test]
fn leftovers_are_cleaned() {
    let Some(cgroups) = cgroups("left") else { return };
    let cgroup = cgroups.job("4.left").unwrap();
    cgroup.create(&cgroups.limits("4.left", 0, None, &[], &[])).unwrap();
    let mut child = spawn_in(&cgroup, "sleep 1000");
    wait_for("the sleep", || !cgroup.is_empty());
    assert_eq!(cgroups.clean_leftovers(), vec!["4.left".to_string()]);
    let _ = child.wait();
    assert!(cgroups.job_ids().is_empty());
    cgroups.remove_slice();
}

#[test]
fn bad_names_are_refused() {
    assert!(!is_safe_component("../x"));
    assert!(!is_safe_component("a/b"));
    assert!(!is_safe_component(".."));
    assert!(!is_safe_component(""));
    assert!(!is_safe_component(&"x".repeat(MAX_COMPONENT + 1)));
    assert!(is_safe_component("12[3].server"));
    assert!(matches!(Cgroups::detect(CgroupMode::Auto, "a/b"), Err(CgroupError::BadName(_))));
    assert!(Cgroups::detect(CgroupMode::Off, "a/b").unwrap().is_none(), "off checks nothing");
}

#[test]
fn device_rules_are_written_to_the_devices_controller() {
    let Some(cgroups) = cgroups("dev") else { return };
    let Backend::V1(v1) = &cgroups.backend else { return };
    let Some(mount) = v1.mounts.get(&Controller::Devices).cloned() else { return };
    let cgroup = cgroups.job("5.dev").unwrap();
    let limits = cgroups.limits("5.dev", 0, None, &[0, 1], &[1]);
    assert_eq!(limits.device_denials, vec!["c 195:0 rwm", "c 195:254 rwm"]);
    cgroup.create(&limits).unwrap();
    // A rule that bites: /dev/null (1:3) denied, then opened from inside.
    let dir = mount.join(&v1.slice).join("5.dev");
    files::write(&dir.join("devices.deny"), "c 1:3 rwm").unwrap();
    let status = spawn_in(&cgroup, "echo x > /dev/null").wait().unwrap();
    assert!(!status.success(), "the denied device could be opened");
    cgroup.remove();
    cgroups.remove_slice();
}

#[test]
fn the_jobs_user_cannot_write_its_cgroup() {
    let Some(cgroups) = cgroups("perm") else { return };
    let cgroup = cgroups.job("6.perm").unwrap();
    cgroup.create(&cgroups.limits("6.perm", 0, Some(64 << 20), &[], &[])).unwrap();
    for dir in cgroup.dirs() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let meta = entry.metadata().unwrap();
            use std::os::unix::fs::MetadataExt;
            assert_eq!(meta.uid(), 0, "{}", entry.path().display());
            assert_eq!(meta.mode() & 0o022, 0, "{} is writable by others", entry.path().display());
        }
        let meta = std::fs::metadata(&dir).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!((meta.uid(), meta.mode() & 0o022), (0, 0), "{}", dir.display());
    }
    cgroup.remove();
    cgroups.remove_slice();
}

/// v1: a job's cpuset gets the slice's memory nodes from the kernel (`cgroup.clone_children`,
/// set when the slice is made), and a slice left without them or the flag (an earlier mom's)
/// is mended at the next job.
#[test]
fn v1_job_cpusets_get_the_slices_nodes_old_slices_included() {
    let Some(cgroups) = cgroups("cpuset") else { return };
    let Backend::V1(v1) = &cgroups.backend else { return };
    let Some(mount) = v1.mounts.get(&mounts::Controller::Cpuset).cloned() else { return };
    let slice = mount.join(&v1.slice);
    let read = |path: std::path::PathBuf| files::read(&path).unwrap().trim().to_string();
    let root_mems = read(mount.join("cpuset.mems"));
    for (n, old_slice) in [(1, false), (2, true)] {
        if old_slice {
            std::fs::create_dir(&slice).unwrap();
            files::write(&slice.join("cgroup.clone_children"), "0").unwrap();
            assert_eq!(read(slice.join("cpuset.mems")), "", "a new v1 cpuset starts empty");
        }
        let job = format!("{n}.cpuset");
        let cgroup = cgroups.job(&job).unwrap();
        cgroup.create(&cgroups.limits(&job, 1, None, &[], &[])).unwrap();
        assert_eq!(read(slice.join("cgroup.clone_children")), "1", "old slice: {old_slice}");
        assert_eq!(read(slice.join("cpuset.mems")), root_mems);
        assert_eq!(read(slice.join(&job).join("cpuset.mems")), root_mems);
        assert!(!read(slice.join(&job).join("cpuset.cpus")).is_empty());
        cgroup.remove();
        cgroups.remove_slice();
        assert!(!slice.exists());
    }
}
