//! How long a simulated job "runs": the `sleep N` commands of its script, else its walltime,
//! else nothing. Benchmarks submit `sleep N` scripts; nothing else in a script is looked at.
//!
//! Owns: that rule ([`work_millis`]). Pure: no clock, files or processes.

/// The longest time one simulated job may claim to work, so a script cannot overflow the
/// mom's clock: a year.
pub const MAX_WORK_SECS: u64 = 365 * 24 * 3600;

/// What a simulated job does: the sum of the `sleep N` lines of `script` (`N` in seconds,
/// whole or decimal, or with an `s`/`m`/`h`/`d` suffix as GNU sleep takes it) when it has
/// one, else `walltime`, else 0; at most [`MAX_WORK_SECS`], in milliseconds.
pub fn work_millis(script: &str, walltime: Option<u64>) -> u64 {
    let sleeps: Vec<u64> = script.lines().filter_map(sleep_millis).collect();
    let millis = if sleeps.is_empty() {
        walltime.unwrap_or(0).saturating_mul(1000)
    } else {
        sleeps.iter().fold(0u64, |sum, millis| sum.saturating_add(*millis))
    };
    millis.min(MAX_WORK_SECS * 1000)
}

/// The milliseconds of one line that is a `sleep` command (`sleep 5`, `  sleep 1.5 # nap`,
/// `/bin/sleep 2m`); `None` for any other line.
fn sleep_millis(line: &str) -> Option<u64> {
    // The first command of the line: up to a comment, `;`, `&&`, `||`, `|` or `&`.
    let code = line.split(['#', ';', '&', '|']).next().unwrap_or_default();
    let mut words = code.split_whitespace();
    let command = words.next()?;
    if command != "sleep" && !command.ends_with("/sleep") {
        return None;
    }
    let mut total = 0u64;
    for word in words {
        total = total.saturating_add(duration_millis(word)?);
    }
    Some(total)
}

/// One `sleep` operand: `5`, `0.5`, `2m`, `1h`, `1d` (GNU sleep's suffixes).
fn duration_millis(word: &str) -> Option<u64> {
    let (number, unit) = match word.char_indices().last()? {
        (at, 's') => (&word[..at], 1.0),
        (at, 'm') => (&word[..at], 60.0),
        (at, 'h') => (&word[..at], 3600.0),
        (at, 'd') => (&word[..at], 86400.0),
        _ => (word, 1.0),
    };
    let seconds: f64 = number.parse().ok().filter(|value: &f64| value.is_finite() && *value >= 0.0)?;
    let millis = (seconds * unit * 1000.0).round();
    Some(if millis >= u64::MAX as f64 { u64::MAX } else { millis as u64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_are_summed() {
        assert_eq!(work_millis("#!/bin/sh\nsleep 1\n", None), 1000);
        assert_eq!(work_millis("sleep 1\necho hi\n  /bin/sleep 2.5 # nap\n", Some(100)), 3500);
        assert_eq!(work_millis("sleep 2m\nsleep 1h\n", None), 3_720_000);
        assert_eq!(work_millis("sleep 1 2\n", None), 3000, "GNU sleep adds its operands");
        assert_eq!(work_millis("sleep 3; echo done\n", None), 3000);
    }

    #[test]
    fn without_a_sleep_the_walltime_counts() {
        assert_eq!(work_millis("echo hi\n# sleep 9\n", Some(7)), 7000);
        assert_eq!(work_millis("echo hi\n", None), 0);
        assert_eq!(work_millis("sleeper 4\nsleep $T\n", Some(2)), 2000, "not a sleep of a number");
    }

    #[test]
    fn work_is_bounded() {
        assert_eq!(work_millis("sleep 99999999999999999999\n", None), MAX_WORK_SECS * 1000);
        assert_eq!(work_millis("", Some(u64::MAX)), MAX_WORK_SECS * 1000);
        assert_eq!(work_millis("sleep -1\nsleep nan\nsleep inf\n", Some(3)), 3000);
    }
}
