//! One storage conformance suite, run alike against the core's in-memory
//! fake, the host's `MemoryStorage`, SQLite and PostgreSQL: each case is a
//! function over `&dyn Storage`, and `conformance!` makes one test of each
//! case for each backend (`sqlite::a_batch_…`, `postgres::a_batch_…`).
//!
//! The limits (`too-large`) are the host's: the core's fake, which is not a
//! host, runs every case but those.

use std::sync::{Arc, Mutex};
use warden_host::storage::{
    BatchError, Condition, MAX_BATCH_WRITES, MAX_VALUE_BYTES, Record, Storage, StorageError, Write,
};

/// The core's fake behind the host's trait.
struct CoreFake(Mutex<warden_core::fakes::MemoryStorage>);

mod core_port {
    pub use warden_core::ports::{BatchError, Condition, Entry, Storage as CoreStorage, StorageError, Write};
}

fn to_core(when: Condition) -> core_port::Condition {
    match when {
        Condition::Any => core_port::Condition::Any,
        Condition::Absent => core_port::Condition::Absent,
        Condition::Version(v) => core_port::Condition::Version(v),
    }
}

fn from_core(e: core_port::StorageError) -> StorageError {
    match e {
        core_port::StorageError::Unavailable(m) => StorageError::Unavailable(m),
        core_port::StorageError::Conflict => StorageError::Conflict,
        core_port::StorageError::TooLarge => StorageError::TooLarge,
        core_port::StorageError::Other(m) => StorageError::Other(m),
    }
}

fn record(e: core_port::Entry) -> Record {
    Record { value: e.value, version: e.version }
}

impl Storage for CoreFake {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Record>, StorageError> {
        use core_port::CoreStorage;
        let fake = self.0.lock().map_err(|_| StorageError::Other("poisoned".into()))?;
        fake.get(namespace, key).map(|r| r.map(record)).map_err(from_core)
    }
    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        use core_port::CoreStorage;
        let fake = self.0.lock().map_err(|_| StorageError::Other("poisoned".into()))?;
        fake.set(namespace, key, value, to_core(when)).map_err(from_core)
    }
    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        use core_port::CoreStorage;
        let fake = self.0.lock().map_err(|_| StorageError::Other("poisoned".into()))?;
        fake.delete(namespace, key, to_core(when)).map_err(from_core)
    }
    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Record)>, StorageError> {
        use core_port::CoreStorage;
        let fake = self.0.lock().map_err(|_| StorageError::Other("poisoned".into()))?;
        fake.list(namespace, prefix, limit, reverse)
            .map(|rows| rows.into_iter().map(|(k, e)| (k, record(e))).collect())
            .map_err(from_core)
    }
    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        use core_port::CoreStorage;
        let writes: Vec<core_port::Write> = writes
            .iter()
            .map(|w| match w {
                Write::Put { namespace, key, value, when } => {
                    core_port::Write::put(namespace, key, value.clone(), to_core(*when))
                }
                Write::Remove { namespace, key, when } => core_port::Write::remove(namespace, key, to_core(*when)),
            })
            .collect();
        let fake = self.0.lock().map_err(|_| BatchError::Failed(StorageError::Other("poisoned".into())))?;
        fake.commit(&writes).map_err(|e| match e {
            core_port::BatchError::Conflict(i) => BatchError::Conflict(i as u32),
            core_port::BatchError::Failed(e) => BatchError::Failed(from_core(e)),
        })
    }
}

fn put(key: &str, value: &[u8], when: Condition) -> Write {
    Write::Put { namespace: "n".into(), key: key.into(), value: value.to_vec(), when }
}

fn keys(listed: Result<Vec<(String, Record)>, StorageError>) -> Vec<String> {
    listed.expect("list").into_iter().map(|(k, _)| k).collect()
}

