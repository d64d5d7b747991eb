//! The host side of the `storage` import: versioned key-value records.
//!
//! [`SqliteStorage`] keeps them in one SQLite file (WAL mode), so several
//! instances, and several processes, can share it; compare-and-swap runs
//! inside an immediate transaction. Every failure reaches the component as a
//! typed `storage-error`; nothing here panics on a database problem.
//!
//! Performance: each pooled connection keeps its prepared statements
//! (`prepare_cached`), and reads, on their own pooled connections in WAL
//! mode, never wait for a writer; writers meet in SQLite's busy handler,
//! bounded by [`BUSY_TIMEOUT`].
//!
//! Durability: WAL with `synchronous = NORMAL`. Every commit is atomic: a
//! process killed at any moment (even `kill -9` in the middle of a batch)
//! leaves each batch wholly written or not at all. Across a power loss or an
//! operating system crash, the last commits before it may be lost (never
//! half of one), because the log is synced at checkpoints, not at each
//! commit. The log (`-wal`) is part of the database: a copy of the file
//! alone may miss the last commits.

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Largest value a record may hold, in bytes (1 MiB).
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;
/// Longest namespace or key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// Most records one `list` call returns.
pub const MAX_LIST: u32 = 10_000;
/// How long a writer waits for another writer's lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Idle connections kept open for reuse.
pub const MAX_IDLE_CONNECTIONS: usize = 8;
/// Most writes one atomic batch may hold; a longer batch is refused as `too-large`.
pub const MAX_BATCH_WRITES: usize = 256;
/// `PRAGMA application_id` of a Warden database (`WDN1`).
pub const APPLICATION_ID: i32 = 0x5744_4e31;
/// `PRAGMA user_version` of the schema this host writes; a database with a
/// greater one was written by a newer Warden and is refused.
pub const SCHEMA_VERSION: i32 = 1;

/// When a write or delete may happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    Any,
    Absent,
    Version(u64),
}

/// Why storage failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    Unavailable(String),
    Conflict,
    TooLarge,
    Other(String),
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::Unavailable(m) => write!(f, "unavailable: {m}"),
            StorageError::Conflict => f.write_str("conflict"),
            StorageError::TooLarge => f.write_str("too large"),
            StorageError::Other(m) => f.write_str(m),
        }
    }
}

impl StorageError {
    /// The failure's own words, without the kind in front.
    pub fn detail(&self) -> String {
        match self {
            StorageError::Unavailable(m) | StorageError::Other(m) => m.clone(),
            e => e.to_string(),
        }
    }
}

/// One write of an atomic batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Set a key if the condition holds.
    Put { namespace: String, key: String, value: Vec<u8>, when: Condition },
    /// Delete a key if the condition holds; an absent key conflicts only under `Version`.
    Remove { namespace: String, key: String, when: Condition },
}

impl Write {
    fn namespace_and_key(&self) -> (&str, &str) {
        match self {
            Write::Put { namespace, key, .. } | Write::Remove { namespace, key, .. } => (namespace, key),
        }
    }
}

/// Why a batch was not committed; nothing of it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// The condition of the write at this index did not hold.
    Conflict(u32),
    /// The storage failed, or the batch is over [`MAX_BATCH_WRITES`] (`TooLarge`).
    Failed(StorageError),
}

/// A stored value and its version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub value: Vec<u8>,
    pub version: u64,
}

/// Versioned key-value storage a host provides to the component.
pub trait Storage: Send + Sync {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Record>, StorageError>;
    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError>;
    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError>;
    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Record)>, StorageError>;
    /// Applies every write in order, each condition tested against the state
    /// the earlier writes left, or none of them.
    fn commit(&self, writes: &[Write]) -> Result<(), BatchError>;
    /// Whether a call may wait on another machine (a database server) rather
    /// than only on this process and its files. `warden serve` runs checks on
    /// its own threads only over storage that does not.
    fn over_network(&self) -> bool {
        false
    }
}

