//! Agent profiles: what each agent usually does, learned from its own calls.
//!
//! Per agent (the identity's agent id, none = `default`) the profile keeps the
//! tools it used, their kinds, the hosts named in URL arguments and the
//! directory prefixes of paths it touched, each as a keyed hash with the time
//! it was last seen, and the calls of the current hour. Entries older than
//! `windowDays` are forgotten. Until the agent has made `learningCalls` calls
//! over at least `learningDays` days it is learning: nothing is reported.
//! After that a call outside the profile is a signal (`profile.new-tool`,
//! `profile.new-host`, `profile.new-path`, `profile.rate`), and with
//! `enforce: true` an ask. Every call is recorded, so a call once approved
//! joins the profile.
//!
//! Failure mode: a profile that cannot be read or written adds the signal
//! `profile.unavailable` and decides nothing (fail-open): the profile is a
//! baseline, not a boundary, and the judge's own rules still decide.

pub mod config;
#[cfg(test)]
mod tests;

pub use config::ProfileConfig;

use crate::digest::MacKey;
use crate::model::{Signal, ToolCall};
use crate::ports::Storage;
use crate::prelude::*;
use crate::tools::Finding;
use crate::tools::taxonomy::{Kind, ToolEntry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Storage namespace of profiles.
pub const NAMESPACE: &str = "profile";
/// The agent a call without an agent id counts for.
pub const DEFAULT_AGENT: &str = "default";
/// Most directory levels of a path prefix kept (`/home/a/src` of `/home/a/src/x/y.rs`).
pub const PATH_PREFIX_DEPTH: usize = 3;
/// Most hosts taken from one call's arguments.
pub const MAX_HOSTS_PER_CALL: usize = 16;
/// Most paths taken from one call's arguments.
pub const MAX_PATHS_PER_CALL: usize = 16;
/// Profiles removed per storage listing while resetting all.
pub const MAX_RESET_PAGE: u32 = 256;
/// Most profiles `show` lists.
pub const MAX_SHOWN: usize = 1024;
/// One hour, in milliseconds: the rate window.
pub const HOUR_MS: u64 = 60 * 60 * 1000;
/// One day, in milliseconds.
pub const DAY_MS: u64 = 24 * HOUR_MS;

/// Rules and signals of the profile check.
pub mod rules {
    /// A tool the agent has not used in the window.
    pub const NEW_TOOL: &str = "profile.new-tool";
    /// A host the agent has not reached in the window.
    pub const NEW_HOST: &str = "profile.new-host";
    /// A path prefix the agent has not touched in the window.
    pub const NEW_PATH: &str = "profile.new-path";
    /// More calls this hour than the agent's busiest learned hour allows.
    pub const RATE: &str = "profile.rate";
    /// Signal: the profile could not be read or written.
    pub const UNAVAILABLE: &str = "profile.unavailable";
}

/// One remembered item: its keyed hash and when it was last seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    pub h: String,
    pub at: u64,
}

/// One agent's stored profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// The agent's name, so the operator can list profiles.
    #[serde(default)]
    pub agent: String,
    /// Calls recorded.
    pub calls: u64,
    /// When the first call was recorded.
    pub since: u64,
    pub tools: Vec<Seen>,
    pub kinds: Vec<String>,
    pub hosts: Vec<Seen>,
    pub paths: Vec<Seen>,
    /// Start of the current hour and its calls.
    pub hour: u64,
    pub hour_calls: u64,
    /// The busiest complete hour learned.
    pub peak: u64,
}

/// What `show` reports of a profile: counts only, never the hosts or paths
/// (they are hashed; even in clear they could be private).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub agent: String,
    pub calls: u64,
    pub tools: u32,
    pub kinds: Vec<String>,
    pub hosts: u32,
    pub paths: u32,
    pub peak_per_hour: u64,
    pub learning: bool,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The agent a call counts for: its trimmed agent id, or [`DEFAULT_AGENT`].
pub fn agent_name(agent: Option<&str>) -> &str {
    agent.map(str::trim).filter(|a| !a.is_empty()).unwrap_or(DEFAULT_AGENT)
}

/// The storage key of an agent's profile: a keyed hash of its name, so the
/// database does not say which agents exist to someone without the secret.
pub fn agent_key(secret: &MacKey, agent: Option<&str>) -> String {
    keyed(secret, "agent", agent_name(agent))
}

fn keyed(secret: &MacKey, what: &str, value: &str) -> String {
    let mac = secret.mac(&[b"profile", what.as_bytes(), value.as_bytes()]);
    crate::digest::hex(mac.get(..12).unwrap_or(&mac))
}

