"""What the plugin declares to the component about itself at start.

Approval keys are authenticated with an HMAC under a secret the agent cannot
read: 32 random bytes generated once into `<db>.key` beside the database
(`warden.db` has `warden.db.key`), created readable by its owner only (mode
0600). Every process on the same database shares it, so a key asked in one is
recorded in another. A key file of another size, or one group or others may
read, is refused (fail closed).

The protected paths: the database and its `-wal`, `-shm` and `-journal`
files, the key file, the Warden configuration, the component cache, Hermes's
`config.yaml` (which holds the plugin entry) and this plugin's folder. The
agent's own tool calls may not read or change them (`self.protected-file`),
open the database with a client (`self.database-client`) or run `warden`'s
admin commands (`self.admin-command`).
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from typing import Any, Dict, List, Optional

# Bytes of a generated approval secret.
SECRET_BYTES = 32


def secret_path(db_path: str) -> str:
    return f"{db_path}.key"


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if os.name == "posix" and mode & 0o077:
            raise OSError(
                f"it may be read by group or others (mode {stat.S_IMODE(mode):o}); "
                "it must be readable by its owner only (`chmod 600`)"
            )
        data = f.read(SECRET_BYTES + 1)
    if len(data) != SECRET_BYTES:
        raise OSError(
            f"it holds {len(data)} bytes, not the {SECRET_BYTES} this host writes; delete it to generate a new one"
        )
    return data


def approval_secret(db_path: str) -> bytes:
    """The approval secret of the database: read, or generated once. Raises OSError."""
    path = secret_path(db_path)
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    folder = os.path.dirname(os.path.abspath(path))
    secret = secrets.token_bytes(SECRET_BYTES)
    fd, tmp = tempfile.mkstemp(prefix=".warden-key-", dir=folder)
    try:
        os.fchmod(fd, 0o600) if hasattr(os, "fchmod") else None
        os.write(fd, secret)
        os.fsync(fd)
        os.close(fd)
        try:
            os.link(tmp, path)  # fails if another process created it first
        except FileExistsError:
            return _read(path)
        return secret
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _forms(path: str) -> List[str]:
    absolute = os.path.normpath(os.path.abspath(path))
    out = [absolute]
    resolved = os.path.realpath(absolute)
    if resolved not in out:
        out.append(resolved)
    return out


def declare(
    db_path: str,
    config_path: Optional[str],
    cache_dir: Optional[str],
    hermes_home: Optional[str],
    plugin_dir: Optional[str],
    secret: bytes,
) -> Dict[str, Any]:
    """The `host-context` record, as a dict for `records.to_wit`."""
    databases: List[str] = []
    for suffix in ("", "-wal", "-shm", "-journal"):
        databases += _forms(db_path + suffix)
    protected: List[str] = _forms(secret_path(db_path))
    if config_path:
        protected += _forms(config_path)
    if cache_dir:
        protected += [p.rstrip("/") + "/**" for p in _forms(cache_dir)]
    if hermes_home:
        protected += _forms(os.path.join(hermes_home, "config.yaml"))
        protected += [p.rstrip("/") + "/**" for p in _forms(os.path.join(hermes_home, "plugins", "warden"))]
    if plugin_dir:
        protected += [p.rstrip("/") + "/**" for p in _forms(plugin_dir)]
    unique: List[str] = []
    for p in protected:
        if p not in unique:
            unique.append(p)
    return {
        "approval_secret": bytes(secret),
        "databases": databases,
        "protected_paths": unique,
        "admin_programs": ["warden"],
        # Every guest line is sent: Python logging decides what to keep, and its level may change.
        "log_level": None,
    }


def ephemeral() -> Dict[str, Any]:
    """A context with a fresh secret and no files, for a guard whose storage does not outlive it."""
    return {
        "approval_secret": secrets.token_bytes(SECRET_BYTES),
        "databases": [],
        "protected_paths": [],
        "admin_programs": ["warden"],
        # Every guest line is sent: Python logging decides what to keep, and its level may change.
        "log_level": None,
    }
