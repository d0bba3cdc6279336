/*
 * test-tensor.c - tensor shapes and strides, size queries, shape and layout
 * predicates, names, flags, data access and the element accessors.
 *
 * Expected strides come from the definitions: nb[0] is the size of one
 * element (or block), nb[1] = nb[0] * ne[0] / block size, nb[i] =
 * nb[i-1] * ne[i-1].  Element values are checked through raw memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-cpu.h"
#include "tap.h"

#define F32_SIZE 4
#define F16_SIZE 2
#define I32_SIZE 4
#define Q4_0_BLOCK 32
#define Q4_0_SIZE 18

/* IEEE half-precision encodings of a few exactly representable values. */
#define HALF_1_0  0x3c00
#define HALF_0_5  0x3800
#define HALF_1_5  0x3e00
#define HALF_2_5  0x4100
#define HALF_M2_0 0xc000
#define HALF_M0_75 0xba00

static struct ggml_context *ctx;

static size_t pad_align(size_t n)
{
    return (n + GGML_MEM_ALIGN - 1) / GGML_MEM_ALIGN * GGML_MEM_ALIGN;
}

static float raw_f32(const struct ggml_tensor *t, size_t offset)
{
    float v;
    memcpy(&v, (const char *) t->data + offset, sizeof v);
    return v;
}

static int32_t raw_i32(const struct ggml_tensor *t, size_t offset)
{
    int32_t v;
    memcpy(&v, (const char *) t->data + offset, sizeof v);
    return v;
}

static uint16_t raw_u16(const struct ggml_tensor *t, size_t offset)
{
    uint16_t v;
    memcpy(&v, (const char *) t->data + offset, sizeof v);
    return v;
}

static void put_f32(struct ggml_tensor *t, size_t offset, float v)
{
    memcpy((char *) t->data + offset, &v, sizeof v);
}

static void put_i32(struct ggml_tensor *t, size_t offset, int32_t v)
{
    memcpy((char *) t->data + offset, &v, sizeof v);
}

static void put_u16(struct ggml_tensor *t, size_t offset, uint16_t v)
{
    memcpy((char *) t->data + offset, &v, sizeof v);
}

/* ------------------------------------------------- shapes and strides */

/* Checks ne and nb of a fresh tensor against the definitions. */
static void check_layout(const struct ggml_tensor *t, const char *what, enum ggml_type type,
                         const int64_t ne[4], size_t unit, int64_t block)
{
    ok(t != NULL, "%s created", what);
    if (!t)
        return;
    is_int(t->type, type, "%s type", what);

    size_t nb[4];
    nb[0] = unit;
    nb[1] = unit * (size_t) (ne[0] / block);
    nb[2] = nb[1] * (size_t) ne[1];
    nb[3] = nb[2] * (size_t) ne[2];

    bool ne_ok = true, nb_ok = true;
    for (int i = 0; i < 4; i++) {
        if (t->ne[i] != ne[i])
            ne_ok = false;
        if (t->nb[i] != nb[i])
            nb_ok = false;
    }
    if (!ok(ne_ok, "%s ne", what))
        tap_diag("ne = {%lld,%lld,%lld,%lld}, want {%lld,%lld,%lld,%lld}",
                 (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3],
                 (long long) ne[0], (long long) ne[1], (long long) ne[2], (long long) ne[3]);
    if (!ok(nb_ok, "%s nb", what))
        tap_diag("nb = {%zu,%zu,%zu,%zu}, want {%zu,%zu,%zu,%zu}",
                 t->nb[0], t->nb[1], t->nb[2], t->nb[3], nb[0], nb[1], nb[2], nb[3]);

    int64_t nelements = ne[0] * ne[1] * ne[2] * ne[3];
    size_t nbytes = nb[3] * (size_t) ne[3];
    is_int(ggml_nelements(t), nelements, "%s ggml_nelements", what);
    is_int(ggml_nrows(t), ne[1] * ne[2] * ne[3], "%s ggml_nrows", what);
    is_uint(ggml_nbytes(t), nbytes, "%s ggml_nbytes", what);
    is_uint(ggml_nbytes_pad(t), pad_align(nbytes), "%s ggml_nbytes_pad", what);
    is_uint(ggml_element_size(t), unit, "%s ggml_element_size", what);
    is_int(t->op, GGML_OP_NONE, "%s op is NONE", what);
    ok(t->view_src == NULL && t->view_offs == 0, "%s is not a view", what);
    is_int(t->flags, 0, "%s has no flags", what);
    is_str(t->name, "", "%s has an empty name", what);
    bool no_src = true;
    for (int i = 0; i < GGML_MAX_SRC; i++)
        if (t->src[i])
            no_src = false;
    ok(no_src, "%s has no sources", what);
}

