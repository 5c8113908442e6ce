#!/usr/bin/env bash
# The GPU check on a machine with nothing but Linux, its GPU driver and Python (the lent GPU machine): copied to
# .gpu/run.sh by `npm run gpu:bundle`. Unpacks the bundle beside it, the carried Vulkan loader when the system has
# none, points Dawn at the NVIDIA ICD, runs bench/gpu-check.sh with the bundle's own Node, and leaves in the results
# folder ($1, else $OUT, else ./gpu-check-out) summary.md, run.log, the engine JSONs and every log in one tarball
# (the device returns at most 8 files).
#
#   bash .gpu/run.sh [RESULTS_DIR]
# Knobs: GPU_CHECK_WORK=DIR (where it unpacks; default a new folder under /tmp), GPU_CHECK_BUNDLED_VULKAN=1 (the
# carried loader even where the system has one: the rehearsal), and bench/gpu-check.sh's GPU_CHECK_* (its
# GPU_CHECK_DEADLINE_S, default 480, bounds the whole check).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RESULTS=$(mkdir -p "${1:-${OUT:-$PWD/gpu-check-out}}" && cd "${1:-${OUT:-$PWD/gpu-check-out}}" && pwd)
WORK=${GPU_CHECK_WORK:-$(mktemp -d /tmp/twb-gpu.XXXXXX)}
mkdir -p "$WORK"
exec > >(tee "$RESULTS/run.log") 2>&1

t0=$(date +%s)
# xz where it is installed, else Python's lzma (a Python/CUDA image always has Python).
if command -v xz >/dev/null; then
  xz -dc "$HERE/app.tar.xz" | tar -x -C "$WORK"
else
  python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$HERE/app.tar.xz" | tar -x -C "$WORK"
fi || {
  echo "run.sh: could not unpack $HERE/app.tar.xz"
  exit 1
}
APP=$WORK/app
export PATH="$APP/bin:$PATH"
echo "unpacked into $APP in $(($(date +%s) - t0)) s; node $(node --version)"

# The Vulkan loader: the system's, else the carried Debian packages, unpacked under $WORK (never over /).
if [ "${GPU_CHECK_BUNDLED_VULKAN:-0}" = 1 ] || ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '; then
  for deb in "$HERE"/vulkan/*.deb; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$deb" "$WORK/sys"
    else
      # A .deb is an ar archive holding data.tar.*; Python's tarfile reads it.
      python3 - "$deb" "$WORK/sys" <<'PY'
import io, sys, tarfile
data = open(sys.argv[1], 'rb').read()
pos = 8
while pos < len(data):
    name, size = data[pos:pos + 16].decode().strip(), int(data[pos + 48:pos + 58].decode().strip())
    body = data[pos + 60:pos + 60 + size]
    if name.startswith('data.tar'):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2])
    pos += 60 + size + (size % 2)
PY
    fi
  done
  export LD_LIBRARY_PATH="$WORK/sys/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "Vulkan loader: the carried packages ($(ls "$HERE"/vulkan | tr '\n' ' '))"
else
  echo "Vulkan loader: the system's"
fi
# A driver mounted under /usr/local/nvidia (containers) keeps libGLX_nvidia.so.0, which its ICD names, off the
# linker's cache.
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done

GPU_CHECK_OUT="$WORK/results" bash "$APP/bench/gpu-check.sh"
rc=$?
cp "$WORK/results/summary.md" "$RESULTS/" 2>/dev/null
cp "$WORK"/results/engine-*.json "$RESULTS/" 2>/dev/null
tar -C "$WORK" -czf "$RESULTS/gpu-check-logs.tar.gz" results
echo "run.sh: done in $(($(date +%s) - t0)) s (gpu-check.sh exit $rc); results in $RESULTS"
exit $rc
