//! Users' supplementary group lists (`getgrouplist` through NSS), kept for [`KEEP`] per user
//! and primary group. A root mom sets them on every job it starts, and NSS must ask every
//! source for them (`group: files systemd`, or sssd, LDAP): on this project's machines the
//! look-up was most of what resolving a job's user cost (issue 19). Slurm's slurmd keeps the
//! same lists (`GroupUpdateTime`, 600 s by default), nscd an hour.
//!
//! What keeping them may not change: a group the kept list lacks is looked up again before a
//! job asking for it is refused ([`fresh`]), so a user just added to a group is seen at once; a
//! user taken out of one keeps it for jobs started within [`KEEP`]. Users are never kept:
//! passwd is looked up every time (users may be created at any time).
//!
//! A look-up runs without the lock (a directory server may keep it waiting; no other user's
//! start waits with it); two starts of one user at once may both ask NSS.
//!
//! Owns: the kept lists. Bounded: at most [`MAX_KEPT`] entries, the expired dropped first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a looked-up list is used.
pub const KEEP: Duration = Duration::from_secs(60);

/// The most lists kept (user names come from the server; this bounds the memory they take).
pub const MAX_KEPT: usize = 4096;

/// A user name and primary gid.
type Key = (String, u32);

/// A list and when it was looked up.
type Entry = (Instant, Arc<[u32]>);

/// Lists by user name and primary gid.
#[derive(Debug, Default)]
pub struct Kept {
    lists: HashMap<Key, Entry>,
}

impl Kept {
    /// The list of `name` with `primary`, if looked up within [`KEEP`] of `now`.
    pub fn live(&self, name: &str, primary: u32, now: Instant) -> Option<Arc<[u32]>> {
        let (at, list) = self.lists.get(&(name.to_string(), primary))?;
        (now.saturating_duration_since(*at) < KEEP).then(|| list.clone())
    }

    /// Keeps `list` as looked up at `now`, and returns it.
    pub fn put(&mut self, name: &str, primary: u32, now: Instant, list: Vec<u32>) -> Arc<[u32]> {
        if self.lists.len() >= MAX_KEPT {
            self.lists.retain(|_, (at, _)| now.saturating_duration_since(*at) < KEEP);
            if self.lists.len() >= MAX_KEPT {
                self.lists.clear();
            }
        }
        let list: Arc<[u32]> = list.into();
        self.lists.insert((name.to_string(), primary), (now, list.clone()));
        list
    }
}

static KEPT: Mutex<Option<Kept>> = Mutex::new(None);

fn look_up(name: &str, primary: u32) -> Vec<u32> {
    uzers::get_user_groups(name, primary).unwrap_or_default().iter().map(|group| group.gid()).collect()
}

fn with_kept<T>(use_kept: impl FnOnce(&mut Kept) -> T) -> T {
    let mut kept = KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    use_kept(kept.get_or_insert_with(Kept::default))
}

/// The supplementary groups of `name` (primary group `primary`), kept or looked up.
pub fn supplementary(name: &str, primary: u32) -> Vec<u32> {
    supplementary_with(name, primary, look_up)
}

/// The supplementary groups of `name` looked up now (and kept): before a membership the kept
/// list lacks refuses a job.
pub fn fresh(name: &str, primary: u32) -> Vec<u32> {
    fresh_with(name, primary, look_up)
}

fn supplementary_with(name: &str, primary: u32, look_up: impl FnOnce(&str, u32) -> Vec<u32>) -> Vec<u32> {
    match with_kept(|kept| kept.live(name, primary, Instant::now())) {
        Some(list) => list.to_vec(),
        None => fresh_with(name, primary, look_up),
    }
}

