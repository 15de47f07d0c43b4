//! The `qrerun` command; everything is in `client::qrerun`.

fn main() -> std::process::ExitCode {
    client::qrerun::main()
}
