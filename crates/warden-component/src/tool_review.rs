//! The `tool-review` export: WIT records to the core's review and back.

use crate::exports::warden::guard::tool_review::{Guest, ListedTool, ToolOutcome, ToolVerdict};
use crate::warden::guard::types::PolicyError;
use crate::{Component, configured, ports};
use alloc::string::String;
use alloc::vec::Vec;
use warden_core::mcp_review as core;

impl Guest for Component {
    fn review_tools(server: String, tools: Vec<ListedTool>, now_ms: u64) -> Result<Vec<ToolVerdict>, PolicyError> {
        let tools: Vec<core::ListedTool> = tools
            .into_iter()
            .map(|t| core::ListedTool {
                name: t.name,
                description: t.description,
                input_schema: t.input_schema,
                other: t.other,
            })
            .collect();
        configured(|w| w.review_tools(&ports::host(), &server, &tools, now_ms))
            .map(|reviews| reviews.into_iter().map(verdict).collect())
    }
}

fn verdict(r: core::ToolReview) -> ToolVerdict {
    ToolVerdict {
        name: r.name,
        outcome: match r.outcome {
            core::Outcome::Kept => ToolOutcome::Kept,
            core::Outcome::Pinned => ToolOutcome::Pinned,
            core::Outcome::Poisoned => ToolOutcome::Poisoned,
            core::Outcome::Changed => ToolOutcome::Changed,
            core::Outcome::Refused => ToolOutcome::Refused,
        },
        rule: r.rule,
        reason: r.reason,
        approval_key: r.approval_key,
    }
}
