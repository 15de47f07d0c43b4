//! `qsub`: read the script, extract `#PBS` directives, merge them with the command line
//! (command line wins), build the `JobSpec`, submit it, print the id (and nothing else) on
//! stdout. Sends `SubmitJob` (handled by `server/src/handlers/submit_job.rs`). With `-I` the
//! session after submission is `qsub_interactive.rs`'s; `--pin` (a minipbs extension) records
//! the code to run with `qsub_pin.rs`.

use crate::directives::{overlay, parse_directive, QsubOpts};
use crate::exit;
use crate::submit::{absolute, caret_failure, check_resources, fail, std_path, submit, Failure};
use job::resources::{merge_directive_lists, merge_override, ResourceError, ResourceErrorKind};
use job::spec::Join;
use job::{JobSpec, ResourceRequest};
use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

/// Entry point of the `qsub` binary.
pub fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().collect();
    let (option_args, command) = match raw.iter().position(|arg| arg == "--") {
        Some(split) => (raw[..split].to_vec(), Some(raw[split + 1..].to_vec())),
        None => (raw.clone(), None),
    };
    let cli: QsubOpts = match crate::cli::parse_from("qsub", &QsubOpts::command_usage(), &option_args) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let quiet = cli.quiet;
    let outcome = prepare(cli, command, &option_args[1..]).and_then(|prepared| {
        if prepared.interactive {
            return crate::qsub_interactive::run(prepared.spec);
        }
        let block = prepared.spec.options.w_attr("block") == Some("True");
        let id = submit(prepared.spec)?;
        if !quiet {
            println!("{id}");
        }
        if block {
            use std::io::Write;
            // The id is out before the wait, for whoever reads it from a pipe.
            let _ = std::io::stdout().flush();
            return Ok(crate::qsub_block::wait(&id));
        }
        Ok(exit::SUCCESS)
    });
    match outcome {
        Ok(code) => exit::exit(code),
        Err(failure) => {
            for line in failure.message.lines() {
                // OpenPBS's multi-line messages start with a tab right after the colon.
                let separator = if line.starts_with('\t') { "" } else { " " };
                eprintln!("qsub:{separator}{line}");
            }
            if let Some(detail) = failure.detail {
                eprintln!("{detail}");
            }
            exit::exit(failure.code)
        }
    }
}

impl QsubOpts {
    /// The usage a usage error prints: clap's (`qsub_tests.rs` checks), without building the
    /// clap command once more for every qsub.
    fn command_usage() -> String {
        format!("usage: {}", crate::directives::USAGE_LINES)
    }
}

/// A job ready to submit.
pub struct Prepared {
    pub spec: JobSpec,
    /// `-I`, on the command line or in a directive.
    pub interactive: bool,
}

