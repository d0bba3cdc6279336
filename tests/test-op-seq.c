/*
 * test-op-seq.c - ARANGE, TIMESTEP_EMBEDDING, CUMSUM, TRI, FILL, DIAG,
 * DIAG_MASK_ZERO, REPEAT_BACK, ADD_ID: odd shapes, non-contiguous inputs
 * where the constructors accept them, in-place forms, 1..4 threads,
 * reference and fast kernels, and every constructor error path.
 *
 * References are computed here in double precision from the inputs as
 * stored.  Results are poisoned with NaN before each computation, so an
 * element a kernel forgets to write fails the comparison.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "op-test.h"

/* Sets every element of a (non-view) F32 result to NaN. */
static void poison(struct ggml_tensor *t)
{
    if (t->view_src != NULL || t->type != GGML_TYPE_F32)
        return;
    float *p = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++)
        p[i] = NAN;
}

/* Computes out for 1..4 threads, fast and reference, and compares with ref. */
static void check_all(struct ggml_context *ctx, struct ggml_tensor *out, const double *ref, double threshold,
                      const char *what)
{
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            poison(out);
            enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
            double nmse = optest_nmse(out, ref);
            ok(status == GGML_STATUS_SUCCESS && nmse <= threshold, "%s [%lld,%lld,%lld,%lld], %d threads, %s: nmse %.3g",
               what, (long long) out->ne[0], (long long) out->ne[1], (long long) out->ne[2], (long long) out->ne[3],
               n_threads, use_ref ? "reference" : "fast", nmse);
        }
}

static struct ggml_context *new_ctx(size_t mb)
{
    struct ggml_init_params params = { mb << 20, NULL, false };
    return ggml_init(params);
}

/* A [ne0, ne1, ne2, ne3] F32 input, optionally seen through a transposed view. */
static struct ggml_tensor *input(struct ggml_context *ctx, const int64_t ne[4], bool transposed, uint64_t *seed)
{
    if (transposed) {
        struct ggml_tensor *t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[1], ne[0], ne[2], ne[3]);
        optest_fill(t, seed, -2.0, 2.0);
        return ggml_transpose(ctx, t);
    }
    struct ggml_tensor *t = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    optest_fill(t, seed, -2.0, 2.0);
    return t;
}

static double *alloc_ref(const struct ggml_tensor *t)
{
    return malloc((size_t) ggml_nelements(t) * sizeof(double));
}

