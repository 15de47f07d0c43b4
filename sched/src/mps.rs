//! Placing an MPS share: a job asking for a percentage of one GPU (`gpus=1:mps=25`) goes to
//! the first node, in view order, that matches its host and properties, has its cpus and
//! memory free, and has either a GPU its owner already shares with room left or a free GPU.
//!
//! Owns: the MPS rules of the scheduler: shares on a GPU add up to at most 100 %, and only one
//! user's jobs share a GPU. Must not know: how the mom runs MPS, priorities or classes.

use job::ResourceRequest;

use crate::captree::Need;
use crate::view::Assignment;
use crate::work::nodeset::SetKey;
use crate::work::Work;

/// Places the share, or changes nothing and returns `None`. The request must be one chunk of
/// one place (the job crate refuses anything else); other shapes are never placed.
pub(crate) fn place_mps(
    request: &ResourceRequest,
    user: &str,
    percent: u8,
    work: &mut Work,
) -> Option<Vec<Assignment>> {
    let node = mps_node(request, user, percent, work)?;
    let chunk = &request.chunks[0];
    let percent32 = u32::from(percent);
    let gpu = work.take_mps_gpu(node, user, percent32)?;
    work.begin(false);
    work.take(node, &mps_need(request), &chunk.amounts, 1, chunk.mpiprocs);
    let mut assignments = work.commit(request.exclusive);
    assignments[0].gpus = vec![gpu];
    assignments[0].mps = Some(percent);
    Some(assignments)
}

/// The node [`place_mps`] would use now, without taking anything.
pub(crate) fn mps_node(request: &ResourceRequest, user: &str, percent: u8, work: &Work) -> Option<usize> {
    let [chunk] = request.chunks.as_slice() else { return None };
    if chunk.count != 1 {
        return None;
    }
    let need = mps_need(request);
    let key = SetKey::new(chunk.host.as_deref(), chunk.properties.iter().map(String::as_str));
    let percent32 = u32::from(percent);
    (0..work.nodes.len()).find(|&node| {
        key.matches(&work.nodes[node])
            && work.capacity(node).fits(&need)
            && work.nodes[node].holds(&chunk.amounts)
            && work.mps_fits(node, user, percent32)
    })
}

/// Whether the share would take a whole free GPU of `node` (no GPU `user` shares has room).
pub(crate) fn mps_takes_free_gpu(work: &Work, node: usize, user: &str, percent: u8) -> bool {
    let percent = u32::from(percent);
    !work.nodes[node].mps.iter().any(|gpu| gpu.usable && gpu.user == user && gpu.used + percent <= 100)
}

/// The cpus and memory of the share's single chunk (its GPU is handled apart).
fn mps_need(request: &ResourceRequest) -> Need {
    let chunk = &request.chunks[0];
    Need { cpus: u64::from(chunk.ncpus), gpus: 0, mem: chunk.mem.unwrap_or(0), idle: request.exclusive }
}
