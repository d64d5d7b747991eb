//! The `warden` command. [`run`] takes the arguments and the three standard
//! streams, so tests drive exactly what users run.

pub mod asks;
mod audit;
mod check;
mod demo;
mod gate;
pub(crate) mod harden;
mod init;
mod listed;
pub mod paths;
mod profile;
mod scan;

pub use scan::{ScanKind, finding_json as scan_finding_json};

use crate::clock::Clock;
use crate::json;
use crate::runtime::{ComponentSource, Level, Limits, LogSink, Runtime, RuntimeOptions};
use crate::storage::SqliteStorage;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Exit code of a command that answered (whatever the decision).
pub const EXIT_ANSWERED: i32 = 0;
/// Exit code of a command that could not answer: the database, the
/// component, storage or an output stream failed. Nothing was decided.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code of bad input: arguments, the configuration or the request was
/// refused as invalid, with one line naming the field. Nothing was written.
pub const EXIT_INVALID: i32 = 2;
/// Exit code of `check --fail-on`: the answer was printed and its decision
/// meets the threshold.
pub const EXIT_THRESHOLD: i32 = 3;
/// The rule of the answer `check turn` gives when Warden cannot start (the
/// database cannot be opened, the component cannot be loaded): inbound checks
/// fail open, so the turn proceeds unchecked with outcome `failed`.
pub const START_FAILURE_RULE: &str = "host.start-failure";

/// The exit codes, as `--help` prints them.
const EXIT_CODES_HELP: &str = "Exit codes (every subcommand):
  0  answered: the answer is on stdout, whatever its decision
  1  could not answer: the database, the component, storage or an output stream failed; nothing was decided
     (`check tool` and `check outbound` fail closed: treat it as a refusal; `check turn` fails open instead and
     answers `proceed: true` with outcome `failed` and rule `host.start-failure`, exit 0)
  2  bad input: an argument, the configuration or the request is invalid; one line names the field; nothing was written
  3  `check --fail-on deny|ask`: the answer was printed and its decision meets the threshold
     (`--batch`: any line's; else 2 when a line was refused, each refused line answered by an error object);
     `audit-config --fail-on RISK`: the findings were printed and one is that severe or more
     `scan`: the findings were printed and one is at or above `--fail-on` (default `high`)
  4  `audit verify`: the report was printed and the chain is broken; stderr names the first broken link
`warden hook` speaks its runtime's protocol instead: exit 2 blocks the tool call.";
/// Largest request read from stdin, in bytes (8 MiB).
pub const MAX_STDIN_BYTES: u64 = 8 * 1024 * 1024;

#[derive(Parser, Debug)]
#[command(
    name = "warden",
    version,
    about = "Warden: a policy engine for AI agents, run as a sandboxed WebAssembly component.",
    after_help = EXIT_CODES_HELP
)]
struct Cli {
    #[command(flatten)]
    host: HostArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Debug, Clone)]
struct HostArgs {
    /// Run this component file instead of the one built into `warden`.
    #[arg(long, global = true, value_name = "FILE")]
    component: Option<PathBuf>,
    /// Folder for compiled components [default: $WARDEN_CACHE_DIR, $XDG_CACHE_HOME/warden or ~/.cache/warden].
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Compile the component every time instead of caching it.
    #[arg(long, global = true)]
    no_cache: bool,
    /// Least severe guest log lines printed on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogLevel::Warn)]
    log_level: LogLevel,
    /// Guest memory cap, in MiB.
    #[arg(long, global = true, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    memory_mib: u64,
    /// Guest CPU time per call, in milliseconds (time in host calls excluded).
    #[arg(long, global = true, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    cpu_ms: u64,
    /// Accept request times (`nowMs`, `--now-ms`) far from this host's clock, to replay recorded requests
    /// [default: within 5 minutes of it]. Not for `hook` and `mcp`, which always use this host's clock.
    #[arg(long, global = true)]
    replay: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
    Off,
}

#[derive(Args, Debug, Clone)]
pub(crate) struct Policy {
    /// The Warden configuration (JSON) [default: $WARDEN_CONFIG, else the first of ./warden.json,
    /// $XDG_CONFIG_HOME/warden/warden.json or ~/.config/warden/warden.json].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The SQLite database that holds pins, approvals, counters and the ledger
    /// [default: $XDG_STATE_HOME/warden/warden.db or ~/.local/state/warden/warden.db; folders created 0700];
    /// `--storage postgres://user:password@host:port/database` shares one
    /// PostgreSQL database between several gateways instead.
    #[arg(long, value_name = "FILE|URL", visible_alias = "storage")]
    db: Option<PathBuf>,
}

