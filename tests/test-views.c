/*
 * test-views.c - views, reshapes, permutations, transposes, and the copying
 * constructors (cont, cpy, cast, dup): the metadata they produce, their
 * argument checks, and NULL propagation.
 *
 * Base tensor throughout: f32 [4,3,2,2], strides {4,16,48,96}.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "tap.h"

#define F32_SIZE 4
#define F16_SIZE 2

static struct ggml_context *ctx;

static struct ggml_tensor *new_base(const char *name)
{
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 2, 2);
    if (a) {
        ggml_set_name(a, name);
        for (int k = 0; k < 48; k++) {
            float v = (float) k;
            memcpy((char *) a->data + (size_t) k * F32_SIZE, &v, sizeof v);
        }
    }
    return a;
}

static bool same4(const int64_t *ne, int64_t e0, int64_t e1, int64_t e2, int64_t e3)
{
    return ne[0] == e0 && ne[1] == e1 && ne[2] == e2 && ne[3] == e3;
}

static bool same4u(const size_t *nb, size_t b0, size_t b1, size_t b2, size_t b3)
{
    return nb[0] == b0 && nb[1] == b1 && nb[2] == b2 && nb[3] == b3;
}

#define check_ne(t, e0, e1, e2, e3, what)                                                          \
    do {                                                                                          \
        if (!ok((t) && same4((t)->ne, e0, e1, e2, e3), "%s: ne = {%d,%d,%d,%d}", what, e0, e1, e2, e3) && (t)) \
            tap_diag("got ne = {%lld,%lld,%lld,%lld}", (long long) (t)->ne[0], (long long) (t)->ne[1], \
                     (long long) (t)->ne[2], (long long) (t)->ne[3]);                              \
    } while (0)

#define check_nb(t, b0, b1, b2, b3, what)                                                          \
    do {                                                                                          \
        if (!ok((t) && same4u((t)->nb, b0, b1, b2, b3), "%s: nb = {%d,%d,%d,%d}", what, b0, b1, b2, b3) && (t)) \
            tap_diag("got nb = {%zu,%zu,%zu,%zu}", (t)->nb[0], (t)->nb[1], (t)->nb[2], (t)->nb[3]); \
    } while (0)

/* Common checks for a view-like result r of source a at byte offset offs. */
static void check_view_of(const struct ggml_tensor *r, const struct ggml_tensor *a,
                          const struct ggml_tensor *base, size_t offs, enum ggml_op op, const char *what)
{
    ok(r != NULL, "%s: created", what);
    if (!r)
        return;
    is_int(r->op, op, "%s: op is %s", what, ggml_op_name(op));
    is_ptr(r->src[0], a, "%s: src[0] is the input", what);
    is_ptr(r->view_src, base, "%s: view_src is the base tensor", what);
    is_uint(r->view_offs, offs, "%s: view_offs", what);
    is_ptr(r->data, (char *) base->data + offs, "%s: data = base data + offset", what);
    is_int(r->type, a->type, "%s: type is kept", what);
}

/* ---------------------------------------------------------------- views */

