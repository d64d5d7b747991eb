//! The configured policy and the order in which its checks run.

use crate::config::Config;
use crate::config::reader::ConfigError;
use crate::counters;
use crate::model::{
    Approval, CheckStatus, ConfigReport, Decision, Diagnostics, GateStatus, LedgerEntry, Observation, OutboundMessage,
    OutcomeReport, PinState, PolicyError, Risk, SafetyOutcome, Signal, ToolCall, ToolResult, Turn, TurnEnd,
    TurnOutcome, TurnStart, Usage, Verdict,
};
use crate::ports::{Level, Ports, StorageError};
use crate::prelude::*;
use crate::rules;
use crate::{gate, outbound, pin, safety, tools};
use serde_json::Value;

/// A validated configuration, ready to decide.
#[derive(Debug, Clone)]
pub struct Warden {
    config: Config,
    policy_version: String,
    tools_version: String,
    host: crate::host::Prepared,
    /// Counts of checks not yet written to storage.
    pending: counters::Pending,
    /// Whether decision memory's markers can be trusted.
    memory: tools::memory::Index,
    /// The flow check's key, read once; and its settings' version.
    flow_keys: crate::flow::record::Keys,
    flow_version: String,
    /// The audit trail's key, and the entries this instance could not write
    /// since its last written one.
    audit_key: crate::audit::AuditKey,
    unrecorded: core::cell::Cell<u64>,
}

impl Warden {
    /// Validates `text` and builds the policy, or returns every error at once.
    pub fn configure(text: &str) -> Result<Warden, Vec<ConfigError>> {
        let config = Config::parse(text)?;
        let policy_version = config.policy_version();
        // Remembered tool-call answers are bound to the judge's own settings,
        // so editing, say, a safety scenario does not re-ask every approval.
        let tools_version = crate::digest::versioned(&config.tools);
        let flow_version = crate::digest::versioned(&config.flow);
        Ok(Warden {
            config,
            policy_version,
            tools_version,
            host: crate::host::Prepared::default(),
            pending: counters::Pending::default(),
            memory: tools::memory::Index::default(),
            flow_keys: crate::flow::record::Keys::default(),
            flow_version,
            audit_key: crate::audit::AuditKey::default(),
            unrecorded: core::cell::Cell::new(0),
        })
    }

    /// Takes what the host declared about itself: the approval secret and
    /// the files and command of Warden that the agent may not touch. A
    /// context that fails validation changes nothing.
    pub fn set_host_context(&mut self, context: &crate::host::HostContext) -> Result<(), PolicyError> {
        context.validate()?;
        self.host = context.prepare();
        self.flow_keys = crate::flow::record::Keys::default();
        self.audit_key = crate::audit::AuditKey::derive(&self.host.secret);
        Ok(())
    }

    /// Reads what this instance needs to know once about storage, so the
    /// first check does not: whether decision memory's markers can be
    /// trusted. Failures are left for the checks to meet.
    pub fn prepare(&self, ports: &Ports<'_>) {
        if self.config.tools.enabled {
            self.memory.prepare(ports.storage);
        }
    }

    /// Writes the counts of checks this instance has not written yet. A host
    /// calls it (through `diagnostics`) before it drops an instance.
    pub fn flush(&self, ports: &Ports<'_>) {
        self.pending.flush(ports.storage, ports.log);
    }

    /// The validated configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Digest of the effective configuration.
    pub fn policy_version(&self) -> &str {
        &self.policy_version
    }

    /// What `configure` reports.
    pub fn report(&self) -> ConfigReport {
        ConfigReport {
            policy_version: self.policy_version.clone(),
            checks: self.checks(),
            warnings: self.config.gate.warnings(),
        }
    }

    fn checks(&self) -> Vec<CheckStatus> {
        let mut checks = vec![
            self.config.pin.status(),
            self.config.safety.status(),
            self.config.tools.status(),
            self.config.gate.status(),
            self.config.dlp.status(),
            self.config.flow.status(),
            self.config.context.status(),
            self.config.drift.status(),
        ];
        if self.config.profile.enabled {
            checks.push(self.config.profile.status());
        }
        if self.config.risk.enabled {
            checks.push(self.config.risk.status());
        }
        if self.config.audit.enabled {
            checks.push(self.config.audit.status());
        }
        checks
    }

