/*
 * test-kernels.c - every kernel level this machine runs, entry by entry,
 * against the generic level and against double-precision references
 * written here.
 *
 * Linked with the library's internals (libggml-backend-core.la): builds
 * the table of each level with ggml__kernels_build.  Levels this build
 * lacks or this CPU cannot run are skipped with the reason.
 *
 * What is checked, on odd lengths (1, 15, 31, 33, 257, ...) and with
 * pointers one byte off any alignment:
 *   - vec_dot of every type: within a bound of the reference dot product
 *     of the decoded rows (block layouts decoded here, from ggml's file
 *     format), relative to the sum of |products|;
 *   - from_float (F16, BF16, Q8_0, Q8_1, ...) and to_float (F16, BF16):
 *     bit for bit equal to the generic level, on random values, rounding
 *     ties and special values; every binary16 and bfloat16 input
 *     exhaustively for to_float.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-cpu.h"
#include "tap.h"
#include "simd/kernels.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t) (rng_state >> 16);
}

/* Uniform in [-1, 1). */
static float rng_unit(void)
{
    return (float) ((double) rng_u32() / 2147483648.0 - 1.0);
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t) (p[0] | p[1] << 8);
}

static double f16(const uint8_t *p)
{
    return ggml_fp16_to_fp32(rd16(p));
}

/* ------------------------------------------------------ reference decoders */

/* Block size in bytes of the formats decoded below. */
static size_t block_bytes(enum ggml_type t)
{
    switch (t) {
    case GGML_TYPE_Q4_0: return 18;
    case GGML_TYPE_Q4_1: return 20;
    case GGML_TYPE_Q5_0: return 22;
    case GGML_TYPE_Q5_1: return 24;
    case GGML_TYPE_Q8_0: return 34;
    case GGML_TYPE_Q8_1: return 36;
    default:             return 0;
    }
}

/*
 * Value j of row x of type t, in double, from ggml's layouts:
 *   Q4_0 d, 16 bytes of nibbles (low: j < 16, high: j >= 16), (q - 8) * d
 *   Q4_1 d, m, nibbles: q * d + m
 *   Q5_0 d, 4 bytes of fifth bits, nibbles: (q - 16) * d
 *   Q5_1 d, m, fifth bits, nibbles: q * d + m
 *   Q8_0 d, 32 int8: q * d;  Q8_1 d, s, 32 int8: q * d
 */
static double ref_value(enum ggml_type t, const uint8_t *x, int64_t i)
{
    const int64_t blk = i / 32, j = i % 32;
    const uint8_t *b = x + blk * block_bytes(t);
    switch (t) {
    case GGML_TYPE_F32: {
        float v;
        memcpy(&v, x + 4 * i, sizeof v);
        return v;
    }
    case GGML_TYPE_F16:
        return f16(x + 2 * i);
    case GGML_TYPE_BF16: {
        const ggml_bf16_t h = { rd16(x + 2 * i) };
        return ggml_bf16_to_fp32(h);
    }
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_1: {
        const uint8_t *qs = b + (t == GGML_TYPE_Q4_0 ? 2 : 4);
        const int q = j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
        return t == GGML_TYPE_Q4_0 ? (q - 8) * f16(b) : q * f16(b) + f16(b + 2);
    }
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1: {
        const uint8_t *qh = b + (t == GGML_TYPE_Q5_0 ? 2 : 4), *qs = qh + 4;
        const uint32_t bits = (uint32_t) qh[0] | (uint32_t) qh[1] << 8 | (uint32_t) qh[2] << 16 | (uint32_t) qh[3] << 24;
        const int q = (j < 16 ? qs[j] & 15 : qs[j - 16] >> 4) | (int) ((bits >> j) & 1) << 4;
        return t == GGML_TYPE_Q5_0 ? (q - 16) * f16(b) : q * f16(b) + f16(b + 2);
    }
    case GGML_TYPE_Q8_0:
        return (int8_t) b[2 + j] * f16(b);
    case GGML_TYPE_Q8_1:
        return (int8_t) b[4 + j] * f16(b);
    default:
        return NAN;
    }
}

/*
 * The reference of vec_dot(x of type t, y of vdt): the sum of products of
 * the decoded values, with the minimum's term of Q4_1/Q5_1 blocks taken
 * as m * s (s: the Q8_1 block's stored sum) as the block formats define
 * the integer product.  *mag receives the sum of |products|.
 */
static double ref_dot(enum ggml_type t, enum ggml_type vdt, const uint8_t *x, const uint8_t *y, int64_t n,
                      double *mag)
{
    double sum = 0.0, m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double p = ref_value(t, x, i) * ref_value(vdt, y, i);
        sum += p;
        m += fabs(p);
    }
    if (vdt == GGML_TYPE_Q8_1)
        for (int64_t blk = 0; blk < n / 32; blk++) {
            const uint8_t *xb = x + blk * block_bytes(t), *yb = y + blk * 36;
            double qsum = 0.0;
            for (int j = 0; j < 32; j++)
                qsum += (int8_t) yb[4 + j];
            sum += f16(xb + 2) * (f16(yb + 2) - f16(yb) * qsum);
        }
    *mag = m;
    return sum;
}

