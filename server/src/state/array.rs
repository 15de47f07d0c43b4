//! Job arrays in the server's state: how many subjobs of each array are in each state, and
//! the array parent's own state, which follows from them (Q until a subjob starts, then B;
//! F once every subjob is X).
//!
//! Owns: [`ArrayCounts`], kept exact by `ServerState::insert_job`, `transition` and
//! `remove_finished_job`, [`ServerState::expand_ranges`] (subjob range ids, bounded by the
//! state), and [`ServerState::settle_arrays`], which moves parents after their
//! subjobs changed and persists them (handing each parent that moved to `depend::job_changed`),
//! recording the `Ended` notice of an array that began and is over (its E record and mail; the
//! subjobs' own S and E records come from their own starts and ends).
//! Must not: schedule or touch subjobs itself.

use super::ServerState;
use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::records::StoreOp;
use ::job::JobKey;
use job::array::{ArrayError, RangeId, MAX_ARRAY_SIZE};
use job::id::ArrayPart;
use job::{JobEvent, JobState};
use proto::error::{ErrorCode, RequestError};
use std::collections::HashSet;

/// Subjobs of one array by state, in `array_state_count`'s terms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArrayCounts {
    /// Q, H or W: not started (or requeued).
    pub queued: u32,
    /// R.
    pub running: u32,
    /// E.
    pub exiting: u32,
    /// X (or F): over.
    pub expired: u32,
}

impl ArrayCounts {
    fn bucket(&mut self, state: JobState) -> &mut u32 {
        match state {
            JobState::Queued | JobState::Held | JobState::Waiting => &mut self.queued,
            JobState::Running | JobState::Suspended => &mut self.running,
            JobState::Exiting => &mut self.exiting,
            JobState::Finished | JobState::Expired | JobState::Begun => &mut self.expired,
        }
    }

    /// Counts a subjob in `state`.
    pub(super) fn add(&mut self, state: JobState) {
        *self.bucket(state) += 1;
    }

    /// Stops counting a subjob in `state`.
    pub(super) fn remove(&mut self, state: JobState) {
        let bucket = self.bucket(state);
        *bucket = bucket.saturating_sub(1);
    }

    /// All subjobs.
    pub fn total(&self) -> u32 {
        self.queued + self.running + self.exiting + self.expired
    }

    /// Subjobs holding nodes (what `%max` limits).
    pub fn active(&self) -> u32 {
        self.running + self.exiting
    }

    /// OpenPBS `array_state_count` (with its trailing blank).
    pub fn state_count_text(&self) -> String {
        format!("Queued:{} Running:{} Exiting:{} Expired:{} ", self.queued, self.running, self.exiting, self.expired)
    }
}

impl ServerState {
    /// The keys of array `parent_key`'s subjobs, by index.
    pub fn subjob_keys(&self, parent_key: JobKey) -> Vec<JobKey> {
        self.jobs.range(parent_key.subjob_range()).map(|(key, _)| *key).collect()
    }

    /// The job ids a request names, with each subjob range id (`123[1-3]`, pbs-reference 5.1)
    /// replaced by its subjobs' ids. A range naming an index its array does not have, or not
    /// naming an array, is one `Unknown Job Id` error (and selects nothing).
    ///
    /// Bounded by the state, not by the request: a subjob several ranges name is listed once,
    /// and the ranges together may name at most [`MAX_ARRAY_SIZE`] plus the number of jobs
    /// (counted before anything is expanded, overlaps counted twice); a range past that is
    /// refused with `Invalid request` and expands to nothing.
    pub fn expand_ranges(&self, ids: &[String]) -> Vec<Result<String, RequestError>> {
        let mut expanded = Vec::new();
        let mut budget = (MAX_ARRAY_SIZE + self.jobs.len()) as u64;
        let mut listed = HashSet::new();
        for text in ids {
            let Some(range) = job::array::parse_range_id(text) else {
                expanded.push(Ok(text.clone()));
                continue;
            };
            match self.range_keys(text, range, &mut budget) {
                Ok(keys) => expanded.extend(
                    keys.into_iter().filter(|key| listed.insert(*key)).map(|key| Ok(self.jobs[&key].id.to_string())),
                ),
                Err(error) => expanded.push(Err(error)),
            }
        }
        expanded
    }

    /// The subjob keys of one range id `text`, taking its count from `budget` first.
    fn range_keys(
        &self,
        text: &str,
        range: Result<RangeId, ArrayError>,
        budget: &mut u64,
    ) -> Result<Vec<JobKey>, RequestError> {
        let unknown = || RequestError::with_detail(ErrorCode::UnknownJobId, text);
        let range = range.map_err(|_| unknown())?;
        let parent_key = self.find_job(&range.parent).map_err(|_| unknown())?;
        if self.jobs[&parent_key].id.array != Some(ArrayPart::Parent) {
            return Err(unknown());
        }
        let Some(left) = budget.checked_sub(range.count) else {
            let message = format!(
                "{}: the subjob ranges name more than {} subjobs",
                ErrorCode::InvalidRequest.text(),
                MAX_ARRAY_SIZE + self.jobs.len()
            );
            return Err(RequestError::new(ErrorCode::InvalidRequest, format!("{message} ({text})")));
        };
        *budget = left;
        let keys: Vec<JobKey> = range.indices().iter().map(|index| parent_key.subjob(*index)).collect();
        match keys.iter().all(|key| self.jobs.contains_key(key)) {
            true => Ok(keys),
            false => Err(unknown()),
        }
    }

