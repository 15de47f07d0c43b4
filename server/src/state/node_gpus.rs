//! A node's GPUs as the server sees them: each GPU's identity from the mom's registration, the
//! use the mom last reported, and the MPS shares on it. Exclusive holders are in
//! `Node::gpu_owner`; this file owns everything else about GPUs.
//!
//! Rule: a GPU is handed out whole only when nobody holds it (no owner, no MPS share) and its
//! mom last reported it [`GpuUse::Free`]; a share joins a GPU its user already shares only
//! while the mom reports it `Free` or `Shared`. A GPU the mom never reported (a node loaded
//! from the store before its mom registered) is handed out to nobody.

use proto::gpu::{GpuInfo, GpuReport, GpuUse};
use std::collections::BTreeMap;

/// One GPU of a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeGpu {
    pub info: GpuInfo,
    /// The mom's last report; `None` until its mom registers.
    pub report: Option<GpuReport>,
    /// The MPS jobs sharing it, if any.
    pub mps: Option<MpsHold>,
}

/// The MPS shares on one GPU: one user's jobs, each with its percentage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpsHold {
    pub user: String,
    pub shares: BTreeMap<::job::JobKey, u8>,
}

impl MpsHold {
    /// Percent given out.
    pub fn used(&self) -> u32 {
        self.shares.values().map(|&percent| u32::from(percent)).sum()
    }
}

impl NodeGpu {
    /// A GPU known only by its index (from the store, or from a mom without an inventory).
    pub fn unnamed(index: u32, report: Option<GpuUse>) -> NodeGpu {
        let info = GpuInfo { index, uuid: String::new(), name: String::new(), pci_bus_id: String::new(), mem_total: 0 };
        let report = report.map(|state| GpuReport {
            uuid: String::new(),
            state,
            mem_used: 0,
            utilization: None,
            reason: String::new(),
        });
        NodeGpu { info, report, mps: None }
    }

    /// The state the mom last reported.
    pub fn reported(&self) -> Option<GpuUse> {
        self.report.as_ref().map(|report| report.state)
    }

    /// An MPS share of `user` may join (or start) on this GPU as far as the mom is concerned.
    pub fn shareable(&self) -> bool {
        matches!(self.reported(), Some(GpuUse::Free | GpuUse::Shared))
    }
}

/// The GPUs a mom registered, keeping the MPS shares of GPUs that are still there. A mom
/// that predates inventories sends no list: it gets `ngpus` unnamed GPUs reported free.
pub fn registered(old: &[NodeGpu], ngpus: u32, infos: &[GpuInfo], reports: &[GpuReport]) -> Vec<NodeGpu> {
    if infos.is_empty() {
        return (0..ngpus)
            .map(|index| NodeGpu {
                mps: old.get(index as usize).and_then(|gpu| gpu.mps.clone()),
                ..NodeGpu::unnamed(index, Some(GpuUse::Free))
            })
            .collect();
    }
    infos
        .iter()
        .enumerate()
        .map(|(position, info)| NodeGpu {
            info: GpuInfo { index: position as u32, ..info.clone() },
            report: reports.iter().find(|report| report.uuid == info.uuid).cloned(),
            mps: old.get(position).filter(|gpu| gpu.info.uuid == info.uuid).and_then(|gpu| gpu.mps.clone()),
        })
        .collect()
}

/// Applies a mom's reports by UUID; returns `(index, old state, new report)` for each GPU
/// whose state or reason changed. Reports for unknown UUIDs are ignored.
pub fn apply_reports(gpus: &mut [NodeGpu], reports: Vec<GpuReport>) -> Vec<(u32, Option<GpuUse>, GpuReport)> {
    let mut changed = Vec::new();
    for report in reports {
        let Some(gpu) = gpus.iter_mut().find(|gpu| gpu.info.uuid == report.uuid) else { continue };
        let differs = gpu.report.as_ref().is_none_or(|old| old.state != report.state || old.reason != report.reason);
        if differs {
            changed.push((gpu.info.index, gpu.reported(), report.clone()));
        }
        gpu.report = Some(report);
    }
    changed
}

/// TORQUE's `gpu_state` word for a GPU: `Exclusive` (a job holds it), `Shared` (MPS),
/// `Unallocated` (free), `Unavailable` (busy with a foreign process, draining, down or never
/// reported).
pub fn torque_state(gpu: &NodeGpu, owned: bool) -> &'static str {
    if owned {
        "Exclusive"
    } else if gpu.mps.is_some() {
        "Shared"
    } else if gpu.reported() == Some(GpuUse::Free) {
        "Unallocated"
    } else {
        "Unavailable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::job::JobKey;

    fn info(index: u32, uuid: &str) -> GpuInfo {
        GpuInfo { index, uuid: uuid.into(), name: "g".into(), pci_bus_id: "b".into(), mem_total: 1 }
    }

    fn report(uuid: &str, state: GpuUse, reason: &str) -> GpuReport {
        GpuReport { uuid: uuid.into(), state, mem_used: 0, utilization: None, reason: reason.into() }
    }

    #[test]
    fn registration_keeps_shares_of_the_same_gpu_only() {
        let hold = MpsHold { user: "alice".into(), shares: BTreeMap::from([(JobKey::from_raw(7), 25)]) };
        let mut old = registered(&[], 0, &[info(0, "A"), info(1, "B")], &[report("A", GpuUse::Shared, "")]);
        old[0].mps = Some(hold.clone());
        old[1].mps = Some(hold.clone());
        let new = registered(&old, 2, &[info(0, "A"), info(1, "C")], &[]);
        assert_eq!(new[0].mps, Some(hold), "same UUID keeps its shares");
        assert_eq!(new[1].mps, None, "another GPU at that index does not");
        assert_eq!(new[0].reported(), None, "not reported in this registration");
        let legacy = registered(&[], 2, &[], &[]);
        assert_eq!(legacy.iter().map(NodeGpu::reported).collect::<Vec<_>>(), vec![Some(GpuUse::Free); 2]);
    }

    #[test]
    fn reports_apply_by_uuid_and_say_what_changed() {
        let mut gpus = registered(&[], 0, &[info(0, "A"), info(1, "B")], &[report("A", GpuUse::Free, "")]);
        let changed = apply_reports(
            &mut gpus,
            vec![
                report("A", GpuUse::Free, ""),
                report("B", GpuUse::BusyForeign, "pid 9"),
                report("Z", GpuUse::Down, ""),
            ],
        );
        assert_eq!(changed, vec![(1, None, report("B", GpuUse::BusyForeign, "pid 9"))]);
        assert_eq!(gpus[1].reported(), Some(GpuUse::BusyForeign));
        assert_eq!(torque_state(&gpus[0], false), "Unallocated");
        assert_eq!(torque_state(&gpus[0], true), "Exclusive");
        assert_eq!(torque_state(&gpus[1], false), "Unavailable");
    }
}
