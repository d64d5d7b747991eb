use super::*;
use std::path::{Path, PathBuf};

#[test]
fn empty_object_gives_the_defaults() {
    let config = Config::parse("{}");
    assert_eq!(config, Ok(Config::default()));
}

/// Where configuration/error pairs live: `NAME.json` is a configuration and
/// `NAME.expected` the errors `Config::parse` must report for it, one
/// `path: message` per line in the order they are reported; an empty
/// `.expected` means the configuration must be accepted. Any section adds
/// pairs by adding files, prefixed with its name (`safety-…`, `tools-…`).
/// Run with `WARDEN_BLESS=1` to write the `.expected` files from what the
/// parser reports now, then read the diff before committing it.
fn pairs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join("config-errors")
}

/// What `Config::parse` reports for `text`, one error per line.
fn reported(text: &str) -> String {
    match Config::parse(text) {
        Ok(_) => String::new(),
        Err(errors) => errors.iter().map(|e| format!("{e}\n")).collect(),
    }
}

#[test]
fn every_config_error_pair_reports_exactly_its_expected_errors() {
    let dir = pairs_dir();
    let bless = std::env::var_os("WARDEN_BLESS").is_some();
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(list) => list.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(e) => panic!("cannot read {}: {e}", dir.display()),
    };
    entries.sort();
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in &entries {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        match ext {
            "json" => {}
            "expected" => {
                if !path.with_extension("json").exists() {
                    problems.push(format!("{name}: `.expected` without a `.json`"));
                }
                continue;
            }
            _ => {
                problems.push(format!("{name}.{ext}: only `.json` and `.expected` files belong here"));
                continue;
            }
        }
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let got = reported(&text);
        let expected_path = path.with_extension("expected");
        if bless {
            if let Err(e) = std::fs::write(&expected_path, &got) {
                problems.push(format!("{name}: cannot write {}: {e}", expected_path.display()));
            }
            checked += 1;
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == got => {}
            Ok(expected) => problems.push(format!("{name}:\n--- expected\n{expected}--- reported\n{got}")),
            Err(_) => problems.push(format!("{name}: no `{name}.expected`; reported:\n{got}")),
        }
        checked += 1;
    }
    assert!(checked > 0, "no configuration/error pairs in {}", dir.display());
    assert!(problems.is_empty(), "{} of {checked} pairs differ:\n\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_config_error_pair_is_checked_in_whole() {
    // A valid pair is empty; an invalid one ends each error with a newline, so
    // a truncated file cannot pass for a shorter list.
    for entry in std::fs::read_dir(pairs_dir()).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) == Some("expected") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(text.is_empty() || text.ends_with('\n'), "{}", path.display());
        }
    }
}
