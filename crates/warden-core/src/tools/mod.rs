//! The tool-call judge: allow, ask or deny, with approval scopes.
//!
//! Every tool call is judged in this order, and the first step that objects
//! decides:
//!
//! 1. **Saved deny** ([`memory`]): a person denied this exact call before
//!    (same tool, same normalized arguments, same policy version).
//! 2. **Input validation** ([`validate`]) and **budget** ([`budget`]): these
//!    always run, so a remembered approval never lets through malformed
//!    input or an agent past its budget. The call is counted here.
//! 3. **Saved allow** ([`memory`]): a person allowed this exact call before,
//!    in a scope that still holds (`always`, this `session`, or `once`,
//!    which is used up).
//! 4. **Path guard** ([`path_guard`]): protected paths and workspace
//!    confinement for the paths the call names, including the host's
//!    `derivedPaths`.
//! 5. **Exec gate** ([`exec`]): for shell tools, the command is parsed and
//!    every program it would run is checked by rule family; the paths the
//!    command reads and writes go through the path guard's checks here.
//! 6. **Fetch destinations** ([`fetch`]): with `tools.fetch`, the hosts of a
//!    fetch tool's URLs are checked against `denyHosts` and `allowHosts`
//!    (hosts the flow step knows as named or trusted count as allowed); the
//!    `unlisted` decision replaces the `askKinds` ask of fetch tools, and a
//!    fetch whose hosts are all allowed is not classed by the flow step.
//! 7. **Flow** ([`crate::flow`], when the `flow` section is present): the
//!    destinations of message, share, invite and payment tools, the links in
//!    their bodies and the hosts of fetch tools are classed by where they
//!    came from (named by the person, consented, trusted, approved, seen only
//!    in a tool's result, unknown); `flow.untrusted-destination`,
//!    `flow.unknown-destination` and `flow.foreign-link` decide as the
//!    section says. In `flow.mode: observe` the finding is reported on the
//!    final allow instead.
//! 8. **Ask rules**: tools of a kind in `askKinds` (by default `fetch`) or
//!    named in `askTools` are asked; a fetch whose every host the person
//!    named or `flow.trustedHosts` lists is not asked for its kind.
//! 9. **Allow**.
//!
//! Payment limits ([`payment`], `tools.payment`) run in step 2 with the
//! budgets, so a remembered approval never lets a payment past them.
//!
//! Within a step, the most severe finding decides (deny over ask, then the
//! higher risk) and the others are listed as signals. Every rule's decision,
//! risk and approval scope is configurable (`tools.rules`); `allow` turns a
//! rule off. An `ask` verdict carries the broadest scope an approval may be
//! remembered for and the key to answer it with; the host passes the
//! person's answer to `record-approval`.
//!
//! Paths are normalized textually. A symbolic link cannot be resolved inside
//! the sandbox, which has no filesystem, so a link to `~/.ssh` under another
//! name is not recognized from the name alone; hosts that resolve paths pass
//! the resolved ones as `derivedPaths`, and the judge checks those too.
//!
//! The judge is on by default with the defaults of [`config::ToolsConfig`];
//! `tools.enabled: false` turns it off, and `tools.mode: observe` decides,
//! logs and counts but answers `allow` with the decision in `observed`.
//!
//! Failure mode: **fail-closed**. When decision memory or a budget cannot be
//! read or written, the call is denied with `tools.storage-unavailable`.

pub mod budget;
pub mod compiled;
pub mod config;
pub mod devices;
pub mod exec;
#[cfg(test)]
mod exec_interpreter_tests;
#[cfg(test)]
mod exec_tests;
pub mod fetch;
#[cfg(test)]
mod fetch_tests;
pub mod infrastructure;
#[cfg(test)]
mod infrastructure_tests;
#[cfg(test)]
mod lazy_analysis_tests;
pub mod memory;
pub mod name_index;
pub mod path_guard;
pub mod payment;
#[cfg(test)]
mod payment_tests;
pub mod permissions;
#[cfg(test)]
mod precision_table;
pub mod privileges;
pub mod protected;
pub mod rules;
pub mod self_guard;
#[cfg(test)]
mod table;
pub mod taxonomy;
#[cfg(test)]
mod tests;
pub mod validate;

pub use config::ToolsConfig;

use crate::host::Prepared;
use crate::model::{Approval, Decision, PolicyError, Risk, Signal, ToolCall, Usage, Verdict};
use crate::ports::{Ports, StorageError};
use crate::prelude::*;
use crate::shell;
use config::RuleDecision;
use path_guard::Places;
use serde_json::Value;
use taxonomy::{Kind, ToolEntry};