/// The look-up runs without the lock: NSS may wait for a directory server, and other users'
/// job starts must not wait for it.
fn fresh_with(name: &str, primary: u32, look_up: impl FnOnce(&str, u32) -> Vec<u32>) -> Vec<u32> {
    let list = look_up(name, primary);
    with_kept(|kept| kept.put(name, primary, Instant::now(), list)).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_looked_up_once_a_minute_per_user_and_primary_group() {
        let mut kept = Kept::default();
        let start = Instant::now();
        let mut asked = 0;
        let mut get = |kept: &mut Kept, name: &str, primary: u32, after: Duration| {
            kept.live(name, primary, start + after).unwrap_or_else(|| {
                asked += 1;
                kept.put(name, primary, start + after, vec![primary, 100 + asked])
            })
        };
        assert_eq!(&*get(&mut kept, "alice", 1000, Duration::ZERO), &[1000, 101]);
        assert_eq!(&*get(&mut kept, "alice", 1000, KEEP - Duration::from_millis(1)), &[1000, 101], "kept");
        assert_eq!(&*get(&mut kept, "alice", 2000, Duration::ZERO), &[2000, 102], "another primary group");
        assert_eq!(&*get(&mut kept, "bob", 1000, Duration::ZERO), &[1000, 103], "another user");
        assert_eq!(&*get(&mut kept, "alice", 1000, KEEP), &[1000, 104], "looked up again after a minute");
        kept.put("alice", 1000, start + KEEP, vec![1000, 7]);
        assert_eq!(&*get(&mut kept, "alice", 1000, KEEP), &[1000, 7], "a fresh look-up replaces the list");
    }

    /// A user whose look-up hangs (a directory server that does not answer) holds no other
    /// user's start.
    #[test]
    fn a_slow_look_up_holds_only_its_own_user() {
        use std::sync::mpsc::channel;
        let limit = Duration::from_secs(10);
        let (entered, in_look_up) = channel::<()>();
        let (release, wait) = channel::<()>();
        let slow = std::thread::spawn(move || {
            supplementary_with("slow-user-test", 4242, |_, primary| {
                entered.send(()).unwrap();
                let _ = wait.recv();
                vec![primary]
            })
        });
        in_look_up.recv_timeout(limit).expect("the slow look-up started");
        let (answer, answered) = channel();
        let fast = std::thread::spawn(move || {
            answer.send(supplementary_with("fast-user-test", 4343, |_, primary| vec![primary, 1])).unwrap()
        });
        let fast_list = answered.recv_timeout(limit);
        release.send(()).unwrap();
        fast.join().unwrap();
        assert_eq!(fast_list.expect("the other user waited for the slow look-up"), [4343, 1]);
        assert_eq!(slow.join().unwrap(), [4242]);
        assert_eq!(supplementary_with("slow-user-test", 4242, |_, _| panic!("kept")), [4242]);
    }

    #[test]
    fn at_most_max_kept_lists_the_expired_going_first() {
        let mut kept = Kept::default();
        let start = Instant::now();
        for n in 0..MAX_KEPT as u32 {
            kept.put(&format!("u{n}"), n, start, vec![n]);
        }
        assert_eq!(kept.lists.len(), MAX_KEPT);
        // Full of live lists: all go, the new one stays.
        kept.put("late", 1, start + Duration::from_secs(1), vec![1]);
        assert_eq!(kept.lists.len(), 1);
        for n in 1..MAX_KEPT as u32 {
            kept.put(&format!("v{n}"), n, start + KEEP * 2, vec![n]);
        }
        // Full again, "late" expired: only it goes.
        kept.put("last", 1, start + KEEP * 2, vec![1]);
        assert_eq!(kept.lists.len(), MAX_KEPT);
        assert!(!kept.lists.contains_key(&("late".to_string(), 1)));
    }

    #[test]
    fn the_kept_list_is_the_one_nss_gives() {
        let root = uzers::get_user_by_uid(0).expect("root");
        assert_eq!(supplementary("root", 0), look_up("root", 0));
        assert_eq!(fresh("root", 0), look_up("root", 0));
        assert!(supplementary(&root.name().to_string_lossy(), 0).contains(&0));
    }
}
