/*
 * Fused training kernels on tfjs-backend-wasm's heap (runtime/engine/backend/train-kernels.ts registers them): each
 * replaces a chain of tfjs kernels (5–20 dispatches and as many passes over memory) by one pass forward and one
 * backward. Offsets are in floats (int32 tensors share the heap's 4-byte slots); every operand is bounds-checked.
 *
 *   tokenLogProbs(heap, N, V, logits, targets, out, invTemp)          out[r] = log softmax(invTemp·z[r])[t[r]]
 *   tokenLogProbsGrad(heap, N, V, logits, targets, dy, dx, invTemp)  dx[r] = invTemp·dy[r]·(onehot(t[r]) − softmax)
 *   rmsNorm(heap, rows, d, x, w, out, eps)                           out = x / √(mean(x²) + eps) · w
 *   rmsNormGrad(heap, rows, d, x, w, dy, dx, dw, eps)
 *   swiglu2(heap, n, gate, up, out)                                  out = silu(gate) · up (separate tensors)
 *   swiglu2Grad(heap, n, gate, up, dy, dgate, dup)
 *   maskedSoftmax(heap, B, H, T, Tk, biasBatch, s, bias, out, scale)
 *       attention probabilities: s [B, H, T, Tk] scores, bias [biasBatch (1 or B), 1, T, Tk] their additive mask,
 *       out = softmax(scale·s + bias) over the last axis
 *   maskedSoftmaxGrad(heap, rows, Tk, p, dy, dx, scale)                dx = scale·p·(dy − Σ dy·p)
 *   headsRope(heap, B, T, H, hd, x, bias, cos, sin, out)
 *       x [B, T, H·hd] (+ bias [H·hd]) → out [B, H, T, hd], rotate-half RoPE with cos/sin [B, T, hd/2] (cos -1: none)
 *   headsRopeGrad(heap, B, T, H, hd, dy, cos, sin, dx, dbias)         the transpose of the above (dbias -1: none)
 *   trainKernelThreads()                                             the threads the kernels split rows over now
 *
 * Reductions accumulate in float64. Rows split over OpenBLAS's current thread count (the runtime's one decision,
 * runtime/engine/backend/blas-threads.ts) when a kernel is big enough; column sums (dw, dbias) add fixed blocks of
 * rows in a fixed order, so the results are the same bits on any thread count.
 */
/* No FP-exception traps (values are unchanged): lets GCC if-convert the selects in exp_fast, so its loops vectorise. */
#pragma GCC optimize("no-trapping-math")

#include <node_api.h>
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train_kernels.h"

#define TK_CHECK(call)                                                    \
  do {                                                                    \
    if ((call) != napi_ok) {                                              \
      napi_throw_error(env, NULL, "blas_matmul: N-API call failed");      \
      return NULL;                                                        \
    }                                                                     \
  } while (0)

#define MAX_ARGS 16

/* ---- argument parsing -------------------------------------------------------------------------------------------- */

typedef struct {
  float* heap;
  uint64_t floats;
} heap_t;

/* argv[0] the heap, argv[1..ni] integers (offsets may be -1 where allowNeg), then nd doubles. */
static bool parse_args(napi_env env, napi_callback_info info, const char* name, size_t ni, size_t nd, heap_t* h,
                       int64_t* iv, double* dv) {
  size_t argc = MAX_ARGS;
  napi_value argv[MAX_ARGS];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) {
    napi_throw_error(env, NULL, "blas_matmul: N-API call failed");
    return false;
  }
  char msg[128];
  if (argc != 1 + ni + nd) {
    snprintf(msg, sizeof msg, "blas_matmul: %s takes %zu arguments", name, 1 + ni + nd);
    napi_throw_type_error(env, NULL, msg);
    return false;
  }
  bool isBuffer = false;
  void* data;
  size_t bytes;
  if (napi_is_arraybuffer(env, argv[0], &isBuffer) != napi_ok || !isBuffer ||
      napi_get_arraybuffer_info(env, argv[0], &data, &bytes) != napi_ok) {
    snprintf(msg, sizeof msg, "blas_matmul: %s: heap must be an ArrayBuffer", name);
    napi_throw_type_error(env, NULL, msg);
    return false;
  }
  h->heap = (float*)data;
  h->floats = bytes / sizeof(float);
  for (size_t i = 0; i < ni; i++) {
    double d;
    if (napi_get_value_double(env, argv[1 + i], &d) != napi_ok || d != (double)(int64_t)d || d < -1 ||
        d > 9007199254740991.0) {
      snprintf(msg, sizeof msg, "blas_matmul: %s: argument %zu must be an integer", name, i + 1);
      napi_throw_type_error(env, NULL, msg);
      return false;
    }
    iv[i] = (int64_t)d;
  }
  for (size_t i = 0; i < nd; i++)
    if (napi_get_value_double(env, argv[1 + ni + i], &dv[i]) != napi_ok) {
      snprintf(msg, sizeof msg, "blas_matmul: %s: argument %zu must be a number", name, 1 + ni + i);
      napi_throw_type_error(env, NULL, msg);
      return false;
    }
  return true;
}

