//! `cargo xtask completions` and `cargo xtask man`: shell completion scripts
//! and the man page of `warden`, generated from its own argument parser.
//!
//! The `warden` binary prints them itself (hidden subcommands `completions
//! SHELL` and `man`, made with `clap_complete` and `clap_mangen`), so this
//! crate does not compile the host and its wasmtime a second time.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The shells completion scripts are written for.
pub const SHELLS: [(&str, &str); 5] = [
    ("bash", "warden.bash"),
    ("zsh", "_warden"),
    ("fish", "warden.fish"),
    ("elvish", "warden.elv"),
    ("powershell", "_warden.ps1"),
];

/// Where the files go: `target/warden-docs/` unless `--out DIR` is given.
fn out_dir(args: &[String]) -> Result<PathBuf> {
    match args {
        [] => Ok(super::root().join("target/warden-docs")),
        [flag, dir] if flag == "--out" => Ok(PathBuf::from(dir)),
        _ => bail!("usage: cargo xtask completions|man [--out DIR]"),
    }
}

/// Builds `warden` and returns its path.
fn warden() -> Result<PathBuf> {
    let mut build = super::cargo();
    build.args(["build", "--release", "--quiet", "--package", "warden-host", "--bin", "warden"]);
    super::run("cargo build --bin warden", build)?;
    Ok(super::root().join("target/release/warden"))
}

fn print(warden: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = std::process::Command::new(warden).args(args).output().context("cannot run warden")?;
    if !out.status.success() {
        bail!("warden {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    }
    Ok(out.stdout)
}

/// Writes one completion script per shell into `<out>/completions/`.
pub fn completions(args: &[String]) -> Result<()> {
    let dir = out_dir(args)?.join("completions");
    std::fs::create_dir_all(&dir)?;
    let warden = warden()?;
    for (shell, file) in SHELLS {
        let path = dir.join(file);
        std::fs::write(&path, print(&warden, &["completions", shell])?)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// Writes the man page `<out>/man/warden.1`.
pub fn man(args: &[String]) -> Result<()> {
    let dir = out_dir(args)?.join("man");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("warden.1");
    std::fs::write(&path, print(&warden()?, &["man"])?)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
