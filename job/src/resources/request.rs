//! Turning merged `-l` pairs into a [`ResourceRequest`] (pbs-reference sections 3.2 to 3.6):
//! checks names and values, refuses conflicting ways of asking for chunks, builds the chunks
//! and the placement. The `Resource_List` display is rendered by `display`.

use super::nodes::{parse_nodes, NodeSpec};
use super::select::{parse_place, parse_select, PlaceSpec};
use super::site::{ResourceType, SiteResources};
use super::{
    bad_value_text, display, parse_u32, Chunk, Placement, ResourceError, ResourceErrorKind, ResourceRequest, Span,
    MAX_MPIPROCS,
};
use crate::duration::{format_hms, parse_duration};
use crate::size::Size;
use std::collections::BTreeMap;

/// Resource names we know; anything else is `Unknown resource`.
pub const KNOWN: [&str; 17] = [
    "walltime", "cput", "mem", "vmem", "pmem", "pvmem", "ncpus", "ngpus", "nodes", "procs", "select", "place",
    "software", "arch", "host", "nodect", "file",
];

/// Job-wide resources that cannot be combined with each way of describing chunks.
const CONFLICTS: [(&str, &[&str], &str); 3] = [
    ("select", &["ncpus", "ngpus", "mem", "host"], "\"select\" or \"place\""),
    ("nodes", &["ncpus", "ngpus", "host"], "\"nodes\""),
    ("procs", &["ncpus", "ngpus", "host"], "\"procs\""),
];

/// The pairs after their values were checked, before chunks are built.
#[derive(Default)]
struct Given {
    walltime: Option<u64>,
    cput: Option<u64>,
    mem: Option<Size>,
    ncpus: Option<u32>,
    ngpus: Option<u32>,
    procs: Option<u32>,
    host: Option<String>,
    nodes: Option<NodeSpec>,
    select: Option<Vec<Chunk>>,
    place: Option<PlaceSpec>,
    /// The user's resources in display form, by name.
    shown: BTreeMap<String, String>,
    /// Job-wide host-level site resources: what each chunk must match (see `select.rs`,
    /// `site_item`) and what each place consumes, and the first such name (for the error
    /// when they are combined with `select`).
    site_properties: Vec<String>,
    site_amounts: Vec<(String, u64)>,
    site_host_name: Option<String>,
}

/// Builds the request from pairs; see [`ResourceRequest::from_list`].
pub(super) fn build(
    pairs: &[(String, String)],
    site: &SiteResources,
    is_node: &dyn Fn(&str) -> bool,
) -> Result<ResourceRequest, ResourceError> {
    let pairs = last_wins(pairs);
    let mut given = Given::default();
    for &(name, value) in &pairs {
        given.add(name, value, site)?;
    }
    check_conflicts(&pairs)?;
    check_site_conflict(&pairs, &given)?;
    let (mut chunks, place, exclusive) = arrange(&mut given);
    check_totals(&pairs, &chunks)?;
    check_mps(&pairs, &mut chunks)?;
    let mut request = ResourceRequest {
        first_ppn: chunks.first().map_or(0, |chunk| chunk.ncpus),
        chunks,
        place,
        exclusive,
        walltime: given.walltime,
        cput: given.cput,
        display: Default::default(),
    };
    request.display = display::render(&request, given.shown, is_node).into();
    Ok(request)
}

/// The pairs with each name once, at its first position with its last value.
fn last_wins(pairs: &[(String, String)]) -> Vec<(&str, &str)> {
    let mut unique: Vec<(&str, &str)> = Vec::new();
    for (name, value) in pairs {
        match unique.iter_mut().find(|(known, _)| known == name) {
            Some(slot) => slot.1 = value,
            None => unique.push((name, value)),
        }
    }
    unique
}

/// An error of `kind` about the whole pair `name=value` (column 0, token = the name).
fn pair_error(pairs: &[(&str, &str)], name: &str, kind: ResourceErrorKind, message: String) -> ResourceError {
    let value = pairs.iter().find(|(known, _)| *known == name).map_or("", |(_, value)| *value);
    ResourceError::at(message, &format!("{name}={value}"), 0, name).of_kind(kind)
}

/// Resources that cannot be asked for together, the error naming pair `name`.
fn conflict(pairs: &[(&str, &str)], name: &str, message: String) -> ResourceError {
    pair_error(pairs, name, ResourceErrorKind::Combination, message)
}

/// A bad value found in the whole request, the error naming pair `name`.
fn bad_pair(pairs: &[(&str, &str)], name: &str, detail: &str) -> ResourceError {
    pair_error(pairs, name, ResourceErrorKind::BadValue, bad_value_text(name, detail))
}

