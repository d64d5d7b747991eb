//! The Warden guard component: converts WIT records to `warden-core` types and
//! back, and implements the core's ports over the world's imports. No policy
//! logic lives here.
//!
//! The crate is `no_std` so that the component imports nothing but its own
//! world: no WASI filesystem, sockets, clocks, random or environment.

#![no_std]

extern crate alloc;

// The allocator, panic handler and canonical ABI entry points of a no_std guest.
use guest_rt as _;

mod asks;
mod convert;
mod ports;
mod runtime_config;
mod scan;
mod tool_review;

use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;
use exports::warden::guard::audit::{AuditEntry, Guest as AuditGuest, VerifyReport};
use exports::warden::guard::gate::{GateStatus, Guest as GateGuest, LedgerEntry};
use exports::warden::guard::policy::{
    Approval, ConfigError, ConfigReport, DiagnosticsReport, Guest as PolicyGuest, HostContext, Observation,
    OutboundMessage, OutcomeReport, PinState, ToolCall, ToolResult, Turn, TurnEnd, TurnOutcome, TurnStart, Usage,
};
use exports::warden::guard::profiles::{Guest as ProfilesGuest, ProfileSummary};
use warden::guard::types::{PolicyError, Verdict};
use warden_core::Warden;

wit_bindgen::generate!({
    world: "guard",
    path: "../../wit",
});

/// The active policy of this instance.
struct Active(RefCell<Option<Warden>>);

// SAFETY: a component instance runs on one thread and is never re-entered:
// the component model forbids re-entrance, and the core never calls back into
// the exports.
#[expect(unsafe_code, reason = "component instances are single-threaded")]
unsafe impl Sync for Active {}

static ACTIVE: Active = Active(RefCell::new(None));

/// What the host declared about itself; kept across `configure` calls.
struct Host(RefCell<Option<warden_core::HostContext>>);

// SAFETY: as for `Active`.
#[expect(unsafe_code, reason = "component instances are single-threaded")]
unsafe impl Sync for Host {}

static HOST: Host = Host(RefCell::new(None));

/// Runs `f` with the active policy, if `configure` has succeeded.
fn with_policy<T>(f: impl FnOnce(Option<&Warden>) -> T) -> T {
    let active = ACTIVE.0.borrow();
    f(active.as_ref())
}

fn configured<T>(f: impl FnOnce(&Warden) -> Result<T, warden_core::model::PolicyError>) -> Result<T, PolicyError> {
    with_policy(|policy| match policy {
        Some(w) => f(w).map_err(convert::policy_error),
        None => Err(PolicyError::NotConfigured),
    })
}

struct Component;

/// The state-building exports, run inside [`guest_rt::persistent`]: what
/// they build lives as long as the instance, so it stays out of the per-call
/// arena.
impl Component {
    fn declare_host(context: HostContext) -> Result<(), PolicyError> {
        let log_level = context.log_level;
        let context = convert::host_context(context);
        context.validate().map_err(convert::policy_error)?;
        if let Some(w) = ACTIVE.0.borrow_mut().as_mut() {
            w.set_host_context(&context).map_err(convert::policy_error)?;
        }
        *HOST.0.borrow_mut() = Some(context);
        ports::keep_from(log_level);
        Ok(())
    }

    fn replace_policy(config: &str) -> Result<ConfigReport, Vec<ConfigError>> {
        match Warden::configure(config) {
            Ok(mut warden) => {
                if let Some(context) = HOST.0.borrow().as_ref() {
                    // Validated when it was declared, so this cannot fail.
                    let _ = warden.set_host_context(context);
                }
                let report = convert::config_report(warden.report());
                warden.prepare(&ports::host());
                if let Some(previous) = ACTIVE.0.borrow().as_ref() {
                    previous.flush(&ports::host());
                }
                *ACTIVE.0.borrow_mut() = Some(warden);
                Ok(report)
            }
            Err(errors) => Err(errors.into_iter().map(|e| ConfigError { path: e.path, message: e.message }).collect()),
        }
    }
}

impl PolicyGuest for Component {
    fn set_host_context(context: HostContext) -> Result<(), PolicyError> {
        guest_rt::persistent(|| Self::declare_host(context))
    }

    fn configure(config: String) -> Result<ConfigReport, Vec<ConfigError>> {
        guest_rt::persistent(|| Self::replace_policy(&config))
    }

    fn check_turn(turn: Turn) -> TurnOutcome {
        let turn = convert::turn(turn);
        let outcome = with_policy(|policy| match policy {
            Some(w) => w.check_turn(&ports::host(), &turn),
            None => warden_core::unconfigured::turn(),
        });
        convert::turn_outcome(outcome)
    }

    fn check_tool_call(call: ToolCall) -> Verdict {
        let call = convert::tool_call(call);
        let verdict = with_policy(|policy| match policy {
            Some(w) => w.check_tool_call(&ports::host(), &call),
            None => warden_core::unconfigured::tool_call(),
        });
        convert::verdict(verdict)
    }

    fn observe_tool_result(report: ToolResult) -> Result<Observation, PolicyError> {
        let result = convert::tool_result(report);
        configured(|w| w.observe_tool_result(&ports::host(), &result)).map(convert::observation)
    }

