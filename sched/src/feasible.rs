//! `can_ever_run`: whether a request could run on the cluster if every node were up and empty,
//! so the server can refuse impossible jobs at submit with a reason a user understands.
//!
//! Owns: the submit-time feasibility check and its messages.
//! Must not know: current load, priorities, the server's error codes.

use job::{Chunk, Placement, ResourceRequest};

use crate::captree::Need;
use crate::class::{add_amounts, Plan};
use crate::place::place;
use crate::view::NodeView;
use crate::work::nodeset::{has_property, SetKey};
use crate::work::{Work, WorkNode};

/// Whether the request could ever run on these nodes if they were all empty and up (used to
/// refuse impossible jobs at submit); `Err` names why, e.g.
/// `needs 64 cpus on one node; the largest node has 4`.
///
/// The specific checks (hosts and properties exist, one unit fits one node, enough distinct
/// nodes for scatter, enough in total, no more chunks than the nodes hold) give the message; the final word is the scheduler's own
/// first-fit placement on the empty cluster, so `Ok` means `schedule` would start the job on
/// an idle cluster. Exclusivity does not matter on an empty cluster.
pub fn can_ever_run(request: &ResourceRequest, nodes: &[NodeView]) -> Result<(), String> {
    let chunks: Vec<&Chunk> = request.chunks.iter().filter(|chunk| chunk.count > 0).collect();
    if chunks.is_empty() {
        return Err("the request asks for no resources (no chunk with a count above 0)".into());
    }
    for (number, chunk) in chunks.iter().enumerate() {
        let prefix = if chunks.len() > 1 { format!("chunk {}: ", number + 1) } else { String::new() };
        check_unit(&unit_need(chunk), &chunk.amounts, &chunk_key(chunk), nodes).map_err(|why| prefix + &why)?;
    }
    match request.place {
        Placement::Pack => check_pack(&chunks, nodes)?,
        Placement::Scatter => check_scatter(&chunks, nodes)?,
        Placement::Free => check_totals(&chunks, nodes)?,
    }
    check_chunk_count(&chunks, nodes)?;
    let mut work = Work::new(nodes.iter().map(WorkNode::empty).collect());
    let plan = Plan::new(request, &mut work);
    match place(&plan, &mut work) {
        Some(_) => Ok(()),
        None => Err("does not fit on the nodes even when all of them are empty \
                     (chunks are placed first fit, in order)"
            .into()),
    }
}

fn unit_need(chunk: &Chunk) -> Need {
    Need { cpus: u64::from(chunk.ncpus), gpus: u64::from(chunk.ngpus), mem: chunk.mem.unwrap_or(0), idle: false }
}

fn chunk_key(chunk: &Chunk) -> SetKey<'_> {
    SetKey::new(chunk.host.as_deref(), chunk.properties.iter().map(String::as_str))
}

/// Whether `node` matches `key` (name and properties only).
fn matches(key: &SetKey, node: &NodeView) -> bool {
    key.hosts.iter().all(|host| node.name == *host)
        && key.properties.iter().all(|property| has_property(&node.name, &node.properties, property))
}

/// Whether one unit with `need` and `amounts` fits an empty `node`.
fn holds(need: &Need, amounts: &[(String, u64)], node: &NodeView) -> bool {
    u64::from(node.np) >= need.cpus
        && u64::from(node.ngpus) >= need.gpus
        && node.mem_total >= need.mem
        && amounts.iter().all(|(name, each)| available(node, name) >= *each)
}

/// `resources_available` of consumable `name` on `node` (0 when it has none).
fn available(node: &NodeView, name: &str) -> u64 {
    node.amounts.iter().find(|site| site.name == name).map_or(0, |site| site.available)
}

