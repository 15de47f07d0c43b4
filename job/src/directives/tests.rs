//! `extract` against pbs-reference section 1: the stop rule, prefixes, tokenising,
//! continuation, CRLF and unmatched quotes.

use super::*;

/// The words of each directive, one `|`-joined line per directive.
fn words(script: &str, prefix: &str) -> Vec<String> {
    let directives = extract(script, prefix).unwrap_or_else(|e| panic!("{script:?}: {e}"));
    directives.iter().map(|directive| directive.words.join("|")).collect()
}

#[test]
fn reference_example() {
    let script = "#!/bin/bash\n\
                  #PBS -N first\n   \
                  #PBS -l walltime=10:00\n\
                  # just a comment\n\
                  echo hi\n\
                  #PBS -q other\n";
    insta::assert_debug_snapshot!(extract(script, "#PBS").unwrap());
}

#[test]
fn stop_rule() {
    let cases: &[(&str, &[&str])] = &[
        ("#PBS -N a\necho hi\n#PBS -q b\n", &["-N|a"]),
        ("#!/bin/sh\n\n   \n\t\n#PBS -N a\n", &["-N|a"]),
        (": comment line\n#PBS -N a\n", &["-N|a"]),
        (" : indented colon is executable\n#PBS -N a\n", &[]),
        (" #!/bin/sh indented is a comment\n#PBS -N a\n", &["-N|a"]),
        ("# comment\n  # indented comment\n#PBS -N a\n", &["-N|a"]),
        ("#pbs -N lower\n#PBS -N a\n", &["-N|a"]),
        ("x=1\n#PBS -N a\n", &[]),
        ("#PBS -N a\n#PBS -l mem=1gb\n\n#PBS -q q\nset -e\n#PBS -N ignored", &["-N|a", "-l|mem=1gb", "-q|q"]),
        ("", &[]),
        ("\n\n", &[]),
        ("#PBS", &[""]),
        ("#PBS\n", &[""]),
    ];
    for (script, expected) in cases {
        assert_eq!(words(script, "#PBS"), *expected, "{script:?}");
    }
}

#[test]
fn prefix_is_a_plain_prefix() {
    let script = "   #PBS -N x\n\t#PBS-q fast\n#PBSfoo\n";
    let directives = extract(script, "#PBS").unwrap();
    let seen: Vec<(usize, usize, &str)> = directives.iter().map(|d| (d.line, d.column, d.text.as_str())).collect();
    assert_eq!(seen, vec![(1, 8, " -N x"), (2, 6, "-q fast"), (3, 5, "foo")]);
    assert_eq!(directives[1].words, vec!["-q", "fast"]);
}

#[test]
fn other_prefixes() {
    assert_eq!(words("#MY -N a\n#PBS -N b\n", "#MY"), vec!["-N|a"]);
    // A prefix that does not start with `#`: directives are still recognised before the
    // first executable line, and the directive check comes first.
    assert_eq!(words("DIR -N a\n#PBS -N b\nDIR -q c\necho\nDIR -N d\n", "DIR"), vec!["-N|a", "-q|c"]);
    assert_eq!(words("#PBS -N a\n", ""), Vec::<String>::new());
    assert_eq!(words("é -N a\n", "é"), vec!["-N|a"]);
}

#[test]
fn trailing_words_are_kept_for_the_client() {
    assert_eq!(words("#PBS -N job # my comment\n", "#PBS"), vec!["-N|job|#|my|comment"]);
}

#[test]
fn quoting_and_escapes() {
    let script = "#PBS -N 'my job'\n#PBS -v \"A=1,B=2\"\n#PBS -N a\\ b\n";
    assert_eq!(words(script, "#PBS"), vec!["-N|my job", "-v|A=1,B=2", "-N|a b"]);
}

#[test]
fn continuation_lines() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "#PBS -l nodes=2:ppn=2,\\\nwalltime=01:00:00\n",
            &["-l|nodes=2:ppn=2,walltime=01:00:00"],
            " -l nodes=2:ppn=2,walltime=01:00:00",
        ),
        ("#PBS -l nodes=2,\\  \t\nwalltime=1\n", &["-l|nodes=2,walltime=1"], " -l nodes=2,walltime=1"),
        ("#PBS -N a \\\n-q b\\\n  -m n\n", &["-N|a|-q|b|-m|n"], " -N a -q b  -m n"),
        ("#PBS -N a\\\\\n#PBS -q b\n", &["-N|a\\", "-q|b"], " -N a\\\\"),
        ("#PBS -N a\\", &["-N|a"], " -N a"),
        ("#PBS -N a\\\n", &["-N|a"], " -N a"),
        ("#PBS -N \\\necho hi\n#PBS -q b\n", &["-N|echo|hi", "-q|b"], " -N echo hi"),
    ];
    for (script, expected, first_text) in cases {
        assert_eq!(words(script, "#PBS"), *expected, "{script:?}");
        assert_eq!(extract(script, "#PBS").unwrap()[0].text, *first_text, "{script:?}");
    }
    let directives = extract("#PBS -N a\\\nb\n#PBS -q c\n", "#PBS").unwrap();
    assert_eq!(directives.iter().map(|d| d.line).collect::<Vec<_>>(), vec![1, 3]);
}

#[test]
fn continuation_of_comments_is_not_joined() {
    // Only directive lines continue: a comment ending in a backslash does not swallow the
    // next line.
    assert_eq!(words("# note \\\n#PBS -N a\n", "#PBS"), vec!["-N|a"]);
}

#[test]
fn crlf_is_refused_with_the_first_line() {
    let cases =
        [("#PBS -N a\r\necho\n", 1), ("#!/bin/sh\n#PBS -N a\necho hi\r\n", 3), ("a\nb\nc\r\nd\r\n", 3), ("\r\n", 1)];
    for (script, line) in cases {
        assert_eq!(extract(script, "#PBS"), Err(DirectiveError::CrLf { line }), "{script:?}");
        assert_eq!(extract(script, ""), Err(DirectiveError::CrLf { line }), "{script:?}");
    }
    // A lone CR is not a CRLF line ending.
    assert_eq!(words("#PBS -N a\rb\n", "#PBS"), vec!["-N|a|b"]);
    assert_eq!(words("#PBS -N a\r", "#PBS"), vec!["-N|a"]);
}

#[test]
fn unmatched_quotes() {
    let cases = [
        ("#PBS -N 'x\n", 1, 9, '\''),
        ("#!/bin/sh\n  #PBS -N \"x\n", 2, 11, '"'),
        ("#PBS -N a \\\n-q 'b\n", 2, 4, '\''),
        ("#PBS -N é 'x\n", 1, 11, '\''),
    ];
    for (script, line, column, quote) in cases {
        match extract(script, "#PBS") {
            Err(DirectiveError::UnmatchedQuote { line: l, column: c, quote: q, .. }) => {
                assert_eq!((l, c, q), (line, column, quote), "{script:?}")
            }
            other => panic!("{script:?}: {other:?}"),
        }
    }
    // After the stop, quotes in `#PBS` comments do not matter.
    assert_eq!(words("echo\n#PBS -N 'x\n", "#PBS"), Vec::<String>::new());
}

#[test]
fn error_messages() {
    let scripts = ["#PBS -N a\r\n", "#!/bin/sh\n#PBS -N 'my job\n", "#PBS -l mem=1gb,\\\n  software=\"x\n"];
    let text: String = scripts.iter().map(|script| format!("{}\n", extract(script, "#PBS").unwrap_err())).collect();
    insta::assert_snapshot!(text);
}
