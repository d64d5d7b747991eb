//! Intent drift: the tool chain of a session against what the person first
//! asked for, deterministically and without a model.
//!
//! The intent is read from the person's first message of the session: its
//! verb classes (read, change, run, network, delete, pay) and its topic
//! words (named paths count by their parts). Only a bitmask and hashes of
//! the words are stored, never the text. Every call adds one entry to a
//! bounded chain (its kind and whether it touched a topic of the intent).
//!
//! The score of a call (0 to 100) is the sum of three components:
//! - `drift.sensitive-target`: the call touches ssh keys, cloud or system
//!   credentials, crypto keys, or does exfiltration, privilege escalation or
//!   persistence, and the intent does not name that target;
//! - `drift.verb-mismatch`: the call's kind does something the intent's
//!   verbs do not ask for (a change after "explain", a payment after "write");
//! - `drift.topic-divergence`: the share of the recent chain that touched no
//!   topic of the intent, once the chain is long enough to say.
//!
//! At or above `threshold` the call asks, under the strongest component's
//! rule; below it, a non-zero score is the signal `drift.score`.

use crate::config::reader::{Obj, Reader};
use crate::model::{CheckStatus, Mode, Signal, ToolCall, Trigger, Turn};
use crate::ports::{Condition, Ports, StorageError};
use crate::prelude::*;
use crate::tools::Finding;
use crate::tools::taxonomy::Kind;
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use once_cell::race::OnceBox;
use serde::{Deserialize, Serialize};

/// Storage namespace of the drift records.
pub const NAMESPACE: &str = "drift";
/// Format of the drift record.
pub const FORMAT: u8 = 1;
/// Topic words kept from the intent.
pub const MAX_INTENT_TOPICS: usize = 24;
/// Calls kept in the chain.
pub const MAX_CHAIN: usize = 32;
/// Calls in the chain before topic divergence counts.
pub const MIN_CHAIN_FOR_DIVERGENCE: usize = 5;
/// Characters of a call's arguments read for targets and topics.
pub const MAX_SCANNED_CHARS: usize = 8 * 1024;
/// Default score at or above which a call asks.
pub const DEFAULT_THRESHOLD: u64 = 50;
/// Default weight of a sensitive target.
pub const DEFAULT_SENSITIVE_TARGET: u64 = 70;
/// Default weight of a verb mismatch.
pub const DEFAULT_VERB_MISMATCH: u64 = 30;
/// Default weight of a chain wholly off the intent's topics.
pub const DEFAULT_TOPIC_DIVERGENCE: u64 = 25;
/// Largest score, threshold and weight.
pub const MAX_SCORE: u64 = 100;

/// The call touches a sensitive target the intent does not name.
pub const SENSITIVE_TARGET: &str = "drift.sensitive-target";
/// The call's kind is not what the intent's verbs ask for.
pub const VERB_MISMATCH: &str = "drift.verb-mismatch";
/// The chain has left the intent's topics.
pub const TOPIC_DIVERGENCE: &str = "drift.topic-divergence";
/// Signal: the drift score below the threshold.
pub const SCORE: &str = "drift.score";

/// The `drift` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct DriftConfig {
    /// Whether tool calls are compared with the session's intent. On when the section is present.
    pub enabled: bool,
    /// `enforce`, or `observe` to report the asks as signals without deciding.
    pub mode: Mode,
    /// Score (0-100) at or above which a call asks.
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = MAX_SCORE)))]
    pub threshold: u64,
    /// Weight of a sensitive target the intent does not name (ssh keys, credentials, crypto keys, exfiltration, privilege escalation, persistence).
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_SCORE)))]
    pub sensitive_target: u64,
    /// Weight of a call kind the intent's verbs do not ask for.
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_SCORE)))]
    pub verb_mismatch: u64,
    /// Weight of a recent chain wholly off the intent's topics.
    #[cfg_attr(feature = "schema", schemars(range(max = MAX_SCORE)))]
    pub topic_divergence: u64,
}

