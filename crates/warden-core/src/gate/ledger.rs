//! The consent ledger: what the gate stores, keyed so that no address book and
//! no message text is kept in clear.
//!
//! Recipients and bodies are stored only as HMAC-SHA-256 under a per-ledger
//! key. The component has no source of randomness (it imports nothing but
//! `http`, `storage` and `log`, and every input it sees is known to the host),
//! so it cannot invent a secret. The key is therefore derived, on first use,
//! from two things:
//!
//! - a **salt** created with the ledger from the time of first use and the
//!   gate's settings, stored in the `meta` record. It is not secret and not
//!   random; it only makes the hashes of two ledgers differ.
//! - the operator's **`gate.ledgerSecret`**, when set (at least
//!   [`super::MIN_SECRET_CHARS`] characters). It never enters storage, the
//!   policy version, logs or `Debug` output; the `meta` record keeps only an
//!   HMAC check value so a changed secret is detected.
//!
//! What this protects against: with `ledgerSecret` set, someone who reads the
//! storage (a copied database, a backup, a support dump) but not the
//! configuration cannot tell who was messaged or what was sent, cannot confirm
//! a guessed phone number or text, and cannot link the same person across two
//! ledgers. Without it the key is derived from the stored salt alone: the
//! ledger still shows no address or text to someone browsing it, and hashes
//! differ between ledgers, but anyone holding the storage can confirm guesses
//! and enumerate small spaces such as phone numbers. `configure` warns when
//! the gate runs without a secret.
//!
//! What it does not protect against: anyone holding both the storage and the
//! configuration (or the running host) can test guesses; channels, thread IDs,
//! consent notes (`how`), template variables and times are stored in clear,
//! so operators should not put addresses there; and hashes are deterministic,
//! so equal recipients and equal bodies are visibly equal.
//!
//! The key is fixed when the ledger is created, because opt-outs and consents
//! are found by it: changing or adding `ledgerSecret` later would make every
//! opt-out unfindable and let opted-out people be messaged again. The gate
//! detects the changed key and fails closed (`gate.ledger-key-mismatch`); to
//! rotate, restore the old secret or start a new ledger by clearing the
//! `gate` namespace, which drops every consent and opt-out.

use crate::digest::{MacKey, hex, hmac, sha256_hex};
use crate::model::LedgerEntry;
use crate::ports::{BatchError, Condition, Storage, StorageError, Write};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Storage namespace of the gate.
pub const NAMESPACE: &str = "gate";
/// Key of the ledger's salt and key check.
pub const META_KEY: &str = "meta";
/// Key of the running totals of ledger lines.
pub const STATS_KEY: &str = "stats";
/// Prefix of ledger lines: `line/<sequence, 20 digits>`, numbered in the order
/// they were written, so the log's order does not depend on the times requests
/// carry and a line dated far ahead cannot push newer lines out of it.
pub const LOG_PREFIX: &str = "line/";
/// Prefix of ledger lines written before lines were numbered:
/// `log/<at_ms, 20 digits>-<sequence, 6 digits>`. They are read after every
/// numbered line, newest first by their time, and never written.
pub const LEGACY_LOG_PREFIX: &str = "log/";
/// Prefix of opt-outs: `optout/<recipient hash>`.
pub const OPT_OUT_PREFIX: &str = "optout/";
/// Prefix of consents: `consent/<channel>/<recipient hash>`.
pub const CONSENT_PREFIX: &str = "consent/";
/// Prefix of template variables: `vars/<channel>/<recipient hash>`.
pub const VARIABLES_PREFIX: &str = "vars/";
/// Prefix of thread state: `thread/<channel>/<recipient hash>/<thread hash>`.
pub const THREAD_PREFIX: &str = "thread/";
/// Most attempts at committing a ledger line and what it records, when other writers keep winning.
pub const MAX_APPEND_ATTEMPTS: usize = 16;

const VERSION: u32 = 1;
const KEYED_LABEL: &[u8] = b"warden/gate/ledger-key/v1";
const UNKEYED_LABEL: &[u8] = b"warden/gate/ledger-key/v1/unkeyed";

