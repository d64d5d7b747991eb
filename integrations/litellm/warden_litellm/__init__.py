"""Warden for the LiteLLM proxy: a custom guardrail that runs the Warden component with wasmtime-py.

In the proxy's config.yaml:

    guardrails:
      - guardrail_name: warden
        litellm_params:
          guardrail: warden_litellm.WardenGuardrail
          mode: [pre_call, post_call]
          default_on: true
          warden_config: /etc/warden/litellm.json
          warden_component: /opt/warden/warden_component.wasm

with this folder's parent on the proxy's PYTHONPATH. See README.md.
"""

from .guardrail import WardenGuardrail

__all__ = ["WardenGuardrail"]
