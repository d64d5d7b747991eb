//! The JSON Schema of the configuration, generated from the configuration's
//! Rust types (native builds with the `schema` feature only). The checked-in
//! copy at `schema/warden.schema.json` is what editors, the OpenClaw plugin
//! manifest and operators use; a test fails when it is stale, and
//! `cargo xtask schema` rewrites it.

use crate::prelude::*;

/// The schema of the whole configuration document.
pub fn config_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(crate::Config);
    let mut value = serde_json::to_value(schema).unwrap_or_default();
    forbid_null(&mut value);
    no_default_for_sections_on_when_present(&mut value);
    value
}

/// The text that marks a section's `enabled` as on whenever the section is
/// written, whatever the type's default says.
const ON_WHEN_PRESENT: &str = "On when the section is present.";

/// A section that is on when it is present (`gate`, `flow`) has no default
/// for `enabled` in the schema: a tool that fills in defaults (OpenClaw does)
/// would otherwise write `enabled: false` into every such section and turn
/// it off.
fn no_default_for_sections_on_when_present(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(enabled)) = map.get_mut("properties").and_then(|p| p.get_mut("enabled"))
                && enabled.get("description").and_then(Value::as_str).is_some_and(|d| d.ends_with(ON_WHEN_PRESENT))
            {
                enabled.remove("default");
            }
            map.values_mut().for_each(no_default_for_sections_on_when_present);
        }
        Value::Array(items) => items.iter_mut().for_each(no_default_for_sections_on_when_present),
        _ => {}
    }
}

/// Optional fields may be omitted but never `null`: the reader refuses null,
/// so the schema must too. schemars allows null for every `Option`.
fn forbid_null(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(alternatives)) = map.get_mut("anyOf") {
                alternatives.retain(|a| a.get("type") != Some(&Value::String("null".into())));
                if alternatives.len() == 1 {
                    let only = alternatives.remove(0);
                    map.remove("anyOf");
                    if let Value::Object(inner) = only {
                        map.extend(inner);
                    }
                }
            }
            map.values_mut().for_each(forbid_null);
        }
        Value::Array(items) => items.iter_mut().for_each(forbid_null),
        _ => {}
    }
}

/// The schema as the checked-in file holds it: pretty-printed, with a final newline.
pub fn config_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&config_schema()).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_in_schema_matches_the_configuration_types() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schema/warden.schema.json");
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == config_schema_text(),
            "schema/warden.schema.json is stale: run `cargo xtask schema` and commit the result"
        );
    }

    #[test]
    fn sections_on_when_present_have_no_default_that_would_turn_them_off() {
        let schema = config_schema();
        for section in ["GateConfig", "FlowConfig"] {
            let enabled = &schema["$defs"][section]["properties"]["enabled"];
            assert_eq!(enabled["type"], "boolean", "{section}");
            assert!(enabled.get("default").is_none(), "{section}.enabled must carry no default: {enabled}");
        }
    }

    #[test]
    fn schema_refuses_unknown_top_level_fields() {
        let schema = config_schema();
        assert_eq!(schema["additionalProperties"], serde_json::Value::Bool(false));
        assert_eq!(schema["title"], "Warden configuration");
    }
}