/// Reads the script and merges its directives with the command line into the job to submit.
pub fn prepare(cli: QsubOpts, command: Option<Vec<String>>, typed_args: &[String]) -> Result<Prepared, Failure> {
    if cli.operands.len() > 1 {
        return Err(fail(
            exit::USAGE,
            format!("too many arguments: {} (the script must be the last argument)", cli.operands.join(" ")),
        ));
    }
    check_interactive(&cli)?;
    let script = Script::read(&cli, command)?;
    let prefix = cli.prefix.clone().or_else(|| std::env::var("PBS_DPREFIX").ok()).unwrap_or_else(|| "#PBS".to_string());
    let mut opts = QsubOpts::default();
    let mut directive_lists = Vec::new();
    if script.parse_directives {
        let directives =
            job::directives::extract(&script.text, &prefix).map_err(|error| fail(exit::FAILURE, error.to_string()))?;
        for directive in &directives {
            let (parsed, warning) = parse_directive(directive).map_err(|message| fail(exit::FAILURE, message))?;
            if let Some(warning) = warning {
                eprintln!("qsub: warning: {warning}");
            }
            check_depend(&parsed.opts.extra).map_err(|message| {
                fail(
                    exit::FAILURE,
                    format!("directive error at line {}: {}\n{message}", directive.line, directive.text.trim()),
                )
            })?;
            for value in &parsed.opts.resources {
                let pairs = check_resources(value).map_err(|error| {
                    let header = format!("directive error at line {}: {}", directive.line, directive.text.trim());
                    caret_failure(exit::FAILURE, Some(header), &error)
                })?;
                directive_lists.push((parsed.line, pairs));
            }
            overlay(&mut opts, parsed.opts);
        }
    }
    let (mut resources, warnings) = merge_directive_lists(&directive_lists);
    for warning in warnings {
        eprintln!("qsub: warning: {warning}");
    }
    for value in &cli.resources {
        let pairs = check_resources(value).map_err(|error| command_line_failure(&error))?;
        merge_override(&mut resources, &pairs);
    }
    check_depend(&cli.extra).map_err(|message| fail(exit::USAGE, message))?;
    // OpenPBS refuses -J with -r n where it meets the second of them: the command line is
    // read first, so only both there make a usage error; otherwise a directive error, exit 1
    // (src/cmds/qsub.c:1160-1163, 1287-1290 and do_dir 1766; main 1905).
    let array_rerun_code =
        if cli.rerunnable.as_deref() == Some("n") && (cli.array_pbs.is_some() || cli.array_torque.is_some()) {
            exit::USAGE
        } else {
            exit::FAILURE
        };
    overlay(&mut opts, cli);
    check_extra(&opts.extra)?;
    check_interactive(&opts)?;
    let (job_options, warnings) = crate::qsub_options::job_options(&opts, crate::cli::now())?;
    for warning in warnings {
        eprintln!("qsub: warning: {warning}");
    }
    if opts.node_exclusive {
        crate::qsub_options::node_exclusive(&mut resources);
    }
    if opts.interactive && opts.rerunnable.as_deref() == Some("y") {
        eprintln!("qsub (Warning): Interactive jobs will be treated as not rerunnable");
    }
    if let Err(error) = ResourceRequest::from_list(&resources) {
        if !error.is_unknown_resource() {
            return Err(fail(exit::FAILURE, format!("illegal -l value: {}", error.message)));
        }
    }
    let (interactive, pin) = (opts.interactive, opts.pin);
    if pin && interactive {
        return Err(fail(exit::USAGE, "--pin: an interactive job runs no script to pin"));
    }
    let array = array_spec(&opts)?;
    let mut spec = build_spec(opts, resources, &script, typed_args)?;
    if pin {
        spec.exec.pin = Some(crate::qsub_pin::record(&crate::submit_env::workdir())?);
    }
    spec.options = job_options;
    if array.is_some() && !spec.rerunnable {
        // OpenPBS's text, two blanks included.
        return Err(fail(array_rerun_code, " cannot submit non-rerunable Array Job"));
    }
    spec.array = array;
    job::limits::check(&spec).map_err(limit_failure)?;
    Ok(Prepared { spec, interactive })
}

/// `-J X-Y[:Z][%max]` (OpenPBS) or `-t 1-10,15%2` (TORQUE), checked here and again by the
/// server. Both at once is a usage error.
fn array_spec(opts: &QsubOpts) -> Result<Option<job::array::ArraySpec>, Failure> {
    match (&opts.array_pbs, &opts.array_torque) {
        (Some(_), Some(_)) => Err(fail(exit::USAGE, "-J and -t cannot be used together")),
        (Some(text), None) => job::array::parse_openpbs(text)
            .map(Some)
            .map_err(|error| fail(exit::USAGE, format!("illegal -J value: {error}"))),
        (None, Some(text)) => job::array::parse_torque(text)
            .map(Some)
            .map_err(|error| fail(exit::USAGE, format!("illegal -t value: {error}"))),
        (None, None) => Ok(None),
    }
}

/// The `-W depend=` values among `-W` items, last one last (a later one replaces an earlier).
fn depend_values(extra: &[String]) -> impl Iterator<Item = &str> {
    extra.iter().filter_map(|item| item.trim().strip_prefix("depend=")).map(str::trim)
}

/// Checks the syntax of every `-W depend=` value (the server checks that the jobs exist).
fn check_depend(extra: &[String]) -> Result<(), String> {
    for value in depend_values(extra) {
        job::depend::parse(value).map_err(|error| format!("illegal -W value depend={value}: {error}"))?;
    }
    Ok(())
}

/// `-W umask`, `group_list`, `sandbox`, `stagein`, `stageout` (the mom acts on them); a bad
/// value is refused as the server would (`Illegal attribute or resource value`).
fn exec_options(extra: &[String]) -> Result<job::exec_opts::ExecOptions, Failure> {
    job::exec_opts::ExecOptions::from_w_items(extra.iter().map(String::as_str)).map_err(|error| {
        let code = proto::ErrorCode::BadAttributeValue;
        fail(code.exit_code(), format!("{} {error}", code.text()))
    })
}