static void test_views(void)
{
    struct ggml_tensor *a = new_base("a");

    struct ggml_tensor *v1 = ggml_view_1d(ctx, a, 5, 3 * F32_SIZE);
    check_view_of(v1, a, a, 12, GGML_OP_VIEW, "view_1d");
    check_ne(v1, 5, 1, 1, 1, "view_1d");
    check_nb(v1, 4, 20, 20, 20, "view_1d");
    if (v1) {
        size_t stored;
        memcpy(&stored, v1->op_params, sizeof stored);
        is_uint(stored, 12, "view_1d: the offset is kept in op_params");
        is_str(v1->name, "a (view)", "view_1d: named after its source");
    }

    struct ggml_tensor *v2 = ggml_view_2d(ctx, a, 2, 3, a->nb[1], 1 * F32_SIZE);
    check_view_of(v2, a, a, 4, GGML_OP_VIEW, "view_2d");
    check_ne(v2, 2, 3, 1, 1, "view_2d");
    check_nb(v2, 4, 16, 48, 48, "view_2d");

    struct ggml_tensor *v3 = ggml_view_3d(ctx, a, 2, 3, 2, a->nb[1], a->nb[2], 2 * F32_SIZE);
    check_view_of(v3, a, a, 8, GGML_OP_VIEW, "view_3d");
    check_ne(v3, 2, 3, 2, 1, "view_3d");
    check_nb(v3, 4, 16, 48, 96, "view_3d");

    struct ggml_tensor *v4 = ggml_view_4d(ctx, a, 4, 3, 2, 2, a->nb[1], a->nb[2], a->nb[3], 0);
    check_view_of(v4, a, a, 0, GGML_OP_VIEW, "view_4d");
    check_ne(v4, 4, 3, 2, 2, "view_4d");
    check_nb(v4, 4, 16, 48, 96, "view_4d");

    /* Every other row of each 4x3 plane: custom strides. */
    struct ggml_tensor *vs = ggml_view_3d(ctx, a, 4, 2, 4, 2 * a->nb[1], a->nb[2], 0);
    check_nb(vs, 4, 32, 48, 192, "strided view_3d");
    if (vs)
        ok(!ggml_is_contiguous(vs), "strided view_3d is not contiguous");

    /* A view of a view refers to the base tensor with the summed offset. */
    struct ggml_tensor *outer = ggml_view_1d(ctx, a, 20, 8 * F32_SIZE);
    struct ggml_tensor *inner = ggml_view_1d(ctx, outer, 4, 3 * F32_SIZE);
    check_view_of(inner, outer, a, 44, GGML_OP_VIEW, "view of a view");
    if (inner) {
        float first;
        memcpy(&first, inner->data, sizeof first);
        is_near(first, 11.0, 0, "view of a view reads element 11 of the base");
    }

    /* The last element exactly: allowed. */
    struct ggml_tensor *last = ggml_view_1d(ctx, a, 1, 47 * F32_SIZE);
    ok(last != NULL, "a view of the last element is allowed");
    struct ggml_tensor *whole = ggml_view_1d(ctx, a, 48, 0);
    ok(whole != NULL, "a view of every element is allowed");
    is_int(tap_log_errors(), 0, "valid views log no error");

    /* Out of bounds. */
    struct ggml_tensor *bad = ggml_view_1d(ctx, a, 49, 0);
    ok(bad == NULL, "view_1d past the end is refused");
    logged_one_error("view_1d past the end logs one error");
    bad = ggml_view_1d(ctx, a, 1, 48 * F32_SIZE);
    ok(bad == NULL, "view_1d starting at the end is refused");
    logged_one_error("view_1d starting at the end logs one error");
    bad = ggml_view_2d(ctx, a, 4, 13, a->nb[1], 0);
    ok(bad == NULL, "view_2d with one row too many is refused");
    logged_one_error("view_2d past the end logs one error");
    bad = ggml_view_4d(ctx, a, 4, 3, 2, 2, a->nb[1], a->nb[2], a->nb[3], F32_SIZE);
    ok(bad == NULL, "view_4d of the whole tensor shifted by one element is refused");
    logged_one_error("view_4d past the end logs one error");
    bad = ggml_view_1d(ctx, inner, 40, 0); /* 160 bytes at offset 44 of a 192-byte base */
    ok(bad == NULL, "a view of a view past the end of the base is refused");
    logged_one_error("a view of a view past the end logs one error");
    bad = ggml_view_2d(ctx, a, 4, -1, a->nb[1], 0);
    ok(bad == NULL, "a negative view dimension is refused");
    logged_one_error("a negative view dimension logs one error");

    bad = ggml_view_2d(ctx, a, 4, 0, a->nb[1], (size_t) -4);
    ok(bad == NULL, "an empty view at offset SIZE_MAX - 3 is refused");
    logged_one_error("an empty view outside its source logs one error");
    ok(ggml_view_2d(ctx, a, 4, 0, a->nb[1], 48 * F32_SIZE) != NULL, "an empty view at the end is allowed");
    is_int(tap_log_errors(), 0, "and logs nothing");

    /* A stride of -8 as a size_t: the span wraps around to look small. */
    bad = ggml_view_4d(ctx, a, 1, 5, 4, 1, (size_t) -8, 16, 192, 0);
    ok(bad == NULL, "view_4d with a row stride of SIZE_MAX - 7 is refused");
    logged_one_error("a wrapping stride logs one error");

    /* Elements must start on element boundaries (the kernels load them as their type). */
    bad = ggml_view_1d(ctx, a, 4, 2);
    ok(bad == NULL, "view_1d at an offset inside an element is refused");
    logged_one_error("a misaligned view offset logs one error");
    bad = ggml_view_2d(ctx, a, 2, 2, F32_SIZE + 1, 0);
    ok(bad == NULL, "view_2d with a row stride inside an element is refused");
    logged_one_error("a misaligned nb1 logs one error");
    bad = ggml_view_4d(ctx, a, 1, 1, 1, 2, F32_SIZE, F32_SIZE, 6, 0);
    ok(bad == NULL, "view_4d with nb3 inside an element is refused");
    logged_one_error("a misaligned nb3 logs one error");
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 2);
    bad = ggml_view_1d(ctx, q, 32, ggml_type_size(GGML_TYPE_Q8_0) / 2);
    ok(bad == NULL, "a view of a Q8_0 tensor starting inside a block is refused");
    logged_one_error("a view inside a block logs one error");
    ok(ggml_view_1d(ctx, q, 32, ggml_type_size(GGML_TYPE_Q8_0)) != NULL, "a view of the second Q8_0 block is allowed");
    is_int(tap_log_errors(), 0, "and logs nothing");

    /* NULL propagates quietly. */
    ok(ggml_view_1d(ctx, NULL, 4, 0) == NULL, "view_1d(NULL) is NULL");
    ok(ggml_view_2d(ctx, NULL, 4, 1, 16, 0) == NULL, "view_2d(NULL) is NULL");
    ok(ggml_view_3d(ctx, NULL, 4, 1, 1, 16, 16, 0) == NULL, "view_3d(NULL) is NULL");
    ok(ggml_view_4d(ctx, NULL, 4, 1, 1, 1, 16, 16, 16, 0) == NULL, "view_4d(NULL) is NULL");
    ok(ggml_view_tensor(ctx, NULL) == NULL, "ggml_view_tensor(NULL) is NULL");
    is_int(tap_log_errors(), 0, "views of NULL log nothing");
}

