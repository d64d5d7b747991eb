//! Builds a workspace package as a WASI Preview 2 component from a build
//! script, so components are built in the build and never checked in.
//!
//! The nested `cargo build --target wasm32-wasip2 --release` uses its own
//! target folder (`target/guest`), which keeps it off the outer build's lock.

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
/// workspace root) changes.
pub fn watch(root: &Path, paths: &[&str]) {
    for p in paths {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
}

/// Builds `package` for the guest target and returns the path of its
/// component `artifact.wasm`. Exits the build script with a clear message
/// when the build fails.
pub fn build(root: &Path, package: &str, artifact: &str) -> PathBuf {
    let target_dir = root.join("target").join("guest");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "--locked", "--package", package, "--target", GUEST_TARGET])
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