    /// Appends one entry to the audit trail when it is on. An entry that
    /// cannot be written leaves the decision as it was (the trail fails
    /// open) but is counted, logged, and named in the next entry written;
    /// the error is returned so `audit.required` can refuse instead.
    fn audit(&self, ports: &Ports<'_>, draft: impl FnOnce() -> crate::audit::Draft) -> Result<(), StorageError> {
        let audit = &self.config.audit;
        if !audit.enabled {
            return Ok(());
        }
        let draft = draft();
        let now_ms = draft.at_ms();
        let check = draft.check().to_string();
        let before = self.unrecorded.get();
        match crate::audit::append(audit, &self.audit_key, ports.storage, &self.policy_version, before, draft) {
            Ok(_) => {
                self.unrecorded.set(0);
                Ok(())
            }
            Err(e) => {
                self.unrecorded.set(before.saturating_add(1));
                self.pending.add(ports, crate::audit::UNRECORDED_COUNTER, now_ms);
                ports.log.write(Level::Warn, &format!("audit: the entry of a {check} check was not written ({e})"));
                Err(e)
            }
        }
    }

    /// The verdict `audit.required` gives a decision it could not record.
    fn unrecorded(&self, verdict: Verdict, result: Result<(), StorageError>) -> Verdict {
        match result {
            Err(e) if self.config.audit.required => Verdict::deny(
                crate::audit::UNRECORDED_RULE,
                format!(
                    "the audit trail could not record this decision ({e}); `audit.required` refuses what it cannot \
                     record"
                ),
                Risk::High,
            ),
            _ => verdict,
        }
    }

    /// The profile of one agent, or of every agent when `agent` is `None`.
    pub fn profile_show(
        &self,
        ports: &Ports<'_>,
        agent: Option<&str>,
        now_ms: u64,
    ) -> Result<Vec<crate::profile::Summary>, PolicyError> {
        crate::profile::show(&self.config.profile, &self.host.mac, ports.storage, agent, now_ms)
            .map_err(|e| PolicyError::Storage(format!("profiles could not be read ({e})")))
    }

    /// Forgets one agent's profile, or every profile; returns how many.
    pub fn profile_reset(&self, ports: &Ports<'_>, agent: Option<&str>) -> Result<u32, PolicyError> {
        crate::profile::reset(&self.host.mac, ports.storage, agent)
            .map_err(|e| PolicyError::Storage(format!("profiles could not be removed ({e})")))
    }

    /// Reviews the tools of one `tools/list` answer of an MCP server,
    /// pinning new ones (see [`crate::mcp_review`]).
    pub fn review_tools(
        &self,
        ports: &Ports<'_>,
        server: &str,
        tools: &[crate::mcp_review::ListedTool],
        now_ms: u64,
    ) -> Result<Vec<crate::mcp_review::ToolReview>, PolicyError> {
        crate::mcp_review::review(&self.host.secret, ports, server, tools, now_ms, &crate::mcp_review::scan)
    }

    /// Walks the audit trail and names its first broken link.
    pub fn audit_verify(&self, ports: &Ports<'_>) -> Result<crate::audit::Report, PolicyError> {
        crate::audit::verify(&self.audit_key, ports.storage)
    }

    /// Audit entries after sequence `after`, oldest first, at most `limit`.
    pub fn audit_export(
        &self,
        ports: &Ports<'_>,
        after: u64,
        limit: u32,
    ) -> Result<Vec<crate::audit::Entry>, PolicyError> {
        crate::audit::export(ports.storage, after, limit)
    }

    /// The key drift hashes topic words under; derived only when drift is on.
    fn topic_key(&self) -> crate::session::drift::TopicKey {
        if self.config.drift.enabled {
            crate::session::drift::TopicKey::derive(&self.host.secret)
        } else {
            crate::session::drift::TopicKey::default()
        }
    }

