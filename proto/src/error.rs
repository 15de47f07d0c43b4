//! Error codes on the wire, numbered as OpenPBS's `PBSE_*` (pbs-reference section 12), with
//! the texts the commands print. Commands exit with `code % 256`.

use serde::{Deserialize, Serialize};

/// A typed reason the server refused a request. Stable numbers; new codes may be added.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorCode {
    UnknownJobId,
    NoAttribute,
    InvalidRequest,
    PermissionDenied,
    System,
    BadAttributeValue,
    ModifyWhileRunning,
    BadState,
    UnknownQueue,
    QueueNotEnabled,
    BadUser,
    BadGroup,
    UnknownResource,
    ExceedsLimits,
    BadNodeSpec,
    JobFinished,
    ProtocolMismatch,
    UnknownNode,
    BadDepend,
    UnknownSignal,
    NotRerunnable,
    ReadOnlyAttribute,
    QueueExists,
    QueueBusy,
    QueueIncomplete,
    MaxQueued,
    UserLimit,
    NoDefaultQueue,
    NodeExists,
    JobscriptMaxSize,
    /// A site resource is used by a job (qmgr `delete resource`).
    ResourceBusy,
    /// A name defined twice (qmgr `create resource` of an existing name).
    DuplicateEntry,
    /// A chunk names a resource the requester may not ask for (site flag `i` or `r`).
    InvalidSelectResource,
}

impl ErrorCode {
    /// The OpenPBS error number.
    pub fn number(self) -> u32 {
        match self {
            ErrorCode::UnknownJobId => 15001,
            ErrorCode::NoAttribute => 15002,
            ErrorCode::InvalidRequest => 15004,
            ErrorCode::PermissionDenied => 15007,
            ErrorCode::System => 15010,
            ErrorCode::BadAttributeValue => 15014,
            ErrorCode::ModifyWhileRunning => 15015,
            ErrorCode::BadState => 15016,
            ErrorCode::UnknownQueue => 15018,
            ErrorCode::QueueNotEnabled => 15021,
            ErrorCode::BadUser => 15023,
            ErrorCode::BadGroup => 15024,
            ErrorCode::UnknownResource => 15035,
            ErrorCode::ExceedsLimits => 15036,
            ErrorCode::BadNodeSpec => 15089,
            ErrorCode::JobFinished => 15139,
            // PBSE_PROTOCOL in OpenPBS.
            ErrorCode::ProtocolMismatch => 15031,
            // PBSE_UNKNODE.
            ErrorCode::UnknownNode => 15062,
            // PBSE_BADDEPEND.
            ErrorCode::BadDepend => 15054,
            ErrorCode::UnknownSignal => 15013,
            ErrorCode::NotRerunnable => 15038,
            // PBSE_ATTRRO.
            ErrorCode::ReadOnlyAttribute => 15003,
            // PBSE_QUEEXIST.
            ErrorCode::QueueExists => 15025,
            // PBSE_QUEBUSY (PBSE_OBJBUSY in newer OpenPBS).
            ErrorCode::QueueBusy => 15027,
            // PBSE_QUENOEN.
            ErrorCode::QueueIncomplete => 15030,
            // PBSE_MAXQUED.
            ErrorCode::MaxQueued => 15046,
            // PBSE_ENTLIMCT: an entity (per-user) limit of a queue.
            ErrorCode::UserLimit => 15142,
            // PBSE_QUENODFLT.
            ErrorCode::NoDefaultQueue => 15037,
            // PBSE_NODEEXIST.
            ErrorCode::NodeExists => 15063,
            // PBSE_JOBSCRIPTMAXSIZE.
            ErrorCode::JobscriptMaxSize => 15175,
            // PBSE_RESCBUSY.
            ErrorCode::ResourceBusy => 15174,
            // PBSE_DUPLIST.
            ErrorCode::DuplicateEntry => 15055,
            // PBSE_INVALSELECTRESC.
            ErrorCode::InvalidSelectResource => 15108,
        }
    }

    /// The exit code a command uses for this error: the number modulo 256.
    pub fn exit_code(self) -> u8 {
        (self.number() % 256) as u8
    }

