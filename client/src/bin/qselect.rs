//! The `qselect` command; everything is in `client::qselect`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qselect::main);