/* ------------------------------------------------------------- reshape */

static void test_reshape(void)
{
    struct ggml_tensor *a = new_base("r");

    struct ggml_tensor *r1 = ggml_reshape_1d(ctx, a, 48);
    check_view_of(r1, a, a, 0, GGML_OP_RESHAPE, "reshape_1d");
    check_ne(r1, 48, 1, 1, 1, "reshape_1d");
    check_nb(r1, 4, 192, 192, 192, "reshape_1d");
    if (r1)
        is_str(r1->name, "r (reshaped)", "reshape_1d: named after its source");

    struct ggml_tensor *r2 = ggml_reshape_2d(ctx, a, 8, 6);
    check_view_of(r2, a, a, 0, GGML_OP_RESHAPE, "reshape_2d");
    check_ne(r2, 8, 6, 1, 1, "reshape_2d");
    check_nb(r2, 4, 32, 192, 192, "reshape_2d");

    struct ggml_tensor *r3 = ggml_reshape_3d(ctx, a, 2, 4, 6);
    check_view_of(r3, a, a, 0, GGML_OP_RESHAPE, "reshape_3d");
    check_ne(r3, 2, 4, 6, 1, "reshape_3d");
    check_nb(r3, 4, 8, 32, 192, "reshape_3d");

    struct ggml_tensor *r4 = ggml_reshape_4d(ctx, a, 2, 2, 2, 6);
    check_view_of(r4, a, a, 0, GGML_OP_RESHAPE, "reshape_4d");
    check_ne(r4, 2, 2, 2, 6, "reshape_4d");
    check_nb(r4, 4, 8, 16, 32, "reshape_4d");

    /* reshape(a, b): b gives only the shape and may be non-contiguous. */
    struct ggml_tensor *shape_src = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 6);
    struct ggml_tensor *shape = ggml_transpose(ctx, shape_src); /* ne {6,8} */
    struct ggml_tensor *rb = ggml_reshape(ctx, a, shape);
    check_view_of(rb, a, a, 0, GGML_OP_RESHAPE, "reshape(a, b)");
    check_ne(rb, 6, 8, 1, 1, "reshape(a, b)");
    check_nb(rb, 4, 24, 192, 192, "reshape(a, b)");

    /* Reshaping a contiguous view keeps its place in the base tensor. */
    struct ggml_tensor *part = ggml_view_1d(ctx, a, 12, 24 * F32_SIZE);
    struct ggml_tensor *rp = ggml_reshape_2d(ctx, part, 3, 4);
    check_view_of(rp, part, a, 96, GGML_OP_RESHAPE, "reshape of a view");
    is_int(tap_log_errors(), 0, "valid reshapes log no error");

    /* Element count must match. */
    ok(ggml_reshape_1d(ctx, a, 47) == NULL, "reshape_1d to 47 elements is refused");
    logged_one_error("reshape_1d with the wrong count logs one error");
    ok(ggml_reshape_2d(ctx, a, 7, 7) == NULL, "reshape_2d to 49 elements is refused");
    logged_one_error("reshape_2d with the wrong count logs one error");
    /* 4 * (2^62 + 12) is 48 modulo 2^64 */
    ok(ggml_reshape_2d(ctx, a, 4, (INT64_C(1) << 62) + 12) == NULL, "reshape_2d to 2^64 + 48 elements is refused");
    logged_one_error("reshape_2d with an overflowing count logs one error");
    ok(ggml_reshape_3d(ctx, a, 2, 2, 2) == NULL, "reshape_3d to 8 elements is refused");
    logged_one_error("reshape_3d with the wrong count logs one error");
    ok(ggml_reshape_4d(ctx, a, 4, 3, 2, 3) == NULL, "reshape_4d to 72 elements is refused");
    logged_one_error("reshape_4d with the wrong count logs one error");
    struct ggml_tensor *wrong = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 5);
    ok(ggml_reshape(ctx, a, wrong) == NULL, "reshape to a 25-element shape is refused");
    logged_one_error("reshape(a, b) with the wrong count logs one error");

    /* Input must be contiguous. */
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *mt = ggml_transpose(ctx, m);
    ok(ggml_reshape_1d(ctx, mt, 12) == NULL, "reshape_1d of a transposed tensor is refused");
    logged_one_error("reshape of a non-contiguous tensor logs one error");
    ok(ggml_reshape_2d(ctx, mt, 4, 3) == NULL, "reshape_2d of a transposed tensor is refused");
    logged_one_error("reshape_2d of a non-contiguous tensor logs one error");
    struct ggml_tensor *twelve = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 12);
    ok(ggml_reshape(ctx, mt, twelve) == NULL, "reshape(a, b) of a transposed a is refused");
    logged_one_error("reshape(a, b) of a non-contiguous a logs one error");

    /* NULL propagates quietly. */
    ok(ggml_reshape_1d(ctx, NULL, 4) == NULL, "reshape_1d(NULL) is NULL");
    ok(ggml_reshape_2d(ctx, NULL, 2, 2) == NULL, "reshape_2d(NULL) is NULL");
    ok(ggml_reshape_3d(ctx, NULL, 2, 2, 1) == NULL, "reshape_3d(NULL) is NULL");
    ok(ggml_reshape_4d(ctx, NULL, 2, 2, 1, 1) == NULL, "reshape_4d(NULL) is NULL");
    ok(ggml_reshape(ctx, NULL, twelve) == NULL, "reshape(NULL, b) is NULL");
    ok(ggml_reshape(ctx, a, NULL) == NULL, "reshape(a, NULL) is NULL");
    is_int(tap_log_errors(), 0, "reshapes of NULL log nothing");
}

