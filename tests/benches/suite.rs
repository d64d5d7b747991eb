//! The measurements of `cargo xtask bench`, in one process run:
//!
//! - side by side on the same corpus (every shell command of the shared
//!   tool-call table and a set of file paths, see `support/corpus.rs`): Warden
//!   natively, through the component with in-memory storage and with SQLite,
//!   and the Agent Governance Toolkit's `PolicyEvaluator` (Python, in the venv
//!   `cargo xtask bench` installs) with equivalent rules, in a child process;
//! - the typical and the path-heavy shell call, per call (p50 and p99);
//! - storage round trips of one check;
//! - a loopback load test of the `warden serve` binary;
//! - cold start of `warden check` with a warm and a cold compile cache;
//! - instance creation with a small and a large configuration;
//! - the component's size; DLP throughput on 1 KiB and 32 KiB bodies;
//! - the criterion figures `cargo xtask bench` ran before, when given.
//!
//! Writes `summary.json` and `summary.md` into `--out`. Timing never fails
//! the run; a wrong verdict does (the numbers would be for another decision).
//!
//! `cargo bench -p warden-tests --bench suite -- [--quick] [--out DIR] [--python PY] [--criterion DIR]`
//!
//! With `--calls CASE WAY N [--component FILE]` it measures nothing: it makes
//! one per-call case's check (`typical`, `path-heavy`, `typical, risk on`,
//! ...) N times one way (`native`, `component+memory`, `component+sqlite`),
//! optionally through the component in FILE, and exits. `cargo xtask
//! instructions` runs it under callgrind to count what one check executes.

// A benchmark harness, not library code: a wrong setup should stop it loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warden_host::bindings::exports::warden::guard::policy::{OutboundMessage, ToolCall};
use warden_host::json::decision_name;
use warden_host::memory_storage::MemoryStorage;
use warden_host::storage::{BatchError, Condition, Record, SqliteStorage, Storage, StorageError, Write};
use warden_host::{Limits, Runtime};
use warden_tests::corpus::{self, Input};
use warden_tests::{CapturedLog, T0, options, tool_call};

/// The bearer token of the load-tested service.
const TOKEN: &str = "bench-token-0123456789abcdef";
/// Connections of the load test.
const CONNECTIONS: usize = 8;
/// The typical shell call, as the criterion benchmarks time it.
const TYPICAL: &str = "git status && cargo test 2>&1 | tail -5";
/// The path-heavy shell call: 5 commands, 13 paths.
const PATH_HEAVY: &str = "mkdir -p build/out && cp -r src/main.rs src/lib.rs ./docs/../README.md \
    /home/dev/project/tests/a.rs build/out/ && tar czf /tmp/out.tgz build/out ~/project/docs \
    && rm -rf ./target/debug/incremental && diff -u src/a.rs src/b.rs > /tmp/a.diff";

// The targets of the performance work, on the 2-core reference machine.
const TARGET_TYPICAL_MEMORY_US: f64 = 5.0;
const TARGET_TYPICAL_SQLITE_US: f64 = 8.0;
const TARGET_TYPICAL_P99_US: f64 = 20.0;
const TARGET_PATH_HEAVY_US: f64 = 15.0;
const TARGET_COMPONENT_OVER_NATIVE: f64 = 1.6;
const TARGET_OVER_AGT: f64 = 10.0;
const TARGET_SERVE_RPS: f64 = 30_000.0;
const TARGET_SERVE_P99_MS: f64 = 1.0;
const TARGET_DLP_MBPS: f64 = 300.0;
const TARGET_ROUND_TRIPS: f64 = 1.0;

struct Args {
    quick: bool,
    out: PathBuf,
    python: Option<PathBuf>,
    criterion: Option<PathBuf>,
    /// Other `warden` binaries whose `serve` is load-tested the same way, for a before/after.
    baselines: Vec<PathBuf>,
    /// Only load-test `warden serve`, the current binary and the baseline in turn.
    serve_only: bool,
    /// Only make one case's check N times one way (see the module's text).
    calls: Option<(String, String, usize)>,
    /// The component `--calls` runs, instead of the one embedded in the host.
    component: Option<PathBuf>,
}

fn args() -> Args {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = root.canonicalize().unwrap_or(root);
    let mut a = Args {
        quick: false,
        out: root.join("target/warden-bench"),
        python: None,
        criterion: None,
        baselines: Vec::new(),
        serve_only: false,
        calls: None,
        component: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => a.quick = true,
            "--out" => a.out = it.next().map(PathBuf::from).expect("--out DIR"),
            "--python" => a.python = it.next().map(PathBuf::from),
            "--criterion" => a.criterion = it.next().map(PathBuf::from),
            "--baseline-warden" => a.baselines.extend(it.next().map(PathBuf::from)),
            "--serve-only" => a.serve_only = true,
            "--calls" => {
                let (case, way, n) = (it.next(), it.next(), it.next().and_then(|n| n.parse().ok()));
                match (case, way, n) {
                    (Some(case), Some(way), Some(n)) => a.calls = Some((case, way, n)),
                    _ => panic!("--calls takes a case, a way and a count: --calls typical native 100"),
                }
            }
            "--component" => a.component = it.next().map(PathBuf::from),
            // `cargo bench` adds `--bench`; anything else is ignored too.
            _ => {}
        }
    }
    a
}

/// How many times each measurement repeats.
struct Plan {
    corpus_rounds: usize,
    per_call: usize,
    serve_requests: usize,
    cold_runs: usize,
    warm_runs: usize,
    instances: usize,
    dlp_small: usize,
    dlp_large: usize,
}

impl Plan {
    fn new(quick: bool) -> Plan {
        if quick {
            Plan {
                corpus_rounds: 2,
                per_call: 300,
                serve_requests: 2_000,
                cold_runs: 1,
                warm_runs: 2,
                instances: 10,
                dlp_small: 50,
                dlp_large: 10,
            }
        } else {
            Plan {
                corpus_rounds: 20,
                per_call: 20_000,
                serve_requests: 40_000,
                cold_runs: 3,
                warm_runs: 10,
                instances: 200,
                dlp_small: 3_000,
                dlp_large: 300,
            }
        }
    }
}

/// Percentiles of a set of durations, in microseconds.
#[derive(Clone, Copy, Debug)]
struct Stats {
    n: usize,
    p50: f64,
    p99: f64,
    mean: f64,
}

fn stats(mut ns: Vec<u64>) -> Stats {
    assert!(!ns.is_empty(), "no samples");
    ns.sort_unstable();
    let at = |q: f64| ns[(((ns.len() - 1) as f64) * q).round() as usize] as f64 / 1000.0;
    let mean = ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1000.0;
    Stats { n: ns.len(), p50: at(0.50), p99: at(0.99), mean }
}

