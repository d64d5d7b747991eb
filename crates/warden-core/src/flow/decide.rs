//! The flow step of the tool judge and of `check-outbound`: each destination
//! of an outgoing call is classed, and the classes decide by the settings.

use super::Flow;
use super::classify::{Class, Context, Known};
use super::extract::{self, Found, ValueKind};
use super::record::{self, FlowKey, Session};
use super::rules;
use crate::model::{Decision, OutboundMessage, Risk, Scope, Signal, ToolCall, Verdict};
use crate::ports::{Ports, StorageError};
use crate::prelude::*;
use crate::tools::taxonomy::{Kind, ToolEntry};
use serde_json::Value as Json;

/// Most destinations one call is classed by; a call naming more asks with
/// `flow.unknown-destination` (what is past the bound is not known).
pub const MAX_DESTINATIONS_PER_CALL: usize = 64;
/// Most links of one call's bodies that are classed; more ask with `flow.foreign-link`.
pub const MAX_LINKS_PER_CALL: usize = 64;
/// Longest destination classed, in characters: a longer one is unknown.
pub const MAX_VALUE_CHARS: usize = extract::MAX_VALUE_CHARS;
/// Most values found in one recipient string (`Bob <bob@example.com>, ...`).
const MAX_VALUES_PER_FIELD: usize = 16;

/// One destination of a call, canonical.
#[derive(Debug, Clone)]
struct Dest {
    /// The text as the call gave it, trimmed, for the consent ledger.
    raw: String,
    canonical: String,
    kind: Option<ValueKind>,
}

/// Text that holds nothing destination-like: lowercase, spaces collapsed.
fn canonical_name(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn what(kind: Option<ValueKind>) -> &'static str {
    match kind {
        Some(ValueKind::Email) => "an email address",
        Some(ValueKind::Phone) => "a phone number",
        Some(ValueKind::Host) => "a host",
        Some(ValueKind::Iban) => "an IBAN",
        Some(ValueKind::Account) => "an account number",
        Some(ValueKind::Handle) => "a handle",
        None => "a name or ID",
    }
}

/// The canonical values of one destination string.
fn values_of(text: &str, out: &mut Vec<Dest>) {
    let raw = text.trim();
    if raw.is_empty() {
        return;
    }
    // Each part of a list (`Bob <bob@example.com>, carol@example.org`) as
    // one destination; a plain name is a handle.
    let found = extract::destinations(raw, MAX_VALUES_PER_FIELD);
    let single = found.len() == 1;
    for f in found {
        let raw = if single { raw.to_string() } else { f.value.clone() };
        out.push(Dest { raw, canonical: f.value, kind: Some(f.kind) });
    }
}

/// Object fields that hold a destination; `name` counts only when none of them is there.
const ADDRESS_FIELDS: &[&str] = &["email", "address", "id"];

/// The destinations of a recipient argument: a string, a list of strings,
/// an object with `email`, `address` or `id` (else `name`), or a list of those.
fn collect(value: &Json, out: &mut Vec<Dest>, depth: u8) {
    match value {
        Json::String(s) => values_of(s, out),
        Json::Array(items) if depth < 2 => {
            for item in items {
                collect(item, out, depth + 1);
            }
        }
        Json::Object(map) if depth < 3 => {
            let mut any = false;
            for f in ADDRESS_FIELDS {
                if let Some(Json::String(s)) = map.get(*f) {
                    values_of(s, out);
                    any = true;
                }
            }
            if !any && let Some(Json::String(s)) = map.get("name") {
                values_of(s, out);
            }
        }
        Json::Number(n) => values_of(&n.to_string(), out),
        _ => {}
    }
}

