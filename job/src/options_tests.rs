//! Each option's grammar and bound, at the boundary.

use super::*;

#[test]
fn project_bounds() {
    assert_eq!(check_project("a00"), Ok(()));
    assert_eq!(check_project("NCI-proj_1.x+y@z/w:v"), Ok(()));
    assert_eq!(check_project(&"p".repeat(MAX_PROJECT)), Ok(()));
    for bad in [
        String::new(),
        "p".repeat(MAX_PROJECT + 1),
        "a b".into(),
        "a,b".into(),
        "a;b".into(),
        "a\nb".into(),
        "$(x)".into(),
    ] {
        assert!(check_project(&bad).is_err(), "{bad:?}");
    }
}

#[test]
fn user_lists() {
    assert_eq!(parse_user_list("alice").unwrap(), ["alice"]);
    assert_eq!(parse_user_list("alice@login1,bob").unwrap(), ["alice@login1", "bob"]);
    assert_eq!(users_of(&parse_user_list("alice@login1,bob").unwrap()).collect::<Vec<_>>(), ["alice", "bob"]);
    let most = vec!["u"; MAX_USERS].join(",");
    assert!(parse_user_list(&most).is_ok());
    assert!(parse_user_list(&format!("{most},u")).is_err());
    assert!(parse_user_list(&"u".repeat(MAX_USER_NAME)).is_ok());
    for bad in ["", "a,,b", "-oProxyCommand=x", "a@", "@h", "a b", "a@h@i", "root;id", &"u".repeat(MAX_USER_NAME + 1)] {
        assert!(parse_user_list(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn checkpoint_grammar() {
    for good in ["n", "s", "u", "c", "w", "c=10", "w=5", "enabled", "periodic,interval=10,depth=2", "none", "shutdown"]
    {
        assert_eq!(check_checkpoint(good), Ok(()), "{good}");
    }
    let long = format!("periodic{}", ",none".repeat(12));
    assert!(long.len() > MAX_CHECKPOINT);
    for bad in ["", "x", "c=", "c=x", "c=-1", "c=1234567890", "u=1", "interval=x", "enabled,", &long] {
        assert!(check_checkpoint(bad).is_err(), "{bad}");
    }
}

#[test]
fn w_attributes_are_made_canonical_or_refused() {
    let ok = |name, value| check_w_attr(name, value).unwrap();
    assert_eq!(ok("run_count", "3").as_deref(), Some("3"));
    let most = MAX_RUN_COUNT.to_string();
    assert_eq!(ok("run_count", &most).as_deref(), Some("10000"));
    assert_eq!(ok("block", "true").as_deref(), Some("True"));
    assert_eq!(ok("release_nodes_on_stageout", "n").as_deref(), Some("False"));
    assert_eq!(ok("tolerate_node_failures", "job_start").as_deref(), Some("job_start"));
    assert_eq!(ok("umask", "022"), None, "not this module's");
    assert_eq!(ok("sandbox", "PRIVATE"), None, "exec_opts.rs's");
    for (name, value) in [
        ("run_count", "-1"),
        ("run_count", "+1"),
        ("run_count", "10001"),
        ("run_count", "x"),
        ("block", "maybe"),
        ("tolerate_node_failures", "some"),
    ] {
        assert!(check_w_attr(name, value).is_err(), "{name}={value}");
    }
}

#[test]
fn script_arguments() {
    assert_eq!(parse_script_args("  a  b\tc ").unwrap(), ["a", "b", "c"]);
    assert_eq!(parse_script_args("").unwrap(), Vec::<String>::new());
    assert!(parse_script_args(&vec!["a"; MAX_SCRIPT_ARGS].join(" ")).is_ok());
    assert!(parse_script_args(&vec!["a"; MAX_SCRIPT_ARGS + 1].join(" ")).is_err());
    assert!(check_script_args(&["x".repeat(MAX_SCRIPT_ARG_BYTES)]).is_ok());
    assert!(check_script_args(&["x".repeat(MAX_SCRIPT_ARG_BYTES + 1)]).is_err());
    assert!(check_script_args(&["a\u{0}b".to_string()]).is_err());
    assert!(check_script_args(&[String::new()]).is_err());
}

#[test]
fn the_whole_set_is_checked_and_old_rows_load() {
    let old: JobOptions = serde_json::from_str("{}").unwrap();
    assert_eq!(old, JobOptions::default());
    assert_eq!(old.check(), Ok(()));
    let mut options = JobOptions { project: Some("p".into()), checkpoint: Some("c=5".into()), ..JobOptions::default() };
    options.set_w_attr("run_count", "2".into());
    options.set_w_attr("run_count", "4".into());
    assert_eq!(options.w_attrs.len(), 1);
    assert_eq!(options.initial_run_count(), 4);
    assert_eq!(options.check(), Ok(()));
    let bad = JobOptions { w_attrs: vec![("block".into(), "true".into())], ..JobOptions::default() };
    assert!(bad.check().is_err(), "the server takes canonical values only");
    for (time, ok) in
        [(-1, false), (0, true), (MAX_EXECUTION_TIME, true), (MAX_EXECUTION_TIME + 1, false), (i64::MAX, false)]
    {
        let options = JobOptions { execution_time: Some(time), ..JobOptions::default() };
        assert_eq!(options.check().is_ok(), ok, "{time}");
    }
    let bad = JobOptions { w_attrs: vec![("x".into(), "1".into())], ..JobOptions::default() };
    assert!(bad.check().is_err(), "an unknown -W name is not stored");
}

#[test]
fn a_spec_stored_by_the_previous_release_loads_with_default_options() {
    // A stored spec row as the release before these options wrote it: no `options` key.
    let stored = serde_json::json!({
        "name": "STDIN", "script": "", "queue": "workq", "resources": [["walltime", "1:00:00"]],
        "output_path": null, "error_path": null, "join": "No", "keep": "n", "user_hold": false,
        "rerunnable": true, "priority": 0, "variables": [["PBS_O_WORKDIR", "/home/a"]], "shell": null,
        "init_dir": null, "mail_points": "a", "mail_users": [], "account": null, "submit_host": "login",
        "submit_args": "", "depend": [], "array": null, "interactive": null
    });
    let spec: crate::JobSpec = serde_json::from_value(stored).unwrap();
    assert_eq!(spec.options, JobOptions::default());
    assert_eq!(spec.options.initial_run_count(), 0);
}