static void test_shapes(void)
{
    const int64_t f32_1[4] = { 10, 1, 1, 1 };
    const int64_t f32_2[4] = { 3, 4, 1, 1 };
    const int64_t f32_3[4] = { 3, 4, 5, 1 };
    const int64_t f32_4[4] = { 3, 4, 5, 6 };
    check_layout(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10), "f32 1d", GGML_TYPE_F32, f32_1, F32_SIZE, 1);
    check_layout(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4), "f32 2d", GGML_TYPE_F32, f32_2, F32_SIZE, 1);
    check_layout(ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 4, 5), "f32 3d", GGML_TYPE_F32, f32_3, F32_SIZE, 1);
    check_layout(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 4, 5, 6), "f32 4d", GGML_TYPE_F32, f32_4, F32_SIZE, 1);
    check_layout(ggml_new_tensor(ctx, GGML_TYPE_F32, 3, f32_3), "f32 ggml_new_tensor(3 dims)", GGML_TYPE_F32,
                 f32_3, F32_SIZE, 1);
    check_layout(ggml_new_tensor(ctx, GGML_TYPE_F32, 4, f32_4), "f32 ggml_new_tensor(4 dims)", GGML_TYPE_F32,
                 f32_4, F32_SIZE, 1);

    const int64_t f16_4[4] = { 5, 3, 2, 2 };
    const int64_t f16_2[4] = { 7, 9, 1, 1 };
    check_layout(ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 5, 3, 2, 2), "f16 4d", GGML_TYPE_F16, f16_4, F16_SIZE, 1);
    check_layout(ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 7, 9), "f16 2d", GGML_TYPE_F16, f16_2, F16_SIZE, 1);

    const int64_t q_1[4] = { 32, 1, 1, 1 };
    const int64_t q_2[4] = { 64, 3, 1, 1 };
    const int64_t q_4[4] = { 128, 2, 3, 2 };
    check_layout(ggml_new_tensor_1d(ctx, GGML_TYPE_Q4_0, 32), "q4_0 1d", GGML_TYPE_Q4_0, q_1, Q4_0_SIZE, Q4_0_BLOCK);
    check_layout(ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 3), "q4_0 2d", GGML_TYPE_Q4_0, q_2, Q4_0_SIZE,
                 Q4_0_BLOCK);
    check_layout(ggml_new_tensor_4d(ctx, GGML_TYPE_Q4_0, 128, 2, 3, 2), "q4_0 4d", GGML_TYPE_Q4_0, q_4,
                 Q4_0_SIZE, Q4_0_BLOCK);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 3);
    if (q)
        is_uint(q->nb[1], 64 / 32 * 18, "q4_0 row stride is ne0/32 blocks of 18 bytes");

    const int64_t i32_3[4] = { 2, 3, 4, 1 };
    const int64_t i32_1[4] = { 17, 1, 1, 1 };
    check_layout(ggml_new_tensor_3d(ctx, GGML_TYPE_I32, 2, 3, 4), "i32 3d", GGML_TYPE_I32, i32_3, I32_SIZE, 1);
    check_layout(ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 17), "i32 1d", GGML_TYPE_I32, i32_1, I32_SIZE, 1);

    is_int(tap_log_errors(), 0, "creating tensors logs no error");
}

static void test_bad_shapes(void)
{
    const int64_t ne[5] = { 4, 4, 4, 4, 4 };
    const int64_t neg[2] = { 4, -1 };
    struct ggml_tensor *t;

    t = ggml_new_tensor(ctx, GGML_TYPE_F32, 0, ne);
    ok(t == NULL, "n_dims 0 is refused");
    logged_one_error("n_dims 0 logs one error");

    t = ggml_new_tensor(ctx, GGML_TYPE_F32, GGML_MAX_DIMS + 1, ne);
    ok(t == NULL, "n_dims GGML_MAX_DIMS+1 is refused");
    logged_one_error("n_dims GGML_MAX_DIMS+1 logs one error");

    t = ggml_new_tensor(ctx, GGML_TYPE_F32, 2, neg);
    ok(t == NULL, "a negative dimension is refused");
    logged_one_error("a negative dimension logs one error");

    t = ggml_new_tensor_1d(ctx, GGML_TYPE_COUNT, 4);
    ok(t == NULL, "GGML_TYPE_COUNT is refused");
    logged_one_error("GGML_TYPE_COUNT logs one error");

    t = ggml_new_tensor_1d(ctx, (enum ggml_type) 4, 4); /* removed Q4_2 */
    ok(t == NULL, "a removed type (4) is refused");
    logged_one_error("a removed type logs one error");

    t = ggml_new_tensor_1d(ctx, (enum ggml_type) -1, 4);
    ok(t == NULL, "type -1 is refused");
    logged_one_error("type -1 logs one error");

    t = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 33, 2);
    ok(t == NULL, "a q4_0 row that is not a whole number of blocks is refused");
    logged_one_error("a partial q4_0 block logs one error");

    /* Empty, but its other extents multiply past int64_t (ne[1] * ne[2] would overflow in any op). */
    t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 0, INT64_MAX / 2, 29, 1);
    ok(t == NULL, "an empty tensor whose other extents overflow when multiplied is refused");
    logged_one_error("an empty tensor with overflowing extents logs one error");
    t = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, INT64_C(1) << 62, 4);
    ok(t == NULL, "a Q4_0 tensor with more than INT64_MAX elements is refused (its bytes would fit)");
    logged_one_error("too many elements logs one error");
    t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 0, INT64_C(1) << 20, 1 << 20, 1);
    ok(t != NULL, "an empty tensor whose extents multiply within int64_t is allowed");
    is_uint(t ? ggml_nbytes(t) : 1, 0, "and holds no bytes");
    is_int(tap_log_errors(), 0, "and logs nothing");

    t = ggml_new_tensor_1d(NULL, GGML_TYPE_F32, 4);
    ok(t == NULL, "a NULL context gives no tensor");
    logged_one_error("a NULL context logs one error");

    t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ok(t != NULL, "the context is usable after the refusals");
}

/* ---------------------------------------------------------- predicates */

