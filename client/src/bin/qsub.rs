//! The `qsub` command; everything is in `client::qsub`.

fn main() -> std::process::ExitCode {
    client::qsub::main()
}
