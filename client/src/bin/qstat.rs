//! The `qstat` command; everything is in `client::qstat`.

fn main() -> std::process::ExitCode {
    client::qstat::main()
}
