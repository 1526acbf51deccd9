#!/usr/bin/env bash
# demo.sh — the main job: discovery across the example workspace's PMs, offline.
# The example workspace (examples/workspace) is a Rust workspace, an npm project
# and a Python project side by side, with their dependencies' sources present
# (vendor/, node_modules/, .venv/). A git registry is built from
# examples/registry and served by symposium-pm-gitregistry from a local path.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The binaries of make build; TestReadmeDemo (testscript/) points
# SYMPOSIUM_DEMO_BIN elsewhere to run the demo on the binaries it built.
bin="${SYMPOSIUM_DEMO_BIN:-$top/bin}"
demo=$(mktemp -d "${TMPDIR:-/tmp}/symposium-demo.XXXXXX")
trap 'rm -rf "$demo"' EXIT

# A git repository holding the example registry.
git -C "$demo" init -q -b main registry
cp -R "$top/examples/registry/." "$demo/registry/"
git -C "$demo/registry" add -A
git -C "$demo/registry" -c user.name=demo -c user.email=demo@example.invalid commit -q -m "example registry"

# A fresh user configuration: the default recommendations registry (on GitHub)
# is off so the demo stays offline; the example registry is configured instead.
export SYMPOSIUM_HOME="$demo/home"
mkdir -p "$SYMPOSIUM_HOME"
cat > "$SYMPOSIUM_HOME/config.toml" <<TOML
[defaults]
symposium-recommendations = false

[[registry]]
name = "team"
git = "$demo/registry"
TOML

export PATH="$bin:$PATH"
ws="$top/examples/workspace"
# The commands are printed as they run; $demo is the throwaway directory
# holding SYMPOSIUM_HOME, the cache and CARGO_HOME, removed when the demo ends.
echo "# demo=$demo (removed at the end); SYMPOSIUM_HOME=\$demo/home"
echo "\$ symposium-pm discover --refresh --workspace examples/workspace --cache-dir \$demo/cache --env CARGO_HOME=\$demo/cargo-home"
symposium-pm discover --refresh --workspace "$ws" --cache-dir "$demo/cache" --env "CARGO_HOME=$demo/cargo-home"
echo
echo "\$ symposium-pm discover --json --workspace examples/workspace --cache-dir \$demo/cache --env CARGO_HOME=\$demo/cargo-home | head -24"
echo "# (second run: served from the PMs' caches)"
symposium-pm discover --json --workspace "$ws" --cache-dir "$demo/cache" --env "CARGO_HOME=$demo/cargo-home" \
  | head -24
echo "  ..."
