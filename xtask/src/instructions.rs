//! `cargo xtask instructions [--case NAME]... [--way WAY]... [--top N]`: what
//! one check executes, counted instead of timed.
//!
//! Timings on a shared two-core machine move by about 10% between runs, so a
//! change worth 1 to 3% (most of what is left to take) cannot be seen in
//! them. Callgrind counts the instructions a run executes, the same count
//! every time. For each per-call case of the measurement suite (`typical`,
//! `path-heavy`, `typical, risk on`, ...) and each way (`native`,
//! `component+memory`, `component+sqlite`), this runs the suite's `--calls`
//! mode under callgrind twice, with [`FEW`] and [`MANY`] checks, and divides
//! the difference by the checks between them: what one check executes, with
//! the start-up (loading, compiling, configuring) taken out.
//!
//! Through the component the count names the guest's functions: the guest is
//! built a second time with its function names kept (`target/guest-names`,
//! the same code as the shipped one, whose names are stripped), and the host
//! writes a perf map as it loads it (`WARDEN_PROFILER=perfmap`). Instructions
//! are not time (a cache miss costs more than an addition), but every change
//! that takes work away shows in them.
//!
//! Needs `valgrind` (`apt-get install valgrind`). Under valgrind the
//! processor offers fewer features than natively (no AVX-512), so the first
//! run compiles the component once more (about two minutes, then cached
//! with the tests' compiled components in the system's temporary folder). Writes
//! `target/warden-instructions/summary.json` and `summary.md`.

use crate::{cargo, ensure_guest_target, root, run};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Checks in the shorter run.
pub const FEW: u64 = 100;
/// Checks in the longer run.
pub const MANY: u64 = 400;
/// The per-call cases counted when none is named.
const DEFAULT_CASES: &[&str] = &["typical", "path-heavy"];
/// The ways counted when none is named.
const DEFAULT_WAYS: &[&str] = &["native", "component+memory"];
/// Functions listed per case and way when `--top` is not given.
const DEFAULT_TOP: usize = 25;

