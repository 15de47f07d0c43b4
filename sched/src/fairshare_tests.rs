//! Tests of `fairshare.rs`: the file, percentages, usage factor, unknown entities, decay, bounds.

use super::*;

const LAB: &str = "\
# name id parent shares
physics 10 root 60
chemistry 20 root 40
alice 11 physics 1
bob 12 physics 3
carol 21 chemistry 1
";

fn no_usage(_: &str) -> f64 {
    0.0
}

fn close(left: f64, right: f64) -> bool {
    (left - right).abs() < 1e-9
}

#[test]
fn percentages_follow_shares_down_the_tree() {
    let tree = ShareTree::parse(LAB).unwrap();
    let standings = tree.standings(&no_usage, []);
    let perc = |name: &str| standings.get(name).unwrap().share.perc;
    // The root's children: physics 60, chemistry 40, unknown 1.
    assert!(close(perc("physics"), 60.0 / 101.0));
    assert!(close(perc("bob"), 60.0 / 101.0 * 0.75));
    assert!(close(perc("carol"), 40.0 / 101.0));
    assert!(close(perc("unknown"), 1.0 / 101.0));
    // No usage: every factor is 1.
    assert!(close(standings.get("alice").unwrap().share.factor, 1.0));
}

#[test]
fn usage_lowers_the_factor_as_openpbs_computes_it() {
    let tree = ShareTree::parse(LAB).unwrap();
    let usage = |name: &str| match name {
        "alice" => 30.0,
        "bob" => 10.0,
        "carol" => 60.0,
        _ => 0.0,
    };
    let standings = tree.standings(&usage, []);
    let physics = standings.get("physics").unwrap();
    assert!(close(physics.usage, 40.0));
    assert!(close(physics.share.usage, 0.4));
    let alice = standings.get("alice").unwrap();
    // u = 0.3; factor of usage = 0.3 + (0.4 - 0.3) * 0.25.
    assert!(close(alice.share.usage, 0.325));
    assert!(close(alice.share.factor, (-0.325 / alice.share.perc).exp2()));
    let bob = standings.get("bob").unwrap();
    assert!(bob.share.factor > alice.share.factor);
    assert_eq!(alice.path, vec!["TREEROOT", "physics", "alice"]);
    assert_eq!((alice.group, alice.id), (10, 11));
}

#[test]
fn entities_outside_the_file_share_unknown() {
    let tree = ShareTree::parse(LAB).unwrap();
    let usage = |name: &str| if name == "dave" { 5.0 } else { 0.0 };
    let standings = tree.standings(&usage, ["dave", "erin", "dave", "alice"]);
    let dave = standings.get("dave").unwrap();
    let erin = standings.get("erin").unwrap();
    assert_eq!(dave.path, vec!["TREEROOT", "unknown", "dave"]);
    assert!(close(dave.share.perc, 0.5 / 101.0));
    assert!(close(erin.share.perc, dave.share.perc));
    assert!(erin.share.factor > dave.share.factor);
    assert!(close(standings.get("unknown").unwrap().usage, 5.0));
    assert!(standings.get("frank").is_none());
}

#[test]
fn without_a_file_users_share_equally_and_the_heavier_goes_later() {
    let tree = ShareTree::default();
    let usage = |name: &str| if name == "alice" { 10.0 } else { 0.0 };
    let standings = tree.standings(&usage, ["alice", "bob"]);
    let alice = standings.get("alice").unwrap().share;
    let bob = standings.get("bob").unwrap().share;
    assert!(close(alice.perc, 0.5) && close(bob.perc, 0.5));
    // OpenPBS's usage factor counts part of the parent's usage: bob pays for alice a little.
    assert!(close(bob.factor, 0.5));
    assert!(close(alice.factor, 0.25));
}

#[test]
fn unknown_shares_come_from_its_line_and_zero_shares_give_factor_zero() {
    let tree = ShareTree::parse("unknown 1 root 0\nlab 2 root 1\nalice 3 lab 1\n").unwrap();
    let standings = tree.standings(&no_usage, ["bob"]);
    assert_eq!(standings.get("bob").unwrap().share.factor, 0.0);
    assert_eq!(standings.get("alice").unwrap().share.factor, 1.0);
}