/// A [`Policy`] with its defaults found: the configuration that exists, the database's folder made.
struct Resolved {
    config: PathBuf,
    db: PathBuf,
}

impl Policy {
    /// Finds the configuration and the database (see [`paths`]).
    fn resolve(&self) -> Result<Resolved, Failure> {
        let config = paths::find_config(self.config.as_deref()).map_err(Failure::invalid)?;
        let db = paths::prepare_db(self.db.as_deref()).map_err(Failure::failed)?;
        Ok(Resolved { config, db })
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check one request read as JSON on stdin; print the answer as JSON.
    Check {
        /// What to check.
        #[arg(value_enum)]
        what: CheckKind,
        #[command(flatten)]
        policy: Policy,
        /// Exit 3 after printing the answer when its decision is this or stricter
        /// (`ask`: ask or deny; `deny`: deny only; a turn counts as `deny` when it does not proceed).
        #[arg(long, value_enum, value_name = "DECISION")]
        fail_on: Option<FailOn>,
        /// Read the request from this file instead of stdin (`-`: stdin).
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
        /// Read one request a line (JSON lines) and print one answer a line, in order; a refused line gets
        /// `{"line": N, "error": ..., "field": ...}` and the batch goes on.
        #[arg(long)]
        batch: bool,
    },
    /// Show, for one request, the checks this configuration runs, what each found and the rule that decided.
    Explain {
        /// What to explain.
        #[arg(value_enum)]
        what: CheckKind,
        #[command(flatten)]
        policy: Policy,
        /// Read the request from this file instead of stdin (`-`: stdin).
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write a starter configuration for a runtime (valid JSON; what it sets is explained on stderr).
    Init {
        /// The runtime the configuration is for.
        #[arg(long, value_enum, default_value = "generic")]
        runtime: init::InitRuntime,
        /// Where to write it.
        #[arg(long, value_name = "FILE", default_value = "warden.json")]
        output: PathBuf,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Print a shell completion script (used by `cargo xtask completions`).
    #[command(hide = true)]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page in roff (used by `cargo xtask man`).
    #[command(hide = true)]
    Man,
    /// Start a turn: pin the reply of a session to a chat.
    Pin {
        #[command(flatten)]
        policy: Policy,
        /// The session.
        #[arg(long)]
        session: String,
        /// The chat the answer is owed to.
        #[arg(long)]
        chat: String,
        /// The chat's label, for refusal messages.
        #[arg(long)]
        label: Option<String>,
        /// The run.
        #[arg(long)]
        run: Option<String>,
        /// The time, in milliseconds since the Unix epoch [default: now].
        #[arg(long)]
        now_ms: Option<u64>,
        /// The wake's prompt: queued while an answer is owed, the pin moves when it enters the transcript.
        #[arg(long)]
        prompt: Option<String>,
        /// This process serves only this chat: pin it for good (no TTL, settle leaves it).
        #[arg(long)]
        dedicated: bool,
    },
    /// Settle a turn: clear the session's pin.
    Settle {
        #[command(flatten)]
        policy: Policy,
        /// The session.
        #[arg(long)]
        session: String,
        /// The run.
        #[arg(long)]
        run: Option<String>,
        /// The time, in milliseconds since the Unix epoch [default: now].
        #[arg(long)]
        now_ms: Option<u64>,
    },
    /// Print counters, check status and warnings.
    Diagnostics {
        #[command(flatten)]
        policy: Policy,
    },
    /// Validate a configuration and print what it enables, or every error.
    Validate {
        /// The Warden configuration (JSON) [default: found as for every command; see `--config` of `check`].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Record a person's answer to an `ask`. The key comes from `--key`, or
    /// from checking the tool call read as JSON on stdin.
    Approve {
        #[command(flatten)]
        policy: Policy,
        /// The `approvalKey` of the verdict being answered.
        #[arg(long)]
        key: Option<String>,
        /// How long the answer is remembered.
        #[arg(long, value_enum)]
        scope: ScopeArg,
        /// Record a refusal instead of an approval.
        #[arg(long)]
        deny: bool,
        /// The session, for `session` scope.
        #[arg(long)]
        session: Option<String>,
        /// The call, for `once` scope.
        #[arg(long)]
        call: Option<String>,
        /// Record this answer once however often the command is repeated with the same key.
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
        /// Read the call from this file instead of stdin (`-`: stdin).
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
    },
    /// Serve the checks as a JSON HTTP service (token from $WARDEN_TOKEN or --token-file).
    Serve {
        #[command(flatten)]
        policy: Policy,
        /// Address to listen on: `IP:PORT` or `HOST:PORT` (resolved; the first address is used).
        #[arg(long, default_value = "127.0.0.1:8787")]
        listen: String,
        /// A file holding the bearer token clients must send [default: $WARDEN_TOKEN].
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// Largest request body, in bytes (at least 1).
        #[arg(long, default_value_t = crate::serve::DEFAULT_MAX_BODY_BYTES)]
        max_body_bytes: usize,
        /// Checks that run at the same time.
        #[arg(long, default_value_t = crate::serve::DEFAULT_CONCURRENCY as u64, value_parser = clap::value_parser!(u64).range(1..=256))]
        concurrency: u64,
        /// Connections open at the same time; the next one is answered 503.
        #[arg(long, default_value_t = crate::serve::DEFAULT_MAX_CONNECTIONS)]
        max_connections: usize,
        /// Request body bytes being read or checked at the same time; a request past it is answered 503.
        #[arg(long, default_value_t = crate::serve::DEFAULT_MAX_INFLIGHT_BODY_BYTES)]
        max_inflight_body_bytes: usize,
        /// A file holding the admin token `PUT /v1/policy` requires (not the bearer token); without it the
        /// route answers 403.
        #[arg(long, value_name = "FILE")]
        admin_token_file: Option<PathBuf>,
        /// Do not watch the configuration file for a new policy.
        #[arg(long)]
        no_watch: bool,
    },
    /// Answer a runtime's hook event read on stdin.
    Hook {
        /// The runtime whose hook protocol to speak.
        #[arg(value_enum)]
        runtime: HookRuntime,
        #[command(flatten)]
        policy: Policy,
        /// Print `allow` for allowed calls instead of deferring to the runtime's own permission prompts.
        #[arg(long)]
        approve_allowed: bool,
        /// Answer a denial with exit code 2 and the reason on stderr instead of JSON.
        #[arg(long)]
        exit_code: bool,
    },
    /// Run an MCP server behind Warden: `warden mcp --config F -- <server command...>`.
    Mcp {
        #[command(flatten)]
        policy: Policy,
        /// The server's name in tool names (`mcp__<name>__<tool>`) [default: from the command].
        #[arg(long)]
        name: Option<String>,
        /// The server command and its arguments.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<OsString>,
    },
    /// Scan skills, plugins, MCP `tools/list` answers and logs for poisoning; needs no configuration.
    /// Exit 3 when a finding is at or above `--fail-on`.
    Scan {
        /// Files or folders (walked, symbolic links not followed).
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Print the findings as JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Exit 3 after printing when a finding is this severe or more (`none`: never).
        #[arg(long, value_enum, default_value_t = scan::Severity::High, value_name = "SEVERITY")]
        fail_on: scan::Severity,
        /// Read every file given as this kind instead of naming it from the file name (files only).
        #[arg(long, value_enum, value_name = "KIND")]
        kind: Option<scan::ScanKind>,
    },
    /// The approval inbox: list pending asks, approve or deny one.
    Asks {
        #[command(subcommand)]
        command: asks::AsksCommand,
    },
    /// The consent gate's ledger: consents, opt-outs, replies, variables, outcomes, the log and a summary.
    Gate {
        #[command(subcommand)]
        command: gate::GateCommand,
    },
    /// The audit trail: verify its chain, export it as JSON lines, replay its kept tool calls under a new configuration.
    Audit {
        #[command(subcommand)]
        command: audit::AuditCommand,
    },
    /// Agent profiles: show what each agent usually does, or reset a profile so it learns again.
    Profile {
        #[command(subcommand)]
        command: profile::ProfileCommand,
    },
    /// Print `dlp.listedValues.hashed` entries for the values read one a line on stdin.
    HashValues {
        /// A file whose first line is the key (`dlp.listedValues.key`, 16 to 1024 characters).
        #[arg(long, value_name = "FILE")]
        key_file: PathBuf,
        /// Read the values from this file instead of stdin (`-`: stdin).
        #[arg(long, value_name = "FILE")]
        input: Option<PathBuf>,
    },
    /// Report the settings of a runtime's configuration that weaken Warden or the agent's safety.
    AuditConfig {
        #[command(flatten)]
        target: harden::Target,
        /// The configuration file [default: the runtime's own location].
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Print the findings as JSON.
        #[arg(long)]
        json: bool,
        /// Exit 3 after printing when a finding is this severe or more.
        #[arg(long, value_enum, value_name = "RISK")]
        fail_on: Option<harden::RiskArg>,
    },
    /// Fix what `audit-config` reports: print the diff, back the file up beside it, write it.
    Harden {
        #[command(flatten)]
        target: harden::Target,
        /// The configuration file [default: the runtime's own location].
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Print the diff and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Restore a configuration from a backup `warden harden` wrote, byte for byte.
    Rollback {
        #[command(flatten)]
        target: harden::Target,
        /// The configuration file whose newest backup to restore [default: the runtime's own location].
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        /// The backup to restore [default: the file's newest].
        #[arg(value_name = "BACKUP")]
        backup: Option<PathBuf>,
    },
    /// Play a bundled session and print each decision.
    Demo {
        /// Keep the demo's database here instead of a fresh temporary file.
        #[arg(long, value_name = "FILE")]
        db: Option<PathBuf>,
    },
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum FailOn {
    /// An `ask` or a `deny`.
    Ask,
    /// A `deny`.
    Deny,
}

impl FailOn {
    /// Whether `decision` (`allow`, `ask` or `deny`) meets this threshold.
    fn met_by(self, decision: &str) -> bool {
        match self {
            FailOn::Ask => decision == "ask" || decision == "deny",
            FailOn::Deny => decision == "deny",
        }
    }
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum ScopeArg {
    Once,
    Session,
    Always,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum HookRuntime {
    /// Claude Code command hooks: `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `UserPromptSubmit`.
    ClaudeCode,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum CheckKind {
    /// An inbound turn (`turn`).
    Turn,
    /// A tool call (`tool-call`).
    Tool,
    /// An outbound or peer message (`outbound-message`).
    Outbound,
    /// A tool's result, reported so that the destinations in it are known to
    /// come from content the agent read (`tool-result`); answers an `observation`.
    ToolResult,
}

/// A failure that ends the command with a message and an exit code.
struct Failure {
    code: i32,
    message: String,
}

impl Failure {
    fn invalid(message: impl Into<String>) -> Failure {
        Failure { code: EXIT_INVALID, message: message.into() }
    }

    fn failed(message: impl Into<String>) -> Failure {
        Failure { code: EXIT_FAILURE, message: message.into() }
    }

    /// An answer was printed and its decision met `--fail-on`.
    fn threshold(message: impl Into<String>) -> Failure {
        Failure { code: EXIT_THRESHOLD, message: message.into() }
    }
}

/// A component call's failure: invalid input is the caller's to fix (exit 2);
/// anything else is a failure to answer (exit 1).
fn call_failure(e: crate::runtime::CallError) -> Failure {
    use crate::bindings::warden::guard::types::PolicyError;
    use crate::runtime::CallError;
    match e {
        CallError::Policy(PolicyError::InvalidInput(m)) => Failure::invalid(m),
        CallError::Policy(PolicyError::NotConfigured) => Failure::failed("warden is not configured"),
        CallError::Policy(PolicyError::Storage(m)) => Failure::failed(format!("storage failed: {m}")),
        CallError::Policy(PolicyError::Other(m)) => Failure::failed(m),
        CallError::Guest(m) => Failure::failed(format!("the guard failed: {m}")),
    }
}

/// The standard streams a command uses.
pub struct Io<'a> {
    pub stdin: &'a mut dyn Read,
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut (dyn Write + Send),
}

/// Runs `warden` with `args` (the first is the program name) and returns the exit code.
pub fn run(args: Vec<OsString>, io: Io<'_>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            let _ = write!(io.stderr, "{e}");
            return EXIT_INVALID;
        }
        // `--help` and `--version` are answers: on stdout, exit 0.
        Err(e) => {
            let _ = write!(io.stdout, "{e}");
            return EXIT_ANSWERED;
        }
    };
    match dispatch(cli, io.stdin, io.stdout, io.stderr) {
        Ok(()) => EXIT_ANSWERED,
        Err(f) if f.code == EXIT_THRESHOLD => {
            let _ = writeln!(io.stderr, "warden: {}", f.message.trim_end());
            f.code
        }
        Err(f) => {
            let _ = writeln!(io.stderr, "error: {}", f.message.trim_end());
            f.code
        }
    }
}

fn log_sink(min: LogLevel) -> LogSink {
    Arc::new(move |level: Level, message: &str| {
        let (rank, name) = match level {
            Level::Debug => (LogLevel::Debug, "debug"),
            Level::Info => (LogLevel::Info, "info"),
            Level::Warn => (LogLevel::Warn, "warn"),
            Level::Error => (LogLevel::Error, "error"),
        };
        if rank >= min {
            eprintln!("warden {name}: {message}");
        }
    })
}

fn read_config(path: &PathBuf) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure::invalid(format!("cannot read {}: {e}", path.display())))
}

/// The request from `--input FILE` (`-` or none: stdin), at most [`MAX_STDIN_BYTES`].
fn read_input(input: Option<&std::path::Path>, stdin: &mut dyn Read) -> Result<String, Failure> {
    match input.filter(|p| p.as_os_str() != "-") {
        None => read_stdin(stdin),
        Some(path) => {
            let file = std::fs::File::open(path)
                .map_err(|e| Failure::invalid(format!("--input: cannot read {}: {e}", path.display())))?;
            let mut text = String::new();
            file.take(MAX_STDIN_BYTES + 1)
                .read_to_string(&mut text)
                .map_err(|e| Failure::invalid(format!("--input: cannot read {}: {e}", path.display())))?;
            if text.len() as u64 > MAX_STDIN_BYTES {
                return Err(Failure::invalid(format!(
                    "--input: {} must be at most {MAX_STDIN_BYTES} bytes",
                    path.display()
                )));
            }
            Ok(text)
        }
    }
}

/// A line reader over `--input FILE` (`-` or none: stdin).
fn open_input<'a>(
    input: Option<&std::path::Path>,
    stdin: &'a mut dyn Read,
) -> Result<Box<dyn std::io::BufRead + 'a>, Failure> {
    match input.filter(|p| p.as_os_str() != "-") {
        None => Ok(Box::new(std::io::BufReader::new(stdin))),
        Some(path) => {
            let file = std::fs::File::open(path)
                .map_err(|e| Failure::invalid(format!("--input: cannot read {}: {e}", path.display())))?;
            Ok(Box::new(std::io::BufReader::new(file)))
        }
    }
}

fn read_stdin(stdin: &mut dyn Read) -> Result<String, Failure> {
    let mut text = String::new();
    stdin
        .take(MAX_STDIN_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| Failure::invalid(format!("cannot read the request from stdin: {e}")))?;
    if text.len() as u64 > MAX_STDIN_BYTES {
        return Err(Failure::invalid(format!("the request on stdin must be at most {MAX_STDIN_BYTES} bytes")));
    }
    Ok(text)
}

fn options(
    host: &HostArgs,
    storage: Arc<dyn crate::storage::Storage>,
    context: Option<crate::bindings::exports::warden::guard::policy::HostContext>,
) -> RuntimeOptions {
    RuntimeOptions {
        component: match &host.component {
            Some(path) => ComponentSource::File(path.clone()),
            None => ComponentSource::Embedded,
        },
        cache_dir: cache_dir(host),
        limits: Limits {
            memory_bytes: (host.memory_mib * 1024 * 1024) as usize,
            cpu: Duration::from_millis(host.cpu_ms),
            ..Limits::default()
        },
        storage,
        log: log_sink(host.log_level),
        // Lines below the level are dropped here anyway, so the guest need not send them.
        host: context.map(|c| crate::bindings::exports::warden::guard::policy::HostContext {
            log_level: Some(match host.log_level {
                LogLevel::Debug => Level::Debug,
                LogLevel::Info => Level::Info,
                LogLevel::Warn => Level::Warn,
                LogLevel::Error | LogLevel::Off => Level::Error,
            }),
            ..c
        }),
    }
}

fn cache_dir(host: &HostArgs) -> Option<PathBuf> {
    if host.no_cache { None } else { host.cache_dir.clone().or_else(crate::runtime::default_cache_dir) }
}

/// Opens the database and starts a runtime configured with `config` (read
/// from `config_path`), declaring this host's files and approval secret: a
/// configuration the component refuses is bad input (exit 2); a database or
/// component that cannot be opened is a failure to answer (exit 1).
fn start(
    host: &HostArgs,
    config: &str,
    db: &std::path::Path,
    config_path: Option<&std::path::Path>,
) -> Result<Runtime, Failure> {
    let (storage, context) = open_storage(host, db, config_path)?;
    Runtime::new(options(host, storage, Some(context)), config).map_err(|e| match e {
        crate::StartError::Config(_) => Failure::invalid(e.to_string()),
        crate::StartError::Load(_) => Failure::failed(e.to_string()),
    })
}

/// Opens the storage `db` names (a SQLite file, or a `postgres://` URL shared
/// by several gateways) and this host's context: with PostgreSQL the
/// approval secret lives in the database, so an approval one gateway signs
/// holds on every other.
fn open_storage(
    host: &HostArgs,
    db: &std::path::Path,
    config_path: Option<&std::path::Path>,
) -> Result<(Arc<dyn crate::storage::Storage>, crate::bindings::exports::warden::guard::policy::HostContext), Failure> {
    let spec = db.to_string_lossy();
    if !crate::storage::is_database_url(&spec) {
        let storage = SqliteStorage::open(db).map_err(|e| Failure::failed(e.detail()))?;
        let secret = crate::host_context::approval_secret(db).map_err(Failure::failed)?;
        let context = crate::host_context::declare(db, config_path, cache_dir(host).as_deref(), secret);
        return Ok((Arc::new(storage), context));
    }
    let storage = crate::storage::PostgresStorage::connect(&spec).map_err(|e| Failure::failed(e.detail()))?;
    let candidate = crate::host_context::ephemeral_secret().map_err(Failure::failed)?;
    let secret = storage.shared_value("approval-secret", &candidate).map_err(|e| Failure::failed(e.detail()))?;
    let mut context = crate::host_context::declare(db, config_path, cache_dir(host).as_deref(), secret);
    // No file of this host holds the records.
    context.databases.clear();
    Ok((Arc::new(storage), context))
}

fn print_json(stdout: &mut dyn Write, value: &impl serde::Serialize) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Failure::failed(e.to_string()))?;
    writeln!(stdout, "{text}").map_err(|e| Failure::failed(format!("cannot write the answer: {e}")))
}

