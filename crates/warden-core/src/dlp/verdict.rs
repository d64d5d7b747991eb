//! Admission of a classifier's verdict: exactly one JSON object with exactly
//! the five expected keys, each well-formed, naming the pinned model and the
//! policy version it was asked under. Anything else is refused, and the caller
//! turns a refusal into `deny` with category `guard_failure`.
//!
//! JSON is parsed by a strict reader that refuses duplicate keys at every level
//! (serde_json's own `Value` keeps the last of two equal keys, which would let
//! `{"decision":"deny", …, "decision":"allow"}` pass as an allow) and refuses
//! anything but whitespace around the object.

use crate::prelude::*;
use core::fmt;
use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Longest category, in characters.
pub const MAX_CATEGORY_CHARS: usize = 128;
/// Longest reason, in characters.
pub const MAX_REASON_CHARS: usize = 512;
/// The keys of a verdict, all required and no others allowed.
pub const KEYS: [&str; 5] = ["decision", "category", "reason", "model", "policyVersion"];
/// The category of every verdict that could not be admitted.
pub const GUARD_FAILURE: &str = "guard_failure";

/// What the classifier decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardDecision {
    Allow,
    Deny,
    Review,
}

impl GuardDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            GuardDecision::Allow => "allow",
            GuardDecision::Deny => "deny",
            GuardDecision::Review => "review",
        }
    }
}

/// An admitted verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardVerdict {
    pub decision: GuardDecision,
    pub category: String,
    pub reason: String,
    pub model: String,
    pub policy_version: String,
}

/// Why a verdict was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Not parseable JSON, or text other than whitespace around it.
    NotJson,
    /// JSON, but not an object.
    NotAnObject,
    /// The same key twice.
    DuplicateKey(String),
    /// A required key is missing.
    MissingKey(&'static str),
    /// A key that is not one of [`KEYS`].
    ExtraKey(String),
    /// A value that is not a string.
    NotAString(&'static str),
    /// `decision` is not `allow`, `deny` or `review`.
    UnknownDecision,
    /// `category` or `reason` is blank or too long.
    BadLength(&'static str),
    /// `model` is not the pinned model.
    WrongModel,
    /// `policyVersion` is not the one the classifier was asked under.
    WrongPolicyVersion,
}

impl Rejection {
    /// A stable code for signals and counters. Never contains verdict text.
    pub fn code(&self) -> &'static str {
        match self {
            Rejection::NotJson => "not_json",
            Rejection::NotAnObject => "not_an_object",
            Rejection::DuplicateKey(_) => "duplicate_key",
            Rejection::MissingKey(_) => "missing_key",
            Rejection::ExtraKey(_) => "extra_key",
            Rejection::NotAString(_) => "not_a_string",
            Rejection::UnknownDecision => "unknown_decision",
            Rejection::BadLength(_) => "bad_length",
            Rejection::WrongModel => "wrong_model",
            Rejection::WrongPolicyVersion => "wrong_policy_version",
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let short = |s: &str| crate::config::reader::shorten(s);
        match self {
            Rejection::NotJson => f.write_str("the answer is not exactly one JSON value"),
            Rejection::NotAnObject => f.write_str("the answer is not a JSON object"),
            Rejection::DuplicateKey(k) => write!(f, "the key `{}` appears more than once", short(k)),
            Rejection::MissingKey(k) => write!(f, "the key `{k}` is missing"),
            Rejection::ExtraKey(k) => write!(f, "the key `{}` is not allowed", short(k)),
            Rejection::NotAString(k) => write!(f, "`{k}` is not a string"),
            Rejection::UnknownDecision => f.write_str("`decision` is not `allow`, `deny` or `review`"),
            Rejection::BadLength(k) => write!(f, "`{k}` is blank or too long"),
            Rejection::WrongModel => f.write_str("`model` is not the pinned model"),
            Rejection::WrongPolicyVersion => f.write_str("`policyVersion` is not the one asked for"),
        }
    }
}

const DUPLICATE: &str = "duplicate key ";

/// A JSON value read with duplicate keys refused at every level.
struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format_args!("{DUPLICATE}{key}")));
            }
            let Strict(value) = map.next_value()?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Why strict JSON parsing failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictError {
    NotJson,
    DuplicateKey(String),
}

/// Parses exactly one JSON value, with only whitespace around it and no duplicate keys.
pub fn strict_json(text: &str) -> Result<Value, StrictError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Strict::deserialize(&mut de).and_then(|Strict(v)| de.end().map(|()| v));
    parsed.map_err(|e| {
        let message = e.to_string();
        match message.strip_prefix(DUPLICATE) {
            Some(rest) => {
                let key = rest.rsplit_once(" at line ").map_or(rest, |(k, _)| k);
                StrictError::DuplicateKey(key.to_string())
            }
            None => StrictError::NotJson,
        }
    })
}