static void test_dims_predicates(void)
{
    struct ggml_tensor *scalar = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    struct ggml_tensor *scalar4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1);
    struct ggml_tensor *vec = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    struct ggml_tensor *col = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 1);
    struct ggml_tensor *mat = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    struct ggml_tensor *t3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 1, 5);
    struct ggml_tensor *t4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 2);
    struct ggml_tensor *empty = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 0);
    struct ggml_tensor *empty4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 0);

    is_int(ggml_n_dims(scalar), 1, "ggml_n_dims of a scalar is 1");
    is_int(ggml_n_dims(scalar4), 1, "ggml_n_dims of a 4d scalar is 1");
    is_int(ggml_n_dims(vec), 1, "ggml_n_dims of a vector");
    is_int(ggml_n_dims(col), 1, "ggml_n_dims of [3,1] is 1");
    is_int(ggml_n_dims(mat), 2, "ggml_n_dims of a matrix");
    is_int(ggml_n_dims(t3), 3, "ggml_n_dims of [3,1,5] is 3");
    is_int(ggml_n_dims(t4), 4, "ggml_n_dims of [1,1,1,2] is 4");

    ok(ggml_is_scalar(scalar) && ggml_is_scalar(scalar4), "ggml_is_scalar on scalars");
    ok(!ggml_is_scalar(vec), "a vector is not a scalar");
    ok(ggml_is_vector(vec) && ggml_is_vector(scalar) && ggml_is_vector(col), "ggml_is_vector on [10], [1], [3,1]");
    ok(!ggml_is_vector(mat), "a matrix is not a vector");
    ok(ggml_is_matrix(mat) && ggml_is_matrix(vec), "ggml_is_matrix on a matrix and a vector");
    ok(!ggml_is_matrix(t3), "[3,1,5] is not a matrix");
    ok(ggml_is_3d(t3) && ggml_is_3d(mat), "ggml_is_3d on [3,1,5] and a matrix");
    ok(!ggml_is_3d(t4), "[1,1,1,2] is not 3d");
    ok(ggml_is_empty(empty) && ggml_is_empty(empty4), "ggml_is_empty with a zero dimension");
    ok(!ggml_is_empty(scalar) && !ggml_is_empty(mat), "non-empty tensors are not empty");
    is_int(ggml_nelements(empty), 0, "an empty tensor has no elements");
    is_uint(ggml_nbytes(empty), 0, "an empty tensor has no bytes");
}

struct layout_expect {
    bool contiguous, c1, c2, allocated, channels, rows, transposed, permuted;
};

static void check_predicates(const struct ggml_tensor *t, const char *what, struct layout_expect e)
{
    ok(t != NULL, "%s created", what);
    if (!t)
        return;
    is_int(ggml_is_contiguous(t), e.contiguous, "%s: ggml_is_contiguous", what);
    is_int(ggml_is_contiguous_0(t), e.contiguous, "%s: ggml_is_contiguous_0", what);
    is_int(ggml_is_contiguous_1(t), e.c1, "%s: ggml_is_contiguous_1", what);
    is_int(ggml_is_contiguous_2(t), e.c2, "%s: ggml_is_contiguous_2", what);
    is_int(ggml_is_contiguously_allocated(t), e.allocated, "%s: ggml_is_contiguously_allocated", what);
    is_int(ggml_is_contiguous_channels(t), e.channels, "%s: ggml_is_contiguous_channels", what);
    is_int(ggml_is_contiguous_rows(t), e.rows, "%s: ggml_is_contiguous_rows", what);
    is_int(ggml_is_transposed(t), e.transposed, "%s: ggml_is_transposed", what);
    is_int(ggml_is_permuted(t), e.permuted, "%s: ggml_is_permuted", what);
}

static void test_layout_predicates(void)
{
    /* Plain contiguous 4d tensor: every contiguity holds. */
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 2, 2);
    check_predicates(a, "contiguous [4,3,2,2]",
                     (struct layout_expect) { true, true, true, true, false, true, false, false });

    /* Transposed matrix: ne {3,4}, nb {16,4,48,48}. */
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *mt = ggml_transpose(ctx, m);
    check_predicates(mt, "transposed [4,3]",
                     (struct layout_expect) { false, false, false, true, false, false, true, true });

    /* Channels: memory C=2 x W=4 x H=3, permuted to W x H x C: nb {8,32,4,96}. */
    struct ggml_tensor *chw = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 2, 4, 3);
    struct ggml_tensor *whc = ggml_permute(ctx, chw, 2, 0, 1, 3);
    if (whc) {
        ok(whc->ne[0] == 4 && whc->ne[1] == 3 && whc->ne[2] == 2, "channel permutation shape is [4,3,2]");
        ok(whc->nb[0] == 8 && whc->nb[1] == 32 && whc->nb[2] == 4, "channel permutation strides are {8,32,4}");
    }
    check_predicates(whc, "channels-last permuted",
                     (struct layout_expect) { false, false, false, true, true, false, false, true });

    /* Row slice of a matrix: first 5 of 8 columns, ne {5,4}, nb {4,32,...}. */
    struct ggml_tensor *wide = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4);
    struct ggml_tensor *cols = ggml_view_2d(ctx, wide, 5, 4, wide->nb[1], 0);
    check_predicates(cols, "column slice [5 of 8, 4]",
                     (struct layout_expect) { false, true, true, false, false, true, false, false });

    /* Slice in dimension 1 of a 3d tensor: contiguous only from dim 2 up. */
    struct ggml_tensor *cube = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    struct ggml_tensor *slab = ggml_view_3d(ctx, cube, 4, 2, 2, cube->nb[1], cube->nb[2], 0);
    check_predicates(slab, "row slice [4, 2 of 3, 2]",
                     (struct layout_expect) { false, false, true, false, false, true, false, false });

    /* A contiguous 1d slice in the middle of a tensor is contiguous. */
    struct ggml_tensor *mid = ggml_view_1d(ctx, wide, 10, 3 * F32_SIZE);
    check_predicates(mid, "1d slice",
                     (struct layout_expect) { true, true, true, true, false, true, false, false });

    /* A single column: ne0 is one element, so rows are trivially contiguous. */
    struct ggml_tensor *one_col = ggml_view_2d(ctx, wide, 1, 4, wide->nb[1], 2 * F32_SIZE);
    if (one_col)
        ok(ggml_is_contiguous_rows(one_col), "a one-column view has contiguous rows");

    /* A q4_0 matrix is contiguous in blocks. */
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 4);
    check_predicates(q, "q4_0 [64,4]",
                     (struct layout_expect) { true, true, true, true, false, true, false, false });
    is_int(tap_log_errors(), 0, "layout predicates log no error");
}

