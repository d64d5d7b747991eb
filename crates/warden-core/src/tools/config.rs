//! The `tools` section: what the judge checks and how each rule decides.

use super::budget::{BudgetConfig, Window};
use super::rules::RULES;
use super::taxonomy::{self, Kind, ToolEntry};
use super::validate::{FieldRule, FieldType, InputSchema};
use crate::config::reader::{Node, Obj, Reader, Text, shorten, shown};
use crate::model::{Decision, Mode, Risk, Scope};
use crate::paths;
use crate::prelude::*;
use serde::Serialize;

/// Longest workspace or home path, in characters.
pub const MAX_ROOT_CHARS: usize = 1024;
/// Most globs in `protectedPaths` or `writablePaths`.
pub const MAX_PATH_GLOBS: usize = 256;
/// Longest path glob, in characters.
pub const MAX_GLOB_CHARS: usize = 512;
/// Most configured taxonomy entries.
pub const MAX_TAXONOMY: usize = 200;
/// Most argument fields an entry or a schema lists.
pub const MAX_FIELDS: usize = 64;
/// Longest tool or field name, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// Most input schemas.
pub const MAX_SCHEMAS: usize = 200;
/// Largest `maxLength` of a field, in characters (1 MiB).
pub const MAX_FIELD_LENGTH: u64 = 1024 * 1024;
/// Most tool globs in `askTools`.
pub const MAX_ASK_TOOLS: usize = 200;

/// A rule's decision as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RuleDecision {
    /// The rule is off.
    Allow,
    /// A person decides.
    Ask,
    /// Refused.
    Deny,
}

/// A rule's risk as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RuleRisk {
    Low,
    Medium,
    High,
    Critical,
}

/// How long an approval of a rule's `ask` may be remembered, at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RuleScope {
    Once,
    Session,
    Always,
}

impl RuleDecision {
    pub fn decision(self) -> Decision {
        match self {
            RuleDecision::Allow => Decision::Allow,
            RuleDecision::Ask => Decision::Ask,
            RuleDecision::Deny => Decision::Deny,
        }
    }
}

impl RuleRisk {
    pub fn risk(self) -> Risk {
        match self {
            RuleRisk::Low => Risk::Low,
            RuleRisk::Medium => Risk::Medium,
            RuleRisk::High => Risk::High,
            RuleRisk::Critical => Risk::Critical,
        }
    }
}

impl RuleScope {
    pub fn scope(self) -> Scope {
        match self {
            RuleScope::Once => Scope::Once,
            RuleScope::Session => Scope::Session,
            RuleScope::Always => Scope::Always,
        }
    }
}

/// How one rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct RuleSetting {
    /// `allow` turns the rule off, `ask` lets a person decide, `deny` refuses.
    pub decision: RuleDecision,
    /// The risk the verdict reports.
    pub risk: RuleRisk,
    /// For `ask`: the broadest scope an approval may be remembered for.
    pub scope: RuleScope,
}

