//! Loading the component and calling it safely.
//!
//! One engine per process; the component is compiled once and the compiled
//! artifact is cached on disk keyed by the component's SHA-256; instances are
//! pooled and reused, one `Store` each. Every call runs under a memory cap and
//! a CPU-time deadline. A guest that traps is discarded and replaced, and the
//! call answers with the failure mode of the check that was running: tool
//! calls and outbound messages fail closed, inbound turns fail open.

use crate::bindings::exports::warden::guard::asks::{AnsweredAsk, AskAnswer, AskError, PendingAsk};
use crate::bindings::exports::warden::guard::policy::{
    Approval, ConfigReport, DiagnosticsReport, HostContext, Observation, OutboundMessage, OutcomeReport, PinState,
    ToolCall, ToolResult, Turn, TurnEnd, TurnOutcome, TurnStart, Usage,
};
use crate::bindings::exports::warden::guard::runtime_config::{AgentRuntime, ConfigFinding};
use crate::bindings::warden::guard::types::{Decision, PolicyError, Risk, Verdict};
use crate::bindings::{Guard, GuardPre, warden};
use crate::http::HttpGateway;
use crate::storage::Storage;
use anyhow::{Context, anyhow};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder, UpdateDeadline};

/// How often the engine's epoch advances; the granularity of the CPU deadline.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);
/// Default guest memory cap, in bytes (64 MiB).
pub const DEFAULT_MEMORY_BYTES: usize = 64 * 1024 * 1024;
/// Default guest CPU time per call, time spent in host calls excluded.
pub const DEFAULT_CPU: Duration = Duration::from_secs(2);
/// Default number of idle instances kept for reuse.
pub const DEFAULT_POOL: usize = 8;

/// The component built from this repository, embedded at build time.
pub static EMBEDDED_COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/warden_component.wasm"));

/// Rule of an answer given because the guest failed.
pub const GUEST_FAILURE_RULE: &str = "host.guest-failure";

/// Sandbox limits applied to every call.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest linear memory the guest may grow to.
    pub memory_bytes: usize,
    /// Guest CPU time per call; time spent in host calls does not count.
    pub cpu: Duration,
    /// Idle instances kept for reuse.
    pub pool: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { memory_bytes: DEFAULT_MEMORY_BYTES, cpu: DEFAULT_CPU, pool: DEFAULT_POOL }
    }
}

/// Severity of a guest log line.
pub use warden::guard::log::Level;

/// Where guest log lines go.
pub type LogSink = Arc<dyn Fn(Level, &str) + Send + Sync>;

/// Which component to run.
#[derive(Debug, Clone)]
pub enum ComponentSource {
    /// The component embedded in this binary.
    Embedded,
    /// A component file.
    File(PathBuf),
    /// Component bytes.
    Bytes(Vec<u8>),
}

/// Everything a runtime needs.
pub struct RuntimeOptions {
    pub component: ComponentSource,
    /// Where compiled artifacts are cached; `None` compiles every time.
    pub cache_dir: Option<PathBuf>,
    pub limits: Limits,
    pub storage: Arc<dyn Storage>,
    pub log: LogSink,
    /// What this host declares about itself (see [`crate::host_context`]);
    /// without it, answers to `ask` cannot be recorded and only the
    /// configured paths are protected.
    pub host: Option<HostContext>,
}

/// Most configuration errors a [`StartError`] prints; the rest are counted.
pub const MAX_SHOWN_CONFIG_ERRORS: usize = 50;

/// Why a runtime could not start.
#[derive(Debug)]
pub enum StartError {
    /// The configuration is invalid; every problem is listed.
    Config(Vec<(String, String)>),
    /// The component could not be loaded or instantiated.
    Load(anyhow::Error),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Config(errors) => {
                writeln!(f, "the configuration has {} error(s):", errors.len())?;
                for (path, message) in errors.iter().take(MAX_SHOWN_CONFIG_ERRORS) {
                    if path.is_empty() {
                        writeln!(f, "  {message}")?;
                    } else {
                        writeln!(f, "  {path}: {message}")?;
                    }
                }
                if let Some(rest) = errors.len().checked_sub(MAX_SHOWN_CONFIG_ERRORS).filter(|&n| n > 0) {
                    writeln!(f, "  ... and {rest} more error(s) not shown; fix these first")?;
                }
                Ok(())
            }
            StartError::Load(e) => write!(f, "cannot load the component: {e:#}"),
        }
    }
}

