//! A strict reader over parsed JSON that collects every problem at once.
//!
//! serde stops at the first error and its messages name Rust types; operators
//! need every mistake in one pass, each with its field path, the offending
//! value and what is allowed. Each section's `read` function walks its part of
//! the document with these helpers and falls back to defaults after recording
//! an error, so one bad field never hides the next.

use crate::prelude::*;
use core::ops::RangeInclusive;
use serde_json::{Map, Value};

/// One problem in the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Where, such as `pin.ttlMinutes` or `safety.scenarios[2].id`.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.path.is_empty() { f.write_str(&self.message) } else { write!(f, "{}: {}", self.path, self.message) }
    }
}

/// Longest rendering of an offending value inside an error message.
pub const MAX_SHOWN_VALUE_CHARS: usize = 60;

/// Renders a JSON value for an error message, shortened if long.
pub fn shown(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    shorten(&text)
}

/// Text shortened as [`shorten`] does when it is printed, so a message
/// that is never built costs nothing.
#[derive(Debug, Clone, Copy)]
pub struct Shortened<'a>(pub &'a str);

impl core::fmt::Display for Shortened<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0.char_indices().nth(MAX_SHOWN_VALUE_CHARS) {
            None => f.write_str(self.0),
            Some((cut, _)) => {
                f.write_str(self.0.get(..cut).unwrap_or(self.0))?;
                f.write_str("…")
            }
        }
    }
}

/// Shortens text for an error message.
pub fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_SHOWN_VALUE_CHARS {
        return text.to_string();
    }
    let mut out: String = text.chars().take(MAX_SHOWN_VALUE_CHARS).collect();
    out.push('…');
    out
}

/// Joins a path and a key.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// A value and where it sits in the document.
#[derive(Clone)]
pub struct Node<'v> {
    pub path: String,
    pub value: &'v Value,
}

/// An object whose unknown fields were already reported.
pub struct Obj<'v> {
    pub path: String,
    map: &'v Map<String, Value>,
}

impl<'v> Obj<'v> {
    /// The field `key`, if present.
    pub fn get(&self, key: &str) -> Option<Node<'v>> {
        self.map.get(key).map(|value| Node { path: join(&self.path, key), value })
    }

    /// The path of field `key`, present or not.
    pub fn path_of(&self, key: &str) -> String {
        join(&self.path, key)
    }
}

