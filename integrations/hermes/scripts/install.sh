#!/usr/bin/env bash
# Installs the Warden plugin into a Hermes home: builds the component, copies
# the plugin and the component to $HERMES_HOME/plugins/warden/, and writes a
# starter Warden configuration to $HERMES_HOME/warden/warden.json if there is
# none. It installs the pinned wasmtime into the Python that runs Hermes: the
# interpreter of the `hermes` command on PATH, else python3; PYTHON overrides.
# That Python needs no pip of its own: without one, uv (if on PATH) installs
# into it, else the standard library's ensurepip gives it one. --no-pip skips
# the step (README.md, "Without pip", says what it then needs).
#
#   integrations/hermes/scripts/install.sh [--hermes-home DIR] [--component FILE] [--no-pip]
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
hermes_home="${HERMES_HOME:-$HOME/.hermes}"
component=""
pip=1
while [ $# -gt 0 ]; do
  case "$1" in
    --hermes-home) hermes_home="$2"; shift 2 ;;
    --component) component="$2"; shift 2 ;;
    --no-pip) pip=0; shift ;;
    *) echo "usage: $0 [--hermes-home DIR] [--component FILE] [--no-pip]" >&2; exit 2 ;;
  esac
done

if [ -z "$component" ]; then
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2
  fi
  (cd "$root" && cargo build --quiet -p warden-component --target wasm32-wasip2 --release --target-dir target/guest)
  component="$root/target/guest/wasm32-wasip2/release/warden_component.wasm"
fi

if [ "$pip" = 1 ]; then
  python="${PYTHON:-}"
  if [ -z "$python" ] && command -v hermes >/dev/null 2>&1; then
    shebang="$(head -n 1 "$(command -v hermes)")"
    candidate="${shebang#\#!}"
    if [ "${shebang:0:2}" = "#!" ] && [ -x "$candidate" ]; then python="$candidate"; fi
  fi
  python="${python:-python3}"
  wasmtime_pin="wasmtime==50.0.1"
  if "$python" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("wasmtime") == "50.0.1" else 1)' 2>/dev/null; then
    echo "$wasmtime_pin is already installed for $python"
  elif "$python" -m pip --version >/dev/null 2>&1; then
    echo "installing $wasmtime_pin for $python (pip)"
    "$python" -m pip install --quiet "$wasmtime_pin"
  elif command -v uv >/dev/null 2>&1; then
    # A uv-made environment has no pip; uv installs into it from outside.
    echo "installing $wasmtime_pin for $python (uv pip: $python has no pip)"
    uv pip install --quiet --python "$python" "$wasmtime_pin"
  elif "$python" -m ensurepip --version >/dev/null 2>&1; then
    # The standard library's bootstrap gives the environment its own pip.
    echo "installing $wasmtime_pin for $python (its pip bootstrapped with ensurepip: it had none)"
    "$python" -m ensurepip --upgrade >/dev/null
    "$python" -m pip install --quiet --disable-pip-version-check "$wasmtime_pin"
  else
    echo "error: $python has no pip, uv is not on PATH and ensurepip is unavailable: install $wasmtime_pin into it yourself (see README.md, \"Without pip\") and rerun with --no-pip" >&2
    exit 1
  fi
  "$python" -c "import wasmtime.component" || { echo "error: wasmtime is not importable by $python" >&2; exit 1; }
fi

dest="$hermes_home/plugins/warden"
mkdir -p "$dest" "$hermes_home/warden"
cp "$here/plugin.yaml" "$here"/*.py "$dest/"
cp "$component" "$dest/warden_component.wasm"
if [ ! -f "$hermes_home/warden/warden.json" ]; then
  cp "$here/warden.example.json" "$hermes_home/warden/warden.json"
fi
echo "installed the Warden plugin in $dest"
echo "enable it: HERMES_HOME=$hermes_home hermes plugins enable warden"
echo "  (or add warden to plugins.enabled in $hermes_home/config.yaml)"
