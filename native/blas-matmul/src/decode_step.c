/*
 * One whole step of cached decoding for the Llama family, on tfjs-backend-wasm's heap: the embedding lookup, every
 * layer (q/k/v, rotary attention over the KV cache, o, the residual adds and RMS norms, SwiGLU, down) and the LM
 * head, in one call. runtime/engine/backend/decode-step.ts describes the layout and registers it as a tfjs kernel.
 *
 * A step feeds T tokens per row: T = 1 for a decode step, T = the prompt length for the prefill, the whole sequence
 * for scoring. Token t of row b goes to cache slot `slot + t` and attends to slots 0..slot+t, skipping the first M
 * slots where mask[b, j] = 0 (padding). The output is the logits of the last `cols` tokens of each row or, given
 * targets, their log-probabilities log softmax(logits / temperature)[target], reduced in float64 as tokenLogProbs
 * reduces them (reference log-probs); there the last layer computes queries, attention, o and the MLP for those
 * tokens only (the others' keys and values still fill the cache). Rows run through the layers in chunks of about
 * CHUNK_TOKENS tokens, so a long prefill's scratch stays bounded.
 *
 * Numerics are those of the kernels it replaces (decode-kernels.ts): matmuls are the same cblas_sgemm calls (ldc
 * picks q, k and v's columns, so no side-by-side weight copies are needed), biases are float32 adds, RMS norms
 * accumulate in float64 and round once, SwiGLU is float32. Attention takes its dot products in float32 with eight
 * partial sums instead of one sgemm per query group (the only place results may differ, in float32 rounding).
 *
 * decodeStep(heap, desc): desc is a Float64Array, a header (DS_*) then DL_COUNT entries per layer; offsets are in
 * floats, -1 for an absent operand. Every operand is bounds-checked against the heap.
 */
#include <node_api.h>
#include <cblas.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode_step.h"
#include "train_kernels.h"

enum {
  DS_B, DS_T, DS_D, DS_HEADS, DS_KV, DS_HD, DS_INTER, DS_VOCAB, DS_LAYERS, DS_L, DS_M, DS_SLOT, DS_ROWS, DS_EPS,
  DS_IDS, DS_POS, DS_MASK, DS_EMBED, DS_COS, DS_SIN, DS_FINAL, DS_HEAD, DS_HEAD_T, DS_OUT, DS_COLS, DS_TARGETS,
  DS_TEMP, DS_COUNT
};
enum {
  DL_LN1, DL_Q, DL_K, DL_V, DL_QB, DL_KB, DL_VB, DL_QNORM, DL_KNORM, DL_O, DL_OB, DL_LN2, DL_GATE, DL_UP, DL_GATEB,
  DL_UPB, DL_DOWN, DL_DOWNB, DL_KEYS, DL_VALUES, DL_COUNT
};

typedef struct {
  const float *ln1, *q, *k, *v, *qb, *kb, *vb, *qNorm, *kNorm, *o, *ob, *ln2, *gate, *up, *gateb, *upb, *down, *downb;
  float *keys, *values;
} Layer;

typedef struct {
  int64_t B, T, d, H, KV, hd, inter, vocab, L, M, slot, rows;
  double eps;
  const int32_t *ids, *pos;
  const float *mask, *embed, *cosT, *sinT, *finalNorm, *head;
  bool headT;
  float* out;
  /* The trailing tokens of each row that reach the head; with targets, their log-probs at `temperature`. */
  int64_t cols;
  const int32_t* targets;
  double temperature;
} Step;

/* out[r] = x[r] / rms(x[r]) * w, the sum of squares in float64 in order, the product rounded once. */
static void rms_norm(const float* x, const float* w, float* out, int64_t rows, int64_t d, double eps) {
  for (int64_t r = 0; r < rows; r++) {
    const float* xr = x + r * d;
    double ss = 0;
    for (int64_t i = 0; i < d; i++) ss += (double)xr[i] * xr[i];
    const double inv = 1 / sqrt(ss / d + eps);
    for (int64_t i = 0; i < d; i++) out[r * d + i] = (float)((double)xr[i] * inv * w[i]);
  }
}

/* y[rows, n] (row stride ldy) = x[rows, k] · w[k, n] + bias. */
static void linear(const float* x, int64_t rows, int64_t k, const float* w, const float* restrict bias, int64_t n,
                   float* restrict y, int64_t ldy) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)k, 1.0f, x, (int)k, w, (int)n, 0.0f,
              y, (int)ldy);
  if (bias)
    for (int64_t r = 0; r < rows; r++)
      for (int64_t i = 0; i < n; i++) y[r * ldy + i] += bias[i];
}

