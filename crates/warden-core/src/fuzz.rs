//! Property-based fuzzing of every parser and entry point of the core, on the
//! stable toolchain with `proptest`.
//!
//! Each target feeds arbitrary or mutated input to one parser (configuration,
//! shell, paths, globs, templates, classifier answers) or to the engine's
//! check entry points on arbitrary records over the in-memory fakes, and
//! holds three properties: no panic, the same answer for the same input, and
//! the documented failure mode (fail closed where the check says so).
//!
//! By default each target runs a bounded smoke of a few hundred cases, so the
//! whole set takes seconds; `WARDEN_FUZZ_CASES=N` runs every target for `N`
//! cases instead. Each target prints how many cases it ran (shown with
//! `--nocapture`). Every input that once broke a property is kept below the
//! targets as a named regression test.

use crate::Warden;
use crate::dlp::classifier::{self, ClassifierConfig};
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::model::{
    Approval, Decision, Direction, Identity, OutboundMessage, Scope, ToolCall, Trigger, Turn, TurnStart,
};
use crate::ports::{HttpError, HttpResponse, Ports, StorageError};
use crate::{gate, paths, shell};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestRunner};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, vec};

/// Environment variable that sets how many cases each fuzz target runs.
pub const CASES_VARIABLE: &str = "WARDEN_FUZZ_CASES";

/// Cases each target runs by default: a smoke of a few seconds for all of them.
pub const SMOKE_CASES: u32 = 512;

/// Cases per target: `default`, or the number in [`CASES_VARIABLE`].
pub fn cases(default: u32) -> u32 {
    std::env::var(CASES_VARIABLE).ok().and_then(|v| v.trim().parse().ok()).filter(|&n: &u32| n > 0).unwrap_or(default)
}

/// Runs `test` on `cases(SMOKE_CASES)` values of `strategy` and prints the count.
fn fuzz<S: Strategy>(target: &str, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: core::fmt::Debug,
{
    let cases = cases(SMOKE_CASES);
    let config = RunnerConfig { cases, failure_persistence: None, ..RunnerConfig::default() };
    let started = std::time::Instant::now();
    let mut runner = TestRunner::new(config);
    if let Err(e) = runner.run(&strategy, test) {
        panic!("fuzz {target}: {e}");
    }
    std::println!("fuzz {target}: {cases} cases in {:.1?}, no failure", started.elapsed());
}

// ----- Strategies -----

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        // Any text but backticks and colons, so that what an error quotes
        // cannot pass for the error's own words in `readable`.
        "[^`:]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("enforce"),
            Just("observe"),
            Just("~/.ssh/**"),
            Just("**/.env"),
            Just("/tmp/**"),
            Just("chat"),
            Just("classifier"),
            Just("+00:00"),
            Just("09:00"),
            Just("gpt-4o-2024-08-06"),
        ]
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Object keys: the configuration's own field names more often than not.
fn key() -> impl Strategy<Value = String> {
    let known = [
        "pin",
        "safety",
        "tools",
        "gate",
        "dlp",
        "destinations",
        "debug",
        "enabled",
        "mode",
        "ttlMinutes",
        "tools",
        "allowMissingSession",
        "name",
        "kind",
        "chatParam",
        "protectedPaths",
        "writablePaths",
        "workspace",
        "home",
        "taxonomy",
        "inputs",
        "rules",
        "budget",
        "classifier",
        "model",
        "destination",
        "baseUrl",
        "credential",
        "templates",
        "ownerOffset",
        "start",
        "end",
        "ledgerSecret",
        "askTools",
        "askKinds",
        "scenarios",
    ];
    prop_oneof![3 => proptest::sample::select(known.to_vec()).prop_map(str::to_string), 1 => "[a-zA-Z$]{0,10}"]
}

