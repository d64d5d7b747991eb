"""The host side of the `http` import: an allow-listed gateway.

Same rules as the Rust host (`host-example/src/http.rs`): the component names a
destination and a URL; the gateway refuses anything outside that destination's
base URL before any connection is attempted, attaches the destination's
credential itself (from an environment variable or a key file that is reread
when it changes), drops credential headers the component sets, enforces the
request's deadline over the whole exchange, caps the response size and never
follows redirects. `send_all` runs requests concurrently on threads. Nothing
here raises: every failure is a typed error.
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

# Longest timeout a request may ask for, in seconds.
MAX_TIMEOUT_S = 60.0
# Most requests of one `send-all` batch that run at the same time.
MAX_CONCURRENT = 32
# Largest request body, in bytes (4 MiB).
MAX_REQUEST_BYTES = 4 * 1024 * 1024
# Default response size cap, in bytes, when a destination sets none.
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
# Headers the component may never set: credentials belong to the host.
RESERVED_HEADERS = {"authorization", "proxy-authorization", "cookie", "host", "content-length"}

_READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Credential:
    env: Optional[str] = None
    file: Optional[str] = None
    header: str = "authorization"
    scheme: str = "Bearer"


@dataclass(frozen=True)
class Destination:
    name: str
    base_url: str
    credential: Optional[Credential] = None
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES


@dataclass
class Request:
    destination: str
    method: str  # "get" | "post" | "put" | "delete"
    url: str
    headers: List[Tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    timeout_ms: int = 0


@dataclass
class Response:
    status: int
    headers: List[Tuple[str, str]]
    body: bytes


@dataclass(frozen=True)
class HttpError:
    """One of `denied`, `missing-credential`, `timeout`, `too-large`, `cancelled`,
    `transport` (the WIT case names); `message` only for `transport`."""

    case: str
    message: Optional[str] = None


Outcome = Union[Response, HttpError]


def destinations_from_config(config: dict) -> List[Destination]:
    """The `destinations` section of a configuration the component accepted."""
    out = []
    for d in config.get("destinations") or []:
        cred = d.get("credential")
        credential = None
        if isinstance(cred, dict):
            credential = Credential(
                env=cred.get("env"),
                file=cred.get("file"),
                header=cred.get("header", "authorization"),
                scheme=cred.get("scheme", "Bearer"),
            )
        out.append(
            Destination(
                name=d["name"],
                base_url=d["baseUrl"],
                credential=credential,
                max_response_bytes=int(d.get("maxResponseBytes", DEFAULT_MAX_RESPONSE_BYTES)),
            )
        )
    return out


# Longest request URL the gateway accepts, in bytes (8 KiB).
MAX_URL_BYTES = 8 * 1024
_HEX = "0123456789abcdefABCDEF"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.")
_IPV6_CHARS = frozenset(_HEX + ":.")


@dataclass(frozen=True)
class _StrictUrl:
    scheme: str
    host: str
    port: int
    segments: Tuple[str, ...]
    has_query: bool


def _parse_strict(url: str) -> Optional[_StrictUrl]:
    """`url` in the one strict form the gateway sends, or None: the same
    grammar as the Rust host's `parse_strict` (host-example/src/http.rs),
    checked against the shared table tests/fixtures/url-allowlist/cases.json."""
    if not isinstance(url, str) or len(url) > MAX_URL_BYTES:
        return None
    if any(not (0x21 <= ord(c) <= 0x7E) or c in "\\#" for c in url):
        return None
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    scheme = scheme.lower()
    default_port = {"http": 80, "https": 443}.get(scheme)
    if default_port is None:
        return None
    end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    host_port = _host_port(rest[:end])
    if host_port is None:
        return None
    path, q, _ = rest[end:].partition("?")
    segments = _segments(path)
    if segments is None:
        return None
    host, port = host_port
    return _StrictUrl(scheme, host, default_port if port is None else port, segments, bool(q))


def _host_port(authority: str) -> Optional[Tuple[str, Optional[int]]]:
    if "@" in authority or "%" in authority:
        return None
    if authority.startswith("["):
        addr, close, after = authority[1:].partition("]")
        if not close or not addr or any(c not in _IPV6_CHARS for c in addr):
            return None
        if after and not after.startswith(":"):
            return None
        host, port = f"[{addr.lower()}]", (after[1:] if after else None)
    else:
        host, colon, port_text = authority.partition(":")
        port = port_text if colon else None
        if any(label == "" for label in host.split(".")) or any(c not in _NAME_CHARS for c in host):
            return None
        host = host.lower()
    if port is None:
        return host, None
    if not (1 <= len(port) <= 5) or port[0] == "0" or any(c not in "0123456789" for c in port):
        return None
    number = int(port)
    return (host, number) if number <= 65535 else None


def _segments(path: str) -> Optional[Tuple[str, ...]]:
    if path == "":
        return ()
    if not path.startswith("/") or ";" in path:
        return None
    parts = path[1:].split("/")
    out = []
    for i, raw in enumerate(parts):
        if raw == "":
            if i + 1 == len(parts):
                break
            return None
        segment = _decode_segment(raw)
        if segment is None or set(segment) == {"."}:
            return None
        out.append(segment)
    return tuple(out)


def _decode_segment(raw: str) -> Optional[str]:
    """Decodes one segment's percent-escapes once. An escape must be two hex
    digits and must not decode to a dot, slash, backslash, percent sign (double
    encoding), semicolon, control byte or non-ASCII byte."""
    out = []
    i = 0
    while i < len(raw):
        if raw[i] != "%":
            out.append(raw[i])
            i += 1
            continue
        hex_digits = raw[i + 1:i + 3]
        if len(hex_digits) != 2 or any(c not in _HEX for c in hex_digits):
            return None
        b = int(hex_digits, 16)
        if b < 0x20 or b >= 0x7F or chr(b) in ".\\/%;":
            return None
        out.append(chr(b))
        i += 3
    return "".join(out)


def within(base: str, url: str) -> bool:
    """Whether `url` lies inside `base`: both in the strict form, the same
    scheme, host and port, the base without a query, and the base's decoded
    segments a prefix of the URL's."""
    b, u = _parse_strict(base), _parse_strict(url)
    if b is None or u is None or b.has_query:
        return False
    if (b.scheme, b.host, b.port) != (u.scheme, u.host, u.port):
        return False
    return u.segments[:len(b.segments)] == b.segments