static bool dims_ok(napi_env env, const char* name, const int64_t* dims, int n) {
  for (int i = 0; i < n; i++)
    if (dims[i] < 0 || dims[i] > INT32_MAX) {
      char msg[128];
      snprintf(msg, sizeof msg, "blas_matmul: %s: bad dimension", name);
      napi_throw_range_error(env, NULL, msg);
      return false;
    }
  return true;
}

/* An operand of `span` floats at `off` (-1: absent, only where `optional`) inside the heap; NULL with an error if not. */
static bool operand(napi_env env, const char* name, const heap_t* h, int64_t off, uint64_t span, bool optional,
                    float** out) {
  if (off == -1 && optional) {
    *out = NULL;
    return true;
  }
  if (off < 0 || (uint64_t)off + span > h->floats) {
    char msg[128];
    snprintf(msg, sizeof msg, "blas_matmul: %s: an operand lies outside the heap", name);
    napi_throw_range_error(env, NULL, msg);
    return false;
  }
  *out = h->heap + off;
  return true;
}

/* ---- rows over threads --------------------------------------------------------------------------------------------- */

typedef tk_range_fn range_fn;

#define MAX_WORKERS 7
/* Below this many floats touched a kernel stays on the calling thread: waking a worker costs ~10–30 µs. */
#define PARALLEL_MIN_FLOATS 65536

static struct {
  pthread_mutex_t mu;
  pthread_cond_t wake, done;
  int workers;        /* started */
  uint64_t gen;       /* bumped per job */
  int pending;        /* parts not finished */
  int parts;          /* parts of the current job (part 0 is the caller's) */
  range_fn fn;
  void* ctx;
  int64_t n;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, NULL, NULL, 0};

/* One job at a time: a second JavaScript thread (a worker loading the addon too) runs its kernels alone meanwhile. */
static pthread_mutex_t pool_busy = PTHREAD_MUTEX_INITIALIZER;

static void part_range(int64_t n, int parts, int i, int64_t* b, int64_t* e) {
  *b = n * i / parts;
  *e = n * (i + 1) / parts;
}

static void* worker_main(void* arg) {
  const int id = (int)(intptr_t)arg; /* 1.. */
  uint64_t seen = 0;
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    while (pool.gen == seen) pthread_cond_wait(&pool.wake, &pool.mu);
    seen = pool.gen;
    if (id >= pool.parts) continue;
    range_fn fn = pool.fn;
    void* ctx = pool.ctx;
    int64_t b, e;
    part_range(pool.n, pool.parts, id, &b, &e);
    pthread_mutex_unlock(&pool.mu);
    fn(ctx, b, e);
    pthread_mutex_lock(&pool.mu);
    if (--pool.pending == 0) pthread_cond_signal(&pool.done);
  }
  return NULL;
}

static int wanted_threads(void) {
  int t = openblas_get_num_threads();
  if (t < 1) t = 1;
  if (t > MAX_WORKERS + 1) t = MAX_WORKERS + 1;
  return t;
}

/* fn over [0, n) items, split into contiguous parts over the threads when `floats` (the memory touched) is large. */
void tk_par_for(int64_t n, uint64_t floats, range_fn fn, void* ctx) {
  int parts = floats >= PARALLEL_MIN_FLOATS ? wanted_threads() : 1;
  if (parts > n) parts = (int)n;
  if (parts <= 1 || pthread_mutex_trylock(&pool_busy) != 0) {
    if (n > 0) fn(ctx, 0, n);
    return;
  }
  pthread_mutex_lock(&pool.mu);
  while (pool.workers < parts - 1) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker_main, (void*)(intptr_t)(pool.workers + 1)) != 0) break;
    pthread_detach(t);
    pool.workers++;
  }
  if (parts > pool.workers + 1) parts = pool.workers + 1;
  pool.fn = fn;
  pool.ctx = ctx;
  pool.n = n;
  pool.parts = parts;
  pool.pending = parts - 1;
  pool.gen++;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.mu);
  int64_t b, e;
  part_range(n, parts, 0, &b, &e);
  fn(ctx, b, e);
  pthread_mutex_lock(&pool.mu);
  while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.mu);
  pthread_mutex_unlock(&pool.mu);
  pthread_mutex_unlock(&pool_busy);
}

#define par_for tk_par_for

