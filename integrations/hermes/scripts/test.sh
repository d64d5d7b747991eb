#!/usr/bin/env bash
# End-to-end test of the Warden plugin for Hermes Agent, on a clean machine:
#   1. a Python venv under target/hermes-e2e/ with the pinned hermes-agent and
#      wasmtime from PyPI (tests/requirements.txt; reused while it is unchanged),
#   2. the component (and the hostile test guest) built with cargo,
#   3. the plugin installed by scripts/install.sh into a temporary HERMES_HOME,
#   4. host tests (SQLite, HTTP gateway, sandbox) and real Hermes turns against
#      a loopback mock model (tests/e2e.py).
# Prints what it asserts; exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="$root/target/hermes-e2e"
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
  echo "error: hermes-agent needs Python 3.11 or newer; none found (set PYTHON)" >&2
  exit 1
fi

stamp="$(sha256sum "$here/tests/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$stamp" ]; then
  echo "== setting up $venv ($("$python" --version)) with pinned hermes-agent and wasmtime"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/tests/requirements.txt"
  echo "$stamp" > "$venv/.requirements"
fi
"$venv/bin/python" -c 'import importlib.metadata as m; print("== hermes-agent", m.version("hermes-agent"), "/ wasmtime", m.version("wasmtime"))'

echo "== building the component and the hostile test guest"
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  rustup target add wasm32-wasip2
fi
(cd "$root" && cargo build --quiet -p warden-component -p hostile-guest --target wasm32-wasip2 --release --target-dir target/guest)
wasm="$root/target/guest/wasm32-wasip2/release/warden_component.wasm"
hostile="$root/target/guest/wasm32-wasip2/release/hostile_guest.wasm"

home="$(mktemp -d "$cache/home.XXXXXX")"
nopip_home="$(mktemp -d "$cache/home.XXXXXX")"
trap 'rm -rf "$home" "$nopip_home"' EXIT

echo "== install.sh into a Python without pip (a venv made --without-pip, as uv makes them)"
nopip="$cache/nopip-venv"
rm -rf "$nopip"
"$python" -m venv --without-pip "$nopip"
if "$nopip/bin/python" -m pip --version >/dev/null 2>&1; then echo "error: the venv has pip" >&2; exit 1; fi
out="$(PYTHON="$nopip/bin/python" bash "$here/scripts/install.sh" --hermes-home "$nopip_home" --component "$wasm" 2>&1)" ||
  { echo "$out"; echo "FAIL install.sh failed in a Python without pip" >&2; exit 1; }
echo "$out" | sed 's/^/       /'
"$nopip/bin/python" -c 'import importlib.metadata as m, wasmtime.component; assert m.version("wasmtime") == "50.0.1"' ||
  { echo "FAIL wasmtime 50.0.1 is not importable in the venv made without pip" >&2; exit 1; }
[ -f "$nopip_home/plugins/warden/warden_component.wasm" ] || { echo "FAIL the plugin was not copied" >&2; exit 1; }
echo "ok   install.sh installed wasmtime 50.0.1 into a Python that had no pip, and the plugin"
rm -rf "$nopip"
echo "== installing the plugin as the README says: install.sh, then hermes plugins enable warden"
PYTHON="$venv/bin/python" bash "$here/scripts/install.sh" --hermes-home "$home" --component "$wasm" --no-pip
HERMES_HOME="$home" "$venv/bin/hermes" plugins enable warden </dev/null >/dev/null

export WARDEN_CACHE_DIR="$cache/wasm-cache"
# The tests talk to loopback servers only; anything else Hermes might reach
# for (model metadata, update checks) goes to a dead local proxy instead.
export http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
export no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
# Hermes must not prompt or reach for a real home.
unset HERMES_INTERACTIVE HERMES_GATEWAY_SESSION HERMES_EXEC_ASK WARDEN_CONFIG WARDEN_DB WARDEN_COMPONENT WARDEN_REPLAY || true

echo "== host tests (SQLite storage, HTTP gateway, sandbox) against the real component"
(cd "$here/tests" && "$venv/bin/python" test_host.py "$wasm" "$hostile")

echo "== request times (the clock check at and past its tolerance)"
(cd "$here/tests" && "$venv/bin/python" test_clock.py)

echo "== hook logic (approval keys and scopes, failure modes, delegation chains, account ID)"
(cd "$here/tests" && "$venv/bin/python" test_hooks.py)

echo "== the shared URL allow-list table through the HTTP gateway (tests/fixtures/url-allowlist)"
(cd "$here/tests" && "$venv/bin/python" test_url_allowlist.py "$root/tests/fixtures/url-allowlist/cases.json")

echo "== cross-adapter: the shared fixture through pre_tool_call gives the decisions every adapter gives"
(cd "$here/tests" && "$venv/bin/python" cross_adapter.py "$wasm" "$root/tests/fixtures/cross-adapter")

echo "== end to end: real Hermes turns against a loopback model"
HERMES_HOME="$home" "$venv/bin/python" "$here/tests/e2e.py" "$cache/work"
