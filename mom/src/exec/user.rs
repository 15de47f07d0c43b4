//! Who a job runs as: the passwd and group look-ups for `JobLaunch.user` / `.group` on this
//! host, the rule that a mom not running as root runs only its own user's jobs, and the rule
//! that a job runs as root (uid 0) only when the server's `acl_roots` allowed it
//! (`JobLaunch.root_allowed`; the server refuses such jobs at qsub already, the mom checks
//! again against its own passwd).
//!
//! Supplementary groups are looked up only when they are used: a mom running as root sets them
//! on the job's processes, and a job asking for a group other than its user's primary one must
//! be in it. A mom running as the job's user changes no identity, so it mostly skips the
//! look-up ([`resolve_for`]), which on a host whose NSS also asks systemd (`group: files
//! systemd`) was an eighth of such a mom's CPU per job (issue 19).
//!
//! Supplementary group lists are kept a minute (`groups.rs`); users are looked up every time.
//!
//! Owns: [`JobUser`] and [`may_run`]. Must not: change the process identity (that happens in
//! the spawned child, `spawn.rs`) or keep users (they may be created at any time).

use super::StartError;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use uzers::os::unix::UserExt;

/// The execution identity of a job, resolved on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobUser {
    /// Login name.
    pub name: String,
    pub uid: u32,
    /// The job's group: `JobLaunch.group` when given, else the passwd primary group.
    pub gid: u32,
    /// Supplementary groups (as `initgroups` would set them), always including `gid`.
    pub groups: Vec<u32>,
    /// Home directory from passwd.
    pub home: PathBuf,
    /// Login shell from passwd (`/bin/sh` when empty).
    pub login_shell: PathBuf,
}

/// Whether a [`JobUser`]'s supplementary groups are needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Groups {
    /// Looked up: the mom sets them on the job's processes (it runs as root).
    Needed,
    /// Not looked up unless a group is asked for (to check membership): the mom runs as the
    /// user and changes no identity, so `JobUser::groups` is the job's group alone.
    Unused,
}

impl Groups {
    /// What a mom running as `mom_uid` needs: only root changes identity.
    pub fn for_mom(mom_uid: u32) -> Groups {
        if mom_uid == 0 {
            Groups::Needed
        } else {
            Groups::Unused
        }
    }
}

/// Looks up `name` (and `group`, when given) in the host's user database. The group must be
/// the user's primary group or one of their supplementary groups here: a job never obtains a
/// group its user is not in (`-W group_list` is the user's word; the server checked it on its
/// own host, this is the check that counts).
pub fn resolve(name: &str, group: Option<&str>) -> Result<JobUser, StartError> {
    resolve_for(name, group, Groups::Needed)
}

/// [`resolve`], looking the supplementary groups up only when `groups` says they are needed
/// or `group` is not the user's primary group (its membership is checked against them).
pub fn resolve_for(name: &str, group: Option<&str>, groups: Groups) -> Result<JobUser, StartError> {
    let entry = uzers::get_user_by_name(name).ok_or_else(|| StartError::UnknownUser(name.to_string()))?;
    let primary = entry.primary_group_id();
    let supplementary = || super::groups::supplementary(name, primary);
    let mut looked_up = (groups == Groups::Needed).then(supplementary);
    let gid = match group {
        Some(group_name) => {
            let gid = uzers::get_group_by_name(group_name)
                .ok_or_else(|| StartError::UnknownGroup(group_name.to_string()))?
                .gid();
            if gid != primary {
                let listed = looked_up.get_or_insert_with(supplementary);
                if !listed.contains(&gid) {
                    // Kept lists may be a minute old: a user just added to the group is in it.
                    *listed = super::groups::fresh(name, primary);
                }
                check_member(name, group_name, gid, primary, listed)?;
            }
            gid
        }
        None => primary,
    };
    let mut groups = looked_up.unwrap_or_default();
    if !groups.contains(&gid) {
        groups.push(gid);
    }
    let shell = entry.shell();
    let login_shell =
        if shell.as_os_str().as_bytes().is_empty() { PathBuf::from("/bin/sh") } else { shell.to_path_buf() };
    Ok(JobUser {
        name: name.to_string(),
        uid: entry.uid(),
        gid,
        groups,
        home: entry.home_dir().to_path_buf(),
        login_shell,
    })
}

/// Refuses `gid` (named `group`) unless it is `primary` or among `groups`.
fn check_member(user: &str, group: &str, gid: u32, primary: u32, groups: &[u32]) -> Result<(), StartError> {
    if gid == primary || groups.contains(&gid) {
        return Ok(());
    }
    Err(StartError::NotMember { user: user.to_string(), group: group.to_string() })
}

