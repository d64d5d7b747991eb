//! Input validation: required fields, types, lengths and NUL characters.
//!
//! A tool with a schema (configured, or built in for the Claude Code, OpenClaw
//! and Hermes tools whose arguments are certain) has its fields checked; a
//! tool without one passes, except that the fields the judge itself reads
//! (commands, paths, URLs) may never hold a NUL, which truncates a path in C
//! and so shows a rule one file and opens another.

use super::rules;
use super::taxonomy::ToolEntry;
use crate::config::reader::shorten;
use crate::prelude::*;
use serde::Serialize;
use serde_json::Value;

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    String,
    Integer,
    Number,
    Boolean,
    Array,
    Object,
}

impl FieldType {
    pub const ALL: &'static [(&'static str, FieldType)] = &[
        ("string", FieldType::String),
        ("integer", FieldType::Integer),
        ("number", FieldType::Number),
        ("boolean", FieldType::Boolean),
        ("array", FieldType::Array),
        ("object", FieldType::Object),
    ];

    pub fn parse(text: &str) -> Option<FieldType> {
        FieldType::ALL.iter().find(|(n, _)| *n == text).map(|(_, t)| *t)
    }

    fn name(self) -> &'static str {
        FieldType::ALL.iter().find(|(_, t)| *t == self).map_or("value", |(n, _)| n)
    }

    fn accepts(self, value: &Value) -> bool {
        match self {
            FieldType::String => value.is_string(),
            FieldType::Integer => value.is_i64() || value.is_u64(),
            FieldType::Number => value.is_number(),
            FieldType::Boolean => value.is_boolean(),
            FieldType::Array => value.is_array(),
            FieldType::Object => value.is_object(),
        }
    }
}

/// The rules of one argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct FieldRule {
    /// The argument's name.
    pub name: String,
    /// Its JSON type, if checked.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<FieldType>,
    /// Whether it must be present and not null or empty.
    #[serde(default)]
    pub required: bool,
    /// Longest string value, in characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(range(min = 1, max = super::config::MAX_FIELD_LENGTH)))]
    pub max_length: Option<u64>,
}

/// The input schema of one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(rename_all = "camelCase")]
pub struct InputSchema {
    /// The host's tool name, matched exactly.
    pub tool: String,
    /// Its arguments.
    pub fields: Vec<FieldRule>,
}

/// Longest shell command the built-in schemas accept, in characters: the
/// shell parser's own bound.
pub const MAX_COMMAND_CHARS: u64 = crate::shell::MAX_INPUT_CHARS as u64;
/// Longest path the built-in schemas accept, in characters.
pub const MAX_PATH_CHARS: u64 = crate::paths::MAX_PATH_CHARS as u64;

fn field(name: &str, kind: FieldType, required: bool, max_length: Option<u64>) -> FieldRule {
    FieldRule { name: name.to_string(), kind: Some(kind), required, max_length }
}

/// Schemas of tools whose arguments are certain.
pub fn builtin() -> Vec<InputSchema> {
    use FieldType::*;
    let command = |tool: &str| InputSchema {
        tool: tool.to_string(),
        fields: vec![field("command", String, true, Some(MAX_COMMAND_CHARS))],
    };
    let path = || field("file_path", String, true, Some(MAX_PATH_CHARS));
    vec![
        InputSchema {
            tool: "Bash".into(),
            fields: vec![
                field("command", String, true, Some(MAX_COMMAND_CHARS)),
                field("description", String, false, None),
                field("timeout", Integer, false, None),
                field("run_in_background", Boolean, false, None),
            ],
        },
        command("exec"),
        command("terminal"),
        InputSchema {
            tool: "Read".into(),
            fields: vec![path(), field("offset", Integer, false, None), field("limit", Integer, false, None)],
        },
        InputSchema { tool: "Write".into(), fields: vec![path(), field("content", String, false, None)] },
        InputSchema {
            tool: "Edit".into(),
            fields: vec![
                path(),
                field("old_string", String, true, None),
                field("new_string", String, false, None),
                field("replace_all", Boolean, false, None),
            ],
        },
        InputSchema { tool: "MultiEdit".into(), fields: vec![path(), field("edits", Array, true, None)] },
        InputSchema {
            tool: "NotebookEdit".into(),
            fields: vec![field("notebook_path", String, true, Some(MAX_PATH_CHARS))],
        },
        InputSchema {
            tool: "WebFetch".into(),
            fields: vec![field("url", String, true, Some(8192)), field("prompt", String, false, None)],
        },
    ]
}

/// A failed check: the rule and the reason.
pub type Failure = (&'static str, String);

fn has_nul(value: &Value, depth: usize) -> bool {
    match value {
        Value::String(s) => crate::bytes::contains(s.as_bytes(), 0),
        Value::Array(items) if depth < 4 => items.iter().any(|v| has_nul(v, depth + 1)),
        Value::Object(map) if depth < 4 => {
            map.iter().any(|(k, v)| crate::bytes::contains(k.as_bytes(), 0) || has_nul(v, depth + 1))
        }
        _ => false,
    }
}

/// Checks the arguments of a call; `None` when they pass.
pub fn check(schema: Option<&InputSchema>, entry: Option<&ToolEntry>, tool: &str, args: &Value) -> Option<Failure> {
    let tool = crate::config::reader::Shortened(tool);
    let read_fields = || {
        entry.into_iter().flat_map(|e| {
            e.command_fields
                .iter()
                .chain(&e.path_fields)
                .chain(&e.patch_fields)
                .chain(&e.url_fields)
                .chain(&e.cwd_fields)
        })
    };
    for name in read_fields() {
        if args.get(name.as_str()).is_some_and(|v| has_nul(v, 0)) {
            return Some((rules::INPUT_NUL_BYTE, format!("`{tool}` argument `{name}` contains a NUL character.")));
        }
    }
    let schema = schema?;
    // The fields read above hold no NUL: their values are not scanned again.
    let read = |k: &str| read_fields().any(|f| f.as_str() == k);
    if let Value::Object(map) = args
        && let Some((name, _)) =
            map.iter().find(|(k, v)| crate::bytes::contains(k.as_bytes(), 0) || (!read(k) && has_nul(v, 0)))
    {
        return Some((
            rules::INPUT_NUL_BYTE,
            format!("`{tool}` argument `{}` contains a NUL character.", shorten(name)),
        ));
    }
    for rule in &schema.fields {
        let value = args.get(rule.name.as_str());
        let empty = match value {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        };
        if empty {
            if rule.required {
                return Some((
                    rules::INPUT_MISSING_FIELD,
                    format!("`{tool}` needs the argument `{}`; it is missing or empty.", rule.name),
                ));
            }
            continue;
        }
        let Some(value) = value else { continue };
        if let Some(kind) = rule.kind
            && !kind.accepts(value)
        {
            return Some((
                rules::INPUT_WRONG_TYPE,
                format!("`{tool}` argument `{}` must be a {}.", rule.name, kind.name()),
            ));
        }
        // A text of at most `max` bytes has at most `max` characters: counted only when longer.
        if let (Some(max), Some(text)) = (rule.max_length, value.as_str())
            && text.len() as u64 > max
        {
            let chars = text.chars().count() as u64;
            if chars > max {
                return Some((
                    rules::INPUT_TOO_LONG,
                    format!(
                        "`{tool}` argument `{}` is {chars} characters long; at most {max} are accepted.",
                        rule.name
                    ),
                ));
            }
        }
    }
    None
}
