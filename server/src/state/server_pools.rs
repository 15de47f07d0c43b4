//! Server-level consumable site resources (flag `q`, e.g. licences): the server's
//! `resources_available.NAME` (`qmgr set server`), what running jobs hold of it
//! (`resources_assigned.NAME`, derived from their job-wide requests, so nothing more is
//! stored), and the pools the scheduler takes amounts from (OpenPBS `dynamic_avail`,
//! `src/scheduler/check.cpp:1363`, over the server's resources).
//!
//! Owns: which resources count at server level and how their values are set and shown.
//! Must not: persist (the qmgr handler stores the server attributes whole).

use super::values::bad_value;
use super::{Job, ServerState};
use ::job::resources::site::ResourceDef;
use ::job::Attr;
use proto::error::{ErrorCode, RequestError};
use proto::manage::AttrOp;
use std::collections::BTreeMap;

/// What a scheduling pass needs: the pools, and for each job the amounts it takes.
pub struct ServerPools {
    /// `resources_available` minus what running jobs hold, per counted resource.
    pub left: Vec<u64>,
    /// Per job (in the order given), `(pool, amount)`.
    pub takes: Vec<Vec<(usize, u64)>>,
    /// The resource of each pool (by index, as `left`), for the comment of a job it holds back.
    pub names: Vec<String>,
}

impl ServerState {
    /// `set|unset server resources_available.NAME = value`: NAME must be defined; the value is
    /// checked and normalised by its type.
    pub fn set_server_resource(&mut self, attr: &AttrOp, unset: bool) -> Result<(), RequestError> {
        let name = attr.resource.as_deref().unwrap_or_default();
        let def = self.resources.get(name).ok_or_else(|| {
            let text = format!("{} {}", ErrorCode::UnknownResource.text(), attr.full_name());
            RequestError::new(ErrorCode::UnknownResource, text)
        })?;
        if unset {
            self.attrs.resources_available.remove(name);
            return Ok(());
        }
        let shown = def.normalize(attr.value.trim()).map_err(|detail| bad_value(attr, &detail))?;
        self.attrs.resources_available.insert(def.name.clone(), shown);
        Ok(())
    }

    /// The resources counted at server level: flag `q`, numeric, with a server value.
    fn counted(&self) -> impl Iterator<Item = (&ResourceDef, u64)> {
        let defined = self.attrs.resources_available.iter().filter_map(|(name, value)| {
            let def = self.resources.get(name)?;
            Some((def, def.amount(value).unwrap_or(0)))
        });
        defined.filter(|(def, _)| def.flags.queue && def.kind.is_numeric())
    }

    /// What `job` asks of `def` job-wide (0 when nothing, or not an amount).
    fn asked(job: &Job, def: &ResourceDef) -> u64 {
        job.request.display_value(&def.name).and_then(|value| def.amount(value)).unwrap_or(0)
    }

    /// `resources_assigned` of each counted resource: the sum over running jobs (saturating).
    pub fn server_assigned(&self) -> BTreeMap<&str, u64> {
        let mut held: BTreeMap<&str, u64> = self.counted().map(|(def, _)| (def.name.as_str(), 0)).collect();
        let running = self.jobs.values().filter(|job| job.state.is_active() && !job.exec.is_empty());
        for job in running {
            for (def, _) in self.counted() {
                let sum = held.entry(def.name.as_str()).or_default();
                *sum = sum.saturating_add(Self::asked(job, def));
            }
        }
        held
    }

    /// The pools for a pass over `queued`.
    pub fn server_pools(&self, queued: &[&Job]) -> ServerPools {
        let counted: Vec<(&ResourceDef, u64)> = self.counted().collect();
        if counted.is_empty() {
            // The common case: no server-level pool, so no pass over every job to sum holdings.
            return ServerPools { left: Vec::new(), takes: vec![Vec::new(); queued.len()], names: Vec::new() };
        }
        let held = self.server_assigned();
        let left = counted
            .iter()
            .map(|(def, available)| available.saturating_sub(held.get(def.name.as_str()).copied().unwrap_or(0)))
            .collect();
        let takes = queued
            .iter()
            .map(|job| {
                let asked = counted.iter().enumerate().map(|(pool, (def, _))| (pool, Self::asked(job, def)));
                asked.filter(|(_, amount)| *amount > 0).collect()
            })
            .collect();
        let names = counted.iter().map(|(def, _)| def.name.clone()).collect();
        ServerPools { left, takes, names }
    }

    /// `resources_available.NAME`, `resources_default.NAME` and, for counted ones,
    /// `resources_assigned.NAME` of the server.
    pub fn server_resource_status(&self) -> Vec<Attr> {
        let mut attrs: Vec<Attr> = self
            .attrs
            .resources_available
            .iter()
            .map(|(name, value)| Attr::resource("resources_available", name, value.clone()))
            .collect();
        // OpenPBS's order: available, default, assigned.
        let defaults = self.attrs.resources_default.iter();
        attrs.extend(defaults.map(|(name, value)| Attr::resource("resources_default", name, value.clone())));
        for (name, held) in self.server_assigned() {
            let Some(def) = self.resources.get(name) else { continue };
            attrs.push(Attr::resource("resources_assigned", name, def.show_amount(held)));
        }
        attrs
    }
}
