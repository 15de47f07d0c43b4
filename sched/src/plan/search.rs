//! The earliest start of a request on the profile: try `now`, then each time something comes
//! back (a running job's or a planned job's end, a reservation's end; a reservation's start
//! too, which only adds a try), first with the summed free cpus, GPUs and memory (a necessary
//! condition, O(1) per time), then with the full placement engine (`place`) on the nodes as
//! they will be over the whole window (O(nodes), at most `MAX_TRIALS` times).
//!
//! Owns: the candidate times, the trial budget and the node view "as of" a window.
//! Must not know: priorities, backfill, wait reasons.

use std::borrow::Cow;
use std::collections::BTreeMap;

use job::{Chunk, ResourceRequest};

use super::res::Totals;
use super::Timeline;
use crate::class::Plan;
use crate::place::place;
use crate::view::{Assignment, NodeView};
use crate::work::nodeset::has_property;
use crate::work::{Planned, Work, WorkNode};

/// Full placements tried for one reservation at most. Each costs a pass over the nodes; a
/// request the summed resources say fits but the nodes cannot hold (fragmented, or asking for
/// a node that is down) would otherwise cost one per candidate time. Past it, no estimate.
pub(crate) const MAX_TRIALS: usize = 64;

/// A planned start: when, and what the job would get on each node.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub start: i64,
    pub assignments: Vec<Assignment>,
}

impl Timeline<'_> {
    /// The earliest time from `now` on at which `request` fits for `walltime` seconds, and
    /// where; `None` when it never does on the profile (or the trial budget runs out).
    pub fn earliest(&self, request: &ResourceRequest, walltime: u64) -> Option<Found> {
        let request = whole_gpu(request);
        let need = totals(&request);
        let length = i64::try_from(walltime).unwrap_or(i64::MAX).max(1);
        let mask = self.mask(&request);
        let local;
        let (base, release_totals, held_totals) = match &mask {
            None => (self.base_total, &self.release_totals, &self.held_totals),
            Some(mask) => {
                local = self.local_totals(mask);
                (local.0, &local.1, &local.2)
            }
        };
        let mut free = base;
        let mut releases = release_totals.iter().peekable();
        let mut holds = held_totals.iter().peekable();
        let mut trials = 0;
        // Candidate times: `now`, then each later time something comes back or a reservation
        // starts or ends (the two maps merged in order, each time once).
        let mut start = self.now;
        loop {
            while let Some((_, back)) = releases.next_if(|(time, _)| **time <= start) {
                free.add(*back);
            }
            while let Some((_, held)) = holds.next_if(|(time, _)| **time <= start) {
                free.sub(*held);
            }
            if free.holds(&need) {
                trials += 1;
                if trials > MAX_TRIALS {
                    return None;
                }
                let to = start.saturating_add(length);
                if let Some(assignments) = self.place_at(&request, mask.as_deref(), start, to) {
                    return Some(Found { start, assignments });
                }
            }
            let next = [releases.peek().map(|(time, _)| **time), holds.peek().map(|(time, _)| **time)];
            start = next.into_iter().flatten().min()?;
        }
    }

    /// The nodes some chunk of `request` may use by its host and properties; `None`: all.
    fn mask(&self, request: &ResourceRequest) -> Option<Vec<bool>> {
        let chunks: Vec<&Chunk> = request.chunks.iter().filter(|chunk| chunk.count > 0).collect();
        if chunks.iter().all(|chunk| chunk.host.is_none() && chunk.properties.is_empty()) {
            return None;
        }
        let matches = |node: &NodeView, chunk: &Chunk| {
            chunk.host.as_ref().is_none_or(|host| node.name == *host)
                && chunk.properties.iter().all(|property| has_property(&node.name, &node.properties, property))
        };
        Some(self.nodes.iter().map(|node| chunks.iter().any(|chunk| matches(node, chunk))).collect())
    }

    /// The summed free resources, releases and reservations of the nodes in `mask` only.
    fn local_totals(&self, mask: &[bool]) -> (Totals, BTreeMap<i64, Totals>, BTreeMap<i64, Totals>) {
        let mut base = Totals::default();
        let mut releases: BTreeMap<i64, Totals> = BTreeMap::new();
        let mut holds: BTreeMap<i64, Totals> = BTreeMap::new();
        let chosen = mask.iter().enumerate().filter(|(node, &on)| on && self.nodes[*node].available);
        for (node, _) in chosen {
            base.add(self.base[node].totals());
            for (time, back) in &self.releases[node] {
                releases.entry(*time).or_default().add(back.totals());
            }
            for held in &self.held[node] {
                holds.entry(held.from).or_default().add(held.res.totals());
                holds.entry(held.to).or_default().sub(held.res.totals());
            }
        }
        (base, releases, holds)
    }

    /// Places `request` first fit on the nodes as they are over `[from, to)`.
    /// Nodes outside `mask` are left unusable (their windows are not computed).
    fn place_at(
        &self,
        request: &ResourceRequest,
        mask: Option<&[bool]>,
        from: i64,
        to: i64,
    ) -> Option<Vec<Assignment>> {
        let nodes = self.nodes.iter().enumerate().map(|(index, node)| {
            if mask.is_some_and(|mask| !mask[index]) {
                return WorkNode::planned(node, Planned::default());
            }
            let window = self.window(index, from, to);
            let clamp = |value: i128, most: u64| value.clamp(0, i128::from(most)) as u64;
            let amounts = node
                .amounts
                .iter()
                .zip(&window.res.amounts)
                .map(|(site, free)| (site.name.as_str(), clamp(*free, site.available)))
                .collect();
            let free = Planned {
                cpus: clamp(window.res.cpus.into(), node.np.into()) as u32,
                gpus: clamp(window.res.gpus.into(), node.ngpus.into()) as u32,
                mem: clamp(window.res.mem, node.mem_total),
                amounts,
                usable: window.usable,
                idle: window.idle,
            };
            WorkNode::planned(node, free)
        });
        let mut work = Work::new(nodes.collect());
        work.sets.unindexed = true;
        let plan = Plan::new(request, &mut work);
        place(&plan, &mut work)
    }
}

/// The request with an MPS share asked as one whole GPU (the plan's approximation).
fn whole_gpu(request: &ResourceRequest) -> Cow<'_, ResourceRequest> {
    if request.mps_share().is_none() {
        return Cow::Borrowed(request);
    }
    let mut owned = request.clone();
    for chunk in &mut owned.chunks {
        chunk.ngpus = chunk.ngpus.max(1);
        chunk.mps = None;
    }
    Cow::Owned(owned)
}

/// Cpus, GPUs and memory the request asks for in all (saturating: too much never fits).
fn totals(request: &ResourceRequest) -> Totals {
    let mut need = Totals::default();
    for chunk in &request.chunks {
        let count = i128::from(chunk.count);
        need.cpus = need.cpus.saturating_add((count * i128::from(chunk.ncpus)).min(i64::MAX.into()) as i64);
        need.gpus = need.gpus.saturating_add((count * i128::from(chunk.ngpus)).min(i64::MAX.into()) as i64);
        need.mem = need.mem.saturating_add(count * i128::from(chunk.mem.unwrap_or(0)));
    }
    need
}
