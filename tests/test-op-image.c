/*
 * test-op-image.c - POOL_1D, POOL_2D, PAD (zero and circular, ggml_pad and
 * ggml_pad_ext forms), PAD_REFLECT_1D and ROLL: odd shapes, every accepted
 * type, permuted (non-contiguous) inputs, 1..4 threads, reference and fast
 * kernels, and the constructors' error paths.
 *
 * References are computed here in double precision from the inputs as
 * stored (F16/BF16 inputs are compared after their own rounding).
 */
#include <float.h>
#include <stdio.h>

#include "tap.h"
#include "op-test.h"

enum kind {
    POOL1_MAX, POOL1_AVG, POOL2_MAX, POOL2_AVG, PAD, PAD_EXT, PAD_CIRC, PAD_EXT_CIRC, REFLECT, ROLL,
    NEAREST, BILINEAR, BILINEAR_AC, BICUBIC, BICUBIC_AC, BILINEAR_AA, BILINEAR_AA_AC, UPSCALE_BY_2
};

static const char *const kind_names[] = { "pool_1d max", "pool_1d avg", "pool_2d max", "pool_2d avg", "pad",
                                          "pad_ext", "pad_circular", "pad_ext_circular", "pad_reflect_1d", "roll",
                                          "interpolate nearest", "interpolate bilinear",
                                          "interpolate bilinear align-corners", "interpolate bicubic",
                                          "interpolate bicubic align-corners", "interpolate bilinear antialias",
                                          "interpolate bilinear antialias align-corners", "upscale by 2 nearest" };

/* Parameters of one case, chosen from the input's shape so that they are valid. */
struct case_params {
    int k0, k1, s0, s1, p0, p1;   /* pooling */
    int lp[4], rp[4];             /* padding before and after; reflect uses dim 0 */
    int shift[4];                 /* roll */
    int64_t ne[4];                /* interpolation target */
};

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static struct case_params choose(const struct ggml_tensor *a, int variant)
{
    struct case_params c = { 0 };
    const int n0 = (int) a->ne[0], n1 = (int) a->ne[1];
    c.k0 = min_int(variant ? 3 : 2, n0);
    c.k1 = min_int(2, n1);
    c.s0 = variant ? 2 : c.k0;        /* variant 0: upstream's usual k == s, no padding */
    c.s1 = variant ? 1 : c.k1;
    c.p0 = variant ? c.k0 / 2 : 0;
    c.p1 = variant ? c.k1 / 2 : 0;
    for (int d = 0; d < 4; d++) {
        c.lp[d] = variant ? d % 3 : 0;
        c.rp[d] = (d + variant) % 3;
        const int n = (int) a->ne[d];
        c.shift[d] = n > 1 ? (variant ? -(n - 1) / 2 : (n - 1) / 3 + 1) : 0;
        if (c.shift[d] >= n)
            c.shift[d] = n - 1;
    }
    c.rp[0] = min_int(2 + variant, n0 - 1);   /* reflect: right */
    /* variant 0 enlarges by uneven ratios; variant 1 shrinks dims 0, 1 and enlarges dim 2 */
    c.ne[0] = variant ? n0 / 2 + 1 : 2 * n0 + 1;
    c.ne[1] = variant ? n1 / 3 + 1 : (3 * n1 + 1) / 2;
    c.ne[2] = variant ? 2 * a->ne[2] : a->ne[2];
    c.ne[3] = a->ne[3];
    return c;
}

static struct ggml_tensor *build(struct ggml_context *ctx, enum kind k, struct ggml_tensor *a,
                                 const struct case_params *c)
{
    switch (k) {
    case POOL1_MAX: return ggml_pool_1d(ctx, a, GGML_OP_POOL_MAX, c->k0, c->s0, c->p0);
    case POOL1_AVG: return ggml_pool_1d(ctx, a, GGML_OP_POOL_AVG, c->k0, c->s0, c->p0);
    case POOL2_MAX:
        return ggml_pool_2d(ctx, a, GGML_OP_POOL_MAX, c->k0, c->k1, c->s0, c->s1, (float) c->p0, (float) c->p1);
    case POOL2_AVG:
        return ggml_pool_2d(ctx, a, GGML_OP_POOL_AVG, c->k0, c->k1, c->s0, c->s1, (float) c->p0, (float) c->p1);
    case PAD: return ggml_pad(ctx, a, c->rp[0], c->rp[1], c->rp[2], c->rp[3]);
    case PAD_CIRC: return ggml_pad_circular(ctx, a, c->rp[0], c->rp[1], c->rp[2], c->rp[3]);
    case PAD_EXT:
        return ggml_pad_ext(ctx, a, c->lp[0], c->rp[0], c->lp[1], c->rp[1], c->lp[2], c->rp[2], c->lp[3], c->rp[3]);
    case PAD_EXT_CIRC:
        return ggml_pad_ext_circular(ctx, a, c->lp[0], c->rp[0], c->lp[1], c->rp[1], c->lp[2], c->rp[2], c->lp[3],
                                     c->rp[3]);
    case REFLECT: return ggml_pad_reflect_1d(ctx, a, min_int(c->lp[0] + 1, (int) a->ne[0] - 1), c->rp[0]);
    case ROLL: return ggml_roll(ctx, a, c->shift[0], c->shift[1], c->shift[2], c->shift[3]);
    case NEAREST: return ggml_interpolate(ctx, a, c->ne[0], c->ne[1], c->ne[2], c->ne[3], GGML_SCALE_MODE_NEAREST);
    case BILINEAR:
        return ggml_interpolate(ctx, a, c->ne[0], c->ne[1], c->ne[2], c->ne[3], GGML_SCALE_MODE_BILINEAR);
    case BILINEAR_AC:
        return ggml_interpolate(ctx, a, c->ne[0], c->ne[1], c->ne[2], c->ne[3],
                                GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ALIGN_CORNERS);
    case BICUBIC: return ggml_interpolate(ctx, a, c->ne[0], c->ne[1], c->ne[2], c->ne[3], GGML_SCALE_MODE_BICUBIC);
    case BICUBIC_AC:
        return ggml_interpolate(ctx, a, c->ne[0], c->ne[1], c->ne[2], c->ne[3],
                                GGML_SCALE_MODE_BICUBIC | GGML_SCALE_FLAG_ALIGN_CORNERS);
    case BILINEAR_AA:
        return ggml_interpolate(ctx, a, c->ne[0], c->ne[1], c->ne[2], c->ne[3],
                                GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS);
    case BILINEAR_AA_AC:
        return ggml_interpolate(ctx, a, c->ne[0], c->ne[1], c->ne[2], c->ne[3],
                                GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS | GGML_SCALE_FLAG_ALIGN_CORNERS);
    default: return ggml_upscale(ctx, a, 2, GGML_SCALE_MODE_NEAREST);
    }
}

