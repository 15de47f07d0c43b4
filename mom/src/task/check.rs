//! The checks a mom makes on a task request before it starts or forwards anything, in this
//! order, each refusal with its own message: the request's bounds, the job runs on this node
//! (mother superior or sister), the caller is the job's owner (its kernel-reported uid; a
//! root caller only for a job that runs as root), the cookie is the job's (compared in
//! constant time), the target node is one of the job's. Then where the task runs: here, or at
//! the target node's mom.
//!
//! Owns: [`check`] and [`Refusal`], a pure function of its arguments. Must not: look users
//! up, read sockets or touch processes (the caller passes what it found).

use proto::mom::HostAlloc;
use proto::task::{RequestBoundError, TaskRequest};
use subtle::ConstantTimeEq;

/// What this mom knows of the job a request names.
#[derive(Debug, Clone, Copy)]
pub struct JobFacts<'a> {
    /// The uid the job runs as on this node.
    pub owner_uid: u32,
    pub cookie: &'a str,
    /// The allocation, mother superior first.
    pub hosts: &'a [HostAlloc],
}

/// Who asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A process inside the job, with its kernel-reported uid.
    Launcher { uid: u32 },
    /// Another mom of the job (its credential already checked by the transport).
    Peer,
}

/// Where the task runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// On this node, which is the job's `node_num`th host (`PBS_NODENUM`).
    Here { node_num: u32 },
    /// At this address's mom (`HostAlloc::mom_addr`).
    Forward { node: String, addr: String },
}

/// Why a request is refused: the text the launcher prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(transparent)]
    Bounds(#[from] RequestBoundError),
    #[error("job {0} does not run on this node")]
    NotHere(String),
    #[error("uid {caller} may not start tasks of job {job_id}: it runs as uid {owner}")]
    NotOwner { caller: u32, owner: u32, job_id: String },
    #[error("wrong cookie for job {0}")]
    BadCookie(String),
    #[error("node {node} is not one of job {job_id}'s nodes")]
    NodeNotInJob { node: String, job_id: String },
    #[error("a peer mom asked this node ({here}) to start a task for node {node}")]
    NotForThisNode { here: String, node: String },
    #[error("the mom of node {0} cannot be reached: the server gave no address for it")]
    NoAddress(String),
    #[error("job {job_id} already has {limit} tasks on this node")]
    TooManyTasks { job_id: String, limit: usize },
    #[error("cannot start the task: {0}")]
    Start(String),
    #[error("the mom of node {node} is unreachable: {reason}")]
    Unreachable { node: String, reason: String },
}

/// Checks `request` from `caller` on node `here`, `job` being what this mom knows of the job
/// it names (`None`: it does not run here), and says where the task runs.
pub fn check(request: &TaskRequest, caller: Caller, job: Option<JobFacts<'_>>, here: &str) -> Result<Route, Refusal> {
    request.check_bounds()?;
    let job_id = &request.job_id;
    let job = job.ok_or_else(|| Refusal::NotHere(job_id.clone()))?;
    if let Caller::Launcher { uid } = caller {
        if uid != job.owner_uid {
            return Err(Refusal::NotOwner { caller: uid, owner: job.owner_uid, job_id: job_id.clone() });
        }
    }
    if !cookie_matches(job.cookie, &request.cookie) {
        return Err(Refusal::BadCookie(job_id.clone()));
    }
    let Some(index) = job.hosts.iter().position(|host| host.node == request.node) else {
        return Err(Refusal::NodeNotInJob { node: request.node.clone(), job_id: job_id.clone() });
    };
    if request.node == here {
        return Ok(Route::Here { node_num: index as u32 });
    }
    if caller == Caller::Peer {
        return Err(Refusal::NotForThisNode { here: here.to_string(), node: request.node.clone() });
    }
    match &job.hosts[index].mom_addr {
        Some(addr) => Ok(Route::Forward { node: request.node.clone(), addr: addr.clone() }),
        None => Err(Refusal::NoAddress(request.node.clone())),
    }
}