/// Records in a SQLite file.
pub struct SqliteStorage {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

/// Reads a record.
const GET: &str = "SELECT value, version FROM records WHERE namespace = ?1 AND key = ?2";
/// Reads a record's version, inside a write transaction.
const VERSION: &str = "SELECT version FROM records WHERE namespace = ?1 AND key = ?2";
/// Writes a record at a version.
const UPSERT: &str = "INSERT INTO records (namespace, key, value, version) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, version = excluded.version";
/// Deletes a record.
const DELETE: &str = "DELETE FROM records WHERE namespace = ?1 AND key = ?2";

fn unavailable(e: rusqlite::Error) -> StorageError {
    StorageError::Unavailable(e.to_string())
}

fn other(e: rusqlite::Error) -> StorageError {
    match e {
        rusqlite::Error::SqliteFailure(code, _)
            if matches!(
                code.code,
                rusqlite::ErrorCode::DatabaseBusy
                    | rusqlite::ErrorCode::DatabaseLocked
                    | rusqlite::ErrorCode::CannotOpen
                    | rusqlite::ErrorCode::NotADatabase
                    | rusqlite::ErrorCode::DatabaseCorrupt
                    | rusqlite::ErrorCode::SystemIoFailure
                    | rusqlite::ErrorCode::ReadOnly
                    | rusqlite::ErrorCode::DiskFull
            ) =>
        {
            unavailable(e)
        }
        e => StorageError::Other(e.to_string()),
    }
}

pub(crate) fn check_key(namespace: &str, key: &str) -> Result<(), StorageError> {
    if namespace.len() > MAX_KEY_BYTES || key.len() > MAX_KEY_BYTES {
        return Err(StorageError::TooLarge);
    }
    Ok(())
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS records (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;";

/// Creates a new database at `path`: built under a temporary name next to it
/// and linked into place only where no file exists yet, so no process ever
/// sees a half-made database, and two processes starting together share one.
#[cfg(unix)]
fn owner_only(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn owner_only(_: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Creates a new database file, owner-only (0600).
fn create(path: &Path) -> Result<(), StorageError> {
    let shown = path.display();
    let failed =
        |e: &dyn std::fmt::Display| StorageError::Unavailable(format!("cannot create the database `{shown}`: {e}"));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Threads of one process may create the same database at once: the temporary
    // name is unique within the process and claimed exclusively, so no two build in
    // one file or remove the journal of a database another still has open.
    static CREATED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let n = CREATED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = path.with_file_name(format!(".{name}.{}.{n}.{nanos}.new", std::process::id()));
    std::fs::OpenOptions::new().write(true).create_new(true).open(&temp).map_err(|e| failed(&e))?;
    let made = (|| -> Result<(), rusqlite::Error> {
        let conn = Connection::open(&temp)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(&format!(
            "BEGIN; PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}; {SCHEMA} COMMIT;"
        ))?;
        conn.close().map_err(|(_, e)| e)
    })();
    // Owner-only before it appears under its name (SQLite gives its `-wal` and `-shm` the same mode).
    let made = made.map_err(|e| failed(&e)).and_then(|()| owner_only(&temp).map_err(|e| failed(&e)));
    let linked = made.and_then(|()| match std::fs::hard_link(&temp, path) {
        Ok(()) => Ok(()),
        // Another process created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(failed(&e)),
    });
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", temp.display()));
    }
    linked
}

/// Refuses a database that is not Warden's or is of a newer schema; marks
/// an unmarked one of an earlier Warden.
fn check_schema(conn: &Connection, path: &Path) -> Result<(), StorageError> {
    let shown = path.display();
    let not_sqlite = |e: rusqlite::Error| {
        StorageError::Unavailable(format!(
            "the database `{shown}` cannot be read as SQLite ({e}); it is damaged or not a database: restore it \
             from a backup, or point `--db` at Warden's database or at a path where no file exists"
        ))
    };
    let pragma = |name: &str| conn.pragma_query_value(None, name, |row| row.get::<_, i32>(0)).map_err(not_sqlite);
    let application_id = pragma("application_id")?;
    let user_version = pragma("user_version")?;
    let foreign = |what: String| {
        StorageError::Unavailable(format!(
            "the database `{shown}` is not Warden's ({what}); Warden does not write to another program's \
             database: point `--db` at Warden's database or at a path where no file exists"
        ))
    };
    if application_id == APPLICATION_ID {
        if user_version > SCHEMA_VERSION {
            return Err(StorageError::Unavailable(format!(
                "the database `{shown}` was written by a newer Warden (schema {user_version}; this one knows up to \
                 {SCHEMA_VERSION}); run a Warden at least as new as the one that wrote it"
            )));
        }
        return conn.execute_batch(SCHEMA).map_err(other);
    }
    if application_id != 0 {
        return Err(foreign(format!("its application id is {application_id:#010x}")));
    }
    let mut stmt =
        conn.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").map_err(not_sqlite)?;
    let tables = stmt
        .query_map([], |row| row.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<String>, _>>())
        .map_err(not_sqlite)?;
    let columns = conn
        .prepare("SELECT name FROM pragma_table_info('records') ORDER BY cid")
        .and_then(|mut s| s.query_map([], |row| row.get::<_, String>(0))?.collect::<Result<Vec<String>, _>>())
        .map_err(not_sqlite)?;
    let earlier_warden = tables == ["records"] && columns == ["namespace", "key", "value", "version"];
    if !earlier_warden || user_version != 0 {
        let listed: Vec<String> = tables.iter().take(5).map(|t| format!("`{t}`")).collect();
        let what = if tables.is_empty() {
            format!("it has no Warden mark and no tables, user version {user_version}")
        } else {
            format!("it has no Warden mark, and tables {}", listed.join(", "))
        };
        return Err(foreign(what));
    }
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE; PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
    ))
    .map_err(other)
}

/// The smallest key greater than every key that starts with `prefix`, in
/// SQLite's binary order (byte-wise UTF-8, which is code point order): the
/// prefix with its last incrementable character incremented. `None` when every
/// character is already U+10FFFF (or the prefix is empty): no upper bound.
/// Prefix matching is a key range, so it is exact and uses the primary key's
/// index (`LIKE` would ignore ASCII case).
fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (u32::from(last) + 1..=u32::from(char::MAX)).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

impl SqliteStorage {
    /// Opens the Warden database at `path`, creating it only where no file
    /// exists. Refused, naming the file and what to do: an empty (0-byte)
    /// file, a file that is not SQLite, a SQLite database that is not
    /// Warden's (another `application_id`, or tables other than Warden's), and
    /// a Warden database of a newer schema (`user_version` above
    /// [`SCHEMA_VERSION`]). A database of an earlier Warden, which has the
    /// `records` table and no marks, is marked and used.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStorage, StorageError> {
        let path = path.as_ref();
        let shown = path.display();
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => create(path)?,
            Err(e) => return Err(StorageError::Unavailable(format!("cannot read the database `{shown}`: {e}"))),
            Ok(m) if m.is_dir() => {
                return Err(StorageError::Unavailable(format!(
                    "the database `{shown}` is a folder; pass a file path to `--db`"
                )));
            }
            Ok(m) if m.len() == 0 => {
                return Err(StorageError::Unavailable(format!(
                    "the database `{shown}` is empty (0 bytes), so its pins, approvals, consents and opt-outs are \
                     gone or were never there; restore it from a backup, or delete the file to start a new database"
                )));
            }
            Ok(_) => {}
        }
        let storage = SqliteStorage { path: path.to_path_buf(), idle: Mutex::new(Vec::new()) };
        // The marks are read before anything is set on the connection: a
        // foreign file is refused without a byte of it changed.
        check_schema(&storage.connect_bare()?, path)?;
        let conn = storage.connect()?;
        storage.put_back(conn);
        Ok(storage)
    }

