//! The `qrls` command; everything is in `client::qhold`.

fn main() -> std::process::ExitCode {
    client::qhold::main(false)
}