/* x (RMS-normed by norm when given), rotated by rotate-half RoPE with cos/sin rows of hd/2, into out. */
static void rope_head(const float* x, const float* norm, double eps, const float* c, const float* s, int64_t hd,
                      float* tmp, float* out) {
  const float* src = x;
  if (norm) {
    double ss = 0;
    for (int64_t i = 0; i < hd; i++) ss += (double)x[i] * x[i];
    const double inv = 1 / sqrt(ss / hd + eps);
    for (int64_t i = 0; i < hd; i++) tmp[i] = (float)(x[i] * inv * norm[i]);
    src = tmp;
  }
  const int64_t half = hd / 2;
  for (int64_t i = 0; i < half; i++) {
    out[i] = src[i] * c[i] - src[i + half] * s[i];
    out[i + half] = src[i + half] * c[i] + src[i] * s[i];
  }
}

static float dot8(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) acc[j] += a[i + j] * b[i + j];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

/*
 * qkv [R, W] (biases added) -> ctx: writes each token's rotated key and its value into the cache, then attends for
 * the tokens t ≥ tFrom of each row (the last layer only needs the tokens that reach the head), ctx holding their
 * rows in order, [B·(T − tFrom), H·hd]; their q columns are the only ones read. p: scratch of slot + T floats; tmp,
 * q: hd floats each.
 */
static void attention(const Step* st, const Layer* l, const float* qkv, int64_t tFrom, float* ctx, float* p,
                      float* tmp, float* q) {
  const int64_t B = st->B, T = st->T, H = st->H, KV = st->KV, hd = st->hd, L = st->L, M = st->M, half = hd / 2;
  const int64_t W = (H + 2 * KV) * hd, groups = H / KV;
  const float scale = (float)(1 / sqrt((double)hd));
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) {
      const int64_t r = b * T + t, at = st->slot + t;
      const float *c = st->cosT + st->pos[r] * half, *s = st->sinT + st->pos[r] * half, *x = qkv + r * W;
      for (int64_t g = 0; g < KV; g++) {
        rope_head(x + (H + g) * hd, l->kNorm, st->eps, c, s, hd, tmp, l->keys + ((b * KV + g) * L + at) * hd);
        memcpy(l->values + ((b * KV + g) * L + at) * hd, x + (H + KV + g) * hd, hd * sizeof(float));
      }
    }
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = tFrom; t < T; t++) {
      const int64_t r = b * T + t, n = st->slot + t + 1;
      const float *c = st->cosT + st->pos[r] * half, *s = st->sinT + st->pos[r] * half, *x = qkv + r * W;
      const float* valid = st->mask + b * M;
      for (int64_t h = 0; h < H; h++) {
        const float* Kc = l->keys + (b * KV + h / groups) * L * hd;
        const float* Vc = l->values + (b * KV + h / groups) * L * hd;
        float* o = ctx + (b * (T - tFrom) + t - tFrom) * H * hd + h * hd;
        rope_head(x + h * hd, l->qNorm, st->eps, c, s, hd, tmp, q);
        float max = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
          p[j] = (j >= M || valid[j] != 0) ? dot8(q, Kc + j * hd, hd) * scale : -INFINITY;
          if (p[j] > max) max = p[j];
        }
        memset(o, 0, hd * sizeof(float));
        /* A query with no key to attend to (a padding token of the prefill, never read) gets zeros. */
        if (max == -INFINITY) continue;
        double sum = 0;
        for (int64_t j = 0; j < n; j++) {
          const float e = p[j] == -INFINITY ? 0.0f : expf(p[j] - max);
          p[j] = e;
          sum += e;
        }
        const float inv = (float)(1 / sum);
        for (int64_t j = 0; j < n; j++) {
          if (p[j] == 0) continue;
          const float w = p[j] * inv;
          const float* vj = Vc + j * hd;
          for (int64_t i = 0; i < hd; i++) o[i] += w * vj[i];
        }
      }
    }
}

/* Rows per pass through the layers (a prefill or scoring call of many tokens runs in chunks of whole rows). */
#define CHUNK_TOKENS 1024
/* Rows of logits materialised at once when scoring targets, and the vocabulary columns per block. */
#define HEAD_ROWS 32
#define VOCAB_BLOCK 4096