/* ---- vectorisable float exp ---------------------------------------------------------------------------------------- */

/*
 * e^x within 2 ulp for −87.3 ≤ x ≤ 88 (Cephes' expf: x = n·ln2 + r, |r| ≤ ln2/2, a degree-6 polynomial for e^r, 2^n
 * put into the exponent bits); 0 below −87.3, where e^x is under float's normal range (softmax's masked entries),
 * and e^88 above 88 (only a sigmoid's e^−g for g < −88 gets there: 1/(1 + e^88) is 6e-39 instead of 0). Plain
 * arithmetic and selects, so the loops calling it vectorise (glibc's expf is a call per element).
 */
static inline float exp_fast(float x) {
  const float lo = -87.33654f;
  float xc = x < lo ? lo : x;
  xc = xc > 88.0f ? 88.0f : xc;
  const float t = xc * 1.44269504088896341f;
  const float fn = (t + 12582912.0f) - 12582912.0f; /* round to nearest: 1.5·2^23 */
  float r = xc - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = ((int32_t)fn + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  const float y = p * scale;
  return x < lo ? 0.0f : y;
}

#define VECTOR __attribute__((target_clones("avx2", "default")))

/*
 * Reductions in explicit lanes: a plain `s += …` loop is a serial chain GCC may not reorder (no -ffast-math), so it
 * would not vectorise; eight independent lanes, summed in a fixed order at the end, do, and give the same bits on
 * every run. Sums are float64 lanes.
 */
#define LANES 8

VECTOR static float max_f(const float* x, int64_t n) {
  float m[LANES];
  for (int k = 0; k < LANES; k++) m[k] = -INFINITY;
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++) m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
  float r = -INFINITY;
  for (int k = 0; k < LANES; k++) r = m[k] > r ? m[k] : r;
  for (; i < n; i++) r = x[i] > r ? x[i] : r;
  return r;
}

/* Σ e^(a·x[i] − c). */
VECTOR static double sum_exp(const float* x, int64_t n, float a, float c) {
  double s[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++) s[k] += exp_fast(a * x[i + k] - c);
  double r = 0;
  for (int k = 0; k < LANES; k++) r += s[k];
  for (; i < n; i++) r += exp_fast(a * x[i] - c);
  return r;
}

/* Σ x[i]. */
VECTOR static double sum_f(const float* x, int64_t n) {
  double s[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++) s[k] += x[i + k];
  double r = 0;
  for (int k = 0; k < LANES; k++) r += s[k];
  for (; i < n; i++) r += x[i];
  return r;
}

/* Σ x[i]·y[i] (y may be x). */
VECTOR static double dot_f(const float* x, const float* y, int64_t n) {
  double s[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++) s[k] += (double)x[i + k] * y[i + k];
  double r = 0;
  for (int k = 0; k < LANES; k++) r += s[k];
  for (; i < n; i++) r += (double)x[i] * y[i];
  return r;
}

/* Σ (x[i]·w[i])·y[i], the product x·w rounded to float first as the unfused ops round it. */
VECTOR static double dot3_f(const float* x, const float* w, const float* y, int64_t n) {
  double s[LANES] = {0};
  int64_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (int k = 0; k < LANES; k++) s[k] += (double)(x[i + k] * w[i + k]) * y[i + k];
  double r = 0;
  for (int k = 0; k < LANES; k++) r += s[k];
  for (; i < n; i++) r += (double)(x[i] * w[i]) * y[i];
  return r;
}

/* The reductions above for the other kernels (decode_step.c's scoring head), so both compute one quantity. */
float tk_max(const float* x, int64_t n) { return max_f(x, n); }
double tk_sum_exp(const float* x, int64_t n, float a, float c) { return sum_exp(x, n, a, c); }

/* ---- token log-probs ----------------------------------------------------------------------------------------------- */

typedef struct {
  const float* z;
  const int32_t* t;
  const float* dy;
  float* out;
  int64_t V;
  float a; /* 1 / temperature */
} logprob_ctx;

/* log Σ e^(a·z) of one row (a > 0): the max, then the sum of exponentials around it. */
static double row_lse(const float* z, int64_t V, float a, float* shift) {
  const float m = a * max_f(z, V);
  *shift = m;
  return (double)m + log(sum_exp(z, V, a, m));
}

static void logprob_rows(void* p, int64_t b, int64_t e) {
  const logprob_ctx* c = p;
  for (int64_t r = b; r < e; r++) {
    const float* z = c->z + r * c->V;
    float shift;
    const double lse = row_lse(z, c->V, c->a, &shift);
    c->out[r] = (float)((double)c->a * z[c->t[r]] - lse);
  }
}

