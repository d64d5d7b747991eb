"""A loopback SearXNG instance for Hermes's `web_search` tool (`SEARXNG_URL`).

It answers `GET /search?q=...&format=json` with one result naming the query,
and records every query, so a test sees whether the tool really ran.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from typing import List

from support import QuietHandler, serve

_lock = threading.Lock()
QUERIES: List[str] = []


def queries() -> List[str]:
    with _lock:
        return list(QUERIES)


class Handler(QuietHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/search":
            return self.reply(404, b"{}")
        query = urllib.parse.parse_qs(url.query).get("q", [""])[0]
        with _lock:
            QUERIES.append(query)
        results = {"results": [{"title": f"Result for {query}", "url": "https://example.org/result",
                                "content": f"search-result:{query}", "score": 1.0}]}
        return self.reply(200, json.dumps(results).encode(), [("Content-Type", "application/json")])


def start():
    """Starts the search engine on 127.0.0.1, port 0; returns its base URL."""
    server = serve(Handler)
    return server, f"http://127.0.0.1:{server.server_address[1]}"
