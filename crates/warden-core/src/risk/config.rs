//! The `risk` section: when a pattern of calls that ended in a deny before
//! is recognized again.

use crate::config::reader::{Obj, Reader};
use crate::model::{CheckStatus, Mode};
use serde::Serialize;

/// Default denies a pattern must have ended in (in different sessions)
/// before its next occurrence asks.
pub const DEFAULT_RECURRENCES: u64 = 2;
/// Most `recurrences`.
pub const MAX_RECURRENCES: u64 = 1000;
/// Default calls in a pattern: the denied call and the ones just before it.
pub const DEFAULT_LENGTH: u64 = 3;
/// Most `length`.
pub const MAX_LENGTH: u64 = 8;
/// Default days a pattern is remembered after its last deny.
pub const DEFAULT_WINDOW_DAYS: u64 = 30;
/// Most `windowDays`.
pub const MAX_WINDOW_DAYS: u64 = 365;
/// Default and most patterns remembered (storage slots).
pub const DEFAULT_MAX_PATTERNS: u64 = 1024;
/// Most `maxPatterns`.
pub const MAX_PATTERNS: u64 = 65_536;

/// The `risk` section: cross-session risk fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct RiskConfig {
    /// Whether patterns are learned and recognized. On when the section is present.
    pub enabled: bool,
    /// `enforce`, or `observe` to report what would have been decided and allow.
    pub mode: Mode,
    /// Denies (in different sessions) a pattern must have ended in before its next occurrence asks.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_RECURRENCES)))]
    pub recurrences: u64,
    /// Calls in a pattern: the denied call and the ones just before it in its session.
    #[cfg_attr(feature = "schema", schemars(range(min = 2, max = MAX_LENGTH)))]
    pub length: u64,
    /// Days a pattern is remembered after its last deny.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_WINDOW_DAYS)))]
    pub window_days: u64,
    /// Patterns remembered; a new pattern may take the place of an older one.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_PATTERNS)))]
    pub max_patterns: u64,
}

impl Default for RiskConfig {
    fn default() -> Self {
        RiskConfig {
            enabled: false,
            mode: Mode::Enforce,
            recurrences: DEFAULT_RECURRENCES,
            length: DEFAULT_LENGTH,
            window_days: DEFAULT_WINDOW_DAYS,
            max_patterns: DEFAULT_MAX_PATTERNS,
        }
    }
}

impl RiskConfig {
    /// Fields of the `risk` section.
    pub const FIELDS: &'static [&'static str] =
        &["enabled", "mode", "recurrences", "length", "windowDays", "maxPatterns"];

    /// Reads the `risk` section; absent means the check is off.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> RiskConfig {
        let mut c = RiskConfig::default();
        let Some(obj) = obj else {
            return c;
        };
        c.enabled = r.bool(&obj, "enabled", true);
        c.mode = crate::config::reader::mode(r, &obj);
        c.recurrences = r.int(&obj, "recurrences", 1..=MAX_RECURRENCES, DEFAULT_RECURRENCES);
        c.length = r.int(&obj, "length", 2..=MAX_LENGTH, DEFAULT_LENGTH);
        c.window_days = r.int(&obj, "windowDays", 1..=MAX_WINDOW_DAYS, DEFAULT_WINDOW_DAYS);
        c.max_patterns = r.int(&obj, "maxPatterns", 1..=MAX_PATTERNS, DEFAULT_MAX_PATTERNS);
        c
    }

    /// Whether the section is absent, so the policy version does not change.
    pub fn is_absent(&self) -> bool {
        *self == RiskConfig::default()
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "risk".into(),
            active: self.enabled,
            mode: self.mode.as_str().into(),
            reason: (!self.enabled).then(|| "not_configured".into()),
            failure_mode: "fail-open".into(),
        }
    }

    /// Calls in a pattern.
    pub fn length(&self) -> usize {
        usize::try_from(self.length).unwrap_or(2).clamp(2, MAX_LENGTH as usize)
    }

    /// The remembering window in milliseconds.
    pub fn window_ms(&self) -> u64 {
        self.window_days.saturating_mul(crate::profile::DAY_MS)
    }
}
