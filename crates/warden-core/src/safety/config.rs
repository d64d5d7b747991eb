//! The `safety` section: scenarios, exclusions, the classifier and their limits.
//!
//! Every identity value is kept as written (the policy version is a digest of
//! it) and compared by the rules in `identity`; agent IDs alone are lowercased
//! here, because hosts normalize them that way before a turn ever names one.

use crate::config::destinations::Destination;
use crate::config::reader::{Node, Obj, Reader, Text, shorten};
use crate::digest;
use crate::model::{CheckStatus, Mode};
use crate::prelude::*;
use serde::Serialize;

/// Earlier messages sent with the current one, by default.
pub const DEFAULT_HISTORY_MESSAGES: u32 = 6;
/// Most earlier messages sent with the current one.
pub const MAX_HISTORY_MESSAGES: u32 = 20;
/// Shortest total deadline of one turn's classifier questions, in milliseconds.
pub const MIN_TIMEOUT_MS: u32 = 1;
/// Longest total deadline, in milliseconds.
pub const MAX_TIMEOUT_MS: u32 = 10_000;
/// Default total deadline, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u32 = 3_000;
/// Most excluded channels in one list (the global list and each scenario's own).
pub const MAX_EXCLUDED_CHANNELS: usize = 500;
/// Most scenarios.
pub const MAX_SCENARIOS: usize = 20;
/// Longest scenario ID, in characters.
pub const MAX_SCENARIO_ID_CHARS: usize = 64;
/// Longest scenario `instructions`, in characters.
pub const MAX_INSTRUCTIONS_CHARS: usize = 2_000;
/// Longest scenario `flaggedPrompt`, in characters.
pub const MAX_FLAGGED_PROMPT_CHARS: usize = 2_000;
/// Smallest `minProbability`.
pub const MIN_PROBABILITY: f64 = 0.0;
/// Largest `minProbability`.
pub const MAX_PROBABILITY: f64 = 1.0;
/// Default `minProbability`: the yes-probability at or above which a scenario matches.
pub const DEFAULT_MIN_PROBABILITY: f64 = 0.4;
/// Most approved requestors of one scenario.
pub const MAX_APPROVED_REQUESTORS: usize = 500;
/// Most agent IDs one scenario may be limited to.
pub const MAX_AGENT_IDS: usize = 500;
/// Longest provider, account, sender, channel or agent ID, or name label, in characters.
pub const MAX_IDENTITY_CHARS: usize = 256;
/// Longest classifier model name, in characters.
pub const MAX_MODEL_CHARS: usize = 256;
/// Longest classifier request path, in characters.
pub const MAX_PATH_CHARS: usize = 512;
/// Default classifier request path, appended to the destination's base URL.
pub const DEFAULT_PATH: &str = "/chat/completions";
/// Fewest alternatives asked for at the answer token: fewer would often leave out Yes or No.
pub const MIN_TOP_LOGPROBS: u32 = 5;
/// Most alternatives: the largest value OpenAI-compatible servers accept.
pub const MAX_TOP_LOGPROBS: u32 = 20;
/// Default number of alternatives.
pub const DEFAULT_TOP_LOGPROBS: u32 = 5;

/// Fields of an excluded channel.
const CHANNEL_FIELDS: &[&str] = &["name", "provider", "accountId", "channelId"];
/// Fields of an approved requestor.
const REQUESTOR_FIELDS: &[&str] = &["name", "provider", "accountId", "senderId"];
/// Fields of a scenario.
const SCENARIO_FIELDS: &[&str] = &[
    "id",
    "enabled",
    "instructions",
    "flaggedPrompt",
    "minProbability",
    "approvedRequestors",
    "excludedChannels",
    "agentIds",
];
/// Fields of the classifier.
const CLASSIFIER_FIELDS: &[&str] = &["enabled", "destination", "model", "path", "topLogprobs"];

/// A channel where scenarios are skipped. Threads use their channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct ChannelRef {
    /// A label for people; never compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"\S")))]
    pub name: Option<String>,
    /// Messaging provider, such as `slack`; compared case-insensitively.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"^\S([\s\S]*\S)?$")))]
    pub provider: String,
    /// The host's account key for that provider; compared case-insensitively.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"^\S([\s\S]*\S)?$")))]
    pub account_id: String,
    /// The channel's ID; compared case-insensitively.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"^\S([\s\S]*\S)?$")))]
    pub channel_id: String,
}

/// A person a scenario does not apply to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct Requestor {
    /// A label for people; never compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"\S")))]
    pub name: Option<String>,
    /// Messaging provider, such as `slack`; compared case-insensitively.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"^\S([\s\S]*\S)?$")))]
    pub provider: String,
    /// The host's account key for that provider; compared case-insensitively.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"^\S([\s\S]*\S)?$")))]
    pub account_id: String,
    /// The person's stable ID on the provider; compared exactly.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"^\S([\s\S]*\S)?$")))]
    pub sender_id: String,
}

