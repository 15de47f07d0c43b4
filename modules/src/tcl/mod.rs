//! Tcl-subset interpreter core: `Interp`, `Exception`/`TclError`, the command table, the evaluation loop
//! with Tcl-style error tracebacks (errorInfo), proc invocation, and where the evaluation limits
//! (limits.rs) are counted: each command, its result's size, each word built and each script parsed.

use std::collections::HashMap;
use std::rc::Rc;

pub(crate) use limits::{check_len, check_list, Steps, ELEMENT_COST, MAX_LIST, MAX_STRING};

mod control;
mod expr;
mod file_cmds;
mod format;
mod info;
mod limits;
pub mod list;
mod list_cmds;
mod number;
mod parse;
mod regexp_cmds;
pub mod string_cmds;
mod var_cmds;
mod vars;

pub use limits::{open_regular, read_script, seconds, Budget, Limit, DEFAULT_COMMANDS, MAX_TOTAL_BYTES};
pub use list::{dictionary_cmp, format_list, parse_list};
pub use string_cmds::glob_match;

use parse::{Command, Parser};
use vars::Frame;

/// A command implemented in Rust: `args[0]` is the command name, `args[1..]` the substituted words.
pub type CmdFn<C> = fn(&mut Interp<C>, &[String]) -> Result<String, Exception>;

/// A non-normal completion of a script or command.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Exception {
    /// A Tcl error.
    #[error("{0}")]
    Error(TclError),
    /// `return ?value?`
    #[error("return")]
    Return(String),
    /// `break`
    #[error("invoked \"break\" outside of a loop")]
    Break,
    /// `continue`
    #[error("invoked \"continue\" outside of a loop")]
    Continue,
    /// `exit ?code?`
    #[error("exit {0}")]
    Exit(i32),
}

/// A Tcl error with its message, traceback (errorInfo) and the failing top-level line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct TclError {
    /// The message, e.g. `invalid command name "setnev"`.
    pub message: String,
    /// Tcl's errorInfo: the message followed by the traceback in Tcl's form.
    pub info: String,
    /// 1-based line, within the script passed to the outermost `eval_script`, of the failing top-level command.
    pub line: usize,
}

impl TclError {
    /// A new error whose `info` is the message and whose line is 0.
    pub fn new(message: impl Into<String>) -> TclError {
        let message = message.into();
        TclError { info: message.clone(), message, line: 0 }
    }
}

impl From<TclError> for Exception {
    fn from(e: TclError) -> Self {
        Exception::Error(e)
    }
}

pub(crate) type TclResult = Result<String, Exception>;

/// An error exception with a message.
pub(crate) fn error(msg: impl Into<String>) -> Exception {
    Exception::Error(TclError::new(msg))
}

/// The `wrong # args: should be "..."` error.
pub(crate) fn wrong_args(usage: &str) -> Exception {
    error(format!("wrong # args: should be \"{usage}\""))
}

/// Deepest nesting of evaluations (and of bracket parsing).
pub(crate) const MAX_DEPTH: usize = 1000;

/// A procedure defined with `proc`.
pub(crate) struct Proc {
    pub params: Vec<(String, Option<String>)>,
    pub body: String,
}

enum CmdEntry<C> {
    Native(CmdFn<C>),
    Proc(Rc<Proc>),
}

impl<C> Clone for CmdEntry<C> {
    fn clone(&self) -> Self {
        match self {
            CmdEntry::Native(f) => CmdEntry::Native(*f),
            CmdEntry::Proc(p) => CmdEntry::Proc(p.clone()),
        }
    }
}

/// A Tcl interpreter holding the embedder's context `C`.
pub struct Interp<C> {
    /// The embedder's state; commands reach it through `interp.ctx`.
    pub ctx: C,
    commands: HashMap<String, CmdEntry<C>>,
    pub(crate) frames: Vec<Frame>,
    pub(crate) cur: usize,
    depth: usize,
    budget: Rc<Budget>,
    err_line: usize,
    pub(crate) script_file: String,
    /// The completion a `return -code X` asks the enclosing proc (or sourced file) to produce.
    pub(crate) return_code: Option<Exception>,
}