VECTOR static void softmax_grad_row(const float* z, int64_t V, float a, float shift, float inv, float g, float* dx) {
  /* dx = a·g·(onehot − e^(a·z − lse)), the one-hot added by the caller */
  const float ag = a * g;
  for (int64_t i = 0; i < V; i++) dx[i] = -ag * (exp_fast(a * z[i] - shift) * inv);
}

static void logprob_grad_rows(void* p, int64_t b, int64_t e) {
  const logprob_ctx* c = p;
  for (int64_t r = b; r < e; r++) {
    const float* z = c->z + r * c->V;
    float* dx = c->out + r * c->V;
    float shift;
    const double lse = row_lse(z, c->V, c->a, &shift);
    const float inv = (float)exp((double)shift - lse); /* 1 / Σ e^(a·z − shift) */
    softmax_grad_row(z, c->V, c->a, shift, inv, c->dy[r], dx);
    dx[c->t[r]] += c->a * c->dy[r];
  }
}

static bool targets_ok(napi_env env, const int32_t* t, int64_t N, int64_t V) {
  for (int64_t r = 0; r < N; r++)
    if (t[r] < 0 || t[r] >= V) {
      napi_throw_range_error(env, NULL, "blas_matmul: tokenLogProbs: a target is outside the vocabulary");
      return false;
    }
  return true;
}

static napi_value TokenLogProbs(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[5];
  double a;
  if (!parse_args(env, info, "tokenLogProbs", 5, 1, &h, v, &a) || !dims_ok(env, "tokenLogProbs", v, 2)) return NULL;
  const int64_t N = v[0], V = v[1];
  float *z, *t, *out;
  if (!operand(env, "tokenLogProbs", &h, v[2], (uint64_t)N * V, false, &z) ||
      !operand(env, "tokenLogProbs", &h, v[3], N, false, &t) || !operand(env, "tokenLogProbs", &h, v[4], N, false, &out))
    return NULL;
  if (V == 0 || !(a > 0) || !targets_ok(env, (const int32_t*)t, N, V)) {
    if (V == 0 || !(a > 0)) napi_throw_range_error(env, NULL, "blas_matmul: tokenLogProbs: empty vocabulary or a temperature ≤ 0");
    return NULL;
  }
  logprob_ctx c = {z, (const int32_t*)t, NULL, out, V, (float)a};
  par_for(N, (uint64_t)N * V, logprob_rows, &c);
  return NULL;
}

static napi_value TokenLogProbsGrad(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[6];
  double a;
  if (!parse_args(env, info, "tokenLogProbsGrad", 6, 1, &h, v, &a) || !dims_ok(env, "tokenLogProbsGrad", v, 2))
    return NULL;
  const int64_t N = v[0], V = v[1];
  float *z, *t, *dy, *dx;
  const char* nm = "tokenLogProbsGrad";
  if (!operand(env, nm, &h, v[2], (uint64_t)N * V, false, &z) || !operand(env, nm, &h, v[3], N, false, &t) ||
      !operand(env, nm, &h, v[4], N, false, &dy) || !operand(env, nm, &h, v[5], (uint64_t)N * V, false, &dx))
    return NULL;
  if (V == 0 || !(a > 0) || !targets_ok(env, (const int32_t*)t, N, V)) {
    if (V == 0 || !(a > 0)) napi_throw_range_error(env, NULL, "blas_matmul: tokenLogProbsGrad: empty vocabulary or a temperature ≤ 0");
    return NULL;
  }
  logprob_ctx c = {z, (const int32_t*)t, dy, dx, V, (float)a};
  par_for(N, 2 * (uint64_t)N * V, logprob_grad_rows, &c);
  return NULL;
}

/* ---- RMSNorm ------------------------------------------------------------------------------------------------------- */

/* Rows per block of the column sums (dw, dbias): fixed, so the sums do not depend on the thread count. */
#define COL_BLOCK 32

typedef struct {
  const float *x, *w, *dy;
  float *out, *dx;
  double* partial; /* [blocks][d] */
  int64_t rows, d;
  double eps;
} rms_ctx;

VECTOR static void scale_row(const float* x, const float* w, float inv, float* out, int64_t d) {
  for (int64_t i = 0; i < d; i++) out[i] = x[i] * inv * w[i];
}

static void rms_rows(void* p, int64_t b, int64_t e) {
  const rms_ctx* c = p;
  for (int64_t r = b; r < e; r++) {
    const float* x = c->x + r * c->d;
    const float inv = (float)(1 / sqrt(dot_f(x, x, c->d) / c->d + c->eps));
    scale_row(x, c->w, inv, c->out + r * c->d, c->d);
  }
}

