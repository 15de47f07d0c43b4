//! qsub's extra options: what each makes of the job, refusals with OpenPBS's texts, warnings.

use super::*;
use crate::cli::now;
use clap::Parser;

fn parse(args: &[&str]) -> QsubOpts {
    QsubOpts::try_parse_from(std::iter::once("qsub").chain(args.iter().copied())).unwrap()
}

fn options(args: &[&str]) -> Result<(JobOptions, Vec<String>), String> {
    job_options(&parse(args), now()).map_err(|failure| format!("{} (exit {})", failure.message, failure.code))
}

#[test]
fn values_are_stored() {
    let (job, warnings) = options(&[
        "-P",
        "a00",
        "-u",
        "alice@login1",
        "-c",
        "c=10",
        "-W",
        "run_count=2",
        "-W",
        "tolerate_node_failures=job_start",
        "-W",
        "release_nodes_on_stageout=true",
        "-F",
        "one two",
        "x.sh",
    ])
    .unwrap();
    assert_eq!(job.project.as_deref(), Some("a00"));
    assert_eq!(job.user_list, ["alice@login1"]);
    assert_eq!(job.checkpoint.as_deref(), Some("c=10"));
    assert_eq!(job.initial_run_count(), 2);
    assert_eq!(job.w_attr("tolerate_node_failures"), Some("job_start"));
    assert_eq!(job.w_attr("release_nodes_on_stageout"), Some("True"));
    assert_eq!(job.script_args, ["one", "two"]);
    assert_eq!(job.check(), Ok(()), "what qsub sends the server takes");
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn torque_proxy_user_form_is_read_as_a_project() {
    let (job, _) = options(&["-P", "bob:staff"]).unwrap();
    assert_eq!(job.project.as_deref(), Some("bob:staff"));
}

#[test]
fn bad_values_are_refused_with_the_letter() {
    for (args, start) in [
        (&["-P", "a b"][..], "illegal -P value"),
        (&["-u", "root;id"], "illegal -u value"),
        (&["-c", "sometimes"], "illegal -c value"),
        (&["-a", "2460"], "illegal -a value"),
        (&["-W", "run_count=-1"], "illegal -W value"),
        (&["-W", "block=perhaps"], "illegal -W value"),
    ] {
        let message = options(args).unwrap_err();
        assert!(message.starts_with(start) && message.ends_with("(exit 2)"), "{args:?}: {message}");
    }
}

#[test]
fn names_of_other_handlers_and_passwords_are_not_stored() {
    let (job, warnings) =
        options(&["-W", "umask=022", "-W", "group_list=g", "-W", "pwd=secret", "-W", "depend=afterok:1"]).unwrap();
    assert!(job.w_attrs.is_empty(), "{:?}", job.w_attrs);
    assert!(!format!("{job:?}").contains("secret"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn ignored_options_warn() {
    let (_, warnings) = options(&["-b", "10", "-x", "-f", "-W", "block=true"]).unwrap();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    let (_, warnings) = options(&["-I", "-X"]).unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn execution_time_rolls_forward_by_the_unit_left_out() {
    let now = 1_790_000_000; // a fixed instant; the results are relative to it
    let today = pbslog::time::Tm::local(now);
    let hhmm = |tm: &pbslog::time::Tm| format!("{:02}{:02}", tm.hour, tm.minute);
    let later = pbslog::time::Tm::local(now + 3600);
    let at = execution_time(&hhmm(&later), now).unwrap();
    assert!((now..=now + 3600).contains(&at), "{at}");
    let earlier = pbslog::time::Tm::local(now - 3600);
    let at = execution_time(&hhmm(&earlier), now).unwrap();
    assert!(at > now && at <= now + 86_400, "a past hhmm is tomorrow: {at}");
    let full = format!("{:04}{:02}{:02}{}", today.year - 1, today.month, today.day, hhmm(&today));
    assert!(execution_time(&full, now).unwrap() < now, "a full date is taken as given");
    assert_eq!(execution_time("2400", now), None);
}

#[test]
fn node_exclusive_adds_excl() {
    let mut resources = vec![];
    node_exclusive(&mut resources);
    assert_eq!(resources, [("place".to_string(), "excl".to_string())]);
    let mut resources = vec![("place".to_string(), "scatter".to_string())];
    node_exclusive(&mut resources);
    node_exclusive(&mut resources);
    assert_eq!(resources[0].1, "scatter:excl");
}

#[test]
fn directories_of_torque() {
    let opts = parse(&["-D", "root", "-w", "/data/run"]);
    let mut variables = vec![("PBS_O_WORKDIR".to_string(), "/home/a".to_string())];
    assert!(torque_dirs(&opts, std::path::Path::new("/home/a"), &mut variables).is_ok());
    assert_eq!(
        variables,
        [
            ("PBS_O_ROOTDIR".to_string(), "/home/a/root".to_string()),
            ("PBS_O_WORKDIR".to_string(), "/data/run".to_string())
        ]
    );
    let long = format!("/{}", "d".repeat(MAX_DIR));
    for bad in [long.as_str(), "a\nb", ""] {
        let opts = parse(&["-w", bad]);
        assert!(torque_dirs(&opts, std::path::Path::new("/"), &mut vec![]).is_err(), "{bad:?}");
    }
    let most = format!("/{}", "d".repeat(MAX_DIR - 1));
    assert!(torque_dirs(&parse(&["-w", &most]), std::path::Path::new("/"), &mut vec![]).is_ok());
}