static int64_t wrap(int64_t i, int64_t n)
{
    return ((i % n) + n) % n;
}

/* Keys' cubic convolution kernel with a = -0.75, at distance t. */
static double keys(double t)
{
    const double a = -0.75;
    t = fabs(t);
    if (t <= 1.0)
        return (a + 2.0) * t * t * t - (a + 3.0) * t * t + 1.0;
    if (t < 2.0)
        return a * t * t * t - 5.0 * a * t * t + 8.0 * a * t - 4.0 * a;
    return 0.0;
}

static int64_t clamp64(int64_t i, int64_t n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/*
 * Antialiased bilinear: along each of dims 0 and 1 a triangle filter of
 * half-width support = max(1, 1 / sf) source samples, centred at
 * c = (i + off) / sf; sample s weighs max(0, 1 - |s + off - c| / support)
 * for s from floor(c - support + off) up to, not including,
 * floor(c + support + off), inside the source (upstream's span: with
 * align-corners, off = 0, it leaves out the last sample of the filter),
 * and the weights are normalised.  The span's ends are computed in F32,
 * as the contract has them (1 / sf rounds to a whole number of samples).
 */
static double triangle_weight(int64_t s, double off, double c, double support)
{
    const double t = fabs((double) s + off - c) / support;
    return t < 1.0 ? 1.0 - t : 0.0;
}

static double expected_antialiased(const struct ggml_tensor *a, const float sf[4], double off, int64_t i0,
                                   int64_t i1, int64_t j2, int64_t j3)
{
    const float fx = ((float) i0 + (float) off) / sf[0], fy = ((float) i1 + (float) off) / sf[1];
    const float gx = sf[0] < 1.0f ? 1.0f / sf[0] : 1.0f, gy = sf[1] < 1.0f ? 1.0f / sf[1] : 1.0f;
    const int64_t x_lo = (int64_t) floorf(fx - gx + (float) off), x_hi = (int64_t) floorf(fx + gx + (float) off);
    const int64_t y_lo = (int64_t) floorf(fy - gy + (float) off), y_hi = (int64_t) floorf(fy + gy + (float) off);
    const double cx = (i0 + off) / sf[0], cy = (i1 + off) / sf[1];
    const double hx = sf[0] < 1.0f ? 1.0 / sf[0] : 1.0, hy = sf[1] < 1.0f ? 1.0 / sf[1] : 1.0;
    double sum = 0.0, total = 0.0;
    for (int64_t y = y_lo < 0 ? 0 : y_lo; y < y_hi && y < a->ne[1]; y++)
        for (int64_t x = x_lo < 0 ? 0 : x_lo; x < x_hi && x < a->ne[0]; x++) {
            const double w = triangle_weight(x, off, cx, hx) * triangle_weight(y, off, cy, hy);
            sum += w * optest_get(a, x, y, j2, j3);
            total += w;
        }
    return total > 0.0 ? sum / total : 0.0;
}

/*
 * Resampling: scale factors are out / in extents rounded to F32 (the
 * documented contract); nearest indices are (int) (i / sf) divided in F32.
 */
static double expected_resample(enum kind k, const struct ggml_tensor *a, const struct ggml_tensor *out,
                                int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    float sf[4];
    for (int d = 0; d < 4; d++)
        sf[d] = (float) out->ne[d] / (float) a->ne[d];
    const int64_t j2 = (int64_t) ((float) i2 / sf[2]), j3 = (int64_t) ((float) i3 / sf[3]);
    if (k == NEAREST || k == UPSCALE_BY_2)
        return optest_get(a, (int64_t) ((float) i0 / sf[0]), (int64_t) ((float) i1 / sf[1]), j2, j3);
    double off = 0.5;
    if (k == BILINEAR_AC || k == BICUBIC_AC || k == BILINEAR_AA_AC) {
        off = 0.0;
        for (int d = 0; d < 2; d++)
            if (out->ne[d] > 1 && a->ne[d] > 1)
                sf[d] = (float) (out->ne[d] - 1) / (float) (a->ne[d] - 1);
    }
    if (k == BILINEAR_AA || k == BILINEAR_AA_AC)
        return expected_antialiased(a, sf, off, i0, i1, j2, j3);
    const double x = (i0 + off) / sf[0] - off, y = (i1 + off) / sf[1] - off;
    const int64_t x0 = (int64_t) floor(x), y0 = (int64_t) floor(y);
    const double dx = x - floor(x), dy = y - floor(y);
    if (k == BILINEAR || k == BILINEAR_AC) {
        const int64_t xa = clamp64(x0, a->ne[0]), xb = clamp64(x0 + 1, a->ne[0]);
        const int64_t ya = clamp64(y0, a->ne[1]), yb = clamp64(y0 + 1, a->ne[1]);
        return optest_get(a, xa, ya, j2, j3) * (1 - dx) * (1 - dy) + optest_get(a, xb, ya, j2, j3) * dx * (1 - dy) +
               optest_get(a, xa, yb, j2, j3) * (1 - dx) * dy + optest_get(a, xb, yb, j2, j3) * dx * dy;
    }
    double v = 0.0;
    for (int r = -1; r <= 2; r++)
        for (int c = -1; c <= 2; c++)
            v += keys(dy - r) * keys(dx - c) *
                 optest_get(a, clamp64(x0 + c, a->ne[0]), clamp64(y0 + r, a->ne[1]), j2, j3);
    return v;
}

/* The expected value of out at (i0, i1, i2, i3), from a and the op's parameters. */
static double expected(enum kind k, const struct ggml_tensor *a, const struct ggml_tensor *out, int64_t i0,
                       int64_t i1, int64_t i2, int64_t i3)
{
    const int32_t *p = out->op_params;
    switch (k) {
    case POOL1_MAX: case POOL1_AVG: case POOL2_MAX: case POOL2_AVG: {
        const bool two_d = k == POOL2_MAX || k == POOL2_AVG, is_max = k == POOL1_MAX || k == POOL2_MAX;
        const int k0 = p[1], k1 = two_d ? p[2] : 1, s0 = two_d ? p[3] : p[2], s1 = two_d ? p[4] : 1;
        const int p0 = two_d ? p[5] : p[3], p1 = two_d ? p[6] : 0;
        double sum = 0.0, best = -FLT_MAX;
        for (int64_t y = 0; y < k1; y++)
            for (int64_t x = 0; x < k0; x++) {
                const int64_t j0 = i0 * s0 - p0 + x;
                const int64_t j1 = two_d ? i1 * s1 - p1 + y : i1;
                if (j0 < 0 || j0 >= a->ne[0] || j1 < 0 || j1 >= a->ne[1])
                    continue;
                const double v = optest_get(a, j0, j1, i2, i3);
                sum += v;
                best = v > best ? v : best;
            }
        return is_max ? best : sum / (k0 * k1);
    }
    case PAD: case PAD_EXT: case PAD_CIRC: case PAD_EXT_CIRC: {
        const int64_t idx[4] = { i0, i1, i2, i3 };
        int64_t j[4];
        for (int d = 0; d < 4; d++) {
            j[d] = idx[d] - p[2 * d];
            if (p[8])
                j[d] = wrap(j[d], a->ne[d]);
            else if (j[d] < 0 || j[d] >= a->ne[d])
                return 0.0;
        }
        return optest_get(a, j[0], j[1], j[2], j[3]);
    }
    case REFLECT: {
        int64_t j = i0 - p[0];
        if (j < 0)
            j = -j;
        if (j >= a->ne[0])
            j = 2 * (a->ne[0] - 1) - j;
        return optest_get(a, j, i1, i2, i3);
    }
    case ROLL:
        return optest_get(a, wrap(i0 - p[0], a->ne[0]), wrap(i1 - p[1], a->ne[1]), wrap(i2 - p[2], a->ne[2]),
                          wrap(i3 - p[3], a->ne[3]));
    default:
        return expected_resample(k, a, out, i0, i1, i2, i3);
    }
}

static double *reference(enum kind k, const struct ggml_tensor *a, const struct ggml_tensor *out)
{
    double *ref = malloc((size_t) ggml_nelements(out) * sizeof *ref);
    int64_t n = 0;
    for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < out->ne[0]; i0++)
                    ref[n++] = expected(k, a, out, i0, i1, i2, i3);
    return ref;
}

