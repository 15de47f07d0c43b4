//! What `qstat` and `pbsnodes` print: pure functions from status records
//! ([`proto::JobStatus`], [`proto::NodeStatus`]) to the exact text of OpenPBS, or of TORQUE
//! where the server's flavor is `torque`, as described in sections 6 and 8.4 of the PBS
//! reference.
//!
//! Owns: every byte of those displays (columns, truncation marks, folding, JSON layout, time
//! stamp text). Must not: talk to the server, read the clock or the environment, filter or
//! sort jobs, or write to stdout; callers pass the records in display order and print the
//! returned `String` as it is.
//!
//! Layout:
//! - [`default`]: `qstat` (6.1);
//! - [`alternate`]: `qstat -a`, `-n`, `-1`, `-s` (6.2, 6.3);
//! - [`full`]: `qstat -f` (6.4);
//! - [`json`]: `qstat -f -F json` (6.5), printed by [`cjson`] in cJSON's layout;
//! - [`nodes`]: `pbsnodes -a` and `-l` (8.4);
//! - [`torque`]: the TORQUE layouts of the default and alternate tables (6.1, 6.2);
//! - [`xml`]: `qstat -x` in the torque flavor, TORQUE's XML (6.6);
//! - [`tracejob`]: `tracejob` (8.5);
//! - [`qmgr`]: `qmgr list` / `print`; [`queues`]: `qstat -Q`, `-q`, `-B` (6.8);
//! - [`columns`], [`time`]: shared cell and time-stamp helpers; [`listed`]: a job as the
//!   tables read it, a status record or a row of a listing answered in rows.
//!
//! Time stamps: functions that show them come in two forms, `f(..)` using local time through
//! [`ctime_text`] (what the commands call) and `f_with(.., time)` taking any [`TimeText`];
//! tests use [`ctime_text_utc`] so snapshots do not depend on the machine's time zone.

pub mod alternate;
pub mod cjson;
pub mod columns;
pub mod default;
pub mod dsv;
pub mod full;
pub mod json;
pub mod listed;
pub mod nodes;
pub mod qmgr;
pub mod queues;
pub mod time;
pub mod torque;
pub mod tracejob;
pub mod xml;

#[cfg(test)]
mod samples;

pub use alternate::{qstat_alternate, AltOptions};
pub use columns::{short_job_id, truncate};
pub use default::qstat_default;
pub use dsv::qstat_dsv_with;
pub use full::{qstat_full, qstat_full_flavored_with, qstat_full_with};
pub use json::{qstat_json, qstat_json_with};
pub use listed::{Listed, RowJob};
pub use nodes::{pbsnodes_full, pbsnodes_full_with, pbsnodes_marked};
pub use time::{ctime_text, ctime_text_utc, TimeText};
pub use torque::{qstat_alternate_torque, qstat_default_torque};
pub use xml::qstat_xml;
