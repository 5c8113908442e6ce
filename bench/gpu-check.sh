#!/usr/bin/env bash
# GPU check of the engine on webgpu (Dawn over Vulkan), for a machine with a GPU; about 8 minutes at most.
#   1. `doctor` (which adapter Dawn finds, whether auto picks it);
#   2. the webgpu checks of bench/gpu-checks.json: no synchronous reads, greedy generation equal to cpu's, logits
#      parity with the PyTorch fixtures, gradient checks, greedy generate equal to wasm's, SFT (two steps, equal to
#      wasm's) and GRPO through the CLI;
#   3. greedy `generate` of one model on webgpu and on wasm, tokens diffed;
#   4. bench:engine on webgpu (training and generation tokens/s), one model at a time, PyTorch beside it: on CUDA
#      when `torch.cuda.is_available()`, else PyTorch CPU if installed, else the engine alone;
#   5. with PyTorch on CUDA: Trinity's GPU memory estimate (`check --gpu`, its GPUMemoryValidator's formulas) beside
#      PyTorch's measured peak for one FSDP-shaped step of the same shape (bench/gpu_memory_step.py).
# It runs in the repository (the checks as TypeScript through tsx) or in the bundle `npm run gpu:bundle` makes for a
# machine without Node (the same files compiled to JavaScript, same layout; its run.sh unpacks it and calls this).
# Logs and summary.md go to $GPU_CHECK_OUT, default bench/results/gpu-check/<UTC time>/ (docs/gpu-check.md is
# written by hand from them).
#
#   bash bench/gpu-check.sh
# Knobs (environment):
#   GPU_CHECK_SWIFTSHADER=1   use SwiftShader's Vulkan driver (a dry run on a machine without a GPU)
#   GPU_CHECK_MODELS=12m,124m,0.5b   bench:engine sizes, one part each (`tiny` for a dry run; empty: no bench)
#   GPU_CHECK_TEST_S=150 GPU_CHECK_GEN_S=60 GPU_CHECK_BENCH_S=150   per-part time limits (seconds; the bench's per model)
#   GPU_CHECK_DEADLINE_S=480  the whole run's limit: a part gets at most what is left of it, a part with no time
#                             left is skipped, and the summary is always written
#   GPU_CHECK_SCALE=1         BENCH_SCALE for bench:engine
#   GPU_CHECK_GEN_TOKENS=16   new tokens per prompt in the generate diff
#   GPU_CHECK_PEAK=1          0: bench:engine skips its peak-matmul measurement (BENCH_PEAK=0)
#   GPU_CHECK_OUT=DIR         where logs and summary.md go
#   GPU_CHECK_MEM_TOKENS=4096 tokens of the memory step (the estimate's per-GPU token budget); GPU_CHECK_MEM_S=120
# A new section is one more `part` line below (and its file in bench/gpu-checks.json, so the bundle carries it).
set -uo pipefail
cd "$(dirname "$0")/.."

STARTED=$(date +%s)
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT="${GPU_CHECK_OUT:-bench/results/gpu-check/$STAMP}"
mkdir -p "$OUT"
SUMMARY=$OUT/summary.md
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

# The repository runs the checks' TypeScript through tsx; the bundle has them compiled beside it, as .js.
if [ -f test/run.mjs ]; then LAYOUT=repo; else LAYOUT=bundle; fi
mapfile -t TESTS < <(node -p 'require("./bench/gpu-checks.json").tests.join("\n")')
if [ "$LAYOUT" = bundle ]; then
  TESTS=("${TESTS[@]/%.ts/.js}")
  RUN_TESTS=(node --test --test-reporter=spec "${TESTS[@]}")
  BENCH_ENGINE=(node bench/engine.bench.js)
else
  RUN_TESTS=(node test/run.mjs "${TESTS[@]}")
  BENCH_ENGINE=(node --import tsx bench/engine.bench.ts)
  [ -f dist/cli.js ] || npm run build >/dev/null
fi

export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg-$$}"
mkdir -p "$XDG_RUNTIME_DIR"
if [ "${GPU_CHECK_SWIFTSHADER:-0}" = 1 ]; then
  export VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json
elif [ -z "${VK_ICD_FILENAMES:-}" ]; then
  # The tests default to SwiftShader when VK_ICD_FILENAMES is unset: point it at the GPU driver's ICD instead.
  for icd in /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json \
    /usr/share/vulkan/icd.d/nvidia_icd.x86_64.json /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
    /usr/local/nvidia/etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$icd" ] && export VK_ICD_FILENAMES="$icd" && break
  done
  [ -z "${VK_ICD_FILENAMES:-}" ] && echo "WARNING: no NVIDIA Vulkan ICD found; set VK_ICD_FILENAMES (the tests would fall back to SwiftShader)"
