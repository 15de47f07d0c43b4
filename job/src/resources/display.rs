//! The `Resource_List` of a request as `qstat -f` shows it: the user's resources as written
//! (sizes in PBS's normalised form, `2GB` -> `2gb`) plus the derived `ncpus`, `nodect` (and
//! `ngpus`, `mem` when they apply), sorted by name. A `select`/`place` the user wrote is shown
//! as written (OpenPBS stores them as given); one derived from `nodes=`, `procs=` or job-wide
//! resources is built here. Also `schedselect`, the select the scheduler works from.

use super::{Chunk, Placement, ResourceRequest};
use crate::size::Size;
use std::collections::BTreeMap;

/// Adds the derived entries to the user's normalised ones (`shown`) and sorts by name.
pub(super) fn render(
    request: &ResourceRequest,
    mut shown: BTreeMap<String, String>,
    is_node: &dyn Fn(&str) -> bool,
) -> Vec<(String, String)> {
    let written = shown.get("select").cloned();
    if written.is_none() {
        let chunk_wide = !shown.contains_key("nodes") && !shown.contains_key("procs");
        let derived = if chunk_wide { job_wide_select(&shown) } else { select_text(&request.chunks, is_node) };
        shown.insert("select".into(), derived);
    }
    let place = match shown.get("nodes") {
        Some(nodes) if !request.exclusive && nodes.contains("#shared") => "scatter:share".to_string(),
        _ => place_text(request.place, request.exclusive),
    };
    shown.entry("place".into()).or_insert(place);
    shown.insert("ncpus".into(), request.total_ncpus().to_string());
    shown.insert("nodect".into(), request.nodect().to_string());
    let ngpus = request.total_ngpus();
    if ngpus > 0 {
        shown.insert("ngpus".into(), ngpus.to_string());
    }
    if !shown.contains_key("mem") {
        let written_total = written.as_deref().and_then(select_mem_sum).map(|size| size.to_string());
        if let Some(total) = written_total.or_else(|| total_mem(&request.chunks).map(mem_text)) {
            shown.insert("mem".into(), total);
        }
    }
    shown.into_iter().collect()
}

/// The job-wide resources that become the one chunk of a job asking for no chunks: OpenPBS's
/// with `ATR_DFLAG_CVTSLT` (`src/lib/Libattr/master_resc_def_all.xml`), and `ngpus` (a site's
/// host-level resource there).
const CONVERTED: [&str; 6] = ["arch", "host", "mem", "ncpus", "ngpus", "vmem"];

/// The select OpenPBS makes of the job-wide resources the user gave (`set_select_and_place`,
/// `src/server/svr_jobfunc.c:1836-1886`): `1` and each of [`CONVERTED`] the job has, in name
/// order, with its value as shown, quoted when it holds `"'+:=()` (`-l ncpus=4,mem=2gb` is
/// `1:mem=2gb:ncpus=4`; `-l walltime=1:00:00` is `1`); `ncpus=1` when no resource was given.
fn job_wide_select(shown: &BTreeMap<String, String>) -> String {
    if shown.is_empty() {
        return "ncpus=1".to_string();
    }
    let items = shown.iter().filter(|(name, _)| CONVERTED.contains(&name.as_str()));
    std::iter::once("1".to_string())
        .chain(items.map(|(name, value)| format!("{name}={}", quoted(value))))
        .collect::<Vec<_>>()
        .join(":")
}

/// A select value quoted as OpenPBS quotes one holding select syntax: in `'` when it holds `"`,
/// else in `"`.
fn quoted(value: &str) -> String {
    if !value.contains(['"', '\'', '+', ':', '=', '(', ')']) {
        return value.to_string();
    }
    let quote = if value.contains('"') { '\'' } else { '"' };
    format!("{quote}{value}{quote}")
}

/// The items of each `+` chunk of a (checked) select: its count and `(name, value)` items in
/// the order written.
fn chunks_written(select: &str) -> impl Iterator<Item = (u32, Vec<(&str, &str)>)> {
    select.split('+').map(|chunk| {
        let mut items = chunk.split(':').peekable();
        let count = items.peek().and_then(|first| first.parse().ok());
        if count.is_some() {
            items.next();
        }
        (count.unwrap_or(1), items.filter_map(|item| item.split_once('=')).collect())
    })
}

/// The job-wide `mem` of a select: each chunk's `mem` times its count, added as OpenPBS adds
/// sizes (`set_chunk_sum` in `src/server/svr_jobfunc.c`): `2:mem=2gb` is `4gb`,
/// `1:mem=2gb+1:mem=512mb` is `2560mb`. `None` when no chunk asks for memory or the sum does
/// not fit 64 bits (the caller then shows the byte total).
fn select_mem_sum(select: &str) -> Option<Size> {
    let mut sum: Option<Size> = None;
    for (count, items) in chunks_written(select) {
        for (_, value) in items.iter().filter(|(name, _)| *name == "mem") {
            let size = Size::parse(value).ok()?.times(u64::from(count))?;
            sum = Some(match sum {
                Some(total) => total.checked_add(size)?,
                None => size,
            });
        }
    }
    sum
}

