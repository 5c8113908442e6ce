/* The fused training kernels (train_kernels.c): adds their functions to the addon's exports. */
#ifndef TRAIN_KERNELS_H
#define TRAIN_KERNELS_H
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>

bool register_train_kernels(napi_env env, napi_value exports);

/*
 * fn over [0, n) items, split into contiguous parts over OpenBLAS's current thread count (the runtime's one thread
 * decision) when `floats` (the memory touched) makes it worth waking a worker; else on the calling thread.
 */
typedef void (*tk_range_fn)(void* ctx, int64_t begin, int64_t end);
void tk_par_for(int64_t n, uint64_t floats, tk_range_fn fn, void* ctx);

/* max x[i], and Σ e^(a·x[i] − c) in float64 lanes with a vectorised exp (within 2 ulp): tokenLogProbs' reductions. */
float tk_max(const float* x, int64_t n);
double tk_sum_exp(const float* x, int64_t n, float a, float c);

#endif