_TOKEN_CHARS = frozenset("!#$%&'*+.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


def _is_token(name: str) -> bool:
    return name != "" and all(c in _TOKEN_CHARS for c in name)


def _join_scheme(scheme: str, key: str) -> str:
    return key if scheme == "" else f"{scheme} {key}"


class HttpGateway:
    """The allow-listed HTTP client behind the `http` import."""

    def __init__(self, destinations: List[Destination]):
        self.destinations = list(destinations)
        self._file_keys: Dict[str, Tuple[float, int, str]] = {}
        self._lock = threading.Lock()
        self._ssl = ssl.create_default_context()

    def _allowed(self, name: str, url: str) -> Optional[Destination]:
        for d in self.destinations:
            if d.name == name:
                return d if within(d.base_url, url) else None
        return None

    def _key(self, credential: Credential) -> Optional[str]:
        if credential.env:
            key = os.environ.get(credential.env, "").strip()
            return key or None
        if not credential.file:
            return None
        path = credential.file
        try:
            st = os.stat(path)
        except OSError:
            return None
        with self._lock:
            cached = self._file_keys.get(path)
            if cached and cached[0] == st.st_mtime and cached[1] == st.st_size:
                return cached[2]
        try:
            with open(path, "r", encoding="utf-8") as f:
                key = f.read().strip()
        except (OSError, UnicodeDecodeError):
            return None
        with self._lock:
            if not key:
                self._file_keys.pop(path, None)
                return None
            self._file_keys[path] = (st.st_mtime, st.st_size, key)
        return key

    def send(self, req: Request) -> Outcome:
        """Sends one request; never raises."""
        try:
            return self._send(req)
        except Exception as e:  # a gateway bug must not become a guest trap
            return HttpError("transport", f"internal error: {e}")

    def _send(self, req: Request) -> Outcome:
        dest = self._allowed(req.destination, req.url)
        if dest is None:
            return HttpError("denied")
        if len(req.body) > MAX_REQUEST_BYTES:
            return HttpError("too-large")
        credential = None
        if dest.credential is not None:
            key = self._key(dest.credential)
            if key is None:
                return HttpError("missing-credential")
            credential = (dest.credential.header, _join_scheme(dest.credential.scheme, key))
        timeout = min(req.timeout_ms / 1000.0, MAX_TIMEOUT_S)
        if timeout <= 0:
            return HttpError("timeout")
        deadline = time.monotonic() + timeout

        parts = urllib.parse.urlsplit(req.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return HttpError("denied")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers: Dict[str, str] = {}
        for name, value in req.headers:
            lower = name.lower()
            if lower in RESERVED_HEADERS or (credential and lower == credential[0].lower()):
                continue
            headers[name] = value
        if credential:
            headers[credential[0]] = credential[1]
        # http.client lets some of these through (NUL, a folded line); refuse them
        # as the Rust host does: a transport error before any connection.
        for name, value in headers.items():
            if not _is_token(name) or any(ord(c) < 0x20 and c != "\t" or ord(c) == 0x7F for c in value):
                return HttpError("transport", f"invalid request: header `{name}` cannot be sent")

        if parts.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                parts.hostname, parts.port, timeout=timeout, context=self._ssl
            )
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
        try:
            conn.request(req.method.upper(), target, body=bytes(req.body), headers=headers)
            _remaining(deadline, conn)
            resp = conn.getresponse()
            status = resp.status
            resp_headers = [(k, v) for k, v in resp.getheaders()]
            cap = dest.max_response_bytes
            declared = resp.getheader("content-length")
            if declared is not None and declared.isdigit() and int(declared) > cap:
                return HttpError("too-large")
            body = bytearray()
            while True:
                _remaining(deadline, conn)
                chunk = resp.read1(_READ_CHUNK) if hasattr(resp, "read1") else resp.read(_READ_CHUNK)
                if not chunk:
                    break
                body.extend(chunk)
                if len(body) > cap:
                    return HttpError("too-large")
            return Response(status=status, headers=resp_headers, body=bytes(body))
        except _DeadlinePassed:
            return HttpError("timeout")
        except (socket.timeout, TimeoutError):
            return HttpError("timeout")
        except (OSError, http.client.HTTPException, ValueError) as e:
            return HttpError("transport", f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    def send_all(self, reqs: List[Request]) -> List[Outcome]:
        """Sends every request concurrently; answers in request order."""
        if not reqs:
            return []
        workers = min(len(reqs), MAX_CONCURRENT)
        try:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="warden-http") as pool:
                return list(pool.map(self.send, reqs))
        except RuntimeError as e:  # cannot start threads
            return [HttpError("transport", f"cannot start request thread: {e}") for _ in reqs]


class _DeadlinePassed(Exception):
    pass


def _remaining(deadline: float, conn: http.client.HTTPConnection) -> None:
    """Shrinks the socket timeout to what is left of the deadline, or raises."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _DeadlinePassed()
    if conn.sock is not None:
        conn.sock.settimeout(left)