/*
 * out[i] = log softmax(z_i / temperature)[targets[i]] for the n normed rows `last` [n, d]: the head's logits in
 * blocks of HEAD_ROWS rows × VOCAB_BLOCK columns (never a whole vocabulary's per row), each block folded into a
 * running max and sum of exponentials (float64, tokenLogProbs' reductions) while it is in cache: one pass over the
 * vocabulary per row, the target's logit picked on the way.
 */
static void score_head(const Step* st, const float* last, int64_t n, float* logits) {
  const int64_t d = st->d, vocab = st->vocab;
  const float a = (float)(1 / st->temperature);
  double runMax[HEAD_ROWS], runSum[HEAD_ROWS];
  float picked[HEAD_ROWS] = {0};
  for (int64_t r0 = 0; r0 < n; r0 += HEAD_ROWS) {
    const int64_t m = n - r0 < HEAD_ROWS ? n - r0 : HEAD_ROWS;
    for (int64_t i = 0; i < m; i++) {
      runMax[i] = -INFINITY;
      runSum[i] = 0;
    }
    for (int64_t v0 = 0; v0 < vocab; v0 += VOCAB_BLOCK) {
      const int64_t nv = vocab - v0 < VOCAB_BLOCK ? vocab - v0 : VOCAB_BLOCK;
      if (st->headT)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)nv, (int)d, 1.0f, last + r0 * d, (int)d,
                    st->head + v0 * d, (int)d, 0.0f, logits, (int)nv);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)nv, (int)d, 1.0f, last + r0 * d, (int)d,
                    st->head + v0, (int)vocab, 0.0f, logits, (int)nv);
      for (int64_t i = 0; i < m; i++) {
        const float* z = logits + i * nv;
        const float blockMax = a * tk_max(z, nv);
        /* A larger max rescales the sum so far: e^(x − old) = e^(x − new) · e^(new − old). */
        if (blockMax > runMax[i]) {
          runSum[i] = runMax[i] == -INFINITY ? 0 : runSum[i] * exp(runMax[i] - (double)blockMax);
          runMax[i] = blockMax;
        }
        runSum[i] += tk_sum_exp(z, nv, a, (float)runMax[i]);
        const int64_t t = st->targets[r0 + i] - v0;
        if (t >= 0 && t < nv) picked[i] = z[t];
      }
    }
    for (int64_t i = 0; i < m; i++) st->out[r0 + i] = (float)((double)a * picked[i] - (runMax[i] + log(runSum[i])));
  }
}

/* dst rows b·cols + j = src rows b·T + T − cols + j (each `width` floats): every row's last `cols` tokens. */
static void gather_tail(const float* src, int64_t nb, int64_t T, int64_t cols, int64_t width, float* dst) {
  for (int64_t b = 0; b < nb; b++)
    memcpy(dst + b * cols * width, src + (b * T + T - cols) * width, (size_t)(cols * width) * sizeof(float));
}

/* x[i] += y[i] (restrict: vectorised, the same float adds). */
static void add_to(float* restrict x, const float* restrict y, int64_t n) {
  for (int64_t i = 0; i < n; i++) x[i] += y[i];
}

/* The MLP block on `rows` rows: x += down(SwiGLU(gate(h), up(h))), h = RMSNorm(x) with ln2. */
static void mlp(const Step* st, const Layer* l, float* x, float* h, float* gu, float* act, float* r, int64_t rows) {
  const int64_t d = st->d, inter = st->inter;
  rms_norm(x, l->ln2, h, rows, d, st->eps);
  linear(h, rows, d, l->gate, l->gateb, inter, gu, 2 * inter);
  linear(h, rows, d, l->up, l->upb, inter, gu + inter, 2 * inter);
  for (int64_t row = 0; row < rows; row++)
    for (int64_t i = 0; i < inter; i++) {
      const float a = gu[row * 2 * inter + i];
      act[row * inter + i] = a / (1.0f + expf(-a)) * gu[row * 2 * inter + inter + i];
    }
  linear(act, rows, inter, l->down, l->downb, d, r, d);
  add_to(x, r, rows * d);
}

