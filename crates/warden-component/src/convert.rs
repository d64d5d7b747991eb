//! WIT records to core types and back, field by field.

use crate::exports::warden::guard::gate as g;
use crate::exports::warden::guard::policy as wit;
use crate::warden::guard::types as t;
use alloc::vec::Vec;
use warden_core::model as core;

pub fn policy_error(e: core::PolicyError) -> t::PolicyError {
    match e {
        core::PolicyError::NotConfigured => t::PolicyError::NotConfigured,
        core::PolicyError::InvalidInput(m) => t::PolicyError::InvalidInput(m),
        core::PolicyError::Storage(m) => t::PolicyError::Storage(m),
        core::PolicyError::Other(m) => t::PolicyError::Other(m),
    }
}

pub fn host_context(c: wit::HostContext) -> warden_core::HostContext {
    warden_core::HostContext {
        approval_secret: c.approval_secret,
        databases: c.databases,
        protected_paths: c.protected_paths,
        admin_programs: c.admin_programs,
    }
}

fn identity(i: t::Identity) -> core::Identity {
    core::Identity {
        provider: i.provider,
        account_id: i.account_id,
        sender_id: i.sender_id,
        channel_id: i.channel_id,
        thread_id: i.thread_id,
        agent_id: i.agent_id,
    }
}

fn message(m: t::Message) -> core::Message {
    core::Message {
        role: match m.role {
            t::Role::User => core::Role::User,
            t::Role::Assistant => core::Role::Assistant,
        },
        author: m.author,
        text: m.text,
    }
}

pub fn scope(s: core::Scope) -> t::ApprovalScope {
    match s {
        core::Scope::Once => t::ApprovalScope::Once,
        core::Scope::Session => t::ApprovalScope::Session,
        core::Scope::Always => t::ApprovalScope::Always,
    }
}

pub fn scope_in(s: t::ApprovalScope) -> core::Scope {
    match s {
        t::ApprovalScope::Once => core::Scope::Once,
        t::ApprovalScope::Session => core::Scope::Session,
        t::ApprovalScope::Always => core::Scope::Always,
    }
}

fn decision(d: core::Decision) -> t::Decision {
    match d {
        core::Decision::Allow => t::Decision::Allow,
        core::Decision::Ask => t::Decision::Ask,
        core::Decision::Deny => t::Decision::Deny,
    }
}

fn signals(s: Vec<core::Signal>) -> Vec<t::Signal> {
    s.into_iter().map(|s| t::Signal { name: s.name, detail: s.detail }).collect()
}

pub fn risk(r: core::Risk) -> t::Risk {
    match r {
        core::Risk::Low => t::Risk::Low,
        core::Risk::Medium => t::Risk::Medium,
        core::Risk::High => t::Risk::High,
        core::Risk::Critical => t::Risk::Critical,
    }
}

pub fn verdict(v: core::Verdict) -> t::Verdict {
    t::Verdict {
        decision: decision(v.decision),
        rule: v.rule,
        reason: v.reason,
        risk: risk(v.risk),
        scope: v.scope.map(scope),
        approval_key: v.approval_key,
        observed: v.observed.map(decision),
        signals: signals(v.signals),
    }
}

pub fn turn(x: wit::Turn) -> core::Turn {
    core::Turn {
        run_id: x.run_id,
        session_id: x.session_id,
        now_ms: x.now_ms,
        identity: identity(x.identity),
        trigger: match x.trigger {
            wit::Trigger::User => core::Trigger::User,
            wit::Trigger::Automation => core::Trigger::Automation,
            wit::Trigger::Peer => core::Trigger::Peer,
        },
        message: x.message,
        context: core::ChannelContext {
            thread_starter: x.context.thread_starter.map(message),
            replied_to: x.context.replied_to.map(message),
            since_last_reply: x.context.since_last_reply.into_iter().map(message).collect(),
        },
        history: x.history.into_iter().map(message).collect(),
        queue_mode: x.queue_mode.map(|q| match q {
            wit::QueueMode::Steer => core::QueueMode::Steer,
            wit::QueueMode::Followup => core::QueueMode::Followup,
            wit::QueueMode::Collect => core::QueueMode::Collect,
            wit::QueueMode::Interrupt => core::QueueMode::Interrupt,
        }),
        hook_timeout_ms: x.hook_timeout_ms,
    }
}

