//! In-memory fakes of the ports, for tests of the core and of code built on it.

use crate::ports::{
    BatchError, Condition, Entry, Http, HttpError, HttpRequest, HttpResponse, Level, Log, Storage, StorageError, Write,
};
use crate::prelude::*;
use core::cell::RefCell;

/// Storage in a map, with compare-and-swap and an injectable failure.
#[derive(Default)]
pub struct MemoryStorage {
    data: RefCell<BTreeMap<(String, String), Entry>>,
    failure: RefCell<Option<StorageError>>,
    write_failure: RefCell<Option<StorageError>>,
    conflicts: RefCell<usize>,
    writes: RefCell<usize>,
    commits: RefCell<usize>,
    calls: RefCell<usize>,
}

impl MemoryStorage {
    /// Every later call fails with `error`.
    pub fn fail_with(&self, error: StorageError) {
        *self.failure.borrow_mut() = Some(error);
    }

    /// Calls succeed again.
    pub fn heal(&self) {
        *self.failure.borrow_mut() = None;
        *self.write_failure.borrow_mut() = None;
        *self.conflicts.borrow_mut() = 0;
    }

    /// Reads succeed; every later `commit` fails with `error` and writes nothing.
    pub fn fail_commits_with(&self, error: StorageError) {
        *self.write_failure.borrow_mut() = Some(error);
    }

    /// The next `n` commits lose a race: they report a conflict on their last write and write nothing.
    pub fn lose_commits(&self, n: usize) {
        *self.conflicts.borrow_mut() = n;
    }

    /// Number of batches committed.
    pub fn commits(&self) -> usize {
        *self.commits.borrow()
    }

    /// Number of stored keys.
    pub fn len(&self) -> usize {
        self.data.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of successful writes and deletes.
    pub fn writes(&self) -> usize {
        *self.writes.borrow()
    }

    /// Every stored value, for tests that scan for clear text.
    pub fn dump(&self) -> Vec<(String, String, Vec<u8>)> {
        self.data.borrow().iter().map(|((ns, k), e)| (ns.clone(), k.clone(), e.value.clone())).collect()
    }

    /// Number of calls of any kind (`get`, `set`, `delete`, `list`, `commit`): round trips to storage.
    pub fn calls(&self) -> usize {
        *self.calls.borrow()
    }

    fn fail(&self) -> Result<(), StorageError> {
        *self.calls.borrow_mut() += 1;
        match &*self.failure.borrow() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn holds(current: Option<&Entry>, when: Condition) -> bool {
        Self::holds_version(current.map(|e| e.version), when)
    }

    fn holds_version(current: Option<u64>, when: Condition) -> bool {
        match when {
            Condition::Any => true,
            Condition::Absent => current.is_none(),
            Condition::Version(v) => current == Some(v),
        }
    }
}

impl Storage for MemoryStorage {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Entry>, StorageError> {
        self.fail()?;
        Ok(self.data.borrow().get(&(namespace.into(), key.into())).cloned())
    }

    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        self.fail()?;
        let mut data = self.data.borrow_mut();
        let k = (namespace.to_string(), key.to_string());
        let current = data.get(&k);
        if !Self::holds(current, when) {
            return Err(StorageError::Conflict);
        }
        let version = current.map_or(1, |e| e.version + 1);
        data.insert(k, Entry { value: value.to_vec(), version });
        *self.writes.borrow_mut() += 1;
        Ok(version)
    }

    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        self.fail()?;
        let mut data = self.data.borrow_mut();
        let k = (namespace.to_string(), key.to_string());
        let current = data.get(&k);
        if current.is_none() {
            return if matches!(when, Condition::Version(_)) { Err(StorageError::Conflict) } else { Ok(false) };
        }
        if !Self::holds(current, when) {
            return Err(StorageError::Conflict);
        }
        data.remove(&k);
        *self.writes.borrow_mut() += 1;
        Ok(true)
    }

    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Entry)>, StorageError> {
        self.fail()?;
        let data = self.data.borrow();
        // Keys holding the prefix sort together, from the prefix itself on.
        let matching = data
            .range((namespace.to_string(), prefix.to_string())..)
            .take_while(|((ns, k), _)| ns == namespace && k.starts_with(prefix))
            .map(|((_, k), e)| (k.clone(), e.clone()));
        let limit = limit as usize;
        Ok(if reverse {
            let all: Vec<_> = matching.collect();
            all.into_iter().rev().take(limit).collect()
        } else {
            matching.take(limit).collect()
        })
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        self.fail()?;
        if let Some(e) = &*self.write_failure.borrow() {
            return Err(BatchError::Failed(e.clone()));
        }
        {
            let mut conflicts = self.conflicts.borrow_mut();
            if *conflicts > 0 {
                *conflicts -= 1;
                return Err(BatchError::Conflict(writes.len().saturating_sub(1)));
            }
        }
        // Every condition is tested first, against the versions the batch's
        // earlier writes leave; the writes apply only when all held. (Not a
        // copy of the map: that made each batch cost as much as the store.)
        let mut data = self.data.borrow_mut();
        let mut after: BTreeMap<(String, String), Option<u64>> = BTreeMap::new();
        for (i, write) in writes.iter().enumerate() {
            let (Write::Put { namespace, key, when, .. } | Write::Remove { namespace, key, when }) = write;
            let k = (namespace.clone(), key.clone());
            let current = match after.get(&k) {
                Some(v) => *v,
                None => data.get(&k).map(|e| e.version),
            };
            if !Self::holds_version(current, *when) {
                return Err(BatchError::Conflict(i));
            }
            let next = match write {
                Write::Put { .. } => Some(current.map_or(1, |v| v + 1)),
                Write::Remove { .. } => None,
            };
            after.insert(k, next);
        }
        for write in writes {
            match write {
                Write::Put { namespace, key, value, .. } => {
                    let k = (namespace.clone(), key.clone());
                    let version = data.get(&k).map_or(1, |e| e.version + 1);
                    data.insert(k, Entry { value: value.clone(), version });
                }
                Write::Remove { namespace, key, .. } => {
                    data.remove(&(namespace.clone(), key.clone()));
                }
            }
        }
        *self.writes.borrow_mut() += writes.len();
        *self.commits.borrow_mut() += 1;
        Ok(())
    }
}