/// Admits `content` as a verdict of `pinned_model` under `policy_version`.
pub fn admit(content: &str, pinned_model: &str, policy_version: &str) -> Result<GuardVerdict, Rejection> {
    let value = strict_json(content).map_err(|e| match e {
        StrictError::NotJson => Rejection::NotJson,
        StrictError::DuplicateKey(k) => Rejection::DuplicateKey(k),
    })?;
    let Value::Object(map) = value else {
        return Err(Rejection::NotAnObject);
    };
    if let Some(extra) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(Rejection::ExtraKey(extra.clone()));
    }
    let field = |key: &'static str| -> Result<&str, Rejection> {
        match map.get(key) {
            None => Err(Rejection::MissingKey(key)),
            Some(Value::String(s)) => Ok(s.as_str()),
            Some(_) => Err(Rejection::NotAString(key)),
        }
    };
    let decision = match field("decision")? {
        "allow" => GuardDecision::Allow,
        "deny" => GuardDecision::Deny,
        "review" => GuardDecision::Review,
        _ => return Err(Rejection::UnknownDecision),
    };
    let category = bounded(field("category")?, MAX_CATEGORY_CHARS, "category")?;
    let reason = bounded(field("reason")?, MAX_REASON_CHARS, "reason")?;
    let model = field("model")?;
    if model != pinned_model {
        return Err(Rejection::WrongModel);
    }
    let echoed = field("policyVersion")?;
    if echoed != policy_version {
        return Err(Rejection::WrongPolicyVersion);
    }
    Ok(GuardVerdict {
        decision,
        category: category.to_string(),
        reason: reason.to_string(),
        model: model.to_string(),
        policy_version: echoed.to_string(),
    })
}

