//! The `depend` grammar: accepted forms, their typed result, and the error texts for garbage.

use super::*;

fn jobs(kind: DependKind, ids: &[&str]) -> DependItem {
    DependItem::Jobs { kind, jobs: ids.iter().map(|id| id.to_string()).collect() }
}

#[test]
fn parses_every_plain_type() {
    for kind in DependKind::ALL {
        let text = format!("{}:12", kind.name());
        assert_eq!(parse(&text).unwrap(), vec![jobs(kind, &["12"])], "{text}");
    }
}

#[test]
fn parses_lists_and_several_items() {
    assert_eq!(
        parse("afterok:12.head:13.head.example.com,afternotok:14, on:2").unwrap(),
        vec![
            jobs(DependKind::AfterOk, &["12.head", "13.head.example.com"]),
            jobs(DependKind::AfterNotOk, &["14"]),
            DependItem::On(2),
        ]
    );
}

#[test]
fn same_type_twice_joins_one_list_without_duplicates() {
    assert_eq!(parse("afterok:1:2,afterok:2:3").unwrap(), vec![jobs(DependKind::AfterOk, &["1", "2", "3"])]);
}

#[test]
fn at_server_suffix_is_dropped() {
    assert_eq!(parse("afterok:12.head@head").unwrap(), vec![jobs(DependKind::AfterOk, &["12.head"])]);
}

#[test]
fn torque_array_forms_name_the_array() {
    assert_eq!(
        parse("afterokarray:12,afteranyarray:13[].head,afternotokarray:14.head,afterstartarray:15").unwrap(),
        vec![
            jobs(DependKind::AfterOk, &["12[]"]),
            jobs(DependKind::AfterAny, &["13[].head"]),
            jobs(DependKind::AfterNotOk, &["14[].head"]),
            jobs(DependKind::After, &["15[]"]),
        ]
    );
}

#[test]
fn plain_types_accept_array_and_subjob_ids() {
    assert_eq!(parse("afterok:12[]:12[3]").unwrap(), vec![jobs(DependKind::AfterOk, &["12[]", "12[3]"])]);
}

#[test]
fn display_round_trips() {
    let text = "afterok:12.head:13.head,before:14.head,on:3";
    assert_eq!(Display(&parse(text).unwrap()).to_string(), text);
}

#[test]
fn mirror_swaps_after_and_before() {
    for kind in DependKind::ALL {
        assert_eq!(kind.mirror().mirror(), kind);
        assert_ne!(kind.is_after(), kind.mirror().is_after());
    }
}

#[test]
fn garbage_is_refused_with_a_reason() {
    let cases = [
        "",
        "afterok",
        "afterok:",
        "afterok:12,",
        ",afterok:12",
        "afterok:12,,afterok:13",
        "aftrok:12",
        "afterok:abc",
        "afterok:12::13",
        "afterok:12@",
        "afterok:-1",
        "afterokarray:12[3]",
        "on:0",
        "on:x",
        "on:2:3",
        "on:",
        "runone:12",
        "syncwith:12",
        "synccount:2",
    ];
    let mut report = String::new();
    for case in cases {
        let error = parse(case).expect_err(case);
        report.push_str(&format!("{case:?} -> {error}\n"));
    }
    insta::assert_snapshot!(report);
}