/// Why the ledger could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerError {
    Storage(StorageError),
    /// The key derived now is not the key the ledger was created with.
    KeyMismatch {
        created_keyed: bool,
        now_keyed: bool,
    },
}

impl From<StorageError> for LedgerError {
    fn from(e: StorageError) -> Self {
        LedgerError::Storage(e)
    }
}

impl core::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LedgerError::Storage(e) => write!(f, "{e}"),
            LedgerError::KeyMismatch { created_keyed, now_keyed } => {
                let was =
                    if *created_keyed { "with a different `gate.ledgerSecret`" } else { "without `gate.ledgerSecret`" };
                let now = if *now_keyed { "one is set now" } else { "none is set now" };
                write!(
                    f,
                    "the consent ledger was created {was} and {now}, so its opt-outs and consents cannot be found; \
                     restore the secret it was created with, or clear the `gate` namespace to start a new ledger"
                )
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    version: u32,
    salt: String,
    keyed: bool,
    key_check: String,
    created_at_ms: u64,
}

/// The ledger's key, for hashing recipients, bodies and threads.
#[derive(Clone)]
pub struct LedgerKey {
    key: MacKey,
}

impl core::fmt::Debug for LedgerKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("LedgerKey(..)")
    }
}

impl LedgerKey {
    fn derive(secret: Option<&str>, salt: &str) -> LedgerKey {
        let key = match secret {
            Some(secret) => hmac(secret.as_bytes(), &[KEYED_LABEL, salt.as_bytes()]),
            None => {
                let mut h = Sha256::new();
                h.update(UNKEYED_LABEL);
                h.update(salt.as_bytes());
                h.finalize().into()
            }
        };
        LedgerKey { key: MacKey::new(&key) }
    }

    fn check_value(&self) -> String {
        hex(&self.key.mac(&[b"key-check"]))
    }

    /// Keyed hash of a recipient, the same on every channel.
    pub fn recipient(&self, recipient: &str) -> String {
        hex(&self.key.mac(&[b"recipient", recipient.as_bytes()]))
    }

    /// Keyed hash of a message body.
    pub fn body(&self, body: &[u8]) -> String {
        hex(&self.key.mac(&[b"body", body]))
    }

    /// Keyed hash of a thread ID, for storage keys of bounded length.
    pub fn thread(&self, thread: Option<&str>) -> String {
        match thread {
            Some(t) => hex(&self.key.mac(&[b"thread", t.as_bytes()])),
            None => "-".to_string(),
        }
    }
}

