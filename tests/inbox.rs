//! The approval inbox through the shipped binary: `warden serve` as a
//! subprocess raises an ask from a real tool call, lists it, answers it, and
//! the retried call is allowed by `memory.allow`; the page in a real headless
//! Chromium (Debian's package) does the same by clicking; `warden asks` in
//! the terminal.

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use warden_tests::TempDb;

const TOKEN: &str = "inbox-token-0123456789";
/// How long the browser run may take, all in (install excluded).
const BROWSER_DEADLINE: Duration = Duration::from_secs(90);

const CONFIG: &str = r#"{"tools": {"askTools": ["deploy"], "rules": {"tools.ask-tool": {"scope": "always"}}}}"#;

/// `warden serve` on 127.0.0.1:0, killed when dropped.
struct Serve {
    child: Child,
    addr: SocketAddr,
    db: TempDb,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config_path(db: &TempDb, config: &str) -> PathBuf {
    let path = db.dir.path().join("warden.json");
    std::fs::write(&path, config).expect("config");
    path
}

fn serve() -> Serve {
    serve_config(CONFIG)
}

fn serve_config(config: &str) -> Serve {
    use std::io::BufRead;
    let db = TempDb::new();
    let config = config_path(&db, config);
    let mut child = warden_tests::binary::warden_command(&[])
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--db")
        .arg(db.path())
        .env("WARDEN_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("warden serve runs");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let addr = loop {
        let mut line = String::new();
        assert_ne!(stderr.read_line(&mut line).expect("stderr"), 0, "warden serve stopped before serving");
        if let Some(addr) = line.trim().strip_prefix("warden: serving on http://") {
            break addr.parse().expect("the bound address");
        }
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    Serve { child, addr, db }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

fn send(s: &Serve, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> (u16, Value, String) {
    let url = format!("http://{}{path}", s.addr);
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut resp = match (method, body) {
        ("GET", _) => {
            let mut r = agent().get(&url);
            if let Some(a) = &auth {
                r = r.header("authorization", a);
            }
            r.call().expect("request")
        }
        (_, body) => {
            let mut r = agent().post(&url).header("content-type", "application/json");
            if let Some(a) = &auth {
                r = r.header("authorization", a);
            }
            r.send(body.map(|b| b.to_string()).unwrap_or_default()).expect("request")
        }
    };
    let status = resp.status().as_u16();
    let csp =
        resp.headers().get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)), csp)
}

fn check(s: &Serve, args: Value) -> Value {
    let call = json!({"toolName": "deploy", "arguments": args, "sessionId": "s1",
                      "identity": {"agentId": "ops-agent", "senderId": "alice"}});
    let (status, verdict, _) = send(s, "POST", "/v1/check/tool", Some(TOKEN), Some(&call));
    assert_eq!(status, 200, "{verdict}");
    verdict
}

fn ask_id(verdict: &Value) -> String {
    let signal = verdict["signals"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == "asks.pending"))
        .unwrap_or_else(|| panic!("the verdict names its ask: {verdict}"));
    let detail = signal["detail"].as_str().expect("detail");
    detail.split('`').nth(1).expect("the ask id in backticks").to_string()
}

#[test]
fn an_ask_raised_by_a_tool_call_is_listed_answered_once_and_the_retry_is_allowed_by_memory() {
    let s = serve();
    let asked = check(&s, json!({"target": "prod"}));
    assert_eq!((asked["decision"].as_str(), asked["rule"].as_str()), (Some("ask"), Some("tools.ask-tool")));
    let id = ask_id(&asked);
    let (status, listed, _) = send(&s, "GET", "/v1/asks", Some(TOKEN), None);
    assert_eq!(status, 200, "{listed}");
    let ask = &listed["asks"][0];
    assert_eq!(
        (ask["id"].as_str(), ask["toolName"].as_str(), ask["rule"].as_str(), ask["scope"].as_str()),
        (Some(id.as_str()), Some("deploy"), Some("tools.ask-tool"), Some("always"))
    );
    assert_eq!((ask["agentId"].as_str(), ask["sessionId"].as_str()), (Some("ops-agent"), Some("s1")));
    assert_eq!(ask["approvalKey"], asked["approvalKey"]);

    let (status, answered, _) =
        send(&s, "POST", &format!("/v1/asks/{id}"), Some(TOKEN), Some(&json!({"answer": "allow", "scope": "once"})));
    assert_eq!(status, 200, "{answered}");
    assert_eq!(answered["answered"]["answer"], "allow");
    let retried = check(&s, json!({"target": "prod"}));
    assert_eq!((retried["decision"].as_str(), retried["rule"].as_str()), (Some("allow"), Some("memory.allow")));
    // Once means once: the next identical call asks again.
    let third = check(&s, json!({"target": "prod"}));
    assert_eq!(third["decision"], "ask");
    assert_eq!(s.db.answers(), 0, "the once answer was used up");
    let (_, recent, _) = send(&s, "GET", "/v1/asks/recent", Some(TOKEN), None);
    assert_eq!(recent["recent"][0]["id"].as_str(), Some(id.as_str()));
}

