//! The names of uids and gids (`getpwuid`, `getgrgid`), kept for a second. The server names
//! the requester of every connection and the group of every submission; each lookup goes
//! through NSS and reads /etc/passwd or /etc/group whole (5-6 % of the server's CPU per job
//! in `bench/submit`, issue 19).
//!
//! Why a cache stays correct when the accounts change: an entry is used only while it is
//! younger than [`TTL`] *and* /etc/passwd and /etc/group have the modification times they had
//! when it was looked up (a `stat` of each, far cheaper than the lookup). An edit of the files
//! (useradd, usermod, groupmod: they replace the file) is seen by the next lookup (two edits
//! within one tick of the file system's clock look alike: then within the second), a change in
//! another NSS source (LDAP, sssd) within the second, as with nscd's own caching. A uid or gid
//! without a name is never cached, and the cache is bounded ([`MAX_ENTRIES`]).
//!
//! Must not know: requests, the state, the store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// How long a name is used without asking NSS again.
pub const TTL: Duration = Duration::from_secs(1);
/// At most this many ids per cache; a full cache is emptied (ids come from the kernel or a
/// MUNGE credential, so only real accounts, but a bound costs nothing).
pub const MAX_ENTRIES: usize = 1024;

/// What the account files looked like: their modification times (`None`: unreadable).
pub type Stamp = [Option<SystemTime>; 2];

struct Entry {
    name: String,
    at: Instant,
    stamp: Stamp,
}

/// Names by id, each with when it was looked up and the files' [`Stamp`] then. Pure: the
/// clock, the stamp and the lookup are arguments.
#[derive(Default)]
pub struct NameCache {
    entries: HashMap<u32, Entry>,
}

impl NameCache {
    /// The name of `id`: the cached one if younger than [`TTL`] at `now` and looked up under
    /// the same `stamp`, else `lookup(id)`'s (kept if found).
    pub fn name(
        &mut self,
        id: u32,
        now: Instant,
        stamp: Stamp,
        lookup: impl FnOnce(u32) -> Option<String>,
    ) -> Option<String> {
        if let Some(entry) = self.entries.get(&id) {
            if entry.stamp == stamp && now.saturating_duration_since(entry.at) < TTL {
                return Some(entry.name.clone());
            }
        }
        let Some(name) = lookup(id) else {
            self.entries.remove(&id);
            return None;
        };
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.clear();
        }
        self.entries.insert(id, Entry { name: name.clone(), at: now, stamp });
        Some(name)
    }
}

static USERS: Mutex<Option<NameCache>> = Mutex::new(None);
static GROUPS: Mutex<Option<NameCache>> = Mutex::new(None);

/// The modification times of /etc/passwd and /etc/group now.
fn stamp() -> Stamp {
    let modified = |path: &str| std::fs::metadata(path).and_then(|meta| meta.modified()).ok();
    [modified("/etc/passwd"), modified("/etc/group")]
}

fn cached(cache: &Mutex<Option<NameCache>>, id: u32, lookup: impl FnOnce(u32) -> Option<String>) -> Option<String> {
    // A poisoned cache is only a cache: ask NSS.
    let Ok(mut guard) = cache.lock() else { return lookup(id) };
    guard.get_or_insert_with(NameCache::default).name(id, Instant::now(), stamp(), lookup)
}

/// The name of user `uid` (`getpwuid`), if it has one.
pub fn user_name(uid: u32) -> Option<String> {
    cached(&USERS, uid, |uid| uzers::get_user_by_uid(uid).map(|user| user.name().to_string_lossy().into_owned()))
}

/// The name of group `gid` (`getgrgid`), if it has one.
pub fn group_name(gid: u32) -> Option<String> {
    cached(&GROUPS, gid, |gid| uzers::get_group_by_gid(gid).map(|group| group.name().to_string_lossy().into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn ask(
        cache: &mut NameCache,
        id: u32,
        now: Instant,
        stamp: Stamp,
        answer: Option<&str>,
        asked: &Cell<u32>,
    ) -> Option<String> {
        cache.name(id, now, stamp, |_| {
            asked.set(asked.get() + 1);
            answer.map(str::to_string)
        })
    }

    #[test]
    fn a_name_is_kept_for_the_ttl_while_the_files_are_unchanged() {
        let (mut cache, asked, t0) = (NameCache::default(), Cell::new(0), Instant::now());
        let stamp = [Some(SystemTime::UNIX_EPOCH), None];
        assert_eq!(ask(&mut cache, 7, t0, stamp, Some("alice"), &asked).as_deref(), Some("alice"));
        let later = t0 + TTL / 2;
        assert_eq!(ask(&mut cache, 7, later, stamp, Some("bob"), &asked).as_deref(), Some("alice"));
        assert_eq!(asked.get(), 1, "asked once");
        assert_eq!(ask(&mut cache, 7, t0 + TTL, stamp, Some("bob"), &asked).as_deref(), Some("bob"), "expired");
        assert_eq!(asked.get(), 2);
    }

    #[test]
    fn an_edit_of_the_account_files_is_seen_at_once() {
        let (mut cache, asked, t0) = (NameCache::default(), Cell::new(0), Instant::now());
        let before = [Some(SystemTime::UNIX_EPOCH), Some(SystemTime::UNIX_EPOCH)];
        let after = [Some(SystemTime::UNIX_EPOCH + Duration::from_nanos(1)), before[1]];
        ask(&mut cache, 7, t0, before, Some("alice"), &asked);
        assert_eq!(ask(&mut cache, 7, t0, after, Some("alice2"), &asked).as_deref(), Some("alice2"));
        assert_eq!(asked.get(), 2);
    }

    #[test]
    fn an_id_without_a_name_is_not_kept_and_forgets_the_old_name() {
        let (mut cache, asked, t0) = (NameCache::default(), Cell::new(0), Instant::now());
        let stamp = [None, None];
        assert_eq!(ask(&mut cache, 9, t0, stamp, None, &asked), None);
        assert_eq!(ask(&mut cache, 9, t0, stamp, Some("carol"), &asked).as_deref(), Some("carol"));
        assert_eq!(asked.get(), 2, "the miss was not cached");
        let changed = [Some(SystemTime::UNIX_EPOCH), None];
        assert_eq!(ask(&mut cache, 9, t0, changed, None, &asked), None, "deleted: no stale name");
        assert_eq!(ask(&mut cache, 9, t0, changed, Some("dave"), &asked).as_deref(), Some("dave"));
    }

    #[test]
    fn the_cache_is_bounded() {
        let (mut cache, asked, t0) = (NameCache::default(), Cell::new(0), Instant::now());
        for id in 0..(MAX_ENTRIES as u32 * 3) {
            ask(&mut cache, id, t0, [None, None], Some("x"), &asked);
            assert!(cache.entries.len() <= MAX_ENTRIES);
        }
    }

    #[test]
    fn root_is_named_through_the_cache() {
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert!(group_name(0).is_some());
    }
}
