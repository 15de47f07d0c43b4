//! Durations (`walltime`, `cput`) per pbs-reference section 3.6: `S`, `M:S`, `H:M:S`,
//! `D:H:M:S`, optional fraction of a second (rounded), fields not range checked.

/// Parses a duration into whole seconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let _ = text;
    unimplemented!("filled in by the parser work")
}

/// Formats seconds as `HH:MM:SS` with at least two hour digits (`120:00:00` allowed).
pub fn format_hms(seconds: u64) -> String {
    format!("{:02}:{:02}:{:02}", seconds / 3600, (seconds / 60) % 60, seconds % 60)
}
