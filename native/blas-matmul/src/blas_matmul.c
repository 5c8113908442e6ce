/*
 * Float32 batched GEMM on tfjs-backend-wasm's heap through OpenBLAS's cblas_sgemm, zero-copy.
 *
 * The wasm heap is a plain (non-shared) ArrayBuffer; tensors live in it at byte offsets the backend records. The
 * JavaScript side (runtime/engine/backend/native-matmul.ts) passes that buffer plus float offsets, and this writes
 * C = op(A)·op(B) for each batch slice in place. Batch slices of A and B are picked as tfjs' own kernels do:
 * slice i of the output uses slice (i % batchA) of A and (i % batchB) of B. Every access is bounds-checked
 * against the buffer, so bad arguments throw instead of corrupting memory.
 *
 * Exports:
 *   sgemm(heap, batch, batchA, batchB, M, N, K, aOff, bOff, cOff, transA, transB)  offsets in floats
 *   sumSquares(heap, off, n)  the float64 sum of squares of n floats (a gradient's squared norm)
 *   adamw(heap, n, pOff, gOff, mOff, vOff, pOut, mOut, vOut, [lr, b1, b2, eps, wd, coef, bc1, bc2])
 *     one AdamW step over n floats in a single pass, computed in float64 and rounded once: torch.optim.AdamW's
 *     formula (decoupled decay, bias correction) with the gradient scaled by coef (global-norm clipping)
 *   decodeAttention(heap, B, H, KV, hd, L, M, slot, rows, eps, qkv, pos, cos, sin, keys, values, mask, bias, qNorm,
 *                   kNorm, out)  one token per row of rotary grouped-query attention over a KV cache, the token's key
 *     and value written into it (runtime/engine/backend/decode-kernels.ts has the layout and the JavaScript twin);
 *     bias, qNorm, kNorm may be -1 (absent)
 *   swiglu(heap, rows, inter, guOff, outOff)  out = silu(gate) * up for rows of [gate | up]
 *   decodeStep(heap, desc)  one whole decode or prefill step of a Llama-family model (decode_step.c)
 *   sampleRows(...)  temperature sampling or the greedy pick from rows of logits (sample_rows.c)
 *   setThreads(n), getThreads(), config()  OpenBLAS's thread count and build string
 */
#include <node_api.h>
#include <cblas.h>
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decode_step.h"
#include "sample_rows.h"
#include "train_kernels.h"

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, NULL, "blas_matmul: N-API call failed");  \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

static bool get_i64(napi_env env, napi_value v, const char* name, int64_t* out) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || !(d >= 0) || d > 9007199254740991.0 || d != (double)(int64_t)d) {
    char msg[96];
    snprintf(msg, sizeof msg, "blas_matmul: %s must be a non-negative integer", name);
    napi_throw_type_error(env, NULL, msg);
    return false;
  }
  *out = (int64_t)d;
  return true;
}

/* The wasm heap (an ArrayBuffer) as floats, with its length in floats; NULL (with an exception pending) if not one. */
static float* heap_buffer(napi_env env, napi_value buf, uint64_t* floats) {
  bool isBuffer = false;
  if (napi_is_arraybuffer(env, buf, &isBuffer) != napi_ok || !isBuffer) {
    napi_throw_type_error(env, NULL, "blas_matmul: heap must be an ArrayBuffer");
    return NULL;
  }
  void* data;
  size_t bytes;
  if (napi_get_arraybuffer_info(env, buf, &data, &bytes) != napi_ok) {
    napi_throw_error(env, NULL, "blas_matmul: N-API call failed");
    return NULL;
  }
  *floats = bytes / sizeof(float);
  return (float*)data;
}

