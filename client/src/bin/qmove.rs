//! The `qmove` command; everything is in `client::qmove`.

fn main() -> std::process::ExitCode {
    client::qmove::main()
}