/*
 * Tolerance: padding, reflection, rolling and max pooling copy stored
 * values exactly (0 error); average pooling adds at most 6 values in F32,
 * a relative error of a few 1e-7 per element, so an NMSE far below 1e-10.
 */
static double threshold(enum kind k, enum ggml_type type)
{
    if (k == POOL1_AVG || k == POOL2_AVG)
        return 1e-10;
    if (k == NEAREST || k == UPSCALE_BY_2 || k < NEAREST)
        return 0.0;
    /*
     * Bilinear and bicubic: 4 or 16 F32 products; positions and weights in
     * F32 carry relative errors near 1e-7 (NMSE ~1e-13).  A 16-bit result
     * is rounded to its own precision: F16 2^-11, BF16 2^-8 relative.
     */
    return type == GGML_TYPE_F32 ? 1e-10 : type == GGML_TYPE_F16 ? 1e-6 : 1e-4;
}

static void check_case(struct ggml_context *ctx, enum kind k, enum ggml_type type, const int64_t ne[4],
                       bool permuted, int variant, uint64_t *seed)
{
    struct ggml_tensor *a = ggml_new_tensor(ctx, type, 4, ne);
    optest_fill(a, seed, -2.0, 2.0);
    /* permuted: dims 1 and 2 swapped, rows stay contiguous but planes do not */
    struct ggml_tensor *in = permuted ? ggml_permute(ctx, a, 0, 2, 1, 3) : a;
    const struct case_params c = choose(in, variant);
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            struct ggml_tensor *out = build(ctx, k, in, &c);
            if (out == NULL) {
                ok(false, "%s %s: constructor failed", kind_names[k], ggml_type_name(type));
                return;
            }
            double *ref = reference(k, in, out);
            enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
            double nmse = optest_nmse(out, ref);
            free(ref);
            ok(status == GGML_STATUS_SUCCESS && nmse <= threshold(k, type),
               "%s %s [%lld,%lld,%lld,%lld]%s variant %d, %d threads, %s: nmse %.3g", kind_names[k],
               ggml_type_name(type), (long long) in->ne[0], (long long) in->ne[1], (long long) in->ne[2],
               (long long) in->ne[3], permuted ? " permuted" : "", variant, n_threads,
               use_ref ? "reference" : "fast", nmse);
        }
    }
}

