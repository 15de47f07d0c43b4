//! The device rules of a job's v1 `devices` cgroup: NVIDIA GPUs (char major 195) other than
//! the job's are denied; `nvidiactl` (195:255) and `nvidia-uvm*` (their own major) stay
//! allowed. The v1 controller starts from "allow all", and an allow rule only removes an equal
//! deny rule, so the rules are one deny per foreign GPU minor (and 195:254, nvidia-modeset).
//! v2 needs an eBPF device program: not done (docs/cgroups.md).
//!
//! Owns: [`gpu_deny_rules`] (pure). Must not: write files (v1.rs does).

/// The char major of `/dev/nvidia<N>`, `nvidiactl` and `nvidia-modeset`.
pub const NVIDIA_MAJOR: u32 = 195;

/// `devices.deny` lines for a job holding GPU minors `job` on a node with GPU minors `node`.
pub fn gpu_deny_rules(node: &[u32], job: &[u32]) -> Vec<String> {
    if node.is_empty() {
        return Vec::new();
    }
    let mut rules: Vec<String> =
        node.iter().filter(|minor| !job.contains(minor)).map(|minor| format!("c {NVIDIA_MAJOR}:{minor} rwm")).collect();
    rules.push(format!("c {NVIDIA_MAJOR}:254 rwm"));
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_gpus_are_denied() {
        assert_eq!(gpu_deny_rules(&[0, 1, 2], &[1]), vec!["c 195:0 rwm", "c 195:2 rwm", "c 195:254 rwm"]);
        assert_eq!(gpu_deny_rules(&[0], &[0]), vec!["c 195:254 rwm"]);
        assert!(gpu_deny_rules(&[], &[]).is_empty(), "no GPUs: no rules");
        assert!(!gpu_deny_rules(&[0, 1], &[]).iter().any(|r| r.contains(":255")), "nvidiactl stays");
    }
}