static napi_value Sgemm(napi_env env, napi_callback_info info) {
  size_t argc = 12;
  napi_value argv[12];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 12) {
    napi_throw_type_error(env, NULL, "blas_matmul: sgemm takes 12 arguments");
    return NULL;
  }
  uint64_t floats;
  float* heap = heap_buffer(env, argv[0], &floats);
  if (!heap) return NULL;
  static const char* names[] = {"", "batch", "batchA", "batchB", "M", "N", "K", "aOff", "bOff", "cOff"};
  int64_t v[10];
  for (int i = 1; i < 10; i++)
    if (!get_i64(env, argv[i], names[i], &v[i])) return NULL;
  int64_t batch = v[1], batchA = v[2], batchB = v[3], M = v[4], N = v[5], K = v[6], aOff = v[7], bOff = v[8], cOff = v[9];
  bool tA, tB;
  CHECK(napi_get_value_bool(env, argv[10], &tA));
  CHECK(napi_get_value_bool(env, argv[11], &tB));
  if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX) {
    napi_throw_range_error(env, NULL, "blas_matmul: a dimension exceeds 2^31-1");
    return NULL;
  }
  if (batch == 0 || M == 0 || N == 0) return NULL;
  if (batchA == 0 || batchB == 0) {
    napi_throw_range_error(env, NULL, "blas_matmul: batchA and batchB must be positive");
    return NULL;
  }
  // Extents in floats; the products fit easily in 64 bits for anything that fits in a 4 GiB wasm heap.
  uint64_t aEnd = (uint64_t)aOff + (uint64_t)batchA * M * K, bEnd = (uint64_t)bOff + (uint64_t)batchB * K * N,
           cEnd = (uint64_t)cOff + (uint64_t)batch * M * N;
  if (aEnd > floats || bEnd > floats || cEnd > floats) {
    napi_throw_range_error(env, NULL, "blas_matmul: an operand lies outside the heap");
    return NULL;
  }
  if (K == 0) {
    for (uint64_t i = 0; i < (uint64_t)batch * M * N; i++) heap[cOff + i] = 0.0f;
    return NULL;
  }
  int lda = (int)(tA ? M : K), ldb = (int)(tB ? K : N);
  for (int64_t i = 0; i < batch; i++) {
    const float* a = heap + aOff + (i % batchA) * M * K;
    const float* b = heap + bOff + (i % batchB) * K * N;
    float* c = heap + cOff + i * M * N;
    cblas_sgemm(CblasRowMajor, tA ? CblasTrans : CblasNoTrans, tB ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a, lda, b, ldb, 0.0f, c,
                (int)N);
  }
  return NULL;
}

static bool get_f64(napi_env env, napi_value v, double* out) {
  if (napi_get_value_double(env, v, out) != napi_ok) {
    napi_throw_type_error(env, NULL, "blas_matmul: expected a number");
    return false;
  }
  return true;
}

/* The heap and n floats at each of `count` offsets, all bounds-checked; NULL (with an exception pending) if not. */
static float* heap_floats(napi_env env, napi_value buf, const int64_t* offs, int count, int64_t n) {
  uint64_t floats;
  float* heap = heap_buffer(env, buf, &floats);
  if (!heap) return NULL;
  for (int i = 0; i < count; i++)
    if ((uint64_t)offs[i] + (uint64_t)n > floats) {
      napi_throw_range_error(env, NULL, "blas_matmul: an operand lies outside the heap");
      return NULL;
    }
  return heap;
}

static napi_value SumSquares(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 3) {
    napi_throw_type_error(env, NULL, "blas_matmul: sumSquares takes 3 arguments");
    return NULL;
  }
  int64_t off, n;
  if (!get_i64(env, argv[1], "off", &off) || !get_i64(env, argv[2], "n", &n)) return NULL;
  float* heap = heap_floats(env, argv[0], &off, 1, n);
  if (!heap) return NULL;
  const float* x = heap + off;
  /* Four partial sums: the loop vectorises without -ffast-math and the rounding stays float64's. */
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += (double)x[i] * x[i];
    s1 += (double)x[i + 1] * x[i + 1];
    s2 += (double)x[i + 2] * x[i + 2];
    s3 += (double)x[i + 3] * x[i + 3];
  }
  for (; i < n; i++) s0 += (double)x[i] * x[i];
  napi_value out;
  CHECK(napi_create_double(env, (s0 + s1) + (s2 + s3), &out));
  return out;
}

