/* decode_step.c's export (see there). */
#ifndef DECODE_STEP_H
#define DECODE_STEP_H
#include <node_api.h>
#include <stdbool.h>

/* Adds decodeStep to the addon's exports; false (an exception pending) if N-API failed. */
bool export_decode_step(napi_env env, napi_value exports);

#endif