    /// Where the database lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn connect(&self) -> Result<Connection, StorageError> {
        let conn = self.connect_bare()?;
        // WAL lets readers proceed during a write; NORMAL sync is durable
        // across application crashes, which is what a policy ledger needs.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(other)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(other)?;
        Ok(conn)
    }

    /// A connection to the existing file, with nothing changed on it.
    fn connect_bare(&self) -> Result<Connection, StorageError> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StorageError::Unavailable(format!("cannot open the database `{}`: {e}", self.path.display())))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(other)?;
        // The log is not folded into the database when the last connection
        // closes: that checkpoint, and the new log the next process then
        // starts, synced the disk four times, most of the time of a one-check
        // process (`warden check`, `warden hook`). The log stays next to the
        // database, bounded by SQLite's automatic checkpoints (every 1000
        // pages), and every opener reads it. This setting belongs to the
        // connection; nothing of it is written to the file.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true).map_err(other)?;
        Ok(conn)
    }

    fn take(&self) -> Result<Connection, StorageError> {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        match idle {
            Some(conn) => Ok(conn),
            None => self.connect(),
        }
    }

    fn put_back(&self, conn: Connection) {
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE_CONNECTIONS
        {
            idle.push(conn);
        }
    }

    /// Runs `f` on a pooled connection; a connection that saw an error is
    /// closed rather than reused.
    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T, StorageError>) -> Result<T, StorageError> {
        let mut conn = self.take()?;
        let result = f(&mut conn);
        if !matches!(result, Err(StorageError::Unavailable(_) | StorageError::Other(_))) {
            self.put_back(conn);
        }
        result
    }

    /// Runs `f` in an immediate transaction on a pooled connection.
    fn write<T>(
        &self,
        f: impl FnOnce(rusqlite::Transaction<'_>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        self.with(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(other)?;
            f(tx)
        })
    }

    fn current_version(conn: &Connection, namespace: &str, key: &str) -> Result<Option<u64>, StorageError> {
        let mut stmt = conn.prepare_cached(VERSION).map_err(other)?;
        stmt.query_row(params![namespace, key], |row| row.get::<_, i64>(0))
            .optional()
            .map(|v| v.map(|v| v as u64))
            .map_err(other)
    }

    fn upsert(conn: &Connection, namespace: &str, key: &str, value: &[u8], version: u64) -> Result<(), StorageError> {
        let mut stmt = conn.prepare_cached(UPSERT).map_err(other)?;
        stmt.execute(params![namespace, key, value, version as i64]).map(|_| ()).map_err(other)
    }

    fn remove(conn: &Connection, namespace: &str, key: &str) -> Result<(), StorageError> {
        let mut stmt = conn.prepare_cached(DELETE).map_err(other)?;
        stmt.execute(params![namespace, key]).map(|_| ()).map_err(other)
    }

    fn holds(current: Option<u64>, when: Condition) -> bool {
        match when {
            Condition::Any => true,
            Condition::Absent => current.is_none(),
            Condition::Version(v) => current == Some(v),
        }
    }
}

