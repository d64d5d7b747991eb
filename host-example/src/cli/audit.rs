//! `warden audit ...`: the audit trail from the command line.
//!
//! `verify` and `export` go through the component's `audit` exports.
//! `replay` exports the tool calls kept with `audit.keepInputs` and decides
//! each again in a scratch instance (in-memory storage, a fresh approval
//! secret) configured with the new configuration, then lists the calls whose
//! decision or rule would change. The scratch instance starts with no state:
//! remembered approvals, pins, budgets and rates, the flow check's record of
//! where destinations came from and consent are not there, so a call decided
//! by them (or now decided by them) is listed with `stateful: true`.

use super::{Failure, HostArgs, call_failure, print_json, read_config, start};
use crate::bindings::exports::warden::guard::audit::{AuditEntry, VerifyReport};
use crate::bindings::exports::warden::guard::policy::ToolCall;
use crate::bindings::warden::guard::types::Identity;
use crate::json;
use crate::runtime::Runtime;
use clap::Subcommand;
use serde_json::{Value, json};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Exit code of `warden audit verify` when the chain is broken.
pub const EXIT_BROKEN: i32 = 4;
/// Entries one export call asks the component for (its most).
pub const EXPORT_PAGE: u32 = 500;
/// Prefixes of the rules whose decisions depend on stored state that a replay's scratch instance does not have.
pub const STATEFUL_RULES: &[&str] = &[
    "memory.",
    "budget.",
    "pin.",
    "flow.",
    "gate.",
    "payment.",
    "tools.storage-unavailable",
    "audit.",
    "context.",
    "drift.",
    "profile.",
    "risk.",
];

#[derive(clap::Args, Debug, Clone)]
pub(super) struct Trail {
    /// The Warden configuration (JSON) the component runs with.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The SQLite database that holds the trail, or `--storage postgres://…`.
    #[arg(long, value_name = "FILE|URL", default_value = "warden.db", visible_alias = "storage")]
    db: PathBuf,
}

#[derive(Subcommand, Debug)]
pub(super) enum AuditCommand {
    /// Prove the chain: exit 0 when it holds, 4 naming the first broken link when it does not.
    Verify {
        #[command(flatten)]
        trail: Trail,
    },
    /// Write the entries as JSON lines, oldest first.
    Export {
        #[command(flatten)]
        trail: Trail,
        /// Only entries after this sequence.
        #[arg(long, default_value_t = 0)]
        after: u64,
    },
    /// Decide the kept tool calls again under `--config` and list the decisions that would change.
    Replay {
        #[command(flatten)]
        trail: Trail,
    },
}

fn entries(runtime: &Runtime, after: u64) -> Result<Vec<AuditEntry>, Failure> {
    let mut all = Vec::new();
    let mut after = after;
    loop {
        let page = runtime.audit_export(after, EXPORT_PAGE).map_err(call_failure)?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        all.extend(page);
    }
    Ok(all)
}

fn entry_json(e: &AuditEntry) -> Value {
    let inputs: serde_json::Map<String, Value> =
        e.inputs.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    let mut v = json!({
        "seq": e.seq,
        "atMs": e.at_ms,
        "check": e.check,
        "decision": e.decision,
        "rule": e.rule,
        "policyVersion": e.policy_version,
        "inputs": inputs,
        "prev": e.prev,
        "hash": e.hash,
    });
    let Some(map) = v.as_object_mut() else {
        return v;
    };
    let mut opt = |k: &str, x: &Option<String>| {
        if let Some(x) = x {
            map.insert(k.into(), Value::String(x.clone()));
        }
    };
    opt("observed", &e.observed);
    opt("risk", &e.risk);
    opt("session", &e.session);
    opt("agent", &e.agent);
    if e.unrecorded_before > 0 {
        map.insert("unrecordedBefore".into(), json!(e.unrecorded_before));
    }
    if let Some(k) = &e.kept {
        map.insert(
            "kept".into(),
            json!({"toolName": k.tool_name, "arguments": k.arguments, "cwd": k.cwd,
                   "derivedPaths": k.derived_paths, "redacted": k.redacted}),
        );
    }
    v
}

fn report_json(r: &VerifyReport) -> Value {
    json!({
        "ok": r.ok,
        "checked": r.checked,
        "brokenSeq": r.broken_seq,
        "problem": r.problem,
        "headSeq": r.head_seq,
        "floorSeq": r.floor_seq,
        "unrecorded": r.unrecorded,
        "keyed": r.keyed,
    })
}

