//! The `pbsnodes` command; everything is in `client::pbsnodes`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::pbsnodes::main);
