/*
 * test-quant-tables-fault.c - the lattice quantizers (IQ1_S, IQ1_M,
 * IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S) when memory runs out while
 * their lookup tables are built on first use.
 *
 * The allocator of tests/fault-alloc.c fails the N-th allocation of each
 * ggml_quantize_chunk call made after ggml_quantize_free (so that the
 * tables are built inside it), for every N the call makes.  Checked for
 * each N:
 *   - the call logs one error and returns 0 (IQ1, IQ3), or the whole
 *     chunk's size (IQ2);
 *   - IQ2 formats never return 0: without tables they search every grid
 *     point instead (one logged error says so), and the blocks they write
 *     then are no worse than the ones with tables (weighted squared error
 *     of the decoded rows, computed in double precision here);
 *   - after ggml_quantize_free nothing allocated during the call is
 *     still live (no leak on the failure path);
 *   - the next call, with memory available again, writes the same bytes
 *     as one made before any failure (the library stays usable).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-cpu.h"
#include "fault-alloc.h"
#include "tap.h"

enum { N_ROWS = 2, N_PER_ROW = 512 };

static float values[N_ROWS * N_PER_ROW];
static float weights[N_PER_ROW];

static void make_inputs(void)
{
    uint32_t s = 12345u;
    for (int i = 0; i < N_ROWS * N_PER_ROW; i++) {
        s = s * 1664525u + 1013904223u;
        const double u = (double) (s >> 8) / 16777216.0 - 0.5;
        values[i] = (float) (u * (1.0 + (i % 5 == 0 ? 3.0 : 0.0)));
    }
    for (int j = 0; j < N_PER_ROW; j++)
        weights[j] = (float) (0.5 + (j % 11) * 0.25);
}

/* Weighted squared error of the rows in q (of type t) against the inputs. */
static double weighted_error(enum ggml_type t, const void *q)
{
    const struct ggml_type_traits *tr = ggml_get_type_traits(t);
    const size_t row_size = ggml_row_size(t, N_PER_ROW);
    float out[N_PER_ROW];
    double e = 0.0;
    for (int r = 0; r < N_ROWS; r++) {
        tr->to_float((const char *) q + r * row_size, out, N_PER_ROW);
        for (int j = 0; j < N_PER_ROW; j++) {
            const double d = (double) out[j] - (double) values[r * N_PER_ROW + j];
            e += (double) weights[j] * d * d;
        }
    }
    return e;
}

static bool is_iq2(enum ggml_type t)
{
    return t == GGML_TYPE_IQ2_XXS || t == GGML_TYPE_IQ2_XS || t == GGML_TYPE_IQ2_S;
}

static size_t quantize(enum ggml_type t, void *out)
{
    return ggml_quantize_chunk(t, values, out, 0, N_ROWS, N_PER_ROW, weights);
}

static void sweep(enum ggml_type t)
{
    const char *name = ggml_type_name(t);
    const size_t size = N_ROWS * ggml_row_size(t, N_PER_ROW);
    unsigned char *baseline = malloc(size), *out = malloc(size);
    if (baseline == NULL || out == NULL) {
        ok(false, "%s: buffers", name);
        free(baseline);
        free(out);
        return;
    }

    ggml_quantize_free();
    is_uint(quantize(t, baseline), size, "%s: quantizes without failures", name);
    const double baseline_error = weighted_error(t, baseline);

    ggml_quantize_free();
    fault_arm(0);
    const size_t counted = quantize(t, out);
    const long events = fault_events();
    fault_disarm();
    ok(counted == size && events > 0, "%s: first call allocates (%ld allocations)", name, events);

    int not_fired = 0, bad_result = 0, bad_log = 0, leaks = 0, not_usable = 0, worse = 0, refused = 0;
    for (long n = 1; n <= events; n++) {
        ggml_quantize_free();
        tap_log_errors();
        memset(out, 0xa5, size);
        fault_arm(n);
        const size_t got = quantize(t, out);
        fault_disarm();
        const int errors = tap_log_errors();
        not_fired += !fault_fired();
        bad_log += errors != 1;
        if (got == 0) {
            refused++;
            bad_result += is_iq2(t);
        } else if (got != size || !is_iq2(t)) {
            bad_result++;
        } else if (memcmp(out, baseline, size) != 0) {
            /* the IQ2 fallback (every grid point searched) may choose other points */
            worse += weighted_error(t, out) > baseline_error * (1.0 + 1e-9);
        }
        ggml_quantize_free();
        leaks += fault_live_blocks() != 0;
        not_usable += quantize(t, out) != size || memcmp(out, baseline, size) != 0;
    }
    ok(not_fired == 0, "%s: every allocation of the first call was made to fail (%d were not)", name,
       not_fired);
    ok(bad_result == 0, "%s: every failure gives the whole chunk or 0 (%d did not; %d refused)", name,
       bad_result, refused);
    ok(bad_log == 0, "%s: one logged error whenever the tables could not be built (%d runs had another count)", name,
       bad_log);
    ok(worse == 0, "%s: blocks without tables no worse than with them (%d worse)", name, worse);
    ok(leaks == 0, "%s: nothing left allocated after ggml_quantize_free (%d runs leaked)", name, leaks);
    ok(not_usable == 0, "%s: the next call writes the same blocks as before (%d did not)", name, not_usable);
    free(baseline);
    free(out);
}

int main(void)
{
    tap_capture_log();
    make_inputs();
    static const enum ggml_type types[] = {
        GGML_TYPE_IQ1_S,  GGML_TYPE_IQ1_M,   GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS,
        GGML_TYPE_IQ2_S,  GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        sweep(types[i]);
    ggml_quantize_free();
    return tap_done();
}