/* ------------------------------------------------------------------ rows */

/* A row of n values of type t made from random floats in [-1, 1), at a
   pointer one byte past a 64-byte boundary. */
struct row {
    uint8_t *mem, *data;
    float *values;
};

static struct row make_row(const struct ggml__cpu_kernels *generic, enum ggml_type t, int64_t n)
{
    struct row r;
    const size_t bytes = ggml_row_size(t, n);
    r.mem = aligned_alloc(64, (bytes + 64 + 63) / 64 * 64);
    r.data = r.mem + 1;
    r.values = malloc((size_t) (n + 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        r.values[i] = rng_unit();
    generic->from_float[t](r.values, r.data, n);
    return r;
}

static void free_row(struct row *r)
{
    free(r->mem);
    free(r->values);
}

static const enum ggml_type dot_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0,
    GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
};

static enum ggml_type vdt_of(enum ggml_type t)
{
    return t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_1 ? GGML_TYPE_Q8_1
         : ggml_is_quantized(t)                       ? GGML_TYPE_Q8_0
                                                      : t;
}

/* vec_dot of each type on lengths of every remainder. */
static void check_vec_dot(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const int64_t float_lengths[] = { 1, 7, 8, 15, 31, 32, 33, 64, 257, 1000, 4096 };
    static const int64_t block_lengths[] = { 32, 64, 96, 288, 1024, 4096 };
    for (size_t ti = 0; ti < sizeof dot_types / sizeof dot_types[0]; ti++) {
        const enum ggml_type t = dot_types[ti], vdt = vdt_of(t);
        const bool blocks = ggml_is_quantized(t);
        const int64_t *lengths = blocks ? block_lengths : float_lengths;
        const size_t n_lengths = blocks ? sizeof block_lengths / sizeof block_lengths[0]
                                        : sizeof float_lengths / sizeof float_lengths[0];
        double worst = 0.0;
        bool all_ok = k->vec_dot[t] != NULL;
        for (size_t li = 0; all_ok && li < n_lengths; li++) {
            const int64_t n = lengths[li];
            struct row x = make_row(generic, t, n), y = make_row(generic, vdt, n);
            double mag;
            const double want = ref_dot(t, vdt, x.data, y.data, n, &mag);
            float got = NAN, got_generic = NAN;
            k->vec_dot[t]((int) n, &got, 0, x.data, 0, y.data, 0, 1);
            generic->vec_dot[t]((int) n, &got_generic, 0, x.data, 0, y.data, 0, 1);
            /* single-precision sums in partial sums: far below 1e-5 of the magnitude */
            const double bound = 1e-5 * mag + 1e-30;
            const double err = fabs(got - want) / (mag + 1e-30);
            worst = err > worst ? err : worst;
            if (!(fabs(got - want) <= bound) || !(fabs(got_generic - want) <= bound)) {
                tap_diag("%s n=%lld: level %.9g, generic %.9g, reference %.9g (|products| %.3g)",
                         ggml_type_name(t), (long long) n, got, got_generic, want, mag);
                all_ok = false;
            }
            free_row(&x);
            free_row(&y);
        }
        ok(all_ok, "%s: vec_dot %s x %s within 1e-5 of |products| of the reference (worst %.2g)",
           ggml__isa_name(k->level), ggml_type_name(t), ggml_type_name(vdt), worst);
    }
}

/* from_float[t] of level k equals the generic level's bit for bit on values (n of them). */
static bool same_encoding(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic,
                          enum ggml_type t, const float *values, int64_t n)
{
    const size_t bytes = ggml_row_size(t, n);
    uint8_t *a = malloc(bytes + 2), *b = malloc(bytes + 2);
    memset(a, 0xa5, bytes + 2);
    memset(b, 0xa5, bytes + 2);
    k->from_float[t](values, a + 1, n);
    generic->from_float[t](values, b + 1, n);
    const bool same = memcmp(a, b, bytes + 2) == 0;
    free(a);
    free(b);
    return same;
}

static void check_from_float(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const enum ggml_type types[] = {
        GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    };
    enum { N = 32 * 40 + 32 };
    float *v = malloc((N + 1) * sizeof *v);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const enum ggml_type t = types[ti];
        const bool blocks = ggml_is_quantized(t);
        bool all_ok = k->from_float[t] != NULL;
        /* random values over many magnitudes */
        for (int i = 0; i < N; i++)
            v[i] = rng_unit() * ldexpf(1.0f, (int) (rng_u32() % 40) - 20);
        for (int64_t n = blocks ? 32 : 1; all_ok && n <= N; n += blocks ? 32 * 13 : 37)
            all_ok = same_encoding(k, generic, t, v + (blocks ? 0 : 1), n - (blocks ? 0 : 1));
        /* quantizer ties: amax 127 gives scale 1, so x.5 values round half away from zero */
        for (int i = 0; i < N; i++)
            v[i] = (float) ((int) (rng_u32() % 254) - 127) + ((i & 1) ? 0.5f : -0.5f);
        for (int i = 0; i < N; i += 32)
            v[i] = i % 64 ? 127.0f : -127.0f;
        all_ok = all_ok && same_encoding(k, generic, t, v, N);
        /* specials: zeros, subnormals, huge values, infinities (NaN only for 16-bit floats) */
        const float specials[] = { 0.0f, -0.0f, 1e-45f, -1e-40f, 6e-8f, 3e-5f, 65504.0f, 65520.0f,
                                   -70000.0f, 3e38f, INFINITY, -INFINITY, 1.0f / 3.0f, 0.1f, 2.5f, -7.5f };
        const int n_specials = (int) (sizeof specials / sizeof specials[0]);
        for (int i = 0; i < N; i++)
            v[i] = specials[(i * 7 + i / 16) % n_specials];
        all_ok = all_ok && same_encoding(k, generic, t, v, N);
        if (!blocks) {
            for (int i = 0; i < N; i++)
                v[i] = (i % 3) ? NAN : -NAN;
            all_ok = all_ok && same_encoding(k, generic, t, v, N);
        }
        ok(all_ok, "%s: from_float %s equals generic bit for bit (random, ties, specials, lengths 1..%d)",
           ggml__isa_name(k->level), ggml_type_name(t), N);
    }
    free(v);
}

