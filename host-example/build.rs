//! Builds the guard component from this repository and embeds it in the host,
//! so `warden` is one self-contained binary and no `.wasm` is ever checked in.
//! Set `WARDEN_COMPONENT_WASM` to a prebuilt component file to skip the build.
//!
//! The component is copied to `OUT_DIR/warden_component.wasm` and watched
//! paths are package-relative, so a copied or moved checkout embeds its own
//! guest (see `crates/guest-build`).

fn main() {
    println!("cargo:rerun-if-env-changed=WARDEN_COMPONENT_WASM");
    if let Ok(prebuilt) = std::env::var("WARDEN_COMPONENT_WASM") {
        println!("cargo:rerun-if-changed={prebuilt}");
        guest_build::into_out_dir(std::path::Path::new(&prebuilt), "warden_component");
        return;
    }
    let root = guest_build::workspace_root();
    guest_build::watch(
        &root,
        &[
            "wit",
            "crates/warden-core",
            "crates/warden-component",
            "crates/guest-rt",
            ".cargo/config.toml",
            "Cargo.lock",
        ],
    );
    let wasm = guest_build::build(&root, "warden-component", "warden_component");
    guest_build::into_out_dir(&wasm, "warden_component");
}