/// A check on a string, with the words that describe it in an error.
pub type Pattern = (fn(&str) -> bool, &'static str);

/// Rules for a string field.
#[derive(Debug, Clone, Copy)]
pub struct Text {
    /// Longest allowed value, in characters.
    pub max_chars: usize,
    /// Whether a value of only whitespace is refused.
    pub non_blank: bool,
    /// An extra check, with the words that describe it in an error.
    pub pattern: Option<Pattern>,
}

impl Text {
    /// A non-blank string of at most `max_chars` characters.
    pub const fn non_blank(max_chars: usize) -> Self {
        Text { max_chars, non_blank: true, pattern: None }
    }

    /// Adds a pattern check.
    pub const fn matching(mut self, check: fn(&str) -> bool, describe: &'static str) -> Self {
        self.pattern = Some((check, describe));
        self
    }
}

/// Collects errors while sections read their fields.
#[derive(Default)]
pub struct Reader {
    errors: Vec<ConfigError>,
}

impl Reader {
    pub fn new() -> Self {
        Reader::default()
    }

    /// Records one error.
    pub fn error(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(ConfigError { path: path.into(), message: message.into() });
    }

    /// Every error so far.
    pub fn into_errors(self) -> Vec<ConfigError> {
        self.errors
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Reads `node` as an object allowing only `known` fields. Unknown fields
    /// are reported and otherwise ignored so that the known ones are still read.
    pub fn object<'v>(&mut self, node: &Node<'v>, known: &[&str]) -> Option<Obj<'v>> {
        let Value::Object(map) = node.value else {
            self.error(node.path.clone(), format!("must be an object, got `{}`", shown(node.value)));
            return None;
        };
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                let allowed: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                self.error(join(&node.path, key), format!("unknown field; allowed fields are {}", allowed.join(", ")));
            }
        }
        Some(Obj { path: node.path.clone(), map })
    }

    /// Reads an optional nested object field.
    pub fn section<'v>(&mut self, obj: &Obj<'v>, key: &str, known: &[&str]) -> Option<Obj<'v>> {
        let node = obj.get(key)?;
        self.object(&node, known)
    }

    /// Reads an optional boolean field.
    pub fn bool(&mut self, obj: &Obj<'_>, key: &str, default: bool) -> bool {
        let Some(node) = obj.get(key) else {
            return default;
        };
        match node.value {
            Value::Bool(b) => *b,
            other => {
                self.error(node.path, format!("must be `true` or `false`, got `{}`", shown(other)));
                default
            }
        }
    }

    /// Reads an optional integer field within `range`.
    pub fn int(&mut self, obj: &Obj<'_>, key: &str, range: RangeInclusive<u64>, default: u64) -> u64 {
        let Some(node) = obj.get(key) else {
            return default;
        };
        self.int_value(&node, range).unwrap_or(default)
    }

    /// Reads an integer value within `range`.
    pub fn int_value(&mut self, node: &Node<'_>, range: RangeInclusive<u64>) -> Option<u64> {
        let within = format!("between {} and {}", range.start(), range.end());
        match node.value.as_u64() {
            Some(n) if range.contains(&n) => Some(n),
            Some(_) => {
                self.error(node.path.clone(), format!("must be {within}, got `{}`", shown(node.value)));
                None
            }
            None => {
                let what = if node.value.is_i64() {
                    "must be"
                } else if node.value.is_number() {
                    "must be a whole number"
                } else {
                    "must be an integer"
                };
                self.error(node.path.clone(), format!("{what} {within}, got `{}`", shown(node.value)));
                None
            }
        }
    }

    /// Reads an optional number field within `min..=max`.
    pub fn number(&mut self, obj: &Obj<'_>, key: &str, min: f64, max: f64, default: f64) -> f64 {
        let Some(node) = obj.get(key) else {
            return default;
        };
        match node.value.as_f64() {
            Some(n) if n >= min && n <= max => n,
            _ => {
                self.error(node.path, format!("must be a number between {min} and {max}, got `{}`", shown(node.value)));
                default
            }
        }
    }

    /// Reads a required string field.
    pub fn required_string(&mut self, obj: &Obj<'_>, key: &str, rule: Text) -> Option<String> {
        match obj.get(key) {
            Some(node) => self.string_value(&node, rule),
            None => {
                self.error(obj.path_of(key), "is required");
                None
            }
        }
    }

    /// Reads an optional string field.
    pub fn optional_string(&mut self, obj: &Obj<'_>, key: &str, rule: Text) -> Option<String> {
        let node = obj.get(key)?;
        self.string_value(&node, rule)
    }

    /// Reads a string value under `rule`.
    pub fn string_value(&mut self, node: &Node<'_>, rule: Text) -> Option<String> {
        let Value::String(text) = node.value else {
            self.error(node.path.clone(), format!("must be a string, got `{}`", shown(node.value)));
            return None;
        };
        let chars = text.chars().count();
        if rule.non_blank && text.trim().is_empty() {
            self.error(node.path.clone(), "must not be blank");
            return None;
        }
        if chars > rule.max_chars {
            self.error(node.path.clone(), format!("must be at most {} characters, got {chars}", rule.max_chars));
            return None;
        }
        if let Some((check, describe)) = rule.pattern
            && !check(text)
        {
            self.error(node.path.clone(), format!("`{}` {describe}", shorten(text)));
            return None;
        }
        Some(text.clone())
    }

    /// Reads an optional list field of at most `max` items; `item` reads each one.
    pub fn list<'v, T>(
        &mut self,
        obj: &Obj<'v>,
        key: &str,
        max: usize,
        item: impl FnMut(&mut Reader, Node<'v>) -> Option<T>,
    ) -> Option<Vec<T>> {
        self.list_with_paths(obj, key, max, item).map(|items| items.into_iter().map(|(_, v)| v).collect())
    }

    /// Reads an optional list whose items must be unique by `id` (`what`
    /// names it in the error). A duplicate is reported at its own item's
    /// path followed by `field` (such as `.name`, or empty), naming where the
    /// first one is: paths count every item of the document, read or not.
    #[expect(clippy::too_many_arguments, reason = "each argument names a different part of the rule")]
    pub fn unique_list<'v, T>(
        &mut self,
        obj: &Obj<'v>,
        key: &str,
        max: usize,
        item: impl FnMut(&mut Reader, Node<'v>) -> Option<T>,
        what: &str,
        field: &str,
        id: impl Fn(&T) -> String,
    ) -> Option<Vec<T>> {
        let items = self.list_with_paths(obj, key, max, item)?;
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for (path, value) in &items {
            let key = id(value);
            let path = format!("{path}{field}");
            if let Some(first) = seen.get(&key) {
                self.error(path, format!("duplicate {what} `{}`; first used at {first}", shorten(&key)));
            } else {
                seen.insert(key, path);
            }
        }
        Some(items.into_iter().map(|(_, v)| v).collect())
    }

    fn list_with_paths<'v, T>(
        &mut self,
        obj: &Obj<'v>,
        key: &str,
        max: usize,
        mut item: impl FnMut(&mut Reader, Node<'v>) -> Option<T>,
    ) -> Option<Vec<(String, T)>> {
        let node = obj.get(key)?;
        let Value::Array(values) = node.value else {
            self.error(node.path, format!("must be a list, got `{}`", shown(node.value)));
            return None;
        };
        if values.len() > max {
            self.error(node.path.clone(), format!("must have at most {max} items, got {}", values.len()));
        }
        let mut out = Vec::with_capacity(values.len().min(max));
        for (i, value) in values.iter().enumerate() {
            let path = format!("{}[{i}]", node.path);
            if let Some(v) = item(self, Node { path: path.clone(), value }) {
                out.push((path, v));
            }
        }
        Some(out)
    }
}

