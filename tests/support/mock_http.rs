//! A loopback HTTP/1.1 server bound to port 0, answering with a scripted
//! handler and recording every request and every connection it accepted.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    /// The first header named `name`, case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// What the handler answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    /// Wait this long before answering.
    pub delay: Duration,
    pub content_type: &'static str,
    /// Close the connection after this many body bytes, though the headers promise all of them.
    pub cut_after: Option<usize>,
    /// Close the connection without answering.
    pub drop_connection: bool,
}

impl Reply {
    pub fn json(status: u16, body: &serde_json::Value) -> Reply {
        Reply {
            status,
            body: body.to_string().into_bytes(),
            delay: Duration::ZERO,
            content_type: "application/json",
            cut_after: None,
            drop_connection: false,
        }
    }

    pub fn text(status: u16, body: &str) -> Reply {
        Reply {
            status,
            body: body.as_bytes().to_vec(),
            delay: Duration::ZERO,
            content_type: "text/plain",
            cut_after: None,
            drop_connection: false,
        }
    }

    /// The connection is closed once the request is read, with no answer.
    pub fn dropped() -> Reply {
        Reply { drop_connection: true, ..Reply::text(200, "") }
    }

    /// Only the first `bytes` of the body are sent before the connection closes.
    pub fn truncated(mut self, bytes: usize) -> Reply {
        self.cut_after = Some(bytes);
        self
    }

    pub fn after(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }
}

type Handler = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// A running server; it stops when dropped.
pub struct MockServer {
    pub port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl MockServer {
    pub fn start(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> MockServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback port 0");
        let port = listener.local_addr().expect("local addr").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        {
            let (requests, connections, stop) = (requests.clone(), connections.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            connections.fetch_add(1, Ordering::SeqCst);
                            let (requests, handler) = (requests.clone(), handler.clone());
                            std::thread::spawn(move || serve(stream, &requests, &*handler));
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            });
        }
        MockServer { port, requests, connections, stop }
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(stream: TcpStream, requests: &Mutex<Vec<Recorded>>, handler: &Handler) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let path = parts.next().unwrap_or_default().to_string();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let len = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let recorded = Recorded { method, path, headers, body };
        if let Ok(mut r) = requests.lock() {
            r.push(recorded.clone());
        }
        let reply = handler(&recorded);
        std::thread::sleep(reply.delay);
        if reply.drop_connection {
            let _ = writer.shutdown(std::net::Shutdown::Both);
            return;
        }
        let mut out = format!(
            "HTTP/1.1 {} X\r\ncontent-type: {}\r\ncontent-length: {}\r\n\r\n",
            reply.status,
            reply.content_type,
            reply.body.len()
        )
        .into_bytes();
        let sent = reply.cut_after.map_or(reply.body.len(), |n| n.min(reply.body.len()));
        out.extend_from_slice(&reply.body[..sent]);
        // One write per response: no Nagle delay.
        if writer.write_all(&out).is_err() {
            return;
        }
        if reply.cut_after.is_some() {
            let _ = writer.shutdown(std::net::Shutdown::Both);
            return;
        }
    }
}
