//! The `asks` export: the approval inbox, WIT records to the core's and back.

use crate::exports::warden::guard::asks::{AnsweredAsk, AskAnswer, AskError, Guest, PendingAsk};
use crate::{Component, convert, ports, with_policy};
use alloc::string::String;
use alloc::vec::Vec;
use warden_core::asks as core;

fn error(e: core::AskError) -> AskError {
    match e {
        core::AskError::NotConfigured => AskError::NotConfigured,
        core::AskError::UnknownAsk(m) => AskError::UnknownAsk(m),
        core::AskError::Expired(m) => AskError::Expired(m),
        core::AskError::ScopeTooBroad(m) => AskError::ScopeTooBroad(m),
        core::AskError::InvalidInput(m) => AskError::InvalidInput(m),
        core::AskError::Storage(m) => AskError::Storage(m),
        core::AskError::Other(m) => AskError::Other(m),
    }
}

fn configured<T>(f: impl FnOnce(&warden_core::Warden) -> Result<T, core::AskError>) -> Result<T, AskError> {
    with_policy(|policy| match policy {
        Some(w) => f(w).map_err(error),
        None => Err(AskError::NotConfigured),
    })
}

fn pending(a: core::PendingAsk) -> PendingAsk {
    PendingAsk {
        id: a.id,
        tool_name: a.tool_name,
        arguments: a.arguments,
        rule: a.rule,
        reason: a.reason,
        risk: convert::risk(a.risk),
        scope: convert::scope(a.scope),
        agent_id: a.agent_id,
        sender_id: a.sender_id,
        provider: a.provider,
        channel_id: a.channel_id,
        session_id: a.session_id,
        call_id: a.call_id,
        approval_key: a.approval_key,
        created_ms: a.created_ms,
        expires_ms: a.expires_ms,
    }
}

fn answered(a: core::Answered) -> AnsweredAsk {
    AnsweredAsk {
        id: a.id,
        tool_name: a.tool_name,
        rule: a.rule,
        allow: a.allow,
        scope: convert::scope(a.scope),
        answered_ms: a.answered_ms,
    }
}

impl Guest for Component {
    fn list(limit: u32, before: Option<u64>, now_ms: u64) -> Result<Vec<PendingAsk>, AskError> {
        configured(|w| w.asks_list(&ports::host(), limit, before, now_ms))
            .map(|all| all.into_iter().map(pending).collect())
    }

    fn answer(id: String, answer: AskAnswer) -> Result<AnsweredAsk, AskError> {
        let answer =
            core::Answer { allow: answer.allow, scope: convert::scope_in(answer.scope), now_ms: answer.now_ms };
        configured(|w| w.asks_answer(&ports::host(), &id, answer)).map(answered)
    }

    fn recent(limit: u32) -> Result<Vec<AnsweredAsk>, AskError> {
        configured(|w| w.asks_recent(&ports::host(), limit)).map(|all| all.into_iter().map(answered).collect())
    }
}
