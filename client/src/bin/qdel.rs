//! The `qdel` command; everything is in `client::qdel`.

fn main() -> std::process::ExitCode {
    client::qdel::main()
}
