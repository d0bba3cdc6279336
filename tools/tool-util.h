/*
 * tool-util.h - helpers shared by the command-line tools (tools/): JSON
 * string output, a quiet log filter, a monotonic clock, option values,
 * a registry's features.
 */
#ifndef GGML_TOOL_UTIL_H
#define GGML_TOOL_UTIL_H

#include <stdbool.h>
#include <stdio.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

/* Writes s as a JSON string literal, quotes included ("null" for NULL). */
void tool_json_string(FILE *out, const char *s);

/* Log callback that writes WARN and ERROR messages (and their CONT lines)
 * to stderr and drops the rest; user_data is unused. */
void tool_log_quiet(enum ggml_log_level level, const char *text, void *user_data);

/* Seconds of a monotonic clock. */
double tool_now(void);

/* Parses a whole decimal integer in [min, max]; false when s is not one. */
bool tool_parse_int(const char *s, long min, long max, long *value);

/* Sets *numa from a strategy name (disabled, distribute, isolate, numactl,
 * mirror; any case); false for any other name. */
bool tool_parse_numa(const char *name, enum ggml_numa_strategy *numa);

/* The name tool_parse_numa takes for numa, or "none". */
const char *tool_numa_name(enum ggml_numa_strategy numa);

/* Opens a JSON object on stdout with the members program, version,
 * library_version and commit (the caller goes on with ",\n  ..."). */
void tool_json_identity(const char *program);

/* The features registry reg reports (ggml_backend_get_features), or NULL. */
const struct ggml_backend_feature *tool_reg_features(ggml_backend_reg_t reg);

/* The value of feature name of registry reg, or NULL. */
const char *tool_reg_feature(ggml_backend_reg_t reg, const char *name);

#endif