impl Default for DriftConfig {
    fn default() -> Self {
        DriftConfig {
            enabled: false,
            mode: Mode::Enforce,
            threshold: DEFAULT_THRESHOLD,
            sensitive_target: DEFAULT_SENSITIVE_TARGET,
            verb_mismatch: DEFAULT_VERB_MISMATCH,
            topic_divergence: DEFAULT_TOPIC_DIVERGENCE,
        }
    }
}

impl DriftConfig {
    /// Fields of the `drift` section.
    pub const FIELDS: &'static [&'static str] =
        &["enabled", "mode", "threshold", "sensitiveTarget", "verbMismatch", "topicDivergence"];

    /// Reads the `drift` section; absent means the check is off.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>) -> DriftConfig {
        let mut c = DriftConfig::default();
        let Some(obj) = obj else {
            return c;
        };
        c.enabled = r.bool(&obj, "enabled", true);
        c.mode = crate::config::reader::mode(r, &obj);
        c.threshold = r.int(&obj, "threshold", 1..=MAX_SCORE, DEFAULT_THRESHOLD);
        c.sensitive_target = r.int(&obj, "sensitiveTarget", 0..=MAX_SCORE, DEFAULT_SENSITIVE_TARGET);
        c.verb_mismatch = r.int(&obj, "verbMismatch", 0..=MAX_SCORE, DEFAULT_VERB_MISMATCH);
        c.topic_divergence = r.int(&obj, "topicDivergence", 0..=MAX_SCORE, DEFAULT_TOPIC_DIVERGENCE);
        c
    }

    /// Whether the section is absent.
    pub fn is_absent(&self) -> bool {
        *self == DriftConfig::default()
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "drift".into(),
            active: self.enabled,
            mode: self.mode.as_str().into(),
            reason: (!self.enabled).then(|| "not_configured".into()),
            failure_mode: "fail-closed".into(),
        }
    }
}

/// Verb classes of an intent.
pub mod verbs {
    /// Look, read, explain.
    pub const READ: u8 = 1;
    /// Write, change, fix.
    pub const CHANGE: u8 = 2;
    /// Run, test, build.
    pub const RUN: u8 = 4;
    /// Fetch, send, upload.
    pub const NETWORK: u8 = 8;
    /// Delete, remove.
    pub const DELETE: u8 = 16;
    /// Pay, buy.
    pub const PAY: u8 = 32;
}

const VERBS: &[(&str, u8)] = &[
    ("read", verbs::READ),
    ("show", verbs::READ),
    ("explain", verbs::READ),
    ("look", verbs::READ),
    ("find", verbs::READ),
    ("list", verbs::READ),
    ("review", verbs::READ),
    ("summarize", verbs::READ),
    ("summarise", verbs::READ),
    ("analyze", verbs::READ),
    ("analyse", verbs::READ),
    ("describe", verbs::READ),
    ("check", verbs::READ),
    ("write", verbs::CHANGE),
    ("create", verbs::CHANGE),
    ("add", verbs::CHANGE),
    ("implement", verbs::CHANGE),
    ("fix", verbs::CHANGE),
    ("refactor", verbs::CHANGE),
    ("rename", verbs::CHANGE),
    ("edit", verbs::CHANGE),
    ("update", verbs::CHANGE),
    ("change", verbs::CHANGE),
    ("make", verbs::CHANGE),
    ("move", verbs::CHANGE),
    ("set", verbs::CHANGE),
    ("configure", verbs::CHANGE),
    ("generate", verbs::CHANGE),
    ("build", verbs::RUN | verbs::CHANGE),
    ("run", verbs::RUN),
    ("test", verbs::RUN),
    ("install", verbs::RUN),
    ("deploy", verbs::RUN | verbs::NETWORK),
    ("execute", verbs::RUN),
    ("compile", verbs::RUN),
    ("debug", verbs::RUN),
    ("fetch", verbs::NETWORK),
    ("download", verbs::NETWORK),
    ("upload", verbs::NETWORK),
    ("send", verbs::NETWORK),
    ("email", verbs::NETWORK),
    ("mail", verbs::NETWORK),
    ("post", verbs::NETWORK),
    ("search", verbs::NETWORK | verbs::READ),
    ("browse", verbs::NETWORK),
    ("share", verbs::NETWORK),
    ("invite", verbs::NETWORK),
    ("message", verbs::NETWORK),
    ("delete", verbs::DELETE),
    ("remove", verbs::DELETE),
    ("clean", verbs::DELETE),
    ("pay", verbs::PAY),
    ("buy", verbs::PAY),
    ("order", verbs::PAY),
    ("book", verbs::PAY),
];

