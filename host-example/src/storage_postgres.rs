//! The `storage` import on PostgreSQL: one database shared by several
//! gateways (`--storage postgres://…`).
//!
//! Same records, versions, conditions, limits and all-or-nothing batches as
//! [`SqliteStorage`](crate::storage::SqliteStorage). Keys are `bytea`, so
//! prefix listing is a key range in byte order, the order SQLite's binary
//! collation gives (UTF-8 byte order is code point order), whatever the
//! database's collation.
//!
//! Atomicity: every write runs in ONE transaction at READ COMMITTED that
//! locks each existing row it tests (`SELECT … FOR UPDATE`) before testing
//! its condition, and inserts an absent row with a plain `INSERT`, so two
//! gateways that both saw a key absent cannot both create it: the second
//! meets the primary key, its transaction is rolled back and run again from
//! the start, and then sees the first one's row. A deadlock between two
//! batches is rolled back by PostgreSQL and run again the same way, at most
//! [`MAX_TRANSACTION_ATTEMPTS`] times. A failure at or after `COMMIT` is
//! never run again (its outcome is unknown): it is `unavailable`.
//!
//! Bounded waits: every call has [`OPERATION_DEADLINE`] from start to answer,
//! counted on this side (a paused or unreachable server cannot hold a caller
//! longer), and then fails as `unavailable`; the connection it used is
//! dropped, never reused. The server also ends statements and lock waits of
//! its own after [`STATEMENT_TIMEOUT`] and sessions left idle inside a
//! transaction after [`IDLE_IN_TRANSACTION_TIMEOUT`], so a gateway that
//! stops in the middle of a transaction does not hold rows for the others.
//!
//! The client is `tokio-postgres` with a `deadpool-postgres` pool on a small
//! runtime of its own: callers block on a channel, never on a runtime, so the
//! storage can be called from any thread, inside another runtime or not.

use crate::storage::{
    BatchError, Condition, MAX_BATCH_WRITES, MAX_KEY_BYTES, MAX_LIST, MAX_VALUE_BYTES, Record, Storage, StorageError,
    Write,
};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use std::future::Future;
use std::time::Duration;
use tokio_postgres::NoTls;
use tokio_postgres::error::SqlState;

/// How long one storage call may take in all, connecting included, before it
/// fails as `unavailable`.
pub const OPERATION_DEADLINE: Duration = Duration::from_secs(3);
/// How long connecting to the server may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The server's own bound on one statement, lock waits included.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(3);
/// The server ends a session left idle inside a transaction this long.
pub const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(10);
/// Most connections one process keeps to the server.
pub const MAX_CONNECTIONS: usize = 16;
/// Most times one write transaction runs when PostgreSQL rolls it back for a
/// deadlock, a serialization failure or a key another gateway created first.
pub const MAX_TRANSACTION_ATTEMPTS: u32 = 8;
/// After a call met [`OPERATION_DEADLINE`], how long later calls fail at once
/// as `unavailable`, so a check that reads several records waits for the
/// server once, not once per record.
pub const FAIL_FAST: Duration = Duration::from_secs(2);
/// Worker threads of the client's own runtime.
const CLIENT_THREADS: usize = 2;
/// The schema this host knows; each entry is applied once, in order, and
/// recorded in `warden_migrations`.
const MIGRATIONS: &[(i32, &str)] = &[(
    1,
    "CREATE TABLE warden_records (
        namespace bytea NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (namespace, key)
    );
    CREATE TABLE warden_host (
        name text PRIMARY KEY,
        value bytea NOT NULL
    );",
)];
/// The advisory lock that serializes migrations of several hosts starting together (`WDN1`).
const MIGRATION_LOCK: i64 = 0x5744_4e31;

const GET: &str = "SELECT value, version FROM warden_records WHERE namespace = $1 AND key = $2";
const LOCK: &str = "SELECT version FROM warden_records WHERE namespace = $1 AND key = $2 FOR UPDATE";
const INSERT: &str = "INSERT INTO warden_records (namespace, key, value, version) VALUES ($1, $2, $3, 1)";
const UPDATE: &str = "UPDATE warden_records SET value = $3, version = $4 WHERE namespace = $1 AND key = $2";
const DELETE: &str = "DELETE FROM warden_records WHERE namespace = $1 AND key = $2";