fn compare_and_swap_honours_each_condition_and_counts_versions_from_one(s: &dyn Storage) {
    assert_eq!(s.get("n", "k"), Ok(None));
    assert_eq!(s.set("n", "k", b"a", Condition::Absent), Ok(1));
    assert_eq!(s.set("n", "k", b"b", Condition::Absent), Err(StorageError::Conflict));
    assert_eq!(s.set("n", "k", b"b", Condition::Version(2)), Err(StorageError::Conflict));
    assert_eq!(s.set("n", "k", b"b", Condition::Version(1)), Ok(2));
    assert_eq!(s.set("n", "k", b"c", Condition::Any), Ok(3));
    assert_eq!(s.get("n", "k"), Ok(Some(Record { value: b"c".to_vec(), version: 3 })));
    assert_eq!(s.delete("n", "k", Condition::Version(2)), Err(StorageError::Conflict));
    assert_eq!(s.get("n", "k").map(|r| r.map(|r| r.version)), Ok(Some(3)), "a refused delete changes nothing");
    assert_eq!(s.delete("n", "k", Condition::Version(3)), Ok(true));
    assert_eq!(s.delete("n", "k", Condition::Any), Ok(false));
    assert_eq!(s.delete("n", "k", Condition::Absent), Ok(false));
    assert_eq!(s.delete("n", "k", Condition::Version(1)), Err(StorageError::Conflict));
    assert_eq!(s.get("n", "k"), Ok(None));
    assert_eq!(s.set("n", "k", b"again", Condition::Absent), Ok(1), "a deleted key starts again at version one");
}

fn namespaces_keep_the_same_key_apart(s: &dyn Storage) {
    assert_eq!(s.set("a", "k", b"in a", Condition::Absent), Ok(1));
    assert_eq!(s.set("b", "k", b"in b", Condition::Absent), Ok(1));
    assert_eq!(s.get("a", "k").map(|r| r.map(|r| r.value)), Ok(Some(b"in a".to_vec())));
    assert_eq!(s.delete("a", "k", Condition::Any), Ok(true));
    assert_eq!(s.get("b", "k").map(|r| r.map(|r| r.value)), Ok(Some(b"in b".to_vec())));
    assert_eq!(keys(s.list("a", "", 10, false)), Vec::<String>::new());
}

fn values_are_kept_byte_for_byte_empty_and_binary_included(s: &dyn Storage) {
    let binary: Vec<u8> = (0..=255u8).collect();
    assert_eq!(s.set("n", "bin", &binary, Condition::Any), Ok(1));
    assert_eq!(s.set("n", "empty", b"", Condition::Any), Ok(1));
    assert_eq!(s.get("n", "bin").map(|r| r.map(|r| r.value)), Ok(Some(binary)));
    assert_eq!(s.get("n", "empty").map(|r| r.map(|r| r.value)), Ok(Some(Vec::new())));
    assert_eq!(s.set("n", "caf\u{e9} \u{1f600}", b"x", Condition::Absent), Ok(1));
    assert_eq!(keys(s.list("n", "caf", 10, false)), ["caf\u{e9} \u{1f600}"]);
}

fn list_matches_prefixes_exactly_with_case_in_byte_order_both_ways(s: &dyn Storage) {
    for k in ["a_1", "a_2", "ab", "a%", "b", "A_9", "a_\u{10FFFF}x", "\u{10FFFF}", "\u{10FFFF}z", "\u{e9}", "z"] {
        assert!(s.set("n", k, k.as_bytes(), Condition::Any).is_ok());
    }
    assert!(s.set("other", "a_3", b"x", Condition::Any).is_ok());
    assert_eq!(keys(s.list("n", "a_", 10, false)), ["a_1", "a_2", "a_\u{10FFFF}x"]);
    assert_eq!(keys(s.list("n", "a_", 10, true)), ["a_\u{10FFFF}x", "a_2", "a_1"]);
    assert_eq!(keys(s.list("n", "a%", 10, false)), ["a%"], "`%` is a character, not a wildcard");
    assert_eq!(keys(s.list("n", "a_", 1, false)), ["a_1"]);
    assert_eq!(keys(s.list("n", "", 3, false)), ["A_9", "a%", "a_1"], "upper case sorts before lower case");
    assert_eq!(keys(s.list("n", "", 2, true)), ["\u{10FFFF}z", "\u{10FFFF}"]);
    assert_eq!(keys(s.list("n", "\u{10FFFF}", 10, false)), ["\u{10FFFF}", "\u{10FFFF}z"]);
    let all = keys(s.list("n", "", 100, false));
    assert_eq!(all.len(), 11);
    let mut by_bytes = all.clone();
    by_bytes.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    assert_eq!(all, by_bytes, "listing is in byte order, whatever the collation");
    assert_eq!(s.list("n", "a_1", 10, false).map(|r| r[0].1.value.clone()), Ok(b"a_1".to_vec()));
}

