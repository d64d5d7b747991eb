//! Builds a workspace package as a WASI Preview 2 component from a build
//! script, so components are built in the build and never checked in.
//!
//! The nested `cargo build --target wasm32-wasip2 --release` uses its own
//! target folder (`target/guest`), which keeps it off the outer build's lock.
//!
//! Nothing a build script learns from here is an absolute path that outlives
//! the checkout: watched paths are emitted relative to the package (cargo
//! resolves them against wherever the package is now), and the component is
//! copied into `OUT_DIR`, which the embedding crate names through
//! `env!("OUT_DIR")`, so a copied or moved checkout (with its `target`)
//! rebuilds and embeds its own guest, never the original folder's.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The guest target.
pub const GUEST_TARGET: &str = "wasm32-wasip2";

/// The workspace root, from a member's `CARGO_MANIFEST_DIR`.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut dir = manifest_dir.as_path();
    while let Some(parent) = dir.parent() {
        if dir.join("Cargo.lock").is_file() {
            return dir.to_path_buf();
        }
        dir = parent;
    }
    manifest_dir
}

/// Asks cargo to rerun the build script when any of `paths` (relative to the
/// workspace root) changes. Each line names the path relative to the package
/// being built, which cargo resolves against the package's current folder.
pub fn watch(root: &Path, paths: &[&str]) {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    for line in rerun_lines(root, &manifest_dir, paths) {
        println!("{line}");
    }
}

/// The `cargo:rerun-if-changed` lines for `paths` (relative to `root`), each
/// relative to `package_dir`, a folder inside `root`.
pub fn rerun_lines(root: &Path, package_dir: &Path, paths: &[&str]) -> Vec<String> {
    let up = package_dir.strip_prefix(root).map(|rel| rel.components().count()).unwrap_or(0);
    let prefix: PathBuf = std::iter::repeat_n("..", up).collect();
    paths.iter().map(|p| format!("cargo:rerun-if-changed={}", prefix.join(p).display())).collect()
}

/// Copies the component at `wasm` into `OUT_DIR` as `<name>.wasm` and returns
/// the copy's path; embed it with
/// `include_bytes!(concat!(env!("OUT_DIR"), "/<name>.wasm"))`. Exits the build
/// script with a clear message when the copy fails.
pub fn into_out_dir(wasm: &Path, name: &str) -> PathBuf {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap_or_default()).join(format!("{name}.wasm"));
    if let Err(e) = std::fs::copy(wasm, &out) {
        println!("cargo:warning=copying {} to {} failed: {e}", wasm.display(), out.display());
        std::process::exit(1);
    }
    out
}

/// The guest is linked with fat link-time optimisation, whatever the
/// workspace's release profile says for the host: LTO lets the small
/// functions of the core, `alloc` and `core` be inlined across crates, and
/// under wasmtime every call not inlined costs an epoch check besides the
/// call. Measured on the typical tool call through the component: 11 to 13%
/// faster, for a component about 11% larger (see `.cargo/config.toml`).
pub const GUEST_LTO: &str = "profile.release.lto = \"fat\"";

/// Builds `package` for the guest target and returns the path of its
/// component `artifact.wasm`. Exits the build script with a clear message
/// when the build fails.
pub fn build(root: &Path, package: &str, artifact: &str) -> PathBuf {
    let target_dir = root.join("target").join("guest");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "--locked", "--package", package, "--target", GUEST_TARGET])
        .args(["--config", GUEST_LTO])
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's settings are for the host; the guest gets its own.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        cmd.env_remove(var);
    }
    let ok = cmd.status().map(|s| s.success()).unwrap_or(false);
    if !ok {
        println!(
            "cargo:warning=building `{package}` for {GUEST_TARGET} failed; is the target installed? \
             Run `rustup target add {GUEST_TARGET}` (or `cargo xtask test`, which does it)."
        );
        std::process::exit(1);
    }
    target_dir.join(GUEST_TARGET).join("release").join(format!("{artifact}.wasm"))
}