/* restrict (the caller checks that outputs and inputs do not overlap) lets the loop vectorise; AVX2 where the CPU has it. */
__attribute__((target_clones("avx2", "default"))) static void adamw_loop(
    int64_t n, const float* restrict p, const float* restrict g, const float* restrict m, const float* restrict s,
    float* restrict po, float* restrict mo, float* restrict so, double coef, double b1, double b2, double decay,
    double step, double rbc2, double eps) {
  for (int64_t i = 0; i < n; i++) {
    double gi = coef * g[i];
    double mi = b1 * m[i] + (1 - b1) * gi;
    double si = b2 * s[i] + (1 - b2) * gi * gi;
    mo[i] = (float)mi;
    so[i] = (float)si;
    po[i] = (float)(p[i] * decay - step * mi / (sqrt(si) * rbc2 + eps));
  }
}

typedef struct {
  const float *p, *g, *m, *s;
  float *po, *mo, *so;
  double coef, b1, b2, decay, step, rbc2, eps;
} adamw_job;

static void adamw_range(void* ctx, int64_t b, int64_t e) {
  const adamw_job* j = ctx;
  adamw_loop(e - b, j->p + b, j->g + b, j->m + b, j->s + b, j->po + b, j->mo + b, j->so + b, j->coef, j->b1, j->b2,
             j->decay, j->step, j->rbc2, j->eps);
}

static napi_value AdamW(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 10) {
    napi_throw_type_error(env, NULL, "blas_matmul: adamw takes 10 arguments");
    return NULL;
  }
  static const char* names[] = {"n", "pOff", "gOff", "mOff", "vOff", "pOut", "mOut", "vOut"};
  int64_t v[8];
  for (int i = 0; i < 8; i++)
    if (!get_i64(env, argv[i + 1], names[i], &v[i])) return NULL;
  bool isArray = false;
  CHECK(napi_is_array(env, argv[9], &isArray));
  uint32_t len = 0;
  if (isArray) CHECK(napi_get_array_length(env, argv[9], &len));
  if (!isArray || len != 8) {
    napi_throw_type_error(env, NULL, "blas_matmul: adamw's hyperparameters are [lr, b1, b2, eps, wd, coef, bc1, bc2]");
    return NULL;
  }
  double h[8];
  for (uint32_t i = 0; i < 8; i++) {
    napi_value e;
    CHECK(napi_get_element(env, argv[9], i, &e));
    if (!get_f64(env, e, &h[i])) return NULL;
  }
  int64_t n = v[0];
  float* heap = heap_floats(env, argv[0], v + 1, 7, n);
  if (!heap) return NULL;
  const double lr = h[0], b1 = h[1], b2 = h[2], eps = h[3], wd = h[4], coef = h[5];
  const double decay = 1 - lr * wd, step = lr / h[6], rbc2 = 1 / sqrt(h[7]);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      if (v[5 + i] < v[1 + j] + n && v[1 + j] < v[5 + i] + n) {
        napi_throw_range_error(env, NULL, "blas_matmul: adamw's outputs overlap its inputs");
        return NULL;
      }
  /* Elementwise, so the same bits on any number of threads (train_kernels.c's pool). */
  adamw_job job = {heap + v[1], heap + v[2], heap + v[3], heap + v[4], heap + v[5], heap + v[6], heap + v[7],
                   coef,        b1,         b2,         decay,      step,       rbc2,       eps};
  tk_par_for(n, 7 * (uint64_t)n, adamw_range, &job);
  return NULL;
}

/* x (+ bias), RMS-normed by norm when given, then rotated (rotate-half RoPE with cos/sin rows of hd/2). */
static void load_head(const float* x, const float* bias, const float* norm, double eps, const float* c, const float* s,
                      int64_t hd, float* tmp, float* out) {
  for (int64_t i = 0; i < hd; i++) tmp[i] = bias ? x[i] + bias[i] : x[i];
  if (norm) {
    double ss = 0;
    for (int64_t i = 0; i < hd; i++) ss += (double)tmp[i] * tmp[i];
    const double inv = 1 / sqrt(ss / hd + eps);
    for (int64_t i = 0; i < hd; i++) tmp[i] = (float)(tmp[i] * inv * norm[i]);
  }
  const int64_t half = hd / 2;
  for (int64_t i = 0; i < half; i++) {
    out[i] = tmp[i] * c[i] - tmp[i + half] * s[i];
    out[i + half] = tmp[i + half] * c[i] + tmp[i] * s[i];
  }
}

