//! The `Resource_List` of a request as `qstat -f` shows it: the user's resources in normalised
//! form plus the derived `ncpus`, `nodect`, `place`, `select` (and `ngpus`, `mem` when they
//! apply), sorted by name.

use super::{Chunk, Placement, ResourceRequest};
use std::collections::BTreeMap;

/// Adds the derived entries to the user's normalised ones (`shown`) and sorts by name.
pub(super) fn render(request: &ResourceRequest, mut shown: BTreeMap<String, String>) -> Vec<(String, String)> {
    shown.insert("ncpus".into(), request.total_ncpus().to_string());
    shown.insert("nodect".into(), request.nodect().to_string());
    shown.insert("place".into(), place_text(request.place, request.exclusive));
    shown.insert("select".into(), select_text(&request.chunks));
    let ngpus = request.total_ngpus();
    if ngpus > 0 {
        shown.insert("ngpus".into(), ngpus.to_string());
    }
    if !shown.contains_key("mem") {
        if let Some(total) = total_mem(&request.chunks) {
            shown.insert("mem".into(), mem_text(total));
        }
    }
    shown.into_iter().collect()
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

/// The normalised select: `N:ncpus=P[:ngpus=G][:mem=Mkb][:host=H][:prop=True...]:mpiprocs=R`
/// per chunk, joined by `+`.
pub(super) fn select_text(chunks: &[Chunk]) -> String {
    let parts: Vec<String> = chunks.iter().map(chunk_text).collect();
    parts.join("+")
}

fn chunk_text(chunk: &Chunk) -> String {
    let mut text = format!("{}:ncpus={}", chunk.count, chunk.ncpus);
    if chunk.ngpus > 0 {
        text.push_str(&format!(":ngpus={}", chunk.ngpus));
    }
    if let Some(percent) = chunk.mps {
        text.push_str(&format!(":mps={percent}"));
    }
    if let Some(mem) = chunk.mem {
        text.push_str(&format!(":mem={}", mem_text(mem)));
    }
    if let Some(host) = &chunk.host {
        text.push_str(&format!(":host={host}"));
    }
    for property in &chunk.properties {
        text.push_str(&format!(":{}", super::site::chunk_item(property)));
    }
    text.push_str(&format!(":mpiprocs={}", chunk.mpiprocs));
    text
}

/// Bytes as `Nkb` when whole kilobytes (OpenPBS's per-chunk form), else `Nb`.
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