/// Approval keys of tool calls start with this.
pub const APPROVAL_KEY_PREFIX: &str = "t2:";
/// Approval keys of an earlier, unauthenticated format, refused with a reason.
pub const OLD_APPROVAL_KEY_PREFIX: &str = "t1:";

/// One objection of a check: the rule and why, quoting what it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub reason: String,
}

/// Judges a tool call whose arguments are the JSON object `args`. `version`
/// is the digest of this section; remembered answers are bound to it.
/// `entry` is the call's tool as [`ToolsConfig::classify`] finds it, and
/// `command` its command ([`command_of`]) parsed, when the caller parsed it
/// already (else it is parsed here).
#[expect(clippy::too_many_arguments, reason = "each argument is a different part of the instance")]
pub fn judge(
    config: &ToolsConfig,
    version: &str,
    host: &Prepared,
    ports: &Ports<'_>,
    index: &memory::Index,
    flow: &crate::flow::Flow<'_>,
    context: &crate::session::Pre,
    profile: &crate::profile::ProfileConfig,
    call: &ToolCall,
    entry: Option<&ToolEntry>,
    args: &Value,
    command: Option<&exec::Parsed<'_>>,
) -> Verdict {
    if !config.enabled {
        return Verdict::not_configured("tool-call");
    }
    let mut counted = None;
    let verdict =
        evaluate(config, version, host, ports, index, flow, context, profile, call, entry, args, command, &mut counted);
    // A payment counted in step 2 that a later step denied did not happen.
    if let Some(c) = counted
        && verdict.decision == Decision::Deny
        && config.mode != crate::model::Mode::Observe
        && let Err(e) = payment::uncount(ports.storage, &c)
    {
        return storage_failure(&e).under(config.mode);
    }
    verdict.under(config.mode)
}

pub(crate) fn storage_failure(e: &StorageError) -> Verdict {
    Verdict::deny(
        rules::STORAGE_UNAVAILABLE,
        format!("Decision memory or budgets could not be read or written ({e}), so the call is refused to be safe."),
        Risk::High,
    )
}

/// The places a call works in: its working directory and workspace.
fn places<'c>(
    config: &'c ToolsConfig,
    host: &'c Prepared,
    call: &ToolCall,
    entry: Option<&ToolEntry>,
    args: &Value,
) -> Places<'c> {
    let home = &config.compiled.home;
    let call_cwd = call.cwd.as_deref().filter(|c| !c.is_empty());
    let workspace = config.workspace.as_deref().or(call_cwd).map(|w| home.normalize(w, None));
    let base = match (call_cwd, &workspace) {
        // The workspace is the call's own working directory, which names a
        // place without one: normalized again against itself, it is itself.
        (Some(c), Some(w)) if config.workspace.is_none() && crate::paths::is_rooted(c) => Some(w.clone()),
        (Some(c), _) => Some(home.normalize(c, workspace.as_deref())),
        (None, _) => workspace.clone(),
    };
    let field_cwd = entry
        .into_iter()
        .flat_map(|e| &e.cwd_fields)
        .find_map(|f| args.get(f.as_str()).and_then(Value::as_str))
        .filter(|c| !c.is_empty())
        .map(|c| home.normalize(c, base.as_deref()));
    Places {
        cwd: field_cwd.or(base),
        workspace,
        home,
        protected: &config.compiled.protected,
        writable: &config.compiled.writable,
        host,
        dots: crate::paths::Dots::Hidden,
    }
}

/// The command the exec gate judges: the first of the tool's command fields
/// that holds a string, for a shell tool.
pub fn command_of<'a>(entry: Option<&ToolEntry>, args: &'a Value) -> Option<&'a str> {
    let entry = entry.filter(|e| e.kind == Kind::Shell)?;
    entry.command_fields.iter().find_map(|f| args.get(f.as_str()).and_then(Value::as_str))
}