    /// OpenPBS's text for the error (`pbse_to_txt`), without the trailing blank some have.
    pub fn text(self) -> &'static str {
        match self {
            ErrorCode::UnknownJobId => "Unknown Job Id",
            ErrorCode::NoAttribute => "Undefined attribute",
            ErrorCode::InvalidRequest => "Invalid request",
            ErrorCode::PermissionDenied => "Unauthorized Request",
            ErrorCode::System => "System error:",
            ErrorCode::BadAttributeValue => "Illegal attribute or resource value",
            ErrorCode::ModifyWhileRunning => "Cannot modify attribute while job running",
            ErrorCode::BadState => "Request invalid for state of job",
            ErrorCode::UnknownQueue => "Unknown queue",
            ErrorCode::QueueNotEnabled => "Queue is not enabled",
            ErrorCode::BadUser => "Bad UID for job execution",
            ErrorCode::BadGroup => "Bad GID for job execution",
            ErrorCode::UnknownResource => "Unknown resource",
            ErrorCode::ExceedsLimits => "Job violates queue and/or server resource limits",
            ErrorCode::BadNodeSpec => "node(s) specification error",
            ErrorCode::JobFinished => "Job has finished",
            ErrorCode::ProtocolMismatch => "Protocol error",
            ErrorCode::UnknownNode => "Unknown node",
            ErrorCode::BadDepend => "Invalid Job Dependency",
            ErrorCode::UnknownSignal => "Unknown/illegal signal name",
            ErrorCode::NotRerunnable => "job is not rerunnable",
            ErrorCode::ReadOnlyAttribute => "Cannot set attribute, read only or insufficient permission",
            ErrorCode::QueueExists => "Queue already exists",
            ErrorCode::QueueBusy => "Cannot delete busy queue",
            ErrorCode::QueueIncomplete => "Cannot enable queue, incomplete definition",
            ErrorCode::MaxQueued => "Maximum number of jobs already in queue",
            ErrorCode::UserLimit => "would exceed queue generic's per-user limit",
            ErrorCode::NoDefaultQueue => "No default queue specified",
            ErrorCode::NodeExists => "Node name already exists",
            ErrorCode::JobscriptMaxSize => "jobscript size exceeded the jobscript_max_size",
            ErrorCode::ResourceBusy => "Resource busy",
            ErrorCode::DuplicateEntry => "Duplicate entry in list",
            ErrorCode::InvalidSelectResource => "Resource invalid in \"select\" specification",
        }
    }
}

/// An error reply: the code and a message naming what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    pub code: ErrorCode,
    /// Full text for the user, e.g. `Unknown Job Id 12.head`.
    pub message: String,
    /// What [`RequestError::with_detail`] put after the code's standard text (usually a job
    /// id), kept so the server can word the message again for its flavor (TORQUE's `Unknown
    /// Job Id Error 12.head`) from the kind and the detail, never by reading the text. Not on
    /// the wire: a decoded error has `None`, and the wire keeps `code` and `message` only.
    #[serde(skip)]
    pub detail: Option<String>,
}

impl RequestError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> RequestError {
        RequestError { code, message: message.into(), detail: None }
    }

    /// The standard text for `code`, followed by `detail` (usually a job id).
    pub fn with_detail(code: ErrorCode, detail: impl std::fmt::Display) -> RequestError {
        let detail = detail.to_string();
        RequestError { code, message: format!("{} {}", code.text(), detail), detail: Some(detail) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_match_reference() {
        assert_eq!(ErrorCode::UnknownJobId.exit_code(), 153);
        assert_eq!(ErrorCode::PermissionDenied.exit_code(), 159);
        assert_eq!(ErrorCode::ExceedsLimits.exit_code(), 188);
        assert_eq!(ErrorCode::UnknownQueue.exit_code(), 170);
        assert_eq!(ErrorCode::JobFinished.exit_code(), 35);
        assert_eq!(ErrorCode::BadNodeSpec.exit_code(), 241);
        assert_eq!(ErrorCode::BadDepend.exit_code(), 206);
        assert_eq!(ErrorCode::ModifyWhileRunning.exit_code(), 167);
        assert_eq!(ErrorCode::NotRerunnable.exit_code(), 190);
        assert_eq!(ErrorCode::UnknownSignal.exit_code(), 165);
        assert_eq!(ErrorCode::QueueNotEnabled.exit_code(), 173);
        assert_eq!(ErrorCode::UserLimit.exit_code(), 38);
    }

    #[test]
    fn the_detail_is_kept_but_not_sent() {
        let error = RequestError::with_detail(ErrorCode::UnknownJobId, "12.head");
        assert_eq!((error.message.as_str(), error.detail.as_deref()), ("Unknown Job Id 12.head", Some("12.head")));
        let wire = serde_json::to_string(&error).unwrap();
        assert_eq!(wire, r#"{"code":"UnknownJobId","message":"Unknown Job Id 12.head"}"#);
        let decoded: RequestError = serde_json::from_str(&wire).unwrap();
        assert_eq!(decoded, RequestError::new(ErrorCode::UnknownJobId, "Unknown Job Id 12.head"));
    }
}
