//! Builds the hostile test guest, which the sandbox tests run in place of the
//! real component.

fn main() {
    let root = guest_build::workspace_root();
    guest_build::watch(&root, &["wit", "tests/guests/hostile", "Cargo.lock"]);
    let wasm = guest_build::build(&root, "hostile-guest", "hostile_guest");
    println!("cargo:rustc-env=HOSTILE_COMPONENT_WASM={}", wasm.display());
}
