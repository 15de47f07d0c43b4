//! System tests: real clusters on this host, driven through the real commands. One test
//! binary for the crate (matklad's "one integration-test binary"); modules by topic.

mod gpus_and_nodes;
mod in_process;
mod interactive;
mod kill_and_limits;
mod restart;
mod snapshots;
mod submission;
mod submit_errors;
mod users;