/// `Err(threshold)` when `--fail-on` is met by `decision`.
fn fail_on(threshold: Option<FailOn>, decision: &str, rule: &str) -> Result<(), Failure> {
    match threshold {
        Some(t) if t.met_by(decision) => {
            Err(Failure::threshold(format!("the decision is `{decision}` by rule `{rule}`")))
        }
        _ => Ok(()),
    }
}

/// The answer `check turn` gives when Warden cannot start: the turn proceeds
/// unchecked, as inbound checks fail open.
fn turn_start_failure(why: &str) -> json::TurnOutcomeJson {
    json::TurnOutcomeJson {
        proceed: true,
        outcome: "failed".into(),
        rule: START_FAILURE_RULE.into(),
        reason: format!("warden could not start ({why}); inbound checks fail open, so the turn proceeds unchecked"),
        append_context: None,
        scenarios: Vec::new(),
        missing_identity: false,
        reused: false,
        signals: Vec::new(),
    }
}

/// The request times this run accepts.
fn clock(host: &HostArgs) -> Clock {
    Clock { replay: host.replay }
}

/// Refuses `--replay` for a command that reads no request time.
fn no_replay(host: &HostArgs, command: &str) -> Result<(), String> {
    if host.replay {
        return Err(format!(
            "--replay: `warden {command}` always uses this host's clock and reads no request time, so there is \
             nothing to replay"
        ));
    }
    Ok(())
}