static void test_numerics(void)
{
    static const int64_t shapes[][4] = {
        { 1, 1, 1, 1 }, { 3, 5, 2, 1 }, { 31, 7, 3, 2 }, { 33, 4, 1, 3 }, { 257, 3, 2, 1 },
    };
    static const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    uint64_t seed = 42;
    for (int k = POOL1_MAX; k <= UPSCALE_BY_2; k++) {
        struct ggml_init_params params = { 64u << 20, NULL, false };
        struct ggml_context *ctx = ggml_init(params);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int variant = (int) (s % 2);
            if (k == REFLECT) {
                /* F32 and contiguous only */
                check_case(ctx, (enum kind) k, GGML_TYPE_F32, shapes[s], false, variant, &seed);
                check_case(ctx, (enum kind) k, GGML_TYPE_F32, shapes[s], false, !variant, &seed);
                continue;
            }
            const enum ggml_type type = types[s % 3];
            check_case(ctx, (enum kind) k, type, shapes[s], false, variant, &seed);
            check_case(ctx, (enum kind) k, types[(s + 1) % 3], shapes[s], true, !variant, &seed);
        }
        ggml_free(ctx);
    }
}

/* Runs out on 1..4 threads, reference and fast kernels, against ref. */
static void check_node(struct ggml_context *ctx, struct ggml_tensor *out, const double *ref, double limit,
                       const char *what)
{
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            enum ggml_status status = out ? optest_compute(ctx, out, n_threads, use_ref) : GGML_STATUS_FAILED;
            double nmse = out ? optest_nmse(out, ref) : INFINITY;
            ok(status == GGML_STATUS_SUCCESS && nmse <= limit, "%s, %d threads, %s: nmse %.3g", what, n_threads,
               use_ref ? "reference" : "fast", nmse);
        }
}

/* WIN_PART and WIN_UNPART (copies: exact), plain and permuted inputs. */
static void test_windows(void)
{
    static const int cases[][4] = { { 1, 1, 1, 1 }, { 3, 7, 5, 3 }, { 33, 14, 14, 8 }, { 5, 4, 9, 4 } };
    uint64_t seed = 5;
    struct ggml_init_params params = { 64u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int C = cases[c][0], W = cases[c][1], H = cases[c][2], w = cases[c][3];
        for (int permuted = 0; permuted <= 1; permuted++) {
            struct ggml_tensor *a = permuted ? ggml_new_tensor_3d(ctx, GGML_TYPE_F32, C, H, W)
                                             : ggml_new_tensor_3d(ctx, GGML_TYPE_F32, C, W, H);
            optest_fill(a, &seed, -1.0, 1.0);
            struct ggml_tensor *in = permuted ? ggml_permute(ctx, a, 0, 2, 1, 3) : a;
            struct ggml_tensor *part = ggml_win_part(ctx, in, w);
            const int npx = (W + w - 1) / w, npy = (H + w - 1) / w;
            double *ref = malloc((size_t) C * w * w * npx * npy * sizeof *ref);
            int64_t k = 0;
            for (int win = 0; win < npx * npy; win++)
                for (int y = 0; y < w; y++)
                    for (int x = 0; x < w; x++)
                        for (int ch = 0; ch < C; ch++) {
                            const int gx = (win % npx) * w + x, gy = (win / npx) * w + y;
                            ref[k++] = gx < W && gy < H ? optest_get(in, ch, gx, gy, 0) : 0.0;
                        }
            char what[128];
            snprintf(what, sizeof what, "win_part [%d,%d,%d] w %d%s", C, W, H, w, permuted ? " permuted" : "");
            ok(part && part->ne[1] == w && part->ne[2] == w && part->ne[3] == npx * npy &&
               part->op_params[0] == npx && part->op_params[1] == npy && part->op_params[2] == w,
               "%s: shape and op_params", what);
            check_node(ctx, part, ref, 0.0, what);
            free(ref);

            /* unpart of a window set filled independently (its padding carries values too) */
            struct ggml_tensor *wins = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, C, w, w, npx * npy);
            optest_fill(wins, &seed, -1.0, 1.0);
            struct ggml_tensor *back = ggml_win_unpart(ctx, wins, W, H, w);
            ref = malloc((size_t) C * W * H * sizeof *ref);
            k = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    for (int ch = 0; ch < C; ch++)
                        ref[k++] = optest_get(wins, ch, x % w, y % w, (y / w) * npx + x / w);
            snprintf(what, sizeof what, "win_unpart to [%d,%d,%d] w %d", C, W, H, w);
            check_node(ctx, back, ref, 0.0, what);
            free(ref);
        }
    }
    ggml_free(ctx);
}

