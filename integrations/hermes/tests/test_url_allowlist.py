"""The shared URL table (tests/fixtures/url-allowlist/cases.json) through the
Hermes plugin's HTTP gateway: `within` gives every row's answer, and every row
on the loopback base, replayed through `HttpGateway.send` against a real
loopback server, is either sent or refused as `denied` without a connection.

    python test_url_allowlist.py [CASES_JSON]

Needs only the standard library.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "..", "tests", "fixtures", "url-allowlist", "cases.json")
LOOPBACK = "127.0.0.1:9"


def load_imports_http():
    spec = importlib.util.spec_from_file_location("warden_imports_http", os.path.join(HERE, "..", "imports_http.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


imports_http = load_imports_http()


def padded(case: dict, url: str) -> str:
    return url.ljust(case["padTo"], "a") if "padTo" in case else url


class Listener:
    """A loopback server that counts connections and answers each with 204."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.settimeout(2)
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            except OSError:
                pass
            finally:
                conn.close()


def main() -> int:
    with open(CASES, encoding="utf-8") as f:
        doc = json.load(f)
    failures = []
    if doc["maxUrlBytes"] != imports_http.MAX_URL_BYTES:
        failures.append(f"maxUrlBytes {doc['maxUrlBytes']} != MAX_URL_BYTES {imports_http.MAX_URL_BYTES}")
    for case in doc["cases"]:
        if imports_http.within(case["base"], padded(case, case["url"])) != case["allow"]:
            failures.append(f"within: {case['name']}")

    listener = Listener()
    here = f"127.0.0.1:{listener.port}"
    replayed = sent = 0
    for case in doc["cases"]:
        if LOOPBACK not in case["base"]:
            continue
        base, url = case["base"].replace(LOOPBACK, here), padded(case, case["url"].replace(LOOPBACK, here))
        if imports_http.within(base, url) != case["allow"]:
            failures.append(f"within on the live port: {case['name']}")
            continue
        gateway = imports_http.HttpGateway([imports_http.Destination(name="api", base_url=base)])
        before = listener.connections
        out = gateway.send(imports_http.Request("api", "get", url, timeout_ms=2000))
        replayed += 1
        if case["allow"]:
            sent += 1
            if not isinstance(out, imports_http.Response) or out.status != 204:
                failures.append(f"send: {case['name']}: {out}")
        elif out != imports_http.HttpError("denied") or listener.connections != before:
            failures.append(f"send: {case['name']}: {out}, {listener.connections - before} connection(s)")
    # Headers and keys with control characters never leave the host.
    base = f"http://127.0.0.1:{listener.port}/v1"
    os.environ["WARDEN_TEST_CRLF_KEY"] = "sk-1\r\nx-evil: 1"
    gateway = imports_http.HttpGateway([
        imports_http.Destination(name="open", base_url=base),
        imports_http.Destination(name="keyed", base_url=base, credential=imports_http.Credential(env="WARDEN_TEST_CRLF_KEY")),
    ])
    before = listener.connections
    for dest, headers in [("open", [("x-a", "b\r\nx-evil: 1")]), ("open", [("x-a", "b\r\n\tfolded")]),
                          ("open", [("x-a", "b\x00")]), ("open", [("x a", "b")]), ("keyed", [])]:
        out = gateway.send(imports_http.Request(dest, "get", base + "/x", headers=headers, timeout_ms=2000))
        if not (isinstance(out, imports_http.HttpError) and out.case == "transport"):
            failures.append(f"header {headers or 'key'}: {out}")
    if listener.connections != before:
        failures.append(f"a header with control characters opened {listener.connections - before} connection(s)")
    listener.sock.close()

    for line in failures:
        print("FAIL", line)
    print(f"url allow-list: {len(doc['cases'])} cases through within, {replayed} through the gateway "
          f"({sent} sent, {replayed - sent} denied without a connection)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
