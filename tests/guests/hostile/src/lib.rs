//! A guest that misbehaves on request, so tests can prove the host survives
//! it: `check-tool-call` with tool name `spin` loops forever, `hoard`
//! allocates until the memory cap stops it, `crash` traps, `torn-batch`
//! commits a batch whose last condition fails and traps, `batch-then-crash`
//! commits a batch and traps; any other tool is
//! allowed with rule `hostile.ok`. `check-turn` spins, `check-outbound` traps.

#![no_std]

extern crate alloc;

// The allocator, panic handler and canonical ABI entry points of a no_std guest.
use guest_rt as _;

use alloc::string::String;
use alloc::vec::Vec;
use exports::warden::guard::audit::{AuditEntry, Guest as AuditGuest, VerifyReport};
use exports::warden::guard::gate::{GateStatus, Guest as GateGuest, LedgerEntry};
use exports::warden::guard::policy::{
    Approval, ConfigError, ConfigReport, DiagnosticsReport, Guest as PolicyGuest, HostContext, Observation,
    OutboundMessage, OutcomeReport, PinState, ToolCall, ToolResult, Turn, TurnEnd, TurnOutcome, TurnStart, Usage,
};
use exports::warden::guard::profiles::{Guest as ProfilesGuest, ProfileSummary};
use warden::guard::storage;
use warden::guard::types::{Decision, PolicyError, Risk, Verdict};

wit_bindgen::generate!({ world: "guard", path: "../../../wit" });

fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = core::hint::black_box(n.wrapping_add(1));
    }
}

fn hoard() -> ! {
    let mut kept: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut block = Vec::with_capacity(1 << 20);
        block.resize(1 << 20, 1u8);
        kept.push(core::hint::black_box(block));
    }
}

fn crash() -> ! {
    core::arch::wasm32::unreachable()
}

/// A write of `hostile/<key>` that holds only where the key is absent.
fn put(key: &str) -> storage::Write {
    storage::Write::Put(storage::PutWrite {
        namespace: String::from("hostile"),
        key: String::from(key),
        value: Vec::from(&b"1"[..]),
        when: storage::Condition::Absent,
    })
}

fn hostile() -> PolicyError {
    PolicyError::Other(String::from("hostile guest"))
}

struct Hostile;

impl PolicyGuest for Hostile {
    fn configure(_: String) -> Result<ConfigReport, Vec<ConfigError>> {
        Ok(ConfigReport { policy_version: String::from("hostile"), checks: Vec::new(), warnings: Vec::new() })
    }
    fn check_turn(_: Turn) -> TurnOutcome {
        spin()
    }
    fn check_tool_call(call: ToolCall) -> Verdict {
        match call.tool_name.as_str() {
            "spin" => spin(),
            "hoard" => hoard(),
            "crash" => crash(),
            "torn-batch" => {
                // The third write's condition fails, so the batch writes nothing; then the guest dies.
                let _ = storage::commit(&[put("x"), put("y"), put("x")]);
                crash()
            }
            "batch-then-crash" => {
                let _ = storage::commit(&[put("x"), put("y")]);
                crash()
            }
            _ => Verdict {
                decision: Decision::Allow,
                rule: String::from("hostile.ok"),
                reason: String::new(),
                risk: Risk::Low,
                scope: None,
                approval_key: None,
                observed: None,
                signals: Vec::new(),
            },
        }
    }
    fn check_outbound(_: OutboundMessage) -> Verdict {
        crash()
    }
    fn observe_tool_result(_: ToolResult) -> Result<Observation, PolicyError> {
        Err(hostile())
    }
    fn start_turn(_: TurnStart) -> Result<Option<PinState>, PolicyError> {
        Err(hostile())
    }
    fn settle_turn(_: TurnEnd) -> Result<(), PolicyError> {
        Err(hostile())
    }
    fn current_pin(_: String, _: u64) -> Result<Option<PinState>, PolicyError> {
        Err(hostile())
    }
    fn record_approval(_: Approval) -> Result<(), PolicyError> {
        Err(hostile())
    }
    fn set_host_context(_: HostContext) -> Result<(), PolicyError> {
        Ok(())
    }
    fn record_usage(_: Usage) -> Result<(), PolicyError> {
        Err(hostile())
    }
    fn record_outcome(_: OutcomeReport) -> Result<(), PolicyError> {
        Err(hostile())
    }
    fn diagnostics() -> Result<DiagnosticsReport, PolicyError> {
        Err(hostile())
    }
}

