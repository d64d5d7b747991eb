//! Shared pieces of the end-to-end tests: runtimes over temporary SQLite
//! files, the hostile guest, a captured log, and a loopback HTTP server.

pub mod binary;
pub mod corpus;
pub mod mock_http;
pub mod postgres;
pub mod setup;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use warden_host::bindings::exports::warden::guard::policy::{ToolCall, TurnStart};
use warden_host::bindings::warden::guard::types::{Identity, Verdict};
use warden_host::runtime::Level;
use warden_host::storage::{SqliteStorage, Storage};
use warden_host::{ComponentSource, Limits, LogSink, Runtime, RuntimeOptions};

/// A fixed instant: 2023-11-14T22:13:20Z.
pub const T0: u64 = 1_700_000_000_000;

/// The hostile guest, built and copied into `OUT_DIR` by `tests/build.rs`.
static HOSTILE_COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_guest.wasm"));

/// The hostile guest's component bytes.
pub fn hostile_component() -> Vec<u8> {
    HOSTILE_COMPONENT.to_vec()
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

impl TempDb {
    /// Number of remembered answers: records of decision memory other than
    /// its markers (`m:…`) and its `format` key, or 0 if the database does not exist.
    pub fn answers(&self) -> i64 {
        if !self.path().exists() {
            return 0;
        }
        let conn = rusqlite::Connection::open(self.path()).expect("open");
        conn.query_row(
            "SELECT count(*) FROM records WHERE namespace = 'tools.memory' AND key NOT LIKE 'm:%' AND key <> 'format'",
            [],
            |r| r.get(0),
        )
        .expect("count answers")
    }
}

impl Default for TempDb {
    fn default() -> Self {
        TempDb::new()
    }
}

/// Approval secret of library-driven tests, the same for every runtime so
/// that a restarted host records the keys an earlier one gave.
pub const TEST_SECRET: [u8; 32] = [0x5a; 32];

/// The host context of library-driven tests: Warden's files under `/srv/warden`.
pub fn host_context() -> warden_host::bindings::exports::warden::guard::policy::HostContext {
    let secret = TEST_SECRET.to_vec();
    warden_host::host_context::declare(
        std::path::Path::new("/srv/warden/warden.db"),
        Some(std::path::Path::new("/srv/warden/config.json")),
        None,
        secret,
    )
}

/// Options for the real, embedded component over `storage`.
pub fn options(storage: Arc<dyn Storage>, log: &CapturedLog) -> RuntimeOptions {
    RuntimeOptions {
        component: ComponentSource::Embedded,
        cache_dir: Some(cache_dir()),
        limits: Limits::default(),
        storage,
        log: log.sink(),
        host: Some(host_context()),
    }
}

/// A runtime of the real component configured with `config`.
pub fn runtime(config: &str, storage: Arc<dyn Storage>) -> Runtime {
    let log = CapturedLog::default();
    Runtime::new(options(storage, &log), config).unwrap_or_else(|e| panic!("runtime did not start: {e}"))
}

/// An identity that names nobody.
pub fn nobody() -> Identity {
    Identity { provider: None, account_id: None, sender_id: None, channel_id: None, thread_id: None, agent_id: None }
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
        identity: nobody(),
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
        prompt: None,
        dedicated: false,
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

/// The `warden` binary users run (see [`binary::warden_binary`]).
pub fn warden_binary() -> PathBuf {
    binary::warden_binary()
}

/// Runs the `warden` binary as a subprocess with `args` and `stdin`, on the
/// shared compile cache (see [`binary::run_warden`]).
pub fn warden_process(args: &[&str], stdin: &str) -> CliOutput {
    binary::run_warden(args, stdin)
}
