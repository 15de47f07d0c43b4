//! The `minipbs` command; everything is in `client::minipbs`.

fn main() -> std::process::ExitCode {
    client::minipbs::main()
}
