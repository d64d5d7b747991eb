# Sourced by build.sh and test.sh: pinned versions, and the set-up of a Node 24
# and of the npm tools, all in a cache folder under target/ (gitignored).
# Needs only bash, tar, npm (any version: it runs under the pinned Node) and,
# for the component, a Rust toolchain with rustup or the wasm32-wasip2 target.

# The Node that runs OpenClaw and jco. OpenClaw 2026.9.x needs >=24.16 <25 or >=26.1.
NODE_VERSION=24.22.3

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
PLUGIN_SRC="$REPO_ROOT/integrations/openclaw"
CACHE="$REPO_ROOT/target/openclaw"
PLUGIN_OUT="$CACHE/plugin"
GUEST_TARGET=wasm32-wasip2
COMPONENT_WASM="$REPO_ROOT/target/guest/$GUEST_TARGET/release/warden_component.wasm"

step() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The npm package that carries the Node binary for this machine.
node_package() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) die "no pinned Node for $(uname -s)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no pinned Node for $(uname -m)" ;;
  esac
  echo "node-$os-$arch"
}

# Installs the pinned Node from the npm registry (npm checks the package's
# integrity) and puts it first on PATH, so npm and every tool run under it.
ensure_node() {
  local pkg dir
  pkg="$(node_package)"
  dir="$CACHE/node-$NODE_VERSION"
  if [ ! -x "$dir/bin/node" ]; then
    command -v npm >/dev/null || die "npm is needed to fetch Node $NODE_VERSION from the npm registry"
    step "installing Node $NODE_VERSION ($pkg) into $dir"
    rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
    (cd "$dir.tmp" && npm pack --silent "$pkg@$NODE_VERSION" >/dev/null && tar xzf ./*.tgz && rm ./*.tgz)
    rm -rf "$dir" && mv "$dir.tmp/package" "$dir" && rm -rf "$dir.tmp"
  fi
  export PATH="$dir/bin:$PATH"
  [ "$(node --version)" = "v$NODE_VERSION" ] || die "node on PATH is $(node --version), expected v$NODE_VERSION"
}

# Installs the locked npm tools of integrations/openclaw/toolchain/<name> into
# the cache (npm ci: exactly the lockfile; no install scripts run).
ensure_tools() {
  local name="$1" src dest
  src="$PLUGIN_SRC/toolchain/$name"
  dest="$CACHE/toolchain/$name"
  if [ ! -f "$dest/.installed" ] || ! cmp -s "$src/package-lock.json" "$dest/.installed"; then
    step "installing the locked $name tools into $dest"
    rm -rf "$dest" && mkdir -p "$dest"
    cp "$src/package.json" "$src/package-lock.json" "$dest/"
    (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
    cp "$src/package-lock.json" "$dest/.installed"
  fi
  echo "$dest"
}
