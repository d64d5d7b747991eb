"""Warden as a LiteLLM proxy guardrail (`CustomGuardrail`, native hooks).

| LiteLLM hook | Warden call | effect |
| --- | --- | --- |
| `async_pre_call_hook` (`pre_call`) | `check-turn` on the person's latest message | safety text appended to that message; a turn that must not proceed is refused (HTTP 400) |
| `async_post_call_success_hook` (`post_call`) | `check-tool-call` on each of the answer's `tool_calls` | a call denied (or asked, under the headless `deny` policy) is removed from the answer and the reason appended to its text; `warden_tool_calls: refuse` refuses the whole answer instead |
| same | `check-outbound` on the answer's text | `deny` (a secret: `dlp.secret.<detector>`) refuses the answer (HTTP 400); the text never reaches the client |
| `async_post_call_streaming_iterator_hook` | the same checks on the assembled stream | chunks are held until the whole answer is checked |

Failure modes: when Warden cannot start or the guest fails, tool calls and
answers fail closed (every tool call is removed as `host.start-failure` or
`host.guest-failure`; an answer with text is refused), and inbound turns fail
open (the request goes to the model without a safety prompt, logged).

The WIT records are passed as dicts with snake_case keys (see the shared
host's `records.py`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from typing import Any, AsyncGenerator, Dict, List, Optional, Tuple

from fastapi import HTTPException
from litellm.integrations.custom_guardrail import CustomGuardrail

from . import host as host_mod

logger = logging.getLogger("warden")

# Earlier messages passed to check-turn.
MAX_HISTORY = 50
# The identity's provider for every request through the proxy.
PROVIDER = "litellm"
# The outbound channel of an answer (the consent gate, if configured, sees this channel).
CHANNEL = "litellm"
# The default account ID (which `approvedRequestors[].accountId` names).
DEFAULT_ACCOUNT_ID = "litellm"
# Rule of a check that could not run because Warden did not start.
START_FAILURE_RULE = "host.start-failure"
# Where the request data carries the checks' answers to the response-headers hook.
TURN_KEY = "warden_turn"
DECISIONS_KEY = "warden_checks"
# Rule of an answer in a format this guardrail does not check (Responses API, Anthropic Messages, text completions).
UNCHECKED_FORMAT_RULE = "host.unchecked-format"
# Rule of a tool call that names no function, refused unjudged.
UNREADABLE_CALL_RULE = "host.unreadable-tool-call"
# Where the identity's sender ID comes from: the proxy key's user (default) or the request's `user` field.
SENDER_SOURCES = ("key", "request")
# What an `ask` becomes when nobody can be asked: `deny` (default) or `allow`.
ASK_POLICIES = ("deny", "allow")
# What happens to an answer with a refused tool call: `remove` the call (default) or `refuse` the answer.
TOOL_CALL_ACTIONS = ("remove", "refuse")
# Chunks of one streamed answer held for checking; past it the stream is refused.
MAX_STREAM_CHUNKS = 20_000


class SettingError(Exception):
    """A guardrail setting in config.yaml is wrong; the message names it, its value and what is allowed.

    Not a ValueError on purpose: LiteLLM skips a guardrail whose constructor
    raises ValueError or TypeError and starts the proxy without it; any other
    exception stops the proxy, which is what a guard that cannot run must do."""


def now_ms() -> int:
    return int(time.time() * 1000)


def _text(content: Any) -> str:
    """The text of a message's content (a string, or OpenAI-style parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, dict) and p.get("type", "text") == "text" and isinstance(p.get("text"), str):
                parts.append(p["text"])
        return "\n".join(parts)
    return ""


def _none_if_empty(v: Any) -> Optional[str]:
    if v is None:
        return None
    s = str(v)
    return s if s else None


def _setting(params: Dict[str, Any], key: str, env: str) -> Optional[str]:
    """A string setting: the guardrail's `litellm_params.<key>`, else `$<env>`.
    LiteLLM's own `os.environ/NAME` form is resolved too."""
    value = params.get(key)
    if value is None or value == "":
        value = os.environ.get(env)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise SettingError(f"guardrails[].litellm_params.{key}: {value!r} is not a string; give a path or a word")
    if value.startswith("os.environ/"):
        name = value[len("os.environ/") :]
        resolved = os.environ.get(name)
        if not resolved:
            raise SettingError(f"guardrails[].litellm_params.{key}: {value!r} names ${name}, which is not set")
        value = resolved
    return value