/* Rows b0..b0+nb of the step; buf holds the chunk's scratch. Returns NULL on success, else what was wrong. */
static const char* run_rows(const Step* all, const Layer* allLayers, int64_t nLayers, int64_t b0, int64_t nb,
                            float* buf, Layer* layers) {
  Step c = *all;
  Step* st = &c;
  const int64_t T = all->T, cols = all->cols;
  c.B = nb;
  c.ids += b0 * T;
  c.pos += b0 * T;
  c.mask += b0 * all->M;
  c.out += b0 * cols * (all->targets ? 1 : all->vocab);
  if (all->targets) c.targets += b0 * cols;
  const int64_t cache = b0 * all->KV * all->L * all->hd;
  for (int64_t li = 0; li < nLayers; li++) {
    layers[li] = allLayers[li];
    layers[li].keys += cache;
    layers[li].values += cache;
  }
  const int64_t R = nb * T, n = nb * cols, d = st->d, H = st->H, KV = st->KV, hd = st->hd, inter = st->inter,
                vocab = st->vocab;
  const int64_t W = (H + 2 * KV) * hd, qn = H * hd;
  float *x = buf, *h = x + R * d, *r = h + R * d, *qkv = r + R * d, *ctx = qkv + R * W, *gu = ctx + R * qn,
        *act = gu + 2 * R * inter, *last = act + R * inter, *qt = last + n * d, *p = qt + n * qn,
        *tmp = p + st->slot + T, *q = tmp + hd, *logits = q + hd;
  for (int64_t i = 0; i < R; i++) {
    if (st->ids[i] < 0 || st->ids[i] >= vocab) return "blas_matmul: decodeStep: a token id is outside the vocabulary";
    if (st->pos[i] < 0 || st->pos[i] >= st->rows) return "blas_matmul: decodeStep: a position is outside the RoPE tables";
    memcpy(x + i * d, st->embed + st->ids[i] * d, d * sizeof(float));
  }
  if (st->targets)
    for (int64_t i = 0; i < n; i++)
      if (st->targets[i] < 0 || st->targets[i] >= vocab) return "blas_matmul: decodeStep: a target is outside the vocabulary";
  rms_norm(x, layers[0].ln1, h, R, d, st->eps);
  for (int64_t li = 0; li + 1 < nLayers; li++) {
    const Layer* l = layers + li;
    linear(h, R, d, l->q, l->qb, qn, qkv, W);
    linear(h, R, d, l->k, l->kb, KV * hd, qkv + qn, W);
    linear(h, R, d, l->v, l->vb, KV * hd, qkv + qn + KV * hd, W);
    attention(st, l, qkv, 0, ctx, p, tmp, q);
    linear(ctx, R, qn, l->o, l->ob, d, r, d);
    add_to(x, r, R * d);
    mlp(st, l, x, h, gu, act, r, R);
    rms_norm(x, layers[li + 1].ln1, h, R, d, st->eps);
  }
  /*
   * The last layer: every token's key and value join the cache, but when scoring only each row's last `cols` tokens
   * reach the head, so only they need a query, attention, o and the MLP. (Generation keeps all of a prefill's
   * tokens there: OpenBLAS may round a product of fewer rows differently, and sampled tokens keep their bits.)
   */
  const int64_t k = st->targets ? cols : T, nk = nb * k;
  const Layer* l = layers + nLayers - 1;
  linear(h, R, d, l->k, l->kb, KV * hd, qkv + qn, W);
  linear(h, R, d, l->v, l->vb, KV * hd, qkv + qn + KV * hd, W);
  /* xl: the residual rows going on, x itself or the scored tokens' rows gathered into `last`. */
  float* xl = x;
  if (k == T) {
    linear(h, R, d, l->q, l->qb, qn, qkv, W);
  } else {
    gather_tail(h, nb, T, k, d, r);
    linear(r, nk, d, l->q, l->qb, qn, qt, qn);
    for (int64_t b = 0; b < nb; b++)
      for (int64_t j = 0; j < k; j++)
        memcpy(qkv + (b * T + T - k + j) * W, qt + (b * k + j) * qn, (size_t)qn * sizeof(float));
    gather_tail(x, nb, T, k, d, last);
    xl = last;
  }
  attention(st, l, qkv, T - k, ctx, p, tmp, q);
  linear(ctx, nk, qn, l->o, l->ob, d, r, d);
  add_to(xl, r, nk * d);
  mlp(st, l, xl, h, gu, act, r, nk);
  gather_tail(xl, nb, k, cols, d, r);
  rms_norm(r, st->finalNorm, h, n, d, st->eps);
  if (st->targets) {
    score_head(st, h, n, logits);
    return NULL;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, st->headT ? CblasTrans : CblasNoTrans, (int)n, (int)vocab, (int)d, 1.0f, h,
              (int)d, st->head, st->headT ? (int)d : (int)vocab, 0.0f, st->out, (int)vocab);
  return NULL;
}

