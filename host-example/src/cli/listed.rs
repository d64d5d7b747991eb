//! `warden hash-values`: entries for `dlp.listedValues.hashed`, so that a
//! configuration can list sensitive values without holding them in plain text.
//!
//! Values are read one a line on stdin (blank lines are skipped) and never
//! printed: each output line is the entry of the next value read, in order.
//! The key comes from a file, its first line, so it is in neither the process
//! list nor the shell history. The hashing and normalization are the core's
//! own, the code the component matches with.

use super::{Failure, read_stdin};
use std::io::{Read, Write};
use std::path::Path;
use warden_core::dlp::listed::{
    MAX_LISTED_KEY_CHARS, MAX_LISTED_VALUE_CHARS, MIN_LISTED_KEY_CHARS, hashed_entry, normalized,
};

pub fn run(key_file: &Path, stdin: &mut dyn Read, stdout: &mut dyn Write) -> Result<(), Failure> {
    let text = std::fs::read_to_string(key_file)
        .map_err(|e| Failure::invalid(format!("--key-file: cannot read {}: {e}", key_file.display())))?;
    let key = text.lines().next().unwrap_or_default();
    let n = key.chars().count();
    if !(MIN_LISTED_KEY_CHARS..=MAX_LISTED_KEY_CHARS).contains(&n) {
        return Err(Failure::invalid(format!(
            "--key-file: the key must be {MIN_LISTED_KEY_CHARS} to {MAX_LISTED_KEY_CHARS} characters, got {n} (the key is not shown)"
        )));
    }
    let values = read_stdin(stdin)?;
    let mut entries = Vec::new();
    for (i, line) in values.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let chars = line.chars().count();
        let problem = if chars > MAX_LISTED_VALUE_CHARS {
            Some(format!("must be at most {MAX_LISTED_VALUE_CHARS} characters, got {chars}"))
        } else {
            normalized(line).err()
        };
        match (problem, hashed_entry(key, line)) {
            (None, Some(entry)) => entries.push(entry),
            (problem, _) => {
                let problem = problem.unwrap_or_else(|| "cannot be listed".into());
                return Err(Failure::invalid(format!("stdin line {}: {problem} (the value is not shown)", i + 1)));
            }
        }
    }
    if entries.is_empty() {
        return Err(Failure::invalid("stdin: no values; give one value a line"));
    }
    let mut out = entries.join("\n");
    out.push('\n');
    stdout.write_all(out.as_bytes()).map_err(|e| Failure::failed(format!("cannot write to stdout: {e}")))
}