impl Storage for SqliteStorage {
    fn get(&self, namespace: &str, key: &str) -> Result<Option<Record>, StorageError> {
        check_key(namespace, key)?;
        self.with(|conn| {
            let mut stmt = conn.prepare_cached(GET).map_err(other)?;
            stmt.query_row(params![namespace, key], |row| {
                Ok(Record { value: row.get(0)?, version: row.get::<_, i64>(1)? as u64 })
            })
            .optional()
            .map_err(other)
        })
    }

    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        check_key(namespace, key)?;
        if value.len() > MAX_VALUE_BYTES {
            return Err(StorageError::TooLarge);
        }
        self.write(|tx| {
            let current = Self::current_version(&tx, namespace, key)?;
            if !Self::holds(current, when) {
                return Err(StorageError::Conflict);
            }
            let version = current.map_or(1, |v| v + 1);
            Self::upsert(&tx, namespace, key, value, version)?;
            tx.commit().map_err(other)?;
            Ok(version)
        })
    }

    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        check_key(namespace, key)?;
        self.write(|tx| {
            let current = Self::current_version(&tx, namespace, key)?;
            if !Self::holds(current, when) {
                return Err(StorageError::Conflict);
            }
            if current.is_none() {
                return Ok(false);
            }
            Self::remove(&tx, namespace, key)?;
            tx.commit().map_err(other)?;
            Ok(true)
        })
    }

    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Record)>, StorageError> {
        check_key(namespace, prefix)?;
        let limit = limit.min(MAX_LIST);
        let order = if reverse { "DESC" } else { "ASC" };
        self.with(|conn| {
            let sql = format!(
                "SELECT key, value, version FROM records
                 WHERE namespace = ?1 AND key >= ?2 AND (?3 IS NULL OR key < ?3)
                 ORDER BY key {order} LIMIT ?4"
            );
            let mut stmt = conn.prepare_cached(&sql).map_err(other)?;
            let rows = stmt
                .query_map(params![namespace, prefix, prefix_end(prefix), limit], |row| {
                    Ok((row.get::<_, String>(0)?, Record { value: row.get(1)?, version: row.get::<_, i64>(2)? as u64 }))
                })
                .map_err(other)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(other)
        })
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        if writes.len() > MAX_BATCH_WRITES {
            return Err(BatchError::Failed(StorageError::TooLarge));
        }
        for write in writes {
            let (namespace, key) = write.namespace_and_key();
            check_key(namespace, key).map_err(BatchError::Failed)?;
            if let Write::Put { value, .. } = write
                && value.len() > MAX_VALUE_BYTES
            {
                return Err(BatchError::Failed(StorageError::TooLarge));
            }
        }
        // One immediate transaction: a failed condition or any error drops it
        // uncommitted, so nothing of the batch is written.
        let outcome = self.write(|tx| {
            for (i, write) in writes.iter().enumerate() {
                let (namespace, key) = write.namespace_and_key();
                let current = Self::current_version(&tx, namespace, key)?;
                let when = match write {
                    Write::Put { when, .. } | Write::Remove { when, .. } => *when,
                };
                if !Self::holds(current, when) {
                    return Ok(Err(i as u32));
                }
                match write {
                    Write::Put { value, .. } => Self::upsert(&tx, namespace, key, value, current.map_or(1, |v| v + 1))?,
                    Write::Remove { .. } if current.is_some() => Self::remove(&tx, namespace, key)?,
                    Write::Remove { .. } => {}
                }
            }
            tx.commit().map_err(other)?;
            Ok(Ok(()))
        });
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(i)) => Err(BatchError::Conflict(i)),
            Err(e) => Err(BatchError::Failed(e)),
        }
    }
}

