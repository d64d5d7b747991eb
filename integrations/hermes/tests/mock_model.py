"""A loopback OpenAI-compatible model that asks for one tool call.

When the newest message is the user's, it answers with a `terminal` tool call
running the command written after `RUN:` in that message, a `web_search` call
for the query written after `SEARCH:`, or, if the message says `DELEGATE:`, a
`delegate_task` call whose goal is the rest of the message.
When the newest message is a tool result, it answers with text quoting that
result, which ends the turn. Hermes runs delegations in the background, so the
answer to a `delegate_task` result is held until the subagent's own terminal
call has come back (at most 30 s): the delegating turn is still open, and its
reply still owed, while the subagent acts. It records every request so a test can read what the model was sent
(the user message with any injected context, the tool results). Streaming and
non-streaming requests are both served; other endpoints answer 404.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Dict, List

from support import QuietHandler, serve

_lock = threading.Lock()
REQUESTS: List[Dict[str, Any]] = []
# Set when a subagent's terminal call result arrives; cleared when a delegation is asked for.
SUBAGENT_RAN = threading.Event()


def requests_since(n: int) -> List[Dict[str, Any]]:
    with _lock:
        return list(REQUESTS[n:])


def request_count() -> int:
    with _lock:
        return len(REQUESTS)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _call(kind: str, name: str, args: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"{kind}_{request_count()}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        ],
    }


# The calls a turn whose first user message says `SCRIPTED` makes: set by
# the test, so that the person's message names none of their values.
SCRIPT: List[Any] = []


def _scripted(messages: List[Dict[str, Any]]):
    """A `SCRIPTED` turn: the calls of SCRIPT (`[name, args]`), in order, one
    per request, then an answer quoting every tool result."""
    first = next((m for m in messages if m.get("role") == "user"), None)
    text = _content_text(first.get("content")) if first else ""
    if "SCRIPTED" not in text:
        return None
    calls = SCRIPT
    made = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
    if made < len(calls):
        name, args = calls[made]
        return _call("seq", name, args)
    results = [_content_text(m.get("content")) for m in messages if m.get("role") == "tool"]
    return {"role": "assistant", "content": "The tools said: " + " | ".join(results)}


def _answer(messages: List[Dict[str, Any]]) -> Dict[str, Any]:
    scripted = _scripted(messages)
    if scripted is not None:
        return scripted
    last = messages[-1]
    if last.get("role") == "tool":
        call_id = str(last.get("tool_call_id") or "")
        delegating = any(
            str(tc.get("id", "")).startswith("deleg_") for m in messages for tc in (m.get("tool_calls") or [])
        )
        if call_id.startswith("run_") and not delegating:
            SUBAGENT_RAN.set()
        if call_id.startswith("deleg_"):
            SUBAGENT_RAN.wait(30)
        return {"role": "assistant", "content": "The tool said: " + _content_text(last.get("content"))}
    text = _content_text(last.get("content"))
    if "DELEGATE:" in text:
        SUBAGENT_RAN.clear()
        return _call("deleg", "delegate_task", {"goal": text.split("DELEGATE:", 1)[1].strip()})
    if "SEARCH:" in text:
        return _call("search", "web_search", {"query": text.split("SEARCH:", 1)[1].strip().splitlines()[0]})
    if "RUN:" not in text:
        return {"role": "assistant", "content": "Nothing to run."}
    command = text.split("RUN:", 1)[1].strip().splitlines()[0]
    return _call("run", "terminal", {"command": command})


class Handler(QuietHandler):
    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return self.reply(400, b'{"error": "bad json"}')
        if not self.path.endswith("/chat/completions") or "messages" not in body:
            return self.reply(404, b"{}")
        with _lock:
            REQUESTS.append(body)
        message = _answer(body["messages"])
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if body.get("stream"):
            delta = dict(message)
            if delta.get("tool_calls"):
                delta["tool_calls"] = [dict(delta["tool_calls"][0], index=0)]
            chunks = [
                {"id": "m", "object": "chat.completion.chunk", "created": 0, "model": "mock",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                {"id": "m", "object": "chat.completion.chunk", "created": 0, "model": "mock",
                 "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
            ]
            out = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
            return self.reply(200, out, [("Content-Type", "text/event-stream")])
        out = json.dumps({
            "id": "m", "object": "chat.completion", "created": 0, "model": "mock",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage,
        }).encode()
        return self.reply(200, out, [("Content-Type", "application/json")])

    def do_GET(self):
        if self.path.endswith("/models"):
            return self.reply(200, json.dumps({"object": "list", "data": [{"id": "mock", "object": "model"}]}).encode(),
                              [("Content-Type", "application/json")])
        return self.reply(404, b"{}")


def start():
    """Starts the model on 127.0.0.1, port 0; returns its base URL."""
    server = serve(Handler)
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"