fn stats_json(s: Stats) -> Value {
    json!({"n": s.n, "p50_us": round(s.p50), "p99_us": round(s.p99), "mean_us": round(s.mean)})
}

fn round(x: f64) -> f64 {
    if x >= 100.0 { x.round() } else { (x * 100.0).round() / 100.0 }
}

fn timed<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let started = Instant::now();
    let r = f();
    (r, started.elapsed().as_nanos() as u64)
}

// ---------------------------------------------------------------- the three Warden ways

/// Drops log lines.
struct Discard;

/// Keeps what the `warden` binary keeps by default (`warn` and above), so
/// the core formats no line the binary would not.
impl warden_core::ports::Log for Discard {
    fn write(&self, _: warden_core::ports::Level, _: &str) {}

    fn enabled(&self, level: warden_core::ports::Level) -> bool {
        matches!(level, warden_core::ports::Level::Warn | warden_core::ports::Level::Error)
    }
}

/// The host context the measured runtimes declare: the `warden` binary's
/// with its default paths and log level.
fn binary_context() -> warden_host::bindings::exports::warden::guard::policy::HostContext {
    warden_host::host_context::as_the_binary_runs(warden_tests::TEST_SECRET.to_vec())
}

/// The core natively, over its in-memory fakes, with the `warden` binary's host context.
struct Native {
    warden: warden_core::Warden,
    storage: warden_core::fakes::MemoryStorage,
    http: warden_core::fakes::ScriptedHttp,
}

impl Native {
    fn new(config: &str) -> Native {
        let mut warden = warden_core::Warden::configure(config).unwrap_or_else(|e| panic!("config: {e:?}"));
        let c = binary_context();
        let context = warden_core::host::HostContext {
            approval_secret: c.approval_secret,
            databases: c.databases,
            protected_paths: c.protected_paths,
            admin_programs: c.admin_programs,
        };
        warden.set_host_context(&context).expect("the host context is valid");
        Native {
            warden,
            storage: warden_core::fakes::MemoryStorage::default(),
            http: warden_core::fakes::ScriptedHttp::unreachable(),
        }
    }

    fn check(&self, call: &warden_core::model::ToolCall) -> (String, String) {
        let ports = warden_core::ports::Ports { http: &self.http, storage: &self.storage, log: &Discard };
        let v = self.warden.check_tool_call(&ports, call);
        (format!("{:?}", v.decision).to_lowercase(), v.rule)
    }
}

fn native_call(c: &ToolCall) -> warden_core::model::ToolCall {
    warden_core::model::ToolCall {
        tool_name: c.tool_name.clone(),
        arguments: c.arguments.clone(),
        call_id: c.call_id.clone(),
        run_id: c.run_id.clone(),
        session_id: c.session_id.clone(),
        now_ms: c.now_ms,
        identity: warden_core::model::Identity::default(),
        cwd: c.cwd.clone(),
        derived_paths: c.derived_paths.clone(),
    }
}

fn runtime_on(storage: Arc<dyn Storage>, config: &str, pool: usize) -> Runtime {
    runtime_of(None, storage, config, pool)
}

/// [`runtime_on`] with the component in `component` when given.
fn runtime_of(component: Option<&Path>, storage: Arc<dyn Storage>, config: &str, pool: usize) -> Runtime {
    let log = CapturedLog::default();
    let mut opts = options(storage, &log);
    if let Some(file) = component {
        opts.component = warden_host::ComponentSource::File(file.to_path_buf());
    }
    opts.host = Some(binary_context());
    opts.limits = Limits { pool, ..Limits::default() };
    Runtime::new(opts, config).unwrap_or_else(|e| panic!("runtime did not start: {e}"))
}

fn corpus_call(input: &Input) -> ToolCall {
    let mut c = tool_call(input.tool, input.args.clone(), "s1", T0);
    c.cwd = Some(corpus::CWD.into());
    c
}

fn component_decision(rt: &Runtime, c: &ToolCall) -> (String, String) {
    let v = rt.check_tool_call(c);
    (decision_name(v.decision).to_string(), v.rule)
}

/// The three Warden ways side by side, on the same storage kinds the host offers.
struct Ways {
    native: Native,
    memory: Runtime,
    sqlite: Runtime,
    _db: tempfile::TempDir,
}

impl Ways {
    fn new(config: &str) -> Ways {
        let db = tempfile::tempdir().expect("a temporary folder");
        let sqlite = SqliteStorage::open(db.path().join("warden.db")).expect("open SQLite");
        Ways {
            native: Native::new(config),
            memory: runtime_on(Arc::new(MemoryStorage::default()), config, 1),
            sqlite: runtime_on(Arc::new(sqlite), config, 1),
            _db: db,
        }
    }

