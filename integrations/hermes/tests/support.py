"""Shared helpers of the Hermes plugin's tests: loading the plugin as a
package, loopback HTTP servers, and a runner that prints what it checks."""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, List, Tuple

PLUGIN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_plugin(name: str = "warden_plugin"):
    """Imports the plugin folder as a package (it uses relative imports, as Hermes loads it)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(PLUGIN_DIR, "__init__.py"), submodule_search_locations=[PLUGIN_DIR]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # noqa: D401 - silence the default access log
        pass

    def reply(self, status: int, body: bytes, headers: List[Tuple[str, str]] = ()) -> None:
        """One write per response, with TCP_NODELAY, so no Nagle delay."""
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        lines = [f"HTTP/1.1 {status} X"]
        for k, v in headers:
            lines.append(f"{k}: {v}")
        if not any(k.lower() == "content-length" for k, _ in headers):
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.wfile.write(head + body)
        self.wfile.flush()


def serve(handler) -> ThreadingHTTPServer:
    """Starts `handler` on 127.0.0.1, port 0, in a daemon thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Checks:
    """Named checks that print what they assert; `done()` prints the tally and returns the exit code."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.pending: List[str] = []

    def run(self, name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            self.failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
            return
        self.passed += 1
        print(f"ok   {name}")

    def note_pending(self, text: str) -> None:
        self.pending.append(text)
        print(f"PENDING {text}")

    def done(self) -> int:
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def check(condition: bool, what: str) -> None:
    """Asserts and says what was asserted."""
    if not condition:
        raise AssertionError(what)
    print(f"       - {what}")