/// The `tools` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct ToolsConfig {
    /// Whether tool calls are judged. On by default.
    pub enabled: bool,
    /// `enforce`, or `observe` to decide, log and count but answer `allow`.
    pub mode: Mode,
    /// The workspace root writes are confined to; the call's `cwd` when absent. An absolute path.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_ROOT_CHARS)))]
    pub workspace: Option<String>,
    /// The agent's home directory, so that absolute paths under it match `~/` globs. An absolute path.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(length(min = 1, max = MAX_ROOT_CHARS)))]
    pub home: Option<String>,
    /// Globs of paths no tool may read or write; `!glob` makes an exception; an object
    /// `{ "glob": ..., "protect": "reads" | "writes" | "both" }` protects one way. Replaces the defaults when given.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_PATH_GLOBS)))]
    pub protected_paths: Vec<super::protected::ProtectedPath>,
    /// Globs outside the workspace that may still be written. Replaces the defaults when given.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_PATH_GLOBS)))]
    pub writable_paths: Vec<paths::Glob>,
    /// Whether the built-in taxonomy (Claude Code, OpenClaw, Hermes, MCP) applies after `taxonomy`.
    pub builtin_taxonomy: bool,
    /// Tool kinds and argument fields, checked before the built-in entries.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_TAXONOMY)))]
    pub taxonomy: Vec<ToolEntry>,
    /// Whether the built-in input schemas apply to tools `inputs` does not name.
    pub builtin_inputs: bool,
    /// Input schemas per tool.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_SCHEMAS)))]
    pub inputs: Vec<InputSchema>,
    /// Kinds of tools a person approves before they run. Default: `fetch`.
    pub ask_kinds: Vec<Kind>,
    /// Tool-name globs a person approves before they run.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_ASK_TOOLS)))]
    pub ask_tools: Vec<String>,
    /// Decision, risk and approval scope per rule, overriding the defaults.
    pub rules: BTreeMap<String, RuleSetting>,
    /// Token and call budgets per agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetConfig>,
    /// Hosts fetch tools reach without asking, hosts they never reach, and
    /// what happens to the others. Absent: every fetch is asked (`askKinds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch: Option<super::fetch::FetchConfig>,
    /// Amount limits of payment tools, per call, per session and per recipient.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<super::payment::PaymentConfig>,
    /// Self-protection: the `self.*` rules that guard Warden's own files,
    /// commands and database from the agent. All on by default.
    pub self_protection: SelfProtection,
    /// What the judge derives from the fields above, computed when they are
    /// read; code that changes those fields afterwards builds it again.
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub compiled: super::compiled::Compiled,
}

/// The `tools.selfProtection` section: the one place self-protection is widened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct SelfProtection {
    /// `self.*` rules turned off, each named exactly (`self.protected-file`,
    /// `self.admin-command`, `self.database-client`). Empty by default.
    #[cfg_attr(feature = "schema", schemars(length(max = 3)))]
    pub allow: Vec<String>,
}

/// Paths no tool may read or write by default.
pub const DEFAULT_PROTECTED: &[&str] = &[
    "~/.ssh/**",
    "!~/.ssh/*.pub",
    "~/.aws/credentials",
    "~/.aws/config",
    "~/.aws/sso/cache/**",
    "~/.gnupg/**",
    "~/.config/gcloud/**",
    "~/.azure/**",
    "~/.kube/config",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh/hosts.yml",
    "~/.npmrc",
    "~/.pypirc",
    "~/.password-store/**",
    "~/.vault-token",
    "~/.pgpass",
    "~/.my.cnf",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.terraform.d/credentials.tfrc.json",
    "~/.config/hub",
    "~/.claude/.credentials.json",
    "~/.codex/auth.json",
    "~/.local/share/keyrings/**",
    "~/.mozilla/firefox/**/logins.json",
    "~/.mozilla/firefox/**/key4.db",
    "~/.config/google-chrome/**/Login Data",
    "~/.config/chromium/**/Login Data",
    "/var/run/secrets/**",
    "/run/secrets/**",
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zprofile",
    "~/.zshenv",
    "~/.zlogin",
    "~/.config/fish/config.fish",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d/**",
    "**/.env",
    "**/.env.*",
    "!**/.env.example",
    "!**/.env.sample",
    "!**/.env.template",
];

/// Paths outside the workspace that may be written by default.
pub const DEFAULT_WRITABLE: &[&str] =
    &["/tmp/**", "/var/tmp/**", "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/**"];

impl Default for ToolsConfig {
    fn default() -> Self {
        let config = ToolsConfig {
            enabled: true,
            mode: Mode::Enforce,
            workspace: None,
            home: None,
            protected_paths: DEFAULT_PROTECTED
                .iter()
                .filter_map(|s| super::protected::ProtectedPath::both(s).ok())
                .collect(),
            writable_paths: DEFAULT_WRITABLE.iter().filter_map(|s| paths::Glob::new(s).ok()).collect(),
            builtin_taxonomy: true,
            taxonomy: Vec::new(),
            builtin_inputs: true,
            inputs: Vec::new(),
            ask_kinds: vec![Kind::Fetch],
            ask_tools: Vec::new(),
            rules: BTreeMap::new(),
            budget: None,
            fetch: None,
            payment: None,
            self_protection: SelfProtection::default(),
            compiled: super::compiled::Compiled::default(),
        };
        config.compiled()
    }
}

