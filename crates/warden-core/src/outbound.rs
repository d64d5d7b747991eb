//! The order of the outbound checks and the approvals of asked messages.
//!
//! 1. DLP's deterministic pre-checks ([`dlp::precheck`]): size, encoding and
//!    concrete secrets. Binding: nothing later runs when they deny, so a
//!    secret never reaches the classifier, and no approval can undo them.
//!    Then personal data the operator turned on ([`dlp::pii::personal`]): a
//!    `deny` ends the check here; an `ask` joins the answers of step 4.
//! 2. The consent gate ([`gate::check`]): a block (opt-out, no consent, quiet
//!    hours) ends the check here, so a blocked message is not sent to the
//!    classifier either.
//! 3. The classifier ([`dlp::classify`]), if configured for the direction.
//! 4. The strictest answer wins: deny beats ask beats allow. In observe mode a
//!    family's answer is `allow` with the decision it would have made in
//!    `observed`; among equal enforced decisions the strictest observed one is
//!    reported.
//!
//! An `ask` carries an approval key, `m1:` and the approval digest: SHA-256 of
//! the canonical JSON of the message ID, sender, recipient, channel, thread,
//! direction, the SHA-256 of the body and the outbound policy version (the
//! digest of the `gate` and `dlp` sections, which includes the operator rules
//! and the classifier's policy version). An approval therefore covers only
//! that exact message to that exact recipient under those exact rules.
//!
//! Per digest a review record remembers the classifier's `review` or `deny`,
//! so a message waiting for review, or a denied one sent again, is not
//! classified again (a retry cannot shop for a kinder verdict); and it holds
//! the person's answer. An approval turns the remaining asks into `allow`
//! (`outbound.approved`); it never lifts a deny, so an opt-out, quiet hours,
//! a secret or a classifier deny stand. A rejection denies the message
//! (`outbound.rejected`). `once` answers are used up by the check they decide,
//! `session` answers apply only to checks of that session, `always` answers
//! last until the rules change. The review record holds no message text: only
//! the classifier's category label, the answer and the session ID.
//!
//! Failure mode: **fail-closed**. A review record that cannot be read or
//! written denies the message (`outbound.storage-unavailable`).

use crate::config::Config;
use crate::digest;
use crate::dlp::{self, Classification, verdict::GuardDecision};
use crate::gate::{self, GateConfig};
use crate::model::{Approval, Decision, OutboundMessage, PolicyError, Risk, Scope, Signal, Verdict};
use crate::ports::{Level, Ports, StorageError};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Approval keys of messages start with this.
pub const APPROVAL_KEY_PREFIX: &str = "m1:";
/// Storage namespace of review records, keyed by approval digest (hex).
pub const NAMESPACE: &str = "outbound";
/// Longest session ID an approval is bound to, in characters.
pub const MAX_SESSION_CHARS: usize = 512;

/// Rules this module decides with.
pub mod rules {
    /// A person approved this exact message.
    pub const APPROVED: &str = "outbound.approved";
    /// A person rejected this exact message.
    pub const REJECTED: &str = "outbound.rejected";
    /// The review record could not be read or written.
    pub const STORAGE_UNAVAILABLE: &str = "outbound.storage-unavailable";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Remembered {
    Review,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PersonAnswer {
    allow: bool,
    scope: Scope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    at_ms: u64,
}

/// What is remembered about one exact message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Review {
    /// The classifier's review or deny, with its category label.
    #[serde(skip_serializing_if = "Option::is_none")]
    classified: Option<(Remembered, String)>,
    /// Whether a verdict asked about this message, so an answer is expected.
    asked: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer: Option<PersonAnswer>,
    at_ms: u64,
}

impl Review {
    fn classification(&self) -> Option<Classification> {
        self.classified.as_ref().map(|(d, category)| Classification {
            decision: match d {
                Remembered::Review => GuardDecision::Review,
                Remembered::Deny => GuardDecision::Deny,
            },
            category: category.clone(),
        })
    }

