//! Request classes: jobs whose requests have the same chunks, placement and exclusivity share
//! one `Plan` (built once per pass) and one "failed in this pass" mark.
//!
//! Owns: grouping requests, turning a request into a `Plan` of unit steps over node sets.
//! Must not know: priorities, how units are found (see `place`) or how trees work.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use job::{Chunk, Placement, ResourceRequest};

use crate::captree::Need;
use crate::work::nodeset::SetKey;
use crate::work::Work;

/// `count` units, each needing `need` and `amounts` (consumable site resources, by name) on
/// one node of `set` and adding `mpiprocs` lines there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub set: u32,
    pub need: Need,
    pub amounts: Vec<(String, u64)>,
    pub count: u32,
    pub mpiprocs: u32,
}

/// How to place one request: its steps in chunk order. A packed request is one step with
/// the summed need. No steps means the request asks for nothing and is never started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub steps: Vec<Step>,
    /// Every unit on a distinct node.
    pub scatter: bool,
    /// The nodes used are closed to other jobs.
    pub exclusive: bool,
}

impl Plan {
    /// The plan for `request`, creating the node sets it needs in `work`.
    pub fn new<'a>(request: &'a ResourceRequest, work: &mut Work<'a>) -> Plan {
        let steps = match request.place {
            Placement::Pack => pack_step(request, work).into_iter().collect(),
            Placement::Free | Placement::Scatter => unit_steps(request, work),
        };
        Plan { steps, scatter: request.place == Placement::Scatter, exclusive: request.exclusive }
    }
}

/// One step per chunk (chunks with `count == 0` are dropped). No steps (never started) when
/// a chunk's amounts of one resource add up past `u64`.
fn unit_steps<'a>(request: &'a ResourceRequest, work: &mut Work<'a>) -> Vec<Step> {
    let chunks = request.chunks.iter().filter(|chunk| chunk.count > 0);
    chunks
        .map(|chunk| {
            let amounts = add_amounts(Vec::new(), &chunk.amounts, 1)?;
            let need = Need {
                cpus: u64::from(chunk.ncpus),
                gpus: u64::from(chunk.ngpus),
                mem: chunk.mem.unwrap_or(0),
                idle: request.exclusive,
            };
            let properties = chunk.properties.iter().map(String::as_str);
            let key = SetKey::new(chunk.host.as_deref(), properties).for_need(&need);
            let set = work.set_for(key);
            Some(Step { set, need, amounts, count: chunk.count, mpiprocs: chunk.mpiprocs })
        })
        .collect::<Option<Vec<Step>>>()
        .unwrap_or_default()
}

/// `total` plus `times` times each of `amounts`, merged by name; `None` when a sum passes
/// `u64` (no node can hold it, so the request never starts).
pub(crate) fn add_amounts(
    mut total: Vec<(String, u64)>,
    amounts: &[(String, u64)],
    times: u64,
) -> Option<Vec<(String, u64)>> {
    for (name, each) in amounts {
        let more = each.checked_mul(times)?;
        match total.iter_mut().find(|(have, _)| have == name) {
            Some((_, sum)) => *sum = sum.checked_add(more)?,
            None => total.push((name.clone(), more)),
        }
    }
    Some(total)
}

/// The whole request as one unit: needs summed, hosts and properties united. `None` when the
/// request asks for no units or its amounts of a consumable add up past `u64`.
fn pack_step<'a>(request: &'a ResourceRequest, work: &mut Work<'a>) -> Option<Step> {
    let chunks: Vec<&Chunk> = request.chunks.iter().filter(|chunk| chunk.count > 0).collect();
    if chunks.is_empty() {
        return None;
    }
    let mut need = Need { idle: request.exclusive, ..Need::default() };
    let mut mpiprocs = 0u32;
    let mut amounts = Vec::new();
    for chunk in &chunks {
        let count = u64::from(chunk.count);
        amounts = add_amounts(amounts, &chunk.amounts, count)?;
        need.cpus = need.cpus.saturating_add(count * u64::from(chunk.ncpus));
        need.gpus = need.gpus.saturating_add(count * u64::from(chunk.ngpus));
        need.mem = need.mem.saturating_add(count.saturating_mul(chunk.mem.unwrap_or(0)));
        mpiprocs = mpiprocs.saturating_add(chunk.count.saturating_mul(chunk.mpiprocs));
    }
    let hosts = chunks.iter().filter_map(|chunk| chunk.host.as_deref());
    let properties = chunks.iter().flat_map(|chunk| chunk.properties.iter().map(String::as_str));
    let set = work.set_for(SetKey::new(hosts, properties).for_need(&need));
    Some(Step { set, need, amounts, count: 1, mpiprocs })
}

/// The classes seen so far in one pass, each with its plan and whether it already failed.
#[derive(Debug, Default)]
pub(crate) struct Classes<'a> {
    ids: HashMap<ClassKey<'a>, u32, BuildHasherDefault<FastHasher>>,
    plans: Vec<Plan>,
    failed: Vec<bool>,
}

impl<'a> Classes<'a> {
    /// The class of `request`, planning it on first sight.
    pub fn class_of(&mut self, request: &'a ResourceRequest, work: &mut Work<'a>) -> usize {
        if let Some(&id) = self.ids.get(&ClassKey(request)) {
            return id as usize;
        }
        let id = self.plans.len();
        self.plans.push(Plan::new(request, work));
        self.failed.push(false);
        self.ids.insert(ClassKey(request), id as u32);
        id
    }

    /// The plan of class `id`.
    pub fn plan(&self, id: usize) -> &Plan {
        &self.plans[id]
    }

    /// A job of class `id` did not fit. Free resources only shrink during a pass, so no later
    /// job of the class can fit either.
    pub fn mark_failed(&mut self, id: usize) {
        self.failed[id] = true;
    }

    /// Whether class `id` already failed in this pass.
    pub fn failed(&self, id: usize) -> bool {
        self.failed[id]
    }
}

/// A request seen only through the fields that decide placement.
#[derive(Debug, Clone, Copy)]
struct ClassKey<'a>(&'a ResourceRequest);

impl PartialEq for ClassKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.chunks == other.0.chunks && self.0.place == other.0.place && self.0.exclusive == other.0.exclusive
    }
}

impl Eq for ClassKey<'_> {}

impl Hash for ClassKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for chunk in &self.0.chunks {
            (chunk.count, chunk.ncpus, chunk.ngpus, chunk.mem, chunk.mpiprocs).hash(state);
            chunk.host.hash(state);
            chunk.properties.hash(state);
        }
        let place: u8 = match self.0.place {
            Placement::Free => 0,
            Placement::Pack => 1,
            Placement::Scatter => 2,
        };
        (place, self.0.exclusive).hash(state);
    }
}

/// A multiply-rotate hasher (the FxHash recipe): grouping 100,000 requests per pass with
/// SipHash costs more than the rest of the pass. Keys are not attacker-chosen in a way that
/// matters here: collisions only cost time, and requests are limited by the submit path.
#[derive(Debug, Default, Clone, Copy)]
struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for piece in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..piece.len()].copy_from_slice(piece);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, value: u8) {
        self.add(u64::from(value));
    }

    fn write_u32(&mut self, value: u32) {
        self.add(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.add(value);
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