/// A valid, busy configuration to mutate.
fn seed_config() -> Value {
    json!({
        "destinations": [{"name": "classifier", "baseUrl": "http://127.0.0.1:9/v1", "credential": {"env": "KEY"}}],
        "pin": {"enabled": true, "ttlMinutes": 15, "allowMissingSession": false,
                "tools": [{"name": "send", "kind": "chat", "chatParam": "to"}]},
        "tools": {"workspace": "/ws", "home": "/home/me", "protectedPaths": ["~/.ssh/**", "!~/.ssh/*.pub", "**/.env"],
                  "writablePaths": ["/tmp/**"], "askTools": ["mcp__*"],
                  "rules": {"exec.shutdown": {"decision": "ask", "scope": "session"}}},
        "gate": {"ownerOffset": "+00:00", "templates": ["Reminder: $name, your visit is tomorrow."]},
        "dlp": {"classifier": {"destination": "classifier", "model": "gpt-4o-mini-2024-07-18"},
                "rules": {"outbound": "Project Falcon goes to a person."}},
    })
}

/// `doc` with the value at a path chosen by `steps` (each picks an object
/// key or array element) replaced by `replacement`, or removed.
fn mutate(mut doc: Value, steps: &[(usize, u8)], replacement: Value) -> Value {
    mutate_at(&mut doc, steps, replacement);
    doc
}

fn mutate_at(at: &mut Value, steps: &[(usize, u8)], replacement: Value) {
    let Some(((pick, action), rest)) = steps.split_first() else {
        *at = replacement;
        return;
    };
    let remove = rest.is_empty() && action % 3 == 0;
    match at {
        Value::Object(map) if !map.is_empty() => {
            let k = map.keys().nth(pick % map.len()).cloned().unwrap_or_default();
            if remove {
                map.remove(&k);
            } else if let Some(v) = map.get_mut(&k) {
                mutate_at(v, rest, replacement);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let n = pick % items.len();
            if remove {
                items.remove(n);
            } else if let Some(v) = items.get_mut(n) {
                mutate_at(v, rest, replacement);
            }
        }
        other => *other = replacement,
    }
}

fn config_text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => (proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), json_value())
            .prop_map(|(steps, v)| mutate(seed_config(), &steps, v).to_string()),
        1 => json_value().prop_map(|v| v.to_string()),
        1 => "\\PC{0,64}",
        1 => (json_value(), 0usize..64).prop_map(|(v, cut)| {
            let text = v.to_string();
            text.chars().take(cut).collect()
        }),
    ]
}

/// Words of the shell grammar and of the paths agents name.
fn shell_text() -> impl Strategy<Value = String> {
    let pieces: Vec<&'static str> = vec![
        " ",
        ";",
        "&&",
        "||",
        "|",
        "&",
        "(",
        ")",
        "{ ",
        " }",
        "<",
        ">",
        ">>",
        "2>&1",
        "<<EOF\nx\nEOF\n",
        "<<<",
        "$(",
        "`",
        "'",
        "\"",
        "$'",
        "${x:-",
        "}",
        "$HOME",
        "~",
        "~/.ssh/id_rsa",
        "/etc/shadow",
        ".env",
        "..",
        "/",
        "*",
        "rm",
        "-rf",
        "sudo",
        "env",
        "X=1",
        "bash",
        "-c",
        "sh",
        "eval",
        "xargs",
        "find",
        "-exec",
        "cat",
        "curl",
        "http://x",
        "-d",
        "@-",
        "cd",
        "git",
        "status",
        "tee",
        "dd",
        "of=/dev/sda",
        "\\",
        "\n",
        "é",
        "\u{0}",
    ];
    prop_oneof![
        4 => proptest::collection::vec(proptest::sample::select(pieces), 0..48).prop_map(|v| v.concat()),
        1 => "\\PC{0,120}",
    ]
}

fn path_text() -> impl Strategy<Value = String> {
    let pieces: Vec<&'static str> =
        vec!["/", "//", ".", "..", "~", "~bob", "$HOME", "${HOME}", "a", ".ssh", "id_rsa", "é", "*", " ", "\u{0}"];
    prop_oneof![
        4 => proptest::collection::vec(proptest::sample::select(pieces), 0..16).prop_map(|v| v.concat()),
        1 => "\\PC{0,64}",
    ]
}

fn glob_text() -> impl Strategy<Value = String> {
    let pieces: Vec<&'static str> = vec!["/", "~/", "**/", "**", "*", "?", "a", "b", ".", "..", "!", "é", "\u{0}"];
    prop_oneof![
        4 => proptest::collection::vec(proptest::sample::select(pieces), 0..24).prop_map(|v| v.concat()),
        1 => "\\PC{0,40}",
    ]
}

