//! qmgr's command language, as OpenPBS's `qmgr.c` parses it: requests split at `;` (outside
//! quotes) and `#` comments, `verb object [name[,name...]] [attr[.resource] op value, ...]`,
//! verbs and object types abbreviated to any prefix (`s q workq` = `set queue workq`, taken in
//! qmgr's order: create, delete, set, unset, list, print, ...), values quoted with `"` or `'`.
//! Syntax errors carry qmgr's text (`qmgr: Syntax error` and a caret line) and exit code.
//!
//! Must not: talk to the server or print (pure; `qmgr.rs` does both).

use proto::manage::{AttrOp, ObjectKind, SetOp};

/// A qmgr verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Create,
    Delete,
    Set,
    Unset,
    List,
    Print,
}

/// One parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Command { verb: Verb, kind: ObjectKind, names: Vec<String>, attrs: Vec<AttrOp> },
    Help,
    Quit,
}

/// A request qmgr refuses before sending anything: the stderr text and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub text: String,
    pub exit: u8,
}

/// Splits input lines into requests: `;` separates, `#` at a word start comments out the
/// rest, a trailing `\` continues on the next line. Blank requests are dropped.
pub fn split_requests(input: &str) -> Vec<String> {
    let mut joined = String::new();
    let mut requests = Vec::new();
    for line in input.lines() {
        if let Some(start) = line.strip_suffix('\\') {
            joined.push_str(start);
            joined.push(' ');
            continue;
        }
        joined.push_str(line);
        let mut current = String::new();
        let mut quote: Option<char> = None;
        let mut previous = ' ';
        for c in joined.chars() {
            match (quote, c) {
                (Some(open), _) if c == open => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, ';') => {
                    requests.push(std::mem::take(&mut current));
                    previous = ' ';
                    continue;
                }
                (None, '#') if previous.is_whitespace() => break,
                _ => {}
            }
            current.push(c);
            previous = c;
        }
        requests.push(current);
        joined.clear();
    }
    requests.into_iter().map(|request| request.trim().to_string()).filter(|request| !request.is_empty()).collect()
}

const VERBS: [&str; 13] =
    ["create", "delete", "set", "unset", "list", "print", "active", "import", "export", "help", "?", "quit", "exit"];

/// Attribute names that may follow the object type without a name in between.
const ATTRIBUTES: [&str; 45] = [
    "queue_type",
    "enabled",
    "started",
    "priority",
    "max_run",
    "max_running",
    "max_user_run",
    "max_queued",
    "max_queuable",
    "max_user_queued",
    "max_user_queuable",
    "resources_default",
    "resources_max",
    "resources_min",
    "acl_user_enable",
    "acl_users",
    "scheduling",
    "managers",
    "operators",
    "acl_roots",
    "default_queue",
    "query_other_jobs",
    "job_history_duration",
    "node_fail_requeue",
    "keep_completed",
    "flavor",
    "max_user_kept_bytes",
    "state",
    "np",
    "properties",
    "comment",
    "resources_available",
    "total_jobs",
    "state_count",
    "server_state",
    "server_host",
    "pbs_version",
    "backfill_depth",
    "job_sort_formula",
    "fairshare_decay_time",
    "fairshare_decay_factor",
    "fairshare_weights",
    "preempt_queue_prio",
    "preempt_order",
    "eligible_time_enable",
];

/// Parses one request.
pub fn parse(request: &str) -> Result<Request, SyntaxError> {
    let (verb_word, rest) = word(request);
    let verb = match VERBS.iter().find(|verb| verb.starts_with(verb_word)) {
        Some(&"create") => Verb::Create,
        Some(&"delete") => Verb::Delete,
        Some(&"set") => Verb::Set,
        Some(&"unset") => Verb::Unset,
        Some(&"list") => Verb::List,
        Some(&"print") => Verb::Print,
        Some(&"help") | Some(&"?") => return Ok(Request::Help),
        Some(&"quit") | Some(&"exit") => return Ok(Request::Quit),
        _ => {
            let text = format!("qmgr: Illegal operation: {verb_word}\nTry 'help' if you are having trouble.\n");
            return Err(SyntaxError { text, exit: 1 });
        }
    };
    let (object_word, rest) = word(rest);
    if object_word.is_empty() {
        return Err(SyntaxError { text: "qmgr: No object type given\n".to_string(), exit: 2 });
    }
    let kind = if "server".starts_with(object_word) {
        ObjectKind::Server
    } else if "queues".starts_with(object_word) {
        ObjectKind::Queue
    } else if "nodes".starts_with(object_word) {
        ObjectKind::Node
    } else if "resource".starts_with(object_word) {
        ObjectKind::Resource
    } else {
        return Err(SyntaxError { text: format!("qmgr: Illegal object type: {object_word}.\n"), exit: 2 });
    };
    let (name_word, after_name) = word(rest);
    let stem = name_word.split(['.', '=', '+', '-', ',']).next().unwrap_or_default();
    let is_attribute = name_word.contains('=') || ATTRIBUTES.iter().any(|attr| attr.eq_ignore_ascii_case(stem));
    let (names, attr_text) = if name_word.is_empty() || is_attribute {
        (Vec::new(), rest)
    } else {
        (names(name_word, kind, request)?, after_name)
    };
    let attrs = attributes(attr_text, verb).map_err(|offset| {
        let column = request.len() - attr_text.len() + offset;
        caret(request, column)
    })?;
    if matches!(verb, Verb::Set | Verb::Unset) && attrs.is_empty() {
        return Err(caret(request, request.len()));
    }
    Ok(Request::Command { verb, kind, names, attrs })
}

