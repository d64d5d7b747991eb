//! The `flow` section: how each class of destination decides, per tool kind.

use crate::config::reader::{Node, Obj, Reader, Text, shown};
use crate::model::{CheckStatus, Decision, Mode};
use crate::prelude::*;
use crate::tools::taxonomy::Kind;
use serde::Serialize;

/// Shortest lifetime of a recorded value, in minutes.
pub const MIN_TTL_MINUTES: u64 = 1;
/// Longest lifetime of a recorded value, in minutes (30 days).
pub const MAX_TTL_MINUTES: u64 = 30 * 24 * 60;
/// Default lifetime of a recorded value, in minutes (one day).
pub const DEFAULT_TTL_MINUTES: u64 = 24 * 60;
/// Fewest values a session may hold.
pub const MIN_VALUES_PER_SESSION: u64 = 16;
/// Most values a session may hold, whatever is configured: the session's
/// record stays well under a storage value's size.
pub const MAX_VALUES_PER_SESSION: u64 = 4000;
/// Default number of values a session holds before the oldest are evicted.
pub const DEFAULT_VALUES_PER_SESSION: u64 = 1024;
/// Most `trustedHosts` and most `trusted` globs.
pub const MAX_TRUSTED: usize = 256;
/// Longest glob of `trustedHosts` or `trusted`, in characters.
pub const MAX_GLOB_CHARS: usize = 256;

/// The kinds whose destinations the flow step classes.
pub const KINDS: &[Kind] = &[Kind::Message, Kind::Share, Kind::Invite, Kind::Payment, Kind::Fetch];

/// What a class of destination decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ClassDecision {
    Allow,
    Ask,
    Deny,
}

impl ClassDecision {
    pub fn decision(self) -> Decision {
        match self {
            ClassDecision::Allow => Decision::Allow,
            ClassDecision::Ask => Decision::Ask,
            ClassDecision::Deny => Decision::Deny,
        }
    }
}

/// Decisions of one tool kind; absent fields take the section's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct KindDecisions {
    /// A destination seen only in content the agent read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untrusted: Option<ClassDecision>,
    /// A destination neither consented, trusted, named, approved nor seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<ClassDecision>,
    /// A link in an outgoing body whose host is not trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<ClassDecision>,
}

/// Per-kind overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct KindOverrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<KindDecisions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<KindDecisions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invite: Option<KindDecisions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<KindDecisions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch: Option<KindDecisions>,
}

impl KindOverrides {
    fn get(&self, kind: Kind) -> Option<&KindDecisions> {
        match kind {
            Kind::Message => self.message.as_ref(),
            Kind::Share => self.share.as_ref(),
            Kind::Invite => self.invite.as_ref(),
            Kind::Payment => self.payment.as_ref(),
            Kind::Fetch => self.fetch.as_ref(),
            _ => None,
        }
    }

    fn set(&mut self, kind: Kind, value: KindDecisions) {
        let slot = match kind {
            Kind::Message => &mut self.message,
            Kind::Share => &mut self.share,
            Kind::Invite => &mut self.invite,
            Kind::Payment => &mut self.payment,
            Kind::Fetch => &mut self.fetch,
            _ => return,
        };
        *slot = Some(value);
    }
}

/// The `flow` section: where a destination came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct FlowConfig {
    /// Whether destinations are classed by where they came from. On when the section is present.
    pub enabled: bool,
    /// `enforce`, or `observe` to report the decision in `observed` and allow.
    pub mode: Mode,
    /// A destination seen only in content the agent read (`flow.untrusted-destination`). Default `ask`.
    pub untrusted: ClassDecision,
    /// A destination nobody named, consented, trusted or approved (`flow.unknown-destination`). Default `ask`.
    pub unknown: ClassDecision,
    /// A link in an outgoing body whose host is not trusted (`flow.foreign-link`). Default `ask`.
    pub links: ClassDecision,
    /// Overrides per tool kind: `message`, `share`, `invite`, `payment`, `fetch`.
    pub kinds: KindOverrides,
    /// Hosts trusted as link and fetch destinations, as globs (`*.example.com`; `*` matches any run of characters).
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_TRUSTED)))]
    pub trusted_hosts: Vec<String>,
    /// Destinations always trusted, as globs over their canonical form (`*@example.com`, `+4930*`).
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_TRUSTED)))]
    pub trusted: Vec<String>,
    /// How long a recorded value counts, in minutes.
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_TTL_MINUTES, max = MAX_TTL_MINUTES)))]
    pub ttl_minutes: u64,
    /// Most values one session holds; the oldest are evicted first.
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_VALUES_PER_SESSION, max = MAX_VALUES_PER_SESSION)))]
    pub max_values_per_session: u64,
    /// Whether an outbound message to a recipient the person named in this session passes `gate.no-consent`.
    pub named_counts_as_consent: bool,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            enabled: false,
            mode: Mode::Enforce,
            untrusted: ClassDecision::Ask,
            unknown: ClassDecision::Ask,
            links: ClassDecision::Ask,
            kinds: KindOverrides::default(),
            trusted_hosts: Vec::new(),
            trusted: Vec::new(),
            ttl_minutes: DEFAULT_TTL_MINUTES,
            max_values_per_session: DEFAULT_VALUES_PER_SESSION,
            named_counts_as_consent: false,
        }
    }
}

const GLOB: Text = Text::non_blank(MAX_GLOB_CHARS).matching(is_glob, "must be visible characters without spaces");

