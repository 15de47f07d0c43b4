use super::*;

#[test]
fn umask_is_octal_and_at_most_0777() {
    assert_eq!(parse_umask("022"), Ok(0o22));
    assert_eq!(parse_umask("0777"), Ok(0o777));
    assert_eq!(parse_umask("7"), Ok(0o7));
    for bad in ["", "08", "1000", "0o22", "-1", "22x", "00000", " "] {
        assert!(parse_umask(bad).is_err(), "{bad:?}");
    }
    assert_eq!(show_umask(0o22), "22");
    assert_eq!(show_umask(0o77), "77");
}

#[test]
fn group_list_entries_and_bounds() {
    let list = parse_group_list("staff,gpu@node1").unwrap();
    assert_eq!(show_group_list(&list), "staff,gpu@node1");
    assert_eq!(group_for_host(&list, "node1.example.org"), Some("gpu"));
    assert_eq!(group_for_host(&list, "node2"), Some("staff"));
    assert_eq!(group_for_host(&parse_group_list("gpu@node1").unwrap(), "node2"), None);
    for bad in ["", "a,,b", "-wheel", "a b", "a@", "@h", "a,b", "g;id", "g@h@i"] {
        assert!(parse_group_list(bad).is_err(), "{bad:?}");
    }
    let at_most: Vec<String> = (0..MAX_GROUPS).map(|i| format!("g{i}@h{i}")).collect();
    assert!(parse_group_list(&at_most.join(",")).is_ok());
    let one_more = format!("{},x@y", at_most.join(","));
    assert!(parse_group_list(&one_more).is_err());
    assert!(parse_group_list(&"g".repeat(MAX_NAME)).is_ok());
    assert!(parse_group_list(&"g".repeat(MAX_NAME + 1)).is_err());
}

#[test]
fn sandbox_words() {
    assert_eq!(parse_sandbox("private"), Ok(Sandbox::Private));
    assert_eq!(parse_sandbox("HOME"), Ok(Sandbox::Home));
    assert!(parse_sandbox("tmp").is_err());
    assert_eq!(show_sandbox(Sandbox::Private), "PRIVATE");
}

#[test]
fn stage_items_and_bounds() {
    let items = parse_stage_list("stagein", "in.dat@login:/data/in.dat,b@node1:x@y").unwrap();
    assert_eq!(items[0], StageItem { local: "in.dat".into(), host: "login".into(), remote: "/data/in.dat".into() });
    assert_eq!(items[1].remote, "x@y");
    assert_eq!(show_stage_list(&items), "in.dat@login:/data/in.dat,b@node1:x@y");
    for bad in
        ["", "a", "a@h", "-rf@h:/x", "a@h:-o", "a@-h:/x", "../etc/x@h:/x", "a@h:/x/../y", "a\nb@h:/x", "@h:/x", "a@h:"]
    {
        assert!(parse_stage_list("stagein", bad).is_err(), "{bad:?}");
    }
    let many: Vec<String> = (0..MAX_STAGE_ITEMS).map(|i| format!("f{i}@h:/r{i}")).collect();
    assert_eq!(parse_stage_list("stageout", &many.join(",")).unwrap().len(), MAX_STAGE_ITEMS);
    assert!(parse_stage_list("stageout", &format!("{},x@h:/y", many.join(","))).is_err());
    let long = format!("{}@h:/x", "a".repeat(MAX_STAGE_PATH));
    assert!(parse_stage_list("stagein", &long).is_ok());
    let longer = format!("{}@h:/x", "a".repeat(MAX_STAGE_PATH + 1));
    assert!(parse_stage_list("stagein", &longer).is_err());
}

#[test]
fn w_items_last_wins_others_left_alone() {
    let options =
        ExecOptions::from_w_items(["umask=022", "depend=afterok:1", "umask=002", "sandbox=PRIVATE", "run_count=2"])
            .unwrap();
    assert_eq!(options.umask, Some(0o2));
    assert_eq!(options.sandbox, Some(Sandbox::Private));
    assert!(options.check().is_ok());
    let error = ExecOptions::from_w_items(["umask=9"]).unwrap_err();
    assert!(error.to_string().starts_with("umask: "), "{error}");
    let forged = ExecOptions { umask: Some(0o1000), ..ExecOptions::default() };
    assert!(forged.check().is_err());
    let forged = ExecOptions {
        stagein: vec![StageItem { local: "../x".into(), host: "h".into(), remote: "/y".into() }],
        ..ExecOptions::default()
    };
    assert!(forged.check().is_err());
}

#[test]
fn stored_without_options_loads_as_default() {
    let options: ExecOptions = serde_json::from_str("{}").unwrap();
    assert_eq!(options, ExecOptions::default());
}
