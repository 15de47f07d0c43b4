//! The commands' link settings: the unwinder (`_Unwind_*`, what a panic and a backtrace use) is
//! linked into each binary from GCC's static `libgcc_eh.a` instead of loading `libgcc_s.so.1`
//! at every start. That library's loading (open, map, relocate) and its constructor (a series
//! of `cpuid`, each a trap to the hypervisor on a virtual machine) were ~0.09 ms of a `qsub`
//! of ~0.7 ms; `qsub` runs once per job in a submission loop. The archive is whole so that its
//! definitions take the place of the shared library's, which `--as-needed` (rustc's default)
//! then leaves out. The same unwinder std links in a `crt-static` build; still PIE, full RELRO.
fn main() {
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    // A `crt-static` build links libgcc_eh.a already (twice would define every symbol twice).
    let static_crt = target("CARGO_CFG_TARGET_FEATURE").split(',').any(|feature| feature == "crt-static");
    if target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu" && !static_crt {
        println!("cargo:rustc-link-arg-bins=-Wl,--whole-archive,-lgcc_eh,--no-whole-archive");
    }
}