def _int_setting(params: Dict[str, Any], key: str, env: str, default: int) -> int:
    raw = params.get(key)
    if raw is None or raw == "":
        raw = os.environ.get(env)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise SettingError(f"guardrails[].litellm_params.{key}: {raw!r} is not an integer; give a positive integer") from None
    if value <= 0 or isinstance(raw, bool):
        raise SettingError(f"guardrails[].litellm_params.{key}: {raw!r} is not a positive integer")
    return value


def _choice(params: Dict[str, Any], key: str, env: str, allowed: Tuple[str, ...]) -> str:
    value = _setting(params, key, env) or allowed[0]
    if value not in allowed:
        raise SettingError(f"guardrails[].litellm_params.{key}: {value!r} is not one of {', '.join(allowed)}")
    return value


def default_db_path() -> str:
    """`$XDG_STATE_HOME/warden/warden.db`, else `~/.local/state/warden/warden.db`."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "warden", "warden.db")


def _get(obj: Any, key: str) -> Any:
    """A field of a LiteLLM response object or of a plain dict."""
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


class WardenGuardrail(CustomGuardrail):
    """Warden's checks on the requests and answers that pass through the LiteLLM proxy.

    Settings (`guardrails[].litellm_params` in config.yaml, else the
    environment variable): `warden_config` / `$WARDEN_CONFIG` (the Warden JSON
    configuration, required), `warden_component` / `$WARDEN_COMPONENT` (the
    component, required), `warden_db` / `$WARDEN_DB`, `warden_cache_dir` /
    `$WARDEN_CACHE_DIR`, `warden_account_id` / `$WARDEN_ACCOUNT_ID`,
    `warden_on_ask` / `$WARDEN_ON_ASK` (`deny` or `allow`), `warden_tool_calls`
    / `$WARDEN_TOOL_CALLS` (`remove` or `refuse`), `warden_fuel`,
    `warden_memory_mib`, `warden_cwd` / `$WARDEN_CWD` (the folder the clients'
    tools run in), `warden_sender` / `$WARDEN_SENDER` (`key` or `request`),
    `warden_host_dir` / `$WARDEN_HOST_DIR`."""

    def __init__(self, **kwargs: Any) -> None:
        params = {k: kwargs.pop(k) for k in list(kwargs) if k.startswith("warden_")}
        super().__init__(**kwargs)
        config_path = _setting(params, "warden_config", "WARDEN_CONFIG")
        if not config_path:
            raise SettingError(
                "guardrails[].litellm_params.warden_config: missing; give the path of the Warden JSON configuration "
                "(or set $WARDEN_CONFIG)"
            )
        component_path = _setting(params, "warden_component", "WARDEN_COMPONENT")
        if not component_path:
            raise SettingError(
                "guardrails[].litellm_params.warden_component: missing; give the path of warden_component.wasm "
                "(or set $WARDEN_COMPONENT)"
            )
        self.account_id = _setting(params, "warden_account_id", "WARDEN_ACCOUNT_ID") or DEFAULT_ACCOUNT_ID
        self.on_ask = _choice(params, "warden_on_ask", "WARDEN_ON_ASK", ASK_POLICIES)
        self.tool_call_action = _choice(params, "warden_tool_calls", "WARDEN_TOOL_CALLS", TOOL_CALL_ACTIONS)
        self.sender_from = _choice(params, "warden_sender", "WARDEN_SENDER", SENDER_SOURCES)
        cwd = _setting(params, "warden_cwd", "WARDEN_CWD")
        if cwd is not None and not os.path.isabs(cwd):
            raise SettingError(f"guardrails[].litellm_params.warden_cwd: {cwd!r} is not an absolute path; give the folder the clients' tools run in")
        self.cwd = cwd
        # The host modules must be importable now: a proxy that cannot ever run Warden should not start.
        self._host = host_mod.load_host(_setting(params, "warden_host_dir", "WARDEN_HOST_DIR"))
        component = self._host.component
        paths = host_mod.Paths(
            config_path=os.path.abspath(os.path.expanduser(config_path)),
            component_path=os.path.abspath(os.path.expanduser(component_path)),
            db_path=os.path.abspath(os.path.expanduser(_setting(params, "warden_db", "WARDEN_DB") or default_db_path())),
            cache_dir=_setting(params, "warden_cache_dir", "WARDEN_CACHE_DIR") or component.default_cache_dir(),
            fuel=_int_setting(params, "warden_fuel", "WARDEN_FUEL", component.DEFAULT_FUEL),
            memory_bytes=_int_setting(params, "warden_memory_mib", "WARDEN_MEMORY_MIB", component.DEFAULT_MEMORY_BYTES >> 20)
            << 20,
        )
        self.runtime = host_mod.make_runtime(paths, self._host)
        # Start now so the proxy's log names a bad configuration at start; a
        # failure here is not fatal: each check retries and applies its failure mode.
        try:
            self.runtime.guard()
        except Exception as e:
            logger.error("warden: not running yet (%s); tool calls and answers are refused, turns proceed", e)

    # identity ------------------------------------------------------------------
    def identity(self, data: Dict[str, Any], user_api_key_dict: Any) -> Dict[str, Optional[str]]:
        """Who asks, under provider `litellm` and the configured account: with
        `warden_sender: key` (the default) the user ID of the proxy key that
        authenticated the request, which a client cannot choose; with
        `warden_sender: request` the request's `user` field (OpenAI's end-user
        ID, which the client writes), else the key's user ID."""
        key_user = _none_if_empty(_get(user_api_key_dict, "user_id"))
        if self.sender_from == "request":
            sender = _none_if_empty(data.get("user")) or key_user
        else:
            sender = key_user
        return {
            "provider": PROVIDER,
            "account_id": self.account_id,
            "sender_id": sender,
            "channel_id": None,
            "thread_id": None,
            "agent_id": None,
        }

    @staticmethod
    def session_id(data: Dict[str, Any]) -> Optional[str]:
        try:
            from litellm.integrations.custom_guardrail import get_session_id_from_request_data

            return _none_if_empty(get_session_id_from_request_data(data))
        except Exception:
            return None

    def _guard(self) -> Tuple[Any, Optional[str]]:
        """(the running Guard, None) or (None, why it is not running)."""
        try:
            return self.runtime.guard(), None
        except Exception as e:
            return None, str(e)

    # pre_call: check-turn -------------------------------------------------------
    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict, call_type: Any) -> Optional[dict]:
        messages = data.get("messages")
        if not isinstance(messages, list) or not messages:
            return data
        try:
            outcome = await asyncio.to_thread(self.check_inbound, data, user_api_key_dict)
        except Exception as e:  # inbound checks fail open
            logger.error("warden: the turn check failed, the request proceeds unchecked: %s", e)
            return data
        if outcome is None:
            return data
        if not outcome.get("proceed", True):
            raise HTTPException(
                status_code=400,
                detail={
                    "error": f"Warden refused this turn ({outcome.get('rule')}): {outcome.get('reason')}",
                    "warden": {"check": "turn", "rule": outcome.get("rule"), "outcome": outcome.get("outcome")},
                },
            )
        data[TURN_KEY] = {"outcome": outcome.get("outcome"), "rule": outcome.get("rule"), "scenarios": outcome.get("scenarios") or []}
        context = outcome.get("append_context")
        if context:
            append_to_last_user_message(messages, context)
        return data

    # response headers: what Warden decided ---------------------------------------
    async def async_post_call_response_headers_hook(
        self, data: dict, user_api_key_dict: Any, response: Any, request_headers: Any = None, litellm_call_info: Any = None
    ) -> Optional[Dict[str, str]]:
        """`x-warden-turn` and `x-warden-checks` (JSON, ASCII): the turn check's
        outcome and rule, and the decision and rule of every tool call and
        answer text checked, so a client can see why without parsing the text."""
        headers: Dict[str, str] = {}
        turn = data.get(TURN_KEY) if isinstance(data, dict) else None
        if turn:
            headers["x-warden-turn"] = json.dumps(turn, ensure_ascii=True)
        decided = data.get(DECISIONS_KEY) if isinstance(data, dict) else None
        if decided:
            headers["x-warden-checks"] = json.dumps(decided, ensure_ascii=True)
        return headers or None

    def check_inbound(self, data: Dict[str, Any], user_api_key_dict: Any) -> Optional[Dict[str, Any]]:
        """check-turn on the latest user message; None when there is none or Warden is not running (fail open)."""
        messages = data["messages"]
        last = last_user_index(messages)
        if last is None:
            return None
        guard, why = self._guard()
        if guard is None:
            logger.error("warden: not running (%s); the turn proceeds without a safety check", why)
            return None
        earlier = []
        for m in messages[:last]:
            if isinstance(m, dict) and m.get("role") in ("user", "assistant"):
                text = _text(m.get("content"))
                if text:
                    earlier.append({"role": m["role"], "author": None, "text": text})
        outcome = guard.check_turn(
            {
                "run_id": None,
                "session_id": self.session_id(data),
                "now_ms": now_ms(),
                "identity": self.identity(data, user_api_key_dict),
                "trigger": "user",
                "message": _text(messages[last].get("content")),
                "context": {"thread_starter": None, "replied_to": None, "since_last_reply": []},
                "history": earlier[-MAX_HISTORY:],
                "queue_mode": None,
                "hook_timeout_ms": None,
            }
        )
        logger.debug("warden: turn: %s by %s", outcome.get("outcome"), outcome.get("rule"))
        if outcome.get("outcome") == "failed":
            logger.error("warden: %s", outcome.get("reason"))
        return outcome

    # post_call: check-tool-call and check-outbound ---------------------------
    async def async_post_call_success_hook(self, data: dict, user_api_key_dict: Any, response: Any) -> Any:
        if _get(response, "choices") is None or _get(response, "object") not in (None, "chat.completion"):
            unchecked = unchecked_format(response)
            if unchecked is not None:
                # An answer that may carry tool calls or text in a shape not
                # checked here: refused, as tool calls and answers fail closed.
                raise HTTPException(
                    status_code=400,
                    detail={
                        "error": f"[Warden refused this answer ({UNCHECKED_FORMAT_RULE}): {unchecked} answers are not checked by "
                        "this guardrail, so they are refused; use /v1/chat/completions]",
                        "warden": {"check": "answer", "rule": UNCHECKED_FORMAT_RULE, "decision": "deny"},
                    },
                )
            return response  # not a generated answer (embeddings, images, ...)
        findings = await asyncio.to_thread(self.check_answer, data, user_api_key_dict, response)
        self._enforce(findings)
        return response

    def check_answer(self, data: Dict[str, Any], user_api_key_dict: Any, response: Any) -> Dict[str, Any]:
        """Judges every tool call and the text of every choice; removes refused
        calls (appending why) and returns what must refuse the whole answer."""
        guard, why = self._guard()
        identity = self.identity(data, user_api_key_dict)
        session = self.session_id(data)
        refusals: List[Dict[str, Any]] = []
        decided: List[Dict[str, Any]] = []
        for choice in _get(response, "choices") or []:
            message = _get(choice, "message")
            if message is None:
                continue
            original_text = _text(_get(message, "content"))
            notes = []
            kept = []
            calls = list(_get(message, "tool_calls") or [])
            for call in calls:
                verdict = self._judge_call(guard, why, call, identity, session)
                decided.append(_decided("tool-call", verdict, _tool_name(call)))
                refused, note = self._refused(verdict, "tool call", _tool_name(call), session)
                if refused:
                    notes.append(note)
                    refusals.append({"check": "tool-call", "note": note, "rule": verdict.get("rule"), "decision": verdict.get("decision")})
                else:
                    kept.append(call)
            if original_text:
                verdict = self._judge_text(guard, why, original_text, identity, session, _none_if_empty(_get(response, "id")))
                decided.append(_decided("outbound", verdict, None))
                refused, note = self._refused(verdict, "answer", None, session)
                if refused:
                    refusals.append({"check": "outbound", "note": note, "rule": verdict.get("rule"), "decision": verdict.get("decision"), "whole": True})
            # The legacy single `function_call` is a tool call too.
            legacy = _get(message, "function_call")
            legacy_refused = False
            if legacy is not None:
                verdict = self._judge_call(guard, why, {"id": None, "function": legacy}, identity, session)
                decided.append(_decided("tool-call", verdict, _tool_name({"function": legacy})))
                legacy_refused, note = self._refused(verdict, "tool call", _tool_name({"function": legacy}), session)
                if legacy_refused:
                    notes.append(note)
                    refusals.append({"check": "tool-call", "note": note, "rule": verdict.get("rule"), "decision": verdict.get("decision")})
            if notes:
                _set(message, "content", (original_text + "\n\n" if original_text else "") + "\n".join(notes))
                if calls:
                    _set(message, "tool_calls", kept or None)
                if legacy_refused:
                    _set(message, "function_call", None)
                if not kept and not (legacy is not None and not legacy_refused) and _get(choice, "finish_reason") in ("tool_calls", "function_call"):
                    _set(choice, "finish_reason", "stop")
        if isinstance(data, dict):
            data[DECISIONS_KEY] = decided
        return {"refusals": refusals}

    def _enforce(self, findings: Dict[str, Any]) -> None:
        refusals = findings["refusals"]
        whole = [r for r in refusals if r.get("whole")]
        if not whole and self.tool_call_action == "refuse":
            whole = refusals
        if whole:
            first = whole[0]
            raise HTTPException(
                status_code=400,
                detail={
                    "error": " ".join(r["note"] for r in whole),
                    "warden": {"check": first["check"], "rule": first["rule"], "decision": first["decision"]},
                },
            )

    def _judge_call(self, guard: Any, why: Optional[str], call: Any, identity: Dict[str, Any], session: Optional[str]) -> Dict[str, Any]:
        name = _tool_name(call)
        function = _get(call, "function")
        if not name:
            # A call without a function name (another tool type, a malformed
            # answer) cannot be judged, so it is refused: tool calls fail closed.
            return {
                "decision": "deny",
                "rule": UNREADABLE_CALL_RULE,
                "reason": "the tool call names no function (`function.name`), so it cannot be judged; tool calls fail closed",
                "risk": "high",
                "scope": None,
                "approval_key": None,
                "observed": None,
                "signals": [],
            }
        arguments = _get(function, "arguments") if function is not None else None
        if arguments is None:
            arguments = "{}"
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False, default=str)
        if guard is None:
            return self._host.component.fail_closed(f"Warden is not running: {why}", "tool calls", START_FAILURE_RULE)
        try:
            return guard.check_tool_call(
                {
                    "tool_name": name,
                    "arguments": arguments,
                    # Not the model's call ID: a model gives a retried call a
                    # new one, so a `once` approval bound to it would never match.
                    "call_id": None,
                    "run_id": None,
                    "session_id": session,
                    "now_ms": now_ms(),
                    "identity": identity,
                    # The tools run at the client: the proxy knows its working
                    # directory only when the operator names it (`warden_cwd`).
                    "cwd": self.cwd,
                    "derived_paths": [],
                }
            )
        except Exception as e:  # tool calls fail closed
            return self._host.component.fail_closed(str(e), "tool calls")

    def _judge_text(
        self, guard: Any, why: Optional[str], text: str, identity: Dict[str, Any], session: Optional[str], message_id: Optional[str]
    ) -> Dict[str, Any]:
        if guard is None:
            return self._host.component.fail_closed(f"Warden is not running: {why}", "messages", START_FAILURE_RULE)
        try:
            return guard.check_outbound(
                {
                    "direction": "outbound",
                    "channel": CHANNEL,
                    "recipient": identity.get("sender_id") or "",
                    "sender": self.account_id,
                    "body": text.encode("utf-8", errors="surrogatepass"),
                    "thread": None,
                    "message_id": message_id,
                    "session_id": session,
                    "now_ms": now_ms(),
                    "identity": identity,
                }
            )
        except Exception as e:  # answers fail closed
            return self._host.component.fail_closed(str(e), "messages")

    def _refused(self, verdict: Dict[str, Any], what: str, tool: Optional[str], session: Optional[str] = None) -> Tuple[bool, str]:
        """(refused, the sentence that says so) under the headless ask policy."""
        decision, rule, reason = verdict.get("decision"), verdict.get("rule"), verdict.get("reason")
        subject = f"the tool call {tool or '(unnamed)'}" if tool is not None else f"this {what}"
        if decision == "deny":
            verb = "removed" if tool is not None and self.tool_call_action == "remove" else "refused"
            return True, f"[Warden {verb} {subject} ({rule}): {reason}]"
        if decision == "ask":
            if self.on_ask == "allow":
                logger.warning("warden: %s asked (%s) and was allowed by warden_on_ask: allow", subject, rule)
                return False, ""
            key = verdict.get("approval_key")
            scope = verdict.get("scope") or "once"
            if scope == "session" and session is None:
                scope = "once"  # a session answer needs a session; this request named none
            approve = (
                f" An operator can approve it with `warden approve --key '{key}' --scope {scope}`"
                " (with this proxy's Warden configuration and database); then retry the request."
                if key
                else ""
            )
            verb = "removed" if tool is not None and self.tool_call_action == "remove" else "refused"
            return True, f"[Warden {verb} {subject} ({rule}), which needs a person's approval and nobody can be asked here: {str(reason or '').rstrip('.')}.{approve}]"
        return False, ""

    # streaming ---------------------------------------------------------------
    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict
    ) -> AsyncGenerator[Any, None]:
        """Holds the chunks until the whole answer is assembled and checked:
        an answer whose checks pass is streamed as it came; one with a refused
        tool call or text is refused (the client sees an error, no chunk)."""
        import litellm

        chunks = []
        async for chunk in response:
            chunks.append(chunk)
            if len(chunks) > MAX_STREAM_CHUNKS:
                raise HTTPException(
                    status_code=400,
                    detail={"error": f"Warden refused this answer: a stream of more than {MAX_STREAM_CHUNKS} chunks is not checked"},
                )
        try:
            assembled = litellm.stream_chunk_builder(chunks=chunks, messages=request_data.get("messages"))
        except Exception as e:
            logger.error("warden: a streamed answer could not be assembled for checking: %s", e)
            assembled = None
        if assembled is None or _get(assembled, "choices") is None:
            # Nothing that could be checked: refused (answers fail closed).
            if not chunks:
                return
            raise HTTPException(
                status_code=400,
                detail={
                    "error": f"[Warden refused this answer ({UNCHECKED_FORMAT_RULE}): the stream could not be assembled into "
                    "a chat completion to check, so it is refused]",
                    "warden": {"check": "answer", "rule": UNCHECKED_FORMAT_RULE, "decision": "deny"},
                },
            )
        if True:
            findings = await asyncio.to_thread(self.check_answer, request_data, user_api_key_dict, assembled)
            refusals = findings["refusals"]
            if refusals:
                # A stream cannot be rewritten after the fact: any refusal refuses it.
                raise HTTPException(
                    status_code=400,
                    detail={
                        "error": " ".join(r["note"] for r in refusals),
                        "warden": {"check": refusals[0]["check"], "rule": refusals[0]["rule"], "decision": refusals[0]["decision"]},
                    },
                )
        for chunk in chunks:
            yield chunk