fn a_batch_commits_whole_or_names_the_write_whose_condition_failed(s: &dyn Storage) {
    assert_eq!(s.set("n", "a", b"1", Condition::Any), Ok(1));
    let torn = [
        put("b", b"2", Condition::Absent),
        put("a", b"3", Condition::Version(1)),
        put("a", b"4", Condition::Version(1)),
    ];
    assert_eq!(s.commit(&torn), Err(BatchError::Conflict(2)));
    assert_eq!(s.get("n", "b"), Ok(None), "nothing of a refused batch is written");
    assert_eq!(s.get("n", "a").map(|r| r.map(|r| r.version)), Ok(Some(1)));
    let chained = [
        put("b", b"2", Condition::Absent),
        put("a", b"3", Condition::Version(1)),
        put("a", b"4", Condition::Version(2)),
        Write::Remove { namespace: "n".into(), key: "gone".into(), when: Condition::Any },
    ];
    assert_eq!(s.commit(&chained), Ok(()));
    assert_eq!(s.get("n", "a"), Ok(Some(Record { value: b"4".to_vec(), version: 3 })));
    assert_eq!(s.get("n", "b").map(|r| r.map(|r| r.version)), Ok(Some(1)));
    let gone = Write::Remove { namespace: "n".into(), key: "gone".into(), when: Condition::Version(1) };
    assert_eq!(s.commit(&[gone]), Err(BatchError::Conflict(0)));
    let across = [
        Write::Remove { namespace: "n".into(), key: "b".into(), when: Condition::Version(1) },
        Write::Put { namespace: "m".into(), key: "b".into(), value: b"moved".to_vec(), when: Condition::Absent },
    ];
    assert_eq!(s.commit(&across), Ok(()));
    assert_eq!(s.get("n", "b"), Ok(None));
    assert_eq!(s.get("m", "b").map(|r| r.map(|r| r.value)), Ok(Some(b"moved".to_vec())));
    assert_eq!(s.commit(&[]), Ok(()));
}

fn concurrent_compare_and_swap_writers_lose_no_update(s: &dyn Storage) {
    const THREADS: usize = 6;
    const EACH: usize = 20;
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                for _ in 0..EACH {
                    loop {
                        let current = s.get("n", "counter").expect("get");
                        let (n, when) = match &current {
                            Some(r) => (
                                String::from_utf8_lossy(&r.value).parse::<u64>().expect("a number"),
                                Condition::Version(r.version),
                            ),
                            None => (0, Condition::Absent),
                        };
                        match s.commit(&[put("counter", (n + 1).to_string().as_bytes(), when)]) {
                            Ok(()) => break,
                            Err(BatchError::Conflict(0)) => continue,
                            Err(e) => panic!("commit failed: {e:?}"),
                        }
                    }
                }
            });
        }
    });
    let total = (THREADS * EACH) as u64;
    assert_eq!(s.get("n", "counter"), Ok(Some(Record { value: total.to_string().into_bytes(), version: total })));
}

fn concurrent_creators_of_one_absent_key_have_exactly_one_winner(s: &dyn Storage) {
    for round in 0..10 {
        let key = format!("once/{round}");
        let wins = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (key, wins) = (&key, &wins);
                scope.spawn(move || {
                    let batch = [
                        put(key, format!("t{t}").as_bytes(), Condition::Absent),
                        put(&format!("{key}/by/{t}"), b"1", Condition::Absent),
                    ];
                    match s.commit(&batch) {
                        Ok(()) => {
                            wins.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        Err(BatchError::Conflict(0)) => {}
                        Err(e) => panic!("commit failed: {e:?}"),
                    }
                });
            }
        });
        assert_eq!(wins.into_inner(), 1, "round {round}");
        assert_eq!(
            keys(s.list("n", &format!("{key}/by/"), 10, false)).len(),
            1,
            "only the winner's other write exists"
        );
    }
}

