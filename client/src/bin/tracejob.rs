//! The `tracejob` command; everything is in `client::tracejob`.

fn main() -> std::process::ExitCode {
    client::tracejob::main()
}
