//! The `tracejob` command; everything is in `client::tracejob`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::tracejob::main);
