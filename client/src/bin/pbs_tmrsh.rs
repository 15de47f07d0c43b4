//! The `pbs_tmrsh` command; everything is in `client::pbs_tmrsh`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::pbs_tmrsh::main);