/* ggml_is_contiguous_to_1/2/3 of t: want1..want3. */
static void check_contiguous_to(const struct ggml_tensor *t, const char *what, bool want1, bool want2, bool want3)
{
    if (!ok(t != NULL, "%s created", what))
        return;
    is_int(ggml_is_contiguous_to_1(t), want1, "%s: ggml_is_contiguous_to_1", what);
    is_int(ggml_is_contiguous_to_2(t), want2, "%s: ggml_is_contiguous_to_2", what);
    is_int(ggml_is_contiguous_to_3(t), want3, "%s: ggml_is_contiguous_to_3", what);
}

/* The low dimensions only: dense up to dimension 1, 2 or 3, whatever lies above. */
static void test_contiguous_to(void)
{
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 2, 2);
    check_contiguous_to(a, "contiguous [4,3,2,2]", true, true, true);
    check_contiguous_to(ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3)), "transposed [4,3]",
                        false, false, false);
    struct ggml_tensor *wide = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4);
    check_contiguous_to(ggml_view_2d(ctx, wide, 5, 4, wide->nb[1], 0), "column slice [5 of 8, 4]", true, false,
                        false);
    struct ggml_tensor *cube = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    check_contiguous_to(ggml_view_3d(ctx, cube, 4, 2, 2, cube->nb[1], cube->nb[2], 0), "row slice [4, 2 of 3, 2]",
                        true, true, false);
    /* whole [4,3,2] blocks, 2 of them 5 blocks' worth of bytes apart */
    struct ggml_tensor *big = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 5, 2);
    struct ggml_tensor *blocks = ggml_view_4d(ctx, big, 4, 3, 2, 2, big->nb[1], big->nb[2], big->nb[3], 0);
    check_contiguous_to(blocks, "[4,3,2] blocks of a [4,3,5,2]", true, true, true);
    ok(blocks && !ggml_is_contiguous(blocks) && !ggml_is_contiguous_2(blocks),
       "... which is not contiguous as a whole, nor from dimension 2");
    /* dimensions of extent 1 never break it, whatever their stride */
    struct ggml_tensor *ones = ggml_view_4d(ctx, big, 4, 1, 1, 2, 999 * F32_SIZE, 77 * F32_SIZE, big->nb[3], 0);
    check_contiguous_to(ones, "[4,1,1,2] with odd strides in the unit dimensions", true, true, true);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 4);
    check_contiguous_to(q, "q4_0 [64,4]", true, true, true);
    check_contiguous_to(ggml_view_2d(ctx, q, 32, 4, q->nb[1], 0), "q4_0 first block of each row", true, false,
                        false);
    is_int(tap_log_errors(), 0, "contiguous_to predicates log no error");
}

static void test_same_and_repeat(void)
{
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 3);
    struct ggml_tensor *c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    struct ggml_tensor *ct = ggml_transpose(ctx, c);
    struct ggml_tensor *d = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);

    ok(ggml_are_same_shape(a, b), "equal shapes are the same shape");
    ok(ggml_are_same_stride(a, b), "equal layouts have the same stride");
    ok(ggml_are_same_shape(a, h), "shape ignores the type");
    ok(!ggml_are_same_stride(a, h), "f32 and f16 strides differ");
    ok(ggml_are_same_shape(a, ct), "a transposed [3,4] has shape [4,3]");
    ok(!ggml_are_same_stride(a, ct), "... but different strides");
    ok(!ggml_are_same_shape(a, c), "[4,3] and [3,4] differ");
    ok(!ggml_are_same_shape(a, d), "[4,3] and [4,3,2] differ");

    struct ggml_tensor *r0 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 3);
    struct ggml_tensor *r1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 6);
    struct ggml_tensor *r2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5);
    struct ggml_tensor *r3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 6, 2, 3);
    struct ggml_tensor *e0 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 3);
    struct ggml_tensor *e1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 0);

    ok(ggml_can_repeat(r0, r1), "[1,3] repeats into [4,6]");
    ok(!ggml_can_repeat(r0, r2), "[1,3] does not repeat into [4,5]");
    ok(ggml_can_repeat(r0, r3), "[1,3] repeats into [4,6,2,3]");
    ok(!ggml_can_repeat(r1, r0), "[4,6] does not repeat into [1,3]");
    ok(ggml_can_repeat(a, a), "a tensor repeats into itself");
    ok(ggml_can_repeat(e0, e1), "an empty tensor repeats into an empty tensor");
    ok(!ggml_can_repeat(e0, r1), "an empty tensor does not repeat into a non-empty one");
}

/* ------------------------------------------------------- names, copies */

static void test_names(void)
{
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    is_str(ggml_get_name(t), "", "a new tensor has an empty name");
    is_ptr(ggml_set_name(t, "weights"), t, "ggml_set_name returns the tensor");
    is_str(ggml_get_name(t), "weights", "ggml_get_name after ggml_set_name");
    is_ptr(ggml_get_name(t), t->name, "ggml_get_name returns the name field");

    char long_name[200];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    long_name[0] = 'L';
    ggml_set_name(t, long_name);
    is_uint(strlen(ggml_get_name(t)), GGML_MAX_NAME - 1, "a long name is cut to GGML_MAX_NAME-1 chars");
    ok(strncmp(ggml_get_name(t), long_name, GGML_MAX_NAME - 1) == 0, "the cut name is the prefix");

    char exact[GGML_MAX_NAME];
    memset(exact, 'e', GGML_MAX_NAME - 1);
    exact[GGML_MAX_NAME - 1] = '\0';
    ggml_set_name(t, exact);
    is_str(ggml_get_name(t), exact, "a name of exactly GGML_MAX_NAME-1 chars is kept whole");

    is_ptr(ggml_format_name(t, "layer%d.%s", 12, "attn"), t, "ggml_format_name returns the tensor");
    is_str(ggml_get_name(t), "layer12.attn", "ggml_format_name formats");
    ggml_format_name(t, "%s-%s", long_name, "tail");
    is_uint(strlen(ggml_get_name(t)), GGML_MAX_NAME - 1, "a long formatted name is cut to GGML_MAX_NAME-1");
    ok(strncmp(ggml_get_name(t), long_name, GGML_MAX_NAME - 1) == 0, "the cut formatted name is the prefix");
    ggml_set_name(t, "");
    is_str(ggml_get_name(t), "", "a name can be cleared");
}