/* One block of rows: dx per row, and the block's Σ dy·x̂ per column into partial. */
VECTOR static void rms_grad_block(const rms_ctx* c, int64_t blk) {
  const int64_t d = c->d, r0 = blk * COL_BLOCK;
  const int64_t r1 = r0 + COL_BLOCK < c->rows ? r0 + COL_BLOCK : c->rows;
  double* acc = c->partial + blk * d;
  for (int64_t i = 0; i < d; i++) acc[i] = 0;
  for (int64_t r = r0; r < r1; r++) {
    const float *x = c->x + r * d, *dy = c->dy + r * d;
    float* dx = c->dx + r * d;
    const double ss = dot_f(x, x, d), dot = dot3_f(dy, c->w, x, d); /* Σ x², Σ dy·w·x */
    const double inv = 1 / sqrt(ss / d + c->eps);
    /* dx = inv·(dy·w − x̂·mean(dy·w·x̂)), x̂ = x·inv */
    const float fi = (float)inv, k = (float)(inv * inv * inv * dot / d);
    for (int64_t i = 0; i < d; i++) {
      dx[i] = fi * (dy[i] * c->w[i]) - k * x[i];
      acc[i] += (double)(dy[i] * (x[i] * fi));
    }
  }
}

static void rms_grad_blocks(void* p, int64_t b, int64_t e) {
  for (int64_t blk = b; blk < e; blk++) rms_grad_block(p, blk);
}

static void sum_blocks(const double* partial, int64_t blocks, int64_t d, float* out) {
  for (int64_t i = 0; i < d; i++) {
    double s = 0;
    for (int64_t blk = 0; blk < blocks; blk++) s += partial[blk * d + i];
    out[i] = (float)s;
  }
}

static napi_value RmsNorm(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[5];
  double eps;
  const char* nm = "rmsNorm";
  if (!parse_args(env, info, nm, 5, 1, &h, v, &eps) || !dims_ok(env, nm, v, 2)) return NULL;
  const int64_t rows = v[0], d = v[1];
  float *x, *w, *out;
  if (!operand(env, nm, &h, v[2], (uint64_t)rows * d, false, &x) || !operand(env, nm, &h, v[3], d, false, &w) ||
      !operand(env, nm, &h, v[4], (uint64_t)rows * d, false, &out))
    return NULL;
  if (d == 0) return NULL;
  rms_ctx c = {x, w, NULL, out, NULL, NULL, rows, d, eps};
  par_for(rows, 2 * (uint64_t)rows * d, rms_rows, &c);
  return NULL;
}

static napi_value RmsNormGrad(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[7];
  double eps;
  const char* nm = "rmsNormGrad";
  if (!parse_args(env, info, nm, 7, 1, &h, v, &eps) || !dims_ok(env, nm, v, 2)) return NULL;
  const int64_t rows = v[0], d = v[1];
  const uint64_t n = (uint64_t)rows * d;
  float *x, *w, *dy, *dx, *dw;
  if (!operand(env, nm, &h, v[2], n, false, &x) || !operand(env, nm, &h, v[3], d, false, &w) ||
      !operand(env, nm, &h, v[4], n, false, &dy) || !operand(env, nm, &h, v[5], n, false, &dx) ||
      !operand(env, nm, &h, v[6], d, false, &dw))
    return NULL;
  if (d == 0) return NULL;
  const int64_t blocks = (rows + COL_BLOCK - 1) / COL_BLOCK;
  double* partial = malloc(sizeof(double) * (size_t)(blocks > 0 ? blocks * d : 1));
  if (!partial) {
    napi_throw_error(env, NULL, "blas_matmul: rmsNormGrad: out of memory");
    return NULL;
  }
  rms_ctx c = {x, w, dy, NULL, dx, partial, rows, d, eps};
  par_for(blocks, 3 * n, rms_grad_blocks, &c);
  sum_blocks(partial, blocks, d, dw);
  free(partial);
  return NULL;
}

/* ---- SwiGLU on separate gate and up tensors -------------------------------------------------------------------------- */

typedef struct {
  const float *g, *u, *dy;
  float *out, *dg, *du;
} swiglu_ctx;

#define ELEM_BLOCK 4096

VECTOR static void swiglu_block(const float* restrict g, const float* restrict u, float* restrict out, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    const float s = 1.0f / (1.0f + exp_fast(-g[i]));
    out[i] = g[i] * s * u[i];
  }
}

VECTOR static void swiglu_grad_block(const float* restrict g, const float* restrict u, const float* restrict dy,
                                     float* restrict dg, float* restrict du, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    const float s = 1.0f / (1.0f + exp_fast(-g[i]));
    du[i] = dy[i] * (g[i] * s);
    /* d silu/dg = s·(1 + g·(1 − s)) */
    dg[i] = dy[i] * u[i] * (s * (1.0f + g[i] * (1.0f - s)));
  }
}

