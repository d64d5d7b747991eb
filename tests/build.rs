//! Builds the hostile test guest, which the sandbox tests run in place of the
//! real component. It is copied to `OUT_DIR/hostile_guest.wasm` (see
//! `crates/guest-build`).

fn main() {
    let root = guest_build::workspace_root();
    guest_build::watch(&root, &["wit", "tests/guests/hostile", "crates/guest-rt", ".cargo/config.toml", "Cargo.lock"]);
    let wasm = guest_build::build(&root, "hostile-guest", "hostile_guest");
    guest_build::into_out_dir(&wasm, "hostile_guest");
}
