//! Tests of the qselect predicate: criteria parsing and OpenPBS's comparison rules.

use super::*;
use job::Attr;

const KNOWN: &[&str] = &["walltime", "mem", "ncpus", "nodect", "software"];

fn job(id: &str, attrs: &[(&str, &str)]) -> JobStatus {
    let attrs = attrs
        .iter()
        .map(|(name, value)| match name.split_once('.') {
            Some((group, resource)) => Attr::resource(group, resource, value.to_string()),
            None => Attr::new(*name, value.to_string()),
        })
        .collect();
    JobStatus { id: id.to_string(), attrs }
}

fn sample() -> Vec<JobStatus> {
    vec![
        job(
            "1.head",
            &[
                ("Job_Name", "alpha"),
                ("Job_Owner", "alice@login1"),
                ("job_state", "Q"),
                ("queue", "workq"),
                ("Hold_Types", "n"),
                ("Priority", "0"),
                ("Rerunable", "True"),
                ("Resource_List.walltime", "01:00:00"),
                ("Resource_List.mem", "2gb"),
                ("Resource_List.ncpus", "4"),
                ("ctime", "1000"),
            ],
        ),
        job(
            "2.head",
            &[
                ("Job_Name", "beta"),
                ("Job_Owner", "bob@login2"),
                ("job_state", "H"),
                ("Hold_Types", "uo"),
                ("Priority", "10"),
                ("Rerunable", "False"),
                ("Resource_List.walltime", "00:10:00"),
                ("Resource_List.ncpus", "1"),
                ("Account_Name", "proj1"),
                ("ctime", "2000"),
            ],
        ),
        job("3.head", &[("Job_Name", "gamma"), ("Job_Owner", "alice@login1"), ("job_state", "F")]),
        job("4[].head", &[("Job_Name", "arr"), ("Job_Owner", "alice@login1"), ("job_state", "B")]),
        job("4[1].head", &[("Job_Name", "arr"), ("Job_Owner", "alice@login1"), ("job_state", "R")]),
    ]
}

fn selected(selection: &Selection) -> Vec<String> {
    sample().into_iter().filter(|job| selection.matches(job)).map(|job| job.id).collect()
}

fn with(tests: Vec<Test>) -> Selection {
    Selection { tests, ..Selection::default() }
}

#[test]
fn operators_follow_openpbs_comparison_rules() {
    use std::cmp::Ordering::*;
    assert!(Op::Ne.accepts(Less) && Op::Ne.accepts(Greater) && !Op::Ne.accepts(Equal));
    assert!(Op::Le.accepts(Less) && Op::Le.accepts(Equal) && !Op::Le.accepts(Greater));
    assert!(Op::Ge.accepts(Greater) && Op::Ge.accepts(Equal) && !Op::Ge.accepts(Less));
    assert_eq!(split_op(".gt.5"), (Op::Gt, "5"));
    assert_eq!(split_op("5"), (Op::Eq, "5"));
    assert_eq!(split_op(".xx.5"), (Op::Eq, ".xx.5"));
}

#[test]
fn no_criteria_selects_live_jobs_but_not_history_or_subjobs() {
    assert_eq!(selected(&Selection::default()), ["1.head", "2.head", "4[].head"]);
    assert_eq!(
        selected(&Selection { history: true, ..Selection::default() }),
        ["1.head", "2.head", "3.head", "4[].head"]
    );
    assert_eq!(selected(&Selection { subjobs: true, ..Selection::default() }), ["1.head", "2.head", "4[1].head"]);
}

