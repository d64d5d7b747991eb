//! Project tasks, so a fresh machine needs only Rust:
//!
//! - `cargo xtask demo`: install the guest target if missing, build, run `warden demo`.
//! - `cargo xtask test`: install the guest target if missing, check formatting and
//!   lints (host and guest), run every test.
//! - `cargo xtask bench`: the performance figures of the README (see [`bench`]).
//! - `cargo xtask instructions`: what one check executes, counted by callgrind (see [`instructions`]).
//! - `cargo xtask completions`, `cargo xtask man`: shell completions and the man page (see [`docs`]).
//! - `cargo xtask package`: the plugins, ready to install (see [`package`]).

mod bench;
mod docs;
mod instructions;
mod package;

use anyhow::{Context, Result, bail};
use std::path::PathBuf;
use std::process::Command;

/// The guest target, as `crates/guest-build` builds it.
const GUEST_TARGET: &str = guest_build::GUEST_TARGET;

fn main() {
    if let Err(e) = task() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn task() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("demo") => demo(&args[1..]),
        Some("test") => test(),
        Some("bench") => bench::bench(&args[1..]),
        Some("instructions") => instructions::instructions(&args[1..]),
        Some("setup") => ensure_guest_target(),
        Some("schema") => write_schema(),
        Some("completions") => docs::completions(&args[1..]),
        Some("man") => docs::man(&args[1..]),
        Some("package") => package::package(&root(), &args[1..]),
        _ => {
            eprintln!("usage: cargo xtask <demo|test|bench|instructions|setup|schema|completions|man|package>");
            eprintln!("  demo   build and run `warden demo`");
            eprintln!("  test   check formatting and lints, then run every test");
            eprintln!(
                "  bench  measure; write target/warden-bench/summary.json and summary.md (--quick, --no-toolkit)"
            );
            eprintln!(
                "  instructions  count what one check executes under callgrind (--case NAME, --way WAY, --top N)"
            );
            eprintln!("  setup  install the {GUEST_TARGET} target if it is missing");
            eprintln!("  schema rewrite schema/warden.schema.json from the configuration types");
            eprintln!("  completions  write shell completions to target/warden-docs/completions (--out DIR)");
            eprintln!("  man    write the man page to target/warden-docs/man/warden.1 (--out DIR)");
            eprintln!(
                "  package build the OpenClaw and Hermes plugins into {} (--only openclaw|hermes)",
                package::PACKAGE_DIR
            );
            std::process::exit(2);
        }
    }
}

fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(root());
    // What `cargo run` set for this process only: build scripts that watch these
    // (`rerun-if-env-changed`) would otherwise rerun, here and in the next build from a shell.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_for_xtask =
            ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_CRATE_", "CARGO_BIN_"].iter().any(|p| name.starts_with(p))
                || ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"].contains(&name.as_ref());
        if set_for_xtask {
            cmd.env_remove(name.as_ref());
        }
    }
    cmd
}

fn run(step: &str, mut cmd: Command) -> Result<()> {
    eprintln!("==> {step}");
    let status = cmd.status().with_context(|| format!("cannot start: {step}"))?;
    if !status.success() {
        bail!("failed: {step} ({status})");
    }
    Ok(())
}

/// Installs the guest target. `RUSTUP_AUTO_INSTALL=0` means a toolchain file
/// alone never installs it, so this runs `rustup target add` explicitly.
fn ensure_guest_target() -> Result<()> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    match installed {
        Ok(out) if out.status.success() => {
            if String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == GUEST_TARGET) {
                return Ok(());
            }
            let mut add = Command::new("rustup");
            add.args(["target", "add", GUEST_TARGET]);
            run(&format!("rustup target add {GUEST_TARGET}"), add)
        }
        _ => {
            // No rustup: the toolchain must already carry the target.
            let sysroot = Command::new("rustc").args(["--print", "sysroot"]).output()?;
            let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
            if sysroot.join("lib/rustlib").join(GUEST_TARGET).is_dir() {
                Ok(())
            } else {
                bail!("the {GUEST_TARGET} target is missing and rustup is not available to install it")
            }
        }
    }
}

/// Rewrites the checked-in JSON Schema of the configuration.
fn write_schema() -> Result<()> {
    let dir = root().join("schema");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("warden.schema.json");
    std::fs::write(&path, warden_core::schema::config_schema_text())?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The adapters under `integrations/` that have an end-to-end test script.
fn integrations() -> Result<Vec<String>> {
    let dir = root().join("integrations");
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("scripts/test.sh").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

fn demo(extra: &[String]) -> Result<()> {
    ensure_guest_target()?;
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--release", "--package", "warden-host", "--bin", "warden", "--", "demo"]);
    cmd.args(extra);
    run("warden demo", cmd)
}

fn test() -> Result<()> {
    ensure_guest_target()?;
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--check"]);
    run("cargo fmt --check", fmt)?;

    let mut clippy = cargo();
    clippy.args(["clippy", "--release", "--all-targets", "--", "-D", "warnings"]);
    run("cargo clippy (host crates)", clippy)?;

    let mut clippy_guest = cargo();
    clippy_guest.args([
        "clippy",
        "--release",
        "--package",
        "warden-component",
        "--package",
        "hostile-guest",
        "--package",
        "guest-rt",
        "--target",
        GUEST_TARGET,
        "--",
        "-D",
        "warnings",
    ]);
    run("cargo clippy (guests)", clippy_guest)?;

    let mut schema = cargo();
    schema.args(["test", "--release", "--package", "warden-core", "--features", "schema,fakes"]);
    run("core tests with the schema feature", schema)?;

    // The fuzz targets ran above; this prints how many cases each ran.
    let mut fuzz = cargo();
    fuzz.args(["test", "--release", "--package", "warden-core", "--features", "fakes", "fuzz_", "--", "--nocapture"]);
    run("core fuzz smoke (WARDEN_FUZZ_CASES sets the cases per target)", fuzz)?;

    let mut tests = cargo();
    tests.args(["test", "--release", "--no-fail-fast"]);
    run("cargo test (every default member)", tests)?;
    bench::smoke()?;

    // Each runtime adapter's end-to-end test installs its own runtime (pinned,
    // from the registries) under target/ and drives real turns.
    for adapter in integrations()? {
        let script = root().join("integrations").join(&adapter).join("scripts/test.sh");
        let mut cmd = Command::new("bash");
        cmd.arg(&script).current_dir(root());
        run(&format!("{adapter} end-to-end test"), cmd)?;
    }
    eprintln!("==> all checks passed");
    Ok(())
}