pub fn instructions(args: &[String]) -> Result<()> {
    let (mut cases, mut ways, mut top) = (Vec::new(), Vec::new(), DEFAULT_TOP);
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--case" => cases.push(it.next().context("--case takes a case name, such as `typical`")?.clone()),
            "--way" => {
                ways.push(it.next().context("--way takes `native`, `component+memory` or `component+sqlite`")?.clone())
            }
            "--top" => {
                let n = it.next().context("--top takes a number")?;
                top = n.parse().with_context(|| format!("--top takes a number, not `{n}`"))?;
            }
            other => bail!(
                "unknown option `{other}`; `cargo xtask instructions` takes `--case NAME`, `--way WAY` and `--top N`"
            ),
        }
    }
    if cases.is_empty() {
        cases = DEFAULT_CASES.iter().map(|c| c.to_string()).collect();
    }
    if ways.is_empty() {
        ways = DEFAULT_WAYS.iter().map(|w| w.to_string()).collect();
    }
    for tool in ["valgrind", "callgrind_annotate"] {
        // Only whether it starts: `callgrind_annotate --version` exits with 255.
        let found = Command::new(tool).arg("--version").output().is_ok();
        if !found {
            bail!("`cargo xtask instructions` needs `{tool}` (Debian and Ubuntu: `apt-get install valgrind`)");
        }
    }
    ensure_guest_target()?;
    let guest = named_guest()?;
    let suite = suite_binary()?;
    let out = root().join("target/warden-instructions");
    let runs = out.join("runs");
    std::fs::create_dir_all(&runs).with_context(|| format!("creating {}", runs.display()))?;

    let mut results = Vec::new();
    if ways.iter().any(|w| w != "native") {
        // The first run under valgrind compiles the component for the processor valgrind offers;
        // made once here, so neither counted run includes it.
        eprintln!("==> loading the component under valgrind (the first time, it compiles: about two minutes)");
        count(&suite, &guest, DEFAULT_CASES[0], "component+memory", 1, &runs)?;
    }
    for case in &cases {
        for way in &ways {
            eprintln!("==> counting `{case}` {way} ({FEW} and {MANY} checks under callgrind)");
            let few = count(&suite, &guest, case, way, FEW, &runs)?;
            let many = count(&suite, &guest, case, way, MANY, &runs)?;
            let per = PerCall::between(&few, &many, MANY - FEW);
            print!("{}", per.markdown(case, way, top));
            results.push((case.clone(), way.clone(), per));
        }
    }
    let json = serde_json::Value::Array(
        results
            .iter()
            .map(|(case, way, per)| {
                serde_json::json!({
                    "case": case, "way": way, "per_call": per.total.round(),
                    "guest": per.guest().round(), "host": (per.total - per.guest()).round(),
                    "functions": per.top(top).iter().map(|(name, f)| serde_json::json!({
                        "name": name, "guest": f.guest, "per_call": f.per_call.round(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    );
    std::fs::write(out.join("summary.json"), serde_json::to_string_pretty(&json)?)?;
    let markdown: String = results.iter().map(|(case, way, per)| per.markdown(case, way, top)).collect();
    std::fs::write(out.join("summary.md"), markdown)?;
    eprintln!("==> wrote {} and summary.md", out.join("summary.json").display());
    Ok(())
}

/// Builds the guest as the host embeds it, but with its function names kept.
fn named_guest() -> Result<PathBuf> {
    let config = std::fs::read_to_string(root().join(".cargo/config.toml")).context("reading .cargo/config.toml")?;
    let flags = guest_flags_with_names(&config)?;
    let target_dir = root().join("target/guest-names");
    let mut cmd = cargo();
    cmd.args(["build", "--release", "--locked", "--package", "warden-component", "--target", crate::GUEST_TARGET])
        .args(["--config", guest_build::GUEST_LTO])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("CARGO_ENCODED_RUSTFLAGS", flags.join("\u{1f}"));
    for var in ["RUSTFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "CARGO_BUILD_RUSTFLAGS"] {
        cmd.env_remove(var);
    }
    run("the guest with its function names (target/guest-names)", cmd)?;
    Ok(target_dir.join(crate::GUEST_TARGET).join("release/warden_component.wasm"))
}

/// The guest's `rustflags` from `.cargo/config.toml` without the stripping
/// of symbols: the same code, with its function names.
fn guest_flags_with_names(config: &str) -> Result<Vec<String>> {
    let section = config
        .split_once(&format!("[target.{}]", crate::GUEST_TARGET))
        .map(|(_, rest)| rest)
        .context("`.cargo/config.toml` has no section for the guest target")?;
    let line = section
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("rustflags"))
        .context("the guest target's section has no `rustflags`")?;
    let list = line.split_once('[').and_then(|(_, rest)| rest.rsplit_once(']')).map(|(inside, _)| inside);
    let list = list.context("the guest's `rustflags` is not a list on one line")?;
    let flags: Vec<String> =
        list.split(',').map(|f| f.trim().trim_matches('"').to_string()).filter(|f| !f.is_empty()).collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < flags.len() {
        if flags[i] == "-C" && flags.get(i + 1).is_some_and(|f| f.starts_with("strip=")) {
            i += 2;
            continue;
        }
        kept.push(flags[i].clone());
        i += 1;
    }
    Ok(kept)
}

/// Builds the measurement suite and returns its executable.
fn suite_binary() -> Result<PathBuf> {
    eprintln!("==> building the measurement suite");
    let mut cmd = cargo();
    cmd.args(["bench", "--bench", "suite", "--no-run", "--message-format=json-render-diagnostics"]);
    let output = cmd.output().context("cannot start cargo")?;
    if !output.status.success() {
        bail!("building the measurement suite failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "suite")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .context("cargo built no `suite` executable")
}

/// One run under callgrind: `n` checks of `case` made `way`.
fn count(suite: &Path, guest: &Path, case: &str, way: &str, n: u64, runs: &Path) -> Result<Counted> {
    let name: String =
        format!("{case}-{way}-{n}").chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let file = runs.join(format!("{name}.callgrind"));
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "--smc-check=all-non-file"])
        .arg(format!("--callgrind-out-file={}", file.display()))
        .arg(suite)
        .args(["--calls", case, way, &n.to_string()])
        .current_dir(root());
    if way != "native" {
        cmd.arg("--component").arg(guest).env("WARDEN_PROFILER", "perfmap");
    }
    let output = cmd.output().context("cannot start valgrind")?;
    if !output.status.success() {
        bail!("the run of `{case}` {way} under callgrind failed:\n{}", String::from_utf8_lossy(&output.stderr));
    }
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let pid = text.lines().find_map(|l| l.strip_prefix("pid: ")).and_then(|p| p.trim().parse::<u32>().ok());
    let map_file = pid.map(|p| PathBuf::from(format!("/tmp/perf-{p}.map")));
    let map = match &map_file {
        Some(f) if f.is_file() => PerfMap::parse(&std::fs::read_to_string(f)?),
        _ => PerfMap::default(),
    };
    if let Some(f) = &map_file {
        let _ = std::fs::remove_file(f);
    }
    let annotated = Command::new("callgrind_annotate").arg("--threshold=100").arg(&file).output()?;
    if !annotated.status.success() {
        bail!("callgrind_annotate failed: {}", String::from_utf8_lossy(&annotated.stderr));
    }
    Ok(Counted::parse(&String::from_utf8_lossy(&annotated.stdout), &map))
}

/// The guest's functions by address, from a perf map (`START SIZE NAME`, hex).
#[derive(Debug, Default)]
struct PerfMap(Vec<(u64, u64, String)>);

impl PerfMap {
    fn parse(text: &str) -> PerfMap {
        let mut entries: Vec<(u64, u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut it = l.splitn(3, ' ');
                let start = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
                let size = u64::from_str_radix(it.next()?.trim_start_matches("0x"), 16).ok()?;
                Some((start, size, it.next()?.to_string()))
            })
            .collect();
        entries.sort();
        PerfMap(entries)
    }

    /// The function holding `address`.
    fn name_of(&self, address: u64) -> Option<&str> {
        let i = self.0.partition_point(|(start, _, _)| *start <= address).checked_sub(1)?;
        let (start, size, name) = self.0.get(i)?;
        (address < start + size).then_some(name.as_str())
    }
}

/// One run's instructions by function (self cost), and its total.
#[derive(Debug, Default)]
struct Counted {
    total: u64,
    by_function: BTreeMap<(bool, String), u64>,
}

impl Counted {
    /// Reads `callgrind_annotate` output: `  1,234 ( 5.6%)  file:function [object]`.
    fn parse(text: &str, map: &PerfMap) -> Counted {
        let mut counted = Counted::default();
        for line in text.lines() {
            let Some((count, rest)) = line.trim_start().split_once(' ') else { continue };
            let Ok(count) = count.replace(',', "").parse::<u64>() else { continue };
            let Some(rest) = rest.trim_start().strip_prefix('(').and_then(|r| r.split_once(')')).map(|(_, r)| r.trim())
            else {
                continue;
            };
            if rest.starts_with("PROGRAM TOTALS") {
                counted.total = count;
                continue;
            }
            let place = rest.rsplit_once(" [").map_or(rest, |(place, _)| place);
            let function = function_of(place);
            let key = match function.strip_prefix("0x").and_then(|a| u64::from_str_radix(a, 16).ok()) {
                Some(address) => match map.name_of(address) {
                    Some(name) => (true, readable(name)),
                    None => (true, "(guest code outside the perf map)".to_string()),
                },
                None => (false, readable(function)),
            };
            *counted.by_function.entry(key).or_default() += count;
        }
        counted
    }
}

/// The function of `file:function`: the text after the first single colon.
fn function_of(place: &str) -> &str {
    let bytes = place.as_bytes();
    let split = (0..bytes.len())
        .find(|&i| bytes[i] == b':' && bytes.get(i + 1) != Some(&b':') && (i == 0 || bytes[i - 1] != b':'));
    split.map_or(place, |i| &place[i + 1..])
}

/// A function's name without wasmtime's `wasm[0]::function[12]::` prefix,
/// demangled, without its hash.
fn readable(name: &str) -> String {
    let mut rest = name;
    while let Some(after) = rest.strip_prefix("wasm[").and_then(|r| r.split_once("]::")).map(|(_, r)| r) {
        rest = after.strip_prefix("function[").and_then(|r| r.split_once("]::")).map_or(after, |(_, r)| r);
    }
    let demangled = match rustc_demangle::try_demangle(rest) {
        Ok(d) => format!("{d:#}"),
        Err(_) => cut_legacy_name(rest),
    };
    match demangled.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => head.to_string(),
        _ => demangled,
    }
}

/// A legacy mangled name the perf map cut short (`_ZN87_$LT$warden_core..paths..Segm`),
/// which no demangler reads: its whole parts joined by `::`, the cut one as it is.
fn cut_legacy_name(name: &str) -> String {
    let Some(mut rest) = name.strip_prefix("_ZN") else { return name.to_string() };
    let mut parts = Vec::new();
    while let Some(digits) = rest.find(|c: char| !c.is_ascii_digit()).filter(|&n| n > 0) {
        let len: usize = rest[..digits].parse().unwrap_or(usize::MAX);
        let body = &rest[digits..];
        match body.get(..len) {
            Some(part) => {
                parts.push(part);
                rest = &body[len..];
            }
            None => {
                parts.push(body);
                rest = "";
            }
        }
    }
    let joined = parts.join("::");
    let mut out = String::new();
    let mut text = joined.as_str();
    while !text.is_empty() {
        let (piece, skip) = match text {
            t if t.starts_with("$LT$") => ("<", 4),
            t if t.starts_with("$GT$") => (">", 4),
            t if t.starts_with("$u20$") => (" ", 5),
            t if t.starts_with("$RF$") => ("&", 4),
            t if t.starts_with("$C$") => (",", 3),
            t if t.starts_with("..") => ("::", 2),
            t => (&t[..t.chars().next().map_or(1, char::len_utf8)], t.chars().next().map_or(1, char::len_utf8)),
        };
        out.push_str(piece);
        text = &text[skip..];
    }
    out.strip_prefix('_').filter(|o| o.starts_with('<')).map_or(out.clone(), str::to_string)
}

/// Instructions one check executes, by function.
#[derive(Debug)]
struct PerCall {
    total: f64,
    by_function: Vec<(String, Function)>,
}

#[derive(Debug, Clone, Copy)]
struct Function {
    guest: bool,
    per_call: f64,
}

impl PerCall {
    /// What `checks` more checks in `many` than in `few` executed, per check.
    fn between(few: &Counted, many: &Counted, checks: u64) -> PerCall {
        let checks = checks.max(1) as f64;
        let mut by_function: Vec<(String, Function)> = many
            .by_function
            .iter()
            .map(|((guest, name), count)| {
                let before = few.by_function.get(&(*guest, name.clone())).copied().unwrap_or(0);
                let per_call = (*count as f64 - before as f64) / checks;
                (name.clone(), Function { guest: *guest, per_call })
            })
            .filter(|(_, f)| f.per_call.abs() >= 0.5)
            .collect();
        by_function.sort_by(|a, b| b.1.per_call.total_cmp(&a.1.per_call));
        PerCall { total: (many.total as f64 - few.total as f64) / checks, by_function }
    }

    fn guest(&self) -> f64 {
        self.by_function.iter().filter(|(_, f)| f.guest).map(|(_, f)| f.per_call).sum()
    }

    fn top(&self, n: usize) -> &[(String, Function)] {
        &self.by_function[..n.min(self.by_function.len())]
    }

    fn markdown(&self, case: &str, way: &str, top: usize) -> String {
        let mut s = format!(
            "\n`{case}`, {way}: {:.0} instructions a check{}\n\n| instructions | share | where | function |\n|---:|---:|---|---|\n",
            self.total,
            if way == "native" {
                String::new()
            } else {
                format!(" (guest code {:.0}, host {:.0})", self.guest(), self.total - self.guest())
            }
        );
        for (name, f) in self.top(top) {
            let share = if self.total > 0.0 { 100.0 * f.per_call / self.total } else { 0.0 };
            let place = if way == "native" {
                ""
            } else if f.guest {
                "guest"
            } else {
                "host"
            };
            s.push_str(&format!("| {:.0} | {share:.1}% | {place} | `{}` |\n", f.per_call, name.replace('|', "\\|")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_guest_is_built_with_the_shipped_guests_flags_less_the_stripping() {
        let config = include_str!("../../.cargo/config.toml");
        let flags = guest_flags_with_names(config).unwrap_or_default();
        assert_eq!(flags, ["-C", "opt-level=3", "-C", "relocation-model=static"], "{config}");
        let odd = "[target.wasm32-wasip2]\nrustflags = [\"-C\", \"strip=debuginfo\", \"-C\", \"target-cpu=mvp\"]\n";
        assert_eq!(guest_flags_with_names(odd).unwrap_or_default(), ["-C", "target-cpu=mvp"]);
        assert!(guest_flags_with_names("[alias]\nx = \"y\"\n").is_err());
    }

    #[test]
    fn a_perf_map_names_every_address_inside_a_function_and_none_between_them() {
        let map = PerfMap::parse("0x100 20 wasm[0]::function[3]::a\n0x200 10 wasm[0]::function[4]::b\nnot a line\n");
        assert_eq!(map.name_of(0x100), Some("wasm[0]::function[3]::a"));
        assert_eq!(map.name_of(0x11f), Some("wasm[0]::function[3]::a"));
        assert_eq!(map.name_of(0x120), None);
        assert_eq!(map.name_of(0x20f), Some("wasm[0]::function[4]::b"));
        assert_eq!(map.name_of(0xff), None);
    }

    #[test]
    fn callgrind_annotate_lines_become_counts_by_function_guest_or_host() {
        let map = PerfMap::parse(
            "0x5000 100 wasm[0]::function[830]::warden_core::shell::commands::Walker::dispatch::h58585618271c9756\n",
        );
        let text = "\
--------------------------------------------------------------------------------
409,120,602 (100.0%)  PROGRAM TOTALS
--------------------------------------------------------------------------------
Ir                    file:function
 16,532,509 ( 4.04%)  ???:0x0000000000005010 [???]
  3,464,448 ( 0.85%)  ???:wasmtime::runtime::component::instance::Instance::options_memory [/x/profc]
  3,107,601 ( 3.29%)  ./string/../memmove-vec-unaligned-erms.S:__memcpy_avx_unaligned_erms [/usr/lib/libc.so.6]
     12,000 ( 0.01%)  ???:0x0000000000009999 [???]
";
        let counted = Counted::parse(text, &map);
        assert_eq!(counted.total, 409_120_602);
        assert_eq!(
            counted.by_function.get(&(true, "warden_core::shell::commands::Walker::dispatch".into())),
            Some(&16_532_509)
        );
        assert_eq!(
            counted
                .by_function
                .get(&(false, "wasmtime::runtime::component::instance::Instance::options_memory".into())),
            Some(&3_464_448)
        );
        assert_eq!(counted.by_function.get(&(false, "__memcpy_avx_unaligned_erms".into())), Some(&3_107_601));
        assert_eq!(counted.by_function.get(&(true, "(guest code outside the perf map)".into())), Some(&12_000));
    }

    #[test]
    fn names_lose_wasmtimes_prefix_their_mangling_and_their_hash() {
        assert_eq!(readable("wasm[0]::function[176]::memcmp"), "memcmp");
        assert_eq!(
            readable("wasm[0]::function[742]::warden_core::tools::exec::check_parsed::h6e2c515eeea943ab"),
            "warden_core::tools::exec::check_parsed"
        );
        assert_eq!(readable("_ZN4core3ptr13drop_in_place17h0123456789abcdefE"), "core::ptr::drop_in_place");
        assert_eq!(readable("wasmtime_builtin_memory_copy"), "wasmtime_builtin_memory_copy");
        assert_eq!(
            readable(
                "wasm[0]::function[703]::_ZN87_$LT$warden_core..paths..Segments$u20$as$u20$core..iter..traits..iterator..Iterator$GT$4nex"
            ),
            "<warden_core::paths::Segments as core::iter::traits::iterator::Iterator>::nex"
        );
    }

    #[test]
    fn one_check_is_the_difference_of_the_two_runs_divided_by_the_checks_between_them() {
        let mut few = Counted { total: 1_000, ..Counted::default() };
        few.by_function.insert((true, "f".into()), 400);
        few.by_function.insert((false, "start".into()), 600);
        let mut many = Counted { total: 4_000, ..Counted::default() };
        many.by_function.insert((true, "f".into()), 3_100);
        many.by_function.insert((false, "start".into()), 600);
        many.by_function.insert((false, "g".into()), 300);
        let per = PerCall::between(&few, &many, 300);
        assert_eq!(per.total, 10.0);
        assert_eq!(per.by_function.len(), 2, "start-up alone is no part of a check: {per:?}");
        assert_eq!((per.by_function[0].0.as_str(), per.by_function[0].1.per_call), ("f", 9.0));
        assert_eq!(per.guest(), 9.0);
        assert!(per.markdown("typical", "component+memory", 5).contains("| 9 | 90.0% | guest | `f` |"));
    }
}
