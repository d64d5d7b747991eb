#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use std::hint::black_box;
use warden_core::Warden;
use warden_core::fakes::{MemoryStorage, ScriptedHttp};
use warden_core::model::{Identity, ToolCall};
use warden_core::ports::{Level, Log, Ports};
struct Discard;
impl Log for Discard {
    fn write(&self, _: Level, _: &str) {}
}
fn main() {
    if std::env::args().nth(1).as_deref() == Some("sizes") {
        sizes();
        return;
    }
    let which = std::env::args().nth(1).unwrap_or("typical".into());
    let n: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(10000);
    let cmd = match which.as_str() {
        "typical" => "git status && cargo test 2>&1 | tail -5",
        "heavy" => {
            "mkdir -p build/out && cp -r src/main.rs src/lib.rs ./docs/../README.md /home/dev/project/tests/a.rs build/out/ && tar czf /tmp/out.tgz build/out ~/project/docs && rm -rf ./target/debug/incremental && diff -u src/a.rs src/b.rs > /tmp/a.diff"
        }
        other => other,
    };
    let call = ToolCall {
        tool_name: "exec".into(),
        arguments: serde_json::json!({"command": cmd}).to_string(),
        call_id: None,
        run_id: None,
        session_id: Some("s1".into()),
        now_ms: 1_700_000_000_000,
        identity: Identity::default(),
        cwd: Some("/home/dev/project".into()),
        derived_paths: Vec::new(),
    };
    let storage = MemoryStorage::default();
    let http = ScriptedHttp::unreachable();
    let ports = Ports { http: &http, storage: &storage, log: &Discard };
    let warden = Warden::configure("{}").unwrap();
    let v = warden.check_tool_call(&ports, &call);
    eprintln!("{:?} {}", v.decision, v.rule);
    let t = std::time::Instant::now();
    for _ in 0..n {
        black_box(warden.check_tool_call(&ports, black_box(&call)));
    }
    eprintln!("{:.3} us/call", t.elapsed().as_secs_f64() * 1e6 / n as f64);
}
#[allow(dead_code)]
fn sizes() {
    eprintln!(
        "Invocation {} Arg {} Redir {} Analysis {} Part {} Word {} Command {} Simple {} Verdict {}",
        std::mem::size_of::<warden_core::shell::commands::Invocation>(),
        std::mem::size_of::<warden_core::shell::commands::Arg>(),
        std::mem::size_of::<warden_core::shell::commands::Redir>(),
        std::mem::size_of::<warden_core::shell::commands::Analysis>(),
        std::mem::size_of::<warden_core::shell::Part>(),
        std::mem::size_of::<warden_core::shell::Word>(),
        std::mem::size_of::<warden_core::shell::Command>(),
        std::mem::size_of::<warden_core::shell::Simple>(),
        std::mem::size_of::<warden_core::model::Verdict>()
    );
}
