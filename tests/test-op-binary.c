/*
 * test-op-binary.c - ADD, SUB, MUL, DIV: broadcasting, types, non-contiguous
 * inputs, in-place forms, thread counts, reference and fast kernels, and
 * the constructors' error paths.
 *
 * The reference is computed here in double precision from the inputs as
 * stored (so F16/BF16 inputs are compared after their own rounding).
 */
#include <stdio.h>

#include "tap.h"
#include "op-test.h"

typedef struct ggml_tensor *(*binary_ctor)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);

static const struct {
    const char *name;
    binary_ctor make;
    binary_ctor make_inplace;
    enum ggml_op op;
} ops[] = {
    { "add", ggml_add, ggml_add_inplace, GGML_OP_ADD },
    { "sub", ggml_sub, ggml_sub_inplace, GGML_OP_SUB },
    { "mul", ggml_mul, ggml_mul_inplace, GGML_OP_MUL },
    { "div", ggml_div, ggml_div_inplace, GGML_OP_DIV },
};

static double reference_op(enum ggml_op op, double x, double y)
{
    switch (op) {
    case GGML_OP_ADD: return x + y;
    case GGML_OP_SUB: return x - y;
    case GGML_OP_MUL: return x * y;
    default:          return x / y;
    }
}

/* expected[i] for every element of a (row-major in a's shape), b broadcast */
static double *reference(enum ggml_op op, const struct ggml_tensor *a, const struct ggml_tensor *b)
{
    double *ref = malloc((size_t) ggml_nelements(a) * sizeof *ref);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++)
                    ref[k++] = reference_op(op, optest_get(a, i0, i1, i2, i3),
                                            optest_get(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2],
                                                       i3 % b->ne[3]));
    return ref;
}

/* Tolerance: F32 results are exact to rounding; 16-bit results carry their own rounding. */
static double threshold(enum ggml_type type)
{
    return type == GGML_TYPE_F32 ? 1e-12 : type == GGML_TYPE_F16 ? 1e-6 : 1e-4;
}

static void check_case(struct ggml_context *ctx, int op_index, enum ggml_type ta, enum ggml_type tb,
                       const int64_t ne_a[4], const int64_t ne_b[4], bool transposed, uint64_t *seed)
{
    struct ggml_tensor *a = ggml_new_tensor(ctx, ta, 4, ne_a);
    struct ggml_tensor *b = ggml_new_tensor(ctx, tb, 4, ne_b);
    /* divisors kept away from 0 */
    optest_fill(a, seed, -2.0, 2.0);
    optest_fill(b, seed, 0.5, 2.0);
    struct ggml_tensor *a_in = transposed ? ggml_transpose(ctx, a) : a;
    struct ggml_tensor *b_in = b;
    if (transposed && (ne_b[0] != 1 || ne_b[1] != 1))
        b_in = ggml_transpose(ctx, b);
    double *ref = reference(ops[op_index].op, a_in, b_in);

    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            struct ggml_tensor *out = ops[op_index].make(ctx, a_in, b_in);
            enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
            double nmse = optest_nmse(out, ref);
            ok(status == GGML_STATUS_SUCCESS && nmse <= threshold(ta),
               "%s %s x %s [%lld,%lld,%lld,%lld] by [%lld,%lld,%lld,%lld]%s, %d threads, %s: nmse %.3g",
               ops[op_index].name, ggml_type_name(ta), ggml_type_name(tb),
               (long long) out->ne[0], (long long) out->ne[1], (long long) out->ne[2], (long long) out->ne[3],
               (long long) b_in->ne[0], (long long) b_in->ne[1], (long long) b_in->ne[2], (long long) b_in->ne[3],
               transposed ? " transposed" : "", n_threads, use_ref ? "reference" : "fast", nmse);
        }
    }
    free(ref);
}

static void test_numerics(void)
{
    uint64_t seed = 0x5eed0001;
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    const int64_t shapes[][2][4] = {
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 } },
        { { 31, 3, 1, 1 }, { 31, 3, 1, 1 } },
        { { 33, 5, 2, 3 }, { 33, 1, 1, 1 } },       /* row broadcast */
        { { 32, 6, 4, 2 }, { 1, 6, 1, 2 } },        /* scalar per row */
        { { 64, 4, 3, 2 }, { 16, 2, 3, 1 } },       /* repeat along every dim */
        { { 257, 3, 1, 1 }, { 257, 3, 1, 1 } },
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        struct ggml_init_params params = { 64u << 20, NULL, false };
        struct ggml_context *ctx = ggml_init(params);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t ta = 0; ta < 3; ta++)
                check_case(ctx, (int) o, types[ta], types[(ta + s) % 3], shapes[s][0], shapes[s][1], false, &seed);
        const int64_t sq[4] = { 17, 17, 2, 1 }, row[4] = { 1, 1, 1, 1 };
        check_case(ctx, (int) o, GGML_TYPE_F32, GGML_TYPE_F32, sq, sq, true, &seed);
        check_case(ctx, (int) o, GGML_TYPE_F16, GGML_TYPE_F32, sq, row, true, &seed);
        ggml_free(ctx);
    }
}

static void test_inplace_and_errors(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    uint64_t seed = 7;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 3);
        struct ggml_tensor *b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
        optest_fill(a, &seed, -1.0, 1.0);
        optest_fill(b, &seed, 0.5, 1.5);
        double ref[24];
        for (int i = 0; i < 24; i++)
            ref[i] = reference_op(ops[o].op, optest_get(a, i % 8, i / 8, 0, 0), optest_get(b, i % 8, 0, 0, 0));
        struct ggml_tensor *r = ops[o].make_inplace(ctx, a, b);
        ok(r != NULL && r->view_src == a && r->op == ops[o].op && r->src[0] == a && r->src[1] == b,
           "%s_inplace is a view of a with op %s", ops[o].name, ggml_op_name(ops[o].op));
        ok(optest_compute(ctx, r, 2, false) == GGML_STATUS_SUCCESS && optest_nmse(a, ref) <= 1e-12,
           "%s_inplace writes into a", ops[o].name);

        struct ggml_tensor *c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 8);
        ok(ops[o].make(ctx, a, c) == NULL, "%s: shapes that do not broadcast give NULL", ops[o].name);
        logged_one_error("%s: a bad broadcast logs one error", ops[o].name);
        ok(ops[o].make(ctx, NULL, b) == NULL && ops[o].make(ctx, a, NULL) == NULL,
           "%s: a NULL input gives NULL", ops[o].name);
        is_int(tap_log_errors(), 0, "%s: a NULL input logs nothing more", ops[o].name);
    }
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor *s = ggml_add_cast(ctx, a, a, GGML_TYPE_F16);
    ok(s && s->type == GGML_TYPE_F16 && s->op == GGML_OP_ADD && ggml_are_same_shape(s, a),
       "ggml_add_cast makes a new tensor of the given type");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_numerics();
    test_inplace_and_errors();
    return tap_done();
}
