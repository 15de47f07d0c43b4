//! Which cores each running job of this mom holds: a job asking for `ncpus` gets that many
//! cores nobody else holds, or, when not enough are free (a node offering more slots than it
//! has cores), a CFS quota of `ncpus` cores instead. Pure: the one small type the brief of
//! issue 15 asks for, tested without cgroups.
//!
//! Owns: [`CpuPool`] and the cpuset list grammar (`0-3,8,10-11`). Must not: write files.

use std::collections::BTreeMap;

/// How a job's cpus are limited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuLimit {
    /// No limit (the job asked for no cpus here).
    Unlimited,
    /// These cores, exclusively (cpuset).
    Cores(Vec<u32>),
    /// At most this many cores' time (CFS quota), on any core.
    Quota(u32),
}

/// The cores of this node and who holds them.
#[derive(Debug, Clone, Default)]
pub struct CpuPool {
    cores: Vec<u32>,
    held: BTreeMap<String, Vec<u32>>,
}

impl CpuPool {
    /// A pool of `cores` (from the root cpuset's `cpuset.cpus`); empty when cpusets are not
    /// available: every job then gets a quota.
    pub fn new(cores: Vec<u32>) -> CpuPool {
        CpuPool { cores, held: BTreeMap::new() }
    }

    /// Assigns `ncpus` cores to `job_id` (again the same ones if it holds some already).
    pub fn assign(&mut self, job_id: &str, ncpus: u32) -> CpuLimit {
        if ncpus == 0 {
            return CpuLimit::Unlimited;
        }
        if let Some(cores) = self.held.get(job_id) {
            return CpuLimit::Cores(cores.clone());
        }
        let taken: Vec<u32> = self.held.values().flatten().copied().collect();
        let free: Vec<u32> = self.cores.iter().copied().filter(|core| !taken.contains(core)).collect();
        if self.cores.is_empty() || free.len() < ncpus as usize {
            return CpuLimit::Quota(ncpus);
        }
        let chosen: Vec<u32> = free.into_iter().take(ncpus as usize).collect();
        self.held.insert(job_id.to_string(), chosen.clone());
        CpuLimit::Cores(chosen)
    }

    /// The cores `job_id` holds.
    pub fn held(&self, job_id: &str) -> Option<&[u32]> {
        self.held.get(job_id).map(Vec::as_slice)
    }

    /// Gives `job_id`'s cores back.
    pub fn release(&mut self, job_id: &str) {
        self.held.remove(job_id);
    }
}

/// Parses a cpuset list (`0-3,8`); `None` when it is malformed or names more than
/// [`MAX_CORES`] cores.
pub fn parse_list(text: &str) -> Option<Vec<u32>> {
    let mut cores = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (low, high) = match part.split_once('-') {
            Some((low, high)) => (low.parse::<u32>().ok()?, high.parse::<u32>().ok()?),
            None => {
                let core = part.parse::<u32>().ok()?;
                (core, core)
            }
        };
        if high < low || cores.len() + (high - low) as usize >= MAX_CORES {
            return None;
        }
        cores.extend(low..=high);
    }
    Some(cores)
}

/// The most cores a cpuset list may name (a bound on what a file read allocates).
pub const MAX_CORES: usize = 65536;

/// Formats cores as a cpuset list (`0,1,2`: the kernel accepts it and ranges are not needed).
pub fn format_list(cores: &[u32]) -> String {
    cores.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists() {
        assert_eq!(parse_list("0-3,8\n"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_list(""), Some(vec![]));
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("x"), None);
        assert_eq!(parse_list("0-4294967295"), None, "bounded");
        assert_eq!(format_list(&[0, 2]), "0,2");
    }

    #[test]
    fn jobs_get_distinct_cores_then_quotas() {
        let mut pool = CpuPool::new(vec![0, 1, 2, 3]);
        assert_eq!(pool.assign("1.s", 2), CpuLimit::Cores(vec![0, 1]));
        assert_eq!(pool.assign("2.s", 1), CpuLimit::Cores(vec![2]));
        assert_eq!(pool.assign("3.s", 2), CpuLimit::Quota(2), "only core 3 is free");
        assert_eq!(pool.assign("1.s", 2), CpuLimit::Cores(vec![0, 1]), "the same job keeps its cores");
        pool.release("1.s");
        assert_eq!(pool.assign("4.s", 3), CpuLimit::Cores(vec![0, 1, 3]));
        assert_eq!(pool.assign("5.s", 0), CpuLimit::Unlimited);
    }

    #[test]
    fn no_cpuset_means_quota() {
        assert_eq!(CpuPool::new(Vec::new()).assign("1.s", 1), CpuLimit::Quota(1));
    }
}
