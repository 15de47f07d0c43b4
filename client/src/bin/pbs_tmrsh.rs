//! The `pbs_tmrsh` command; everything is in `client::pbs_tmrsh`.

fn main() -> std::process::ExitCode {
    client::pbs_tmrsh::main()
}