/// A `-l` error on the command line: a bad value is OpenPBS's `Illegal attribute or resource
/// value Resource_List.<name>` with that error's exit code (166); anything else is a syntax
/// error shown with a caret, exit 2.
fn command_line_failure(error: &ResourceError) -> Failure {
    let bad_value = proto::ErrorCode::BadAttributeValue;
    if error.kind == ResourceErrorKind::BadValue {
        fail(bad_value.exit_code(), error.message.clone())
    } else {
        caret_failure(exit::USAGE, None, error)
    }
}

/// The `-W` attributes OpenPBS and TORQUE accept (`depend` is refused as unsupported before).
const W_ATTRIBUTES: [&str; 14] = [
    "depend",
    "group_list",
    "stagein",
    "stageout",
    "umask",
    "block",
    "run_count",
    "sandbox",
    "interactive",
    "release_nodes_on_stageout",
    "tolerate_node_failures",
    "pwd",
    "x",
    "suppress_email",
];

/// Checks `-W name=value` items: not `name=value` is OpenPBS's `illegal -W value` (exit 2); an
/// attribute qsub does not know is `Undefined attribute <name>` (PBSE_NOATTR).
fn check_extra(items: &[String]) -> Result<(), Failure> {
    for item in items {
        match item.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() && !value.is_empty() => {
                if !W_ATTRIBUTES.contains(&name.trim()) {
                    let code = proto::ErrorCode::NoAttribute;
                    return Err(fail(code.exit_code(), format!("{} {}", code.text(), name.trim())));
                }
            }
            _ => {
                let usage = QsubOpts::command_usage();
                return Err(Failure { message: "illegal -W value".into(), detail: Some(usage), code: exit::USAGE });
            }
        }
    }
    Ok(())
}

/// `-I` and `-X` against the other options (OpenPBS's texts), then the terminal `-I` needs.
fn check_interactive(opts: &QsubOpts) -> Result<(), Failure> {
    if opts.interactive && (opts.array_pbs.is_some() || opts.array_torque.is_some()) {
        return Err(fail(exit::USAGE, "interactive and array job submission cannot be used together"));
    }
    if opts.x11 && !opts.interactive {
        return Err(fail(exit::FAILURE, "X11 Forwarding possible only for interactive jobs"));
    }
    if opts.interactive && !crate::terminal::stdio_is_terminal() {
        let mut failure = fail(exit::FAILURE, "\tstandard input and output must be a terminal for");
        failure.detail = Some("\tinteractive job submission".to_string());
        return Err(failure);
    }
    Ok(())
}

/// The job script and where it came from.
struct Script {
    text: String,
    /// Base name for the default job name (`None` = `STDIN`).
    file_name: Option<String>,
    parse_directives: bool,
}

impl Script {
    fn read(cli: &QsubOpts, command: Option<Vec<String>>) -> Result<Script, Failure> {
        if let Some(command) = command {
            if command.is_empty() {
                return Err(fail(exit::USAGE, "no command given after --"));
            }
            // The words as /bin/sh reads them back (a NUL cannot be in an argument).
            let quoted: Vec<String> = command
                .iter()
                .map(|word| shlex::try_quote(word).expect("an argument has no NUL").into_owned())
                .collect();
            return Ok(Script { text: format!("{}\n", quoted.join(" ")), file_name: None, parse_directives: false });
        }
        match cli.operands.first().map(String::as_str) {
            // The terminal is the job's: an interactive job without a script runs none.
            None if cli.interactive => Ok(Script { text: String::new(), file_name: None, parse_directives: false }),
            None | Some("-") => {
                let mut bytes = Vec::new();
                // One byte past the limit is enough to refuse; a script piped in without end
                // does not fill memory.
                let most = job::limits::MAX_SCRIPT_SIZE as u64 + 1;
                std::io::stdin().take(most).read_to_end(&mut bytes).map_err(|error| {
                    fail(exit::FAILURE, format!("cannot read the script from standard input: {error}"))
                })?;
                job::limits::check_script_size(bytes.len()).map_err(limit_failure)?;
                let text = String::from_utf8(bytes).map_err(|_| fail(exit::FAILURE, "file must be an ascii script"))?;
                Ok(Script { text, file_name: None, parse_directives: true })
            }
            Some(path) => {
                if let Ok(metadata) = std::fs::metadata(path) {
                    job::limits::check_script_size(metadata.len() as usize).map_err(limit_failure)?;
                }
                let bytes = std::fs::read(path).map_err(|error| {
                    fail(exit::FAILURE, format!("script file '{path}' cannot be loaded - {}", io_text(&error)))
                })?;
                let text = String::from_utf8(bytes)
                    .map_err(|_| fail(exit::FAILURE, format!("file must be an ascii script: {path}")))?;
                let file_name = Path::new(path).file_name().map(|name| name.to_string_lossy().into_owned());
                Ok(Script { text, file_name, parse_directives: true })
            }
        }
    }
}