typedef struct {
  const swiglu_ctx* c;
  int64_t n;
} swiglu_job;

static void swiglu_blocks(void* p, int64_t b, int64_t e) {
  const swiglu_job* j = p;
  const int64_t lo = b * ELEM_BLOCK, hi = e * ELEM_BLOCK < j->n ? e * ELEM_BLOCK : j->n;
  const swiglu_ctx* c = j->c;
  if (c->dy)
    swiglu_grad_block(c->g + lo, c->u + lo, c->dy + lo, c->dg + lo, c->du + lo, hi - lo);
  else
    swiglu_block(c->g + lo, c->u + lo, c->out + lo, hi - lo);
}

static napi_value Swiglu2(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[4];
  const char* nm = "swiglu2";
  if (!parse_args(env, info, nm, 4, 0, &h, v, NULL)) return NULL;
  const int64_t n = v[0];
  float *g, *u, *out;
  if (n < 0 || !operand(env, nm, &h, v[1], n, false, &g) || !operand(env, nm, &h, v[2], n, false, &u) ||
      !operand(env, nm, &h, v[3], n, false, &out))
    return NULL;
  swiglu_ctx c = {g, u, NULL, out, NULL, NULL};
  swiglu_job j = {&c, n};
  par_for((n + ELEM_BLOCK - 1) / ELEM_BLOCK, 3 * (uint64_t)n, swiglu_blocks, &j);
  return NULL;
}

static napi_value Swiglu2Grad(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[6];
  const char* nm = "swiglu2Grad";
  if (!parse_args(env, info, nm, 6, 0, &h, v, NULL)) return NULL;
  const int64_t n = v[0];
  float *g, *u, *dy, *dg, *du;
  if (n < 0 || !operand(env, nm, &h, v[1], n, false, &g) || !operand(env, nm, &h, v[2], n, false, &u) ||
      !operand(env, nm, &h, v[3], n, false, &dy) || !operand(env, nm, &h, v[4], n, false, &dg) ||
      !operand(env, nm, &h, v[5], n, false, &du))
    return NULL;
  swiglu_ctx c = {g, u, dy, NULL, dg, du};
  swiglu_job j = {&c, n};
  par_for((n + ELEM_BLOCK - 1) / ELEM_BLOCK, 5 * (uint64_t)n, swiglu_blocks, &j);
  return NULL;
}

/* ---- attention softmax with its additive mask ---------------------------------------------------------------------- */

typedef struct {
  const float *s, *bias, *p, *dy;
  float* out;
  int64_t Tk, T, H, biasBatch;
  float scale;
} softmax_ctx;

VECTOR static void masked_softmax_row(const float* s, const float* bias, float scale, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = s[i] * scale + bias[i];
  const float m = max_f(out, n);
  for (int64_t i = 0; i < n; i++) out[i] = exp_fast(out[i] - m);
  const float inv = (float)(1 / sum_f(out, n));
  for (int64_t i = 0; i < n; i++) out[i] *= inv;
}

static void masked_softmax_rows(void* p, int64_t b, int64_t e) {
  const softmax_ctx* c = p;
  for (int64_t r = b; r < e; r++) {
    const int64_t b = c->biasBatch == 1 ? 0 : r / (c->H * c->T);
    const float* bias = c->bias + (b * c->T + r % c->T) * c->Tk;
    masked_softmax_row(c->s + r * c->Tk, bias, c->scale, c->out + r * c->Tk, c->Tk);
  }
}

VECTOR static void softmax_grad_row2(const float* p, const float* dy, float scale, float* dx, int64_t n) {
  const float d = (float)dot_f(p, dy, n);
  for (int64_t i = 0; i < n; i++) dx[i] = scale * (p[i] * (dy[i] - d));
}

static void masked_softmax_grad_rows(void* p, int64_t b, int64_t e) {
  const softmax_ctx* c = p;
  for (int64_t r = b; r < e; r++)
    softmax_grad_row2(c->p + r * c->Tk, c->dy + r * c->Tk, c->scale, c->out + r * c->Tk, c->Tk);
}

static napi_value MaskedSoftmax(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[8];
  double scale;
  const char* nm = "maskedSoftmax";
  if (!parse_args(env, info, nm, 8, 1, &h, v, &scale) || !dims_ok(env, nm, v, 5)) return NULL;
  const int64_t B = v[0], H = v[1], T = v[2], Tk = v[3], biasBatch = v[4];
  if (biasBatch != 1 && biasBatch != B) {
    napi_throw_range_error(env, NULL, "blas_matmul: maskedSoftmax: the mask's batch must be 1 or B");
    return NULL;
  }
  const uint64_t rows = (uint64_t)B * H * T;
  float *s, *bias, *out;
  if (!operand(env, nm, &h, v[5], rows * Tk, false, &s) ||
      !operand(env, nm, &h, v[6], (uint64_t)biasBatch * T * Tk, false, &bias) ||
      !operand(env, nm, &h, v[7], rows * Tk, false, &out))
    return NULL;
  if (Tk == 0 || rows == 0) return NULL;
  softmax_ctx c = {s, bias, NULL, NULL, out, Tk, T, H, biasBatch, (float)scale};
  par_for((int64_t)rows, 3 * rows * Tk, masked_softmax_rows, &c);
  return NULL;
}

