"""The plugin's one Guard: started lazily, reloaded when the configuration file changes.

Hermes imports a plugin at discovery (also for `hermes plugins list`), so the
component is compiled on the first hook that needs it, not in `register`.
When the configuration file changes, the next hook loads it; if the new
configuration is refused, the previous one stays active (as `configure` does
inside the component) and the errors are logged. When no configuration could
ever be loaded, `guard()` raises `Unavailable` and the hooks apply their
failure mode: tool calls are refused, turns proceed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Optional, Tuple

from . import component, host_context, imports_storage, settings

logger = logging.getLogger("warden")

# How often a failed start is retried, in seconds.
RETRY_AFTER_S = 5.0


class Unavailable(Exception):
    """Warden could not start; the message says why."""


class Runtime:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._guard: Optional[component.Guard] = None
        self._stamp: Optional[Tuple[float, int]] = None
        self._error: Optional[str] = None
        self._failed_at = 0.0
        self._storage: Optional[imports_storage.SqliteStorage] = None
        self.settings: Optional[settings.Settings] = None

    def configured_account_id(self) -> Optional[str]:
        """The account ID the settings name, if they name one."""
        with self._lock:
            if self.settings is None:
                self.settings = settings.load()
            return self.settings.account_id

    def guard(self) -> component.Guard:
        """The running Guard, (re)loading it if needed; raises Unavailable."""
        with self._lock:
            if self.settings is None:
                self.settings = settings.load()
            stamp = _stamp(self.settings.config_path)
            if self._guard is not None and stamp == self._stamp:
                return self._guard
            if self._guard is None and self._error and time.monotonic() - self._failed_at < RETRY_AFTER_S:
                raise Unavailable(self._error)
            try:
                self._guard = self._start(self.settings)
                self._stamp = stamp
                self._error = None
                logger.info(
                    "warden: policy %s loaded from %s", self._guard.report.get("policy_version"), self.settings.config_path
                )
            except Exception as e:
                message = str(e)
                self._failed_at = time.monotonic()
                if self._guard is not None:
                    # Keep enforcing the previous policy; do not retry until the file changes again.
                    self._stamp = stamp
                    logger.error("warden: the new configuration was refused, the previous one stays active: %s", message)
                else:
                    self._error = message
                    logger.error("warden: cannot start: %s", message)
                    raise Unavailable(message) from e
            return self._guard

    def _start(self, s: settings.Settings) -> component.Guard:
        try:
            with open(s.config_path, "r", encoding="utf-8") as f:
                config_text = f.read()
        except OSError as e:
            raise Unavailable(f"cannot read the Warden configuration {s.config_path}: {e}") from e
        try:
            with open(s.component_path, "rb") as f:
                wasm = f.read()
        except OSError as e:
            raise Unavailable(f"cannot read the Warden component {s.component_path}: {e}") from e
        if self._storage is None:
            storage = imports_storage.SqliteStorage(s.db_path)
            error = storage.open()
            if error is not None:
                raise Unavailable(f"cannot open the Warden database {s.db_path}: {error}")
            self._storage = storage
        try:
            secret = host_context.approval_secret(s.db_path)
        except OSError as e:
            raise Unavailable(f"cannot use the approval secret {host_context.secret_path(s.db_path)}: {e}") from e
        declared = host_context.declare(
            s.db_path, s.config_path, s.cache_dir, settings.hermes_home(), settings.PLUGIN_DIR, secret
        )
        try:
            return component.Guard(
                wasm,
                config_text,
                self._storage,
                cache_dir=s.cache_dir,
                memory_bytes=s.memory_bytes,
                fuel=s.fuel,
                replay=s.replay,
                host_context=declared,
            )
        except component.ConfigErrors as e:
            listed = "; ".join(f"{p}: {m}" if p else m for p, m in e.errors)
            raise Unavailable(f"the Warden configuration {s.config_path} is invalid ({len(e.errors)} error(s)): {listed}") from e
        except component.GuardError as e:
            raise Unavailable(f"the Warden component {s.component_path}: {e}") from e


def _stamp(path: str) -> Optional[Tuple[float, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime, st.st_size)