fn oversized_values_keys_and_batches_are_refused_and_nothing_is_written(s: &dyn Storage) {
    let big = vec![0u8; MAX_VALUE_BYTES + 1];
    assert_eq!(s.set("n", "k", &big, Condition::Any), Err(StorageError::TooLarge));
    assert_eq!(s.get("n", "k"), Ok(None));
    let exact = vec![7u8; MAX_VALUE_BYTES];
    assert_eq!(s.set("n", "k", &exact, Condition::Any), Ok(1));
    assert_eq!(s.get("n", "k").map(|r| r.map(|r| r.value.len())), Ok(Some(MAX_VALUE_BYTES)));
    let long_key = "k".repeat(warden_host::storage::MAX_KEY_BYTES + 1);
    assert_eq!(s.set("n", &long_key, b"v", Condition::Any), Err(StorageError::TooLarge));
    let writes = |n: usize| -> Vec<Write> { (0..n).map(|i| put(&format!("b{i}"), b"v", Condition::Absent)).collect() };
    assert_eq!(s.commit(&writes(MAX_BATCH_WRITES + 1)), Err(BatchError::Failed(StorageError::TooLarge)));
    assert_eq!(keys(s.list("n", "b", 10, false)).len(), 0);
    assert_eq!(s.commit(&writes(MAX_BATCH_WRITES)), Ok(()));
    assert_eq!(
        s.commit(&[put("x", b"1", Condition::Any), put("big", &big, Condition::Any)]),
        Err(BatchError::Failed(StorageError::TooLarge))
    );
    assert_eq!(s.get("n", "x"), Ok(None));
}

macro_rules! conformance {
    ($backend:ident, $open:expr, [$($case:ident),* $(,)?]) => {
        mod $backend {
            use super::*;
            $(
                #[test]
                fn $case() {
                    let (_keep, storage): (Box<dyn std::any::Any>, Arc<dyn Storage>) = $open;
                    super::$case(storage.as_ref());
                }
            )*
        }
    };
}

macro_rules! semantics {
    ($backend:ident, $open:expr) => {
        conformance!(
            $backend,
            $open,
            [
                compare_and_swap_honours_each_condition_and_counts_versions_from_one,
                namespaces_keep_the_same_key_apart,
                values_are_kept_byte_for_byte_empty_and_binary_included,
                list_matches_prefixes_exactly_with_case_in_byte_order_both_ways,
                a_batch_commits_whole_or_names_the_write_whose_condition_failed,
                concurrent_compare_and_swap_writers_lose_no_update,
                concurrent_creators_of_one_absent_key_have_exactly_one_winner,
            ]
        );
    };
}

semantics!(core_fake, (Box::new(()), Arc::new(CoreFake(Mutex::new(Default::default())))));

mod host {
    use super::*;
    semantics!(memory, (Box::new(()), Arc::new(warden_host::memory_storage::MemoryStorage::default())));
    semantics!(sqlite, sqlite());
    semantics!(postgres, postgres());
    conformance!(
        memory_limits,
        (Box::new(()), Arc::new(warden_host::memory_storage::MemoryStorage::default())),
        [oversized_values_keys_and_batches_are_refused_and_nothing_is_written]
    );
    conformance!(sqlite_limits, sqlite(), [oversized_values_keys_and_batches_are_refused_and_nothing_is_written]);
    conformance!(postgres_limits, postgres(), [oversized_values_keys_and_batches_are_refused_and_nothing_is_written]);

    fn sqlite() -> (Box<dyn std::any::Any>, Arc<dyn Storage>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let storage = warden_host::storage::open(&dir.path().join("t.db").to_string_lossy()).expect("sqlite");
        (Box::new(dir), storage)
    }

    fn postgres() -> (Box<dyn std::any::Any>, Arc<dyn Storage>) {
        let url = warden_tests::postgres::Postgres::fresh_database("conformance");
        (Box::new(()), warden_host::storage::open(&url).expect("postgres"))
    }
}
