//! Broken-down times in the local zone (what PBS writes into its logs and the accounting
//! file names) and back. Local conversion goes through the C library (`TZ`, else
//! `/etc/localtime`); [`Tm::utc`] is the deterministic variant for tests.

use std::sync::Once;

/// A broken-down time: month 1-12, day 1-31.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tm {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

extern "C" {
    /// POSIX `tzset(3)`; the `libc` crate does not declare it for Unix targets.
    fn tzset();
}

fn init_zone() {
    static TZSET: Once = Once::new();
    // SAFETY: tzset takes no arguments; it only reads TZ into libc's static state, once,
    // before the first localtime_r/mktime.
    TZSET.call_once(|| unsafe { tzset() });
}

impl Tm {
    /// `epoch` in the local time zone (UTC if the C library cannot convert it).
    pub fn local(epoch: i64) -> Tm {
        init_zone();
        #[allow(irrefutable_let_patterns)]
        let Ok(seconds) = libc::time_t::try_from(epoch) else {
            return Tm::utc(epoch);
        };
        // SAFETY: an all-zero `tm` is valid (integers and a null zone pointer).
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers refer to live locals; localtime_r is reentrant.
        if unsafe { libc::localtime_r(&seconds, &mut tm) }.is_null() {
            return Tm::utc(epoch);
        }
        Tm {
            year: i64::from(tm.tm_year) + 1900,
            month: (tm.tm_mon + 1) as u32,
            day: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            minute: tm.tm_min as u32,
            second: tm.tm_sec as u32,
        }
    }

    /// `epoch` in UTC, without the C library.
    pub fn utc(epoch: i64) -> Tm {
        let days = epoch.div_euclid(86_400);
        let second_of_day = epoch.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Tm {
            year,
            month: month as u32,
            day: day as u32,
            hour: (second_of_day / 3600) as u32,
            minute: (second_of_day % 3600 / 60) as u32,
            second: (second_of_day % 60) as u32,
        }
    }

    /// Epoch seconds of this local time (`mktime`, daylight saving time guessed), if valid.
    pub fn local_epoch(&self) -> Option<i64> {
        init_zone();
        // SAFETY: as in `local`.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        tm.tm_year = i32::try_from(self.year - 1900).ok()?;
        tm.tm_mon = self.month as i32 - 1;
        tm.tm_mday = self.day as i32;
        tm.tm_hour = self.hour as i32;
        tm.tm_min = self.minute as i32;
        tm.tm_sec = self.second as i32;
        tm.tm_isdst = -1;
        // SAFETY: tm is a live, initialised local.
        let epoch = unsafe { libc::mktime(&mut tm) };
        (epoch != -1).then_some(epoch as i64)
    }

    /// `MM/DD/YYYY HH:MM:SS`, the time stamp of PBS logs and accounting records.
    pub fn pbs_date(&self) -> String {
        format!(
            "{:02}/{:02}/{:04} {:02}:{:02}:{:02}",
            self.month, self.day, self.year, self.hour, self.minute, self.second
        )
    }

    /// `YYYYMMDD`, the name of a day's log or accounting file.
    pub fn file_day(&self) -> String {
        format!("{:04}{:02}{:02}", self.year, self.month, self.day)
    }

    /// Day of the week, 0 = Sunday (from the calendar date; 1970-01-01 was a Thursday).
    pub fn weekday(&self) -> u32 {
        (days_from_civil(self.year, i64::from(self.month), i64::from(self.day)) + 4).rem_euclid(7) as u32
    }

    /// The `ctime(3)` text without its newline, as `qstat -f` shows time stamps:
    /// `Tue Nov 21 22:26:00 2023` (`%.3s %.3s%3d %.2d:%.2d:%.2d %d`, day space padded).
    pub fn ctime(&self) -> String {
        const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
        const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        format!(
            "{} {}{:3} {:02}:{:02}:{:02} {}",
            DAYS[self.weekday() as usize],
            MONTHS.get((self.month as usize).wrapping_sub(1)).unwrap_or(&"???"),
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.year
        )
    }

    /// Parses `MM/DD/YYYY HH:MM:SS` (an optional `.ffffff` after the seconds is ignored).
    pub fn parse_pbs_date(text: &str) -> Option<Tm> {
        let (date, time) = text.trim().split_once(' ')?;
        let mut date = date.split('/');
        let month = date.next()?.parse().ok()?;
        let day = date.next()?.parse().ok()?;
        let year = date.next()?.parse().ok()?;
        let time = time.split('.').next()?;
        let mut time = time.split(':');
        let hour = time.next()?.parse().ok()?;
        let minute = time.next()?.parse().ok()?;
        let second = time.next()?.parse().ok()?;
        let valid = (1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24 && minute < 60 && second < 61;
        valid.then_some(Tm { year, month, day, hour, minute, second })
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Year, month (1-12) and day of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    (year_of_era + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_forms() {
        let tm = Tm::utc(1_700_605_560);
        assert_eq!(tm.pbs_date(), "11/21/2023 22:26:00");
        assert_eq!(tm.file_day(), "20231121");
        assert_eq!(Tm::parse_pbs_date("11/21/2023 22:26:00"), Some(tm));
        assert_eq!(Tm::parse_pbs_date("11/21/2023 22:26:00.123456"), Some(tm));
        assert_eq!(Tm::parse_pbs_date("13/21/2023 22:26:00"), None);
        assert_eq!(Tm::parse_pbs_date("garbage"), None);
    }

    #[test]
    fn local_round_trip() {
        let epoch = 1_700_605_560;
        assert_eq!(Tm::local(epoch).local_epoch(), Some(epoch));
    }
}