/// Appends one traceback level ("while executing" for the first, "invoked from within" after) to `err`.
pub(crate) fn add_trace(err: &mut TclError, cmd_text: &str) {
    let head = if err.info == err.message { "while executing" } else { "invoked from within" };
    let text: String = if cmd_text.chars().count() > 150 {
        cmd_text.chars().take(150).chain("...".chars()).collect()
    } else {
        cmd_text.to_string()
    };
    err.info.push_str(&format!("\n    {head}\n\"{text}\""));
}

fn count_newlines(s: &str, from: usize, to: usize) -> usize {
    s.as_bytes().get(from..to).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
}

impl<C> Interp<C> {
    /// An interpreter with every core command registered and no variables.
    pub fn new(ctx: C) -> Interp<C> {
        let mut interp = Interp {
            ctx,
            commands: HashMap::new(),
            frames: vec![Frame::new(0, 0, Vec::new())],
            cur: 0,
            depth: 0,
            budget: Rc::new(Budget::default()),
            err_line: 0,
            script_file: String::new(),
            return_code: None,
        };
        control::register(&mut interp);
        var_cmds::register(&mut interp);
        info::register(&mut interp);
        list_cmds::register(&mut interp);
        string_cmds::register(&mut interp);
        format::register(&mut interp);
        regexp_cmds::register(&mut interp);
        file_cmds::register(&mut interp);
        interp
    }

    /// Registers (or replaces) a command implemented in Rust.
    pub fn register(&mut self, name: &str, f: CmdFn<C>) {
        self.commands.insert(name.to_string(), CmdEntry::Native(f));
    }

    /// Whether a command (builtin or proc) exists.
    pub fn has_command(&self, name: &str) -> bool {
        self.commands.contains_key(name.strip_prefix("::").unwrap_or(name))
    }

    /// Sets the maximum number of commands this interpreter's budget allows (default 10,000,000).
    pub fn set_command_limit(&mut self, n: u64) {
        self.budget.set_command_limit(n);
    }

    /// Makes this interpreter count against `budget` (shared with others, a deadline, ...).
    pub fn set_budget(&mut self, budget: Rc<Budget>) {
        self.budget = budget;
    }

    /// The limit this interpreter's budget reached, if one was.
    pub fn limit_reached(&self) -> Option<Limit> {
        self.budget.exceeded()
    }

    /// The budget, for native loops that count their steps.
    pub(crate) fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Evaluates a script in the current frame.
    pub fn eval(&mut self, script: &str) -> Result<String, Exception> {
        self.eval_inner(script)
    }

    /// Evaluates a whole file's text at global level, named `file` in error tracebacks.
    pub fn eval_script(&mut self, script: &str, file: &str) -> Result<String, Exception> {
        let saved = self.cur;
        self.cur = 0;
        let r = self.eval_file_text(script, file);
        self.cur = saved;
        r
    }

    /// Evaluates a file's text in the current frame (`source`, `eval_script`).
    pub(crate) fn eval_file_text(&mut self, script: &str, file: &str) -> TclResult {
        let old = std::mem::replace(&mut self.script_file, file.to_string());
        let r = self.eval(script);
        self.script_file = old;
        match r {
            Err(Exception::Return(v)) => self.return_code.take().map_or(Ok(v), Err),
            Err(Exception::Error(mut e)) => {
                let n = self.err_line;
                e.info.push_str(&format!("\n    (file \"{file}\" line {n})"));
                e.line = n;
                Err(Exception::Error(e))
            }
            other => other,
        }
    }

    /// Calls a command with arguments; `None` if it does not exist.
    pub fn call(&mut self, name: &str, args: &[String]) -> Option<Result<String, Exception>> {
        if !self.has_command(name) {
            return None;
        }
        let mut words = vec![name.to_string()];
        words.extend_from_slice(args);
        Some(match self.invoke(&words) {
            Err(Exception::Error(mut e)) => {
                add_trace(&mut e, &format_list(&words));
                Err(Exception::Error(e))
            }
            other => other,
        })
    }