static void test_dup_and_view_tensor(void)
{
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 5, 4, 3);
    ggml_set_name(a, "src");

    struct ggml_tensor *d = ggml_dup_tensor(ctx, a);
    const int64_t ne[4] = { 5, 4, 3, 1 };
    check_layout(d, "ggml_dup_tensor", GGML_TYPE_F16, ne, F16_SIZE, 1);
    if (d)
        ok(d->data != NULL && d->data != a->data, "the duplicate has its own data");

    /* A duplicate of a transposed view is contiguous with the view's shape. */
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 2);
    struct ggml_tensor *mt = ggml_transpose(ctx, m);
    struct ggml_tensor *md = ggml_dup_tensor(ctx, mt);
    const int64_t ne_t[4] = { 2, 6, 1, 1 };
    check_layout(md, "ggml_dup_tensor of a transposed view", GGML_TYPE_F32, ne_t, F32_SIZE, 1);

    struct ggml_tensor *v = ggml_view_tensor(ctx, a);
    ok(v != NULL, "ggml_view_tensor");
    if (v) {
        ok(v->type == a->type, "the view keeps the type");
        ok(memcmp(v->ne, a->ne, sizeof v->ne) == 0 && memcmp(v->nb, a->nb, sizeof v->nb) == 0,
           "the view keeps shape and strides");
        is_ptr(v->data, a->data, "the view shares the data");
        is_ptr(v->view_src, a, "view_src is the source");
        is_uint(v->view_offs, 0, "view_offs is 0");
        is_str(v->name, "src (view)", "the view is named after its source");
    }

    /* A view of a view points at the original tensor with the summed offset. */
    struct ggml_tensor *big = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 32);
    struct ggml_tensor *part = ggml_view_1d(ctx, big, 16, 8 * F32_SIZE);
    struct ggml_tensor *vv = ggml_view_tensor(ctx, part);
    ok(vv != NULL, "ggml_view_tensor of a view");
    if (vv) {
        is_ptr(vv->view_src, big, "a view of a view refers to the base tensor");
        is_uint(vv->view_offs, 8 * F32_SIZE, "and carries the offset");
        is_ptr(vv->data, (char *) big->data + 8 * F32_SIZE, "and points at the offset data");
    }
    is_int(tap_log_errors(), 0, "dup/view tensor log no error");
}

/* --------------------------------------------------------------- flags */

static void test_flags(void)
{
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 3);
    is_int(t->flags, 0, "a new tensor has no flags");
    ggml_set_input(t);
    is_int(t->flags, GGML_TENSOR_FLAG_INPUT, "ggml_set_input");
    ggml_set_output(t);
    is_int(t->flags, GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT, "ggml_set_output adds to input");
    ggml_set_param(t);
    is_int(t->flags, GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_PARAM,
           "ggml_set_param adds the param flag");

    struct ggml_tensor *loss = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    ggml_set_loss(loss);
    is_int(loss->flags, GGML_TENSOR_FLAG_LOSS, "ggml_set_loss on an f32 scalar");
    is_int(tap_log_errors(), 0, "setting flags logs no error");

    /* Misuse: loss must be an f32 scalar, params must be leaves. */
    struct ggml_tensor *vec = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_loss(vec);
    logged_one_error("ggml_set_loss on a vector logs one error");
    ok(!(vec->flags & GGML_TENSOR_FLAG_LOSS), "... and does not set the flag");

    struct ggml_tensor *h = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 1);
    ggml_set_loss(h);
    logged_one_error("ggml_set_loss on an f16 scalar logs one error");
    ok(!(h->flags & GGML_TENSOR_FLAG_LOSS), "... and does not set the flag");

    struct ggml_tensor *op = ggml_cont(ctx, t);
    ggml_set_param(op);
    logged_one_error("ggml_set_param on an op result logs one error");
    ok(op && !(op->flags & GGML_TENSOR_FLAG_PARAM), "... and does not set the flag");
}

/* ---------------------------------------------------------------- data */

static void test_data_pointers(void)
{
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    is_ptr(ggml_get_data(t), t->data, "ggml_get_data returns the data pointer");
    is_ptr(ggml_get_data_f32(t), t->data, "ggml_get_data_f32 returns the data pointer");

    struct ggml_init_params params = { 1 << 16, NULL, true };
    struct ggml_context *meta = ggml_init(params);
    struct ggml_tensor *m = meta ? ggml_new_tensor_1d(meta, GGML_TYPE_F32, 8) : NULL;
    ok(m && ggml_get_data(m) == NULL, "a no_alloc tensor has no data");
    ggml_free(meta);
}

