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
 *   setThreads(n), getThreads(), config()  OpenBLAS's thread count and build string
 */
#include <node_api.h>
#include <cblas.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

static napi_value Sgemm(napi_env env, napi_callback_info info) {
  size_t argc = 12;
  napi_value argv[12];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc != 12) {
    napi_throw_type_error(env, NULL, "blas_matmul: sgemm takes 12 arguments");
    return NULL;
  }
  bool isBuffer = false;
  CHECK(napi_is_arraybuffer(env, argv[0], &isBuffer));
  if (!isBuffer) {
    napi_throw_type_error(env, NULL, "blas_matmul: heap must be an ArrayBuffer");
    return NULL;
  }
  void* data;
  size_t bytes;
  CHECK(napi_get_arraybuffer_info(env, argv[0], &data, &bytes));
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
  uint64_t floats = bytes / sizeof(float);
  uint64_t aEnd = (uint64_t)aOff + (uint64_t)batchA * M * K, bEnd = (uint64_t)bOff + (uint64_t)batchB * K * N,
           cEnd = (uint64_t)cOff + (uint64_t)batch * M * N;
  if (aEnd > floats || bEnd > floats || cEnd > floats) {
    napi_throw_range_error(env, NULL, "blas_matmul: an operand lies outside the heap");
    return NULL;
  }
  float* heap = (float*)data;
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
  } fns[] = {{"sgemm", Sgemm}, {"setThreads", SetThreads}, {"getThreads", GetThreads}, {"config", Config}};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value f;
    if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f) != napi_ok) return NULL;
    if (napi_set_named_property(env, exports, fns[i].name, f) != napi_ok) return NULL;
  }
  return exports;
}
