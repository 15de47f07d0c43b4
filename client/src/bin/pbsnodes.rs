//! The `pbsnodes` command; everything is in `client::pbsnodes`.
#![no_main]

client::command_main!(client::pbsnodes::main);
