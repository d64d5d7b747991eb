//! `cargo xtask bench [--quick] [--no-toolkit] [--baseline-warden FILE]`: every performance figure of
//! the README's Performance section, in one run.
//!
//! 1. Installs the Agent Governance Toolkit (`agent-governance-toolkit-core`,
//!    pinned to [`TOOLKIT_VERSION`]) from PyPI into a venv under
//!    `target/warden-bench/`, unless it is there already or `--no-toolkit`.
//! 2. Runs the criterion benchmarks: the core natively
//!    (`crates/warden-core/benches/judge.rs`) and the component over
//!    in-memory storage and SQLite (`host-example/benches/component.rs`).
//! 3. Runs the measurement suite (`tests/benches/suite.rs`): the side-by-side
//!    run of Warden and the toolkit on the same corpus, single-call
//!    percentiles, a loopback load test of `warden serve`, cold start of
//!    `warden check`, instance creation, component size and DLP throughput.
//!    It writes `target/warden-bench/summary.json` and `summary.md`.
//!
//! `--baseline-warden FILE` (repeatable) load-tests another `warden` binary's
//! `serve` the same way in the same run, for a before/after of a host change.
//!
//! `--quick` runs every measurement with few iterations (a smoke run that
//! finishes in well under a minute once built). Timing never fails a run.

use crate::{cargo, ensure_guest_target, root, run};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The PyPI package measured side by side.
pub const TOOLKIT_PACKAGE: &str = "agent-governance-toolkit-core";
/// Its pinned version.
pub const TOOLKIT_VERSION: &str = "5.0.0";

/// Criterion settings of a quick run: the shortest that still takes samples.
const QUICK_CRITERION: &[&str] = &["--warm-up-time", "0.2", "--measurement-time", "0.5", "--sample-size", "10"];

pub fn bench(args: &[String]) -> Result<()> {
    let mut quick = false;
    let mut toolkit = true;
    let mut baselines = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--no-toolkit" => toolkit = false,
            "--baseline-warden" => match it.next() {
                Some(path) => baselines.push(std::fs::canonicalize(path).with_context(|| format!("`{path}`"))?),
                None => bail!("`--baseline-warden` takes the path of a `warden` binary"),
            },
            other => bail!(
                "unknown option `{other}`; `cargo xtask bench` takes `--quick`, `--no-toolkit` and \
                 `--baseline-warden FILE`"
            ),
        }
    }
    ensure_guest_target()?;
    let out = root().join("target/warden-bench");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let python = if toolkit {
        match toolkit_venv(&out) {
            Ok(python) => Some(python),
            Err(e) => {
                eprintln!("warning: the toolkit is not measured: {e:#}");
                None
            }
        }
    } else {
        None
    };

    // Stale figures of other runs must not reach the summary.
    let criterion = root().join("target/criterion");
    let _ = std::fs::remove_dir_all(&criterion);
    // Every build here selects the default members, as `cargo test --release`
    // does: features unify the same way, so nothing is built a second way.
    for bench in ["judge", "component"] {
        let mut cmd = cargo();
        cmd.args(["bench", "--bench", bench, "--"]);
        if quick {
            cmd.args(QUICK_CRITERION);
        }
        run(&format!("criterion: {bench}"), cmd)?;
    }

    let mut suite = cargo();
    suite.args(["bench", "--bench", "suite", "--", "--out"]);
    suite.arg(&out).arg("--criterion").arg(&criterion);
    if quick {
        suite.arg("--quick");
    }
    if let Some(python) = &python {
        suite.arg("--python").arg(python);
    }
    for baseline in &baselines {
        suite.arg("--baseline-warden").arg(baseline);
    }
    run("measurement suite", suite)?;
    eprintln!("==> wrote {} and summary.md", out.join("summary.json").display());
    Ok(())
}

/// The smoke run of `cargo xtask test`: the suite in quick mode, without the
/// toolkit and criterion. It fails only when a measured call is decided
/// differently natively and through the component, or a measurement breaks.
pub fn smoke() -> Result<()> {
    let out = root().join("target/warden-bench/smoke");
    let mut suite = cargo();
    suite.args(["bench", "--bench", "suite", "--", "--quick", "--out"]);
    suite.arg(&out);
    run("benchmark smoke run (quick, timing never fails it)", suite)?;
    // The mode `cargo xtask instructions` runs under callgrind, run plainly.
    for way in ["native", "component+memory"] {
        let mut calls = cargo();
        calls.args(["bench", "--bench", "suite", "--", "--calls", "typical", way, "3"]);
        run(&format!("the suite's `--calls` mode ({way})"), calls)?;
    }
    Ok(())
}

/// The venv's python with the pinned toolkit installed, creating it if needed.
fn toolkit_venv(out: &Path) -> Result<PathBuf> {
    let venv = out.join("agt-venv");
    let python = venv.join("bin/python");
    let installed = || {
        Command::new(&python)
            .args(["-c", &format!("import importlib.metadata as m; print(m.version('{TOOLKIT_PACKAGE}'))")])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .is_some_and(|o| String::from_utf8_lossy(&o.stdout).trim() == TOOLKIT_VERSION)
    };
    if installed() {
        return Ok(python);
    }
    if !python.is_file() {
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "venv"]).arg(&venv);
        run("python3 -m venv (toolkit)", cmd)?;
    }
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.args(["install", "--quiet", "--disable-pip-version-check", &format!("{TOOLKIT_PACKAGE}=={TOOLKIT_VERSION}")]);
    run(&format!("pip install {TOOLKIT_PACKAGE}=={TOOLKIT_VERSION}"), pip)?;
    if !installed() {
        bail!("{TOOLKIT_PACKAGE} {TOOLKIT_VERSION} is not importable from {}", python.display());
    }
    Ok(python)
}
