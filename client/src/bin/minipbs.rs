//! The `minipbs` command; everything is in `client::minipbs`.
#![no_main]

client::command_main!(client::minipbs::main);
