//! Inbound safety scenarios: requester-aware checks of each human turn.
//!
//! Operators describe scenarios (say, questions about one person's salary).
//! Before the model runs on a turn a person triggered, the current message is
//! checked against every scenario that applies to this requester, agent and
//! channel; when one matches, its `flaggedPrompt` is added after the message,
//! in one `<safety>` block, so the model knows this requester is not to get
//! that answer. It is a prompt-level guardrail, not access control.
//!
//! Each turn, in order:
//!
//! 1. Disabled: `not_configured`. Not triggered by a person: `not_user_triggered`.
//! 2. A rebuild of a run already checked gets that run's answer again (`reused`).
//! 3. A channel on the global `excludedChannels`: `excluded`.
//! 4. A message with no text: `empty_request`.
//! 5. Disabled scenarios, scenarios for other agents, scenarios whose own
//!    `excludedChannels` list the channel and scenarios that approve this
//!    requester are dropped (see `identity`); if none remain: `no_scenarios`,
//!    and nothing is sent.
//! 6. No enabled classifier: `provider_disabled`.
//! 7. A message over the size budget: `input_too_large` (see below).
//! 8. Otherwise one yes/no question per remaining scenario, all in one
//!    `send-all` batch under the total deadline `timeoutMs` (see `classifier`
//!    and `serialize`). Every scenario whose yes-probability reaches its
//!    `minProbability` adds its prompt: `flagged`, or `no_match` if none.
//!
//! When answers are missing, could-not-check is never reported as no match:
//!
//! | answers                                   | outcome                         | prompts added |
//! |-------------------------------------------|---------------------------------|---------------|
//! | all usable, some match                    | `flagged`                       | the matches   |
//! | all usable, none match                    | `no_match`                      | none          |
//! | some usable with a match, some not        | `partial_response`              | the matches   |
//! | some usable without a match, some not     | the cause of the unusable ones  | none          |
//! | none usable                               | the cause of the unusable ones  | none          |
//!
//! The cause, most specific first: a missing credential (`missing_key`), a
//! cancelled request (`cancelled`), the deadline (`timed_out`), anything else
//! (`failed`: a refused destination, a transport error, a status other than
//! 200, a malformed body, no Yes or No token).
//!
//! Failure mode: **fail-open**. When the check cannot run, the turn proceeds
//! without safety prompts, and the outcome says why. The one exception is
//! `input_too_large`: the requester controls the size of the message, so a
//! message too large to check gets every eligible scenario's prompt
//! (fail-closed). The message is never truncated.
//!
//! Every checked turn bumps `safety.outcome.<outcome>`, each classifier match
//! `safety.scenario.<id>`, and a turn without provider, account or sender ID
//! also `safety.missing_identity`; a reused answer counts nothing again. Log
//! lines carry the outcome, error code, HTTP status and scenario counts, never
//! message text unless the configuration turns `debug` on.

mod classifier;
pub mod config;
pub mod diagnostics;
pub mod identity;
pub mod runs;
pub mod serialize;
#[cfg(test)]
mod tests;

pub use config::{ChannelRef, ClassifierConfig, Requestor, SafetyConfig, Scenario};

use crate::counters;
use crate::model::{SafetyOutcome, Signal, Trigger, Turn, TurnOutcome};
use crate::ports::{HttpError, Level, Ports};
use crate::prelude::*;
use classifier::Failure;
use diagnostics::KeySeen;

/// The tag the prompts of matched scenarios are wrapped in.
pub const TAG: &str = "safety";
/// Longest stretch of message text a debug log line shows, in characters.
pub const MAX_DEBUG_TEXT_CHARS: usize = 500;

/// Rule names: every outcome decides as `safety.<outcome>`.
pub mod rules {
    use crate::model::SafetyOutcome;
    use crate::prelude::*;

    /// The rule an outcome is reported under, such as `safety.flagged`.
    pub fn of(outcome: SafetyOutcome) -> String {
        format!("safety.{}", outcome.as_str())
    }
}

/// What one check found, before it becomes a `TurnOutcome`.
struct Checked<'c> {
    outcome: SafetyOutcome,
    reason: String,
    /// Scenarios whose prompts are added.
    prompts: Vec<&'c Scenario>,
    /// Scenarios the classifier matched.
    matched: Vec<&'c str>,
    signals: Vec<Signal>,
    key: KeySeen,
    /// Scenarios that applied to the turn.
    eligible: usize,
    /// Scenarios without a usable answer.
    unanswered: usize,
    error: Option<&'static str>,
    status: Option<u16>,
}