/// OpenPBS's `schedselect` of a select (`do_schedselect` in `src/server/vnparse.c`): every
/// chunk with its count, its items as written, except that a boolean is `True`/`False` and a
/// size without unit gets `b`; then the server's `default_chunk` (OpenPBS's is `ncpus=1`) for
/// what the chunk leaves out.
pub fn schedselect(select: &str) -> String {
    let chunks: Vec<String> = chunks_written(select)
        .map(|(count, items)| {
            let mut text = count.to_string();
            for (name, value) in &items {
                text.push(':');
                text.push_str(name);
                text.push('=');
                text.push_str(&sched_value(name, value));
            }
            if !items.iter().any(|(name, _)| *name == "ncpus") {
                text.push_str(":ncpus=1");
            }
            text
        })
        .collect();
    chunks.join("+")
}

/// A chunk item's value as `schedselect` has it.
fn sched_value(name: &str, value: &str) -> String {
    match name {
        "mem" if !value.ends_with(['b', 'w', 'B', 'W']) => format!("{value}b"),
        "ncpus" | "ngpus" | "mpiprocs" | "ompthreads" | "mps" | "mem" | "host" | "vnode" => value.to_string(),
        _ if value.eq_ignore_ascii_case("true") => "True".to_string(),
        _ if value.eq_ignore_ascii_case("false") => "False".to_string(),
        _ => value.to_string(),
    }
}

/// `ompthreads` of the first chunk of a select, if it has one (OpenPBS sets `OMP_NUM_THREADS`
/// of the job from it; without it, from the chunk's `ncpus`).
pub fn first_ompthreads(select: &str) -> Option<u32> {
    let (_, items) = chunks_written(select).next()?;
    items.iter().find(|(name, _)| *name == "ompthreads").and_then(|(_, value)| value.parse().ok())
}

/// `free`, `pack` or `scatter`, with `:excl` when nodes are not shared.
pub(super) fn place_text(place: Placement, exclusive: bool) -> String {
    let arrangement = match place {
        Placement::Free => "free",
        Placement::Pack => "pack",
        Placement::Scatter => "scatter",
    };
    format!("{arrangement}{}", if exclusive { ":excl" } else { "" })
}

/// The select of a `nodes=`/`procs=` request, as OpenPBS converts a node spec
/// (`cvt_nodespec_to_select`, `src/server/node_manager.c:5823-5903`):
/// `N:ncpus=P[:ngpus=G][:mem=MKB][:host=H][:prop=True...][:mpiprocs=R]` per chunk, joined by
/// `+`; `mpiprocs` only when it is not 1; a word that names a node (`is_node`) is `host=NAME`.
pub(super) fn select_text(chunks: &[Chunk], is_node: &dyn Fn(&str) -> bool) -> String {
    let parts: Vec<String> = chunks.iter().map(|chunk| chunk_text(chunk, is_node)).collect();
    parts.join("+")
}

fn chunk_text(chunk: &Chunk, is_node: &dyn Fn(&str) -> bool) -> String {
    let mut text = format!("{}:ncpus={}", chunk.count, chunk.ncpus);
    if chunk.ngpus > 0 {
        text.push_str(&format!(":ngpus={}", chunk.ngpus));
    }
    if let Some(percent) = chunk.mps {
        text.push_str(&format!(":mps={percent}"));
    }
    if let Some(mem) = chunk.mem {
        // OpenPBS writes a converted chunk's memory as `:mem=%lluKB` (node_manager.c:5854).
        let shown = if mem.is_multiple_of(1024) { format!("{}KB", mem / 1024) } else { mem_text(mem) };
        text.push_str(&format!(":mem={shown}"));
    }
    if let Some(host) = &chunk.host {
        text.push_str(&format!(":host={host}"));
    }
    for property in &chunk.properties {
        if is_node(property) {
            text.push_str(&format!(":host={property}"));
        } else {
            text.push_str(&format!(":{}", super::site::chunk_item(property)));
        }
    }
    if chunk.mpiprocs != 1 {
        text.push_str(&format!(":mpiprocs={}", chunk.mpiprocs));
    }
    text
}

/// Bytes as `Nkb` when whole kilobytes, else `Nb`.
fn mem_text(bytes: u64) -> String {
    if bytes.is_multiple_of(1024) {
        format!("{}kb", bytes / 1024)
    } else {
        format!("{bytes}b")
    }
}

/// Sum of per-chunk memory over the chunks that ask for some (saturating), if any do.
fn total_mem(chunks: &[Chunk]) -> Option<u64> {
    chunks
        .iter()
        .filter_map(|chunk| chunk.mem.map(|mem| mem.saturating_mul(u64::from(chunk.count))))
        .reduce(u64::saturating_add)
}
