//! The `qsig` command; everything is in `client::qsig`.
#![no_main]

client::command_main!(client::qsig::main);