/// What a call's kind needs from the intent's verbs; `0` is always in scope.
fn needed(kind: Kind) -> u8 {
    match kind {
        Kind::Read | Kind::Other => 0,
        Kind::Write | Kind::Edit => verbs::CHANGE | verbs::DELETE,
        Kind::Shell => verbs::CHANGE | verbs::RUN | verbs::DELETE,
        Kind::Fetch => verbs::NETWORK | verbs::READ | verbs::RUN,
        Kind::Message | Kind::Share | Kind::Invite => verbs::NETWORK,
        Kind::Payment => verbs::PAY,
    }
}

/// A sensitive target: what in a call's arguments shows it, and the intent
/// words that name it (then it is what was asked for).
struct Target {
    category: &'static str,
    marks: &'static [&'static str],
    named_by: &'static [&'static str],
}

const TARGETS: &[Target] = &[
    Target {
        category: "ssh keys",
        marks: &[".ssh/", "id_rsa", "id_ed25519", "id_ecdsa", "authorized_keys"],
        named_by: &["ssh"],
    },
    Target {
        category: "cloud credentials",
        marks: &[".aws/", ".config/gcloud", ".azure/", ".kube/config", "aws_secret_access_key"],
        named_by: &["aws", "gcloud", "azure", "kube", "kubectl", "kubeconfig", "credentials"],
    },
    Target {
        category: "system credentials",
        marks: &["/etc/shadow", "/etc/passwd", "/etc/sudoers", ".netrc", ".git-credentials", ".docker/config.json"],
        named_by: &["shadow", "passwd", "sudoers", "netrc", "credentials"],
    },
    Target {
        category: "crypto keys",
        marks: &[".gnupg", "wallet.dat", ".pem", "private.key", "secring", "keystore", "mnemonic"],
        named_by: &["gpg", "gnupg", "wallet", "pem", "certificate", "keystore", "tls"],
    },
    Target {
        category: "exfiltration",
        marks: &[
            "--upload-file",
            "-d @",
            "--data-binary @",
            "-f file=@",
            "| nc ",
            "/dev/tcp/",
            "pastebin",
            "transfer.sh",
        ],
        named_by: &["upload"],
    },
    Target {
        category: "privilege escalation",
        marks: &["sudo ", "chmod +s", "chmod u+s", "setcap ", "chown root", "su root", "pkexec"],
        named_by: &["sudo", "root", "permissions"],
    },
    Target {
        category: "persistence",
        marks: &[
            "crontab",
            "/etc/cron",
            ".bashrc",
            ".zshrc",
            ".profile",
            "systemctl enable",
            "launchagents",
            "/etc/rc.local",
        ],
        named_by: &["cron", "crontab", "bashrc", "zshrc", "profile", "systemd", "service", "startup"],
    },
];

const STOPWORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "into", "then", "please", "could", "would", "should", "can",
    "you", "your", "our", "all", "some", "new", "use", "using", "also", "just", "about", "file", "files", "function",
    "code", "help", "want", "need",
];

/// Per-session drift record: fixed-size facts only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Format of the record.
    #[serde(rename = "f")]
    pub format: u8,
    /// Verb classes of the intent (a bitmask of [`verbs`]).
    #[serde(rename = "v")]
    pub verbs: u8,
    /// Hashes of the intent's topic words, at most [`MAX_INTENT_TOPICS`].
    #[serde(rename = "t")]
    pub topics: Vec<u32>,
    /// Hashes of the intent words that name sensitive targets.
    #[serde(rename = "n")]
    pub named: Vec<u32>,
    /// The latest calls, at most [`MAX_CHAIN`]: kind index times two, plus one when on topic.
    #[serde(rename = "c")]
    pub chain: Vec<u8>,
}