/* Returns NULL on success, else what was wrong. */
static const char* run_step(const Step* st, const Layer* layers, int64_t nLayers) {
  const int64_t T = st->T, d = st->d, H = st->H, KV = st->KV, hd = st->hd, inter = st->inter;
  const int64_t W = (H + 2 * KV) * hd;
  const int64_t nb = T >= CHUNK_TOKENS ? 1 : (CHUNK_TOKENS / T < st->B ? CHUNK_TOKENS / T : st->B), R = nb * T;
  const int64_t n = nb * st->cols;
  const size_t need = (size_t)(3 * R * d + R * W + R * H * hd + 3 * R * inter + n * d + n * H * hd + st->slot + T +
                               2 * hd + (st->targets ? HEAD_ROWS * VOCAB_BLOCK : 0));
  /* Freed at the end of the step (malloc's dynamic threshold keeps repeated steps off mmap). */
  float* buf = malloc(need * sizeof(float));
  Layer* chunkLayers = malloc(sizeof(Layer) * (size_t)nLayers);
  const char* err = buf && chunkLayers ? NULL : "blas_matmul: decodeStep: out of memory";
  for (int64_t b0 = 0; !err && b0 < st->B; b0 += nb)
    err = run_rows(st, layers, nLayers, b0, st->B - b0 < nb ? st->B - b0 : nb, buf, chunkLayers);
  free(buf);
  free(chunkLayers);
  return err;
}

#define FAIL(kind, msg)                                                     \
  do {                                                                      \
    napi_throw_##kind(env, NULL, "blas_matmul: decodeStep: " msg);          \
    return NULL;                                                            \
  } while (0)

static bool whole(double v, double lo) { return v == (double)(int64_t)v && v >= lo && v <= 9007199254740991.0; }