/* ------------------------------------------------------------- permute */

static void test_permute(void)
{
    /* Distinct extents so that every permutation is visible: ne {2,3,4,5}. */
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 3, 4, 5);
    ggml_set_name(a, "p");
    const size_t anb[4] = { 4, 8, 24, 96 };
    const int64_t ane[4] = { 2, 3, 4, 5 };

    int count = 0;
    for (int x0 = 0; x0 < 4; x0++)
        for (int x1 = 0; x1 < 4; x1++)
            for (int x2 = 0; x2 < 4; x2++)
                for (int x3 = 0; x3 < 4; x3++) {
                    if (x0 == x1 || x0 == x2 || x0 == x3 || x1 == x2 || x1 == x3 || x2 == x3)
                        continue;
                    count++;
                    const int ax[4] = { x0, x1, x2, x3 };
                    struct ggml_tensor *p = ggml_permute(ctx, a, x0, x1, x2, x3);
                    int64_t ne[4];
                    size_t nb[4];
                    for (int i = 0; i < 4; i++) {
                        ne[ax[i]] = ane[i]; /* dimension i of a goes to position ax[i] */
                        nb[ax[i]] = anb[i];
                    }
                    bool good = p && memcmp(p->ne, ne, sizeof ne) == 0 && memcmp(p->nb, nb, sizeof nb) == 0 &&
                                p->op == GGML_OP_PERMUTE && p->src[0] == a && p->view_src == a &&
                                p->view_offs == 0 && p->data == a->data && p->type == a->type &&
                                p->op_params[0] == x0 && p->op_params[1] == x1 && p->op_params[2] == x2 &&
                                p->op_params[3] == x3;
                    if (!ok(good, "permute(%d,%d,%d,%d)", x0, x1, x2, x3) && p)
                        tap_diag("ne {%lld,%lld,%lld,%lld} nb {%zu,%zu,%zu,%zu} op %d",
                                 (long long) p->ne[0], (long long) p->ne[1], (long long) p->ne[2],
                                 (long long) p->ne[3], p->nb[0], p->nb[1], p->nb[2], p->nb[3], (int) p->op);
                }
    is_int(count, 24, "all 24 permutations were tried");

    struct ggml_tensor *p = ggml_permute(ctx, a, 1, 2, 0, 3);
    if (p) {
        is_str(p->name, "p (permuted)", "a permutation is named after its source");
        ok(ggml_is_permuted(p), "permute(1,2,0,3) is permuted");
        ok(!ggml_is_permuted(ggml_permute(ctx, a, 0, 1, 2, 3)), "the identity permutation is not permuted");
    }

    /* Permuting a view keeps the base and offset. */
    struct ggml_tensor *v = ggml_view_4d(ctx, a, 2, 3, 4, 2, a->nb[1], a->nb[2], a->nb[3], a->nb[3]);
    struct ggml_tensor *pv = ggml_permute(ctx, v, 3, 2, 1, 0);
    check_view_of(pv, v, a, 96, GGML_OP_PERMUTE, "permute of a view");
    check_ne(pv, 2, 4, 3, 2, "permute(3,2,1,0) of [2,3,4,2]");
    is_int(tap_log_errors(), 0, "valid permutations log no error");

    static const int bad[][4] = {
        { 0, 0, 1, 2 }, { 0, 1, 2, 2 }, { 3, 1, 3, 0 }, { 1, 1, 1, 1 },
        { 0, 1, 2, 4 }, { -1, 1, 2, 3 }, { 0, 1, 2, 7 }, { 4, 5, 6, 7 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ggml_tensor *r = ggml_permute(ctx, a, bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
        ok(r == NULL, "permute(%d,%d,%d,%d) is refused", bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
        logged_one_error("permute(%d,%d,%d,%d) logs one error", bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
    }

    ok(ggml_permute(ctx, NULL, 1, 0, 2, 3) == NULL, "permute(NULL) is NULL");
    is_int(tap_log_errors(), 0, "permute(NULL) logs nothing");
}

/* ----------------------------------------------------------- transpose */

static void test_transpose(void)
{
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    ggml_set_name(m, "m");
    struct ggml_tensor *t = ggml_transpose(ctx, m);
    check_view_of(t, m, m, 0, GGML_OP_TRANSPOSE, "transpose");
    check_ne(t, 3, 4, 1, 1, "transpose");
    check_nb(t, 16, 4, 48, 48, "transpose");
    if (t)
        is_str(t->name, "m (transposed)", "a transpose is named after its source");

    struct ggml_tensor *a = new_base("a4");
    struct ggml_tensor *t4 = ggml_transpose(ctx, a);
    check_ne(t4, 3, 4, 2, 2, "transpose of 4d swaps only dims 0 and 1");
    check_nb(t4, 16, 4, 48, 96, "transpose of 4d");

    struct ggml_tensor *tt = ggml_transpose(ctx, t);
    check_view_of(tt, t, m, 0, GGML_OP_TRANSPOSE, "transpose of a transpose");
    ok(tt && ggml_are_same_shape(tt, m) && ggml_are_same_stride(tt, m), "transposing twice restores the layout");

    ok(ggml_transpose(ctx, NULL) == NULL, "transpose(NULL) is NULL");
    is_int(tap_log_errors(), 0, "transposes log no error");

    /*
     * A transposed Q8_0 [32,2] (34-byte blocks) spans 2 * 34 / 32 + 31 * 34
     * bytes by ggml_nbytes but its source owns 68: a view of it stays
     * inside those 68 bytes.
     */
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 32, 2);
    struct ggml_tensor *qt = ggml_transpose(ctx, q);
    ok(qt != NULL && ggml_view_2d(ctx, qt, 32, 2, 34, 0) != NULL, "a view of the source's two blocks through it");
    is_int(tap_log_errors(), 0, "... logs no error");
    ok(ggml_view_2d(ctx, qt, 32, 2, 1000, 0) == NULL, "a view of it reaching past the source's memory is NULL");
    logged_one_error("... with one error");
    ok(ggml_view_1d(ctx, qt, 32, 68) == NULL, "a view of it starting at the source's end is NULL");
    logged_one_error("... with one error");
}

/* ---------------------------------------------------------------- cont */

static void check_new_result(const struct ggml_tensor *r, const struct ggml_tensor *a, enum ggml_op op,
                             enum ggml_type type, const char *what)
{
    ok(r != NULL, "%s: created", what);
    if (!r)
        return;
    is_int(r->op, op, "%s: op is %s", what, ggml_op_name(op));
    is_ptr(r->src[0], a, "%s: src[0] is the input", what);
    is_ptr(r->view_src, NULL, "%s: not a view", what);
    ok(r->data != NULL && r->data != a->data, "%s: has its own data", what);
    is_int(r->type, type, "%s: type", what);
    ok(ggml_is_contiguous(r), "%s: contiguous", what);
}

static void test_cont(void)
{
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    ggml_set_name(m, "m");
    struct ggml_tensor *t = ggml_transpose(ctx, m);
    ggml_set_name(t, "mt");

    struct ggml_tensor *c = ggml_cont(ctx, t);
    check_new_result(c, t, GGML_OP_CONT, GGML_TYPE_F32, "cont");
    check_ne(c, 3, 4, 1, 1, "cont");
    check_nb(c, 4, 12, 48, 48, "cont");
    if (c)
        is_str(c->name, "mt (cont)", "cont is named after its source");

    struct ggml_tensor *c1 = ggml_cont_1d(ctx, t, 12);
    check_new_result(c1, t, GGML_OP_CONT, GGML_TYPE_F32, "cont_1d");
    check_ne(c1, 12, 1, 1, 1, "cont_1d");
    struct ggml_tensor *c2 = ggml_cont_2d(ctx, t, 6, 2);
    check_new_result(c2, t, GGML_OP_CONT, GGML_TYPE_F32, "cont_2d");
    check_ne(c2, 6, 2, 1, 1, "cont_2d");
    check_nb(c2, 4, 24, 48, 48, "cont_2d");
    struct ggml_tensor *c3 = ggml_cont_3d(ctx, t, 2, 3, 2);
    check_new_result(c3, t, GGML_OP_CONT, GGML_TYPE_F32, "cont_3d");
    check_ne(c3, 2, 3, 2, 1, "cont_3d");
    struct ggml_tensor *c4 = ggml_cont_4d(ctx, t, 1, 2, 3, 2);
    check_new_result(c4, t, GGML_OP_CONT, GGML_TYPE_F32, "cont_4d");
    check_ne(c4, 1, 2, 3, 2, "cont_4d");
    check_nb(c4, 4, 4, 8, 24, "cont_4d");

    struct ggml_tensor *h = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 2, 3, 4);
    struct ggml_tensor *hp = ggml_permute(ctx, h, 2, 1, 0, 3);
    struct ggml_tensor *hc = ggml_cont(ctx, hp);
    check_new_result(hc, hp, GGML_OP_CONT, GGML_TYPE_F16, "cont of a permuted f16");
    check_ne(hc, 4, 3, 2, 1, "cont of a permuted f16");
    check_nb(hc, 2, 8, 24, 48, "cont of a permuted f16");
    is_int(tap_log_errors(), 0, "valid conts log no error");

    ok(ggml_cont_1d(ctx, t, 13) == NULL, "cont_1d with the wrong count is refused");
    logged_one_error("cont_1d with the wrong count logs one error");
    ok(ggml_cont_2d(ctx, t, 5, 2) == NULL, "cont_2d with the wrong count is refused");
    logged_one_error("cont_2d with the wrong count logs one error");
    ok(ggml_cont_3d(ctx, t, 2, 2, 2) == NULL, "cont_3d with the wrong count is refused");
    logged_one_error("cont_3d with the wrong count logs one error");
    ok(ggml_cont_4d(ctx, t, 2, 2, 2, 2) == NULL, "cont_4d with the wrong count is refused");
    logged_one_error("cont_4d with the wrong count logs one error");

    ok(ggml_cont(ctx, NULL) == NULL, "cont(NULL) is NULL");
    ok(ggml_cont_1d(ctx, NULL, 4) == NULL, "cont_1d(NULL) is NULL");
    ok(ggml_cont_2d(ctx, NULL, 2, 2) == NULL, "cont_2d(NULL) is NULL");
    ok(ggml_cont_3d(ctx, NULL, 2, 2, 1) == NULL, "cont_3d(NULL) is NULL");
    ok(ggml_cont_4d(ctx, NULL, 2, 2, 1, 1) == NULL, "cont_4d(NULL) is NULL");
    is_int(tap_log_errors(), 0, "conts of NULL log nothing");
}

/* ------------------------------------------------------- cpy, cast, dup */

static void test_cpy(void)
{
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 4);
    ggml_set_name(a, "src");
    ggml_set_name(b, "dst");

    struct ggml_tensor *r = ggml_cpy(ctx, a, b);
    ok(r != NULL, "cpy: created");
    if (r) {
        is_int(r->op, GGML_OP_CPY, "cpy: op is CPY");
        is_ptr(r->src[0], a, "cpy: src[0] is the source");
        is_ptr(r->src[1], b, "cpy: src[1] is the destination");
        is_ptr(r->view_src, b, "cpy: the result is a view of the destination");
        is_ptr(r->data, b->data, "cpy: the result shares the destination's data");
        is_int(r->type, GGML_TYPE_F16, "cpy: the result has the destination's type");
        ok(ggml_are_same_shape(r, b) && ggml_are_same_stride(r, b), "cpy: the result has the destination's layout");
        is_str(r->name, "dst (copy of src)", "cpy: named after both tensors");
    }

    /* Into a view: the result refers to the base of the destination. */
    struct ggml_tensor *big = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 40);
    struct ggml_tensor *slot = ggml_view_1d(ctx, big, 12, 20 * F32_SIZE);
    struct ggml_tensor *rv = ggml_cpy(ctx, a, slot);
    ok(rv && rv->view_src == big && rv->view_offs == 80 && rv->data == slot->data && rv->src[1] == slot,
       "cpy into a view: the result views the destination's base at its offset");

    struct ggml_tensor *small = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 11);
    ok(ggml_cpy(ctx, a, small) == NULL, "cpy with different element counts is refused");
    logged_one_error("cpy with different element counts logs one error");

    ok(ggml_cpy(ctx, NULL, b) == NULL, "cpy(NULL, b) is NULL");
    ok(ggml_cpy(ctx, a, NULL) == NULL, "cpy(a, NULL) is NULL");
    is_int(tap_log_errors(), 0, "cpy with NULL logs nothing");
}

