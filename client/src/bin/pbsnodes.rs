//! The `pbsnodes` command; everything is in `client::pbsnodes`.

fn main() -> std::process::ExitCode {
    client::pbsnodes::main()
}