impl Given {
    /// Checks one pair and records its value.
    fn add(&mut self, name: &str, value: &str, site: &SiteResources) -> Result<(), ResourceError> {
        let input = format!("{name}={value}");
        let span = Span { input: &input, base: name.len() + 1 };
        let bad = |detail: String| span.bad_value(name, detail, 0, value);
        if value.is_empty() && site.get(name).is_some_and(|def| def.kind == ResourceType::Boolean) {
            // `-l wd`: OpenPBS unsets a boolean given no value (decode_b, attr_fn_b.c:141-143).
            return Ok(());
        }
        let shown = match name {
            "walltime" | "cput" => {
                let seconds = parse_duration(value).map_err(bad)?;
                *(if name == "walltime" { &mut self.walltime } else { &mut self.cput }) = Some(seconds);
                format_hms(seconds)
            }
            "mem" | "vmem" | "pmem" | "pvmem" | "file" => {
                let size = Size::parse(value).map_err(bad)?;
                if name == "mem" {
                    self.mem = Some(size);
                }
                size.to_string()
            }
            "ncpus" | "ngpus" | "procs" | "nodect" => self.add_count(name, value).map_err(bad)?,
            "nodes" => {
                self.nodes = Some(parse_nodes(span, value)?);
                value.to_string()
            }
            "select" => {
                self.select = Some(parse_select(span, value, site)?);
                value.to_string()
            }
            "place" => {
                self.place = Some(parse_place(span, value)?);
                value.to_string()
            }
            "host" => {
                self.host = Some(value.to_string());
                value.to_string()
            }
            _ if KNOWN.contains(&name) => value.to_string(),
            _ if site.get(name).is_some() => self.add_site(name, value, site).map_err(bad)?,
            _ => {
                let error = ResourceError::at(format!("Unknown resource Resource_List.{name}"), &input, 0, name);
                return Err(error.of_kind(ResourceErrorKind::UnknownResource));
            }
        };
        self.shown.insert(name.to_string(), shown);
        Ok(())
    }

    /// A site resource given job-wide: checked by its type; a host-level one also becomes a
    /// requirement (or an amount) of every chunk built from job-wide resources.
    fn add_site(&mut self, name: &str, value: &str, site: &SiteResources) -> Result<String, String> {
        let Some(def) = site.get(name) else { return Err(format!("resource {name} is not defined")) };
        let shown = def.normalize(value)?;
        if def.flags.host {
            self.site_host_name.get_or_insert_with(|| name.to_string());
            if def.is_host_match() {
                self.site_properties.extend(def.match_keys(&shown));
            } else if let Some(amount) = def.amount(&shown) {
                self.site_amounts.push((name.to_string(), amount));
            } else {
                return Err(format!("'{value}' is not an amount of {name}"));
            }
        }
        Ok(shown)
    }

    /// `ncpus`/`ngpus` (0 allowed) and `procs`/`nodect` (at least 1).
    fn add_count(&mut self, name: &str, value: &str) -> Result<String, String> {
        let minimum = if matches!(name, "procs" | "nodect") { 1 } else { 0 };
        let Some(count) = parse_u32(value).filter(|count| *count >= minimum) else {
            let expected = if minimum == 0 { "a non-negative integer" } else { "a positive integer" };
            return Err(format!("'{value}' is not {expected}"));
        };
        match name {
            "ncpus" => self.ncpus = Some(count),
            "ngpus" => self.ngpus = Some(count),
            "procs" => self.procs = Some(count),
            _ => {} // nodect is derived; the user's value is only checked.
        }
        Ok(count.to_string())
    }
}

/// Refuses `nodes` with `select`/`place`, `procs` with `nodes`/`select`, and job-wide chunk
/// resources with any of the three.
fn check_conflicts(pairs: &[(&str, &str)]) -> Result<(), ResourceError> {
    let has = |name: &str| pairs.iter().any(|(known, _)| *known == name);
    if has("nodes") && (has("select") || has("place")) {
        return Err(conflict(pairs, "nodes", "\"nodes\" cannot be used with \"select\" or \"place\"".into()));
    }
    if has("procs") && (has("nodes") || has("select")) {
        return Err(conflict(pairs, "procs", "\"procs\" cannot be used with \"nodes\" or \"select\"".into()));
    }
    for (spec, job_wide, with) in CONFLICTS {
        if let Some(name) = job_wide.iter().find(|name| has(spec) && has(name)) {
            let message = format!("\"-lresource=\" cannot be used with {with}, resource is: {name}");
            return Err(conflict(pairs, name, message));
        }
    }
    Ok(())
}