/// The first blank-separated word and the rest.
fn word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    (&text[..end], &text[end..])
}

fn caret(request: &str, column: usize) -> SyntaxError {
    SyntaxError { text: format!("qmgr: Syntax error\n{request}\n{}^\n", " ".repeat(column)), exit: 4 }
}

/// `name[@server][,name...]`: names start with a letter (nodes: a letter or digit); the
/// server part is dropped (this qmgr talks to one server).
fn names(list: &str, kind: ObjectKind, request: &str) -> Result<Vec<String>, SyntaxError> {
    let mut names = Vec::new();
    for item in list.split(',') {
        let name = item.split('@').next().unwrap_or_default();
        let first_ok =
            |c: char| if kind == ObjectKind::Node { c.is_ascii_alphanumeric() } else { c.is_ascii_alphabetic() };
        let server_only = name.is_empty() && item.len() > 1;
        if !server_only && !name.chars().next().is_some_and(first_ok) {
            let column = request.find(list).unwrap_or(0);
            return Err(SyntaxError { exit: 3, ..caret(request, column) });
        }
        if kind != ObjectKind::Server && !name.is_empty() {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

/// `a1 = v1, a2.r2 += v2, a3 -= v3` (or bare names for unset/list/print). `Err` is the
/// offset of the error in `text`.
fn attributes(text: &str, verb: Verb) -> Result<Vec<AttrOp>, usize> {
    let bytes: Vec<char> = text.chars().collect();
    let mut at = 0;
    let skip_blank = |at: &mut usize| {
        while *at < bytes.len() && bytes[*at].is_whitespace() {
            *at += 1;
        }
    };
    let mut attrs = Vec::new();
    skip_blank(&mut at);
    if at == bytes.len() {
        return Ok(attrs);
    }
    let is_oper = |at: usize| bytes[at] == '=' || (matches!(bytes[at], '+' | '-') && bytes.get(at + 1) == Some(&'='));
    loop {
        skip_blank(&mut at);
        let start = at;
        while at < bytes.len() && !matches!(bytes[at], '.' | ',') && !bytes[at].is_whitespace() && !is_oper(at) {
            at += 1;
        }
        if at == start {
            return Err(start);
        }
        let name: String = bytes[start..at].iter().collect();
        let mut resource = None;
        if at < bytes.len() && bytes[at] == '.' {
            at += 1;
            let start = at;
            while at < bytes.len() && !bytes[at].is_whitespace() && !is_oper(at) && bytes[at] != ',' {
                at += 1;
            }
            if at == start {
                return Err(start);
            }
            resource = Some(bytes[start..at].iter().collect::<String>());
        }
        skip_blank(&mut at);
        let wants_value = matches!(verb, Verb::Create | Verb::Set);
        if at == bytes.len() || bytes[at] == ',' {
            if wants_value {
                return Err(at);
            }
            attrs.push(AttrOp { name, resource, op: SetOp::Set, value: String::new() });
            if at == bytes.len() {
                return Ok(attrs);
            }
            at += 1;
            continue;
        }
        let op = match bytes[at] {
            '=' => SetOp::Set,
            '+' if is_oper(at) => SetOp::Incr,
            '-' if is_oper(at) => SetOp::Decr,
            _ => return Err(at),
        };
        if !wants_value {
            return Err(at);
        }
        at += if op == SetOp::Set { 1 } else { 2 };
        skip_blank(&mut at);
        let value_start = at;
        let value: String = match bytes.get(at) {
            None => return Err(at),
            Some(&quote) if quote == '"' || quote == '\'' => {
                let close = bytes[at + 1..].iter().position(|&c| c == quote).ok_or(value_start)?;
                let value = bytes[at + 1..at + 1 + close].iter().collect();
                at += close + 2;
                value
            }
            Some(_) => {
                while at < bytes.len() && !bytes[at].is_whitespace() && bytes[at] != ',' {
                    at += 1;
                }
                bytes[value_start..at].iter().collect()
            }
        };
        attrs.push(AttrOp { name, resource, op, value });
        skip_blank(&mut at);
        if at == bytes.len() {
            return Ok(attrs);
        }
        if bytes[at] != ',' {
            return Err(at);
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(text: &str) -> (Verb, ObjectKind, Vec<String>, Vec<String>) {
        match parse(text).unwrap() {
            Request::Command { verb, kind, names, attrs } => {
                let attrs =
                    attrs.iter().map(|attr| format!("{}|{:?}|{}", attr.full_name(), attr.op, attr.value)).collect();
                (verb, kind, names, attrs)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn commands_and_abbreviations() {
        assert_eq!(
            command("s q workq enabled = true, resources_max.walltime=1:00:00"),
            (
                Verb::Set,
                ObjectKind::Queue,
                vec!["workq".to_string()],
                vec!["enabled|Set|true".to_string(), "resources_max.walltime|Set|1:00:00".to_string()]
            )
        );
        assert_eq!(command("set server scheduling=False").2, Vec::<String>::new());
        assert_eq!(command("set server managers += bob@*").3, ["managers|Incr|bob@*"]);
        assert_eq!(command("c q short,long@head").2, ["short", "long"]);
        assert_eq!(command("set queue q acl_users -= 'a b'").3, ["acl_users|Decr|a b"]);
        assert_eq!(command("p s").0, Verb::Print);
        assert_eq!(command("l n node1").1, ObjectKind::Node);
        assert_eq!(command("unset queue q max_run, Priority").3, ["max_run|Set|", "Priority|Set|"]);
        assert_eq!(command("set queue q max_run = \"[u:PBS_GENERIC=2]\"").3, ["max_run|Set|[u:PBS_GENERIC=2]"]);
        assert_eq!(parse("q").unwrap(), Request::Quit);
        assert_eq!(
            command("create resource gpu_type type=string,flag=h"),
            (
                Verb::Create,
                ObjectKind::Resource,
                vec!["gpu_type".to_string()],
                vec!["type|Set|string".to_string(), "flag|Set|h".to_string()]
            )
        );
        assert_eq!(command("p r").1, ObjectKind::Resource);
        assert_eq!(command("d r r1,r2").2, ["r1", "r2"]);
        // The scheduling attributes (issue 16) are attributes, not server names.
        for name in ["backfill_depth", "preempt_order", "eligible_time_enable", "job_sort_formula"] {
            let parsed = command(&format!("set server {name} = 1"));
            assert_eq!(parsed.2, Vec::<String>::new(), "{name}");
            assert_eq!(parsed.3, [format!("{name}|Set|1")], "{name}");
        }
    }

    #[test]
    fn syntax_errors_have_qmgr_texts_and_exit_codes() {
        let error = |text: &str| parse(text).unwrap_err();
        assert_eq!(error("frobnicate server").exit, 1);
        assert_eq!(
            error("frobnicate server").text,
            "qmgr: Illegal operation: frobnicate\nTry 'help' if you are having trouble.\n"
        );
        assert_eq!(error("set").text, "qmgr: No object type given\n");
        assert_eq!(error("set widget x").text, "qmgr: Illegal object type: widget.\n");
        assert_eq!(error("set queue 1q enabled=true").exit, 3);
        let missing = error("set queue workq enabled true");
        assert_eq!(
            (missing.exit, missing.text.as_str()),
            (4, "qmgr: Syntax error\nset queue workq enabled true\n                        ^\n")
        );
        assert_eq!(error("set queue workq").exit, 4);
        assert_eq!(error("unset queue workq enabled = true").exit, 4);
    }

    #[test]
    fn requests_split_at_semicolons_and_comments() {
        let input = "# a comment\nset server scheduling = true; list queue workq # trailing\ncreate queue q \\\n queue_type = e\n\nset queue q comment = \"a;b\"";
        assert_eq!(
            split_requests(input),
            [
                "set server scheduling = true",
                "list queue workq",
                "create queue q   queue_type = e",
                "set queue q comment = \"a;b\""
            ]
        );
    }
}