#[test]
fn rows_are_depth_first_with_unknown_last() {
    let tree = ShareTree::parse(LAB).unwrap();
    let standings = tree.standings(&no_usage, ["zed"]);
    let names: Vec<(&str, usize)> = standings.rows.iter().map(|row| (row.name.as_str(), row.depth)).collect();
    assert_eq!(
        names,
        vec![
            ("TREEROOT", 0),
            ("physics", 1),
            ("alice", 2),
            ("bob", 2),
            ("chemistry", 1),
            ("carol", 2),
            ("unknown", 1),
            ("zed", 2)
        ]
    );
}

#[test]
fn bad_lines_name_their_number() {
    let cases = [
        ("a 1 root\n", 1),
        ("a 1 root 1\n\n# c\nb x root 1\n", 4),
        ("a 1 root 1\na 2 root 1\n", 2),
        ("a 1 nowhere 1\n", 1),
        ("a 1 root -1\n", 1),
        ("a 1 root 1000001\n", 1),
        ("x 1 unknown 1\n", 1),
        ("root 1 root 1\n", 1),
        ("a 1 root 1 extra\n", 1),
    ];
    for (text, line) in cases {
        match ShareTree::parse(text) {
            Err(ShareTreeError::Line { line: got, .. }) => assert_eq!(got, line, "{text:?}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
    let error = ShareTree::parse("a 1 nowhere 1\n").unwrap_err().to_string();
    assert_eq!(error, "resgroup: error on line 1: parent nowhere of a does not exist");
}

#[test]
fn bound_file_size_line_length_entities_and_depth() {
    assert_eq!(ShareTree::parse(&" ".repeat(MAX_FILE_BYTES + 1)), Err(ShareTreeError::TooLarge));
    let long = format!("{} 1 root 1\n", "a".repeat(MAX_LINE_BYTES));
    assert!(matches!(ShareTree::parse(&long), Err(ShareTreeError::Line { line: 1, .. })));
    let many: String = (0..=MAX_ENTITIES).map(|index| format!("u{index} 1 root 1\n")).collect();
    assert!(matches!(ShareTree::parse(&many), Err(ShareTreeError::Line { line, .. }) if line == MAX_ENTITIES + 1));
    let fits: String = (0..MAX_ENTITIES).map(|index| format!("u{index} 1 root 1\n")).collect();
    assert_eq!(ShareTree::parse(&fits).unwrap().len(), MAX_ENTITIES + 2);
    let chain = |depth: usize| -> String {
        (0..depth)
            .map(|level| {
                format!("g{level} 1 {} 1\n", if level == 0 { "root".to_string() } else { format!("g{}", level - 1) })
            })
            .collect()
    };
    assert!(ShareTree::parse(&chain(MAX_DEPTH)).is_ok());
    assert!(
        matches!(ShareTree::parse(&chain(MAX_DEPTH + 1)), Err(ShareTreeError::Line { line, .. }) if line == MAX_DEPTH + 1)
    );
}

#[test]
fn bad_usage_counts_zero() {
    let tree = ShareTree::default();
    let usage = |name: &str| match name {
        "a" => f64::NAN,
        "b" => -5.0,
        "c" => f64::INFINITY,
        _ => 1.0,
    };
    let standings = tree.standings(&usage, ["a", "b", "c", "d"]);
    assert!(close(standings.get("TREEROOT").unwrap().usage, 1.0));
    for row in &standings.rows {
        assert!(row.share.factor.is_finite() && row.share.usage.is_finite(), "{row:?}");
    }
}

#[test]
fn decay_halves_per_decay_time() {
    assert!(close(decay(8.0, 3600, 3600, 0.5), 4.0));
    assert!(close(decay(8.0, 7200, 3600, 0.5), 2.0));
    assert!(close(decay(8.0, 1800, 3600, 0.5), 8.0 * 0.5f64.sqrt()));
    assert_eq!(decay(8.0, 0, 3600, 0.5), 8.0);
    assert_eq!(decay(8.0, -10, 3600, 0.5), 8.0);
    assert_eq!(decay(8.0, 10, 0, 0.5), 8.0);
    assert_eq!(decay(8.0, 10, 1, 2.0), 8.0);
    assert_eq!(decay(f64::NAN, 10, 1, 0.5), 0.0);
    assert!(decay(8.0, i64::MAX, 1, 0.5) >= 0.0);
}
