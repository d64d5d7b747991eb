//! Runs the built `warden` binary as a subprocess, the way users and scripts
//! run it, and a loopback listener that counts the connections it accepts.

// Test code: a failed expectation is the test failing.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, dead_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Longest a single `warden` run may take before the test fails.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// What one run printed and how it exited.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

/// The compile cache shared by every test run, so the component is compiled once.
pub fn cache_dir() -> std::path::PathBuf {
    std::env::temp_dir().join("warden-test-cache")
}

/// Runs `warden ARGS --cache-dir …` with `stdin`, with `env` added to its environment.
pub fn warden_env(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.args(args)
        .arg("--cache-dir")
        .arg(cache_dir())
        .env_remove("WARDEN_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("the warden binary starts");
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let (mut out, mut err) = (child.stdout.take().expect("stdout"), child.stderr.take().expect("stderr"));
    let reader_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let reader_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > RUN_TIMEOUT {
            let _ = child.kill();
            panic!("warden {args:?} did not finish within {RUN_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: reader_out.join().unwrap_or_default(),
        stderr: reader_err.join().unwrap_or_default(),
    }
}

/// Runs `warden ARGS` with `stdin`.
pub fn warden(args: &[&str], stdin: &str) -> Run {
    warden_env(args, stdin, &[])
}

/// A loopback listener on port 0 that counts every connection it accepts and
/// answers each with `204 No Content`.
pub struct Listener {
    pub port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Listener {
    pub fn start() -> Listener {
        let socket = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = socket.local_addr().expect("address").port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            for stream in socket.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        });
        Listener { port, accepted }
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// Writes `text` to `name` in `dir` and returns the path as a string.
pub fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write file");
    path.display().to_string()
}