impl std::error::Error for StartError {}

/// Why an admin or lifecycle call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The component answered with a typed error.
    Policy(PolicyError),
    /// The guest trapped or could not be instantiated; the instance was discarded.
    Guest(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Policy(PolicyError::NotConfigured) => f.write_str("warden is not configured"),
            CallError::Policy(PolicyError::InvalidInput(m)) => write!(f, "invalid input: {m}"),
            CallError::Policy(PolicyError::Storage(m)) => write!(f, "storage failed: {m}"),
            CallError::Policy(PolicyError::Other(m)) => f.write_str(m),
            CallError::Guest(m) => write!(f, "the guard failed: {m}"),
        }
    }
}

impl std::error::Error for CallError {}

/// Why an approval inbox call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskCallError {
    /// The component answered with a typed error.
    Ask(AskError),
    /// The guest trapped or could not be instantiated; the instance was discarded.
    Guest(String),
}

impl std::fmt::Display for AskCallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskCallError::Ask(AskError::NotConfigured) => f.write_str("warden is not configured"),
            AskCallError::Ask(AskError::UnknownAsk(m)) => write!(f, "unknown ask: {m}"),
            AskCallError::Ask(AskError::Expired(m)) => write!(f, "expired ask: {m}"),
            AskCallError::Ask(AskError::ScopeTooBroad(m)) => write!(f, "scope too broad: {m}"),
            AskCallError::Ask(AskError::InvalidInput(m)) => write!(f, "invalid input: {m}"),
            AskCallError::Ask(AskError::Storage(m)) => write!(f, "storage failed: {m}"),
            AskCallError::Ask(AskError::Other(m)) => f.write_str(m),
            AskCallError::Guest(m) => write!(f, "the guard failed: {m}"),
        }
    }
}

impl std::error::Error for AskCallError {}

/// Measures guest CPU time: wall time of the call minus time spent in host calls.
#[derive(Debug, Default)]
pub(crate) struct GuestClock {
    started: Option<Instant>,
    in_host: Duration,
    budget: Duration,
}

impl GuestClock {
    fn start(&mut self, budget: Duration) {
        self.started = Some(Instant::now());
        self.in_host = Duration::ZERO;
        self.budget = budget;
    }

    fn exceeded(&self) -> bool {
        self.started.is_some_and(|s| s.elapsed().saturating_sub(self.in_host) > self.budget)
    }

    pub(crate) fn host_time(&mut self, spent: Duration) {
        self.in_host += spent;
    }
}

/// Per-instance state the imports work on; opaque outside the host.
pub struct HostState {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) http: Arc<HttpGateway>,
    pub(crate) log: LogSink,
    pub(crate) clock: GuestClock,
    limits: StoreLimits,
}

struct Instance {
    store: Store<HostState>,
    guard: Guard,
}

/// The process-wide engine, with a thread that advances its epoch.
fn engine() -> anyhow::Result<&'static Engine> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    let engine = ENGINE.get_or_init(|| {
        let mut config = Config::new();
        config.epoch_interruption(true);
        config.profiler(profiler(std::env::var_os(PROFILER_VAR).as_deref())?);
        let engine = Engine::new(&config).map_err(|e| format!("{e:#}"))?;
        let ticker = engine.clone();
        std::thread::Builder::new()
            .name("warden-epoch".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(EPOCH_TICK);
                    ticker.increment_epoch();
                }
            })
            .map_err(|e| format!("cannot start the epoch thread: {e}"))?;
        Ok(engine)
    });
    engine.as_ref().map_err(|e| anyhow!("{e}"))
}

/// The variable that names the guest's functions to a profiler: `perfmap`
/// writes `/tmp/perf-PID.map` as the guest is loaded, which `perf report`
/// and `cargo xtask instructions` read. Unset or empty, nothing is written.
pub const PROFILER_VAR: &str = "WARDEN_PROFILER";