    /// The subjobs a qsig or qrerun naming `text` reaches (OpenPBS `req_signaljob`,
    /// `req_rerunjob`): `None` when `text` names neither a subjob range nor an array parent (it
    /// is then one job). A range id gives its subjobs (errors as [`Self::expand_ranges`]); a
    /// parent gives all its subjobs once it has begun (`B`), `Job has finished` once it is over,
    /// and `Request invalid for state of job` before. The caller picks those in the right state.
    pub fn array_targets(&self, text: &str) -> Option<Result<Vec<JobKey>, RequestError>> {
        if job::array::parse_range_id(text).is_some() {
            let ids = self.expand_ranges(&[text.to_string()]);
            return Some(ids.into_iter().map(|id| id.and_then(|id| self.find_job(&id))).collect());
        }
        let key = self.find_job(text).ok()?;
        let parent = &self.jobs[&key];
        if parent.id.array != Some(ArrayPart::Parent) {
            return None;
        }
        Some(match parent.state {
            JobState::Begun => Ok(self.subjob_keys(key)),
            state if state.is_finished() => Err(RequestError::with_detail(ErrorCode::JobFinished, &parent.id)),
            _ => Err(RequestError::with_detail(ErrorCode::BadState, &parent.id)),
        })
    }

    /// A finished array's exit status (OpenPBS `chk_array_doneness`: 2 if a subjob ended with a
    /// negative status, else 1 if one ended with a positive one, else 0) and its first start.
    fn array_end(&self, parent_key: JobKey) -> (i32, Option<i64>) {
        let subjobs: Vec<&super::Job> = self.subjob_keys(parent_key).iter().map(|key| &*self.jobs[key]).collect();
        let statuses: Vec<i32> = subjobs.iter().filter_map(|job| job.exit_status).collect();
        let exit_status = if statuses.iter().any(|status| *status < 0) {
            2
        } else {
            i32::from(statuses.iter().any(|status| *status > 0))
        };
        (exit_status, subjobs.iter().filter_map(|job| job.times.stime).min())
    }

    /// The subjob counts of array `parent_key` (all zero if it has none).
    pub fn array_counts(&self, parent_key: JobKey) -> ArrayCounts {
        self.arrays.get(&parent_key).cloned().unwrap_or_default()
    }

    /// Moves the parents of arrays whose subjobs changed since the last call: B once a
    /// subjob holds nodes, F once every subjob is over. Persists the parents it changed.
    /// Called after every handler (`Shared::apply`), so a parent changes in the same commit as
    /// the subjob that moved it.
    /// A parent that moved is handed to `depend::job_changed` (its dependents may be released
    /// or deleted, which may move other arrays: settled again until nothing moves).
    pub fn settle_arrays(&mut self, out: &mut Outbox, now: i64) {
        while !self.touched_arrays.is_empty() {
            for parent_key in self.settle_touched(out, now) {
                crate::state::depend::job_changed(self, out, parent_key, now);
            }
        }
    }

    /// One round of [`ServerState::settle_arrays`]; returns the parents that moved.
    fn settle_touched(&mut self, out: &mut Outbox, now: i64) -> Vec<JobKey> {
        let mut moved = Vec::new();
        for parent_key in std::mem::take(&mut self.touched_arrays) {
            let Some(parent) = self.jobs.get(&parent_key) else { continue };
            if parent.id.array != Some(ArrayPart::Parent) || parent.state.is_finished() {
                continue;
            }
            let counts = self.array_counts(parent_key);
            let event = if counts.total() > 0 && counts.expired == counts.total() {
                if parent.state == JobState::Begun {
                    JobEvent::Finish
                } else {
                    JobEvent::Delete
                }
            } else if counts.active() > 0 && parent.state != JobState::Begun {
                JobEvent::Begin
            } else {
                continue;
            };
            let ended = (event == JobEvent::Finish).then(|| self.array_end(parent_key));
            let Ok(parent) = self.transition(parent_key, event, now) else {
                tracing::error!(job_key = %parent_key, ?event, "array parent cannot follow its subjobs");
                continue;
            };
            if event != JobEvent::Begin {
                parent.times.obittime = Some(now);
            }
            if let Some((exit_status, first_start)) = ended {
                // OpenPBS `chk_array_doneness`: a begun array's end is an E record (and mail),
                // with its start (the first subjob's) and exit status; the parent itself keeps
                // neither, so `qstat` shows it as before.
                let mut record = parent.clone();
                record.exit_status = Some(exit_status);
                record.times.stime = first_start;
                out.notice(NoticeKind::Ended, &record, now);
            }
            tracing::info!(job_id = %parent.id, state = %parent.state.letter(), "array parent follows its subjobs");
            out.persist(StoreOp::UpdateJob(Box::new(parent.clone())));
            moved.push(parent_key);
        }
        moved
    }
}