static const int64_t shapes[][4] = {
    { 1, 1, 1, 1 }, { 3, 3, 1, 1 }, { 31, 31, 2, 1 }, { 33, 33, 1, 3 }, { 257, 5, 1, 1 }, { 5, 257, 1, 1 },
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* ---------------------------------------------------------------- arange */

static void test_arange(void)
{
    struct ggml_context *ctx = new_ctx(4);
    const float cases[][3] = { { 0, 1, 1 }, { 0, 10, 1 }, { -3.5f, 7.25f, 0.5f }, { 1, 258, 1 }, { 2, 3, 0.37f } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const double start = cases[c][0], stop = cases[c][1], step = cases[c][2];
        struct ggml_tensor *out = ggml_arange(ctx, cases[c][0], cases[c][1], cases[c][2]);
        const int64_t n = (int64_t) ceil((stop - start) / step);
        ok(out != NULL && out->type == GGML_TYPE_F32 && ggml_n_dims(out) == 1 && out->ne[0] == n &&
           out->op == GGML_OP_ARANGE, "arange(%g, %g, %g) has %lld elements", start, stop, step, (long long) n);
        double *ref = alloc_ref(out);
        for (int64_t i = 0; i < n; i++)
            ref[i] = start + step * (double) i;
        /* start + i * step in F32: one rounding of the product and of the sum */
        check_all(ctx, out, ref, 1e-12, "arange");
        free(ref);
    }
    ok(ggml_arange(ctx, 2, 2, 1) == NULL, "arange: stop == start gives NULL");
    logged_one_error("arange: an empty range logs one error");
    ok(ggml_arange(ctx, 0, 2, 0) == NULL, "arange: step 0 gives NULL");
    logged_one_error("arange: step 0 logs one error");
    ok(ggml_arange(ctx, 0, 2, -1) == NULL, "arange: a negative step gives NULL");
    logged_one_error("arange: a negative step logs one error");
    ok(ggml_arange(ctx, 0, NAN, 1) == NULL, "arange: NaN gives NULL");
    logged_one_error("arange: NaN logs one error");
    ggml_free(ctx);
}

/* ---------------------------------------------------------------- cumsum */

static void test_cumsum(void)
{
    uint64_t seed = 0xc0ffee;
    for (size_t s = 0; s < N_SHAPES; s++)
        for (int transposed = 0; transposed <= 1; transposed++) {
            struct ggml_context *ctx = new_ctx(8);
            struct ggml_tensor *a = input(ctx, shapes[s], transposed, &seed);
            struct ggml_tensor *out = ggml_cumsum(ctx, a);
            double *ref = alloc_ref(out);
            int64_t k = 0;
            for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
                for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
                    for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
                        double acc = 0.0;
                        for (int64_t i0 = 0; i0 < a->ne[0]; i0++)
                            ref[k++] = acc += optest_get(a, i0, i1, i2, i3);
                    }
            /* F32 running sums of up to 257 terms in [-2, 2): error grows ~ n * eps */
            check_all(ctx, out, ref, 1e-10, transposed ? "cumsum transposed" : "cumsum");
            free(ref);
            ggml_free(ctx);
        }
    struct ggml_context *ctx = new_ctx(1);
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 2);
    ok(ggml_cumsum(ctx, h) == NULL, "cumsum: an f16 input gives NULL");
    logged_one_error("cumsum: an f16 input logs one error");
    ok(ggml_cumsum(ctx, NULL) == NULL, "cumsum: NULL gives NULL");
    is_int(tap_log_errors(), 0, "cumsum: NULL logs nothing");
    ggml_free(ctx);
}

/* ------------------------------------------------------------------- tri */

static bool tri_keeps(enum ggml_tri_type type, int64_t i0, int64_t i1)
{
    switch (type) {
    case GGML_TRI_TYPE_UPPER_DIAG: return i0 >= i1;
    case GGML_TRI_TYPE_UPPER:      return i0 > i1;
    case GGML_TRI_TYPE_LOWER_DIAG: return i0 <= i1;
    default:                       return i0 < i1;
    }
}

static void test_tri(void)
{
    uint64_t seed = 0x7217;
    const int64_t sq[][4] = { { 1, 1, 1, 1 }, { 3, 3, 1, 1 }, { 31, 31, 2, 1 }, { 33, 33, 1, 3 }, { 257, 257, 1, 1 } };
    for (size_t s = 0; s < sizeof sq / sizeof sq[0]; s++)
        for (int type = 0; type < 4; type++) {
            struct ggml_context *ctx = new_ctx(2);
            struct ggml_tensor *a = input(ctx, sq[s], false, &seed);
            struct ggml_tensor *out = ggml_tri(ctx, a, (enum ggml_tri_type) type);
            ok(out != NULL && out->op_params[0] == type, "tri: op_params[0] is the type %d", type);
            double *ref = alloc_ref(out);
            int64_t k = 0;
            for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
                for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
                    for (int64_t i1 = 0; i1 < a->ne[1]; i1++)
                        for (int64_t i0 = 0; i0 < a->ne[0]; i0++)
                            ref[k++] = tri_keeps((enum ggml_tri_type) type, i0, i1) ? optest_get(a, i0, i1, i2, i3) : 0.0;
            char what[32];
            snprintf(what, sizeof what, "tri type %d", type);
            /* a copy and zeros: exact */
            check_all(ctx, out, ref, 0.0, what);
            free(ref);
            ggml_free(ctx);
        }
    struct ggml_context *ctx = new_ctx(1);
    struct ggml_tensor *rect = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *sqr = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 4);
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 4);
    struct ggml_tensor *wide = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 4, 2);
    struct ggml_tensor *nc = ggml_permute(ctx, wide, 0, 2, 1, 3);
    ok(ggml_tri(ctx, rect, GGML_TRI_TYPE_LOWER) == NULL, "tri: a non-square matrix gives NULL");
    logged_one_error("tri: a non-square matrix logs one error");
    ok(ggml_tri(ctx, h, GGML_TRI_TYPE_LOWER) == NULL, "tri: f16 gives NULL");
    logged_one_error("tri: f16 logs one error");
    ok(ggml_tri(ctx, nc, GGML_TRI_TYPE_LOWER) == NULL, "tri: a non-contiguous input gives NULL");
    logged_one_error("tri: a non-contiguous input logs one error");
    ok(ggml_tri(ctx, sqr, (enum ggml_tri_type) 4) == NULL, "tri: an unknown type gives NULL");
    logged_one_error("tri: an unknown type logs one error");
    ok(ggml_tri(ctx, NULL, GGML_TRI_TYPE_LOWER) == NULL, "tri: NULL gives NULL");
    is_int(tap_log_errors(), 0, "tri: NULL logs nothing");
    ggml_free(ctx);
}