/// The profiler `WARDEN_PROFILER` asks for; any other value is an error, not
/// a run without the map someone asked for.
fn profiler(value: Option<&std::ffi::OsStr>) -> Result<wasmtime::ProfilingStrategy, String> {
    match value.map(|v| v.to_str()) {
        None | Some(Some("")) => Ok(wasmtime::ProfilingStrategy::None),
        Some(Some("perfmap")) => Ok(wasmtime::ProfilingStrategy::PerfMap),
        Some(other) => {
            Err(format!("{PROFILER_VAR} is `{}`; it takes `perfmap` (or nothing)", other.unwrap_or("(not UTF-8)")))
        }
    }
}

/// The default cache folder: `$WARDEN_CACHE_DIR`, else `$XDG_CACHE_HOME/warden`, else `~/.cache/warden`.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WARDEN_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("warden"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("warden"))
}

fn compatibility_tag(engine: &Engine) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Compiles `bytes`, or loads the artifact cached for exactly these bytes and this engine.
fn load_component(engine: &Engine, bytes: &[u8], cache_dir: Option<&Path>) -> anyhow::Result<Component> {
    let digest = crate::hex(&Sha256::digest(bytes));
    let cached = cache_dir.map(|d| d.join(format!("{digest}-{}.cwasm", compatibility_tag(engine))));
    if let Some(path) = &cached
        && path.is_file()
    {
        // SAFETY: the file was written by `Component::serialize` below into the
        // user's own cache folder, under a name that binds it to these exact
        // component bytes and this engine's configuration; wasmtime checks
        // the version and configuration header again while loading.
        #[expect(unsafe_code, reason = "loading a precompiled artifact this host wrote")]
        let loaded = unsafe { Component::deserialize_file(engine, path) };
        if let Ok(component) = loaded {
            return Ok(component);
        }
    }
    let component = Component::new(engine, bytes).map_err(|e| anyhow!("compiling the component: {e:#}"))?;
    if let (Some(path), Some(dir)) = (&cached, cache_dir) {
        // A cache that cannot be written only costs time; never fail the load for it.
        let _ = std::fs::create_dir_all(dir).and_then(|_| {
            let serialized = component.serialize().map_err(std::io::Error::other)?;
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, serialized)?;
            std::fs::rename(&tmp, path)
        });
    }
    Ok(component)
}

/// A loaded, configured component with a pool of instances.
pub struct Runtime {
    engine: &'static Engine,
    pre: GuardPre<HostState>,
    config: String,
    http: Arc<HttpGateway>,
    storage: Arc<dyn Storage>,
    log: LogSink,
    limits: Limits,
    pool: Mutex<Vec<Instance>>,
    report: ConfigReport,
    host: Option<HostContext>,
}

impl Drop for Runtime {
    /// Each pooled instance writes the counts it keeps before it goes.
    fn drop(&mut self) {
        let idle = self.pool.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default();
        for instance in idle {
            self.retire(instance);
        }
    }
}

/// The engine and the linked, pre-instantiated component of `options`.
fn prepare(options: &RuntimeOptions) -> Result<(&'static Engine, GuardPre<HostState>), StartError> {
    let engine = engine().map_err(StartError::Load)?;
    // Borrowed where the bytes are already in memory: the component is megabytes.
    let bytes: std::borrow::Cow<'_, [u8]> = match &options.component {
        ComponentSource::Embedded => EMBEDDED_COMPONENT.into(),
        ComponentSource::Bytes(b) => b.as_slice().into(),
        ComponentSource::File(p) => {
            std::fs::read(p).with_context(|| format!("reading {}", p.display())).map_err(StartError::Load)?.into()
        }
    };
    let component = load_component(engine, &bytes, options.cache_dir.as_deref()).map_err(StartError::Load)?;
    let mut linker: Linker<HostState> = Linker::new(engine);
    Guard::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)
        .map_err(|e| StartError::Load(anyhow!("{e:#}")))?;
    let pre = linker.instantiate_pre(&component).map_err(|e| StartError::Load(anyhow!("{e:#}")))?;
    let pre = GuardPre::new(pre).map_err(|e| StartError::Load(anyhow!("{e:#}")))?;
    Ok((engine, pre))
}

impl Runtime {
    /// Loads the component and configures it with `config` (JSON text).
    pub fn new(options: RuntimeOptions, config: &str) -> Result<Runtime, StartError> {
        let (engine, pre) = prepare(&options)?;
        Runtime::configured(engine, pre, options.storage, options.log, options.limits, options.host, config)
    }

