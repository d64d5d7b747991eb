"""The cross-adapter fixture through the Hermes plugin: the same configuration
and tool calls the Rust adapters are tested with (tests/fixtures/cross-adapter)
go through `pre_tool_call` with the real component, and each must give exactly
the expected decision and rule.

    python cross_adapter.py WARDEN_WASM FIXTURE_DIR
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile

from support import Checks, check, load_plugin

load_plugin()
from warden_plugin import component, imports_storage  # noqa: E402
from warden_plugin.hooks import Hooks  # noqa: E402

WARDEN_WASM, FIXTURE = sys.argv[1], sys.argv[2]


class FixedRuntime:
    def __init__(self, guard):
        self._guard = guard

    def guard(self):
        return self._guard

    def configured_account_id(self):
        return None


def decided(answer):
    """The decision and rule a `pre_tool_call` answer shows."""
    if answer is None:
        return "allow", None
    message = answer.get("message", "")
    held = re.match(r"Warden is holding this call for a person's approval \(([^:)]+):", message)
    if held:  # an ask where nobody can be asked: blocked at once, left pending
        return "ask", held.group(1)
    match = re.match(r"Warden (?:refused this call|asks before this call) \(([^,)]+)", message)
    rule = match.group(1) if match else None
    return {"block": "deny", "approve": "ask"}.get(answer.get("action"), answer.get("action")), rule


def main() -> int:
    with open(os.path.join(FIXTURE, "config.json")) as f:
        config = f.read()
    with open(os.path.join(FIXTURE, "cases.json")) as f:
        fixture = json.load(f)
    storage = imports_storage.SqliteStorage(os.path.join(tempfile.mkdtemp(prefix="warden-cross-"), "w.db"))
    storage.open()
    with open(WARDEN_WASM, "rb") as f:
        # The cases carry a fixed instant of 2023: replayed.
        guard = component.Guard(f.read(), config, storage, cache_dir=None, replay=True)
    # Once where a person can be asked (Hermes's approval gate), once where nobody can.
    interactive, headless = Hooks(FixedRuntime(guard), can_ask=lambda: True), Hooks(FixedRuntime(guard), can_ask=lambda: False)
    os.environ["TERMINAL_CWD"] = fixture["cwd"]
    checks = Checks()
    for case, hooks, how in [(c, h, how) for c in fixture["cases"] for h, how in ((interactive, ""), (headless, " (headless)"))]:
        answer = hooks.pre_tool_call(tool_name=case["tool"], args=case["args"], session_id="", tool_call_id="x")
        decision, rule = decided(answer)
        expect = case["expect"]
        # An allowed call answers nothing; its rule comes from the component directly.
        if decision == "allow":
            verdict = guard.check_tool_call({
                "tool_name": case["tool"], "arguments": json.dumps(case["args"]), "call_id": None, "run_id": None,
                "session_id": None, "now_ms": 1_700_000_000_000,
                "identity": {k: None for k in ("provider", "account_id", "sender_id", "channel_id", "thread_id", "agent_id")},
                "cwd": fixture["cwd"], "derived_paths": [],
            })
            rule = verdict["rule"]
        name = f"{case['tool']} {json.dumps(case['args'])[:60]} -> {expect['decision']} by {expect['rule']}{how}"
        got = (decision, rule)
        checks.run(name, lambda got=got, expect=expect: check(got == (expect["decision"], expect["rule"]), f"got {got[0]} by {got[1]}"))
    print(f"cross-adapter: {len(fixture['cases'])} cases through the Hermes plugin")
    return checks.done()


if __name__ == "__main__":
    sys.exit(main())