pub fn turn_outcome(o: core::TurnOutcome) -> wit::TurnOutcome {
    use core::SafetyOutcome as S;
    use wit::SafetyOutcome as W;
    wit::TurnOutcome {
        proceed: o.proceed,
        outcome: match o.outcome {
            S::Flagged => W::Flagged,
            S::NoMatch => W::NoMatch,
            S::Excluded => W::Excluded,
            S::NoScenarios => W::NoScenarios,
            S::EmptyRequest => W::EmptyRequest,
            S::MissingKey => W::MissingKey,
            S::ProviderDisabled => W::ProviderDisabled,
            S::InputTooLarge => W::InputTooLarge,
            S::TimedOut => W::TimedOut,
            S::Failed => W::Failed,
            S::PartialResponse => W::PartialResponse,
            S::Cancelled => W::Cancelled,
            S::NotUserTriggered => W::NotUserTriggered,
            S::NotConfigured => W::NotConfigured,
        },
        rule: o.rule,
        reason: o.reason,
        append_context: o.append_context,
        scenarios: o.scenarios,
        missing_identity: o.missing_identity,
        reused: o.reused,
        signals: signals(o.signals),
    }
}

pub fn tool_call(c: wit::ToolCall) -> core::ToolCall {
    core::ToolCall {
        tool_name: c.tool_name,
        arguments: c.arguments,
        call_id: c.call_id,
        run_id: c.run_id,
        session_id: c.session_id,
        now_ms: c.now_ms,
        identity: identity(c.identity),
        cwd: c.cwd,
        derived_paths: c.derived_paths,
    }
}

pub fn tool_result(r: wit::ToolResult) -> core::ToolResult {
    core::ToolResult {
        tool_name: r.tool_name,
        call_id: r.call_id,
        run_id: r.run_id,
        session_id: r.session_id,
        now_ms: r.now_ms,
        identity: identity(r.identity),
        content: r.content,
        is_error: r.is_error,
    }
}

pub fn observation(o: core::Observation) -> wit::Observation {
    wit::Observation { found: o.found, recorded: o.recorded, dropped: o.dropped, signals: signals(o.signals) }
}

pub fn outbound_message(m: wit::OutboundMessage) -> core::OutboundMessage {
    core::OutboundMessage {
        direction: match m.direction {
            wit::Direction::Outbound => core::Direction::Outbound,
            wit::Direction::Inbound => core::Direction::Inbound,
        },
        channel: m.channel,
        recipient: m.recipient,
        sender: m.sender,
        body: m.body,
        thread: m.thread,
        message_id: m.message_id,
        session_id: m.session_id,
        now_ms: m.now_ms,
        identity: identity(m.identity),
    }
}

pub fn turn_start(s: wit::TurnStart) -> core::TurnStart {
    core::TurnStart {
        session_id: s.session_id,
        run_id: s.run_id,
        chat_id: s.chat_id,
        label: s.label,
        now_ms: s.now_ms,
        prompt: s.prompt,
        dedicated: s.dedicated,
    }
}

pub fn turn_end(e: wit::TurnEnd) -> core::TurnEnd {
    core::TurnEnd { session_id: e.session_id, run_id: e.run_id, now_ms: e.now_ms }
}

pub fn pin_state(p: core::PinState) -> wit::PinState {
    wit::PinState { chat_id: p.chat_id, label: p.label, pinned_at_ms: p.pinned_at_ms, expires_at_ms: p.expires_at_ms }
}

pub fn approval(a: wit::Approval) -> core::Approval {
    core::Approval {
        key: a.key,
        allow: a.allow,
        scope: scope_in(a.scope),
        session_id: a.session_id,
        call_id: a.call_id,
        now_ms: a.now_ms,
        idempotency_key: a.idempotency_key,
    }
}

