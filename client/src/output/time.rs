//! Time stamps as `qstat -f` and `pbsnodes` print them: the `ctime(3)` form
//! `Tue Nov 21 22:26:00 2023` (day of month space padded, no trailing newline).
//!
//! Owns: which attributes are time stamps, and turning epoch seconds into text (`ctime(3)`, and
//! the `Est Start` cell of `qstat -T`), in local time
//! (what the commands show) or in UTC (what tests use, so snapshots do not depend on the
//! machine's time zone). Must not: read the clock, print, or know any display layout.
//!
//! Every formatter in this module tree that shows time stamps takes a [`TimeText`] function;
//! the commands pass [`ctime_text`], tests pass [`ctime_text_utc`].

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
    pbslog::time::Tm::local(epoch).ctime()
}

/// `ctime(3)` text of `epoch` in UTC, computed without the C library. Deterministic, so
/// tests and snapshots use it.
pub fn ctime_text_utc(epoch: i64) -> String {
    pbslog::time::Tm::utc(epoch).ctime()
}

/// Breaks epoch seconds down: [`pbslog::time::Tm::local`] for the commands,
/// [`pbslog::time::Tm::utc`] for tests.
pub type BreakDown = fn(i64) -> pbslog::time::Tm;

/// The clock `qstat -T` compares estimated start times with.
#[derive(Debug, Clone, Copy)]
pub struct EstClock {
    /// The time of the query, epoch seconds.
    pub now: i64,
    pub tm: BreakDown,
}

impl PartialEq for EstClock {
    fn eq(&self, other: &Self) -> bool {
        self.now == other.now && std::ptr::fn_addr_eq(self.tm, other.tm)
    }
}

impl Eq for EstClock {}

/// Seconds in a week: starts closer than this show their weekday.
const SEC_IN_WEEK: i64 = 604_800;

/// The `Est Start` cell of `qstat -T` (OpenPBS `cnvt_est_start_time`, not wide): `--` when
/// there is no estimate or it is already past, `?` for an unknown one (`0`), `HH:MM` today,
/// `Fr 14` (weekday's first two letters and hour) within a week, `Dec` within the year, the
/// year within 5 years, else `>5yrs`.
pub fn est_start_text(estimate: Option<&str>, clock: EstClock) -> String {
    let Some(estimate) = estimate else { return "--".to_string() };
    let start = estimate.trim().parse::<i64>().unwrap_or(0);
    if start == 0 {
        return "?".to_string();
    }
    if start < clock.now {
        return "--".to_string();
    }
    let (now, at) = ((clock.tm)(clock.now), (clock.tm)(start));
    // ctime(3) words: weekday, month name.
    let words = at.ctime();
    let mut names = words.split_whitespace();
    let (weekday, month) = (names.next().unwrap_or_default(), names.next().unwrap_or_default());
    if (now.year, now.month, now.day) == (at.year, at.month, at.day) {
        format!("{:02}:{:02}", at.hour, at.minute)
    } else if start - clock.now < SEC_IN_WEEK {
        format!("{} {:02}", &weekday[..weekday.len().min(2)], at.hour)
    } else if now.year == at.year {
        month.to_string()
    } else if at.year - now.year < 5 {
        at.year.to_string()
    } else {
        ">5yrs".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimated_start_cells_follow_openpbs() {
        // Tue Nov 21 22:26:00 2023 UTC.
        let clock = EstClock { now: 1_700_605_560, tm: pbslog::time::Tm::utc };
        let cell = |offset: i64| est_start_text(Some(&(1_700_605_560 + offset).to_string()), clock);
        assert_eq!(est_start_text(None, clock), "--");
        assert_eq!(est_start_text(Some("0"), clock), "?");
        assert_eq!(cell(-1), "--", "already past");
        assert_eq!(cell(0), "22:26");
        assert_eq!(cell(30 * 60), "22:56");
        assert_eq!(cell(2 * 3600), "We 00", "tomorrow: weekday and hour");
        assert_eq!(cell(6 * 86_400), "Mo 22");
        assert_eq!(cell(8 * 86_400), "Nov");
        assert_eq!(cell(39 * 86_400), "Dec");
        assert_eq!(cell(60 * 86_400), "2024");
        assert_eq!(cell(4 * 365 * 86_400), "2027");
        assert_eq!(cell(5 * 365 * 86_400 + 86_400), ">5yrs");
    }

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
