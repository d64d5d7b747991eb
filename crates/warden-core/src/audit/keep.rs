//! What `audit.keepInputs` keeps of a tool call for replay, under the
//! ledger's privacy rules: no secret. Every string of the arguments (object
//! keys included) in which the DLP secret detectors find something is
//! replaced whole by `[redacted: <detector>]`; the detectors are named in
//! the kept call, so replay knows its answer for that call may differ.

use super::chain::KeptCall;
use crate::dlp::detectors;
use crate::model::ToolCall;
use crate::prelude::*;
use serde_json::Value;

/// Largest arguments kept, in bytes; larger calls keep only their digest.
pub const MAX_KEPT_ARGUMENT_BYTES: usize = 16 * 1024;
/// Most derived paths kept.
pub const MAX_KEPT_PATHS: usize = 64;

fn redact(text: &str, found: &mut BTreeSet<String>) -> Option<String> {
    let hits = detectors::scan(text);
    if hits.is_empty() {
        return None;
    }
    let names: BTreeSet<&str> = hits.iter().map(|h| h.detector).collect();
    let names: Vec<&str> = names.into_iter().collect();
    for n in &names {
        found.insert((*n).to_string());
    }
    Some(format!("[redacted: {}]", names.join(", ")))
}

/// Replaces, in place, every string of `value` (object keys included) that holds a secret.
pub(crate) fn walk(value: &mut Value, found: &mut BTreeSet<String>) {
    match value {
        Value::String(s) => {
            if let Some(r) = redact(s, found) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| walk(v, found)),
        Value::Object(map) => {
            let old = core::mem::take(map);
            for (i, (k, mut v)) in old.into_iter().enumerate() {
                walk(&mut v, found);
                let k = match redact(&k, found) {
                    Some(r) => format!("{r} #{i}"),
                    None => k,
                };
                map.insert(k, v);
            }
        }
        _ => {}
    }
}

/// The kept form of `call`, or why it is not kept.
pub fn tool_call(call: &ToolCall) -> Result<KeptCall, String> {
    if call.arguments.len() > MAX_KEPT_ARGUMENT_BYTES {
        return Err(format!("arguments larger than {MAX_KEPT_ARGUMENT_BYTES} bytes"));
    }
    let mut args: Value = match serde_json::from_str(&call.arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => return Err("arguments are not a JSON object".into()),
    };
    let mut found = BTreeSet::new();
    walk(&mut args, &mut found);
    let mut paths = Vec::new();
    for p in call.derived_paths.iter().take(MAX_KEPT_PATHS) {
        paths.push(redact(p, &mut found).unwrap_or_else(|| p.clone()));
    }
    let cwd = call.cwd.as_ref().map(|c| redact(c, &mut found).unwrap_or_else(|| c.clone()));
    let tool_name = redact(&call.tool_name, &mut found).unwrap_or_else(|| call.tool_name.clone());
    Ok(KeptCall {
        tool_name,
        arguments: serde_json::to_string(&args).unwrap_or_default(),
        cwd,
        derived_paths: paths,
        redacted: found.into_iter().collect(),
    })
}
