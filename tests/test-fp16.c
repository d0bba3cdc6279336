/*
 * test-fp16.c - binary16 and bfloat16 conversions against references
 * computed here in double precision.
 *
 * The reference roundings use that the positive finite values of both
 * formats increase with their bit patterns: the correctly rounded result
 * for |x| is the pattern lo whose value is the largest not above |x|, or
 * lo + 1, chosen by comparing 2|x| with v(lo) + v(lo + 1) (both sides are
 * exact in double), ties going to the even pattern.  Values beyond the
 * largest finite one are rounded as if the exponent range went on, so
 * they reach infinity exactly where IEEE round-to-nearest-even does.
 */
#include "config.h"

#include <float.h>
#include <math.h>

#include "tap.h"

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* xorshift64*: reproducible pseudo-random bits */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng32(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t) ((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/* ------------------------------------------------------------- binary16 */

/* Value of a non-negative binary16 pattern 0 .. 0x7c00 (0x7c00 as 2^16). */
static double half_value(uint32_t h)
{
    uint32_t exp = h >> 10, mant = h & 0x3ff;
    if (exp == 0)
        return ldexp((double) mant, -24);
    return ldexp((double) (1024 + mant), (int) exp - 25);
}

/* Full decode of any binary16 pattern, NaN included. */
static double half_decode(uint16_t h)
{
    double sign = (h & 0x8000) ? -1.0 : 1.0;
    uint32_t a = h & 0x7fffu;
    if (a == 0x7c00)
        return sign * INFINITY;
    if (a > 0x7c00)
        return NAN;
    return sign * half_value(a);
}

static bool half_is_nan(uint16_t h)
{
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

/* Reference float -> binary16 (NaN returned as any NaN pattern). */
static uint16_t half_reference(float x)
{
    if (isnan(x))
        return 0x7e00;
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs((double) x);
    uint32_t lo = 0, hi = 0x7c00;       /* invariant: v(lo) <= a, and a < v(hi) or hi = 0x7c00 */
    if (a >= half_value(0x7c00))
        return sign | 0x7c00;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (half_value(mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    double twice = 2.0 * a, sum = half_value(lo) + half_value(lo + 1);
    uint32_t r = twice < sum ? lo : twice > sum ? lo + 1 : ((lo & 1) ? lo + 1 : lo);
    return (uint16_t) (sign | r);
}

static void check_half_all_patterns(void)
{
    int bad_value = 0, bad_trip = 0, bad_nan = 0;
    uint32_t first = 0x10000;
    for (uint32_t i = 0; i < 0x10000; i++) {
        uint16_t h = (uint16_t) i;
        float f = ggml_fp16_to_fp32(h);
        uint16_t back = ggml_fp32_to_fp16(f);
        if (half_is_nan(h)) {
            if (!isnan(f) || !half_is_nan(back) || (back & 0x8000) != (h & 0x8000)) {
                bad_nan++;
                if (first == 0x10000)
                    first = i;
            }
            continue;
        }
        double want = half_decode(h);
        if ((double) f != want || !signbit(f) != !signbit(want)) {
            bad_value++;
            if (first == 0x10000)
                first = i;
        }
        if (back != h) {
            bad_trip++;
            if (first == 0x10000)
                first = i;
        }
    }
    is_int(bad_value, 0, "every fp16 pattern decodes to its exact value");
    is_int(bad_trip, 0, "every non-NaN fp16 pattern round-trips through fp32 exactly");
    is_int(bad_nan, 0, "every fp16 NaN stays a NaN with its sign");
    if (first != 0x10000)
        tap_diag("first failing pattern 0x%04x", first);
}

static int count_half_mismatches(const float *x, size_t n, float *first_bad)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t got = ggml_fp32_to_fp16(x[i]);
        uint16_t want = half_reference(x[i]);
        bool same = isnan(x[i]) ? half_is_nan(got) : got == want;
        if (!same) {
            if (bad == 0) {
                *first_bad = x[i];
                tap_diag("0x%08x (%.9g): got 0x%04x, want 0x%04x", f32_bits(x[i]),
                         (double) x[i], got, want);
            }
            bad++;
        }
    }
    return bad;
}

/* Every fp16 value, the midpoints between neighbours, and the floats next to both. */
static void check_half_rounding_grid(void)
{
    static float grid[0x7c00 * 6 * 2];
    size_t n = 0;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        float v = (float) half_value(h);
        float mid = (float) ((half_value(h) + half_value(h + 1)) / 2.0);   /* exact in binary32 */
        float around[6] = { v, nextafterf(v, INFINITY), nextafterf(v, 0.0f),
                            mid, nextafterf(mid, INFINITY), nextafterf(mid, 0.0f) };
        for (int k = 0; k < 6; k++) {
            grid[n++] = around[k];
            grid[n++] = -around[k];
        }
    }
    float first = 0;
    is_int(count_half_mismatches(grid, n, &first), 0,
           "fp32->fp16 rounds every value, tie and neighbour of the fp16 grid to nearest even");
}

static void check_half_random(void)
{
    enum { N = 1 << 22 };
    float *x = malloc(N * sizeof *x);
    if (!x) {
        tap_skip(1, "out of memory");
        return;
    }
    for (size_t i = 0; i < N; i++) {
        uint32_t u = rng32();
        /* half of them with exponents near the fp16 range, where rounding happens */
        if (i & 1)
            u = (u & 0x807fffffu) | ((uint32_t) (100 + rng32() % 45) << 23);
        x[i] = f32_from_bits(u);
    }
    float first = 0;
    is_int(count_half_mismatches(x, N, &first), 0,
           "fp32->fp16 matches the reference on 4M random bit patterns");
    free(x);
}

static void check_half_known(void)
{
    is_uint(ggml_fp32_to_fp16(1.0f), 0x3c00, "1.0 -> 0x3c00");
    is_uint(ggml_fp32_to_fp16(-2.0f), 0xc000, "-2.0 -> 0xc000");
    is_uint(ggml_fp32_to_fp16(65504.0f), 0x7bff, "65504 -> 0x7bff (largest finite)");
    is_uint(ggml_fp32_to_fp16(0x1p-24f), 0x0001, "2^-24 -> 0x0001 (smallest subnormal)");
    is_uint(ggml_fp32_to_fp16(0x1p-14f), 0x0400, "2^-14 -> 0x0400 (smallest normal)");
    is_uint(ggml_fp32_to_fp16(INFINITY), 0x7c00, "+inf -> 0x7c00");
    is_uint(ggml_fp32_to_fp16(-INFINITY), 0xfc00, "-inf -> 0xfc00");
    is_uint(ggml_fp32_to_fp16(0.0f), 0x0000, "+0 -> 0x0000");
    is_uint(ggml_fp32_to_fp16(-0.0f), 0x8000, "-0 -> 0x8000");
    is_uint(ggml_fp32_to_fp16(1.0f / 3.0f), 0x3555, "1/3 -> 0x3555");
    is_uint(ggml_fp32_to_fp16(65520.0f), 0x7c00, "65520 (halfway above 65504) -> inf (tie to even)");
    is_uint(ggml_fp32_to_fp16(nextafterf(65520.0f, 0.0f)), 0x7bff, "just below 65520 -> 65504");
    is_uint(ggml_fp32_to_fp16(-65520.0f), 0xfc00, "-65520 -> -inf");
    is_uint(ggml_fp32_to_fp16(1e10f), 0x7c00, "1e10 overflows to inf");
    is_uint(ggml_fp32_to_fp16(0x1p-25f), 0x0000, "2^-25 (tie between 0 and 2^-24) -> 0");
    is_uint(ggml_fp32_to_fp16(nextafterf(0x1p-25f, 1.0f)), 0x0001, "just above 2^-25 -> 2^-24");
    is_uint(ggml_fp32_to_fp16(3 * 0x1p-25f), 0x0002, "1.5 * 2^-24 (tie) -> even 0x0002");
    is_uint(ggml_fp32_to_fp16(5 * 0x1p-25f), 0x0002, "2.5 * 2^-24 (tie) -> even 0x0002");
    is_uint(ggml_fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00, "1 + half ulp (tie) -> 1.0");
    is_uint(ggml_fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02, "1 + 1.5 ulp (tie) -> even 0x3c02");
    is_uint(ggml_fp32_to_fp16(0x1.ffcp-15f), 0x0400, "subnormal rounding up into the smallest normal");
    is_uint(ggml_fp32_to_fp16(1e-30f), 0x0000, "tiny value -> +0");
    is_uint(ggml_fp32_to_fp16(-1e-30f), 0x8000, "tiny negative value -> -0");
    is_uint(ggml_fp32_to_fp16(f32_from_bits(0x00000001)), 0x0000, "fp32 subnormal -> 0");
    is_uint(ggml_fp32_to_fp16(f32_from_bits(0x7fc00000)), 0x7e00, "quiet NaN -> 0x7e00");
    is_uint(ggml_fp32_to_fp16(f32_from_bits(0x7f800001)), 0x7e00, "signaling NaN -> quiet 0x7e00");
    is_uint(ggml_fp32_to_fp16(f32_from_bits(0xffc00000)), 0xfe00, "negative NaN keeps its sign");
    is_uint(f32_bits(ggml_fp16_to_fp32(0x7c01)), 0x7fc02000, "fp16 signaling NaN -> quiet fp32 NaN, payload kept");
    is_uint(f32_bits(ggml_fp16_to_fp32(0x8000)), 0x80000000, "-0 decodes to -0");
    is_near(ggml_fp16_to_fp32(0x0001), 0x1p-24, 0.0, "0x0001 decodes to 2^-24");
    is_near(ggml_fp16_to_fp32(0x03ff), 1023 * 0x1p-24, 0.0, "0x03ff decodes to the largest subnormal");
}

static void check_half_rows(void)
{
    enum { N = 1003 };
    static float x[N], y[N];
    static ggml_fp16_t h[N + 1];
    for (int i = 0; i < N; i++)
        x[i] = f32_from_bits(rng32());
    x[0] = 65520.0f;
    x[1] = 0x1p-25f;

    h[N] = 0x1234;
    ggml_fp32_to_fp16_row(x, h, N);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += h[i] != ggml_fp32_to_fp16(x[i]);
    is_int(bad, 0, "ggml_fp32_to_fp16_row equals the scalar conversion");
    is_uint(h[N], 0x1234, "ggml_fp32_to_fp16_row writes exactly n values");

    ggml_fp16_to_fp32_row(h, y, N);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += f32_bits(y[i]) != f32_bits(ggml_fp16_to_fp32(h[i]));
    is_int(bad, 0, "ggml_fp16_to_fp32_row equals the scalar conversion");

    ggml_fp32_to_fp16_row(x, h, 0);
    ggml_fp16_to_fp32_row(h, y, -5);
    is_int(tap_log_errors(), 0, "rows of length 0 or less do nothing, without error");
    ggml_fp32_to_fp16_row(NULL, h, 4);
    logged_one_error("ggml_fp32_to_fp16_row with a NULL source logs one error");
    ggml_fp16_to_fp32_row(h, NULL, 4);
    logged_one_error("ggml_fp16_to_fp32_row with a NULL destination logs one error");
}

/* ------------------------------------------------------------- bfloat16 */

/* Value of a non-negative bfloat16 pattern 0 .. 0x7f80 (0x7f80 as 2^128). */
static double bf16_value(uint32_t b)
{
    uint32_t exp = b >> 7, mant = b & 0x7f;
    if (exp == 0)
        return ldexp((double) mant, -133);
    return ldexp((double) (128 + mant), (int) exp - 134);
}

static bool bf16_is_nan(uint16_t b)
{
    return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0;
}

static uint16_t bf16_reference(float x)
{
    if (isnan(x))
        return 0x7fc0;
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs((double) x);
    if (isinf(x) || a >= bf16_value(0x7f80))
        return sign | 0x7f80;
    uint32_t lo = 0, hi = 0x7f80;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (bf16_value(mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    double twice = 2.0 * a, sum = bf16_value(lo) + bf16_value(lo + 1);
    uint32_t r = twice < sum ? lo : twice > sum ? lo + 1 : ((lo & 1) ? lo + 1 : lo);
    return (uint16_t) (sign | r);
}

static int count_bf16_mismatches(const float *x, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t got = ggml_fp32_to_bf16(x[i]).bits;
        uint16_t want = bf16_reference(x[i]);
        bool same = isnan(x[i]) ? bf16_is_nan(got) : got == want;
        if (!same) {
            if (bad == 0)
                tap_diag("0x%08x (%.9g): got 0x%04x, want 0x%04x", f32_bits(x[i]),
                         (double) x[i], got, want);
            bad++;
        }
    }
    return bad;
}

static void check_bf16_all_patterns(void)
{
    int bad_trip = 0, bad_nan = 0, bad_value = 0;
    for (uint32_t i = 0; i < 0x10000; i++) {
        ggml_bf16_t b = { (uint16_t) i };
        float f = ggml_bf16_to_fp32(b);
        uint16_t back = ggml_fp32_to_bf16(f).bits;
        if (bf16_is_nan(b.bits)) {
            bad_nan += !isnan(f) || !bf16_is_nan(back) || (back & 0x8000) != (b.bits & 0x8000);
            continue;
        }
        bad_value += f32_bits(f) != (i << 16);
        bad_trip += back != b.bits;
    }
    is_int(bad_value, 0, "every bf16 pattern decodes to the fp32 with those high bits");
    is_int(bad_trip, 0, "every non-NaN bf16 pattern round-trips through fp32 exactly");
    is_int(bad_nan, 0, "every bf16 NaN stays a NaN with its sign");
}

static void check_bf16_rounding(void)
{
    /* every bf16 value, midpoints and neighbours (subnormals included) */
    static float grid[0x7f80 * 6 * 2];
    size_t n = 0;
    for (uint32_t b = 0; b < 0x7f80; b++) {
        float v = (float) bf16_value(b);
        float mid = f32_from_bits((b << 16) | 0x8000u);   /* halfway to the next pattern */
        float around[6] = { v, nextafterf(v, INFINITY), nextafterf(v, 0.0f),
                            mid, nextafterf(mid, INFINITY), nextafterf(mid, 0.0f) };
        for (int k = 0; k < 6; k++) {
            grid[n++] = around[k];
            grid[n++] = -around[k];
        }
    }
    is_int(count_bf16_mismatches(grid, n), 0,
           "fp32->bf16 rounds every value, tie and neighbour of the bf16 grid to nearest even");

    enum { N = 1 << 22 };
    float *x = malloc(N * sizeof *x);
    if (!x) {
        tap_skip(1, "out of memory");
        return;
    }
    for (size_t i = 0; i < N; i++)
        x[i] = f32_from_bits(rng32());
    is_int(count_bf16_mismatches(x, N), 0, "fp32->bf16 matches the reference on 4M random bit patterns");
    free(x);
}

static void check_bf16_known(void)
{
    is_uint(ggml_fp32_to_bf16(1.0f).bits, 0x3f80, "1.0 -> 0x3f80");
    is_uint(ggml_fp32_to_bf16(-2.0f).bits, 0xc000, "-2.0 -> 0xc000");
    is_uint(ggml_fp32_to_bf16(3.14159265f).bits, 0x4049, "pi -> 0x4049");
    is_uint(ggml_fp32_to_bf16(INFINITY).bits, 0x7f80, "+inf -> 0x7f80");
    is_uint(ggml_fp32_to_bf16(-INFINITY).bits, 0xff80, "-inf -> 0xff80");
    is_uint(ggml_fp32_to_bf16(-0.0f).bits, 0x8000, "-0 -> 0x8000");
    is_uint(ggml_fp32_to_bf16(FLT_MAX).bits, 0x7f80, "FLT_MAX rounds up to inf");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x7f7f7fff)).bits, 0x7f7f, "just below the top tie stays finite");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x3f808000)).bits, 0x3f80, "tie with even low pattern rounds down");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x3f818000)).bits, 0x3f82, "tie with odd low pattern rounds up");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x3f808001)).bits, 0x3f81, "above the tie rounds up");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x00000001)).bits, 0x0000, "smallest fp32 subnormal -> +0");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x00008000)).bits, 0x0000, "subnormal tie -> even +0");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x00018000)).bits, 0x0002, "subnormal tie -> even 0x0002");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x00008001)).bits, 0x0001, "subnormals are rounded, not flushed");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x807fffff)).bits, 0x8080, "negative subnormal rounds up into the smallest normal");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x7fc00000)).bits, 0x7fc0, "quiet NaN -> 0x7fc0");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0x7f800001)).bits, 0x7fc0, "signaling NaN with a low payload -> quiet NaN, not inf");
    is_uint(ggml_fp32_to_bf16(f32_from_bits(0xffa12345)).bits, 0xffe1, "NaN keeps sign and high payload, gains the quiet bit");
    ggml_bf16_t b = { 0x4049 };
    is_uint(f32_bits(ggml_bf16_to_fp32(b)), 0x40490000, "bf16 -> fp32 shifts into the high half");
}