fn is_stateful(rule: &str) -> bool {
    STATEFUL_RULES.iter().any(|p| rule.starts_with(p))
}

fn scratch(host: &HostArgs, config: &str) -> Result<Runtime, Failure> {
    let secret = crate::host_context::ephemeral_secret().map_err(Failure::failed)?;
    let dir = super::temp_dir()?;
    let context = crate::host_context::declare(&dir.path().join("replay.db"), None, None, secret);
    let storage = Arc::new(crate::memory_storage::MemoryStorage::default());
    Runtime::new(super::options(host, storage, Some(context)), config).map_err(|e| match e {
        crate::StartError::Config(_) => Failure::invalid(e.to_string()),
        crate::StartError::Load(_) => Failure::failed(e.to_string()),
    })
}

fn replay(host: &HostArgs, config: &str, recorded: &[AuditEntry]) -> Result<Value, Failure> {
    let runtime = scratch(host, config)?;
    let (mut replayed, mut not_kept, mut redacted, mut other_checks) = (0u64, 0u64, 0u64, 0u64);
    let mut changed = Vec::new();
    for e in recorded {
        if e.check != "tool-call" {
            other_checks += 1;
            continue;
        }
        let Some(kept) = &e.kept else {
            not_kept += 1;
            continue;
        };
        if !kept.redacted.is_empty() {
            redacted += 1;
            continue;
        }
        let call = ToolCall {
            tool_name: kept.tool_name.clone(),
            arguments: kept.arguments.clone(),
            call_id: None,
            run_id: None,
            session_id: e.session.clone(),
            now_ms: e.at_ms,
            identity: Identity {
                provider: None,
                account_id: None,
                sender_id: None,
                channel_id: None,
                thread_id: None,
                agent_id: None,
            },
            cwd: kept.cwd.clone(),
            derived_paths: kept.derived_paths.clone(),
        };
        let verdict = runtime.check_tool_call(&call);
        replayed += 1;
        let decision = json::decision_name(verdict.decision);
        if decision != e.decision || verdict.rule != e.rule {
            changed.push(json!({
                "seq": e.seq,
                "tool": kept.tool_name,
                "was": {"decision": e.decision, "rule": e.rule},
                "now": {"decision": decision, "rule": verdict.rule},
                "stateful": is_stateful(&e.rule) || is_stateful(&verdict.rule),
            }));
        }
    }
    Ok(json!({
        "replayed": replayed,
        "changed": changed,
        "skipped": {"notKept": not_kept, "redacted": redacted, "notToolCalls": other_checks},
        "policyVersion": runtime.report().policy_version,
    }))
}

pub(super) fn run(host: &HostArgs, command: AuditCommand, stdout: &mut dyn Write) -> Result<(), Failure> {
    let write_err = |e: std::io::Error| Failure::failed(format!("cannot write the answer: {e}"));
    match command {
        AuditCommand::Verify { trail } => {
            let config = read_config(&trail.config)?;
            let runtime = start(host, &config, &trail.db, Some(&trail.config))?;
            let report = runtime.audit_verify().map_err(call_failure)?;
            print_json(stdout, &report_json(&report))?;
            match (report.ok, report.broken_seq, &report.problem) {
                (true, _, _) => Ok(()),
                (false, seq, problem) => Err(Failure {
                    code: EXIT_BROKEN,
                    message: format!(
                        "the audit trail is broken at entry {}: {}",
                        seq.unwrap_or_default(),
                        problem.as_deref().unwrap_or("unknown")
                    ),
                }),
            }
        }
        AuditCommand::Export { trail, after } => {
            let config = read_config(&trail.config)?;
            let runtime = start(host, &config, &trail.db, Some(&trail.config))?;
            for e in entries(&runtime, after)? {
                writeln!(stdout, "{}", entry_json(&e)).map_err(write_err)?;
            }
            Ok(())
        }
        AuditCommand::Replay { trail } => {
            let config = read_config(&trail.config)?;
            let runtime = start(host, &config, &trail.db, Some(&trail.config))?;
            let recorded = entries(&runtime, 0)?;
            drop(runtime);
            print_json(stdout, &replay(host, &config, &recorded)?)
        }
    }
}
