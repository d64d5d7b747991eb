//! `warden mcp`, the shipped binary as a subprocess: a real MCP client (rmcp)
//! and raw JSON-RPC lines, in front of the reference MCP filesystem server
//! from npm (and `cat`, `sh` for the transport's edge cases).

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};
use warden_host::mcp::{MAX_DEPTH, MAX_LINE_BYTES};
use warden_tests::binary::warden_command;

/// What the file the model must never read holds.
const SECRET: &str = "SECRET_TOKEN=hunter2-do-not-leak";
/// How long any one answer may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// A workspace with a readable note and a protected `.env`, and a config.
struct Workspace {
    dir: tempfile::TempDir,
    root: PathBuf,
}

impl Workspace {
    fn new() -> Workspace {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("project");
        std::fs::create_dir(&root).expect("project dir");
        std::fs::write(root.join("notes.txt"), "hello from the filesystem").expect("notes");
        std::fs::write(root.join(".env"), SECRET).expect(".env");
        std::fs::write(dir.path().join("warden.json"), "{}").expect("config");
        let root = root.canonicalize().expect("canonical root");
        Workspace { dir, root }
    }

    fn path(&self, name: &str) -> String {
        self.root.join(name).display().to_string()
    }

    /// Every line the server received (recorded by `tee` in front of it).
    fn server_saw(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server-input.log")).unwrap_or_default()
    }

    /// `warden mcp` in front of `server` (its arguments after the program).
    fn proxy(&self, server: &[&str]) -> Command {
        let mut cmd = warden_command(&[]);
        cmd.args(["mcp", "--name", "fs", "--config"])
            .arg(self.dir.path().join("warden.json"))
            .arg("--db")
            .arg(self.dir.path().join("warden.db"))
            .arg("--")
            .args(server)
            .current_dir(&self.root);
        cmd
    }

    /// `warden mcp` in front of the filesystem server, with `tee` recording its input.
    fn proxy_to_filesystem(&self) -> Command {
        let server = warden_tests::mcp_filesystem_server();
        let log = self.dir.path().join("server-input.log");
        self.proxy(&[
            "sh",
            "-c",
            r#"tee -a "$0" | "$1" "$2""#,
            &log.display().to_string(),
            &server.display().to_string(),
            &self.root.display().to_string(),
        ])
    }
}

/// A proxy process driven with raw lines.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    stderr: Receiver<String>,
}

impl Raw {
    fn start(mut cmd: Command) -> Raw {
        let mut child =
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("warden runs");
        let stdin = child.stdin.take();
        let (tx, lines) = channel();
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        std::thread::spawn(move || {
            loop {
                let mut line = Vec::new();
                match out.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let (etx, stderr) = channel();
        let mut err = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = err.read_to_string(&mut text);
            let _ = etx.send(text);
        });
        Raw { child, stdin, lines, stderr }
    }

    fn send(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).expect("write line");
        stdin.write_all(b"\n").expect("write newline");
        stdin.flush().expect("flush");
    }

    fn next(&self) -> Value {
        let line = self.lines.recv_timeout(ANSWER_TIMEOUT).expect("an answer within the timeout");
        serde_json::from_slice(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&line)))
    }

    /// The next answer, skipping server notifications.
    fn answer(&self) -> Value {
        loop {
            let v = self.next();
            if v.get("id").is_some() {
                return v;
            }
        }
    }

    fn close(&mut self) {
        self.stdin = None;
    }

    /// Waits for the exit code and stderr, failing after `limit`.
    fn finish(mut self, limit: Duration) -> (i32, String) {
        self.close();
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                let stderr = self.stderr.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
                return (status.code().unwrap_or(-1), stderr);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("warden mcp did not exit within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn initialize(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "1"}
    }})
    .to_string()
}

