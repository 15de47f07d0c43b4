//! The `pbsdsh` command; everything is in `client::pbsdsh`.
#![no_main]

client::command_main!(client::pbsdsh::main);