fn dispatch(cli: Cli, stdin: &mut dyn Read, stdout: &mut dyn Write, stderr: &mut dyn Write) -> Result<(), Failure> {
    let host = cli.host;
    let clock = clock(&host);
    match cli.command {
        Command::Check { what, policy, fail_on: threshold, input, batch } => {
            check::check_threshold(what, threshold)?;
            let policy = policy.resolve()?;
            let config = read_config(&policy.config)?;
            if batch {
                let mut reader = open_input(input.as_deref(), stdin)?;
                return check::batch(&host, what, &policy, &config, &mut reader, clock, threshold, stdout, stderr);
            }
            let request = read_input(input.as_deref(), stdin)?;
            // Parsed before anything opens: a rejected request writes nothing.
            let answer = check::one(&host, what, &policy, &config, &request, clock, stdout, stderr)?;
            fail_on(threshold, answer.decision, &answer.rule)
        }
        Command::Explain { what, policy, input, json } => {
            let policy = policy.resolve()?;
            let config = read_config(&policy.config)?;
            let request = read_input(input.as_deref(), stdin)?;
            check::explain(&host, what, &policy, &config, &request, clock, json, stdout)
        }
        Command::Init { runtime, output, force } => init::run(runtime, &output, force, stdout, stderr),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "warden", stdout);
            Ok(())
        }
        Command::Man => {
            let command = <Cli as clap::CommandFactory>::command();
            clap_mangen::Man::new(command)
                .render(stdout)
                .map_err(|e| Failure::failed(format!("cannot write the man page: {e}")))
        }
        Command::Pin { policy, session, chat, label, run, now_ms, prompt, dedicated } => {
            clock.admit("--now-ms", now_ms).map_err(Failure::invalid)?;
            let policy = policy.resolve()?;
            let config = read_config(&policy.config)?;
            let runtime = start(&host, &config, &policy.db, Some(&policy.config))?;
            let start = json::TurnStartJson {
                session_id: session,
                run_id: run,
                chat_id: Some(chat),
                label,
                now_ms,
                prompt,
                dedicated,
            };
            let pin = runtime.start_turn(&start.into()).map_err(call_failure)?;
            print_json(stdout, &pin.as_ref().map(json::PinStateJson::from))
        }
        Command::Settle { policy, session, run, now_ms } => {
            clock.admit("--now-ms", now_ms).map_err(Failure::invalid)?;
            let policy = policy.resolve()?;
            let config = read_config(&policy.config)?;
            let runtime = start(&host, &config, &policy.db, Some(&policy.config))?;
            let end = json::TurnEndJson { session_id: session, run_id: run, now_ms };
            runtime.settle_turn(&end.into()).map_err(call_failure)?;
            print_json(stdout, &serde_json::json!({"settled": true}))
        }
        Command::Diagnostics { policy } => {
            let policy = policy.resolve()?;
            let config = read_config(&policy.config)?;
            let runtime = start(&host, &config, &policy.db, Some(&policy.config))?;
            let report = runtime.diagnostics().map_err(call_failure)?;
            print_json(stdout, &json::DiagnosticsJson::from(&report))
        }
        Command::Validate { config } => {
            let config = paths::find_config(config.as_deref()).map_err(Failure::invalid)?;
            let text = read_config(&config)?;
            let dir = temp_dir()?;
            let runtime = start(&host, &text, &dir.path().join("validate.db"), Some(&config))?;
            let mut report = json::ConfigReportJson::from(runtime.report());
            let parsed: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            let gateway = crate::http::HttpGateway::from_config(&parsed).map_err(Failure::invalid)?;
            for warning in gateway.credential_warnings() {
                let _ = writeln!(stderr, "warning: {warning}");
                report.warnings.push(warning);
            }
            print_json(stdout, &report)
        }
        Command::Approve { policy, key, scope, deny, session, call, idempotency_key, input } => {
            let policy = policy.resolve()?;
            let config = read_config(&policy.config)?;
            let key = match key {
                Some(k) => k,
                None => {
                    let request = read_input(input.as_deref(), stdin)?;
                    let call: json::ToolCallJson = json::parse_request(&request, clock).map_err(Failure::invalid)?;
                    let runtime = start(&host, &config, &policy.db, Some(&policy.config))?;
                    let verdict = runtime.check_tool_call(&call.into());
                    verdict.approval_key.clone().ok_or_else(|| {
                        Failure::invalid(format!(
                            "this call is not waiting for approval: {} by rule `{}`",
                            json::decision_name(verdict.decision),
                            verdict.rule
                        ))
                    })?
                }
            };
            let runtime = start(&host, &config, &policy.db, Some(&policy.config))?;
            let approval = json::ApprovalJson {
                key: key.clone(),
                allow: !deny,
                scope: match scope {
                    ScopeArg::Once => json::ScopeJson::Once,
                    ScopeArg::Session => json::ScopeJson::Session,
                    ScopeArg::Always => json::ScopeJson::Always,
                },
                session_id: session,
                call_id: call,
                now_ms: None,
                idempotency_key,
            };
            runtime.record_approval(&approval.into()).map_err(call_failure)?;
            print_json(stdout, &serde_json::json!({"recorded": true, "key": key, "allow": !deny}))
        }
        Command::Serve {
            policy,
            listen,
            token_file,
            max_body_bytes,
            concurrency,
            max_connections,
            max_inflight_body_bytes,
            admin_token_file,
            no_watch,
        } => {
            let admin_token = match &admin_token_file {
                Some(path) => Some(
                    std::fs::read_to_string(path)
                        .map_err(|e| Failure::invalid(format!("cannot read {}: {e}", path.display())))?
                        .trim()
                        .to_string(),
                ),
                None => None,
            };
            let limits = crate::serve::ServeOptions {
                token: String::new(),
                max_body_bytes,
                concurrency: concurrency as usize,
                max_connections,
                max_inflight_body_bytes,
                clock,
                admin_token: None,
                config_file: None,
            };
            limits.check().map_err(Failure::invalid)?;
            let listen = resolve_listen(&listen)?;
            let policy = policy.resolve()?;
            let config = read_config(&policy.config)?;
            let token = match token_file {
                Some(path) => std::fs::read_to_string(&path)
                    .map_err(|e| Failure::invalid(format!("cannot read {}: {e}", path.display())))?,
                None => std::env::var("WARDEN_TOKEN").map_err(|_| {
                    Failure::invalid("a bearer token is required: set WARDEN_TOKEN or pass --token-file")
                })?,
            };
            let token = token.trim().to_string();
            crate::serve::check_token(&token).map_err(Failure::invalid)?;
            let runtime = Arc::new(start(&host, &config, &policy.db, Some(&policy.config))?);
            let config_file = (!no_watch).then(|| policy.config.clone());
            let options = crate::serve::ServeOptions { token, admin_token, config_file, ..limits };
            options.check().map_err(Failure::invalid)?;
            if !listen.ip().to_canonical().is_loopback() {
                eprintln!(
                    "warden: warning: listening on {listen}, beyond loopback: anyone who can reach this address \
                     can try tokens, and requests travel as plain HTTP; put a TLS proxy in front or listen on 127.0.0.1"
                );
            }
            tokio_runtime()?
                .block_on(crate::serve::serve(runtime, options, listen, |addr| {
                    eprintln!("warden: serving on http://{addr}");
                }))
                .map_err(|e| Failure::failed(format!("cannot serve on {listen}: {e}")))
        }
        Command::Hook { runtime: HookRuntime::ClaudeCode, policy, approve_allowed, exit_code } => {
            let style = crate::hook::HookStyle { approve_allowed, exit_code };
            let answer = hook_answer(&host, &policy, stdin, style);
            if let Some(out) = &answer.stdout {
                print_json(stdout, out)?;
            }
            match (answer.code, answer.stderr) {
                (0, _) => Ok(()),
                (code, message) => Err(Failure { code, message: message.unwrap_or_default() }),
            }
        }
        Command::Mcp { policy, name, command } => {
            no_replay(&host, "mcp").map_err(Failure::invalid)?;
            let policy = policy.resolve()?;
            let config = read_config(&policy.config)?;
            let runtime = Arc::new(start(&host, &config, &policy.db, Some(&policy.config))?);
            let options = crate::mcp::McpOptions {
                server_name: name.unwrap_or_else(|| crate::mcp::server_name_from(&command)),
                session_id: format!("mcp-{}-{}", std::process::id(), json::now_ms()),
            };
            let tokio = tokio_runtime()?;
            let ran =
                tokio.block_on(crate::mcp::run(runtime, options, command, tokio::io::stdin(), tokio::io::stdout()));
            // A read of stdin may still be blocked on its thread (the server exited first): do not wait for it.
            tokio.shutdown_background();
            let code = ran.map_err(|e| Failure::failed(format!("the MCP proxy stopped: {e}")))?;
            if code == 0 { Ok(()) } else { Err(Failure::failed(format!("the MCP server exited with code {code}"))) }
        }
        Command::Scan { paths, json, fail_on, kind } => scan::run(&host, &paths, json, fail_on, kind, stdout),
        Command::Gate { command } => gate::run(&host, clock, command, stdout),
        Command::Asks { command } => asks::run(&host, command, stdout),
        Command::Audit { command } => audit::run(&host, command, stdout),
        Command::Profile { command } => profile::run(&host, command, stdout),
        Command::AuditConfig { target, path, json, fail_on } => {
            harden::audit(&host, &target, path, json, fail_on, stdout)
        }
        Command::Harden { target, path, dry_run } => harden::harden(&host, &target, path, dry_run, stdout),
        Command::Rollback { target, file, backup } => harden::rollback(&target, file, backup, stdout),
        Command::Demo { db } => demo::run(&host, db, stdout),
        Command::HashValues { key_file, input } => {
            let mut values = open_input(input.as_deref(), stdin)?;
            listed::run(&key_file, &mut values, stdout)
        }
    }
}