fn is_glob(s: &str) -> bool {
    !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn read_decision(r: &mut Reader, node: &Node<'_>) -> Option<ClassDecision> {
    match node.value.as_str() {
        Some("allow") => Some(ClassDecision::Allow),
        Some("ask") => Some(ClassDecision::Ask),
        Some("deny") => Some(ClassDecision::Deny),
        _ => {
            r.error(node.path.clone(), format!("must be `allow`, `ask` or `deny`, got `{}`", shown(node.value)));
            None
        }
    }
}

fn decision_field(r: &mut Reader, obj: &Obj<'_>, key: &str) -> Option<ClassDecision> {
    obj.get(key).and_then(|n| read_decision(r, &n))
}

const CLASS_FIELDS: &[&str] = &["untrusted", "unknown", "links"];

fn read_kinds(r: &mut Reader, obj: &Obj<'_>) -> KindOverrides {
    let mut out = KindOverrides::default();
    let names: Vec<&str> = KINDS.iter().map(|k| k.as_str()).collect();
    let Some(kinds) = r.section(obj, "kinds", &names) else {
        return out;
    };
    for kind in KINDS {
        let Some(section) = r.section(&kinds, kind.as_str(), CLASS_FIELDS) else {
            continue;
        };
        let d = KindDecisions {
            untrusted: decision_field(r, &section, "untrusted"),
            unknown: decision_field(r, &section, "unknown"),
            links: decision_field(r, &section, "links"),
        };
        out.set(*kind, d);
    }
    out
}

fn read_globs(r: &mut Reader, obj: &Obj<'_>, key: &str, what: &str) -> Vec<String> {
    let item = |r: &mut Reader, n: Node<'_>| r.string_value(&n, GLOB).map(|s| s.to_ascii_lowercase());
    r.unique_list(obj, key, MAX_TRUSTED, item, what, "", Clone::clone).unwrap_or_default()
}

impl FlowConfig {
    /// Fields of the `flow` section.
    pub const FIELDS: &'static [&'static str] = &[
        "enabled",
        "mode",
        "untrusted",
        "unknown",
        "links",
        "kinds",
        "trustedHosts",
        "trusted",
        "ttlMinutes",
        "maxValuesPerSession",
        "namedCountsAsConsent",
    ];

    /// Reads the `flow` section; absent means the check is off.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> FlowConfig {
        let mut c = FlowConfig::default();
        let Some(obj) = obj else {
            return c;
        };
        c.enabled = r.bool(&obj, "enabled", true);
        c.mode = crate::config::reader::mode(r, &obj);
        c.untrusted = decision_field(r, &obj, "untrusted").unwrap_or(c.untrusted);
        c.unknown = decision_field(r, &obj, "unknown").unwrap_or(c.unknown);
        c.links = decision_field(r, &obj, "links").unwrap_or(c.links);
        c.kinds = read_kinds(r, &obj);
        c.trusted_hosts = read_globs(r, &obj, "trustedHosts", "host glob");
        c.trusted = read_globs(r, &obj, "trusted", "destination glob");
        c.ttl_minutes = r.int(&obj, "ttlMinutes", MIN_TTL_MINUTES..=MAX_TTL_MINUTES, DEFAULT_TTL_MINUTES);
        c.max_values_per_session = r.int(
            &obj,
            "maxValuesPerSession",
            MIN_VALUES_PER_SESSION..=MAX_VALUES_PER_SESSION,
            DEFAULT_VALUES_PER_SESSION,
        );
        c.named_counts_as_consent = r.bool(&obj, "namedCountsAsConsent", false);
        c
    }

    /// Whether the section is absent (every setting at its default, off), so
    /// the policy version of a configuration without it does not change.
    pub fn is_absent(&self) -> bool {
        *self == FlowConfig::default()
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "flow".into(),
            active: self.enabled,
            mode: self.mode.as_str().into(),
            reason: (!self.enabled).then(|| "not_configured".into()),
            failure_mode: "fail-closed".into(),
        }
    }

    /// What a destination seen only in untrusted content decides for `kind`.
    pub fn untrusted_for(&self, kind: Kind) -> ClassDecision {
        self.kinds.get(kind).and_then(|k| k.untrusted).unwrap_or(self.untrusted)
    }

    /// What an unknown destination decides for `kind`.
    pub fn unknown_for(&self, kind: Kind) -> ClassDecision {
        self.kinds.get(kind).and_then(|k| k.unknown).unwrap_or(self.unknown)
    }

    /// What a link to a host that is not trusted decides for `kind`.
    pub fn links_for(&self, kind: Kind) -> ClassDecision {
        self.kinds.get(kind).and_then(|k| k.links).unwrap_or(self.links)
    }

    /// How long a recorded value counts, in milliseconds.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_minutes.saturating_mul(60_000)
    }

    /// Most values one session holds.
    pub fn max_values(&self) -> usize {
        usize::try_from(self.max_values_per_session).unwrap_or(usize::MAX)
    }

    /// Whether a host is in `trustedHosts`.
    pub fn host_is_trusted(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.trusted_hosts.iter().any(|g| crate::tools::taxonomy::name_matches(g, &host))
    }

    /// Whether a canonical destination is in `trusted`.
    pub fn destination_is_trusted(&self, value: &str) -> bool {
        let value = value.to_ascii_lowercase();
        self.trusted.iter().any(|g| crate::tools::taxonomy::name_matches(g, &value))
    }
}
