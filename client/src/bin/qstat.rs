//! The `qstat` command; everything is in `client::qstat`.
#![no_main]

client::command_main!(client::qstat::main);