impl GateGuest for Hostile {
    fn consent(
        _: String,
        _: String,
        _: Option<String>,
        _: Option<String>,
        _: u64,
        _: Option<String>,
    ) -> Result<(), PolicyError> {
        Err(hostile())
    }
    fn opt_out(_: String, _: u64, _: Option<String>) -> Result<(), PolicyError> {
        Err(hostile())
    }
    fn revoke(_: String, _: String, _: u64, _: Option<String>) -> Result<bool, PolicyError> {
        Err(hostile())
    }
    fn reply(_: String, _: String, _: Option<String>, _: u64, _: Option<String>) -> Result<(), PolicyError> {
        Err(hostile())
    }
    fn set_variables(
        _: String,
        _: String,
        _: Vec<(String, String)>,
        _: u64,
        _: Option<String>,
    ) -> Result<(), PolicyError> {
        Err(hostile())
    }
    fn log(_: u32) -> Result<Vec<LedgerEntry>, PolicyError> {
        Err(hostile())
    }
    fn status() -> Result<GateStatus, PolicyError> {
        Err(hostile())
    }
}

impl ProfilesGuest for Hostile {
    fn show(_: Option<String>, _: u64) -> Result<Vec<ProfileSummary>, PolicyError> {
        Err(hostile())
    }

    fn reset(_: Option<String>) -> Result<u32, PolicyError> {
        Err(hostile())
    }
}

impl AuditGuest for Hostile {
    fn verify() -> Result<VerifyReport, PolicyError> {
        Err(hostile())
    }
    fn export(_: u64, _: u32) -> Result<Vec<AuditEntry>, PolicyError> {
        Err(hostile())
    }
}

impl exports::warden::guard::runtime_config::Guest for Hostile {
    fn audit(
        _: exports::warden::guard::runtime_config::AgentRuntime,
        text: String,
    ) -> Result<Vec<exports::warden::guard::runtime_config::ConfigFinding>, PolicyError> {
        // `spin` loops and `crash` traps, as for tool calls.
        match text.as_str() {
            "spin" => spin(),
            "crash" => crash(),
            _ => Err(hostile()),
        }
    }
    fn harden(_: exports::warden::guard::runtime_config::AgentRuntime, text: String) -> Result<String, PolicyError> {
        match text.as_str() {
            "spin" => spin(),
            "crash" => crash(),
            _ => Err(hostile()),
        }
    }
}

impl exports::warden::guard::tool_review::Guest for Hostile {
    fn review_tools(
        _: String,
        _: Vec<exports::warden::guard::tool_review::ListedTool>,
        _: u64,
    ) -> Result<Vec<exports::warden::guard::tool_review::ToolVerdict>, PolicyError> {
        Err(hostile())
    }
}

impl exports::warden::guard::scan::Guest for Hostile {
    fn scan_documents(
        _: Vec<exports::warden::guard::scan::Document>,
    ) -> Result<exports::warden::guard::scan::ScanReport, PolicyError> {
        Err(hostile())
    }
}

impl exports::warden::guard::asks::Guest for Hostile {
    fn list(
        _: u32,
        _: Option<u64>,
        _: u64,
    ) -> Result<Vec<exports::warden::guard::asks::PendingAsk>, exports::warden::guard::asks::AskError> {
        Err(exports::warden::guard::asks::AskError::Other("hostile guest".into()))
    }
    fn answer(
        _: String,
        _: exports::warden::guard::asks::AskAnswer,
    ) -> Result<exports::warden::guard::asks::AnsweredAsk, exports::warden::guard::asks::AskError> {
        Err(exports::warden::guard::asks::AskError::Other("hostile guest".into()))
    }
    fn recent(
        _: u32,
    ) -> Result<Vec<exports::warden::guard::asks::AnsweredAsk>, exports::warden::guard::asks::AskError> {
        Err(exports::warden::guard::asks::AskError::Other("hostile guest".into()))
    }
}

export!(Hostile);
