//! `pbs_tmrsh`'s command line, read the way ssh and OpenPBS's pbs_tmrsh read it: options,
//! the host, more options, then the command words taken as they are (OpenMPI's `" orted"`
//! with its leading space and quoted values, Hydra's `"\"<bindir>/hydra_pmi_proxy\""`).
//!
//! Hand-written rather than clap: clap cannot stop at the first word after the host while still
//! taking options between host and command, and ssh's grouped letters (`-xT`, `-p22`) matter.
//! Owns: the parse and the shell line. Must not know: the job, sockets.

/// Options that take no value and change nothing here (ssh's `-x -X -T -q`; `-n` is kept).
const IGNORED_FLAGS: &[char] = &['x', 'X', 'T', 'q'];
/// Options whose value is taken and ignored (ssh's port and config options).
const IGNORED_VALUES: &[char] = &['p', 'o'];

/// What `pbs_tmrsh` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmrshArgs {
    pub host: String,
    /// `-l user`: must be the caller.
    pub user: Option<String>,
    /// `-n`: the task's stdin is `/dev/null`.
    pub no_stdin: bool,
    pub command: Vec<String>,
}

/// A malformed command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    #[error("invalid option -- '{0}'")]
    Unknown(char),
    #[error("option requires an argument -- '{0}'")]
    MissingValue(char),
    #[error("a host is required")]
    NoHost,
    #[error("a command is required")]
    NoCommand,
}

/// Parses the words after the program name.
pub fn parse(words: &[String]) -> Result<TmrshArgs, ArgsError> {
    let mut host = None;
    let mut user = None;
    let mut no_stdin = false;
    let mut options_done = false;
    let mut index = 0;
    while index < words.len() {
        let word = &words[index];
        index += 1;
        if !options_done && word == "--" {
            options_done = true;
            continue;
        }
        if options_done || !word.starts_with('-') || word.len() == 1 {
            if host.is_none() {
                host = Some(word.clone());
                continue;
            }
            index -= 1;
            break;
        }
        let letters: Vec<char> = word[1..].chars().collect();
        for (at, &letter) in letters.iter().enumerate() {
            if letter == 'n' {
                no_stdin = true;
            } else if IGNORED_FLAGS.contains(&letter) {
            } else if letter == 'l' || IGNORED_VALUES.contains(&letter) {
                let rest: String = letters[at + 1..].iter().collect();
                let value = if !rest.is_empty() {
                    rest
                } else {
                    index += 1;
                    words.get(index - 1).cloned().ok_or(ArgsError::MissingValue(letter))?
                };
                if letter == 'l' {
                    user = Some(value);
                }
                break;
            } else {
                return Err(ArgsError::Unknown(letter));
            }
        }
    }
    let host = host.ok_or(ArgsError::NoHost)?;
    let command = words[index.min(words.len())..].to_vec();
    if command.is_empty() {
        return Err(ArgsError::NoCommand);
    }
    Ok(TmrshArgs { host, user, no_stdin, command })
}

