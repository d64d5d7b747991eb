"""Hermes hooks -> Warden checks.

| Hermes hook | Warden call | effect |
| --- | --- | --- |
| `pre_llm_call` | `start-turn` (when Hermes bound a chat), `check-turn` | `{"context": ...}` adds Warden's safety text after the user message |
| `pre_tool_call` | `check-tool-call` | deny: `{"action": "block", "message": ...}`; ask: `{"action": "approve", ...}`, or, where nobody can be asked (`can_ask`), a block at once per `headless_ask` |
| `post_tool_call` | `observe-tool-result` | none: the result is recorded so destinations in it are known to come from content the agent read |
| `post_approval_response` | `record-approval` | the person's answer to an `ask`, where Hermes reports it |
| `post_api_request` | `record-usage` | tokens, for budgets |
| `on_session_end` | `settle-turn` | Hermes fires it at the end of every turn (`run_conversation`) |
| `subagent_start` / `subagent_stop` | (none) | a delegated subagent's tool calls are checked as its root session's |

`pre_tool_call` carries no sender, so the identity seen in `pre_llm_call` is
remembered per session. Hermes names no bot account in its hooks; one Hermes
profile is one set of platform accounts, so the account ID is the profile's
name unless the `account_id` setting names one (see `settings`). The chat a
turn answers to is not a hook argument: Hermes's gateway binds it to the
turn's context (`gateway.session_context`, `HERMES_SESSION_CHAT_ID` and
friends), which is where it is read from.

A subagent (`delegate_task`) runs under a session ID of its own, with no sender
and no chat. Its tool calls are checked under the session that delegated
(the root of the chain), with that session's identity, so a pinned reply
cannot be escaped by delegating; its turns are checked as `peer` turns and
never start or settle a pin.

Hermes swallows exceptions raised by hooks and then lets the tool run, so
every handler here catches everything itself and applies Warden's failure
mode: tool calls are refused (fail-closed), turns proceed (fail-open), and a
tool result that cannot be recorded reaches the model anyway, its destinations
unknown to later checks (which ask by default).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from typing import Any, Dict, List, Optional

from . import settings
from .runtime import Runtime, Unavailable

logger = logging.getLogger("warden")

# Sessions whose identity is remembered; the oldest are forgotten first.
MAX_SESSIONS = 10_000
# Earlier messages passed to check-turn.
MAX_HISTORY = 50
# Asks waiting for an answer, by approval key.
MAX_PENDING_ASKS = 1_000
# Prefix of the rule keys Warden gives Hermes's approval gate.
RULE_KEY_PREFIX = "warden:"
# Hermes's approval choices, as Warden approval scopes (narrowest first).
_SCOPES = ["once", "session", "always"]
_CHOICE_SCOPE = {"once": "once", "session": "session", "always": "always"}


def now_ms() -> int:
    return int(time.time() * 1000)


def _session_env(name: str) -> str:
    """A value Hermes's gateway bound to the running turn, or ""."""
    try:
        from gateway.session_context import get_session_env

        return get_session_env(name, "") or ""
    except Exception:
        return os.environ.get(name, "") or ""