/* ------------------------------------------------------------------ fill */

static void test_fill(void)
{
    uint64_t seed = 0xf111;
    for (size_t s = 0; s < N_SHAPES; s++) {
        struct ggml_context *ctx = new_ctx(2);
        struct ggml_tensor *a = input(ctx, shapes[s], false, &seed);
        const float c = (float) s - 2.75f;
        struct ggml_tensor *out = ggml_fill(ctx, a, c);
        double *ref = alloc_ref(out);
        for (int64_t i = 0; i < ggml_nelements(out); i++)
            ref[i] = c;
        /* a constant: exact */
        check_all(ctx, out, ref, 0.0, "fill");
        struct ggml_tensor *r = ggml_fill_inplace(ctx, a, 1.5f);
        ok(r != NULL && r->view_src == a && r->op == GGML_OP_FILL && r->src[0] == a, "fill_inplace is a view of a");
        for (int64_t i = 0; i < ggml_nelements(out); i++)
            ref[i] = 1.5;
        ok(optest_compute(ctx, r, 3, false) == GGML_STATUS_SUCCESS && optest_nmse(a, ref) == 0.0,
           "fill_inplace writes into a");
        free(ref);
        ggml_free(ctx);
    }
    struct ggml_context *ctx = new_ctx(1);
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 4);
    struct ggml_tensor *t = ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3));
    ok(ggml_fill(ctx, h, 1) == NULL && tap_log_errors() == 1, "fill: f16 gives NULL and one error");
    ok(ggml_fill_inplace(ctx, h, 1) == NULL, "fill_inplace: f16 gives NULL");
    logged_one_error("fill_inplace: f16 logs one error");
    ok(ggml_fill(ctx, t, 1) == NULL, "fill: a non-contiguous input gives NULL");
    logged_one_error("fill: a non-contiguous input logs one error");
    ok(ggml_fill(ctx, NULL, 1) == NULL && ggml_fill_inplace(ctx, NULL, 1) == NULL, "fill: NULL gives NULL");
    is_int(tap_log_errors(), 0, "fill: NULL logs nothing");
    ggml_free(ctx);
}

/* ------------------------------------------------------------------ diag */