/// The line the remote shell runs: the words joined by single spaces, as ssh does.
pub fn shell_line(command: &[String]) -> String {
    command.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &[&str]) -> Vec<String> {
        text.iter().map(|word| word.to_string()).collect()
    }

    fn parsed(text: &[&str]) -> TmrshArgs {
        parse(&words(text)).unwrap()
    }

    #[test]
    fn every_option_before_and_after_the_host() {
        let args = parsed(&["-x", "-X", "-T", "-q", "-p", "22", "-o", "BatchMode=yes", "n2", "-n", "-l", "bob", "ls"]);
        assert_eq!(
            args,
            TmrshArgs { host: "n2".into(), user: Some("bob".into()), no_stdin: true, command: words(&["ls"]) }
        );
        let grouped = parsed(&["-xTn", "-p2222", "-lbob", "-oX=y", "n2", "hostname", "-n"]);
        assert_eq!(grouped.user.as_deref(), Some("bob"));
        assert!(grouped.no_stdin);
        assert_eq!(grouped.command, words(&["hostname", "-n"]));
        let dashed = parsed(&["--", "n2", "-x", "y"]);
        assert_eq!((dashed.host.as_str(), dashed.command), ("n2", words(&["-x", "y"])));
        assert!(!parsed(&["n2", "true"]).no_stdin);
    }

    #[test]
    fn malformed_lines() {
        assert_eq!(parse(&words(&["-Z", "n2", "ls"])), Err(ArgsError::Unknown('Z')));
        assert_eq!(parse(&words(&["n2", "-l"])), Err(ArgsError::MissingValue('l')));
        assert_eq!(parse(&words(&["-p"])), Err(ArgsError::MissingValue('p')));
        assert_eq!(parse(&words(&["-n"])), Err(ArgsError::NoHost));
        assert_eq!(parse(&words(&[])), Err(ArgsError::NoHost));
        assert_eq!(parse(&words(&["n2", "-n"])), Err(ArgsError::NoCommand));
    }

    /// The argv OpenMPI 4.1.4 gives its rsh agent (docs/gpu-mpi.md 4.3), tree spawn included.
    #[test]
    fn openmpi_argv_reaches_the_shell_unchanged() {
        let argv = [
            "n2",
            " orted",
            "-mca",
            "ess",
            "\"env\"",
            "-mca",
            "ess_base_jobid",
            "\"3105619968\"",
            "-mca",
            "ess_base_vpid",
            "1",
            "-mca",
            "ess_base_num_procs",
            "\"2\"",
            "-mca",
            "orte_node_regex",
            "\"n[1:1-2]@0(2)\"",
            "-mca",
            "orte_hnp_uri",
            "\"3105619968.0;tcp://10.0.0.1:41379\"",
            "--tree-spawn",
            "-mca",
            "routed",
            "\"radix\"",
            "-mca",
            "orte_parent_uri",
            "\"3105619968.0;tcp://10.0.0.1:41379\"",
        ];
        let args = parsed(&argv);
        assert_eq!(args.host, "n2");
        assert!(!args.no_stdin);
        assert_eq!(args.command, words(&argv[1..]));
        let line = shell_line(&args.command);
        assert!(line.starts_with(" orted -mca ess \"env\" -mca ess_base_jobid \"3105619968\""), "{line}");
        assert!(line.contains(" --tree-spawn -mca routed \"radix\""), "{line}");
        let prefixed = parsed(&[
            "-x",
            "n2",
            "PATH=/opt/ompi/bin:$PATH ; export PATH ;",
            "/opt/ompi/bin/orted",
            "-mca",
            "ess",
            "\"env\"",
        ]);
        assert_eq!(
            shell_line(&prefixed.command),
            "PATH=/opt/ompi/bin:$PATH ; export PATH ; /opt/ompi/bin/orted -mca ess \"env\""
        );
    }

    /// The argv MPICH Hydra 4.0.2 gives its rsh launcher (docs/gpu-mpi.md 4.3).
    #[test]
    fn hydra_argv_reaches_the_shell_unchanged() {
        let argv = [
            "n2",
            "\"/usr/bin/hydra_pmi_proxy\"",
            "--control-port",
            "n1:40513",
            "--rmk",
            "pbs",
            "--launcher",
            "rsh",
            "--launcher-exec",
            "/usr/bin/pbs_tmrsh",
            "--demux",
            "poll",
            "--pgid",
            "0",
            "--retries",
            "10",
            "--usize",
            "-2",
            "--pmi-port",
            "0",
            "--gpus-per-proc",
            "-2",
            "--gpu-subdevs-per-proc",
            "-2",
            "--proxy-id",
            "1",
        ];
        let args = parsed(&argv);
        assert_eq!(args.host, "n2");
        assert_eq!(
            shell_line(&args.command),
            "\"/usr/bin/hydra_pmi_proxy\" --control-port n1:40513 --rmk pbs --launcher rsh --launcher-exec \
             /usr/bin/pbs_tmrsh --demux poll --pgid 0 --retries 10 --usize -2 --pmi-port 0 --gpus-per-proc -2 \
             --gpu-subdevs-per-proc -2 --proxy-id 1"
        );
    }
}
