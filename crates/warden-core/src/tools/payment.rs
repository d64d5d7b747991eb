//! Payment limits: how much a payment tool may move per call, per session and
//! per recipient.
//!
//! `tools.payment` sets `maxAmount` (one call), `maxPerSession` (the calls of
//! one session together) and `maxPerRecipient` (one recipient within a
//! session), each optional. A call of kind `payment` has its amount read from
//! the entry's `amountFields` (JSON numbers, or strings of digits with an
//! optional fraction, exponent and `,` between groups of three digits, like
//! `"1,200.50"`); several amount fields add up, none present is an amount of
//! 0. Anything else (a negative amount, `"12,5"`, `"$5"`, `"NaN"`, `true`, a
//! list, more than [`MAX_AMOUNT`]) is `payment.invalid-amount`. Amounts are
//! counted in millionths, rounded up. Currencies are not told apart: limits
//! are numbers in whatever unit the tool's amounts are.
//!
//! A call past a limit is `payment.limit`. A call that is allowed or asked
//! (it may run once a person approves) is counted at once, in one conditional
//! write of the session's record, retried when another check wrote first; a
//! call another step of the judge then denies is taken off again. A retry of
//! a counted call with the same call ID, tool, recipients and amount is not
//! counted twice. Recipients are compared in the canonical form of
//! [`crate::flow::extract::destination`] (else without spaces, lowercased)
//! and stored only as keyed hashes; a call to several recipients counts its
//! amount for each. In observe mode every call is counted, over the limits or
//! not, since it runs. Storage failures fail closed
//! (`tools.storage-unavailable`).

use super::Finding;
use super::rules;
use super::taxonomy::ToolEntry;
use crate::config::reader::{Node, Reader, shorten, shown};
use crate::ports::{Storage, StorageError};
use crate::prelude::*;
use crate::store;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

/// Storage namespace of the session totals, keyed by a hash of the session ID.
pub const NAMESPACE: &str = "tools.payment";
/// Units of an amount: amounts are counted in millionths.
pub const SCALE: u64 = 1_000_000;
/// Largest amount of one call, and largest limit (10^12).
pub const MAX_AMOUNT: u64 = 1_000_000_000_000;
/// Most recipients a session's record keeps totals for; a payment to one
/// more is refused with `payment.limit` while `maxPerRecipient` is set.
pub const MAX_RECIPIENTS: usize = 256;
/// Most counted calls a session's record remembers so that a retry is not
/// counted twice; past it the oldest are forgotten (a retry of one of them
/// counts again).
pub const MAX_REMEMBERED_CALLS: usize = 256;
/// Longest amount string read, in characters.
pub const MAX_AMOUNT_CHARS: usize = 64;

/// An amount in millionths.
pub type Micros = u64;

/// The `tools.payment` section. Limits are numbers of the tool's unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct PaymentConfig {
    /// Largest amount of one call.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "as_number")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>", range(min = 0, max = MAX_AMOUNT)))]
    pub max_amount: Option<Micros>,
    /// Largest sum of the payments of one session.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "as_number")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>", range(min = 0, max = MAX_AMOUNT)))]
    pub max_per_session: Option<Micros>,
    /// Largest sum paid to one recipient in one session.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "as_number")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<f64>", range(min = 0, max = MAX_AMOUNT)))]
    pub max_per_recipient: Option<Micros>,
}

fn as_number<S: serde::Serializer>(value: &Option<Micros>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(m) => s.serialize_str(&show(*m)),
        None => s.serialize_none(),
    }
}

pub(super) fn read(r: &mut Reader, node: &Node<'_>) -> Option<PaymentConfig> {
    let obj = r.object(node, &["maxAmount", "maxPerSession", "maxPerRecipient"])?;
    let mut limit = |key: &str| {
        let n = obj.get(key)?;
        let parsed = match n.value {
            Value::Number(num) => parse_amount(&num.to_string()).ok(),
            _ => None,
        };
        if parsed.is_none() {
            r.error(n.path, format!("must be a number from 0 to {MAX_AMOUNT}, got `{}`", shown(n.value)));
        }
        parsed
    };
    let max_amount = limit("maxAmount");
    let max_per_session = limit("maxPerSession");
    let max_per_recipient = limit("maxPerRecipient");
    Some(PaymentConfig { max_amount, max_per_session, max_per_recipient })
}

/// An amount as text: whole units and up to six decimals, trailing zeros dropped.
pub fn show(m: Micros) -> String {
    let (whole, frac) = (m / SCALE, m % SCALE);
    if frac == 0 {
        return whole.to_string();
    }
    let f = format!("{frac:06}");
    format!("{whole}.{}", f.trim_end_matches('0'))
}