    const NAMES: [&'static str; 3] = ["native", "component+memory", "component+sqlite"];

    /// Runs `c` the `way`-th way, returning its decision and rule.
    fn check(&self, way: usize, c: &ToolCall, n: &warden_core::model::ToolCall) -> (String, String) {
        match way {
            0 => self.native.check(n),
            1 => component_decision(&self.memory, c),
            _ => component_decision(&self.sqlite, c),
        }
    }
}

// ---------------------------------------------------------------- side by side

struct SideBySide {
    json: Value,
    /// p50 per way and kind, microseconds: (way, kind) -> p50.
    p50: Vec<(String, String, f64)>,
}

fn side_by_side(plan: &Plan, python: Option<&Path>, out: &Path) -> SideBySide {
    let inputs = corpus::all();
    assert!(inputs.len() >= corpus::MIN_INPUTS, "the corpus has only {} inputs", inputs.len());
    let ways = Ways::new(corpus::CONFIG);
    let calls: Vec<ToolCall> = inputs.iter().map(corpus_call).collect();
    let natives: Vec<_> = calls.iter().map(native_call).collect();
    // The same decision every way, or the comparison is void.
    let mut decisions = Vec::new();
    for (i, (c, n)) in calls.iter().zip(&natives).enumerate() {
        let answers: Vec<_> = (0..3).map(|w| ways.check(w, c, n)).collect();
        assert!(
            answers.iter().all(|a| a == &answers[0]),
            "input {i} `{}` decided differently: {answers:?}",
            inputs[i].text
        );
        decisions.push(answers[0].0.clone());
    }
    let kinds = ["command", "path"];
    let mut samples: Vec<Vec<Vec<u64>>> = vec![vec![Vec::new(); kinds.len()]; 3];
    for _ in 0..plan.corpus_rounds {
        // Rounds interleave the ways, so a busy moment of the machine is shared.
        for (way, per_kind) in samples.iter_mut().enumerate() {
            for ((input, c), n) in inputs.iter().zip(&calls).zip(&natives) {
                let (_, ns) = timed(|| ways.check(way, c, n));
                per_kind[usize::from(input.kind == "path")].push(ns);
            }
        }
    }
    let mut results = serde_json::Map::new();
    let mut p50 = Vec::new();
    for (way, per_kind) in samples.into_iter().enumerate() {
        let mut by_kind = serde_json::Map::new();
        for (k, ns) in per_kind.into_iter().enumerate() {
            let s = stats(ns);
            p50.push((Ways::NAMES[way].to_string(), kinds[k].to_string(), s.p50));
            by_kind.insert(kinds[k].into(), stats_json(s));
        }
        results.insert(Ways::NAMES[way].into(), Value::Object(by_kind));
    }
    let mut agt = json!({"ran": false, "why": "no --python given (cargo xtask bench installs the toolkit)"});
    if let Some(python) = python {
        match run_agt(python, &inputs, plan.corpus_rounds, out) {
            Ok((meta, timings, allowed)) => {
                let mut by_kind = serde_json::Map::new();
                for kind in kinds {
                    let ns: Vec<u64> = timings
                        .iter()
                        .flat_map(|row| row.iter().zip(&inputs).filter(|(_, i)| i.kind == kind).map(|(t, _)| *t))
                        .collect();
                    let s = stats(ns);
                    p50.push(("agt".into(), kind.to_string(), s.p50));
                    by_kind.insert(kind.to_string(), stats_json(s));
                }
                let agree = allowed.iter().zip(&decisions).filter(|(a, d)| **a == (d.as_str() == "allow")).count();
                agt = json!({
                    "ran": true,
                    "meta": meta,
                    "results": by_kind,
                    "agreement": {"same_allow_or_not": agree, "of": inputs.len()},
                });
            }
            Err(e) => agt = json!({"ran": false, "why": e}),
        }
    }
    let counts = |kind: &str| inputs.iter().filter(|i| i.kind == kind).count();
    SideBySide {
        json: json!({
            "inputs": {"command": counts("command"), "path": counts("path")},
            "rounds": plan.corpus_rounds,
            "config": corpus::CONFIG,
            "warden": results,
            "agt": agt,
        }),
        p50,
    }
}

type AgtRun = (Value, Vec<Vec<u64>>, Vec<bool>);

fn run_agt(python: &Path, inputs: &[Input], rounds: usize, out: &Path) -> Result<AgtRun, String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/agt_side_by_side.py");
    let listed: Vec<Value> = inputs.iter().map(|i| json!({"kind": i.kind, "tool": i.tool, "text": i.text})).collect();
    let file = out.join("corpus.json");
    std::fs::write(&file, serde_json::to_string(&listed).expect("json")).map_err(|e| e.to_string())?;
    let output = Command::new(python)
        .arg(&script)
        .arg(&file)
        .arg(rounds.to_string())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !output.status.success() {
        return Err(format!("the toolkit run failed ({})", output.status));
    }
    let v: Value =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("the toolkit run printed no JSON: {e}"))?;
    let timings: Vec<Vec<u64>> = serde_json::from_value(v["timings_ns"].clone()).map_err(|e| e.to_string())?;
    let allowed: Vec<bool> = serde_json::from_value(v["allowed"].clone()).map_err(|e| e.to_string())?;
    let meta = json!({"package": v["package"], "version": v["version"], "python": v["python"], "rules": v["rules"]});
    Ok((meta, timings, allowed))
}

// ---------------------------------------------------------------- single calls

fn shell(command: &str) -> ToolCall {
    let mut c = tool_call("exec", json!({ "command": command }), "s1", T0);
    c.cwd = Some("/home/dev/project".into());
    c
}