/// Whether `spec` names a PostgreSQL database rather than a SQLite file.
pub fn is_database_url(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

/// Records in a PostgreSQL database.
pub struct PostgresStorage {
    runtime: Option<tokio::runtime::Runtime>,
    pool: Pool,
    shown: String,
    /// When a call last met the deadline; until [`FAIL_FAST`] after it, calls
    /// fail at once instead of each waiting out its own deadline.
    timed_out: std::sync::Mutex<Option<std::time::Instant>>,
}

impl Drop for PostgresStorage {
    fn drop(&mut self) {
        // Dropping a runtime inside another one would panic; this never waits.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Why a transaction attempt ended without an answer.
enum Failure {
    /// PostgreSQL rolled it back and it may run again.
    Retry,
    /// The storage failed; the connection may be broken.
    Failed(StorageError),
}

fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    }
}

/// The typed error of a PostgreSQL error: `unavailable` for the server, the
/// network, timeouts and cancellation, `too-large` for PostgreSQL's own
/// limits, `other` for the rest.
fn classify(e: &tokio_postgres::Error) -> StorageError {
    let Some(code) = e.code() else {
        return StorageError::Unavailable(format!("the PostgreSQL connection failed: {e}"));
    };
    let class = &code.code()[..2];
    if *code == SqlState::PROGRAM_LIMIT_EXCEEDED {
        return StorageError::TooLarge;
    }
    // 08 connection, 53 resources, 57 operator intervention (shutdown,
    // terminated backend, canceled statement), 55P03 lock wait, 40 rollback.
    if matches!(class, "08" | "53" | "57" | "58" | "40") || *code == SqlState::LOCK_NOT_AVAILABLE {
        return StorageError::Unavailable(describe(e));
    }
    StorageError::Other(describe(e))
}

fn retryable(e: &tokio_postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE
            || *c == SqlState::T_R_DEADLOCK_DETECTED
            || *c == SqlState::UNIQUE_VIOLATION
    )
}

fn holds(current: Option<u64>, when: Condition) -> bool {
    match when {
        Condition::Any => true,
        Condition::Absent => current.is_none(),
        Condition::Version(v) => current == Some(v),
    }
}

/// The smallest byte string greater than every one that starts with
/// `prefix`; `None` when there is none (empty, or all `0xff`).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

fn check_key(namespace: &str, key: &str) -> Result<(), StorageError> {
    if namespace.len() > MAX_KEY_BYTES || key.len() > MAX_KEY_BYTES {
        return Err(StorageError::TooLarge);
    }
    Ok(())
}

/// One write, run inside an open transaction: the version it left (0 when
/// it removed), or `None` when its condition does not hold.
async fn apply(tx: &deadpool_postgres::Transaction<'_>, write: &Write) -> Result<Option<u64>, tokio_postgres::Error> {
    let (namespace, key, when) = match write {
        Write::Put { namespace, key, when, .. } | Write::Remove { namespace, key, when } => (namespace, key, *when),
    };
    let (ns, k) = (namespace.as_bytes(), key.as_bytes());
    let lock = tx.prepare_cached(LOCK).await?;
    let current = tx.query_opt(&lock, &[&ns, &k]).await?.map(|row| row.get::<_, i64>(0) as u64);
    if !holds(current, when) {
        return Ok(None);
    }
    Ok(Some(match (write, current) {
        (Write::Put { value, .. }, None) => {
            let insert = tx.prepare_cached(INSERT).await?;
            tx.execute(&insert, &[&ns, &k, value]).await?;
            1
        }
        (Write::Put { value, .. }, Some(v)) => {
            let update = tx.prepare_cached(UPDATE).await?;
            let next = (v + 1) as i64;
            tx.execute(&update, &[&ns, &k, value, &next]).await?;
            v + 1
        }
        (Write::Remove { .. }, Some(_)) => {
            let delete = tx.prepare_cached(DELETE).await?;
            tx.execute(&delete, &[&ns, &k]).await?;
            0
        }
        (Write::Remove { .. }, None) => 0,
    }))
}

/// What a write transaction ended with.
enum Outcome {
    /// Committed; the version the last write left (0 when it removed).
    Committed(u64),
    /// The condition of the write at this index did not hold; nothing written.
    Conflict(u32),
}

/// One attempt of a write transaction over `writes`.
async fn attempt(client: &mut Object, writes: &[Write]) -> Result<Outcome, Failure> {
    let before = |e: tokio_postgres::Error| if retryable(&e) { Failure::Retry } else { Failure::Failed(classify(&e)) };
    let tx = client.transaction().await.map_err(before)?;
    let mut version = 0;
    for (i, write) in writes.iter().enumerate() {
        match apply(&tx, write).await.map_err(before)? {
            Some(v) => version = v,
            None => {
                tx.rollback().await.map_err(|e| Failure::Failed(classify(&e)))?;
                return Ok(Outcome::Conflict(i as u32));
            }
        }
    }
    // The outcome of a failed COMMIT is unknown: never run again.
    tx.commit().await.map_err(|e| Failure::Failed(classify(&e)))?;
    Ok(Outcome::Committed(version))
}

