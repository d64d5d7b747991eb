//! `warden demo`: a bundled session played through the real component, host,
//! and SQLite storage, printed as a table of decisions.
//!
//! One assistant serves a team in Teams. Alice wakes it; while her answer is
//! owed, a message in her chat tries to get the agent to write elsewhere. Then
//! Bob wakes it, and a run that never settles shows the pin's expiry.

use super::{Failure, HostArgs, start, temp_dir};
use crate::bindings::exports::warden::guard::policy::{ToolCall, TurnEnd, TurnStart};
use crate::bindings::warden::guard::types::Identity;
use crate::json::{decision_name, now_ms};
use crate::runtime::Runtime;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// The demo's configuration, also shipped as an example.
pub const DEMO_CONFIG: &str = include_str!("../../demo/config.json");

const SESSION: &str = "teams:assistant";
const MINUTE_MS: u64 = 60_000;

struct Row {
    who: &'static str,
    action: String,
    decision: String,
    rule: String,
    reason: String,
}

struct Script<'a> {
    runtime: &'a Runtime,
    t0: u64,
    rows: Vec<Row>,
}

impl Script<'_> {
    fn wake(&mut self, who: &'static str, run: &str, chat: &str, at_min: u64) -> Result<(), Failure> {
        let pin = self
            .runtime
            .start_turn(&TurnStart {
                session_id: SESSION.into(),
                run_id: Some(run.into()),
                chat_id: Some(chat.into()),
                label: Some(who.into()),
                now_ms: self.t0 + at_min * MINUTE_MS,
            })
            .map_err(|e| Failure::failed(e.to_string()))?;
        let detail = match pin {
            Some(p) => format!(
                "reply pinned to {} ({}) for up to {} min",
                p.label,
                p.chat_id,
                (p.expires_at_ms - p.pinned_at_ms) / MINUTE_MS
            ),
            None => "no pin".into(),
        };
        self.rows.push(Row {
            who,
            action: format!("messages the agent in chat {chat}"),
            decision: "start".into(),
            rule: "start-turn".into(),
            reason: detail,
        });
        Ok(())
    }

    fn settle(&mut self, run: &str, at_min: u64) -> Result<(), Failure> {
        self.runtime
            .settle_turn(&TurnEnd {
                session_id: SESSION.into(),
                run_id: Some(run.into()),
                now_ms: self.t0 + at_min * MINUTE_MS,
            })
            .map_err(|e| Failure::failed(e.to_string()))?;
        self.rows.push(Row {
            who: "agent",
            action: "finishes its answer".into(),
            decision: "settle".into(),
            rule: "settle-turn".into(),
            reason: "the pin is cleared".into(),
        });
        Ok(())
    }

    fn tool(&mut self, who: &'static str, tool: &str, args: serde_json::Value, at_min: u64, note: &str) {
        let shown = format!("{tool} {args}{note}");
        let verdict = self.runtime.check_tool_call(&ToolCall {
            tool_name: tool.into(),
            arguments: args.to_string(),
            call_id: None,
            run_id: None,
            session_id: Some(SESSION.into()),
            now_ms: self.t0 + at_min * MINUTE_MS,
            identity: Identity {
                provider: Some("msteams".into()),
                account_id: None,
                sender_id: None,
                channel_id: None,
                thread_id: None,
                agent_id: Some("assistant".into()),
            },
            cwd: None,
            derived_paths: Vec::new(),
        });
        self.rows.push(Row {
            who,
            action: shown,
            decision: decision_name(verdict.decision).into(),
            rule: verdict.rule,
            reason: verdict.reason,
        });
    }
}

fn play(runtime: &Runtime) -> Result<Vec<Row>, Failure> {
    let mut s = Script { runtime, t0: now_ms(), rows: Vec::new() };
    s.wake("Alice", "run-1", "19:alice", 0)?;
    s.tool("agent", "teams_send_chat_message", json!({"chat": "19:alice", "text": "On it."}), 0, "");
    s.tool(
        "agent",
        "teams_send_chat_message",
        json!({"chat": "19:bob", "text": "Alice says: send me the Q3 numbers"}),
        1,
        "  (Alice's message asked for this)",
    );
    s.tool("agent", "teams_send_chat_message", json!({"chat": "Alice", "text": "Done"}), 1, "  (label, not ID)");
    s.tool("agent", "teams_send_channel_message", json!({"channel": "general", "text": "FYI"}), 2, "");
    s.tool("agent", "teams_create_chat", json!({"members": ["carol@example.com"]}), 2, "");
    s.tool("agent", "calendar_list", json!({"day": "today"}), 3, "  (reading is never pinned)");
    s.settle("run-1", 4)?;
    s.wake("Bob", "run-2", "19:bob", 5)?;
    s.tool("agent", "teams_send_chat_message", json!({"chat": "19:bob", "text": "Here you go"}), 5, "");
    s.tool("agent", "teams_send_chat_message", json!({"chat": "19:alice", "text": "Bob asked about you"}), 6, "");
    // The run crashes and never settles: the pin expires after its TTL.
    s.tool(
        "agent",
        "teams_send_chat_message",
        json!({"chat": "19:alice", "text": "Good morning"}),
        5 + 16,
        "  (16 min later, run never settled)",
    );
    Ok(s.rows)
}

fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    }
}

fn print(rows: &[Row], db: &std::path::Path, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "Warden demo: one assistant, two people, reply pinning enforced by the component.")?;
    writeln!(out, "Storage: {}\n", db.display())?;
    let action_width = rows.iter().map(|r| r.action.chars().count()).max().unwrap_or(0).min(78);
    let rule_width = rows.iter().map(|r| r.rule.len()).max().unwrap_or(0);
    writeln!(
        out,
        "{:>2}  {:<6} {:<aw$}  {:<8} {:<rw$}",
        "#",
        "who",
        "action",
        "decision",
        "rule",
        aw = action_width,
        rw = rule_width
    )?;
    writeln!(out, "{}", "-".repeat(2 + 2 + 7 + action_width + 2 + 9 + rule_width))?;
    for (i, r) in rows.iter().enumerate() {
        let action: String = r.action.chars().take(action_width).collect();
        writeln!(
            out,
            "{:>2}  {:<6} {:<aw$}  {:<8} {:<rw$}",
            i + 1,
            r.who,
            action,
            r.decision,
            r.rule,
            aw = action_width,
            rw = rule_width
        )?;
        writeln!(out, "{:>11}{}", "", first_sentence(&r.reason))?;
    }
    writeln!(out)?;
    let denied = rows.iter().filter(|r| r.decision == "deny").count();
    let allowed = rows.iter().filter(|r| r.decision == "allow").count();
    writeln!(out, "{allowed} allowed, {denied} denied. Every decision above came from the component through wasmtime.")
}

/// Plays the demo and prints the table.
pub fn run(host: &HostArgs, db: Option<PathBuf>, out: &mut dyn Write) -> Result<(), Failure> {
    let dir = temp_dir()?;
    let db = db.unwrap_or_else(|| dir.path().join("demo.db"));
    let runtime = start(host, DEMO_CONFIG, &db)?;
    let rows = play(&runtime)?;
    print(&rows, &db, out).map_err(|e| Failure::failed(format!("cannot print the demo: {e}")))
}
