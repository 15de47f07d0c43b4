//! The GPU parts of status listings: a job's `exec_gpus` (TORQUE's `host-gpu/N+...`, shown in
//! both flavors) and a node's `gpu_status` in TORQUE's style (`gpu[1]=gpu_id=...;...;gpu[0]=...`,
//! highest index first), with minipbs's own `gpu_use` word (free, job, shared, busy-foreign,
//! draining, down) and the jobs holding each GPU. Pure: state in, text out.

use crate::state::node_gpus::torque_state;
use crate::state::{Job, Node};
use job::JobKey;

/// `node1-gpu/0+node1-gpu/1+node2-gpu/0`, or `None` when the job holds no GPU.
pub fn exec_gpus(job: &Job) -> Option<String> {
    let parts: Vec<String> = job
        .exec
        .iter()
        .flat_map(|share| share.gpus.iter().map(move |index| format!("{}-gpu/{index}", share.node)))
        .collect();
    (!parts.is_empty()).then(|| parts.join("+"))
}

/// `gpu_status` of a node with GPUs, or `None` without.
pub fn gpu_status(node: &Node, server_name: &str) -> Option<String> {
    let entries: Vec<String> = node
        .gpus
        .iter()
        .rev()
        .map(|gpu| {
            let index = gpu.info.index as usize;
            let owner = node.gpu_owner.get(index).copied().flatten();
            let mut fields = vec![
                format!("gpu_id={}", gpu.info.pci_bus_id),
                format!("gpu_uuid={}", gpu.info.uuid),
                format!("gpu_product_name={}", gpu.info.name),
                format!("gpu_memory_total={} MB", gpu.info.mem_total >> 20),
            ];
            if let Some(report) = &gpu.report {
                fields.push(format!("gpu_memory_used={} MB", report.mem_used >> 20));
                if let Some(utilization) = report.utilization {
                    fields.push(format!("gpu_utilization={utilization}%"));
                }
            }
            fields.push(format!("gpu_state={}", torque_state(gpu, owner.is_some())));
            fields.push(format!("gpu_use={}", gpu.reported().map_or("unknown", |state| state.word())));
            let mut jobs: Vec<JobKey> = owner.into_iter().collect();
            if let Some(hold) = &gpu.mps {
                jobs.extend(hold.shares.keys());
                fields.push(format!("gpu_mps={}:{}%", hold.user, hold.used()));
            }
            if !jobs.is_empty() {
                let ids: Vec<String> = jobs.iter().map(|&key| key.to_id(server_name).to_string()).collect();
                fields.push(format!("gpu_jobs={}", ids.join(",")));
            }
            if let Some(reason) = gpu.report.as_ref().map(|report| &report.reason).filter(|reason| !reason.is_empty()) {
                // The value is split on ';' by readers: keep the reason in one field.
                fields.push(format!("gpu_reason={}", reason.replace([';', ','], " ")));
            }
            format!("gpu[{index}]={}", fields.join(";"))
        })
        .collect();
    (!entries.is_empty()).then(|| entries.join(";"))
}
