//! The `pbsfs` command; everything is in `client::pbsfs`.

fn main() -> std::process::ExitCode {
    client::pbsfs::main()
}