impl<'c> Checked<'c> {
    fn plain(outcome: SafetyOutcome, reason: impl Into<String>) -> Self {
        Checked {
            outcome,
            reason: reason.into(),
            prompts: Vec::new(),
            matched: Vec::new(),
            signals: Vec::new(),
            key: KeySeen::Unknown,
            eligible: 0,
            unanswered: 0,
            error: None,
            status: None,
        }
    }
}

/// The block added after the person's message: every prompt, in scenario
/// order, inside one pair of `<safety>` tags.
pub fn safety_block<'a>(prompts: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let prompts: Vec<&str> = prompts.into_iter().collect();
    if prompts.is_empty() {
        return None;
    }
    Some(format!("<{TAG}>\n{}\n</{TAG}>", prompts.join("\n\n")))
}

/// Checks an inbound turn. Fails open; see the module documentation. With
/// `debug`, a debug log line also shows the start of the message.
pub fn check(config: &SafetyConfig, ports: &Ports<'_>, turn: &Turn, debug: bool) -> TurnOutcome {
    if !config.enabled {
        let mut outcome = TurnOutcome::unchanged(
            SafetyOutcome::NotConfigured,
            "safety scenarios are disabled, so the turn was not checked",
        );
        outcome.rule = crate::rules::NOT_CONFIGURED.to_string();
        return outcome;
    }
    if turn.trigger != Trigger::User {
        diagnostics::observe(ports, config, turn, KeySeen::Unknown, false);
        let outcome = SafetyOutcome::NotUserTriggered;
        counters::bump(ports, &diagnostics::outcome_counter(outcome));
        ports.log.write(Level::Debug, &format!("safety: outcome={}", outcome.as_str()));
        return TurnOutcome::unchanged(outcome, "the turn was not triggered by a person, so it was not checked");
    }
    if debug {
        let text: String = turn.message.chars().take(MAX_DEBUG_TEXT_CHARS).collect();
        ports.log.write(Level::Debug, &format!("safety: debug: message {text:?}"));
    }
    let missing_identity = identity::is_missing(&turn.identity);
    let run = turn
        .run_id
        .as_deref()
        .filter(|r| !r.is_empty())
        .map(|run_id| (run_id, runs::binding(config.fingerprint(), &turn.identity, &turn.message)));
    if let Some((run_id, binding)) = &run
        && let Some(record) = runs::lookup(ports, run_id, binding, turn.now_ms)
    {
        let warnings = diagnostics::observe(ports, config, turn, KeySeen::Unknown, missing_identity);
        let outcome = reused(config, record, &warnings);
        ports.log.write(
            Level::Debug,
            &format!("safety: outcome={} scenarios={} reused", outcome.outcome.as_str(), outcome.scenarios.len()),
        );
        return outcome;
    }
    let checked = evaluate(config, ports, turn);
    if let Some((run_id, binding)) = &run {
        let record = runs::RunRecord {
            binding: binding.clone(),
            at_ms: turn.now_ms,
            outcome: checked.outcome,
            reason: checked.reason.clone(),
            scenarios: checked.prompts.iter().map(|s| s.id.clone()).collect(),
            missing_identity,
        };
        runs::remember(ports, run_id, &record);
    }
    let warnings = diagnostics::observe(ports, config, turn, checked.key, missing_identity);
    counters::bump(ports, &diagnostics::outcome_counter(checked.outcome));
    for id in &checked.matched {
        counters::bump(ports, &diagnostics::scenario_counter(id));
    }
    if missing_identity {
        counters::bump(ports, diagnostics::MISSING_IDENTITY_COUNTER);
    }
    log_line(ports, &checked);
    finish(checked, missing_identity, &warnings)
}

fn finish(checked: Checked<'_>, missing_identity: bool, warnings: &[String]) -> TurnOutcome {
    let mut outcome = TurnOutcome::unchanged(checked.outcome, checked.reason);
    outcome.rule = rules::of(checked.outcome);
    outcome.append_context = safety_block(checked.prompts.iter().map(|s| s.flagged_prompt.as_str()));
    outcome.scenarios = checked.prompts.iter().map(|s| s.id.clone()).collect();
    outcome.missing_identity = missing_identity;
    outcome.signals = checked.signals;
    if missing_identity {
        outcome.signals.push(Signal::new(
            "safety.missing_identity",
            "the host passed no provider, account or sender ID, so no approval applied",
        ));
    }
    outcome.signals.extend(warning_signals(warnings));
    outcome
}