static napi_value MaskedSoftmaxGrad(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[5];
  double scale;
  const char* nm = "maskedSoftmaxGrad";
  if (!parse_args(env, info, nm, 5, 1, &h, v, &scale) || !dims_ok(env, nm, v, 2)) return NULL;
  const int64_t rows = v[0], Tk = v[1];
  const uint64_t n = (uint64_t)rows * Tk;
  float *p, *dy, *dx;
  if (!operand(env, nm, &h, v[2], n, false, &p) || !operand(env, nm, &h, v[3], n, false, &dy) ||
      !operand(env, nm, &h, v[4], n, false, &dx))
    return NULL;
  softmax_ctx c = {NULL, NULL, p, dy, dx, Tk, 1, 1, 1, (float)scale};
  par_for(rows, 3 * n, masked_softmax_grad_rows, &c);
  return NULL;
}

/* ---- heads split (+ bias) with rotate-half RoPE ---------------------------------------------------------------------- */

typedef struct {
  const float *x, *bias, *cos, *sin, *dy;
  float *out, *dx;
  double* partial; /* dbias: [blocks][H·hd] */
  int64_t B, T, H, hd;
} heads_ctx;

/* Rows (b, t) of x: each holds H heads of hd; head h of row (b, t) goes to out[b, h, t]. */
static void heads_rows(void* p, int64_t b0, int64_t e0) {
  const heads_ctx* c = p;
  const int64_t H = c->H, hd = c->hd, T = c->T, half = hd / 2;
  for (int64_t row = b0; row < e0; row++) {
    const int64_t b = row / T, t = row % T;
    const float* xr = c->x + row * H * hd;
    const float *cs = c->cos ? c->cos + row * half : NULL, *sn = c->sin ? c->sin + row * half : NULL;
    for (int64_t h = 0; h < H; h++) {
      const float* xh = xr + h * hd;
      const float* bh = c->bias ? c->bias + h * hd : NULL;
      float* o = c->out + ((b * H + h) * T + t) * hd;
      if (!cs) {
        for (int64_t i = 0; i < hd; i++) o[i] = bh ? xh[i] + bh[i] : xh[i];
        continue;
      }
      for (int64_t i = 0; i < half; i++) {
        const float x1 = bh ? xh[i] + bh[i] : xh[i];
        const float x2 = bh ? xh[i + half] + bh[i + half] : xh[i + half];
        o[i] = x1 * cs[i] + (-x2) * sn[i];
        o[i + half] = x2 * cs[i] + x1 * sn[i];
      }
    }
  }
}

/* A block of COL_BLOCK rows (b, t): dx rows, and their Σ over rows into partial (dbias). */
static void heads_grad_block(const heads_ctx* c, int64_t blk) {
  const int64_t H = c->H, hd = c->hd, T = c->T, half = hd / 2, width = H * hd, rows = c->B * T;
  const int64_t r0 = blk * COL_BLOCK, r1 = r0 + COL_BLOCK < rows ? r0 + COL_BLOCK : rows;
  double* acc = c->partial ? c->partial + blk * width : NULL;
  if (acc)
    for (int64_t i = 0; i < width; i++) acc[i] = 0;
  for (int64_t row = r0; row < r1; row++) {
    const int64_t b = row / T, t = row % T;
    float* dxr = c->dx + row * width;
    const float *cs = c->cos ? c->cos + row * half : NULL, *sn = c->sin ? c->sin + row * half : NULL;
    for (int64_t h = 0; h < H; h++) {
      const float* g = c->dy + ((b * H + h) * T + t) * hd;
      float* d = dxr + h * hd;
      if (!cs) {
        for (int64_t i = 0; i < hd; i++) d[i] = g[i];
      } else {
        /* transpose of [x1, x2] → [x1·c − x2·s, x2·c + x1·s] */
        for (int64_t i = 0; i < half; i++) {
          d[i] = g[i] * cs[i] + g[i + half] * sn[i];
          d[i + half] = g[i + half] * cs[i] - g[i] * sn[i];
        }
      }
    }
    if (acc)
      for (int64_t i = 0; i < width; i++) acc[i] += dxr[i];
  }
}