static void test_diag(void)
{
    uint64_t seed = 0xd1a9;
    const int64_t vs[][4] = { { 1, 1, 1, 1 }, { 3, 1, 1, 1 }, { 31, 1, 2, 1 }, { 33, 1, 1, 3 }, { 257, 1, 1, 1 } };
    for (size_t s = 0; s < sizeof vs / sizeof vs[0]; s++)
        for (int strided = 0; strided <= 1; strided++) {
            struct ggml_context *ctx = new_ctx(4);
            struct ggml_tensor *a;
            if (strided) {
                /* every other element of a wider row: nb[0] = 2 floats */
                struct ggml_tensor *w = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2 * vs[s][0], 1, vs[s][2], vs[s][3]);
                optest_fill(w, &seed, -2.0, 2.0);
                a = ggml_view_4d(ctx, w, vs[s][0], 1, vs[s][2], vs[s][3], w->nb[1], w->nb[2], w->nb[3], 0);
                a->nb[0] = 2 * sizeof(float);
            } else {
                a = input(ctx, vs[s], false, &seed);
            }
            struct ggml_tensor *out = ggml_diag(ctx, a);
            ok(out != NULL && out->ne[0] == a->ne[0] && out->ne[1] == a->ne[0] && out->ne[2] == a->ne[2] &&
               out->ne[3] == a->ne[3], "diag: shape [n, n, ne2, ne3]");
            double *ref = alloc_ref(out);
            int64_t k = 0;
            for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
                for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
                    for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
                        for (int64_t i0 = 0; i0 < out->ne[0]; i0++)
                            ref[k++] = i0 == i1 ? optest_get(a, i0, 0, i2, i3) : 0.0;
            /* copies and zeros: exact */
            check_all(ctx, out, ref, 0.0, strided ? "diag strided" : "diag");
            free(ref);
            ggml_free(ctx);
        }
    struct ggml_context *ctx = new_ctx(1);
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
    ok(ggml_diag(ctx, m) == NULL, "diag: an input with two rows gives NULL");
    logged_one_error("diag: two rows log one error");
    ok(ggml_diag(ctx, NULL) == NULL, "diag: NULL gives NULL");
    is_int(tap_log_errors(), 0, "diag: NULL logs nothing");
    struct ggml_tensor *h = ggml_diag(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 4));
    ok(h != NULL && !ggml_backend_dev_supports_op(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), h),
       "diag: the CPU device does not support an f16 diag");
    ggml_free(ctx);
}

/* -------------------------------------------------------- diag_mask_zero */

static void test_diag_mask_zero(void)
{
    uint64_t seed = 0xd3a5;
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    const int n_pasts[] = { 0, 2, 40 };
    for (size_t s = 0; s < N_SHAPES; s++)
        for (size_t ti = 0; ti < 3; ti++)
            for (int transposed = 0; transposed <= 1; transposed++) {
                const int n_past = n_pasts[(s + ti) % 3];
                struct ggml_context *ctx = new_ctx(8);
                const int64_t *ne = shapes[s];
                struct ggml_tensor *a;
                if (transposed) {
                    struct ggml_tensor *t = ggml_new_tensor_4d(ctx, types[ti], ne[1], ne[0], ne[2], ne[3]);
                    optest_fill(t, &seed, -2.0, 2.0);
                    a = ggml_transpose(ctx, t);
                } else {
                    a = ggml_new_tensor(ctx, types[ti], 4, ne);
                    optest_fill(a, &seed, -2.0, 2.0);
                }
                struct ggml_tensor *out = ggml_diag_mask_zero(ctx, a, n_past);
                ok(out != NULL && out->op_params[0] == n_past, "diag_mask_zero: op_params[0] is n_past");
                double *ref = alloc_ref(out);
                int64_t k = 0;
                for (int64_t i3 = 0; i3 < ne[3]; i3++)
                    for (int64_t i2 = 0; i2 < ne[2]; i2++)
                        for (int64_t i1 = 0; i1 < ne[1]; i1++)
                            for (int64_t i0 = 0; i0 < ne[0]; i0++)
                                ref[k++] = i0 > n_past + i1 ? 0.0 : optest_get(a, i0, i1, i2, i3);
                char what[64];
                snprintf(what, sizeof what, "diag_mask_zero %s n_past %d%s", ggml_type_name(types[ti]), n_past,
                         transposed ? " transposed" : "");
                /* bitwise copies and zeros: exact */
                check_all(ctx, out, ref, 0.0, what);
                free(ref);
                ggml_free(ctx);
            }
    struct ggml_context *ctx = new_ctx(1);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    optest_fill(a, &seed, 1.0, 2.0);
    double ref[15];
    for (int i = 0; i < 15; i++)
        ref[i] = i % 5 > 1 + i / 5 ? 0.0 : optest_get(a, i % 5, i / 5, 0, 0);
    struct ggml_tensor *r = ggml_diag_mask_zero_inplace(ctx, a, 1);
    ok(r != NULL && r->view_src == a && r->op == GGML_OP_DIAG_MASK_ZERO, "diag_mask_zero_inplace is a view of a");
    ok(optest_compute(ctx, r, 2, false) == GGML_STATUS_SUCCESS && optest_nmse(a, ref) == 0.0,
       "diag_mask_zero_inplace writes into a");
    ok(ggml_diag_mask_zero(ctx, a, -1) == NULL, "diag_mask_zero: a negative n_past gives NULL");
    logged_one_error("diag_mask_zero: a negative n_past logs one error");
    ok(ggml_diag_mask_zero_inplace(ctx, a, -1) == NULL, "diag_mask_zero_inplace: a negative n_past gives NULL");
    logged_one_error("diag_mask_zero_inplace: a negative n_past logs one error");
    ok(ggml_diag_mask_zero(ctx, NULL, 0) == NULL && ggml_diag_mask_zero_inplace(ctx, NULL, 0) == NULL,
       "diag_mask_zero: NULL gives NULL");
    is_int(tap_log_errors(), 0, "diag_mask_zero: NULL logs nothing");
    ggml_free(ctx);
}

