//! The `qmgr` command; everything is in `client::qmgr`.
#![no_main]

client::command_main!(client::qmgr::main);