    fn eval_inner(&mut self, script: &str) -> TclResult {
        self.budget.work(script.len())?;
        let mut parser = Parser::new(script);
        let mut result = String::new();
        let (mut line, mut line_pos) = (1, 0);
        loop {
            let cmd = match parser.next_command() {
                Ok(Some(c)) => c,
                Ok(None) => return Ok(result),
                Err(pe) => {
                    self.err_line = line + count_newlines(script, line_pos, pe.start);
                    let mut e = TclError::new(pe.message);
                    let mut end = (pe.at + 1).min(script.len());
                    while !script.is_char_boundary(end) {
                        end += 1;
                    }
                    add_trace(&mut e, script.get(pe.start..end).unwrap_or(""));
                    return Err(Exception::Error(e));
                }
            };
            line += count_newlines(script, line_pos, cmd.start);
            line_pos = cmd.start;
            match self.eval_command(&cmd) {
                Ok(r) => result = r,
                Err(Exception::Error(mut e)) => {
                    add_trace(&mut e, script.get(cmd.start..cmd.end).unwrap_or(""));
                    self.err_line = line;
                    return Err(Exception::Error(e));
                }
                Err(x) => return Err(x),
            }
        }
    }

    fn eval_command(&mut self, cmd: &Command) -> TclResult {
        let mut words = Vec::with_capacity(cmd.words.len());
        let mut total = 0usize;
        for w in &cmd.words {
            let v = self.subst_parts(&w.parts)?;
            // Every word is a new string (literal, copy of a variable, command result): counted.
            self.charge(v.len())?;
            total = total.saturating_add(v.len());
            if total > 2 * MAX_STRING {
                return Err(error("command words too long (over 128 MiB in all)"));
            }
            if w.expand {
                let items = parse_list(&v)?;
                self.charge(items.len().saturating_mul(ELEMENT_COST))?;
                words.extend(items);
                check_list(words.len())?;
            } else {
                words.push(v);
            }
        }
        if words.is_empty() {
            return Ok(String::new());
        }
        self.invoke(&words)
    }

    /// Counts one command (or loop iteration) against the budget.
    pub(crate) fn tick(&mut self) -> Result<(), Exception> {
        self.budget.count(1)
    }

    /// Counts `n` bytes produced (a result, a copy) against the budget.
    pub(crate) fn charge(&mut self, n: usize) -> Result<(), Exception> {
        self.budget.bytes(n)
    }

    /// Invokes a command given its substituted words; nesting deeper than [`MAX_DEPTH`] is an error.
    pub(crate) fn invoke(&mut self, words: &[String]) -> TclResult {
        self.tick()?;
        let Some(name) = words.first() else { return Ok(String::new()) };
        let key = name.strip_prefix("::").unwrap_or(name);
        let entry = self.commands.get(key).cloned();
        let Some(entry) = entry else { return Err(error(format!("invalid command name \"{name}\""))) };
        if self.depth >= MAX_DEPTH {
            return Err(error("too many nested evaluations (infinite loop?)"));
        }
        self.depth += 1;
        let r = match entry {
            CmdEntry::Native(f) => f(self, words),
            CmdEntry::Proc(p) => self.call_proc(&p, words),
        };
        self.depth -= 1;
        if let Ok(s) = &r {
            check_len(s.len())?;
            self.charge(s.len())?;
        }
        r
    }

    fn call_proc(&mut self, p: &Proc, words: &[String]) -> TclResult {
        let frame = self.bind_args(p, words)?;
        let saved = self.cur;
        let height = self.frames.len();
        self.frames.push(frame);
        self.cur = height;
        let r = self.eval(&p.body);
        self.frames.truncate(height);
        self.cur = saved;
        match r {
            Ok(v) => Ok(v),
            Err(Exception::Return(v)) => self.return_code.take().map_or(Ok(v), Err),
            Err(Exception::Error(mut e)) => {
                let name = words.first().map_or("", String::as_str);
                e.info.push_str(&format!("\n    (procedure \"{name}\" line {})", self.err_line));
                Err(Exception::Error(e))
            }
            Err(Exception::Break) => Err(error("invoked \"break\" outside of a loop")),
            Err(Exception::Continue) => Err(error("invoked \"continue\" outside of a loop")),
            Err(x) => Err(x),
        }
    }

