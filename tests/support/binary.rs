//! The `warden` binary as users run it: built once per test process with the
//! same cargo and profile as the tests, then run as a subprocess.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The path of the `warden` binary, built (or found up to date) on first use.
pub fn warden_binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut build = Command::new(cargo);
            // With this package selected too, features unify as in the build of
            // these tests, so the host's dependencies are not built a second way.
            build.args([
                "build",
                "-p",
                "warden-host",
                "-p",
                "warden-tests",
                "--bin",
                "warden",
                "--message-format=json",
            ]);
            // The tests' own profile: `target/<profile>/deps/<test>` runs this.
            let profile = std::env::current_exe()
                .ok()
                .and_then(|exe| exe.parent()?.parent()?.file_name().map(|n| n.to_string_lossy().into_owned()));
            if profile.as_deref() == Some("release") {
                build.arg("--release");
            }
            // What cargo set for this test process only: build scripts that watch these
            // (`rerun-if-env-changed`) would otherwise rerun, here and in the next outer build.
            for (name, _) in std::env::vars_os() {
                let name = name.to_string_lossy();
                let set_for_tests =
                    ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_CRATE_", "CARGO_BIN_"].iter().any(|p| name.starts_with(p))
                        || ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"].contains(&name.as_ref());
                if set_for_tests {
                    build.env_remove(name.as_ref());
                }
            }
            let out = build.stderr(Stdio::inherit()).output().expect("cargo runs");
            assert!(out.status.success(), "building the warden binary failed");
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .filter(|m| m["target"]["name"] == "warden")
                .find_map(|m| m["executable"].as_str().map(PathBuf::from))
                .expect("cargo names the warden executable")
        })
        .clone()
}

/// A `warden` command with the shared compile cache.
pub fn warden_command(args: &[&str]) -> Command {
    let mut command = Command::new(warden_binary());
    // Before the arguments: whatever follows `--` belongs to another program.
    command.arg("--cache-dir").arg(crate::cache_dir()).args(args);
    command
}

/// Runs `warden` with `args` and `stdin` as a subprocess.
pub fn run_warden(args: &[&str], stdin: &str) -> crate::CliOutput {
    run_warden_in(args, stdin, None)
}

/// Runs `warden` with `args` and `stdin` as a subprocess, in `cwd` if given.
pub fn run_warden_in(args: &[&str], stdin: &str, cwd: Option<&std::path::Path>) -> crate::CliOutput {
    use std::io::Write;
    let mut command = warden_command(args);
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let mut child =
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("warden starts");
    if let Some(mut input) = child.stdin.take() {
        // A command that reads no stdin may exit before taking it all.
        let _ = input.write_all(stdin.as_bytes());
    }
    let Output { status, stdout, stderr } = child.wait_with_output().expect("warden runs");
    crate::CliOutput {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}
