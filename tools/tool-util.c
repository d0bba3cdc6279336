/*
 * tool-util.c - helpers shared by the command-line tools.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tool-util.h"

void tool_json_string(FILE *out, const char *s)
{
    if (s == NULL) {
        fputs("null", out);
        return;
    }
    putc('"', out);
    for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                putc(*p, out);
        }
    }
    putc('"', out);
}

void tool_log_quiet(enum ggml_log_level level, const char *text, void *user_data)
{
    static _Thread_local bool showing;
    (void) user_data;
    if (level != GGML_LOG_LEVEL_CONT)
        showing = level >= GGML_LOG_LEVEL_WARN;
    if (showing)
        fputs(text, stderr);
}

double tool_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

bool tool_parse_int(const char *s, long min, long max, long *value)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max)
        return false;
    *value = v;
    return true;
}

/* Strategy names, indexed by enum ggml_numa_strategy. */
static const char *const numa_names[] = { "disabled", "distribute", "isolate", "numactl", "mirror" };

bool tool_parse_numa(const char *name, enum ggml_numa_strategy *numa)
{
    for (int i = 0; i < (int) (sizeof numa_names / sizeof numa_names[0]); i++)
        if (strcasecmp(name, numa_names[i]) == 0) {
            *numa = (enum ggml_numa_strategy) i;
            return true;
        }
    return false;
}

const char *tool_numa_name(enum ggml_numa_strategy numa)
{
    return (int) numa >= 0 && (size_t) numa < sizeof numa_names / sizeof numa_names[0] ? numa_names[numa] : "none";
}

const struct ggml_backend_feature *tool_reg_features(ggml_backend_reg_t reg)
{
    ggml_backend_get_features_t get =
        reg != NULL ? (ggml_backend_get_features_t) ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features")
                    : NULL;
    return get != NULL ? get(reg) : NULL;
}

const char *tool_reg_feature(ggml_backend_reg_t reg, const char *name)
{
    for (const struct ggml_backend_feature *f = tool_reg_features(reg); f != NULL && f->name != NULL; f++)
        if (strcmp(f->name, name) == 0)
            return f->value;
    return NULL;
}

void tool_json_identity(const char *program)
{
    printf("{\n  \"program\": ");
    tool_json_string(stdout, program);
    printf(",\n  \"version\": ");
    tool_json_string(stdout, PACKAGE_VERSION);
    printf(",\n  \"library_version\": ");
    tool_json_string(stdout, ggml_version());
    printf(",\n  \"commit\": ");
    tool_json_string(stdout, ggml_commit());
}
