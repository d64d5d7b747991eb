"""The host side of the `storage` import: versioned key-value records in SQLite.

Same schema and semantics as the Rust host (`host-example/src/storage.rs`), so
the plugin and the `warden` command can share one database file: one table
`records(namespace, key, value, version)`, WAL mode, compare-and-swap inside an
immediate transaction. Versions start at 1 and grow with every write. Every
failure is returned as a typed storage error; nothing here raises.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

# Largest value a record may hold, in bytes (1 MiB).
MAX_VALUE_BYTES = 1024 * 1024
# Longest namespace or key, in bytes.
MAX_KEY_BYTES = 1024
# Most records one `list` call returns.
MAX_LIST = 10_000
# How long a writer waits for another writer's lock, in seconds.
BUSY_TIMEOUT_S = 5.0
# Idle connections kept open for reuse.
MAX_IDLE_CONNECTIONS = 8
# Most writes one atomic batch may hold; a longer batch is refused as too large.
MAX_BATCH_WRITES = 256
# `PRAGMA application_id` of a Warden database (`WDN1`), as the Rust host writes it.
APPLICATION_ID = 0x57444E31
# `PRAGMA user_version` of the schema this host writes; a greater one is a newer Warden's.
SCHEMA_VERSION = 1

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS records ("
    " namespace TEXT NOT NULL,"
    " key TEXT NOT NULL,"
    " value BLOB NOT NULL,"
    " version INTEGER NOT NULL,"
    " PRIMARY KEY (namespace, key)"
    ") WITHOUT ROWID"
)

# SQLite result codes that mean the store cannot be reached, as opposed to a bad request.
_UNAVAILABLE_CODES = {
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_CANTOPEN",
    "SQLITE_NOTADB",
    "SQLITE_CORRUPT",
    "SQLITE_IOERR",
    "SQLITE_READONLY",
    "SQLITE_FULL",
}


@dataclass(frozen=True)
class Unavailable:
    """The store cannot be reached or opened."""

    message: str


@dataclass(frozen=True)
class Conflict:
    """The condition did not hold; nothing was written."""


@dataclass(frozen=True)
class TooLarge:
    """The value, key or namespace exceeds the limits."""


@dataclass(frozen=True)
class Other:
    """Anything else."""

    message: str


StorageError = Union[Unavailable, Conflict, TooLarge, Other]

# A write condition: "any", "absent", or an int (exactly this version).
Condition = Union[str, int]


@dataclass(frozen=True)
class Put:
    """Set a key if the condition holds (one write of a batch)."""

    namespace: str
    key: str
    value: bytes
    when: Condition


@dataclass(frozen=True)
class Remove:
    """Delete a key if the condition holds; an absent key conflicts only under a version."""

    namespace: str
    key: str
    when: Condition


Write = Union[Put, Remove]


class _Failed(Exception):
    def __init__(self, error: StorageError):
        super().__init__(str(error))
        self.error = error


def _classify(e: Exception) -> StorageError:
    name = getattr(e, "sqlite_errorname", "") or ""
    base = name.split("_", 2)
    base_name = "_".join(base[:2]) if len(base) >= 2 else name
    if base_name in _UNAVAILABLE_CODES or isinstance(e, sqlite3.OperationalError) and not name:
        return Unavailable(str(e))
    return Other(str(e))


def _holds(current: Optional[int], when: Condition) -> bool:
    if when == "any":
        return True
    if when == "absent":
        return current is None
    return current == when


def _check_key(namespace: str, key: str) -> None:
    if len(namespace.encode("utf-8")) > MAX_KEY_BYTES or len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise _Failed(TooLarge())


def _like_prefix(prefix: str) -> str:
    out = []
    for c in prefix:
        if c in "%_\\":
            out.append("\\")
        out.append(c)
    out.append("%")
    return "".join(out)


class SqliteStorage:
    """Versioned records in one SQLite file, shared safely by threads and processes."""

    def __init__(self, path: str):
        self.path = path
        self._idle: List[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def open(self) -> Optional[StorageError]:
        """Opens Warden's database, creating it only where no file exists; returns an error if that fails.

        Refused, with a message naming the file and what to do, as the Rust host
        refuses them: an empty (0-byte) file, a file that is not SQLite, a
        database that is not Warden's (another application id, or other tables)
        and one of a newer schema (user version above SCHEMA_VERSION). An
        unmarked database of an earlier Warden (only the `records` table) is
        marked and used."""
        shown = self.path
        try:
            parent = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(parent, exist_ok=True)
        except OSError as e:
            return Unavailable(f"cannot create {parent}: {e}")
        if os.path.isdir(self.path):
            return Unavailable(f"the database `{shown}` is a folder; configure a file path")
        if not os.path.exists(self.path):
            error = self._create()
            if error is not None:
                return error
        elif os.path.getsize(self.path) == 0:
            return Unavailable(
                f"the database `{shown}` is empty (0 bytes), so its pins, approvals, consents and opt-outs are "
                "gone or were never there; restore it from a backup, or delete the file to start a new database"
            )
        try:
            # The marks are read on a bare connection: a foreign file is refused unchanged.
            conn = self._connect(bare=True)
        except _Failed as f:
            return f.error
        try:
            error = self._check_schema(conn)
        except sqlite3.Error as e:
            error = Unavailable(
                f"the database `{shown}` cannot be read as SQLite ({e}); it is damaged or not a database: restore "
                "it from a backup, or configure Warden's database or a path where no file exists"
            )
        conn.close()
        if error is not None:
            return error
        try:
            self._put_back(self._connect())
        except _Failed as f:
            return f.error
        return None

    def _create(self) -> Optional[StorageError]:
        """Builds a new database under a temporary name and links it into place only where no file exists."""
        temp = f"{os.path.join(os.path.dirname(os.path.abspath(self.path)), '.' + os.path.basename(self.path))}.{os.getpid()}.{time.time_ns()}.new"
        try:
            conn = sqlite3.connect(temp, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("BEGIN")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute(_SCHEMA)
            conn.execute("COMMIT")
            conn.close()
            try:
                os.link(temp, self.path)
            except FileExistsError:
                pass  # another process created it first: use theirs
            return None
        except (sqlite3.Error, OSError, ValueError) as e:
            return Unavailable(f"cannot create the database `{self.path}`: {e}")
        finally:
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.remove(temp + suffix)
                except (OSError, ValueError):
                    pass

    def _check_schema(self, conn: sqlite3.Connection) -> Optional[StorageError]:
        shown = self.path
        application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        user_version = int(conn.execute("PRAGMA user_version").fetchone()[0])

        def foreign(what: str) -> StorageError:
            return Unavailable(
                f"the database `{shown}` is not Warden's ({what}); Warden does not write to another program's "
                "database: configure Warden's database or a path where no file exists"
            )

        if application_id == APPLICATION_ID:
            if user_version > SCHEMA_VERSION:
                return Unavailable(
                    f"the database `{shown}` was written by a newer Warden (schema {user_version}; this one knows up "
                    f"to {SCHEMA_VERSION}); run a Warden at least as new as the one that wrote it"
                )
            conn.execute(_SCHEMA)
            return None
        if application_id != 0:
            return foreign(f"its application id is {application_id & 0xFFFFFFFF:#010x}")
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        columns = [r[0] for r in conn.execute("SELECT name FROM pragma_table_info('records') ORDER BY cid")]
        if tables != ["records"] or columns != ["namespace", "key", "value", "version"] or user_version != 0:
            if not tables:
                return foreign(f"it has no Warden mark and no tables, user version {user_version}")
            return foreign("it has no Warden mark, and tables " + ", ".join(f"`{t}`" for t in tables[:5]))
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
        return None

    def _connect(self, bare: bool = False) -> sqlite3.Connection:
        try:
            # mode=rw: a database that vanished is an error, never silently a new empty one.
            uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=rw"
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
            # WAL lets readers proceed during a write; NORMAL sync is durable
            # across application crashes, which is what a policy ledger needs.
            if not bare:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            return conn
        except (sqlite3.Error, ValueError, OSError) as e:
            raise _Failed(Unavailable(str(e))) from e

    def _take(self) -> sqlite3.Connection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def _put_back(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE_CONNECTIONS:
                self._idle.append(conn)
                return
        conn.close()

    def _with(self, f):
        """Runs `f(conn)` on a pooled connection; returns (value, None) or (None, error).
        A connection that saw an unexpected error is closed rather than reused."""
        try:
            conn = self._take()
        except _Failed as failed:
            return None, failed.error
        try:
            value = f(conn)
        except _Failed as failed:
            if conn.in_transaction:
                conn.rollback()
            self._put_back(conn)
            return None, failed.error
        except sqlite3.Error as e:
            try:
                conn.close()
            except sqlite3.Error:
                pass
            return None, _classify(e)
        self._put_back(conn)
        return value, None

    @staticmethod
    def _current_version(conn: sqlite3.Connection, namespace: str, key: str) -> Optional[int]:
        row = conn.execute(
            "SELECT version FROM records WHERE namespace = ? AND key = ?", (namespace, key)
        ).fetchone()
        return None if row is None else int(row[0])

    def get(self, namespace: str, key: str) -> Tuple[Optional[Tuple[bytes, int]], Optional[StorageError]]:
        """(value, version) of one key, None if absent; or an error."""
        try:
            _check_key(namespace, key)
        except _Failed as f:
            return None, f.error

        def run(conn):
            row = conn.execute(
                "SELECT value, version FROM records WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
            return None if row is None else (bytes(row[0]), int(row[1]))

        return self._with(run)

    def set(self, namespace: str, key: str, value: bytes, when: Condition) -> Tuple[Optional[int], Optional[StorageError]]:
        """Writes if `when` holds; the new version, or an error."""
        try:
            _check_key(namespace, key)
        except _Failed as f:
            return None, f.error
        if len(value) > MAX_VALUE_BYTES:
            return None, TooLarge()

        def run(conn):
            conn.execute("BEGIN IMMEDIATE")
            current = self._current_version(conn, namespace, key)
            if not _holds(current, when):
                raise _Failed(Conflict())
            version = 1 if current is None else current + 1
            conn.execute(
                "INSERT INTO records (namespace, key, value, version) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, version = excluded.version",
                (namespace, key, sqlite3.Binary(value), version),
            )
            conn.execute("COMMIT")
            return version

        return self._with(run)

    def delete(self, namespace: str, key: str, when: Condition) -> Tuple[Optional[bool], Optional[StorageError]]:
        """Deletes if `when` holds; whether a key was removed, or an error."""
        try:
            _check_key(namespace, key)
        except _Failed as f:
            return None, f.error

        def run(conn):
            conn.execute("BEGIN IMMEDIATE")
            current = self._current_version(conn, namespace, key)
            if not _holds(current, when):
                raise _Failed(Conflict())
            if current is None:
                conn.execute("ROLLBACK")
                return False
            conn.execute("DELETE FROM records WHERE namespace = ? AND key = ?", (namespace, key))
            conn.execute("COMMIT")
            return True

        return self._with(run)

    def list(
        self, namespace: str, prefix: str, limit: int, reverse: bool
    ) -> Tuple[Optional[List[Tuple[str, bytes, int]]], Optional[StorageError]]:
        """Keys starting with `prefix` (compared exactly, case-sensitively), in key order."""
        try:
            _check_key(namespace, prefix)
        except _Failed as f:
            return None, f.error
        limit = min(int(limit), MAX_LIST)
        order = "DESC" if reverse else "ASC"

        def run(conn):
            # LIKE narrows with the index but is case-insensitive for ASCII;
            # the substr comparison makes the match exact.
            rows = conn.execute(
                "SELECT key, value, version FROM records "
                "WHERE namespace = ? AND key LIKE ? ESCAPE '\\' AND substr(key, 1, length(?)) = ? "
                f"ORDER BY key {order} LIMIT ?",
                (namespace, _like_prefix(prefix), prefix, prefix, limit),
            ).fetchall()
            return [(str(k), bytes(v), int(ver)) for (k, v, ver) in rows]

        return self._with(run)

    def commit(self, writes: List[Write]) -> Tuple[Optional[int], Optional[Union[StorageError, int]]]:
        """Applies every write in order, or none: (None, None) when committed; (None, index) when the
        condition of the write at that index failed; (None, error) when the storage failed."""
        if len(writes) > MAX_BATCH_WRITES:
            return None, TooLarge()
        try:
            for w in writes:
                _check_key(w.namespace, w.key)
                if isinstance(w, Put) and len(w.value) > MAX_VALUE_BYTES:
                    raise _Failed(TooLarge())
        except _Failed as f:
            return None, f.error

        class _Conflict(Exception):
            def __init__(self, index: int):
                super().__init__(index)
                self.index = index

        def run(conn):
            # One immediate transaction: a failed condition or any error rolls it back.
            conn.execute("BEGIN IMMEDIATE")
            try:
                for i, w in enumerate(writes):
                    current = self._current_version(conn, w.namespace, w.key)
                    if not _holds(current, w.when):
                        raise _Conflict(i)
                    if isinstance(w, Put):
                        version = 1 if current is None else current + 1
                        conn.execute(
                            "INSERT INTO records (namespace, key, value, version) VALUES (?, ?, ?, ?) "
                            "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, version = excluded.version",
                            (w.namespace, w.key, sqlite3.Binary(w.value), version),
                        )
                    elif current is not None:
                        conn.execute("DELETE FROM records WHERE namespace = ? AND key = ?", (w.namespace, w.key))
            except _Conflict as c:
                conn.execute("ROLLBACK")
                return c.index
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return None

        index, error = self._with(run)
        if error is not None:
            return None, error
        return None, index

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            try:
                conn.close()
            except sqlite3.Error:
                pass
