//! `cargo xtask package`: the plugins, built and ready to install, in one
//! place, `target/warden-package/`:
//!
//! - `openclaw/plugin/`: the OpenClaw plugin folder (what
//!   `plugins.load.paths` names), and `openclaw/warden-openclaw-<version>.tgz`,
//!   the same packed with `npm pack`; built by
//!   `integrations/openclaw/scripts/build.sh` (Node 24 and jco are set up under
//!   `target/openclaw/`);
//! - `hermes/plugins/warden/`: the Hermes plugin folder with its component
//!   (copy it to `$HERMES_HOME/plugins/warden/`), and
//!   `hermes/warden/warden.json`, the starter policy; laid out by
//!   `integrations/hermes/scripts/install.sh --no-pip` as in a Hermes home.
//!
//! `--only openclaw` or `--only hermes` builds one of them.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the packages go, under the workspace root.
pub const PACKAGE_DIR: &str = "target/warden-package";

/// The component both plugins carry, as the guest build leaves it.
const COMPONENT: &str = "target/guest/wasm32-wasip2/release/warden_component.wasm";

pub fn package(root: &Path, args: &[String]) -> Result<()> {
    let (openclaw, hermes) = match args {
        [] => (true, true),
        [flag, which] if flag == "--only" && which == "openclaw" => (true, false),
        [flag, which] if flag == "--only" && which == "hermes" => (false, true),
        other => bail!("usage: cargo xtask package [--only openclaw|hermes]; got {other:?}"),
    };
    crate::ensure_guest_target()?;
    let out = root.join(PACKAGE_DIR);
    if openclaw {
        openclaw_package(root, &out.join("openclaw"))?;
    }
    if hermes {
        hermes_package(root, &out.join("hermes"))?;
    }
    eprintln!("==> packages in {}", out.display());
    Ok(())
}

fn openclaw_package(root: &Path, out: &Path) -> Result<()> {
    let mut build = Command::new("bash");
    build.arg(root.join("integrations/openclaw/scripts/build.sh")).current_dir(root);
    crate::run("building the OpenClaw plugin (integrations/openclaw/scripts/build.sh)", build)?;
    fresh(out)?;
    let built = root.join("target/openclaw");
    copy_tree(&built.join("plugin"), &out.join("plugin"))?;
    for entry in std::fs::read_dir(&built).with_context(|| format!("reading {}", built.display()))? {
        let path = entry?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with("warden-openclaw-") && name.ends_with(".tgz") {
            std::fs::copy(&path, out.join(&name)).with_context(|| format!("copying {}", path.display()))?;
        }
    }
    eprintln!("    OpenClaw plugin: {}", out.join("plugin").display());
    Ok(())
}

fn hermes_package(root: &Path, out: &Path) -> Result<()> {
    let mut guest = crate::cargo();
    guest.args(["build", "--release", "-p", "warden-component", "--target", crate::GUEST_TARGET]);
    guest.args(["--target-dir", "target/guest"]);
    crate::run("building the component", guest)?;
    fresh(out)?;
    let mut install = Command::new("bash");
    install
        .arg(root.join("integrations/hermes/scripts/install.sh"))
        .arg("--hermes-home")
        .arg(out)
        .arg("--component")
        .arg(root.join(COMPONENT))
        .arg("--no-pip")
        .current_dir(root)
        .env_remove("HERMES_HOME");
    crate::run("laying out the Hermes plugin (integrations/hermes/scripts/install.sh --no-pip)", install)?;
    eprintln!("    Hermes plugin: {}", out.join("plugins/warden").display());
    Ok(())
}

/// Empties `dir` (a folder this task owns, under `target/`).
fn fresh(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target: PathBuf = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}
