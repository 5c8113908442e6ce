#!/usr/bin/env bash
# Rehearses the GPU check as the lent GPU machine runs it, on SwiftShader (Chromium's CPU Vulkan driver): the bundle
# (.gpu/, from `npm run gpu:bundle`) copied into an empty folder and run by its own run.sh with no Node on PATH (a
# folder of links to every other command of /usr/local/bin, /usr/bin and /bin), an environment emptied but for PATH
# and HOME, and the carried Vulkan loader instead of the system's. SwiftShader checks that everything runs and agrees
# with wasm and PyTorch's fixtures; its speed says nothing about a GPU, so the bench is the `tiny` model only.
#
#   bash bench/gpu-rehearse.sh [BUNDLE_DIR [RESULTS_DIR]]
# Defaults: .gpu and bench/results/gpu-check/rehearsal-<UTC time>. The GPU_CHECK_* knobs of bench/gpu-check.sh
# pass through (the defaults below leave SwiftShader on 2 busy cores room: about 9 minutes at load 10).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUNDLE=$(cd "${1:-$ROOT/.gpu}" && pwd) || exit 1
RESULTS=${2:-$ROOT/bench/results/gpu-check/rehearsal-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)

EMPTY=$(mktemp -d /tmp/twb-gpu-rehearsal.XXXXXX)
trap 'rm -rf "$EMPTY"' EXIT
mkdir "$EMPTY/bin" "$EMPTY/home"
for d in /usr/local/bin /usr/bin /bin; do
  for f in "$d"/*; do
    b=${f##*/}
    case "$b" in node | nodejs | npm | npx | corepack | tsx) continue ;; esac
    [ -e "$EMPTY/bin/$b" ] || ln -s "$f" "$EMPTY/bin/$b"
  done
done
cp -r "$BUNDLE" "$EMPTY/bundle"
cd "$EMPTY"
env -i HOME="$EMPTY/home" PATH="$EMPTY/bin" \
  GPU_CHECK_SWIFTSHADER=1 GPU_CHECK_BUNDLED_VULKAN=1 GPU_CHECK_WORK="$EMPTY/work" \
  GPU_CHECK_MODELS="${GPU_CHECK_MODELS-tiny}" GPU_CHECK_SCALE="${GPU_CHECK_SCALE:-0.1}" \
  GPU_CHECK_GEN_TOKENS="${GPU_CHECK_GEN_TOKENS:-4}" GPU_CHECK_PEAK="${GPU_CHECK_PEAK:-0}" \
  GPU_CHECK_TEST_S="${GPU_CHECK_TEST_S:-900}" GPU_CHECK_GEN_S="${GPU_CHECK_GEN_S:-180}" \
  GPU_CHECK_BENCH_S="${GPU_CHECK_BENCH_S:-600}" GPU_CHECK_DEADLINE_S="${GPU_CHECK_DEADLINE_S:-1800}" \
  bash bundle/run.sh "$RESULTS"
