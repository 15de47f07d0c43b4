//! The `qrerun` command; everything is in `client::qrerun`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qrerun::main);
