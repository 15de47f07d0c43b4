//! The `qmgr` command; everything is in `client::qmgr`.

fn main() -> std::process::ExitCode {
    client::qmgr::main()
}
