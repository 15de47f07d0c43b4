//! OpenPBS `select=` chunks and `place=` (pbs-reference section 3.4):
//! `select=[N:]res=val[:res=val...][+...]` and
//! `place=[free|pack|scatter|vscatter][:excl|:shared|:exclhost][:group=res]`.

use super::site::SiteResources;
use super::{check_spec_count, is_name, parse_u32, pieces, Chunk, Placement, ResourceError, ResourceErrorKind, Span};
use crate::size::Size;

/// A parsed `place=` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PlaceSpec {
    /// `None` when only sharing was given (`place=excl`): the default arrangement applies.
    pub arrangement: Option<Placement>,
    /// `excl` or `exclhost`.
    pub exclusive: bool,
}

/// Parses a `select=` value located by `span` into chunks.
pub(super) fn parse_select(span: Span, value: &str, site: &SiteResources) -> Result<Vec<Chunk>, ResourceError> {
    check_spec_count(span, "select", value)?;
    pieces(value, '+').map(|(offset, part)| parse_chunk(span, part, offset, site)).collect()
}

/// What the items of one chunk have set so far.
#[derive(Default)]
struct Items {
    ncpus: Option<u32>,
    ngpus: Option<u32>,
    mpiprocs: Option<u32>,
    ompthreads: Option<u32>,
    mem: Option<u64>,
    host: Option<String>,
    mps: Option<u32>,
    properties: Vec<String>,
    /// Site resources named so far (each at most once per chunk) and the consumable amounts.
    site_names: Vec<String>,
    amounts: Vec<(String, u64)>,
}

/// One `+` chunk starting at byte `base` of the value: `[N:]res=val[:res=val...]`.
fn parse_chunk(span: Span, part: &str, base: usize, site: &SiteResources) -> Result<Chunk, ResourceError> {
    if part.is_empty() {
        return Err(span.bad_value("select", "empty chunk in select", base, part));
    }
    let mut items = pieces(part, ':').peekable();
    let mut count = 1;
    if let Some(&(_, first)) = items.peek() {
        if first.starts_with(|c: char| c.is_ascii_digit()) {
            count = parse_u32(first).filter(|count| *count > 0).ok_or_else(|| {
                span.bad_value("select", format!("chunk count '{first}' is not a positive integer"), base, first)
            })?;
            items.next();
        }
    }
    let mut state = Items::default();
    for (offset, item) in items {
        parse_item(span, &mut state, item, base + offset, site)?;
    }
    let ncpus = state.ncpus.unwrap_or(1);
    Ok(Chunk {
        count,
        ncpus,
        ngpus: state.ngpus.unwrap_or(0),
        mem: state.mem,
        mpiprocs: state.mpiprocs.unwrap_or(if ncpus == 0 { 0 } else { 1 }),
        host: state.host,
        properties: state.properties,
        mps: state.mps.map(|percent| percent as u8),
        amounts: state.amounts,
    })
}

/// One `res=val` item starting at byte `base` of the value.
fn parse_item(
    span: Span,
    state: &mut Items,
    item: &str,
    base: usize,
    site: &SiteResources,
) -> Result<(), ResourceError> {
    let Some((key, value)) = item.split_once('=') else {
        let detail = if item.is_empty() {
            "empty item in select chunk".to_string()
        } else {
            format!("select item '{item}' is not resource=value")
        };
        return Err(span.bad_value("select", detail, base, item));
    };
    let value_at = base + key.len() + 1;
    let twice = || span.bad_value("select", format!("chunk resource '{key}' given twice"), base, item);
    let slot = match key {
        "ncpus" => &mut state.ncpus,
        "ngpus" => &mut state.ngpus,
        "mpiprocs" => &mut state.mpiprocs,
        "ompthreads" => &mut state.ompthreads,
        "mps" => {
            let Some(percent) = parse_u32(value).filter(|n| (1..=100).contains(n)) else {
                let detail = format!("mps value '{value}' is not a percentage from 1 to 100");
                return Err(span.bad_value("select", detail, value_at, value));
            };
            return set_once(&mut state.mps, percent).ok_or_else(twice);
        }
        "mem" => {
            let size = Size::parse(value).map_err(|detail| span.bad_value("select", detail, value_at, value))?;
            return set_once(&mut state.mem, size.bytes()).ok_or_else(twice);
        }
        "host" | "vnode" => {
            if !is_host(value) {
                let detail = format!("{key} value '{value}' is not a host name");
                return Err(span.bad_value("select", detail, value_at, value));
            }
            return set_once(&mut state.host, value.to_string()).ok_or_else(twice);
        }
        _ if site.get(key).is_some() => return add_site(span, state, key, value, base, site),
        _ => return add_boolean(span, state, key, value, base),
    };
    let Some(parsed) = parse_u32(value) else {
        let detail = format!("{key} value '{value}' is not a non-negative integer");
        return Err(span.bad_value("select", detail, value_at, value));
    };
    set_once(slot, parsed).ok_or_else(twice)
}

