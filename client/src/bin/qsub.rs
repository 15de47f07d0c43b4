//! The `qsub` command; everything is in `client::qsub`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qsub::main);
