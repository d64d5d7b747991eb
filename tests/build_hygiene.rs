//! A copied or moved checkout, built target folder and all, embeds its own
//! guest, never the original folder's.
//!
//! Building a copy of the whole workspace would take many minutes, so the
//! proof uses a small workspace laid out like this one: a guest crate built
//! for wasm32-wasip2 by the real `crates/guest-build` helper from an embedding
//! crate's build script, exactly as `host-example/build.rs` does. It is built
//! in folder A, copied with its `target` to folder B, the guest's source is
//! changed in B only, and B is built again: B's binary must carry B's guest.
//! With watched paths or embedded paths that are absolute, cargo in B sees
//! nothing changed (A's files did not) and B keeps embedding A's guest.
//! A second check asserts the rerun lines of the real build scripts, as
//! cargo recorded them, are relative.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("the tests crate sits in the workspace").to_path_buf()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create folder");
    std::fs::write(path, text).expect("write fixture file");
}

fn guest_main(marker: &str) -> String {
    format!("fn main() {{\n    println!(\"warden-fixture-marker:{marker}:\");\n}}\n")
}

/// Lays out the fixture workspace in `dir`.
fn fixture(dir: &Path) {
    let guest_build = repo().join("crates/guest-build");
    write(
        &dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"embed\", \"guest\"]\nresolver = \"2\"\n\n[profile.release]\nopt-level = 0\n",
    );
    write(
        &dir.join("guest/Cargo.toml"),
        "[package]\nname = \"fixture-guest\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(&dir.join("guest/src/main.rs"), &guest_main("alpha"));
    write(
        &dir.join("embed/Cargo.toml"),
        &format!(
            "[package]\nname = \"fixture-embed\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [build-dependencies]\nguest-build = {{ path = {:?} }}\n",
            guest_build.display().to_string()
        ),
    );
    write(
        &dir.join("embed/build.rs"),
        "fn main() {\n    let root = guest_build::workspace_root();\n    \
         guest_build::watch(&root, &[\"guest\", \"Cargo.lock\"]);\n    \
         let wasm = guest_build::build(&root, \"fixture-guest\", \"fixture-guest\");\n    \
         guest_build::into_out_dir(&wasm, \"guest\");\n}\n",
    );
    write(
        &dir.join("embed/src/main.rs"),
        "static GUEST: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/guest.wasm\"));\n\
         fn main() {\n    let key = b\"warden-fixture-marker:\";\n    \
         let at = GUEST.windows(key.len()).position(|w| w == key).expect(\"marker in guest\") + key.len();\n    \
         let end = GUEST[at..].iter().position(|b| *b == b':').expect(\"marker end\");\n    \
         println!(\"{}\", String::from_utf8_lossy(&GUEST[at..at + end]));\n}\n",
    );
}

fn cargo(dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(dir).args(args);
    for var in
        ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET"]
    {
        cmd.env_remove(var);
    }
    let out = cmd.output().expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?} in {} failed:\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn build_and_run(dir: &Path) -> String {
    cargo(dir, &["build", "--release", "--offline", "--quiet", "-p", "fixture-embed"]);
    let out = Command::new(dir.join("target/release/fixture-embed")).output().expect("the fixture binary runs");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    // `cp -a` keeps modification times, as a copied or moved checkout does.
    let status = Command::new("cp").arg("-a").arg(from).arg(to).status().expect("cp runs");
    assert!(status.success());
}

#[test]
fn a_copied_checkout_with_its_target_embeds_its_own_changed_guest() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let a = tmp.path().join("a");
    fixture(&a);
    cargo(&a, &["generate-lockfile", "--offline", "--quiet"]);
    assert_eq!(build_and_run(&a), "alpha", "the fixture embeds its guest");

    let b = tmp.path().join("b");
    copy_tree(&a, &b);
    write(&b.join("guest/src/main.rs"), &guest_main("beta"));
    assert_eq!(build_and_run(&b), "beta", "the copy must embed the guest built from its own source");
    assert_eq!(build_and_run(&a), "alpha", "the original keeps its own guest");
}

#[test]
fn a_moved_checkout_still_builds_after_the_original_folder_is_gone() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let a = tmp.path().join("a");
    fixture(&a);
    cargo(&a, &["generate-lockfile", "--offline", "--quiet"]);
    assert_eq!(build_and_run(&a), "alpha");

    let b = tmp.path().join("b");
    std::fs::rename(&a, &b).expect("move the checkout");
    // Touch only the embedding crate: its build script need not rerun, and
    // the component it embeds must still be found in the moved target.
    write(&b.join("embed/src/extra.txt"), "changed");
    let main = std::fs::read_to_string(b.join("embed/src/main.rs")).expect("read main");
    write(&b.join("embed/src/main.rs"), &format!("{main}\n// edited after the move\n"));
    assert_eq!(build_and_run(&b), "alpha", "the moved checkout builds and embeds its guest");
}

#[test]
fn the_real_build_scripts_watch_only_package_relative_paths() {
    // The rerun lines cargo recorded for this very build, for the tests
    // crate (its `OUT_DIR`'s sibling `output` file).
    let out_dir = PathBuf::from(env!("OUT_DIR"));
    let output = std::fs::read_to_string(out_dir.parent().expect("OUT_DIR has a parent").join("output"))
        .expect("cargo keeps the build script's output");
    let watched: Vec<&str> = output.lines().filter_map(|l| l.strip_prefix("cargo:rerun-if-changed=")).collect();
    assert!(watched.contains(&"../wit"), "the guest's WIT is watched: {watched:?}");
    for path in &watched {
        assert!(!Path::new(path).is_absolute(), "an absolute watched path ties the build to one folder: {path}");
    }
    assert!(
        !output.lines().any(|l| l.starts_with("cargo:rustc-env=") && l.contains('/')),
        "no embedded path is handed to rustc through the environment: {output}"
    );
}