/* GET_REL_POS (a copy to F16: error only from F16 rounding) and ADD_REL_POS. */
static void test_rel_pos(void)
{
    uint64_t seed = 9;
    struct ggml_init_params params = { 64u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    static const enum ggml_type types[] = { GGML_TYPE_F16, GGML_TYPE_F32, GGML_TYPE_BF16 };
    static const int sizes[][2] = { { 1, 1 }, { 3, 4 }, { 33, 7 } };
    for (size_t t = 0; t < 3; t++)
        for (size_t s = 0; s < 3; s++) {
            const int C = sizes[s][0], q = sizes[s][1];
            struct ggml_tensor *a = ggml_new_tensor_2d(ctx, types[t], C, 2 * q - 1);
            optest_fill(a, &seed, -1.0, 1.0);
            struct ggml_tensor *out = ggml_get_rel_pos(ctx, a, q, q);
            double *ref = malloc((size_t) C * q * q * sizeof *ref);
            int64_t k = 0;
            for (int iq = 0; iq < q; iq++)
                for (int ik = 0; ik < q; ik++)
                    for (int ch = 0; ch < C; ch++)
                        ref[k++] = optest_get(a, ch, q - 1 - ik + iq, 0, 0);
            char what[128];
            snprintf(what, sizeof what, "get_rel_pos %s [%d,%d] q %d", ggml_type_name(types[t]), C, 2 * q - 1, q);
            ok(out && out->type == GGML_TYPE_F16 && out->ne[1] == q && out->ne[2] == q, "%s: shape", what);
            /* F32 source rounded to F16: relative 2^-11 per element */
            check_node(ctx, out, ref, types[t] == GGML_TYPE_F32 ? 1e-6 : 0.0, what);
            free(ref);
        }

    static const int shapes[][4] = { { 1, 1, 1, 1 }, { 3, 2, 5, 2 }, { 7, 4, 3, 3 } };  /* W, Q1, Q2, N */
    for (size_t s = 0; s < 3; s++)
        for (int inplace = 0; inplace <= 1; inplace++) {
            const int W = shapes[s][0], Q1 = shapes[s][1], Q2 = shapes[s][2], N = shapes[s][3];
            struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, W * W, Q1 * Q2, N);
            struct ggml_tensor *pw = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, W, Q1, Q2, N);
            struct ggml_tensor *ph = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, W, Q1, Q2, N);
            optest_fill(a, &seed, -1.0, 1.0);
            optest_fill(pw, &seed, -1.0, 1.0);
            optest_fill(ph, &seed, -1.0, 1.0);
            double *ref = malloc((size_t) W * W * Q1 * Q2 * N * sizeof *ref);
            int64_t k = 0;
            for (int n = 0; n < N; n++)
                for (int iq = 0; iq < Q1 * Q2; iq++)
                    for (int kr = 0; kr < W; kr++)
                        for (int kc = 0; kc < W; kc++)
                            ref[k++] = optest_get(a, kr * W + kc, iq, n, 0) + optest_get(ph, kr, iq % Q1, iq / Q1, n) +
                                       optest_get(pw, kc, iq % Q1, iq / Q1, n);
            char what[128];
            snprintf(what, sizeof what, "add_rel_pos%s W %d Q %dx%d N %d", inplace ? "_inplace" : "", W, Q1, Q2, N);
            if (inplace) {
                /* in place: each run adds again, so compare one run only, on several thread counts in turn */
                for (int n_threads = 1; n_threads <= 4; n_threads++) {
                    optest_fill(a, &seed, -1.0, 1.0);
                    k = 0;
                    for (int n = 0; n < N; n++)
                        for (int iq = 0; iq < Q1 * Q2; iq++)
                            for (int kr = 0; kr < W; kr++)
                                for (int kc = 0; kc < W; kc++)
                                    ref[k++] = optest_get(a, kr * W + kc, iq, n, 0) +
                                               optest_get(ph, kr, iq % Q1, iq / Q1, n) +
                                               optest_get(pw, kc, iq % Q1, iq / Q1, n);
                    struct ggml_tensor *out = ggml_add_rel_pos_inplace(ctx, a, pw, ph);
                    enum ggml_status status = optest_compute(ctx, out, n_threads, n_threads % 2);
                    double nmse = optest_nmse(a, ref);
                    ok(out && out->view_src == a && out->op_params[0] == 1 && status == GGML_STATUS_SUCCESS &&
                       nmse <= 1e-12, "%s, %d threads: writes into a, nmse %.3g", what, n_threads, nmse);
                }
            } else {
                struct ggml_tensor *out = ggml_add_rel_pos(ctx, a, pw, ph);
                ok(out && out->op_params[0] == 0 && out->view_src == NULL, "%s: a new tensor", what);
                /* two F32 additions: relative error 1e-7 */
                check_node(ctx, out, ref, 1e-12, what);
            }
            free(ref);
        }
    ggml_free(ctx);
}

