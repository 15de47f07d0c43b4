//! A compute node as the server sees it: what its mom registered, whether it is up, and which
//! job holds each cpu slot and GPU (GPU identity, reported use and MPS shares:
//! `node_gpus.rs`).

use super::node_gpus::{MpsHold, NodeGpu};
use super::NodeShare;
use ::job::JobKey;
use std::collections::{BTreeMap, BTreeSet};

/// One node. Invariant: `slot_owner.len() == np` and `gpu_owner.len() == gpus.len() ==
/// ngpus`; a slot or GPU is owned by at most one job (`Some(key)`); a GPU with an owner has no
/// MPS shares.
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
    /// The mom's address, from its TCP connection (`None` over the Unix socket).
    pub mom_addr: Option<String>,
    /// The mom's port (`--listen`) as it registered; 0 = none.
    pub mom_port: u16,
    /// The mom's task socket as it registered (Unix transport: other moms on this machine
    /// reach it there for tasks).
    pub task_socket: Option<String>,
    pub slot_owner: Vec<Option<JobKey>>,
    pub gpu_owner: Vec<Option<JobKey>>,
    /// Identity, reported use and MPS shares of each GPU, by index.
    pub gpus: Vec<NodeGpu>,
    pub mem_used: u64,
    /// Jobs with a share here.
    pub jobs: BTreeSet<JobKey>,
    /// Jobs here that asked for exclusive nodes.
    pub exclusive_jobs: BTreeSet<JobKey>,
    pub last_state_change: i64,
    /// Values of site-defined resources (`resources_available.gpu_type = a100`), shown form,
    /// by name; set with qmgr and kept in the store (`state/site.rs`).
    pub site: std::collections::BTreeMap<String, String>,
    /// Consumable site resources running jobs hold here (`resources_assigned.NAME`), counted
    /// units by name: the sum of their shares' amounts, taken and given back with them (so
    /// rebuilt from the stored allocations after a restart). Sums saturate: too much held
    /// only means nothing more fits.
    pub site_assigned: BTreeMap<String, u64>,
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
            mom_addr: None,
            mom_port: 0,
            task_socket: None,
            slot_owner: vec![None; np as usize],
            gpu_owner: vec![None; ngpus as usize],
            gpus: (0..ngpus).map(|index| NodeGpu::unnamed(index, None)).collect(),
            mem_used: 0,
            jobs: BTreeSet::new(),
            exclusive_jobs: BTreeSet::new(),
            last_state_change: now,
            site: Default::default(),
            site_assigned: BTreeMap::new(),
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
        let len = self.gpus.len() as u32;
        self.gpus.truncate(ngpus as usize);
        self.gpus.extend((len..ngpus).map(|index| NodeGpu::unnamed(index, None)));
    }

    /// Takes the GPU list a mom registered (see `node_gpus::registered`); `ngpus` follows it.
    pub fn set_gpus(&mut self, gpus: Vec<NodeGpu>) {
        self.ngpus = gpus.len() as u32;
        self.gpu_owner.resize(gpus.len(), None);
        self.gpus = gpus;
    }

    pub fn free_slots(&self) -> Vec<u32> {
        free_indices(&self.slot_owner)
    }

    /// GPUs that may be handed out whole: no holder, no share, reported free by the mom.
    pub fn free_gpus(&self) -> Vec<u32> {
        free_indices(&self.gpu_owner)
            .into_iter()
            .filter(|&index| {
                let gpu = &self.gpus[index as usize];
                gpu.mps.is_none() && gpu.reported() == Some(proto::gpu::GpuUse::Free)
            })
            .collect()
    }

    /// GPUs shared through MPS, for the scheduler.
    pub fn mps_gpus(&self) -> Vec<sched::MpsGpu> {
        let shared = self.gpus.iter().filter_map(|gpu| Some((gpu, gpu.mps.as_ref()?)));
        shared
            .map(|(gpu, hold)| sched::MpsGpu {
                index: gpu.info.index,
                user: hold.user.clone(),
                used: hold.used(),
                usable: gpu.shareable(),
            })
            .collect()
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

    /// Takes `share` (its slots, memory and GPUs, whole or as an MPS share of `user`) for job
    /// `key`. Returns false (and changes nothing) if a slot or GPU is already owned or out of
    /// range, a whole GPU has MPS shares, or a share would pass 100 % or join another user's.
    pub fn assign(&mut self, key: JobKey, share: &NodeShare, user: &str, exclusive: bool) -> bool {
        let (slots, gpus) = (&share.slots, &share.gpus);
        let slots_ok = slots.iter().all(|&slot| matches!(self.slot_owner.get(slot as usize), Some(None)));
        let gpu_free = |gpu: u32| {
            matches!(self.gpu_owner.get(gpu as usize), Some(None))
                && self.gpus.get(gpu as usize).is_some_and(|gpu| gpu.mps.is_none())
        };
        let gpus_ok = match (share.mps, gpus.as_slice()) {
            (None, _) => gpus.iter().all(|&gpu| gpu_free(gpu)),
            (Some(percent), &[gpu]) => self.share_fits(gpu, user, percent),
            (Some(_), _) => false,
        };
        if !slots_ok || !gpus_ok {
            return false;
        }
        for &slot in slots {
            self.slot_owner[slot as usize] = Some(key);
        }
        match share.mps {
            Some(percent) => {
                let hold = self.gpus[gpus[0] as usize]
                    .mps
                    .get_or_insert_with(|| MpsHold { user: user.to_string(), shares: BTreeMap::new() });
                hold.shares.insert(key, percent);
            }
            None => gpus.iter().for_each(|&gpu| self.gpu_owner[gpu as usize] = Some(key)),
        }
        let mem = share.mem_bytes;
        self.mem_used += mem;
        for (name, amount) in &share.amounts {
            let held = self.site_assigned.entry(name.clone()).or_default();
            *held = held.saturating_add(*amount);
        }
        self.jobs.insert(key);
        if exclusive {
            self.exclusive_jobs.insert(key);
        }
        true
    }

    /// Whether an MPS share of `percent` for `user` fits on GPU `gpu`: nobody holds it whole,
    /// and it is unshared or shared by `user` with room left.
    fn share_fits(&self, gpu: u32, user: &str, percent: u8) -> bool {
        let unowned = matches!(self.gpu_owner.get(gpu as usize), Some(None));
        unowned
            && self.gpus[gpu as usize]
                .mps
                .as_ref()
                .is_none_or(|hold| hold.user == user && hold.used() + u32::from(percent) <= 100)
    }

    /// Releases everything job `key` holds here (`share` is its share of this node).
    pub fn release(&mut self, key: JobKey, share: &NodeShare) {
        let mem = share.mem_bytes;
        for (name, amount) in &share.amounts {
            if let Some(held) = self.site_assigned.get_mut(name) {
                *held = held.saturating_sub(*amount);
                if *held == 0 {
                    self.site_assigned.remove(name);
                }
            }
        }
        for owner in self.slot_owner.iter_mut().chain(self.gpu_owner.iter_mut()) {
            if *owner == Some(key) {
                *owner = None;
            }
        }
        for gpu in &mut self.gpus {
            if let Some(hold) = &mut gpu.mps {
                hold.shares.remove(&key);
                if hold.shares.is_empty() {
                    gpu.mps = None;
                }
            }
        }
        self.mem_used = self.mem_used.saturating_sub(mem);
        self.jobs.remove(&key);
        self.exclusive_jobs.remove(&key);
    }
}