/// Method, path, token, body, expected status, text the answer must contain.
type RouteCase = (&'static str, String, Option<&'static str>, Option<Value>, u16, &'static str);

#[test]
fn the_inbox_routes_need_the_token_and_refuse_forged_ids_and_broader_scopes() {
    let s = serve();
    let asked = check(&s, json!({"target": "staging"}));
    let id = ask_id(&asked);
    let allow_once = json!({"answer": "allow", "scope": "once"});
    // (method, path, token, body, status, text the error must contain)
    let cases: Vec<RouteCase> = vec![
        ("GET", "/v1/asks".into(), None, None, 401, "Bearer"),
        ("GET", "/v1/asks".into(), Some("wrong-token-0123456789"), None, 401, "Bearer"),
        ("POST", format!("/v1/asks/{id}"), None, Some(allow_once.clone()), 401, "Bearer"),
        ("GET", "/v1/asks/recent".into(), None, None, 401, "Bearer"),
        ("GET", "/v1/gate/status".into(), None, None, 401, "Bearer"),
        (
            "POST",
            "/v1/asks/000000000000000000000000".into(),
            Some(TOKEN),
            Some(allow_once.clone()),
            404,
            "not a pending ask",
        ),
        ("POST", "/v1/asks/..%2F..%2Fetc".into(), Some(TOKEN), Some(allow_once.clone()), 404, "is not an ask ID"),
        (
            "POST",
            format!("/v1/asks/{id}"),
            Some(TOKEN),
            Some(json!({"answer": "maybe", "scope": "once"})),
            400,
            "answer",
        ),
        ("POST", format!("/v1/asks/{id}"), Some(TOKEN), Some(json!({"answer": "allow"})), 400, "scope"),
        (
            "POST",
            format!("/v1/asks/{id}"),
            Some(TOKEN),
            Some(json!({"answer": "allow", "scope": "once", "x": 1})),
            400,
            "x",
        ),
        ("GET", "/v1/asks?limit=0".into(), Some(TOKEN), None, 400, "limit: `0`"),
        ("GET", "/v1/asks?limit=ten".into(), Some(TOKEN), None, 400, "limit"),
    ];
    for (method, path, token, body, status, text) in cases {
        let (got, answer, _) = send(&s, method, &path, token, body.as_ref());
        assert_eq!(got, status, "{method} {path}: {answer}");
        assert!(answer.to_string().contains(text), "{method} {path}: {answer}");
    }
    // Nothing was recorded: the ask is still pending and the call still asks.
    let (_, listed, _) = send(&s, "GET", "/v1/asks", Some(TOKEN), None);
    assert_eq!(listed["asks"][0]["id"].as_str(), Some(id.as_str()));
    assert_eq!(check(&s, json!({"target": "staging"}))["decision"], "ask");
}

#[test]
fn an_answer_broader_than_the_ask_offered_is_refused() {
    // The default scope of `tools.ask-tool` is `session`.
    let s = serve_config(r#"{"tools": {"askTools": ["deploy"]}}"#);
    let id = ask_id(&check(&s, json!({"target": "prod"})));
    let (status, answer, _) =
        send(&s, "POST", &format!("/v1/asks/{id}"), Some(TOKEN), Some(&json!({"answer": "allow", "scope": "always"})));
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["error"].as_str().is_some_and(|m| m.contains("scope: `always` is broader than the `session`")),
        "{answer}"
    );
    assert_eq!(check(&s, json!({"target": "prod"}))["decision"], "ask");
}

#[test]
fn the_page_is_static_and_served_with_a_strict_content_security_policy() {
    let s = serve();
    for path in ["/", "/inbox", "/inbox.js"] {
        let (status, body, csp) = send(&s, "GET", path, None, None);
        assert_eq!(status, 200, "{path}");
        assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(!body.to_string().contains("innerHTML"), "{path} never parses data as HTML");
    }
}

#[test]
fn warden_asks_lists_and_answers_in_the_terminal() {
    let db = TempDb::new();
    let config = config_path(&db, CONFIG);
    let run = |args: &[&str]| {
        let out = warden_tests::binary::warden_command(args)
            .arg("--config")
            .arg(&config)
            .arg("--db")
            .arg(db.path())
            .stdin(Stdio::piped())
            .output()
            .expect("warden runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let check = |args: &str| {
        use std::io::Write;
        let mut child = warden_tests::binary::warden_command(&["check", "tool"])
            .arg("--config")
            .arg(&config)
            .arg("--db")
            .arg(db.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("warden runs");
        let call = json!({"toolName": "deploy", "arguments": {"target": args}, "sessionId": "s1"});
        child.stdin.take().expect("stdin").write_all(call.to_string().as_bytes()).expect("write");
        let out = child.wait_with_output().expect("output");
        serde_json::from_slice::<Value>(&out.stdout).expect("verdict JSON")
    };
    assert_eq!(check("prod")["decision"], "ask");
    let (code, listed, err) = run(&["asks", "list", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    let listed: Value = serde_json::from_str(&listed).expect("JSON");
    let id = listed["asks"][0]["id"].as_str().expect("an ask").to_string();
    let (code, table, _) = run(&["asks", "list"]);
    assert_eq!(code, Some(0));
    assert!(table.contains(&id) && table.contains("tools.ask-tool"), "{table}");
    let (code, _, err) = run(&["asks", "approve", "nope"]);
    assert_eq!(code, Some(2), "a forged id is the caller's error");
    assert!(err.contains("id: `nope` is not an ask ID"), "{err}");
    let (code, out, err) = run(&["asks", "approve", &id, "--scope", "session"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("\"allow\""), "{out}");
    let v = check("prod");
    assert_eq!((v["decision"].as_str(), v["rule"].as_str()), (Some("allow"), Some("memory.allow")));
    let (code, _, err) = run(&["asks", "deny", &id]);
    assert_eq!(code, Some(2), "an answered ask is gone: {err}");
}

/// Debian's Chromium and playwright-core (pinned by `tests/fixtures/inbox`'s
/// lockfile, installed under `target/`), installed once when missing.
fn browser_driver() -> PathBuf {
    let lock = std::fs::File::create(std::env::temp_dir().join("warden-inbox-browser.lock")).expect("lock file");
    lock.lock().expect("install lock");
    if !Path::new("/usr/bin/chromium").exists() {
        let status = Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .expect("apt-get runs");
        assert!(status.success(), "installing Debian's chromium failed");
    }
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/inbox");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/inbox-browser");
    std::fs::create_dir_all(&dir).expect("target folder");
    for file in ["package.json", "package-lock.json", "browser.mjs"] {
        std::fs::copy(fixture.join(file), dir.join(file)).expect("copy the driver");
    }
    if !dir.join("node_modules/playwright-core").exists() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .current_dir(&dir)
            .status()
            .expect("npm runs");
        assert!(status.success(), "installing playwright-core failed");
    }
    dir.join("browser.mjs")
}

#[test]
fn a_person_approves_an_ask_by_clicking_in_chromium_and_the_retried_call_is_allowed() {
    let script = browser_driver();
    let s = serve();
    let marker = "__wardenXss";
    let hostile = format!("<img src=x onerror=\"window.{marker}=1\"><script>window.{marker}=1</script><b>bold</b>");
    let args = json!({"target": "prod", "note": hostile});
    let asked = check(&s, args.clone());
    assert_eq!(asked["decision"], "ask");
    let id = ask_id(&asked);
    let mut child = Command::new("node")
        .arg(&script)
        .args([format!("http://{}", s.addr), TOKEN.to_string(), id.clone(), marker.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > BROWSER_DEADLINE {
            let _ = child.kill();
            panic!("the browser run took longer than {BROWSER_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut out).expect("read");
    let result: Value = serde_json::from_str(out.trim()).unwrap_or_else(|_| panic!("driver output: {out}"));
    assert!(status.success() && result["ok"] == true, "{result}");
    assert_eq!(result["tool"], "deploy");
    let shown = result["argumentsText"].as_str().expect("arguments text");
    assert!(shown.contains("<img src=x onerror="), "the hostile argument is shown as text: {shown}");
    assert_eq!(result["injectedElements"], 0, "no element came from the arguments");
    assert_eq!(result["xssRan"], false, "no script from the arguments ran");
    assert_eq!(result["dialogs"], json!([]));
    assert_eq!(result["cookies"], 0, "the token is never a cookie");
    assert_eq!(result["buttons"], json!(["Approve once", "Approve session", "Approve always", "Deny"]));
    assert_eq!(result["recent"][3], "allow");
    assert_eq!(result["recent"][4], "once");
    let retried = check(&s, args);
    assert_eq!((retried["decision"].as_str(), retried["rule"].as_str()), (Some("allow"), Some("memory.allow")));
}

#[test]
fn gate_routes_record_what_warden_gate_records_and_name_the_bad_field() {
    let s = serve_config(r#"{"gate": {"ownerOffset": "+00:00", "templates": ["Thanks!"]}}"#);
    let post = |path: &str, body: Value| {
        let (status, answer, _) = send(&s, "POST", path, Some(TOKEN), Some(&body));
        (status, answer)
    };
    // (path, body, status, text the answer must contain)
    let cases: Vec<(&str, Value, u16, &str)> = vec![
        (
            "/v1/gate/consent",
            json!({"channel": "sms", "recipient": "+15550001", "offset": "+01:00", "how": "form"}),
            200,
            "consent",
        ),
        ("/v1/gate/consent", json!({"channel": "sms"}), 400, "recipient"),
        ("/v1/gate/consent", json!({"channel": "sms", "recipient": "+15550002", "offset": "+25:00"}), 400, "offset"),
        ("/v1/gate/consent", json!({"channel": "sms", "recipient": "+15550002", "extra": 1}), 400, "extra"),
        (
            "/v1/gate/consent",
            json!({"channel": "sms", "recipient": "+15550002", "idempotencyKey": "bad key!"}),
            400,
            "idempotency",
        ),
        ("/v1/gate/consent", json!({"channel": 7, "recipient": "+15550002"}), 400, "channel"),
        ("/v1/gate/revoke", json!({"channel": "sms", "recipient": "+15550001"}), 200, "\"hadConsent\":true"),
        ("/v1/gate/revoke", json!({"channel": "sms", "recipient": "+15550001"}), 200, "\"hadConsent\":false"),
        ("/v1/gate/opt-out", json!({"recipient": "+15550003"}), 200, "optout"),
        ("/v1/gate/opt-out", json!({}), 400, "recipient"),
        (
            "/v1/gate/variables",
            json!({"channel": "sms", "recipient": "+15550004", "variables": {"name": "Ann"}}),
            200,
            "variables",
        ),
        (
            "/v1/gate/variables",
            json!({"channel": "sms", "recipient": "+15550004", "variables": ["name"]}),
            400,
            "variables",
        ),
        (
            "/v1/gate/variables",
            json!({"channel": "sms", "recipient": "+15550004", "variables": {"name": "Ann"}, "nowMs": 1}),
            400,
            "nowMs",
        ),
    ];
    for (path, body, status, text) in cases {
        let (got, answer) = post(path, body.clone());
        assert_eq!(got, status, "{path} {body}: {answer}");
        assert!(answer.to_string().contains(text), "{path} {body}: {answer}");
    }
    let (status, summary, _) = send(&s, "GET", "/v1/gate/status", Some(TOKEN), None);
    assert_eq!(status, 200, "{summary}");
    assert_eq!((summary["consents"].as_u64(), summary["optOuts"].as_u64()), (Some(0), Some(1)), "{summary}");
    // Without the token nothing is recorded.
    let (status, _, _) = send(&s, "POST", "/v1/gate/opt-out", None, Some(&json!({"recipient": "+15550009"})));
    assert_eq!(status, 401);
}
