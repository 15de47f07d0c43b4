//! The `pbsdsh` command; everything is in `client::pbsdsh`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::pbsdsh::main);