/// One kind of request some requestors must not have answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct Scenario {
    /// Unique ID, used in counters and logs.
    #[cfg_attr(feature = "schema", schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")))]
    pub id: String,
    /// Disabled scenarios are never sent to the classifier.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// What requests the scenario covers, with synonyms, colloquial phrasing and exclusions. Sent to the classifier.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_INSTRUCTIONS_CHARS), regex(pattern = r"\S")))]
    pub instructions: String,
    /// Added after the message of an unapproved requestor whose request matches. Never sent to the classifier.
    /// Must not contain `<safety>` tags: Warden adds them.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_FLAGGED_PROMPT_CHARS), regex(pattern = r"\S")))]
    pub flagged_prompt: String,
    /// The yes-probability at or above which the current request counts as covered.
    #[serde(default = "default_min_probability")]
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_PROBABILITY, max = MAX_PROBABILITY)))]
    pub min_probability: f64,
    /// People this scenario does not apply to: `senderId` must match exactly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_APPROVED_REQUESTORS)))]
    pub approved_requestors: Vec<Requestor>,
    /// Channels where only this scenario is skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_EXCLUDED_CHANNELS)))]
    pub excluded_channels: Vec<ChannelRef>,
    /// Limits the scenario to these agents (lowercased); leave out for every agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(length(min = 1, max = MAX_AGENT_IDS), inner(length(max = MAX_IDENTITY_CHARS), regex(pattern = r"^\S([\s\S]*\S)?$")))
    )]
    pub agent_ids: Option<Vec<String>>,
}

/// The OpenAI-compatible chat-completions provider that answers the yes/no questions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct ClassifierConfig {
    /// Whether turns are sent to the classifier; off, every checked turn is `provider_disabled`.
    #[serde(default)]
    pub enabled: bool,
    /// The name of an entry in `destinations`; the host attaches its credential.
    pub destination: String,
    /// The model to ask, such as `gpt-4o-mini`.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_MODEL_CHARS), regex(pattern = r"^\S+$")))]
    pub model: String,
    /// Appended to the destination's base URL.
    #[serde(default = "default_path")]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_PATH_CHARS), regex(pattern = r"^/[^\s#]*$")))]
    pub path: String,
    /// Alternatives asked for at the answer token; Yes and No are looked up among them.
    #[serde(default = "default_top_logprobs")]
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_TOP_LOGPROBS, max = MAX_TOP_LOGPROBS)))]
    pub top_logprobs: u32,
    /// The full URL, resolved from the destination when the configuration was read.
    #[serde(skip)]
    pub(crate) url: String,
}

/// The `safety` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct SafetyConfig {
    /// Whether human turns are checked.
    pub enabled: bool,
    /// Earlier whole messages sent with the current one, to resolve follow-ups.
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_HISTORY_MESSAGES)))]
    pub history_messages: u32,
    /// Total deadline of one turn's classifier questions, in milliseconds.
    #[cfg_attr(feature = "schema", schemars(range(min = MIN_TIMEOUT_MS, max = MAX_TIMEOUT_MS)))]
    pub timeout_ms: u32,
    /// Channels where every scenario is skipped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_EXCLUDED_CHANNELS)))]
    pub excluded_channels: Vec<ChannelRef>,
    /// The scenarios, each judged independently.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_SCENARIOS)))]
    pub scenarios: Vec<Scenario>,
    /// The classifier; without it every checked turn is `provider_disabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierConfig>,
    /// Digest of the settings above; a stored run result is reused only under the same one.
    #[serde(skip)]
    pub(crate) fingerprint: String,
}

#[cfg_attr(not(feature = "schema"), allow(dead_code))]
fn yes() -> bool {
    true
}

#[cfg_attr(not(feature = "schema"), allow(dead_code))]
fn default_min_probability() -> f64 {
    DEFAULT_MIN_PROBABILITY
}

fn default_path() -> String {
    DEFAULT_PATH.to_string()
}

#[cfg_attr(not(feature = "schema"), allow(dead_code))]
fn default_top_logprobs() -> u32 {
    DEFAULT_TOP_LOGPROBS
}

impl Default for SafetyConfig {
    fn default() -> Self {
        SafetyConfig {
            enabled: false,
            history_messages: DEFAULT_HISTORY_MESSAGES,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            excluded_channels: Vec::new(),
            scenarios: Vec::new(),
            classifier: None,
            fingerprint: String::new(),
        }
        .sealed()
    }
}