/// Whether `presented` is the job's cookie, in time independent of where they differ. An
/// empty job cookie matches nothing.
pub fn cookie_matches(cookie: &str, presented: &str) -> bool {
    !cookie.is_empty() && bool::from(cookie.as_bytes().ct_eq(presented.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::task::{TaskCommand, TASK_VERSION};

    fn host(node: &str, addr: Option<&str>) -> HostAlloc {
        let mut host = crate::test_support::gpu_host(node, &[], &[], None);
        host.mom_addr = addr.map(str::to_string);
        host
    }

    fn request(node: &str, cookie: &str) -> TaskRequest {
        TaskRequest {
            version: TASK_VERSION,
            job_id: "1.s".into(),
            cookie: cookie.into(),
            node: node.into(),
            command: TaskCommand::Argv(vec!["hostname".into()]),
            env: Vec::new(),
            cwd: None,
            vnode: 0,
            stdin: false,
            output: true,
        }
    }

    fn hosts() -> Vec<HostAlloc> {
        vec![host("n0", Some("unix:/s0")), host("n1", Some("10.0.0.2:15002")), host("n2", None)]
    }

    fn facts(hosts: &[HostAlloc]) -> JobFacts<'_> {
        JobFacts { owner_uid: 1000, cookie: "secret", hosts }
    }

    const ALICE: Caller = Caller::Launcher { uid: 1000 };

    #[test]
    fn routes_here_or_to_the_targets_mom() {
        let hosts = hosts();
        assert_eq!(check(&request("n0", "secret"), ALICE, Some(facts(&hosts)), "n0"), Ok(Route::Here { node_num: 0 }));
        assert_eq!(check(&request("n1", "secret"), ALICE, Some(facts(&hosts)), "n1"), Ok(Route::Here { node_num: 1 }));
        let forward = Route::Forward { node: "n1".into(), addr: "10.0.0.2:15002".into() };
        assert_eq!(check(&request("n1", "secret"), ALICE, Some(facts(&hosts)), "n0"), Ok(forward));
        assert_eq!(
            check(&request("n2", "secret"), ALICE, Some(facts(&hosts)), "n0"),
            Err(Refusal::NoAddress("n2".into()))
        );
    }

    #[test]
    fn refusals_come_in_order() {
        let hosts = hosts();
        let mut bad = request("n9", "wrong");
        bad.command = TaskCommand::Argv(Vec::new());
        let bounds = check(&bad, Caller::Launcher { uid: 0 }, None, "n0").unwrap_err();
        assert!(matches!(bounds, Refusal::Bounds(RequestBoundError::Empty)), "{bounds}");
        let not_here = check(&request("n9", "wrong"), Caller::Launcher { uid: 0 }, None, "n0").unwrap_err();
        assert_eq!(not_here.to_string(), "job 1.s does not run on this node");
        let root = check(&request("n9", "wrong"), Caller::Launcher { uid: 0 }, Some(facts(&hosts)), "n0");
        assert!(matches!(root, Err(Refusal::NotOwner { caller: 0, owner: 1000, .. })), "root is no owner: {root:?}");
        let cookie = check(&request("n9", "wrong"), ALICE, Some(facts(&hosts)), "n0");
        assert_eq!(cookie, Err(Refusal::BadCookie("1.s".into())));
        let node = check(&request("n9", "secret"), ALICE, Some(facts(&hosts)), "n0").unwrap_err();
        assert_eq!(node.to_string(), "node n9 is not one of job 1.s's nodes");
    }

    #[test]
    fn a_peer_skips_the_uid_but_not_the_cookie_and_never_relays() {
        let hosts = hosts();
        assert_eq!(
            check(&request("n1", "secret"), Caller::Peer, Some(facts(&hosts)), "n1"),
            Ok(Route::Here { node_num: 1 })
        );
        assert_eq!(
            check(&request("n1", "wrong"), Caller::Peer, Some(facts(&hosts)), "n1"),
            Err(Refusal::BadCookie("1.s".into()))
        );
        let relay = check(&request("n1", "secret"), Caller::Peer, Some(facts(&hosts)), "n0");
        assert!(matches!(relay, Err(Refusal::NotForThisNode { .. })), "{relay:?}");
    }

    #[test]
    fn cookies() {
        assert!(cookie_matches("abc", "abc"));
        assert!(!cookie_matches("abc", "abd"));
        assert!(!cookie_matches("abc", "ab"));
        assert!(!cookie_matches("", ""));
    }
}
