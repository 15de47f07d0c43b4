//! The `pbsfs` command; everything is in `client::pbsfs`.
#![no_main]

client::command_main!(client::pbsfs::main);
