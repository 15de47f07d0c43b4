//! The `qhold` command; everything is in `client::qhold`.
#![no_main]

client::command_main!(|| client::qhold::main(true));