/// One unit with `need` and `amounts` fits some node matching `key`; otherwise says which
/// limit fails. Amounts are named in the unit the scheduler counts (bytes, thousandths).
fn check_unit(need: &Need, amounts: &[(String, u64)], key: &SetKey, nodes: &[NodeView]) -> Result<(), String> {
    check_names(key, nodes)?;
    let matching: Vec<&NodeView> = nodes.iter().filter(|node| matches(key, node)).collect();
    if matching.is_empty() {
        return Err(format!("no node has all of: {}", describe_key(key)));
    }
    let which = if key.hosts.is_empty() && key.properties.is_empty() {
        "node".to_string()
    } else {
        format!("node with {}", describe_key(key))
    };
    let most_cpus = matching.iter().map(|node| node.np).max().unwrap_or(0);
    if u64::from(most_cpus) < need.cpus {
        return Err(format!("needs {} cpus on one node; the largest {which} has {most_cpus}", need.cpus));
    }
    let most_gpus = matching.iter().map(|node| node.ngpus).max().unwrap_or(0);
    if u64::from(most_gpus) < need.gpus {
        return Err(format!("needs {} gpus on one node; the {which} with the most has {most_gpus}", need.gpus));
    }
    let most_mem = matching.iter().map(|node| node.mem_total).max().unwrap_or(0);
    if most_mem < need.mem {
        return Err(format!(
            "needs {} of memory on one node; the {which} with the most has {}",
            format_bytes(need.mem),
            format_bytes(most_mem)
        ));
    }
    for (name, each) in amounts {
        let most = matching.iter().map(|node| available(node, name)).max().unwrap_or(0);
        if most < *each {
            return Err(format!("needs {name}={each} on one node; the {which} with the most has {name}={most}"));
        }
    }
    if !matching.iter().any(|node| holds(need, amounts, node)) {
        return Err(format!("needs {} on one node; no {which} has all of these", describe_need(need)));
    }
    Ok(())
}

/// Every host and every property names something that exists.
fn check_names(key: &SetKey, nodes: &[NodeView]) -> Result<(), String> {
    for host in &key.hosts {
        if !nodes.iter().any(|node| node.name == *host) {
            return Err(format!("host '{host}' is not a node of this server"));
        }
    }
    if key.hosts.len() > 1 {
        return Err(format!("asks for several hosts on one node: {}", key.hosts.join(", ")));
    }
    for property in &key.properties {
        let single = SetKey::new([], [*property]);
        if !nodes.iter().any(|node| matches(&single, node)) {
            return Err(match property.strip_prefix('!') {
                Some(word) => format!("every node has {word}=True"),
                None => format!("no node has {}", describe_property(property)),
            });
        }
    }
    Ok(())
}

/// Most chunks a node is counted to hold: one per cpu slot or per GPU, and at least one.
///
/// A chunk is a share of one node; one asking for no cpus, GPUs or memory (`ncpus=0`) would
/// otherwise "fit" any node any number of times, and `select=1000000000:ncpus=0` would be a
/// job of a billion chunks (and as many `PBS_NODEFILE` lines with `mpiprocs`). OpenPBS sets no
/// explicit bound; ours is the one real use cannot exceed: more chunks than the cluster has
/// cpu slots (or GPUs, for GPU-only chunks) is not a use of the cluster but an attack.
fn chunk_room(node: &NodeView) -> u64 {
    u64::from(node.np.max(node.ngpus).max(1))
}

/// Every placement: no more chunks in total than the nodes matching some chunk hold
/// ([`chunk_room`]). After the checks with more specific messages, before placement.
fn check_chunk_count(chunks: &[&Chunk], nodes: &[NodeView]) -> Result<(), String> {
    let total: u64 = chunks.iter().map(|chunk| u64::from(chunk.count)).sum();
    let room: u64 =
        nodes.iter().filter(|node| chunks.iter().any(|chunk| matches(&chunk_key(chunk), node))).map(chunk_room).sum();
    if total > room {
        return Err(format!(
            "asks for {total} chunks; the nodes it may use hold at most {room} \
             (one chunk per cpu slot or GPU)"
        ));
    }
    Ok(())
}

/// `place=pack`: the whole request fits one node.
fn check_pack(chunks: &[&Chunk], nodes: &[NodeView]) -> Result<(), String> {
    let mut need = Need::default();
    let mut amounts = Vec::new();
    for chunk in chunks {
        let count = u64::from(chunk.count);
        amounts = add_amounts(amounts, &chunk.amounts, count)
            .ok_or_else(|| "place=pack: the amounts of a consumable resource add up past any node".to_string())?;
        need.cpus = need.cpus.saturating_add(count * u64::from(chunk.ncpus));
        need.gpus = need.gpus.saturating_add(count * u64::from(chunk.ngpus));
        need.mem = need.mem.saturating_add(count.saturating_mul(chunk.mem.unwrap_or(0)));
    }
    let hosts = chunks.iter().filter_map(|chunk| chunk.host.as_deref());
    let properties = chunks.iter().flat_map(|chunk| chunk.properties.iter().map(String::as_str));
    check_unit(&need, &amounts, &SetKey::new(hosts, properties), nodes).map_err(|why| format!("place=pack: {why}"))
}