/// The key topic words are hashed under, derived from the host's approval
/// secret: someone who reads the storage but not the secret cannot test a
/// dictionary of words against the stored hashes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TopicKey(u64, u64);

impl TopicKey {
    /// The key under `secret`.
    pub fn derive(secret: &[u8]) -> TopicKey {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(b"warden drift topics\n");
        h.update(secret);
        let d = h.finalize();
        let half = |i: usize| {
            let mut b = [0u8; 8];
            if let Some(part) = d.get(i..i + 8) {
                b.copy_from_slice(part);
            }
            u64::from_le_bytes(b)
        };
        TopicKey(half(0), half(8))
    }
}

fn hash(key: &TopicKey, word: &str) -> u32 {
    // SipHash-2-4, a keyed function made for short inputs; the words are
    // compared, never read back. Only its core implementation is at hand in
    // `no_std`, where it is marked deprecated in favour of std's hasher.
    #[expect(deprecated, reason = "core's SipHasher is the keyed SipHash-2-4 available without std")]
    let mut h = core::hash::SipHasher::new_with_keys(key.0, key.1);
    core::hash::Hasher::write(&mut h, word.as_bytes());
    let v = core::hash::Hasher::finish(&h);
    u32::try_from(v & u64::from(u32::MAX)).unwrap_or_default()
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase())
}

/// The intent of a person's message.
pub fn intent(key: &TopicKey, message: &str) -> State {
    let mut s = State { format: FORMAT, ..State::default() };
    let all_named: Vec<&str> = TARGETS.iter().flat_map(|t| t.named_by.iter().copied()).collect();
    for w in words(message) {
        let stem = w.strip_suffix("ing").or_else(|| w.strip_suffix('s')).unwrap_or(&w);
        if let Some((_, v)) = VERBS.iter().find(|(name, _)| *name == w || *name == stem) {
            s.verbs |= v;
        }
        if all_named.contains(&w.as_str()) && !s.named.contains(&hash(key, &w)) && s.named.len() < MAX_INTENT_TOPICS {
            s.named.push(hash(key, &w));
        }
        if w.chars().count() >= 3 && !STOPWORDS.contains(&w.as_str()) {
            let h = hash(key, &w);
            if !s.topics.contains(&h) && s.topics.len() < MAX_INTENT_TOPICS {
                s.topics.push(h);
            }
        }
    }
    s
}

fn record_key(session: &str) -> String {
    super::key(session)
}

/// Records the intent from the person's first message of the session.
pub fn on_turn(config: &DriftConfig, key: &TopicKey, ports: &Ports<'_>, turn: &Turn) -> Vec<Signal> {
    if !config.enabled || turn.trigger != Trigger::User {
        return Vec::new();
    }
    let Some(session) = turn.session_id.as_deref().filter(|s| !s.is_empty()) else {
        return Vec::new();
    };
    let fresh = intent(key, &turn.message);
    match crate::store::put_json(ports.storage, NAMESPACE, &record_key(session), &fresh, Condition::Absent) {
        Ok(_) | Err(StorageError::Conflict) => Vec::new(),
        Err(e) => vec![Signal::new(
            super::STORAGE_UNAVAILABLE,
            format!("The session's intent could not be recorded ({e}); drift is not judged until it is."),
        )],
    }
}

/// What the drift check found for one call.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The score, 0 to [`MAX_SCORE`].
    pub score: u64,
    /// The ask, at or above the threshold (in enforce mode).
    pub ask: Option<Finding>,
    /// Signals: the score below the threshold, or the observed ask.
    pub signals: Vec<Signal>,
}

fn kind_index(kind: Kind) -> u8 {
    Kind::ALL.iter().position(|(_, k)| *k == kind).and_then(|i| u8::try_from(i).ok()).unwrap_or(0)
}

