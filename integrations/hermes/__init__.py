"""Warden for Hermes Agent: every turn and tool call checked by the Warden component.

Install: copy this folder (with `warden_component.wasm` beside it) to
`$HERMES_HOME/plugins/warden/`, `pip install wasmtime==50.0.1` into Hermes's
Python, and enable it in `config.yaml` with `plugins: {enabled: [warden]}`.
See README.md for the settings and the failure modes.
"""

from __future__ import annotations

from .hooks import Hooks

_HOOKS = (
    "pre_llm_call",
    "pre_tool_call",
    "post_tool_call",
    "post_approval_response",
    "post_api_request",
    "on_session_end",
    "subagent_start",
    "subagent_stop",
)

# One set of hooks per process: Hermes may call register() again on a forced rediscovery.
hooks = Hooks()


def register(ctx) -> None:
    """Registers Warden's hooks. The component loads on the first hook that needs it."""
    for name in _HOOKS:
        ctx.register_hook(name, getattr(hooks, name))