/// The typical call again with each check that is off unless its section is
/// present, turned on, so its cost shows next to the call without it. The
/// loop rule is off (`maxCallsPerMessage: 0`): these calls come without a
/// person's message between them, and every one would ask past the 20th.
const CHECKS_ON: &[(&str, &str)] = &[
    ("typical, context on", r#"{"context": {"maxCallsPerMessage": 0}}"#),
    ("typical, drift on", r#"{"drift": {}}"#),
    ("typical, profile on", r#"{"profile": {"learningCalls": 1}}"#),
    ("typical, risk on", r#"{"risk": {}}"#),
    ("typical, audit on", r#"{"audit": {"maxEntries": 10000}}"#),
];

/// The per-call cases: name, configuration and shell command.
fn per_call_cases() -> Vec<(&'static str, &'static str, &'static str)> {
    let calls = [("typical", "{}", TYPICAL), ("path-heavy", "{}", PATH_HEAVY)];
    let with_checks = CHECKS_ON.iter().map(|(name, config)| (*name, *config, TYPICAL));
    calls.into_iter().chain(with_checks).collect()
}

/// `--calls`: one case's check made `n` times one way, after one checked call.
fn calls_only(case: &str, way: &str, n: usize, component: Option<&Path>) {
    let cases = per_call_cases();
    let Some(&(_, config, command)) = cases.iter().find(|(name, _, _)| *name == case) else {
        let names: Vec<&str> = cases.iter().map(|c| c.0).collect();
        panic!("no per-call case `{case}`; the cases are {names:?}");
    };
    let c = shell(command);
    let native_call = native_call(&c);
    let db = tempfile::tempdir().expect("a temporary folder");
    let check: Box<dyn Fn() -> (String, String)> = match way {
        "native" => {
            let native = Native::new(config);
            Box::new(move || native.check(&native_call))
        }
        "component+memory" | "component+sqlite" => {
            let storage: Arc<dyn Storage> = if way == "component+memory" {
                Arc::new(MemoryStorage::default())
            } else {
                Arc::new(SqliteStorage::open(db.path().join("warden.db")).expect("open SQLite"))
            };
            let rt = runtime_of(component, storage, config, 1);
            Box::new(move || component_decision(&rt, &c))
        }
        other => panic!("no way `{other}`; the ways are {:?}", Ways::NAMES),
    };
    assert_eq!(check(), ("allow".to_string(), "tools.allow".to_string()), "{case} {way}");
    for _ in 0..n {
        std::hint::black_box(check());
    }
}

fn per_call(plan: &Plan) -> (Value, Vec<(String, String, Stats)>) {
    let mut out = serde_json::Map::new();
    let mut flat = Vec::new();
    for (name, config, command) in per_call_cases() {
        let ways = Ways::new(config);
        let c = shell(command);
        let n = native_call(&c);
        let mut by_way = serde_json::Map::new();
        for (way, way_name) in Ways::NAMES.iter().enumerate() {
            let decided = ways.check(way, &c, &n);
            assert_eq!(decided, ("allow".to_string(), "tools.allow".to_string()), "{name} {way_name}");
            for _ in 0..plan.per_call / 10 {
                ways.check(way, &c, &n);
            }
            let ns: Vec<u64> = (0..plan.per_call).map(|_| timed(|| ways.check(way, &c, &n)).1).collect();
            let s = stats(ns);
            flat.push((name.to_string(), way_name.to_string(), s));
            by_way.insert(way_name.to_string(), stats_json(s));
        }
        out.insert(name.into(), Value::Object(by_way));
    }
    (Value::Object(out), flat)
}

/// Counts the storage calls the component makes.
struct Counting {
    inner: MemoryStorage,
    calls: Mutex<std::collections::BTreeMap<&'static str, usize>>,
}

impl Counting {
    fn bump(&self, what: &'static str) {
        *self.calls.lock().unwrap().entry(what).or_default() += 1;
    }
    fn total(&self) -> std::collections::BTreeMap<&'static str, usize> {
        self.calls.lock().unwrap().clone()
    }
}

impl Storage for Counting {
    fn get(&self, n: &str, k: &str) -> Result<Option<Record>, StorageError> {
        self.bump("get");
        self.inner.get(n, k)
    }
    fn set(&self, n: &str, k: &str, v: &[u8], w: Condition) -> Result<u64, StorageError> {
        self.bump("set");
        self.inner.set(n, k, v, w)
    }
    fn delete(&self, n: &str, k: &str, w: Condition) -> Result<bool, StorageError> {
        self.bump("delete");
        self.inner.delete(n, k, w)
    }
    fn list(&self, n: &str, p: &str, l: u32, r: bool) -> Result<Vec<(String, Record)>, StorageError> {
        self.bump("list");
        self.inner.list(n, p, l, r)
    }
    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        self.bump("commit");
        self.inner.commit(writes)
    }
}

/// Storage calls of one typical check, nothing remembered, after a warm-up.
fn round_trips() -> Value {
    let storage = Arc::new(Counting { inner: MemoryStorage::default(), calls: Mutex::new(Default::default()) });
    let rt = runtime_on(storage.clone(), "{}", 1);
    let c = shell(TYPICAL);
    rt.check_tool_call(&c);
    let before = storage.total();
    const CHECKS: usize = 10;
    for _ in 0..CHECKS {
        rt.check_tool_call(&c);
    }
    let after = storage.total();
    let mut per_check = serde_json::Map::new();
    let mut total = 0.0;
    for (what, n) in &after {
        let d = (*n - before.get(what).copied().unwrap_or(0)) as f64 / CHECKS as f64;
        total += d;
        per_check.insert(what.to_string(), json!(d));
    }
    json!({"per_check": per_check, "total": total})
}

fn dlp(plan: &Plan) -> Value {
    let rt = runtime_on(Arc::new(MemoryStorage::default()), "{}", 1);
    let paragraph = "The nightly build finished at 02:14 UTC. 1,284 tests passed, 3 were skipped and none failed. \
        The release branch is now 12 commits ahead of main; the largest change is the new retry logic in the upload \
        worker (see PR 4521). Disk use on the build agents is at 61%, and the cache hit rate was 87% last week. ";
    let mut out = serde_json::Map::new();
    for (name, bytes, n) in [("1KiB", 1024usize, plan.dlp_small), ("32KiB", 32 * 1024, plan.dlp_large)] {
        let body: Vec<u8> = paragraph.bytes().cycle().take(bytes).collect();
        let request = json!({"channel": "slack", "recipient": "C0123", "body": String::from_utf8(body).unwrap(),
                             "sessionId": "s1", "nowMs": T0});
        let m: OutboundMessage = warden_host::json::parse::<warden_host::json::OutboundJson>(&request.to_string())
            .expect("a message")
            .into_wit()
            .expect("a message");
        let v = rt.check_outbound(&m);
        assert_eq!((decision_name(v.decision), v.rule.as_str()), ("allow", "dlp.pre-checks-passed"), "{}", v.reason);
        let s = stats((0..n).map(|_| timed(|| rt.check_outbound(&m)).1).collect());
        let mbps = bytes as f64 / (s.p50 / 1e6) / 1e6;
        out.insert(name.into(), json!({"bytes": bytes, "latency": stats_json(s), "mb_per_s": mbps.round()}));
    }
    // Bodies built to be slow: one label, prefix or separator form repeated to
    // 32 KiB, the slowest forms found by the detector tests' exploration. The
    // slowest of them is reported.
    let mut slowest: Option<(String, Stats)> = None;
    for unit in CRAFTED_DLP_UNITS {
        let body = unit.repeat(32 * 1024 / unit.len());
        let request = json!({"channel": "slack", "recipient": "C0123", "body": body, "sessionId": "s1", "nowMs": T0});
        let m: OutboundMessage = warden_host::json::parse::<warden_host::json::OutboundJson>(&request.to_string())
            .expect("a message")
            .into_wit()
            .expect("a message");
        let s = stats((0..plan.dlp_large.div_ceil(3)).map(|_| timed(|| rt.check_outbound(&m)).1).collect());
        if slowest.as_ref().is_none_or(|(_, worst)| s.p50 > worst.p50) {
            slowest = Some((unit.to_string(), s));
        }
    }
    if let Some((unit, s)) = slowest {
        let bytes = unit.len() * (32 * 1024 / unit.len());
        let mbps = bytes as f64 / (s.p50 / 1e6) / 1e6;
        out.insert(
            "32KiB-crafted".into(),
            json!({"bytes": bytes, "unit": unit, "forms": CRAFTED_DLP_UNITS.len(), "latency": stats_json(s),
                   "mb_per_s": mbps.round()}),
        );
    }
    Value::Object(out)
}

/// Forms whose repetition makes the DLP pre-checks slowest (labels whose
/// values hold more labels, prefixes made of their own body's alphabet, a
/// line with thousands of tokens).
const CRAFTED_DLP_UNITS: &[&str] = &[
    "auth=",
    "token:",
    "AccountKey= ",
    "secret_: ",
    "secret=\"",
    "Authorization: Basic ",
    "--password ",
    "ATATT3=",
    "glpat-.",
    "?sig=",
    "|aB3cD4eF5gH6iJ7kL8mN9oP0",
    "aB3cD4eF5gH6iJ7kL8mN9oP0qR ",
];

fn large_config() -> String {
    let protected: Vec<String> = (0..200).map(|i| format!("**/secrets-{i}/**")).collect();
    let writable: Vec<String> = (0..200).map(|i| format!("/srv/out-{i}/**")).collect();
    let ask: Vec<String> = (0..200).map(|i| format!("mcp__tool{i}__*")).collect();
    json!({"tools": {"workspace": "/ws", "protectedPaths": protected, "writablePaths": writable, "askTools": ask}})
        .to_string()
}

/// A check on a new instance (instantiate, declare the host context,
/// configure, check) minus a check on a pooled one.
fn instances(plan: &Plan) -> Value {
    let mut out = serde_json::Map::new();
    let c = shell(TYPICAL);
    for (name, config) in [("small", "{}".to_string()), ("large", large_config())] {
        let fresh = runtime_on(Arc::new(MemoryStorage::default()), &config, 0);
        let pooled = runtime_on(Arc::new(MemoryStorage::default()), &config, 1);
        assert_eq!(component_decision(&fresh, &c).1, "tools.allow");
        let cold = stats((0..plan.instances).map(|_| timed(|| fresh.check_tool_call(&c)).1).collect());
        let warm = stats((0..plan.instances).map(|_| timed(|| pooled.check_tool_call(&c)).1).collect());
        let create = cold.p50 - warm.p50;
        out.insert(
            name.into(),
            json!({"config_bytes": config.len(), "new_instance_check": stats_json(cold),
                   "pooled_check": stats_json(warm), "instance_creation_us": round(create)}),
        );
    }
    Value::Object(out)
}

// ---------------------------------------------------------------- the warden binary

fn write_config(dir: &Path) -> PathBuf {
    let path = dir.join("config.json");
    std::fs::write(&path, "{}").unwrap();
    path
}

fn typical_request() -> String {
    json!({"toolName": "exec", "arguments": {"command": TYPICAL}, "sessionId": "s1", "cwd": "/home/dev/project"})
        .to_string()
}

fn cold_start(plan: &Plan) -> Value {
    let binary = warden_tests::warden_binary();
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let db = dir.path().join("warden.db");
    let run = |cache: &Path| -> u64 {
        let (out, ns) = timed(|| {
            let mut child = Command::new(&binary)
                .arg("--cache-dir")
                .arg(cache)
                .args(["check", "tool", "--config"])
                .arg(&config)
                .arg("--db")
                .arg(&db)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("warden starts");
            child.stdin.take().unwrap().write_all(typical_request().as_bytes()).unwrap();
            child.wait_with_output().expect("warden runs")
        });
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("warden check printed no verdict ({e}): {}", String::from_utf8_lossy(&out.stderr))
        });
        assert_eq!(v["rule"], "tools.allow", "{v}");
        ns
    };
    let warm_cache = dir.path().join("warm-cache");
    run(&warm_cache);
    let warm = stats((0..plan.warm_runs).map(|_| run(&warm_cache)).collect());
    let cold = stats(
        (0..plan.cold_runs)
            .map(|i| {
                let cache = dir.path().join(format!("cold-cache-{i}"));
                run(&cache)
            })
            .collect(),
    );
    let cached_bytes = std::fs::read_dir(&warm_cache)
        .map(|d| d.filter_map(|e| e.ok()?.metadata().ok()).map(|m| m.len()).sum::<u64>())
        .unwrap_or(0);
    json!({
        "warm_cache_ms": round(warm.p50 / 1000.0), "warm_runs": warm.n,
        "cold_cache_ms": round(cold.p50 / 1000.0), "cold_runs": cold.n,
        "compiled_cache_bytes": cached_bytes,
    })
}

/// One keep-alive HTTP/1.1 connection speaking just enough of the protocol.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    fn open(addr: &str) -> Connection {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).unwrap();
        Connection { reader: BufReader::new(stream.try_clone().unwrap()), writer: stream }
    }

    fn post(&mut self, path: &str, body: &str) -> (u16, String) {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.writer.write_all(request.as_bytes()).expect("send");
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status line");
        let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let mut length = 0;
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("header");
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).expect("body");
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}