fn is_trimmed(s: &str) -> bool {
    s.trim() == s
}

fn is_scenario_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The tags Warden wraps prompts in, which a prompt must not open or close itself.
fn has_no_safety_tag(s: &str) -> bool {
    let lower = s.to_lowercase();
    !lower.contains("<safety>") && !lower.contains("</safety>")
}

fn is_model_name(s: &str) -> bool {
    !s.chars().any(char::is_whitespace)
}

/// A path inside the destination: the host refuses anything that could leave its base URL.
fn is_request_path(s: &str) -> bool {
    s.starts_with('/')
        && !s.chars().any(|c| c.is_whitespace() || c == '#' || c == '\\')
        && !s.split(['/', '?']).any(|segment| segment == ".." || segment == ".")
}

const ID_TEXT: Text = Text::non_blank(MAX_IDENTITY_CHARS).matching(is_trimmed, "must not start or end with whitespace");
const NAME_TEXT: Text = Text::non_blank(MAX_IDENTITY_CHARS);
const SCENARIO_ID_TEXT: Text = Text::non_blank(MAX_SCENARIO_ID_CHARS)
    .matching(is_scenario_id, "must start with a letter or digit and contain only letters, digits, `.`, `_` or `-`");
const INSTRUCTIONS_TEXT: Text = Text::non_blank(MAX_INSTRUCTIONS_CHARS);
const FLAGGED_PROMPT_TEXT: Text = Text::non_blank(MAX_FLAGGED_PROMPT_CHARS)
    .matching(has_no_safety_tag, "must not contain `<safety>` or `</safety>`; Warden adds those tags itself");
const MODEL_TEXT: Text =
    Text::non_blank(MAX_MODEL_CHARS).matching(is_model_name, "must be a model name without spaces");
const PATH_TEXT: Text = Text::non_blank(MAX_PATH_CHARS)
    .matching(is_request_path, "must start with `/` and contain no spaces, `#`, `\\` or `.`/`..` segments");
const DESTINATION_TEXT: Text = Text::non_blank(crate::config::destinations::MAX_NAME_CHARS);

impl SafetyConfig {
    /// Fields of the `safety` section.
    pub const FIELDS: &'static [&'static str] =
        &["enabled", "historyMessages", "timeoutMs", "excludedChannels", "scenarios", "classifier"];

    /// Reads the `safety` section; absent means the defaults (disabled).
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>, destinations: &[Destination]) -> SafetyConfig {
        let Some(obj) = obj else {
            return SafetyConfig::default();
        };
        let enabled = r.bool(&obj, "enabled", false);
        let history_messages =
            r.int(&obj, "historyMessages", 0..=u64::from(MAX_HISTORY_MESSAGES), u64::from(DEFAULT_HISTORY_MESSAGES));
        let timeout_ms = r.int(
            &obj,
            "timeoutMs",
            u64::from(MIN_TIMEOUT_MS)..=u64::from(MAX_TIMEOUT_MS),
            u64::from(DEFAULT_TIMEOUT_MS),
        );
        let excluded_channels =
            r.list(&obj, "excludedChannels", MAX_EXCLUDED_CHANNELS, read_channel).unwrap_or_default();
        let scenarios = r
            .unique_list(&obj, "scenarios", MAX_SCENARIOS, read_scenario, "scenario id", ".id", |s| s.id.clone())
            .unwrap_or_default();
        let classifier = obj.get("classifier").and_then(|node| read_classifier(r, node, destinations));
        SafetyConfig {
            enabled,
            history_messages: u32::try_from(history_messages).unwrap_or(DEFAULT_HISTORY_MESSAGES),
            timeout_ms: u32::try_from(timeout_ms).unwrap_or(DEFAULT_TIMEOUT_MS),
            excluded_channels,
            scenarios,
            classifier,
            fingerprint: String::new(),
        }
        .sealed()
    }

    /// Computes the fingerprint of the settings as read.
    fn sealed(mut self) -> Self {
        self.fingerprint = digest::versioned(&self);
        self
    }

    /// Digest of the effective section, for binding stored results to it.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The classifier, if one is configured and enabled.
    pub fn active_classifier(&self) -> Option<&ClassifierConfig> {
        self.classifier.as_ref().filter(|c| c.enabled)
    }

    /// Why turns cannot be checked under these settings, if they cannot.
    pub fn inactive_reason(&self) -> Option<&'static str> {
        if !self.enabled {
            Some("disabled")
        } else if !self.scenarios.iter().any(|s| s.enabled) {
            Some("no_enabled_scenarios")
        } else if self.active_classifier().is_none() {
            Some("provider_disabled")
        } else {
            None
        }
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        let reason = self.inactive_reason();
        CheckStatus {
            check: "safety".into(),
            active: reason.is_none(),
            mode: Mode::Enforce.as_str().into(),
            reason: reason.map(String::from),
            failure_mode: "fail-open".into(),
        }
    }
}

