"""The real Hermes gateway (`hermes gateway run`) with its OpenAI-compatible
API-server platform on a loopback port, for end-to-end tests.

One gateway process serves every gateway scenario of a test run: it shares
`$HERMES_HOME` (so it loads the installed plugin, the same Warden
configuration and the same database as the test process) and talks to the
test's loopback model. Two of its surfaces are used:

- `POST /v1/chat/completions` with `X-Hermes-Session-Id`: a conversation whose
  chat the gateway binds to the turn;
- `POST /v1/runs`, `GET /v1/runs/{id}/events` (server-sent events) and
  `POST /v1/runs/{id}/approval`: a run whose approval requests reach the
  client as `approval.request` events and whose answers the client sends
  back, which is how Hermes reports an answer (`post_approval_response`).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from typing import Any, Callable, Dict, List, Optional

import yaml


def listening_port(pid: int, timeout: float = 90.0) -> int:
    """The loopback TCP port process `pid` listens on (the gateway binds port 0)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        inodes = set()
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            raise AssertionError("the gateway exited")
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                local, state, inode = cols[1], cols[3], cols[9]
                if state == "0A" and inode in inodes and local.startswith("0100007F:"):
                    return int(local.split(":")[1], 16)
        time.sleep(0.25)
    raise AssertionError("the gateway did not start listening")


class Gateway:
    def __init__(self, home: str, work: str, model_url: str, toolsets: List[str], env: Dict[str, str]):
        self.home, self.work, self.model_url, self.toolsets, self.env = home, work, model_url, toolsets, env
        self.process: Optional[subprocess.Popen] = None
        self.port = 0
        self.key = secrets.token_hex(24)
        self._config_path = os.path.join(home, "config.yaml")
        self._original_config: Optional[str] = None
        self._log = None

    # lifecycle ---------------------------------------------------------------
    def start(self) -> "Gateway":
        with open(self._config_path) as f:
            self._original_config = f.read()
        cfg = yaml.safe_load(self._original_config) or {}
        cfg["model"] = {"default": "mock", "provider": "custom", "base_url": self.model_url, "api_key": "test-key",
                        "context_length": 128000}
        cfg["platform_toolsets"] = {"api_server": list(self.toolsets)}
        with open(self._config_path, "w") as f:
            yaml.safe_dump(cfg, f)
        env = dict(os.environ, API_SERVER_ENABLED="true", API_SERVER_HOST="127.0.0.1", API_SERVER_PORT="0",
                   API_SERVER_KEY=self.key, **self.env)
        self._log = open(os.path.join(self.work, "gateway.log"), "w")
        hermes = os.path.join(os.path.dirname(sys.executable), "hermes")
        self.process = subprocess.Popen([hermes, "gateway", "run"], env=env, cwd=self.work, stdin=subprocess.DEVNULL,
                                        stdout=self._log, stderr=subprocess.STDOUT)
        self.port = listening_port(self.process.pid)
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._original_config is not None:
            with open(self._config_path, "w") as f:
                f.write(self._original_config)
            self._original_config = None

    # requests ----------------------------------------------------------------
    def _request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
                 headers: Optional[Dict[str, str]] = None):
        data = json.dumps(body).encode() if body is not None else None
        h = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json", **(headers or {})}
        return urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, headers=h, method=method)

    def _json(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
              headers: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
        with urllib.request.urlopen(self._request(method, path, body, headers), timeout=120) as r:
            return json.loads(r.read())

    def chat(self, session_id: str, content: str) -> Dict[str, Any]:
        """One chat-completions turn of the conversation `session_id`."""
        return self._json("POST", "/v1/chat/completions",
                          {"model": "hermes", "messages": [{"role": "user", "content": content}]},
                          {"X-Hermes-Session-Id": session_id})

    def run(self, session_id: str, message: str,
            on_approval: Callable[[Dict[str, Any]], Optional[str]]) -> List[Dict[str, Any]]:
        """Starts a run in session `session_id` and follows its events to the
        end. Each `approval.request` event is passed to `on_approval`, whose
        choice (`once`, `session`, `always`, `deny`) is sent back as the
        person's answer. Returns every event."""
        started = self._json("POST", "/v1/runs", {"input": message, "session_id": session_id})
        run_id = started["run_id"]
        events: List[Dict[str, Any]] = []
        with urllib.request.urlopen(self._request("GET", f"/v1/runs/{run_id}/events"), timeout=120) as stream:
            for raw in stream:
                line = raw.decode("utf-8").rstrip("\r\n")
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[len("data: "):])
                events.append(event)
                if event.get("event") == "approval.request":
                    choice = on_approval(event)
                    if choice is not None:
                        answer = self._json("POST", f"/v1/runs/{run_id}/approval", {"choice": choice})
                        events.append({"event": "client.answered", "response": answer})
        return events