fn serve_load(plan: &Plan, binary: &Path) -> Value {
    serve_load_on(plan, binary, None)
}

/// The load test of `warden serve` on `storage` (a `postgres://` URL), or on a fresh SQLite file.
fn serve_load_on(plan: &Plan, binary: &Path, storage: Option<&str>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path());
    let db = storage.map_or_else(|| dir.path().join("warden.db").display().to_string(), str::to_string);
    let mut child = Command::new(binary)
        .arg("--cache-dir")
        .arg(warden_tests::cache_dir())
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--db")
        .arg(&db)
        .env("WARDEN_TOKEN", TOKEN)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("warden serve starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let addr = loop {
        line.clear();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            panic!("warden serve stopped before serving");
        }
        if let Some(rest) = line.trim().strip_prefix("warden: serving on http://") {
            break rest.to_string();
        }
    };
    // Keep reading what it prints, so it never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let body = typical_request();
    {
        let mut c = Connection::open(&addr);
        let (status, answer) = c.post("/v1/check/tool", &body);
        assert_eq!(status, 200, "{answer}");
        assert!(answer.contains("\"tools.allow\""), "{answer}");
        for _ in 0..200 {
            c.post("/v1/check/tool", &body);
        }
    }
    let next = Arc::new(AtomicUsize::new(0));
    let total = plan.serve_requests;
    let started = Instant::now();
    let workers: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            let (next, addr, body) = (next.clone(), addr.clone(), body.clone());
            std::thread::spawn(move || {
                let mut c = Connection::open(&addr);
                let mut ns = Vec::new();
                let mut failed = 0usize;
                while next.fetch_add(1, Ordering::Relaxed) < total {
                    let ((status, _), t) = timed(|| c.post("/v1/check/tool", &body));
                    failed += usize::from(status != 200);
                    ns.push(t);
                }
                (ns, failed)
            })
        })
        .collect();
    let mut ns = Vec::new();
    let mut failed = 0;
    for w in workers {
        let (n, f) = w.join().expect("a load worker");
        ns.extend(n);
        failed += f;
    }
    let elapsed = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    let s = stats(ns);
    json!({
        "connections": CONNECTIONS, "requests": total, "failed": failed,
        "requests_per_s": (total as f64 / elapsed.as_secs_f64()).round(),
        "p50_ms": (s.p50 * 10.0).round() / 10_000.0, "p99_ms": (s.p99 / 10.0).round() / 100.0,
        "storage": "sqlite", "request": "typical shell call",
    })
}

// ---------------------------------------------------------------- criterion, machine, report