fi
# Newer Vulkan loaders read VK_DRIVER_FILES; older ones VK_ICD_FILENAMES.
[ -n "${VK_ICD_FILENAMES:-}" ] && export VK_DRIVER_FILES="$VK_ICD_FILENAMES"
MODELS="${GPU_CHECK_MODELS-12m,124m,0.5b}"
TEST_S="${GPU_CHECK_TEST_S:-150}"
GEN_S="${GPU_CHECK_GEN_S:-60}"
BENCH_S="${GPU_CHECK_BENCH_S:-150}"
DEADLINE=$((STARTED + ${GPU_CHECK_DEADLINE_S:-480}))
FAILED=0

vulkan_loader() {
  ldconfig -p 2>/dev/null | grep -q libvulkan.so.1 && return 0
  local d
  for d in ${LD_LIBRARY_PATH//:/ }; do [ -e "$d/libvulkan.so.1" ] && return 0; done
  return 1
}
vulkan_loader || say "WARNING: libvulkan.so.1 is not installed (apt-get install libvulkan1): Dawn cannot start"

# part NAME LIMIT_S COMMAND...: runs COMMAND under a time limit (at most what is left before the deadline), its
# output to $OUT/NAME.log; one summary line.
part() {
  local name="$1" limit="$2"
  shift 2
  local start left rc verdict
  start=$(date +%s)
  left=$((DEADLINE - start - 10))
  if [ "$left" -lt 10 ]; then
    say "| $name | SKIPPED: no time left before GPU_CHECK_DEADLINE_S | 0 s | |"
    FAILED=1
    return 125
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout --kill-after=5 "$limit" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  verdict=ok
  { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && verdict="TIMED OUT after ${limit} s"
  [ $rc -ne 0 ] && [ "$verdict" = ok ] && verdict="FAILED (exit $rc)"
  say "| $name | $verdict | $(($(date +%s) - start)) s | $OUT/$name.log |"
  [ $rc -ne 0 ] && FAILED=1
  return $rc
}

say "# GPU check, $STAMP"
say
say '```'
{ command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi: not found"; } | head -4 | tee -a "$SUMMARY"
say "node $(node --version) ($LAYOUT); VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-(unset)}"
say '```'
say
say "## doctor"
say '```'
node dist/cli.js doctor 2>&1 | grep -v '^Warning: \|^    at ' | tee -a "$SUMMARY"
say '```'
say
say "| part | result | time | log |"
say "|---|---|---|---|"

part tests "$TEST_S" "${RUN_TESTS[@]}"
COUNTS=$(grep -sE '^ℹ (tests|pass|fail|skipped) ' "$OUT/tests.log" | paste -sd' ')
[ -n "$COUNTS" ] && say "$COUNTS"

# Greedy generation of the same model on webgpu and on wasm: the tokens must be equal.
GEN=$(mktemp -d)
node dist/cli.js model create --arch qwen2 --layers 2 --hidden 64 --heads 4 --kv-heads 2 --seed 7 --out "$GEN/model" >/dev/null
for b in webgpu wasm; do
  part "generate-$b" "$GEN_S" sh -c 'node dist/cli.js generate --model "$1/model" --prompt "The quick brown fox" --prompt Hello --max-new-tokens "$3" --temperature 0 --json --backend "$2" >"$1/$2.json"' gen "$GEN" "$b" "${GPU_CHECK_GEN_TOKENS:-16}"
done
node -e '
  const fs = require("fs");
  const toks = (b) => JSON.parse(fs.readFileSync(process.argv[1] + "/" + b + ".json", "utf8")).completions.map((c) => c.tokens);
  let g, w;
  try { g = toks("webgpu"); w = toks("wasm"); } catch (e) { console.log("generate diff: no output to compare (" + e.message + ")"); process.exit(1); }
  let same = true;
  g.forEach((t, i) => { const eq = JSON.stringify(t) === JSON.stringify(w[i]); same &&= eq; console.log(`prompt ${i}: webgpu ${JSON.stringify(t)}\n          wasm   ${JSON.stringify(w[i])}  ${eq ? "equal" : "DIFFERENT"}`); });
  console.log(same ? "generate diff: greedy tokens equal" : "generate diff: greedy tokens DIFFER");
  process.exit(same ? 0 : 1);
' "$GEN" 2>&1 | tee -a "$SUMMARY" || FAILED=1
rm -rf "$GEN"

# bench:engine on webgpu, one model per part (a model that runs out of time loses only its own numbers); PyTorch on
# CUDA beside it when it can.
PY=$(command -v python3 || echo /usr/bin/python3)
BENCH_ENV=(TRINITY_WORKBENCH_BACKEND=webgpu BENCH_SCALE="${GPU_CHECK_SCALE:-1}" BENCH_PEAK="${GPU_CHECK_PEAK:-1}")
if "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  say "PyTorch: $("$PY" -c 'import torch; print(torch.__version__, "on", torch.cuda.get_device_name(0))') (CUDA peer)"
  BENCH_ENV+=(BENCH_PYTHON="$PY" BENCH_TORCH_DEVICE=cuda BENCH_TORCH_THREADS=1 BENCH_TORCH_BLAS_DIRS=)
elif "$PY" -c 'import torch' 2>/dev/null; then
  say "PyTorch: installed, no CUDA device: the peer runs on the CPU"
else
  say "PyTorch: not installed: bench:engine measures the engine alone (no CUDA comparison)"
fi
for m in ${MODELS//,/ }; do
  part "bench-engine-$m" "$BENCH_S" env "${BENCH_ENV[@]}" BENCH_MODELS="$m" BENCH_OUT="$OUT/engine-$m.json" "${BENCH_ENGINE[@]}"
done
for m in ${MODELS//,/ }; do
  say
  say "### bench:engine $m"
  say '```'
  grep -v '^Warning: \|^    at ' "$OUT/bench-engine-$m.log" 2>/dev/null | tail -25 | tee -a "$SUMMARY"
  say '```'
done

# Trinity's estimate of one trainer step's peak (Qwen2.5-0.5B's shape, FSDP2 with fsdp_size 1, SFT: no entropy term)
# beside what PyTorch allocates for the same step on this GPU.
say
say "## GPU memory: Trinity's estimate vs PyTorch's peak"
if "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  MEM=$(mktemp -d)
  TOKENS="${GPU_CHECK_MEM_TOKENS:-4096}"
  mkdir -p "$MEM/model"
  cat >"$MEM/model/config.json" <<'JSON'
{"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
 "intermediate_size": 4864, "vocab_size": 151936, "tie_word_embeddings": true, "torch_dtype": "bfloat16"}
JSON
  cat >"$MEM/sft.yaml" <<YAML
mode: train
algorithm:
  algorithm_type: sft
model:
  model_path: $MEM/model
  max_model_len: $((TOKENS / 2))
cluster:
  node_num: 1
  gpu_per_node: 1
buffer:
  train_batch_size: 1
  trainer_input:
    experience_buffer:
      storage_type: file
      path: $MEM/data.jsonl
trainer:
  save_interval: 10
YAML
  if part memory-step "${GPU_CHECK_MEM_S:-120}" "$PY" bench/gpu_memory_step.py "$MEM/model/config.json" "$TOKENS"; then
    GIB=$(tail -1 "$OUT/memory-step.log" | node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).total_memory / 2 ** 30)')
    node dist/cli.js check --gpu "$GIB" --no-datasets --format json "$MEM/sft.yaml" >"$OUT/memory-estimate.json"
    node -e '
      const fs = require("fs");
      const m = JSON.parse(fs.readFileSync(process.argv[1], "utf8").trim().split("\n").pop());
      const t = JSON.parse(fs.readFileSync(process.argv[2], "utf8"))[0].gpuMemory[0].trainer;
      const g = (b) => (b / 2 ** 30).toFixed(2) + " GiB";
      if (t.status !== "estimated") { console.log("estimate: none (" + t.reason + ")"); process.exit(1); }
      const a = t.modules[0];
      console.log(`Trinity estimate (actor, ${a.fsdp.strategy}, fsdp_size ${a.fsdp.fsdpSize}, ${a.numTokens} tokens): ${g(a.peak)}`);
      console.log(`PyTorch peak on ${m.device} (torch ${m.torch}, ${m.tokens} tokens): ${g(m.peak_allocated)} allocated, ${g(m.peak_reserved)} reserved`);
      console.log(`estimate / measured (allocated): ${(a.peak / m.peak_allocated).toFixed(2)}`);
    ' "$OUT/memory-step.log" "$OUT/memory-estimate.json" 2>&1 | tee -a "$SUMMARY"
  fi
  rm -rf "$MEM"
else
  say "skipped: no PyTorch with CUDA here"
fi
echo "summary: $SUMMARY"
exit $FAILED