#[test]
fn resources_compare_by_kind_and_missing_ones_count_as_less() {
    let list = |text| with(parse_resource_list(text, KNOWN).unwrap());
    assert_eq!(selected(&list("walltime.gt.00:30:00")), ["1.head"]);
    assert_eq!(selected(&list("walltime.le.600")), ["2.head", "4[].head"], "no walltime: less");
    assert_eq!(selected(&list("mem.ge.1024mb")), ["1.head"]);
    assert_eq!(selected(&list("mem.lt.1gb")), ["2.head", "4[].head"], "no mem: less than anything");
    assert_eq!(selected(&list("ncpus.eq.4,walltime.eq.1:00:00")), ["1.head"]);
    assert_eq!(selected(&list("ncpus.ne.4")), ["2.head", "4[].head"]);
    assert_eq!(parse_resource_list("ncpus=4", KNOWN), Err(ResourceListError::Malformed));
    assert_eq!(parse_resource_list("ncpus.xx.4", KNOWN), Err(ResourceListError::Malformed));
    assert_eq!(parse_resource_list("ncpus.eq.", KNOWN), Err(ResourceListError::Malformed));
    assert_eq!(parse_resource_list("frobs.eq.1", KNOWN), Err(ResourceListError::Unknown("frobs".into())));
    assert!(check_resource_value("walltime", "abc").is_err());
    assert!(check_resource_value("software", "abc").is_ok());
}

#[test]
fn holds_states_users_names_and_flags() {
    let hold = |op, holds: &str| with(vec![Test::Hold { op, holds: holds.into() }]);
    assert_eq!(selected(&hold(Op::Eq, "ou")), ["2.head"]);
    assert_eq!(selected(&hold(Op::Eq, "u")), Vec::<String>::new(), "hold lists compare as sets");
    assert_eq!(selected(&hold(Op::Eq, "n")), ["1.head", "4[].head"]);
    assert_eq!(selected(&hold(Op::Ne, "n")), ["2.head"]);
    let states = |op, letters: &str| with(vec![Test::States { op, letters: letters.into() }]);
    assert_eq!(selected(&states(Op::Eq, "QH")), ["1.head", "2.head"]);
    assert_eq!(selected(&states(Op::Ne, "Q")), ["2.head", "4[].head"]);
    let users = |list: &[&str]| with(vec![Test::Users(list.iter().map(|user| user.to_string()).collect())]);
    assert_eq!(selected(&users(&["bob"])), ["2.head"]);
    assert_eq!(selected(&users(&["alice@login2", "bob@*2"])), ["2.head"]);
    assert_eq!(selected(&users(&["alice@login1"])), ["1.head", "4[].head"]);
    let text = |attr, value: &str| with(vec![Test::Text { attr, op: Op::Eq, value: value.into() }]);
    assert_eq!(selected(&text("Job_Name", "beta")), ["2.head"]);
    assert_eq!(selected(&text("Account_Name", "proj1")), ["2.head"]);
    assert_eq!(selected(&with(vec![Test::Priority { op: Op::Gt, value: 5 }])), ["2.head"]);
    assert_eq!(selected(&with(vec![Test::Rerunable(true)])), ["1.head"]);
    assert_eq!(selected(&with(vec![Test::Array])), ["4[].head"]);
    assert_eq!(selected(&with(vec![Test::Time { attr: "ctime", op: Op::Ge, epoch: 1500 }])), ["2.head"]);
    assert_eq!(
        selected(&with(vec![Test::Time { attr: "Execution_Time", op: Op::Lt, epoch: 1 }])),
        ["1.head", "2.head", "4[].head"],
        "unset times count as 0"
    );
}

#[test]
fn dates() {
    let parts = parse_date("202611220930.15").unwrap();
    assert_eq!(parts, DateParts { year: Some(2026), month: Some(11), day: Some(22), hour: 9, minute: 30, second: 15 });
    assert_eq!(
        parse_date("1200"),
        Some(DateParts { year: None, month: None, day: None, hour: 12, minute: 0, second: 0 })
    );
    assert_eq!(parse_date("2212000").map(|_| ()), None, "odd length");
    for bad in ["", "2460", "1299", "abcd", "12:00", "1200.1", "1332001200"] {
        assert_eq!(parse_date(bad), None, "{bad}");
    }
    assert_eq!(parse_date("9911221200").unwrap().year, Some(1999));
}
