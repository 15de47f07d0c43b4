//! Tests of `formula.rs`: grammar, keywords, Python semantics, errors and bounds.

use super::*;
use crate::tests::{chunk, gpu_chunk, job, request};
use crate::view::FairShare;
use job::Placement;
use proptest::prelude::*;

fn value_of(text: &str) -> f64 {
    let request = request(vec![chunk(2, 3), gpu_chunk(1, 2)], Placement::Free);
    let mut pending = job(1, &request);
    pending.queue_priority = 7;
    pending.priority = -2;
    pending.eligible_time = 600;
    pending.walltime = 3600;
    pending.fairshare = FairShare { perc: 0.25, usage: 0.5, factor: 0.125 };
    Formula::parse(text)
        .unwrap_or_else(|error| panic!("{text}: {error}"))
        .value(&crate::order::formula_inputs(&pending))
}

fn error_of(text: &str) -> String {
    Formula::parse(text).expect_err(text).to_string()
}

#[test]
fn arithmetic_follows_python_precedence() {
    assert_eq!(value_of("1 + 2 * 3"), 7.0);
    assert_eq!(value_of("(1 + 2) * 3"), 9.0);
    assert_eq!(value_of("2 ** 3 ** 2"), 512.0);
    assert_eq!(value_of("-2 ** 2"), -4.0);
    assert_eq!(value_of("2 ** -1"), 0.5);
    assert_eq!(value_of("7 // 2"), 3.0);
    assert_eq!(value_of("-7 // 2"), -4.0);
    assert_eq!(value_of("-7 % 3"), 2.0);
    assert_eq!(value_of("7 % -3"), -2.0);
    assert_eq!(value_of("10 - 2 - 3"), 5.0);
    assert_eq!(value_of("1.5e2 + .5"), 150.5);
    assert_eq!(value_of("--3"), 3.0);
}

#[test]
fn keywords_read_the_job() {
    assert_eq!(value_of("queue_priority"), 7.0);
    assert_eq!(value_of("job_priority"), -2.0);
    assert_eq!(value_of("fairshare_perc"), 0.25);
    assert_eq!(value_of("fair_share_perc"), 0.25);
    assert_eq!(value_of("fairshare_tree_usage"), 0.5);
    assert_eq!(value_of("fairshare_factor"), 0.125);
    assert_eq!(value_of("eligible_time"), 600.0);
    assert_eq!(value_of("ncpus"), 7.0);
    assert_eq!(value_of("ngpus"), 2.0);
    assert_eq!(value_of("walltime"), 3600.0);
    assert_eq!(value_of("ncpus * 2 + eligible_time / 60"), 24.0);
}

#[test]
fn math_functions_as_pythons() {
    assert_eq!(value_of("abs(-3)"), 3.0);
    assert_eq!(value_of("min(3, ncpus, 1)"), 1.0);
    assert_eq!(value_of("max(3, ncpus)"), 7.0);
    assert_eq!(value_of("pow(2, 10)"), 1024.0);
    assert_eq!(value_of("sqrt(16)"), 4.0);
    assert_eq!(value_of("log(8, 2)"), 3.0);
    assert_eq!(value_of("log10(1000)"), 3.0);
    assert_eq!(value_of("floor(2.7) + ceil(2.1)"), 5.0);
    assert!((value_of("exp(1)") - std::f64::consts::E).abs() < 1e-12);
}

#[test]
fn python_errors_value_the_job_zero() {
    for text in ["1 / 0", "5 % 0", "5 // (ncpus - 7)", "sqrt(-1)", "log(0)", "0 ** -1", "(-8) ** 0.5", "10 ** 400"] {
        assert_eq!(value_of(text), 0.0, "{text}");
    }
    // One error anywhere zeroes the whole formula, as OpenPBS's exception does.
    assert_eq!(value_of("100 + 1 / 0"), 0.0);
    assert_eq!(value_of("exp(1000) - exp(1000)"), 0.0);
}

#[test]
fn unknown_words_are_named() {
    assert_eq!(error_of("ncpus + mem"), "Formula contains invalid keyword: mem");
    assert_eq!(error_of("accrue_type"), "Formula contains invalid keyword: accrue_type");
    assert_eq!(error_of("system(1)"), "Formula contains invalid function: system");
    assert_eq!(error_of("__import__(1)"), "Formula contains invalid function: __import__");
}

#[test]
fn malformed_text_is_refused() {
    for text in ["", "   ", "1 +", "(1", "1)", "1 2", "min()", "pow(1)", "sqrt(1, 2)", "1 ; 2", "'a'", "a.b", "1 = 1"] {
        assert!(Formula::parse(text).is_err(), "{text:?} should be refused");
    }
}

#[test]
fn text_is_kept() {
    let formula = Formula::parse(" ncpus*2 ").unwrap();
    assert_eq!(formula.text(), " ncpus*2 ");
}

#[test]
fn bound_text_length() {
    let long = format!("1{}", " ".repeat(MAX_TEXT_BYTES));
    assert!(error_of(&long).contains("longer than"));
    let fits = format!("1{}", " ".repeat(MAX_TEXT_BYTES - 1));
    assert!(Formula::parse(&fits).is_ok());
}

#[test]
fn bound_token_count() {
    let many = vec!["1"; MAX_TOKENS / 2 + 1].join("+");
    assert!(error_of(&many).contains("tokens"));
    let fits = vec!["1"; MAX_TOKENS / 2].join("+");
    assert_eq!(value_of(&fits), (MAX_TOKENS / 2) as f64);
}

#[test]
fn bound_nesting_depth() {
    let deep = format!("{}1{}", "(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
    assert!(error_of(&deep).contains("nested deeper"));
    let minus = format!("{}1", "-".repeat(MAX_DEPTH + 1));
    assert!(error_of(&minus).contains("nested deeper"));
    let calls = format!("{}1{}", "abs(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
    assert!(error_of(&calls).contains("nested deeper"));
    let pow = vec!["1"; MAX_DEPTH + 2].join("**");
    assert!(error_of(&pow).contains("nested deeper"));
    let fits = format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
    assert_eq!(value_of(&fits), 1.0);
}

#[test]
fn bound_call_arguments() {
    let many = format!("max({})", vec!["1"; MAX_ARGS + 1].join(","));
    assert!(error_of(&many).contains("at most"));
    let fits = format!("max({})", vec!["2"; MAX_ARGS].join(","));
    assert_eq!(value_of(&fits), 2.0);
}

proptest! {
    #[test]
    fn parse_never_panics(text in ".{0,200}") {
        let _ = Formula::parse(&text);
    }

    #[test]
    fn parse_of_formula_like_text_never_panics_and_values_are_finite(
        parts in proptest::collection::vec(
            prop_oneof![
                Just("("), Just(")"), Just("+"), Just("-"), Just("*"), Just("/"), Just("//"),
                Just("%"), Just("**"), Just(","), Just("ncpus"), Just("eligible_time"),
                Just("fairshare_factor"), Just("0"), Just("1e308"), Just("2.5"), Just("min("),
                Just("log("), Just("sqrt("), Just("pow("),
            ],
            0..60,
        )
    ) {
        let text = parts.concat();
        if let Ok(formula) = Formula::parse(&text) {
            let request = request(vec![chunk(1, 1)], Placement::Free);
            prop_assert!(formula.value(&crate::order::formula_inputs(&job(1, &request))).is_finite());
        }
    }
}
