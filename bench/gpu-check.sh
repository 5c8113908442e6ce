#!/usr/bin/env bash
# GPU check of the engine, for a machine with an NVIDIA GPU: which backend starts (webgpu through Dawn/Vulkan, or
# tfjs-node-gpu when libtensorflow and CUDA 11 libraries are provisioned), the gradient checks and wasm/cpu parity
# on that backend, and bench:engine on it. Results go to docs/gpu-check.md (and the raw logs beside it).
#   bash bench/gpu-check.sh [webgpu|tensorflow-gpu]        (default webgpu)
set -uo pipefail
cd "$(dirname "$0")/.."
BACKEND="${1:-webgpu}"
OUT=docs/gpu-check.md
LOGS=docs/gpu-check-logs
mkdir -p "$LOGS"

# Dawn needs the Vulkan loader and the NVIDIA driver's Vulkan ICD (containers: NVIDIA_DRIVER_CAPABILITIES=all).
if [ "$BACKEND" = webgpu ] && ! ldconfig -p 2>/dev/null | grep -q libvulkan.so.1; then
  (apt-get install -y libvulkan1 || sudo apt-get install -y libvulkan1) >"$LOGS/apt.log" 2>&1 || echo "could not install libvulkan1 (see $LOGS/apt.log)"
fi
[ -f dist/cli.js ] || npm run build >/dev/null

run() { # name, command...
  local name="$1"; shift
  local start=$(date +%s)
  "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  echo "| $name | $rc | $(( $(date +%s) - start )) s | \`$LOGS/$name.log\` |"
}

{
  echo "# Engine GPU check ($(date -u +%Y-%m-%d), backend $BACKEND)"
  echo
  echo '```'
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | head -5
  node --version
  echo '```'
  echo
  echo "## doctor"
  echo '```'
  TRINITY_WORKBENCH_BACKEND="$BACKEND" node dist/cli.js doctor 2>&1
  echo '```'
  echo
  echo "| check | exit | time | log |"
  echo "|---|---|---|---|"
  run gradcheck env TRINITY_WORKBENCH_BACKEND="$BACKEND" node test/run.mjs engine/gradcheck
  run parity env TRINITY_WORKBENCH_BACKEND="$BACKEND" node test/run.mjs engine/parity
  run bench-engine env TRINITY_WORKBENCH_BACKEND="$BACKEND" npm run bench:engine
  echo
  echo "## bench:engine"
  echo '```'
  tail -20 "$LOGS/bench-engine.log"
  echo '```'
} >"$OUT"
cat "$OUT"