static void heads_grad_blocks(void* p, int64_t b, int64_t e) {
  for (int64_t blk = b; blk < e; blk++) heads_grad_block(p, blk);
}

static napi_value HeadsRope(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[9];
  const char* nm = "headsRope";
  if (!parse_args(env, info, nm, 9, 0, &h, v, NULL) || !dims_ok(env, nm, v, 4)) return NULL;
  const int64_t B = v[0], T = v[1], H = v[2], hd = v[3];
  const uint64_t n = (uint64_t)B * T * H * hd, half = (uint64_t)B * T * (hd / 2);
  if (hd % 2) {
    napi_throw_range_error(env, NULL, "blas_matmul: headsRope: the head size must be even");
    return NULL;
  }
  float *x, *bias, *cs, *sn, *out;
  if (!operand(env, nm, &h, v[4], n, false, &x) || !operand(env, nm, &h, v[5], (uint64_t)H * hd, true, &bias) ||
      !operand(env, nm, &h, v[6], half, true, &cs) || !operand(env, nm, &h, v[7], half, true, &sn) ||
      !operand(env, nm, &h, v[8], n, false, &out))
    return NULL;
  if (!cs != !sn) {
    napi_throw_range_error(env, NULL, "blas_matmul: headsRope: cos and sin come together");
    return NULL;
  }
  heads_ctx c = {x, bias, cs, sn, NULL, out, NULL, NULL, B, T, H, hd};
  par_for(B * T, 2 * n, heads_rows, &c);
  return NULL;
}

static napi_value HeadsRopeGrad(napi_env env, napi_callback_info info) {
  heap_t h;
  int64_t v[9];
  const char* nm = "headsRopeGrad";
  if (!parse_args(env, info, nm, 9, 0, &h, v, NULL) || !dims_ok(env, nm, v, 4)) return NULL;
  const int64_t B = v[0], T = v[1], H = v[2], hd = v[3];
  const uint64_t n = (uint64_t)B * T * H * hd, half = (uint64_t)B * T * (hd / 2);
  if (hd % 2) {
    napi_throw_range_error(env, NULL, "blas_matmul: headsRopeGrad: the head size must be even");
    return NULL;
  }
  float *dy, *cs, *sn, *dx, *dbias;
  if (!operand(env, nm, &h, v[4], n, false, &dy) || !operand(env, nm, &h, v[5], half, true, &cs) ||
      !operand(env, nm, &h, v[6], half, true, &sn) || !operand(env, nm, &h, v[7], n, false, &dx) ||
      !operand(env, nm, &h, v[8], (uint64_t)H * hd, true, &dbias))
    return NULL;
  if (!cs != !sn) {
    napi_throw_range_error(env, NULL, "blas_matmul: headsRopeGrad: cos and sin come together");
    return NULL;
  }
  const int64_t rows = B * T, blocks = (rows + COL_BLOCK - 1) / COL_BLOCK, width = H * hd;
  double* partial = NULL;
  if (dbias && blocks > 0) {
    partial = malloc(sizeof(double) * (size_t)(blocks * width));
    if (!partial) {
      napi_throw_error(env, NULL, "blas_matmul: headsRopeGrad: out of memory");
      return NULL;
    }
  }
  heads_ctx c = {NULL, NULL, cs, sn, dy, NULL, dx, partial, B, T, H, hd};
  par_for(blocks, 2 * n, heads_grad_blocks, &c);
  if (dbias) {
    if (partial)
      sum_blocks(partial, blocks, width, dbias);
    else
      for (int64_t i = 0; i < width; i++) dbias[i] = 0;
  }
  free(partial);
  return NULL;
}

static napi_value TrainKernelThreads(napi_env env, napi_callback_info info) {
  napi_value out;
  TK_CHECK(napi_create_int32(env, wanted_threads(), &out));
  return out;
}

bool register_train_kernels(napi_env env, napi_value exports) {
  static const struct {
    const char* name;
    napi_callback fn;
  } fns[] = {
      {"tokenLogProbs", TokenLogProbs},   {"tokenLogProbsGrad", TokenLogProbsGrad}, {"rmsNorm", RmsNorm},
      {"rmsNormGrad", RmsNormGrad},       {"swiglu2", Swiglu2},                     {"swiglu2Grad", Swiglu2Grad},
      {"maskedSoftmax", MaskedSoftmax},   {"maskedSoftmaxGrad", MaskedSoftmaxGrad}, {"headsRope", HeadsRope},
      {"headsRopeGrad", HeadsRopeGrad},   {"trainKernelThreads", TrainKernelThreads},
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f) != napi_ok) return false;
    if (napi_set_named_property(env, exports, fns[i].name, f) != napi_ok) return false;
  }
  return true;
}
