"""The Hermes hooks' own logic, with a recording guard in place of the
component for what the component cannot produce yet (an `ask` verdict):
approval rule keys and the scope an answer is recorded with.

    python test_hooks.py
"""

from __future__ import annotations

import sys

from support import Checks, check, load_plugin

load_plugin()
from warden_plugin.hooks import Hooks  # noqa: E402


class RecordingGuard:
    def __init__(self, verdict):
        self.verdict = verdict
        self.calls = []
        self.approvals = []

    def check_tool_call(self, call):
        self.calls.append(call)
        return self.verdict

    def record_approval(self, approval):
        self.approvals.append(approval)


class FixedRuntime:
    def __init__(self, guard):
        self._guard = guard

    def guard(self):
        return self._guard


def ask(scope):
    return {"decision": "ask", "rule": "exec.network", "reason": "it downloads", "risk": "medium", "scope": scope,
            "approval_key": "t1:abc", "observed": None, "signals": []}


def answered(scope_offered, choice):
    g = RecordingGuard(ask(scope_offered))
    h = Hooks(FixedRuntime(g))
    out = h.pre_tool_call(tool_name="terminal", args={"command": "curl x"}, session_id="s1", tool_call_id="call-7")
    h.post_approval_response(pattern_key="plugin_rule:" + out["rule_key"], choice=choice)
    return out, g.approvals


def approve_directive_and_rule_keys():
    out, _ = answered("once", "timeout")
    check(out["action"] == "approve" and "exec.network" in out["message"], f"ask -> approve directive: {out}")
    check(out["rule_key"] == "warden:t1:abc:call:call-7", "a once-scoped ask is filed under a key bound to the call")
    out, _ = answered("session", "timeout")
    check(out["rule_key"] == "warden:t1:abc:session:s1", "a session-scoped ask under a key bound to the session")
    out, _ = answered("always", "timeout")
    check(out["rule_key"] == "warden:t1:abc", "an always-scoped ask under the approval key alone")


def answers_never_outlive_the_offer():
    cases = [("once", "always", True, "once"), ("session", "always", True, "session"), ("always", "session", True, "session"),
             ("always", "always", True, "always"), ("session", "once", True, "once"), ("session", "deny", False, "once")]
    for offered, choice, allow, scope in cases:
        _, approvals = answered(offered, choice)
        check(len(approvals) == 1 and (approvals[0]["allow"], approvals[0]["scope"]) == (allow, scope),
              f"offered {offered}, answered {choice} -> recorded allow={allow} scope={scope}")
        check(approvals[0]["key"] == "t1:abc" and approvals[0]["call_id"] == "call-7" and approvals[0]["session_id"] == "s1",
              "with the approval key, the call and the session")
    _, approvals = answered("session", "timeout")
    check(approvals == [], "a timeout records nothing")


def other_plugins_approvals_are_ignored():
    g = RecordingGuard(ask("once"))
    h = Hooks(FixedRuntime(g))
    h.post_approval_response(pattern_key="plugin_rule:other:thing", choice="always")
    h.post_approval_response(pattern_key="rm_recursive", choice="always")
    check(g.approvals == [], "answers to other plugins' and Hermes's own prompts are not recorded")


def deny_and_failure_become_blocks():
    g = RecordingGuard({"decision": "deny", "rule": "pin.other-chat", "reason": "owed to Alice", "risk": "high",
                        "scope": None, "approval_key": None, "observed": None, "signals": []})
    out = Hooks(FixedRuntime(g)).pre_tool_call(tool_name="send", args={"chat": "x"}, session_id="s1")
    check(out == {"action": "block", "message": "Warden refused this call (pin.other-chat): owed to Alice"}, f"deny -> block: {out}")

    class Exploding:
        def guard(self):
            raise RuntimeError("boom")

    out = Hooks(Exploding()).pre_tool_call(tool_name="send", args={}, session_id="s1")
    check(out["action"] == "block" and "boom" in out["message"], "an unexpected error blocks the call (fail-closed)")
    check(Hooks(Exploding()).pre_llm_call(session_id="s1", user_message="hi") is None, "and lets the turn proceed (fail-open)")


def delegation_chains_resolve_to_the_root():
    g = RecordingGuard({"decision": "allow", "rule": "not-configured", "reason": "", "risk": "low", "scope": None,
                        "approval_key": None, "observed": None, "signals": []})
    h = Hooks(FixedRuntime(g))
    h._remember("root", {"provider": "slack", "sender_id": "U1", "channel_id": "C1"})
    h.subagent_start(parent_session_id="root", child_session_id="child")
    h.subagent_start(parent_session_id="child", child_session_id="grandchild")
    h.pre_tool_call(tool_name="terminal", args={"command": "ls"}, session_id="grandchild")
    call = g.calls[-1]
    check(call["session_id"] == "root", "a grandchild's call is checked under the root session")
    check(call["identity"]["sender_id"] == "U1" and call["identity"]["provider"] == "slack", "with the root's identity")
    h.subagent_stop(child_session_id="grandchild")
    check(h.root_of("grandchild") == "grandchild", "subagent_stop forgets the link")


if __name__ == "__main__":
    c = Checks()
    c.run("ask: approve directive, rule key bound to the offered scope", approve_directive_and_rule_keys)
    c.run("ask: an answer is recorded for no longer than Warden offered", answers_never_outlive_the_offer)
    c.run("ask: other approvals are left alone", other_plugins_approvals_are_ignored)
    c.run("deny and plugin failure become blocks; turns fail open", deny_and_failure_become_blocks)
    c.run("delegation chains resolve to the root session", delegation_chains_resolve_to_the_root)
    sys.exit(c.done())
