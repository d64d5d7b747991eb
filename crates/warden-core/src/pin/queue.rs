//! Queued wakes: a wake that arrives while an answer is still owed does not
//! move the pin. It waits here, keyed by a keyed hash of its prompt, until
//! that exact prompt enters the transcript; only then does the pin move to
//! its chat.
//!
//! "Enters the transcript" is reported by the host as a `check-turn` of the
//! same session whose `trigger` is `automation` (the wake prompt is written by
//! the host, not typed by a person), whose `identity.channel-id` is the queued
//! chat exactly, and whose `message` is the queued prompt byte for byte. A
//! person's message (`user`) or another agent's (`peer`) never moves the pin,
//! however alike it looks; neither does the same text arriving in another
//! chat or session, a prefix of it, or the text with its whitespace changed.
//!
//! The prompt is never stored: only an HMAC of the session, chat and prompt
//! under the host's approval secret. Entries expire with the pin TTL, counted
//! from when they were queued, and at most [`MAX_QUEUED`] wait per session;
//! a wake past the bound evicts the oldest entry, whose prompt then moves
//! nothing (its answer stays refused: fail-closed).

use super::{PinConfig, StoredPin};
use crate::model::{PolicyError, Signal, Trigger, Turn, TurnStart};
use crate::ports::{Condition, Storage};
use crate::prelude::*;
use crate::store;
use serde::{Deserialize, Serialize};

/// Storage namespace of queued wakes, keyed by session ID.
pub const NAMESPACE: &str = "pin-queue";
/// Most wakes queued per session; the oldest is evicted past it.
pub const MAX_QUEUED: usize = 16;
/// Longest wake prompt `start-turn` accepts, in bytes.
pub const MAX_PROMPT_BYTES: usize = 262_144;

/// Signals of this module.
pub mod signals {
    /// A wake arrived while an answer was owed, and was queued.
    pub const QUEUED: &str = "pin.wake-queued";
    /// A queued wake's prompt entered the transcript and the pin moved to its chat.
    pub const MOVED: &str = "pin.moved";
    /// The queued wakes could not be read or written.
    pub const STORAGE_UNAVAILABLE: &str = "pin.queue-unavailable";
}

/// One queued wake.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub(super) struct Queued {
    pub chat_id: String,
    pub label: String,
    /// HMAC of the session, chat and prompt, hex.
    pub prompt_mac: String,
    #[serde(default)]
    pub run_id: Option<String>,
    pub queued_at_ms: u64,
}

fn mac(secret: &[u8], session: &str, chat: &str, prompt: &str) -> String {
    let parts = [b"warden pin prompt".as_slice(), session.as_bytes(), chat.as_bytes(), prompt.as_bytes()];
    crate::digest::hex(&crate::digest::hmac(secret, &parts))
}

fn live(config: &PinConfig, q: &Queued, now_ms: u64) -> bool {
    crate::time::age(q.queued_at_ms, now_ms).is_some_and(|age| age <= config.ttl_ms())
}

/// Checks the prompt of a `start-turn`.
pub(super) fn check_prompt(prompt: &str) -> Result<(), PolicyError> {
    if prompt.is_empty() {
        return Err(PolicyError::InvalidInput("prompt: must not be empty when given".into()));
    }
    if prompt.len() > MAX_PROMPT_BYTES {
        return Err(PolicyError::InvalidInput(format!(
            "prompt: must be at most {MAX_PROMPT_BYTES} bytes, got {}",
            prompt.len()
        )));
    }
    Ok(())
}

