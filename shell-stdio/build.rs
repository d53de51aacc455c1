//! Link options for the `bb` binary.

fn main() {
    // Relative relocations packed (DT_RELR): bb is a position-independent executable, and its ~22,700
    // relative relocations took 544 KB as RELA entries, which the dynamic loader reads whole at every
    // start (file pages resident for the process's life); packed they take 7 KB. Idle RSS 7.0 → 6.5 MiB.
    // Linux with glibc only (the loader must know DT_RELR: glibc 2.36 or later; the binary then names
    // the GLIBC_ABI_DT_RELR version, so an older glibc refuses it at start rather than misloading it).
    // Rust's bundled lld links x86_64 Linux by default and knows the option.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bin=bb=-Wl,-z,pack-relative-relocs");
    }
}
