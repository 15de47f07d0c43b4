//! `pbs_rsh`, the name PBS Professional scripts also use for `pbs_tmrsh`; everything is in `client::pbs_tmrsh`.

fn main() -> std::process::ExitCode {
    client::pbs_tmrsh::main()
}