/// Whether a mom running as `mom_uid` may run a job as `user`: root may run anyone's job; any
/// other uid only its own (it cannot change identity); a job as uid 0 only when
/// `root_allowed`. Refusal is OpenPBS's -10 (invalid uid/gid).
pub fn may_run(mom_uid: u32, user: &JobUser, root_allowed: bool) -> Result<(), StartError> {
    if user.uid == 0 && !root_allowed {
        return Err(StartError::RootRefused(user.name.clone()));
    }
    if mom_uid == 0 || mom_uid == user.uid {
        return Ok(());
    }
    Err(StartError::ForeignUser { mom_uid, user: user.name.clone(), uid: user.uid })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(uid: u32) -> JobUser {
        JobUser {
            name: "alice".into(),
            uid,
            gid: uid,
            groups: vec![uid],
            home: "/home/alice".into(),
            login_shell: "/bin/bash".into(),
        }
    }

    #[test]
    fn root_runs_anyone_others_only_themselves() {
        assert!(may_run(0, &user(1000), false).is_ok());
        assert!(may_run(1000, &user(1000), false).is_ok());
        let refused = may_run(1001, &user(1000), false).unwrap_err();
        assert_eq!(refused.exit_status(), -10);
        assert!(refused.to_string().contains("alice"), "{refused}");
    }

    #[test]
    fn uid_0_only_when_the_server_allowed_root() {
        assert!(may_run(0, &user(0), true).is_ok());
        let refused = may_run(0, &user(0), false).unwrap_err();
        assert_eq!(refused.exit_status(), -10);
        assert!(refused.to_string().contains("acl_roots"), "{refused}");
    }

    #[test]
    fn root_resolves_with_groups() {
        let root = resolve("root", None).expect("root exists");
        assert_eq!(root.uid, 0);
        assert!(root.groups.contains(&0));
        assert!(!root.login_shell.as_os_str().is_empty());
    }

    /// A group the user is not in is never obtained (-W group_list is a privilege boundary).
    #[test]
    fn only_a_group_the_user_is_in() {
        assert!(check_member("alice", "alice", 1000, 1000, &[1000]).is_ok());
        assert!(check_member("alice", "gpu", 2000, 1000, &[1000, 2000]).is_ok());
        let refused = check_member("alice", "root", 0, 1000, &[1000, 2000]).unwrap_err();
        assert_eq!(refused.exit_status(), -10);
        assert!(refused.to_string().contains("not a member of group root"), "{refused}");
    }

    #[test]
    fn a_real_user_is_refused_a_group_they_are_not_in() {
        // `nobody` is not in group `root` on any sane system.
        let err = resolve("nobody", Some("root")).unwrap_err();
        assert!(matches!(err, StartError::NotMember { .. }), "{err}");
        assert!(resolve("root", Some("root")).is_ok());
    }

    /// A mom running as the user looks no supplementary group up, yet still refuses a group
    /// the user is not in.
    #[test]
    fn unused_groups_are_the_job_group_alone_and_membership_is_still_checked() {
        let root = resolve_for("root", None, Groups::Unused).expect("root exists");
        assert_eq!(root.groups, vec![root.gid]);
        assert_eq!(Groups::for_mom(0), Groups::Needed);
        assert_eq!(Groups::for_mom(1000), Groups::Unused);
        let err = resolve_for("nobody", Some("root"), Groups::Unused).unwrap_err();
        assert!(matches!(err, StartError::NotMember { .. }), "{err}");
        let asked = resolve_for("root", Some("root"), Groups::Unused).expect("root's primary group");
        assert_eq!(asked.groups, vec![0]);
    }

    /// A group of the host's own for a test (root only), deleted on drop.
    struct HostGroup(String);

    impl HostGroup {
        fn new(member: &str) -> HostGroup {
            let name = format!("mpbs-t{}", std::process::id());
            let run = |args: &[&str]| {
                assert!(std::process::Command::new(args[0]).args(&args[1..]).status().unwrap().success())
            };
            run(&["groupadd", &name]);
            let group = HostGroup(name);
            run(&["gpasswd", "-a", member, &group.0]);
            group
        }
    }

    impl Drop for HostGroup {
        fn drop(&mut self) {
            let _ = std::process::Command::new("groupdel").arg(&self.0).status();
        }
    }

    /// Supplementary groups are kept a minute (`groups.rs`), yet a user just added to a group
    /// may ask for it at once: a kept list without it is looked up again before a refusal.
    #[test]
    fn a_group_the_kept_list_lacks_is_looked_up_again() {
        if !crate::test_support::is_root() {
            return;
        }
        let nobody = resolve("nobody", None).unwrap();
        assert_eq!(super::super::groups::supplementary("nobody", nobody.gid), nobody.groups, "kept now");
        let group = HostGroup::new("nobody");
        let joined = resolve("nobody", Some(&group.0)).expect("a member since a moment ago");
        assert!(joined.groups.contains(&joined.gid) && joined.gid != nobody.gid);
        let again = resolve_for("nobody", Some(&group.0), Groups::Unused).unwrap();
        assert_eq!(again.gid, joined.gid);
    }

    #[test]
    fn unknown_user_and_group() {
        let err = resolve("no-such-user-minipbs", None).unwrap_err();
        assert_eq!(err.exit_status(), -1);
        let err = resolve("root", Some("no-such-group-minipbs")).unwrap_err();
        assert_eq!(err.exit_status(), -1);
    }
}