/// The arguments as fingerprinted: fields that change nothing removed,
/// commands printed canonically, paths normalized.
/// `command` is the command the exec gate judges, already parsed.
fn normalized_args(
    entry: Option<&ToolEntry>,
    args: &Value,
    places: &Places<'_>,
    command: Option<&exec::Parsed<'_>>,
) -> Value {
    let Value::Object(map) = args else { return args.clone() };
    let mut map = map.clone();
    for f in memory::IGNORED_FIELDS {
        map.remove(*f);
    }
    if let Some(e) = entry {
        for f in &e.command_fields {
            let Some(Value::String(c)) = map.get(f.as_str()) else { continue };
            let parsed = match command {
                Some((text, parsed)) if *text == c.as_str() => parsed.as_ref().ok().map(alloc::borrow::Cow::Borrowed),
                _ => shell::parse(c).ok().map(alloc::borrow::Cow::Owned),
            };
            if let Some(script) = parsed {
                let printed = shell::print::script(&script);
                map.insert(f.clone(), Value::String(printed));
            }
        }
        for f in e.path_fields.iter().chain(&e.cwd_fields) {
            match map.get_mut(f.as_str()) {
                Some(Value::String(p)) => *p = places.normalize(p),
                Some(Value::Array(items)) => {
                    for item in items {
                        if let Value::String(p) = item {
                            *p = places.normalize(p);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Value::Object(map)
}

/// What an approval key of this call binds besides its scope. The
/// fingerprint is computed the first time something needs it.
struct Asked<'a> {
    version: &'a str,
    secret: &'a [u8],
    tool: &'a str,
    fp: core::cell::OnceCell<String>,
    entry: Option<&'a ToolEntry>,
    args: &'a Value,
    places: &'a Places<'a>,
    command: Option<&'a exec::Parsed<'a>>,
    session: Option<&'a str>,
    call: Option<&'a str>,
}

impl Asked<'_> {
    fn fp(&self) -> &str {
        self.fp.get_or_init(|| {
            memory::fingerprint(self.tool, &normalized_args(self.entry, self.args, self.places, self.command))
        })
    }
}

/// Turns findings into a verdict: the most severe finding that is not
/// turned off decides; the rest become signals.
fn decide(
    config: &ToolsConfig,
    asked: &Asked<'_>,
    findings: Vec<Finding>,
    signals: &mut Vec<Signal>,
) -> Option<Verdict> {
    let mut chosen: Option<(Finding, config::RuleSetting)> = None;
    let mut others = Vec::new();
    // The same finding reached twice (an alias judged where it is defined and
    // where it is used) is one finding.
    let mut unique: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings {
        if !unique.iter().any(|u| u.rule == f.rule && u.reason == f.reason) {
            unique.push(f);
        }
    }
    for f in unique {
        let setting = config.rule(f.rule);
        if setting.decision == RuleDecision::Allow {
            signals.push(Signal::new(f.rule, f.reason));
            continue;
        }
        let better = chosen.as_ref().is_none_or(|(_, best)| {
            (setting.decision.decision(), setting.risk.risk()) > (best.decision.decision(), best.risk.risk())
        });
        if better {
            if let Some((old, _)) = chosen.replace((f, setting)) {
                others.push(old);
            }
        } else {
            others.push(f);
        }
    }
    let (finding, setting) = chosen?;
    let mut verdict = Verdict::new(setting.decision.decision(), finding.rule, finding.reason, setting.risk.risk());
    if verdict.decision == Decision::Ask {
        let scope = setting.scope.scope();
        verdict.scope = Some(scope);
        verdict.approval_key = Some(memory::approval_key(
            asked.secret,
            scope,
            asked.version,
            asked.tool,
            asked.fp(),
            asked.session,
            asked.call,
        ));
    }
    for o in others {
        verdict.signals.push(Signal::new(o.rule, o.reason));
    }
    verdict.signals.append(signals);
    Some(verdict)
}

#[expect(clippy::too_many_arguments, reason = "each argument is a different part of the instance")]
fn evaluate(
    config: &ToolsConfig,
    version: &str,
    host: &Prepared,
    ports: &Ports<'_>,
    index: &memory::Index,
    flow: &crate::flow::Flow<'_>,
    context: &crate::session::Pre,
    profile: &crate::profile::ProfileConfig,
    call: &ToolCall,
    entry: Option<&ToolEntry>,
    args: &Value,
    command: Option<&exec::Parsed<'_>>,
    counted: &mut Option<payment::Counted>,
) -> Verdict {
    let mut places = places(config, host, call, entry, args);
    // Parsed once, for the fingerprint, the exec gate and the risk section.
    let parsed_here;
    let command = match command {
        Some((text, _)) if Some(*text) == command_of(entry, args) => command,
        _ => {
            parsed_here = command_of(entry, args).map(|c| (c, shell::parse(c)));
            parsed_here.as_ref()
        }
    };
    if let Some((text, _)) = command {
        places.dots = crate::paths::Dots::of_command(text);
    }
    let session = call.session_id.as_deref().filter(|s| !s.is_empty());
    let call_id = call.call_id.as_deref().filter(|s| !s.is_empty());
    let asked = Asked {
        version,
        secret: &host.secret,
        tool: &call.tool_name,
        fp: core::cell::OnceCell::new(),
        entry,
        args,
        places: &places,
        command,
        session,
        call: call_id,
    };

    // 1. Saved deny. The tool's marker says whether anything is remembered.
    let saved = match index.may_remember(ports.storage, version, &call.tool_name) {
        Ok(false) => None,
        Ok(true) => match memory::lookup(ports.storage, version, asked.fp(), session, call_id) {
            Ok(saved) => saved,
            Err(e) => return storage_failure(&e),
        },
        Err(e) => return storage_failure(&e),
    };
    if let Some(s) = saved.as_ref().filter(|s| !s.allow) {
        if let Err(e) = memory::consume(ports.storage, s) {
            return storage_failure(&e);
        }
        let mut v = Verdict::deny(
            rules::MEMORY_DENY,
            format!("A person denied this exact call before (scope `{}`).", s.scope.as_str()),
            Risk::High,
        );
        v.scope = Some(s.scope);
        return v;
    }

    // 2. The person asked to stop: before remembered answers, so an earlier
    // "always allow" does not pass it. Then input validation and budget.
    let mut signals = context.signals.clone();
    if let Some(f) = &context.stop
        && let Some(v) = decide(config, &asked, vec![f.clone()], &mut signals)
    {
        return v;
    }
    let schema = config.schema(&call.tool_name);
    if let Some((rule, reason)) = validate::check(schema, entry, &call.tool_name, args)
        && let Some(v) = decide(config, &asked, vec![Finding { rule, reason }], &mut signals)
    {
        return v;
    }
    if let Some(b) = &config.budget {
        let agent = call.identity.agent_id.as_deref().filter(|a| !a.is_empty()).unwrap_or(budget::DEFAULT_AGENT);
        match budget::check(b, ports.storage, agent, call.now_ms, config.mode == crate::model::Mode::Observe) {
            Ok(outcome) => {
                signals.extend(outcome.signals);
                if let Some((rule, reason)) = outcome.exceeded
                    && let Some(v) = decide(config, &asked, vec![Finding { rule, reason }], &mut signals)
                {
                    return v;
                }
            }
            Err(e) => return storage_failure(&e),
        }
    }
    if let Some(p) = &config.payment
        && let Some(e) = entry.filter(|e| e.kind == Kind::Payment)
    {
        let limit = config.rule(rules::PAYMENT_LIMIT).decision;
        let count_over = config.mode == crate::model::Mode::Observe || limit != RuleDecision::Deny;
        match payment::check(p, ports.storage, &host.secret, e, args, session, call_id, count_over) {
            Ok(outcome) => {
                *counted = outcome.counted;
                if let Some(f) = outcome.finding
                    && let Some(v) = decide(config, &asked, vec![f], &mut signals)
                {
                    if v.decision == Decision::Deny
                        && config.mode != crate::model::Mode::Observe
                        && let Some(c) = counted.take()
                        && let Err(e) = payment::uncount(ports.storage, &c)
                    {
                        return storage_failure(&e);
                    }
                    return v;
                }
            }
            Err(e) => return storage_failure(&e),
        }
    }

    // 3. Saved allow.
    if let Some(s) = saved.filter(|s| s.allow) {
        match memory::consume(ports.storage, &s) {
            Ok(true) => {
                crate::profile::learn(profile, ports.storage, &host.mac, call, entry, args, &mut signals);
                let mut v = Verdict::allow(
                    rules::MEMORY_ALLOW,
                    format!("A person allowed this exact call before (scope `{}`).", s.scope.as_str()),
                );
                v.scope = Some(s.scope);
                v.signals = signals;
                return v;
            }
            // Another call used this once-only answer first.
            Ok(false) => {}
            Err(e) => return storage_failure(&e),
        }
    }

    // 4. Path guard.
    let findings = path_guard::check(&places, entry, &call.tool_name, args, &call.derived_paths);
    if let Some(v) = decide(config, &asked, findings, &mut signals) {
        return v;
    }

    // 5. Exec gate.
    if let Some((_, parsed)) = command {
        let findings = exec::check_parsed(&places, parsed, places.cwd.as_deref());
        if let Some(v) = decide(config, &asked, findings, &mut signals) {
            return v;
        }
    }

    // 6. Fetch destinations: with `tools.fetch`, a fetch is judged by its
    // hosts (those the flow step knows as named or trusted count as listed)
    // before the flow step, so a denied host is denied and a listed one is
    // not asked.
    let step = match crate::flow::decide::tool_step(flow, ports, call, entry, args) {
        Ok(step) => step,
        Err(e) => return storage_failure(&e),
    };
    let kind = entry.map_or(Kind::Other, |e| e.kind);
    let fetch_judged = config.fetch.is_some() && kind == Kind::Fetch;
    let mut fetch_listed = false;
    if let (Some(f), Some(e)) = (&config.fetch, entry.filter(|_| fetch_judged)) {
        let known = step.fetch_known;
        let named: &dyn Fn(&str) -> bool = &|_| known;
        match fetch::check(f, &e.url_fields, args, named) {
            fetch::Outcome::Finding(finding) => {
                if let Some(v) = decide(config, &asked, vec![finding], &mut signals) {
                    return v;
                }
            }
            fetch::Outcome::Allowed => fetch_listed = true,
            fetch::Outcome::Unlisted => {}
        }
    }

    // 7. Flow.
    let mut flow_observed = None;
    if let Some(f) = step.flagged.filter(|_| !fetch_listed) {
        let key = |scope| {
            memory::approval_key(asked.secret, scope, asked.version, asked.tool, asked.fp(), asked.session, asked.call)
        };
        if f.decision == Decision::Allow {
            signals.extend(f.signals);
        } else {
            let mut v = match crate::flow::decide::verdict(flow, ports, call, f, key) {
                Ok(v) => v,
                Err(e) => return storage_failure(&e),
            };
            if flow.config.mode == crate::model::Mode::Enforce {
                v.signals.append(&mut signals);
                return v;
            }
            signals.push(Signal::new(v.rule.clone(), v.reason.clone()));
            flow_observed = Some(v);
        }
    }

    // 8. Ask rules, with the turn context's asks.
    let tool = crate::config::reader::Shortened(&call.tool_name);
    let mut findings = context.asks.clone();
    if config.ask_kinds.contains(&kind) && !fetch_judged && !step.fetch_known {
        findings.push(Finding {
            rule: rules::ASK_KIND,
            reason: format!("`{tool}` is a {} tool, which a person approves before it runs.", kind.as_str()),
        });
    }
    if config.ask_tools.iter().any(|g| taxonomy::name_matches(g, &call.tool_name)) {
        findings.push(Finding {
            rule: rules::ASK_TOOL,
            reason: format!("`{tool}` is listed in `askTools`, so a person approves it before it runs."),
        });
    }
    if let Some(v) = decide(config, &asked, findings, &mut signals) {
        return v;
    }

    // 9. Agent profile: a call outside the agent's baseline.
    if let Some(v) = crate::profile::judge_step(profile, ports, &host.mac, call, entry, args, &mut signals, |f| {
        decide(config, &asked, f, &mut Vec::new())
    }) {
        return v;
    }

    // 10. Allow, or what the flow step would have decided in observe mode.
    if let Some(mut v) = flow_observed {
        signals.retain(|s| s.name != v.rule);
        v.signals.append(&mut signals);
        return v.under(crate::model::Mode::Observe);
    }
    let mut v = Verdict::allow(rules::ALLOW, "Nothing in the tool-call policy objects to this call.");
    v.signals = signals;
    v
}

/// Records a person's answer to an `ask` of this judge.
pub fn record_approval(
    config: &ToolsConfig,
    version: &str,
    host: &Prepared,
    ports: &Ports<'_>,
    index: &memory::Index,
    flow: &crate::flow::Flow<'_>,
    approval: &Approval,
) -> Result<(), PolicyError> {
    if !config.enabled {
        return Err(PolicyError::InvalidInput("key: the tool-call judge is off, so it asked nothing".into()));
    }
    memory::record(ports.storage, index, &host.secret, version, approval)?;
    // An approved flow ask also makes its destinations approved.
    crate::flow::decide::approve(flow, ports, approval)
}

/// Records model usage for budgets.
pub fn record_usage(config: &ToolsConfig, ports: &Ports<'_>, usage: &Usage) -> Result<(), PolicyError> {
    if !config.enabled {
        return Ok(());
    }
    budget::record(config.budget.as_ref(), ports.storage, usage)
}

/// Forgets the once-only answers of a session that settled.
pub fn settle_session(config: &ToolsConfig, ports: &Ports<'_>, session_id: &str) -> Result<(), PolicyError> {
    if !config.enabled {
        return Ok(());
    }
    memory::clear_session(ports.storage, session_id)
}