/// The estimates criterion wrote for the groups of the judge and component benchmarks.
fn criterion_figures(dir: &Path) -> Vec<Value> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "benchmark.json")
                && p.parent().is_some_and(|q| q.ends_with("new"))
            {
                let read = |f: &Path| -> Option<Value> { serde_json::from_str(&std::fs::read_to_string(f).ok()?).ok() };
                let (Some(b), Some(est)) = (read(&p), read(&p.with_file_name("estimates.json"))) else { continue };
                let group = b["group_id"].as_str().unwrap_or_default().to_string();
                if !["native", "component+memory", "component+sqlite"].contains(&group.as_str()) {
                    continue;
                }
                found.push(json!({
                    "group": group,
                    "name": b["function_id"],
                    "median_us": round(est["median"]["point_estimate"].as_f64().unwrap_or(0.0) / 1000.0),
                    "mean_us": round(est["mean"]["point_estimate"].as_f64().unwrap_or(0.0) / 1000.0),
                }));
            }
        }
    }
    found
        .sort_by_key(|v| (v["group"].as_str().unwrap_or("").to_string(), v["name"].as_str().unwrap_or("").to_string()));
    found
}

fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model =
        cpuinfo.lines().find_map(|l| l.strip_prefix("model name")).map(|l| l.trim_start_matches([' ', '\t', ':']));
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    json!({"cores": cores, "cpu": model.unwrap_or("unknown"), "os": std::env::consts::OS,
           "load_average_at_start": load.join(" ")})
}

/// Shortest gap between two clock reads of a spinning thread counted as the
/// machine taking the processor away, in nanoseconds.
const STALL_MIN_NS: u64 = 3_000;

/// How often, and for how long, the machine takes the processor away from a
/// thread that only reads the clock (timer interrupts, the hypervisor, other
/// work), over `ms` milliseconds. A call that spans such a stall is slower by
/// it, so a call whose length is more than 1% of the interval between stalls
/// has its p99 set by them, whatever the code does.
fn stalls(ms: u64) -> Value {
    let start = Instant::now();
    let until = Duration::from_millis(ms);
    let mut last = start.elapsed();
    let mut gaps = Vec::new();
    loop {
        let now = start.elapsed();
        if now >= until {
            break;
        }
        let gap = now.saturating_sub(last).as_nanos() as u64;
        if gap >= STALL_MIN_NS {
            gaps.push(gap);
        }
        last = now;
    }
    let count = gaps.len();
    let stolen_ns: u64 = gaps.iter().sum();
    let (p50, p99) = if gaps.is_empty() {
        (Value::Null, Value::Null)
    } else {
        let s = stats(gaps);
        (json!(round(s.p50)), json!(round(s.p99)))
    };
    json!({
        "spin_ms": ms,
        "stalls": count,
        "every_ms": if count == 0 { Value::Null } else { json!(round(ms as f64 / count as f64)) },
        "p50_us": p50, "p99_us": p99,
        "stolen_percent": round(stolen_ns as f64 / (ms as f64 * 1e4)),
    })
}

/// `YYYY-MM-DD HH:MM UTC` of now.
fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rest / 3600, rest % 3600 / 60)
}

fn find(p50: &[(String, String, f64)], way: &str, kind: &str) -> Option<f64> {
    p50.iter().find(|(w, k, _)| w == way && k == kind).map(|(_, _, v)| *v)
}

fn per(flat: &[(String, String, Stats)], call: &str, way: &str) -> Stats {
    flat.iter().find(|(c, w, _)| c == call && w == way).map(|(_, _, s)| *s).expect("measured")
}

struct Target {
    what: String,
    target: String,
    measured: String,
    met: bool,
}

fn target(what: &str, target: String, measured: f64, unit: &str, met: bool) -> Target {
    Target { what: what.into(), target, measured: format!("{} {unit}", round(measured)), met }
}

