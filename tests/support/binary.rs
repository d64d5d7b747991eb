//! The `warden` binary as users run it, built once per test process.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The path of the `warden` binary of this build's profile, built (or found
/// up to date) by cargo the first time it is asked for.
pub fn warden_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // target/<profile>/deps/<test binary>
            let exe = std::env::current_exe().expect("test binary path");
            let profile_dir = exe.parent().and_then(|d| d.parent()).expect("target/<profile>").to_path_buf();
            let target_dir = profile_dir.parent().expect("target dir").to_path_buf();
            let release = profile_dir.file_name().is_some_and(|n| n == "release");
            let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
            build
                .args(["build", "--quiet", "--package", "warden-host", "--bin", "warden", "--target-dir"])
                .arg(&target_dir)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .stdout(Stdio::null());
            if release {
                build.arg("--release");
            }
            for (name, _) in std::env::vars_os() {
                let name = name.to_string_lossy().into_owned();
                if (name.starts_with("CARGO_") && name != "CARGO_HOME") || name == "OUT_DIR" {
                    build.env_remove(&name);
                }
            }
            let status = build.status().expect("cargo runs");
            assert!(status.success(), "building the warden binary failed");
            profile_dir.join(format!("warden{}", std::env::consts::EXE_SUFFIX))
        })
        .clone()
}

/// A `warden` command with the shared compile cache.
pub fn warden_command() -> Command {
    let mut cmd = Command::new(warden_binary());
    cmd.arg("--cache-dir").arg(crate::cache_dir());
    cmd
}
