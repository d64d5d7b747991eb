//! The `audit` section: whether every decision is recorded, what is kept of
//! each request, and how long the trail is.

use crate::config::reader::{Obj, Reader};
use crate::model::CheckStatus;
use serde::Serialize;

/// Fewest entries the trail may be bounded to.
pub const MIN_MAX_ENTRIES: u64 = 16;
/// Most entries the trail may keep, whatever is configured.
pub const MAX_MAX_ENTRIES: u64 = 1_000_000;
/// Default number of entries kept before the oldest are pruned.
pub const DEFAULT_MAX_ENTRIES: u64 = 100_000;
/// Fewest days an entry may be kept.
pub const MIN_MAX_AGE_DAYS: u64 = 1;
/// Most days an entry may be kept (ten years).
pub const MAX_MAX_AGE_DAYS: u64 = 3650;
/// Default number of days an entry is kept.
pub const DEFAULT_MAX_AGE_DAYS: u64 = 90;

const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// The `audit` section: a keyed hash chain of every decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct AuditConfig {
    /// Whether every decision of every check is appended to the trail. On when the section is present.
    pub enabled: bool,
    /// Keep what `warden audit replay` needs of each tool call: the tool, its arguments with secrets
    /// redacted, the working directory and paths. Off by default: only keyed digests are stored.
    pub keep_inputs: bool,
    /// Refuse a tool call or outbound message whose entry cannot be written (`audit.unrecorded`).
    /// Off by default: the decision stands and the gap is counted.
    pub required: bool,
    /// Most entries kept; the oldest are pruned first.
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_MAX_ENTRIES, max = MAX_MAX_ENTRIES)))]
    pub max_entries: u64,
    /// Most days an entry is kept, by the time of the request that appends.
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_MAX_AGE_DAYS, max = MAX_MAX_AGE_DAYS)))]
    pub max_age_days: u64,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            enabled: false,
            keep_inputs: false,
            required: false,
            max_entries: DEFAULT_MAX_ENTRIES,
            max_age_days: DEFAULT_MAX_AGE_DAYS,
        }
    }
}

impl AuditConfig {
    /// Fields of the `audit` section.
    pub const FIELDS: &'static [&'static str] = &["enabled", "keepInputs", "required", "maxEntries", "maxAgeDays"];

    /// Reads the `audit` section; absent means no trail is kept.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> AuditConfig {
        let mut c = AuditConfig::default();
        let Some(obj) = obj else {
            return c;
        };
        c.enabled = r.bool(&obj, "enabled", true);
        c.keep_inputs = r.bool(&obj, "keepInputs", false);
        c.required = r.bool(&obj, "required", false);
        c.max_entries = r.int(&obj, "maxEntries", MIN_MAX_ENTRIES..=MAX_MAX_ENTRIES, DEFAULT_MAX_ENTRIES);
        c.max_age_days = r.int(&obj, "maxAgeDays", MIN_MAX_AGE_DAYS..=MAX_MAX_AGE_DAYS, DEFAULT_MAX_AGE_DAYS);
        c
    }

    /// Whether the section is absent, so the policy version of a
    /// configuration without it does not change.
    pub fn is_absent(&self) -> bool {
        *self == AuditConfig::default()
    }

    /// How long an entry is kept, in milliseconds.
    pub fn max_age_ms(&self) -> u64 {
        self.max_age_days.saturating_mul(DAY_MS)
    }

    /// The trail's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "audit".into(),
            active: self.enabled,
            mode: "enforce".into(),
            reason: (!self.enabled).then(|| "not_configured".into()),
            failure_mode: if self.required { "fail-closed".into() } else { "fail-open".into() },
        }
    }
}
