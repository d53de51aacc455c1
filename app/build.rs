//! Link options for the `bb` binary, and the commit it is built from (`bb --version`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    commit();
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
    // Startup code together: the functions a start and an idle server run (startup-order.txt, made by
    // tools/startup-order.sh) are laid out first in the code, in a few pages. Scattered, the 185 that
    // an idle HTTP server runs sat in 25 windows of 64 KiB (the kernel maps a touched page's
    // neighbours in a file): 1.3–1.6 MiB of code resident, 250–320 KiB together; idle RSS over HTTP
    // 4.0–4.3 → 3.0–3.2 MiB, over stdio after `initialize` 4.04 → 3.14 MiB. A name the binary no longer
    // has (the list is stale) is skipped without a warning.
    // lld's option (and gold's and mold's, not GNU ld's): rustc links x86_64 Linux with its bundled lld
    // from Rust 1.90 on (bb builds with 1.85), unless the build's flags choose another linker
    // (`-Clinker-features=-lld`, `-Clink-self-contained=-linker`, `-C link-arg=-fuse-ld=…`); otherwise
    // the list is not passed.
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let other_linker =
        ["linker-features=-lld", "link-self-contained=-linker", "fuse-ld="].iter().any(|f| flags.contains(f));
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    if os == "linux" && env == "gnu" && arch == "x86_64" && !other_linker && rustc_minor().is_some_and(|m| m >= 90) {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo:rerun-if-changed=startup-order.txt");
        println!("cargo:rustc-link-arg-bin=bb=-Wl,--symbol-ordering-file={dir}/startup-order.txt");
        println!("cargo:rustc-link-arg-bin=bb=-Wl,--no-warn-symbol-ordering");
    }
}

/// Sets `BB_COMMIT` to the commit checked out (12 hex digits), or `unknown` where there is no git or
/// no repository (a packaged source, as `cargo install` from a registry builds). Built again when
/// HEAD or the branch it names moves.
fn commit() {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).output().ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned()).filter(|s| !s.is_empty())
    };
    let hash = git(&["rev-parse", "--short=12", "HEAD"]).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    println!("cargo:rustc-env=BB_COMMIT={}", hash.as_deref().unwrap_or("unknown"));
    if hash.is_some() {
        for path in ["HEAD", "packed-refs"] {
            if let Some(p) = git(&["rev-parse", "--git-path", path]) {
                println!("cargo:rerun-if-changed={p}");
            }
        }
        if let Some(p) = git(&["symbolic-ref", "-q", "HEAD"]).and_then(|r| git(&["rev-parse", "--git-path", &r])) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}

/// The minor version of the rustc cargo builds with (`90` for 1.90.0), from `rustc -vV`.
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let out = std::process::Command::new(rustc).arg("-vV").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let release = text.lines().find_map(|l| l.strip_prefix("release: "))?;
    release.split('.').nth(1)?.parse().ok()
}
