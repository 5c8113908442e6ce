#!/usr/bin/env bash
# Installs real VS Code for the end-to-end tests: code-server 4.100.3 (the last line that runs on Node 20) and
# Debian's Chromium, offline-safe (npm registry + Debian only). Cached in ~/.cache/trinity-workbench; a no-op when
# already there. Prints the code-server binary path on stdout.
set -euo pipefail
version=4.100.3
cache="${TRINITY_WORKBENCH_CACHE:-$HOME/.cache/trinity-workbench}"
prefix="$cache/code-server-$version"
bin="$prefix/node_modules/.bin/code-server"
if [ -x "$bin" ] && [ -x /usr/bin/chromium ]; then echo "$bin"; exit 0; fi
{
  if ! command -v chromium >/dev/null || ! command -v rg >/dev/null || [ ! -e /usr/include/krb5.h ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config ripgrep chromium
  fi
  # @vscode/ripgrep's postinstall downloads from GitHub unless its cache already holds the archive.
  rgcache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$rgcache"
  if [ ! -f "$rgcache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" ]; then
    tmp=$(mktemp -d)
    cp "$(command -v rg)" "$tmp/rg"
    tar czf "$rgcache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$tmp" rg
  fi
  mkdir -p "$prefix"
  # npm 11 blocks dependency install scripts unless allowed; code-server's postinstall builds VS Code's native modules.
  npm_config_yes=true npm_config_unsafe_perm=true npm install --no-audit --no-fund --dangerously-allow-all-scripts --prefix "$prefix" "code-server@$version"
} >&2
echo "$bin"