const NAME: Text = Text::non_blank(MAX_NAME_CHARS).matching(is_tool_name, "must be a name without spaces");

/// A consent-gate channel, as the gate accepts it.
const CHANNEL: Text = Text::non_blank(crate::gate::MAX_CHANNEL_CHARS)
    .matching(is_channel, "must be visible ASCII characters without `/`, like `email`");

fn is_channel(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_graphic() && b != b'/')
}

fn is_tool_name(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn is_root(s: &str) -> bool {
    s.starts_with('/') && !s.contains('\0')
}

impl ToolsConfig {
    /// Fields of the `tools` section.
    pub const FIELDS: &'static [&'static str] = &[
        "enabled",
        "mode",
        "workspace",
        "home",
        "protectedPaths",
        "writablePaths",
        "builtinTaxonomy",
        "taxonomy",
        "builtinInputs",
        "inputs",
        "askKinds",
        "askTools",
        "rules",
        "budget",
        "fetch",
        "payment",
        "selfProtection",
    ];

    /// Reads the `tools` section; absent means the defaults.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> ToolsConfig {
        let mut config = ToolsConfig::default();
        let Some(obj) = obj else {
            return config;
        };
        config.enabled = r.bool(&obj, "enabled", true);
        config.mode = crate::config::reader::mode(r, &obj);
        let root = Text::non_blank(MAX_ROOT_CHARS).matching(is_root, "must be an absolute path");
        config.workspace = r.optional_string(&obj, "workspace", root);
        config.home = r.optional_string(&obj, "home", root);
        if let Some(globs) = r.list(&obj, "protectedPaths", MAX_PATH_GLOBS, super::protected::read) {
            config.protected_paths = globs;
        }
        if let Some(globs) = r.list(&obj, "writablePaths", MAX_PATH_GLOBS, |r, n| read_glob(r, n, false)) {
            config.writable_paths = globs;
        }
        config.builtin_taxonomy = r.bool(&obj, "builtinTaxonomy", true);
        if let Some(entries) =
            r.unique_list(&obj, "taxonomy", MAX_TAXONOMY, read_entry, "tool", ".tool", |e| e.tool.clone())
        {
            config.taxonomy = entries;
        }
        config.builtin_inputs = r.bool(&obj, "builtinInputs", true);
        if let Some(schemas) =
            r.unique_list(&obj, "inputs", MAX_SCHEMAS, read_schema, "tool", ".tool", |s| s.tool.clone())
        {
            config.inputs = schemas;
        }
        if let Some(kinds) =
            r.unique_list(&obj, "askKinds", Kind::ALL.len(), read_kind, "kind", "", |k| k.as_str().to_string())
        {
            config.ask_kinds = kinds;
        }
        if let Some(tools) = r.list(&obj, "askTools", MAX_ASK_TOOLS, |r, n| r.string_value(&n, NAME)) {
            config.ask_tools = tools;
        }
        if let Some(node) = obj.get("rules") {
            config.rules = read_rules(r, &node);
        }
        if let Some(node) = obj.get("budget") {
            config.budget = super::budget::read(r, &node);
        }
        if let Some(node) = obj.get("fetch") {
            config.fetch = super::fetch::read(r, &node);
            if config.fetch.is_some()
                && let Some(n) = obj.get("rules").and_then(|n| n.value.get(super::rules::FETCH_UNLISTED_HOST).cloned())
                && n.get("decision").is_some()
            {
                r.error(
                    format!("{}.{}.decision", obj.path_of("rules"), super::rules::FETCH_UNLISTED_HOST),
                    "is set by `tools.fetch.unlisted` when `tools.fetch` is present; set it there",
                );
            }
        }
        if let Some(node) = obj.get("payment") {
            config.payment = super::payment::read(r, &node);
        }
        if let Some(node) = obj.get("selfProtection") {
            config.self_protection = read_self_protection(r, &node);
        }
        config.compiled()
    }

    /// The section with what the judge derives from it computed.
    fn compiled(mut self) -> ToolsConfig {
        self.compiled =
            super::compiled::Compiled::new(&self.protected_paths, &self.writable_paths, self.home.as_deref());
        self
    }

    /// The check's status for reports.
    pub fn status(&self) -> crate::model::CheckStatus {
        crate::model::CheckStatus {
            check: "tools".into(),
            active: self.enabled,
            mode: self.mode.as_str().into(),
            reason: (!self.enabled).then(|| "disabled".into()),
            failure_mode: "fail-closed".into(),
        }
    }

    /// How `rule` decides: the configured setting, else its default.
    pub fn rule(&self, rule: &str) -> RuleSetting {
        if super::rules::SELF_RULES.contains(&rule) {
            let decision = if self.self_protection.allow.iter().any(|r| r == rule) {
                RuleDecision::Allow
            } else {
                RuleDecision::Deny
            };
            return RuleSetting { decision, risk: RuleRisk::Critical, scope: RuleScope::Once };
        }
        if rule == super::rules::FETCH_UNLISTED_HOST
            && let Some(fetch) = &self.fetch
        {
            let mut setting = self.rules.get(rule).copied().unwrap_or(RuleSetting {
                decision: RuleDecision::Ask,
                risk: RuleRisk::Medium,
                scope: RuleScope::Session,
            });
            setting.decision = match fetch.unlisted {
                super::fetch::Unlisted::Allow => RuleDecision::Allow,
                super::fetch::Unlisted::Ask => RuleDecision::Ask,
                super::fetch::Unlisted::Deny => RuleDecision::Deny,
            };
            return setting;
        }
        if let Some(setting) = self.rules.get(rule) {
            return *setting;
        }
        RULES
            .iter()
            .find(|r| r.name == rule)
            .map_or(RuleSetting { decision: RuleDecision::Deny, risk: RuleRisk::High, scope: RuleScope::Once }, |r| {
                r.default
            })
    }

    /// The taxonomy entry of a tool.
    /// What [`taxonomy::classify`] finds in the configured entries and the
    /// built-in ones, the built-in ones looked up by their index.
    pub fn classify(&self, name: &str) -> Option<&ToolEntry> {
        if let Some(entry) = taxonomy::classify(&self.taxonomy, &[], name) {
            return Some(entry);
        }
        if !self.builtin_taxonomy {
            return None;
        }
        let (builtin, index) = (&self.compiled.taxonomy, &self.compiled.taxonomy_index);
        index.exact(name).and_then(|i| builtin.get(i)).or_else(|| {
            index.globs().iter().filter_map(|&i| builtin.get(i)).find(|e| taxonomy::name_matches(&e.tool, name))
        })
    }

    /// The input schema of a tool: the configured one, else the built-in one.
    pub fn schema(&self, name: &str) -> Option<&InputSchema> {
        self.inputs.iter().find(|s| s.tool == name).or_else(|| {
            let compiled = &self.compiled;
            self.builtin_inputs
                .then(|| compiled.inputs_index.exact(name).and_then(|i| compiled.inputs.get(i)))
                .flatten()
        })
    }
}

