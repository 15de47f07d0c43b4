//! The server's live state: jobs and nodes, in memory. The store is its durable log.
//! No I/O here: handlers mutate the state and record in an [`Outbox`](crate::outbox::Outbox)
//! what must be persisted and sent.
//!
//! Invariant: a job's state changes only through [`ServerState::transition`], which applies
//! `job::JobState::apply` and refuses illegal transitions.

pub mod job;
pub mod node;

pub use job::{Job, JobTimes, NodeShare};
pub use node::Node;

use ::job::state::IllegalTransition;
use ::job::{JobEvent, JobId};
use proto::error::{ErrorCode, RequestError};
use std::collections::BTreeMap;

/// Who sent a request, as the transport established it (never from the message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requester {
    pub uid: u32,
    pub gid: u32,
    pub user: String,
    pub host: String,
}

/// All live state of the server.
#[derive(Debug)]
pub struct ServerState {
    pub server_name: String,
    pub default_queue: String,
    pub kill_delay: u64,
    /// The uid the server runs as; it and root are managers.
    pub server_uid: u32,
    pub jobs: BTreeMap<u64, Job>,
    pub nodes: BTreeMap<String, Node>,
    /// The next job sequence number. Invariant: greater than every id ever handed out.
    pub next_seq: u64,
}

impl ServerState {
    pub fn new(server_name: &str, default_queue: &str, kill_delay: u64, server_uid: u32) -> ServerState {
        ServerState {
            server_name: server_name.to_string(),
            default_queue: default_queue.to_string(),
            kill_delay,
            server_uid,
            jobs: BTreeMap::new(),
            nodes: BTreeMap::new(),
            next_seq: 1,
        }
    }

    /// Resolves a user-typed id (`12`, `12.head`) to a known job's sequence number.
    pub fn find_job(&self, text: &str) -> Result<u64, RequestError> {
        let id = JobId::parse(text, &self.server_name)
            .map_err(|_| RequestError::with_detail(ErrorCode::UnknownJobId, text))?;
        if id.server != self.server_name || !self.jobs.contains_key(&id.seq) {
            return Err(RequestError::with_detail(ErrorCode::UnknownJobId, id));
        }
        Ok(id.seq)
    }

    /// Whether `requester` may act on a job owned by `owner_uid` (owner or manager).
    pub fn may_modify(&self, requester: &Requester, owner_uid: u32) -> bool {
        requester.uid == owner_uid || self.is_manager(requester)
    }

    /// Managers: root and the user the server runs as.
    pub fn is_manager(&self, requester: &Requester) -> bool {
        requester.uid == 0 || requester.uid == self.server_uid
    }

    /// Applies `event` to job `seq`; the only way a job's state changes.
    pub fn transition(&mut self, seq: u64, event: JobEvent, now: i64) -> Result<(), IllegalTransition> {
        let job = self.jobs.get_mut(&seq).expect("transition on a job the caller just looked up");
        job.state = job.state.apply(event)?;
        job.times.mtime = now;
        Ok(())
    }

    /// Frees every node share of job `seq`.
    pub fn release_nodes(&mut self, seq: u64) {
        let Some(job) = self.jobs.get(&seq) else { return };
        for share in &job.exec {
            if let Some(node) = self.nodes.get_mut(&share.node) {
                node.release(seq, share.mem_bytes);
            }
        }
    }

    /// Re-takes the node shares of active jobs (after loading from the store, or when a node
    /// registers again). Shares on unknown nodes are kept on the job and taken when the node
    /// appears.
    pub fn claim_shares_on(&mut self, node_name: &str) {
        let Some(node) = self.nodes.get_mut(node_name) else { return };
        for (seq, job) in &self.jobs {
            if !job.state.is_active() {
                continue;
            }
            for share in job.exec.iter().filter(|share| share.node == node_name) {
                if !node.jobs.contains(seq) {
                    node.assign(*seq, &share.slots, &share.gpus, share.mem_bytes, job.request.exclusive);
                }
            }
        }
    }
}