static void test_cast(void)
{
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    ggml_set_name(a, "x");
    struct ggml_tensor *r = ggml_cast(ctx, a, GGML_TYPE_F16);
    check_new_result(r, a, GGML_OP_CPY, GGML_TYPE_F16, "cast to f16");
    check_ne(r, 4, 3, 2, 1, "cast to f16");
    check_nb(r, 2, 8, 24, 48, "cast to f16");
    if (r) {
        is_ptr(r->src[1], r, "cast: src[1] is the result itself, as for a copy");
        is_str(r->name, "x (copy)", "cast: named after its source");
    }

    struct ggml_tensor *t = ggml_transpose(ctx, a);
    struct ggml_tensor *rt = ggml_cast(ctx, t, GGML_TYPE_F32);
    check_new_result(rt, t, GGML_OP_CPY, GGML_TYPE_F32, "cast of a transposed view");
    check_ne(rt, 3, 4, 2, 1, "cast of a transposed view");
    is_int(tap_log_errors(), 0, "valid casts log no error");

    ok(ggml_cast(ctx, a, GGML_TYPE_COUNT) == NULL, "cast to GGML_TYPE_COUNT is refused");
    logged_one_error("cast to an invalid type logs one error");

    ok(ggml_cast(ctx, NULL, GGML_TYPE_F16) == NULL, "cast(NULL) is NULL");
    is_int(tap_log_errors(), 0, "cast(NULL) logs nothing");
}

