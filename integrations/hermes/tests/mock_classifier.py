"""A loopback classifier speaking the protocol of Warden's safety scenarios:
OpenAI-compatible chat completions answered through the first token's
log-probabilities.

Each request asks about one scenario: the scenario's instructions end the
system message, and the user message carries the conversation as JSON with
its `current_message`. The mock finds the scenario by its instructions and
answers Yes (probability 0.95) when the current message contains one of that
scenario's keywords, else No (0.02), as `top_logprobs` of the one token.
A request that breaks the protocol (no `logprobs: true`, no `top_logprobs`,
`max_tokens` other than 1, an unknown scenario) gets a 400, which Warden
counts as a failed check, so a protocol change cannot pass unnoticed.
Every request is recorded with the scenario it asked about, the current
message and the `Authorization` header the host attached.
"""

from __future__ import annotations

import json
import math
import threading
from typing import Any, Dict, List, Sequence, Tuple

from support import QuietHandler, serve

_lock = threading.Lock()
REQUESTS: List[Dict[str, Any]] = []
# scenario ID -> (its instructions, keywords of a covered request)
SCENARIOS: Dict[str, Tuple[str, Sequence[str]]] = {}


def requests_since(n: int) -> List[Dict[str, Any]]:
    with _lock:
        return list(REQUESTS[n:])


def request_count() -> int:
    with _lock:
        return len(REQUESTS)


def _current_message(user_prompt: str) -> str:
    """The `current_message` of the conversation JSON in the user prompt."""
    start = user_prompt.find("{")
    decoder = json.JSONDecoder()
    doc, _ = decoder.raw_decode(user_prompt[start:])
    return str(doc["current_message"])


def _logprobs(p_yes: float) -> Dict[str, Any]:
    yes, no = math.log(p_yes), math.log(1.0 - p_yes)
    chosen = "Yes" if p_yes >= 0.5 else "No"
    top = [{"token": "Yes", "logprob": yes}, {"token": "No", "logprob": no}, {"token": "Maybe", "logprob": -9.0}]
    return {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "mock-classifier",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": chosen}, "finish_reason": "length",
                     "logprobs": {"content": [{"token": chosen, "logprob": yes if chosen == "Yes" else no,
                                               "top_logprobs": top}]}}],
    }


def _answer(body: Dict[str, Any]) -> Tuple[int, Dict[str, Any], Dict[str, Any]]:
    """(status, response, what to record)."""
    messages = body.get("messages") or []
    if (body.get("logprobs") is not True or not isinstance(body.get("top_logprobs"), int) or body["top_logprobs"] < 2
            or body.get("max_tokens") != 1 or len(messages) != 2
            or [m.get("role") for m in messages] != ["system", "user"]):
        return 400, {"error": "not the logprob classifier protocol"}, {"scenario": None}
    system, user = str(messages[0].get("content")), str(messages[1].get("content"))
    scenario = next((sid for sid, (instructions, _) in SCENARIOS.items() if system.endswith(instructions)), None)
    if scenario is None:
        return 400, {"error": "unknown scenario"}, {"scenario": None}
    current = _current_message(user)
    covered = any(k in current.lower() for k in SCENARIOS[scenario][1])
    return 200, _logprobs(0.95 if covered else 0.02), {"scenario": scenario, "current_message": current, "yes": covered}


class Handler(QuietHandler):
    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self.reply(400, b'{"error": "bad json"}')
        if not self.path.endswith("/chat/completions"):
            return self.reply(404, b"{}")
        status, answer, seen = _answer(body)
        seen.update(path=self.path, authorization=self.headers.get("authorization"), body=body)
        with _lock:
            REQUESTS.append(seen)
        return self.reply(status, json.dumps(answer).encode(), [("Content-Type", "application/json")])


def start(scenarios: Dict[str, Tuple[str, Sequence[str]]]):
    """Starts the classifier on 127.0.0.1, port 0; returns its base URL (…/v1)."""
    SCENARIOS.update(scenarios)
    server = serve(Handler)
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"