fn main() {
    let a = args();
    if let Some((case, way, n)) = &a.calls {
        calls_only(case, way, *n, a.component.as_deref());
        return;
    }
    let plan = Plan::new(a.quick);
    std::fs::create_dir_all(&a.out).expect("the output folder");
    let started = Instant::now();
    if a.serve_only {
        // Before/after of the service alone, alternating so each sees the same moments of the machine.
        let mut binaries = vec![warden_tests::warden_binary()];
        binaries.extend(a.baselines.iter().cloned());
        for round in 0..3 {
            for binary in &binaries {
                let v = serve_load(&plan, binary);
                println!("serve {} round {round}: {v}", binary.display());
            }
        }
        return;
    }
    let mut machine = machine();
    machine["stalls"] = stalls(if a.quick { 100 } else { 2_000 });
    let date = utc_now();
    eprintln!("bench: {} mode, output in {}", if a.quick { "quick" } else { "full" }, a.out.display());

    eprintln!("bench: side by side on the corpus");
    let sbs = side_by_side(&plan, a.python.as_deref(), &a.out);
    eprintln!("bench: per call");
    let (per_call_json, flat) = per_call(&plan);
    let trips = round_trips();
    eprintln!("bench: DLP throughput");
    let dlp = dlp(&plan);
    eprintln!("bench: instance creation");
    let inst = instances(&plan);
    let size = warden_host::runtime::EMBEDDED_COMPONENT.len();
    eprintln!("bench: warden check cold start");
    let cold = cold_start(&plan);
    eprintln!("bench: warden serve load test");
    let serve = serve_load(&plan, &warden_tests::warden_binary());
    let baselines: Vec<Value> = a
        .baselines
        .iter()
        .map(|b| {
            eprintln!("bench: warden serve load test of {}", b.display());
            let mut v = serve_load(&plan, b);
            v["binary"] = json!(b.display().to_string());
            v
        })
        .collect();
    let criterion = a.criterion.as_deref().map(criterion_figures).unwrap_or_default();

    let typical_mem = per(&flat, "typical", "component+memory");
    let typical_sql = per(&flat, "typical", "component+sqlite");
    let typical_native = per(&flat, "typical", "native");
    let heavy_mem = per(&flat, "path-heavy", "component+memory");
    let mut targets = vec![
        target(
            "typical shell call, component + memory, p50",
            format!("≤ {TARGET_TYPICAL_MEMORY_US} µs"),
            typical_mem.p50,
            "µs",
            typical_mem.p50 <= TARGET_TYPICAL_MEMORY_US,
        ),
        target(
            "typical shell call, component + SQLite, p50",
            format!("≤ {TARGET_TYPICAL_SQLITE_US} µs"),
            typical_sql.p50,
            "µs",
            typical_sql.p50 <= TARGET_TYPICAL_SQLITE_US,
        ),
        target(
            "typical shell call, component + SQLite, p99",
            format!("≤ {TARGET_TYPICAL_P99_US} µs"),
            typical_sql.p99,
            "µs",
            typical_sql.p99 <= TARGET_TYPICAL_P99_US,
        ),
        target(
            "path-heavy call, component + memory, p50",
            format!("≤ {TARGET_PATH_HEAVY_US} µs"),
            heavy_mem.p50,
            "µs",
            heavy_mem.p50 <= TARGET_PATH_HEAVY_US,
        ),
        target(
            "component / native, typical shell call",
            format!("≤ {TARGET_COMPONENT_OVER_NATIVE}x"),
            typical_mem.p50 / typical_native.p50,
            "x",
            typical_mem.p50 / typical_native.p50 <= TARGET_COMPONENT_OVER_NATIVE,
        ),
    ];
    for kind in ["command", "path"] {
        if let (Some(agt), Some(w)) = (find(&sbs.p50, "agt", kind), find(&sbs.p50, "component+sqlite", kind)) {
            let ratio = agt / w;
            targets.push(target(
                &format!("toolkit p50 / Warden (component + SQLite) p50, {kind}s"),
                format!("≥ {TARGET_OVER_AGT}x"),
                ratio,
                "x",
                ratio >= TARGET_OVER_AGT,
            ));
        }
    }
    let rps = serve["requests_per_s"].as_f64().unwrap_or(0.0);
    let p99 = serve["p99_ms"].as_f64().unwrap_or(f64::MAX);
    targets.push(target(
        "`warden serve`, 8 connections, requests/s",
        format!("≥ {TARGET_SERVE_RPS}"),
        rps,
        "/s",
        rps >= TARGET_SERVE_RPS,
    ));
    targets.push(target(
        "`warden serve`, 8 connections, p99",
        format!("≤ {TARGET_SERVE_P99_MS} ms"),
        p99,
        "ms",
        p99 <= TARGET_SERVE_P99_MS,
    ));
    let dlp_mbps = dlp["32KiB"]["mb_per_s"].as_f64().unwrap_or(0.0);
    targets.push(target(
        "DLP on a 32 KiB body, component",
        format!("≥ {TARGET_DLP_MBPS} MB/s"),
        dlp_mbps,
        "MB/s",
        dlp_mbps >= TARGET_DLP_MBPS,
    ));
    let trips_total = trips["total"].as_f64().unwrap_or(f64::MAX);
    targets.push(target(
        "storage round trips of a check, nothing remembered",
        format!("≤ {TARGET_ROUND_TRIPS}"),
        trips_total,
        "",
        trips_total <= TARGET_ROUND_TRIPS,
    ));

    eprintln!("bench: PostgreSQL next to SQLite");
    let postgres = postgres_rows(&plan, &flat, &serve);

    let summary = json!({
        "postgres": postgres,
        "date": date,
        "mode": if a.quick { "quick" } else { "full" },
        "machine": machine,
        "note": "Absolute times depend on the machine and on what else runs on it; compare ratios across machines.",
        "side_by_side": sbs.json,
        "per_call": per_call_json,
        "storage_round_trips": trips,
        "dlp": dlp,
        "instances": inst,
        "component_bytes": size,
        "cold_start": cold,
        "serve": serve,
        "serve_baselines": baselines,
        "criterion": criterion,
        "targets": targets.iter().map(|t| json!({"what": t.what, "target": t.target, "measured": t.measured, "met": t.met})).collect::<Vec<_>>(),
        "seconds": started.elapsed().as_secs_f64().round(),
    });
    std::fs::write(a.out.join("summary.json"), serde_json::to_string_pretty(&summary).unwrap() + "\n").unwrap();
    let md = markdown(&summary, &sbs, &flat, &targets) + &postgres_markdown(&summary["postgres"]);
    std::fs::write(a.out.join("summary.md"), &md).unwrap();
    println!("{md}");
    eprintln!("bench: wrote {} and summary.md in {:.0?}", a.out.join("summary.json").display(), started.elapsed());
}