fn read_channel(r: &mut Reader, node: Node<'_>) -> Option<ChannelRef> {
    let obj = r.object(&node, CHANNEL_FIELDS)?;
    let name = r.optional_string(&obj, "name", NAME_TEXT);
    let provider = r.required_string(&obj, "provider", ID_TEXT);
    let account_id = r.required_string(&obj, "accountId", ID_TEXT);
    let channel_id = r.required_string(&obj, "channelId", ID_TEXT);
    Some(ChannelRef { name, provider: provider?, account_id: account_id?, channel_id: channel_id? })
}

fn read_requestor(r: &mut Reader, node: Node<'_>) -> Option<Requestor> {
    let obj = r.object(&node, REQUESTOR_FIELDS)?;
    let name = r.optional_string(&obj, "name", NAME_TEXT);
    let provider = r.required_string(&obj, "provider", ID_TEXT);
    let account_id = r.required_string(&obj, "accountId", ID_TEXT);
    let sender_id = r.required_string(&obj, "senderId", ID_TEXT);
    Some(Requestor { name, provider: provider?, account_id: account_id?, sender_id: sender_id? })
}

fn read_scenario(r: &mut Reader, node: Node<'_>) -> Option<Scenario> {
    let obj = r.object(&node, SCENARIO_FIELDS)?;
    let id = r.required_string(&obj, "id", SCENARIO_ID_TEXT);
    let enabled = r.bool(&obj, "enabled", true);
    let instructions = r.required_string(&obj, "instructions", INSTRUCTIONS_TEXT);
    let flagged_prompt = r.required_string(&obj, "flaggedPrompt", FLAGGED_PROMPT_TEXT);
    let min_probability = r.number(&obj, "minProbability", MIN_PROBABILITY, MAX_PROBABILITY, DEFAULT_MIN_PROBABILITY);
    let approved_requestors =
        r.list(&obj, "approvedRequestors", MAX_APPROVED_REQUESTORS, read_requestor).unwrap_or_default();
    let excluded_channels = r.list(&obj, "excludedChannels", MAX_EXCLUDED_CHANNELS, read_channel).unwrap_or_default();
    let agent_ids =
        r.list(&obj, "agentIds", MAX_AGENT_IDS, |r, n| r.string_value(&n, ID_TEXT).map(|a| a.to_lowercase()));
    if obj.get("agentIds").and_then(|n| n.value.as_array().map(Vec::is_empty)) == Some(true) {
        r.error(
            obj.path_of("agentIds"),
            "must list at least one agent ID; leave it out to apply the scenario to every agent",
        );
    }
    Some(Scenario {
        id: id?,
        enabled,
        instructions: instructions?,
        flagged_prompt: flagged_prompt?,
        min_probability,
        approved_requestors,
        excluded_channels,
        agent_ids,
    })
}

fn read_classifier(r: &mut Reader, node: Node<'_>, destinations: &[Destination]) -> Option<ClassifierConfig> {
    let obj = r.object(&node, CLASSIFIER_FIELDS)?;
    let enabled = r.bool(&obj, "enabled", false);
    let destination = r.required_string(&obj, "destination", DESTINATION_TEXT);
    let model = r.required_string(&obj, "model", MODEL_TEXT);
    let path = r.optional_string(&obj, "path", PATH_TEXT);
    let path_given = obj.get("path").is_some();
    let top_logprobs = r.int(
        &obj,
        "topLogprobs",
        u64::from(MIN_TOP_LOGPROBS)..=u64::from(MAX_TOP_LOGPROBS),
        u64::from(DEFAULT_TOP_LOGPROBS),
    );
    let destination = destination?;
    let Some(target) = destinations.iter().find(|d| d.name == destination) else {
        let known: Vec<String> = destinations.iter().map(|d| format!("`{}`", d.name)).collect();
        let known = if known.is_empty() { "none are configured".to_string() } else { known.join(", ") };
        r.error(
            obj.path_of("destination"),
            format!("`{}` is not a configured destination; destinations: {known}", shorten(&destination)),
        );
        return None;
    };
    if path_given && path.is_none() {
        return None;
    }
    let path = path.unwrap_or_else(default_path);
    let url = format!("{}{}", target.base_url.trim_end_matches('/'), path);
    Some(ClassifierConfig {
        enabled,
        destination,
        model: model?,
        path,
        top_logprobs: u32::try_from(top_logprobs).unwrap_or(DEFAULT_TOP_LOGPROBS),
        url,
    })
}
