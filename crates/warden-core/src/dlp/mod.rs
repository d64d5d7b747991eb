//! Data-loss prevention for outbound messages and prompt-injection checks for
//! inbound peer messages.
//!
//! Two stages. First the deterministic pre-checks ([`precheck`]): a body over
//! [`MAX_BODY_BYTES`] or not valid UTF-8 is denied in either direction, and an
//! outbound body with a concrete secret ([`detectors`]) is denied. They are
//! binding: no classifier verdict, operator rule, observe mode or approval can
//! let such a message through, because a secret is never a judgement call and
//! observe mode exists to trial judgements, not to ship credentials. Secrets in
//! inbound peer messages are not scanned: reading a secret someone else sent
//! leaks nothing of ours, and code review traffic is full of token-like text.
//!
//! Personal data ([`pii`], [`listed`]) is a separate family the operator
//! turns on: card numbers, IBANs and listed values in outbound messages deny
//! or ask as `dlp.pii.action` and `dlp.listedValues.action` say.
//!
//! Then, when `dlp.classifier` is set, the classifier ([`classifier`]) judges
//! the message, and only a verdict that passes [`verdict::admit`] counts.
//! `review` asks the person, `deny` denies, and any failure to obtain an
//! admitted verdict denies with category `guard_failure`. `dlp.mode: observe`
//! relaxes classifier verdicts (including `guard_failure`) to `allow` with the
//! decision kept in `observed`; it never relaxes the pre-checks.
//!
//! Failure mode: **fail-closed** (an unreachable or misbehaving classifier denies).

pub mod classifier;
pub mod detectors;
pub mod exempt;
pub mod labelled;
pub mod listed;
pub mod pii;
mod prefixes;
pub mod vendors;
pub mod verdict;

use crate::config::destinations::Destination;
use crate::config::reader::{Obj, Reader};
use crate::model::{CheckStatus, Decision, Direction, Mode, OutboundMessage, Risk, Signal, Verdict};
use crate::ports::{Level, Ports};
use crate::prelude::*;
use classifier::{ClassifierConfig, OperatorRules, Subject};
use serde::Serialize;
use verdict::{GUARD_FAILURE, GuardDecision};

/// Largest message body, in bytes (32 KiB; exactly this is allowed).
pub const MAX_BODY_BYTES: usize = 32 * 1024;
/// Longest classifier category kept in signals and storage, in characters; longer or odd ones become `other`.
pub const MAX_STORED_CATEGORY_CHARS: usize = 64;

/// Rules this module decides with.
pub mod rules {
    /// The body is not valid UTF-8.
    pub const INVALID_UTF8: &str = "dlp.invalid-utf8";
    /// The body is over [`super::MAX_BODY_BYTES`].
    pub const TOO_LARGE: &str = "dlp.too-large";
    /// A concrete secret; the full rule is this and the detector's name, such as `dlp.secret.aws-access-key`.
    pub const SECRET_PREFIX: &str = "dlp.secret.";
    /// Personal data the operator turned on; the full rule is this and the kind, such as `dlp.pii.card`.
    pub const PII_PREFIX: &str = "dlp.pii.";
    /// A value the operator listed in `dlp.listedValues`.
    pub const LISTED_VALUE: &str = "dlp.listed-value";
    /// The pre-checks found nothing and nothing else was asked.
    pub const PRE_CHECKS_PASSED: &str = "dlp.pre-checks-passed";
    /// The classifier allowed the message.
    pub const CLASSIFIER_ALLOW: &str = "dlp.classifier.allow";
    /// The classifier wants a person to review the message.
    pub const CLASSIFIER_REVIEW: &str = "dlp.classifier.review";
    /// The classifier denied the message.
    pub const CLASSIFIER_DENY: &str = "dlp.classifier.deny";
    /// No admissible verdict: timeout, outage, malformed or mismatched answer.
    pub const GUARD_FAILURE: &str = "dlp.guard-failure";
}

/// The `dlp` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct DlpConfig {
    /// `enforce`, or `observe` to log classifier verdicts but allow. The pre-checks are binding in both.
    pub mode: Mode,
    /// The classifier; without it only the deterministic pre-checks run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classifier: Option<ClassifierConfig>,
    /// Operator rules per direction, sent with the classifier's instructions.
    pub rules: OperatorRules,
    /// Personal data to detect in outbound messages: card numbers and IBANs. Off by default.
    #[serde(skip_serializing_if = "pii::PiiConfig::is_off")]
    pub pii: pii::PiiConfig,
    /// Sensitive values the operator lists, kept as keyed hashes. None by default.
    #[serde(skip_serializing_if = "listed::ListedValues::is_empty")]
    #[cfg_attr(feature = "schema", schemars(with = "listed::ListedValuesDocument"))]
    pub listed_values: listed::ListedValues,
}

