//! The `qsub` command; everything is in `client::qsub`.
#![no_main]

client::command_main!(client::qsub::main);
