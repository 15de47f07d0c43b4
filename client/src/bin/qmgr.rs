//! The `qmgr` command; everything is in `client::qmgr`.
#![cfg_attr(not(test), no_main)]

client::command_main!(client::qmgr::main);
