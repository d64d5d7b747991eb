//! Idempotency keys for the writes a host may retry: delivery outcomes,
//! approvals and the gate's consents, opt-outs, revocations, replies and
//! variables.
//!
//! A host that lost the answer to a write cannot tell whether it happened, so
//! it sends it again. With an idempotency key the second call finds the key
//! and answers as the first did without writing; without one, it records
//! twice. A key is claimed in the same atomic batch as the write it guards, so
//! after a crash either both are stored or neither is.
//!
//! Storage, in the namespace of the guarded write: `idem/<digest>` holds when
//! the key was first used, a digest of the request and the answer, where
//! `<digest>` is SHA-256 of the operation's name and the key (so one key may
//! serve different operations); `idemt/<at_ms, 20 digits>/<digest>` is an
//! index by time. A key is kept for [`RETENTION_MS`] of the request clock
//! after its first use; each keyed write removes up to [`MAX_PRUNED`] expired
//! keys, so the keys in storage are bounded by the write rate over that
//! window. An expired key is a new key: the write happens again.
//!
//! The request digest leaves out `now-ms`, which a host may stamp afresh on a
//! retry. The same key with a different request is refused with
//! `invalid-input` and writes nothing: a key names one request.

use crate::digest::{canonical_json, sha256_hex};
use crate::model::PolicyError;
use crate::ports::{Condition, Storage, StorageError, Write};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};

/// Longest idempotency key, in characters.
pub const MAX_KEY_CHARS: usize = 128;
/// How long a key is remembered after its first use, in milliseconds of `now-ms` (24 hours).
pub const RETENTION_MS: u64 = 24 * 60 * 60 * 1000;
/// Most expired keys one keyed write removes.
pub const MAX_PRUNED: u32 = 8;
/// Prefix of key records.
pub const PREFIX: &str = "idem/";
/// Prefix of the index by time.
pub const BY_TIME_PREFIX: &str = "idemt/";

/// Checks a key's form: 1 to [`MAX_KEY_CHARS`] letters, digits, `.`, `_`, `:` or `-`.
pub fn check(key: Option<&str>) -> Result<(), PolicyError> {
    let Some(key) = key else {
        return Ok(());
    };
    let chars = key.chars().count();
    let allowed = key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if chars == 0 || chars > MAX_KEY_CHARS || !allowed {
        return Err(PolicyError::InvalidInput(format!(
            "idempotencyKey: `{}` must be 1 to {MAX_KEY_CHARS} characters of letters, digits, `.`, `_`, `:` or `-`",
            crate::config::reader::shorten(key)
        )));
    }
    Ok(())
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    at_ms: u64,
    request: String,
    answer: bool,
}

/// A request that carries a key, ready to be looked up and claimed.
#[derive(Debug, Clone)]
pub struct Keyed {
    namespace: &'static str,
    digest: String,
    request: String,
    now_ms: u64,
}

/// What a lookup found.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// The request was recorded before; this is its answer.
    Repeat(bool),
    /// A new request: the write may go ahead, claiming the key under this condition.
    New(Condition),
}

impl Keyed {
    /// `key` for `operation` in `namespace`, over the request's fields (without its time).
    pub fn new<T: Serialize>(
        namespace: &'static str,
        operation: &str,
        key: Option<&str>,
        request: &T,
        now_ms: u64,
    ) -> Result<Option<Keyed>, PolicyError> {
        check(key)?;
        let Some(key) = key else {
            return Ok(None);
        };
        let digest = sha256_hex(format!("warden/idempotency/v1\n{operation}\n{key}").as_bytes());
        let request = sha256_hex(&canonical_json(request));
        Ok(Some(Keyed { namespace, digest, request, now_ms }))
    }

    fn key(&self) -> String {
        format!("{PREFIX}{}", self.digest)
    }

    /// Whether the key was used, and if so, for the same request.
    pub fn lookup(&self, storage: &dyn Storage) -> Result<Lookup, PolicyError> {
        let Some((stored, version)) = store::get_json::<Stored>(storage, self.namespace, &self.key())? else {
            return Ok(Lookup::New(Condition::Absent));
        };
        if stored.at_ms.saturating_add(RETENTION_MS) <= self.now_ms {
            return Ok(Lookup::New(Condition::Version(version)));
        }
        if stored.request != self.request {
            return Err(PolicyError::InvalidInput(
                "idempotencyKey: was already used for a different request; choose a new key for a new request".into(),
            ));
        }
        Ok(Lookup::Repeat(stored.answer))
    }

    /// The writes that claim the key with `answer`, and remove up to
    /// [`MAX_PRUNED`] expired keys; to go into the guarded write's batch.
    pub fn claim(&self, storage: &dyn Storage, when: Condition, answer: bool) -> Result<Vec<Write>, StorageError> {
        let stored = Stored { at_ms: self.now_ms, request: self.request.clone(), answer };
        let mut writes = vec![
            store::json_write(self.namespace, &self.key(), &stored, when)?,
            Write::put(
                self.namespace,
                &format!("{BY_TIME_PREFIX}{:020}/{}", self.now_ms, self.digest),
                Vec::new(),
                Condition::Any,
            ),
        ];
        for (index_key, index) in storage.list(self.namespace, BY_TIME_PREFIX, MAX_PRUNED, false)? {
            let Some((at, digest)) = index_key.get(BY_TIME_PREFIX.len()..).and_then(|rest| rest.split_once('/')) else {
                continue;
            };
            let Ok(at) = at.parse::<u64>() else {
                continue;
            };
            if at.saturating_add(RETENTION_MS) > self.now_ms {
                break;
            }
            if digest == self.digest {
                // This key's own old record is overwritten by the claim above.
                writes.push(Write::remove(self.namespace, &index_key, Condition::Version(index.version)));
                continue;
            }
            writes.push(Write::remove(self.namespace, &index_key, Condition::Version(index.version)));
            let record_key = format!("{PREFIX}{digest}");
            if let Some((old, version)) = store::get_json::<Stored>(storage, self.namespace, &record_key)?
                && old.at_ms == at
            {
                writes.push(Write::remove(self.namespace, &record_key, Condition::Version(version)));
            }
        }
        Ok(writes)
    }
}

/// Commits the writes `change` returns together with the claim of `keyed`,
/// as one atomic batch, re-reading and retrying when another writer won (at
/// most [`store::MAX_CAS_ATTEMPTS`] times). A repeated key writes nothing.
pub fn commit_once(
    storage: &dyn Storage,
    keyed: Option<&Keyed>,
    mut change: impl FnMut() -> Result<Vec<Write>, PolicyError>,
) -> Result<(), PolicyError> {
    for _ in 0..store::MAX_CAS_ATTEMPTS {
        let claim = match keyed {
            Some(k) => match k.lookup(storage)? {
                Lookup::Repeat(_) => return Ok(()),
                Lookup::New(when) => Some((k, when)),
            },
            None => None,
        };
        let mut writes = change()?;
        if let Some((k, when)) = claim {
            writes.extend(k.claim(storage, when, true)?);
        }
        match storage.commit(&writes) {
            Ok(()) => return Ok(()),
            Err(crate::ports::BatchError::Conflict(_)) => continue,
            Err(crate::ports::BatchError::Failed(e)) => return Err(e.into()),
        }
    }
    Err(StorageError::Conflict.into())
}
