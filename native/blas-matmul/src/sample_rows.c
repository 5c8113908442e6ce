/*
 * Token sampling from rows of logits on the host: softmax at a temperature, then the greedy pick or one draw with a
 * uniform the caller supplies. The arithmetic is runtime/engine/sampling.ts's TokenSampler, step for step, in
 * float64: z = logit · scale, the max over allowed ids, p = exp(z − max) summed in id order, log Z = max + log(sum),
 * the draw walks u · sum down by p in id order. (No top-k/top-p: those rows stay with TokenSampler.)
 *
 * exp and log here are the C library's, which may differ from JavaScript's Math.exp/Math.log in the last bit. A
 * draw could then differ from TokenSampler's only where it falls within rounding of a boundary; such a row (and a
 * greedy pick whose runner-up is that close) is answered with token −1, meaning "ask TokenSampler", so the tokens
 * are always TokenSampler's. Log-probabilities agree to about 1e-13.
 *
 * sampleRows(logits: Float32Array, stride, valid, scale, greedy, rows: Int32Array, u: Float64Array,
 *            banned: Int32Array, tokens: Int32Array, logprobs: Float64Array)
 *   for each i: row rows[i] of logits (stride floats apart, ids 0..valid-1 sampled, those in banned never), the draw
 *   with u[i]; writes tokens[i] and logprobs[i]. Every length is checked.
 */
#include <node_api.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "sample_rows.h"

/*
 * How close to a boundary counts as "within rounding": a relative 1e-9 of the row's sum. Each p may differ by an
 * ulp (2^-52 relative) between the two exps, so a walk's running value by at most (valid + 1) ulps of the sum: a
 * margin of 1e-9 holds for any vocabulary below 4 M ids.
 */
#define MARGIN 1e-9

/* Returns the token, or -1 when TokenSampler must decide; *logprob as TokenSampler computes it. */
static int32_t sample_row(const float* z32, int64_t valid, double scale, bool greedy, double u, const uint8_t* ban,
                          double* p, double* logprob) {
  double max = -INFINITY;
  for (int64_t i = 0; i < valid; i++) {
    const double z = (double)z32[i] * scale;
    if (!ban[i] && z > max) max = z;
  }
  double sum = 0;
  for (int64_t i = 0; i < valid; i++) {
    const double e = ban[i] ? 0 : exp((double)z32[i] * scale - max);
    p[i] = e;
    sum += e;
  }
  const double logZ = max + log(sum);
  int32_t token = -1;
  if (greedy) {
    int64_t best = 0;
    for (int64_t i = 1; i < valid; i++)
      if (p[i] > p[best]) best = i;
    token = (int32_t)best;
    /* A runner-up within rounding of the best: the pick could go either way. */
    for (int64_t i = 0; i < valid; i++)
      if (i != best && p[i] >= p[best] * (1 - MARGIN)) token = -1;
  } else {
    const double eps = MARGIN * sum;
    double left = u * sum;
    for (int64_t i = 0; i < valid; i++) {
      const double next = left - p[i];
      if (next < 0) {
        token = left >= eps && next <= -eps ? (int32_t)i : -1;
        break;
      }
      left = next;
    }
  }
  *logprob = token >= 0 ? (double)z32[token] * scale - logZ : NAN;
  return token;
}

static bool typed(napi_env env, napi_value v, napi_typedarray_type want, size_t* len, void** data) {
  bool is = false;
  napi_typedarray_type type;
  return napi_is_typedarray(env, v, &is) == napi_ok && is &&
         napi_get_typedarray_info(env, v, &type, len, data, NULL, NULL) == napi_ok && type == want;
}

static bool whole(napi_env env, napi_value v, int64_t* out) {
  double d;
  if (napi_get_value_double(env, v, &d) != napi_ok || d != (double)(int64_t)d || d < 0 || d > 2147483647.0) return false;
  *out = (int64_t)d;
  return true;
}

#define FAIL(kind, msg)                                                   \
  do {                                                                    \
    free(p);                                                              \
    free(ban);                                                            \
    napi_throw_##kind(env, NULL, "blas_matmul: sampleRows: " msg);        \
    return NULL;                                                          \
  } while (0)

static napi_value SampleRows(napi_env env, napi_callback_info info) {
  double* p = NULL;
  uint8_t* ban = NULL;
  size_t argc = 10;
  napi_value argv[10];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 10) FAIL(type_error, "takes 10 arguments");
  size_t nLogits, nRows, nU, nBanned, nTokens, nLogprobs;
  void *logitsData, *rowsData, *uData, *bannedData, *tokensData, *logprobsData;
  int64_t stride, valid;
  double scale;
  bool greedy;
  if (!typed(env, argv[0], napi_float32_array, &nLogits, &logitsData) || !whole(env, argv[1], &stride) ||
      !whole(env, argv[2], &valid) || napi_get_value_double(env, argv[3], &scale) != napi_ok ||
      napi_get_value_bool(env, argv[4], &greedy) != napi_ok ||
      !typed(env, argv[5], napi_int32_array, &nRows, &rowsData) ||
      !typed(env, argv[6], napi_float64_array, &nU, &uData) ||
      !typed(env, argv[7], napi_int32_array, &nBanned, &bannedData) ||
      !typed(env, argv[8], napi_int32_array, &nTokens, &tokensData) ||
      !typed(env, argv[9], napi_float64_array, &nLogprobs, &logprobsData))
    FAIL(type_error, "(logits: Float32Array, stride, valid, scale, greedy, rows: Int32Array, u: Float64Array, "
                     "banned: Int32Array, tokens: Int32Array, logprobs: Float64Array)");
  if (valid == 0 || valid > stride || nU != nRows || nTokens != nRows || nLogprobs != nRows || !(scale > 0))
    FAIL(range_error, "bad sizes or scale");
  const int32_t* rows = rowsData;
  const int32_t* banned = bannedData;
  for (size_t i = 0; i < nRows; i++)
    if (rows[i] < 0 || (uint64_t)(rows[i] + 1) * (uint64_t)stride > nLogits) FAIL(range_error, "a row lies outside the logits");
  p = malloc(sizeof(double) * (size_t)valid);
  ban = calloc((size_t)valid, 1);
  if (!p || !ban) FAIL(error, "out of memory");
  for (size_t i = 0; i < nBanned; i++)
    if (banned[i] >= 0 && banned[i] < valid) ban[banned[i]] = 1;
  const float* logits = logitsData;
  const double* u = uData;
  int32_t* tokens = tokensData;
  double* logprobs = logprobsData;
  for (size_t i = 0; i < nRows; i++)
    tokens[i] = sample_row(logits + (int64_t)rows[i] * stride, valid, scale, greedy, u[i], ban, p, &logprobs[i]);
  free(p);
  free(ban);
  return NULL;
}

bool export_sample_rows(napi_env env, napi_value exports) {
  napi_value f;
  return napi_create_function(env, "sampleRows", NAPI_AUTO_LENGTH, SampleRows, NULL, &f) == napi_ok &&
         napi_set_named_property(env, exports, "sampleRows", f) == napi_ok;
}