fn free_indices(owners: &[Option<JobKey>]) -> Vec<u32> {
    owners.iter().enumerate().filter(|(_, owner)| owner.is_none()).map(|(index, _)| index as u32).collect()
}

/// The node names a `nodes=` word is looked up in, ignoring case as OpenPBS does when it
/// converts the spec to a select (`strcasecmp`, `src/server/node_manager.c:5867-5877`). Built
/// once per request (or per load), so a spec of many words costs one lookup each, not a scan
/// of every node.
pub struct NodeNames(std::collections::HashSet<String>);

impl NodeNames {
    pub fn new<'a>(names: impl IntoIterator<Item = &'a String>) -> NodeNames {
        NodeNames(names.into_iter().map(|name| name.to_ascii_lowercase()).collect())
    }

    /// Whether `word` names one of the nodes.
    pub fn contains(&self, word: &str) -> bool {
        self.0.contains(&word.to_ascii_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job key in a test (no job behind it).
    fn k(raw: u64) -> JobKey {
        JobKey::from_raw(raw)
    }
    use crate::state::node_gpus::registered;

    #[test]
    fn node_names_are_looked_up_ignoring_case() {
        let stored = ["node1".to_string(), "Gpu-A".to_string()];
        let names = NodeNames::new(&stored);
        assert!(names.contains("node1") && names.contains("NODE1") && names.contains("gpu-a"));
        assert!(!names.contains("node2") && !names.contains("gpu"));
    }

    fn share(slots: &[u32], gpus: &[u32], mps: Option<u8>) -> NodeShare {
        NodeShare {
            node: "n1".into(),
            slots: slots.to_vec(),
            gpus: gpus.to_vec(),
            mem_bytes: 0,
            mpiprocs: 1,
            mps,
            amounts: Vec::new(),
        }
    }

    /// A node of `np` slots and `ngpus` GPUs reported free.
    fn node(np: u32, ngpus: u32) -> Node {
        let mut node = Node::new("n1", np, 0, ngpus, vec![], 0);
        node.set_gpus(registered(&[], ngpus, &[], &[]));
        node
    }

    #[test]
    fn assign_is_all_or_nothing() {
        let mut node = node(4, 2);
        assert!(node.assign(k(1), &share(&[0, 1], &[0], None), "u", false));
        assert!(!node.assign(k(2), &share(&[1, 2], &[], None), "u", false), "slot 1 given twice");
        assert_eq!(node.free_slots(), vec![2, 3]);
        assert!(!node.assign(k(2), &share(&[2], &[0], None), "u", false), "gpu 0 given twice");
        assert_eq!(node.free_gpus(), vec![1]);
        node.release(k(1), &share(&[0, 1], &[0], None));
        assert_eq!(node.free_slots(), vec![0, 1, 2, 3]);
        assert_eq!(node.free_gpus(), vec![0, 1]);
    }

    #[test]
    fn mps_shares_add_up_to_100_for_one_user_and_block_whole_use() {
        let mut node = node(8, 1);
        for key in 1..=4 {
            assert!(node.assign(k(key), &share(&[key as u32], &[0], Some(25)), "alice", false), "share {key}");
        }
        assert!(!node.assign(k(5), &share(&[5], &[0], Some(25)), "alice", false), "past 100 %");
        assert!(node.free_gpus().is_empty(), "a shared GPU is not free");
        assert_eq!(node.mps_gpus()[0].used, 100);
        (1..=4).for_each(|key| node.release(k(key), &share(&[key as u32], &[0], Some(25))));
        assert!(node.gpus[0].mps.is_none(), "the last share's end unshares it");
        assert!(node.assign(k(6), &share(&[0], &[0], Some(50)), "alice", false));
        assert!(!node.assign(k(7), &share(&[1], &[0], Some(25)), "bob", false), "another user's share");
        assert!(!node.assign(k(8), &share(&[2], &[0], None), "alice", false), "whole while shared");
        assert_eq!(node.free_slots(), (1..8).collect::<Vec<u32>>(), "a refused share takes no slot");
    }

    #[test]
    fn consumable_amounts_add_up_and_return() {
        let mut node = node(4, 0);
        let holding = |slot: u32, amount: u64| NodeShare {
            amounts: vec![("scratch".into(), amount)],
            ..share(&[slot], &[], None)
        };
        assert!(node.assign(k(1), &holding(0, 60), "u", false));
        assert!(node.assign(k(2), &holding(1, u64::MAX), "u", false));
        assert_eq!(node.site_assigned["scratch"], u64::MAX, "sums saturate");
        node.release(k(2), &holding(1, u64::MAX));
        node.release(k(1), &holding(0, 60));
        assert!(node.site_assigned.is_empty(), "everything returned: {:?}", node.site_assigned);
    }

    #[test]
    fn unreported_gpus_are_not_free() {
        let node = Node::new("n1", 1, 0, 2, vec![], 0);
        assert!(node.free_gpus().is_empty());
    }

    #[test]
    fn state_text() {
        let mut node = Node::new("n1", 1, 0, 0, vec![], 0);
        assert_eq!(node.state_text(), "down");
        node.up = true;
        assert_eq!(node.state_text(), "free");
        node.assign(k(1), &share(&[0], &[], None), "u", false);
        assert_eq!(node.state_text(), "job-busy");
        node.offline = true;
        assert_eq!(node.state_text(), "offline");
    }
}
