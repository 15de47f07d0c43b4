//! Broken-down times in the local zone (what PBS writes into its logs and the accounting
//! file names) and back. The calendar and the zone are `jiff`'s: the local zone is `TZ`, else
//! `/etc/localtime`, read from the system's tz database by jiff itself (no libc `tzset`, which
//! is not safe beside other threads); [`Tm::utc`] is the deterministic variant for tests.

use std::path::Path;
use std::sync::OnceLock;

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{Span, Timestamp};

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

impl Tm {
    /// `epoch` in the local time zone (UTC when the local zone cannot be told).
    pub fn local(epoch: i64) -> Tm {
        match Timestamp::from_second(epoch) {
            Ok(instant) => Tm::of(local_zone().to_datetime(instant)),
            Err(_) => Tm::utc(epoch),
        }
    }

    /// `epoch` in UTC, whatever the local zone. Outside jiff's range (years -9999 to 9999),
    /// which no PBS time reaches, the nearest end of it.
    pub fn utc(epoch: i64) -> Tm {
        let nearest = if epoch < 0 { Timestamp::MIN } else { Timestamp::MAX };
        Tm::of(TimeZone::UTC.to_datetime(Timestamp::from_second(epoch).unwrap_or(nearest)))
    }

    fn of(datetime: DateTime) -> Tm {
        Tm {
            year: i64::from(datetime.year()),
            month: datetime.month() as u32,
            day: datetime.day() as u32,
            hour: datetime.hour() as u32,
            minute: datetime.minute() as u32,
            second: datetime.second() as u32,
        }
    }

    /// The civil date-time these fields name, out-of-range fields carried over as `mktime(3)`
    /// does (month 13 is January of the next year, February 30 is March 1 or 2, second 60 is
    /// the next minute); `None` outside jiff's years.
    fn normalized(&self) -> Option<DateTime> {
        let months = self.year.checked_mul(12)?.checked_add(i64::from(self.month))? - 1;
        let year = i16::try_from(months.div_euclid(12)).ok()?;
        let month = (months.rem_euclid(12) + 1) as i8;
        let first = Date::new(year, month, 1).ok()?.to_datetime(jiff::civil::Time::midnight());
        let span = Span::new()
            .try_days(i64::from(self.day) - 1)
            .and_then(|span| span.try_hours(i64::from(self.hour)))
            .and_then(|span| span.try_minutes(i64::from(self.minute)))
            .and_then(|span| span.try_seconds(i64::from(self.second)))
            .ok()?;
        first.checked_add(span).ok()
    }

    /// Epoch seconds of this local time (as `mktime` with daylight saving time guessed: a time
    /// that happens twice is the earlier, one skipped by a clock change is moved past it).
    pub fn local_epoch(&self) -> Option<i64> {
        let zoned = self.normalized()?.to_zoned(local_zone().clone()).ok()?;
        Some(zoned.timestamp().as_second())
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

    /// Day of the week, 0 = Sunday (from the calendar date; Sunday outside jiff's years).
    pub fn weekday(&self) -> u32 {
        self.normalized().map_or(0, |datetime| datetime.weekday().to_sunday_zero_offset() as u32)
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

/// The local zone, found once per process. Without `TZ` it is the TZif file `/etc/localtime`,
/// read directly: jiff's `TimeZone::system()` would name the zone by looking the link's target
/// up in its database, whose first look-up lists every file under `/usr/share/zoneinfo` (some
/// 40 directories, about 1.5 ms: most of a short `qstat -f`). A `TZ` is jiff's to read, in any
/// of its forms (a name, a path, a POSIX rule); UTC when neither can be read.
fn local_zone() -> &'static TimeZone {
    static ZONE: OnceLock<TimeZone> = OnceLock::new();
    ZONE.get_or_init(|| zone_from(std::env::var_os("TZ").is_some(), Path::new("/etc/localtime")))
}

fn zone_from(tz_set: bool, localtime: &Path) -> TimeZone {
    let direct = || std::fs::read(localtime).ok().and_then(|data| TimeZone::tzif("localtime", &data).ok());
    let jiffs = || TimeZone::try_system().unwrap_or(TimeZone::UTC);
    if tz_set {
        jiffs()
    } else {
        direct().unwrap_or_else(jiffs)
    }
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

    #[test]
    fn local_zone_read_directly() {
        // A zone with summer time, read as /etc/localtime would be: its offsets, not UTC's.
        let paris = zone_from(false, Path::new("/usr/share/zoneinfo/Europe/Paris"));
        let summer = Timestamp::from_second(1_719_792_000).unwrap(); // 2024-07-01 00:00 UTC
        let winter = Timestamp::from_second(1_736_000_000).unwrap(); // 2025-01-04
        assert_eq!(paris.to_offset(summer).seconds(), 7200);
        assert_eq!(paris.to_offset(winter).seconds(), 3600);
        // What the process uses agrees with jiff's own finding of the system's zone.
        let system = TimeZone::try_system().unwrap_or(TimeZone::UTC);
        assert_eq!(local_zone().to_offset(summer), system.to_offset(summer));
        assert_eq!(local_zone().to_offset(winter), system.to_offset(winter));
    }

    #[test]
    fn calendar_edges() {
        assert_eq!(Tm::utc(0).ctime(), "Thu Jan  1 00:00:00 1970");
        assert_eq!(Tm::utc(-1).pbs_date(), "12/31/1969 23:59:59");
        assert_eq!(Tm::utc(951_782_400).pbs_date(), "02/29/2000 00:00:00", "a leap day");
        assert_eq!(Tm::utc(4_107_542_400).ctime(), "Mon Mar  1 00:00:00 2100", "2100 is no leap year");
        let carried = Tm { year: 2023, month: 13, day: 31, hour: 23, minute: 59, second: 60 };
        assert_eq!(carried.normalized(), Tm::utc(1_706_745_600).normalized(), "Feb 1 2024 00:00:00");
        assert_eq!(Tm { month: 2, day: 30, ..Tm::utc(0) }.weekday(), 1, "February 30 1970 is March 2, a Monday");
    }
}