fn strings(value: &Json, out: &mut Vec<String>, depth: u8) {
    match value {
        Json::String(s) => out.push(s.clone()),
        Json::Array(items) if depth < 2 => {
            for item in items {
                strings(item, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// What the flow step found to object to.
#[derive(Debug, Clone)]
pub struct Flagged {
    pub decision: Decision,
    pub rule: &'static str,
    pub reason: String,
    pub risk: Risk,
    /// Hashes of the destinations an approval of this ask makes approved.
    pub values: Vec<String>,
    pub signals: Vec<Signal>,
}

/// What the flow step of the tool judge answers.
#[derive(Debug, Default)]
pub struct Step {
    pub flagged: Option<Flagged>,
    /// A fetch whose every host is named by the person, trusted or
    /// approved: the judge's `askKinds` ask is skipped for it.
    pub fetch_known: bool,
    /// The fetch hosts of the call that are known.
    pub known: Known,
}

struct Objection {
    decision: Decision,
    rule: &'static str,
    reason: String,
    risk: Risk,
    /// Order among equal decisions: higher decides.
    weight: u8,
}

fn objection(decision: super::config::ClassDecision, rule: &'static str, reason: String) -> Objection {
    let (risk, weight) = match rule {
        rules::UNTRUSTED_DESTINATION => (Risk::High, 3),
        rules::FOREIGN_LINK => (Risk::Medium, 2),
        _ => (Risk::Medium, 1),
    };
    Objection { decision: decision.decision(), rule, reason, risk, weight }
}

/// The strictest objection decides; allowed ones and the rest are signals.
fn strictest(objections: Vec<Objection>, values: Vec<String>) -> Option<Flagged> {
    let mut signals = Vec::new();
    let mut best: Option<Objection> = None;
    for o in objections {
        if o.decision == Decision::Allow {
            signals.push(Signal::new(o.rule, o.reason));
            continue;
        }
        let better = best.as_ref().is_none_or(|b| (o.decision, o.weight) > (b.decision, b.weight));
        if better {
            if let Some(old) = best.replace(o) {
                signals.push(Signal::new(old.rule, old.reason));
            }
        } else {
            signals.push(Signal::new(o.rule, o.reason));
        }
    }
    if best.is_none() && !signals.is_empty() {
        // Every objection was turned off: they stay signals of the call.
        return Some(Flagged {
            decision: Decision::Allow,
            rule: "",
            reason: String::new(),
            risk: Risk::Low,
            values: Vec::new(),
            signals,
        });
    }
    let best = best?;
    signals.dedup();
    Some(Flagged { decision: best.decision, rule: best.rule, reason: best.reason, risk: best.risk, values, signals })
}

/// The parts of a call the flow step classes.
struct Parts {
    dests: Vec<Dest>,
    too_many: bool,
    hosts: Vec<String>,
    too_many_links: bool,
    fetch_hosts: Vec<String>,
}

fn parts(entry: &ToolEntry, args: &Json) -> Parts {
    let mut dests = Vec::new();
    let mut bodies = Vec::new();
    let mut fetch_hosts = Vec::new();
    if entry.kind.has_recipients() {
        for f in &entry.recipient_fields {
            if let Some(v) = args.get(f.as_str()) {
                collect(v, &mut dests, 0);
            }
        }
        for f in &entry.body_fields {
            if let Some(v) = args.get(f.as_str()) {
                strings(v, &mut bodies, 0);
            }
        }
    }
    if entry.kind == Kind::Fetch {
        let mut urls = Vec::new();
        for f in &entry.url_fields {
            if let Some(v) = args.get(f.as_str()) {
                strings(v, &mut urls, 0);
            }
        }
        for u in urls {
            let host = match extract::destination(&u) {
                Some(Found { kind: ValueKind::Host, value }) => value,
                _ => extract::link_hosts(&u, 1).into_iter().next().unwrap_or_else(|| canonical_name(&u)),
            };
            if !fetch_hosts.contains(&host) {
                fetch_hosts.push(host);
            }
        }
    }
    let mut seen: Vec<String> = Vec::new();
    dests.retain(|d| {
        let new = !seen.contains(&d.canonical);
        seen.push(d.canonical.clone());
        new
    });
    let too_many = dests.len() > MAX_DESTINATIONS_PER_CALL;
    dests.truncate(MAX_DESTINATIONS_PER_CALL);
    let mut hosts: Vec<String> = Vec::new();
    let mut too_many_links = false;
    for b in &bodies {
        for h in extract::link_hosts(b, MAX_LINKS_PER_CALL + 1) {
            if !hosts.contains(&h) {
                hosts.push(h);
            }
        }
        if hosts.len() > MAX_LINKS_PER_CALL {
            too_many_links = true;
            hosts.truncate(MAX_LINKS_PER_CALL);
            break;
        }
    }
    Parts { dests, too_many, hosts, too_many_links, fetch_hosts }
}

/// What classing reads from storage, once per check.
struct Loaded {
    key: FlowKey,
    session: Session,
    always: Vec<String>,
}

fn load(flow: &Flow<'_>, ports: &Ports<'_>, session: Option<&str>, now_ms: u64) -> Result<Loaded, StorageError> {
    let key = flow.keys.get(ports.storage, flow.secret, now_ms)?;
    let session =
        record::read_session(ports.storage, &key, &record::session_digest(session), now_ms, flow.config.ttl_ms())?;
    let always = record::read_always(ports.storage, &key, flow.version)?;
    Ok(Loaded { key, session, always })
}

fn consented(
    flow: &Flow<'_>,
    ports: &Ports<'_>,
    channel: Option<&str>,
    d: &Dest,
    now_ms: u64,
) -> Result<bool, StorageError> {
    let Some(channel) = channel else { return Ok(false) };
    let mut candidates = vec![d.raw.as_str()];
    if d.canonical != d.raw {
        candidates.push(d.canonical.as_str());
    }
    crate::gate::consented(flow.gate, ports.storage, channel, &candidates, now_ms)
}

/// The flow step of the tool judge. Reads storage only for a call with
/// something to class; fails with the storage error, which the judge turns
/// into `tools.storage-unavailable`.
pub fn tool_step(
    flow: &Flow<'_>,
    ports: &Ports<'_>,
    call: &ToolCall,
    entry: Option<&ToolEntry>,
    args: &Json,
) -> Result<Step, StorageError> {
    let Some(entry) = entry.filter(|e| e.kind.has_recipients() || e.kind == Kind::Fetch) else {
        return Ok(Step::default());
    };
    if !flow.config.enabled {
        return Ok(Step::default());
    }
    let p = parts(entry, args);
    if p.dests.is_empty() && p.hosts.is_empty() && p.fetch_hosts.is_empty() && !p.too_many {
        return Ok(Step::default());
    }
    let now = call.now_ms;
    let loaded = load(flow, ports, call.session_id.as_deref(), now)?;
    let ctx = Context {
        config: flow.config,
        key: &loaded.key,
        session: &loaded.session,
        identity: loaded.key.identity(&call.identity),
        always: &loaded.always,
    };
    let kind = entry.kind;
    let tool = crate::config::reader::Shortened(&call.tool_name);
    let mut objections = Vec::new();
    let mut values = Vec::new();
    let mut consented_domains: Vec<String> = Vec::new();
    let channel = entry.channel.as_deref().filter(|_| flow.gate.enabled);
    for d in &p.dests {
        let long = d.canonical.chars().count() > MAX_VALUE_CHARS;
        let is_consented = !long && consented(flow, ports, channel, d, now)?;
        let class = if long { Class::Unknown } else { ctx.class(&d.canonical, is_consented, false) };
        if is_consented
            && d.kind == Some(ValueKind::Email)
            && let Some((_, domain)) = d.canonical.rsplit_once('@')
        {
            consented_domains.push(domain.to_string());
        }
        match class {
            Class::Untrusted(source) => {
                objections.push(objection(
                    flow.config.untrusted_for(kind),
                    rules::UNTRUSTED_DESTINATION,
                    format!(
                        "`{tool}` sends to {} seen only in {}, which the person did not name; a destination \
                         planted in content the agent read is how injected instructions redirect a send.",
                        what(d.kind),
                        source.describe()
                    ),
                ));
                values.push(loaded.key.value(&d.canonical));
            }
            Class::Unknown => {
                objections.push(objection(
                    flow.config.unknown_for(kind),
                    rules::UNKNOWN_DESTINATION,
                    format!(
                        "`{tool}` sends to {} that the person did not name in this session and that is not \
                         consented, trusted or approved.",
                        what(d.kind)
                    ),
                ));
                if !long {
                    values.push(loaded.key.value(&d.canonical));
                }
            }
            _ => {}
        }
    }
    if p.too_many {
        objections.push(objection(
            flow.config.unknown_for(kind),
            rules::UNKNOWN_DESTINATION,
            format!("`{tool}` names more than {MAX_DESTINATIONS_PER_CALL} destinations; those past the bound are not classed."),
        ));
    }
    let mut foreign = 0usize;
    for h in &p.hosts {
        let class = ctx.class(h, false, true);
        if class.passes() || consented_domains.iter().any(|d| d == h) {
            continue;
        }
        foreign += 1;
        values.push(loaded.key.value(h));
    }
    if foreign > 0 || p.too_many_links {
        let reason = if p.too_many_links {
            format!(
                "The text `{tool}` sends holds more than {MAX_LINKS_PER_CALL} links; those past the bound are not classed."
            )
        } else {
            format!(
                "The text `{tool}` sends links to {foreign} host{} that {} neither trusted nor named by the person.",
                if foreign == 1 { "" } else { "s" },
                if foreign == 1 { "is" } else { "are" }
            )
        };
        objections.push(objection(flow.config.links_for(kind), rules::FOREIGN_LINK, reason));
    }
    let mut all_known = !p.fetch_hosts.is_empty();
    let mut known = Known::default();
    for h in &p.fetch_hosts {
        let long = h.chars().count() > MAX_VALUE_CHARS;
        let class = if long { Class::Unknown } else { ctx.class(h, false, true) };
        if matches!(class, Class::Named | Class::Trusted | Class::Approved) {
            known.add(h);
        } else {
            all_known = false;
        }
        if let Class::Untrusted(source) = class {
            objections.push(objection(
                flow.config.untrusted_for(kind),
                rules::UNTRUSTED_DESTINATION,
                format!(
                    "`{tool}` fetches from a host seen only in {}, which the person did not name; a fetched URL can \
                     carry what the agent read to whoever owns the host.",
                    source.describe()
                ),
            ));
            values.push(loaded.key.value(h));
        }
    }
    values.sort();
    values.dedup();
    values.truncate(record::MAX_PENDING_VALUES);
    Ok(Step { flagged: strictest(objections, values), fetch_known: all_known, known })
}

/// The verdict of a flagged call, with its approval key when it asks; an ask
/// remembers (hashes only) what its approval makes approved.
pub fn verdict(
    flow: &Flow<'_>,
    ports: &Ports<'_>,
    call: &ToolCall,
    flagged: Flagged,
    approval_key: impl FnOnce(Scope) -> String,
) -> Result<Verdict, StorageError> {
    let mut v = Verdict::new(flagged.decision, flagged.rule, flagged.reason, flagged.risk);
    v.signals = flagged.signals;
    if v.decision == Decision::Ask {
        let scope = Scope::Always;
        let key = approval_key(scope);
        remember_ask(flow, ports, call.session_id.as_deref(), &key, flagged.values, call.now_ms)?;
        v.scope = Some(scope);
        v.approval_key = Some(key);
    }
    Ok(v)
}

/// The digest an ask's destinations are kept under.
fn ask_digest(approval_key: &str) -> String {
    crate::digest::sha256_hex(approval_key.as_bytes()).get(..32).unwrap_or_default().to_string()
}

fn remember_ask(
    flow: &Flow<'_>,
    ports: &Ports<'_>,
    session: Option<&str>,
    approval_key: &str,
    values: Vec<String>,
    now_ms: u64,
) -> Result<(), StorageError> {
    if values.is_empty() {
        return Ok(());
    }
    let key = flow.keys.get(ports.storage, flow.secret, now_ms)?;
    let pending = record::Pending { key: ask_digest(approval_key), values, at: now_ms };
    record::update_session(
        ports.storage,
        &key,
        &record::session_digest(session),
        &record::Change::Asked(pending),
        now_ms,
        flow.config.ttl_ms(),
        flow.config.max_values(),
    )
    .map(|_| ())
}

/// After the tool judge recorded an allow of a flow ask: its destinations
/// become approved for the session (`session`) or for every session
/// (`always`, until the flow settings change). `once` approves only the call.
pub fn approve(
    flow: &Flow<'_>,
    ports: &Ports<'_>,
    approval: &crate::model::Approval,
) -> Result<(), crate::model::PolicyError> {
    if !flow.config.enabled || !approval.allow || approval.scope == Scope::Once {
        return Ok(());
    }
    // `t2:<scope>:<version>:<tool>:<fingerprint>:<session>:<call>:<mac>`, already authenticated.
    let Some(session) = approval.key.split(':').nth(5) else {
        return Ok(());
    };
    let key = flow.keys.get(ports.storage, flow.secret, approval.now_ms)?;
    let digest = ask_digest(&approval.key);
    let approved = record::update_session(
        ports.storage,
        &key,
        session,
        &record::Change::Approved(&digest),
        approval.now_ms,
        flow.config.ttl_ms(),
        flow.config.max_values(),
    )?;
    if approval.scope == Scope::Always && !approved.is_empty() {
        record::approve_always(ports.storage, &key, flow.version, &approved, approval.now_ms)?;
    }
    Ok(())
}

/// The flow step of `check-outbound`: the body's links, the recipient's
/// class. `gate_consented` says whether the gate found consent (a recipient
/// with consent is never untrusted). `None` when nothing objects.
pub fn outbound_step(
    flow: &Flow<'_>,
    ports: &Ports<'_>,
    message: &OutboundMessage,
    body: &str,
) -> Result<Option<Verdict>, StorageError> {
    if !flow.config.enabled || message.direction != crate::model::Direction::Outbound {
        return Ok(None);
    }
    let mut dests = Vec::new();
    values_of(&message.recipient, &mut dests);
    let mut hosts = extract::link_hosts(body, MAX_LINKS_PER_CALL + 1);
    let too_many_links = hosts.len() > MAX_LINKS_PER_CALL;
    hosts.truncate(MAX_LINKS_PER_CALL);
    if dests.is_empty() && hosts.is_empty() {
        return Ok(None);
    }
    let now = message.now_ms;
    let loaded = load(flow, ports, message.session_id.as_deref(), now)?;
    let ctx = Context {
        config: flow.config,
        key: &loaded.key,
        session: &loaded.session,
        identity: loaded.key.identity(&message.identity),
        always: &loaded.always,
    };
    let mut objections = Vec::new();
    let mut consented_domains = Vec::new();
    for d in &dests {
        let is_consented = consented(flow, ports, Some(&message.channel), d, now)?;
        if is_consented
            && d.kind == Some(ValueKind::Email)
            && let Some((_, domain)) = d.canonical.rsplit_once('@')
        {
            consented_domains.push(domain.to_string());
        }
        if let Class::Untrusted(source) = ctx.class(&d.canonical, is_consented, false) {
            objections.push(objection(
                flow.config.untrusted_for(Kind::Message),
                rules::UNTRUSTED_DESTINATION,
                format!(
                    "The message goes to {} seen only in {}, which the person did not name and which has no consent.",
                    what(d.kind),
                    source.describe()
                ),
            ));
        }
    }
    let foreign = hosts
        .iter()
        .filter(|h| !ctx.class(h, false, true).passes() && !consented_domains.iter().any(|d| d == *h))
        .count();
    if foreign > 0 || too_many_links {
        objections.push(objection(
            flow.config.links_for(Kind::Message),
            rules::FOREIGN_LINK,
            format!(
                "The message links to {} that {} neither trusted nor named by the person.",
                if too_many_links {
                    format!("more than {MAX_LINKS_PER_CALL} hosts")
                } else if foreign == 1 {
                    "a host".into()
                } else {
                    format!("{foreign} hosts")
                },
                if foreign == 1 && !too_many_links { "is" } else { "are" }
            ),
        ));
    }
    let Some(f) = strictest(objections, Vec::new()) else { return Ok(None) };
    let mut v = Verdict::new(f.decision, f.rule, f.reason, f.risk);
    if f.decision == Decision::Allow {
        v = Verdict::allow(rules::PASSED, "Where the message's destinations came from raises nothing.");
    }
    v.signals = f.signals;
    Ok(Some(v.under(flow.config.mode)))
}

/// Whether the person named the message's recipient in this session, under
/// the message's identity (`namedCountsAsConsent`).
pub fn recipient_named(flow: &Flow<'_>, ports: &Ports<'_>, message: &OutboundMessage) -> Result<bool, StorageError> {
    if !flow.config.enabled || !flow.config.named_counts_as_consent {
        return Ok(false);
    }
    let mut dests = Vec::new();
    values_of(&message.recipient, &mut dests);
    let [d] = dests.as_slice() else { return Ok(false) };
    let loaded = load(flow, ports, message.session_id.as_deref(), message.now_ms)?;
    let ctx = Context {
        config: flow.config,
        key: &loaded.key,
        session: &loaded.session,
        identity: loaded.key.identity(&message.identity),
        always: &loaded.always,
    };
    Ok(ctx.named(&loaded.key.value(&d.canonical)))
}

/// The answer of an outbound message whose flow record cannot be read.
pub fn outbound_storage_failure(e: &StorageError) -> Verdict {
    Verdict::deny(
        rules::STORAGE_UNAVAILABLE,
        format!("Where the message's destinations came from could not be read ({e}), so it is held back."),
        Risk::High,
    )
}
