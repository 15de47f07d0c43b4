//! The `qstat` command; everything is in `client::qstat`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qstat::main);
