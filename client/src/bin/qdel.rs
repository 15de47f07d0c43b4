//! The `qdel` command; everything is in `client::qdel`.
#![no_main]

client::command_main!(client::qdel::main);
