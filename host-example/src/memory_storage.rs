//! Versioned records in a map: the `storage` import without a database, for
//! benchmarks and tests that measure or compare the component itself. Same
//! conditions, versions, limits and all-or-nothing batches as [`SqliteStorage`];
//! nothing survives the process.
//!
//! [`SqliteStorage`]: crate::storage::SqliteStorage

use crate::storage::{
    BatchError, Condition, MAX_BATCH_WRITES, MAX_LIST, MAX_VALUE_BYTES, Record, Storage, StorageError, Write, check_key,
};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// Records keyed by namespace and key.
type Records = BTreeMap<(String, String), Record>;

/// Records keyed by namespace and key, behind one lock.
#[derive(Default)]
pub struct MemoryStorage(Mutex<Records>);

fn holds(current: Option<u64>, when: Condition) -> bool {
    match when {
        Condition::Any => true,
        Condition::Absent => current.is_none(),
        Condition::Version(v) => current == Some(v),
    }
}

impl MemoryStorage {
    fn map(&self) -> Result<MutexGuard<'_, Records>, StorageError> {
        self.0.lock().map_err(|_| StorageError::Other("the in-memory storage lock is poisoned".into()))
    }

    /// Number of records held.
    pub fn len(&self) -> usize {
        self.map().map(|m| m.len()).unwrap_or(0)
    }

    /// Whether no record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Storage for MemoryStorage {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Record>, StorageError> {
        check_key(namespace, key)?;
        Ok(self.map()?.get(&(namespace.to_string(), key.to_string())).cloned())
    }

    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        check_key(namespace, key)?;
        if value.len() > MAX_VALUE_BYTES {
            return Err(StorageError::TooLarge);
        }
        let mut map = self.map()?;
        let k = (namespace.to_string(), key.to_string());
        let current = map.get(&k).map(|r| r.version);
        if !holds(current, when) {
            return Err(StorageError::Conflict);
        }
        let version = current.map_or(1, |v| v + 1);
        map.insert(k, Record { value: value.to_vec(), version });
        Ok(version)
    }

    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        check_key(namespace, key)?;
        let mut map = self.map()?;
        let k = (namespace.to_string(), key.to_string());
        let current = map.get(&k).map(|r| r.version);
        if !holds(current, when) {
            return Err(StorageError::Conflict);
        }
        Ok(map.remove(&k).is_some())
    }

    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Record)>, StorageError> {
        check_key(namespace, prefix)?;
        let map = self.map()?;
        // Keys holding the prefix sort together, from the prefix itself on.
        let hits = map
            .range((namespace.to_string(), prefix.to_string())..)
            .take_while(|((ns, k), _)| ns == namespace && k.starts_with(prefix));
        let hits = hits.map(|((_, k), r)| (k.clone(), r.clone()));
        let limit = limit.min(MAX_LIST) as usize;
        Ok(if reverse {
            let all: Vec<_> = hits.collect();
            all.into_iter().rev().take(limit).collect()
        } else {
            hits.take(limit).collect()
        })
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        if writes.len() > MAX_BATCH_WRITES {
            return Err(BatchError::Failed(StorageError::TooLarge));
        }
        for write in writes {
            let (Write::Put { namespace, key, .. } | Write::Remove { namespace, key, .. }) = write;
            check_key(namespace, key).map_err(BatchError::Failed)?;
            if let Write::Put { value, .. } = write
                && value.len() > MAX_VALUE_BYTES
            {
                return Err(BatchError::Failed(StorageError::TooLarge));
            }
        }
        let mut map = self.map().map_err(BatchError::Failed)?;
        // Every condition is tested first, against the versions the batch's
        // earlier writes leave; the writes apply only when all held (not on a
        // copy of the map, which made a batch cost as much as the store).
        let mut after: BTreeMap<(&str, &str), Option<u64>> = BTreeMap::new();
        for (i, write) in writes.iter().enumerate() {
            let (Write::Put { namespace, key, when, .. } | Write::Remove { namespace, key, when }) = write;
            let k = (namespace.as_str(), key.as_str());
            let current = match after.get(&k) {
                Some(v) => *v,
                None => map.get(&(namespace.clone(), key.clone())).map(|r| r.version),
            };
            if !holds(current, *when) {
                return Err(BatchError::Conflict(i as u32));
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
                    let version = map.get(&k).map_or(1, |r| r.version + 1);
                    map.insert(k, Record { value: value.clone(), version });
                }
                Write::Remove { namespace, key, .. } => {
                    map.remove(&(namespace.clone(), key.clone()));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MAX_KEY_BYTES;

    #[test]
    fn keys_and_values_are_capped_exactly_at_the_sqlite_limits() {
        let s = MemoryStorage::default();
        let key = "k".repeat(MAX_KEY_BYTES);
        assert_eq!(s.set("n", &key, b"v", Condition::Any), Ok(1));
        assert_eq!(s.set("n", &format!("{key}k"), b"v", Condition::Any), Err(StorageError::TooLarge));
        assert_eq!(s.get(&format!("{key}k"), "k"), Err(StorageError::TooLarge));
        assert_eq!(s.set("n", "big", &vec![0; MAX_VALUE_BYTES], Condition::Any), Ok(1));
        assert_eq!(s.set("n", "big", &vec![0; MAX_VALUE_BYTES + 1], Condition::Any), Err(StorageError::TooLarge));
        let big = Write::Put {
            namespace: "n".into(),
            key: "x".into(),
            value: vec![0; MAX_VALUE_BYTES + 1],
            when: Condition::Any,
        };
        assert_eq!(s.commit(&[big]), Err(BatchError::Failed(StorageError::TooLarge)));
        assert_eq!(s.get("n", "x"), Ok(None));
    }

    #[test]
    fn conditions_versions_and_batches_behave_as_in_sqlite() {
        let s = MemoryStorage::default();
        assert_eq!(s.set("n", "k", b"a", Condition::Absent), Ok(1));
        assert_eq!(s.set("n", "k", b"b", Condition::Absent), Err(StorageError::Conflict));
        assert_eq!(s.set("n", "k", b"b", Condition::Version(1)), Ok(2));
        assert_eq!(s.delete("n", "k", Condition::Version(1)), Err(StorageError::Conflict));
        assert_eq!(s.delete("n", "gone", Condition::Version(1)), Err(StorageError::Conflict));
        assert_eq!(s.delete("n", "gone", Condition::Any), Ok(false));
        let put = |k: &str, when| Write::Put { namespace: "n".into(), key: k.into(), value: b"v".to_vec(), when };
        assert_eq!(
            s.commit(&[put("x", Condition::Absent), put("k", Condition::Version(1))]),
            Err(BatchError::Conflict(1))
        );
        assert_eq!(s.get("n", "x"), Ok(None), "nothing of a refused batch is written");
        assert_eq!(s.commit(&[put("x", Condition::Absent), put("x", Condition::Version(1))]), Ok(()));
        assert_eq!(s.get("n", "x").map(|r| r.map(|r| r.version)), Ok(Some(2)));
        assert_eq!(
            s.list("n", "", 10, true).map(|r| r.into_iter().map(|(k, _)| k).collect::<Vec<_>>()),
            Ok(vec!["x".to_string(), "k".to_string()])
        );
        let many: Vec<Write> = (0..=MAX_BATCH_WRITES).map(|i| put(&format!("m{i}"), Condition::Any)).collect();
        assert_eq!(s.commit(&many), Err(BatchError::Failed(StorageError::TooLarge)));
        assert_eq!(s.commit(&many[..MAX_BATCH_WRITES]), Ok(()));
    }
}