/* An offset argument: a non-negative integer, or -1 for an absent operand (only where allowAbsent). */
static bool get_off(napi_env env, napi_value v, bool allowAbsent, int64_t* out) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || d != (double)(int64_t)d || d < (allowAbsent ? -1 : 0) ||
      d > 9007199254740991.0) {
    napi_throw_type_error(env, NULL, "blas_matmul: decodeAttention: bad offset or size");
    return false;
  }
  *out = (int64_t)d;
  return true;
}

static napi_value DecodeAttention(napi_env env, napi_callback_info info) {
  size_t argc = 21;
  napi_value argv[21];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 21) {
    napi_throw_type_error(env, NULL, "blas_matmul: decodeAttention takes 21 arguments");
    return NULL;
  }
  uint64_t floats;
  float* heap = heap_buffer(env, argv[0], &floats);
  if (!heap) return NULL;
  int64_t d[8];
  for (int i = 0; i < 8; i++)
    if (!get_off(env, argv[1 + i], false, &d[i])) return NULL;
  const int64_t B = d[0], H = d[1], KV = d[2], hd = d[3], L = d[4], M = d[5], slot = d[6], rows = d[7];
  double eps;
  if (!get_f64(env, argv[9], &eps)) return NULL;
  if (KV == 0 || H % KV || hd % 2 || hd == 0 || hd > 4096 || slot >= L || M > L) {
    napi_throw_range_error(env, NULL, "blas_matmul: decodeAttention: bad dimensions");
    return NULL;
  }
  const int64_t width = (H + 2 * KV) * hd, half = hd / 2;
  /* qkv, pos, cos, sin, keys, values, mask, bias, qNorm, kNorm, out and the floats each spans. */
  const int64_t span[11] = {B * width, B, rows * half, rows * half, B * KV * L * hd, B * KV * L * hd, B * M, width, hd, hd, B * H * hd};
  int64_t off[11];
  for (int i = 0; i < 11; i++) {
    if (!get_off(env, argv[10 + i], i >= 7 && i <= 9, &off[i])) return NULL;
    if (off[i] >= 0 && (uint64_t)off[i] + (uint64_t)span[i] > floats) {
      napi_throw_range_error(env, NULL, "blas_matmul: decodeAttention: an operand lies outside the heap");
      return NULL;
    }
  }
  const float* qkv = heap + off[0];
  const int32_t* pos = (const int32_t*)(heap + off[1]);
  const float *cosT = heap + off[2], *sinT = heap + off[3], *mask = heap + off[6];
  float *keys = heap + off[4], *values = heap + off[5], *out = heap + off[10];
  const float* bias = off[7] >= 0 ? heap + off[7] : NULL;
  const float* qNorm = off[8] >= 0 ? heap + off[8] : NULL;
  const float* kNorm = off[9] >= 0 ? heap + off[9] : NULL;
  const int64_t groups = H / KV, n = slot + 1;
  float* work = malloc(sizeof(float) * (size_t)(hd + groups * hd + groups * n));
  if (!work) {
    napi_throw_error(env, NULL, "blas_matmul: decodeAttention: out of memory");
    return NULL;
  }
  float *tmp = work, *q = work + hd, *p = work + hd + groups * hd;
  const float scale = (float)(1 / sqrt((double)hd));
  for (int64_t b = 0; b < B; b++) {
    if (pos[b] < 0 || pos[b] >= rows) {
      free(work);
      napi_throw_range_error(env, NULL, "blas_matmul: decodeAttention: a position is outside the RoPE tables");
      return NULL;
    }
    const float *c = cosT + pos[b] * half, *s = sinT + pos[b] * half, *x = qkv + b * width;
    for (int64_t g = 0; g < KV; g++) {
      float* kd = keys + ((b * KV + g) * L + slot) * hd;
      float* vd = values + ((b * KV + g) * L + slot) * hd;
      load_head(x + (H + g) * hd, bias ? bias + (H + g) * hd : NULL, kNorm, eps, c, s, hd, tmp, kd);
      const float* vs = x + (H + KV + g) * hd;
      for (int64_t i = 0; i < hd; i++) vd[i] = bias ? vs[i] + bias[(H + KV + g) * hd + i] : vs[i];
    }
    for (int64_t g = 0; g < KV; g++) {
      /* The group's query heads as rows of q: scores = q·Kᵀ, softmax per row, out = P·V. */
      for (int64_t r = 0; r < groups; r++) {
        const int64_t h = g * groups + r;
        load_head(x + h * hd, bias ? bias + h * hd : NULL, qNorm, eps, c, s, hd, tmp, q + r * hd);
      }
      const float* K = keys + (b * KV + g) * L * hd;
      const float* V = values + (b * KV + g) * L * hd;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)groups, (int)n, (int)hd, scale, q, (int)hd, K, (int)hd,
                  0.0f, p, (int)n);
      for (int64_t r = 0; r < groups; r++) {
        float* pr = p + r * n;
        float max = -INFINITY;
        for (int64_t j = 0; j < n; j++)
          if ((j >= M || mask[b * M + j] != 0) && pr[j] > max) max = pr[j];
        double sum = 0;
        for (int64_t j = 0; j < n; j++) {
          const float e = (j >= M || mask[b * M + j] != 0) ? expf(pr[j] - max) : 0.0f;
          pr[j] = e;
          sum += e;
        }
        const float inv = (float)(1 / sum);
        for (int64_t j = 0; j < n; j++) pr[j] *= inv;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)groups, (int)hd, (int)n, 1.0f, p, (int)n, V, (int)hd,
                  0.0f, out + (b * H + g * groups) * hd, (int)hd);
    }
  }
  free(work);
  return NULL;
}