/// Reads one path glob and compiles it; `exceptions` allows `!glob`.
fn read_glob(r: &mut Reader, node: Node<'_>, exceptions: bool) -> Option<paths::Glob> {
    let text = r.string_value(&node, Text::non_blank(MAX_GLOB_CHARS))?;
    let compiled = if exceptions { paths::Glob::with_exception(&text) } else { paths::Glob::new(&text) };
    match compiled {
        Ok(glob) => Some(glob),
        Err(problem) => {
            r.error(node.path, format!("`{}` {problem}", shorten(&text)));
            None
        }
    }
}

fn read_kind(r: &mut Reader, node: Node<'_>) -> Option<Kind> {
    let kind = node.value.as_str().and_then(Kind::parse);
    if kind.is_none() {
        let allowed: Vec<String> = Kind::ALL.iter().map(|(n, _)| format!("`{n}`")).collect();
        r.error(node.path, format!("must be one of {}, got `{}`", allowed.join(", "), shown(node.value)));
    }
    kind
}

fn read_names(r: &mut Reader, obj: &Obj<'_>, key: &str) -> Option<Vec<String>> {
    r.list(obj, key, MAX_FIELDS, |r, n| r.string_value(&n, NAME))
}

fn read_entry(r: &mut Reader, node: Node<'_>) -> Option<ToolEntry> {
    let obj = r.object(
        &node,
        &[
            "tool",
            "kind",
            "commandFields",
            "pathFields",
            "patchFields",
            "urlFields",
            "cwdFields",
            "recipientFields",
            "bodyFields",
            "amountFields",
            "channel",
        ],
    )?;
    let tool = r.required_string(&obj, "tool", NAME);
    let kind = match obj.get("kind") {
        Some(n) => read_kind(r, n),
        None => {
            r.error(obj.path_of("kind"), "is required");
            None
        }
    };
    let commands = read_names(r, &obj, "commandFields");
    let paths = read_names(r, &obj, "pathFields");
    let patches = read_names(r, &obj, "patchFields");
    let urls = read_names(r, &obj, "urlFields");
    let cwds = read_names(r, &obj, "cwdFields");
    let recipients = read_names(r, &obj, "recipientFields");
    let bodies = read_names(r, &obj, "bodyFields");
    let amounts = read_names(r, &obj, "amountFields");
    let channel = r.optional_string(&obj, "channel", CHANNEL);
    let mut entry = taxonomy::entry(&tool?, kind?);
    if let Some(v) = commands {
        entry.command_fields = v;
    }
    if let Some(v) = paths {
        entry.path_fields = v;
    }
    if let Some(v) = patches {
        entry.patch_fields = v;
    }
    if let Some(v) = urls {
        entry.url_fields = v;
    }
    if let Some(v) = cwds {
        entry.cwd_fields = v;
    }
    if let Some(v) = recipients {
        entry.recipient_fields = v;
    }
    if let Some(v) = bodies {
        entry.body_fields = v;
    }
    if let Some(v) = amounts {
        entry.amount_fields = v;
    }
    entry.channel = channel;
    Some(entry)
}