impl PostgresStorage {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`),
    /// creating or migrating Warden's tables. Refused, as `unavailable`: a URL
    /// that does not parse, a server that does not answer within
    /// [`OPERATION_DEADLINE`], and a database a newer Warden migrated.
    pub fn connect(url: &str) -> Result<PostgresStorage, StorageError> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
            StorageError::Unavailable(format!(
                "`--storage` is not a PostgreSQL URL ({e}); expected postgres://user:password@host:port/database"
            ))
        })?;
        let shown = shown(&config);
        config.connect_timeout(CONNECT_TIMEOUT);
        config.keepalives_idle(Duration::from_secs(10));
        config.application_name("warden");
        config.options(format!(
            "-c statement_timeout={} -c lock_timeout={} -c idle_in_transaction_session_timeout={}",
            STATEMENT_TIMEOUT.as_millis(),
            STATEMENT_TIMEOUT.as_millis(),
            IDLE_IN_TRANSACTION_TIMEOUT.as_millis()
        ));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(CLIENT_THREADS)
            .thread_name("warden-postgres")
            .enable_all()
            .build()
            .map_err(|e| StorageError::Unavailable(format!("cannot start the PostgreSQL client: {e}")))?;
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = {
            let _inside = runtime.enter();
            Pool::builder(manager)
                .max_size(MAX_CONNECTIONS)
                .build()
                .map_err(|e| StorageError::Unavailable(format!("cannot make the PostgreSQL pool: {e}")))?
        };
        let storage = PostgresStorage { runtime: Some(runtime), pool, shown, timed_out: std::sync::Mutex::new(None) };
        storage.run(|mut client| async move { migrate(&mut client).await.map(|()| (client, Ok(()))) })??;
        Ok(storage)
    }

    /// Host, port and database, without the password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The value stored under `name` in the host's own table, storing
    /// `candidate` first when there is none: one value for every gateway.
    pub fn shared_value(&self, name: &str, candidate: &[u8]) -> Result<Vec<u8>, StorageError> {
        let (name, candidate) = (name.to_string(), candidate.to_vec());
        self.run(move |client| async move {
            client
                .execute(
                    "INSERT INTO warden_host (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                    &[&name, &candidate],
                )
                .await
                .map_err(|e| classify(&e))?;
            let row = client
                .query_one("SELECT value FROM warden_host WHERE name = $1", &[&name])
                .await
                .map_err(|e| classify(&e))?;
            Ok((client, row.get::<_, Vec<u8>>(0)))
        })
    }

    /// Runs `work` on a pooled connection on the client's runtime, within
    /// [`OPERATION_DEADLINE`]. `work` hands the connection back on success;
    /// on an error or at the deadline it is dropped, not reused.
    fn run<T, F, Fut>(&self, work: F) -> Result<T, StorageError>
    where
        T: Send + 'static,
        F: FnOnce(Object) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(Object, T), StorageError>> + Send + 'static,
    {
        let Some(runtime) = &self.runtime else {
            return Err(StorageError::Unavailable("the PostgreSQL client is shut down".into()));
        };
        let recently = self.timed_out.lock().ok().and_then(|t| *t).filter(|t| t.elapsed() < FAIL_FAST);
        if recently.is_some() {
            return Err(StorageError::Unavailable(format!(
                "PostgreSQL at {} did not answer within {} ms a moment ago",
                self.shown,
                OPERATION_DEADLINE.as_millis()
            )));
        }
        let pool = self.pool.clone();
        let shown = self.shown.clone();
        let (send, receive) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            let job = async {
                let client = pool
                    .get()
                    .await
                    .map_err(|e| StorageError::Unavailable(format!("cannot connect to PostgreSQL at {shown}: {e}")))?;
                work(client).await
            };
            let answer = match tokio::time::timeout(OPERATION_DEADLINE, job).await {
                Ok(Ok((client, value))) => {
                    drop(client);
                    Ok(value)
                }
                Ok(Err(e)) => Err(e),
                Err(_) => Err(StorageError::Unavailable(format!(
                    "PostgreSQL at {shown} did not answer within {} ms",
                    OPERATION_DEADLINE.as_millis()
                ))),
            };
            let _ = send.send(answer);
        });
        // The task answers by its deadline; the margin covers a busy runtime.
        let answer = receive.recv_timeout(OPERATION_DEADLINE + Duration::from_secs(1)).unwrap_or_else(|_| {
            Err(StorageError::Unavailable(format!(
                "PostgreSQL at {} did not answer within {} ms",
                self.shown,
                OPERATION_DEADLINE.as_millis()
            )))
        });
        let timed_out = matches!(&answer, Err(StorageError::Unavailable(m)) if m.contains("did not answer within"));
        if let Ok(mut last) = self.timed_out.lock() {
            *last = timed_out.then(std::time::Instant::now);
        }
        answer
    }

    /// Runs `writes` in one transaction, again from the start when
    /// PostgreSQL rolls it back for a retryable reason.
    fn transact(&self, writes: Vec<Write>) -> Result<Outcome, StorageError> {
        self.run(move |mut client| async move {
            for _ in 0..MAX_TRANSACTION_ATTEMPTS {
                match attempt(&mut client, &writes).await {
                    Ok(outcome) => return Ok((client, outcome)),
                    Err(Failure::Retry) => continue,
                    Err(Failure::Failed(e)) => {
                        // A connection that failed is detached from the pool.
                        drop(Object::take(client));
                        return Err(e);
                    }
                }
            }
            Err(StorageError::Unavailable(format!(
                "the write was rolled back by PostgreSQL {MAX_TRANSACTION_ATTEMPTS} times (deadlocks or concurrent \
                 creation); nothing of it was written"
            )))
        })
    }
}

fn shown(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or(""))
}

/// Applies the migrations this host knows and the database lacks, under an
/// advisory lock so hosts starting together migrate once.
async fn migrate(client: &mut Object) -> Result<(), StorageError> {
    let failed = |e: tokio_postgres::Error| match classify(&e) {
        StorageError::Other(m) => StorageError::Unavailable(format!("cannot migrate Warden's tables: {m}")),
        e => e,
    };
    let tx = client.transaction().await.map_err(failed)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await.map_err(failed)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS warden_migrations (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .await
    .map_err(failed)?;
    let row = tx.query_one("SELECT coalesce(max(version), 0) FROM warden_migrations", &[]).await.map_err(failed)?;
    let applied: i32 = row.get(0);
    let known = MIGRATIONS.last().map_or(0, |(v, _)| *v);
    if applied > known {
        return Err(StorageError::Unavailable(format!(
            "the PostgreSQL database was migrated by a newer Warden (schema {applied}; this one knows up to \
             {known}); run a Warden at least as new as the one that migrated it"
        )));
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > applied) {
        tx.batch_execute(sql).await.map_err(failed)?;
        tx.execute("INSERT INTO warden_migrations (version) VALUES ($1)", &[version]).await.map_err(failed)?;
    }
    tx.commit().await.map_err(failed)
}

impl Storage for PostgresStorage {
    fn over_network(&self) -> bool {
        true
    }

    fn get(&self, namespace: &str, key: &str) -> Result<Option<Record>, StorageError> {
        check_key(namespace, key)?;
        let (ns, k) = (namespace.as_bytes().to_vec(), key.as_bytes().to_vec());
        self.run(move |client| async move {
            let get = client.prepare_cached(GET).await.map_err(|e| classify(&e))?;
            let row = client.query_opt(&get, &[&ns, &k]).await.map_err(|e| classify(&e))?;
            let record = row.map(|r| Record { value: r.get(0), version: r.get::<_, i64>(1) as u64 });
            Ok((client, record))
        })
    }

    fn set(&self, namespace: &str, key: &str, value: &[u8], when: Condition) -> Result<u64, StorageError> {
        check_key(namespace, key)?;
        if value.len() > MAX_VALUE_BYTES {
            return Err(StorageError::TooLarge);
        }
        let write = Write::Put { namespace: namespace.into(), key: key.into(), value: value.to_vec(), when };
        match self.transact(vec![write])? {
            Outcome::Committed(version) => Ok(version),
            Outcome::Conflict(_) => Err(StorageError::Conflict),
        }
    }

    fn delete(&self, namespace: &str, key: &str, when: Condition) -> Result<bool, StorageError> {
        check_key(namespace, key)?;
        let (ns, k) = (namespace.as_bytes().to_vec(), key.as_bytes().to_vec());
        self.run(move |mut client| async move {
            let tx = client.transaction().await.map_err(|e| classify(&e))?;
            let lock = tx.prepare_cached(LOCK).await.map_err(|e| classify(&e))?;
            let current = tx.query_opt(&lock, &[&ns, &k]).await.map_err(|e| classify(&e))?.map(|r| r.get::<_, i64>(0));
            let answer = if !holds(current.map(|v| v as u64), when) {
                Err(StorageError::Conflict)
            } else if current.is_none() {
                Ok(false)
            } else {
                let delete = tx.prepare_cached(DELETE).await.map_err(|e| classify(&e))?;
                tx.execute(&delete, &[&ns, &k]).await.map_err(|e| classify(&e))?;
                Ok(true)
            };
            match answer {
                Ok(true) => tx.commit().await.map_err(|e| classify(&e))?,
                _ => tx.rollback().await.map_err(|e| classify(&e))?,
            }
            Ok((client, answer))
        })?
    }

    fn list(
        &self,
        namespace: &str,
        prefix: &str,
        limit: u32,
        reverse: bool,
    ) -> Result<Vec<(String, Record)>, StorageError> {
        check_key(namespace, prefix)?;
        let limit = i64::from(limit.min(MAX_LIST));
        let order = if reverse { "DESC" } else { "ASC" };
        let (ns, start) = (namespace.as_bytes().to_vec(), prefix.as_bytes().to_vec());
        let end = prefix_end(&start);
        self.run(move |client| async move {
            let rows = match &end {
                Some(end) => {
                    let sql = format!(
                        "SELECT key, value, version FROM warden_records
                         WHERE namespace = $1 AND key >= $2 AND key < $3 ORDER BY key {order} LIMIT $4"
                    );
                    let stmt = client.prepare_cached(&sql).await.map_err(|e| classify(&e))?;
                    client.query(&stmt, &[&ns, &start, end, &limit]).await
                }
                None => {
                    let sql = format!(
                        "SELECT key, value, version FROM warden_records
                         WHERE namespace = $1 AND key >= $2 ORDER BY key {order} LIMIT $3"
                    );
                    let stmt = client.prepare_cached(&sql).await.map_err(|e| classify(&e))?;
                    client.query(&stmt, &[&ns, &start, &limit]).await
                }
            }
            .map_err(|e| classify(&e))?;
            let mut listed = Vec::with_capacity(rows.len());
            for row in rows {
                let key = String::from_utf8(row.get::<_, Vec<u8>>(0))
                    .map_err(|_| StorageError::Other("a stored key is not UTF-8".into()))?;
                listed.push((key, Record { value: row.get(1), version: row.get::<_, i64>(2) as u64 }));
            }
            Ok((client, listed))
        })
    }

    fn commit(&self, writes: &[Write]) -> Result<(), BatchError> {
        if writes.len() > MAX_BATCH_WRITES {
            return Err(BatchError::Failed(StorageError::TooLarge));
        }
        for write in writes {
            let (namespace, key) = match write {
                Write::Put { namespace, key, .. } | Write::Remove { namespace, key, .. } => (namespace, key),
            };
            check_key(namespace, key).map_err(BatchError::Failed)?;
            if let Write::Put { value, .. } = write
                && value.len() > MAX_VALUE_BYTES
            {
                return Err(BatchError::Failed(StorageError::TooLarge));
            }
        }
        if writes.is_empty() {
            return Ok(());
        }
        match self.transact(writes.to_vec()) {
            Ok(Outcome::Committed(_)) => Ok(()),
            Ok(Outcome::Conflict(i)) => Err(BatchError::Conflict(i)),
            Err(e) => Err(BatchError::Failed(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_range_ends_after_the_last_byte_that_can_grow() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[b'a', 0xff, 0xff]), Some(b"b".to_vec()));
        assert_eq!(prefix_end(&[0xff]), None);
        assert_eq!(prefix_end(b""), None);
    }

    #[test]
    fn only_postgres_urls_name_a_database_server() {
        assert!(is_database_url("postgres://u@127.0.0.1:5432/warden"));
        assert!(is_database_url("postgresql://u@localhost/warden"));
        assert!(!is_database_url("warden.db"));
        assert!(!is_database_url("./postgres://x"));
    }

    #[test]
    fn an_unparsable_url_is_refused_as_unavailable_naming_the_expected_form() {
        let refused = PostgresStorage::connect("postgres://u@host:notaport/db");
        assert!(matches!(&refused, Err(StorageError::Unavailable(m)) if m.contains("postgres://user:password@host")));
    }
}