/// `--listen`: `IP:PORT`, or `HOST:PORT` resolved to its first address (IPv4 first, as loopback names
/// resolve to both).
fn resolve_listen(text: &str) -> Result<std::net::SocketAddr, Failure> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse::<std::net::SocketAddr>() {
        return Ok(addr);
    }
    let invalid = |why: String| Failure::invalid(format!("--listen: `{text}` {why}; give IP:PORT or HOST:PORT"));
    let Some((_, port)) = text.rsplit_once(':') else {
        return Err(invalid("has no port".into()));
    };
    if port.parse::<u16>().is_err() {
        return Err(invalid(format!("has port `{port}`, which is not a number from 0 to 65535")));
    }
    let addrs: Vec<std::net::SocketAddr> =
        text.to_socket_addrs().map_err(|e| invalid(format!("cannot be resolved ({e})")))?.collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| invalid("resolves to no address".into()))
}

fn tokio_runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::failed(format!("cannot start the async runtime: {e}")))
}

/// The hook's answer; what fails gets the event's failure mode (a tool call is blocked).
fn hook_answer(
    host: &HostArgs,
    policy: &Policy,
    stdin: &mut dyn Read,
    style: crate::hook::HookStyle,
) -> crate::hook::HookAnswer {
    let event = no_replay(host, "hook").and_then(|()| read_stdin(stdin).map_err(|f| f.message));
    match event {
        Ok(event) => crate::hook::run(&event, style, || {
            let policy = policy.resolve().map_err(|f| f.message)?;
            let config = read_config(&policy.config).map_err(|f| f.message)?;
            start(host, &config, &policy.db, Some(&policy.config)).map_err(|f| f.message)
        }),
        Err(message) => crate::hook::failure(message.trim_end()),
    }
}

/// A fresh private folder, removed when dropped.
fn temp_dir() -> Result<tempfile::TempDir, Failure> {
    tempfile::Builder::new()
        .prefix("warden-")
        .tempdir()
        .map_err(|e| Failure::failed(format!("cannot create a temporary folder: {e}")))
}