/// Reads a check family's optional `mode` field: `enforce` (default) or `observe`.
pub fn mode(r: &mut Reader, obj: &Obj<'_>) -> crate::model::Mode {
    use crate::model::Mode;
    let Some(node) = obj.get("mode") else {
        return Mode::Enforce;
    };
    match node.value.as_str() {
        Some("enforce") => Mode::Enforce,
        Some("observe") => Mode::Observe,
        _ => {
            r.error(node.path, format!("must be `enforce` or `observe`, got `{}`", shown(node.value)));
            Mode::Enforce
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn root(value: &Value) -> Node<'_> {
        Node { path: String::new(), value }
    }

    #[test]
    fn shortened_text_prints_as_shorten_returns_it_at_and_past_the_bound() {
        let at = "é".repeat(MAX_SHOWN_VALUE_CHARS);
        let past = format!("{at}x");
        for text in ["", "tool", at.as_str(), past.as_str()] {
            assert_eq!(Shortened(text).to_string(), shorten(text), "{text}");
        }
        assert_eq!(Shortened(&past).to_string(), format!("{at}…"));
    }

    #[test]
    fn unknown_fields_are_all_reported_and_known_ones_still_read() {
        let doc = json!({"a": true, "x": 1, "y": 2});
        let mut r = Reader::new();
        let obj = r.object(&root(&doc), &["a"]);
        let a = obj.map(|o| r.bool(&o, "a", false));
        assert_eq!(a, Some(true));
        let errors = r.into_errors();
        let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["x", "y"]);
        assert!(errors[0].message.contains("allowed fields are `a`"));
    }

    #[test]
    fn integers_are_checked_at_and_past_their_bounds() {
        let cases: &[(Value, Option<u64>)] = &[
            (json!(1), Some(1)),
            (json!(10), Some(10)),
            (json!(0), None),
            (json!(11), None),
            (json!(1.5), None),
            (json!("5"), None),
            (json!(-1), None),
        ];
        for (value, expected) in cases {
            let mut r = Reader::new();
            let node = Node { path: "n".into(), value };
            assert_eq!(r.int_value(&node, 1..=10), *expected, "value {value}");
            assert_eq!(r.has_errors(), expected.is_none(), "value {value}");
        }
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        let long = "x".repeat(200);
        let s = shorten(&long);
        assert_eq!(s.chars().count(), MAX_SHOWN_VALUE_CHARS + 1);
        assert!(s.ends_with('…'));
    }
}
