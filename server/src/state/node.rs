//! A compute node as the server sees it: what its mom registered, whether it is up, and which
//! job holds each cpu slot and GPU.

use std::collections::BTreeSet;

/// One node. Invariant: `slot_owner.len() == np` and `gpu_owner.len() == ngpus`; a slot or GPU
/// is owned by at most one job (`Some(key)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub np: u32,
    pub mem_bytes: u64,
    pub ngpus: u32,
    pub properties: Vec<String>,
    /// The mom is connected and heartbeating.
    pub up: bool,
    /// Taken out of service by an operator.
    pub offline: bool,
    /// Why the node is down, for pbsnodes (set and cleared by the server).
    pub comment: Option<String>,
    /// The operator's comment (`pbsnodes -C`/`-N`); shown instead of `comment` when set, and
    /// kept in the store.
    pub operator_comment: Option<String>,
    /// Per-start id of the mom process that registered last.
    pub start_id: String,
    pub slot_owner: Vec<Option<u64>>,
    pub gpu_owner: Vec<Option<u64>>,
    pub mem_used: u64,
    /// Jobs with a share here.
    pub jobs: BTreeSet<u64>,
    /// Jobs here that asked for exclusive nodes.
    pub exclusive_jobs: BTreeSet<u64>,
    pub last_state_change: i64,
}

impl Node {
    /// A node as first registered.
    pub fn new(name: &str, np: u32, mem_bytes: u64, ngpus: u32, properties: Vec<String>, now: i64) -> Node {
        Node {
            name: name.to_string(),
            np,
            mem_bytes,
            ngpus,
            properties,
            up: false,
            offline: false,
            comment: None,
            operator_comment: None,
            start_id: String::new(),
            slot_owner: vec![None; np as usize],
            gpu_owner: vec![None; ngpus as usize],
            mem_used: 0,
            jobs: BTreeSet::new(),
            exclusive_jobs: BTreeSet::new(),
            last_state_change: now,
        }
    }

    /// Updates the registered size, keeping the current owners of slots that still exist.
    pub fn resize(&mut self, np: u32, mem_bytes: u64, ngpus: u32, properties: Vec<String>) {
        self.np = np;
        self.mem_bytes = mem_bytes;
        self.ngpus = ngpus;
        self.properties = properties;
        self.slot_owner.resize(np as usize, None);
        self.gpu_owner.resize(ngpus as usize, None);
    }

    pub fn free_slots(&self) -> Vec<u32> {
        free_indices(&self.slot_owner)
    }

    pub fn free_gpus(&self) -> Vec<u32> {
        free_indices(&self.gpu_owner)
    }

    /// PBS state text: `free`, `job-busy`, `job-exclusive`, `down`, `offline` (comma combined).
    pub fn state_text(&self) -> String {
        let mut parts = Vec::new();
        if !self.up {
            parts.push("down");
        }
        if self.offline {
            parts.push("offline");
        }
        if parts.is_empty() {
            if !self.exclusive_jobs.is_empty() {
                parts.push("job-exclusive");
            } else if self.slot_owner.iter().all(Option::is_some) && self.np > 0 {
                parts.push("job-busy");
            } else {
                parts.push("free");
            }
        }
        parts.join(",")
    }

    /// Takes the given slots and GPUs for job `key`. Returns false (and changes nothing) if any
    /// of them is already owned or out of range.
    pub fn assign(&mut self, key: u64, slots: &[u32], gpus: &[u32], mem: u64, exclusive: bool) -> bool {
        let slots_ok = slots.iter().all(|&slot| matches!(self.slot_owner.get(slot as usize), Some(None)));
        let gpus_ok = gpus.iter().all(|&gpu| matches!(self.gpu_owner.get(gpu as usize), Some(None)));
        if !slots_ok || !gpus_ok {
            return false;
        }
        for &slot in slots {
            self.slot_owner[slot as usize] = Some(key);
        }
        for &gpu in gpus {
            self.gpu_owner[gpu as usize] = Some(key);
        }
        self.mem_used += mem;
        self.jobs.insert(key);
        if exclusive {
            self.exclusive_jobs.insert(key);
        }
        true
    }

    /// Releases everything job `key` holds here.
    pub fn release(&mut self, key: u64, mem: u64) {
        for owner in self.slot_owner.iter_mut().chain(self.gpu_owner.iter_mut()) {
            if *owner == Some(key) {
                *owner = None;
            }
        }
        self.mem_used = self.mem_used.saturating_sub(mem);
        self.jobs.remove(&key);
        self.exclusive_jobs.remove(&key);
    }
}

fn free_indices(owners: &[Option<u64>]) -> Vec<u32> {
    owners.iter().enumerate().filter(|(_, owner)| owner.is_none()).map(|(index, _)| index as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assign_is_all_or_nothing() {
        let mut node = Node::new("n1", 4, 0, 2, vec![], 0);
        assert!(node.assign(1, &[0, 1], &[0], 0, false));
        assert!(!node.assign(2, &[1, 2], &[], 0, false), "slot 1 given twice");
        assert_eq!(node.free_slots(), vec![2, 3]);
        assert!(!node.assign(2, &[2], &[0], 0, false), "gpu 0 given twice");
        assert_eq!(node.free_gpus(), vec![1]);
        node.release(1, 0);
        assert_eq!(node.free_slots(), vec![0, 1, 2, 3]);
        assert_eq!(node.free_gpus(), vec![0, 1]);
    }

    #[test]
    fn state_text() {
        let mut node = Node::new("n1", 1, 0, 0, vec![], 0);
        assert_eq!(node.state_text(), "down");
        node.up = true;
        assert_eq!(node.state_text(), "free");
        node.assign(1, &[0], &[], 0, false);
        assert_eq!(node.state_text(), "job-busy");
        node.offline = true;
        assert_eq!(node.state_text(), "offline");
    }
}
