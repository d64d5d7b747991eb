"""The Hermes hooks' own logic, with a recording guard in place of the
component, for every case a real Hermes turn does not reach in the end-to-end
test: each offered scope against each of Hermes's answers, timeouts, other
plugins' approvals, failures, delegation chains and the account ID.

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

    def observe_tool_result(self, report):
        self.observed = getattr(self, "observed", [])
        self.observed.append(report)
        if getattr(self, "observe_fails", False):
            raise RuntimeError("storage failed: disk full")
        return {"found": 1, "recorded": 1, "dropped": 0, "signals": []}


class FixedRuntime:
    def __init__(self, guard, account_id=None):
        self._guard = guard
        self._account_id = account_id

    def guard(self):
        return self._guard

    def configured_account_id(self):
        return self._account_id


def ask(scope):
    return {"decision": "ask", "rule": "exec.network", "reason": "it downloads", "risk": "medium", "scope": scope,
            "approval_key": "t1:abc", "observed": None, "signals": []}


def answered(scope_offered, choice):
    g = RecordingGuard(ask(scope_offered))
    h = Hooks(FixedRuntime(g), can_ask=lambda: True)
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


def account_id_is_the_setting_else_the_profile():
    from gateway.session_context import clear_session_vars, set_session_vars
    from warden_plugin import settings

    allow = {"decision": "allow", "rule": "tools.allow", "reason": "", "risk": "low", "scope": None,
             "approval_key": None, "observed": None, "signals": []}

    class TurnGuard(RecordingGuard):
        def check_turn(self, turn):
            self.calls.append(turn)
            return {"proceed": True, "outcome": "not_configured", "rule": "not-configured", "append_context": None}

    def account(runtime_account, profile=""):
        g = TurnGuard(allow)
        tokens = set_session_vars(platform="telegram", user_id="U1", profile=profile) if profile else None
        try:
            Hooks(FixedRuntime(g, runtime_account)).pre_llm_call(session_id="s1", user_message="hi",
                                                                  platform="telegram", sender_id="U1")
        finally:
            if tokens is not None:
                clear_session_vars(tokens)
        return g.calls[-1]["identity"]["account_id"]

    check(account("acme-bot") == "acme-bot", "the account_id setting names the account")
    check(account("acme-bot", profile="work") == "acme-bot", "even when the gateway bound a profile to the turn")
    check(account(None, profile="work") == "work", "without it, the profile the gateway bound to the turn")
    check(account(None) == settings.profile_account() and account(None), f"else this process's Hermes profile ({account(None)!r})")


def requests_carry_this_processs_clock_whatever_time_hermes_passes():
    from warden_plugin import clock

    allow = {"decision": "allow", "rule": "tools.allow", "reason": "", "risk": "low", "scope": None,
             "approval_key": None, "observed": None, "signals": []}
    g = RecordingGuard(allow)
    far = clock.system_now_ms() + 24 * 3600 * 1000
    Hooks(FixedRuntime(g)).pre_tool_call(tool_name="send", args={"chat": "x"}, session_id="s1", timestamp=far, now_ms=far)
    stamped = g.calls[0]["now_ms"]
    check(abs(stamped - clock.system_now_ms()) <= 60_000, f"the tool call is stamped with this process's clock ({stamped}), not {far}")


def tool_results_are_observed_under_the_root_session_with_its_identity():
    from warden_plugin.hooks import result_text

    g = RecordingGuard(None)
    h = Hooks(FixedRuntime(g))
    h.pre_llm_call(session_id="root", user_message="hi", platform="telegram", sender_id="u1")
    h.subagent_start(parent_session_id="root", child_session_id="child")
    out = h.post_tool_call(tool_name="read_inbox", args={}, result='{"from": "mallory@evil.example"}', session_id="child",
                           tool_call_id="c9", turn_id="t1", status="ok")
    check(out is None, "post_tool_call answers nothing: the result reaches the model unchanged")
    r = g.observed[-1]
    check(r["tool_name"] == "read_inbox" and r["content"] == '{"from": "mallory@evil.example"}', f"the result text as Hermes gave it: {r}")
    check(r["session_id"] == "root" and r["identity"]["sender_id"] == "u1", "under the delegating session, with its identity")
    check(r["call_id"] == "c9" and r["run_id"] == "t1" and r["is_error"] is False, "call, turn and success carried")
    h.post_tool_call(tool_name="web_fetch", result={"body": "x"}, session_id="root", status="error", error_message="timed out")
    r = g.observed[-1]
    check(r["is_error"] is True and r["content"] == '{"body": "x"}\ntimed out', f"an error's message follows a non-text result: {r}")
    check(result_text(None, "boom") == "boom" and result_text("boom: x", "boom") == "boom: x", "an error already in the text is not repeated")


def a_result_that_cannot_be_recorded_still_reaches_the_model():
    g = RecordingGuard(None)
    g.observe_fails = True
    out = Hooks(FixedRuntime(g)).post_tool_call(tool_name="read_inbox", result="x", session_id="s1", status="ok")
    check(out is None and len(g.observed) == 1, "a failed observation raises nothing into Hermes and changes nothing")

    class Down:
        def guard(self):
            from warden_plugin.runtime import Unavailable

            raise Unavailable("no configuration")

        def configured_account_id(self):
            return None

    check(Hooks(Down()).post_tool_call(tool_name="read_inbox", result="x", session_id="s1") is None,
          "nor does a guard that cannot start")

class SettingsRuntime(FixedRuntime):
    def __init__(self, guard, headless_ask):
        super().__init__(guard)
        import dataclasses

        from warden_plugin import settings

        self.settings = dataclasses.replace(settings.load(), config_path="/etc/w.json", db_path="/var/w.db",
                                            headless_ask=headless_ask)


def asks_nobody_can_answer_are_answered_at_once():
    for scope, flag in [("session", "--session 's1'"), ("once", "--call 'call-7'"), ("always", "--scope always")]:
        g = RecordingGuard(ask(scope))
        h = Hooks(SettingsRuntime(g, "pending"), can_ask=lambda: False)
        out = h.pre_tool_call(tool_name="terminal", args={"command": "curl x"}, session_id="s1", tool_call_id="call-7")
        print(f"       {scope}: {out['message']}")
        check(out["action"] == "block", f"pending ({scope}): blocked at once, no approval gate to wait on: {out}")
        m = out["message"]
        check("exec.network" in m and "t1:abc" in m and f"scope {scope}" in m, "the message names the rule, the approval key and the scope")
        check("warden asks" in m and "warden serve" in m and "retry exactly the same call" in m, "and how a person approves, and to retry then")
        check(f"warden approve --config /etc/w.json --db /var/w.db --key 't1:abc' --scope {scope}" in m and flag in m,
              f"with the exact approve command for this database ({flag})")
        check(h._asks == {} and g.approvals == [], "nothing is recorded: the approval is the person's")
    g = RecordingGuard(ask("session"))
    out = Hooks(SettingsRuntime(g, "deny"), can_ask=lambda: False).pre_tool_call(tool_name="terminal", args={}, session_id="s1")
    check(out["action"] == "block" and "headless_ask is deny" in out["message"] and "Do not retry" in out["message"],
          f"headless_ask deny: refused at once: {out}")
    out = Hooks(SettingsRuntime(g, "pending"), can_ask=lambda: True).pre_tool_call(tool_name="terminal", args={}, session_id="s1")
    check(out["action"] == "approve", "where a person can be asked, Hermes's approval gate asks")


def a_one_shot_cli_run_cannot_ask_an_interactive_one_can():
    import os

    from tools.terminal_tool import set_approval_callback
    from warden_plugin.hooks import can_ask

    class Cli:  # Hermes's CLI keeps its prompt_toolkit application in `_app`; `-q` never starts one
        def __init__(self, app):
            self._app = app

        def _approval_callback(self, *a, **k):
            return "deny"

    saved = os.environ.pop("HERMES_INTERACTIVE", None)
    try:
        check(not can_ask(), "a script without HERMES_INTERACTIVE cannot ask")
        os.environ["HERMES_INTERACTIVE"] = "1"
        set_approval_callback(Cli(None)._approval_callback)
        check(not can_ask(), "`hermes chat -q` (HERMES_INTERACTIVE=1, the CLI's prompt not running) cannot ask")
        set_approval_callback(Cli(object())._approval_callback)
        check(can_ask(), "the interactive CLI, its prompt running, can")
    finally:
        set_approval_callback(None)
        os.environ.pop("HERMES_INTERACTIVE", None)
        if saved is not None:
            os.environ["HERMES_INTERACTIVE"] = saved


if __name__ == "__main__":
    c = Checks()
    c.run("tool results are observed under the root session with its identity", tool_results_are_observed_under_the_root_session_with_its_identity)
    c.run("a tool result that cannot be recorded still reaches the model", a_result_that_cannot_be_recorded_still_reaches_the_model)
    c.run("ask: approve directive, rule key bound to the offered scope", approve_directive_and_rule_keys)
    c.run("ask: an answer is recorded for no longer than Warden offered", answers_never_outlive_the_offer)
    c.run("ask: other approvals are left alone", other_plugins_approvals_are_ignored)
    c.run("ask nobody can answer: answered at once, pending with the key or denied", asks_nobody_can_answer_are_answered_at_once)
    c.run("ask: a one-shot CLI run cannot ask, an interactive one can", a_one_shot_cli_run_cannot_ask_an_interactive_one_can)
    c.run("deny and plugin failure become blocks; turns fail open", deny_and_failure_become_blocks)
    c.run("requests carry this process's clock whatever time Hermes passes", requests_carry_this_processs_clock_whatever_time_hermes_passes)
    c.run("delegation chains resolve to the root session", delegation_chains_resolve_to_the_root)
    c.run("the account ID is the account_id setting, else the Hermes profile", account_id_is_the_setting_else_the_profile)
    sys.exit(c.done())
