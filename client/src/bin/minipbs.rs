//! The `minipbs` command; everything is in `client::minipbs`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::minipbs::main);