static void test_unravel(void)
{
    struct ggml_tensor *t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 4, 5, 6);
    int64_t i0 = -1, i1 = -1, i2 = -1, i3 = -1;

    ggml_unravel_index(t, 0, &i0, &i1, &i2, &i3);
    ok(i0 == 0 && i1 == 0 && i2 == 0 && i3 == 0, "index 0 is (0,0,0,0)");

    int64_t flat = 1 + 3 * (2 + 4 * (3 + 5 * 4));
    ggml_unravel_index(t, flat, &i0, &i1, &i2, &i3);
    ok(i0 == 1 && i1 == 2 && i2 == 3 && i3 == 4, "index %lld is (1,2,3,4), got (%lld,%lld,%lld,%lld)",
       (long long) flat, (long long) i0, (long long) i1, (long long) i2, (long long) i3);

    ggml_unravel_index(t, 3 * 4 * 5 * 6 - 1, &i0, &i1, &i2, &i3);
    ok(i0 == 2 && i1 == 3 && i2 == 4 && i3 == 5, "the last index is (2,3,4,5)");

    i0 = i3 = -7;
    ggml_unravel_index(t, 3 * 4 + 2, NULL, &i1, &i2, NULL);
    ok(i1 == 0 && i2 == 1 && i0 == -7 && i3 == -7, "NULL outputs are skipped");

    bool all = true;
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
        if (i0 + 3 * (i1 + 4 * (i2 + 5 * i3)) != i)
            all = false;
    }
    ok(all, "every index of [3,4,5,6] unravels and re-ravels to itself");
}

/* ----------------------------------------------------------- accessors */

static void test_new_scalars(void)
{
    struct ggml_tensor *i = ggml_new_i32(ctx, -7);
    ok(i != NULL, "ggml_new_i32");
    if (i) {
        is_int(i->type, GGML_TYPE_I32, "ggml_new_i32 type");
        ok(ggml_is_scalar(i), "ggml_new_i32 is a scalar");
        is_int(raw_i32(i, 0), -7, "ggml_new_i32 stores the value");
    }
    struct ggml_tensor *f = ggml_new_f32(ctx, 2.5f);
    ok(f != NULL, "ggml_new_f32");
    if (f) {
        is_int(f->type, GGML_TYPE_F32, "ggml_new_f32 type");
        ok(ggml_is_scalar(f), "ggml_new_f32 is a scalar");
        is_near(raw_f32(f, 0), 2.5, 0, "ggml_new_f32 stores the value");
    }
    is_int(tap_log_errors(), 0, "new scalars log no error");

    struct ggml_init_params params = { 1 << 16, NULL, true };
    struct ggml_context *meta = ggml_init(params);
    if (meta) {
        /* as upstream: the value gets data even in a no_alloc context */
        struct ggml_tensor *mi = ggml_new_i32(meta, 7);
        ok(mi != NULL && mi->data != NULL, "ggml_new_i32 in a no_alloc context has data");
        if (mi && mi->data)
            is_int(*(int32_t *) mi->data, 7, "ggml_new_i32 in a no_alloc context stores the value");
        struct ggml_tensor *mf = ggml_new_f32(meta, -1.5f);
        ok(mf != NULL && mf->data != NULL, "ggml_new_f32 in a no_alloc context has data");
        if (mf && mf->data)
            is_near(*(float *) mf->data, -1.5, 0, "ggml_new_f32 in a no_alloc context stores the value");
        ok(ggml_get_no_alloc(meta), "the context stays no_alloc afterwards");
        struct ggml_tensor *after = ggml_new_tensor_1d(meta, GGML_TYPE_F32, 4);
        ok(after != NULL && after->data == NULL, "later tensors get no data");
        is_int(tap_log_errors(), 0, "no error logged");
        ggml_free(meta);
    }
}

static void test_set_whole(void)
{
    struct ggml_tensor *i = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 4);
    is_ptr(ggml_set_i32(i, 5), i, "ggml_set_i32 returns the tensor");
    bool all = true;
    for (int k = 0; k < 12; k++)
        if (raw_i32(i, (size_t) k * I32_SIZE) != 5)
            all = false;
    ok(all, "ggml_set_i32 sets every i32 element");

    struct ggml_tensor *f = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 2);
    ggml_set_i32(f, 7);
    all = true;
    for (int k = 0; k < 12; k++)
        if (raw_f32(f, (size_t) k * F32_SIZE) != 7.0f)
            all = false;
    ok(all, "ggml_set_i32 on f32 stores 7.0f everywhere");

    is_ptr(ggml_set_f32(f, -1.5f), f, "ggml_set_f32 returns the tensor");
    all = true;
    for (int k = 0; k < 12; k++)
        if (raw_f32(f, (size_t) k * F32_SIZE) != -1.5f)
            all = false;
    ok(all, "ggml_set_f32 sets every f32 element");

    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 3);
    ggml_set_f32(h, 2.5f);
    all = true;
    for (int k = 0; k < 15; k++)
        if (raw_u16(h, (size_t) k * F16_SIZE) != HALF_2_5)
            all = false;
    ok(all, "ggml_set_f32 on f16 stores the half encoding of 2.5");

    ggml_set_f32(i, 3.0f);
    all = true;
    for (int k = 0; k < 12; k++)
        if (raw_i32(i, (size_t) k * I32_SIZE) != 3)
            all = false;
    ok(all, "ggml_set_f32 on i32 stores 3");

    /* A row-strided view: only the viewed elements change. */
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 4);
    ggml_set_f32(m, 0.0f);
    struct ggml_tensor *v = ggml_view_2d(ctx, m, 2, 4, m->nb[1], 1 * F32_SIZE);
    ggml_set_f32(v, 9.0f);
    all = true;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++) {
            float want = (c == 1 || c == 2) ? 9.0f : 0.0f;
            if (raw_f32(m, (size_t) (r * 6 + c) * F32_SIZE) != want)
                all = false;
        }
    ok(all, "ggml_set_f32 on a column view changes only columns 1..2");
    is_int(tap_log_errors(), 0, "whole-tensor setters log no error");
}

