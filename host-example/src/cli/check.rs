//! `warden check` (one request, or `--batch` JSON lines) and `warden explain`.
//!
//! A batch reads one request a line and writes one answer a line, in the
//! same order. A line that is not a valid request gets an error object on its
//! line (`{"line": N, "error": "...", "field": "..."}`) and the batch goes on;
//! blank lines are skipped without an answer. The exit code looks at every
//! line: 3 when a decision met `--fail-on`, else 2 when a line was refused,
//! else 0.

use super::{
    CheckKind, EXIT_INVALID, EXIT_THRESHOLD, FailOn, Failure, HostArgs, Resolved, call_failure, start,
    turn_start_failure,
};
use crate::clock::Clock;
use crate::json::{self, VerdictJson};
use crate::runtime::Runtime;
use serde_json::{Value, json};
use std::io::{BufRead, Write};

/// Longest line `check --batch` reads, in bytes (the single-request limit).
pub const MAX_BATCH_LINE_BYTES: u64 = super::MAX_STDIN_BYTES;

/// One answer: its JSON, and the decision and rule `--fail-on` compares.
pub(super) struct Answer {
    pub json: Value,
    /// The answer on one line, its fields in the documented order.
    pub line: String,
    /// The answer indented, as a single `check` prints it.
    pub pretty: String,
    pub decision: &'static str,
    pub rule: String,
}

/// A request parsed before anything opens, so a refused one writes nothing.
enum Parsed {
    Tool(json::ToolCallJson),
    Outbound(crate::bindings::exports::warden::guard::policy::OutboundMessage),
    ToolResult(json::ToolResultJson),
    Turn(json::TurnJson),
}

fn parse(what: CheckKind, text: &str, clock: Clock) -> Result<Parsed, String> {
    Ok(match what {
        CheckKind::Tool => Parsed::Tool(json::parse_request(text, clock)?),
        CheckKind::Outbound => Parsed::Outbound(json::parse_request::<json::OutboundJson>(text, clock)?.into_wit()?),
        CheckKind::ToolResult => Parsed::ToolResult(json::parse_request(text, clock)?),
        CheckKind::Turn => Parsed::Turn(json::parse_request(text, clock)?),
    })
}

fn answer(value: &impl serde::Serialize, decision: &'static str, rule: String) -> Result<Answer, Failure> {
    let encode = |e: serde_json::Error| Failure::failed(e.to_string());
    let json = serde_json::to_value(value).map_err(encode)?;
    let line = serde_json::to_string(value).map_err(encode)?;
    let pretty = serde_json::to_string_pretty(value).map_err(encode)?;
    Ok(Answer { json, line, pretty, decision, rule })
}

fn decision_of(d: &str) -> &'static str {
    match d {
        "allow" => "allow",
        "ask" => "ask",
        _ => "deny",
    }
}

/// Decides one parsed request.
fn decide(runtime: &Runtime, parsed: Parsed) -> Result<Answer, Failure> {
    match parsed {
        Parsed::Tool(call) => {
            let v = VerdictJson::from(&runtime.check_tool_call(&call.into()));
            answer(&v, decision_of(&v.decision), v.rule.clone())
        }
        Parsed::Outbound(message) => {
            let v = VerdictJson::from(&runtime.check_outbound(&message));
            answer(&v, decision_of(&v.decision), v.rule.clone())
        }
        Parsed::ToolResult(result) => {
            let o = runtime.observe_tool_result(&result.into()).map_err(call_failure)?;
            answer(&json::ObservationJson::from(&o), "allow", String::new())
        }
        Parsed::Turn(turn) => turn_answer(&json::TurnOutcomeJson::from(&runtime.check_turn(&turn.into()))),
    }
}

fn turn_answer(o: &json::TurnOutcomeJson) -> Result<Answer, Failure> {
    answer(o, if o.proceed { "allow" } else { "deny" }, o.rule.clone())
}

/// The runtime, or for a turn the fail-open answer when it cannot start.
fn open(
    host: &HostArgs,
    what: CheckKind,
    config: &str,
    policy: &Resolved,
    stderr: &mut dyn Write,
) -> Result<Result<Runtime, String>, Failure> {
    match start(host, config, &policy.db, Some(&policy.config)) {
        Ok(runtime) => Ok(Ok(runtime)),
        Err(f) if f.code == super::EXIT_FAILURE && what == CheckKind::Turn => {
            let _ = writeln!(stderr, "warden: {}; the turn proceeds unchecked", f.message.trim_end());
            Ok(Err(f.message.trim_end().to_string()))
        }
        Err(f) => Err(f),
    }
}