    fn bind_args(&self, p: &Proc, words: &[String]) -> Result<Frame, Exception> {
        let level = self.frames.get(self.cur).map_or(0, |f| f.level) + 1;
        let mut frame = Frame::new(self.cur, level, words.to_vec());
        let args = words.get(1..).unwrap_or(&[]);
        let mut i = 0;
        for (n, (name, default)) in p.params.iter().enumerate() {
            if name == "args" && n + 1 == p.params.len() {
                frame.set_local(name, format_list(args.get(i..).unwrap_or(&[])));
                i = args.len();
            } else if let Some(a) = args.get(i) {
                frame.set_local(name, a.clone());
                i += 1;
            } else if let Some(d) = default {
                frame.set_local(name, d.clone());
            } else {
                return Err(self.proc_usage(p, words));
            }
        }
        if i < args.len() {
            return Err(self.proc_usage(p, words));
        }
        Ok(frame)
    }

    fn proc_usage(&self, p: &Proc, words: &[String]) -> Exception {
        let mut usage = words.first().cloned().unwrap_or_default();
        for (n, (name, default)) in p.params.iter().enumerate() {
            if name == "args" && n + 1 == p.params.len() {
                usage.push_str(" ?arg ...?");
            } else if default.is_some() {
                usage.push_str(&format!(" ?{name}?"));
            } else {
                usage.push_str(&format!(" {name}"));
            }
        }
        wrong_args(&usage)
    }

    /// Defines (or replaces) a procedure.
    pub(crate) fn define_proc(&mut self, name: &str, proc_: Proc) {
        let key = name.strip_prefix("::").unwrap_or(name);
        self.commands.insert(key.to_string(), CmdEntry::Proc(Rc::new(proc_)));
    }

    /// The procedure named `name`, if it is one.
    pub(crate) fn get_proc(&self, name: &str) -> Option<Rc<Proc>> {
        match self.commands.get(name.strip_prefix("::").unwrap_or(name)) {
            Some(CmdEntry::Proc(p)) => Some(p.clone()),
            _ => None,
        }
    }

    /// Names of all commands, procs only if `procs_only`.
    pub(crate) fn command_names(&self, procs_only: bool) -> Vec<String> {
        let mut v: Vec<String> = self
            .commands
            .iter()
            .filter(|(_, c)| !procs_only || matches!(c, CmdEntry::Proc(_)))
            .map(|(k, _)| k.clone())
            .collect();
        v.sort();
        v
    }

    /// Renames or deletes (empty `new`) a command.
    pub(crate) fn rename_command(&mut self, old: &str, new: &str) -> Result<(), Exception> {
        let Some(c) = self.commands.remove(old.strip_prefix("::").unwrap_or(old)) else {
            return Err(error(format!("can't rename \"{old}\": command doesn't exist")));
        };
        if !new.is_empty() {
            self.commands.insert(new.strip_prefix("::").unwrap_or(new).to_string(), c);
        }
        Ok(())
    }

    /// Substitutes the parts of one word.
    pub(crate) fn subst_parts(&mut self, parts: &[parse::Part]) -> TclResult {
        if let [parse::Part::Lit(s)] = parts {
            return Ok(s.clone());
        }
        let mut out = String::new();
        for p in parts {
            match p {
                parse::Part::Lit(s) => out.push_str(s),
                parse::Part::Var { name, index: None } => out.push_str(&self.get_named(name)?),
                parse::Part::Var { name, index: Some(ix) } => {
                    let key = self.subst_parts(ix)?;
                    out.push_str(&self.get_var(name, Some(&key))?);
                }
                parse::Part::Cmd(s) => out.push_str(&self.eval(s)?),
            }
            check_len(out.len())?;
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "mod_tests.rs"]
mod tests;
