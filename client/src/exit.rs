//! The exit codes of every command, in one table (documented in the README; the cases are
//! pinned by `tests/tests/system/errors.rs`):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | generic failure: bad script, directive error, unexpected reply; an illegally formed job id (`abc`, `12[x]`) given to qstat, qdel, qhold, qrls, qalter, qrerun, qsig or qmove; a job tracejob cannot find; qmgr: a failed `list`/`print`, an illegal operation; any pbsnodes failure, usage errors included (as OpenPBS) |
//! | 2 | usage error (unknown option, option without its value, bad option value, missing operand, conflicting options), except pbsnodes; qmgr: a missing or illegal object type |
//! | 3 | cannot reach the server (no pbs.conf, no socket, server not running); qmgr: an illegally formed object name |
//! | 4 | qmgr: syntax error |
//! | 255 | pbs_tmrsh: the command could not be run (bad usage, outside a job, a host not in the job, the mom refused or went away), as ssh reports its own failures |
//! | task's | pbs_tmrsh: the task's exit status (128 + signal when killed); pbsdsh: the worst of its tasks' (1 for any of its own failures, usage errors included, as OpenPBS and TORQUE) |
//! | other | the server refused the request: its PBS error number modulo 256 (the last failing job's or qmgr command's), e.g. 153 Unknown Job Id, 159 Unauthorized Request, 188 resource limits, 170 Unknown queue |

use proto::ErrorCode;
use std::process::ExitCode;

pub const SUCCESS: u8 = 0;
pub const FAILURE: u8 = 1;
pub const USAGE: u8 = 2;
pub const NO_SERVER: u8 = 3;
/// pbs_tmrsh's own failures (ssh's code for them).
pub const LAUNCH_FAILED: u8 = 255;

/// The exit code for a server error.
pub fn for_error(code: ErrorCode) -> u8 {
    code.exit_code()
}

/// Converts a code from the table to a process exit code.
pub fn exit(code: u8) -> ExitCode {
    ExitCode::from(code)
}