pub use crate::storage_postgres::{PostgresStorage, is_database_url};

/// Opens the storage `spec` names: a `postgres://…` or `postgresql://…` URL
/// is a PostgreSQL database shared by several gateways
/// ([`PostgresStorage`]); anything else is the path of a SQLite file
/// ([`SqliteStorage`]).
pub fn open(spec: &str) -> Result<std::sync::Arc<dyn Storage>, StorageError> {
    if is_database_url(spec) {
        Ok(std::sync::Arc::new(PostgresStorage::connect(spec)?))
    } else {
        Ok(std::sync::Arc::new(SqliteStorage::open(spec)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_db() -> (tempfile::TempDir, SqliteStorage) {
        let dir = tempfile::tempdir();
        let dir = match dir {
            Ok(d) => d,
            Err(e) => unreachable!("temp dir: {e}"),
        };
        match SqliteStorage::open(dir.path().join("t.db")) {
            Ok(s) => (dir, s),
            Err(e) => unreachable!("open failed: {e}"),
        }
    }

    #[test]
    fn threads_creating_one_new_database_at_once_share_it_and_lose_nothing() {
        const THREADS: usize = 6;
        const WRITES: usize = 20;
        for round in 0..8 {
            let dir = match tempfile::tempdir() {
                Ok(d) => d,
                Err(e) => unreachable!("temp dir: {e}"),
            };
            let file = dir.path().join("warden.db");
            let gate = std::sync::Arc::new(std::sync::Barrier::new(THREADS));
            let threads: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (file, gate) = (file.clone(), gate.clone());
                    std::thread::spawn(move || -> Result<usize, String> {
                        gate.wait();
                        let s = SqliteStorage::open(&file).map_err(|e| format!("open: {e}"))?;
                        for i in 0..WRITES {
                            let key = format!("t{t}/{i}");
                            s.set("n", &key, key.as_bytes(), Condition::Absent)
                                .map_err(|e| format!("set {key}: {e}"))?;
                        }
                        Ok(WRITES)
                    })
                })
                .collect();
            for t in threads {
                assert_eq!(
                    t.join().map_err(|_| "thread panicked".to_string()).and_then(|r| r),
                    Ok(WRITES),
                    "round {round}"
                );
            }
            let s = match SqliteStorage::open(&file) {
                Ok(s) => s,
                Err(e) => unreachable!("reopen: {e}"),
            };
            assert_eq!(s.list("n", "", 10_000, false).map(|r| r.len()), Ok(THREADS * WRITES), "round {round}");
            let left: Vec<String> = std::fs::read_dir(dir.path())
                .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                .unwrap_or_default();
            assert!(left.iter().all(|f| !f.contains(".new")), "round {round}: no temporary database left: {left:?}");
        }
    }

    #[test]
    fn compare_and_swap_honours_each_condition() {
        let (_d, s) = temp_db();
        assert_eq!(s.set("n", "k", b"a", Condition::Absent), Ok(1));
        assert_eq!(s.set("n", "k", b"b", Condition::Absent), Err(StorageError::Conflict));
        assert_eq!(s.set("n", "k", b"b", Condition::Version(2)), Err(StorageError::Conflict));
        assert_eq!(s.set("n", "k", b"b", Condition::Version(1)), Ok(2));
        assert_eq!(s.set("n", "k", b"c", Condition::Any), Ok(3));
        assert_eq!(s.get("n", "k"), Ok(Some(Record { value: b"c".to_vec(), version: 3 })));
        assert_eq!(s.delete("n", "k", Condition::Version(2)), Err(StorageError::Conflict));
        assert_eq!(s.delete("n", "k", Condition::Version(3)), Ok(true));
        assert_eq!(s.delete("n", "k", Condition::Any), Ok(false));
        assert_eq!(s.get("n", "k"), Ok(None));
    }

    #[test]
    fn list_matches_prefixes_exactly_with_case_and_orders_both_ways() {
        let (_d, s) = temp_db();
        for k in ["a_1", "a_2", "ab", "a%", "b", "A_9", "a_\u{10FFFF}x", "\u{10FFFF}", "\u{10FFFF}z"] {
            assert!(s.set("n", k, k.as_bytes(), Condition::Any).is_ok());
        }
        assert!(s.set("other", "a_3", b"x", Condition::Any).is_ok());
        let keys = |r: Result<Vec<(String, Record)>, StorageError>| -> Vec<String> {
            r.unwrap_or_default().into_iter().map(|(k, _)| k).collect()
        };
        assert_eq!(keys(s.list("n", "a_", 10, false)), ["a_1", "a_2", "a_\u{10FFFF}x"]);
        assert_eq!(keys(s.list("n", "a_", 10, true)), ["a_\u{10FFFF}x", "a_2", "a_1"]);
        assert_eq!(keys(s.list("n", "a%", 10, false)), ["a%"]);
        assert_eq!(keys(s.list("n", "", 2, false)), ["A_9", "a%"]);
        assert_eq!(keys(s.list("n", "\u{10FFFF}", 10, false)), ["\u{10FFFF}", "\u{10FFFF}z"]);
        assert_eq!(keys(s.list("n", "", 100, false)).len(), 9);
    }

    fn put(key: &str, value: &[u8], when: Condition) -> Write {
        Write::Put { namespace: "n".into(), key: key.into(), value: value.to_vec(), when }
    }

    #[test]
    fn a_batch_commits_whole_or_names_the_write_whose_condition_failed() {
        let (_d, s) = temp_db();
        assert_eq!(s.set("n", "a", b"1", Condition::Any), Ok(1));
        let torn = [
            put("b", b"2", Condition::Absent),
            put("a", b"3", Condition::Version(1)),
            put("a", b"4", Condition::Version(1)),
        ];
        assert_eq!(s.commit(&torn), Err(BatchError::Conflict(2)));
        assert_eq!(s.get("n", "b"), Ok(None));
        assert_eq!(s.get("n", "a").map(|r| r.map(|r| r.version)), Ok(Some(1)));
        let chained = [
            put("b", b"2", Condition::Absent),
            put("a", b"3", Condition::Version(1)),
            put("a", b"4", Condition::Version(2)),
            Write::Remove { namespace: "n".into(), key: "gone".into(), when: Condition::Any },
        ];
        assert_eq!(s.commit(&chained), Ok(()));
        assert_eq!(s.get("n", "a"), Ok(Some(Record { value: b"4".to_vec(), version: 3 })));
        let gone = Write::Remove { namespace: "n".into(), key: "gone".into(), when: Condition::Version(1) };
        assert_eq!(s.commit(&[gone]), Err(BatchError::Conflict(0)));
    }

    #[test]
    fn a_batch_is_capped_at_exactly_its_write_limit() {
        let (_d, s) = temp_db();
        let writes =
            |n: usize| -> Vec<Write> { (0..n).map(|i| put(&format!("k{i}"), b"v", Condition::Absent)).collect() };
        assert_eq!(s.commit(&writes(MAX_BATCH_WRITES + 1)), Err(BatchError::Failed(StorageError::TooLarge)));
        assert_eq!(s.list("n", "", 10, false).map(|r| r.len()), Ok(0));
        assert_eq!(s.commit(&writes(MAX_BATCH_WRITES)), Ok(()));
        let big = vec![0u8; MAX_VALUE_BYTES + 1];
        assert_eq!(
            s.commit(&[put("x", b"1", Condition::Any), put("big", &big, Condition::Any)]),
            Err(BatchError::Failed(StorageError::TooLarge))
        );
        assert_eq!(s.get("n", "x"), Ok(None));
    }

    #[test]
    fn a_failure_inside_sqlite_in_the_middle_of_a_batch_rolls_it_back() {
        let (d, s) = temp_db();
        let conn = Connection::open(d.path().join("t.db")).unwrap_or_else(|e| unreachable!("open: {e}"));
        let trigger = "CREATE TRIGGER boom BEFORE INSERT ON records WHEN NEW.key = 'c'
                       BEGIN SELECT RAISE(ABORT, 'injected failure'); END;";
        assert!(conn.execute_batch(trigger).is_ok());
        let batch = [put("a", b"1", Condition::Any), put("b", b"2", Condition::Any), put("c", b"3", Condition::Any)];
        assert!(
            matches!(s.commit(&batch), Err(BatchError::Failed(StorageError::Other(m))) if m.contains("injected failure"))
        );
        assert_eq!(s.list("n", "", 10, false).map(|r| r.len()), Ok(0), "nothing of the batch is visible");
        assert!(conn.execute_batch("DROP TRIGGER boom;").is_ok());
        assert_eq!(s.commit(&batch), Ok(()));
        assert_eq!(s.list("n", "", 10, false).map(|r| r.len()), Ok(3));
    }

    #[test]
    fn reads_see_the_last_commit_and_do_not_wait_while_another_writer_holds_its_transaction_open() {
        let (d, s) = temp_db();
        assert_eq!(s.set("n", "k", b"committed", Condition::Any), Ok(1));
        let mut writer = Connection::open(d.path().join("t.db")).unwrap_or_else(|e| unreachable!("open: {e}"));
        let tx = writer
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .unwrap_or_else(|e| unreachable!("begin: {e}"));
        assert!(tx.execute("UPDATE records SET value = x'00', version = 2 WHERE key = 'k'", []).is_ok());
        let started = std::time::Instant::now();
        for _ in 0..100 {
            assert_eq!(s.get("n", "k"), Ok(Some(Record { value: b"committed".to_vec(), version: 1 })));
        }
        assert_eq!(s.list("n", "", 10, false).map(|r| r.len()), Ok(1));
        // A read that waited for the writer would have met the busy timeout.
        assert!(started.elapsed() < BUSY_TIMEOUT, "reads waited for the open write");
        assert!(tx.commit().is_ok());
        assert_eq!(s.get("n", "k").map(|r| r.map(|r| r.version)), Ok(Some(2)));
    }

    #[test]
    fn concurrent_compare_and_swap_writers_of_one_process_lose_no_update() {
        let (_d, s) = temp_db();
        const THREADS: usize = 8;
        const EACH: usize = 25;
        std::thread::scope(|scope| {
            for _ in 0..THREADS {
                scope.spawn(|| {
                    for _ in 0..EACH {
                        loop {
                            let current = s.get("n", "counter").ok().flatten();
                            let (n, when) = match &current {
                                Some(r) => (
                                    String::from_utf8_lossy(&r.value).parse::<u64>().unwrap_or(0),
                                    Condition::Version(r.version),
                                ),
                                None => (0, Condition::Absent),
                            };
                            match s.set("n", "counter", (n + 1).to_string().as_bytes(), when) {
                                Ok(_) => break,
                                Err(StorageError::Conflict) => continue,
                                Err(e) => unreachable!("set failed: {e}"),
                            }
                        }
                    }
                });
            }
        });
        let total = (THREADS * EACH) as u64;
        assert_eq!(s.get("n", "counter"), Ok(Some(Record { value: total.to_string().into_bytes(), version: total })));
    }

    #[test]
    fn oversized_values_are_refused_and_nothing_is_written() {
        let (_d, s) = temp_db();
        let big = vec![0u8; MAX_VALUE_BYTES + 1];
        assert_eq!(s.set("n", "k", &big, Condition::Any), Err(StorageError::TooLarge));
        assert_eq!(s.get("n", "k"), Ok(None));
        let exact = vec![0u8; MAX_VALUE_BYTES];
        assert_eq!(s.set("n", "k", &exact, Condition::Any), Ok(1));
    }
}
