//! The `qalter` command; everything is in `client::qalter`.
#![no_main]

client::command_main!(client::qalter::main);