/// A job-wide host-level site resource cannot be combined with `select` (OpenPBS: it must be
/// requested inside the select); with `nodes`/`procs` or alone it applies to every chunk.
fn check_site_conflict(pairs: &[(&str, &str)], given: &Given) -> Result<(), ResourceError> {
    match &given.site_host_name {
        Some(name) if pairs.iter().any(|(known, _)| *known == "select") => {
            let message = format!("\"-lresource=\" cannot be used with \"select\" or \"place\", resource is: {name}");
            Err(conflict(pairs, name, message))
        }
        _ => Ok(()),
    }
}

/// Builds the chunks, arrangement and exclusivity from whichever way chunks were described,
/// each with the job-wide host-level site resources.
fn arrange(given: &mut Given) -> (Vec<Chunk>, Placement, bool) {
    let (mut chunks, place, exclusive) = arrange_plain(given);
    for chunk in &mut chunks {
        for property in &given.site_properties {
            if !chunk.properties.contains(property) {
                chunk.properties.push(property.clone());
            }
        }
        chunk.amounts.extend(given.site_amounts.iter().cloned());
    }
    (chunks, place, exclusive)
}

fn arrange_plain(given: &mut Given) -> (Vec<Chunk>, Placement, bool) {
    let place = given.place.unwrap_or(PlaceSpec { arrangement: None, exclusive: false });
    let arranged = |default: Placement| place.arrangement.unwrap_or(default);
    let mem = given.mem.map(|size| size.bytes());
    if let Some(spec) = given.nodes.take() {
        let mut chunks = spec.chunks;
        share_mem(&mut chunks, mem);
        return (chunks, Placement::Scatter, spec.exclusive);
    }
    if let Some(chunks) = given.select.take() {
        return (chunks, arranged(Placement::Free), place.exclusive);
    }
    let host = given.host.clone();
    if let Some(count) = given.procs {
        let mut chunks = vec![Chunk { count, ncpus: 1, mpiprocs: 1, host, ..Chunk::default() }];
        share_mem(&mut chunks, mem);
        return (chunks, arranged(Placement::Free), place.exclusive);
    }
    let ncpus = given.ncpus.unwrap_or(1);
    let ngpus = given.ngpus.unwrap_or(0);
    let chunk = Chunk { count: 1, ncpus, ngpus, mem, mpiprocs: 1, host, ..Chunk::default() };
    (vec![chunk], arranged(Placement::Pack), place.exclusive)
}

/// Gives each chunk an equal share (in whole bytes) of a job-wide `mem`.
fn share_mem(chunks: &mut [Chunk], mem: Option<u64>) {
    let Some(mem) = mem else { return };
    let count: u64 = chunks.iter().map(|chunk| u64::from(chunk.count)).sum();
    let share = mem / count.max(1);
    for chunk in chunks {
        chunk.mem = Some(share);
    }
}

/// An MPS share is a share of one GPU on one node: the request must be a single chunk of one
/// place with one GPU (`ngpus` left out counts as 1).
fn check_mps(pairs: &[(&str, &str)], chunks: &mut [Chunk]) -> Result<(), ResourceError> {
    if !chunks.iter().any(|chunk| chunk.mps.is_some()) {
        return Ok(());
    }
    if let [chunk] = chunks {
        if chunk.count == 1 && chunk.ngpus <= 1 {
            chunk.ngpus = 1;
            return Ok(());
        }
    }
    let name = ["select", "nodes"].into_iter().find(|name| pairs.iter().any(|(known, _)| known == name));
    let name = name.unwrap_or("select");
    let detail = "mps asks for a share of one GPU: the request must be one node with one GPU (gpus=1 or ngpus=1)";
    Err(bad_pair(pairs, name, detail))
}

/// Refuses requests whose totals do not fit the counters (`u32`), and more MPI processes than
/// [`MAX_MPIPROCS`] (`PBS_NODEFILE` lines).
fn check_totals(pairs: &[(&str, &str)], chunks: &[Chunk]) -> Result<(), ResourceError> {
    let total = |per_chunk: fn(&Chunk) -> u32| {
        chunks.iter().try_fold(0u32, |sum, chunk| sum.checked_add(chunk.count.checked_mul(per_chunk(chunk))?))
    };
    let mpiprocs = total(|chunk| chunk.mpiprocs);
    let fits = total(|_| 1).is_some() && total(|chunk| chunk.ncpus).is_some() && total(|chunk| chunk.ngpus).is_some();
    let detail = match mpiprocs {
        Some(lines) if fits && u64::from(lines) <= MAX_MPIPROCS => return Ok(()),
        Some(lines) if fits => {
            format!("{lines} MPI processes (mpiprocs over all chunks), more than the maximum of {MAX_MPIPROCS}")
        }
        _ => "request is too large".to_string(),
    };
    let name = ["select", "nodes", "procs"].into_iter().find(|name| pairs.iter().any(|(known, _)| known == name));
    let name = name.unwrap_or("ncpus");
    Err(bad_pair(pairs, name, &detail))
}