fn read_schema(r: &mut Reader, node: Node<'_>) -> Option<InputSchema> {
    let obj = r.object(&node, &["tool", "fields"])?;
    let tool = r.required_string(&obj, "tool", NAME);
    let fields = match r.unique_list(&obj, "fields", MAX_FIELDS, read_field, "field", ".name", |f| f.name.clone()) {
        Some(f) => f,
        None => {
            if obj.get("fields").is_none() {
                r.error(obj.path_of("fields"), "is required");
            }
            return None;
        }
    };
    Some(InputSchema { tool: tool?, fields })
}

fn read_field(r: &mut Reader, node: Node<'_>) -> Option<FieldRule> {
    let obj = r.object(&node, &["name", "type", "required", "maxLength"])?;
    let name = r.required_string(&obj, "name", NAME);
    let kind = match obj.get("type") {
        None => None,
        Some(n) => {
            let t = n.value.as_str().and_then(FieldType::parse);
            if t.is_none() {
                let allowed: Vec<String> = FieldType::ALL.iter().map(|(n, _)| format!("`{n}`")).collect();
                r.error(n.path, format!("must be one of {}, got `{}`", allowed.join(", "), shown(n.value)));
            }
            t
        }
    };
    let required = r.bool(&obj, "required", false);
    let max_length = obj.get("maxLength").and_then(|n| r.int_value(&n, 1..=MAX_FIELD_LENGTH));
    if max_length.is_some() && kind.is_some_and(|k| k != FieldType::String) {
        r.error(obj.path_of("maxLength"), "applies only to fields of type `string`");
    }
    Some(FieldRule { name: name?, kind, required, max_length })
}

