//! Resource lists (`-l name=value,...`) and the request they describe: TORQUE node specs
//! (`nodes=2:ppn=2:gpus=1+node3`), OpenPBS `select=`/`place=`, job-wide `ncpus`/`mem`/`ngpus`,
//! sizes and durations (pbs-reference section 3).

//!
//! Layout: `list` splits the `-l` text into pairs, `merge` combines lists from directives and
//! the command line, `nodes` and `select` parse the two chunk grammars, `request` turns pairs
//! into a [`ResourceRequest`] and `display` renders its `Resource_List`.

use serde::{Deserialize, Serialize};

mod display;
mod list;
mod merge;
mod nodes;
mod request;
mod select;
pub mod site;
#[cfg(test)]
mod site_tests;
#[cfg(test)]
mod tests;

pub use display::schedselect;
pub use list::parse_list;
pub use merge::{merge_directive_lists, merge_override};
/// The resource names a job may ask for; anything else is `Unknown resource`.
pub use request::KNOWN as KNOWN_RESOURCES;

/// A `-l` list error: names the bad token and where it is in the input (0-based column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct ResourceError {
    /// Human text naming what is wrong, e.g. `ppn value 'x' is not a number`.
    pub message: String,
    /// The whole input that was being parsed.
    pub input: String,
    /// 0-based column of the bad token in `input`.
    pub column: usize,
    /// The bad token itself.
    pub token: String,
    /// What is wrong, decided where the error is made: callers choose by kind, never by text.
    #[serde(default)]
    pub kind: ResourceErrorKind,
}

/// The kinds of [`ResourceError`]. Every kind shows the input with a caret under the token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ResourceErrorKind {
    /// The list's grammar: an empty item, a bad name, an unmatched quote (`list.rs`).
    #[default]
    Syntax,
    /// A value the resource does not take, in OpenPBS's words: `Illegal attribute or
    /// resource value Resource_List.<name>: <detail>` ([`Span::bad_value`]).
    BadValue,
    /// Resources that cannot be asked for together (`nodes` with `select`, ...): only the
    /// whole request shows it, never one `-l` value alone.
    Combination,
    /// A resource name not defined (the server answers `Unknown resource`).
    UnknownResource,
}

/// One chunk of a request: `count` places each with `ncpus` cpus, `ngpus` GPUs, `mem` bytes.
/// `nodes=2:ppn=2:gpus=1` is one `Chunk { count: 2, ncpus: 2, ngpus: 1, mpiprocs: 2, .. }`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// How many places of this shape (TORQUE host count, OpenPBS chunk count); at least 1.
    pub count: u32,
    /// Cpus per place (TORQUE `ppn`).
    pub ncpus: u32,
    /// GPUs per place (TORQUE `gpus`).
    pub ngpus: u32,
    /// Memory per chunk in bytes, if requested.
    pub mem: Option<u64>,
    /// Lines in `PBS_NODEFILE` per chunk (TORQUE: ppn; OpenPBS: `mpiprocs`, default 1).
    pub mpiprocs: u32,
    /// A specific host (`host=n1` in select). `None` = any.
    pub host: Option<String>,
    /// Required node properties. A property equal to a node's name selects that node
    /// (TORQUE: a bare word that is a node name names the host).
    pub properties: Vec<String>,
    /// An MPS share of one GPU, in percent (1 to 100): `gpus=1:mps[=P]` (TORQUE form) or
    /// `ngpus=1:mps=P` (select). Only in a request of one chunk of one place with one GPU.
    #[serde(default)]
    pub mps: Option<u8>,
    /// Host-level consumable site resources (flag `n` or `f`) per place, in the unit the
    /// scheduler counts ([`site::ResourceDef::amount`]), by name.
    #[serde(default)]
    pub amounts: Vec<(String, u64)>,
}

/// The share of a GPU that a bare `mps` (TORQUE node spec) asks for, in percent.
pub const MPS_DEFAULT_PERCENT: u8 = 25;

/// Most `+`-joined chunk specifications in one `select=` or `nodes=` value. Each becomes a
/// [`Chunk`] in the server's memory and a step the scheduler checks against every node at
/// submit, so a 16 MiB value of `1+1+1...` would cost hundreds of MB and seconds; a real
/// request names a few shapes (or, TORQUE style, a few hundred hosts). OpenPBS sets no limit.
pub const MAX_CHUNK_SPECS: usize = 4096;