fn markdown(s: &Value, sbs: &SideBySide, flat: &[(String, String, Stats)], targets: &[Target]) -> String {
    use std::fmt::Write as _;
    let m = &s["machine"];
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Measured {} by `cargo xtask bench`{} on {} cores ({}), load average {} at the start. Absolute times depend on \
         the machine and on what else runs on it: compare ratios, not times, across machines.\n",
        s["date"].as_str().unwrap_or(""),
        if s["mode"] == "quick" { " --quick" } else { "" },
        m["cores"],
        m["cpu"].as_str().unwrap_or(""),
        m["load_average_at_start"].as_str().unwrap_or(""),
    );
    let side = &s["side_by_side"];
    let agt = &side["agt"];
    let _ = writeln!(
        o,
        "Side by side, one process run, the same {} shell commands and {} file paths, {} rounds (µs per call):\n",
        side["inputs"]["command"], side["inputs"]["path"], side["rounds"]
    );
    let _ =
        writeln!(o, "| | commands p50 | commands p99 | paths p50 | paths p99 | toolkit p50 / this (commands, paths) |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|");
    let mut rows: Vec<(&str, &Value)> = Ways::NAMES.iter().map(|w| (*w, &side["warden"][*w])).collect();
    if agt["ran"] == true {
        rows.push(("agt", &agt["results"]));
    }
    for (way, r) in rows {
        let label = match way {
            "native" => "Warden, native".to_string(),
            "component+memory" => "Warden, component, in-memory storage".to_string(),
            "component+sqlite" => "Warden, component, SQLite".to_string(),
            _ => format!(
                "Agent Governance Toolkit {} `PolicyEvaluator` (Python {}, {} rules)",
                agt["meta"]["version"].as_str().unwrap_or(""),
                agt["meta"]["python"].as_str().unwrap_or(""),
                agt["meta"]["rules"]
            ),
        };
        let ratio = |kind: &str| match (find(&sbs.p50, "agt", kind), find(&sbs.p50, way, kind)) {
            (Some(a), Some(w)) if way != "agt" => format!("{:.2}x", a / w),
            _ => "".into(),
        };
        let _ = writeln!(
            o,
            "| {label} | {} | {} | {} | {} | {} {} |",
            r["command"]["p50_us"],
            r["command"]["p99_us"],
            r["path"]["p50_us"],
            r["path"]["p99_us"],
            ratio("command"),
            ratio("path")
        );
    }
    if agt["ran"] == true {
        let _ = writeln!(
            o,
            "\nThe toolkit's rules are regular expressions standing for Warden's default shell and path rules \
             (`tests/benches/agt_side_by_side.py`); they agree with Warden's allow-or-not on {} of {} inputs.",
            agt["agreement"]["same_allow_or_not"], agt["agreement"]["of"]
        );
    } else {
        let _ = writeln!(o, "\nThe toolkit did not run: {}.", agt["why"].as_str().unwrap_or(""));
    }
    let _ = writeln!(o, "\nSingle calls (µs, {} calls each):\n", flat.first().map_or(0, |f| f.2.n));
    let _ = writeln!(o, "| call | way | p50 | p99 |");
    let _ = writeln!(o, "|---|---|---:|---:|");
    for (call, way, st) in flat {
        let _ = writeln!(o, "| {call} | {way} | {} | {} |", round(st.p50), round(st.p99));
    }
    let serve = &s["serve"];
    let cold = &s["cold_start"];
    let inst = &s["instances"];
    let _ = writeln!(o, "\n| measure | value |");
    let _ = writeln!(o, "|---|---:|");
    let stalls = &m["stalls"];
    let _ = writeln!(
        o,
        "| the machine: a thread that only reads the clock for {} ms, gaps of {} µs or more | {} gaps, one every {} ms, p50 {} µs, p99 {} µs ({}% of the time) |",
        stalls["spin_ms"],
        STALL_MIN_NS / 1000,
        stalls["stalls"],
        stalls["every_ms"],
        stalls["p50_us"],
        stalls["p99_us"],
        stalls["stolen_percent"]
    );
    let _ = writeln!(
        o,
        "| `warden serve`, {} connections on loopback, {} requests (SQLite) | {} requests/s, p50 {} ms, p99 {} ms |",
        serve["connections"], serve["requests"], serve["requests_per_s"], serve["p50_ms"], serve["p99_ms"]
    );
    for b in s["serve_baselines"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "| the same load on the baseline binary `{}` | {} requests/s, p50 {} ms, p99 {} ms |",
            b["binary"].as_str().unwrap_or(""),
            b["requests_per_s"],
            b["p50_ms"],
            b["p99_ms"]
        );
    }
    let _ = writeln!(
        o,
        "| `warden check tool`, warm compile cache (process start to exit) | {} ms |",
        cold["warm_cache_ms"]
    );
    let _ =
        writeln!(o, "| `warden check tool`, cold compile cache (compiles and caches) | {} ms |", cold["cold_cache_ms"]);
    for size in ["small", "large"] {
        let _ = writeln!(
            o,
            "| instance creation (instantiate + configure), {size} configuration ({} bytes) | {} µs |",
            inst[size]["config_bytes"], inst[size]["instance_creation_us"]
        );
    }
    let _ = writeln!(
        o,
        "| component size | {} KiB (compiled: {} KiB) |",
        s["component_bytes"].as_u64().unwrap_or(0) / 1024,
        cold["compiled_cache_bytes"].as_u64().unwrap_or(0) / 1024
    );
    for body in ["1KiB", "32KiB"] {
        let d = &s["dlp"][body];
        let _ = writeln!(
            o,
            "| DLP pre-checks through the component, {body} body | {} MB/s (p50 {} µs) |",
            d["mb_per_s"], d["latency"]["p50_us"]
        );
    }
    let crafted = &s["dlp"]["32KiB-crafted"];
    if let Some(unit) = crafted["unit"].as_str() {
        let _ = writeln!(
            o,
            "| DLP pre-checks through the component, slowest of {} crafted 32 KiB bodies (`{}` repeated) | {} MB/s (p50 {} µs) |",
            crafted["forms"],
            unit.trim_end().replace('|', "\\|"),
            crafted["mb_per_s"],
            crafted["latency"]["p50_us"]
        );
    }
    let trips = &s["storage_round_trips"];
    let _ = writeln!(
        o,
        "| storage calls of one typical check, nothing remembered | {} ({}) |",
        trips["total"], trips["per_check"]
    );
    if let Some(c) = s["criterion"].as_array().filter(|c| !c.is_empty()) {
        let _ = writeln!(o, "\nCriterion (median µs per call):\n");
        let _ = writeln!(o, "| group | benchmark | median |");
        let _ = writeln!(o, "|---|---|---:|");
        for f in c {
            let _ = writeln!(
                o,
                "| {} | {} | {} |",
                f["group"].as_str().unwrap_or(""),
                f["name"].as_str().unwrap_or(""),
                f["median_us"]
            );
        }
    }
    let _ = writeln!(o, "\nTargets:\n");
    let _ = writeln!(o, "| target | wanted | measured | |");
    let _ = writeln!(o, "|---|---|---|---|");
    for t in targets {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            t.what,
            t.target,
            t.measured,
            if t.met { "met" } else { "**missed**" }
        );
    }
    o
}

// ---------------------------------------------------------------- PostgreSQL

/// The typical tool call through the component on PostgreSQL, and the
/// service's load test on it, next to the SQLite numbers; skipped with a note
/// when no PostgreSQL cluster can be started here.
fn postgres_rows(plan: &Plan, flat: &[(String, String, Stats)], sqlite_serve: &Value) -> Value {
    let started = std::panic::catch_unwind(warden_tests::postgres::Postgres::start);
    let pg = match started {
        Ok(pg) => pg,
        Err(e) => {
            let why = e.downcast_ref::<String>().cloned().unwrap_or_else(|| "unknown failure".into());
            return json!({"skipped": format!("PostgreSQL could not be started: {why}")});
        }
    };
    let url = pg.database("bench");
    let storage = warden_host::storage::open(&url).expect("open PostgreSQL");
    let rt = runtime_on(storage, "{}", 1);
    let c = shell(TYPICAL);
    assert_eq!(component_decision(&rt, &c), ("allow".to_string(), "tools.allow".to_string()));
    for _ in 0..plan.per_call / 10 {
        component_decision(&rt, &c);
    }
    let ns: Vec<u64> = (0..plan.per_call).map(|_| timed(|| component_decision(&rt, &c)).1).collect();
    let per_check = stats(ns);
    let sqlite = flat.iter().find(|(name, way, _)| name == "typical" && way == "component+sqlite").map(|(_, _, s)| *s);
    let serve_url = pg.database("bench_serve");
    let mut serve = serve_load_on(plan, &warden_tests::warden_binary(), Some(&serve_url));
    serve["storage"] = json!("postgres");
    json!({
        "typical_call": {"component+postgres": stats_json(per_check), "component+sqlite": sqlite.map(stats_json)},
        "serve": {"postgres": serve, "sqlite": sqlite_serve},
    })
}

fn postgres_markdown(pg: &Value) -> String {
    if let Some(why) = pg["skipped"].as_str() {
        return format!("\nPostgreSQL: skipped ({why}).\n");
    }
    format!(
        "\nPostgreSQL next to SQLite (one loopback cluster on this machine): the typical tool call {} (SQLite {}); \
         `warden serve` {} (SQLite {}).\n",
        pg["typical_call"]["component+postgres"],
        pg["typical_call"]["component+sqlite"],
        pg["serve"]["postgres"],
        pg["serve"]["sqlite"],
    )
}