fn tool_name() -> impl Strategy<Value = String> {
    let known = vec![
        "Bash",
        "exec",
        "terminal",
        "Read",
        "Write",
        "Edit",
        "apply_patch",
        "WebFetch",
        "message",
        "send",
        "teams_send_chat_message",
        "teams_create_chat",
        "mcp__fs__read_file",
        "mcp__github__x",
        "other",
    ];
    prop_oneof![4 => proptest::sample::select(known).prop_map(str::to_string), 1 => "\\PC{0,16}"]
}

fn arguments() -> impl Strategy<Value = String> {
    let fields = (
        shell_text(),
        path_text(),
        proptest::option::of(path_text()),
        proptest::option::of("[a-z:0-9]{1,8}"),
        json_value(),
    );
    prop_oneof![
        4 => fields.prop_map(|(command, path, cwd, chat, extra)| {
            let mut args = json!({"command": command, "file_path": path, "path": path, "url": format!("file://{path}"),
                                  "input": format!("*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch"),
                                  "extra": extra});
            if let Some(c) = cwd { args["workdir"] = json!(c); }
            if let Some(c) = chat { args["chat"] = json!(c); args["to"] = json!(c); }
            args.to_string()
        }),
        1 => json_value().prop_map(|v| v.to_string()),
        1 => "\\PC{0,40}",
    ]
}

fn option_text() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(prop_oneof![Just(String::new()), Just("s1".to_string()), "\\PC{0,12}"])
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        tool_name(),
        arguments(),
        option_text(),
        option_text(),
        proptest::option::of(path_text()),
        proptest::collection::vec(path_text(), 0..3),
        any::<u64>(),
    )
        .prop_map(|(tool_name, arguments, session_id, call_id, cwd, derived_paths, now)| ToolCall {
            tool_name,
            arguments,
            call_id,
            run_id: None,
            session_id,
            now_ms: 1_700_000_000_000 + now % 100_000_000,
            identity: Identity::default(),
            cwd,
            derived_paths,
        })
}

fn outbound_message() -> impl Strategy<Value = OutboundMessage> {
    let body = prop_oneof![
        3 => "\\PC{0,80}".prop_map(String::into_bytes),
        1 => proptest::collection::vec(any::<u8>(), 0..40),
        1 => Just(b"Reminder: Ada, your visit is tomorrow.".to_vec()),
    ];
    (any::<bool>(), "[a-z]{0,6}", "\\PC{0,16}", body, option_text(), option_text(), option_text(), any::<u64>())
        .prop_map(|(inbound, channel, recipient, body, thread, message_id, session_id, now)| OutboundMessage {
            direction: if inbound { Direction::Inbound } else { Direction::Outbound },
            channel,
            recipient,
            sender: Some("agent".into()),
            body,
            thread,
            message_id,
            session_id,
            now_ms: 1_717_372_800_000 + now % 1_000_000_000,
            identity: Identity::default(),
        })
}

/// Classifier answers: a good completion mutated, or anything at all.
fn classifier_answer() -> impl Strategy<Value = Result<HttpResponse, HttpError>> {
    let good = |content: &str| {
        json!({"model": "gpt-4o-mini-2024-07-18", "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
               "finish_reason": "stop"}]})
    };
    let content = json!({"decision": "allow", "category": "none", "reason": "fine", "model": "gpt-4o-mini-2024-07-18",
                         "policyVersion": classifier::BASE_POLICY_VERSION})
    .to_string();
    let mutated = (proptest::collection::vec((any::<usize>(), any::<u8>()), 1..5), json_value(), any::<bool>())
        .prop_map(move |(steps, v, inner)| {
            let body = if inner {
                let content: Value = serde_json::from_str(&content).unwrap_or_default();
                good(&mutate(content, &steps, v).to_string())
            } else {
                mutate(good(&content), &steps, v)
            };
            Ok(HttpResponse { status: 200, headers: Vec::new(), body: body.to_string().into_bytes() })
        });
    prop_oneof![
        4 => mutated,
        1 => (any::<u16>(), proptest::collection::vec(any::<u8>(), 0..64))
            .prop_map(|(status, body)| Ok(HttpResponse { status, headers: Vec::new(), body })),
        1 => Just(Err(HttpError::Timeout)),
    ]
}

