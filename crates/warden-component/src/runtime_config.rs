//! The `runtime-config` export: configuration audit and hardening, which
//! needs no policy.

use crate::exports::warden::guard::runtime_config::{AgentRuntime, ConfigFinding, ConfigFix, FixAction, Guest};
use crate::warden::guard::types::{PolicyError, Risk};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use warden_core::harden;

fn runtime(r: AgentRuntime) -> harden::AgentRuntime {
    match r {
        AgentRuntime::Openclaw => harden::AgentRuntime::OpenClaw,
        AgentRuntime::Hermes => harden::AgentRuntime::Hermes,
        AgentRuntime::ClaudeCode => harden::AgentRuntime::ClaudeCode,
    }
}

fn risk(r: warden_core::model::Risk) -> Risk {
    match r {
        warden_core::model::Risk::Low => Risk::Low,
        warden_core::model::Risk::Medium => Risk::Medium,
        warden_core::model::Risk::High => Risk::High,
        warden_core::model::Risk::Critical => Risk::Critical,
    }
}

fn finding(f: harden::Finding) -> ConfigFinding {
    ConfigFinding {
        rule: f.rule.to_string(),
        risk: risk(f.risk),
        path: f.path,
        detail: f.detail,
        fix: f.fix.map(|x| ConfigFix {
            action: match x.action {
                harden::FixAction::Set => FixAction::Set,
                harden::FixAction::Remove => FixAction::Remove,
                harden::FixAction::AddItem => FixAction::AddItem,
                harden::FixAction::RemoveItem => FixAction::RemoveItem,
            },
            path: harden::tree::display(&x.path),
            value: x.value.map(|v| v.to_string()),
        }),
    }
}

impl Guest for crate::Component {
    fn audit(r: AgentRuntime, text: String) -> Result<Vec<ConfigFinding>, PolicyError> {
        harden::audit(runtime(r), &text)
            .map(|found| found.into_iter().map(finding).collect())
            .map_err(crate::convert::policy_error)
    }

    fn harden(r: AgentRuntime, text: String) -> Result<String, PolicyError> {
        harden::harden(runtime(r), &text).map_err(crate::convert::policy_error)
    }
}
