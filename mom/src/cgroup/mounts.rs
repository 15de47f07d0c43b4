//! Finding the cgroup hierarchies: `/proc/self/mountinfo` parsed into the v1 controllers'
//! mount points and the v2 unified mount, and the choice between them (pure: text in, layout
//! out, so each case is tested from sample text).
//!
//! Owns: [`parse_mountinfo`] and [`choose`]. Must not: touch the files of a cgroup.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// The v1 controllers the mom uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Controller {
    Cpu,
    Cpuacct,
    Cpuset,
    Memory,
    Pids,
    Freezer,
    Devices,
}

impl Controller {
    pub const ALL: [Controller; 7] = [
        Controller::Cpu,
        Controller::Cpuacct,
        Controller::Cpuset,
        Controller::Memory,
        Controller::Pids,
        Controller::Freezer,
        Controller::Devices,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Controller::Cpu => "cpu",
            Controller::Cpuacct => "cpuacct",
            Controller::Cpuset => "cpuset",
            Controller::Memory => "memory",
            Controller::Pids => "pids",
            Controller::Freezer => "freezer",
            Controller::Devices => "devices",
        }
    }
}

/// The cgroup file systems mounted on this host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    /// Each v1 controller's mount point (co-mounted controllers share one).
    pub v1: BTreeMap<Controller, PathBuf>,
    /// The unified (v2) hierarchy's mount point.
    pub v2: Option<PathBuf>,
}

/// Reads the cgroup mounts from `/proc/self/mountinfo` text: field 5 is the mount point,
/// after the ` - ` separator come the file system type and its super options (the v1
/// controllers). Mount points are octal-escaped (`\040` for a space).
pub fn parse_mountinfo(text: &str) -> Mounts {
    let mut mounts = Mounts::default();
    for line in text.lines() {
        let Some((head, tail)) = line.split_once(" - ") else { continue };
        let Some(point) = head.split_whitespace().nth(4) else { continue };
        let mut tail = tail.split_whitespace();
        let (Some(fstype), Some(_source)) = (tail.next(), tail.next()) else { continue };
        let options = tail.next().unwrap_or("");
        let point = PathBuf::from(unescape(point));
        match fstype {
            "cgroup2" => {
                mounts.v2.get_or_insert(point);
            }
            "cgroup" => {
                for option in options.split(',') {
                    if let Some(controller) = Controller::ALL.into_iter().find(|c| c.name() == option) {
                        mounts.v1.entry(controller).or_insert_with(|| point.clone());
                    }
                }
            }
            _ => {}
        }
    }
    mounts
}

/// Undoes mountinfo's octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` `\`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal =
            bytes.get(i + 1..i + 4).filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Which hierarchy jobs go into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The unified hierarchy at this path, with these controllers available.
    V2 { root: PathBuf, controllers: Vec<String> },
    /// The v1 controllers.
    V1(BTreeMap<Controller, PathBuf>),
    /// Nothing usable, and why.
    None(String),
}

/// v2 when the unified hierarchy offers memory, pids and cpu or cpuset (`v2_controllers`:
/// the words of its `cgroup.controllers`), else v1 when memory and one of freezer or pids
/// (to find every process) are mounted, else none.
pub fn choose(mounts: &Mounts, v2_controllers: &str) -> Choice {
    let words: Vec<String> = v2_controllers.split_whitespace().map(str::to_string).collect();
    let has = |name: &str| words.iter().any(|w| w == name);
    if let Some(root) = &mounts.v2 {
        if has("memory") && has("pids") && (has("cpu") || has("cpuset")) {
            return Choice::V2 { root: root.clone(), controllers: words };
        }
    }
    let v1 = &mounts.v1;
    if v1.contains_key(&Controller::Memory)
        && (v1.contains_key(&Controller::Freezer) || v1.contains_key(&Controller::Pids))
    {
        return Choice::V1(v1.clone());
    }
    Choice::None(match &mounts.v2 {
        Some(root) => format!(
            "the unified hierarchy at {} offers {:?} (memory, pids and cpu or cpuset needed) and no v1 memory and freezer or pids controllers are mounted",
            root.display(),
            v2_controllers.trim()
        ),
        None => "no cgroup v2 hierarchy and no v1 memory and freezer or pids controllers are mounted".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_HOST: &str = "\
10:31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
11:32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
13:34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
14:35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
15:36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
16:37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
18:39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
19:40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
20:41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    const V2_HOST: &str = "\
25 30 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
30 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
";

    #[test]
    fn v1_controllers_and_comounts() {
        let mounts = parse_mountinfo(V1_HOST);
        assert_eq!(mounts.v1[&Controller::Cpu], PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"));
        assert_eq!(mounts.v1[&Controller::Cpuacct], PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"));
        assert_eq!(mounts.v1[&Controller::Memory], PathBuf::from("/sys/fs/cgroup/memory"));
        assert_eq!(mounts.v1.len(), 7);
        assert_eq!(mounts.v2, Some(PathBuf::from("/sys/fs/cgroup/unified")));
    }

    #[test]
    fn an_empty_unified_hierarchy_means_v1() {
        let mounts = parse_mountinfo(V1_HOST);
        assert!(matches!(choose(&mounts, ""), Choice::V1(_)));
    }

    #[test]
    fn a_unified_hierarchy_with_controllers_means_v2() {
        let mounts = parse_mountinfo(V2_HOST);
        assert!(mounts.v1.is_empty());
        match choose(&mounts, "cpuset cpu io memory hugetlb pids rdma misc\n") {
            Choice::V2 { root, controllers } => {
                assert_eq!(root, PathBuf::from("/sys/fs/cgroup"));
                assert!(controllers.contains(&"memory".to_string()));
            }
            other => panic!("{other:?}"),
        }
        match choose(&mounts, "cpu io") {
            Choice::None(reason) => assert!(reason.contains("memory, pids"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nothing_mounted() {
        assert!(matches!(choose(&parse_mountinfo("garbage\n1 2 3\n"), ""), Choice::None(_)));
    }

    #[test]
    fn escaped_mount_points() {
        let text = "1 2 0:1 / /mnt/my\\040cg rw - cgroup cgroup rw,memory,freezer\n";
        let mounts = parse_mountinfo(text);
        assert_eq!(mounts.v1[&Controller::Freezer], PathBuf::from("/mnt/my cg"));
    }
}
