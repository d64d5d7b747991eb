//! The host's imports: the allow-listed HTTP gateway and storage failures.

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use warden_host::bindings::warden::guard::http::{HttpError, Method, Request};
use warden_host::http::{CredentialSpec, DestinationSpec, HttpGateway};
use warden_host::storage::{BatchError, Condition, Record, Storage, StorageError, Write};
use warden_tests::mock_http::{MockServer, Reply};
use warden_tests::{T0, TempDb, decided, pin, runtime, tool_call};

fn destination(server: &MockServer, credential: Option<CredentialSpec>) -> DestinationSpec {
    DestinationSpec { name: "classifier".into(), base_url: server.url("/v1"), credential, max_response_bytes: 1024 }
}

fn request(url: String) -> Request {
    Request {
        destination: "classifier".into(),
        method: Method::Post,
        url,
        headers: vec![("Authorization".into(), "Bearer from-the-guest".into()), ("x-trace".into(), "1".into())],
        body: b"{}".to_vec(),
        timeout_ms: 2_000,
    }
}

#[test]
fn a_denied_url_never_connects() {
    let server = MockServer::start(|_| Reply::text(200, "ok"));
    let gateway = HttpGateway::new(vec![destination(&server, None)]);
    let cases = [
        request(server.url("/v2/chat")),
        request(server.url("/v1/../admin")),
        Request { destination: "elsewhere".into(), ..request(server.url("/v1/chat")) },
    ];
    for req in cases {
        assert_eq!(gateway.send(&req), Err(HttpError::Denied), "{}", req.url);
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(server.connections(), 0, "no connection was attempted");
    // The same server is reachable inside the allow-list.
    let ok = gateway.send(&request(server.url("/v1/chat")));
    assert_eq!(ok.map(|r| r.status), Ok(200));
    assert_eq!(server.connections(), 1);
}

#[test]
fn the_host_attaches_the_credential_and_drops_the_guests() {
    let server = MockServer::start(|_| Reply::text(200, "ok"));
    let key_file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(key_file.path(), "sk-first\n").expect("write key");
    let credential = CredentialSpec {
        env: None,
        file: Some(key_file.path().to_path_buf()),
        header: "authorization".into(),
        scheme: "Bearer".into(),
    };
    let gateway = HttpGateway::new(vec![destination(&server, Some(credential))]);
    assert_eq!(gateway.send(&request(server.url("/v1/a"))).map(|r| r.status), Ok(200));
    // A rotated key file is reread without a restart.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(key_file.path(), "sk-second-longer\n").expect("rotate key");
    assert_eq!(gateway.send(&request(server.url("/v1/b"))).map(|r| r.status), Ok(200));
    let seen = server.requests();
    assert_eq!(seen[0].header("authorization"), Some("Bearer sk-first"));
    assert_eq!(seen[1].header("authorization"), Some("Bearer sk-second-longer"));
    assert_eq!(seen[0].header("x-trace"), Some("1"));
    assert_eq!(seen.iter().filter(|r| r.header("authorization") == Some("Bearer from-the-guest")).count(), 0);
}

#[test]
fn a_missing_credential_is_reported_without_connecting() {
    let server = MockServer::start(|_| Reply::text(200, "ok"));
    let credential = CredentialSpec {
        env: Some("WARDEN_TEST_KEY_THAT_IS_NEVER_SET".into()),
        file: None,
        header: "authorization".into(),
        scheme: "Bearer".into(),
    };
    let gateway = HttpGateway::new(vec![destination(&server, Some(credential))]);
    assert_eq!(gateway.send(&request(server.url("/v1/chat"))), Err(HttpError::MissingCredential));
    assert_eq!(server.connections(), 0);
}

#[test]
fn timeouts_and_the_response_cap_are_enforced() {
    let server = MockServer::start(|r| {
        if r.path.ends_with("/slow") {
            Reply::text(200, "late").after(Duration::from_millis(800))
        } else {
            Reply::text(200, &"x".repeat(4096))
        }
    });
    let gateway = HttpGateway::new(vec![destination(&server, None)]);
    let slow = Request { timeout_ms: 100, ..request(server.url("/v1/slow")) };
    assert_eq!(gateway.send(&slow), Err(HttpError::Timeout));
    assert_eq!(gateway.send(&request(server.url("/v1/big"))), Err(HttpError::TooLarge));
}

#[test]
fn send_all_runs_requests_concurrently_and_keeps_their_order() {
    let server = MockServer::start(|r| Reply::json(200, &json!({"path": r.path})).after(Duration::from_millis(300)));
    let gateway = HttpGateway::new(vec![destination(&server, None)]);
    let reqs: Vec<Request> = (0..4).map(|i| request(server.url(&format!("/v1/{i}")))).collect();
    let started = std::time::Instant::now();
    let answers = gateway.send_all(&reqs);
    let took = started.elapsed();
    let paths: Vec<String> = answers
        .into_iter()
        .map(|a| {
            let body = a.expect("answer").body;
            serde_json::from_slice::<serde_json::Value>(&body).expect("json")["path"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(paths, ["/v1/0", "/v1/1", "/v1/2", "/v1/3"]);
    assert!(took < Duration::from_millis(1100), "four 300 ms requests took {took:?}");
}

/// Storage that fails every call, as a database outage would.
struct Outage;

impl Storage for Outage {
    fn get(&self, _: &str, _: &str) -> Result<Option<Record>, StorageError> {
        Err(StorageError::Unavailable("database offline".into()))
    }
    fn set(&self, _: &str, _: &str, _: &[u8], _: Condition) -> Result<u64, StorageError> {
        Err(StorageError::Unavailable("database offline".into()))
    }
    fn delete(&self, _: &str, _: &str, _: Condition) -> Result<bool, StorageError> {
        Err(StorageError::Unavailable("database offline".into()))
    }
    fn list(&self, _: &str, _: &str, _: u32, _: bool) -> Result<Vec<(String, Record)>, StorageError> {
        Err(StorageError::Unavailable("database offline".into()))
    }
    fn commit(&self, _: &[Write]) -> Result<(), BatchError> {
        Err(BatchError::Failed(StorageError::Unavailable("database offline".into())))
    }
}

#[test]
fn a_storage_outage_fails_gated_tool_calls_closed_and_reports_typed_errors() {
    let rt = runtime("{}", Arc::new(Outage));
    let v = rt.check_tool_call(&tool_call("teams_send_chat_message", json!({"chat": "19:a"}), "s", T0));
    assert_eq!(decided(&v), ("deny", "pin.storage-unavailable"));
    assert!(v.reason.contains("database offline"), "{}", v.reason);
    let err = rt.start_turn(&pin("s", "r", "19:a", "A", T0)).expect_err("pin cannot be stored");
    assert!(
        matches!(&err, warden_host::CallError::Policy(warden_host::bindings::warden::guard::types::PolicyError::Storage(m)) if m.contains("database offline")),
        "{err:?}"
    );
}

#[test]
fn a_corrupted_database_file_is_a_storage_failure_not_a_crash() {
    let db = TempDb::new();
    let rt = runtime("{}", db.open());
    rt.start_turn(&pin("s", "r", "19:a", "A", T0)).expect("pin");
    drop(rt);
    for suffix in ["", "-wal", "-shm"] {
        let path = format!("{}{suffix}", db.path().display());
        if std::path::Path::new(&path).exists() {
            std::fs::write(&path, vec![0x5a; 8192]).expect("corrupt");
        }
    }
    let storage = warden_host::storage::SqliteStorage::open(db.path());
    assert!(matches!(storage, Err(StorageError::Unavailable(_))), "{:?}", storage.err());
}
