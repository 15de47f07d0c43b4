//! The `qmove` command; everything is in `client::qmove`.
#![no_main]

client::command_main!(client::qmove::main);
