//! The `profile` section: how agent profiles are learned and what a call outside one decides.

use crate::config::reader::{Obj, Reader};
use crate::model::{CheckStatus, Mode};
use serde::Serialize;

/// Default calls an agent makes before its profile is used.
pub const DEFAULT_LEARNING_CALLS: u64 = 200;
/// Most `learningCalls`.
pub const MAX_LEARNING_CALLS: u64 = 1_000_000;
/// Default days an agent is learning, besides its calls.
pub const DEFAULT_LEARNING_DAYS: u64 = 0;
/// Most `learningDays`.
pub const MAX_LEARNING_DAYS: u64 = 365;
/// Default days an item stays in a profile without being seen again.
pub const DEFAULT_WINDOW_DAYS: u64 = 30;
/// Most `windowDays`.
pub const MAX_WINDOW_DAYS: u64 = 365;
/// Default and most tools, hosts and path prefixes kept per agent; past it
/// the least recently seen is forgotten.
pub const DEFAULT_MAX_ITEMS: u64 = 256;
/// The most `maxTools`, `maxHosts` and `maxPaths` may be, so a profile stays well within one storage value.
pub const MAX_ITEMS: u64 = 2048;
/// Default calls per hour below which the rate never counts as unusual.
pub const DEFAULT_MIN_RATE_PER_HOUR: u64 = 60;
/// Most `minRatePerHour`.
pub const MAX_RATE_PER_HOUR: u64 = 1_000_000;
/// Default multiple of the busiest learned hour that counts as unusual.
pub const DEFAULT_RATE_FACTOR: u64 = 3;
/// Most `rateFactor`.
pub const MAX_RATE_FACTOR: u64 = 100;

/// The `profile` section: per-agent baselines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct ProfileConfig {
    /// Whether agent profiles are learned. On when the section is present.
    pub enabled: bool,
    /// `enforce`, or `observe` to report what would have been decided and allow.
    pub mode: Mode,
    /// Whether a call outside the profile asks (`true`) or is only a signal (`false`, the default).
    pub enforce: bool,
    /// Calls an agent makes before its profile is used.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_LEARNING_CALLS)))]
    pub learning_calls: u64,
    /// Days since an agent's first call before its profile is used.
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_LEARNING_DAYS)))]
    pub learning_days: u64,
    /// Days an item stays in a profile without being seen again.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_WINDOW_DAYS)))]
    pub window_days: u64,
    /// Most tools kept per agent.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_ITEMS)))]
    pub max_tools: u64,
    /// Most hosts kept per agent.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_ITEMS)))]
    pub max_hosts: u64,
    /// Most path prefixes kept per agent.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_ITEMS)))]
    pub max_paths: u64,
    /// Calls per hour that never count as unusual.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_RATE_PER_HOUR)))]
    pub min_rate_per_hour: u64,
    /// Multiple of the busiest learned hour past which the rate is unusual (`profile.rate`).
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_RATE_FACTOR)))]
    pub rate_factor: u64,
}

impl Default for ProfileConfig {
    fn default() -> Self {
        ProfileConfig {
            enabled: false,
            mode: Mode::Enforce,
            enforce: false,
            learning_calls: DEFAULT_LEARNING_CALLS,
            learning_days: DEFAULT_LEARNING_DAYS,
            window_days: DEFAULT_WINDOW_DAYS,
            max_tools: DEFAULT_MAX_ITEMS,
            max_hosts: DEFAULT_MAX_ITEMS,
            max_paths: DEFAULT_MAX_ITEMS,
            min_rate_per_hour: DEFAULT_MIN_RATE_PER_HOUR,
            rate_factor: DEFAULT_RATE_FACTOR,
        }
    }
}

fn size(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl ProfileConfig {
    /// Fields of the `profile` section.
    pub const FIELDS: &'static [&'static str] = &[
        "enabled",
        "mode",
        "enforce",
        "learningCalls",
        "learningDays",
        "windowDays",
        "maxTools",
        "maxHosts",
        "maxPaths",
        "minRatePerHour",
        "rateFactor",
    ];

    /// Reads the `profile` section; absent means the check is off.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> ProfileConfig {
        let mut c = ProfileConfig::default();
        let Some(obj) = obj else {
            return c;
        };
        c.enabled = r.bool(&obj, "enabled", true);
        c.mode = crate::config::reader::mode(r, &obj);
        c.enforce = r.bool(&obj, "enforce", false);
        c.learning_calls = r.int(&obj, "learningCalls", 1..=MAX_LEARNING_CALLS, DEFAULT_LEARNING_CALLS);
        c.learning_days = r.int(&obj, "learningDays", 0..=MAX_LEARNING_DAYS, DEFAULT_LEARNING_DAYS);
        c.window_days = r.int(&obj, "windowDays", 1..=MAX_WINDOW_DAYS, DEFAULT_WINDOW_DAYS);
        c.max_tools = r.int(&obj, "maxTools", 1..=MAX_ITEMS, DEFAULT_MAX_ITEMS);
        c.max_hosts = r.int(&obj, "maxHosts", 1..=MAX_ITEMS, DEFAULT_MAX_ITEMS);
        c.max_paths = r.int(&obj, "maxPaths", 1..=MAX_ITEMS, DEFAULT_MAX_ITEMS);
        c.min_rate_per_hour = r.int(&obj, "minRatePerHour", 1..=MAX_RATE_PER_HOUR, DEFAULT_MIN_RATE_PER_HOUR);
        c.rate_factor = r.int(&obj, "rateFactor", 1..=MAX_RATE_FACTOR, DEFAULT_RATE_FACTOR);
        c
    }

    /// Whether the section is absent, so the policy version does not change.
    pub fn is_absent(&self) -> bool {
        *self == ProfileConfig::default()
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "profile".into(),
            active: self.enabled,
            mode: self.mode.as_str().into(),
            reason: (!self.enabled).then(|| "not_configured".into()),
            failure_mode: "fail-open".into(),
        }
    }

    pub fn max_tools(&self) -> usize {
        size(self.max_tools)
    }

    pub fn max_hosts(&self) -> usize {
        size(self.max_hosts)
    }

    pub fn max_paths(&self) -> usize {
        size(self.max_paths)
    }
}