/// Scores a call against the session's intent and adds it to the chain.
pub fn before_call(
    config: &DriftConfig,
    key: &TopicKey,
    ports: &Ports<'_>,
    call: &ToolCall,
    kind: Kind,
) -> Result<Report, StorageError> {
    if !config.enabled {
        return Ok(Report::default());
    }
    let Some(session) = call.session_id.as_deref().filter(|s| !s.is_empty()) else {
        return Ok(Report::default());
    };
    let text = call_text(call);
    let mut seen = None;
    crate::store::update_json::<State>(ports.storage, NAMESPACE, &record_key(session), |current| {
        let mut s = current.filter(|s| s.format == FORMAT)?;
        let on_topic = words(&text).any(|w| s.topics.contains(&hash(key, &w)));
        seen = Some(s.clone());
        if s.chain.len() >= MAX_CHAIN {
            s.chain.remove(0);
        }
        s.chain.push(kind_index(kind).saturating_mul(2).saturating_add(u8::from(on_topic)));
        Some(s)
    })?;
    let Some(intent) = seen else {
        // No intent yet: nothing to compare with.
        return Ok(Report::default());
    };
    Ok(score(config, key, &intent, &text, kind))
}

/// A call as drift and the risk check read it: the tool's name and the
/// first [`MAX_SCANNED_CHARS`] of its arguments, lowercase, JSON's `\\/` as `/`.
pub fn call_text(call: &ToolCall) -> String {
    let mut text = call.tool_name.to_lowercase();
    text.push(' ');
    let args = call.arguments.as_str();
    let cut = args.char_indices().nth(MAX_SCANNED_CHARS).map_or(args.len(), |(i, _)| i);
    text.push_str(&args.get(..cut).unwrap_or_default().to_lowercase().replace("\\/", "/"));
    text
}

/// The sensitive targets a call's text touches, one bit per category (ssh
/// keys, cloud credentials, system credentials, crypto keys, exfiltration,
/// privilege escalation, persistence), whatever the intent named.
pub fn target_bits(text: &str) -> u8 {
    match marks() {
        // Every occurrence of every mark, overlapping ones included: a mark is
        // found wherever `contains` would find it.
        Some((automaton, category)) => automaton
            .find_overlapping_iter(text)
            .filter_map(|m| category.get(m.pattern().as_usize()))
            .fold(0u8, |bits, &i| bits | target_bit(i)),
        None => marked_one_by_one(text),
    }
}

/// The bit of the `i`-th category of [`TARGETS`].
fn target_bit(i: usize) -> u8 {
    1u8 << (i as u32 % 8)
}

/// [`target_bits`] looking for each mark in turn: the reading the automaton
/// must give, and what is used were it missing.
fn marked_one_by_one(text: &str) -> u8 {
    TARGETS
        .iter()
        .enumerate()
        .filter(|(_, t)| t.marks.iter().any(|m| text.contains(m)))
        .fold(0u8, |bits, (i, _)| bits | target_bit(i))
}

/// Every mark of [`TARGETS`] in one automaton, with the category of each;
/// built on first use, `None` if it could not be (a test builds it).
static MARKS: OnceBox<Option<(AhoCorasick, Vec<usize>)>> = OnceBox::new();

fn marks() -> Option<&'static (AhoCorasick, Vec<usize>)> {
    MARKS
        .get_or_init(|| {
            let marks = TARGETS.iter().enumerate().flat_map(|(i, t)| t.marks.iter().map(move |m| (i, *m)));
            let (category, patterns): (Vec<usize>, Vec<&str>) = marks.unzip();
            let automaton = AhoCorasick::builder().kind(Some(AhoCorasickKind::DFA)).build(patterns).ok();
            Box::new(automaton.map(|a| (a, category)))
        })
        .as_ref()
}