fn read_self_protection(r: &mut Reader, node: &Node<'_>) -> SelfProtection {
    let mut out = SelfProtection::default();
    let Some(obj) = r.object(node, &["allow"]) else { return out };
    let rule = |r: &mut Reader, n: Node<'_>| -> Option<String> {
        match n.value.as_str() {
            Some(name) if super::rules::SELF_RULES.contains(&name) => Some(name.to_string()),
            _ => {
                r.error(
                    n.path,
                    format!(
                        "must be one of {}, got `{}`",
                        super::rules::SELF_RULES.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", "),
                        shown(n.value)
                    ),
                );
                None
            }
        }
    };
    if let Some(rules) = r.unique_list(&obj, "allow", super::rules::SELF_RULES.len(), rule, "rule", "", |s| s.clone()) {
        out.allow = rules;
    }
    out
}

fn read_rules(r: &mut Reader, node: &Node<'_>) -> BTreeMap<String, RuleSetting> {
    let mut out = BTreeMap::new();
    let serde_json::Value::Object(map) = node.value else {
        r.error(node.path.clone(), format!("must be an object keyed by rule name, got `{}`", shown(node.value)));
        return out;
    };
    for (name, value) in map {
        let child = Node { path: format!("{}.{name}", node.path), value };
        if super::rules::SELF_RULES.contains(&name.as_str()) {
            r.error(
                child.path,
                format!(
                    "`{name}` guards warden itself and is not set here; name it in `tools.selfProtection.allow` to turn it off"
                ),
            );
            continue;
        }
        let Some(info) = RULES.iter().find(|i| i.name == name) else {
            r.error(
                child.path,
                format!(
                    "`{}` is not a configurable rule; the rules are {}",
                    shorten(name),
                    RULES.iter().map(|i| format!("`{}`", i.name)).collect::<Vec<_>>().join(", ")
                ),
            );
            continue;
        };
        let Some(obj) = r.object(&child, &["decision", "risk", "scope"]) else { continue };
        let mut setting = info.default;
        if let Some(n) = obj.get("decision") {
            match n.value.as_str() {
                Some("allow") => setting.decision = RuleDecision::Allow,
                Some("ask") => setting.decision = RuleDecision::Ask,
                Some("deny") => setting.decision = RuleDecision::Deny,
                _ => r.error(n.path, format!("must be `allow`, `ask` or `deny`, got `{}`", shown(n.value))),
            }
        }
        if let Some(n) = obj.get("risk") {
            match n.value.as_str() {
                Some("low") => setting.risk = RuleRisk::Low,
                Some("medium") => setting.risk = RuleRisk::Medium,
                Some("high") => setting.risk = RuleRisk::High,
                Some("critical") => setting.risk = RuleRisk::Critical,
                _ => {
                    r.error(n.path, format!("must be `low`, `medium`, `high` or `critical`, got `{}`", shown(n.value)))
                }
            }
        }
        if let Some(n) = obj.get("scope") {
            match n.value.as_str() {
                Some("once") => setting.scope = RuleScope::Once,
                Some("session") => setting.scope = RuleScope::Session,
                Some("always") => setting.scope = RuleScope::Always,
                _ => r.error(n.path, format!("must be `once`, `session` or `always`, got `{}`", shown(n.value))),
            }
        }
        out.insert(name.clone(), setting);
    }
    out
}

/// Reads one budget window: `{ "limit": n, "windowMinutes": m }`.
pub(super) fn read_window(r: &mut Reader, obj: &Obj<'_>, key: &str, max_limit: u64) -> Option<Window> {
    let node = obj.get(key)?;
    let w = r.object(&node, &["limit", "windowMinutes"])?;
    let limit = match w.get("limit") {
        Some(n) => r.int_value(&n, 1..=max_limit),
        None => {
            r.error(w.path_of("limit"), "is required");
            None
        }
    };
    let minutes = r.int(
        &w,
        "windowMinutes",
        super::budget::MIN_WINDOW_MINUTES..=super::budget::MAX_WINDOW_MINUTES,
        super::budget::DEFAULT_WINDOW_MINUTES,
    );
    Some(Window { limit: limit?, window_minutes: minutes })
}
