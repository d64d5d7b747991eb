//! Live policy through the `warden serve` binary: the watched configuration
//! file and `PUT /v1/policy` swap the policy in force; anything invalid is
//! refused and the old policy stays.

use serde_json::{Value, json};
use std::io::BufRead;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warden_tests::TempDb;

const TOKEN: &str = "live-policy-token-0123456789";
const ADMIN: &str = "live-policy-admin-9876543210";
/// How long a change of the file may take to be in force (the service polls every second).
const RELOAD_WAIT: Duration = Duration::from_secs(10);

/// Config A: nothing objects to `calendar_list`.
const A: &str = "{}";
/// Config B: `calendar_list` is denied by the `tools.ask-tool` rule turned to deny.
const B: &str = r#"{"tools": {"askTools": ["calendar_*"], "rules": {"tools.ask-tool": {"decision": "deny"}}}}"#;
/// Config C: `calendar_list` is asked by `tools.ask-tool`.
const C: &str = r#"{"tools": {"askTools": ["calendar_*"]}}"#;

/// `warden serve` as a subprocess on 127.0.0.1:0, killed when dropped.
struct Serve {
    child: std::process::Child,
    addr: SocketAddr,
    config: PathBuf,
    /// Every line it printed on stderr.
    stderr: Arc<Mutex<Vec<String>>>,
    _db: TempDb,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(admin: bool) -> Serve {
    serve_with(admin, &[])
}

fn serve_with(admin: bool, extra: &[&str]) -> Serve {
    let db = TempDb::new();
    let config = db.dir.path().join("warden.json");
    std::fs::write(&config, A).expect("config");
    let mut cmd = warden_tests::binary::warden_command(&[]);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--config"]).arg(&config).arg("--db").arg(db.path());
    if admin {
        let file = db.dir.path().join("admin-token");
        std::fs::write(&file, format!("{ADMIN}\n")).expect("admin token");
        cmd.arg("--admin-token-file").arg(file);
    }
    cmd.args(extra);
    cmd.env("WARDEN_TOKEN", TOKEN)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("warden serve runs");
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let addr = loop {
        let mut line = String::new();
        assert_ne!(stderr.read_line(&mut line).expect("stderr"), 0, "warden serve stopped before serving");
        if let Some(addr) = line.trim().strip_prefix("warden: serving on http://") {
            break addr.parse().expect("the bound address");
        }
    };
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            sink.lock().expect("lines").push(line);
        }
    });
    Serve { child, addr, config, stderr: lines, _db: db }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

