//! The `qmove` command; everything is in `client::qmove`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qmove::main);