/* ----------------------------------------------------------- repeat_back */

static void test_repeat_back(void)
{
    uint64_t seed = 0x4e9b;
    const int64_t cases[][2][4] = {
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 } },
        { { 31, 3, 1, 1 }, { 31, 3, 1, 1 } },
        { { 33, 6, 2, 3 }, { 33, 1, 1, 1 } },
        { { 64, 4, 3, 2 }, { 16, 2, 3, 1 } },
        { { 257, 3, 1, 1 }, { 1, 3, 1, 1 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int transposed = 0; transposed <= 1; transposed++) {
            struct ggml_context *ctx = new_ctx(4);
            int64_t na[4], nb[4];
            memcpy(na, cases[c][0], sizeof na);
            memcpy(nb, cases[c][1], sizeof nb);
            if (transposed) {
                int64_t t = na[0]; na[0] = na[1]; na[1] = t;
                t = nb[0]; nb[0] = nb[1]; nb[1] = t;
            }
            struct ggml_tensor *a = input(ctx, na, transposed, &seed);
            struct ggml_tensor *b = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, nb);
            struct ggml_tensor *out = ggml_repeat_back(ctx, a, b);
            ok(out != NULL && ggml_are_same_shape(out, b) && out->src[0] == a, "repeat_back: b's shape");
            double *ref = alloc_ref(out);
            memset(ref, 0, (size_t) ggml_nelements(out) * sizeof *ref);
            for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
                for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
                    for (int64_t i1 = 0; i1 < a->ne[1]; i1++)
                        for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
                            const int64_t j0 = i0 % nb[0], j1 = i1 % nb[1], j2 = i2 % nb[2], j3 = i3 % nb[3];
                            ref[((j3 * nb[2] + j2) * nb[1] + j1) * nb[0] + j0] += optest_get(a, i0, i1, i2, i3);
                        }
            /* F32 sums of up to 257 terms in [-2, 2) */
            check_all(ctx, out, ref, 1e-10, transposed ? "repeat_back transposed" : "repeat_back");
            free(ref);
            ggml_free(ctx);
        }
    struct ggml_context *ctx = new_ctx(1);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 4);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 4);
    ok(ggml_repeat_back(ctx, a, b) == NULL, "repeat_back: b that does not tile a gives NULL");
    logged_one_error("repeat_back: a bad shape logs one error");
    ok(ggml_repeat_back(ctx, NULL, b) == NULL && ggml_repeat_back(ctx, a, NULL) == NULL,
       "repeat_back: NULL gives NULL");
    is_int(tap_log_errors(), 0, "repeat_back: NULL logs nothing");
    ggml_free(ctx);

    /* An empty a tiles b 2^40 times: nothing to sum, and no time to spend
     * on the empty tiles (the alarm ends the test if it does). */
    ctx = new_ctx(1);
    struct ggml_tensor *empty = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 0, INT64_C(1) << 20, INT64_C(1) << 20);
    struct ggml_tensor *two = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor *sum = ggml_repeat_back(ctx, empty, two);
    ggml_set_f32_1d(two, 0, 7.0f); /* sum is a new tensor: it must come out 0, not b's values */
    alarm(20);
    is_int(optest_compute(ctx, sum, 2, false), GGML_STATUS_SUCCESS, "repeat_back of an empty a computes at once");
    alarm(0);
    ok(ggml_get_f32_1d(sum, 0) == 0.0f && ggml_get_f32_1d(sum, 1) == 0.0f, "to zeros");
    ggml_free(ctx);
}