/// The directory prefix of a path, at most [`PATH_PREFIX_DEPTH`] levels.
pub fn path_prefix(path: &str) -> String {
    let normalized = crate::paths::normalize(path, None, None);
    let absolute = normalized.starts_with('/');
    let parts: Vec<&str> = normalized.split('/').filter(|p| !p.is_empty()).collect();
    let dirs = parts.len().saturating_sub(1).min(PATH_PREFIX_DEPTH);
    let joined = parts.get(..dirs).unwrap_or(&[]).join("/");
    if absolute { format!("/{joined}") } else { joined }
}

/// The hosts named by the string arguments (URLs, `www.` and bare domains,
/// inside commands too), canonical as the flow check writes them, without
/// repeats, at most [`MAX_HOSTS_PER_CALL`].
pub fn hosts_of(args: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stack = vec![args];
    while let Some(v) = stack.pop() {
        if out.len() >= MAX_HOSTS_PER_CALL {
            break;
        }
        match v {
            Value::String(s) => {
                for h in crate::flow::extract::link_hosts(s, MAX_HOSTS_PER_CALL) {
                    if !out.contains(&h) && out.len() < MAX_HOSTS_PER_CALL {
                        out.push(h);
                    }
                }
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            Value::Object(map) => stack.extend(map.values().rev()),
            _ => {}
        }
    }
    out
}

fn paths_of(entry: Option<&ToolEntry>, args: &Value, derived: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: &str| {
        let prefix = path_prefix(p);
        if !p.trim().is_empty() && !out.contains(&prefix) && out.len() < MAX_PATHS_PER_CALL {
            out.push(prefix);
        }
    };
    for f in entry.into_iter().flat_map(|e| &e.path_fields) {
        match args.get(f.as_str()) {
            Some(Value::String(p)) => add(p),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
    }
    derived.iter().for_each(|p| add(p));
    out
}

fn touch(list: &mut Vec<Seen>, h: &str, now: u64, max: usize) -> bool {
    if let Some(s) = list.iter_mut().find(|s| s.h == h) {
        s.at = s.at.max(now);
        return false;
    }
    if list.len() >= max {
        // The least recently seen goes first.
        if let Some(i) = list.iter().enumerate().min_by_key(|(_, s)| s.at).map(|(i, _)| i) {
            list.remove(i);
        }
    }
    list.push(Seen { h: h.to_string(), at: now });
    true
}

impl Profile {
    /// Whether the agent is still learning at `now`.
    pub fn learning(&self, config: &ProfileConfig, now: u64) -> bool {
        self.calls < config.learning_calls
            || now.saturating_sub(self.since) < config.learning_days.saturating_mul(DAY_MS)
    }

    fn forget(&mut self, config: &ProfileConfig, now: u64) {
        let floor = now.saturating_sub(config.window_days.saturating_mul(DAY_MS));
        for list in [&mut self.tools, &mut self.hosts, &mut self.paths] {
            list.retain(|s| s.at >= floor);
        }
    }

    /// Summary for the operator.
    pub fn summary(&self, agent: &str, config: &ProfileConfig, now: u64) -> Summary {
        Summary {
            agent: agent.to_string(),
            calls: self.calls,
            tools: count(self.tools.len()),
            kinds: self.kinds.clone(),
            hosts: count(self.hosts.len()),
            paths: count(self.paths.len()),
            peak_per_hour: self.peak,
            learning: self.learning(config, now),
        }
    }
}

/// What one call is, as far as the profile cares.
pub struct Observed {
    pub tool: String,
    pub kind: Kind,
    pub hosts: Vec<String>,
    pub paths: Vec<String>,
}

impl Observed {
    pub fn of(secret: &MacKey, call: &ToolCall, entry: Option<&ToolEntry>, args: &Value) -> Observed {
        Observed {
            tool: keyed(secret, "tool", &call.tool_name),
            kind: entry.map_or(Kind::Other, |e| e.kind),
            hosts: hosts_of(args).iter().map(|h| keyed(secret, "host", h)).collect(),
            paths: paths_of(entry, args, &call.derived_paths).iter().map(|p| keyed(secret, "path", p)).collect(),
        }
    }
}

/// The findings of a call against a profile, before it is recorded.
pub fn findings(profile: &Profile, config: &ProfileConfig, call: &ToolCall, seen: &Observed) -> Vec<Finding> {
    let now = call.now_ms;
    if profile.learning(config, now) {
        return Vec::new();
    }
    let floor = now.saturating_sub(config.window_days.saturating_mul(DAY_MS));
    let known = |list: &[Seen], h: &str| list.iter().any(|s| s.h == h && s.at >= floor);
    let tool = crate::config::reader::Shortened(&call.tool_name);
    let mut out = Vec::new();
    if !known(&profile.tools, &seen.tool) {
        out.push(Finding {
            rule: rules::NEW_TOOL,
            reason: format!("`{tool}` is a tool this agent has not used in the last {} days.", config.window_days),
        });
    }
    let new_hosts = seen.hosts.iter().filter(|h| !known(&profile.hosts, h)).count();
    if new_hosts > 0 {
        let known_hosts = profile.hosts.len();
        out.push(Finding {
            rule: rules::NEW_HOST,
            reason: format!(
                "`{tool}` reaches {new_hosts} host(s) this agent has not reached in the last {} days (it knows {known_hosts}).",
                config.window_days
            ),
        });
    }
    let new_paths = seen.paths.iter().filter(|p| !known(&profile.paths, p)).count();
    if new_paths > 0 {
        out.push(Finding {
            rule: rules::NEW_PATH,
            reason: format!(
                "`{tool}` touches {new_paths} folder(s) this agent has not touched in the last {} days.",
                config.window_days
            ),
        });
    }
    let this_hour = if now.saturating_sub(profile.hour) < HOUR_MS { profile.hour_calls } else { 0 };
    let allowed = profile.peak.max(config.min_rate_per_hour).saturating_mul(config.rate_factor);
    if this_hour.saturating_add(1) > allowed {
        out.push(Finding {
            rule: rules::RATE,
            reason: format!(
                "this agent made {} calls this hour; its busiest learned hour had {}.",
                this_hour.saturating_add(1),
                profile.peak
            ),
        });
    }
    // A new host says the most about a deviation, so it decides a tie.
    out.sort_by_key(|f| f.rule != rules::NEW_HOST);
    out
}

/// Records a call into a profile.
pub fn record(profile: &mut Profile, config: &ProfileConfig, now: u64, seen: &Observed) {
    if profile.calls == 0 {
        profile.since = now;
    }
    profile.calls = profile.calls.saturating_add(1);
    profile.forget(config, now);
    touch(&mut profile.tools, &seen.tool, now, config.max_tools());
    let kind = seen.kind.as_str().to_string();
    if !profile.kinds.contains(&kind) {
        profile.kinds.push(kind);
        profile.kinds.sort();
    }
    for h in &seen.hosts {
        touch(&mut profile.hosts, h, now, config.max_hosts());
    }
    for p in &seen.paths {
        touch(&mut profile.paths, p, now, config.max_paths());
    }
    if now.saturating_sub(profile.hour) >= HOUR_MS {
        if profile.learning(config, now) || profile.hour_calls <= profile.peak.max(1).saturating_mul(config.rate_factor)
        {
            profile.peak = profile.peak.max(profile.hour_calls);
        }
        profile.hour = now - now % HOUR_MS;
        profile.hour_calls = 0;
    }
    profile.hour_calls = profile.hour_calls.saturating_add(1);
}

/// The profile step of the tool-call judge: reads the agent's profile (one
/// read), lets `decide` turn the findings into a verdict when `enforce` is
/// on, and records the call (one conditional write) unless the profile asks
/// for it: a call a person has not yet allowed does not join the profile, so
/// retrying it asks again. Failures become the `profile.unavailable` signal.
#[expect(clippy::too_many_arguments, reason = "each argument is a different part of the call")]
pub fn judge_step(
    config: &ProfileConfig,
    ports: &crate::ports::Ports<'_>,
    secret: &MacKey,
    call: &ToolCall,
    entry: Option<&ToolEntry>,
    args: &Value,
    signals: &mut Vec<Signal>,
    decide: impl FnOnce(Vec<Finding>) -> Option<crate::model::Verdict>,
) -> Option<crate::model::Verdict> {
    if !config.enabled {
        return None;
    }
    let storage: &dyn Storage = ports.storage;
    let seen = Observed::of(secret, call, entry, args);
    let name = agent_name(call.identity.agent_id.as_deref());
    let key = agent_key(secret, Some(name));
    let read = match crate::store::get_json::<Profile>(storage, NAMESPACE, &key) {
        Ok(read) => read,
        Err(e) => {
            signals.push(unavailable(&e));
            return None;
        }
    };
    let profile = read.as_ref().map(|(p, _)| p.clone()).unwrap_or_default();
    let found = findings(&profile, config, call, &seen);
    let mut verdict = None;
    if config.enforce && !found.is_empty() {
        verdict = decide(found.clone());
    }
    if verdict.is_none() {
        signals.extend(found.into_iter().map(|f| Signal::new(f.rule, f.reason)));
    }
    if config.mode == crate::model::Mode::Observe
        && let Some(v) = &verdict
    {
        signals.push(Signal::new(v.rule.clone(), v.reason.clone()));
    }
    let verdict = verdict.map(|v| v.under(config.mode));
    if verdict.as_ref().is_none_or(|v| v.decision == crate::model::Decision::Allow) {
        write(config, storage, call.now_ms, name, &key, read, &seen, signals);
    }
    verdict.map(|mut v| {
        v.signals.append(signals);
        v
    })
}

/// Records a call that a person's remembered answer allowed before the
/// profile step was reached, so an approved call joins the profile.
pub fn learn(
    config: &ProfileConfig,
    storage: &dyn Storage,
    secret: &MacKey,
    call: &ToolCall,
    entry: Option<&ToolEntry>,
    args: &Value,
    signals: &mut Vec<Signal>,
) {
    if !config.enabled {
        return;
    }
    let seen = Observed::of(secret, call, entry, args);
    let name = agent_name(call.identity.agent_id.as_deref());
    let key = agent_key(secret, Some(name));
    match crate::store::get_json::<Profile>(storage, NAMESPACE, &key) {
        Ok(read) => write(config, storage, call.now_ms, name, &key, read, &seen, signals),
        Err(e) => signals.push(unavailable(&e)),
    }
}

/// Records `seen` into the profile `read` and writes it. Calls of one agent
/// in several sessions write the same record: when another wrote it since
/// it was read, the call is recorded into the newer profile (the store's
/// bounded retry).
#[expect(clippy::too_many_arguments, reason = "each argument is a different part of the write")]
fn write(
    config: &ProfileConfig,
    storage: &dyn Storage,
    now: u64,
    name: &str,
    key: &str,
    read: Option<(Profile, u64)>,
    seen: &Observed,
    signals: &mut Vec<Signal>,
) {
    let into = |p: Option<Profile>| {
        let mut profile = p.unwrap_or_default();
        profile.agent = name.to_string();
        record(&mut profile, config, now, seen);
        Some(profile)
    };
    let when = crate::store::unchanged(&read);
    let written = match into(read.map(|(p, _)| p)) {
        Some(p) => crate::store::put_json(storage, NAMESPACE, key, &p, when).map(|_| ()),
        None => Ok(()),
    };
    let written = match written {
        Err(crate::ports::StorageError::Conflict) => {
            crate::store::update_json::<Profile>(storage, NAMESPACE, key, into).map(|_| ())
        }
        other => other,
    };
    if let Err(e) = written {
        signals.push(unavailable(&e));
    }
}

fn unavailable(e: &crate::ports::StorageError) -> Signal {
    Signal::new(
        rules::UNAVAILABLE,
        format!("the agent's profile could not be read or written ({e}); nothing was decided by it"),
    )
}

/// The summary of one agent's profile (empty when it has none), or of every
/// profile when `agent` is `None` (at most [`MAX_SHOWN`], by name).
pub fn show(
    config: &ProfileConfig,
    secret: &MacKey,
    storage: &dyn Storage,
    agent: Option<&str>,
    now: u64,
) -> Result<Vec<Summary>, crate::ports::StorageError> {
    if let Some(a) = agent {
        let name = agent_name(Some(a));
        let found = crate::store::get_json::<Profile>(storage, NAMESPACE, &agent_key(secret, Some(name)))?;
        return Ok(found.map(|(p, _)| p.summary(name, config, now)).into_iter().collect());
    }
    let mut out = Vec::new();
    let limit = u32::try_from(MAX_SHOWN).unwrap_or(u32::MAX);
    for (_, entry) in storage.list(NAMESPACE, "", limit, false)? {
        if let Ok(p) = serde_json::from_slice::<Profile>(&entry.value) {
            let name = if p.agent.is_empty() { DEFAULT_AGENT } else { p.agent.as_str() };
            out.push(p.summary(name, config, now));
        }
    }
    out.sort_by(|a, b| a.agent.cmp(&b.agent));
    out.truncate(MAX_SHOWN);
    Ok(out)
}

/// Removes one agent's profile, or every profile; returns how many were removed.
pub fn reset(secret: &MacKey, storage: &dyn Storage, agent: Option<&str>) -> Result<u32, crate::ports::StorageError> {
    let mut removed = 0u32;
    if let Some(a) = agent {
        if storage.delete(NAMESPACE, &agent_key(secret, Some(a)), crate::ports::Condition::Any)? {
            removed = 1;
        }
        return Ok(removed);
    }
    loop {
        let page = storage.list(NAMESPACE, "", MAX_RESET_PAGE, false)?;
        if page.is_empty() {
            return Ok(removed);
        }
        for (k, _) in page {
            if storage.delete(NAMESPACE, &k, crate::ports::Condition::Any)? {
                removed = removed.saturating_add(1);
            }
        }
    }
}