fn warning_signals(warnings: &[String]) -> impl Iterator<Item = Signal> + '_ {
    warnings.iter().map(|w| Signal::new("safety.warning", w.split(':').next().unwrap_or_default()))
}

/// A stored answer, as a rebuild of the same run gets it.
fn reused(config: &SafetyConfig, record: runs::RunRecord, warnings: &[String]) -> TurnOutcome {
    // The record is bound to these exact settings, so every ID is still configured.
    let prompts: Vec<&Scenario> =
        record.scenarios.iter().filter_map(|id| config.scenarios.iter().find(|s| &s.id == id)).collect();
    let mut outcome = TurnOutcome::unchanged(record.outcome, record.reason);
    outcome.rule = rules::of(record.outcome);
    outcome.append_context = safety_block(prompts.iter().map(|s| s.flagged_prompt.as_str()));
    outcome.scenarios = prompts.iter().map(|s| s.id.clone()).collect();
    outcome.missing_identity = record.missing_identity;
    outcome.reused = true;
    outcome.signals.push(Signal::new("safety.reused", "a build of this run was already checked; its answer is reused"));
    outcome.signals.extend(warning_signals(warnings));
    outcome
}

fn evaluate<'c>(config: &'c SafetyConfig, ports: &Ports<'_>, turn: &Turn) -> Checked<'c> {
    let Some(eligible) = identity::eligible(config, &turn.identity) else {
        return Checked::plain(SafetyOutcome::Excluded, "the channel is excluded from every safety scenario");
    };
    if turn.message.trim().is_empty() {
        return Checked::plain(SafetyOutcome::EmptyRequest, "the message has no text to check");
    }
    let skipped: Vec<Signal> = eligible
        .skipped
        .iter()
        .map(|(id, why)| Signal::new("safety.skipped", format!("{id}: {}", why.as_str())))
        .collect();
    let scenarios = eligible.scenarios;
    let with_skipped = |mut c: Checked<'c>| {
        c.eligible = scenarios.len();
        c.signals.splice(0..0, skipped.iter().cloned());
        c
    };
    if scenarios.is_empty() {
        return with_skipped(Checked::plain(
            SafetyOutcome::NoScenarios,
            "no scenario applies to this requester, agent and channel, so nothing was sent to the classifier",
        ));
    }
    let Some(classifier) = config.active_classifier() else {
        return with_skipped(Checked::plain(
            SafetyOutcome::ProviderDisabled,
            "the classifier is disabled or not configured, so the turn was not checked",
        ));
    };
    let size = serialize::estimate_tokens(&turn.message);
    if size > serialize::MAX_MESSAGE_TOKENS {
        let mut c = Checked::plain(
            SafetyOutcome::InputTooLarge,
            format!(
                "the message is estimated at {size} tokens, over the budget of {}; it was not checked, and the \
                 prompts of all {} applicable scenarios were added",
                serialize::MAX_MESSAGE_TOKENS,
                scenarios.len()
            ),
        );
        c.prompts = scenarios.clone();
        return with_skipped(c);
    }
    let selection = serialize::select(turn, config.history_messages);
    let conversation = serialize::render(&selection, &turn.message);
    let requests: Vec<_> =
        scenarios.iter().map(|s| classifier::request(classifier, config.timeout_ms, s, &conversation)).collect();
    let answers = ports.http.send_all(&requests);
    let mut answers = answers.into_iter();
    let results: Vec<(&Scenario, Result<f64, Failure>)> = scenarios
        .iter()
        .map(|s| (*s, answers.next().map_or(Err(Failure::NoAnswer), classifier::read_answer)))
        .collect();
    let mut c = judge(results, config);
    if selection.left_out > 0 {
        c.signals.push(Signal::new(
            "safety.context",
            format!(
                "{} earlier or channel messages did not fit the context budget and were left out",
                selection.left_out
            ),
        ));
    }
    with_skipped(c)
}