static napi_value Swiglu(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 5) {
    napi_throw_type_error(env, NULL, "blas_matmul: swiglu takes 5 arguments");
    return NULL;
  }
  int64_t v[4];
  static const char* names[] = {"rows", "inter", "guOff", "outOff"};
  for (int i = 0; i < 4; i++)
    if (!get_i64(env, argv[1 + i], names[i], &v[i])) return NULL;
  const int64_t rows = v[0], inter = v[1];
  uint64_t floats;
  float* heap = heap_buffer(env, argv[0], &floats);
  if (!heap) return NULL;
  if ((uint64_t)v[2] + (uint64_t)(rows * 2 * inter) > floats || (uint64_t)v[3] + (uint64_t)(rows * inter) > floats) {
    napi_throw_range_error(env, NULL, "blas_matmul: swiglu: an operand lies outside the heap");
    return NULL;
  }
  const float* gu = heap + v[2];
  float* out = heap + v[3];
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < inter; i++) {
      const float a = gu[r * 2 * inter + i];
      out[r * inter + i] = a / (1.0f + expf(-a)) * gu[r * 2 * inter + inter + i];
    }
  return NULL;
}

static napi_value SetThreads(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int64_t n;
  if (argc < 1 || !get_i64(env, argv[0], "threads", &n)) return NULL;
  if (n < 1 || n > 1024) {
    napi_throw_range_error(env, NULL, "blas_matmul: threads must be 1..1024");
    return NULL;
  }
  openblas_set_num_threads((int)n);
  return NULL;
}

static napi_value GetThreads(napi_env env, napi_callback_info info) {
  napi_value out;
  CHECK(napi_create_int32(env, openblas_get_num_threads(), &out));
  return out;
}

static napi_value Config(napi_env env, napi_callback_info info) {
  napi_value out;
  CHECK(napi_create_string_utf8(env, openblas_get_config(), NAPI_AUTO_LENGTH, &out));
  return out;
}

NAPI_MODULE_INIT() {
  static const struct {
    const char* name;
    napi_callback fn;
  } fns[] = {{"sgemm", Sgemm}, {"sumSquares", SumSquares}, {"adamw", AdamW}, {"decodeAttention", DecodeAttention}, {"swiglu", Swiglu}, {"setThreads", SetThreads}, {"getThreads", GetThreads}, {"config", Config}};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f) != napi_ok) return NULL;
    if (napi_set_named_property(env, exports, fns[i].name, f) != napi_ok) return NULL;
  }
  if (!register_train_kernels(env, exports)) return NULL;
  if (!export_decode_step(env, exports) || !export_sample_rows(env, exports)) return NULL;
  return exports;
}
