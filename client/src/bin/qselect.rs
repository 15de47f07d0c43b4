//! The `qselect` command; everything is in `client::qselect`.

fn main() -> std::process::ExitCode {
    client::qselect::main()
}
