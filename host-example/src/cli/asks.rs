//! `warden asks ...`: the approval inbox in the terminal.
//!
//! `list` shows the pending asks (newest first); `approve ID --scope S` and
//! `deny ID` answer one through the component's `asks` export, which records
//! exactly what `warden approve` would with the ask's key and removes the
//! ask. An unknown, expired or too-broad answer is one line naming the field,
//! exit code 2, and nothing is recorded.

use super::{Failure, HostArgs, Policy, print_json, read_config, start};
use crate::bindings::exports::warden::guard::asks::{AnsweredAsk, AskAnswer, AskError, PendingAsk};
use crate::json::{self, ScopeJson};
use crate::runtime::AskCallError;
use clap::Subcommand;
use serde::Serialize;
use std::io::Write;

/// Asks `warden asks list` shows when no limit is given (the component's most).
pub const DEFAULT_LIST_LIMIT: u32 = 64;
/// Recent answers the service lists (the component's most).
pub const RECENT_LIMIT: u32 = 50;

#[derive(Subcommand, Debug)]
pub(super) enum AsksCommand {
    /// List the pending asks, newest first.
    List {
        #[command(flatten)]
        policy: Policy,
        /// At most this many (1-64).
        #[arg(long, default_value_t = DEFAULT_LIST_LIMIT)]
        limit: u32,
        /// Only asks created before this time, in milliseconds since the Unix epoch.
        #[arg(long)]
        before: Option<u64>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Allow a pending ask.
    Approve {
        #[command(flatten)]
        policy: Policy,
        /// The ask's ID, as `list` shows it.
        id: String,
        /// How long the answer is remembered; at most the scope the ask offers.
        #[arg(long, value_enum, default_value = "once")]
        scope: ScopeArg,
    },
    /// Deny a pending ask (remembered for the ask's scope, or `--scope`).
    Deny {
        #[command(flatten)]
        policy: Policy,
        /// The ask's ID, as `list` shows it.
        id: String,
        /// How long the refusal is remembered.
        #[arg(long, value_enum, default_value = "once")]
        scope: ScopeArg,
    },
}

/// `--scope`.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub(super) enum ScopeArg {
    Once,
    Session,
    Always,
}

impl From<ScopeArg> for ScopeJson {
    fn from(s: ScopeArg) -> Self {
        match s {
            ScopeArg::Once => ScopeJson::Once,
            ScopeArg::Session => ScopeJson::Session,
            ScopeArg::Always => ScopeJson::Always,
        }
    }
}

/// A pending ask as JSON (`warden asks list --json`, `GET /v1/asks`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingAskJson {
    pub id: String,
    pub tool_name: String,
    pub arguments: String,
    pub rule: String,
    pub reason: String,
    pub risk: &'static str,
    pub scope: ScopeJson,
    pub agent_id: Option<String>,
    pub sender_id: Option<String>,
    pub provider: Option<String>,
    pub channel_id: Option<String>,
    pub session_id: Option<String>,
    pub call_id: Option<String>,
    pub approval_key: String,
    pub created_ms: u64,
    pub expires_ms: u64,
}

impl From<&PendingAsk> for PendingAskJson {
    fn from(a: &PendingAsk) -> Self {
        PendingAskJson {
            id: a.id.clone(),
            tool_name: a.tool_name.clone(),
            arguments: a.arguments.clone(),
            rule: a.rule.clone(),
            reason: a.reason.clone(),
            risk: json::risk_name(a.risk),
            scope: a.scope.into(),
            agent_id: a.agent_id.clone(),
            sender_id: a.sender_id.clone(),
            provider: a.provider.clone(),
            channel_id: a.channel_id.clone(),
            session_id: a.session_id.clone(),
            call_id: a.call_id.clone(),
            approval_key: a.approval_key.clone(),
            created_ms: a.created_ms,
            expires_ms: a.expires_ms,
        }
    }
}