static void test_accessors_contiguous(void)
{
    /* f32 */
    struct ggml_tensor *f = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 4, 5, 2);
    ggml_set_zero(f);
    ggml_set_f32_1d(f, 17, 4.25f);
    is_near(raw_f32(f, 17 * F32_SIZE), 4.25, 0, "ggml_set_f32_1d writes element 17");
    put_f32(f, 30 * F32_SIZE, -8.5f);
    is_near(ggml_get_f32_1d(f, 30), -8.5, 0, "ggml_get_f32_1d reads element 30");

    size_t off = 1 * 4 + 2 * 12 + 3 * 48 + 1 * 240; /* nb = {4,12,48,240} */
    ggml_set_f32_nd(f, 1, 2, 3, 1, 9.5f);
    is_near(raw_f32(f, off), 9.5, 0, "ggml_set_f32_nd writes at i0*nb0+...+i3*nb3");
    put_f32(f, 2 * 4 + 3 * 12 + 4 * 48 + 0 * 240, 6.0f);
    is_near(ggml_get_f32_nd(f, 2, 3, 4, 0), 6.0, 0, "ggml_get_f32_nd reads at the strided offset");
    is_near(ggml_get_f32_1d(f, 1 + 3 * (2 + 4 * (3 + 5 * 1))), 9.5, 0, "the 1d index of (1,2,3,1) sees the nd write");
    ggml_set_i32_1d(f, 5, 42);
    is_near(raw_f32(f, 5 * F32_SIZE), 42.0, 0, "ggml_set_i32_1d on f32 converts");
    is_int(ggml_get_i32_1d(f, 17), 4, "ggml_get_i32_1d on f32 truncates 4.25 to 4");
    ggml_set_i32_nd(f, 0, 1, 0, 1, -3);
    is_near(raw_f32(f, 12 + 240), -3.0, 0, "ggml_set_i32_nd on f32 converts");
    is_int(ggml_get_i32_nd(f, 0, 1, 0, 1), -3, "ggml_get_i32_nd on f32");

    /* f16 */
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 3);
    ggml_set_zero(h);
    ggml_set_f32_1d(h, 6, 0.5f);
    is_uint(raw_u16(h, 6 * F16_SIZE), HALF_0_5, "ggml_set_f32_1d on f16 stores the half encoding");
    put_u16(h, 9 * F16_SIZE, HALF_M0_75);
    is_near(ggml_get_f32_1d(h, 9), -0.75, 0, "ggml_get_f32_1d on f16 decodes");
    ggml_set_f32_nd(h, 3, 2, 0, 0, 1.5f);
    is_uint(raw_u16(h, 3 * 2 + 2 * 8), HALF_1_5, "ggml_set_f32_nd on f16");
    is_near(ggml_get_f32_nd(h, 3, 2, 0, 0), 1.5, 0, "ggml_get_f32_nd on f16");
    ggml_set_i32_1d(h, 0, -2);
    is_uint(raw_u16(h, 0), HALF_M2_0, "ggml_set_i32_1d on f16 stores -2.0");
    is_int(ggml_get_i32_1d(h, 0), -2, "ggml_get_i32_1d on f16");
    ggml_set_i32_nd(h, 1, 1, 0, 0, 1);
    is_uint(raw_u16(h, 1 * 2 + 1 * 8), HALF_1_0, "ggml_set_i32_nd on f16 stores 1.0");

    /* i32 */
    struct ggml_tensor *i = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, 2, 3, 4);
    ggml_set_zero(i);
    ggml_set_i32_1d(i, 11, 123456);
    is_int(raw_i32(i, 11 * I32_SIZE), 123456, "ggml_set_i32_1d on i32");
    put_i32(i, 20 * I32_SIZE, -99);
    is_int(ggml_get_i32_1d(i, 20), -99, "ggml_get_i32_1d on i32");
    ggml_set_i32_nd(i, 1, 2, 3, 0, 77);
    is_int(raw_i32(i, 1 * 4 + 2 * 8 + 3 * 24), 77, "ggml_set_i32_nd on i32 (nb = {4,8,24})");
    is_int(ggml_get_i32_nd(i, 1, 2, 3, 0), 77, "ggml_get_i32_nd on i32");
    ggml_set_f32_1d(i, 3, 3.0f);
    is_int(raw_i32(i, 3 * I32_SIZE), 3, "ggml_set_f32_1d on i32 converts");
    is_near(ggml_get_f32_1d(i, 11), 123456.0, 0, "ggml_get_f32_1d on i32 converts");
    ggml_set_f32_nd(i, 0, 1, 1, 0, -5.0f);
    is_int(raw_i32(i, 8 + 24), -5, "ggml_set_f32_nd on i32");
    is_near(ggml_get_f32_nd(i, 0, 1, 1, 0), -5.0, 0, "ggml_get_f32_nd on i32");
    is_int(tap_log_errors(), 0, "accessors log no error");
}

