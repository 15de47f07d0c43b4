//! The `qsig` command; everything is in `client::qsig`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qsig::main);