fn score(config: &DriftConfig, key: &TopicKey, intent: &State, text: &str, kind: Kind) -> Report {
    let mut parts: Vec<(&'static str, u64, String)> = Vec::new();
    let touched = target_bits(text);
    let targets: Vec<&str> = TARGETS
        .iter()
        .enumerate()
        .filter(|(i, _)| touched & target_bit(*i) != 0)
        .map(|(_, t)| t)
        .filter(|t| !t.named_by.iter().any(|w| intent.named.contains(&hash(key, w))))
        .map(|t| t.category)
        .collect();
    if !targets.is_empty() {
        parts.push((SENSITIVE_TARGET, config.sensitive_target, format!("it touches {}", targets.join(", "))));
    }
    let need = needed(kind);
    if intent.verbs != 0 && need != 0 && intent.verbs & need == 0 {
        parts.push((VERB_MISMATCH, config.verb_mismatch, format!("a {} call was not asked for", kind.as_str())));
    }
    if intent.chain.len() >= MIN_CHAIN_FOR_DIVERGENCE && !intent.topics.is_empty() {
        let off = intent.chain.iter().filter(|c| *c & 1 == 0).count() as u64;
        let len = intent.chain.len() as u64;
        let weight = config.topic_divergence.saturating_mul(off) / len.max(1);
        if weight > 0 {
            parts.push((TOPIC_DIVERGENCE, weight, format!("{off} of the last {len} calls left the asked topics")));
        }
    }
    let total = parts.iter().map(|(_, w, _)| *w).sum::<u64>().min(MAX_SCORE);
    let mut report = Report { score: total, ..Report::default() };
    if total == 0 {
        return report;
    }
    let why: Vec<&str> = parts.iter().map(|(_, _, w)| w.as_str()).collect();
    let strongest = parts.iter().max_by_key(|(_, w, _)| *w).map_or(SENSITIVE_TARGET, |(r, _, _)| *r);
    if total >= config.threshold {
        let finding = Finding {
            rule: strongest,
            reason: format!(
                "The call has drifted from what the person asked for (score {total} of {MAX_SCORE}, threshold {}): {}.",
                config.threshold,
                why.join("; ")
            ),
        };
        if config.mode == Mode::Observe {
            report.signals.push(Signal::new(strongest, format!("observed: ask. {}", finding.reason)));
        } else {
            report.ask = Some(finding);
        }
    } else {
        report.signals.push(Signal::new(
            SCORE,
            format!(
                "Drift score {total} of {MAX_SCORE}, below the threshold {}: {}.",
                config.threshold,
                why.join("; ")
            ),
        ));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Texts made of marks, pieces of marks and their neighbours, so marks
    /// overlap, touch, and stop one character short.
    fn marked_text() -> impl Strategy<Value = String> {
        let marks: Vec<&'static str> = TARGETS.iter().flat_map(|t| t.marks.iter().copied()).collect();
        let piece = prop_oneof![
            proptest::sample::select(marks.clone()).prop_map(String::from),
            (proptest::sample::select(marks), 0usize..12)
                .prop_map(|(m, cut)| m.get(..cut.min(m.len())).unwrap_or(m).to_string()),
            proptest::sample::select(vec![" ", "/", ".", "@", "|", "-", "s", "ssh", "etc", "sudo", "é", "\u{3000}"])
                .prop_map(String::from),
            "[a-z./ |@-]{0,6}",
        ];
        proptest::collection::vec(piece, 0..10).prop_map(|parts| parts.concat())
    }

    #[test]
    fn the_marks_automaton_is_built_and_finds_every_category_by_each_of_its_marks() {
        assert!(marks().is_some(), "the automaton of target marks could not be built");
        for (i, target) in TARGETS.iter().enumerate() {
            for mark in target.marks {
                let text = format!("exec {{\"command\":\"x {mark} y\"}}");
                assert_eq!(target_bits(&text) & target_bit(i), target_bit(i), "`{mark}` ({})", target.category);
            }
        }
        assert_eq!(target_bits("exec {\"command\":\"git status\"}"), 0);
        // Marks that overlap both count: `/etc/sudoers` (system credentials) and `setcap `
        // (privilege escalation) share `set` here; a search that resumed after the first would miss the second.
        let both = target_bits("/etc/sudoersetcap ");
        assert_eq!(both, target_bit(2) | target_bit(5), "{both:#010b}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz::cases(4000)))]

        #[test]
        fn one_pass_of_the_automaton_finds_the_targets_looking_for_each_mark_finds(text in marked_text()) {
            prop_assert_eq!(target_bits(&text), marked_one_by_one(&text), "{:?}", text);
        }
    }
}
