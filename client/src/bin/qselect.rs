//! The `qselect` command; everything is in `client::qselect`.
#![no_main]

client::command_main!(client::qselect::main);
