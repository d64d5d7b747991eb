"""The host side of the `log` import: guest lines go to Python logging.

Lines carry outcomes, rules, error codes and counts; message text only when
the operator turned on `debug` in the Warden configuration.
"""

from __future__ import annotations

import logging

logger = logging.getLogger("warden.guest")

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}


def write(level: str, message: str) -> None:
    """Writes one guest line at its level; never raises."""
    try:
        logger.log(_LEVELS.get(level, logging.INFO), "%s", message)
    except Exception:  # logging must never become a guest trap
        pass
