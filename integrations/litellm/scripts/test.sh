#!/usr/bin/env bash
# End-to-end test of the Warden guardrail for the LiteLLM proxy, on a clean machine:
#   1. a Python venv under target/litellm-e2e/ with the pinned litellm[proxy], wasmtime
#      and openai from PyPI (tests/requirements.txt; reused while it is unchanged),
#   2. the component and the hostile test guest built with cargo (as the Hermes plugin's
#      test builds them), and the `warden` command (for `warden approve`),
#   3. the real `litellm --config ...` proxy on 127.0.0.1 in front of a loopback mock
#      model, driven with the openai client (tests/e2e.py).
# Prints what it asserts; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="$root/target/litellm-e2e"
venv="$cache/venv"
mkdir -p "$cache"

python=""
for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
  [ -n "$candidate" ] || continue
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    python="$candidate"; break
  fi
done
if [ -z "$python" ]; then
  echo "error: the LiteLLM proxy test needs Python 3.11 or newer; none found (set PYTHON)" >&2
  exit 1
fi

stamp="$(sha256sum "$here/tests/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$stamp" ]; then
  echo "== setting up $venv ($("$python" --version)) with pinned litellm[proxy], wasmtime and openai"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/tests/requirements.txt"
  echo "$stamp" > "$venv/.requirements"
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("== litellm", m.version("litellm"), "/ wasmtime", m.version("wasmtime"), "/ openai", m.version("openai"))'

echo "== building the component, the hostile test guest and the warden command"
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi
(cd "$root" && cargo build --quiet -p warden-component -p hostile-guest --target wasm32-wasip2 --release --target-dir target/guest)
(cd "$root" && cargo build --quiet --release -p warden-host --bin warden)
wasm="$root/target/guest/wasm32-wasip2/release/warden_component.wasm"
hostile="$root/target/guest/wasm32-wasip2/release/hostile_guest.wasm"
warden="$root/target/release/warden"

# The proxy talks to loopback servers only; anything else it might reach for
# (model cost maps, telemetry) goes to a dead local proxy instead.
export http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
unset WARDEN_CONFIG WARDEN_DB WARDEN_COMPONENT WARDEN_CACHE_DIR WARDEN_HOST_DIR WARDEN_ON_ASK WARDEN_TOOL_CALLS || true

echo "== end to end: the real LiteLLM proxy in front of a loopback model"
"$venv/bin/python" "$here/tests/e2e.py" "$cache/work" "$wasm" "$hostile" "$warden"