/// Queues a wake for `start.chat_id` with `prompt`, keeping the live entries.
pub(super) fn enqueue(
    config: &PinConfig,
    storage: &dyn Storage,
    secret: &[u8],
    start: &TurnStart,
    chat_id: &str,
    prompt: &str,
) -> Result<(), PolicyError> {
    let entry = Queued {
        chat_id: chat_id.to_string(),
        label: start.label.clone().unwrap_or_else(|| chat_id.to_string()),
        prompt_mac: mac(secret, &start.session_id, chat_id, prompt),
        run_id: start.run_id.clone(),
        queued_at_ms: start.now_ms,
    };
    for _ in 0..store::MAX_CAS_ATTEMPTS {
        let found = store::get_json::<Vec<Queued>>(storage, NAMESPACE, &start.session_id)?;
        let (mut queue, when) = match found {
            Some((q, v)) => (q, Condition::Version(v)),
            None => (Vec::new(), Condition::Absent),
        };
        queue.retain(|q| live(config, q, start.now_ms) && q.prompt_mac != entry.prompt_mac);
        queue.push(entry.clone());
        if queue.len() > MAX_QUEUED {
            let excess = queue.len() - MAX_QUEUED;
            queue.drain(..excess);
        }
        match store::put_json(storage, NAMESPACE, &start.session_id, &queue, when) {
            Ok(_) => return Ok(()),
            Err(crate::ports::StorageError::Conflict) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(PolicyError::Storage("the queued wakes changed too often to be updated".into()))
}

/// The live queued wakes of a session, oldest first: chat IDs and when they were queued.
pub fn queued(
    config: &PinConfig,
    storage: &dyn Storage,
    session_id: &str,
    now_ms: u64,
) -> Result<Vec<(String, u64)>, PolicyError> {
    let found = store::get_json::<Vec<Queued>>(storage, NAMESPACE, session_id)?;
    Ok(found
        .map(|(q, _)| q)
        .unwrap_or_default()
        .into_iter()
        .filter(|q| live(config, q, now_ms))
        .map(|q| (q.chat_id, q.queued_at_ms))
        .collect())
}

/// A turn entered the transcript: when it is a queued wake's exact prompt,
/// reported by the host in that wake's chat, the pin moves to that chat.
/// Reads storage only for `automation` turns of a session with a chat.
pub fn enter(config: &PinConfig, storage: &dyn Storage, secret: &[u8], turn: &Turn) -> Vec<Signal> {
    if !config.enabled || turn.trigger != Trigger::Automation {
        return Vec::new();
    }
    let (Some(session), Some(chat)) = (turn.session_id.as_deref(), turn.identity.channel_id.as_deref()) else {
        return Vec::new();
    };
    if session.trim().is_empty() || session.chars().count() > super::MAX_ID_CHARS {
        return Vec::new();
    }
    match move_pin(config, storage, secret, session, chat, turn) {
        Ok(Some(label)) => {
            vec![Signal::new(
                signals::MOVED,
                format!("the queued wake entered the transcript; answers go to \"{label}\""),
            )]
        }
        Ok(None) => Vec::new(),
        Err(e) => vec![Signal::new(
            signals::STORAGE_UNAVAILABLE,
            format!("the queued wakes could not be read ({e}); the pin did not move"),
        )],
    }
}

fn move_pin(
    config: &PinConfig,
    storage: &dyn Storage,
    secret: &[u8],
    session: &str,
    chat: &str,
    turn: &Turn,
) -> Result<Option<String>, PolicyError> {
    let Some((mut queue, version)) = store::get_json::<Vec<Queued>>(storage, NAMESPACE, session)? else {
        return Ok(None);
    };
    let wanted = mac(secret, session, chat, &turn.message);
    let Some(index) =
        queue.iter().position(|q| q.chat_id == chat && q.prompt_mac == wanted && live(config, q, turn.now_ms))
    else {
        return Ok(None);
    };
    if let Some((pin, _)) = store::get_json::<StoredPin>(storage, super::NAMESPACE, session)?
        && pin.dedicated
    {
        return Ok(None);
    }
    let entry = queue.remove(index);
    queue.retain(|q| live(config, q, turn.now_ms));
    let pin = StoredPin {
        chat_id: entry.chat_id,
        label: entry.label.clone(),
        pinned_at_ms: turn.now_ms,
        run_id: entry.run_id.or_else(|| turn.run_id.clone()),
        dedicated: false,
    };
    // The entry is taken first, so a retried report cannot move the pin twice.
    let taken = if queue.is_empty() {
        storage.delete(NAMESPACE, session, Condition::Version(version)).map(|_| ())
    } else {
        store::put_json(storage, NAMESPACE, session, &queue, Condition::Version(version)).map(|_| ())
    };
    match taken {
        Ok(()) => {}
        Err(crate::ports::StorageError::Conflict) => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    store::put_json(storage, super::NAMESPACE, session, &pin, Condition::Any)?;
    Ok(Some(entry.label))
}
