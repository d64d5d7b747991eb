//! What the core's tests share: the fake ports a check runs on, the host
//! context they run under, and a Warden configured with it.

use crate::Warden;
use crate::fakes::{MemoryStorage, ScriptedHttp, VecLog};
use crate::host::{HostContext, MIN_SECRET_BYTES};
use crate::ports::Ports;
use crate::prelude::*;

/// In-memory storage, an HTTP port that reaches nothing, and a log kept in memory.
pub struct Env {
    pub storage: MemoryStorage,
    pub http: ScriptedHttp,
    pub log: VecLog,
}

impl Env {
    pub fn new() -> Env {
        Env { storage: MemoryStorage::default(), http: ScriptedHttp::unreachable(), log: VecLog::default() }
    }

    pub fn ports(&self) -> Ports<'_> {
        Ports { http: &self.http, storage: &self.storage, log: &self.log }
    }
}

/// A host context with a fixed approval secret and nothing else.
pub fn host_context() -> HostContext {
    HostContext { approval_secret: vec![7; MIN_SECRET_BYTES], ..Default::default() }
}

/// A Warden configured with `config` (JSON text) under [`host_context`].
pub fn configured(config: &str) -> Warden {
    let mut w = Warden::configure(config).expect("valid config");
    w.set_host_context(&host_context()).expect("valid host context");
    w
}