/// The check a rule or signal belongs to, by its first segment: the tool-call
/// judge's parts (exec gate, path guard, self-protection, input validation,
/// budgets, decision memory) are reported under `tools`.
pub fn check_of(name: &str) -> &str {
    let family = name.split('.').next().unwrap_or(name);
    match family {
        "exec" | "path" | "self" | "input" | "memory" | "budget" | "mcp" | "fetch" | "payment" => "tools",
        other => other,
    }
}

/// Refuses `--fail-on` for `tool-result`, which decides nothing.
pub(super) fn check_threshold(what: CheckKind, threshold: Option<FailOn>) -> Result<(), Failure> {
    if what == CheckKind::ToolResult && threshold.is_some() {
        return Err(Failure::invalid(
            "--fail-on: `check tool-result` records what a tool returned and decides nothing, so there is no \
             decision to compare",
        ));
    }
    Ok(())
}

/// `warden check` of one request.
#[allow(clippy::too_many_arguments)]
pub(super) fn one(
    host: &HostArgs,
    what: CheckKind,
    policy: &Resolved,
    config: &str,
    request: &str,
    clock: Clock,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<Answer, Failure> {
    let parsed = parse(what, request, clock).map_err(Failure::invalid)?;
    match open(host, what, config, policy, stderr)? {
        Ok(runtime) => decide(&runtime, parsed),
        Err(why) => turn_answer(&turn_start_failure(&why)),
    }
    .and_then(|answer| {
        writeln!(stdout, "{}", answer.pretty).map_err(|e| Failure::failed(format!("cannot write the answer: {e}")))?;
        Ok(answer)
    })
}

/// The field an error message names: the path before its first `: `, when it looks like one.
fn field_of(message: &str) -> Option<&str> {
    let (head, _) = message.split_once(": ")?;
    let looks_like_path =
        !head.is_empty() && head.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '[' | ']' | '_' | '-'));
    looks_like_path.then_some(head)
}

/// The error object of a refused batch line.
pub fn line_error(line: usize, message: &str) -> Value {
    let mut out = json!({"line": line, "error": message});
    if let Some(field) = field_of(message) {
        out["field"] = Value::String(field.to_string());
    }
    out
}

