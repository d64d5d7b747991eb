"""Request times the plugin accepts.

The component reads time only from the `now_ms` of each request and stores it
with what the request records, so a request stamped far from the real time
would leave a reply pin, a budget or a ledger line dated there. The plugin
stamps every request with this process's clock (`time.time()`) and takes no
time from Hermes's hook arguments; every request the guard passes on is still
checked here: a `now_ms` further than `CLOCK_TOLERANCE_MS` from this process's
clock, either way, is refused unless the guard runs for replay
(`WARDEN_REPLAY=1`, or `replay: true` in the plugin's `config.yaml` entry).
"""

from __future__ import annotations

import time
from typing import Optional

# How far a request time may be from the host's clock, either way, in milliseconds (5 minutes).
CLOCK_TOLERANCE_MS = 5 * 60 * 1000
# Rule of an answer given because a request time was refused.
CLOCK_REFUSED_RULE = "host.clock-refused"


class ClockError(Exception):
    """A request time too far from the host's clock."""


def system_now_ms() -> int:
    return int(time.time() * 1000)


def span(ms: int) -> str:
    """A duration in words, to the largest unit that fits: `3 days`, `2 h 5 min`, `5 minutes`, `7 min 30 s`, `400 ms`."""
    s, m = 1000, 60_000
    h, d = 60 * m, 24 * 60 * m

    def plural(n: int, word: str) -> str:
        return f"1 {word}" if n == 1 else f"{n} {word}s"

    if ms >= d:
        return plural(ms // d, "day")
    if ms >= h:
        return f"{ms // h} h {ms % h // m} min"
    if ms >= m and ms % m == 0:
        return plural(ms // m, "minute")
    if ms >= m:
        return f"{ms // m} min {ms % m // s} s"
    if ms >= s:
        return f"{ms // s} s"
    return f"{ms} ms"


def admit_at(field: str, value: int, host_ms: int) -> None:
    """Raises ClockError when `value` is further than the tolerance from `host_ms`."""
    off = abs(value - host_ms)
    if off <= CLOCK_TOLERANCE_MS:
        return

    def near(v: int) -> bool:
        return abs(v - host_ms) <= CLOCK_TOLERANCE_MS

    way = "ahead of" if value > host_ms else "behind"
    units = ""
    if near(value // 1_000_000):
        units = " It looks like nanoseconds: it must be milliseconds since the Unix epoch."
    elif near(value // 1000):
        units = " It looks like microseconds: it must be milliseconds since the Unix epoch."
    elif near(value * 1000):
        units = " It looks like seconds: it must be milliseconds since the Unix epoch."
    raise ClockError(
        f"{field}: `{value}` is {span(off)} ({off} ms) {way} this host's clock; a request time may differ from it "
        f"by at most {span(CLOCK_TOLERANCE_MS)} ({CLOCK_TOLERANCE_MS} ms).{units} To replay recorded requests "
        "with their own times, set WARDEN_REPLAY=1."
    )


def admit(field: str, value: Optional[int], replay: bool = False, now_ms: Optional[int] = None) -> None:
    """Checks a request time against this process's clock, unless replaying."""
    if replay or value is None:
        return
    admit_at(field, int(value), system_now_ms() if now_ms is None else now_ms)
