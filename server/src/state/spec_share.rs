//! Specs shared between jobs: a user who submits the same script with the same options again
//! and again (a loop of `qsub job.sh`) gets one `JobSpec` in memory for all those jobs instead
//! of one each (its `Variable_List` alone is most of a job's heap). Only a plain job's spec is
//! shared (an array's subjobs already share their parent's, and `alter_job/array.rs` tells
//! them apart by pointer), and only with the same owner's last one; a change to a job's spec
//! goes through `Arc::make_mut`, which copies a shared spec first, so sharing is invisible.
//! The resource request parsed from an equal spec is shared with it when equal too (a qalter
//! replaces a job's request, never changes it in place).

use super::{Job, ServerState, StdPath};
use job::{JobSpec, ResourceRequest};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The spec, request and output and error paths of each owner's last plain job (by uid): one
/// per user, so bounded by the users.
pub(super) type LastSpecs = BTreeMap<u32, (Arc<JobSpec>, Arc<ResourceRequest>, [StdPath; 2])>;

impl ServerState {
    /// `job` with its spec replaced by its owner's last one when they are equal; otherwise
    /// its spec becomes the owner's last. Jobs with a script in memory or an array are left as
    /// they are.
    pub(super) fn share_spec(&mut self, mut job: Job) -> Job {
        if job.spec.array.is_some() || !job.spec.script.is_empty() {
            return job;
        }
        match self.last_specs.get(&job.owner_uid) {
            Some((spec, request, [output, error])) if Arc::ptr_eq(spec, &job.spec) || **spec == *job.spec => {
                job.spec = spec.clone();
                if Arc::ptr_eq(request, &job.request) || **request == *job.request {
                    job.request = request.clone();
                }
                // Equal specs give equal default paths but for the seq, which is kept apart.
                job.output_path.share_with(output);
                job.error_path.share_with(error);
            }
            _ => {
                let paths = [job.output_path.clone(), job.error_path.clone()];
                self.last_specs.insert(job.owner_uid, (job.spec.clone(), job.request.clone(), paths));
            }
        }
        job
    }
}

#[cfg(test)]
mod tests {
    use crate::handlers::tests::{requester, spec, ALICE};
    use crate::handlers::{alter_job, submit_job};
    use crate::state::outbox::Outbox;
    use crate::state::ServerState;
    use std::sync::Arc;

    fn submit(state: &mut ServerState, uid: u32, name: &str) -> String {
        let job = job::JobSpec { name: name.to_string(), ..spec(&[]) };
        match submit_job::submit_job(state, &mut Outbox::default(), &requester(uid), 10, job) {
            proto::ServerReply::JobSubmitted { id } => id,
            other => panic!("{other:?}"),
        }
    }

    fn spec_of(state: &ServerState, id: &str) -> Arc<job::JobSpec> {
        state.jobs()[&state.find_job(id).unwrap()].spec.clone()
    }

    #[test]
    fn equal_specs_of_one_user_are_shared_and_a_change_copies_first() {
        let mut state = ServerState::new("head", "workq", 10, 0);
        let (first, second) = (submit(&mut state, ALICE, "a"), submit(&mut state, ALICE, "a"));
        let other_user = submit(&mut state, ALICE + 1, "a");
        let renamed = submit(&mut state, ALICE, "b");
        assert!(Arc::ptr_eq(&spec_of(&state, &first), &spec_of(&state, &second)));
        let request_of = |id: &str| state.jobs()[&state.find_job(id).unwrap()].request.clone();
        assert!(Arc::ptr_eq(&request_of(&first), &request_of(&second)), "the request is shared too");
        assert!(!Arc::ptr_eq(&spec_of(&state, &first), &spec_of(&state, &other_user)), "not across users");
        assert!(!Arc::ptr_eq(&spec_of(&state, &first), &spec_of(&state, &renamed)));
        let job_of = |id: &str| state.jobs()[&state.find_job(id).unwrap()].clone();
        let (one, two) = (job_of(&first), job_of(&second));
        assert!(one.output_path.shares_text_with(&two.output_path), "the paths' text is shared");
        assert!(one.error_path.shares_text_with(&two.error_path));
        assert_ne!(one.output_path, two.output_path, "each keeps its own seq");
        assert!(one.output_path.to_string().ends_with(&format!(".o{}", one.id.seq)));
        assert!(!one.output_path.shares_text_with(&job_of(&renamed).output_path));
        assert!(spec_of(&state, &first).script.is_empty(), "the script is in the store only");
        let kept = &state.jobs()[&state.find_job(&first).unwrap()];
        let names = [&kept.owner, &kept.group, &kept.queue, &kept.hold_types, &kept.id.server];
        assert!(names.iter().all(|name| !name.is_heap_allocated()), "{names:?} are kept inline");
        assert!(!kept.owner.is_empty() && !kept.queue.is_empty() && !kept.id.server.is_empty());

        let changes = proto::JobAlteration { name: Some("changed".to_string()), ..Default::default() };
        let ids = std::slice::from_ref(&second);
        let reply = alter_job::alter_job(&mut state, &mut Outbox::default(), &requester(ALICE), 20, ids, &changes);
        assert!(matches!(&reply, proto::ServerReply::Done { errors } if errors.is_empty()), "{reply:?}");
        assert_eq!(spec_of(&state, &second).name, "changed");
        assert_eq!(spec_of(&state, &first).name, "a", "the other job's spec is unchanged");
    }
}
