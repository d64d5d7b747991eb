//! Builds the guard component from this repository and embeds it in the host,
//! so `warden` is one self-contained binary and no `.wasm` is ever checked in.
//!
//! The component is built by a nested `cargo build --target wasm32-wasip2
//! --release` into its own target folder (`target/guest`), which keeps the
//! nested build off the outer build's lock. Set `WARDEN_COMPONENT_WASM` to a
//! prebuilt component file to skip the nested build.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST_TARGET: &str = "wasm32-wasip2";

fn main() {
    println!("cargo:rerun-if-env-changed=WARDEN_COMPONENT_WASM");
    if let Ok(prebuilt) = env::var("WARDEN_COMPONENT_WASM") {
        println!("cargo:rerun-if-changed={prebuilt}");
        println!("cargo:rustc-env=WARDEN_COMPONENT_WASM={prebuilt}");
        return;
    }
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for watched in [
        "wit",
        "crates/warden-core/src",
        "crates/warden-core/Cargo.toml",
        "crates/warden-component/src",
        "crates/warden-component/Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    let wasm = build_guest(&root, "warden-component", "warden_component");
    println!("cargo:rustc-env=WARDEN_COMPONENT_WASM={}", wasm.display());
}

/// Builds `package` for the guest target and returns the component's path.
pub fn build_guest(root: &Path, package: &str, artifact: &str) -> PathBuf {
    let target_dir = root.join("target").join("guest");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args([
        "build",
        "--release",
        "--locked",
        "--package",
        package,
        "--target",
        GUEST_TARGET,
        "--target-dir",
    ]);
    cmd.arg(&target_dir);
    // The outer build's settings are for the host; the guest gets its own.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PROFILE_RELEASE_DEBUG",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status();
    match status {
        Ok(s) if s.success() => {}
        Ok(_) | Err(_) => {
            println!(
                "cargo:warning=building the guard component failed; is the `{GUEST_TARGET}` target installed? \
                 Run `rustup target add {GUEST_TARGET}` (or `cargo xtask test`, which does it)."
            );
            std::process::exit(1);
        }
    }
    target_dir
        .join(GUEST_TARGET)
        .join("release")
        .join(format!("{artifact}.wasm"))
}
