//! Shared pieces of the end-to-end tests: runtimes over temporary SQLite
//! files, the hostile guest, a captured log, and a loopback HTTP server.

pub mod mock_http;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use warden_host::bindings::exports::warden::guard::policy::{ToolCall, TurnStart};
use warden_host::bindings::warden::guard::types::{Identity, Verdict};
use warden_host::runtime::Level;
use warden_host::storage::{SqliteStorage, Storage};
use warden_host::{ComponentSource, Limits, LogSink, Runtime, RuntimeOptions};

/// A fixed instant: 2023-11-14T22:13:20Z.
pub const T0: u64 = 1_700_000_000_000;

/// The hostile guest's component bytes.
pub fn hostile_component() -> Vec<u8> {
    std::fs::read(env!("HOSTILE_COMPONENT_WASM")).expect("the hostile guest was built by tests/build.rs")
}

/// The reference MCP filesystem server, installed once from
/// `tests/fixtures/mcp`'s lockfile (pinned) with `npm ci`.
pub fn mcp_filesystem_server() -> PathBuf {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/mcp");
    let bin = fixture.join("node_modules/.bin/mcp-server-filesystem");
    let lock = std::fs::File::create(std::env::temp_dir().join("warden-mcp-fixture.lock")).expect("lock file");
    lock.lock().expect("install lock");
    if !bin.exists() {
        let status = std::process::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&fixture)
            .status()
            .expect("npm runs");
        assert!(status.success(), "installing the MCP reference server failed");
    }
    bin
}

/// A compile cache shared by every test process, so the component is compiled once.
pub fn cache_dir() -> PathBuf {
    std::env::temp_dir().join("warden-test-cache")
}

/// Log lines a runtime wrote.
#[derive(Clone, Default)]
pub struct CapturedLog(Arc<Mutex<Vec<(Level, String)>>>);

impl CapturedLog {
    pub fn sink(&self) -> LogSink {
        let lines = self.0.clone();
        Arc::new(move |level, message: &str| {
            if let Ok(mut l) = lines.lock() {
                l.push((level, message.to_string()));
            }
        })
    }

    pub fn lines(&self) -> Vec<(Level, String)> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

/// A temporary folder holding one SQLite database.
pub struct TempDb {
    pub dir: tempfile::TempDir,
}

impl TempDb {
    pub fn new() -> TempDb {
        TempDb { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().join("warden.db")
    }

    pub fn open(&self) -> Arc<dyn Storage> {
        Arc::new(SqliteStorage::open(self.path()).expect("open sqlite"))
    }

    /// Number of records in the database file, or `None` if it does not exist.
    pub fn records(&self) -> Option<i64> {
        if !self.path().exists() {
            return None;
        }
        let conn = rusqlite::Connection::open(self.path()).expect("open");
        conn.query_row("SELECT count(*) FROM records", [], |r| r.get(0)).ok()
    }

    /// Number of records in one namespace, or 0 if the database does not exist.
    pub fn records_in(&self, namespace: &str) -> i64 {
        if !self.path().exists() {
            return 0;
        }
        let conn = rusqlite::Connection::open(self.path()).expect("open");
        conn.query_row("SELECT count(*) FROM records WHERE namespace = ?1", [namespace], |r| r.get(0))
            .expect("count records")
    }
}

impl Default for TempDb {
    fn default() -> Self {
        TempDb::new()
    }
}

/// Options for the real, embedded component over `storage`.
pub fn options(storage: Arc<dyn Storage>, log: &CapturedLog) -> RuntimeOptions {
    RuntimeOptions {
        component: ComponentSource::Embedded,
        cache_dir: Some(cache_dir()),
        limits: Limits::default(),
        storage,
        log: log.sink(),
    }
}

/// A runtime of the real component configured with `config`.
pub fn runtime(config: &str, storage: Arc<dyn Storage>) -> Runtime {
    let log = CapturedLog::default();
    Runtime::new(options(storage, &log), config).unwrap_or_else(|e| panic!("runtime did not start: {e}"))
}

/// A tool call in session `session` at `now_ms`.
pub fn tool_call(tool: &str, args: serde_json::Value, session: &str, now_ms: u64) -> ToolCall {
    ToolCall {
        tool_name: tool.into(),
        arguments: args.to_string(),
        call_id: None,
        run_id: None,
        session_id: Some(session.into()),
        now_ms,
        identity: Identity {
            provider: None,
            account_id: None,
            sender_id: None,
            channel_id: None,
            thread_id: None,
            agent_id: None,
        },
        cwd: None,
        derived_paths: Vec::new(),
    }
}

/// A turn start pinning `session` to `chat`.
pub fn pin(session: &str, run: &str, chat: &str, label: &str, now_ms: u64) -> TurnStart {
    TurnStart {
        session_id: session.into(),
        run_id: Some(run.into()),
        chat_id: Some(chat.into()),
        label: Some(label.into()),
        now_ms,
    }
}

/// The decision's name and the rule, for assertions that check both.
pub fn decided(v: &Verdict) -> (&'static str, &str) {
    (warden_host::json::decision_name(v.decision), v.rule.as_str())
}

/// What one in-process run of the `warden` command printed.
pub struct CliOutput {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `warden` in-process with `args` (after the program name) and `stdin`,
/// through its real argument parser and streams, on the shared compile cache.
pub fn cli(args: &[&str], stdin: &str) -> CliOutput {
    let mut argv: Vec<std::ffi::OsString> = vec!["warden".into()];
    argv.extend(args.iter().map(Into::into));
    argv.extend(["--cache-dir".into(), cache_dir().into_os_string()]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = warden_host::cli::run(
        argv,
        warden_host::cli::Io { stdin: &mut stdin.as_bytes(), stdout: &mut out, stderr: &mut err },
    );
    CliOutput {
        code,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// The `warden` binary as a user runs it, built (or found up to date) once
/// per test process next to the test executables (`target/<profile>/warden`).
pub fn warden_binary() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("the test's own path");
            let dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>").to_path_buf();
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut build = std::process::Command::new(cargo);
            build.args(["build", "--quiet", "--package", "warden-host", "--bin", "warden"]);
            if dir.file_name().is_some_and(|n| n == "release") {
                build.arg("--release");
            }
            build.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
            let status = build.status().expect("cargo runs");
            assert!(status.success(), "building the warden binary failed");
            let bin = dir.join(if cfg!(windows) { "warden.exe" } else { "warden" });
            assert!(bin.is_file(), "no warden binary at {}", bin.display());
            bin
        })
        .clone()
}

/// Runs the `warden` binary as a subprocess with `args` and `stdin`, on the
/// shared compile cache.
pub fn warden_process(args: &[&str], stdin: &str) -> CliOutput {
    use std::io::Write;
    let mut child = std::process::Command::new(warden_binary())
        .args(args)
        .arg("--cache-dir")
        .arg(cache_dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("warden starts");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes()).expect("write stdin");
    }
    let out = child.wait_with_output().expect("warden ends");
    CliOutput {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
