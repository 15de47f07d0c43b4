//! The grammar of `-M` mail recipients (`Mail_Users`), checked at qsub, qalter and again in
//! the server: each recipient ends up as an argument of root's sendmail, so a value that
//! could read as an option there (`-be`, `-X/tmp/f`, `-C...`) or break the message's headers
//! must never be stored (issue 12, item 1).
//!
//! A recipient is `user` or `user@host`: `user` of ASCII letters, digits and `. _ + = % ~ $ -`
//! (`$` because directives are not shell-expanded: `#PBS -M $USER@example.org`, common in real
//! scripts, is stored and shown literally as OpenPBS does; such an address is never handed to
//! sendmail, whose MTA may expand `$` in addresses: [`is_deliverable`]),
//! `host` of dot-separated labels of ASCII letters, digits and `-`; neither starts with `-`,
//! nothing else (no whitespace, no control characters, no quotes, no `|` or `/`), at most
//! [`MAX_ADDRESS_LEN`] bytes, at most [`MAX_RECIPIENTS`] of them.

/// Longest recipient, in bytes.
pub const MAX_ADDRESS_LEN: usize = 256;

/// Most recipients one job may name.
pub const MAX_RECIPIENTS: usize = 64;

/// Why a recipient list is refused; the text follows `illegal -M value: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    #[error("empty recipient")]
    Empty,
    #[error("recipient longer than {MAX_ADDRESS_LEN} bytes")]
    TooLong,
    #[error("{count} recipients, more than the maximum of {MAX_RECIPIENTS}")]
    TooMany { count: usize },
    #[error("{address:?} is not user or user@host")]
    Malformed { address: String },
}

/// Splits a `-M` value at commas (spaces around each recipient are dropped, as OpenPBS does)
/// and checks every recipient.
pub fn parse_list(text: &str) -> Result<Vec<String>, MailError> {
    let list: Vec<String> = text.split(',').map(|item| item.trim_matches([' ', '\t']).to_string()).collect();
    check_list(&list)?;
    Ok(list)
}

/// Checks a list of recipients as stored (`JobSpec::mail_users`, `JobAlteration::mail_users`).
pub fn check_list(list: &[String]) -> Result<(), MailError> {
    if list.len() > MAX_RECIPIENTS {
        return Err(MailError::TooMany { count: list.len() });
    }
    list.iter().try_for_each(|address| check_address(address))
}

/// Checks one recipient: `user` or `user@host`.
pub fn check_address(address: &str) -> Result<(), MailError> {
    if address.is_empty() {
        return Err(MailError::Empty);
    }
    if address.len() > MAX_ADDRESS_LEN {
        return Err(MailError::TooLong);
    }
    let (user, host) = match address.split_once('@') {
        Some((user, host)) => (user, Some(host)),
        None => (address, None),
    };
    let user_ok = is_word(user, |c| c.is_ascii_alphanumeric() || "._+=%~$-".contains(c));
    let host_ok =
        host.is_none_or(|host| host.split('.').all(|label| is_word(label, |c| c.is_ascii_alphanumeric() || c == '-')));
    if user_ok && host_ok {
        Ok(())
    } else {
        Err(MailError::Malformed { address: address.to_string() })
    }
}

/// Whether a stored recipient may be handed to sendmail: of the grammar, and without `$` (an
/// MTA such as Exim expands `$` in some address paths; CVE-2019-10149 ran commands through a
/// recipient's `${run{...}}`, which the grammar's lack of braces already refuses).
pub fn is_deliverable(address: &str) -> bool {
    check_address(address).is_ok() && !address.contains('$')
}

/// Non-empty, not starting with `-`, every character allowed.
fn is_word(text: &str, allowed: impl Fn(char) -> bool) -> bool {
    !text.is_empty() && !text.starts_with('-') && text.chars().all(allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_and_addresses_pass() {
        for good in [
            "alice",
            "alice@example.org",
            "first.last+tag@mail.example-1.org",
            "a_b=c%d~e@h",
            "x-y@h",
            "$USER@umich.edu",
        ] {
            assert_eq!(check_address(good), Ok(()), "{good}");
        }
        assert_eq!(parse_list("a@x, b ,c@y.z").unwrap(), ["a@x", "b", "c@y.z"]);
        assert!(is_deliverable("alice@example.org"));
        assert!(!is_deliverable("$USER@umich.edu"), "stored and shown, never mailed");
        assert!(!is_deliverable("-be"));
    }

    #[test]
    fn options_whitespace_controls_and_odd_characters_are_refused() {
        let bad = [
            "-be", "-X/tmp/f", "-C/etc/x", "--", "x@-h", "x@h..org", "x@", "@h", "a b", "a\tb", "a\nb", "a\0b",
            "a\u{7f}", "|cmd", "/tmp/f", "a\"b", "a'b", "a<b>", "a;b", "a@b@c", "é@h", "$(id)", "`id`",
        ];
        for address in bad {
            assert!(matches!(check_address(address), Err(MailError::Malformed { .. })), "{address:?}");
        }
        assert_eq!(check_address(""), Err(MailError::Empty));
        assert!(parse_list("x@example.org,-be").is_err());
        assert!(parse_list("x@example.org,").is_err());
    }

    #[test]
    fn length_and_count_are_bounded() {
        let longest = format!("{}@h", "u".repeat(MAX_ADDRESS_LEN - 2));
        assert_eq!(check_address(&longest), Ok(()));
        assert_eq!(check_address(&format!("u{longest}")), Err(MailError::TooLong));
        let list = vec!["u".to_string(); MAX_RECIPIENTS];
        assert_eq!(check_list(&list), Ok(()));
        let list = vec!["u".to_string(); MAX_RECIPIENTS + 1];
        assert_eq!(check_list(&list), Err(MailError::TooMany { count: MAX_RECIPIENTS + 1 }));
    }
}