def unchecked_format(response: Any) -> Optional[str]:
    """The name of a generated-answer format this guardrail does not check, or
    None for a response that is not a generated answer (embeddings, images, audio,
    rerank, moderation)."""
    if _get(response, "object") == "response" or _get(response, "output") is not None:
        return "Responses API"
    if _get(response, "type") == "message" and isinstance(_get(response, "content"), list):
        return "Anthropic Messages"
    if _get(response, "object") == "text_completion":
        return "text completion"
    return None


def _decided(check: str, verdict: Dict[str, Any], tool: Optional[str]) -> Dict[str, Any]:
    out = {"check": check, "decision": verdict.get("decision"), "rule": verdict.get("rule")}
    if tool is not None:
        out["tool"] = tool
    return out


def _tool_name(call: Any) -> str:
    function = _get(call, "function")
    name = _get(function, "name") if function is not None else None
    return name if isinstance(name, str) else ""


def _set(obj: Any, key: str, value: Any) -> None:
    if isinstance(obj, dict):
        obj[key] = value
    else:
        setattr(obj, key, value)


def last_user_index(messages: List[Any]) -> Optional[int]:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, dict) and m.get("role") == "user":
            return i
    return None


def append_to_last_user_message(messages: List[Any], context: str) -> None:
    """Adds Warden's safety text after the person's latest message, in that message."""
    i = last_user_index(messages)
    if i is None:
        return
    content = messages[i].get("content")
    if isinstance(content, list):
        messages[i]["content"] = list(content) + [{"type": "text", "text": context}]
    else:
        text = content if isinstance(content, str) else ""
        messages[i]["content"] = f"{text}\n\n{context}" if text else context