fn answer(mut resp: ureq::http::Response<ureq::Body>) -> (u16, Value) {
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn check(s: &Serve) -> (u16, Value) {
    let call = json!({"toolName": "calendar_list", "arguments": {}, "sessionId": "s1"});
    let resp = agent()
        .post(format!("http://{}/v1/check/tool", s.addr))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .send(call.to_string())
        .expect("request");
    answer(resp)
}

fn decided(s: &Serve) -> (String, String) {
    let (status, v) = check(s);
    assert_eq!(status, 200, "{v}");
    (v["decision"].as_str().unwrap_or_default().to_string(), v["rule"].as_str().unwrap_or_default().to_string())
}

fn put_policy(s: &Serve, token: Option<&str>, body: &str) -> (u16, Value) {
    let mut req = agent().put(format!("http://{}/v1/policy", s.addr)).header("content-type", "application/json");
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    answer(req.send(body.to_string()).expect("request"))
}

fn version(s: &Serve) -> String {
    let resp = agent()
        .get(format!("http://{}/v1/health", s.addr))
        .header("authorization", format!("Bearer {TOKEN}"))
        .call()
        .expect("health");
    let (status, v) = answer(resp);
    assert_eq!(status, 200, "{v}");
    v["policyVersion"].as_str().expect("policyVersion").to_string()
}

/// Polls the health route until the policy version is not `old`, up to [`RELOAD_WAIT`].
fn wait_for_new_version(s: &Serve, old: &str) -> String {
    let start = Instant::now();
    loop {
        let now = version(s);
        if now != old {
            return now;
        }
        assert!(start.elapsed() < RELOAD_WAIT, "the policy version stayed {old}; stderr: {:?}", lines(s));
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn lines(s: &Serve) -> Vec<String> {
    s.stderr.lock().expect("lines").clone()
}

/// Waits until `count` stderr lines contain `needle`, up to [`RELOAD_WAIT`]; answers the last one.
fn wait_for_lines(s: &Serve, needle: &str, count: usize) -> String {
    let start = Instant::now();
    loop {
        let found: Vec<String> = lines(s).into_iter().filter(|l| l.contains(needle)).collect();
        if found.len() >= count {
            return found[count - 1].clone();
        }
        assert!(start.elapsed() < RELOAD_WAIT, "no {count} line(s) with `{needle}`; stderr: {:?}", lines(s));
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn allowed() -> (String, String) {
    ("allow".into(), "tools.allow".into())
}

fn denied_by_ask_tool() -> (String, String) {
    ("deny".into(), "tools.ask-tool".into())
}

#[test]
fn editing_the_watched_file_to_a_denying_policy_denies_the_same_call_with_its_rule() {
    let s = serve(false);
    assert_eq!(decided(&s), allowed());
    let old = version(&s);
    std::fs::write(&s.config, B).expect("edit");
    let new = wait_for_new_version(&s, &old);
    assert_eq!(decided(&s), denied_by_ask_tool());
    let line = wait_for_lines(&s, "policy reloaded:", 1);
    assert!(line.contains(&format!("policy reloaded: {old} -> {new}")), "{line}");
    // And back: the file is the source for every change.
    std::fs::write(&s.config, A).expect("edit");
    assert_eq!(wait_for_new_version(&s, &new), old, "the same configuration has the same version");
    assert_eq!(decided(&s), allowed());
}

#[test]
fn an_invalid_edit_of_the_watched_file_is_refused_once_and_the_old_policy_stays() {
    let s = serve(false);
    let old = version(&s);
    std::fs::write(&s.config, r#"{"tools": "#).expect("edit");
    let line = wait_for_lines(&s, "is refused", 1);
    assert!(line.contains("not valid JSON"), "{line}");
    assert_eq!((version(&s), decided(&s)), (old.clone(), allowed()));
    std::fs::write(&s.config, r#"{"tools": {"askTools": 5}}"#).expect("edit");
    let line = wait_for_lines(&s, "is refused", 2);
    assert!(line.contains("tools.askTools") && line.contains("must be a list"), "{line}");
    assert_eq!((version(&s), decided(&s)), (old.clone(), allowed()));
    // The same invalid content is reported once, not at every poll.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(lines(&s).iter().filter(|l| l.contains("is refused")).count(), 2, "{:?}", lines(&s));
    // A removed file keeps the policy too.
    std::fs::remove_file(&s.config).expect("remove");
    wait_for_lines(&s, "cannot read the configuration", 1);
    assert_eq!((version(&s), decided(&s)), (old.clone(), allowed()));
    // The service stayed up and still watches: a valid edit is taken.
    std::fs::write(&s.config, B).expect("edit");
    wait_for_new_version(&s, &old);
    assert_eq!(decided(&s), denied_by_ask_tool());
}

#[test]
fn put_policy_takes_only_the_admin_token_and_swaps_a_valid_policy_or_refuses_every_error() {
    let s = serve(true);
    let old = version(&s);
    assert_eq!(put_policy(&s, None, B).0, 401);
    let (status, v) = put_policy(&s, Some(TOKEN), B);
    assert_eq!(status, 403, "the bearer token clients hold is not enough: {v}");
    assert_eq!(put_policy(&s, Some(&format!("{ADMIN}x")), B).0, 403);
    assert_eq!((version(&s), decided(&s)), (old.clone(), allowed()));

    let (status, v) = put_policy(&s, Some(ADMIN), r#"{"tools": {"askTools": 5, "workspace": 7}}"#);
    assert_eq!(status, 400, "{v}");
    let paths: Vec<&str> = v["errors"].as_array().expect("errors").iter().filter_map(|e| e["path"].as_str()).collect();
    assert!(paths.contains(&"tools.askTools") && paths.contains(&"tools.workspace"), "every error is named: {v}");
    assert_eq!(v["policyVersion"], old.as_str());
    assert_eq!(put_policy(&s, Some(ADMIN), "not json").0, 400);
    assert_eq!((version(&s), decided(&s)), (old.clone(), allowed()));

    let (status, v) = put_policy(&s, Some(ADMIN), B);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["previousVersion"], old.as_str());
    let new = v["policyVersion"].as_str().expect("policyVersion").to_string();
    assert_ne!(new, old);
    assert_eq!((version(&s), decided(&s)), (new.clone(), denied_by_ask_tool()));
    assert!(wait_for_lines(&s, "policy reloaded:", 1).contains(&format!("{old} -> {new}")));
    assert_eq!(std::fs::read_to_string(&s.config).expect("config"), A, "the file is not written");

    // The unchanged file does not revert the policy set by PUT ...
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!((version(&s), decided(&s)), (new.clone(), denied_by_ask_tool()));
    // ... until it changes.
    std::fs::write(&s.config, C).expect("edit");
    wait_for_new_version(&s, &new);
    assert_eq!(decided(&s), ("ask".to_string(), "tools.ask-tool".to_string()));
}

#[test]
fn without_an_admin_token_file_put_policy_is_refused_to_every_token() {
    let s = serve(false);
    let old = version(&s);
    for token in [Some(TOKEN), Some(ADMIN), None] {
        let (status, v) = put_policy(&s, token, B);
        assert_eq!(status, 403, "{token:?}: {v}");
        assert!(v["error"].as_str().unwrap_or_default().contains("--admin-token-file"), "{v}");
    }
    assert_eq!((version(&s), decided(&s)), (old, allowed()));
}

#[test]
fn an_admin_token_equal_to_the_bearer_token_is_refused_at_start() {
    let db = TempDb::new();
    let config = db.dir.path().join("warden.json");
    std::fs::write(&config, A).expect("config");
    let file = db.dir.path().join("admin-token");
    std::fs::write(&file, format!("  {TOKEN}\n")).expect("admin token");
    let output = warden_tests::binary::warden_command(&[])
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--db")
        .arg(db.path())
        .arg("--admin-token-file")
        .arg(&file)
        .env("WARDEN_TOKEN", TOKEN)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("warden serve runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--admin-token-file") && stderr.contains("different token"), "{stderr}");
}

#[test]
fn concurrent_checks_during_reloads_all_get_answers_under_one_policy_or_the_other() {
    let s = Arc::new(serve(true));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let workers: Vec<_> = (0..6)
        .map(|_| {
            let (s, stop) = (s.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let (status, v) = check(&s);
                    assert_eq!(status, 200, "{v}");
                    let got = (
                        v["decision"].as_str().unwrap_or_default().to_string(),
                        v["rule"].as_str().unwrap_or_default().to_string(),
                    );
                    assert!(got == allowed() || got == denied_by_ask_tool(), "{got:?}");
                    seen.push(got);
                }
                seen
            })
        })
        .collect();
    for i in 0..12 {
        let (status, v) = put_policy(&s, Some(ADMIN), if i % 2 == 0 { B } else { A });
        assert_eq!(status, 200, "{v}");
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answered = 0;
    for worker in workers {
        answered += worker.join().expect("every check answered 200").len();
    }
    assert!(answered > 12, "checks ran during the reloads: {answered}");
    assert_eq!(decided(&s), allowed(), "the last policy set is in force");
}

#[test]
fn with_no_watch_an_edit_of_the_file_changes_nothing() {
    let s = serve_with(false, &["--no-watch"]);
    let old = version(&s);
    std::fs::write(&s.config, B).expect("edit");
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!((version(&s), decided(&s)), (old, allowed()));
}

#[test]
fn a_put_body_over_the_body_limit_is_refused_and_changes_nothing() {
    let s = serve_with(true, &["--max-body-bytes", "64"]);
    let old = version(&s);
    let big = format!(r#"{{"tools": {{"askTools": ["calendar_*"], "workspace": "/{}"}}}}"#, "w".repeat(100));
    let (status, v) = put_policy(&s, Some(ADMIN), &big);
    assert_eq!(status, 413, "{v}");
    assert_eq!((version(&s), decided(&s)), (old, allowed()));
}
