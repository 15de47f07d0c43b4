//! The `tracejob` command; everything is in `client::tracejob`.
#![no_main]

client::command_main!(client::tracejob::main);