    /// A new runtime over the same component, storage, limits and host
    /// context, configured with `config`: what a live policy reload swaps in.
    /// An invalid `config` is refused with every error, and `self` is untouched.
    pub fn reconfigured(&self, config: &str) -> Result<Runtime, StartError> {
        Runtime::configured(
            self.engine,
            self.pre.clone(),
            self.storage.clone(),
            self.log.clone(),
            self.limits,
            self.host.clone(),
            config,
        )
    }

    fn configured(
        engine: &'static Engine,
        pre: GuardPre<HostState>,
        storage: Arc<dyn Storage>,
        log: LogSink,
        limits: Limits,
        host: Option<HostContext>,
        config: &str,
    ) -> Result<Runtime, StartError> {
        // The component validates the configuration; the host reads only the
        // destinations it must enforce, after the component accepted them.
        let mut runtime = Runtime {
            engine,
            pre,
            config: config.to_string(),
            http: Arc::new(HttpGateway::new(Vec::new())),
            storage,
            log,
            limits,
            pool: Mutex::new(Vec::new()),
            report: ConfigReport { policy_version: String::new(), checks: Vec::new(), warnings: Vec::new() },
            host,
        };
        let mut first = runtime.instantiate().map_err(StartError::Load)?;
        runtime.declare(&mut first).map_err(StartError::Load)?;
        first.store.data_mut().clock.start(runtime.limits.cpu);
        let answer = first
            .guard
            .warden_guard_policy()
            .call_configure(&mut first.store, config)
            .map_err(|e| StartError::Load(anyhow!("{e:#}")))?;
        match answer {
            Ok(report) => runtime.report = report,
            Err(errors) => {
                return Err(StartError::Config(errors.into_iter().map(|e| (e.path, e.message)).collect()));
            }
        }
        let parsed: serde_json::Value =
            serde_json::from_str(config).map_err(|e| StartError::Load(anyhow!("configuration: {e}")))?;
        let http = HttpGateway::from_config(&parsed).map_err(|e| StartError::Load(anyhow!(e)))?;
        runtime.http = Arc::new(http);
        first.store.data_mut().http = runtime.http.clone();
        runtime.give_back(first);
        Ok(runtime)
    }

    /// Loads the component with no policy, for the exports that need none
    /// (`runtime-config`); every policy call answers `not-configured`.
    pub fn without_policy(options: RuntimeOptions) -> Result<Runtime, StartError> {
        let (engine, pre) = prepare(&options)?;
        Ok(Runtime {
            engine,
            pre,
            config: String::new(),
            http: Arc::new(HttpGateway::new(Vec::new())),
            storage: options.storage,
            log: options.log,
            limits: options.limits,
            pool: Mutex::new(Vec::new()),
            report: ConfigReport { policy_version: String::new(), checks: Vec::new(), warnings: Vec::new() },
            host: options.host,
        })
    }

    /// The configuration text this runtime was configured with (empty without a policy).
    pub fn config_text(&self) -> &str {
        &self.config
    }

    /// What the component reported when it accepted the configuration.
    pub fn report(&self) -> &ConfigReport {
        &self.report
    }

    /// Whether a call can wait only on this machine: no HTTP destination is
    /// allowed and the storage is local (SQLite or memory), so a call takes
    /// guest CPU time (bounded by [`Limits::cpu`]) and local storage time.
    pub fn waits_only_on_this_machine(&self) -> bool {
        !self.http.reaches_anything() && !self.storage.over_network()
    }

    /// Cancels the component's HTTP requests in flight and refuses new ones
    /// (answered `cancelled`), for a host that is stopping.
    pub fn cancel_requests(&self) {
        self.http.cancel();
    }

    /// Lets the component's HTTP requests run again.
    pub fn resume_requests(&self) {
        self.http.resume();
    }

    /// The storage the component writes to.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Number of idle instances in the pool.
    pub fn idle_instances(&self) -> usize {
        self.pool.lock().map(|p| p.len()).unwrap_or(0)
    }

