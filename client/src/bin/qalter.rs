//! The `qalter` command; everything is in `client::qalter`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qalter::main);
