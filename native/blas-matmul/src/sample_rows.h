/* sample_rows.c's export (see there). */
#ifndef SAMPLE_ROWS_H
#define SAMPLE_ROWS_H
#include <node_api.h>
#include <stdbool.h>

/* Adds sampleRows to the addon's exports; false (an exception pending) if N-API failed. */
bool export_sample_rows(napi_env env, napi_value exports);

#endif