    fn instantiate(&self) -> anyhow::Result<Instance> {
        let state = HostState {
            storage: self.storage.clone(),
            http: self.http.clone(),
            log: self.log.clone(),
            clock: GuestClock::default(),
            limits: StoreLimitsBuilder::new().memory_size(self.limits.memory_bytes).trap_on_grow_failure(true).build(),
        };
        let mut store = Store::new(self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_callback(|ctx| {
            if ctx.data().clock.exceeded() { Ok(UpdateDeadline::Interrupt) } else { Ok(UpdateDeadline::Continue(1)) }
        });
        store.set_epoch_deadline(1);
        store.data_mut().clock.start(self.limits.cpu);
        let guard = self.pre.instantiate(&mut store).map_err(|e| anyhow!("{e:#}"))?;
        Ok(Instance { store, guard })
    }

    fn take(&self) -> anyhow::Result<Instance> {
        let idle = self.pool.lock().ok().and_then(|mut p| p.pop());
        if let Some(instance) = idle {
            return Ok(instance);
        }
        let mut instance = self.instantiate()?;
        self.declare(&mut instance)?;
        if self.config.is_empty() {
            // A runtime without a policy (`without_policy`).
            return Ok(instance);
        }
        let answer = instance
            .guard
            .warden_guard_policy()
            .call_configure(&mut instance.store, &self.config)
            .map_err(|e| anyhow!("{e:#}"))?;
        answer.map_err(|errors| anyhow!("a new instance refused the configuration ({} errors)", errors.len()))?;
        Ok(instance)
    }

    /// Declares the host context to a new instance, before its configuration.
    fn declare(&self, instance: &mut Instance) -> anyhow::Result<()> {
        let Some(context) = &self.host else { return Ok(()) };
        instance
            .guard
            .warden_guard_policy()
            .call_set_host_context(&mut instance.store, context)
            .map_err(|e| anyhow!("{e:#}"))?
            .map_err(|e| anyhow!("the component refused the host context: {}", CallError::Policy(e)))
    }

    fn give_back(&self, instance: Instance) {
        let extra = match self.pool.lock() {
            Ok(mut pool) if pool.len() < self.limits.pool => {
                pool.push(instance);
                None
            }
            _ => Some(instance),
        };
        if let Some(instance) = extra {
            self.retire(instance);
        }
    }

    /// Drops an instance after it wrote the counts it keeps (the component
    /// writes them before it reports diagnostics).
    fn retire(&self, mut instance: Instance) {
        instance.store.data_mut().clock.start(self.limits.cpu);
        instance.store.set_epoch_deadline(1);
        let _ = instance.guard.warden_guard_policy().call_diagnostics(&mut instance.store);
    }

    /// Runs one export call on a pooled instance under the sandbox limits. A
    /// trapped instance is dropped, never reused.
    fn call<R>(&self, f: impl FnOnce(&Guard, &mut Store<HostState>) -> wasmtime::Result<R>) -> Result<R, String> {
        let mut instance = self.take().map_err(|e| format!("{e:#}"))?;
        instance.store.data_mut().clock.start(self.limits.cpu);
        instance.store.set_epoch_deadline(1);
        match f(&instance.guard, &mut instance.store) {
            Ok(value) => {
                self.give_back(instance);
                Ok(value)
            }
            Err(e) => {
                let message = describe_trap(&e);
                (self.log)(Level::Error, &format!("guest failed and was discarded: {message}"));
                Err(message)
            }
        }
    }

    fn admin<R>(
        &self,
        f: impl FnOnce(&Guard, &mut Store<HostState>) -> wasmtime::Result<Result<R, PolicyError>>,
    ) -> Result<R, CallError> {
        self.call(f).map_err(CallError::Guest)?.map_err(CallError::Policy)
    }

    /// Judges a tool call. Fails closed when the guest fails.
    pub fn check_tool_call(&self, call: &ToolCall) -> Verdict {
        self.call(|g, s| g.warden_guard_policy().call_check_tool_call(s, call))
            .unwrap_or_else(|e| fail_closed(&e, "tool calls"))
    }

    /// Checks an outbound or peer message. Fails closed when the guest fails.
    pub fn check_outbound(&self, message: &OutboundMessage) -> Verdict {
        self.call(|g, s| g.warden_guard_policy().call_check_outbound(s, message))
            .unwrap_or_else(|e| fail_closed(&e, "messages"))
    }

    /// Checks an inbound turn. Fails open when the guest fails.
    pub fn check_turn(&self, turn: &Turn) -> TurnOutcome {
        use crate::bindings::exports::warden::guard::policy::SafetyOutcome;
        self.call(|g, s| g.warden_guard_policy().call_check_turn(s, turn)).unwrap_or_else(|e| TurnOutcome {
            proceed: true,
            outcome: SafetyOutcome::Failed,
            rule: GUEST_FAILURE_RULE.to_string(),
            reason: format!("the guard failed ({e}); inbound checks fail open, so the turn proceeds unchecked"),
            append_context: None,
            scenarios: Vec::new(),
            missing_identity: false,
            reused: false,
            signals: Vec::new(),
        })
    }

    /// Starts a turn, pinning its reply when a chat is given.
    pub fn start_turn(&self, start: &TurnStart) -> Result<Option<PinState>, CallError> {
        self.admin(|g, s| g.warden_guard_policy().call_start_turn(s, start))
    }

    /// Settles a turn, clearing its pin.
    pub fn settle_turn(&self, end: &TurnEnd) -> Result<(), CallError> {
        self.admin(|g, s| g.warden_guard_policy().call_settle_turn(s, end))
    }

    /// The session's active pin.
    pub fn current_pin(&self, session_id: &str, now_ms: u64) -> Result<Option<PinState>, CallError> {
        self.admin(|g, s| g.warden_guard_policy().call_current_pin(s, session_id, now_ms))
    }

    /// Records a person's answer to an `ask`.
    pub fn record_approval(&self, approval: &Approval) -> Result<(), CallError> {
        self.admin(|g, s| g.warden_guard_policy().call_record_approval(s, approval))
    }

    /// Reports what a tool returned, so the destinations in it are known to
    /// come from content the agent read.
    pub fn observe_tool_result(&self, result: &ToolResult) -> Result<Observation, CallError> {
        self.admin(|g, s| g.warden_guard_policy().call_observe_tool_result(s, result))
    }

    /// Records model usage.
    pub fn record_usage(&self, usage: &Usage) -> Result<(), CallError> {
        self.admin(|g, s| g.warden_guard_policy().call_record_usage(s, usage))
    }

    /// Records a delivery outcome.
    pub fn record_outcome(&self, report: &OutcomeReport) -> Result<(), CallError> {
        self.admin(|g, s| g.warden_guard_policy().call_record_outcome(s, report))
    }

    /// Counters, check status and warnings.
    pub fn diagnostics(&self) -> Result<DiagnosticsReport, CallError> {
        self.admin(|g, s| g.warden_guard_policy().call_diagnostics(s))
    }

    /// The consent gate's admin interface, run on a pooled instance.
    pub fn gate<R>(
        &self,
        f: impl FnOnce(
            &crate::bindings::exports::warden::guard::gate::Guest,
            &mut Store<HostState>,
        ) -> wasmtime::Result<Result<R, PolicyError>>,
    ) -> Result<R, CallError> {
        self.admin(|g, s| f(g.warden_guard_gate(), s))
    }

    /// Agent profiles: one agent's, or every agent's when `agent` is `None`.
    pub fn profile_show(
        &self,
        agent: Option<&str>,
        now_ms: u64,
    ) -> Result<Vec<crate::bindings::exports::warden::guard::profiles::ProfileSummary>, CallError> {
        self.admin(|g, s| g.warden_guard_profiles().call_show(s, agent, now_ms))
    }

    /// Forgets one agent's profile, or every profile; returns how many were removed.
    pub fn profile_reset(&self, agent: Option<&str>) -> Result<u32, CallError> {
        self.admin(|g, s| g.warden_guard_profiles().call_reset(s, agent))
    }

    /// Reviews the tools of one `tools/list` answer of an MCP server, pinning new ones.
    pub fn review_tools(
        &self,
        server: &str,
        tools: &[crate::bindings::exports::warden::guard::tool_review::ListedTool],
        now_ms: u64,
    ) -> Result<Vec<crate::bindings::exports::warden::guard::tool_review::ToolVerdict>, CallError> {
        self.admin(|g, s| g.warden_guard_tool_review().call_review_tools(s, server, tools, now_ms))
    }

    /// Walks the audit trail and names its first broken link.
    pub fn audit_verify(&self) -> Result<crate::bindings::exports::warden::guard::audit::VerifyReport, CallError> {
        self.admin(|g, s| g.warden_guard_audit().call_verify(s))
    }

    /// Audit entries after sequence `after`, oldest first, at most `limit` (1-500).
    pub fn audit_export(
        &self,
        after: u64,
        limit: u32,
    ) -> Result<Vec<crate::bindings::exports::warden::guard::audit::AuditEntry>, CallError> {
        self.admin(|g, s| g.warden_guard_audit().call_export(s, after, limit))
    }

    /// Scans documents (skills, scripts, manifests, tool lists, logs); needs no policy.
    pub fn scan_documents(
        &self,
        documents: &[crate::bindings::exports::warden::guard::scan::Document],
    ) -> Result<crate::bindings::exports::warden::guard::scan::ScanReport, CallError> {
        self.admin(|g, s| g.warden_guard_scan().call_scan_documents(s, documents))
    }
}

/// The approval inbox (`asks`): only the host calls it, for a person it authenticated.
impl Runtime {
    fn asks<R>(
        &self,
        f: impl FnOnce(&Guard, &mut Store<HostState>) -> wasmtime::Result<Result<R, AskError>>,
    ) -> Result<R, AskCallError> {
        self.call(f).map_err(AskCallError::Guest)?.map_err(AskCallError::Ask)
    }