/// An answered ask as JSON.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnsweredAskJson {
    pub id: String,
    pub tool_name: String,
    pub rule: String,
    pub answer: &'static str,
    pub scope: ScopeJson,
    pub answered_ms: u64,
}

impl From<&AnsweredAsk> for AnsweredAskJson {
    fn from(a: &AnsweredAsk) -> Self {
        AnsweredAskJson {
            id: a.id.clone(),
            tool_name: a.tool_name.clone(),
            rule: a.rule.clone(),
            answer: if a.allow { "allow" } else { "deny" },
            scope: a.scope.into(),
            answered_ms: a.answered_ms,
        }
    }
}

/// Whether an inbox error is the caller's to fix (a bad ID, an expired ask, a too-broad scope).
pub fn is_input_error(e: &AskCallError) -> bool {
    matches!(
        e,
        AskCallError::Ask(
            AskError::UnknownAsk(_) | AskError::Expired(_) | AskError::ScopeTooBroad(_) | AskError::InvalidInput(_)
        )
    )
}

fn failure(e: AskCallError) -> Failure {
    if is_input_error(&e) { Failure::invalid(e.to_string()) } else { Failure::failed(e.to_string()) }
}

fn open(host: &HostArgs, policy: &Policy) -> Result<crate::Runtime, Failure> {
    let policy = policy.resolve()?;
    let config = read_config(&policy.config)?;
    start(host, &config, &policy.db, Some(&policy.config))
}

/// One line of the table: text with control characters escaped, so an
/// argument cannot move the cursor or rewrite the terminal.
fn plain(text: &str) -> String {
    text.chars().flat_map(char::escape_debug).collect()
}

pub(super) fn run(host: &HostArgs, command: AsksCommand, stdout: &mut dyn Write) -> Result<(), Failure> {
    match command {
        AsksCommand::List { policy, limit, before, json: as_json } => {
            let runtime = open(host, &policy)?;
            let asks = runtime.asks_list(limit, before, json::now_ms()).map_err(failure)?;
            if as_json {
                let all: Vec<PendingAskJson> = asks.iter().map(PendingAskJson::from).collect();
                return print_json(stdout, &serde_json::json!({ "asks": all }));
            }
            let write = |stdout: &mut dyn Write, line: String| {
                writeln!(stdout, "{line}").map_err(|e| Failure::failed(format!("cannot write: {e}")))
            };
            if asks.is_empty() {
                return write(stdout, "no pending asks".into());
            }
            for a in &asks {
                let j = PendingAskJson::from(a);
                write(
                    stdout,
                    format!(
                        "{}  {}  {}  risk {}  scope up to {}  agent {}  session {}",
                        j.id,
                        plain(&j.tool_name),
                        j.rule,
                        j.risk,
                        serde_json::to_value(j.scope)
                            .ok()
                            .and_then(|v| v.as_str().map(String::from))
                            .unwrap_or_default(),
                        plain(j.agent_id.as_deref().unwrap_or("-")),
                        plain(j.session_id.as_deref().unwrap_or("-")),
                    ),
                )?;
                write(stdout, format!("    {}", plain(&j.reason)))?;
                write(stdout, format!("    {}", plain(&j.arguments.replace('\n', " "))))?;
            }
            Ok(())
        }
        AsksCommand::Approve { policy, id, scope } => answer(host, &policy, &id, true, scope, stdout),
        AsksCommand::Deny { policy, id, scope } => answer(host, &policy, &id, false, scope, stdout),
    }
}

fn answer(
    host: &HostArgs,
    policy: &Policy,
    id: &str,
    allow: bool,
    scope: ScopeArg,
    stdout: &mut dyn Write,
) -> Result<(), Failure> {
    let runtime = open(host, policy)?;
    let scope: ScopeJson = scope.into();
    let answered =
        runtime.asks_answer(id, AskAnswer { allow, scope: scope.into(), now_ms: json::now_ms() }).map_err(failure)?;
    print_json(stdout, &serde_json::json!({ "answered": AnsweredAskJson::from(&answered) }))
}