    /// The person's answer, if it applies to a check in `session`.
    fn answer_for(&self, session: Option<&str>) -> Option<&PersonAnswer> {
        self.answer.as_ref().filter(|a| a.scope != Scope::Session || a.session_id.as_deref() == session)
    }
}

/// The policy version approvals are bound to: both outbound sections and the
/// classifier's effective policy version.
pub fn policy_version(config: &Config) -> String {
    digest::versioned(&json!({
        "gate": config.gate,
        "dlp": config.dlp,
        "guard": config.dlp.policy_version(),
    }))
}

/// The approval digest of a message under `policy_version`, in hex.
pub fn approval_digest(message: &OutboundMessage, policy_version: &str) -> String {
    let canonical = digest::canonical_json(&json!({
        "messageId": message.message_id,
        "from": message.sender,
        "to": message.recipient,
        "channel": message.channel,
        "thread": message.thread,
        "direction": message.direction,
        "bodyHash": digest::sha256_hex(&message.body),
        "policyVersion": policy_version,
    }));
    digest::sha256_hex(&canonical)
}

fn storage_failure(e: &StorageError) -> Verdict {
    Verdict::deny(
        rules::STORAGE_UNAVAILABLE,
        format!("The review state of this message could not be read or written ({e}), so it is held back."),
        Risk::High,
    )
}

/// The strictest of `parts` by enforced decision, then by the decision it would
/// have been; the others become signals.
fn strictest(parts: Vec<Verdict>) -> Option<Verdict> {
    let key = |v: &Verdict| (v.decision, v.observed.unwrap_or(v.decision));
    let mut best: Option<usize> = None;
    for (i, v) in parts.iter().enumerate() {
        if best.and_then(|b| parts.get(b)).is_none_or(|b| key(v) > key(b)) {
            best = Some(i);
        }
    }
    let best = best?;
    let mut chosen: Option<Verdict> = None;
    let mut others = Vec::new();
    for (i, v) in parts.into_iter().enumerate() {
        if i == best {
            chosen = Some(v);
        } else {
            others.push(v);
        }
    }
    let mut chosen = chosen?;
    for other in others {
        chosen.signals.push(Signal::new(other.rule, crate::config::reader::shorten(&other.reason)));
        chosen.signals.extend(other.signals);
    }
    Some(chosen)
}

/// Checks a message before it is sent (or, for peer messages, read), with
/// the flow check on its own key (no approval secret).
pub fn check(config: &Config, ports: &Ports<'_>, message: &OutboundMessage) -> Verdict {
    let keys = crate::flow::record::Keys::default();
    let version = digest::versioned(&config.flow);
    let flow =
        crate::flow::Flow { config: &config.flow, gate: &config.gate, secret: &[], keys: &keys, version: &version };
    check_with(config, &flow, ports, message)
}

/// Checks a message before it is sent (or, for peer messages, read).
pub fn check_with(
    config: &Config,
    flow: &crate::flow::Flow<'_>,
    ports: &Ports<'_>,
    message: &OutboundMessage,
) -> Verdict {
    let verdict = decide(config, flow, ports, message);
    let level =
        if verdict.decision == Decision::Allow && verdict.observed.is_none() { Level::Debug } else { Level::Info };
    // Outcomes and rules only: never the recipient or the text.
    if !ports.log.enabled(level) {
        return verdict;
    }
    ports.log.write(
        level,
        &format!(
            "{} message on {}: {} by {}{}",
            match message.direction {
                crate::model::Direction::Outbound => "outbound",
                crate::model::Direction::Inbound => "inbound",
            },
            crate::config::reader::shorten(&message.channel),
            verdict.decision.as_str(),
            verdict.rule,
            verdict.observed.map(|d| format!(" (observed: {})", d.as_str())).unwrap_or_default()
        ),
    );
    verdict
}

fn decide(config: &Config, flow: &crate::flow::Flow<'_>, ports: &Ports<'_>, message: &OutboundMessage) -> Verdict {
    let text = match dlp::precheck(message) {
        Ok(text) => text,
        Err(denied) => return denied,
    };
    let personal = dlp::pii::personal(&config.dlp, message, text);
    if let Some(v) = &personal
        && v.decision == Decision::Deny
    {
        return v.clone();
    }
    // Where the recipient and the links came from (`flow`); a recipient the
    // person named may count as consented (`flow.namedCountsAsConsent`).
    let flowed = match crate::flow::decide::outbound_step(flow, ports, message, text) {
        Ok(v) => v,
        Err(e) => return crate::flow::decide::outbound_storage_failure(&e),
    };
    if let Some(v) = &flowed
        && v.decision == Decision::Deny
    {
        return v.clone();
    }
    let named = match crate::flow::decide::recipient_named(flow, ports, message) {
        Ok(named) => named,
        Err(e) => return crate::flow::decide::outbound_storage_failure(&e),
    };
    let gate = if named && config.gate.require_consent {
        let consent_by_name = GateConfig { require_consent: false, ..config.gate.clone() };
        gate::check(&consent_by_name, ports, message)
            .map(|v| v.with_signal(Signal::new(gate::rules::NO_CONSENT, "The person named this recipient in this session, which counts as consent (`flow.namedCountsAsConsent`).")))
    } else {
        gate::check(&config.gate, ports, message)
    };
    if let Some(v) = &gate
        && v.decision == Decision::Deny
    {
        return v.clone();
    }
    let classifies = config.dlp.classifier.as_ref().is_some_and(|c| c.classifies(message.direction));
    if gate.is_none() && !classifies && personal.is_none() && flowed.is_none() {
        // Nothing can ask about this message, so there is no review state to read.
        return dlp::passed();
    }
    let version = policy_version(config);
    let digest = approval_digest(message, &version);
    let review = match store::get_json::<Review>(ports.storage, NAMESPACE, &digest) {
        Ok(r) => r.map(|(r, _)| r).unwrap_or_default(),
        Err(e) => return storage_failure(&e),
    };
    let remembered = review.classification();
    let classified = dlp::classify(&config.dlp, ports, message, text, remembered.as_ref());
    let mut new_classification = None;
    let mut parts: Vec<Verdict> = gate.into_iter().chain(personal).chain(flowed).collect();
    if let Some((verdict, classification)) = classified {
        if remembered.is_none() {
            new_classification = classification.filter(|c| c.decision != GuardDecision::Allow);
        }
        parts.push(verdict);
    }
    let mut verdict = strictest(parts).unwrap_or_else(dlp::passed);
    let answer = review.answer_for(message.session_id.as_deref()).cloned();
    let mut consume = false;
    match &answer {
        Some(a) if !a.allow && verdict.decision != Decision::Deny => {
            verdict = Verdict::deny(rules::REJECTED, "A person rejected this exact message.", Risk::Medium)
                .with_signal(Signal::new(verdict.rule, crate::config::reader::shorten(&verdict.reason)));
            consume = a.scope == Scope::Once;
        }
        Some(a) if a.allow && verdict.decision == Decision::Ask => {
            let mut approved = Verdict::allow(
                rules::APPROVED,
                format!("A person approved this exact message ({} scope).", a.scope.as_str()),
            );
            approved.scope = Some(a.scope);
            approved.signals.push(Signal::new(verdict.rule, crate::config::reader::shorten(&verdict.reason)));
            approved.signals.extend(verdict.signals);
            verdict = approved;
            consume = a.scope == Scope::Once;
        }
        _ => {}
    }
    let asked = verdict.decision == Decision::Ask;
    if asked {
        verdict.approval_key = Some(format!("{APPROVAL_KEY_PREFIX}{digest}"));
        verdict.scope = Some(Scope::Once);
    }
    let changes = new_classification.is_some() || consume || (asked && !review.asked);
    if changes {
        let now = message.now_ms;
        let update = store::update_json::<Review>(ports.storage, NAMESPACE, &digest, |current| {
            let mut r = current.unwrap_or_default();
            if let Some(c) = &new_classification
                && r.classified.is_none()
            {
                let kind = if c.decision == GuardDecision::Deny { Remembered::Deny } else { Remembered::Review };
                r.classified = Some((kind, c.category.clone()));
            }
            if consume {
                r.answer = None;
                r.asked = false;
            }
            r.asked |= asked;
            r.at_ms = now;
            Some(r)
        });
        if let Err(e) = update {
            return storage_failure(&e);
        }
    }
    verdict
}

/// Records a person's answer to an `ask` about a message.
pub fn record_approval(_config: &Config, ports: &Ports<'_>, approval: &Approval) -> Result<(), PolicyError> {
    let digest = approval
        .key
        .strip_prefix(APPROVAL_KEY_PREFIX)
        .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .ok_or_else(|| {
            PolicyError::InvalidInput(format!(
                "key: `{}` is not an approval key of a message",
                crate::config::reader::shorten(&approval.key)
            ))
        })?;
    let session = match approval.scope {
        Scope::Session => match approval.session_id.as_deref() {
            Some(s) if !s.trim().is_empty() && s.chars().count() <= MAX_SESSION_CHARS => Some(s.to_string()),
            _ => {
                return Err(PolicyError::InvalidInput(format!(
                    "sessionId: a `session` answer needs the session, 1 to {MAX_SESSION_CHARS} characters"
                )));
            }
        },
        _ => None,
    };
    let request = serde_json::json!({
        "key": approval.key, "allow": approval.allow, "scope": approval.scope.as_str(), "sessionId": session,
    });
    let keyed = crate::idempotency::Keyed::new(
        NAMESPACE,
        "approval",
        approval.idempotency_key.as_deref(),
        &request,
        approval.now_ms,
    )?;
    crate::idempotency::commit_once(ports.storage, keyed.as_ref(), || {
        let read = store::get_json::<Review>(ports.storage, NAMESPACE, digest)?;
        let when = store::unchanged(&read);
        let Some(mut review) = read.map(|(r, _)| r).filter(|r| r.asked) else {
            return Err(PolicyError::InvalidInput(
                "key: no check is waiting for an answer about this message; check it again and answer the key it gives"
                    .into(),
            ));
        };
        review.answer = Some(PersonAnswer {
            allow: approval.allow,
            scope: approval.scope,
            session_id: session.clone(),
            at_ms: approval.now_ms,
        });
        review.at_ms = approval.now_ms;
        Ok(vec![store::json_write(NAMESPACE, digest, &review, when)?])
    })
}

#[cfg(test)]
mod tests;