/// Turns the answers into one outcome; see the table in the module documentation.
fn judge<'c>(results: Vec<(&'c Scenario, Result<f64, Failure>)>, config: &SafetyConfig) -> Checked<'c> {
    let asked = results.len();
    let mut matched: Vec<&'c Scenario> = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
    let mut signals = Vec::new();
    for (scenario, result) in results {
        match result {
            Ok(p) => {
                signals.push(Signal::new(
                    "safety.probability",
                    format!("{}: {p:.2} (minimum {:.2})", scenario.id, scenario.min_probability),
                ));
                if p >= scenario.min_probability {
                    matched.push(scenario);
                }
            }
            Err(f) => {
                let status = f.status().map(|s| format!(" (status {s})")).unwrap_or_default();
                signals.push(Signal::new("safety.unanswered", format!("{}: {}{status}", scenario.id, f.code())));
                failures.push(f);
            }
        }
    }
    let answered = asked - failures.len();
    let key = if failures.contains(&Failure::Http(HttpError::MissingCredential)) {
        KeySeen::Missing
    } else if answered > 0
        // A refused destination, an oversized request and a cancellation end before the credential is looked up.
        || failures.iter().any(|f| {
            !matches!(
                f,
                Failure::Http(HttpError::Denied | HttpError::TooLarge | HttpError::Cancelled) | Failure::NoAnswer
            )
        })
    {
        KeySeen::Present
    } else {
        KeySeen::Unknown
    };
    let first_failure = failures.first();
    let (outcome, reason) = if failures.is_empty() {
        if matched.is_empty() {
            (SafetyOutcome::NoMatch, format!("checked {asked} scenarios; none matched"))
        } else {
            (
                SafetyOutcome::Flagged,
                format!("{} of {asked} scenarios matched; their safety prompts were added", matched.len()),
            )
        }
    } else if !matched.is_empty() {
        (
            SafetyOutcome::PartialResponse,
            format!(
                "{} of {asked} scenarios matched and their safety prompts were added; {} could not be checked ({})",
                matched.len(),
                failures.len(),
                first_failure.map_or("", Failure::code)
            ),
        )
    } else {
        let cause = cause(&failures);
        let what = match cause {
            SafetyOutcome::MissingKey => "the classifier's credential is missing".to_string(),
            SafetyOutcome::Cancelled => "the check was cancelled".to_string(),
            SafetyOutcome::TimedOut => format!("the classifier did not answer within {} ms", config.timeout_ms),
            _ => format!("the classifier gave no usable answer ({})", first_failure.map_or("", Failure::code)),
        };
        let answered_note = if answered > 0 {
            format!(
                "; {answered} of {asked} scenarios answered without a match, the other {} could not be checked",
                failures.len()
            )
        } else {
            String::new()
        };
        (cause, format!("{what}, so the turn was not checked{answered_note}"))
    };
    Checked {
        outcome,
        reason,
        prompts: matched.clone(),
        matched: matched.iter().map(|s| s.id.as_str()).collect(),
        signals,
        key,
        eligible: asked,
        unanswered: failures.len(),
        error: first_failure.map(Failure::code),
        status: failures.iter().find_map(Failure::status),
    }
}

/// The outcome for scenarios that could not be checked, most specific cause first.
fn cause(failures: &[Failure]) -> SafetyOutcome {
    let any = |e: HttpError| failures.contains(&Failure::Http(e));
    if any(HttpError::MissingCredential) {
        SafetyOutcome::MissingKey
    } else if any(HttpError::Cancelled) {
        SafetyOutcome::Cancelled
    } else if any(HttpError::Timeout) {
        SafetyOutcome::TimedOut
    } else {
        SafetyOutcome::Failed
    }
}

fn log_line(ports: &Ports<'_>, c: &Checked<'_>) {
    let level = match c.outcome {
        SafetyOutcome::Flagged | SafetyOutcome::PartialResponse | SafetyOutcome::InputTooLarge => Level::Info,
        SafetyOutcome::TimedOut | SafetyOutcome::Failed | SafetyOutcome::Cancelled => Level::Warn,
        _ => Level::Debug,
    };
    let status = c.status.map_or_else(|| "-".to_string(), |s| s.to_string());
    ports.log.write(
        level,
        &format!(
            "safety: outcome={} scenarios={} matched={} unanswered={} error={} status={status}",
            c.outcome.as_str(),
            c.eligible,
            c.matched.len(),
            c.unanswered,
            c.error.unwrap_or("-"),
        ),
    );
}

/// Warnings an operator should act on, from what turns have revealed.
pub fn warnings(config: &SafetyConfig, ports: &Ports<'_>) -> Vec<String> {
    diagnostics::warnings(config, ports)
}
