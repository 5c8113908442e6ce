/* The fused training kernels (train_kernels.c): adds their functions to the addon's exports. */
#ifndef TRAIN_KERNELS_H
#define TRAIN_KERNELS_H
#include <node_api.h>
#include <stdbool.h>

bool register_train_kernels(napi_env env, napi_value exports);

#endif