static void test_dup(void)
{
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *t = ggml_transpose(ctx, m);

    struct ggml_tensor *d = ggml_dup(ctx, t);
    check_new_result(d, t, GGML_OP_DUP, GGML_TYPE_F32, "dup");
    check_ne(d, 3, 4, 1, 1, "dup");
    check_nb(d, 4, 12, 48, 48, "dup");

    struct ggml_tensor *di = ggml_dup_inplace(ctx, m);
    check_view_of(di, m, m, 0, GGML_OP_DUP, "dup_inplace");
    ok(di && ggml_are_same_shape(di, m) && ggml_are_same_stride(di, m), "dup_inplace keeps the layout");

    struct ggml_tensor *dt = ggml_dup_inplace(ctx, t);
    check_view_of(dt, t, m, 0, GGML_OP_DUP, "dup_inplace of a transposed view");
    ok(dt && ggml_are_same_stride(dt, t), "dup_inplace of a view keeps its strides");
    is_int(tap_log_errors(), 0, "dups log no error");

    ok(ggml_dup(ctx, NULL) == NULL, "dup(NULL) is NULL");
    ok(ggml_dup_inplace(ctx, NULL) == NULL, "dup_inplace(NULL) is NULL");
    is_int(tap_log_errors(), 0, "dups of NULL log nothing");
}