/* supports_op refuses what the kernels do not handle. */
static void test_supports(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 2);
    struct ggml_tensor *f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 2);
    ok(cpu != NULL && !ggml_backend_dev_supports_op(cpu, ggml_pool_1d(ctx, q, GGML_OP_POOL_AVG, 2, 2, 0)),
       "pool_1d of Q8_0 is not supported");
    ok(cpu != NULL && !ggml_backend_dev_supports_op(cpu, ggml_pad(ctx, q, 32, 0, 0, 0)),
       "pad of Q8_0 is not supported");
    ok(cpu != NULL && !ggml_backend_dev_supports_op(cpu, ggml_roll(ctx, q, 1, 0, 0, 0)),
       "roll of Q8_0 is not supported");
    ok(cpu != NULL && ggml_backend_dev_supports_op(cpu, ggml_pool_2d(ctx, f, GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0)) &&
       ggml_backend_dev_supports_op(cpu, ggml_pad_reflect_1d(ctx, f, 1, 1)),
       "pool_2d and pad_reflect_1d of F32 are supported");
    ok(cpu != NULL &&
       ggml_backend_dev_supports_op(cpu, ggml_interpolate(ctx, f, 32, 4, 1, 1,
                                                          GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS)) &&
       ggml_backend_dev_supports_op(cpu, ggml_interpolate(ctx, f, 32, 4, 1, 1, GGML_SCALE_MODE_BICUBIC)),
       "antialiased bilinear and bicubic resampling are supported");
    is_int(tap_log_errors(), 0, "asking supports_op logs no error (last: %s)", tap_last_log());
    ggml_free(ctx);
}

static void test_errors(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 6, 2);
    struct ggml_tensor *h = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 8, 6, 2);
    struct ggml_tensor *t = ggml_transpose(ctx, a);