/// Sets an unset slot; `None` if it was already set.
fn set_once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value);
    Some(())
}

/// A site resource in a chunk: host-level ones only (flag `h`, OpenPBS: "This flag indicates
/// that the resource must be requested inside of a select statement"), once per chunk; a
/// matched one becomes property words ([`super::site::ResourceDef::match_keys`]), a consumable
/// one an amount per place.
fn add_site(
    span: Span,
    state: &mut Items,
    key: &str,
    value: &str,
    base: usize,
    site: &SiteResources,
) -> Result<(), ResourceError> {
    let item = &format!("{key}={value}");
    let value_at = base + key.len() + 1;
    let Some(def) = site.get(key) else { return add_boolean(span, state, key, value, base) };
    if !def.flags.host {
        let detail = format!("resource {key} is not host-level (flag h) and cannot be in a select chunk");
        return Err(span.bad_value("select", detail, base, item));
    }
    if state.site_names.iter().any(|known| known == key) {
        return Err(span.bad_value("select", format!("chunk resource '{key}' given twice"), base, item));
    }
    let shown = def.normalize(value).map_err(|detail| span.bad_value("select", detail, value_at, value))?;
    if def.is_host_match() {
        state.properties.extend(def.match_keys(&shown));
    } else {
        let Some(amount) = def.amount(&shown) else {
            let detail = format!("'{value}' is not an amount of {key}");
            return Err(span.bad_value("select", detail, value_at, value));
        };
        state.amounts.push((key.to_string(), amount));
    }
    state.site_names.push(key.to_string());
    Ok(())
}

/// A custom boolean chunk resource: `gpu=True` requires nodes with property `gpu`.
fn add_boolean(span: Span, state: &mut Items, key: &str, value: &str, base: usize) -> Result<(), ResourceError> {
    let item = &format!("{key}={value}");
    if !is_name(key) {
        return Err(span.bad_value("select", format!("invalid chunk resource name '{key}'"), base, item));
    }
    if value.eq_ignore_ascii_case("true") {
        if !state.properties.iter().any(|known| known == key) {
            state.properties.push(key.to_string());
        }
        return Ok(());
    }
    if value.eq_ignore_ascii_case("false") {
        let detail = format!("'{item}' is not supported; only {key}=True can select nodes");
        return Err(span.bad_value("select", detail, base, item));
    }
    // OpenPBS's text (`reply_send.c` with `resc_in_err`, set by `validate_perm_res_in_select`).
    Err(span.error(format!("Unknown resource: {key}"), base, key).of_kind(ResourceErrorKind::UnknownResource))
}

/// A host or vnode name: starts with a letter or digit; letters, digits, `_ - .` follow.
fn is_host(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']'))
}