    /// Pending asks that can still be answered at `now_ms`, newest first.
    pub fn asks_list(&self, limit: u32, before: Option<u64>, now_ms: u64) -> Result<Vec<PendingAsk>, AskCallError> {
        self.asks(|g, s| g.warden_guard_asks().call_list(s, limit, before, now_ms))
    }

    /// Answers the ask `id` as `record-approval` would with its key.
    pub fn asks_answer(&self, id: &str, answer: AskAnswer) -> Result<AnsweredAsk, AskCallError> {
        self.asks(|g, s| g.warden_guard_asks().call_answer(s, id, answer))
    }

    /// The answered asks, newest first.
    pub fn asks_recent(&self, limit: u32) -> Result<Vec<AnsweredAsk>, AskCallError> {
        self.asks(|g, s| g.warden_guard_asks().call_recent(s, limit))
    }
}

/// Configuration audit and hardening of an agent runtime (`runtime-config`).
impl Runtime {
    /// The findings in `text`, `runtime`'s configuration, most severe first.
    pub fn audit_config(&self, runtime: AgentRuntime, text: &str) -> Result<Vec<ConfigFinding>, CallError> {
        self.admin(|g, s| g.warden_guard_runtime_config().call_audit(s, runtime, text))
    }

    /// `text` with every fix applied and nothing else changed.
    pub fn harden_config(&self, runtime: AgentRuntime, text: &str) -> Result<String, CallError> {
        self.admin(|g, s| g.warden_guard_runtime_config().call_harden(s, runtime, text))
    }
}

fn describe_trap(e: &wasmtime::Error) -> String {
    match e.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::Interrupt) => "it ran past its CPU deadline".to_string(),
        Some(wasmtime::Trap::UnreachableCodeReached) => "it hit an internal error (unreachable)".to_string(),
        Some(trap) => format!("it trapped: {trap}"),
        None => {
            let text = format!("{e:#}");
            if text.contains("memory") && text.contains("limit") || text.contains("forcing trap when growing memory") {
                "it exceeded its memory cap".to_string()
            } else {
                text
            }
        }
    }
}

fn fail_closed(error: &str, what: &str) -> Verdict {
    Verdict {
        decision: Decision::Deny,
        rule: GUEST_FAILURE_RULE.to_string(),
        reason: format!("the guard failed ({error}); {what} fail closed, so this one is refused"),
        risk: Risk::High,
        scope: None,
        approval_key: None,
        observed: None,
        signals: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::profiler;
    use std::ffi::OsStr;
    use wasmtime::ProfilingStrategy;

    #[test]
    fn the_profiler_variable_writes_a_perf_map_only_when_it_says_perfmap_and_refuses_anything_else() {
        assert!(matches!(profiler(None), Ok(ProfilingStrategy::None)));
        assert!(matches!(profiler(Some(OsStr::new(""))), Ok(ProfilingStrategy::None)));
        assert!(matches!(profiler(Some(OsStr::new("perfmap"))), Ok(ProfilingStrategy::PerfMap)));
        for wrong in ["PerfMap", "jitdump", "1", " perfmap"] {
            let error = profiler(Some(OsStr::new(wrong))).err().unwrap_or_default();
            assert!(error.contains(&format!("`{wrong}`")) && error.contains("`perfmap`"), "{wrong}: {error}");
        }
    }
}
