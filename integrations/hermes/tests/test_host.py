"""The plugin's host side against the real component: SQLite storage, the HTTP
gateway over loopback, and the sandbox with a deliberately hostile guest.

    python test_host.py WARDEN_WASM HOSTILE_WASM
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
import threading
import time

from support import Checks, QuietHandler, check, load_plugin, serve

plugin = load_plugin()
from warden_plugin import component, host_context, imports_http, imports_storage  # noqa: E402

WARDEN_WASM, HOSTILE_WASM = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="warden-hermes-host-")
NOW = 1_700_000_000_000


def db(name: str) -> imports_storage.SqliteStorage:
    s = imports_storage.SqliteStorage(os.path.join(TMP, name))
    check(s.open() is None, f"opened {name}")
    return s


def guard(config: dict, storage=None, wasm=WARDEN_WASM, **kw) -> component.Guard:
    """A guard that replays: these requests carry the fixed instant NOW (2023)."""
    with open(wasm, "rb") as f:
        data = f.read()
    kw.setdefault("replay", True)
    return component.Guard(data, json.dumps(config), storage or db(f"g{time.monotonic_ns()}.db"), cache_dir=None, **kw)


def tool_call(name: str, args: dict, session: str = "s1") -> dict:
    return {
        "tool_name": name,
        "arguments": json.dumps(args),
        "call_id": "c-1",
        "run_id": None,
        "session_id": session,
        "now_ms": NOW,
        "identity": {k: None for k in ("provider", "account_id", "sender_id", "channel_id", "thread_id", "agent_id")},
        "cwd": None,
        "derived_paths": [],
    }


# storage ---------------------------------------------------------------------
def storage_compare_and_swap():
    s = db("cas.db")
    check(s.set("n", "k", b"a", "absent") == (1, None), "set absent on a new key -> version 1")
    check(s.set("n", "k", b"b", "absent") == (None, imports_storage.Conflict()), "set absent on an existing key -> conflict")
    check(s.set("n", "k", b"b", 2) == (None, imports_storage.Conflict()), "set at a wrong version -> conflict")
    check(s.set("n", "k", b"b", 1) == (2, None), "set at the current version -> version 2")
    check(s.set("n", "k", b"c", "any") == (3, None), "set any -> version 3")
    check(s.get("n", "k") == ((b"c", 3), None), "get returns the value and version 3")
    check(s.delete("n", "k", 2) == (None, imports_storage.Conflict()), "delete at a wrong version -> conflict")
    check(s.delete("n", "k", 3) == (True, None), "delete at the current version -> removed")
    check(s.delete("n", "k", "any") == (False, None), "delete of a missing key -> false")
    check(s.get("n", "k") == (None, None), "the key is gone")


def storage_list_is_literal_and_ordered():
    s = db("list.db")
    for k in ["a_1", "a_2", "ab", "a%", "b", "A_9"]:
        s.set("n", k, k.encode(), "any")
    s.set("other", "a_3", b"x", "any")
    keys = lambda r: [k for (k, _, _) in r[0]]  # noqa: E731
    check(keys(s.list("n", "a_", 10, False)) == ["a_1", "a_2"], "prefix a_ matches literally, not A_9 or ab")
    check(keys(s.list("n", "a_", 10, True)) == ["a_2", "a_1"], "reverse order")
    check(keys(s.list("n", "a%", 10, False)) == ["a%"], "prefix a% matches literally")
    check(keys(s.list("n", "", 2, False)) == ["A_9", "a%"], "limit and key order")


def storage_limits_and_failures():
    s = db("limits.db")
    big = b"\0" * (imports_storage.MAX_VALUE_BYTES + 1)
    check(s.set("n", "k", big, "any") == (None, imports_storage.TooLarge()), "a value over 1 MiB -> too-large")
    check(s.get("n", "k") == (None, None), "nothing was written")
    check(s.set("n", "k", big[:-1], "any") == (1, None), "a value of exactly 1 MiB is stored")
    check(s.get("n", "x" * 2000)[1] == imports_storage.TooLarge(), "a key over 1 KiB -> too-large")
    with open(os.path.join(TMP, "a-file"), "w") as f:
        f.write("x")
    err = imports_storage.SqliteStorage(os.path.join(TMP, "a-file", "x.db")).open()
    check(isinstance(err, imports_storage.Unavailable), f"a database under a file -> unavailable ({err})")
    err = imports_storage.SqliteStorage(os.path.join(TMP, "nul\0name.db")).open()
    check(isinstance(err, imports_storage.Unavailable), f"an invalid path -> unavailable, no exception ({err})")
    err = imports_storage.SqliteStorage(TMP).open()
    check(isinstance(err, imports_storage.Unavailable), f"a directory as the database -> unavailable ({err})")
    ro_dir = os.path.join(TMP, "ro")
    os.makedirs(ro_dir)
    ro = imports_storage.SqliteStorage(os.path.join(ro_dir, "ro.db"))
    check(ro.open() is None, "opened a database to make read-only")
    ro.set("n", "k", b"v", "any")
    ro.close()
    os.chmod(os.path.join(ro_dir, "ro.db"), stat.S_IRUSR)
    os.chmod(ro_dir, stat.S_IRUSR | stat.S_IXUSR)
    if os.geteuid() != 0:  # root ignores file modes
        value, error = ro.set("n", "k", b"w", "any")
        check(isinstance(error, imports_storage.Unavailable), f"a write to a read-only database -> unavailable ({error})")


def storage_batches_commit_whole_or_not_at_all():
    s = db("batch.db")
    Put, Remove = imports_storage.Put, imports_storage.Remove
    check(s.set("n", "a", b"1", "any") == (1, None), "seeded a at version 1")
    torn = [Put("n", "b", b"2", "absent"), Put("n", "a", b"3", 1), Put("n", "a", b"4", 1)]
    check(s.commit(torn) == (None, 2), "a batch whose third condition fails names index 2")
    check(s.get("n", "b") == (None, None) and s.get("n", "a") == ((b"1", 1), None), "nothing of it was written")
    chained = [Put("n", "b", b"2", "absent"), Put("n", "a", b"3", 1), Put("n", "a", b"4", 2), Remove("n", "gone", "any")]
    check(s.commit(chained) == (None, None), "later writes see earlier ones in one batch")
    check(s.get("n", "a") == ((b"4", 3), None), "a was written twice in one batch: version 3")
    check(s.commit([Remove("n", "gone", 1)]) == (None, 0), "removing an absent key at a version conflicts")
    many = [Put("n", f"k{i}", b"v", "absent") for i in range(imports_storage.MAX_BATCH_WRITES + 1)]
    check(s.commit(many) == (None, imports_storage.TooLarge()), "a batch over the write limit -> too-large")
    check(s.commit(many[:-1]) == (None, None), "a batch at the write limit commits")


def refused_databases_name_the_file_and_what_to_do():
    import sqlite3

    empty = os.path.join(TMP, "empty.db")
    open(empty, "w").close()
    err = imports_storage.SqliteStorage(empty).open()
    check(isinstance(err, imports_storage.Unavailable) and "is empty (0 bytes)" in err.message and empty in err.message, f"0 bytes -> refused ({err})")
    check(os.path.getsize(empty) == 0, "the empty file is left as it was")
    foreign = os.path.join(TMP, "foreign.db")
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    with open(foreign, "rb") as f:
        before = f.read()
    err = imports_storage.SqliteStorage(foreign).open()
    with open(foreign, "rb") as f:
        check(f.read() == before, "the foreign file is unchanged")
    check(isinstance(err, imports_storage.Unavailable) and "is not Warden's (it has no Warden mark, and tables `notes`)" in err.message, f"foreign -> refused ({err})")
    newer = os.path.join(TMP, "newer.db")
    s = imports_storage.SqliteStorage(newer)
    check(s.open() is None, "a new database is created where no file exists")
    s.close()
    conn = sqlite3.connect(newer)
    check(conn.execute("PRAGMA application_id").fetchone()[0] == imports_storage.APPLICATION_ID, "it carries Warden's application id")
    conn.execute("PRAGMA user_version = 2")
    conn.close()
    err = imports_storage.SqliteStorage(newer).open()
    check(isinstance(err, imports_storage.Unavailable) and "newer Warden (schema 2; this one knows up to 1)" in err.message, f"newer -> refused ({err})")



def storage_failure_reaches_the_component_typed():
    """The pin is read with `get`, whose result type is `result<option<entry>,
    storage-error>`: the error case must reach the guest as a typed error (and
    the guest then fails closed by its own rule), not as a trap."""

    class Broken(imports_storage.SqliteStorage):
        def get(self, namespace, key):
            if namespace == "pin":
                return None, imports_storage.Unavailable("disk gone")
            return super().get(namespace, key)

    s = Broken(os.path.join(TMP, "broken.db"))
    s.open()
    g = guard({"pin": {"tools": [{"name": "send", "kind": "chat", "chatParam": "chat"}]}}, storage=s)
    v = g.check_tool_call(tool_call("send", {"chat": "c1"}))
    print(f"       verdict: {v['decision']} by {v['rule']}: {v['reason']}")
    check(v["decision"] == "deny", "a gated call whose pin cannot be read is denied")
    check(v["rule"] != component.GUEST_FAILURE_RULE, "by the component's own rule, not a guest trap")
    check(v["rule"].startswith("pin."), f"the rule is a pin rule ({v['rule']})")


def batch_conflicts_and_failures_reach_the_component_typed():
    """`commit` answers `result<_, batch-error>`, which wasmtime-py writes
    untagged: a conflict must reach the guest as `conflict(index)` (it then
    re-reads and retries) and a storage failure as `failed(...)`, never the one
    as the other."""
    import logging

    lines = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    handler = Keep()
    logging.getLogger("warden.guest").addHandler(handler)
    try:
        s = db("batch-conflict.db")
        first, second = guard({}, storage=s), guard({}, storage=s)
        name = "tools.allow.tools.allow"
        for g in (first, second, first, second):
            g.check_tool_call(tool_call("exec", {"command": "ls"}))
            g.diagnostics()  # writes this instance's pending count
        found, _ = s.get("counters", name)
        check(found is not None and int(found[0]) == 4,
              f"both hosts' counts are in storage: each lost race was read again and retried ({found})")
        check(not any("counters not written" in l for l in lines), f"no count was left unwritten ({lines})")

        class Down(imports_storage.SqliteStorage):
            def commit(self, writes):
                return None, imports_storage.Unavailable("disk gone")

        d = Down(os.path.join(TMP, "batch-down.db"))
        d.open()
        g = guard({}, storage=d)
        g.check_tool_call(tool_call("exec", {"command": "ls"}))
        counts = {c["name"]: c["value"] for c in g.diagnostics()["counters"]}
        check(any("counters not written" in l and "disk gone" in l for l in lines),
              f"a failed batch reaches the guest as the storage's own error ({lines[-1:]})")
        check(counts.get(name) == 1, f"diagnostics still count what could not be written ({counts})")
    finally:
        logging.getLogger("warden.guest").removeHandler(handler)


def far_request_times_are_refused_before_the_component_and_a_replaying_guard_accepts_them():
    from warden_plugin import clock

    config = {"pin": {"tools": [{"name": "send", "kind": "chat", "chatParam": "chat"}]}}
    s = db("clock.db")
    g = guard(config, storage=s, replay=False)
    now = clock.system_now_ms()
    far = now + 24 * 3600 * 1000

    def at(call: dict, t: int) -> dict:
        return {**call, "now_ms": t}

    v = g.check_tool_call(at(tool_call("send", {"chat": "c-bob"}), far))
    check((v["decision"], v["rule"]) == ("deny", clock.CLOCK_REFUSED_RULE), "a tool call a day ahead: deny by host.clock-refused")
    check(f"check-tool-call: now_ms: `{far}` is " in v["reason"] and "WARDEN_REPLAY=1" in v["reason"], f"the reason names the field, value and replay: {v['reason']}")
    turn = {"run_id": None, "session_id": "s1", "now_ms": now * 1000, "identity": tool_call("x", {})["identity"],
            "trigger": "user", "message": "hi", "context": {"thread_starter": None, "replied_to": None, "since_last_reply": []},
            "history": [], "queue_mode": None, "hook_timeout_ms": None}
    o = g.check_turn(turn)
    check(o["proceed"] and o["rule"] == clock.CLOCK_REFUSED_RULE, "a turn in microseconds proceeds unchecked (inbound fails open)")
    check("looks like microseconds" in o["reason"], f"with a hint: {o['reason']}")
    for name, fn in [
        ("start-turn", lambda: g.start_turn({"session_id": "s1", "run_id": "r1", "chat_id": "c-alice", "label": None, "now_ms": far, "prompt": None, "dedicated": False})),
        ("settle-turn", lambda: g.settle_turn({"session_id": "s1", "run_id": "r1", "now_ms": far, "prompt": None, "dedicated": False})),
        ("current-pin", lambda: g.current_pin("s1", far)),
        ("record-usage", lambda: g.record_usage({"agent_id": None, "session_id": None, "tokens": 5, "now_ms": far, "prompt": None, "dedicated": False})),
    ]:
        try:
            fn()
            raised = ""
        except component.GuardError as e:
            raised = str(e)
        check(raised.startswith(f"{name}: now_ms: `{far}` is "), f"{name} a day ahead is refused: {raised}")
    check(s.list("pin", "", 10, False) == ([], None), "nothing was pinned")
    pin = g.start_turn({"session_id": "s1", "run_id": "r1", "chat_id": "c-alice", "label": None, "now_ms": now, "prompt": None, "dedicated": False})
    check(pin is not None, "a start-turn at this host's clock pins")
    v = g.check_tool_call(at(tool_call("send", {"chat": "c-bob"}), now))
    check((v["decision"], v["rule"]) == ("deny", "pin.other-chat"), "and the pin holds at this host's clock")
    r = guard(config, storage=s, replay=True)
    v = r.check_tool_call(at(tool_call("send", {"chat": "c-bob"}), far))
    check((v["decision"], v["rule"]) == ("allow", "tools.allow"), "a replaying guard passes the far time on: the pin has expired by then")


def pinning_through_the_component_and_sqlite():
    s = db("pin.db")
    g = guard({"pin": {"tools": [{"name": "send", "kind": "chat", "chatParam": "chat"}]}}, storage=s)
    pin = g.start_turn({"session_id": "s1", "run_id": "r1", "chat_id": "c-alice", "label": "Alice", "now_ms": NOW, "prompt": None, "dedicated": False})
    check(pin is not None and pin["chat_id"] == "c-alice", "start-turn pins chat c-alice")
    v = g.check_tool_call(tool_call("send", {"chat": "c-bob"}))
    check((v["decision"], v["rule"]) == ("deny", "pin.other-chat"), "writing to another chat: deny by pin.other-chat")
    v = g.check_tool_call(tool_call("send", {"chat": "c-alice"}))
    check(v["decision"] == "allow", f"writing to the pinned chat: allow by {v['rule']}")
    g2 = guard({"pin": {"tools": [{"name": "send", "kind": "chat", "chatParam": "chat"}]}}, storage=s)
    v = g2.check_tool_call(tool_call("send", {"chat": "c-bob"}))
    check((v["decision"], v["rule"]) == ("deny", "pin.other-chat"), "a second host on the same database enforces the pin")
    g.settle_turn({"session_id": "s1", "run_id": "r1", "now_ms": NOW + 1})
    check(g.current_pin("s1", NOW + 2) is None, "settle-turn clears the pin")
    # Each host keeps its counts until a bound (64 checks, 1 s of request time, a turn's start or end, diagnostics).
    first = {c["name"]: c["value"] for c in g.diagnostics()["counters"]}
    check(first.get("tools.deny.pin.other-chat") == 1, f"the first host reports what it wrote; the second's is still in it ({first})")
    counters = {c["name"]: c["value"] for c in g2.diagnostics()["counters"]}
    check(counters.get("tools.deny.pin.other-chat") == 2, f"diagnostics count both hosts' denials ({counters})")


def configure_reports_every_error():
    try:
        guard({"pin": {"enabled": "yes", "ttlMinutes": 2000}})
    except component.ConfigErrors as e:
        paths = sorted(p for p, _ in e.errors)
        check(paths == ["pin.enabled", "pin.ttlMinutes"], f"both errors reported with their paths: {paths}")
        return
    raise AssertionError("an invalid configuration was accepted")


# http ------------------------------------------------------------------------
SEEN = []


class Echo(QuietHandler):
    def handle_any(self):
        n = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(n) if n else b""
        SEEN.append((self.command, self.path, dict(self.headers.items()), body))
        if self.path.startswith("/v1/slow"):
            time.sleep(0.5)
        if self.path.startswith("/v1/hang"):
            time.sleep(2.0)
        if self.path.startswith("/v1/big"):
            return self.reply(200, b"x" * 5000)
        if self.path.startswith("/v1/redirect"):
            return self.reply(302, b"", [("Location", "http://127.0.0.1:9/elsewhere")])
        out = json.dumps({"path": self.path, "auth": self.headers.get("authorization"), "cookie": self.headers.get("cookie"),
                          "x": self.headers.get("x-test"), "body": body.decode()}).encode()
        self.reply(200, out, [("Content-Type", "application/json")])

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


def http_gateway():
    server = serve(Echo)
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    key_file = os.path.join(TMP, "key.txt")
    with open(key_file, "w") as f:
        f.write("file-key-1\n")
    os.environ["WARDEN_TEST_KEY"] = "env-key"
    gw = imports_http.HttpGateway(imports_http.destinations_from_config({"destinations": [
        {"name": "env", "baseUrl": base, "credential": {"env": "WARDEN_TEST_KEY"}, "maxResponseBytes": 1024},
        {"name": "file", "baseUrl": base, "credential": {"file": key_file, "header": "x-api-key", "scheme": ""}},
        {"name": "missing", "baseUrl": base, "credential": {"env": "WARDEN_TEST_NO_SUCH_KEY"}},
        {"name": "open", "baseUrl": base},
    ]}))
    req = lambda dest, path, **kw: imports_http.Request(dest, kw.pop("method", "get"), base + path, timeout_ms=kw.pop("timeout_ms", 2000), **kw)  # noqa: E731

    SEEN.clear()
    for url in [base.replace("/v1", "/v10") + "/x", base + "/../admin", base + "/%2e%2e/admin",
                base.replace("127.0.0.1", "127.0.0.1@evil.test") + "/x"]:
        out = gw.send(imports_http.Request("env", "get", url, timeout_ms=1000))
        check(out == imports_http.HttpError("denied"), f"{url} -> denied")
    check(gw.send(imports_http.Request("nope", "get", base + "/x", timeout_ms=1000)) == imports_http.HttpError("denied"),
          "an unknown destination -> denied")
    check(SEEN == [], "no request reached the server for any denied URL")

    out = gw.send(req("env", "/echo", method="post", body=b"hello",
                      headers=[("Authorization", "Bearer stolen"), ("Cookie", "c=1"), ("X-Test", "kept")]))
    got = json.loads(out.body)
    check(out.status == 200 and got["body"] == "hello", "a POST inside the base URL is sent with its body")
    check(got["auth"] == "Bearer env-key", "the host attached the env credential and dropped the component's")
    check(got["cookie"] is None and got["x"] == "kept", "reserved headers dropped, others kept")

    got = json.loads(gw.send(req("file", "/echo")).body)
    check(SEEN[-1][2].get("x-api-key") == "file-key-1" and got["auth"] is None, "the file credential goes in its header, no scheme")
    time.sleep(0.01)
    with open(key_file, "w") as f:
        f.write("file-key-22\n")
    gw.send(req("file", "/echo"))
    check(SEEN[-1][2].get("x-api-key") == "file-key-22", "the key file is reread when it changes")

    check(gw.send(req("missing", "/echo")) == imports_http.HttpError("missing-credential"), "an absent credential -> missing-credential")
    check(gw.send(req("env", "/big")) == imports_http.HttpError("too-large"), "a response over the cap -> too-large")
    out = gw.send(req("open", "/redirect"))
    check(isinstance(out, imports_http.Response) and out.status == 302, "a redirect is returned, not followed")
    started = time.monotonic()
    out = gw.send(req("open", "/hang", timeout_ms=300))
    check(out == imports_http.HttpError("timeout") and time.monotonic() - started < 1.5, "the deadline is enforced (timeout)")
    check(gw.send(req("open", "/echo", timeout_ms=0)) == imports_http.HttpError("timeout"), "a zero deadline -> timeout")
    check(gw.send(req("open", "/echo", body=b"x" * (imports_http.MAX_REQUEST_BYTES + 1))) == imports_http.HttpError("too-large"),
          "a request body over 4 MiB -> too-large")

    started = time.monotonic()
    outs = gw.send_all([req("open", f"/slow/{i}") for i in range(8)])
    took = time.monotonic() - started
    check([json.loads(o.body)["path"] for o in outs] == [f"/v1/slow/{i}" for i in range(8)], "send-all answers in request order")
    check(took < 2.5, f"send-all ran 8 x 0.5 s requests concurrently ({took:.2f} s, 4 s one after another)")
    server.shutdown()


# sandbox ---------------------------------------------------------------------
def sandbox_survives_a_hostile_guest():
    g = guard({}, wasm=HOSTILE_WASM, fuel=200_000_000, memory_bytes=32 << 20)
    said = {"spin": "ran out of its fuel budget of 200,000,000 instructions", "hoard": "hit its memory cap of 32 MiB",
            "crash": "internal error (unreachable)"}
    for tool, what in [("spin", "an endless loop"), ("hoard", "unbounded allocation"), ("crash", "a trap")]:
        started = time.monotonic()
        v = g.check_tool_call(tool_call(tool, {}))
        print(f"       {tool}: {v['reason']} ({time.monotonic() - started:.2f} s)")
        check((v["decision"], v["rule"]) == ("deny", component.GUEST_FAILURE_RULE), f"{what} -> deny by {component.GUEST_FAILURE_RULE}")
        check(said[tool] in v["reason"] and "\n" not in v["reason"] and "backtrace" not in v["reason"],
              f"and the reason says so in one line: {said[tool]}")
        v = g.check_tool_call(tool_call("fine", {}))
        check((v["decision"], v["rule"]) == ("allow", "hostile.ok"), "the next call runs on a fresh instance")
    turn = {"run_id": None, "session_id": "s1", "now_ms": NOW,
            "identity": {k: None for k in ("provider", "account_id", "sender_id", "channel_id", "thread_id", "agent_id")},
            "trigger": "user", "message": "hi", "context": {"thread_starter": None, "replied_to": None, "since_last_reply": []},
            "history": [], "queue_mode": None, "hook_timeout_ms": None}
    o = g.check_turn(turn)
    check(o["proceed"] and o["rule"] == component.GUEST_FAILURE_RULE, "a spinning turn check fails open")


def concurrent_calls_use_separate_instances():
    g = guard({"pin": {"tools": [{"name": "send", "kind": "chat", "chatParam": "chat"}]}})
    g.start_turn({"session_id": "s1", "run_id": None, "chat_id": "c1", "label": None, "now_ms": NOW, "prompt": None, "dedicated": False})
    results = []

    def worker(i):
        v = g.check_tool_call(tool_call("send", {"chat": "c1" if i % 2 else "c2"}))
        results.append((i % 2, v["decision"], v["rule"]))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(len(results) == 16, "16 concurrent checks answered")
    check(all(d == "allow" for (odd, d, _) in results if odd), "every call to the pinned chat allowed")
    check(all((d, r) == ("deny", "pin.other-chat") for (odd, d, r) in results if not odd), "every call elsewhere denied by pin.other-chat")
    check(g.idle_instances() >= 1, f"instances returned to the pool ({g.idle_instances()} idle)")


def component_imports_only_its_world():
    with open(WARDEN_WASM, "rb") as f:
        comp = component.load_component(component.engine(), f.read(), None)
    names = sorted(comp.type.imports(component.engine()).keys())
    check(names == [f"warden:guard/{i}@0.1.0" for i in ("http", "log", "storage", "types")], f"imports: {names}")


def compiled_component_is_cached():
    cache = os.path.join(TMP, "cache")
    with open(WARDEN_WASM, "rb") as f:
        data = f.read()
    t0 = time.monotonic()
    component.load_component(component.engine(), data, cache)
    first = time.monotonic() - t0
    files = os.listdir(cache)
    check(len(files) == 1 and files[0].endswith(".cwasm"), f"one artifact cached ({files})")
    t0 = time.monotonic()
    component.load_component(component.engine(), data, cache)
    second = time.monotonic() - t0
    check(second < first, f"loading from the cache is faster ({second * 1000:.0f} ms vs {first * 1000:.0f} ms)")


def self_protection_and_authenticated_keys():
    home = os.path.join(TMP, "hermes-home")
    os.makedirs(os.path.join(home, "warden"), exist_ok=True)
    db_path = os.path.join(home, "warden", "warden.db")
    secret = host_context.approval_secret(db_path)
    check(len(secret) == 32 and stat.S_IMODE(os.stat(db_path + ".key").st_mode) == 0o600, "a private 32-byte secret")
    check(host_context.approval_secret(db_path) == secret, "read back the same")
    declared = host_context.declare(db_path, os.path.join(home, "warden", "warden.json"), None, home, "/opt/warden-plugin", secret)
    g = guard({}, storage=db("self.db"), host_context=declared)
    cases = [
        (tool_call("terminal", {"command": "warden approve --key k --scope always"}), "self.admin-command"),
        (tool_call("terminal", {"command": f"sqlite3 {db_path} 'delete from records'"}), "self.database-client"),
        (tool_call("write_file", {"path": os.path.join(home, "config.yaml"), "content": "plugins: {}"}), "self.protected-file"),
        (tool_call("terminal", {"command": "rm -rf /opt/warden-plugin"}), "self.protected-file"),
        (tool_call("read_file", {"path": db_path + ".key"}), "self.protected-file"),
    ]
    for call, rule in cases:
        v = g.check_tool_call(call)
        check((v["decision"], v["rule"]) == ("deny", rule), f"{json.loads(call['arguments'])} -> deny by {rule} ({v['rule']})")
    v = g.check_tool_call(tool_call("terminal", {"command": "sqlite3 /tmp/app.db 'select 1'"}))
    check(v["rule"] != "self.database-client", f"a project's own database is not warden's ({v['rule']})")
    asked = g.check_tool_call(tool_call("terminal", {"command": 'rm -rf "$TARGET"'}))
    key = asked["approval_key"]
    check(asked["decision"] == "ask" and key.startswith("t2:o:"), "an ask carries an authenticated key")
    answer = {"key": key.replace("t2:o:", "t2:a:", 1), "allow": True, "scope": "always", "session_id": None, "call_id": None, "now_ms": NOW, "idempotency_key": None}
    try:
        g.record_approval(answer)
        check(False, "a forged scope letter is refused")
    except component.GuardError as e:
        check("invalid-input" in str(e) and "key:" in str(e), f"a forged scope letter is refused: {e}")
    g.record_approval({**answer, "key": key, "scope": "once"})
    check(g.check_tool_call(tool_call("terminal", {"command": 'rm -rf "$TARGET"'}))["rule"] == "memory.allow", "the genuine key works")


def start_up_failures_say_in_one_line_what_is_wrong_with_which_file():
    from warden_plugin import runtime, settings

    work = tempfile.mkdtemp(prefix="warden-hermes-start-", dir=TMP)
    config = os.path.join(work, "warden.json")
    with open(config, "w") as f:
        f.write("{}")
    files = {}
    for name, data in [("random.wasm", os.urandom(4096)), ("core.wasm", b"\0asm\x01\x00\x00\x00"), ("empty.wasm", b""),
                       ("text.wasm", b"(component)")]:
        files[name] = os.path.join(work, name)
        with open(files[name], "wb") as f:
            f.write(data)

    def start(component_path, config_path=config, **kw):
        s = settings.Settings(config_path=config_path, db_path=os.path.join(work, f"w{time.monotonic_ns()}.db"),
                              component_path=component_path, cache_dir=None,
                              fuel=kw.get("fuel", component.DEFAULT_FUEL), memory_bytes=kw.get("memory", 64 << 20))
        try:
            runtime.Runtime()._start(s)
        except runtime.Unavailable as e:
            return str(e)
        return "started"

    bad_config = os.path.join(work, "bad.json")
    with open(bad_config, "w") as f:
        f.write('{"tools": {"enabled": "yes"}, "nope": 1}')
    cases = [
        ("a component of random bytes", start(files["random.wasm"]), files["random.wasm"], "is not WebAssembly (it starts with bytes"),
        ("a core module", start(files["core.wasm"]), files["core.wasm"], "a core WebAssembly module, not a component"),
        ("an empty file", start(files["empty.wasm"]), files["empty.wasm"], "it is empty"),
        ("WebAssembly text", start(files["text.wasm"]), files["text.wasm"], "WebAssembly text"),
        ("an exhausted fuel budget", start(WARDEN_WASM, fuel=1_000), WARDEN_WASM, "ran out of its fuel budget of 1,000 instructions"),
        ("a guest out of memory", start(WARDEN_WASM, memory=1 << 20), WARDEN_WASM, "memory cap of 1 MiB"),
        ("an invalid configuration", start(WARDEN_WASM, config_path=bad_config), bad_config, "is invalid ("),
    ]
    for what, said, path, expected in cases:
        print(f"       {what}: {said}")
        check(expected in said and path in said, f"{what}: says what is wrong ({expected!r}) and names {os.path.basename(path)}")
        check("\n" not in said and "backtrace" not in said and "utf-8" not in said, f"{what}: in one line, no decoder message or backtrace")
    check(start(WARDEN_WASM) == "started", "the real component with the same settings starts")


if __name__ == "__main__":
    c = Checks()
    c.run("storage: compare-and-swap honours each condition", storage_compare_and_swap)
    c.run("storage: list matches prefixes literally and orders both ways", storage_list_is_literal_and_ordered)
    c.run("storage: limits and unavailable stores give typed errors", storage_limits_and_failures)
    c.run("storage: batches commit whole or not at all", storage_batches_commit_whole_or_not_at_all)
    c.run("storage: empty, foreign and newer databases are refused", refused_databases_name_the_file_and_what_to_do)
    c.run("storage: a failing get reaches the component as a typed error", storage_failure_reaches_the_component_typed)
    c.run("storage: a batch conflict and a batch failure reach the component typed", batch_conflicts_and_failures_reach_the_component_typed)
    c.run("component: reply pinning through SQLite, shared by two hosts", pinning_through_the_component_and_sqlite)
    c.run("clock: far request times are refused before the component; replay accepts them", far_request_times_are_refused_before_the_component_and_a_replaying_guard_accepts_them)
    c.run("component: configure reports every error with its path", configure_reports_every_error)
    c.run("component: imports nothing but its own world", component_imports_only_its_world)
    c.run("component: the compiled artifact is cached", compiled_component_is_cached)
    c.run("http: allow-list, credentials, headers, caps, redirects, deadline, send-all", http_gateway)
    c.run("sandbox: fuel, memory cap and traps are contained", sandbox_survives_a_hostile_guest)
    c.run("start-up failures say in one line what is wrong, with which file", start_up_failures_say_in_one_line_what_is_wrong_with_which_file)
    c.run("pool: concurrent checks run on separate instances", concurrent_calls_use_separate_instances)
    c.run("self-protection: warden's files, database and commands; authenticated approval keys", self_protection_and_authenticated_keys)
    sys.exit(c.done())