/// `warden check --batch`: JSON lines in, JSON lines out, in order.
#[allow(clippy::too_many_arguments)]
pub(super) fn batch(
    host: &HostArgs,
    what: CheckKind,
    policy: &Resolved,
    config: &str,
    input: &mut dyn BufRead,
    clock: Clock,
    threshold: Option<FailOn>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<(), Failure> {
    let write_err = |e: std::io::Error| Failure::failed(format!("cannot write the answer: {e}"));
    let mut runtime: Option<Result<Runtime, String>> = None;
    let (mut refused, mut met): (usize, Option<(usize, &'static str, String)>) = (0, None);
    let mut number = 0usize;
    loop {
        let mut raw = Vec::new();
        let read = std::io::Read::take(&mut *input, MAX_BATCH_LINE_BYTES + 1)
            .read_until(b'\n', &mut raw)
            .map_err(|e| Failure::invalid(format!("cannot read the requests: {e}")))?;
        if read == 0 {
            break;
        }
        number += 1;
        if raw.len() as u64 > MAX_BATCH_LINE_BYTES {
            return Err(Failure::invalid(format!(
                "line {number}: longer than {MAX_BATCH_LINE_BYTES} bytes; the batch stops here"
            )));
        }
        let Ok(text) = std::str::from_utf8(&raw) else {
            refused += 1;
            writeln!(stdout, "{}", line_error(number, "the line is not valid UTF-8")).map_err(write_err)?;
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        let parsed = match parse(what, text, clock) {
            Ok(p) => p,
            Err(message) => {
                refused += 1;
                writeln!(stdout, "{}", line_error(number, &message)).map_err(write_err)?;
                continue;
            }
        };
        let started = match &mut runtime {
            Some(r) => r,
            None => runtime.insert(open(host, what, config, policy, stderr)?),
        };
        let answer = match started {
            Ok(runtime) => match decide(runtime, parsed) {
                Ok(a) => a,
                Err(f) if f.code == EXIT_INVALID => {
                    refused += 1;
                    writeln!(stdout, "{}", line_error(number, &f.message)).map_err(write_err)?;
                    continue;
                }
                Err(f) => return Err(f),
            },
            Err(why) => turn_answer(&turn_start_failure(why))?,
        };
        writeln!(stdout, "{}", answer.line).map_err(write_err)?;
        if met.is_none() && threshold.is_some_and(|t| t.met_by(answer.decision)) {
            met = Some((number, answer.decision, answer.rule));
        }
    }
    stdout.flush().map_err(write_err)?;
    if let Some((line, decision, rule)) = met {
        return Err(Failure {
            code: EXIT_THRESHOLD,
            message: format!("line {line}: the decision is `{decision}` by rule `{rule}`"),
        });
    }
    if refused > 0 {
        return Err(Failure::invalid(format!("{refused} line(s) were refused; each has an error object on its line")));
    }
    Ok(())
}

/// `warden explain`: the request's answer, the checks this configuration runs,
/// what each found (the answer's signals) and the rule that decided.
#[allow(clippy::too_many_arguments)]
pub(super) fn explain(
    host: &HostArgs,
    what: CheckKind,
    policy: &Resolved,
    config: &str,
    request: &str,
    clock: Clock,
    as_json: bool,
    stdout: &mut dyn Write,
) -> Result<(), Failure> {
    if what == CheckKind::ToolResult {
        return Err(Failure::invalid(
            "explain: `tool-result` decides nothing; explain a `tool`, `outbound` or `turn` request",
        ));
    }
    let parsed = parse(what, request, clock).map_err(Failure::invalid)?;
    let runtime = start(host, config, &policy.db, Some(&policy.config))?;
    let report = json::ConfigReportJson::from(runtime.report());
    let answer = decide(&runtime, parsed)?;
    let signals: Vec<(String, String)> = answer.json["signals"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|s| {
                    let name = s["name"].as_str().unwrap_or_default().to_string();
                    (name, s["detail"].as_str().unwrap_or_default().to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    let reason = answer.json["reason"].as_str().unwrap_or_default().to_string();
    if as_json {
        let checks: Vec<Value> = report
            .checks
            .iter()
            .map(|c| json!({"check": c.check, "active": c.active, "mode": c.mode, "failureMode": c.failure_mode}))
            .collect();
        let findings: Vec<Value> = signals.iter().map(|(n, d)| json!({"name": n, "detail": d})).collect();
        let out = json!({
            "decision": answer.decision,
            "decidedBy": {"rule": answer.rule, "reason": reason},
            "checks": checks,
            "findings": findings,
            "warnings": report.warnings,
            "policyVersion": report.policy_version,
            "answer": answer.json,
        });
        return super::print_json(stdout, &out);
    }
    let mut text = String::new();
    let verb = if what == CheckKind::Turn { "outcome" } else { "decision" };
    text.push_str(&format!("{verb}: {}\n", answer.decision));
    text.push_str(&format!("decided by rule: {}\n", answer.rule));
    text.push_str(&format!("reason: {reason}\n"));
    if let Some(risk) = answer.json["risk"].as_str() {
        text.push_str(&format!("risk: {risk}\n"));
    }
    text.push_str(&format!("\nchecks in this configuration ({}):\n", report.policy_version));
    for c in &report.checks {
        let state = if c.active { "on" } else { "off" };
        let found = signals.iter().filter(|(n, _)| check_of(n) == c.check).count();
        let decided = check_of(&answer.rule) == c.check;
        let mut notes = Vec::new();
        if decided {
            notes.push("decided".to_string());
        }
        if found > 0 {
            notes.push(format!("{found} finding(s)"));
        }
        let notes = if notes.is_empty() { String::new() } else { format!("  [{}]", notes.join(", ")) };
        text.push_str(&format!("  {:<12} {state:<3} {} (fails {}){notes}\n", c.check, c.mode, c.failure_mode));
    }
    text.push_str("\nfindings (signals the checks reported):\n");
    if signals.is_empty() {
        text.push_str("  (none)\n");
    }
    for (name, detail) in &signals {
        text.push_str(&format!("  {name}: {detail}\n"));
    }
    if !report.warnings.is_empty() {
        text.push_str("\nconfiguration warnings:\n");
        for w in &report.warnings {
            text.push_str(&format!("  {w}\n"));
        }
    }
    stdout.write_all(text.as_bytes()).map_err(|e| Failure::failed(format!("cannot write the answer: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_line_names_its_number_and_field() {
        let e = line_error(3, "toolName: invalid type: integer `7`, expected a string");
        assert_eq!(e["line"], 3);
        assert_eq!(e["field"], "toolName");
        let e = line_error(1, "the request is not valid JSON: key must be a string");
        assert_eq!(e.get("field"), None);
        assert_eq!(line_error(2, "identity.senderId: bad")["field"], "identity.senderId");
    }
}