/// How a scripted HTTP port answers.
pub type Answer = dyn Fn(&HttpRequest) -> Result<HttpResponse, HttpError>;

/// A scripted HTTP port: answers come from a closure, requests are recorded.
pub struct ScriptedHttp {
    answer: Box<Answer>,
    seen: RefCell<Vec<HttpRequest>>,
    batches: RefCell<Vec<usize>>,
}

impl ScriptedHttp {
    pub fn new(answer: impl Fn(&HttpRequest) -> Result<HttpResponse, HttpError> + 'static) -> Self {
        ScriptedHttp { answer: Box::new(answer), seen: RefCell::new(Vec::new()), batches: RefCell::new(Vec::new()) }
    }

    /// An HTTP port that must never be called: every request is denied and recorded.
    pub fn unreachable() -> Self {
        ScriptedHttp::new(|_| Err(HttpError::Denied))
    }

    /// Every request seen, in order.
    pub fn requests(&self) -> Vec<HttpRequest> {
        self.seen.borrow().clone()
    }

    /// The size of each `send-all` batch (a `send` counts as a batch of one).
    pub fn batches(&self) -> Vec<usize> {
        self.batches.borrow().clone()
    }
}

impl Http for ScriptedHttp {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, HttpError> {
        self.seen.borrow_mut().push(request.clone());
        self.batches.borrow_mut().push(1);
        (self.answer)(request)
    }

    fn send_all(&self, requests: &[HttpRequest]) -> Vec<Result<HttpResponse, HttpError>> {
        self.batches.borrow_mut().push(requests.len());
        requests
            .iter()
            .map(|r| {
                self.seen.borrow_mut().push(r.clone());
                (self.answer)(r)
            })
            .collect()
    }
}

/// A log that keeps its lines.
#[derive(Default)]
pub struct VecLog {
    lines: RefCell<Vec<(Level, String)>>,
}

impl VecLog {
    pub fn lines(&self) -> Vec<(Level, String)> {
        self.lines.borrow().clone()
    }
}

impl Log for VecLog {
    fn write(&self, level: Level, message: &str) {
        self.lines.borrow_mut().push((level, message.to_string()));
    }
}

/// Reads the body of a case in `testdata/dlp-strings.json`: its parts joined,
/// each a string, `{"repeat": UNIT, "times": N}`, or `{"hex": BYTES}` for raw
/// bytes (so invalid UTF-8 and format-valid fake secrets need not sit in the
/// file as one literal). `None` for a part of no known form.
pub fn body_from_parts(parts: &serde_json::Value) -> Option<Vec<u8>> {
    use serde_json::Value;
    let mut out = Vec::new();
    for part in parts.as_array()? {
        match part {
            Value::String(s) => out.extend_from_slice(s.as_bytes()),
            Value::Object(o) if o.contains_key("repeat") => {
                let unit = o.get("repeat")?.as_str()?;
                let times = usize::try_from(o.get("times")?.as_u64()?).ok()?;
                out.extend_from_slice(unit.repeat(times).as_bytes());
            }
            Value::Object(o) => {
                let hex = o.get("hex")?.as_str()?;
                for pair in hex.as_bytes().chunks(2) {
                    out.push(u8::from_str_radix(core::str::from_utf8(pair).ok()?, 16).ok()?);
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_with_one_failed_condition_writes_nothing_and_names_that_write() {
        let s = MemoryStorage::default();
        assert_eq!(s.set("n", "a", b"1", Condition::Any), Ok(1));
        let batch = [
            Write::put("n", "b", b"2".to_vec(), Condition::Absent),
            Write::put("n", "a", b"3".to_vec(), Condition::Version(1)),
            Write::put("n", "a", b"4".to_vec(), Condition::Version(1)),
        ];
        assert_eq!(s.commit(&batch), Err(BatchError::Conflict(2)));
        assert_eq!(s.get("n", "b"), Ok(None));
        assert_eq!(s.get("n", "a").map(|e| e.map(|e| e.version)), Ok(Some(1)));
        // Later writes see earlier ones: the same key twice, each on the version before.
        let chained = [
            Write::put("n", "b", b"2".to_vec(), Condition::Absent),
            Write::put("n", "a", b"3".to_vec(), Condition::Version(1)),
            Write::put("n", "a", b"4".to_vec(), Condition::Version(2)),
            Write::remove("n", "gone", Condition::Any),
        ];
        assert_eq!(s.commit(&chained), Ok(()));
        assert_eq!(s.get("n", "a"), Ok(Some(Entry { value: b"4".to_vec(), version: 3 })));
        assert_eq!(s.commit(&[Write::remove("n", "gone", Condition::Version(1))]), Err(BatchError::Conflict(0)));
        assert_eq!(s.commit(&[Write::remove("n", "b", Condition::Absent)]), Err(BatchError::Conflict(0)));
        assert_eq!(s.commit(&[Write::remove("n", "b", Condition::Version(1))]), Ok(()));
        assert_eq!(s.get("n", "b"), Ok(None));
    }
}