/// Most MPI processes (`PBS_NODEFILE` lines, the sum of `mpiprocs` over all chunks) of one job:
/// the mother superior's root mom writes that file, so `mpiprocs=4000000000` must not reach it.
/// 2^20 covers a job of 8,192 nodes of 128 ranks. OpenPBS sets no limit.
pub const MAX_MPIPROCS: u64 = 1 << 20;

/// Refuses a `name=value` chunk list of more than [`MAX_CHUNK_SPECS`] `+` parts, naming the
/// first part over the limit, before any part is parsed.
pub(crate) fn check_spec_count(span: Span, name: &str, value: &str) -> Result<(), ResourceError> {
    let Some((at, _)) = value.match_indices('+').nth(MAX_CHUNK_SPECS - 1) else { return Ok(()) };
    let part = value[at + 1..].split('+').next().unwrap_or("");
    let detail = format!("more than {MAX_CHUNK_SPECS} chunks joined with '+'");
    Err(span.bad_value(name, detail, at + 1, part))
}

/// `place=` arrangement of chunks on nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Chunks go wherever they fit (may share a node).
    Free,
    /// All chunks on one node.
    Pack,
    /// Each chunk on a distinct node (TORQUE `nodes=` semantics).
    Scatter,
}

/// A parsed, normalised resource request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceRequest {
    pub chunks: Vec<Chunk>,
    pub place: Placement,
    /// `place=...:excl`: nodes are not shared with other jobs.
    pub exclusive: bool,
    /// Seconds.
    pub walltime: Option<u64>,
    /// Seconds.
    pub cput: Option<u64>,
    /// `ppn` of the first `nodes=` part (`PBS_NUM_PPN`), or ncpus of the first chunk.
    pub first_ppn: u32,
    /// The `Resource_List` as qstat shows it, in display order: the user's resources as
    /// written (sizes normalised) plus the derived `ncpus`, `nodect` (and `place`, `select`
    /// unless the user wrote them), e.g.
    /// `[("ncpus","4"),("nodect","2"),("nodes","2:ppn=2"),("place","scatter"),
    ///   ("select","2:ncpus=2:mpiprocs=2"),("walltime","01:00:00")]` (sorted by name).
    pub display: crate::PairList,
}

impl ResourceRequest {
    /// Builds the request from merged pairs. Rejects unknown resource names, bad values,
    /// `nodes` together with `select`, job-wide `ncpus`/`mem` with `select`.
    ///
    /// A name given twice keeps its last value (merge the lists first, see
    /// [`merge_directive_lists`]). Errors carry `name=value` of the offending pair as `input`.
    pub fn from_list(pairs: &[(String, String)]) -> Result<ResourceRequest, ResourceError> {
        request::build(pairs, &site::SiteResources::default(), &|_| false)
    }

    /// [`ResourceRequest::from_list`] knowing the site's resources: a defined name is accepted
    /// job-wide and in chunks, its value checked by its type.
    pub fn from_list_with(
        pairs: &[(String, String)],
        site: &site::SiteResources,
    ) -> Result<ResourceRequest, ResourceError> {
        request::build(pairs, site, &|_| false)
    }

    /// [`ResourceRequest::from_list_with`] knowing which words name nodes: a `nodes=` word that
    /// does is shown as `host=NAME` in the derived select, as OpenPBS converts it
    /// (`cvt_nodespec_to_select`, `src/server/node_manager.c:5868-5891`).
    pub fn from_list_at(
        pairs: &[(String, String)],
        site: &site::SiteResources,
        is_node: &dyn Fn(&str) -> bool,
    ) -> Result<ResourceRequest, ResourceError> {
        request::build(pairs, site, is_node)
    }

    /// Total cpus over all chunks (saturating).
    pub fn total_ncpus(&self) -> u32 {
        self.chunks.iter().fold(0u32, |sum, chunk| sum.saturating_add(chunk.count.saturating_mul(chunk.ncpus)))
    }