/// Reads an amount: digits with an optional fraction and exponent, `,` only
/// between groups of three digits of the whole part. Rounded up to millionths.
pub fn parse_amount(text: &str) -> Result<Micros, &'static str> {
    let t = text.trim();
    if t.chars().count() > MAX_AMOUNT_CHARS {
        return Err("is too long to be an amount");
    }
    if t.starts_with('-') {
        return Err("is negative");
    }
    let t = t.strip_prefix('+').unwrap_or(t);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => {
            let e = t.get(i + 1..).unwrap_or_default();
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err("has an exponent that is not a small whole number");
            }
            let v: i32 = e.parse().map_err(|_| "has an exponent that is not a small whole number")?;
            (t.get(..i).unwrap_or_default(), v)
        }
        None => (t, 0),
    };
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && frac.is_empty() {
        return Err("is not a number");
    }
    let whole_digits = if whole.contains(',') {
        let mut groups = whole.split(',');
        let first = groups.next().unwrap_or_default();
        let ok = (1..=3).contains(&first.len())
            && first.bytes().all(|b| b.is_ascii_digit())
            && groups.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()));
        if !ok {
            return Err("uses `,` other than between groups of three digits");
        }
        whole.replace(',', "")
    } else {
        whole.to_string()
    };
    if !whole_digits.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err("is not a number");
    }
    let digits = format!("{whole_digits}{frac}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    if digits.len() > 30 {
        return Err("is larger than the largest amount");
    }
    let d: u128 = digits.parse().map_err(|_| "is not a number")?;
    // value = d * 10^(exp - frac digits); in millionths, 10^(... + 6).
    let shift = exp - frac.len() as i32 + 6;
    let micros: u128 = if shift >= 0 {
        if shift > 38 {
            return Err("is larger than the largest amount");
        }
        d.checked_mul(10u128.pow(shift as u32)).ok_or("is larger than the largest amount")?
    } else {
        let down = (-shift) as u32;
        if down > 38 {
            1
        } else {
            let p = 10u128.pow(down);
            d.div_ceil(p)
        }
    };
    if micros > (MAX_AMOUNT as u128) * (SCALE as u128) {
        return Err("is larger than the largest amount");
    }
    Ok(micros as u64)
}

/// The amount of a call: the sum of its amount fields.
fn amount_of(entry: &ToolEntry, args: &Value) -> Result<Micros, String> {
    let mut sum: Micros = 0;
    for f in &entry.amount_fields {
        let one = match args.get(f.as_str()) {
            None | Some(Value::Null) => continue,
            Some(Value::Number(n)) => parse_amount(&n.to_string()),
            Some(Value::String(s)) => parse_amount(s),
            Some(_) => Err("is not a number"),
        };
        match one {
            Ok(m) => sum = sum.saturating_add(m),
            Err(why) => {
                let shown_value = args.get(f.as_str()).map(shown).unwrap_or_default();
                return Err(format!("`{f}` (`{}`) {why}", shorten(&shown_value)));
            }
        }
    }
    if sum > MAX_AMOUNT.saturating_mul(SCALE) {
        return Err(format!("the amounts add up to more than the largest amount ({MAX_AMOUNT})"));
    }
    Ok(sum)
}

/// The canonical recipients of a call, each once.
pub fn recipients(entry: &ToolEntry, args: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |text: &str| {
        let canonical = match crate::flow::extract::destination(text) {
            Some(found) => found.value,
            None => text.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_lowercase(),
        };
        if !canonical.is_empty() && !out.contains(&canonical) {
            out.push(canonical);
        }
    };
    for f in &entry.recipient_fields {
        match args.get(f.as_str()) {
            Some(Value::String(s)) => add(s),
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).for_each(&mut add),
            Some(Value::Number(n)) => add(&n.to_string()),
            _ => {}
        }
    }
    out
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Totals {
    /// Sum of the session's counted payments, in millionths.
    total: u64,
    /// Per recipient hash.
    by: BTreeMap<String, u64>,
    /// Hashes of counted calls, oldest first.
    calls: Vec<String>,
}

fn mac(secret: &[u8], parts: &[&str]) -> String {
    let Ok(mut m) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret) else {
        return String::new();
    };
    m.update(b"warden.payment.v1");
    for p in parts {
        m.update(&(p.len() as u64).to_be_bytes());
        m.update(p.as_bytes());
    }
    crate::digest::hex(&m.finalize().into_bytes()).get(..32).unwrap_or_default().to_string()
}

/// What was counted for a call, so it can be taken off again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    key: String,
    call: Option<String>,
    recipients: Vec<String>,
    amount: Micros,
}

/// What the payment step found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub finding: Option<Finding>,
    /// Set when the call was counted.
    pub counted: Option<Counted>,
}

/// The unknown recipient: a payment call that names none.
const NOBODY: &str = "-";