/* ------------------------------------------------- chains and no_alloc */

static void test_null_chain(void)
{
    /* One bad call, then a chain of constructors: exactly one message. */
    struct ggml_tensor *a = new_base("chain");
    struct ggml_tensor *x = ggml_reshape_2d(ctx, a, 5, 5);
    x = ggml_transpose(ctx, x);
    x = ggml_cont(ctx, x);
    x = ggml_permute(ctx, x, 1, 0, 2, 3);
    x = ggml_view_1d(ctx, x, 2, 0);
    x = ggml_cpy(ctx, x, a);
    x = ggml_cast(ctx, x, GGML_TYPE_F16);
    x = ggml_dup(ctx, x);
    x = ggml_reshape_1d(ctx, x, 48);
    ok(x == NULL, "a chain built on a failed call ends in NULL");
    logged_one_error("the whole chain logs exactly one error");
}

static void test_no_alloc(void)
{
    struct ggml_init_params params = { 1 << 20, NULL, true };
    struct ggml_context *meta = ggml_init(params);
    ok(meta != NULL, "no_alloc context");
    if (!meta)
        return;
    struct ggml_tensor *a = ggml_new_tensor_2d(meta, GGML_TYPE_F32, 8, 4);
    struct ggml_tensor *v = ggml_view_2d(meta, a, 4, 4, a->nb[1], 16);
    ok(v && v->data == NULL && v->view_src == a && v->view_offs == 16, "a view in a no_alloc context has no data");
    struct ggml_tensor *r = ggml_reshape_1d(meta, a, 32);
    ok(r && r->data == NULL && r->view_src == a, "a reshape in a no_alloc context has no data");
    struct ggml_tensor *c = ggml_cont(meta, v);
    ok(c && c->data == NULL && c->view_src == NULL, "a cont in a no_alloc context has no data");
    is_int(tap_log_errors(), 0, "no_alloc views log no error");
    ggml_free(meta);

    /* A full context refuses a view like any other tensor. */
    struct ggml_init_params tiny = { ggml_tensor_overhead(), NULL, true };
    meta = ggml_init(tiny);
    if (meta) {
        struct ggml_tensor *only = ggml_new_tensor_1d(meta, GGML_TYPE_F32, 4);
        ok(only != NULL, "one tensor fits a context of one overhead");
        ok(ggml_view_1d(meta, only, 2, 0) == NULL, "a view in a full context is refused");
        logged_one_error("a view in a full context logs one error");
        ok(ggml_transpose(meta, only) == NULL, "a transpose in a full context is refused");
        logged_one_error("a transpose in a full context logs one error");
        ggml_free(meta);
    }
}