    fn flow(&self) -> crate::flow::Flow<'_> {
        crate::flow::Flow {
            config: &self.config.flow,
            gate: &self.config.gate,
            secret: &self.host.secret,
            keys: &self.flow_keys,
            version: &self.flow_version,
        }
    }

    /// Judges a tool call. Fails closed: arguments that are not a JSON object,
    /// and a pin that cannot be read, refuse the call.
    pub fn check_tool_call(&self, ports: &Ports<'_>, call: &ToolCall) -> Verdict {
        let mut risk = crate::risk::Pending::default();
        let mut verdict = self.judge_tool_call(ports, call, &mut risk);
        crate::risk::after_call(&self.config.risk, ports.storage, risk, &mut verdict);
        // Only an enforced ask reaches the inbox: allowed and denied calls get no storage access here.
        if verdict.decision == Decision::Ask {
            crate::asks::raise(ports.storage, call, &mut verdict);
        }
        let keep = self.config.audit.keep_inputs;
        let written = self.audit(ports, || crate::audit::Draft::tool_call(&self.audit_key, call, &verdict, keep));
        let verdict = self.unrecorded(verdict, written);
        self.pending.add_joined(ports, &["tools", verdict.decision.as_str(), &verdict.rule], call.now_ms);
        let level =
            if verdict.decision == Decision::Allow && verdict.observed.is_none() { Level::Debug } else { Level::Info };
        if ports.log.enabled(level) {
            ports.log.write(
                level,
                &format!(
                    "tool call {}: {} by {}{}",
                    crate::config::reader::shorten(&call.tool_name),
                    verdict.decision.as_str(),
                    verdict.rule,
                    verdict.observed.map(|d| format!(" (observed: {})", d.as_str())).unwrap_or_default()
                ),
            );
        }
        verdict
    }

    fn judge_tool_call(&self, ports: &Ports<'_>, call: &ToolCall, risk: &mut crate::risk::Pending) -> Verdict {
        let args: Value = match serde_json::from_str(&call.arguments) {
            Ok(v @ Value::Object(_)) => v,
            Ok(other) => {
                return Verdict::deny(
                    rules::INVALID_ARGUMENTS,
                    format!("arguments: must be a JSON object, got {}", json_kind(&other)),
                    Risk::Medium,
                );
            }
            Err(e) => {
                return Verdict::deny(
                    rules::INVALID_ARGUMENTS,
                    format!("arguments: not valid JSON ({e})"),
                    Risk::Medium,
                );
            }
        };
        // The pin comes first and nothing overrides it: a remembered "always
        // allow" for a tool must not let it write to another chat.
        let pinned =
            pin::check(&self.config.pin, ports.storage, call, Some(&args)).map(|v| v.under(self.config.pin.mode));
        if let Some(v) = &pinned
            && (v.decision != Decision::Allow || v.observed.is_some())
        {
            return v.clone();
        }
        let entry = self.config.tools.classify(&call.tool_name);
        let kind = entry.map_or(tools::taxonomy::Kind::Other, |e| e.kind);
        let decision_of = |rule: &str| self.config.tools.rule(rule).decision.decision().as_str();
        let mut context = match crate::session::before_call(&self.config.context, ports, call, kind, &decision_of) {
            Ok(pre) => pre,
            Err(e) => return tools::storage_failure(&e).under(self.config.tools.mode),
        };
        match crate::session::drift::before_call(&self.config.drift, &self.topic_key(), ports, call, kind) {
            Ok(d) => {
                context.asks.extend(d.ask);
                context.signals.extend(d.signals);
            }
            Err(e) => return tools::storage_failure(&e).under(self.config.tools.mode),
        }
        // The command is parsed once, for the risk section and the judge.
        let command = (self.config.tools.enabled || self.config.risk.enabled)
            .then(|| tools::command_of(entry, &args).map(|c| (c, crate::shell::parse(c))))
            .flatten();
        *risk = crate::risk::before_call(
            &self.config.risk,
            &self.host.mac,
            ports.storage,
            call,
            entry,
            &args,
            command.as_ref(),
        );
        context.asks.extend(risk.ask.take());
        context.signals.append(&mut risk.signals);
        let judged = tools::judge(
            &self.config.tools,
            &self.tools_version,
            &self.host,
            ports,
            &self.memory,
            &self.flow(),
            &context,
            &self.config.profile,
            call,
            entry,
            &args,
            command.as_ref(),
        );
        // When the judge found nothing to say beyond its default allow, the
        // pin's positive answer is the rule that decided; anything the judge
        // did decide (a memory, an ask, a deny) stays the rule.
        let judge_had_nothing = judged.decision == Decision::Allow
            && (judged.rule == rules::NOT_CONFIGURED || judged.rule == tools::rules::ALLOW);
        match pinned {
            Some(mut p) if judge_had_nothing => {
                p.signals.extend(judged.signals);
                p
            }
            Some(p) => judged.with_signal(Signal::new(p.rule, p.reason)),
            None => judged,
        }
    }

    /// Checks an inbound turn. Fails open.
    pub fn check_turn(&self, ports: &Ports<'_>, turn: &Turn) -> TurnOutcome {
        let mut outcome = safety::check(&self.config.safety, ports, turn, self.config.debug);
        // Whatever safety decided: a person who asks to stop has asked.
        outcome.signals.extend(crate::session::on_turn(&self.config.context, ports, turn));
        outcome.signals.extend(crate::session::drift::on_turn(&self.config.drift, &self.topic_key(), ports, turn));
        // After safety, which it never changes: a turn that does not proceed names nothing.
        if outcome.proceed {
            outcome.signals.extend(crate::flow::record_turn(&self.flow(), ports, turn));
            outcome.signals.extend(pin::queue::enter(&self.config.pin, ports.storage, &self.host.secret, turn));
        }
        // Inbound checks fail open, so an entry that cannot be written changes nothing.
        let _ = self.audit(ports, || crate::audit::Draft::turn(&self.audit_key, turn, &outcome));
        outcome
    }

    /// Records what a tool returned, so that the destinations in it are known
    /// to come from content the agent read.
    pub fn observe_tool_result(&self, ports: &Ports<'_>, result: &ToolResult) -> Result<Observation, PolicyError> {
        let observation = crate::flow::observe(&self.flow(), ports, result)?;
        crate::session::on_result(&self.config.context, ports, result).map_err(PolicyError::from)?;
        Ok(observation)
    }

    /// Checks a message before it is sent or read. Fails closed.
    pub fn check_outbound(&self, ports: &Ports<'_>, message: &OutboundMessage) -> Verdict {
        let verdict = outbound::check_with(&self.config, &self.flow(), ports, message);
        let written = self.audit(ports, || crate::audit::Draft::outbound(&self.audit_key, message, &verdict));
        let verdict = self.unrecorded(verdict, written);
        self.pending.add_joined(ports, &["outbound", verdict.decision.as_str(), &verdict.rule], message.now_ms);
        verdict
    }

    /// Starts a turn, pinning its reply when a chat is given.
    pub fn start_turn(&self, ports: &Ports<'_>, start: &TurnStart) -> Result<Option<PinState>, PolicyError> {
        self.flush(ports);
        pin::start(&self.config.pin, ports.storage, &self.host.secret, start)
    }

    /// Settles a turn, clearing its pin and the once-only approvals of its session.
    pub fn settle_turn(&self, ports: &Ports<'_>, end: &TurnEnd) -> Result<(), PolicyError> {
        self.flush(ports);
        pin::settle(ports.storage, end)?;
        tools::settle_session(&self.config.tools, ports, &end.session_id)
    }

    /// The session's pin if it is still valid.
    pub fn current_pin(
        &self,
        ports: &Ports<'_>,
        session_id: &str,
        now_ms: u64,
    ) -> Result<Option<PinState>, PolicyError> {
        pin::current(&self.config.pin, ports.storage, session_id, now_ms)
    }

    /// Records a person's answer to an `ask`; the key says which check asked.
    pub fn record_approval(&self, ports: &Ports<'_>, approval: &Approval) -> Result<(), PolicyError> {
        if approval.key.starts_with(tools::APPROVAL_KEY_PREFIX)
            || approval.key.starts_with(tools::OLD_APPROVAL_KEY_PREFIX)
        {
            tools::record_approval(
                &self.config.tools,
                &self.tools_version,
                &self.host,
                ports,
                &self.memory,
                &self.flow(),
                approval,
            )
        } else if approval.key.starts_with(crate::mcp_review::pins::APPROVAL_KEY_PREFIX) {
            crate::mcp_review::pins::record_approval(&self.host.secret, ports.storage, approval)
        } else if approval.key.starts_with(outbound::APPROVAL_KEY_PREFIX) {
            outbound::record_approval(&self.config, ports, approval)
        } else {
            Err(PolicyError::InvalidInput(format!(
                "key: `{}` is not an approval key a verdict gave",
                crate::config::reader::shorten(&approval.key)
            )))
        }
    }

    /// The pending asks of the approval inbox, newest first.
    pub fn asks_list(
        &self,
        ports: &Ports<'_>,
        limit: u32,
        before: Option<u64>,
        now_ms: u64,
    ) -> Result<Vec<crate::asks::PendingAsk>, crate::asks::AskError> {
        crate::asks::list(ports.storage, limit, before, now_ms)
    }

    /// The inbox's recent answers, newest first.
    pub fn asks_recent(
        &self,
        ports: &Ports<'_>,
        limit: u32,
    ) -> Result<Vec<crate::asks::Answered>, crate::asks::AskError> {
        crate::asks::recent(ports.storage, limit)
    }

    /// Answers a pending ask as `record-approval` would with its key, then removes it.
    pub fn asks_answer(
        &self,
        ports: &Ports<'_>,
        id: &str,
        answer: crate::asks::Answer,
    ) -> Result<crate::asks::Answered, crate::asks::AskError> {
        crate::asks::answer(ports.storage, id, answer, |approval| self.record_approval(ports, approval))
    }

    /// Records model usage for budgets.
    pub fn record_usage(&self, ports: &Ports<'_>, usage: &Usage) -> Result<(), PolicyError> {
        tools::record_usage(&self.config.tools, ports, usage)
    }

    /// Records a delivery outcome.
    pub fn record_outcome(&self, ports: &Ports<'_>, report: &OutcomeReport) -> Result<(), PolicyError> {
        gate::record_outcome(&self.config.gate, ports, report)
    }

    /// Counters, check status and warnings.
    /// Writes this instance's pending counts first; counts that could not be
    /// written are added to what storage reports, so the totals are whole.
    pub fn diagnostics(&self, ports: &Ports<'_>) -> Result<Diagnostics, PolicyError> {
        self.flush(ports);
        let mut counters = counters::all(ports)?;
        for (name, delta) in self.pending.unwritten() {
            match counters.iter_mut().find(|c| c.name == name) {
                Some(c) => c.value = c.value.saturating_add(delta),
                None => counters.push(crate::model::Counter { name, value: delta }),
            }
        }
        counters.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Diagnostics {
            policy_version: self.policy_version.clone(),
            checks: self.checks(),
            counters,
            warnings: safety::warnings(&self.config.safety, ports)
                .into_iter()
                .chain(self.config.gate.warnings())
                .collect(),
        })
    }

    /// Records that a recipient agreed to be messaged on a channel.
    #[allow(clippy::too_many_arguments)]
    pub fn gate_consent(
        &self,
        ports: &Ports<'_>,
        channel: &str,
        recipient: &str,
        offset: Option<&str>,
        how: Option<&str>,
        now_ms: u64,
        idempotency_key: Option<&str>,
    ) -> Result<(), PolicyError> {
        gate::consent(&self.config.gate, ports, channel, recipient, offset, how, now_ms, idempotency_key)
    }

    /// Records an absolute opt-out.
    pub fn gate_opt_out(
        &self,
        ports: &Ports<'_>,
        recipient: &str,
        now_ms: u64,
        idempotency_key: Option<&str>,
    ) -> Result<(), PolicyError> {
        gate::opt_out(&self.config.gate, ports, recipient, now_ms, idempotency_key)
    }

    /// Takes a consent back.
    pub fn gate_revoke(
        &self,
        ports: &Ports<'_>,
        channel: &str,
        recipient: &str,
        now_ms: u64,
        idempotency_key: Option<&str>,
    ) -> Result<bool, PolicyError> {
        gate::revoke(&self.config.gate, ports, channel, recipient, now_ms, idempotency_key)
    }

    /// Notes a reply, clearing the thread.
    pub fn gate_reply(
        &self,
        ports: &Ports<'_>,
        channel: &str,
        recipient: &str,
        thread: Option<&str>,
        now_ms: u64,
        idempotency_key: Option<&str>,
    ) -> Result<(), PolicyError> {
        gate::reply(&self.config.gate, ports, channel, recipient, thread, now_ms, idempotency_key)
    }

    /// Stores template variables for a recipient on a channel.
    pub fn gate_set_variables(
        &self,
        ports: &Ports<'_>,
        channel: &str,
        recipient: &str,
        variables: &[(String, String)],
        now_ms: u64,
        idempotency_key: Option<&str>,
    ) -> Result<(), PolicyError> {
        gate::set_variables(&self.config.gate, ports, channel, recipient, variables, now_ms, idempotency_key)
    }

    /// The newest ledger lines first.
    pub fn gate_log(&self, ports: &Ports<'_>, limit: u32) -> Result<Vec<LedgerEntry>, PolicyError> {
        gate::log(&self.config.gate, ports, limit)
    }

    /// A summary of the ledger.
    pub fn gate_status(&self, ports: &Ports<'_>) -> Result<GateStatus, PolicyError> {
        gate::status(&self.config.gate, ports)
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Answers of an instance that has not been configured: every check says so
/// honestly instead of inventing a decision.
pub mod unconfigured {
    use super::*;

    pub fn tool_call() -> Verdict {
        Verdict::allow(rules::NOT_CONFIGURED, "warden has not been configured, so nothing was checked")
    }

    pub fn outbound() -> Verdict {
        tool_call()
    }

    pub fn turn() -> TurnOutcome {
        let mut outcome = TurnOutcome::unchanged(
            SafetyOutcome::NotConfigured,
            "warden has not been configured, so the turn was not checked",
        );
        outcome.rule = rules::NOT_CONFIGURED.to_string();
        outcome
    }
}