fn classifier_config() -> ClassifierConfig {
    ClassifierConfig {
        destination: "classifier".into(),
        model: "gpt-4o-mini-2024-07-18".into(),
        allowed_models: Vec::new(),
        path: classifier::DEFAULT_PATH.into(),
        timeout_ms: classifier::DEFAULT_TIMEOUT_MS,
        directions: vec![Direction::Outbound, Direction::Inbound],
        url: "http://127.0.0.1:9/v1/chat/completions".into(),
    }
}

// ----- Properties shared by the targets -----

/// An error text for people: not empty, no Rust type or module names
/// outside the backticks that quote the input.
fn readable(text: &str) -> Result<(), TestCaseError> {
    prop_assert!(!text.trim().is_empty(), "an empty error text");
    let own: String = text.split('`').step_by(2).collect::<Vec<_>>().join(" ");
    for rust in ["::", "alloc", "Vec<", "Option<", "BTreeMap", "String", "serde"] {
        prop_assert!(!own.contains(rust), "`{}` in an error text: {}", rust, text);
    }
    Ok(())
}

fn ports<'a>(http: &'a ScriptedHttp, storage: &'a MemoryStorage, log: &'a VecLog) -> Ports<'a> {
    Ports { http, storage, log }
}

/// Decision, rule, reason, scope and key of a verdict, for comparing two runs.
fn shape(v: &crate::model::Verdict) -> (Decision, String, String, Option<Scope>, Option<String>) {
    (v.decision, v.rule.clone(), v.reason.clone(), v.scope, v.approval_key.clone())
}

/// An `ask` carries a scope and a key to answer it with; nothing else carries a key.
fn well_formed(v: &crate::model::Verdict) -> Result<(), TestCaseError> {
    prop_assert!(!v.rule.is_empty() && !v.reason.is_empty(), "{:?}", v);
    // Observe mode answers `allow` and keeps what it would have asked, key included.
    if v.decision == Decision::Ask || v.observed == Some(Decision::Ask) {
        prop_assert!(v.scope.is_some() && v.approval_key.is_some(), "an ask without scope or key: {:?}", v);
    } else {
        prop_assert!(v.approval_key.is_none(), "a key on a {:?}: {:?}", v.decision, v);
    }
    Ok(())
}

fn engines() -> Vec<Warden> {
    let mut out = Vec::new();
    for doc in [json!({}), seed_config(), json!({"pin": {"allowMissingSession": true}, "tools": {"mode": "observe"}})] {
        match Warden::configure(&doc.to_string()) {
            Ok(w) => out.push(w),
            Err(e) => panic!("a fuzz engine's configuration is invalid: {e:?}"),
        }
    }
    out
}

/// A classifier port that answers from `pv` with `decision`.
fn classifier_port(decision: &'static str) -> ScriptedHttp {
    ScriptedHttp::new(move |req| {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or_default();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let pv =
            system.rsplit("\"policyVersion\" (exactly \"").next().and_then(|s| s.split('"').next()).unwrap_or_default();
        let content = json!({"decision": decision, "category": "none", "reason": "fine", "model": "gpt-4o-mini-2024-07-18", "policyVersion": pv});
        let envelope = json!({"model": "gpt-4o-mini-2024-07-18", "choices": [{"message": {"content": content.to_string()}, "finish_reason": "stop"}]});
        Ok(HttpResponse { status: 200, headers: Vec::new(), body: envelope.to_string().into_bytes() })
    })
}

// ----- Targets -----

#[test]
fn fuzz_configure_on_arbitrary_and_mutated_documents() {
    fuzz("config", config_text(), |text| {
        let first = Warden::configure(&text);
        let again = Warden::configure(&text);
        match (&first, &again) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(a.policy_version(), b.policy_version());
                let report = a.report();
                prop_assert_eq!(report.checks.len(), 8);
            }
            (Err(a), Err(b)) => {
                prop_assert!(!a.is_empty(), "refused without an error");
                prop_assert_eq!(a, b);
                for e in a {
                    readable(&e.message)?;
                }
            }
            _ => prop_assert!(false, "two answers for one document"),
        }
        Ok(())
    });
}

