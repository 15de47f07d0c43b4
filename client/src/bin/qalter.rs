//! The `qalter` command; everything is in `client::qalter`.

fn main() -> std::process::ExitCode {
    client::qalter::main()
}
