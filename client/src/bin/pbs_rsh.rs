//! `pbs_rsh`, the name PBS Professional scripts also use for `pbs_tmrsh`; everything is in `client::pbs_tmrsh`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::pbs_tmrsh::main);