    fn check_outbound(message: OutboundMessage) -> Verdict {
        let message = convert::outbound_message(message);
        let verdict = with_policy(|policy| match policy {
            Some(w) => w.check_outbound(&ports::host(), &message),
            None => warden_core::unconfigured::outbound(),
        });
        convert::verdict(verdict)
    }

    fn start_turn(start: TurnStart) -> Result<Option<PinState>, PolicyError> {
        let start = convert::turn_start(start);
        configured(|w| w.start_turn(&ports::host(), &start)).map(|p| p.map(convert::pin_state))
    }

    fn settle_turn(end: TurnEnd) -> Result<(), PolicyError> {
        let end = convert::turn_end(end);
        configured(|w| w.settle_turn(&ports::host(), &end))
    }

    fn current_pin(session_id: String, now_ms: u64) -> Result<Option<PinState>, PolicyError> {
        configured(|w| w.current_pin(&ports::host(), &session_id, now_ms)).map(|p| p.map(convert::pin_state))
    }

    fn record_approval(answer: Approval) -> Result<(), PolicyError> {
        let answer = convert::approval(answer);
        configured(|w| w.record_approval(&ports::host(), &answer))
    }

    fn record_usage(usage: Usage) -> Result<(), PolicyError> {
        let usage = convert::usage(usage);
        configured(|w| w.record_usage(&ports::host(), &usage))
    }

    fn record_outcome(report: OutcomeReport) -> Result<(), PolicyError> {
        let report = convert::outcome_report(report);
        configured(|w| w.record_outcome(&ports::host(), &report))
    }

    fn diagnostics() -> Result<DiagnosticsReport, PolicyError> {
        configured(|w| w.diagnostics(&ports::host())).map(convert::diagnostics)
    }
}

impl GateGuest for Component {
    fn consent(
        channel: String,
        recipient: String,
        offset: Option<String>,
        how: Option<String>,
        now_ms: u64,
        idempotency_key: Option<String>,
    ) -> Result<(), PolicyError> {
        configured(|w| {
            let key = idempotency_key.as_deref();
            w.gate_consent(&ports::host(), &channel, &recipient, offset.as_deref(), how.as_deref(), now_ms, key)
        })
    }

    fn opt_out(recipient: String, now_ms: u64, idempotency_key: Option<String>) -> Result<(), PolicyError> {
        configured(|w| w.gate_opt_out(&ports::host(), &recipient, now_ms, idempotency_key.as_deref()))
    }

    fn revoke(
        channel: String,
        recipient: String,
        now_ms: u64,
        idempotency_key: Option<String>,
    ) -> Result<bool, PolicyError> {
        configured(|w| w.gate_revoke(&ports::host(), &channel, &recipient, now_ms, idempotency_key.as_deref()))
    }

    fn reply(
        channel: String,
        recipient: String,
        thread: Option<String>,
        now_ms: u64,
        idempotency_key: Option<String>,
    ) -> Result<(), PolicyError> {
        configured(|w| {
            w.gate_reply(&ports::host(), &channel, &recipient, thread.as_deref(), now_ms, idempotency_key.as_deref())
        })
    }

    fn set_variables(
        channel: String,
        recipient: String,
        variables: Vec<(String, String)>,
        now_ms: u64,
        idempotency_key: Option<String>,
    ) -> Result<(), PolicyError> {
        configured(|w| {
            let key = idempotency_key.as_deref();
            w.gate_set_variables(&ports::host(), &channel, &recipient, &variables, now_ms, key)
        })
    }

    fn log(limit: u32) -> Result<Vec<LedgerEntry>, PolicyError> {
        configured(|w| w.gate_log(&ports::host(), limit))
            .map(|entries| entries.into_iter().map(convert::ledger_entry).collect())
    }

    fn status() -> Result<GateStatus, PolicyError> {
        configured(|w| w.gate_status(&ports::host())).map(convert::gate_status)
    }
}

impl ProfilesGuest for Component {
    fn show(agent: Option<String>, now_ms: u64) -> Result<Vec<ProfileSummary>, PolicyError> {
        configured(|w| w.profile_show(&ports::host(), agent.as_deref(), now_ms))
            .map(|all| all.into_iter().map(convert::profile_summary).collect())
    }

    fn reset(agent: Option<String>) -> Result<u32, PolicyError> {
        configured(|w| w.profile_reset(&ports::host(), agent.as_deref()))
    }
}

impl AuditGuest for Component {
    fn verify() -> Result<VerifyReport, PolicyError> {
        configured(|w| w.audit_verify(&ports::host())).map(convert::verify_report)
    }

    fn export(after: u64, limit: u32) -> Result<Vec<AuditEntry>, PolicyError> {
        configured(|w| w.audit_export(&ports::host(), after, limit))
            .map(|entries| entries.into_iter().map(convert::audit_entry).collect())
    }
}

impl exports::warden::guard::scan::Guest for Component {
    fn scan_documents(
        documents: Vec<exports::warden::guard::scan::Document>,
    ) -> Result<exports::warden::guard::scan::ScanReport, PolicyError> {
        scan::scan_documents(documents)
    }
}

export!(Component);
