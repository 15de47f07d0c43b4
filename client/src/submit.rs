//! What qsub and qalter share: the [`Failure`] a submission ends with (message, caret detail,
//! exit code), the check of one `-l` value and its caret display, `-o`/`-e` paths made
//! absolute, `-a` date-times, and sending a job to the server (`SubmitJob`, handled by
//! `server/src/handlers/submit_job.rs`). Commands import this file, never each other.

use crate::conn::Connection;
use crate::exit;
use job::resources::{parse_list, ResourceError, ResourceErrorKind};
use job::{JobSpec, ResourceRequest};
use proto::{ClientRequest, ServerReply};
use std::path::{Path, PathBuf};

/// A failure with the message for stderr (without the `qsub: ` or `qalter: ` prefix) and the
/// exit code.
pub struct Failure {
    pub message: String,
    /// Printed verbatim after the message (the input and a caret under the bad token).
    pub detail: Option<String>,
    pub code: u8,
}

pub(crate) fn fail(code: u8, message: impl Into<String>) -> Failure {
    Failure { message: message.into(), detail: None, code }
}

/// Parses one `-l` value and checks each resource's value on its own, so an error can name the
/// line it came from. Unknown resource names are left for the server to refuse, and
/// combinations of resources (which a single `-l` line may not show) for the whole request.
pub(crate) fn check_resources(value: &str) -> Result<Vec<(String, String)>, ResourceError> {
    let pairs = parse_list(value)?;
    match ResourceRequest::from_list(&pairs) {
        Err(error) if matches!(error.kind, ResourceErrorKind::Syntax | ResourceErrorKind::BadValue) => Err(error),
        _ => Ok(pairs),
    }
}

/// `illegal -l value <reason>:` (after an optional header line naming the directive), then the
/// input and a caret under the bad token, as OpenPBS prints `-l` errors.
pub(crate) fn caret_failure(code: u8, header: Option<String>, error: &ResourceError) -> Failure {
    let reason = format!("illegal -l value {}:", error.message);
    let message = match header {
        Some(header) => format!("{header}\n{reason}"),
        None => reason,
    };
    Failure { message, detail: Some(error.caret_display()), code }
}

/// `path` as given if absolute, else joined to `cwd`.
pub(crate) fn absolute(cwd: &Path, path: &str) -> PathBuf {
    if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    }
}

/// `-o`/`-e`: `[host:]path` made absolute against the submit directory; an existing
/// directory gets a trailing `/` so the server appends the default file name.
pub(crate) fn std_path(cwd: &Path, host: &str, given: &str) -> String {
    let (host, path) = match given.split_once(':') {
        Some((host, path)) if !host.contains('/') => (host.to_string(), path.to_string()),
        _ => (host.to_string(), given.to_string()),
    };
    let mut full = absolute(cwd, &path).to_string_lossy().into_owned();
    if !full.ends_with('/') && Path::new(&full).is_dir() {
        full.push('/');
    }
    format!("{host}:{full}")
}

/// `-a` as epoch seconds: the date-time read against the local date at `now`; a time already
/// past moves on by the unit left out (`1730` at 18:00 is tomorrow), as OpenPBS's `cvtdate`.
pub fn execution_time(text: &str, now: i64) -> Option<i64> {
    use job::exec_time::Roll;
    use pbslog::time::Tm;
    let today = Tm::local(now);
    let at = job::exec_time::parse(text, (i32::try_from(today.year).ok()?, today.month, today.day))?;
    let mut tm = Tm {
        year: i64::from(at.year),
        month: at.month,
        day: at.day,
        hour: at.hour,
        minute: at.minute,
        second: at.second,
    };
    let first = tm.local_epoch()?;
    if first >= now {
        return Some(first);
    }
    match at.roll {
        Some(Roll::Day) => tm.day += 1,
        Some(Roll::Month) => tm.month += 1,
        Some(Roll::Year) => tm.year += 1,
        // A full date in the past: OpenPBS takes it (the job is eligible at once).
        None => return Some(first),
    }
    tm.local_epoch()
}

/// Sends the job to the server and returns its id.
pub(crate) fn submit(spec: JobSpec) -> Result<String, Failure> {
    submit_on(&mut connect()?, spec)
}

/// Connects to the server, for [`submit_on`].
pub(crate) fn connect() -> Result<Connection, Failure> {
    Connection::open().map_err(|error| fail(error.exit_code(), error.to_string()))
}

/// Sends the job to the server over `conn` and returns its id.
pub(crate) fn submit_on(conn: &mut Connection, spec: JobSpec) -> Result<String, Failure> {
    match conn.request(&ClientRequest::SubmitJob(Box::new(spec))) {
        Ok(ServerReply::JobSubmitted { id }) => Ok(id),
        Ok(ServerReply::Error(error)) => Err(fail(exit::for_error(error.code), error.message)),
        Ok(other) => Err(fail(exit::FAILURE, format!("unexpected reply from server: {other:?}"))),
        Err(error) => Err(fail(error.exit_code(), error.to_string())),
    }
}
