//! qsub's options and how directives merge with the command line (pbs-reference 1.4): the
//! same clap definition parses the command line and every `#PBS` line; command-line options
//! win; among directives the last occurrence wins, except `-l`, merged per resource with the
//! first directive winning (OpenPBS) and a warning naming the ignored line.

use clap::Parser;

/// qsub's usage lines, as they follow `usage: ` (OpenPBS's, then the TORQUE options it lacks):
/// clap's usage of [`QsubOpts`], and what a usage error prints without building the clap
/// command a second time.
pub const USAGE_LINES: &str = "qsub [-a date_time] [-A account_string] [-c interval]
\t[-C directive_prefix] [-e path] [-f ] [-h ] [-I [-X]] [-j oe|eo] [-J X-Y[:Z][%max]]
\t[-k o|e|oe] [-l resource_list] [-m mail_options] [-M user_list]
\t[-N jobname] [-o path] [-p priority] [-P project] [-q queue] [-r y|n]
\t[-S path] [-u user_list] [-W otherattributes=value...]
\t[-v variable_list] [-V ] [-z] [script | -- command [arg1 ...]]
\tTORQUE: [-b secs] [-d path] [-D path] [-F \"args\"] [-n] [-t array_request] [-w path] [-x]";

/// qsub's options. Used for the command line and for each directive line.
#[derive(Parser, Debug, Default, Clone)]
// `args_override_self`: an option given twice keeps its last value, as getopt does, inside one
// directive line as on the command line (pbs-reference 1.4).
#[command(name = "qsub", disable_help_flag = true, disable_version_flag = true, args_override_self = true)]
#[command(override_usage = USAGE_LINES)]
pub struct QsubOpts {
    #[arg(short = 'N')]
    pub name: Option<String>,
    #[arg(short = 'q')]
    pub queue: Option<String>,
    #[arg(short = 'l')]
    pub resources: Vec<String>,
    #[arg(short = 'o')]
    pub output: Option<String>,
    #[arg(short = 'e')]
    pub error: Option<String>,
    #[arg(short = 'j', value_parser = ["oe", "eo", "n"])]
    pub join: Option<String>,
    #[arg(short = 'k')]
    pub keep: Option<String>,
    #[arg(short = 'm')]
    pub mail_points: Option<String>,
    #[arg(short = 'M')]
    pub mail_users: Option<String>,
    #[arg(short = 'v')]
    pub variables: Vec<String>,
    #[arg(short = 'V')]
    pub export_all: bool,
    #[arg(short = 'p', allow_negative_numbers = true)]
    pub priority: Option<i32>,
    #[arg(short = 'h')]
    pub hold: bool,
    #[arg(short = 'r', value_parser = ["y", "n"])]
    pub rerunnable: Option<String>,
    #[arg(short = 'S')]
    pub shell: Option<String>,
    #[arg(short = 'd')]
    pub init_dir: Option<String>,
    #[arg(short = 'C')]
    pub prefix: Option<String>,
    #[arg(short = 'A')]
    pub account: Option<String>,
    #[arg(short = 'W')]
    pub extra: Vec<String>,
    #[arg(short = 'z')]
    pub quiet: bool,
    #[arg(short = 'I')]
    pub interactive: bool,
    /// `-X` (X11 forwarding, only with `-I`): ignored with a warning, minipbs does not forward X11.
    #[arg(short = 'X')]
    pub x11: bool,
    /// `-P` (OpenPBS project; TORQUE's proxy user `user[:group]` is read as a project name).
    #[arg(short = 'P')]
    pub project: Option<String>,
    /// `-u user[@host][,...]`: `User_List`.
    #[arg(short = 'u')]
    pub user_list: Option<String>,
    /// `-c`: `Checkpoint`.
    #[arg(short = 'c')]
    pub checkpoint: Option<String>,
    /// `-a [[[[CC]YY]MM]DD]hhmm[.SS]`: `Execution_Time`.
    #[arg(short = 'a')]
    pub execution_time: Option<String>,
    /// `-b secs` (TORQUE: how long to retry reaching the server): ignored with a warning.
    #[arg(short = 'b')]
    pub retry_secs: Option<String>,
    /// `-D path` (TORQUE): `PBS_O_ROOTDIR`.
    #[arg(short = 'D')]
    pub root_dir: Option<String>,
    /// `-F "args"` (TORQUE): the script's arguments.
    #[arg(short = 'F')]
    pub script_args: Option<String>,
    /// `-w path` (TORQUE): `PBS_O_WORKDIR` and `init_work_dir`; the start directory is unchanged.
    #[arg(short = 'w')]
    pub work_dir: Option<String>,
    /// `-x` (TORQUE: run the script inside an interactive job): ignored with a warning.
    #[arg(short = 'x')]
    pub script_in_interactive: bool,
    /// `-n` (TORQUE): node-exclusive, as `-l place=excl`.
    #[arg(short = 'n')]
    pub node_exclusive: bool,
    /// `-f` (TORQUE: fault tolerant; OpenPBS: no qsub daemon): ignored with a warning.
    #[arg(short = 'f')]
    pub fault_tolerant: bool,
    #[arg(short = 'J')]
    pub array_pbs: Option<String>,
    #[arg(short = 't')]
    pub array_torque: Option<String>,
    /// `--pin` (a minipbs extension, command line only): run the code of the submit
    /// directory's git repository as it is now (`qsub_pin.rs`, docs/pin.md).
    #[arg(long = "pin")]
    pub pin: bool,
    #[arg(long = "help", action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// The script, then (only in directives) leftover words.
    #[arg(trailing_var_arg = true)]
    pub operands: Vec<String>,
}

/// Later scalar options replace earlier ones; flags accumulate; lists append.
pub fn overlay(base: &mut QsubOpts, over: QsubOpts) {
    macro_rules! take {
        ($($field:ident),*) => { $( if over.$field.is_some() { base.$field = over.$field; } )* };
    }
    take!(
        name,
        queue,
        output,
        error,
        join,
        keep,
        mail_points,
        mail_users,
        priority,
        rerunnable,
        shell,
        init_dir,
        prefix,
        account,
        array_pbs,
        array_torque,
        project,
        user_list,
        checkpoint,
        execution_time,
        retry_secs,
        root_dir,
        script_args,
        work_dir
    );
    base.export_all |= over.export_all;
    base.hold |= over.hold;
    base.quiet |= over.quiet;
    base.interactive |= over.interactive;
    base.x11 |= over.x11;
    base.script_in_interactive |= over.script_in_interactive;
    base.node_exclusive |= over.node_exclusive;
    base.fault_tolerant |= over.fault_tolerant;
    base.pin |= over.pin;
    base.variables.extend(over.variables);
    base.extra.extend(over.extra);
}

/// A parsed directive line.
pub struct DirectiveOpts {
    pub line: usize,
    pub opts: QsubOpts,
}

/// Parses one directive's words with qsub's own definition. Leftover words are reported as a
/// warning (TORQUE ignores them; OpenPBS refuses; we are lenient, pbs-reference section 0).
pub fn parse_directive(directive: &job::directives::Directive) -> Result<(DirectiveOpts, Option<String>), String> {
    let args = std::iter::once("qsub".to_string()).chain(directive.words.iter().cloned());
    let mut opts = QsubOpts::try_parse_from(args).map_err(|error| {
        let first = error.to_string().lines().next().unwrap_or_default().trim_start_matches("error: ").to_string();
        format!("directive error at line {}: {}: {first}", directive.line, directive.text.trim())
    })?;
    if opts.pin {
        // Another PBS's qsub refuses the option: a script holding it would no longer run there.
        return Err(format!(
            "directive error at line {}: {}: --pin is a command-line option only (a minipbs extension)",
            directive.line,
            directive.text.trim()
        ));
    }
    let warning = (!opts.operands.is_empty())
        .then(|| format!("directive at line {}: ignoring trailing words: {}", directive.line, opts.operands.join(" ")));
    opts.operands.clear();
    Ok((DirectiveOpts { line: directive.line, opts }, warning))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directive(text: &str) -> job::directives::Directive {
        job::directives::extract(&format!("#PBS {text}\n"), "#PBS").unwrap().remove(0)
    }

    #[test]
    fn an_option_twice_in_one_line_keeps_the_last_as_getopt_does() {
        let (parsed, warning) = parse_directive(&directive("-o a.out -o b.out -N one -N two")).unwrap();
        assert_eq!(parsed.opts.output.as_deref(), Some("b.out"));
        assert_eq!(parsed.opts.name.as_deref(), Some("two"));
        assert_eq!(warning, None);
        let (parsed, _) = parse_directive(&directive("-h -h -z -z -p 1 -p -3")).unwrap();
        assert!(parsed.opts.hold && parsed.opts.quiet);
        assert_eq!(parsed.opts.priority, Some(-3));
    }

    #[test]
    fn repeated_list_options_still_accumulate() {
        let (parsed, _) =
            parse_directive(&directive("-l walltime=1:00 -l mem=1gb -v A=1 -v B=2 -W x=1 -W y=2")).unwrap();
        assert_eq!(parsed.opts.resources, ["walltime=1:00", "mem=1gb"]);
        assert_eq!(parsed.opts.variables, ["A=1", "B=2"]);
        assert_eq!(parsed.opts.extra, ["x=1", "y=2"]);
    }

    #[test]
    fn the_command_line_keeps_the_last_too() {
        let opts = QsubOpts::try_parse_from(["qsub", "-N", "a", "-N", "b", "-q", "x", "-q", "y"]).unwrap();
        assert_eq!((opts.name.as_deref(), opts.queue.as_deref()), (Some("b"), Some("y")));
    }

    #[test]
    fn pin_is_refused_in_a_directive() {
        let message = parse_directive(&directive("--pin")).err().unwrap();
        assert_eq!(
            message,
            "directive error at line 1: --pin: --pin is a command-line option only (a minipbs extension)"
        );
        assert!(QsubOpts::try_parse_from(["qsub", "--pin"]).unwrap().pin);
    }
}