impl DlpConfig {
    /// Fields of the `dlp` section.
    pub const FIELDS: &'static [&'static str] = &["mode", "classifier", "rules", "pii", "listedValues"];

    /// Reads the `dlp` section; its unknown fields were already reported.
    pub fn read(r: &mut Reader, obj: Option<Obj<'_>>, destinations: &[Destination]) -> DlpConfig {
        let Some(obj) = obj else {
            return DlpConfig::default();
        };
        let mode = crate::config::reader::mode(r, &obj);
        let classifier = obj.get("classifier").and_then(|node| classifier::read_classifier(r, node, destinations));
        let section = r.section(&obj, "rules", OperatorRules::FIELDS);
        let rules = classifier::read_rules(r, section);
        if classifier.is_none()
            && obj.get("classifier").is_none()
            && (rules.outbound.is_some() || rules.inbound.is_some())
        {
            r.error(
                obj.path_of("rules"),
                "only the classifier reads rules; add `dlp.classifier` or remove `dlp.rules`",
            );
        }
        let section = r.section(&obj, "pii", pii::PiiConfig::FIELDS);
        let pii = pii::PiiConfig::read(r, section);
        let section = r.section(&obj, "listedValues", listed::ListedValues::FIELDS);
        let listed_values = listed::ListedValues::read(r, section);
        DlpConfig { mode, classifier, rules, pii, listed_values }
    }

    /// The check's status for reports.
    pub fn status(&self) -> CheckStatus {
        CheckStatus {
            check: "dlp".into(),
            active: true,
            mode: self.mode.as_str().into(),
            reason: None,
            failure_mode: "fail-closed".into(),
        }
    }

    /// The classifier's effective policy version: base, or base and the digest of the operator rules.
    pub fn policy_version(&self) -> String {
        self.rules.policy_version()
    }
}

/// The secret rule for `detector`, such as `dlp.secret.jwt`.
pub fn secret_rule(detector: &str) -> String {
    format!("{}{detector}", rules::SECRET_PREFIX)
}

/// The deterministic pre-checks: the body as text, or the binding deny.
pub fn precheck(message: &OutboundMessage) -> Result<&str, Verdict> {
    let size = message.body.len();
    if size > MAX_BODY_BYTES {
        return Err(Verdict::deny(
            rules::TOO_LARGE,
            format!(
                "The message is {size} bytes, over the limit of {MAX_BODY_BYTES}, so it was not checked and is refused."
            ),
            Risk::Medium,
        ));
    }
    let text = core::str::from_utf8(&message.body).map_err(|e| {
        Verdict::deny(
            rules::INVALID_UTF8,
            format!("The message is not valid UTF-8 (at byte {}), so it is refused.", e.valid_up_to()),
            Risk::Medium,
        )
    })?;
    if message.direction == Direction::Inbound {
        return Ok(text);
    }
    let hits = detectors::scan(text);
    let Some(first) = hits.first() else {
        return Ok(text);
    };
    let mut verdict = Verdict::deny(
        secret_rule(first.detector),
        format!(
            "The message contains {} (`{}` at character {}), so it is not sent. Secrets are refused before any other \
             check, whatever a classifier, an operator rule or an approval says.",
            if hits.len() == 1 { "a secret".to_string() } else { format!("{} secrets", hits.len()) },
            first.detector,
            first.offset
        ),
        Risk::Critical,
    );
    for hit in &hits {
        verdict =
            verdict.with_signal(Signal::new("dlp.secret", format!("{} at character {}", hit.detector, hit.offset)));
    }
    Err(verdict)
}

/// A category safe to keep in signals and storage: a short label, or
/// `other`. A label a secret detector recognises is a secret, not a label,
/// and is screened out like a reason that quotes one.
pub fn safe_category(category: &str) -> String {
    let ok = !category.is_empty()
        && category.chars().count() <= MAX_STORED_CATEGORY_CHARS
        && category.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b' '))
        && detectors::scan(category).is_empty();
    if ok { category.to_string() } else { "other".to_string() }
}