/// Parses a `place=` value located by `span`. Each of arrangement and sharing may be given
/// once, in any order; `vscatter` is treated as `scatter` and `exclhost` as `excl`: every
/// node of ours is one host with one vnode, so scattering by vnode is scattering by host, and
/// excluding other jobs from the vnode excludes them from the host. The words themselves are
/// shown as written (`display`). OpenPBS knows no `vfree` or `vpack` (`place_words` in
/// `src/server/resc_attr.c`), so neither do we.
pub(super) fn parse_place(span: Span, value: &str) -> Result<PlaceSpec, ResourceError> {
    let mut place = PlaceSpec { arrangement: None, exclusive: false };
    let mut sharing_given = false;
    for (offset, word) in pieces(value, ':') {
        let arrangement = match word {
            "free" => Some(Placement::Free),
            "pack" => Some(Placement::Pack),
            "scatter" | "vscatter" => Some(Placement::Scatter),
            _ => None,
        };
        let twice =
            |what: &str| span.bad_value("place", format!("more than one {what} in place: '{word}'"), offset, word);
        if let Some(arrangement) = arrangement {
            set_once(&mut place.arrangement, arrangement).ok_or_else(|| twice("arrangement"))?;
        } else if matches!(word, "excl" | "exclhost" | "shared") {
            if std::mem::replace(&mut sharing_given, true) {
                return Err(twice("sharing"));
            }
            place.exclusive = word != "shared";
        } else if !word.strip_prefix("group=").is_some_and(is_name) {
            let detail = format!(
                "place item '{word}' is not recognised (expected free, pack, scatter, vscatter, excl, shared, \
                 exclhost or group=<resource>)"
            );
            return Err(span.bad_value("place", detail, offset, word));
        }
    }
    Ok(place)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(value: &str) -> Result<Vec<Chunk>, ResourceError> {
        let input = format!("select={value}");
        parse_select(Span { input: &input, base: 7 }, value, &SiteResources::default())
    }

    fn place(value: &str) -> Result<PlaceSpec, ResourceError> {
        let input = format!("place={value}");
        parse_place(Span { input: &input, base: 6 }, value)
    }

    /// `count/ncpus/ngpus/mpiprocs/mem/host/properties` per chunk, `;` separated.
    fn summary(chunks: &[Chunk]) -> String {
        let parts: Vec<String> = chunks
            .iter()
            .map(|c| {
                let mem = c.mem.map(|m| m.to_string()).unwrap_or_default();
                let host = c.host.clone().unwrap_or_default();
                format!("{}/{}/{}/{}/{mem}/{host}/{}", c.count, c.ncpus, c.ngpus, c.mpiprocs, c.properties.join(","))
            })
            .collect();
        parts.join(";")
    }

    #[test]
    fn parses_select() {
        let cases = [
            ("2:ncpus=2:ngpus=1:mem=4gb", "2/2/1/1/4294967296//"),
            ("1:ncpus=4:mem=2gb", "1/4/0/1/2147483648//"),
            ("ncpus=2", "1/2/0/1///"),
            ("3", "3/1/0/1///"),
            ("1:ncpus=0", "1/0/0/0///"),
            ("1:ncpus=0:mpiprocs=2", "1/0/0/2///"),
            ("1:ncpus=8:mpiprocs=4:ompthreads=2", "1/8/0/4///"),
            ("1:ncpus=2:host=n1+1:ncpus=2:host=n2", "1/2/0/1//n1/;1/2/0/1//n2/"),
            ("1:vnode=n1[0]", "1/1/0/1//n1[0]/"),
            ("2:ncpus=1:gpu=True:big=true:gpu=TRUE", "2/1/0/1///gpu,big"),
            ("1:mem=1024", "1/1/0/1/1024//"),
        ];
        for (value, expected) in cases {
            let chunks = select(value).unwrap_or_else(|e| panic!("{value}: {e}"));
            assert_eq!(summary(&chunks), expected, "{value}");
        }
    }

    #[test]
    fn select_errors_name_the_bad_token() {
        let cases = [
            ("", 7, "", false),
            ("0:ncpus=1", 7, "0", false),
            ("2x:ncpus=1", 7, "2x", false),
            ("1:ncpus=x", 15, "x", false),
            ("1:ncpus=-1", 15, "-1", false),
            ("1:ngpus=", 15, "", false),
            ("1:mem=2.5gb", 13, "2.5gb", false),
            ("1:ncpus=1:ncpus=2", 17, "ncpus=2", false),
            ("1:host=n1:vnode=n2", 17, "vnode=n2", false),
            ("1:host=", 14, "", false),
            ("1:ncpus", 9, "ncpus", false),
            ("1::ncpus=1", 9, "", false),
            ("1:ncpus=1+", 17, "", false),
            ("1:gpu=False", 9, "gpu=False", false),
            ("1:=True", 9, "=True", false),
            ("1:model=abc", 9, "model", true),
            ("1:nodes=2", 9, "nodes", true),
        ];
        for (value, column, token, unknown) in cases {
            let err = select(value).expect_err(value);
            assert_eq!(
                (err.column, err.token.as_str(), err.is_unknown_resource()),
                (column, token, unknown),
                "{value}: {err}"
            );
            assert_eq!(err.input, format!("select={value}"));
        }
    }

    #[test]
    fn parses_place() {
        let cases = [
            ("free", Some(Placement::Free), false),
            ("pack", Some(Placement::Pack), false),
            ("scatter", Some(Placement::Scatter), false),
            ("vscatter", Some(Placement::Scatter), false),
            ("scatter:excl", Some(Placement::Scatter), true),
            ("excl:scatter", Some(Placement::Scatter), true),
            ("pack:exclhost", Some(Placement::Pack), true),
            ("free:shared", Some(Placement::Free), false),
            ("excl", None, true),
            ("scatter:group=switch", Some(Placement::Scatter), false),
        ];
        for (value, arrangement, exclusive) in cases {
            assert_eq!(place(value), Ok(PlaceSpec { arrangement, exclusive }), "{value}");
        }
    }

    #[test]
    fn place_errors_name_the_bad_token() {
        let cases = [
            ("", 6, ""),
            ("spread", 6, "spread"),
            ("scatter:", 14, ""),
            ("scatter:pack", 14, "pack"),
            ("excl:shared", 11, "shared"),
            ("scatter:group=", 14, "group="),
            ("Scatter", 6, "Scatter"),
        ];
        for (value, column, token) in cases {
            let err = place(value).expect_err(value);
            assert_eq!((err.column, err.token.as_str()), (column, token), "{value}: {err}");
        }
    }

    #[test]
    fn error_messages() {
        let selects =
            ["0:ncpus=1", "1:ncpus=x", "1:mem=2.5gb", "1:ncpus=1:ncpus=2", "1:ncpus", "1:gpu=False", "1:model=abc"];
        let mut text: String = selects
            .iter()
            .map(|value| {
                let err = select(value).unwrap_err();
                format!("{}\n{}\n\n", err, err.caret_display())
            })
            .collect();
        for value in ["spread", "scatter:pack", "excl:shared"] {
            let err = place(value).unwrap_err();
            text.push_str(&format!("{}\n{}\n\n", err, err.caret_display()));
        }
        insta::assert_snapshot!(text);
    }
}
