//! Splitting a directive's text into words like a tiny shell (pbs-reference section 1.2):
//! white space separates words, `'...'` and `"..."` group (quotes removed, nothing escaped
//! inside them), a backslash outside quotes takes the next character literally. No comment
//! handling: `-N job # note` is four words, so the client can warn about the leftovers.

/// An opening quote without its closing partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unmatched {
    /// Byte offset of the opening quote in the text.
    pub offset: usize,
    pub quote: char,
}

/// Splits `text` into words. A lone backslash at the very end stays a literal backslash.
pub(super) fn split(text: &str) -> Result<Vec<String>, Unmatched> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some((_, inner)) if inner == c => break,
                        Some((_, inner)) => word.push(inner),
                        None => return Err(Unmatched { offset, quote: c }),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().map_or('\\', |(_, next)| next));
            }
            c if super::is_blank(c) => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_tiny_shell() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("   \t ", &[]),
            (" -N x", &["-N", "x"]),
            ("-N job # my comment", &["-N", "job", "#", "my", "comment"]),
            ("-l nodes=2:ppn=2", &["-l", "nodes=2:ppn=2"]),
            ("-N 'my job'", &["-N", "my job"]),
            ("-N \"my job\"", &["-N", "my job"]),
            ("-N a'b c'd", &["-N", "ab cd"]),
            ("-N ''", &["-N", ""]),
            ("-v A=\"x,y\",B='1 2'", &["-v", "A=x,y,B=1 2"]),
            ("-N my\\ job", &["-N", "my job"]),
            ("-N \\'x", &["-N", "'x"]),
            ("-N 'a\\b'", &["-N", "a\\b"]),
            ("-N \"it's\"", &["-N", "it's"]),
            ("-N x\\", &["-N", "x\\"]),
            ("\\", &["\\"]),
            ("-N \\\\", &["-N", "\\"]),
            ("-N\tx\x0cy", &["-N", "x", "y"]),
            ("-N é名", &["-N", "é名"]),
        ];
        for (text, expected) in cases {
            assert_eq!(split(text), Ok(expected.iter().map(|w| w.to_string()).collect()), "{text:?}");
        }
    }

    #[test]
    fn unmatched_quotes_point_at_the_opening_quote() {
        let cases =
            [("-N 'x", 3, '\''), ("-N \"x", 3, '"'), ("-N 'a' \"b", 7, '"'), ("é'", 2, '\''), ("-N \"a'", 3, '"')];
        for (text, offset, quote) in cases {
            assert_eq!(split(text), Err(Unmatched { offset, quote }), "{text:?}");
        }
    }
}
