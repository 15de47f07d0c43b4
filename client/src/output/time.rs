//! Time stamps as `qstat -f` and `pbsnodes` print them: the `ctime(3)` form
//! `Tue Nov 21 22:26:00 2023` (day of month space padded, no trailing newline).
//!
//! Owns: which attributes are time stamps, and turning epoch seconds into text, in local time
//! (what the commands show) or in UTC (what tests use, so snapshots do not depend on the
//! machine's time zone). Must not: read the clock, print, or know any display layout.
//!
//! Every formatter in this module tree that shows time stamps takes a [`TimeText`] function;
//! the commands pass [`ctime_text`], tests pass [`ctime_text_utc`].

use std::sync::Once;

/// Turns epoch seconds into display text. [`ctime_text`] (local time) for the commands,
/// [`ctime_text_utc`] for deterministic tests.
pub type TimeText = fn(i64) -> String;

/// Full attribute names (`name` or `name.resource`) whose values the server sends as epoch
/// seconds and the commands show as `ctime(3)` text. Job time stamps from section 6.4 of the
/// PBS reference (TORQUE's `start_time`, `comp_time`, `checkpoint_time` too), plus the node
/// time stamps `pbsnodes` converts.
const TIME_STAMPS: &[&str] = &[
    "ctime",
    "etime",
    "mtime",
    "qtime",
    "stime",
    "obittime",
    "Execution_Time",
    "start_time",
    "comp_time",
    "checkpoint_time",
    "estimated.start_time",
    "last_state_change_time",
    "last_used_time",
];

/// Whether the attribute with this full name (`ctime`, `Resource_List.walltime`) is a time
/// stamp sent as epoch seconds.
pub fn is_time_stamp(full_name: &str) -> bool {
    TIME_STAMPS.contains(&full_name)
}

/// The display text of an attribute value: time stamps become `ctime(3)` text through `time`,
/// everything else is returned unchanged. A time stamp that is not a decimal number is shown
/// as sent. OpenPBS shows `estimated.start_time = 0` as `UNKNOWN`; so do we.
pub fn display_value(full_name: &str, value: &str, time: TimeText) -> String {
    if !is_time_stamp(full_name) {
        return value.to_string();
    }
    match value.trim().parse::<i64>() {
        Ok(0) if full_name == "estimated.start_time" => "UNKNOWN".to_string(),
        Ok(epoch) => time(epoch),
        Err(_) => value.to_string(),
    }
}

/// `ctime(3)` text of `epoch` in the local time zone (`TZ`, else `/etc/localtime`), without
/// the trailing newline. Falls back to the UTC text if the C library cannot convert it.
pub fn ctime_text(epoch: i64) -> String {
    static TZSET: Once = Once::new();
    // SAFETY: tzset has no arguments; it only (re)reads TZ into libc's static state. Once
    // makes sure we call it a single time, before the first localtime_r.
    TZSET.call_once(|| unsafe { tzset() });
    // Irrefutable where time_t is 64 bits; on 32-bit targets late dates fall back to UTC.
    #[allow(irrefutable_let_patterns)]
    let Ok(seconds) = libc::time_t::try_from(epoch) else {
        return ctime_text_utc(epoch);
    };
    // SAFETY: an all-zero `tm` is a valid value (plain integers and a null zone pointer).
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers refer to live locals; localtime_r is the reentrant variant.
    let converted = unsafe { libc::localtime_r(&seconds, &mut tm) };
    if converted.is_null() {
        return ctime_text_utc(epoch);
    }
    let broken = Broken {
        year: i64::from(tm.tm_year) + 1900,
        month: tm.tm_mon as usize,
        day: i64::from(tm.tm_mday),
        hour: i64::from(tm.tm_hour),
        minute: i64::from(tm.tm_min),
        second: i64::from(tm.tm_sec),
        weekday: tm.tm_wday as usize,
    };
    broken.ctime()
}

/// `ctime(3)` text of `epoch` in UTC, computed without the C library. Deterministic, so
/// tests and snapshots use it.
pub fn ctime_text_utc(epoch: i64) -> String {
    let days = epoch.div_euclid(86_400);
    let second_of_day = epoch.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let broken = Broken {
        year,
        month: (month - 1) as usize,
        day,
        hour: second_of_day / 3600,
        minute: second_of_day % 3600 / 60,
        second: second_of_day % 60,
        // 1970-01-01 was a Thursday (weekday 4, Sunday = 0).
        weekday: (days + 4).rem_euclid(7) as usize,
    };
    broken.ctime()
}

extern "C" {
    /// POSIX `tzset(3)`; the `libc` crate does not declare it for Unix targets.
    fn tzset();
}

/// A broken-down time, fields as in C's `struct tm` (month 0-11, weekday 0 = Sunday).
struct Broken {
    year: i64,
    month: usize,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    weekday: usize,
}

impl Broken {
    /// The `asctime` layout: `%.3s %.3s%3d %.2d:%.2d:%.2d %d`.
    fn ctime(&self) -> String {
        const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
        const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        format!(
            "{} {}{:3} {:02}:{:02}:{:02} {}",
            DAYS.get(self.weekday).unwrap_or(&"???"),
            MONTHS.get(self.month).unwrap_or(&"???"),
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.year
        )
    }
}

/// Year, month (1-12) and day (1-31) of a day count since 1970-01-01 in the proleptic
/// Gregorian calendar (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_text_matches_the_reference_example() {
        // Section 6.5: timestamp 1700605560 is "Tue Nov 21 22:26:00 2023".
        assert_eq!(ctime_text_utc(1_700_605_560), "Tue Nov 21 22:26:00 2023");
    }

    #[test]
    fn day_of_month_is_space_padded() {
        assert_eq!(ctime_text_utc(1_698_796_800), "Wed Nov  1 00:00:00 2023");
    }

    #[test]
    fn utc_text_handles_epoch_leap_days_and_negative_times() {
        assert_eq!(ctime_text_utc(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime_text_utc(951_782_400), "Tue Feb 29 00:00:00 2000");
        assert_eq!(ctime_text_utc(-1), "Wed Dec 31 23:59:59 1969");
        assert_eq!(ctime_text_utc(4_102_444_799), "Thu Dec 31 23:59:59 2099");
    }

    #[test]
    fn local_text_has_the_ctime_shape() {
        // The zone of the test machine is unknown; check the layout, not the values.
        let text = ctime_text(1_700_605_560);
        assert_eq!(text.len(), 24, "{text:?}");
        assert_eq!(&text[3..4], " ");
        assert_eq!(&text[7..8], " ");
        assert_eq!(&text[13..14], ":");
        assert!(text.ends_with(" 2023"), "{text:?}");
    }

    #[test]
    fn only_time_stamps_are_converted() {
        assert_eq!(display_value("qtime", "1700605560", ctime_text_utc), "Tue Nov 21 22:26:00 2023");
        assert_eq!(display_value("obittime", "0", ctime_text_utc), "Thu Jan  1 00:00:00 1970");
        assert_eq!(display_value("Resource_List.walltime", "01:00:00", ctime_text_utc), "01:00:00");
        assert_eq!(display_value("session_id", "1700605560", ctime_text_utc), "1700605560");
        assert_eq!(display_value("ctime", "soon", ctime_text_utc), "soon");
        assert_eq!(display_value("estimated.start_time", "0", ctime_text_utc), "UNKNOWN");
    }
}
