"""A loopback OpenAI-compatible model for the LiteLLM end-to-end test.

    python mock_model.py PORT_FILE LOG_FILE

Serves `POST /v1/chat/completions` (and `/v1/responses`, with the same scripts) on 127.0.0.1 (port 0; the port is written
to PORT_FILE) and answers from a script chosen by a marker word in the
person's latest message:

| marker | answer |
| --- | --- |
| `SCRIPT:tool-rm` | a `terminal` tool call whose `command` is the string `rm -rf /` (data only, never run), plus a benign `read_file` call |
| `SCRIPT:tool-only-rm` | only the `terminal` call above |
| `SCRIPT:tool-fetch` | a `web_fetch` call (the judge asks about fetch tools by default) |
| `SCRIPT:tool-ls` | a `terminal` call running `ls -la` |
| `SCRIPT:tool-crash` | calls to `crash` and `fine` (what the hostile test guest crashes on and allows) |
| `SCRIPT:function-rm` | the legacy `function_call` form of the `rm -rf /` call |
| `SCRIPT:tool-nameless` | a tool call whose function has no name |
| `SCRIPT:call {"tool": ..., "args": ...}` | exactly that tool call |
| `SCRIPT:two-choices` | two choices: a harmless text, and the `rm -rf /` call |
| `SCRIPT:raw NAME ARGUMENTS` | a call to NAME whose `arguments` string is exactly ARGUMENTS |
| `SCRIPT:secret` | text holding an OpenAI-style API key |
| anything else | `Hello from the mock model.` |

A request with `logprobs: true` is a safety-scenario classifier request: it is
answered `Yes` when the conversation's current message holds the word
`salary`, else `No`, through the first token's `top_logprobs`.

Every request body (model requests and classifier requests, marked) is
appended to LOG_FILE as one JSON line, so the test can see exactly what the
model received. `stream: true` is answered as server-sent events.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]
_lock = threading.Lock()

# A key of the OpenAI legacy shape: `sk-` and 48 mixed characters (made up for this test).
SECRET = "sk-" + "Tq3vX9LmN2pR7sK4wY8zB1cD5fG6hJ0aE3uI7oP9qW2eR4tY"


def _log(entry):
    with _lock, open(LOG_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _call(cid, name, args):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _answer(body):
    messages = body.get("messages") or []
    last = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    text = _text(last.get("content"))
    content, calls = "Hello from the mock model.", None
    if "SCRIPT:tool-only-rm" in text:
        content, calls = None, [_call("call_rm", "terminal", {"command": "rm -rf /"})]
    elif "SCRIPT:tool-rm" in text:
        content = "Cleaning up as asked."
        calls = [_call("call_rm", "terminal", {"command": "rm -rf /"}), _call("call_read", "read_file", {"path": "notes.txt"})]
    elif "SCRIPT:tool-fetch" in text:
        content, calls = None, [_call("call_fetch", "web_fetch", {"url": "https://example.com/page"})]
    elif "SCRIPT:tool-ls" in text:
        content, calls = None, [_call("call_ls", "terminal", {"command": "ls -la"})]
    elif "SCRIPT:tool-crash" in text:
        # Tool names the hostile test guest answers by crashing (`crash`) or allowing (`fine`).
        content, calls = None, [_call("call_crash", "crash", {}), _call("call_fine", "fine", {})]
    elif "SCRIPT:function-rm" in text:
        # The legacy single function call of the older OpenAI API.
        message = {"role": "assistant", "content": None, "function_call": {"name": "terminal", "arguments": json.dumps({"command": "rm -rf /"})}}
        return message, "function_call"
    elif "SCRIPT:tool-nameless" in text:
        content, calls = None, [{"id": "call_x", "type": "function", "function": {"name": "", "arguments": "{}"}}]
    elif text.startswith("SCRIPT:raw "):
        # A call whose arguments are exactly the text after the tool name, unparsed: "SCRIPT:raw NAME ARGUMENTS".
        name, raw = text[len("SCRIPT:raw ") :].split(" ", 1)
        content, calls = None, [{"id": "call_raw", "type": "function", "function": {"name": name, "arguments": raw}}]
    elif text.startswith("SCRIPT:call "):
        # The one tool call the message spells out as JSON: {"tool": ..., "args": {...}}.
        spec = json.loads(text[len("SCRIPT:call ") :])
        content, calls = None, [_call("call_given", spec["tool"], spec["args"])]
    elif "SCRIPT:secret" in text:
        content = f"Sure, the deployment key is {SECRET} - keep it safe."
    message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message, ("tool_calls" if calls else "stop")


def _classifier(body):
    user = _text((body.get("messages") or [{}, {}])[-1].get("content"))
    # The conversation is JSON in the user prompt; only its current message counts.
    try:
        doc, _ = json.JSONDecoder().raw_decode(user[user.index("{") :])
        current = str(doc.get("current_message", ""))
    except ValueError:
        current = ""
    p_yes = 0.95 if "salary" in current.lower() else 0.02
    chosen = "Yes" if p_yes >= 0.5 else "No"
    top = [{"token": "Yes", "logprob": math.log(p_yes)}, {"token": "No", "logprob": math.log(1 - p_yes)}]
    return {
        "id": "cls-1",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": chosen},
                "finish_reason": "length",
                "logprobs": {"content": [{"token": chosen, "logprob": top[0 if chosen == "Yes" else 1]["logprob"], "top_logprobs": top}]},
            }
        ],
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            return self._send(200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}]})
        return self._send(404, {"error": "not found"})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._send(400, {"error": "bad json"})
        if self.path.endswith("/responses"):
            return self._responses(body)
        if not self.path.endswith("/chat/completions"):
            _log({"kind": "unknown-path", "path": self.path, "body": body})
            return self._send(404, {"error": "not found"})
        if body.get("logprobs") is True:
            _log({"kind": "classifier", "body": body})
            return self._send(200, _classifier(body))
        _log({"kind": "model", "body": body})
        message, finish = _answer(body)
        created = int(time.time())
        if body.get("stream"):
            return self._stream(message, finish, created)
        choices = [{"index": 0, "message": message, "finish_reason": finish}]
        last = next((m for m in reversed(body.get("messages") or []) if m.get("role") == "user"), {})
        if "SCRIPT:two-choices" in _text(last.get("content")):
            # Two alternatives (n=2): a harmless text and the rm -rf call.
            choices = [
                {"index": 0, "message": {"role": "assistant", "content": "Nothing to do."}, "finish_reason": "stop"},
                {"index": 1, "message": {"role": "assistant", "content": None,
                                         "tool_calls": [_call("call_rm", "terminal", {"command": "rm -rf /"})]}, "finish_reason": "tool_calls"},
            ]
        return self._send(
            200,
            {
                "id": "chatcmpl-mock",
                "object": "chat.completion",
                "created": created,
                "model": body.get("model") or "mock-model",
                "choices": choices,
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            },
        )

    def _responses(self, body):
        """The Responses API (which LiteLLM also uses for /v1/messages to an OpenAI model): the same scripts."""
        _log({"kind": "responses", "body": body})
        text = json.dumps(body.get("input"))
        message, _ = _answer({"messages": [{"role": "user", "content": text}]})
        output = []
        for call in message.get("tool_calls") or []:
            output.append({"type": "function_call", "id": "fc_" + call["id"], "call_id": call["id"], "name": call["function"]["name"],
                           "arguments": call["function"]["arguments"], "status": "completed"})
        if message.get("content"):
            output.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": message["content"], "annotations": []}]})
        self._send(200, {"id": "resp_mock", "object": "response", "created_at": int(time.time()), "status": "completed",
                         "model": body.get("model") or "mock-model", "output": output, "parallel_tool_calls": True,
                         "tool_choice": "auto", "tools": [],
                         "usage": {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20}})

    def _stream(self, message, finish, created):
        base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": created, "model": "mock-model"}
        events = []
        delta = {"role": "assistant"}
        if message.get("content"):
            # The text in small pieces, as models stream it.
            text = message["content"]
            pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
            events.append(dict(base, choices=[{"index": 0, "delta": dict(delta, content=pieces[0]), "finish_reason": None}]))
            for p in pieces[1:]:
                events.append(dict(base, choices=[{"index": 0, "delta": {"content": p}, "finish_reason": None}]))
        for i, call in enumerate(message.get("tool_calls") or []):
            events.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [dict(call, index=i)]}, "finish_reason": None}]))
        events.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
        data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
        self._send(200, data, "text/event-stream")


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os

    os.replace(PORT_FILE + ".tmp", PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