/// A job over a limit of `job::limits`, refused as the server would (same code and text).
fn limit_failure(error: job::limits::LimitError) -> Failure {
    let code = match error {
        job::limits::LimitError::Script { .. } => proto::ErrorCode::JobscriptMaxSize,
        _ => proto::ErrorCode::BadAttributeValue,
    };
    let text = match error {
        job::limits::LimitError::Script { .. } => error.to_string(),
        _ => format!("{} {error}", code.text()),
    };
    fail(exit::for_error(code), text)
}

fn io_text(error: &std::io::Error) -> String {
    let text = error.to_string();
    text.split(" (os error").next().unwrap_or(&text).to_string()
}

/// A job name the server would refuse: OpenPBS's qsub stores `-N` unchecked (on the command
/// line and in directives alike, `src/cmds/qsub.c:1219-1226`); the check at submit
/// (`verify_value_jobname`, `src/lib/Libecl/ecl_verify_values.c`) fails with PBSE_BADATVAL,
/// `qsub: Illegal attribute or resource value Job_Name`, exit 166. Our reason follows.
fn job_name_failure(reason: String) -> Failure {
    let code = proto::ErrorCode::BadAttributeValue;
    Failure {
        message: format!("{} Job_Name", code.text()),
        detail: Some(format!("qsub: {reason}")),
        code: code.exit_code(),
    }
}

fn build_spec(
    opts: QsubOpts,
    resources: Vec<(String, String)>,
    script: &Script,
    typed_args: &[String],
) -> Result<JobSpec, Failure> {
    let cwd = crate::submit_env::workdir();
    let host = crate::submit_env::hostname();
    let name = opts.name.clone().or_else(|| script.file_name.clone()).unwrap_or_else(|| "STDIN".to_string());
    job::spec::check_job_name(&name).map_err(job_name_failure)?;
    let mail_users = match &opts.mail_users {
        Some(list) => {
            job::mail::parse_list(list).map_err(|error| fail(exit::USAGE, format!("illegal -M value: {error}")))?
        }
        None => Vec::new(),
    };
    let init_dir = opts.init_dir.as_deref().map(|dir| absolute(&cwd, dir).to_string_lossy().into_owned());
    let mut variables = crate::submit_env::variables(&opts, &cwd, &host, init_dir.as_deref())
        .map_err(|message| fail(exit::FAILURE, message))?;
    crate::qsub_options::torque_dirs(&opts, &cwd, &mut variables)?;
    Ok(JobSpec {
        name,
        script: script.text.clone(),
        queue: opts.queue.clone(),
        resources,
        output_path: opts.output.as_deref().map(|path| std_path(&cwd, &host, path)),
        error_path: opts.error.as_deref().map(|path| std_path(&cwd, &host, path)),
        join: match opts.join.as_deref() {
            Some("oe") => Join::OutErr,
            Some("eo") => Join::ErrOut,
            _ => Join::No,
        },
        keep: opts.keep.clone().unwrap_or_else(|| "n".to_string()),
        user_hold: opts.hold,
        rerunnable: opts.rerunnable.as_deref() != Some("n"),
        priority: opts.priority.unwrap_or(0),
        variables: variables.into(),
        // OpenPBS honours PBS_SHELL when -S is absent (pbs-reference 2.2).
        shell: opts.shell.clone().or_else(|| std::env::var("PBS_SHELL").ok().filter(|shell| !shell.is_empty())),
        init_dir,
        mail_points: opts.mail_points.clone().unwrap_or_else(|| "a".to_string()),
        mail_users,
        account: opts.account.clone(),
        submit_host: host,
        submit_args: typed_args.join(" "),
        // Checked when read; the command line's (overlaid last) wins over directives.
        depend: depend_values(&opts.extra)
            .last()
            .map(|value| job::depend::parse(value).unwrap_or_default())
            .unwrap_or_default(),
        array: None,
        interactive: None,
        options: Default::default(),
        exec: exec_options(&opts.extra)?,
    })
}

#[cfg(test)]
#[path = "qsub_tests.rs"]
mod tests;
