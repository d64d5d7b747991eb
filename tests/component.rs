//! The component as built: what it imports, how big it is, and how it answers
//! before and after configuration.

use warden_host::runtime::EMBEDDED_COMPONENT;
use warden_tests::{T0, TempDb, decided, runtime, tool_call};
use wasmtime::component::Component;

/// The size the release component must stay under: 3 MiB since the guest is
/// linked with fat LTO for speed (about 2,816 KiB; 2,483 KiB without LTO),
/// 3.25 MiB since the exec gate reads parameter operators, arrays by index
/// and code that may not run (about 3,098 KiB, 100 KiB of it that reading).
const MAX_COMPONENT_BYTES: usize = 3328 * 1024;

#[test]
fn component_imports_only_its_own_world() {
    let engine = wasmtime::Engine::default();
    let component = Component::new(&engine, EMBEDDED_COMPONENT).expect("component compiles");
    let mut imports: Vec<String> =
        component.component_type().imports(&engine).map(|(name, _)| name.to_string()).collect();
    imports.sort();
    assert_eq!(
        imports,
        ["warden:guard/http@0.1.0", "warden:guard/log@0.1.0", "warden:guard/storage@0.1.0", "warden:guard/types@0.1.0",],
        "no wasi:filesystem, wasi:sockets, wasi:cli/environment or anything else"
    );
    let mut exports: Vec<String> =
        component.component_type().exports(&engine).map(|(name, _)| name.to_string()).collect();
    exports.sort();
    assert_eq!(
        exports,
        [
            "warden:guard/asks@0.1.0",
            "warden:guard/audit@0.1.0",
            "warden:guard/gate@0.1.0",
            "warden:guard/policy@0.1.0",
            "warden:guard/profiles@0.1.0",
            "warden:guard/runtime-config@0.1.0",
            "warden:guard/scan@0.1.0",
            "warden:guard/tool-review@0.1.0",
        ]
    );
}

#[test]
fn release_component_is_under_three_mebibytes() {
    let size = EMBEDDED_COMPONENT.len();
    println!("component size: {size} bytes");
    assert!(size < MAX_COMPONENT_BYTES, "component is {size} bytes");
}

#[test]
fn checks_with_nothing_configured_say_so() {
    let db = TempDb::new();
    let rt = runtime(r#"{"pin": {"enabled": false}, "tools": {"enabled": false}}"#, db.open());
    let v = rt.check_tool_call(&tool_call("exec", serde_json::json!({"command": "ls"}), "s", T0));
    assert_eq!(decided(&v), ("allow", "not-configured"));
    let report = rt.report();
    let pin = report.checks.iter().find(|c| c.check == "pin").expect("pin status");
    assert!(!pin.active);
    assert_eq!(pin.failure_mode, "fail-closed");
    let safety = report.checks.iter().find(|c| c.check == "safety").expect("safety status");
    assert_eq!(safety.failure_mode, "fail-open");
}

#[test]
fn arguments_that_are_not_a_json_object_fail_closed() {
    let db = TempDb::new();
    let rt = runtime("{}", db.open());
    for args in ["[1,2]", "not json", "\"text\""] {
        let mut call = tool_call("exec", serde_json::Value::Null, "s", T0);
        call.arguments = args.to_string();
        let v = rt.check_tool_call(&call);
        assert_eq!(decided(&v), ("deny", "input.invalid-arguments"), "{args}");
        assert!(v.reason.starts_with("arguments:"), "{}", v.reason);
    }
}

#[test]
fn invalid_configuration_is_refused_with_every_error_and_its_path() {
    let db = TempDb::new();
    let log = warden_tests::CapturedLog::default();
    let config = r#"{"pin": {"ttlMinutes": 0, "bogus": true, "tools": [{"name": "x y", "kind": "chat"}]}, "extra": 1}"#;
    let err = warden_host::Runtime::new(warden_tests::options(db.open(), &log), config)
        .err()
        .expect("configuration must be refused");
    let warden_host::StartError::Config(errors) = err else {
        panic!("expected configuration errors, got {err}");
    };
    let rendered: Vec<String> = errors.iter().map(|(p, m)| format!("{p}: {m}")).collect();
    let expected = [
        "extra: unknown field; allowed fields are `$schema`, `debug`, ",
        "pin.bogus: unknown field; allowed fields are `enabled`, ",
        "pin.ttlMinutes: must be between 1 and 1440, got `0`",
        "pin.tools[0].name: `x y` must be a name without spaces",
    ];
    assert_eq!(rendered.len(), expected.len(), "{rendered:#?}");
    for (got, want) in rendered.iter().zip(expected) {
        assert!(got.starts_with(want), "{got:?} should start with {want:?}");
    }
}
