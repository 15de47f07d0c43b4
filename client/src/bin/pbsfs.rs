//! The `pbsfs` command; everything is in `client::pbsfs`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::pbsfs::main);