/// Opens the ledger, creating it on first use; fails when the key derived now
/// is not the one it was created with.
pub fn open(
    storage: &dyn Storage,
    secret: Option<&str>,
    settings_digest: &str,
    now_ms: u64,
) -> Result<LedgerKey, LedgerError> {
    for _ in 0..store::MAX_CAS_ATTEMPTS {
        if let Some((meta, _)) = store::get_json::<Meta>(storage, NAMESPACE, META_KEY)? {
            let key = LedgerKey::derive(secret, &meta.salt);
            if key.check_value() != meta.key_check {
                return Err(LedgerError::KeyMismatch { created_keyed: meta.keyed, now_keyed: secret.is_some() });
            }
            return Ok(key);
        }
        let salt = sha256_hex(format!("warden gate ledger\n{now_ms}\n{settings_digest}").as_bytes());
        let key = LedgerKey::derive(secret, &salt);
        let meta = Meta {
            version: VERSION,
            salt,
            keyed: secret.is_some(),
            key_check: key.check_value(),
            created_at_ms: now_ms,
        };
        match store::put_json(storage, NAMESPACE, META_KEY, &meta, Condition::Absent) {
            Ok(_) => return Ok(key),
            // Another instance created the ledger first: use theirs.
            Err(StorageError::Conflict) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(LedgerError::Storage(StorageError::Conflict))
}

/// One ledger line as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredEntry {
    pub at_ms: u64,
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    pub recipient_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl From<StoredEntry> for LedgerEntry {
    fn from(e: StoredEntry) -> Self {
        LedgerEntry {
            at_ms: e.at_ms,
            event: e.event,
            channel: e.channel,
            recipient_hash: e.recipient_hash,
            body_hash: e.body_hash,
            thread: e.thread,
            decision: e.decision,
            rule: e.rule,
        }
    }
}

/// Running totals, kept next to the lines so that a summary reads one record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    pub entries: u64,
    pub decisions: BTreeMap<String, u64>,
}

/// What a decision writes with its ledger line.
pub enum Step {
    /// The request was recorded before (a repeated idempotency key): write nothing, answer this.
    Done(bool),
    /// Write these with the line and answer this.
    Write(Vec<Write>, bool),
}

/// Appends `entry` as a new line, with the running totals and the writes of
/// `change`, in one atomic batch: the line, the totals and the state they
/// describe are all stored or none is, so the totals always equal what the
/// lines imply. `change` runs on every attempt, reading the current state;
/// when another writer changed anything the batch read, it retries, at most
/// [`MAX_APPEND_ATTEMPTS`] times. Lines are numbered in writing order, never by
/// their time, so a line dated far ahead cannot push newer ones out of the log;
/// two writers at once take different numbers: a line is written only where
/// none exists.
pub fn commit<E: From<StorageError>>(
    storage: &dyn Storage,
    entry: &StoredEntry,
    mut change: impl FnMut() -> Result<Step, E>,
) -> Result<bool, E> {
    let prefix = LOG_PREFIX;
    let line =
        serde_json::to_vec(entry).map_err(|e| StorageError::Other(format!("a ledger line cannot be encoded: {e}")))?;
    for _ in 0..MAX_APPEND_ATTEMPTS {
        let (mut writes, answer) = match change()? {
            Step::Done(answer) => return Ok(answer),
            Step::Write(writes, answer) => (writes, answer),
        };
        let sequence = match storage.list(NAMESPACE, prefix, 1, true)?.first() {
            Some((key, _)) => key.get(prefix.len()..).and_then(|s| s.parse::<u64>().ok()).map_or(0, |n| n + 1),
            None => 0,
        };
        writes.push(Write::put(NAMESPACE, &format!("{prefix}{sequence:020}"), line.clone(), Condition::Absent));
        let read = store::get_json::<Stats>(storage, NAMESPACE, STATS_KEY)?;
        let when = store::unchanged(&read);
        let mut stats = read.map(|(s, _)| s).unwrap_or_default();
        stats.entries = stats.entries.saturating_add(1);
        if let Some(decision) = &entry.decision {
            let n = stats.decisions.entry(decision.clone()).or_insert(0);
            *n = n.saturating_add(1);
        }
        writes.push(store::json_write(NAMESPACE, STATS_KEY, &stats, when)?);
        match storage.commit(&writes) {
            Ok(()) => return Ok(answer),
            Err(BatchError::Conflict(_)) => continue,
            Err(BatchError::Failed(e)) => return Err(e.into()),
        }
    }
    Err(StorageError::Conflict.into())
}

/// Appends a line and its totals, with nothing else.
pub fn append(storage: &dyn Storage, entry: &StoredEntry) -> Result<(), StorageError> {
    commit::<StorageError>(storage, entry, || Ok(Step::Write(Vec::new(), true))).map(|_| ())
}

/// The last `limit` lines written, last first; then, if fewer, lines of the
/// older layout ([`LEGACY_LOG_PREFIX`]).
pub fn newest(storage: &dyn Storage, limit: u32) -> Result<Vec<LedgerEntry>, StorageError> {
    let mut lines = storage.list(NAMESPACE, LOG_PREFIX, limit, true)?;
    let left = limit.saturating_sub(u32::try_from(lines.len()).unwrap_or(u32::MAX));
    if left > 0 {
        lines.extend(storage.list(NAMESPACE, LEGACY_LOG_PREFIX, left, true)?);
    }
    lines
        .into_iter()
        .map(|(key, entry)| {
            serde_json::from_slice::<StoredEntry>(&entry.value)
                .map(LedgerEntry::from)
                .map_err(|e| StorageError::Other(format!("ledger line {key} is not readable: {e}")))
        })
        .collect()
}

/// The running totals.
pub fn stats(storage: &dyn Storage) -> Result<Stats, StorageError> {
    Ok(store::get_json::<Stats>(storage, NAMESPACE, STATS_KEY)?.map(|(s, _)| s).unwrap_or_default())
}
