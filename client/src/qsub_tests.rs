//! qsub's refusals that depend on where an option came from (command line or directive), with
//! OpenPBS's texts and exit codes; the usage they print.

use super::*;
use clap::Parser;

/// Prepares `script` (written to a file) submitted with `args`; the failure's code and text.
fn refusal(script: &str, args: &[&str]) -> (u8, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.sh");
    std::fs::write(&path, script).unwrap();
    let path = path.to_string_lossy().into_owned();
    let argv = std::iter::once("qsub").chain(args.iter().copied()).chain([path.as_str()]);
    let cli = QsubOpts::try_parse_from(argv).unwrap();
    match prepare(cli, None, &[]) {
        Ok(_) => panic!("accepted: {script:?} {args:?}"),
        Err(failure) => (failure.code, format!("{} {}", failure.message, failure.detail.unwrap_or_default())),
    }
}

#[test]
fn an_array_that_may_not_rerun_is_a_directive_error_unless_both_are_on_the_command_line() {
    let (code, text) = refusal("#!/bin/sh\n#PBS -J 1-4\n#PBS -r n\ntrue\n", &[]);
    assert_eq!(code, exit::FAILURE, "{text}");
    assert!(text.contains("cannot submit non-rerunable Array Job"), "{text}");
    assert_eq!(refusal("#!/bin/sh\n#PBS -r n\ntrue\n", &["-J", "1-4"]).0, exit::FAILURE);
    assert_eq!(refusal("#!/bin/sh\ntrue\n", &["-J", "1-4", "-r", "n"]).0, exit::USAGE);
}

#[test]
fn a_job_name_the_server_refuses_is_openpbs_bad_attribute_value() {
    for args in [&[][..], &["-N", "dis=1.6"][..]] {
        let (code, text) = refusal("#!/bin/sh\n#PBS -N dis=1.6\ntrue\n", args);
        assert_eq!(code, 166, "{args:?}: {text}");
        assert!(text.starts_with("Illegal attribute or resource value Job_Name"), "{text}");
        assert!(text.contains("'='"), "our reason follows: {text}");
    }
}

#[test]
fn the_usage_printed_is_clap_s() {
    use clap::CommandFactory;
    let rendered = QsubOpts::command().render_usage().to_string();
    assert_eq!(QsubOpts::command_usage(), rendered.replacen("Usage:", "usage:", 1));
}