/* ggml_is_view: true exactly for tensors that alias another's data. */
static void test_is_view(void)
{
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    ok(!ggml_is_view(a), "a new tensor is not a view");
    ok(ggml_is_view(ggml_view_1d(ctx, a, 4, 0)), "ggml_view_1d is a view");
    ok(ggml_is_view(ggml_reshape_1d(ctx, a, 12)), "ggml_reshape_1d is a view");
    ok(ggml_is_view(ggml_transpose(ctx, a)), "ggml_transpose is a view");
    ok(!ggml_is_view(ggml_cont(ctx, a)), "ggml_cont is not a view");
    ok(!ggml_is_view(ggml_dup_tensor(ctx, a)), "ggml_dup_tensor is not a view");
    struct ggml_tensor *vv = ggml_view_1d(ctx, ggml_view_1d(ctx, a, 8, 4 * sizeof(float)), 2, sizeof(float));
    ok(vv && vv->view_src == a && vv->view_offs == 5 * sizeof(float),
       "a view of a view refers to the owner at the summed offset");
    is_int(tap_log_errors(), 0, "no error logged");
    ok(!ggml_is_view(NULL), "ggml_is_view(NULL) is false");
    logged_one_error("ggml_is_view(NULL) logs one error");
}

int main(void)
{
    tap_capture_log();

    struct ggml_init_params params = { 16 * 1024 * 1024, NULL, false };
    ctx = ggml_init(params);
    if (!ok(ctx != NULL, "test context"))
        return tap_done();

    test_views();
    test_is_view();
    test_reshape();
    test_permute();
    test_transpose();
    test_cont();
    test_cpy();
    test_cast();
    test_dup();
    test_null_chain();
    test_no_alloc();

    ggml_free(ctx);
    return tap_done();
}