/* ---------------------------------------------------------------- add_id */

static void test_add_id(void)
{
    uint64_t seed = 0xadd1d;
    const int64_t cases[][4] = { /* ne0, n_used, n_tokens, n_rows of b */
        { 1, 1, 1, 1 }, { 3, 2, 5, 4 }, { 31, 4, 3, 8 }, { 33, 1, 7, 2 }, { 257, 3, 2, 5 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int strided = 0; strided <= 1; strided++) {
            struct ggml_context *ctx = new_ctx(4);
            const int64_t ne0 = cases[c][0], n_used = cases[c][1], n_tok = cases[c][2], n_rows = cases[c][3];
            struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, ne0, n_used, n_tok);
            struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, n_rows);
            struct ggml_tensor *ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tok);
            optest_fill(a, &seed, -2.0, 2.0);
            optest_fill(b, &seed, -2.0, 2.0);
            for (int64_t t = 0; t < n_tok; t++)
                for (int64_t u = 0; u < n_used; u++)
                    optest_set(ids, u, t, 0, 0, (double) (optest_next(&seed) % (uint64_t) n_rows));
            struct ggml_tensor *a_in = a;
            if (strided) {
                /* a permuted pair of the middle dimensions: rows not in memory order */
                struct ggml_tensor *p = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, ne0, n_tok, n_used);
                optest_fill(p, &seed, -2.0, 2.0);
                a_in = ggml_permute(ctx, p, 0, 2, 1, 3);
            }
            struct ggml_tensor *out = ggml_add_id(ctx, a_in, b, ids);
            double *ref = alloc_ref(out);
            int64_t k = 0;
            for (int64_t t = 0; t < n_tok; t++)
                for (int64_t u = 0; u < n_used; u++) {
                    const int64_t id = (int64_t) optest_get(ids, u, t, 0, 0);
                    for (int64_t i = 0; i < ne0; i++)
                        ref[k++] = optest_get(a_in, i, u, t, 0) + optest_get(b, i, id, 0, 0);
                }
            /* one F32 addition per element */
            check_all(ctx, out, ref, 1e-12, strided ? "add_id permuted" : "add_id");
            free(ref);
            ggml_free(ctx);
        }
    struct ggml_context *ctx = new_ctx(1);
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 2, 3);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5);
    struct ggml_tensor *ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 2, 3);
    struct ggml_tensor *ids_f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 3);
    struct ggml_tensor *ids_bad = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 3);
    struct ggml_tensor *b_bad = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 5);
    ok(ggml_add_id(ctx, a, b, ids_f) == NULL, "add_id: f32 ids give NULL");
    logged_one_error("add_id: f32 ids log one error");
    ok(ggml_add_id(ctx, a, b, ids_bad) == NULL, "add_id: ids of the wrong shape give NULL");
    logged_one_error("add_id: ids of the wrong shape log one error");
    ok(ggml_add_id(ctx, a, b_bad, ids) == NULL, "add_id: b of the wrong width gives NULL");
    logged_one_error("add_id: b of the wrong width logs one error");
    ok(ggml_add_id(ctx, NULL, b, ids) == NULL && ggml_add_id(ctx, a, NULL, ids) == NULL &&
       ggml_add_id(ctx, a, b, NULL) == NULL, "add_id: NULL gives NULL");
    is_int(tap_log_errors(), 0, "add_id: NULL logs nothing");
    ggml_free(ctx);
}

