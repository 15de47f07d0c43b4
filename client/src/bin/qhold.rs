//! The `qhold` command; everything is in `client::qhold`.
#![cfg_attr(not(test), no_main)]

client::command_main!(|| client::qhold::main(true));