#define EXPECT_ERROR(expr, what)                                       \
    do {                                                               \
        ok((expr) == NULL, "%s gives NULL", what);                     \
        logged_one_error("%s logs one error", what);                   \
    } while (0)
    EXPECT_ERROR(ggml_pool_1d(ctx, a, GGML_OP_POOL_COUNT, 2, 2, 0), "pool_1d with an unknown op");
    EXPECT_ERROR(ggml_pool_1d(ctx, a, GGML_OP_POOL_MAX, 0, 2, 0), "pool_1d with kernel 0");
    EXPECT_ERROR(ggml_pool_1d(ctx, a, GGML_OP_POOL_MAX, 2, 0, 0), "pool_1d with stride 0");
    EXPECT_ERROR(ggml_pool_1d(ctx, a, GGML_OP_POOL_MAX, 2, 2, -1), "pool_1d with negative padding");
    EXPECT_ERROR(ggml_pool_1d(ctx, a, GGML_OP_POOL_MAX, 9, 1, 0), "pool_1d with a kernel wider than the input");
    EXPECT_ERROR(ggml_pool_2d(ctx, a, GGML_OP_POOL_AVG, 2, 7, 1, 1, 0, 0),
                 "pool_2d with a kernel taller than the input");
    EXPECT_ERROR(ggml_pool_2d(ctx, a, GGML_OP_POOL_AVG, 2, 2, 1, -1, 0, 0), "pool_2d with a negative stride");
    EXPECT_ERROR(ggml_pool_2d(ctx, a, GGML_OP_POOL_AVG, 2, 2, 1, 1, INFINITY, 0), "pool_2d with infinite padding");
    EXPECT_ERROR(ggml_pool_2d(ctx, a, GGML_OP_POOL_AVG, 2, 2, 1, 1, 0, 1e20f),
                 "pool_2d with padding beyond int32_t (its op parameter)");
    EXPECT_ERROR(ggml_pool_2d(ctx, a, GGML_OP_POOL_AVG, 2, 2, 1, 1, NAN, 0), "pool_2d with NaN padding");
    EXPECT_ERROR(ggml_pool_2d(ctx, a, GGML_OP_POOL_MAX, 2, 2, 1, 1, 0, 2e30f), "pool_2d with padding of 2e30");
    EXPECT_ERROR(ggml_pad(ctx, a, -1, 0, 0, 0), "pad with negative padding");
    EXPECT_ERROR(ggml_pad_circular(ctx, a, 0, -2, 0, 0), "pad_circular with negative padding");
    EXPECT_ERROR(ggml_pad_ext(ctx, a, 0, 0, 0, 0, -1, 0, 0, 0), "pad_ext with negative padding");
    EXPECT_ERROR(ggml_pad_ext_circular(ctx, a, 0, 0, 0, 0, 0, 0, 0, -3), "pad_ext_circular with negative padding");
    struct ggml_tensor *empty = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 0, 2);
    EXPECT_ERROR(ggml_pad_circular(ctx, empty, 0, 1, 0, 0), "pad_circular wrapping an empty dimension");
    {
        struct ggml_init_params meta = { 4 * ggml_tensor_overhead(), NULL, true };
        struct ggml_context *mctx = ggml_init(meta);
        struct ggml_tensor *longest = ggml_new_tensor_2d(mctx, GGML_TYPE_I8, 1, INT64_MAX - 10);
        EXPECT_ERROR(ggml_pad(mctx, longest, 0, INT32_MAX, 0, 0), "pad beyond INT64_MAX");
        ggml_free(mctx);
    }
    EXPECT_ERROR(ggml_pad_ext_circular(ctx, empty, 0, 0, 2, 0, 0, 0, 0, 0),
                 "pad_ext_circular wrapping an empty dimension");
    EXPECT_ERROR(ggml_pad_reflect_1d(ctx, a, 8, 0), "pad_reflect_1d with padding as wide as the row");
    EXPECT_ERROR(ggml_pad_reflect_1d(ctx, a, 0, -1), "pad_reflect_1d with negative padding");
    EXPECT_ERROR(ggml_pad_reflect_1d(ctx, h, 1, 1), "pad_reflect_1d of F16");
    EXPECT_ERROR(ggml_pad_reflect_1d(ctx, t, 1, 1), "pad_reflect_1d of a transposed tensor");
    EXPECT_ERROR(ggml_roll(ctx, a, 8, 0, 0, 0), "roll by the whole extent");
    EXPECT_ERROR(ggml_roll(ctx, a, 0, 0, -2, 0), "roll by minus the whole extent");
    EXPECT_ERROR(ggml_roll(ctx, t, 1, 0, 0, 0), "roll of a transposed tensor");
    EXPECT_ERROR(ggml_win_part(ctx, a, 0), "win_part with window 0");
    EXPECT_ERROR(ggml_win_part(ctx, h, 2), "win_part of F16");
    EXPECT_ERROR(ggml_win_part(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 2), 2), "win_part of 4-d input");
    EXPECT_ERROR(ggml_win_unpart(ctx, a, 4, 4, 0), "win_unpart with window 0");
    EXPECT_ERROR(ggml_win_unpart(ctx, a, INT32_MAX, INT32_MAX, 3), "win_unpart of a plane of INT32_MAX x INT32_MAX");
    EXPECT_ERROR(ggml_win_unpart(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 3, 3, 2), 7, 7, 3),
                 "win_unpart with too few windows");
    EXPECT_ERROR(ggml_win_unpart(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 3, 3, 1), 3, 3, 3),
                 "win_unpart of F16");
    EXPECT_ERROR(ggml_get_rel_pos(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 5), 3, 2), "get_rel_pos qh != kh");
    EXPECT_ERROR(ggml_get_rel_pos(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 4), 2, 2),
                 "get_rel_pos with a table of the wrong length");
    {
        struct ggml_tensor *s = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 9, 4, 2);
        struct ggml_tensor *pw = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 2);
        struct ggml_tensor *ph = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 2);
        struct ggml_tensor *bad = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 1);
        ok(ggml_add_rel_pos(ctx, s, pw, ph) != NULL, "add_rel_pos accepts matching shapes");
        EXPECT_ERROR(ggml_add_rel_pos(ctx, s, pw, bad), "add_rel_pos with pw and ph of different shapes");
        EXPECT_ERROR(ggml_add_rel_pos_inplace(ctx, s, bad, bad), "add_rel_pos_inplace with too few heads");
        EXPECT_ERROR(ggml_add_rel_pos(ctx, ggml_transpose(ctx, s), pw, ph), "add_rel_pos of a transposed tensor");
        EXPECT_ERROR(ggml_add_rel_pos(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 9, 4, 2), pw, ph),
                     "add_rel_pos of F16");
        ok(ggml_add_rel_pos(ctx, NULL, pw, ph) == NULL && ggml_add_rel_pos(ctx, s, NULL, ph) == NULL &&
           ggml_add_rel_pos_inplace(ctx, s, pw, NULL) == NULL && ggml_win_part(ctx, NULL, 2) == NULL &&
           ggml_win_unpart(ctx, NULL, 2, 2, 2) == NULL && ggml_get_rel_pos(ctx, NULL, 2, 2) == NULL,
           "windows and rel_pos: a NULL input gives NULL");
        is_int(tap_log_errors(), 0, "windows and rel_pos: a NULL input logs nothing");
    }
    EXPECT_ERROR(ggml_interpolate(ctx, a, 4, 4, 2, 1, GGML_SCALE_MODE_COUNT), "interpolate with an unknown mode");
    EXPECT_ERROR(ggml_interpolate(ctx, a, 4, 4, 2, 1, GGML_SCALE_MODE_BILINEAR | (1u << 12)),
                 "interpolate with an unknown flag");
    EXPECT_ERROR(ggml_interpolate(ctx, a, 4, 4, 2, 1, GGML_SCALE_MODE_NEAREST | GGML_SCALE_FLAG_ANTIALIAS),
                 "interpolate antialiased nearest");
    EXPECT_ERROR(ggml_interpolate(ctx, a, 4, 0, 2, 1, GGML_SCALE_MODE_NEAREST), "interpolate to an empty shape");
    EXPECT_ERROR(ggml_upscale(ctx, a, 0, GGML_SCALE_MODE_NEAREST), "upscale by 0");
    {
        /* a source with no elements has nothing to sample a non-empty result from */
        const uint32_t modes[] = { GGML_SCALE_MODE_NEAREST, GGML_SCALE_MODE_BILINEAR, GGML_SCALE_MODE_BICUBIC,
                                   GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ALIGN_CORNERS,
                                   GGML_SCALE_MODE_BICUBIC | GGML_SCALE_FLAG_ALIGN_CORNERS };
        struct ggml_tensor *empty0 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 0, 6, 2);
        struct ggml_tensor *empty2 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 6, 0);
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            char what[96];
            snprintf(what, sizeof what, "interpolate of a [0,6,2] source (mode 0x%x)", (unsigned) modes[m]);
            EXPECT_ERROR(ggml_interpolate(ctx, empty0, 4, 4, 2, 1, modes[m]), what);
            snprintf(what, sizeof what, "interpolate of a [8,6,0] source (mode 0x%x)", (unsigned) modes[m]);
            EXPECT_ERROR(ggml_interpolate(ctx, empty2, 4, 4, 2, 1, modes[m]), what);
        }
        EXPECT_ERROR(ggml_upscale(ctx, empty0, 2, GGML_SCALE_MODE_BILINEAR), "upscale of a [0,6,2] source");

        /* the kernel's own guard: a node whose source became empty is refused */
        ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
        struct ggml_tensor *e = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 6, 2);
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            e->ne[1] = 6;
            struct ggml_tensor *r = ggml_interpolate(ctx, e, 5, 7, 2, 1, modes[m]);
            e->ne[1] = 0;
            ok(r != NULL && cpu != NULL && !ggml_backend_dev_supports_op(cpu, r),
               "a resampling (mode 0x%x) of a source with no rows is not supported", (unsigned) modes[m]);
            struct ggml_cgraph *g = ggml_new_graph(ctx);
            ggml_build_forward_expand(g, r);
            is_int(ggml_graph_compute_with_ctx(ctx, g, 2), GGML_STATUS_FAILED, "... and computing it fails");
            logged_one_error("... with one error");
        }
        /* 2^34 * 2^30 wraps to 0 in 64 bits */
        struct ggml_init_params meta = { 4 * ggml_tensor_overhead(), NULL, true };
        struct ggml_context *mctx = ggml_init(meta);
        struct ggml_tensor *wide = ggml_new_tensor_1d(mctx, GGML_TYPE_F32, INT64_C(1) << 34);
        EXPECT_ERROR(ggml_upscale(mctx, wide, 1 << 30, GGML_SCALE_MODE_NEAREST),
                     "upscale to an extent beyond int64_t");
        ggml_free(mctx);
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EXPECT_ERROR(ggml_upscale_ext(ctx, a, -1, 4, 2, 1, GGML_SCALE_MODE_BILINEAR), "upscale_ext to a negative extent");
#pragma GCC diagnostic pop
#undef EXPECT_ERROR

    ok(ggml_pool_1d(ctx, NULL, GGML_OP_POOL_MAX, 2, 2, 0) == NULL &&
       ggml_pool_2d(ctx, NULL, GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0) == NULL &&
       ggml_pad(ctx, NULL, 1, 0, 0, 0) == NULL && ggml_pad_circular(ctx, NULL, 1, 0, 0, 0) == NULL &&
       ggml_pad_ext(ctx, NULL, 1, 0, 0, 0, 0, 0, 0, 0) == NULL &&
       ggml_pad_ext_circular(ctx, NULL, 1, 0, 0, 0, 0, 0, 0, 0) == NULL &&
       ggml_pad_reflect_1d(ctx, NULL, 1, 1) == NULL && ggml_roll(ctx, NULL, 1, 0, 0, 0) == NULL &&
       ggml_upscale(ctx, NULL, 2, GGML_SCALE_MODE_NEAREST) == NULL &&
       ggml_interpolate(ctx, NULL, 2, 2, 1, 1, GGML_SCALE_MODE_NEAREST) == NULL,
       "a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "a NULL input logs nothing");

    /* shapes and op_params as upstream lays them out */
    struct ggml_tensor *r = ggml_pool_2d(ctx, a, GGML_OP_POOL_AVG, 3, 2, 2, 1, 1.0f, 0.0f);
    ok(r && r->type == GGML_TYPE_F32 && r->ne[0] == 4 && r->ne[1] == 5 && r->ne[2] == 2 &&
       r->op_params[0] == GGML_OP_POOL_AVG && r->op_params[1] == 3 && r->op_params[2] == 2 &&
       r->op_params[3] == 2 && r->op_params[4] == 1 && r->op_params[5] == 1 && r->op_params[6] == 0,
       "pool_2d shape and op_params");
    r = ggml_pool_1d(ctx, a, GGML_OP_POOL_MAX, 3, 2, 1);
    ok(r && r->ne[0] == 4 && r->ne[1] == 6 && r->op_params[0] == GGML_OP_POOL_MAX && r->op_params[1] == 3 &&
       r->op_params[2] == 2 && r->op_params[3] == 1, "pool_1d shape and op_params");
    r = ggml_pad_ext_circular(ctx, h, 1, 2, 3, 4, 0, 1, 0, 0);
    ok(r && r->type == GGML_TYPE_F16 && r->ne[0] == 11 && r->ne[1] == 13 && r->ne[2] == 3 && r->ne[3] == 1 &&
       r->op_params[0] == 1 && r->op_params[3] == 4 && r->op_params[5] == 1 && r->op_params[8] == 1,
       "pad_ext_circular shape and op_params");
    r = ggml_upscale(ctx, h, 3, GGML_SCALE_MODE_BILINEAR);
    ok(r && r->type == GGML_TYPE_F16 && r->op == GGML_OP_UPSCALE && r->ne[0] == 24 && r->ne[1] == 18 &&
       r->ne[2] == 2 && r->op_params[0] == GGML_SCALE_MODE_BILINEAR, "upscale shape and op_params");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    r = ggml_upscale_ext(ctx, a, 5, 4, 3, 2, GGML_SCALE_MODE_BICUBIC);
#pragma GCC diagnostic pop
    ok(r && r->ne[0] == 5 && r->ne[1] == 4 && r->ne[2] == 3 && r->ne[3] == 2 &&
       r->op_params[0] == GGML_SCALE_MODE_BICUBIC, "upscale_ext shape and op_params");
    r = ggml_interpolate(ctx, a, 5, 4, 2, 1, GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ALIGN_CORNERS);
    ok(r && r->op_params[0] == (int32_t) (GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ALIGN_CORNERS),
       "interpolate keeps the flags in op_params");
    r = ggml_pad(ctx, a, 1, 0, 0, 0);
    ok(r && r->ne[0] == 9 && r->op_params[0] == 0 && r->op_params[1] == 1 && r->op_params[8] == 0,
       "pad shape and op_params");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_numerics();
    test_windows();
    test_rel_pos();
    test_supports();
    test_errors();
    return tap_done();
}