static void test_accessors_views(void)
{
    /* Base 6 x 4 f32 holding its own flat index. */
    struct ggml_tensor *base = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 4);
    for (int k = 0; k < 24; k++)
        put_f32(base, (size_t) k * F32_SIZE, (float) k);

    /* Transposed: element (i0,i1) of the view is base[i0*6 + i1]. */
    struct ggml_tensor *tv = ggml_transpose(ctx, base);
    bool nd_ok = true, flat_ok = true;
    for (int i1 = 0; i1 < 6; i1++)
        for (int i0 = 0; i0 < 4; i0++)
            if (ggml_get_f32_nd(tv, i0, i1, 0, 0) != (float) (i0 * 6 + i1))
                nd_ok = false;
    for (int k = 0; k < 24; k++)
        if (ggml_get_f32_1d(tv, k) != (float) ((k % 4) * 6 + k / 4))
            flat_ok = false;
    ok(nd_ok, "ggml_get_f32_nd follows the strides of a transposed view");
    ok(flat_ok, "ggml_get_f32_1d on a transposed view walks it in logical order");

    ggml_set_f32_1d(tv, 5, -1.0f); /* (1,1) -> base[7] */
    is_near(raw_f32(base, 7 * F32_SIZE), -1.0, 0, "ggml_set_f32_1d on a transposed view writes base[7]");
    ggml_set_f32_nd(tv, 3, 2, 0, 0, -2.0f); /* base[20] */
    is_near(raw_f32(base, 20 * F32_SIZE), -2.0, 0, "ggml_set_f32_nd on a transposed view writes base[20]");
    ggml_set_i32_1d(tv, 2, 1000); /* (2,0) -> base[12] */
    is_near(raw_f32(base, 12 * F32_SIZE), 1000.0, 0, "ggml_set_i32_1d on a transposed view writes base[12]");
    is_int(ggml_get_i32_1d(tv, 8), 2, "ggml_get_i32_1d on a transposed view: (0,2) is base[2]");

    /* Columns 2..4 of every row: element (i0,i1) is base[2 + i0 + 6*i1]. */
    struct ggml_tensor *cols = ggml_view_2d(ctx, base, 3, 4, base->nb[1], 2 * F32_SIZE);
    ok(cols && !ggml_is_contiguous(cols), "the column view is not contiguous");
    ggml_set_f32_1d(cols, 4, 55.0f); /* (1,1) -> base[9] */
    is_near(raw_f32(base, 9 * F32_SIZE), 55.0, 0, "ggml_set_f32_1d on a column view writes base[9]");
    is_near(ggml_get_f32_1d(cols, 10), 21.0, 0, "ggml_get_f32_1d on a column view: (1,3) is base[21]");
    is_near(ggml_get_f32_nd(cols, 0, 2, 0, 0), 14.0, 0, "ggml_get_f32_nd on a column view: (0,2) is base[14]");

    /* i32 through a permuted 3d view. */
    struct ggml_tensor *ib = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, 2, 3, 4);
    for (int k = 0; k < 24; k++)
        put_i32(ib, (size_t) k * I32_SIZE, k * 10);
    struct ggml_tensor *ip = ggml_permute(ctx, ib, 2, 0, 1, 3); /* ne {3,4,2}, nb {8,24,4} */
    ok(ip && ip->ne[0] == 3 && ip->ne[1] == 4 && ip->ne[2] == 2, "permuted i32 view has shape [3,4,2]");
    /* view (a,b,c) = base (c,a,b) = flat c + 2*(a + 3*b) */
    is_int(ggml_get_i32_nd(ip, 2, 1, 1, 0), (1 + 2 * (2 + 3 * 1)) * 10, "ggml_get_i32_nd on a permuted view");
    /* flat 13 of [3,4,2]: a=1, b=0, c=1 -> base 1 + 2*1 = 3 */
    is_int(ggml_get_i32_1d(ip, 13), 30, "ggml_get_i32_1d on a permuted view");
    ggml_set_i32_nd(ip, 0, 3, 0, 0, -4); /* base 0 + 2*(0+9) = 18 */
    is_int(raw_i32(ib, 18 * I32_SIZE), -4, "ggml_set_i32_nd on a permuted view writes base[18]");
    ggml_set_i32_1d(ip, 23, 8); /* a=2,b=3,c=1 -> 1 + 2*(2+9) = 23 */
    is_int(raw_i32(ib, 23 * I32_SIZE), 8, "ggml_set_i32_1d on a permuted view writes base[23]");

    /* f16 through a transposed view. */
    struct ggml_tensor *hb = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 2);
    ggml_set_zero(hb);
    struct ggml_tensor *ht = ggml_transpose(ctx, hb); /* ne {2,3} */
    ggml_set_f32_1d(ht, 3, 1.5f); /* (1,1) -> hb[1*3 + 1] = hb[4] */
    is_uint(raw_u16(hb, 4 * F16_SIZE), HALF_1_5, "ggml_set_f32_1d on a transposed f16 view");
    put_u16(hb, 2 * F16_SIZE, HALF_0_5); /* hb[2] = view (0,2) = flat 4 */
    is_near(ggml_get_f32_1d(ht, 4), 0.5, 0, "ggml_get_f32_1d on a transposed f16 view");
    is_int(tap_log_errors(), 0, "view accessors log no error");
}

static void test_set_zero(void)
{
    struct ggml_tensor *t = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 5, 3, 2);
    memset(t->data, 0xff, 30 * F32_SIZE);
    is_ptr(ggml_set_zero(t), t, "ggml_set_zero returns the tensor");
    bool zero = true;
    for (size_t k = 0; k < 30 * F32_SIZE; k++)
        if (((unsigned char *) t->data)[k] != 0)
            zero = false;
    ok(zero, "ggml_set_zero clears every byte");

    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 2);
    memset(q->data, 0x11, 4 * Q4_0_SIZE);
    ggml_set_zero(q);
    zero = true;
    for (size_t k = 0; k < 4 * Q4_0_SIZE; k++)
        if (((unsigned char *) q->data)[k] != 0)
            zero = false;
    ok(zero, "ggml_set_zero clears a q4_0 tensor");

    struct ggml_tensor *e = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 3);
    is_ptr(ggml_set_zero(e), e, "ggml_set_zero on an empty tensor is harmless");
    is_int(tap_log_errors(), 0, "ggml_set_zero logs no error");
}

int main(void)
{
    tap_capture_log();

    struct ggml_init_params params = { 16 * 1024 * 1024, NULL, false };
    ctx = ggml_init(params);
    if (!ok(ctx != NULL, "test context"))
        return tap_done();

    test_shapes();
    test_bad_shapes();
    test_dims_predicates();
    test_layout_predicates();
    test_contiguous_to();
    test_same_and_repeat();
    test_names();
    test_dup_and_view_tensor();
    test_flags();
    test_data_pointers();
    test_unravel();
    test_new_scalars();
    test_set_whole();
    test_accessors_contiguous();
    test_accessors_views();
    test_set_zero();

    ggml_free(ctx);
    return tap_done();
}