pub fn usage(u: wit::Usage) -> core::Usage {
    core::Usage { agent_id: u.agent_id, session_id: u.session_id, tokens: u.tokens, now_ms: u.now_ms }
}

pub fn outcome_report(r: wit::OutcomeReport) -> core::OutcomeReport {
    core::OutcomeReport {
        channel: r.channel,
        recipient: r.recipient,
        delivery: match r.delivery {
            wit::Delivery::Sent => core::Delivery::Sent,
            wit::Delivery::Failed => core::Delivery::Failed,
            wit::Delivery::Reply => core::Delivery::Reply,
        },
        thread: r.thread,
        now_ms: r.now_ms,
        idempotency_key: r.idempotency_key,
    }
}

fn checks(c: Vec<core::CheckStatus>) -> Vec<wit::CheckStatus> {
    c.into_iter()
        .map(|c| wit::CheckStatus {
            check: c.check,
            active: c.active,
            mode: c.mode,
            reason: c.reason,
            failure_mode: c.failure_mode,
        })
        .collect()
}

pub fn config_report(r: core::ConfigReport) -> wit::ConfigReport {
    wit::ConfigReport { policy_version: r.policy_version, checks: checks(r.checks), warnings: r.warnings }
}

pub fn diagnostics(d: core::Diagnostics) -> wit::DiagnosticsReport {
    wit::DiagnosticsReport {
        policy_version: d.policy_version,
        checks: checks(d.checks),
        counters: d.counters.into_iter().map(|c| wit::Counter { name: c.name, value: c.value }).collect(),
        warnings: d.warnings,
    }
}

pub fn ledger_entry(e: core::LedgerEntry) -> g::LedgerEntry {
    g::LedgerEntry {
        at_ms: e.at_ms,
        event: e.event,
        channel: e.channel,
        recipient_hash: e.recipient_hash,
        body_hash: e.body_hash,
        thread: e.thread,
        decision: e.decision,
        rule: e.rule,
    }
}

pub fn gate_status(s: core::GateStatus) -> g::GateStatus {
    g::GateStatus {
        consents: s.consents,
        opt_outs: s.opt_outs,
        open_threads: s.open_threads,
        entries: s.entries,
        decisions: s.decisions,
    }
}

pub fn verify_report(r: warden_core::audit::Report) -> crate::exports::warden::guard::audit::VerifyReport {
    crate::exports::warden::guard::audit::VerifyReport {
        checked: r.checked,
        ok: r.ok,
        broken_seq: r.broken_seq,
        problem: r.problem,
        head_seq: r.head_seq,
        floor_seq: r.floor_seq,
        unrecorded: r.unrecorded,
        keyed: r.keyed,
    }
}

pub fn audit_entry(e: warden_core::audit::Entry) -> crate::exports::warden::guard::audit::AuditEntry {
    use crate::exports::warden::guard::audit::{AuditEntry, KeptCall};
    AuditEntry {
        seq: e.seq,
        at_ms: e.at_ms,
        check: e.check,
        decision: e.decision,
        observed: e.observed,
        rule: e.rule,
        risk: e.risk,
        policy_version: e.policy_version,
        session: e.session,
        agent: e.agent,
        inputs: e.inputs.into_iter().collect(),
        kept: e.kept.map(|k| KeptCall {
            tool_name: k.tool_name,
            arguments: k.arguments,
            cwd: k.cwd,
            derived_paths: k.derived_paths,
            redacted: k.redacted,
        }),
        unrecorded_before: e.unrecorded_before,
        prev: e.prev,
        hash: e.hash,
    }
}

pub fn profile_summary(p: warden_core::profile::Summary) -> crate::exports::warden::guard::profiles::ProfileSummary {
    crate::exports::warden::guard::profiles::ProfileSummary {
        agent: p.agent,
        calls: p.calls,
        tools: p.tools,
        kinds: p.kinds,
        hosts: p.hosts,
        paths: p.paths,
        peak_per_hour: p.peak_per_hour,
        learning: p.learning,
    }
}
