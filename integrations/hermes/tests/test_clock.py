"""Request times: the plugin's clock check at and past its tolerance, without the component.

    python test_clock.py
"""

from __future__ import annotations

import sys

from support import Checks, check, load_plugin

load_plugin()
from warden_plugin import clock  # noqa: E402

HOST = 1_764_590_400_000  # 2025-12-01T12:00:00Z
TOL = clock.CLOCK_TOLERANCE_MS


def refusal(value: int) -> str:
    try:
        clock.admit("now_ms", value, now_ms=HOST)
    except clock.ClockError as e:
        return str(e)
    return ""


def admitted_up_to_the_tolerance_either_way_and_not_one_millisecond_more():
    check(TOL == 300_000, "the tolerance is 5 minutes")
    for ok in (HOST, HOST + TOL, HOST - TOL):
        check(refusal(ok) == "", f"{ok} is admitted")
    e = refusal(HOST + TOL + 1)
    check(
        e == f"now_ms: `{HOST + TOL + 1}` is 5 min 0 s (300001 ms) ahead of this host's clock; a request time may differ "
        "from it by at most 5 minutes (300000 ms). To replay recorded requests with their own times, set WARDEN_REPLAY=1.",
        f"one millisecond past, ahead: {e}",
    )
    e = refusal(HOST - TOL - 1)
    check(e.startswith(f"now_ms: `{HOST - TOL - 1}` is 5 min 0 s (300001 ms) behind"), f"one millisecond past, behind: {e}")


def other_units_get_a_hint():
    for value, hint in [
        (HOST * 1000, "microseconds"),
        (HOST * 1000 + 999, "microseconds"),
        (HOST * 1_000_000, "nanoseconds"),
        (HOST // 1000, "seconds"),
    ]:
        e = refusal(value)
        check(f"It looks like {hint}" in e and f"`{value}`" in e, f"{value}: {hint}")
    e = refusal(1_700_000_000_000)
    check("is 747 days (64590400000 ms) behind" in e and "looks like" not in e, f"2023 is just far: {e}")


def replay_and_an_absent_time_pass():
    clock.admit("now_ms", 0, replay=True, now_ms=HOST)
    clock.admit("now_ms", None, now_ms=HOST)
    check(True, "replay admits any time; no time is this host's")


if __name__ == "__main__":
    c = Checks()
    c.run("clock: admitted up to the tolerance either way, not one millisecond more", admitted_up_to_the_tolerance_either_way_and_not_one_millisecond_more)
    c.run("clock: a time in other units gets a hint", other_units_get_a_hint)
    c.run("clock: replay and an absent time pass", replay_and_an_absent_time_pass)
    sys.exit(c.done())
