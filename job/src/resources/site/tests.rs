//! Unit tests of the site-resource table: types, flags, names, values and amounts.

use super::*;

fn def(name: &str, kind: ResourceType, flags: &str) -> ResourceDef {
    ResourceDef { name: name.into(), kind, flags: ResourceFlags::parse(flags, name, kind).unwrap() }
}

#[test]
fn flags_parse_and_print_in_openpbs_order() {
    for (word, shown) in [("nh", "hn"), ("hn", "hn"), ("fh", "hf"), ("q", "q"), ("", ""), ("mhri", "")] {
        match ResourceFlags::parse(word, "r", ResourceType::Long) {
            Ok(flags) => assert_eq!(flags.word(), shown, "{word}"),
            Err(error) => assert_eq!(word, "mhri", "{word}: {error}"),
        }
    }
    assert_eq!(ResourceFlags::parse("hqnim", "r", ResourceType::Size).unwrap().word(), "hqnim");
}

#[test]
fn inconsistent_flags_get_openpbs_texts() {
    let cases = [
        ("n", ResourceType::Long, "Erroneous to have flag 'n' without 'h' on resource \"r\"."),
        ("hnf", ResourceType::Long, "Erroneous to have flag 'n' and 'f' on resource \"r\"."),
        ("ir", ResourceType::Long, "Erroneous to have flag 'i' and 'r' on resource \"r\"."),
        (
            "q",
            ResourceType::String,
            "Erroneous to have flag 'n', 'f', or 'q' on resource \"r\" which is type string, string_array, or boolean.",
        ),
        (
            "hn",
            ResourceType::Boolean,
            "Erroneous to have flag 'n', 'f', or 'q' on resource \"r\" which is type string, string_array, or boolean.",
        ),
    ];
    for (word, kind, text) in cases {
        assert_eq!(
            ResourceFlags::parse(word, "r", kind),
            Err(WordsError::InconsistentFlags(text.to_string())),
            "{word}"
        );
    }
    let unknown = WordsError::Invalid("flag 'x' is not one of h, q, n, f, i, r, m".to_string());
    assert_eq!(ResourceFlags::parse("x", "r", ResourceType::Long), Err(unknown));
}

#[test]
fn names_follow_openpbs_grammar_and_our_bound() {
    for good in ["gpu_type", "a", "x-1", &"a".repeat(MAX_RESOURCE_NAME)] {
        assert_eq!(check_name(good), Ok(()), "{good}");
    }
    for bad in ["", "1gpu", "_x", "gpu.type", "gpu type", "a=b", &"a".repeat(MAX_RESOURCE_NAME + 1)] {
        assert!(check_name(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_table_is_bounded_and_refuses_builtins_and_twins() {
    let mut site = SiteResources::default();
    assert_eq!(site.define(def("mem", ResourceType::Size, "")), Err(DefineError::Exists("mem".into())));
    for index in 0..MAX_SITE_RESOURCES {
        site.define(def(&format!("r{index}"), ResourceType::Long, "")).unwrap();
    }
    assert_eq!(site.define(def("r0", ResourceType::Long, "")), Err(DefineError::Exists("r0".into())));
    assert_eq!(site.define(def("one_more", ResourceType::Long, "")), Err(DefineError::Full));
    assert!(site.remove("r0").is_some());
    assert_eq!(site.define(def("one_more", ResourceType::Long, "")), Ok(()));
}

#[test]
fn values_are_checked_and_normalised_per_type() {
    let cases = [
        (ResourceType::Boolean, "true", Ok("True")),
        (ResourceType::Boolean, "F", Ok("False")),
        (ResourceType::Boolean, "maybe", Err(())),
        (ResourceType::Long, "-5", Ok("-5")),
        (ResourceType::Long, "5x", Err(())),
        (ResourceType::Size, "8GB", Ok("8gb")),
        (ResourceType::Size, "8.5gb", Err(())),
        (ResourceType::Float, "0.5", Ok("0.5")),
        (ResourceType::Float, "inf", Err(())),
        (ResourceType::Float, "1e308", Err(())),
        (ResourceType::String, "a100", Ok("a100")),
        (ResourceType::String, "", Err(())),
        (ResourceType::String, "a\nb", Err(())),
        (ResourceType::StringArray, "a, b", Ok("a,b")),
        (ResourceType::StringArray, "a,,b", Err(())),
    ];
    for (kind, value, expected) in cases {
        let got = def("r", kind, "").normalize(value).map_err(|_| ());
        assert_eq!(got, expected.map(str::to_string), "{kind:?} {value:?}");
    }
    let long = "x".repeat(MAX_SITE_VALUE);
    assert!(def("r", ResourceType::String, "").normalize(&long).is_ok());
    assert!(def("r", ResourceType::String, "").normalize(&format!("{long}x")).is_err());
}

#[test]
fn chunks_and_nodes_meet_in_words() {
    let pcmem = def("pcmem", ResourceType::Size, "h");
    assert_eq!(pcmem.match_keys("4gb"), [format!("pcmem>={}", 4u64 << 30)]);
    assert_eq!(pcmem.node_words("8gb"), ["pcmem=8gb".to_string(), format!("pcmem:{}", 8u64 << 30)]);
    let big = def("big", ResourceType::Boolean, "h");
    assert_eq!((big.match_keys("False"), big.node_words("False")), (vec!["!big".to_string()], vec![]));
    assert_eq!(def("f", ResourceType::StringArray, "h").node_words("a,b"), ["f=a", "f=b"]);
    assert_eq!(chunk_item(&format!("pcmem>={}", 1024)), "pcmem=1024");
}

#[test]
fn amounts_in_counted_units() {
    assert_eq!(def("r", ResourceType::Size, "").amount("2kb"), Some(2048));
    assert_eq!(def("r", ResourceType::Float, "").amount("1.5"), Some(1500));
    assert_eq!(def("r", ResourceType::Long, "").amount("-1"), None);
    assert_eq!(def("r", ResourceType::String, "").amount("1"), None);
    assert_eq!(def("r", ResourceType::Size, "").show_amount(60 << 30), "62914560kb");
    assert_eq!(def("r", ResourceType::Size, "").show_amount(1000), "1000b");
    assert_eq!(def("r", ResourceType::Float, "").show_amount(1500), "1.5");
    assert_eq!(def("r", ResourceType::Float, "").show_amount(2000), "2");
    assert_eq!(def("r", ResourceType::Long, "").show_amount(u64::MAX), u64::MAX.to_string());
}
