//! What one job may carry (issue 4, bounded inputs): the script's size, the number of
//! `Variable_List` variables (`-v`/`-V` plus `PBS_O_*`) and their total size. qsub checks them
//! before sending and the server again (it never trusts the client); a job over a limit is
//! refused whole and nothing is stored.
//!
//! The script limit plays the part of OpenPBS's server attribute `jobscript_max_size` (default
//! 100 MB there, refused with PBSE_JOBSCRIPTMAXSIZE "jobscript size exceeded the
//! jobscript_max_size"); ours is fixed and lower, so that a job always fits in one frame
//! (`proto::MAX_FRAME`, 16 MiB). TORQUE has no script limit of its own. The variable limits
//! are ours: a job's environment must also fit the kernel's `ARG_MAX` when the mom starts it.
//! Directives need no limit of their own: they are lines of the script. Array sizes are
//! [`crate::array::MAX_ARRAY_SIZE`]'s; `+` parts of a chunk list and MPI processes are
//! [`crate::resources::MAX_CHUNK_SPECS`]'s and [`crate::resources::MAX_MPIPROCS`]'s; chunk
//! counts are bounded against the cluster by the server (`sched::can_ever_run`).

use crate::JobSpec;

/// Largest job script, in bytes.
pub const MAX_SCRIPT_SIZE: usize = 8 * 1024 * 1024;

/// Most `Variable_List` variables one job may carry.
pub const MAX_VARIABLES: usize = 4096;

/// Largest total size of a job's `Variable_List` (`name=value` texts), in bytes.
pub const MAX_VARIABLE_BYTES: usize = 1024 * 1024;

/// Why a job is over a limit. The texts are what qsub prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("jobscript size exceeded the jobscript_max_size ({size} bytes, the maximum is {MAX_SCRIPT_SIZE})")]
    Script { size: usize },
    #[error("Variable_List: {count} variables, more than the maximum of {MAX_VARIABLES}")]
    VariableCount { count: usize },
    #[error("Variable_List: {bytes} bytes, more than the maximum of {MAX_VARIABLE_BYTES}")]
    VariableBytes { bytes: usize },
}

/// Checks a script's size alone (qsub, before reading a file whose size it knows).
pub fn check_script_size(size: usize) -> Result<(), LimitError> {
    if size > MAX_SCRIPT_SIZE {
        return Err(LimitError::Script { size });
    }
    Ok(())
}

/// Checks every limit of this module on `spec`.
pub fn check(spec: &JobSpec) -> Result<(), LimitError> {
    check_script_size(spec.script.len())?;
    let count = spec.variables.len();
    if count > MAX_VARIABLES {
        return Err(LimitError::VariableCount { count });
    }
    let bytes: usize = spec.variables.iter().map(|(name, value)| name.len() + value.len() + 1).sum();
    if bytes > MAX_VARIABLE_BYTES {
        return Err(LimitError::VariableBytes { bytes });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        JobSpec {
            variables: vec![("PBS_O_HOME".to_string(), "/root".to_string())].into(),
            submit_host: "h".to_string(),
            ..JobSpec::new("STDIN", "true\n")
        }
    }

    #[test]
    fn a_job_at_the_limits_passes_and_one_byte_or_variable_more_is_refused() {
        let mut job = spec();
        assert_eq!(check(&job), Ok(()));
        job.script = "x".repeat(MAX_SCRIPT_SIZE);
        assert_eq!(check(&job), Ok(()));
        job.script.push('x');
        assert_eq!(check(&job), Err(LimitError::Script { size: MAX_SCRIPT_SIZE + 1 }));

        let mut job = spec();
        for n in 1..MAX_VARIABLES {
            job.variables.push(&format!("V{n}"), "1");
        }
        assert_eq!(check(&job), Ok(()));
        job.variables.push("ONE_MORE", "1");
        assert_eq!(check(&job), Err(LimitError::VariableCount { count: MAX_VARIABLES + 1 }));

        let mut job = spec();
        job.variables.push("BIG", &"v".repeat(MAX_VARIABLE_BYTES));
        assert!(matches!(check(&job), Err(LimitError::VariableBytes { .. })));
    }

    #[test]
    fn messages_name_the_limit() {
        let text = LimitError::Script { size: 9_000_000 }.to_string();
        assert_eq!(text, "jobscript size exceeded the jobscript_max_size (9000000 bytes, the maximum is 8388608)");
        assert!(LimitError::VariableCount { count: 5000 }.to_string().contains("maximum of 4096"));
    }
}
