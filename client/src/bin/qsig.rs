//! The `qsig` command; everything is in `client::qsig`.

fn main() -> std::process::ExitCode {
    client::qsig::main()
}