fn bounded<'a>(text: &'a str, max: usize, key: &'static str) -> Result<&'a str, Rejection> {
    if text.trim().is_empty() || text.chars().count() > max {
        return Err(Rejection::BadLength(key));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    const MODEL: &str = "gpt-4o-mini-2024-07-18";
    const PV: &str = "warden-dlp-1";

    fn verdict(decision: &str) -> String {
        json!({"decision": decision, "category": "ok", "reason": "nothing sensitive", "model": MODEL, "policyVersion": PV})
            .to_string()
    }

    #[test]
    fn well_formed_verdicts_are_admitted_with_every_field() {
        for (text, expected) in [
            (verdict("allow"), GuardDecision::Allow),
            (verdict("deny"), GuardDecision::Deny),
            (verdict("review"), GuardDecision::Review),
            (format!("\n  {}\t\n", verdict("allow")), GuardDecision::Allow),
        ] {
            let v = admit(&text, MODEL, PV).expect("admitted");
            assert_eq!(v.decision, expected);
            assert_eq!((v.category.as_str(), v.reason.as_str()), ("ok", "nothing sensitive"));
            assert_eq!((v.model.as_str(), v.policy_version.as_str()), (MODEL, PV));
        }
    }

    #[test]
    fn malformed_verdicts_are_refused_with_the_reason() {
        let m = MODEL;
        let long_category = "c".repeat(MAX_CATEGORY_CHARS + 1);
        let max_category = "c".repeat(MAX_CATEGORY_CHARS);
        let long_reason = "r".repeat(MAX_REASON_CHARS + 1);
        let max_reason = "r".repeat(MAX_REASON_CHARS);
        let obj = |extra: &str| {
            format!(
                r#"{{"decision":"allow","category":"ok","reason":"fine","model":"{m}","policyVersion":"{PV}"{extra}}}"#
            )
        };
        let cases: Vec<(String, Result<(), Rejection>)> = vec![
            (obj(""), Ok(())),
            (format!("Here is the verdict: {}", obj("")), Err(Rejection::NotJson)),
            (format!("{} Hope this helps.", obj("")), Err(Rejection::NotJson)),
            (format!("```json\n{}\n```", obj("")), Err(Rejection::NotJson)),
            (format!("{}{}", obj(""), obj("")), Err(Rejection::NotJson)),
            (obj(r#","decision":"deny""#), Err(Rejection::DuplicateKey("decision".into()))),
            // An escaped key is the same key once decoded.
            (obj(r#","decisio\u006e":"deny""#), Err(Rejection::DuplicateKey("decision".into()))),
            (obj(r#","note":"x""#), Err(Rejection::ExtraKey("note".into()))),
            (obj(r#","extra":{"a":1,"a":2}"#), Err(Rejection::DuplicateKey("a".into()))),
            (r#"{"decision":"allow","category":"ok","reason":"fine","model":"m"}"#.into(), Err(Rejection::WrongModel)),
            (
                format!(r#"{{"decision":"allow","category":"ok","reason":"fine","model":"{m}"}}"#),
                Err(Rejection::MissingKey("policyVersion")),
            ),
            (
                format!(
                    r#"{{"decision":"ALLOW","category":"ok","reason":"fine","model":"{m}","policyVersion":"{PV}"}}"#
                ),
                Err(Rejection::UnknownDecision),
            ),
            (
                format!(r#"{{"decision":true,"category":"ok","reason":"fine","model":"{m}","policyVersion":"{PV}"}}"#),
                Err(Rejection::NotAString("decision")),
            ),
            (
                format!(r#"{{"decision":"allow","category":"","reason":"fine","model":"{m}","policyVersion":"{PV}"}}"#),
                Err(Rejection::BadLength("category")),
            ),
            (
                format!(
                    r#"{{"decision":"allow","category":"  ","reason":"fine","model":"{m}","policyVersion":"{PV}"}}"#
                ),
                Err(Rejection::BadLength("category")),
            ),
            (
                format!(
                    r#"{{"decision":"allow","category":"{max_category}","reason":"{max_reason}","model":"{m}","policyVersion":"{PV}"}}"#
                ),
                Ok(()),
            ),
            (
                format!(
                    r#"{{"decision":"allow","category":"{long_category}","reason":"fine","model":"{m}","policyVersion":"{PV}"}}"#
                ),
                Err(Rejection::BadLength("category")),
            ),
            (
                format!(
                    r#"{{"decision":"allow","category":"ok","reason":"{long_reason}","model":"{m}","policyVersion":"{PV}"}}"#
                ),
                Err(Rejection::BadLength("reason")),
            ),
            (
                format!(
                    r#"{{"decision":"allow","category":"ok","reason":"fine","model":"{m}","policyVersion":"old"}}"#
                ),
                Err(Rejection::WrongPolicyVersion),
            ),
            (
                format!(
                    r#"{{"decision":"allow","category":"ok","reason":"fine","model":"{m}","policyVersion":"{PV} "}}"#
                ),
                Err(Rejection::WrongPolicyVersion),
            ),
            ("[]".into(), Err(Rejection::NotAnObject)),
            ("\"allow\"".into(), Err(Rejection::NotAnObject)),
            ("".into(), Err(Rejection::NotJson)),
            ("{".into(), Err(Rejection::NotJson)),
        ];
        for (text, expected) in cases {
            let got = admit(&text, MODEL, PV).map(|_| ());
            assert_eq!(got, expected, "{}", crate::config::reader::shorten(&text));
        }
    }

    #[test]
    fn deeply_nested_answers_are_refused_without_exhausting_the_stack() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(admit(&deep, MODEL, PV), Err(Rejection::NotJson));
        let deep_obj = format!("{}1{}", "{\"a\":".repeat(50_000), "}".repeat(50_000));
        assert_eq!(admit(&deep_obj, MODEL, PV), Err(Rejection::NotJson));
    }

    fn arb_decision() -> impl Strategy<Value = &'static str> {
        prop_oneof![Just("allow"), Just("deny"), Just("review")]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn arbitrary_text_never_panics_and_is_admitted_only_when_well_formed(text in any::<String>()) {
            if let Ok(v) = admit(&text, MODEL, PV) {
                let value: Value = serde_json::from_str(&text).expect("admitted text is JSON");
                let obj = value.as_object().expect("an object");
                prop_assert_eq!(obj.len(), 5);
                prop_assert_eq!(v.model.as_str(), MODEL);
                prop_assert_eq!(v.policy_version.as_str(), PV);
            }
        }

        #[test]
        fn arbitrary_bytes_near_a_verdict_never_panic(
            prefix in "[ -~\t\n\r]{0,8}",
            suffix in "[ -~\t\n\r]{0,8}",
            cut in 0usize..200,
        ) {
            let base = verdict("allow");
            let cut = cut.min(base.len());
            let text = format!("{prefix}{}{suffix}", &base[..cut]);
            let admitted = admit(&text, MODEL, PV).is_ok();
            let exact = cut == base.len() && prefix.trim().is_empty() && suffix.trim().is_empty();
            prop_assert_eq!(admitted, exact, "{}", text);
        }

        #[test]
        fn generated_well_formed_verdicts_round_trip(
            decision in arb_decision(),
            category in "[a-z_]{1,128}",
            reason in "[A-Za-z .,]{0,511}[a-z]",
        ) {
            let text = json!({"decision": decision, "category": category, "reason": reason, "model": MODEL, "policyVersion": PV}).to_string();
            let v = admit(&text, MODEL, PV).expect("admitted");
            prop_assert_eq!(v.decision.as_str(), decision);
            prop_assert_eq!(v.category, category);
            prop_assert_eq!(v.reason, reason);
        }

        #[test]
        fn any_extra_or_repeated_key_is_refused(key in "[a-zA-Z]{1,16}", repeat in any::<bool>()) {
            let key = if repeat { "reason".to_string() } else { key };
            let text = format!(
                r#"{{"decision":"allow","category":"ok","reason":"fine","model":"{MODEL}","policyVersion":"{PV}","{key}":"x"}}"#
            );
            let got = admit(&text, MODEL, PV);
            if KEYS.contains(&key.as_str()) {
                prop_assert_eq!(got, Err(Rejection::DuplicateKey(key)));
            } else {
                prop_assert_eq!(got, Err(Rejection::ExtraKey(key)));
            }
        }
    }
}
