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
        """Creates the folder, the file and the schema; returns an error if that fails."""
        try:
            parent = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(parent, exist_ok=True)
        except OSError as e:
            return Unavailable(f"cannot create {parent}: {e}")
        try:
            conn = self._connect()
            conn.execute(
                "CREATE TABLE IF NOT EXISTS records ("
                " namespace TEXT NOT NULL,"
                " key TEXT NOT NULL,"
                " value BLOB NOT NULL,"
                " version INTEGER NOT NULL,"
                " PRIMARY KEY (namespace, key)"
                ") WITHOUT ROWID"
            )
        except _Failed as f:
            return f.error
        except sqlite3.Error as e:
            return _classify(e)
        self._put_back(conn)
        return None

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            # WAL lets readers proceed during a write; NORMAL sync is durable
            # across application crashes, which is what a policy ledger needs.
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

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            try:
                conn.close()
            except sqlite3.Error:
                pass
