//! A task's environment (pure): the job's environment on this node (exec/env.rs: `PBS_*`, this
//! node's `CUDA_VISIBLE_DEVICES`, the launcher variables...), then `PBS_TASKNUM` (the task's
//! number on this node), `PBS_NODENUM` (this node's index in the job's hosts) and
//! `PBS_VNODENUM` (the request's vnode), then the request's own variables, which win (the
//! launcher runs as the job's owner: it may set anything the owner could).
//!
//! Owns: that order. Must not: touch files or processes.

use crate::exec::env::{job_environment, EnvInput};
use proto::task::TaskRequest;
use std::collections::BTreeMap;

/// Where a task is in its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskPlace {
    pub task: u32,
    pub node_num: u32,
}

/// The complete environment of the task, sorted by name.
pub fn task_environment(job: &EnvInput<'_>, place: TaskPlace, request: &TaskRequest) -> Vec<(String, String)> {
    let mut env: BTreeMap<String, String> = job_environment(job).into_iter().collect();
    env.insert("PBS_TASKNUM".into(), place.task.to_string());
    env.insert("PBS_NODENUM".into(), place.node_num.to_string());
    env.insert("PBS_VNODENUM".into(), request.vnode.to_string());
    for (name, value) in &request.env {
        env.insert(name.clone(), value.clone());
    }
    env.into_iter().collect()
}