static napi_value DecodeStep(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2)
    FAIL(type_error, "takes (heap, desc)");
  void* data;
  size_t bytes;
  bool isBuffer = false;
  if (napi_is_arraybuffer(env, argv[0], &isBuffer) != napi_ok || !isBuffer ||
      napi_get_arraybuffer_info(env, argv[0], &data, &bytes) != napi_ok)
    FAIL(type_error, "heap must be an ArrayBuffer");
  const uint64_t floats = bytes / sizeof(float);
  float* heap = data;
  napi_typedarray_type type;
  size_t len;
  void* descData;
  bool isTyped = false;
  if (napi_is_typedarray(env, argv[1], &isTyped) != napi_ok || !isTyped ||
      napi_get_typedarray_info(env, argv[1], &type, &len, &descData, NULL, NULL) != napi_ok || type != napi_float64_array)
    FAIL(type_error, "desc must be a Float64Array");
  const double* desc = descData;
  if (len < DS_COUNT) FAIL(range_error, "desc is too short");
  for (int i = 0; i < DS_COUNT; i++)
    if (i != DS_EPS && i != DS_TEMP && !whole(desc[i], i >= DS_IDS ? -1 : 0)) FAIL(type_error, "bad size or offset");
  Step st = {.B = desc[DS_B], .T = desc[DS_T], .d = desc[DS_D], .H = desc[DS_HEADS], .KV = desc[DS_KV],
             .hd = desc[DS_HD], .inter = desc[DS_INTER], .vocab = desc[DS_VOCAB], .L = desc[DS_L], .M = desc[DS_M],
             .slot = desc[DS_SLOT], .rows = desc[DS_ROWS], .eps = desc[DS_EPS], .headT = desc[DS_HEAD_T] != 0,
             .cols = desc[DS_COLS], .temperature = desc[DS_TEMP]};
  const int64_t nLayers = desc[DS_LAYERS];
  if (len != (size_t)(DS_COUNT + nLayers * DL_COUNT)) FAIL(range_error, "desc does not match its layer count");
  if (st.B == 0 || st.T == 0 || st.d == 0 || st.KV == 0 || st.H % st.KV || st.hd == 0 || st.hd % 2 || st.inter == 0 ||
      st.vocab == 0 || nLayers == 0 || st.slot + st.T > st.L || st.M > st.L || st.B * st.T > INT32_MAX / 4 ||
      (st.H + 2 * st.KV) * st.hd > INT32_MAX / 4 || st.vocab > INT32_MAX / 4 || st.inter > INT32_MAX / 4 ||
      st.cols < 1 || st.cols > st.T || (desc[DS_TARGETS] >= 0 && !(st.temperature > 0)))
    FAIL(range_error, "bad dimensions");
  const int64_t R = st.B * st.T, d = st.d, half = st.hd / 2, qn = st.H * st.hd, kvn = st.KV * st.hd,
                cache = st.B * st.KV * st.L * st.hd;
  /* Each operand's offset, whether it may be absent, and the floats it spans. */
  const float* base[DS_COUNT];
  const struct {
    int at;
    bool optional;
    int64_t span;
  } header[] = {{DS_IDS, false, R},           {DS_POS, false, R},      {DS_MASK, false, st.B * st.M},
                {DS_EMBED, false, st.vocab * d},  {DS_COS, false, st.rows * half}, {DS_SIN, false, st.rows * half},
                {DS_FINAL, false, d},         {DS_HEAD, false, d * st.vocab},
                {DS_OUT, false, st.B * st.cols * (desc[DS_TARGETS] >= 0 ? 1 : st.vocab)},
                {DS_TARGETS, true, st.B * st.cols}};
  for (size_t i = 0; i < sizeof header / sizeof header[0]; i++) {
    const double o = desc[header[i].at];
    if (o < 0 && header[i].optional) {
      base[header[i].at] = NULL;
      continue;
    }
    if (o < 0 || (uint64_t)o + (uint64_t)header[i].span > floats) FAIL(range_error, "an operand lies outside the heap");
    base[header[i].at] = heap + (int64_t)o;
  }
  st.ids = (const int32_t*)base[DS_IDS];
  st.pos = (const int32_t*)base[DS_POS];
  st.mask = base[DS_MASK];
  st.embed = base[DS_EMBED];
  st.cosT = base[DS_COS];
  st.sinT = base[DS_SIN];
  st.finalNorm = base[DS_FINAL];
  st.head = base[DS_HEAD];
  st.out = heap + (int64_t)desc[DS_OUT];
  st.targets = (const int32_t*)base[DS_TARGETS];
  const int64_t span[DL_COUNT] = {d,        d * qn, d * kvn, d * kvn, qn,      kvn,    kvn,
                                  st.hd,    st.hd,  qn * d,  d,       d,       d * st.inter, d * st.inter,
                                  st.inter,     st.inter,   st.inter * d, d,      cache,   cache};
  const bool optional[DL_COUNT] = {[DL_QB] = true,   [DL_KB] = true, [DL_VB] = true,    [DL_QNORM] = true,
                                   [DL_KNORM] = true, [DL_OB] = true, [DL_GATEB] = true, [DL_UPB] = true,
                                   [DL_DOWNB] = true};
  Layer* layers = malloc(sizeof(Layer) * (size_t)nLayers);
  if (!layers) FAIL(error, "out of memory");
  for (int64_t li = 0; li < nLayers; li++) {
    const double* e = desc + DS_COUNT + li * DL_COUNT;
    const float* p[DL_COUNT];
    for (int i = 0; i < DL_COUNT; i++) {
      const bool absent = e[i] == -1;
      if (!whole(e[i], -1) || (absent && !optional[i]) ||
          (!absent && (uint64_t)e[i] + (uint64_t)span[i] > floats)) {
        free(layers);
        FAIL(range_error, "a layer operand is missing or lies outside the heap");
      }
      p[i] = absent ? NULL : heap + (int64_t)e[i];
    }
    layers[li] = (Layer){p[DL_LN1],   p[DL_Q],     p[DL_K],   p[DL_V],     p[DL_QB],    p[DL_KB],    p[DL_VB],
                         p[DL_QNORM], p[DL_KNORM], p[DL_O],   p[DL_OB],    p[DL_LN2],   p[DL_GATE],  p[DL_UP],
                         p[DL_GATEB], p[DL_UPB],   p[DL_DOWN], p[DL_DOWNB], (float*)p[DL_KEYS], (float*)p[DL_VALUES]};
  }
  const char* err = run_step(&st, layers, nLayers);
  free(layers);
  if (err) {
    napi_throw_range_error(env, NULL, err);
    return NULL;
  }
  return NULL;
}

bool export_decode_step(napi_env env, napi_value exports) {
  napi_value f;
  return napi_create_function(env, "decodeStep", NAPI_AUTO_LENGTH, DecodeStep, NULL, &f) == napi_ok &&
         napi_set_named_property(env, exports, "decodeStep", f) == napi_ok;
}