/* to_float of F16 and BF16 on every one of the 65536 inputs. */
static void check_to_float(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const enum ggml_type types[] = { GGML_TYPE_F16, GGML_TYPE_BF16 };
    enum { N = 65536 };
    uint16_t *in = malloc(N * sizeof *in + 2);
    float *a = malloc(N * sizeof *a + 4), *b = malloc(N * sizeof *b + 4);
    for (int i = 0; i < N; i++)
        in[i] = (uint16_t) i;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const enum ggml_type t = types[ti];
        bool all_ok = k->to_float[t] != NULL;
        /* whole, then odd lengths from odd offsets */
        if (all_ok) {
            k->to_float[t](in, a, N);
            generic->to_float[t](in, b, N);
            all_ok = memcmp(a, b, N * sizeof *a) == 0;
        }
        for (int n = 1; all_ok && n < 300; n += 17) {
            memset(a, 0, (size_t) (n + 1) * sizeof *a);
            memset(b, 0, (size_t) (n + 1) * sizeof *b);
            k->to_float[t](in + 1000 + n, a + 1, n);
            generic->to_float[t](in + 1000 + n, b + 1, n);
            all_ok = memcmp(a, b, (size_t) (n + 1) * sizeof *a) == 0;
        }
        ok(all_ok, "%s: to_float %s equals generic bit for bit on all 65536 inputs and odd lengths",
           ggml__isa_name(k->level), ggml_type_name(t));
    }
    free(in);
    free(a);
    free(b);
}

int main(void)
{
    tap_capture_log();
    const struct ggml__isa_caps *caps = ggml__isa_caps();
    /* which variants the levels' tables hold (NEON: SDOT with dotprod) */
    tap_diag("CPU: avx2 %d, avx512 %d, neon %d, dotprod %d", caps->avx2, caps->avx512, caps->neon, caps->dotprod);
    struct ggml__cpu_kernels generic;
    ok(ggml__kernels_build(&generic, GGML__ISA_GENERIC, caps), "the generic table builds");
    ok(ggml__isa_from_name("AVX2") == GGML__ISA_AVX2 && ggml__isa_from_name("nosuch") == GGML__ISA_COUNT,
       "level names are read in any case; unknown names are refused");
    check_vec_dot(&generic, &generic);

    for (int level = GGML__ISA_GENERIC + 1; level < GGML__ISA_COUNT; level++) {
        const enum ggml__isa l = (enum ggml__isa) level;
        char reason[128];
        if (!ggml__isa_built(l) || !ggml__isa_runs_on(l, caps)) {
            snprintf(reason, sizeof reason, "level %s: %s", ggml__isa_name(l),
                     !ggml__isa_built(l) ? "not built into this library" : "this CPU cannot run it");
            tap_diag("%s", reason);
            tap_skip(1, reason);
            continue;
        }
        struct ggml__cpu_kernels k;
        ok(ggml__kernels_build(&k, l, caps) && k.level == l, "%s: the table builds", ggml__isa_name(l));
        check_vec_dot(&k, &generic);
        check_from_float(&k, &generic);
        check_to_float(&k, &generic);
    }
    return tap_done();
}
