//! The `qdel` command; everything is in `client::qdel`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qdel::main);