/// A raw client that finished the MCP handshake with the filesystem server.
fn handshake(ws: &Workspace) -> Raw {
    let mut raw = Raw::start(ws.proxy_to_filesystem());
    raw.send(initialize(1).as_bytes());
    let init = raw.answer();
    assert_eq!(init["id"], 1, "{init}");
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // Calls are judged only for tools a reviewed `tools/list` answer relayed.
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string().as_bytes());
    assert!(raw.answer()["result"]["tools"].is_array());
    raw
}

fn error_message(answer: &Value) -> &str {
    answer["error"]["message"].as_str().unwrap_or_default()
}

fn call(id: u64, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        .to_string()
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&result.content).map(|v| v.to_string()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_client_through_the_binary_gets_allowed_reads_and_a_denied_env_read_with_its_rule() {
    let ws = Workspace::new();
    let cmd = tokio::process::Command::from(ws.proxy_to_filesystem());
    let (transport, stderr) =
        TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn().expect("warden mcp starts");
    let client = ().serve(transport).await.expect("MCP handshake through the binary");

    let tools = client.list_all_tools().await.expect("tools/list passes through");
    assert!(tools.iter().any(|t| t.name == "read_text_file"), "{tools:?}");
    let args = |v: Value| v.as_object().cloned().unwrap_or_default();

    let read = client
        .call_tool(
            CallToolRequestParams::new("read_text_file").with_arguments(args(json!({"path": ws.path("notes.txt")}))),
        )
        .await
        .expect("allowed call");
    assert_ne!(read.is_error, Some(true), "{}", text_of(&read));
    assert!(text_of(&read).contains("hello from the filesystem"), "{}", text_of(&read));

    let env = client
        .call_tool(CallToolRequestParams::new("read_text_file").with_arguments(args(json!({"path": ws.path(".env")}))))
        .await
        .expect("a denied call still answers");
    assert_eq!(env.is_error, Some(true));
    let text = text_of(&env);
    assert!(text.contains("Warden denied this tool call (path.protected)"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");

    // A write outside the workspace waits for a person: the model reads the rule, never the approval key.
    let outside = client
        .call_tool(
            CallToolRequestParams::new("write_file")
                .with_arguments(args(json!({"path": "/opt/warden-outside.txt", "content": "x"}))),
        )
        .await
        .expect("an ask still answers");
    assert_eq!(outside.is_error, Some(true));
    let text = text_of(&outside);
    assert!(text.contains("Warden needs a person to approve this tool call (path.outside-workspace)"), "{text}");
    assert!(!text.contains("--key") && !text.contains("approvalKey"), "{text}");

    let seen = ws.server_saw();
    assert!(seen.contains("notes.txt"), "the allowed call reached the server: {seen}");
    assert!(!seen.contains(".env") && !seen.contains("warden-outside"), "{seen}");
    client.cancel().await.expect("close");

    // The person finds the key on the proxy's stderr, and it is not in what the model read.
    let mut log = Vec::new();
    if let Some(mut stderr) = stderr {
        use tokio::io::AsyncReadExt;
        let mut chunk = [0u8; 4096];
        while let Ok(Ok(n @ 1..)) = tokio::time::timeout(Duration::from_secs(20), stderr.read(&mut chunk)).await {
            log.extend_from_slice(&chunk[..n]);
        }
    }
    let log = String::from_utf8_lossy(&log);
    let key = log
        .split("warden approve --key ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("the approval key is on stderr: {log}"));
    assert!(key.len() > 8 && !text.contains(key), "{key} in {text}");
}

/// Each hostile `tools/call` that reads `.env`, and what the answer must say.
fn hostile_lines(env: &str) -> Vec<(&'static str, Vec<u8>, Value, &'static str)> {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let head = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"read_text_file","arguments":{{"path":"{env}""#
    );
    let line = |id: u64, args_tail: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_text_file","arguments":{{"path":"{env}"{args_tail}}}}}}}"#).into_bytes()
    };
    let invalid_utf8 = String::from_utf8_lossy(&line(14, r#","x":"@@""#))
        .replace("@@", "\u{1}")
        .into_bytes()
        .into_iter()
        .map(|b| if b == 1 { 0xff } else { b })
        .collect::<Vec<u8>>();
    vec![
        ("an extra argument out of range", line(10, r#","x":1e400"#), json!(10), "number out of range"),
        ("a lone surrogate", line(11, r#","x":"\ud800""#), json!(11), "a lone surrogate"),
        ("a 200-deep array", line(12, &format!(r#","x":{deep}"#)), json!(12), "deeper than 64 levels"),
        (
            "a number out of range in _meta",
            format!(r#"{{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{{"_meta":{{"n":1e400}},"name":"read_text_file","arguments":{{"path":"{env}"}}}}}}"#).into_bytes(),
            json!(13),
            "number out of range",
        ),
        ("invalid UTF-8", invalid_utf8, json!(14), "not valid UTF-8"),
        ("a byte-order mark", [b"\xef\xbb\xbf".as_slice(), &line(15, "")].concat(), json!(15), "not valid JSON"),
        ("a batch", [b"[".as_slice(), &line(16, ""), b"]"].concat(), Value::Null, "a batch"),
        ("another case of the method", String::from_utf8_lossy(&line(17, "")).replace("tools/call", "Tools/Call").into_bytes(), json!(17), "a spelling of `tools/call`"),
        ("a method with a NUL", String::from_utf8_lossy(&line(18, "")).replace("tools/call", r"tools/call\u0000").into_bytes(), json!(18), "a spelling of `tools/call`"),
        ("a fractional id", String::from_utf8_lossy(&line(0, "")).replace(r#""id":0"#, r#""id":1.5"#).into_bytes(), Value::Null, "`id` must be a string or an integer"),
        ("an object id", String::from_utf8_lossy(&line(0, "")).replace(r#""id":0"#, r#""id":{"a":19}"#).into_bytes(), Value::Null, "`id` must be a string or an integer"),
        ("a boolean id", String::from_utf8_lossy(&line(0, "")).replace(r#""id":0"#, r#""id":true"#).into_bytes(), Value::Null, "`id` must be a string or an integer"),
        ("a null id", String::from_utf8_lossy(&line(0, "")).replace(r#""id":0"#, r#""id":null"#).into_bytes(), Value::Null, "`id` must be a string or an integer"),
        ("no id (a notification shaped like a call)", format!("{head}}}}}}}").into_bytes(), Value::Null, "without an `id`"),
        (
            "params as an array",
            format!(r#"{{"jsonrpc":"2.0","id":20,"method":"tools/call","params":["read_text_file",{{"path":"{env}"}}]}}"#).into_bytes(),
            json!(20),
            "`params` must be an object",
        ),
        ("an extra top-level field", String::from_utf8_lossy(&line(21, "")).replacen("{", r#"{"x":1,"#, 1).into_bytes(), json!(21), "has no field `x`"),
        ("an extra params field", String::from_utf8_lossy(&line(22, "")).replace(r#""params":{"#, r#""params":{"Arguments":{},"#).into_bytes(), json!(22), "no field `Arguments`"),
        (
            "arguments under __proto__",
            format!(r#"{{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{{"name":"read_text_file","arguments":{{"__proto__":{{"path":"{env}"}}}}}}}}"#).into_bytes(),
            json!(23),
            "`__proto__` key at `params.arguments.__proto__`",
        ),
        ("a method in an array", String::from_utf8_lossy(&line(24, "")).replace(r#""method":"tools/call""#, r#""method":["tools/call"]"#).into_bytes(), json!(24), "`method` must be a string"),
        ("another JSON-RPC version", String::from_utf8_lossy(&line(25, "")).replace(r#""jsonrpc":"2.0","#, r#""jsonrpc":"1.0","#).into_bytes(), json!(25), "`jsonrpc` must be"),
    ]
}

#[test]
fn every_hostile_line_is_refused_by_the_binary_before_it_reaches_the_filesystem_server() {
    let ws = Workspace::new();
    let mut raw = handshake(&ws);
    let env = ws.path(".env");
    for (what, line, id, why) in hostile_lines(&env) {
        raw.send(&line);
        let answer = raw.answer();
        assert_eq!(answer["id"], id, "{what}: {answer}");
        assert!(answer["error"]["code"].is_i64(), "{what}: a JSON-RPC error: {answer}");
        assert!(error_message(&answer).contains(why), "{what}: {answer}");
        assert!(error_message(&answer).starts_with("warden refused this message: "), "{what}: {answer}");
    }
    // The escaped method is the method itself: judged, and denied by its rule.
    raw.send(call(30, "read_text_file", json!({"path": env})).replace("tools/call", r"tools\/call").as_bytes());
    let answer = raw.answer();
    assert_eq!(answer["id"], 30);
    assert!(answer["result"].to_string().contains("Warden denied this tool call (path.protected)"), "{answer}");
    // Duplicate keys: the last one is what was judged and the only one the server receives.
    let notes = ws.path("notes.txt");
    let dup_env_last = format!(
        r#"{{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{{"name":"read_text_file","arguments":{{"path":"{notes}","path":"{env}"}}}}}}"#
    );
    raw.send(dup_env_last.as_bytes());
    let answer = raw.answer();
    assert!(answer["result"].to_string().contains("(path.protected)"), "{answer}");
    let dup_notes_last = format!(
        r#"{{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{{"name":"read_text_file","arguments":{{"path":"{env}","path":"{notes}"}}}}}}"#
    );
    raw.send(dup_notes_last.as_bytes());
    let answer = raw.answer();
    assert_eq!(answer["id"], 32);
    assert!(answer["result"].to_string().contains("hello from the filesystem"), "{answer}");
    // A duplicated `method` is forwarded as the one method that was read.
    raw.send(br#"{"jsonrpc":"2.0","id":33,"method":"tools/call","method":"ping"}"#);
    let answer = raw.answer();
    assert_eq!((answer["id"].clone(), answer["result"].clone()), (json!(33), json!({})), "{answer}");
    // Still serving after all of it.
    raw.send(json!({"jsonrpc": "2.0", "id": 34, "method": "tools/list"}).to_string().as_bytes());
    assert!(raw.answer()["result"]["tools"].is_array());

    let seen = ws.server_saw();
    assert!(!seen.contains(".env"), "no request naming .env reached the server:\n{seen}");
    assert!(seen.contains(r#""id":32"#) && seen.contains(r#""id":33,"jsonrpc":"2.0","method":"ping""#), "{seen}");
    for id in [10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 21, 22, 23, 24, 25, 30, 31] {
        assert!(!seen.contains(&format!(r#""id":{id},"#)), "request {id} reached the server:\n{seen}");
    }
    let (code, stderr) = raw.finish(Duration::from_secs(30));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

#[test]
fn the_binary_answers_its_first_message_and_exits_when_the_client_closes() {
    // `printf '<initialize>\n' | warden mcp --config c.json -- cat` once hung on stdin and stdout locks.
    let ws = Workspace::new();
    let mut raw = Raw::start(ws.proxy(&["cat"]));
    raw.send(initialize(1).as_bytes());
    let echoed = raw.next();
    assert_eq!((echoed["id"].clone(), echoed["method"].clone()), (json!(1), json!("initialize")), "{echoed}");
    let (code, stderr) = raw.finish(Duration::from_secs(20));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_binary_exits_promptly_when_the_server_exits_while_the_client_stays() {
    let ws = Workspace::new();
    let raw = Raw::start(ws.proxy(&["sh", "-c", "exit 3"]));
    let started = Instant::now();
    // The client's input stays open: `finish` closes it only after the exit is seen.
    let deadline = started + Duration::from_secs(20);
    let mut raw = raw;
    let status = loop {
        if let Some(status) = raw.child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "warden mcp kept running after its server exited");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(1));
    let stderr = raw.stderr.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    assert!(stderr.contains("the MCP server exited with code 3"), "{stderr}");
}

#[test]
fn a_server_that_ignores_its_closed_input_is_stopped_and_reaped() {
    let ws = Workspace::new();
    let pid_file = ws.dir.path().join("server.pid");
    let mut raw =
        Raw::start(ws.proxy(&["sh", "-c", r#"echo $$ > "$0"; exec sleep 60"#, &pid_file.display().to_string()]));
    raw.send(initialize(1).as_bytes());
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|p| p.trim().parse::<u32>().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the server started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let started = Instant::now();
    let (code, stderr) = raw.finish(Duration::from_secs(20));
    assert_eq!(code, 0, "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(10), "stopped within the grace period and a little");
    assert!(stderr.contains("did not exit within 2 s"), "{stderr}");
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "the server process {pid} is gone");
}

#[test]
fn invalid_utf8_from_the_server_is_repaired_and_the_proxy_keeps_relaying() {
    let ws = Workspace::new();
    let mut raw = Raw::start(ws.proxy(&[
        "sh",
        "-c",
        r#"printf '{"jsonrpc":"2.0","method":"n","params":{"t":"\377"}}\n'; exec cat"#,
    ]));
    let first = raw.next();
    assert_eq!(first["params"]["t"], "\u{fffd}", "{first}");
    raw.send(initialize(7).as_bytes());
    assert_eq!(raw.next()["id"], 7);
    let (code, stderr) = raw.finish(Duration::from_secs(20));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("not valid UTF-8"), "{stderr}");
}

/// A `ping` padded to exactly `len` bytes, in the proxy's own serialization.
fn ping_of_len(id: u64, len: usize) -> String {
    let empty = json!({"id": id, "jsonrpc": "2.0", "method": "ping", "params": {"pad": ""}}).to_string();
    json!({"id": id, "jsonrpc": "2.0", "method": "ping", "params": {"pad": "a".repeat(len - empty.len())}}).to_string()
}

#[test]
fn a_line_at_the_size_bound_passes_and_one_byte_longer_is_refused() {
    let ws = Workspace::new();
    let mut raw = Raw::start(ws.proxy(&["cat"]));
    let at = ping_of_len(1, MAX_LINE_BYTES);
    assert_eq!(at.len(), MAX_LINE_BYTES);
    raw.send(at.as_bytes());
    let echoed = raw.lines.recv_timeout(ANSWER_TIMEOUT).expect("echo");
    assert_eq!(echoed.len(), MAX_LINE_BYTES + 1, "forwarded whole");
    raw.send(ping_of_len(2, MAX_LINE_BYTES + 1).as_bytes());
    let answer = raw.next();
    assert_eq!(answer["id"], Value::Null);
    assert!(error_message(&answer).contains(&format!("longer than {MAX_LINE_BYTES} bytes")), "{answer}");
    let (code, stderr) = raw.finish(Duration::from_secs(20));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn nesting_at_the_depth_bound_passes_and_one_level_deeper_is_refused() {
    let ws = Workspace::new();
    let mut raw = Raw::start(ws.proxy(&["cat"]));
    // The message object is level 1, `params` level 2.
    let nested = |levels: usize| {
        let inner = format!("{}{}", "[".repeat(levels - 2), "]".repeat(levels - 2));
        format!(r#"{{"id":1,"jsonrpc":"2.0","method":"ping","params":{{"x":{inner}}}}}"#)
    };
    raw.send(nested(MAX_DEPTH).as_bytes());
    assert_eq!(raw.next()["method"], "ping", "forwarded at the bound");
    raw.send(nested(MAX_DEPTH + 1).as_bytes());
    let answer = raw.next();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(error_message(&answer).contains(&format!("deeper than {MAX_DEPTH} levels")), "{answer}");
    let (code, stderr) = raw.finish(Duration::from_secs(20));
    assert_eq!(code, 0, "{stderr}");
}
