//! The `qrerun` command; everything is in `client::qrerun`.
#![no_main]

client::command_main!(client::qrerun::main);
