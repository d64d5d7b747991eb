"""Where the plugin finds the Warden configuration, its database and the component.

Each setting comes from, in order: an environment variable, the plugin's
entry in Hermes's `config.yaml` (`plugins.entries.warden.<key>`), a default
under `$HERMES_HOME/warden/`. Relative paths in `config.yaml` are relative to
`$HERMES_HOME`.

| setting | env var | config.yaml key | default |
| --- | --- | --- | --- |
| Warden configuration (JSON) | `WARDEN_CONFIG` | `config` | `$HERMES_HOME/warden/warden.json` |
| SQLite database | `WARDEN_DB` | `db` | `$HERMES_HOME/warden/warden.db` |
| component (.wasm) | `WARDEN_COMPONENT` | `component` | `warden_component.wasm` beside this file |
| compiled-artifact cache | `WARDEN_CACHE_DIR` | `cache_dir` | `$XDG_CACHE_HOME/warden` or `~/.cache/warden` |
| fuel per call (guest instructions) | `WARDEN_FUEL` | `fuel` | 10,000,000,000 (about 2 s) |
| guest memory cap, MiB | `WARDEN_MEMORY_MIB` | `memory_mib` | 64 |
| account ID of turns and tool calls | `WARDEN_ACCOUNT_ID` | `account_id` | the Hermes profile (see `profile_account`) |
| accept request times far from this clock (replay only) | `WARDEN_REPLAY` | `replay` | off (see clock.py) |
| an ask nobody can answer in this run (`hermes chat -q`, a script) | `WARDEN_HEADLESS_ASK` | `headless_ask` | `pending` (or `deny`) |
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any, Dict, Optional

from . import component

logger = logging.getLogger("warden")

PLUGIN_ID = "warden"
PLUGIN_DIR = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Settings:
    config_path: str
    db_path: str
    component_path: str
    cache_dir: Optional[str]
    fuel: int
    memory_bytes: int
    # The identity's account-id when set; otherwise the Hermes profile.
    account_id: Optional[str] = None
    # Accept request times far from this process's clock (clock.py).
    replay: bool = False
    # What an ask nobody can answer in this run becomes: "pending" or "deny".
    headless_ask: str = "pending"


HEADLESS_ASK_POLICIES = ("pending", "deny")


def _choice(env: str, key: str, entry: Dict[str, Any], allowed: tuple, default: str) -> str:
    raw = os.environ.get(env) or entry.get(key)
    if raw is None or raw == "":
        return default
    if raw not in allowed:
        logger.warning("warden: %s / %s must be one of %s, got %r; using %s", env, key, ", ".join(allowed), raw, default)
        return default
    return raw


def hermes_home() -> str:
    try:
        from hermes_constants import get_hermes_home

        return str(get_hermes_home())
    except Exception:
        return os.environ.get("HERMES_HOME") or os.path.join(os.path.expanduser("~"), ".hermes")


def plugin_entry() -> Dict[str, Any]:
    """`plugins.entries.warden` from Hermes's config.yaml, or {}."""
    try:
        from hermes_cli.config import load_config

        cfg = load_config() or {}
    except Exception as e:
        logger.debug("cannot read Hermes's config.yaml: %s", e)
        return {}
    entry = ((cfg.get("plugins") or {}).get("entries") or {}).get(PLUGIN_ID) or {}
    return entry if isinstance(entry, dict) else {}


def _pick(env: str, key: str, entry: Dict[str, Any], home: str, default: Optional[str]) -> Optional[str]:
    value = os.environ.get(env)
    if value:
        return os.path.expanduser(value)
    value = entry.get(key)
    if isinstance(value, str) and value:
        value = os.path.expanduser(value)
        return value if os.path.isabs(value) else os.path.join(home, value)
    return default


def _int(env: str, key: str, entry: Dict[str, Any], default: int) -> int:
    raw = os.environ.get(env) or entry.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        logger.warning("warden: %s / %s must be an integer, got %r; using %d", env, key, raw, default)
        return default
    return value if value > 0 else default


def _text(env: str, key: str, entry: Dict[str, Any]) -> Optional[str]:
    value = os.environ.get(env)
    if value is None or not value.strip():
        raw = entry.get(key)
        value = str(raw) if isinstance(raw, (str, int)) and not isinstance(raw, bool) else None
    value = value.strip() if value else None
    return value or None


def _flag(env: str, key: str, entry: Dict[str, Any]) -> bool:
    """`1` in the environment, or `true` in config.yaml."""
    if os.environ.get(env) is not None:
        return os.environ.get(env) == "1"
    return entry.get(key) is True


def profile_account() -> str:
    """The Hermes profile this process runs as, the default account ID:
    `default` for `~/.hermes`, the profile's name for `~/.hermes/profiles/<name>`,
    `custom` for any other `HERMES_HOME` (Hermes's own naming)."""
    try:
        from hermes_cli.profiles import get_active_profile_name

        return get_active_profile_name() or "default"
    except Exception:
        return "default"


def load() -> Settings:
    home = hermes_home()
    entry = plugin_entry()
    base = os.path.join(home, "warden")
    return Settings(
        config_path=_pick("WARDEN_CONFIG", "config", entry, home, os.path.join(base, "warden.json")) or "",
        db_path=_pick("WARDEN_DB", "db", entry, home, os.path.join(base, "warden.db")) or "",
        component_path=_pick(
            "WARDEN_COMPONENT", "component", entry, home, os.path.join(PLUGIN_DIR, "warden_component.wasm")
        )
        or "",
        cache_dir=_pick("WARDEN_CACHE_DIR", "cache_dir", entry, home, component.default_cache_dir()),
        fuel=_int("WARDEN_FUEL", "fuel", entry, component.DEFAULT_FUEL),
        memory_bytes=_int("WARDEN_MEMORY_MIB", "memory_mib", entry, component.DEFAULT_MEMORY_BYTES >> 20) << 20,
        account_id=_text("WARDEN_ACCOUNT_ID", "account_id", entry),
        replay=_flag("WARDEN_REPLAY", "replay", entry),
        headless_ask=_choice("WARDEN_HEADLESS_ASK", "headless_ask", entry, HEADLESS_ASK_POLICIES, "pending"),
    )
