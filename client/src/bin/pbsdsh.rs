//! The `pbsdsh` command; everything is in `client::pbsdsh`.

fn main() -> std::process::ExitCode {
    client::pbsdsh::main()
}
