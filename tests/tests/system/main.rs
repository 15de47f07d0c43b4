//! System tests: real clusters on this host, driven through the real commands. One test
//! binary for the crate (matklad's "one integration-test binary"); modules by topic.

mod accounting;
mod alter;
mod arrays;
mod authz;
mod cluster;
mod depend;
mod display;
mod errors;
mod flavors;
mod gpus;
mod gpus_and_nodes;
mod hostile;
mod hostile_chunks;
mod hostile_requests;
mod in_process;
mod interactions;
mod interactive;
mod kill_and_limits;
mod mail_injection;
mod modules;
mod mom_reports;
mod mom_safety;
mod multihost;
mod multihost_interactive;
mod node_admin;
mod queues;
mod restart;
mod selection;
mod snapshots;
mod submission;
mod submit_errors;
mod users;