/// The classifier's reason for a person to read, unless it quotes a secret.
fn safe_reason(reason: &str) -> String {
    if detectors::scan(reason).is_empty() {
        crate::config::reader::shorten(reason)
    } else {
        "(the classifier's reason is withheld because it quotes a secret-like value)".to_string()
    }
}

/// What the classifier said about one message, as the checks use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    pub decision: GuardDecision,
    pub category: String,
}

/// The classifier's verdict on a message whose pre-checks passed, or `None`
/// when no classifier is configured for its direction. The verdict is already
/// under `dlp.mode`. `remembered` is a classification of this exact message
/// kept from an earlier check; it is used instead of asking again.
pub fn classify(
    config: &DlpConfig,
    ports: &Ports<'_>,
    message: &OutboundMessage,
    text: &str,
    remembered: Option<&Classification>,
) -> Option<(Verdict, Option<Classification>)> {
    let classifier = config.classifier.as_ref().filter(|c| c.classifies(message.direction))?;
    if let Some(known) = remembered {
        let verdict = classification_verdict(
            message.direction,
            known,
            "The classifier's earlier verdict on this exact message stands: it is not asked again.",
        );
        return Some((verdict.under(config.mode), Some(known.clone())));
    }
    let subject = Subject {
        direction: message.direction,
        channel: &message.channel,
        from: message.sender.as_deref(),
        to: &message.recipient,
        text,
    };
    crate::counters::bump(ports, "dlp.classifier.requests");
    let (verdict, classification) = match classifier::classify(classifier, &config.rules, ports, &subject) {
        Ok(v) => {
            let known = Classification { decision: v.decision, category: safe_category(&v.category) };
            (classification_verdict(message.direction, &known, &safe_reason(&v.reason)), Some(known))
        }
        Err(failure) => {
            crate::counters::bump(ports, &format!("dlp.guard-failure.{}", failure.code()));
            ports.log.write(Level::Warn, &format!("dlp classifier failed: {} ({failure})", failure.code()));
            let verdict = Verdict::deny(
                rules::GUARD_FAILURE,
                format!("The message could not be checked, so it is refused: {failure}."),
                Risk::High,
            )
            .with_signal(Signal::new("dlp.category", GUARD_FAILURE))
            .with_signal(Signal::new("dlp.guard-failure", failure.code()));
            (verdict, None)
        }
    };
    Some((verdict.under(config.mode), classification))
}

fn classification_verdict(direction: Direction, known: &Classification, reason: &str) -> Verdict {
    let what = match direction {
        Direction::Outbound => "data-loss",
        Direction::Inbound => "prompt-injection",
    };
    let verdict = match known.decision {
        GuardDecision::Allow => {
            Verdict::allow(rules::CLASSIFIER_ALLOW, format!("The {what} classifier allowed the message: {reason}"))
        }
        GuardDecision::Review => Verdict::new(
            Decision::Ask,
            rules::CLASSIFIER_REVIEW,
            format!("The {what} classifier wants a person to look at this message first: {reason}"),
            Risk::Medium,
        ),
        GuardDecision::Deny => Verdict::deny(
            rules::CLASSIFIER_DENY,
            format!("The {what} classifier refused the message: {reason}"),
            Risk::High,
        ),
    };
    verdict.with_signal(Signal::new("dlp.category", known.category.clone()))
}

/// The whole DLP answer to a message: the pre-checks, then the classifier.
/// The outbound checks call the two stages separately to put the consent
/// gate between them.
pub fn check(config: &DlpConfig, ports: &Ports<'_>, message: &OutboundMessage) -> Option<Verdict> {
    let text = match precheck(message) {
        Ok(text) => text,
        Err(verdict) => return Some(verdict),
    };
    let personal = pii::personal(config, message, text);
    if let Some(v) = &personal
        && v.decision == Decision::Deny
    {
        return personal;
    }
    match classify(config, ports, message, text, None) {
        Some((verdict, _)) if verdict.decision == Decision::Deny || personal.is_none() => Some(verdict),
        _ => Some(personal.unwrap_or_else(passed)),
    }
}

/// The answer when the pre-checks passed and nothing else had a say.
pub fn passed() -> Verdict {
    Verdict::allow(rules::PRE_CHECKS_PASSED, "No secret or encoding problem was found and no other check applies.")
}

#[cfg(test)]
mod tests;