/// `place=scatter`: enough distinct nodes, per chunk and in total.
fn check_scatter(chunks: &[&Chunk], nodes: &[NodeView]) -> Result<(), String> {
    let can_hold = |chunk: &Chunk, node: &NodeView| {
        matches(&chunk_key(chunk), node) && holds(&unit_need(chunk), &chunk.amounts, node)
    };
    for chunk in chunks {
        let able = nodes.iter().filter(|node| can_hold(chunk, node)).count();
        if (chunk.count as usize) > able {
            return Err(format!(
                "needs {} distinct nodes (place=scatter); only {able} can hold {}",
                chunk.count,
                describe_chunk(chunk)
            ));
        }
    }
    let total: u64 = chunks.iter().map(|chunk| u64::from(chunk.count)).sum();
    let able = nodes.iter().filter(|node| chunks.iter().any(|chunk| can_hold(chunk, node))).count();
    if total > able as u64 {
        return Err(format!("needs {total} distinct nodes (place=scatter); only {able} can hold one of its chunks"));
    }
    Ok(())
}

/// `place=free`: the nodes matching some chunk have enough cpus, gpus and memory in total.
fn check_totals(chunks: &[&Chunk], nodes: &[NodeView]) -> Result<(), String> {
    let eligible: Vec<&NodeView> =
        nodes.iter().filter(|node| chunks.iter().any(|chunk| matches(&chunk_key(chunk), node))).collect();
    let sum = |per_chunk: fn(&Chunk) -> u64| -> u64 {
        chunks.iter().map(|chunk| u64::from(chunk.count).saturating_mul(per_chunk(chunk))).sum()
    };
    let cpus = sum(|chunk| u64::from(chunk.ncpus));
    let have_cpus: u64 = eligible.iter().map(|node| u64::from(node.np)).sum();
    if cpus > have_cpus {
        return Err(format!("needs {cpus} cpus in total; the nodes it may use have {have_cpus}"));
    }
    let gpus = sum(|chunk| u64::from(chunk.ngpus));
    let have_gpus: u64 = eligible.iter().map(|node| u64::from(node.ngpus)).sum();
    if gpus > have_gpus {
        return Err(format!("needs {gpus} gpus in total; the nodes it may use have {have_gpus}"));
    }
    let mem = sum(|chunk| chunk.mem.unwrap_or(0));
    let have_mem = eligible.iter().fold(0u64, |total, node| total.saturating_add(node.mem_total));
    if mem > have_mem {
        return Err(format!(
            "needs {} of memory in total; the nodes it may use have {}",
            format_bytes(mem),
            format_bytes(have_mem)
        ));
    }
    Ok(())
}

/// `property 'fast'` for a property, `gpu_type=a100` for a site resource's value.
fn describe_property(property: &str) -> String {
    if property.contains('=') {
        property.to_string()
    } else {
        format!("property '{property}'")
    }
}

/// `host=n1, bigmem, fast` style text for a key.
fn describe_key(key: &SetKey) -> String {
    let hosts = key.hosts.iter().map(|host| format!("host={host}"));
    let properties = key.properties.iter().map(|property| property.to_string());
    hosts.chain(properties).collect::<Vec<_>>().join(", ")
}

/// `4 cpus, 1 gpus and 2gb of memory` style text (gpus and memory only when asked for).
fn describe_need(need: &Need) -> String {
    let mut parts = vec![format!("{} cpus", need.cpus)];
    if need.gpus > 0 {
        parts.push(format!("{} gpus", need.gpus));
    }
    if need.mem > 0 {
        parts.push(format!("{} of memory", format_bytes(need.mem)));
    }
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => parts.join(""),
    }
}

/// `a chunk of 2 cpus and 1 gpus on bigmem` style text.
fn describe_chunk(chunk: &Chunk) -> String {
    let key = chunk_key(chunk);
    let place = if key.hosts.is_empty() && key.properties.is_empty() {
        String::new()
    } else {
        format!(" on {}", describe_key(&key))
    };
    format!("a chunk of {}{place}", describe_need(&unit_need(chunk)))
}

/// Bytes in PBS style with the largest exact unit: `16gb`, `1536mb`, `1000b`.
pub(crate) fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["b", "kb", "mb", "gb", "tb", "pb", "eb"];
    let mut value = bytes;
    let mut unit = 0;
    while value != 0 && value.is_multiple_of(1024) && unit < UNITS.len() - 1 {
        value /= 1024;
        unit += 1;
    }
    format!("{value}{}", UNITS[unit])
}