static void check_bf16_rows(void)
{
    enum { N = 777 };
    static float x[N], y[N];
    static ggml_bf16_t a[N + 1], b[N + 1];
    for (int i = 0; i < N; i++)
        x[i] = f32_from_bits(rng32());
    x[0] = f32_from_bits(0x00018000);  /* subnormal tie */
    x[1] = f32_from_bits(0x80000001);
    a[N].bits = b[N].bits = 0x5555;

    ggml_fp32_to_bf16_row_ref(x, a, N);
    ggml_fp32_to_bf16_row(x, b, N);
    int bad_ref = 0, bad_row = 0;
    for (int i = 0; i < N; i++) {
        uint16_t want = ggml_fp32_to_bf16(x[i]).bits;
        bad_ref += a[i].bits != want;
        bad_row += b[i].bits != want;
    }
    is_int(bad_ref, 0, "ggml_fp32_to_bf16_row_ref equals the scalar conversion");
    is_int(bad_row, 0, "ggml_fp32_to_bf16_row equals the scalar conversion, subnormals included");
    ok(a[N].bits == 0x5555 && b[N].bits == 0x5555, "bf16 rows write exactly n values");

    ggml_bf16_to_fp32_row(a, y, N);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += f32_bits(y[i]) != (uint32_t) a[i].bits << 16;
    is_int(bad, 0, "ggml_bf16_to_fp32_row equals the scalar conversion");

    ggml_fp32_to_bf16_row(NULL, b, 3);
    logged_one_error("ggml_fp32_to_bf16_row with a NULL source logs one error");
    ggml_fp32_to_bf16_row_ref(x, NULL, 3);
    logged_one_error("ggml_fp32_to_bf16_row_ref with a NULL destination logs one error");
    ggml_bf16_to_fp32_row(NULL, NULL, 1);
    logged_one_error("ggml_bf16_to_fp32_row with NULL pointers logs one error");
    ggml_bf16_to_fp32_row(NULL, NULL, 0);
    is_int(tap_log_errors(), 0, "an empty row with NULL pointers is not an error");
}

int main(void)
{
    tap_capture_log();

    check_half_all_patterns();
    check_half_rounding_grid();
    check_half_random();
    check_half_known();
    check_half_rows();

    check_bf16_all_patterns();
    check_bf16_rounding();
    check_bf16_known();
    check_bf16_rows();

    return tap_done();
}
