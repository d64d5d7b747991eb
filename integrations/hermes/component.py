"""Loading the Warden component with wasmtime-py and calling it safely.

One engine per process; the component is compiled once and the compiled
artifact is cached on disk keyed by the component's SHA-256 and the wasmtime
version; instances are pooled and reused, one `Store` each, so concurrent
hooks run on separate instances. Every call runs under a memory cap and a fuel
budget (fuel counts guest instructions only, so time spent in host imports
does not count). A guest that traps is discarded and replaced, and the call
answers with the failure mode of the check that was running: tool calls and
outbound messages fail closed, inbound turns fail open.

The component imports nothing but its own world (`warden:guard/{http,storage,
log,types}`), so no WASI is linked.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

import wasmtime
from wasmtime import Config, Engine, Store
from wasmtime.component import Component, Linker, Record, Variant

from . import clock, imports_http, imports_log, imports_storage
from .records import Err, Ok, field, from_wit, install_result_cases, to_wit

logger = logging.getLogger("warden")

PACKAGE = "warden:guard"
VERSION = "0.1.0"
POLICY = f"{PACKAGE}/policy@{VERSION}"

# The wasmtime-py major version this module is written against: the dynamic
# component API and the result-case fix in records.py depend on its internals.
SUPPORTED_WASMTIME_MAJOR = 50
# Default guest memory cap, in bytes (64 MiB).
DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024
# Default fuel per call: a check takes about 20-150 thousand units; ten
# billion stops an endless loop after about 2 s (measured: 5e9 units/s on a
# tight loop), the same budget as the Rust host's default CPU deadline.
DEFAULT_FUEL = 10_000_000_000
# Default number of idle instances kept for reuse.
DEFAULT_POOL = 8

# Rule of an answer given because the guest failed.
GUEST_FAILURE_RULE = "host.guest-failure"

_POLICY_FUNCS = (
    "set-host-context",
    "configure",
    "check-turn",
    "check-tool-call",
    "check-outbound",
    "observe-tool-result",
    "start-turn",
    "settle-turn",
    "current-pin",
    "record-approval",
    "record-usage",
    "record-outcome",
    "diagnostics",
)


class GuardError(Exception):
    """An admin or lifecycle call failed: the component answered with a
    `policy-error`, the guest trapped, or a request time was refused (`rule`
    says which the checks answer with)."""

    def __init__(self, message: str, rule: str = GUEST_FAILURE_RULE):
        super().__init__(message)
        self.rule = rule


class ConfigErrors(Exception):
    """The component refused the configuration; `errors` lists (path, message)."""

    def __init__(self, errors: List[Tuple[str, str]]):
        self.errors = errors
        lines = [f"{p}: {m}" if p else m for p, m in errors]
        super().__init__(f"the configuration has {len(errors)} error(s):\n  " + "\n  ".join(lines))


def default_cache_dir() -> Optional[str]:
    """`$WARDEN_CACHE_DIR`, else `$XDG_CACHE_HOME/warden`, else `~/.cache/warden`."""
    if os.environ.get("WARDEN_CACHE_DIR"):
        return os.environ["WARDEN_CACHE_DIR"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "warden")
    home = os.environ.get("HOME")
    return os.path.join(home, ".cache", "warden") if home else None


def wasmtime_version() -> str:
    try:
        return importlib.metadata.version("wasmtime")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


_engine_lock = threading.Lock()
_engine: Optional[Engine] = None


def engine() -> Engine:
    """The process-wide engine: fuel metering on."""
    global _engine
    with _engine_lock:
        if _engine is None:
            version = wasmtime_version()
            major = version.split(".", 1)[0]
            if major != str(SUPPORTED_WASMTIME_MAJOR):
                raise GuardError(
                    f"wasmtime {version} is installed; this plugin needs wasmtime "
                    f"{SUPPORTED_WASMTIME_MAJOR}.x (pip install wasmtime=={SUPPORTED_WASMTIME_MAJOR}.0.1)"
                )
            install_result_cases()
            config = Config()
            config.consume_fuel = True
            _engine = Engine(config)
        return _engine


def load_component(eng: Engine, wasm: bytes, cache_dir: Optional[str]) -> Component:
    """Compiles `wasm`, or loads the artifact cached for exactly these bytes
    and this wasmtime version. A cache that cannot be used only costs time."""
    digest = hashlib.sha256(wasm).hexdigest()
    cached = None
    if cache_dir:
        cached = os.path.join(cache_dir, f"{digest}-py-wasmtime{wasmtime_version()}-fuel.cwasm")
        if os.path.isfile(cached):
            try:
                # The file was written below by Component.serialize into the
                # user's own cache folder, under a name bound to these bytes
                # and this wasmtime; wasmtime checks its header again.
                return Component.deserialize_file(eng, cached)
            except Exception as e:  # stale or foreign artifact: recompile
                logger.debug("cached component %s unusable: %s", cached, e)
    component = Component(eng, wasm)
    if cached:
        try:
            os.makedirs(cache_dir, exist_ok=True)
            tmp = f"{cached}.tmp{os.getpid()}"
            with open(tmp, "wb") as f:
                f.write(component.serialize())
            os.replace(tmp, cached)
        except Exception as e:
            logger.debug("cannot cache the compiled component: %s", e)
    return component


def _condition(when: Any) -> imports_storage.Condition:
    if isinstance(when, Variant):
        if when.tag == "version":
            return int(when.payload)
        return when.tag
    return str(when)


def _storage_error(e: imports_storage.StorageError) -> Variant:
    if isinstance(e, imports_storage.Unavailable):
        return Variant("unavailable", e.message)
    if isinstance(e, imports_storage.Conflict):
        return Variant("conflict")
    if isinstance(e, imports_storage.TooLarge):
        return Variant("too-large")
    return Variant("other", getattr(e, "message", str(e)))


def _entry(value: bytes, version: int) -> Record:
    return to_wit({"value": value, "version": version})


class _Host:
    """The three imports, bound to one storage and one (replaceable) HTTP gateway."""

    def __init__(self, storage: imports_storage.SqliteStorage):
        self.storage = storage
        self.http = imports_http.HttpGateway([])

    # storage -------------------------------------------------------------
    def get(self, _store, namespace: str, key: str):
        try:
            found, error = self.storage.get(namespace, key)
            if error is not None:
                return Err(_storage_error(error))
            return Ok(None if found is None else _entry(found[0], found[1]))
        except Exception as e:
            return Err(Variant("other", f"host error: {e}"))

    def set(self, _store, namespace: str, key: str, value: bytes, when: Any):
        try:
            version, error = self.storage.set(namespace, key, bytes(value), _condition(when))
            return Err(_storage_error(error)) if error is not None else Ok(version)
        except Exception as e:
            return Err(Variant("other", f"host error: {e}"))

    def delete(self, _store, namespace: str, key: str, when: Any):
        try:
            removed, error = self.storage.delete(namespace, key, _condition(when))
            return Err(_storage_error(error)) if error is not None else Ok(bool(removed))
        except Exception as e:
            return Err(Variant("other", f"host error: {e}"))

    def list(self, _store, namespace: str, prefix: str, limit: int, reverse: bool):
        try:
            rows, error = self.storage.list(namespace, prefix, limit, reverse)
            if error is not None:
                return Err(_storage_error(error))
            return Ok([to_wit({"key": k, "entry": {"value": v, "version": ver}}) for (k, v, ver) in rows or []])
        except Exception as e:
            return Err(Variant("other", f"host error: {e}"))

    def commit(self, _store, writes: List[Any]):
        try:
            batch: List[imports_storage.Write] = []
            for w in writes:
                p = w.payload
                if w.tag == "put":
                    batch.append(
                        imports_storage.Put(field(p, "namespace"), field(p, "key"), bytes(field(p, "value")), _condition(field(p, "when")))
                    )
                else:
                    batch.append(imports_storage.Remove(field(p, "namespace"), field(p, "key"), _condition(field(p, "when"))))
            _, failure = self.storage.commit(batch)
            if failure is None:
                return Ok(None)
            # wasmtime-py writes batch-error untagged (its two cases hold different
            # Python types): a bare int is `conflict(index)`, a storage-error
            # Variant is `failed(...)`.
            if isinstance(failure, int):
                return Err(failure)
            return Err(_storage_error(failure))
        except Exception as e:
            return Err(Variant("other", f"host error: {e}"))

    # http ----------------------------------------------------------------
    @staticmethod
    def _request(req: Any) -> imports_http.Request:
        return imports_http.Request(
            destination=field(req, "destination"),
            method=field(req, "method"),
            url=field(req, "url"),
            headers=[(str(k), str(v)) for (k, v) in field(req, "headers")],
            body=bytes(field(req, "body")),
            timeout_ms=int(field(req, "timeout-ms")),
        )

    @staticmethod
    def _outcome(out: imports_http.Outcome):
        if isinstance(out, imports_http.Response):
            return Ok(to_wit({"status": out.status, "headers": list(out.headers), "body": out.body}))
        if out.case == "transport":
            return Err(Variant("transport", out.message or "transport error"))
        return Err(Variant(out.case))

    def send(self, _store, req: Any):
        try:
            return self._outcome(self.http.send(self._request(req)))
        except Exception as e:
            return Err(Variant("transport", f"host error: {e}"))

    def send_all(self, _store, reqs: List[Any]):
        try:
            outs = self.http.send_all([self._request(r) for r in reqs])
            return [self._outcome(o) for o in outs]
        except Exception as e:
            return [Err(Variant("transport", f"host error: {e}")) for _ in reqs]

    # log -----------------------------------------------------------------
    @staticmethod
    def write(_store, level: str, message: str) -> None:
        imports_log.write(level, message)


class _Instance:
    def __init__(self, store: Store, funcs: Dict[str, Any]):
        self.store = store
        self.funcs = funcs


class Guard:
    """A loaded, configured component with a pool of instances."""

    def __init__(
        self,
        wasm: bytes,
        config_text: str,
        storage: imports_storage.SqliteStorage,
        *,
        cache_dir: Optional[str] = None,
        memory_bytes: int = DEFAULT_MEMORY_BYTES,
        fuel: int = DEFAULT_FUEL,
        pool: int = DEFAULT_POOL,
        replay: bool = False,
        host_context: Optional[Dict[str, Any]] = None,
    ):
        from . import host_context as _host_context

        # Accept request times far from this process's clock (see clock.py).
        self._replay = replay

        # Without a declared context, a fresh secret: approvals work within this guard only.
        self._host_context = host_context if host_context is not None else _host_context.ephemeral()
        self._memory_bytes = memory_bytes
        self._fuel = fuel
        self._engine = engine()
        wrong = check_component_bytes(wasm)
        if wrong:
            raise GuardError(f"not a Warden component: {wrong}")
        try:
            self._component = load_component(self._engine, wasm, cache_dir)
        except Exception as e:
            raise GuardError(f"not a usable component: {_describe_trap(e)}") from e
        self._host = _Host(storage)
        self._pool_size = pool
        self._pool: List[_Instance] = []
        self._lock = threading.Lock()
        self._linker = self._link()
        self._config = config_text
        try:
            first = self._instantiate()
            self._declare(first)
            answer = self._invoke(first, "configure", config_text)
        except GuardError:
            raise
        except Exception as e:
            raise GuardError(f"the component failed while starting: {_describe_trap(e, memory_bytes, fuel)}") from e
        if isinstance(answer, list):
            raise ConfigErrors([(field(e, "path"), field(e, "message")) for e in answer])
        self.report = from_wit(answer)
        # The component validated the configuration; the host reads only the
        # destinations it must enforce, after the component accepted them.
        self._host.http = imports_http.HttpGateway(imports_http.destinations_from_config(json.loads(config_text)))
        self._give_back(first)

    def _link(self) -> Linker:
        h = self._host
        linker = Linker(self._engine)
        with linker.root() as root:
            with root.add_instance(f"{PACKAGE}/storage@{VERSION}") as i:
                i.add_func("get", h.get)
                i.add_func("set", h.set)
                i.add_func("delete", h.delete)
                i.add_func("list", h.list)
                i.add_func("commit", h.commit)
            with root.add_instance(f"{PACKAGE}/http@{VERSION}") as i:
                i.add_func("send", h.send)
                i.add_func("send-all", h.send_all)
            with root.add_instance(f"{PACKAGE}/log@{VERSION}") as i:
                i.add_func("write", h.write)
        return linker

    def _instantiate(self) -> _Instance:
        store = Store(self._engine)
        store.set_limits(memory_size=self._memory_bytes)
        store.set_fuel(self._fuel)
        with self._lock:
            instance = self._linker.instantiate(store, self._component)
        policy = instance.get_export_index(store, POLICY)
        if policy is None:
            raise GuardError(f"the component does not export {POLICY}")
        funcs = {}
        for name in _POLICY_FUNCS:
            idx = instance.get_export_index(store, name, policy)
            func = instance.get_func(store, idx) if idx is not None else None
            if func is None:
                raise GuardError(f"the component does not export {POLICY}#{name}")
            funcs[name] = func
        return _Instance(store, funcs)

    def _take(self) -> _Instance:
        with self._lock:
            if self._pool:
                return self._pool.pop()
        inst = self._instantiate()
        self._declare(inst)
        answer = self._invoke(inst, "configure", self._config)
        if isinstance(answer, list):
            raise GuardError(f"a new instance refused the configuration ({len(answer)} errors)")
        return inst

    def _declare(self, inst: _Instance) -> None:
        """Declares the host context to a new instance, before its configuration."""
        answer = self._invoke(inst, "set-host-context", to_wit(self._host_context))
        if isinstance(answer, Variant):
            raise GuardError(f"the component refused the host context: {answer.tag}: {answer.payload}")

    def _give_back(self, inst: _Instance) -> None:
        with self._lock:
            if len(self._pool) < self._pool_size:
                self._pool.append(inst)
                return
        # An instance past the pool writes the counts it keeps (the component
        # writes them before it reports diagnostics) before it is dropped.
        try:
            self._invoke(inst, "diagnostics")
        except Exception:  # counting never changes a decision
            pass

    def _invoke(self, inst: _Instance, name: str, *args: Any) -> Any:
        inst.store.set_fuel(self._fuel)
        return inst.funcs[name](inst.store, *args)

    def _call(self, name: str, *args: Any) -> Any:
        """Runs one export on a pooled instance; a trapped instance is dropped.
        Raises GuardError when the guest fails."""
        try:
            inst = self._take()
        except Exception as e:
            raise GuardError(f"cannot start an instance: {e}") from e
        try:
            result = self._invoke(inst, name, *args)
        except Exception as e:
            message = _describe_trap(e, self._memory_bytes, self._fuel)
            logger.error("warden guest failed and was discarded: %s", message)
            raise GuardError(message) from e
        self._give_back(inst)
        return result

    def _admin(self, name: str, *args: Any) -> Any:
        result = self._call(name, *args)
        if isinstance(result, Variant):  # the err case: a policy-error
            detail = result.payload
            raise GuardError(f"{result.tag}: {detail}" if detail is not None else result.tag)
        return result

    def _admit(self, name: str, now_ms: Any) -> None:
        """Refuses a request time far from this process's clock (clock.py); raises GuardError."""
        try:
            clock.admit(f"{name}: now_ms", now_ms, self._replay)
        except clock.ClockError as e:
            raise GuardError(str(e), clock.CLOCK_REFUSED_RULE) from e

    # checks ----------------------------------------------------------------
    def check_turn(self, turn: Dict[str, Any]) -> Dict[str, Any]:
        """Checks an inbound turn. Fails open when the guest fails."""
        try:
            self._admit("check-turn", turn.get("now_ms"))
            return from_wit(self._call("check-turn", to_wit(turn)))
        except GuardError as e:
            return {
                "proceed": True,
                "outcome": "failed",
                "rule": e.rule,
                "reason": f"the guard failed ({e}); inbound checks fail open, so the turn proceeds unchecked",
                "append_context": None,
                "scenarios": [],
                "missing_identity": False,
                "reused": False,
                "signals": [],
            }

    def check_tool_call(self, call: Dict[str, Any]) -> Dict[str, Any]:
        """Judges a tool call. Fails closed when the guest fails."""
        try:
            self._admit("check-tool-call", call.get("now_ms"))
            return from_wit(self._call("check-tool-call", to_wit(call)))
        except GuardError as e:
            return fail_closed(str(e), "tool calls", e.rule)

    def check_outbound(self, message: Dict[str, Any]) -> Dict[str, Any]:
        """Checks an outbound or peer message. Fails closed when the guest fails."""
        try:
            self._admit("check-outbound", message.get("now_ms"))
            return from_wit(self._call("check-outbound", to_wit(message)))
        except GuardError as e:
            return fail_closed(str(e), "messages", e.rule)

    def observe_tool_result(self, report: Dict[str, Any]) -> Dict[str, Any]:
        """Reports what a tool returned; raises GuardError when it cannot be
        recorded (the result's destinations then stay unknown to later checks)."""
        self._admit("observe-tool-result", report.get("now_ms"))
        return from_wit(self._admin("observe-tool-result", to_wit(report)))

    # lifecycle and admin ---------------------------------------------------
    def start_turn(self, start: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        self._admit("start-turn", start.get("now_ms"))
        return from_wit(self._admin("start-turn", to_wit(start)))

    def settle_turn(self, end: Dict[str, Any]) -> None:
        self._admit("settle-turn", end.get("now_ms"))
        self._admin("settle-turn", to_wit(end))
        self._write_counts()

    def _write_counts(self) -> None:
        """Has every idle instance write the counts it keeps (the component
        writes them before it reports diagnostics): the turn's checks may have
        run on other pooled instances than the one that settled it."""
        with self._lock:
            idle, self._pool = self._pool, []
        for inst in idle:
            try:
                self._invoke(inst, "diagnostics")
            except Exception:  # counting never changes a decision; a trapped instance is dropped
                continue
            self._give_back(inst)

    def current_pin(self, session_id: str, now_ms: int) -> Optional[Dict[str, Any]]:
        self._admit("current-pin", now_ms)
        return from_wit(self._admin("current-pin", session_id, now_ms))

    def record_approval(self, approval: Dict[str, Any]) -> None:
        self._admit("record-approval", approval.get("now_ms"))
        self._admin("record-approval", to_wit(approval))

    def record_usage(self, usage: Dict[str, Any]) -> None:
        self._admit("record-usage", usage.get("now_ms"))
        self._admin("record-usage", to_wit(usage))

    def diagnostics(self) -> Dict[str, Any]:
        return from_wit(self._admin("diagnostics"))

    def idle_instances(self) -> int:
        with self._lock:
            return len(self._pool)


def fail_closed(error: str, what: str, rule: str = GUEST_FAILURE_RULE) -> Dict[str, Any]:
    return {
        "decision": "deny",
        "rule": rule,
        "reason": f"the guard failed ({error}); {what} fail closed, so this one is refused",
        "risk": "high",
        "scope": None,
        "approval_key": None,
        "observed": None,
        "signals": [],
    }


def _describe_trap(e: Exception, memory_bytes: int = DEFAULT_MEMORY_BYTES, fuel: int = DEFAULT_FUEL) -> str:
    """One line saying why the guest failed, never a wasm backtrace."""
    text = str(e)
    if isinstance(e, wasmtime.Trap) or isinstance(e, wasmtime.WasmtimeError):
        low = text.lower()
        if "fuel" in low:
            return f"it ran out of its fuel budget of {fuel:,} instructions per call (setting `fuel`, WARDEN_FUEL)"
        if "exceeds memory limits" in low:
            return f"it hit its memory cap of {memory_bytes >> 20} MiB: it needs more memory than that to start (setting `memory_mib`, WARDEN_MEMORY_MIB)"
        if "out of bounds memory access" in low:
            # The guest runtime's own trap for an allocation the cap refused (crates/guest-rt).
            return f"it hit its memory cap of {memory_bytes >> 20} MiB (setting `memory_mib`, WARDEN_MEMORY_MIB)"
        if "unreachable" in low:
            return "it hit an internal error (unreachable)"
        causes = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith(tuple("0123456789"))]
        causes = [l for l in causes if not l.startswith(("error while executing", "Caused by"))]
        last = causes[-1] if causes else type(e).__name__
        return f"it trapped: {last}"
    first = text.strip().splitlines()[0] if text.strip() else ""
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


# The first bytes of a WebAssembly component (magic, then the component layer's version).
WASM_MAGIC = b"\0asm"
COMPONENT_LAYER = b"\x0d\x00\x01\x00"


def check_component_bytes(wasm: bytes) -> Optional[str]:
    """Why `wasm` cannot be a WebAssembly component, in a few words, or None."""
    if len(wasm) == 0:
        return "it is empty"
    if wasm[:4] != WASM_MAGIC:
        if wasm[:1] == b"(":
            return "it is WebAssembly text, not a binary component"
        return f"it is not WebAssembly (it starts with bytes {wasm[:4].hex(' ')}, not 00 61 73 6d)"
    if wasm[4:8] != COMPONENT_LAYER:
        return "it is a core WebAssembly module, not a component (build with --target wasm32-wasip2)"
    return None