    /// The MPS share this request asks for (percent of one GPU), if it asks for one.
    pub fn mps_share(&self) -> Option<u8> {
        self.chunks.iter().find_map(|chunk| chunk.mps)
    }

    /// Total GPUs over all chunks (saturating).
    pub fn total_ngpus(&self) -> u32 {
        self.chunks.iter().fold(0u32, |sum, chunk| sum.saturating_add(chunk.count.saturating_mul(chunk.ngpus)))
    }

    /// Number of chunks (= nodes for scatter placement, saturating).
    pub fn nodect(&self) -> u32 {
        self.chunks.iter().fold(0u32, |sum, chunk| sum.saturating_add(chunk.count))
    }

    /// The displayed value of one `Resource_List` entry (`"walltime"` -> `"01:00:00"`).
    pub fn display_value(&self, name: &str) -> Option<&str> {
        self.display.get(name)
    }

    /// `OMP_NUM_THREADS` (and `NCPUS`) of the job: `ompthreads` of the first chunk of its
    /// select, else that chunk's `ncpus` (OpenPBS's rule).
    pub fn omp_threads(&self) -> u32 {
        let written = self.display_value("select").and_then(display::first_ompthreads);
        written.unwrap_or_else(|| self.chunks.first().map_or(1, |chunk| chunk.ncpus))
    }
}

impl ResourceError {
    /// A syntax error about `token`, found at byte offset `byte` of `input`.
    pub(crate) fn at(message: impl Into<String>, input: &str, byte: usize, token: &str) -> ResourceError {
        ResourceError {
            message: message.into(),
            input: input.to_string(),
            column: char_column(input, byte),
            token: token.to_string(),
            kind: ResourceErrorKind::Syntax,
        }
    }

    /// The same error, of `kind`.
    pub(crate) fn of_kind(self, kind: ResourceErrorKind) -> ResourceError {
        ResourceError { kind, ..self }
    }

    /// Whether the resource name is not one we know (the server answers `Unknown resource`).
    pub fn is_unknown_resource(&self) -> bool {
        self.kind == ResourceErrorKind::UnknownResource
    }

    /// The input with a caret under the bad token, as OpenPBS's qsub shows `-l` errors:
    ///
    /// ```text
    /// walltime=1:00:00,,mem=1gb
    ///                  ^
    /// ```
    pub fn caret_display(&self) -> String {
        format!("{}\n{}^", self.input, " ".repeat(self.column))
    }
}

/// The 0-based character column of byte offset `byte` in `text` (clamped, never panics).
fn char_column(text: &str, byte: usize) -> usize {
    let mut byte = byte.min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    text[..byte].chars().count()
}

/// Where a value sits inside the text an error reports: `input` is the whole text and the
/// value starts at byte `base`. Lets the chunk parsers report columns in `name=value`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span<'a> {
    pub input: &'a str,
    pub base: usize,
}

impl Span<'_> {
    /// A syntax error about `token` found at byte `offset` of the value.
    pub fn error(&self, message: impl Into<String>, offset: usize, token: &str) -> ResourceError {
        ResourceError::at(message, self.input, self.base + offset, token)
    }

    /// [`Span::error`] with OpenPBS's value-error wording naming resource `name`.
    pub fn bad_value(&self, name: &str, detail: impl std::fmt::Display, offset: usize, token: &str) -> ResourceError {
        self.error(bad_value_text(name, detail), offset, token).of_kind(ResourceErrorKind::BadValue)
    }
}

/// OpenPBS's text for a bad value of resource `name` (PBSE_BADATVAL's, then `detail`).
pub(crate) fn bad_value_text(name: &str, detail: impl std::fmt::Display) -> String {
    format!("Illegal attribute or resource value Resource_List.{name}: {detail}")
}

/// Splits `text` at every `separator`, yielding each piece with its byte offset.
pub(crate) fn pieces(text: &str, separator: char) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split(separator).map(move |piece| {
        let start = offset;
        offset += piece.len() + separator.len_utf8();
        (start, piece)
    })
}

/// A non-empty run of ASCII digits that fits a `u32` (no sign, no blanks).
pub(crate) fn parse_u32(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Whether `name` is a plausible resource or property name: letters, digits, `_ - .`, not
/// starting with a digit or punctuation.
pub(crate) fn is_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}