/// Checks a payment call against the limits and counts it when it is within
/// them, or always when `count_over` (observe mode, or `payment.limit`
/// turned off or asked).
#[allow(clippy::too_many_arguments)]
pub fn check(
    config: &PaymentConfig,
    storage: &dyn Storage,
    secret: &[u8],
    entry: &ToolEntry,
    args: &Value,
    session: Option<&str>,
    call_id: Option<&str>,
    count_over: bool,
) -> Result<Outcome, StorageError> {
    let amount = match amount_of(entry, args) {
        Ok(a) => a,
        Err(why) => {
            return Ok(Outcome {
                finding: Some(Finding {
                    rule: rules::PAYMENT_INVALID_AMOUNT,
                    reason: format!("The payment's amount cannot be counted: {why}."),
                }),
                counted: None,
            });
        }
    };
    let mut names = recipients(entry, args);
    if names.is_empty() {
        names.push(NOBODY.into());
    }
    let hashed: Vec<String> = names.iter().map(|n| mac(secret, &["recipient", n])).collect();
    let key = mac(secret, &["session", session.unwrap_or("")]);
    let mut per_call = vec!["call", entry.tool.as_str()];
    let amount_text = amount.to_string();
    per_call.push(&amount_text);
    per_call.extend(hashed.iter().map(String::as_str));
    let call = call_id.map(|id| {
        let mut parts = per_call.clone();
        parts.push(id);
        mac(secret, &parts)
    });
    let n = hashed.len() as u64;
    let mut finding: Option<Finding> = None;
    let mut counted = false;
    store::update_json::<Totals>(storage, NAMESPACE, &key, |t| {
        let mut t = t.unwrap_or_default();
        finding = None;
        counted = false;
        if let Some(c) = &call
            && t.calls.contains(c)
        {
            return None;
        }
        finding = over(config, &t, &hashed, amount, n);
        if finding.is_some() && !count_over {
            return None;
        }
        let new = hashed.iter().filter(|h| !t.by.contains_key(*h)).count();
        if finding.is_none() && config.max_per_recipient.is_some() && t.by.len() + new > MAX_RECIPIENTS {
            finding = Some(Finding {
                rule: rules::PAYMENT_LIMIT,
                reason: format!(
                    "This session paid {} recipients, the most whose totals are kept ({MAX_RECIPIENTS}).",
                    t.by.len()
                ),
            });
            if !count_over {
                return None;
            }
        }
        t.total = t.total.saturating_add(amount.saturating_mul(n));
        for h in &hashed {
            if t.by.len() < MAX_RECIPIENTS || t.by.contains_key(h) {
                let v = t.by.entry(h.clone()).or_insert(0);
                *v = v.saturating_add(amount);
            }
        }
        if let Some(c) = &call {
            t.calls.push(c.clone());
            if t.calls.len() > MAX_REMEMBERED_CALLS {
                let excess = t.calls.len() - MAX_REMEMBERED_CALLS;
                t.calls.drain(..excess);
            }
        }
        counted = true;
        Some(t)
    })?;
    let counted = counted.then_some(Counted { key, call, recipients: hashed, amount });
    Ok(Outcome { finding, counted })
}

/// The first limit the call would pass, if any.
fn over(config: &PaymentConfig, t: &Totals, hashed: &[String], amount: Micros, n: u64) -> Option<Finding> {
    let limit = |reason: String| Some(Finding { rule: rules::PAYMENT_LIMIT, reason });
    if let Some(max) = config.max_amount
        && amount > max
    {
        return limit(format!("The payment of {} is more than `maxAmount` ({}).", show(amount), show(max)));
    }
    if let Some(max) = config.max_per_session {
        let after = t.total.saturating_add(amount.saturating_mul(n));
        if after > max {
            return limit(format!(
                "This session paid {} already; with this payment of {} it passes `maxPerSession` ({}).",
                show(t.total),
                show(amount),
                show(max)
            ));
        }
    }
    if let Some(max) = config.max_per_recipient {
        for h in hashed {
            let paid = t.by.get(h).copied().unwrap_or(0);
            if paid.saturating_add(amount) > max {
                return limit(format!(
                    "This session paid this recipient {} already; with this payment of {} it passes \
                     `maxPerRecipient` ({}).",
                    show(paid),
                    show(amount),
                    show(max)
                ));
            }
        }
    }
    None
}

/// Takes a counted call off again: another step denied it.
pub fn uncount(storage: &dyn Storage, counted: &Counted) -> Result<(), StorageError> {
    store::update_json::<Totals>(storage, NAMESPACE, &counted.key, |t| {
        let mut t = t?;
        let n = counted.recipients.len() as u64;
        t.total = t.total.saturating_sub(counted.amount.saturating_mul(n));
        for h in &counted.recipients {
            if let Some(v) = t.by.get_mut(h) {
                *v = v.saturating_sub(counted.amount);
                if *v == 0 {
                    t.by.remove(h);
                }
            }
        }
        if let Some(c) = &counted.call {
            t.calls.retain(|x| x != c);
        }
        Some(t)
    })?;
    Ok(())
}
