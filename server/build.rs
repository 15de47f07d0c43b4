//! Rebuild when a migration directory is added (embed_migrations! only tracks existing files).
//!
//! And `pbs_server`'s link settings: its relative relocations are packed (`DT_RELR`, glibc
//! 2.36+ and binutils 2.38+, Debian 12 and later). The position-independent binary's ~22,000
//! of them took 516 KiB of `.rela.dyn`, every page read by the dynamic linker at each start and
//! left resident; packed they take 6.5 KiB. Still PIE, still full RELRO (issue 19, RSS).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
