#!/usr/bin/env bash
# Builds Warden's OpenClaw plugin into target/openclaw/plugin and packs it as
# target/openclaw/warden-openclaw-<version>.tgz:
#   1. the component (cargo, wasm32-wasip2, release),
#   2. transpiled to JavaScript with the pinned jco,
#   3. the plugin's source, package.json, README, and openclaw.plugin.json whose
#      configSchema is copied from schema/warden.schema.json.
# Sets up everything it needs under target/openclaw (Node, jco).
set -euo pipefail
source "$(dirname "$0")/toolchain.sh"

ensure_node
BUILD_TOOLS="$(ensure_tools build)"

if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$GUEST_TARGET"; then
  step "rustup target add $GUEST_TARGET"
  rustup target add "$GUEST_TARGET"
fi

step "building the component"
(cd "$REPO_ROOT" && cargo build -p warden-component --target "$GUEST_TARGET" --release --target-dir target/guest)
[ -f "$COMPONENT_WASM" ] || die "the component was not built at $COMPONENT_WASM"

step "assembling the plugin in $PLUGIN_OUT"
rm -rf "$PLUGIN_OUT" && mkdir -p "$PLUGIN_OUT/guest"
# --instantiation: the host passes the imports and the compiled core modules,
# so every worker instantiates from modules compiled once, and no top-level
# await is emitted. The output is loaded only inside the guard's worker threads.
"$BUILD_TOOLS/node_modules/.bin/jco" transpile "$COMPONENT_WASM" -o "$PLUGIN_OUT/guest" \
  --name warden_component --instantiation async --no-typescript --quiet
rm -rf "$PLUGIN_OUT/guest/interfaces" "$PLUGIN_OUT"/guest/*.d.ts
# The component imports nothing but its own world, so the JavaScript must not
# import any package either (no WASI shim): Node built-ins only.
if grep -noE "(from|import\() *['\"][^'\"]+['\"]" "$PLUGIN_OUT/guest/warden_component.js" | grep -vE "['\"]node:" >&2; then
  die "the transpiled component imports a package; it must need nothing but its own world"
fi
cp -R "$PLUGIN_SRC/src" "$PLUGIN_OUT/src"
cp "$PLUGIN_SRC/package.json" "$PLUGIN_SRC/README.md" "$PLUGIN_OUT/"
node "$PLUGIN_SRC/scripts/assemble-manifest.mjs" "$PLUGIN_SRC/openclaw.plugin.json" \
  "$REPO_ROOT/schema/warden.schema.json" "$PLUGIN_OUT/openclaw.plugin.json"

step "packing"
version="$(node -p "require('$PLUGIN_SRC/package.json').version")"
rm -f "$CACHE"/warden-openclaw-*.tgz
(cd "$CACHE" && npm pack --silent "$PLUGIN_OUT" >/dev/null)
echo "$PLUGIN_OUT"
echo "$CACHE/warden-openclaw-$version.tgz"