#[test]
fn fuzz_shell_parser_and_analysis() {
    fuzz("shell", shell_text(), |text| {
        let parsed = shell::parse(&text);
        prop_assert_eq!(&parsed, &shell::parse(&text));
        match parsed {
            Ok(tree) => {
                let printed = shell::print::script(&tree);
                prop_assert_eq!(Ok(tree.clone()), shell::parse(&printed), "printed as {:?}", printed);
                let secret = |p: &str| paths::glob_matches("~/.ssh/**", p);
                let context = shell::commands::Context {
                    cwd: Some("/ws"),
                    home: &crate::paths::Home::new(Some("/home/me")),
                    secret: &secret,
                };
                let analysis = shell::commands::analyse(&tree, &context);
                prop_assert!(analysis.invocations.len() <= shell::commands::MAX_INVOCATIONS);
            }
            Err(e) => readable(&e.message)?,
        }
        Ok(())
    });
}

#[test]
fn fuzz_path_normalization() {
    let inputs = (path_text(), proptest::option::of(path_text()), proptest::option::of(path_text()));
    fuzz("paths", inputs, |(path, cwd, home)| {
        let n = paths::normalize(&path, cwd.as_deref(), home.as_deref());
        prop_assert_eq!(&n, &paths::normalize(&path, cwd.as_deref(), home.as_deref()));
        // Normalizing again changes nothing: what a rule saw is what a second look sees.
        prop_assert_eq!(&n, &paths::normalize(&n, None, home.as_deref()), "from {:?} in {:?}", path, cwd);
        let body = n.strip_prefix('/').or_else(|| n.strip_prefix("~/")).unwrap_or(&n);
        if !matches!(n.as_str(), "/" | "~" | ".") {
            let segments: Vec<&str> = body.split('/').collect();
            prop_assert!(segments.iter().all(|s| !s.is_empty() && *s != "."), "{}", n);
            let first_other = segments.iter().position(|s| *s != "..").unwrap_or(segments.len());
            prop_assert!(segments[first_other..].iter().all(|s| *s != ".."), "a `..` inside {}", n);
            prop_assert!(n.starts_with('/') || n.starts_with("~/") || !segments.is_empty());
            // Nothing is cut, and nothing is added but a home's parent folder.
            let given = |t: &Option<String>| t.as_deref().map_or(0, |t| t.split('/').count());
            prop_assert!(
                segments.len() <= path.split('/').count() + given(&cwd) + given(&home) + 2,
                "{} segments",
                segments.len()
            );
            if n.starts_with('/') || n.starts_with('~') {
                prop_assert!(first_other == 0, "`..` above a root in {}", n);
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_glob_compilation_and_matching() {
    fuzz("globs", (glob_text(), path_text()), |(glob, path)| {
        let compiled = paths::Glob::new(&glob);
        prop_assert_eq!(&compiled.clone().err(), &paths::Glob::new(&glob).err());
        match compiled {
            Ok(g) => {
                prop_assert_eq!(g.as_str(), glob.as_str());
                let split = paths::SplitPath::new(&path);
                let mut work = 0;
                let matched = g.matches_counting_for_tests(&split, &mut work);
                prop_assert_eq!(matched, g.matches(&split));
                let bound = (path.chars().count() + 1) * (glob.chars().count() + 1);
                prop_assert!(work <= bound, "{} steps over {}", work, bound);
            }
            Err(problem) => readable(&problem)?,
        }
        Ok(())
    });
}

#[test]
fn fuzz_templates() {
    let template = proptest::collection::vec(
        proptest::sample::select(vec!["Hi ", "$name", "${name}", "$$", "$", "${", "}", "$x1", ", ", "é", "$_"]),
        0..12,
    )
    .prop_map(|v| v.concat());
    let inputs = (template, "\\PC{0,8}", "\\PC{0,8}", "\\PC{0,24}");
    fuzz("templates", inputs, |(template, name, x1, body)| {
        let vars: BTreeMap<String, String> =
            [("name".to_string(), name), ("x1".to_string(), x1), ("_".to_string(), "u".to_string())].into();
        let parsed = gate::templates::parse(&template);
        prop_assert_eq!(&parsed, &gate::templates::parse(&template));
        prop_assert_eq!(
            gate::templates::matches(&template, &vars, &body),
            gate::templates::matches(&template, &vars, &body)
        );
        match parsed {
            Ok(segments) => {
                // The template filled with its variables is exactly what it matches.
                let mut filled = String::new();
                let mut complete = true;
                for s in &segments {
                    match s {
                        gate::templates::Segment::Literal(t) => filled.push_str(t),
                        gate::templates::Segment::Variable(v) => match vars.get(*v) {
                            Some(value) => filled.push_str(value),
                            None => complete = false,
                        },
                    }
                }
                prop_assert_eq!(gate::templates::matches(&template, &vars, &filled), complete, "filled {:?}", filled);
            }
            Err((at, message)) => {
                prop_assert!(at <= template.chars().count());
                readable(message)?;
                prop_assert!(!gate::templates::matches(&template, &vars, &body));
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_classifier_answers() {
    let c = classifier_config();
    fuzz("classifier answers", classifier_answer(), |outcome| {
        let got = classifier::answer(&c, classifier::BASE_POLICY_VERSION, outcome.clone());
        prop_assert_eq!(&got, &classifier::answer(&c, classifier::BASE_POLICY_VERSION, outcome.clone()));
        if let Ok(v) = got {
            // Admitted only from a complete, pinned, well-formed completion.
            let response = outcome.map_err(|_| TestCaseError::fail("admitted without a response"))?;
            prop_assert_eq!(response.status, 200);
            let envelope: Value =
                serde_json::from_slice(&response.body).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(classifier::served_by_pinned(&c, envelope["model"].as_str().unwrap_or_default()));
            prop_assert_eq!(envelope["choices"][0]["finish_reason"].as_str(), Some(classifier::STOP_FINISH_REASON));
            prop_assert!(envelope.get("status").is_none_or(|s| s == classifier::COMPLETED_STATUS));
            prop_assert_eq!(v.model.as_str(), c.model.as_str());
            prop_assert_eq!(v.policy_version.as_str(), classifier::BASE_POLICY_VERSION);
        }
        Ok(())
    });
}

#[test]
fn fuzz_check_tool_call_on_arbitrary_records() {
    let engines = engines();
    fuzz("check-tool-call", (tool_call(), 0..engines.len()), |(call, e)| {
        let w = &engines[e];
        let (http, log) = (ScriptedHttp::unreachable(), VecLog::default());
        let (a, b) = (MemoryStorage::default(), MemoryStorage::default());
        let first = w.check_tool_call(&ports(&http, &a, &log), &call);
        let second = w.check_tool_call(&ports(&http, &b, &log), &call);
        prop_assert_eq!(shape(&first), shape(&second), "two answers for one call");
        well_formed(&first)?;
        // Fail closed: with storage gone, every call is refused, unless the judge is only observing.
        let gone = MemoryStorage::default();
        gone.fail_with(StorageError::Unavailable("fuzz".into()));
        let v = w.check_tool_call(&ports(&http, &gone, &log), &call);
        if v.observed.is_none() {
            prop_assert_eq!(v.decision, Decision::Deny, "storage gone, yet {:?}", v);
        }
        Ok(())
    });
}

#[test]
fn fuzz_check_outbound_on_arbitrary_records() {
    let engines = engines();
    fuzz("check-outbound", (outbound_message(), 0..engines.len(), any::<bool>()), |(m, e, deny)| {
        let w = &engines[e];
        let http = classifier_port(if deny { "deny" } else { "review" });
        let log = VecLog::default();
        let (a, b) = (MemoryStorage::default(), MemoryStorage::default());
        let first = w.check_outbound(&ports(&http, &a, &log), &m);
        let second = w.check_outbound(&ports(&http, &b, &log), &m);
        prop_assert_eq!(shape(&first), shape(&second), "two answers for one message");
        well_formed(&first)?;
        // A storage failure never loosens an answer.
        let gone = MemoryStorage::default();
        gone.fail_with(StorageError::Unavailable("fuzz".into()));
        let v = w.check_outbound(&ports(&http, &gone, &log), &m);
        prop_assert!(v.decision >= first.decision, "storage gone turned {:?} into {:?}", first.decision, v.decision);
        Ok(())
    });
}

#[test]
fn fuzz_turns_pins_and_approvals_on_arbitrary_records() {
    let engines = engines();
    let records = (
        "\\PC{0,40}",
        option_text(),
        option_text(),
        "\\PC{0,16}",
        option_text(),
        "[^`:]{0,70}",
        any::<bool>(),
        0..engines.len(),
    );
    fuzz(
        "check-turn, start-turn, record-approval",
        records,
        |(text, session, chat, start_session, label, key, allow, e)| {
            let w = &engines[e];
            let (http, log) = (ScriptedHttp::unreachable(), VecLog::default());
            let storage = MemoryStorage::default();
            let p = ports(&http, &storage, &log);
            let turn = Turn {
                run_id: None,
                session_id: session.clone(),
                now_ms: 1_700_000_000_000,
                identity: Identity::default(),
                trigger: Trigger::User,
                message: text,
                context: Default::default(),
                history: Vec::new(),
                queue_mode: None,
                hook_timeout_ms: None,
            };
            let outcome = w.check_turn(&p, &turn);
            prop_assert_eq!(&outcome, &w.check_turn(&ports(&http, &MemoryStorage::default(), &log), &turn));
            // Turns fail open: a storage failure lets the turn proceed.
            let gone = MemoryStorage::default();
            gone.fail_with(StorageError::Unavailable("fuzz".into()));
            prop_assert!(w.check_turn(&ports(&http, &gone, &log), &turn).proceed);
            let start = TurnStart {
                session_id: start_session,
                run_id: None,
                chat_id: chat,
                label,
                now_ms: 1_700_000_000_000,
                prompt: None,
                dedicated: false,
            };
            match w.start_turn(&p, &start) {
                Ok(_) => prop_assert!(!start.session_id.trim().is_empty()),
                Err(e) => readable(&e.to_string())?,
            }
            let writes = storage.writes();
            let approval = Approval {
                key,
                allow,
                scope: Scope::Always,
                session_id: session,
                call_id: None,
                now_ms: 1_700_000_000_000,
                idempotency_key: None,
            };
            if let Err(e) = w.record_approval(&p, &approval) {
                readable(&e.to_string())?;
                prop_assert_eq!(storage.writes(), writes, "a refused approval wrote");
            }
            Ok(())
        },
    );
}

// ----- Regressions: inputs the targets above once broke -----

#[test]
fn a_relative_path_in_an_empty_working_directory_has_no_dot_segment() {
    // Was `./a`, which normalized again to `a`.
    assert_eq!(paths::normalize("a", Some(""), None), "a");
    assert_eq!(paths::normalize("a/b", Some("."), None), "a/b");
    assert_eq!(paths::normalize("a", Some("./."), None), "a");
}

#[test]
fn an_unknown_rule_name_is_refused_naming_the_rules_not_a_rust_path() {
    let errors =
        Warden::configure(r#"{"tools": {"rules": {"exec.network": {"decision": "ask"}}}}"#).err().unwrap_or_default();
    let [e] = errors.as_slice() else { panic!("one error: {errors:?}") };
    assert_eq!(e.path, "tools.rules.exec.network");
    assert!(e.message.starts_with("`exec.network` is not a configurable rule; the rules are `"), "{}", e.message);
    assert!(e.message.contains("`exec.shutdown`") && !e.message.contains("::"), "{}", e.message);
}

#[test]
fn a_relative_path_that_resolves_to_a_home_spelling_is_read_as_home_at_once() {
    // Was the relative `~/.ssh/id_rsa`, which a second normalization (of a
    // working directory, say) read as home: now the first one does.
    for (path, expected) in [
        ("a/../~/.ssh/id_rsa", "~/.ssh/id_rsa"),
        ("a/../~bob/.ssh", "/home/bob/.ssh"),
        ("./~bob", "/home/bob"),
        ("x/../$HOME/.aws/credentials", "~/.aws/credentials"),
        ("x/../${HOME}", "~"),
        ("x/../$HOMEDIR/y", "$HOMEDIR/y"),
    ] {
        let once = paths::normalize(path, None, None);
        assert_eq!(once, expected, "{path}");
        assert_eq!(paths::normalize(&once, None, None), once, "{path}");
    }
    assert!(paths::glob_matches("~/.ssh/**", &paths::normalize("a/../~/.ssh/id_rsa", None, None)));
}