def _text(content: Any) -> str:
    """The text of a message's content (a string, or OpenAI-style parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, dict) and isinstance(p.get("text"), str):
                parts.append(p["text"])
        return "\n".join(parts)
    return ""


def result_text(result: Any, error_message: Any = None) -> str:
    """A tool's result as the model reads it: Hermes hands tools' results on
    as text (usually JSON); anything else becomes its JSON text. An error
    message Hermes reports beside it follows."""
    if isinstance(result, str):
        text = result
    elif result is None:
        text = ""
    else:
        try:
            text = json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = str(result)
    why = _none_if_empty(error_message)
    if why and why not in text:
        text = f"{text}\n{why}" if text else why
    return text


def idempotency_key(kind: str, *parts: Any) -> str:
    """A key for a write Hermes may deliver twice: a digest of what names it
    (the component accepts only `A-Za-z0-9._:-`, at most 128 characters)."""
    digest = hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:48]
    return f"hermes:{kind}:{digest}"


def _none_if_empty(v: Any) -> Optional[str]:
    if v is None:
        return None
    s = str(v)
    return s if s else None


def can_ask() -> bool:
    """Whether Hermes's approval gate can put a question to a person now: in
    a gateway turn, or at an interactive CLI whose prompt is on screen. Not
    in a one-shot `hermes chat -q` (the CLI sets HERMES_INTERACTIVE but runs
    no prompt, so its gate would wait out the approval timeout), a bare
    script, or a cron job."""
    try:
        from tools import approval

        if approval._is_gateway_approval_context():
            return True
        if not approval._is_interactive_cli():
            return False
    except Exception:
        return False
    try:
        from tools.terminal_tool import _get_approval_callback

        callback = _get_approval_callback()
    except Exception:
        callback = None
    if callback is None:
        # Hermes's fallback prompt reads the terminal.
        return sys.stdin is not None and sys.stdin.isatty()
    owner = getattr(callback, "__self__", None)
    # The CLI's callback answers through its prompt_toolkit application,
    # which only an interactive session runs (`-q` never starts it).
    return not (owner is not None and hasattr(owner, "_app") and getattr(owner, "_app") is None)


class Hooks:
    def __init__(self, runtime: Optional[Runtime] = None, can_ask=can_ask):
        self.runtime = runtime or Runtime()
        self.can_ask = can_ask
        self._lock = threading.Lock()
        self._sessions: "OrderedDict[str, Dict[str, Optional[str]]]" = OrderedDict()
        self._asks: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
        self._parents: "OrderedDict[str, str]" = OrderedDict()

    # identity ----------------------------------------------------------------
    def _remember(self, session_id: str, identity: Dict[str, Optional[str]]) -> None:
        with self._lock:
            self._sessions[session_id] = identity
            self._sessions.move_to_end(session_id)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)

    def root_of(self, session_id: str) -> str:
        """The session that (transitively) delegated to `session_id`, or itself."""
        with self._lock:
            seen = 0
            while session_id in self._parents and seen < 32:
                session_id = self._parents[session_id]
                seen += 1
        return session_id

    def identity_of(self, session_id: Optional[str]) -> Dict[str, Optional[str]]:
        """The identity remembered for a session (WIT `identity`, snake_case)."""
        with self._lock:
            known = self._sessions.get(session_id or "")
        base = {
            "provider": None,
            "account_id": None,
            "sender_id": None,
            "channel_id": None,
            "thread_id": None,
            "agent_id": None,
        }
        if known:
            base.update({k: known.get(k) for k in base})
        return base

    def account_id(self) -> Optional[str]:
        """The account ID of this turn: the `account_id` setting, else the
        profile the gateway bound to the turn, else this process's profile."""
        try:
            configured = self.runtime.configured_account_id()
        except Exception as e:
            logger.debug("warden: cannot read the account_id setting: %s", e)
            configured = None
        return configured or _none_if_empty(_session_env("HERMES_SESSION_PROFILE")) or settings.profile_account()

    # pre_llm_call -> start-turn + check-turn --------------------------------
    def pre_llm_call(
        self,
        session_id: str = "",
        task_id: str = "",
        turn_id: str = "",
        user_message: Any = "",
        conversation_history: Optional[List[Dict[str, Any]]] = None,
        platform: str = "",
        sender_id: str = "",
        **_: Any,
    ) -> Optional[Dict[str, str]]:
        try:
            return self._pre_llm_call(session_id, turn_id, user_message, conversation_history or [], platform, sender_id)
        except Exception as e:  # inbound checks fail open
            logger.error("warden: pre_llm_call failed, the turn proceeds unchecked: %s", e)
            return None

    def _pre_llm_call(self, session_id, turn_id, user_message, history, platform, sender_id):
        root = self.root_of(session_id) if session_id else session_id
        delegated = bool(session_id) and root != session_id
        chat_id = "" if delegated else _session_env("HERMES_SESSION_CHAT_ID")
        identity = self.identity_of(root) if delegated else {
            "provider": _none_if_empty(platform or _session_env("HERMES_SESSION_PLATFORM")),
            "account_id": self.account_id(),
            "sender_id": _none_if_empty(sender_id or _session_env("HERMES_SESSION_USER_ID")),
            "channel_id": _none_if_empty(chat_id),
            "thread_id": _none_if_empty(_session_env("HERMES_SESSION_THREAD_ID")),
            "agent_id": _none_if_empty(_session_env("HERMES_SESSION_PROFILE")),
        }
        if session_id:
            self._remember(session_id, identity)
        try:
            guard = self.runtime.guard()
        except Unavailable as e:
            logger.error("warden: not running (%s); the turn proceeds unchecked", e)
            return None
        if session_id and chat_id and not delegated:
            try:
                guard.start_turn(
                    {
                        "session_id": session_id,
                        "run_id": _none_if_empty(turn_id),
                        "chat_id": chat_id,
                        "label": _none_if_empty(_session_env("HERMES_SESSION_CHAT_NAME")),
                        "now_ms": now_ms(),
                        # The prompt build is the wake entering the transcript: nothing to queue.
                        "prompt": None,
                        "dedicated": os.environ.get("WARDEN_DEDICATED_CHAT", "") == "1",
                    }
                )
            except Exception as e:
                logger.error("warden: could not pin the reply of session %s: %s", session_id, e)
        message = _text(user_message)
        earlier = []
        for m in history:
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                continue
            text = _text(m.get("content"))
            if text:
                earlier.append({"role": m["role"], "author": None, "text": text})
        if earlier and earlier[-1]["role"] == "user" and earlier[-1]["text"] == message:
            earlier.pop()  # Hermes includes the current message in the history
        cron = os.environ.get("HERMES_CRON_SESSION", "").strip().lower() in ("1", "true", "yes", "on")
        outcome = guard.check_turn(
            {
                "run_id": _none_if_empty(turn_id),
                "session_id": _none_if_empty(session_id),
                "now_ms": now_ms(),
                "identity": identity,
                "trigger": "peer" if delegated else "automation" if cron or identity["provider"] == "cron" else "user",
                "message": message,
                "context": {"thread_starter": None, "replied_to": None, "since_last_reply": []},
                "history": earlier[-MAX_HISTORY:],
                "queue_mode": None,
                "hook_timeout_ms": None,
            }
        )
        if not outcome.get("proceed", True):
            # Hermes's pre_llm_call cannot stop a turn; say so loudly.
            logger.warning("warden: rule %s says the turn should not proceed, but Hermes cannot stop it here", outcome.get("rule"))
        context = outcome.get("append_context")
        logger.debug("warden: turn %s: %s by %s", turn_id, outcome.get("outcome"), outcome.get("rule"))
        return {"context": context} if context else None

    # pre_tool_call -> check-tool-call ----------------------------------------
    def pre_tool_call(
        self,
        tool_name: str = "",
        args: Optional[Dict[str, Any]] = None,
        session_id: str = "",
        task_id: str = "",
        tool_call_id: str = "",
        turn_id: str = "",
        **_: Any,
    ) -> Optional[Dict[str, str]]:
        try:
            return self._pre_tool_call(tool_name, args or {}, session_id, tool_call_id, turn_id)
        except Exception as e:  # tool calls fail closed
            logger.error("warden: pre_tool_call failed, the call is refused: %s", e)
            return {"action": "block", "message": f"Warden refused this call: the guard failed ({e}); tool calls fail closed."}

    def _pre_tool_call(self, tool_name, args, session_id, tool_call_id, turn_id):
        try:
            guard = self.runtime.guard()
        except Unavailable as e:
            return {
                "action": "block",
                "message": f"Warden refused this call: Warden is not running ({e}); tool calls fail closed.",
            }
        cwd = args.get("workdir") if isinstance(args.get("workdir"), str) else None
        session_id = self.root_of(session_id) if session_id else session_id
        verdict = guard.check_tool_call(
            {
                "tool_name": tool_name,
                "arguments": json.dumps(args, ensure_ascii=False, default=str),
                "call_id": _none_if_empty(tool_call_id),
                "run_id": _none_if_empty(turn_id),
                "session_id": _none_if_empty(session_id),
                "now_ms": now_ms(),
                "identity": self.identity_of(session_id),
                "cwd": cwd or os.environ.get("TERMINAL_CWD") or os.getcwd(),
                "derived_paths": [],
            }
        )
        decision, rule, reason = verdict.get("decision"), verdict.get("rule"), verdict.get("reason")
        logger.debug("warden: tool %s: %s by %s", tool_name, decision, rule)
        if decision == "deny":
            return {"action": "block", "message": f"Warden refused this call ({rule}): {reason}"}
        if decision == "ask":
            return self._ask(tool_name, verdict, session_id, tool_call_id)
        return None

    # post_tool_call -> observe-tool-result ------------------------------------
    def post_tool_call(
        self,
        tool_name: str = "",
        args: Optional[Dict[str, Any]] = None,
        result: Any = None,
        session_id: str = "",
        task_id: str = "",
        tool_call_id: str = "",
        turn_id: str = "",
        status: Optional[str] = None,
        error_message: Optional[str] = None,
        **_: Any,
    ) -> None:
        try:
            self._post_tool_call(tool_name, result, session_id, tool_call_id, turn_id, status, error_message)
        except Exception as e:  # the result reaches the model anyway
            logger.warning(
                "warden: the result of %s was not recorded (%s); its destinations stay unknown to later checks", tool_name, e
            )

    def _post_tool_call(self, tool_name, result, session_id, tool_call_id, turn_id, status, error_message):
        if not tool_name:
            return
        session_id = self.root_of(session_id) if session_id else session_id
        self.runtime.guard().observe_tool_result(
            {
                "tool_name": tool_name,
                "call_id": _none_if_empty(tool_call_id),
                "run_id": _none_if_empty(turn_id),
                "session_id": _none_if_empty(session_id),
                "now_ms": now_ms(),
                "identity": self.identity_of(session_id),
                "content": result_text(result, error_message),
                "is_error": status not in (None, "ok"),
            }
        )

    def _ask(self, tool_name, verdict, session_id, tool_call_id):
        key = verdict.get("approval_key")
        scope = verdict.get("scope") or "once"
        message = f"Warden asks before this call ({verdict.get('rule')}, approval remembered for: {scope}): {verdict.get('reason')}"
        if not self.can_ask():
            return self._unaskable(verdict, key, scope, session_id, tool_call_id)
        if not key:
            return {"action": "approve", "message": message}
        # Hermes remembers "session" and "always" answers itself, under the
        # rule key, and offers "always" whatever Warden offered. Binding the
        # rule key to the call (scope once) or the session (scope session)
        # keeps Hermes's memory from covering more than Warden would.
        rule_key = RULE_KEY_PREFIX + key
        if scope == "once":
            rule_key += ":call:" + (tool_call_id or str(time.monotonic_ns()))
        elif scope == "session":
            rule_key += ":session:" + (session_id or "")
        with self._lock:
            self._asks[rule_key] = {"key": key, "scope": scope, "session_id": session_id or None, "call_id": tool_call_id or None}
            while len(self._asks) > MAX_PENDING_ASKS:
                self._asks.popitem(last=False)
        return {"action": "approve", "message": message, "rule_key": rule_key}

    def _unaskable(self, verdict, key, scope, session_id, tool_call_id):
        """An ask where nobody can answer (a one-shot `hermes chat -q`, a bare
        script): answered at once by the `headless_ask` setting, never after
        Hermes's approval timeout. `pending` (the default) leaves the ask to a
        person and tells the model how it gets approved and to retry then;
        `deny` refuses the call. Either way the tool does not run."""
        rule, reason = verdict.get("rule"), verdict.get("reason")
        current = self._settings()
        policy = current.headless_ask if current else "pending"
        if policy == "deny" or not key:
            why = "headless_ask is deny" if policy == "deny" else "the ask carries no approval key"
            return {
                "action": "block",
                "message": f"Warden refused this call ({rule}): it needs a person's approval ({reason}) and nobody can "
                f"be asked in this run ({why}). Do not retry it.",
            }
        config, db = (current.config_path, current.db_path) if current else ("WARDEN_JSON", "WARDEN_DB")
        approve = f"warden approve --config {config} --db {db} --key '{key}' --scope {scope}"
        if scope == "session" and session_id:
            approve += f" --session '{session_id}'"
        elif scope == "once" and tool_call_id:
            approve += f" --call '{tool_call_id}'"
        logger.warning("warden: ask pending (%s, key %s): nobody can answer it in this run", rule, key)
        return {
            "action": "block",
            "message": f"Warden is holding this call for a person's approval ({rule}: {reason}); nobody can be asked "
            f"in this run, so it did not run. Approval key: {key} (scope {scope}). Tell the user it waits for "
            f"approval: a person approves it in `warden asks` or the inbox page of `warden serve`, or with `{approve}`. "
            "Once it is approved, retry exactly the same call and it will be allowed; do not retry before that.",
        }

    def _settings(self) -> Optional[settings.Settings]:
        try:
            return getattr(self.runtime, "settings", None) or settings.load()
        except Exception as e:
            logger.debug("warden: cannot read the settings: %s", e)
            return None

    # post_approval_response -> record-approval -------------------------------
    def post_approval_response(self, pattern_key: str = "", choice: str = "", tool_call_id: str = "", **_: Any) -> None:
        try:
            self._post_approval_response(pattern_key, choice, tool_call_id)
        except Exception as e:
            logger.error("warden: could not record an approval answer: %s", e)

    def _post_approval_response(self, pattern_key, choice, tool_call_id):
        prefix = "plugin_rule:" + RULE_KEY_PREFIX
        if not pattern_key.startswith(prefix):
            return
        with self._lock:
            ask = self._asks.pop(pattern_key[len("plugin_rule:"):], None)
        if ask is None or choice not in ("once", "session", "always", "deny"):
            return  # a timeout is no answer
        offered = ask["scope"] if ask["scope"] in _SCOPES else "once"
        if choice == "deny":
            allow, scope = False, "once"
        else:
            # Never remember an approval for longer than Warden offered.
            allow = True
            scope = _SCOPES[min(_SCOPES.index(_CHOICE_SCOPE[choice]), _SCOPES.index(offered))]
        call_id = ask["call_id"] or _none_if_empty(tool_call_id)
        self.runtime.guard().record_approval(
            {
                "key": ask["key"],
                "allow": allow,
                "scope": scope,
                "session_id": ask["session_id"],
                "call_id": call_id,
                "now_ms": now_ms(),
                # One answer to one call is recorded once, however often it is delivered.
                "idempotency_key": idempotency_key("approval", ask["key"], call_id, choice) if call_id else None,
            }
        )
        logger.info("warden: recorded %s (%s) for an ask", "allow" if allow else "deny", scope)

    # post_api_request -> record-usage ----------------------------------------
    def post_api_request(self, session_id: str = "", usage: Optional[Dict[str, Any]] = None, **_: Any) -> None:
        try:
            tokens = int((usage or {}).get("total_tokens") or 0)
            if tokens <= 0:
                return
            self.runtime.guard().record_usage(
                {"agent_id": None, "session_id": _none_if_empty(self.root_of(session_id) if session_id else session_id), "tokens": tokens, "now_ms": now_ms()}
            )
        except Exception as e:
            logger.warning("warden: could not record usage: %s", e)

    # on_session_end -> settle-turn -------------------------------------------
    def on_session_end(self, session_id: str = "", turn_id: str = "", **_: Any) -> None:
        if not session_id or self.root_of(session_id) != session_id:
            return  # a subagent's turn never pinned anything
        try:
            self.runtime.guard().settle_turn(
                {"session_id": session_id, "run_id": _none_if_empty(turn_id), "now_ms": now_ms()}
            )
        except Exception as e:
            logger.error("warden: could not settle the turn of session %s: %s", session_id, e)

    # subagent_start / subagent_stop -> delegation chains ------------------------
    def subagent_start(self, parent_session_id: Optional[str] = None, child_session_id: Optional[str] = None, **_: Any) -> None:
        if not parent_session_id or not child_session_id or parent_session_id == child_session_id:
            return
        with self._lock:
            self._parents[child_session_id] = parent_session_id
            self._parents.move_to_end(child_session_id)
            while len(self._parents) > MAX_SESSIONS:
                self._parents.popitem(last=False)

    def subagent_stop(self, child_session_id: Optional[str] = None, **_: Any) -> None:
        if not child_session_id:
            return
        with self._lock:
            self._parents.pop(child_session_id, None)
            self._sessions.pop(child_session_id, None)
