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
    let [chunk] = request.chunks.as_slice() else { return None };
    if chunk.count != 1 {
        return None;
    }
    let need = Need { cpus: u64::from(chunk.ncpus), gpus: 0, mem: chunk.mem.unwrap_or(0), idle: request.exclusive };
    let key = SetKey::new(chunk.host.as_deref(), chunk.properties.iter().map(String::as_str));
    let percent32 = u32::from(percent);
    let node = (0..work.nodes.len()).find(|&node| {
        key.matches(&work.nodes[node])
            && work.capacity(node).fits(&need)
            && work.nodes[node].holds(&chunk.amounts)
            && work.mps_fits(node, user, percent32)
    })?;
    let gpu = work.take_mps_gpu(node, user, percent32)?;
    work.begin(false);
    work.take(node, &need, &chunk.amounts, 1, chunk.mpiprocs);
    let mut assignments = work.commit(request.exclusive);
    assignments[0].gpus = vec![gpu];
    assignments[0].mps = Some(percent);
    Some(assignments)
}
