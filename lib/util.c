/*
 * util.c - clocks, version strings, status names, GUIDs and file opening.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-impl.h"

/* ------------------------------------------------------------------ clocks */

/* Times are measured on CLOCK_MONOTONIC from the first call into the clock. */
static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ggml_time_init(void)
{
    /* CLOCK_MONOTONIC needs no setup; kept for source compatibility. */
}

int64_t ggml_time_ms(void)
{
    return monotonic_ns() / 1000000;
}

int64_t ggml_time_us(void)
{
    return monotonic_ns() / 1000;
}

/*
 * "Cycles" are the clock() ticks of processor time used by the process,
 * as upstream defines them on POSIX systems; ggml_cycles_per_ms() gives the
 * matching rate.
 */
int64_t ggml_cycles(void)
{
    return (int64_t) clock();
}

int64_t ggml_cycles_per_ms(void)
{
    return CLOCKS_PER_SEC / 1000;
}

/* ----------------------------------------------------------------- strings */

const char *ggml_status_to_string(enum ggml_status status)
{
    switch (status) {
    case GGML_STATUS_ALLOC_FAILED: return "memory allocation failed";
    case GGML_STATUS_FAILED:       return "operation failed";
    case GGML_STATUS_SUCCESS:      return "success";
    case GGML_STATUS_ABORTED:      return "operation aborted by callback";
    }
    return "unknown status";
}

const char *ggml_version(void)
{
    return PACKAGE_VERSION;
}

const char *ggml_commit(void)
{
    return GGML_BACKEND_COMMIT;
}

bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b)
{
    if (guid_a == NULL || guid_b == NULL)
        return guid_a == guid_b;
    return memcmp(guid_a, guid_b, sizeof(ggml_guid)) == 0;
}

/* Paths are byte strings on POSIX systems: UTF-8 needs no conversion. */
FILE *ggml_fopen(const char *fname, const char *mode)
{
    if (fname == NULL || mode == NULL) {
        ggml__error("file name and mode must not be NULL");
        return NULL;
    }
    return fopen(fname, mode);
}

/* ------------------------------------------------------------ arrays */

bool ggml__grow_array(void **array, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap : 8;
    while (n < need)
        n *= 2;
    if (n > SIZE_MAX / elem)
        return false;
    void *grown = realloc(*array, n * elem);
    if (grown == NULL)
        return false;
    *array = grown;
    *cap = n;
    return true;
}
