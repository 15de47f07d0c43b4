//! Integration tests of `pbs_mom`: a real mom (in-process `mom::run`) against a tiny test
//! server on a Unix socket, running real job scripts. One test binary for the crate.

mod failover;
mod interactive;
mod kill;
mod link;
mod run;
mod support;
mod task;
mod task_client;
mod task_tcp;
mod user;