/* ---------------------------------------------------- timestep_embedding */

static void test_timestep_embedding(void)
{
    uint64_t seed = 0x75e9;
    const int cases[][3] = { /* n, dim, max_period */
        { 1, 1, 10000 }, { 3, 8, 10000 }, { 31, 33, 10000 }, { 5, 256, 10000 }, { 33, 7, 100 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int strided = 0; strided <= 1; strided++) {
            struct ggml_context *ctx = new_ctx(4);
            const int n = cases[c][0], dim = cases[c][1], max_period = cases[c][2];
            struct ggml_tensor *t;
            if (strided) {
                struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, n);
                optest_fill(w, &seed, 0.0, 20.0);
                t = ggml_view_1d(ctx, w, n, 0);
                t->nb[0] = w->nb[1];
                t->nb[1] = t->nb[2] = t->nb[3] = w->nb[1] * (size_t) n;
            } else {
                t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
                optest_fill(t, &seed, 0.0, 20.0);
            }
            struct ggml_tensor *out = ggml_timestep_embedding(ctx, t, dim, max_period);
            ok(out != NULL && out->ne[0] == dim && out->ne[1] == n && out->op_params[0] == dim &&
               out->op_params[1] == max_period, "timestep_embedding: shape [dim, n] and op_params");
            double *ref = alloc_ref(out);
            const int half = dim / 2;
            for (int j = 0; j < n; j++) {
                const double ts = optest_get(t, j, 0, 0, 0);
                for (int k = 0; k < half; k++) {
                    const double arg = ts * exp(-log((double) max_period) * k / half);
                    ref[(size_t) j * dim + k] = cos(arg);
                    ref[(size_t) j * dim + half + k] = sin(arg);
                }
                if (dim % 2)
                    ref[(size_t) j * dim + dim - 1] = 0.0;
            }
            /* F32 exp and cos/sin of arguments up to 20: relative error ~1e-6 in the
             * argument, so ~1e-10 in the squared error */
            check_all(ctx, out, ref, 1e-9, strided ? "timestep_embedding strided" : "timestep_embedding");
            free(ref);
            ggml_free(ctx);
        }
    struct ggml_context *ctx = new_ctx(1);
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
    struct ggml_tensor *h = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 4);
    ok(ggml_timestep_embedding(ctx, t, 0, 10000) == NULL, "timestep_embedding: dim 0 gives NULL");
    logged_one_error("timestep_embedding: dim 0 logs one error");
    ok(ggml_timestep_embedding(ctx, t, 8, 0) == NULL, "timestep_embedding: max_period 0 gives NULL");
    logged_one_error("timestep_embedding: max_period 0 logs one error");
    ok(ggml_timestep_embedding(ctx, m, 8, 10000) == NULL, "timestep_embedding: a matrix gives NULL");
    logged_one_error("timestep_embedding: a matrix logs one error");
    ok(ggml_timestep_embedding(ctx, h, 8, 10000) == NULL, "timestep_embedding: f16 gives NULL");
    logged_one_error("timestep_embedding: f16 logs one error");
    ok(ggml_timestep_embedding(ctx, NULL, 8, 10000) == NULL, "timestep_embedding: NULL gives NULL");
    is_int(tap_log_errors(), 0, "timestep_embedding: NULL logs nothing");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_arange();
    test_cumsum();
    test_tri();
    test_fill();
    test_diag();
    test_diag_mask_zero();
    test_repeat_back();
    test_add_id();
    test_timestep_embedding();
    return tap_done();
}
