#!/usr/bin/env bash
# Sets up (into target/openclaw: a pinned Node 24, jco and OpenClaw from the
# npm registry), builds the plugin, and runs its tests: unit tests of the
# host side (storage, HTTP gateway and bridge, guard sandbox) and the
# end-to-end test against the real OpenClaw runtime. Exits non-zero on failure.
# Options: --only schema,pin,gateway,refused,exec,safety,provenance,context (end-to-end scenarios to run)
set -euo pipefail
source "$(dirname "$0")/toolchain.sh"

only=()
if [ "${1:-}" = "--only" ]; then only=(--only "$2"); fi

ensure_node
bash "$PLUGIN_SRC/scripts/build.sh" >/dev/null
TEST_TOOLS="$(ensure_tools test)"
BUILD_TOOLS="$(ensure_tools build)"

step "building the hostile test guest (a component that spins, hoards memory and traps)"
(cd "$REPO_ROOT" && cargo build -p hostile-guest --target "$GUEST_TARGET" --release --target-dir target/guest)
rm -rf "$CACHE/hostile-guest"
"$BUILD_TOOLS/node_modules/.bin/jco" transpile "$REPO_ROOT/target/guest/$GUEST_TARGET/release/hostile_guest.wasm" \
  -o "$CACHE/hostile-guest" --name warden_component --instantiation async --no-typescript --quiet

step "unit tests (node --test)"
WARDEN_TEST_GUEST_DIR="$PLUGIN_OUT/guest" WARDEN_TEST_HOSTILE_DIR="$CACHE/hostile-guest" \
  node --test --test-reporter=spec "$PLUGIN_SRC"/test/*.test.mjs

step "end-to-end test against OpenClaw $(node -p "require('$TEST_TOOLS/node_modules/openclaw/package.json').version")"
node "$PLUGIN_SRC/test/e2e.mjs" \
  --openclaw "$TEST_TOOLS/node_modules/openclaw/openclaw.mjs" \
  --plugin "$CACHE/warden-openclaw-$(node -p "require('$PLUGIN_SRC/package.json').version").tgz" \
  --work "$CACHE/e2e" "${only[@]}"
