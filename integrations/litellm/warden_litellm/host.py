"""The wasmtime-py host, shared with the Hermes plugin.

The component is loaded and called by the Hermes plugin's host modules
(`integrations/hermes`: `component.py` for the engine, pooling, fuel and
memory caps, `imports_storage.py` for SQLite, `imports_http.py` for the
HTTP gateway, `host_context.py` for the approval secret, `runtime.py` for
loading and reloading). This module imports that folder as a package under
its own name (`warden_host`), so the Hermes plugin itself is never loaded and
nothing of Hermes is needed, and adds only what differs for LiteLLM: where the
settings come from and which paths it declares as protected.

The folder is found at `warden_host_dir` (guardrail setting) or
`$WARDEN_HOST_DIR`, else at `../../hermes` from this file, which is where it is
in a checkout of the repository.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from typing import Any, Optional

# The name the shared host package is imported under.
HOST_PACKAGE = "warden_host"
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_HOST_DIR = os.path.normpath(os.path.join(PACKAGE_DIR, "..", "..", "hermes"))


class HostMissing(Exception):
    """The shared host modules could not be imported; the message says where they were looked for."""


def host_dir(configured: Optional[str] = None) -> str:
    return os.path.abspath(os.path.expanduser(configured or os.environ.get("WARDEN_HOST_DIR") or DEFAULT_HOST_DIR))


def load_host(configured: Optional[str] = None) -> Any:
    """Imports the shared host folder as the package `warden_host` (once) and returns it.

    Only the host modules are imported, never the folder's `__init__.py`
    (the Hermes plugin's entry point): the package is created empty and its
    submodules are imported on demand."""
    if HOST_PACKAGE in sys.modules:
        return sys.modules[HOST_PACKAGE]
    folder = host_dir(configured)
    if not os.path.isfile(os.path.join(folder, "component.py")):
        raise HostMissing(
            f"the Warden wasmtime host modules are not in {folder} (no component.py there); "
            "set warden_host_dir (or $WARDEN_HOST_DIR) to the integrations/hermes folder of a Warden checkout"
        )
    spec = importlib.util.spec_from_loader(HOST_PACKAGE, loader=None, is_package=True)
    if spec is None:
        raise HostMissing(f"cannot create the package {HOST_PACKAGE} for {folder}")
    package = importlib.util.module_from_spec(spec)
    package.__path__ = [folder]  # type: ignore[attr-defined]
    sys.modules[HOST_PACKAGE] = package
    try:
        for name in ("records", "clock", "imports_log", "imports_storage", "imports_http", "host_context", "component"):
            importlib.import_module(f"{HOST_PACKAGE}.{name}")
        importlib.import_module(f"{HOST_PACKAGE}.settings")
        importlib.import_module(f"{HOST_PACKAGE}.runtime")
    except Exception as e:
        sys.modules.pop(HOST_PACKAGE, None)
        raise HostMissing(f"cannot import the Warden wasmtime host from {folder}: {type(e).__name__}: {e}") from e
    return package


@dataclass(frozen=True)
class Paths:
    """What the guardrail was configured with (already resolved)."""

    config_path: str
    component_path: str
    db_path: str
    cache_dir: Optional[str]
    fuel: int
    memory_bytes: int


def proxy_config_paths() -> "list[str]":
    """The LiteLLM proxy's configuration file (`litellm --config FILE`), as
    given and resolved, when this process is the proxy and has read one."""
    proxy = sys.modules.get("litellm.proxy.proxy_server")
    path = getattr(proxy, "user_config_file_path", None) if proxy is not None else None
    if not isinstance(path, str) or not path:
        return []
    absolute = os.path.normpath(os.path.abspath(path))
    out = [absolute]
    resolved = os.path.realpath(absolute)
    if resolved not in out:
        out.append(resolved)
    return out


def make_runtime(paths: Paths, host: Any) -> Any:
    """A `runtime.Runtime` of the shared host with these settings, declaring
    LiteLLM's protected paths (the Warden configuration, database, key file,
    cache, this package and the proxy's config.yaml) instead of Hermes's."""
    runtime_mod = host.runtime
    settings_mod = host.settings
    host_context = host.host_context

    class LiteLLMRuntime(runtime_mod.Runtime):
        def __init__(self) -> None:
            super().__init__()
            self.settings = settings_mod.Settings(
                config_path=paths.config_path,
                db_path=paths.db_path,
                component_path=paths.component_path,
                cache_dir=paths.cache_dir,
                fuel=paths.fuel,
                memory_bytes=paths.memory_bytes,
                account_id=None,
                replay=False,
            )

        def _start(self, s: Any) -> Any:
            # The shared start (runtime.Runtime._start) with LiteLLM's own
            # protected paths: no Hermes home, this package instead of the plugin folder.
            unavailable = runtime_mod.Unavailable
            try:
                with open(s.config_path, "r", encoding="utf-8") as f:
                    config_text = f.read()
            except OSError as e:
                raise unavailable(f"cannot read the Warden configuration {s.config_path}: {e}") from e
            try:
                with open(s.component_path, "rb") as f:
                    wasm = f.read()
            except OSError as e:
                raise unavailable(f"cannot read the Warden component {s.component_path}: {e}") from e
            if self._storage is None:
                folder = os.path.dirname(os.path.abspath(s.db_path))
                try:
                    os.makedirs(folder, mode=0o700, exist_ok=True)
                except OSError as e:
                    raise unavailable(f"cannot create the folder of the Warden database {folder}: {e}") from e
                storage = host.imports_storage.SqliteStorage(s.db_path)
                error = storage.open()
                if error is not None:
                    raise unavailable(f"cannot open the Warden database {s.db_path}: {error}")
                self._storage = storage
            try:
                secret = host_context.approval_secret(s.db_path)
            except OSError as e:
                raise unavailable(f"cannot use the approval secret {host_context.secret_path(s.db_path)}: {e}") from e
            declared = host_context.declare(s.db_path, s.config_path, s.cache_dir, None, PACKAGE_DIR, secret)
            # The proxy's own config.yaml holds the upstream API keys and this guardrail's entry.
            for extra in proxy_config_paths():
                if extra not in declared["protected_paths"]:
                    declared["protected_paths"].append(extra)
            return host.component.Guard(
                wasm,
                config_text,
                self._storage,
                cache_dir=s.cache_dir,
                memory_bytes=s.memory_bytes,
                fuel=s.fuel,
                replay=False,
                host_context=declared,
            )

    return LiteLLMRuntime()
