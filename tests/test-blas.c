/*
 * test-blas.c - the BLAS plugin (lib/blas) and the ggml-blas.h functions.
 *
 * First, with no plugin to be found (GGML_BACKEND_PATH unset), the four
 * ggml-blas.h functions log one error each and return NULL/false.  Then
 * the plugin is loaded from $BLAS_PLUGIN_DIR (tests/local.mk sets it when
 * the plugin is built; without it the rest is skipped) and checked:
 *   - registry, device, buffer types, threads and params;
 *   - MUL_MAT and OUT_PROD against a double-precision reference computed
 *     here from the inputs as stored (src0 dequantized), for every src0
 *     type with a to_float conversion, odd and even shapes, batched and
 *     broadcast products, strided, transposed and permuted src1.  The
 *     NMSE stays within the CPU backend's thresholds for the type (those
 *     of test-op-matmul); and since BLAS converts src0 exactly and never
 *     rounds src1, the only error is that of single-precision sums: the
 *     squared error over sum (sum_k |a b|)^2 stays below 1e-10 for every
 *     type;
 *   - F32 operands CBLAS can read are used in place (no conversion);
 *   - ggml_backend_compare_graph_backend, CPU against BLAS, on the
 *     products of a transformer block (F16, Q4_0, ... weights), within the
 *     CPU's own rounding of src1 (test-op-matmul's loose thresholds);
 *   - the whole block (rms_norm, softmax, add, silu and the products)
 *     through a scheduler {BLAS, CPU} against the CPU alone;
 *   - where the scheduler puts nodes: the measured defaults, how min_batch
 *     (params and GGML_BLAS_MIN_BATCH) changes them, products the CPU
 *     does in integer arithmetic never on BLAS, none by default when
 *     OpenBLAS runs kernels older than the processor (one warning at
 *     load; tests/check-blas-kernels.sh runs this program with
 *     OPENBLAS_CORETYPE=Prescott and =Haswell to see both sides); the
 *     eval callback sees BLAS nodes;
 *   - error paths.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-blas.h"
#include "ggml-cpu.h"
#include "tap.h"
#include "op-test.h"

#define TIGHT_NMSE 1e-10

static uint64_t seed = 0x5eed0b1a5ull;

/* ------------------------------------------------------------ helpers */

static struct ggml_context *new_context(void)
{
    struct ggml_init_params params = { 256 * ggml_tensor_overhead() + 2 * ggml_graph_overhead(), NULL, true };
    return ggml_init(params);
}

/* Loose NMSE of the CPU backend's products against exact ones: the CPU
 * rounds src1 to the vec_dot type of src0 (see test-op-matmul.c). */
static double loose_nmse(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_F32:  return 1e-10;
    case GGML_TYPE_F16:  return 1e-6;
    case GGML_TYPE_BF16: return 1e-5;
    default:             return 1e-3;
    }
}

/* NMSE between two F32 tensors of the same shape in host memory. */
static double nmse_between(const struct ggml_tensor *got, const struct ggml_tensor *want)
{
    double err = 0.0, norm = 0.0;
    for (int64_t i3 = 0; i3 < want->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < want->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < want->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < want->ne[0]; i0++) {
                    const double w = optest_get(want, i0, i1, i2, i3), g = optest_get(got, i0, i1, i2, i3);
                    err += (g - w) * (g - w);
                    norm += w * w;
                }
    if (isnan(err))
        return INFINITY;
    return norm > 0.0 ? err / norm : err;
}

static size_t (*conversion_count)(void);

/* ------------------------------------------------------ without plugin */

static void test_absent(void)
{
    unsetenv("GGML_BACKEND_PATH");
    ggml_backend_reg_t reg = ggml_backend_blas_reg();
    if (reg != NULL) {
        tap_log_errors();
        tap_skip(7, "a BLAS plugin is installed in the plugin directory");
        ggml_backend_unload(reg);
        return;
    }
    logged_one_error("ggml_backend_blas_reg without a plugin logs one error");
    is_ptr(ggml_backend_blas_init(), NULL, "ggml_backend_blas_init without a plugin is NULL");
    logged_one_error("and logs one error");

    ggml_backend_t cpu = ggml_backend_cpu_init();
    ok(!ggml_backend_is_blas(cpu), "a CPU backend is not a BLAS backend");
    is_int(tap_log_errors(), 0, "and asking logs nothing");
    ok(!ggml_backend_is_blas(NULL), "NULL is not a BLAS backend");
    logged_one_error("ggml_backend_is_blas(NULL) logs one error");
    ggml_backend_blas_set_n_threads(cpu, 2);
    logged_one_error("ggml_backend_blas_set_n_threads on a CPU backend logs one error");
    ggml_backend_free(cpu);
}

/* ------------------------------------------------- registry and device */

/* True when the device says its BLAS library runs kernels older than the processor. */
static bool old_kernels;

/* Warnings about old kernels logged while the plugin loads (kernel_warning_sink). */
static int kernel_warnings;

static void kernel_warning_sink(enum ggml_log_level level, const char *text, void *user_data)
{
    if (level == GGML_LOG_LEVEL_WARN && strstr(text, "kernels on a processor") != NULL)
        kernel_warnings++;
    tap_log_sink(level, text, user_data);
}

/*
 * The kernels OPENBLAS_CORETYPE asks for, when it names one this test
 * knows on a processor with AVX2 and FMA: 1 older ones (Prescott), 0 ones
 * for such processors (Haswell), -1 otherwise.
 */
static int requested_old_kernels(void)
{
    const char *core = getenv("OPENBLAS_CORETYPE");
    if (core == NULL || !ggml_cpu_has_avx2() || !ggml_cpu_has_fma())
        return -1;
    return strcmp(core, "Prescott") == 0 ? 1 : strcmp(core, "Haswell") == 0 ? 0 : -1;
}

static ggml_backend_dev_t test_registry(void)
{
    ggml_log_set(kernel_warning_sink, NULL);
    ggml_backend_reg_t reg = ggml_backend_blas_reg();
    tap_capture_log();
    ok(reg != NULL, "ggml_backend_blas_reg loads the plugin from GGML_BACKEND_PATH");
    if (reg == NULL)
        return NULL;
    is_ptr(ggml_backend_blas_reg(), reg, "a second call returns the same registry");
    is_ptr(ggml_backend_reg_by_name("BLAS"), reg, "the registry is registered as BLAS");
    is_str(ggml_backend_reg_name(reg), "BLAS", "registry name");
    is_uint(ggml_backend_reg_dev_count(reg), 1, "one device");
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(reg, 0);
    is_str(ggml_backend_dev_name(dev), "BLAS", "device name");
    is_int(ggml_backend_dev_type(dev), GGML_BACKEND_DEVICE_TYPE_ACCEL, "device type ACCEL");
    const char *desc = ggml_backend_dev_description(dev);
    ok(desc != NULL && (strstr(desc, "sequential") || strstr(desc, "pthreads") || strstr(desc, "OpenMP") ||
                        strstr(desc, "CBLAS") || strstr(desc, "FlexiBLAS, backend ")),
       "description names the library and its threading: %s", desc ? desc : "(null)");
    /* a build against a known library (CI's FlexiBLAS stage) names what the description must say */
    const char *want = getenv("TEST_BLAS_DESCRIPTION");
    if (want != NULL)
        ok(desc != NULL && strstr(desc, want) != NULL, "the description says '%s'", want);
    tap_diag("BLAS device: %s", desc ? desc : "(null)");
    old_kernels = desc != NULL && strstr(desc, "kernels older than this processor") != NULL;
    is_int(kernel_warnings, old_kernels ? 1 : 0, "%s", old_kernels ? "old kernels: one warning at load"
                                                                   : "no warning about the kernels at load");
    if (requested_old_kernels() >= 0)
        is_int(old_kernels, requested_old_kernels(), "OPENBLAS_CORETYPE=%s: the description %s old kernels",
               getenv("OPENBLAS_CORETYPE"), requested_old_kernels() ? "names" : "does not name");
    is_ptr(ggml_backend_dev_buffer_type(dev), ggml_backend_cpu_buffer_type(), "its buffer type is the CPU's");
    ok(ggml_backend_dev_supports_buft(dev, ggml_backend_cpu_buffer_type()), "it uses CPU buffers");
    ok(ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads") != NULL,
       "it provides ggml_backend_set_n_threads");
    conversion_count = (size_t (*)(void)) ggml_backend_reg_get_proc_address(reg, "blas_conversion_count");
    ok(conversion_count != NULL, "and the conversion counter");
    return dev;
}

static void test_backend_functions(ggml_backend_dev_t dev)
{
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    ggml_backend_t blas = ggml_backend_blas_init();
    ok(blas != NULL, "ggml_backend_blas_init");
    ok(ggml_backend_is_blas(blas), "ggml_backend_is_blas on it");
    is_str(ggml_backend_name(blas), "BLAS", "backend name");
    is_ptr(ggml_backend_get_device(blas), dev, "backend device");
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ok(!ggml_backend_is_blas(cpu), "a CPU backend is not BLAS");
    is_int(tap_log_errors(), 0, "no error so far");

    for (int n = 1; n <= 4; n++)
        ggml_backend_blas_set_n_threads(blas, n);
    is_int(tap_log_errors(), 0, "ggml_backend_blas_set_n_threads 1..4");
    ggml_backend_blas_set_n_threads(blas, 0);
    logged_one_error("0 threads: one error");
    ggml_backend_blas_set_n_threads(NULL, 2);
    logged_one_error("NULL backend: one error");
    ggml_backend_blas_set_n_threads(cpu, 2);
    logged_one_error("a CPU backend: one error");
    void (*set_n_threads)(ggml_backend_t, int) =
        (void (*)(ggml_backend_t, int)) ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    set_n_threads(blas, 2);
    is_int(tap_log_errors(), 0, "the proc address sets the threads of a BLAS backend");
    set_n_threads(cpu, 2);
    logged_one_error("and refuses a CPU backend with one error");

    ggml_backend_t bad = ggml_backend_dev_init(dev, "min_batch=0");
    is_ptr(bad, NULL, "params min_batch=0 are refused");
    logged_one_error("with one error");
    bad = ggml_backend_dev_init(dev, "frobnicate=1");
    is_ptr(bad, NULL, "unknown params are refused");
    logged_one_error("with one error");
    ggml_backend_t good = ggml_backend_dev_init(dev, "min_batch=4, n_threads=3");
    ok(good != NULL && tap_log_errors() == 0, "params min_batch=4, n_threads=3 are accepted");
    ggml_backend_free(good);

    /* a node BLAS does not compute */
    struct ggml_context *ctx = new_context();
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct ggml_tensor *s = ggml_add(ctx, a, a);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, s);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, blas);
    ok(buf != NULL, "tensors allocated through the BLAS backend");
    ok(!ggml_backend_supports_op(blas, s), "ADD is not supported");
    is_int(ggml_backend_graph_compute(blas, g), GGML_STATUS_FAILED, "computing ADD fails");
    logged_one_error("with one error");
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);

    ggml_backend_free(cpu);
    ggml_backend_free(blas);
}

/* ------------------------------------------------------------ products */

struct product_case {
    enum ggml_op op;
    enum ggml_type type;
    int64_t m, n, k;
    int64_t a2, a3, b2, b3;  /* batches of src0 and src1 */
    int src1_layout;         /* 0 packed, 1 strided rows, 2 transposed, 3 permuted (gathered) */
};

static const char *layout_names[] = { "packed", "strided", "transposed", "permuted" };

/*
 * src1 of the case as the layout asks, in ctx: logical shape [ne0, ne1,
 * b2, b3].  Layouts 2 and 3 only exist for b3 == 1 (and 3 for b2 == 2).
 */
static struct ggml_tensor *make_src1(struct ggml_context *ctx, int layout, int64_t ne0, int64_t ne1, int64_t b2,
                                     int64_t b3, struct ggml_tensor **storage)
{
    struct ggml_tensor *t;
    switch (layout) {
    case 1:
        *storage = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0 + 5, ne1, b2, b3);
        t = ggml_view_4d(ctx, *storage, ne0, ne1, b2, b3, (*storage)->nb[1], (*storage)->nb[2], (*storage)->nb[3],
                         sizeof(float));
        break;
    case 2:
        *storage = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne1, ne0, b2, b3);
        t = ggml_transpose(ctx, *storage);
        break;
    case 3:
        /* [b2, ne0, ne1] seen as [ne0, ne1, b2]: no dimension of stride 1 */
        *storage = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, b2, ne0, ne1);
        t = ggml_permute(ctx, *storage, 2, 0, 1, 3);
        break;
    default:
        *storage = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, ne1, b2, b3);
        t = *storage;
        break;
    }
    return t;
}

/*
 * Runs one case on blas with n_threads.  True when the error, over
 * sum (sum_k |a b|)^2, is below TIGHT_NMSE and the NMSE below the CPU's
 * threshold for the type (not asked of results of fewer than 4 values,
 * where one cancelling sum makes any relative error large).  *converted
 * says whether the plugin converted or gathered an operand.
 */
static bool run_product(ggml_backend_t blas, const struct product_case *c, int n_threads, double *nmse_out,
                        double *scaled_out, bool *converted)
{
    struct ggml_context *ctx = new_context();
    const bool mm = c->op == GGML_OP_MUL_MAT;
    /* MUL_MAT: src0 [k, m], src1 [k, n];  OUT_PROD: src0 [m, k], src1 [n, k] */
    struct ggml_tensor *src0 = mm ? ggml_new_tensor_4d(ctx, c->type, c->k, c->m, c->a2, c->a3)
                                  : ggml_new_tensor_4d(ctx, c->type, c->m, c->k, c->a2, c->a3);
    struct ggml_tensor *storage;
    struct ggml_tensor *src1 = mm ? make_src1(ctx, c->src1_layout, c->k, c->n, c->b2, c->b3, &storage)
                                  : make_src1(ctx, c->src1_layout, c->n, c->k, c->b2, c->b3, &storage);
    struct ggml_tensor *dst = mm ? ggml_mul_mat(ctx, src0, src1) : ggml_out_prod(ctx, src0, src1);
    if (dst == NULL) {
        ggml_free(ctx);
        return false;
    }
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, dst);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, blas);
    optest_fill(src0, &seed, -1.0, 1.0);
    optest_fill(storage, &seed, -1.0, 1.0);

    ggml_backend_blas_set_n_threads(blas, n_threads);
    size_t before = conversion_count();
    bool ok_status = ggml_backend_graph_compute(blas, g) == GGML_STATUS_SUCCESS;
    *converted = conversion_count() != before;

    double *ref = malloc((size_t) ggml_nelements(dst) * sizeof *ref);
    double scale = 0.0;  /* sum over the outputs of (sum_k |a b|)^2 */
    int64_t idx = 0;
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    const int64_t j2 = i2 / (c->b2 / c->a2), j3 = i3 / (c->b3 / c->a3);
                    double sum = 0.0, abs_sum = 0.0;
                    for (int64_t k = 0; k < c->k; k++) {
                        const double ab = mm ? optest_get(src0, k, i0, j2, j3) * optest_get(src1, k, i1, i2, i3)
                                             : optest_get(src0, i0, k, j2, j3) * optest_get(src1, i1, k, i2, i3);
                        sum += ab;
                        abs_sum += fabs(ab);
                    }
                    ref[idx++] = sum;
                    scale += abs_sum * abs_sum;
                }
    /* optest_nmse divides by sum ref^2; rescaled, the same error over
     * sum (sum_k |a b|)^2, which cancellation in a short sum cannot make
     * small */
    double nmse = ok_status ? optest_nmse(dst, ref) : INFINITY, norm = 0.0;
    for (int64_t i = 0; i < idx; i++)
        norm += ref[i] * ref[i];
    const double err = norm > 0.0 ? nmse * norm : nmse;
    *nmse_out = nmse;
    *scaled_out = scale > 0.0 ? err / scale : err;
    free(ref);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return ok_status && *scaled_out <= TIGHT_NMSE && (*nmse_out <= loose_nmse(c->type) || idx < 4);
}

static bool has_to_float(enum ggml_type type)
{
    const struct ggml_type_traits *tr = ggml_get_type_traits(type);
    return type == GGML_TYPE_F32 || (tr != NULL && tr->to_float != NULL && tr->from_float_ref != NULL);
}

static void test_products(ggml_backend_dev_t dev)
{
    /* min_batch=1: every product goes through BLAS, however small */
    ggml_backend_t blas = ggml_backend_dev_init(dev, "min_batch=1");
    ok(blas != NULL, "a backend with min_batch=1");
    if (blas == NULL)
        return;
    static const int64_t shapes[][3] = {  /* m, n, k (k a multiple of 32 for quantized types) */
        { 1, 1, 32 }, { 3, 5, 32 }, { 33, 31, 64 }, { 64, 64, 96 }, { 31, 2, 160 }, { 7, 33, 1 }, { 5, 3, 33 },
    };
    static const int64_t batches[][4] = {  /* a2, a3, b2, b3 */
        { 1, 1, 1, 1 }, { 2, 3, 2, 3 }, { 1, 1, 2, 3 }, { 2, 1, 4, 3 },
    };
    int n_cases = 0, n_failed = 0, turn = 0;
    for (int type = 0; type < GGML_TYPE_COUNT; type++) {
        if (!has_to_float((enum ggml_type) type))
            continue;
        const bool quantized = ggml_is_quantized((enum ggml_type) type);
        int type_cases = 0, type_failed = 0;
        double worst = 0.0;
        for (int op = 0; op < 2; op++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++)
                    for (int layout = 0; layout < 4; layout++) {
                        struct product_case c = {
                            .op = op == 0 ? GGML_OP_MUL_MAT : GGML_OP_OUT_PROD,
                            .type = (enum ggml_type) type,
                            .m = shapes[s][0], .n = shapes[s][1], .k = shapes[s][2],
                            .a2 = batches[b][0], .a3 = batches[b][1], .b2 = batches[b][2], .b3 = batches[b][3],
                            .src1_layout = layout,
                        };
                        const int64_t blocked = c.op == GGML_OP_MUL_MAT ? c.k : c.m;
                        if (quantized && blocked % ggml_blck_size(c.type) != 0)
                            continue;
                        if (layout == 3 && b != 0)
                            continue;
                        if (layout == 3)
                            c.b2 = 2;  /* src1 [.., .., 2, 1] over a 2-D src0 */
                        double nmse, scaled;
                        bool converted;
                        const bool good = run_product(blas, &c, 1 + turn++ % 4, &nmse, &scaled, &converted);
                        type_cases++;
                        if (scaled > worst)
                            worst = scaled;
                        if (!good) {
                            type_failed++;
                            tap_diag("%s %s m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batches %" PRId64 "x%" PRId64
                                     " over %" PRId64 "x%" PRId64 " src1 %s: NMSE %g, scaled %g",
                                     ggml_op_name(c.op), ggml_type_name(c.type), c.m, c.n, c.k, c.a2, c.a3, c.b2,
                                     c.b3, layout_names[layout], nmse, scaled);
                        }
                    }
        ok(type_failed == 0, "%s: %d MUL_MAT/OUT_PROD cases, NMSE within %g, scaled error within %g (worst %.3g)",
           ggml_type_name((enum ggml_type) type), type_cases, loose_nmse((enum ggml_type) type), TIGHT_NMSE, worst);
        n_cases += type_cases;
        n_failed += type_failed;
    }
    ok(n_cases > 0 && n_failed == 0, "%d products in all", n_cases);

    /* F32 operands CBLAS can read are used in place; others are gathered */
    struct { struct product_case c; bool want_conversion; const char *what; } in_place[] = {
        { { GGML_OP_MUL_MAT, GGML_TYPE_F32, 64, 48, 96, 1, 1, 2, 3, 0 }, false, "packed F32 MUL_MAT, broadcast" },
        { { GGML_OP_MUL_MAT, GGML_TYPE_F32, 64, 48, 96, 2, 3, 2, 3, 1 }, false, "strided src1" },
        { { GGML_OP_MUL_MAT, GGML_TYPE_F32, 64, 48, 96, 1, 1, 1, 1, 2 }, false, "transposed src1" },
        { { GGML_OP_OUT_PROD, GGML_TYPE_F32, 64, 48, 96, 1, 1, 1, 1, 2 }, false, "OUT_PROD, transposed src1" },
        { { GGML_OP_OUT_PROD, GGML_TYPE_F32, 64, 48, 96, 1, 1, 1, 1, 0 }, false, "OUT_PROD, packed" },
        { { GGML_OP_MUL_MAT, GGML_TYPE_F32, 64, 48, 96, 1, 1, 2, 1, 3 }, true, "permuted src1" },
        { { GGML_OP_MUL_MAT, GGML_TYPE_F16, 64, 48, 96, 1, 1, 1, 1, 0 }, true, "F16 src0" },
    };
    for (size_t i = 0; i < sizeof in_place / sizeof in_place[0]; i++) {
        double nmse, scaled;
        bool converted;
        bool good = run_product(blas, &in_place[i].c, 2, &nmse, &scaled, &converted);
        ok(good && converted == in_place[i].want_conversion, "%s: %s (NMSE %.3g)", in_place[i].what,
           in_place[i].want_conversion ? "converted" : "read in place", nmse);
    }
    ggml_backend_free(blas);
}

/* ----------------------------------------------- a transformer block */

struct block {
    struct ggml_context *ctx;
    ggml_backend_buffer_t weights;
    struct ggml_tensor *x, *out;
    struct ggml_tensor *products[8];
    int n_products;
    struct ggml_cgraph *graph;
};

enum { EMBD = 64, TOKENS = 32, FF = 128 };

static struct ggml_tensor *weight(struct block *b, enum ggml_type type, int64_t k, int64_t m)
{
    struct ggml_tensor *w = ggml_new_tensor_2d(b->ctx, type, k, m);
    return w;
}

static struct ggml_tensor *product(struct block *b, struct ggml_tensor *w, struct ggml_tensor *x)
{
    struct ggml_tensor *y = ggml_mul_mat(b->ctx, w, x);
    b->products[b->n_products++] = y;
    return y;
}

/* A pre-norm attention + feed-forward block with weights of several types;
 * with products_only, just the block's products of x by its weights. */
static bool block_build(struct block *b, bool products_only)
{
    memset(b, 0, sizeof *b);
    seed = 0xb10c;  /* every build of the block holds the same values */
    b->ctx = new_context();
    struct ggml_tensor *wq = weight(b, GGML_TYPE_F16, EMBD, EMBD), *wk = weight(b, GGML_TYPE_Q4_0, EMBD, EMBD);
    struct ggml_tensor *wv = weight(b, GGML_TYPE_BF16, EMBD, EMBD), *wo = weight(b, GGML_TYPE_Q8_0, EMBD, EMBD);
    struct ggml_tensor *w1 = weight(b, GGML_TYPE_Q4_0, EMBD, FF), *w2 = weight(b, GGML_TYPE_F16, FF, EMBD);
    struct ggml_tensor *g = ggml_new_tensor_1d(b->ctx, GGML_TYPE_F32, EMBD);
    b->x = ggml_new_tensor_2d(b->ctx, GGML_TYPE_F32, EMBD, TOKENS);
    ggml_set_input(b->x);
    if (products_only) {
        /* built before allocating: every tensor gets memory, as
         * ggml_backend_compare_graph_backend wants */
        b->graph = ggml_new_graph(b->ctx);
        struct ggml_tensor *all[] = { product(b, wq, b->x), product(b, wk, b->x), product(b, wv, b->x),
                                      product(b, wo, b->x), product(b, w1, b->x) };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            ggml_build_forward_expand(b->graph, all[i]);
    }
    b->weights = ggml_backend_alloc_ctx_tensors_from_buft(b->ctx, ggml_backend_cpu_buffer_type());
    if (b->weights == NULL)
        return false;
    ggml_backend_buffer_set_usage(b->weights, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    struct ggml_tensor *ws[] = { wq, wk, wv, wo, w1, w2, g };
    for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++)
        optest_fill(ws[i], &seed, -0.5, 0.5);
    optest_fill(b->x, &seed, -1.0, 1.0);
    if (products_only)
        return true;

    struct ggml_tensor *xn = ggml_mul(b->ctx, ggml_rms_norm(b->ctx, b->x, 1e-5f), g);
    struct ggml_tensor *q = product(b, wq, xn), *k = product(b, wk, xn), *v = product(b, wv, xn);
    struct ggml_tensor *kq = product(b, k, q);  /* [TOKENS, TOKENS]: an F32 src0 */
    struct ggml_tensor *sm = ggml_soft_max_ext(b->ctx, kq, NULL, 0.125f, 0.0f);
    struct ggml_tensor *vt = ggml_cont(b->ctx, ggml_transpose(b->ctx, v));
    struct ggml_tensor *att = product(b, vt, sm);  /* [EMBD, TOKENS] */
    struct ggml_tensor *h = ggml_add(b->ctx, product(b, wo, att), b->x);
    struct ggml_tensor *f = ggml_silu(b->ctx, product(b, w1, ggml_rms_norm(b->ctx, h, 1e-5f)));
    b->out = ggml_add(b->ctx, product(b, w2, f), h);
    b->graph = ggml_new_graph(b->ctx);
    ggml_build_forward_expand(b->graph, b->out);
    return b->out != NULL;
}

static void block_free(struct block *b)
{
    ggml_backend_buffer_free(b->weights);
    ggml_free(b->ctx);
}

static bool compare_nodes(int index, struct ggml_tensor *t1, struct ggml_tensor *t2, void *user_data)
{
    int *n_compared = user_data;
    if (t1->op != GGML_OP_MUL_MAT)
        return true;
    double nmse = nmse_between(t2, t1), threshold = loose_nmse(t1->src[0]->type);
    (*n_compared)++;
    if (nmse > threshold)
        tap_diag("node %d (%s weights): NMSE %g above %g", index, ggml_type_name(t1->src[0]->type), nmse, threshold);
    return nmse <= threshold;
}

struct seen {
    const struct ggml_tensor *want;
    bool asked, observed;
};

static bool eval_cb(struct ggml_tensor *t, bool ask, void *user_data)
{
    struct seen *s = user_data;
    if (t == s->want) {
        if (ask)
            s->asked = true;
        else
            s->observed = true;
    }
    return true;
}

/* A product over an empty inner dimension, of an operand BLAS must convert:
 * zeros, not a silent allocation failure. */
static void test_empty_sum(ggml_backend_t blas)
{
    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 0, 19);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 8);
    struct ggml_tensor *c = ggml_mul_mat(ctx, a, b);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, blas);
    float out[19 * 8];
    memset(out, 0x7f, sizeof out);
    ggml_backend_tensor_set(c, out, 0, sizeof out);
    tap_log_errors();
    is_int(ggml_backend_graph_compute(blas, g), GGML_STATUS_SUCCESS, "a BF16 product with k = 0 computes");
    is_int(tap_log_errors(), 0, "without a message");
    ggml_backend_tensor_get(c, out, 0, sizeof out);
    bool zeros = true;
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
        zeros = zeros && out[i] == 0.0f;
    ok(zeros, "to zeros");
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

/* What the CPU backend tells the BLAS plugin about weights of type. */
static bool cpu_multiplies_in_integers(enum ggml_type type)
{
    bool (*fn)(enum ggml_type) = (bool (*)(enum ggml_type)) ggml_backend_reg_get_proc_address(
        ggml_backend_cpu_reg(), "ggml_backend_cpu_integer_products");
    return fn != NULL && fn(type);
}

static void test_block(ggml_backend_t blas, ggml_backend_t cpu)
{
    struct block b;
    int n_compared = 0;
    if (!block_build(&b, true)) {
        ok(false, "products of a block built");
        return;
    }
    ok(ggml_backend_compare_graph_backend(cpu, blas, b.graph, compare_nodes, &n_compared, NULL, 0),
       "ggml_backend_compare_graph_backend CPU vs BLAS on the block's products");
    is_int(n_compared, 5, "five products compared (F16, Q4_0, BF16, Q8_0, Q4_0 weights)");
    block_free(&b);

    /* the whole block: CPU alone, then (a second, identical build) the
     * scheduler {BLAS, CPU} */
    if (!block_build(&b, false)) {
        ok(false, "block built");
        return;
    }
    struct ggml_context *rctx = new_context();
    struct ggml_tensor *want = ggml_new_tensor_2d(rctx, GGML_TYPE_F32, EMBD, TOKENS);
    ggml_backend_buffer_t rbuf = ggml_backend_alloc_ctx_tensors_from_buft(rctx, ggml_backend_cpu_buffer_type());

    ggml_backend_t cpu_only[] = { cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(cpu_only, NULL, 1, 2048, false, true);
    ok(ggml_backend_sched_graph_compute(sched, b.graph) == GGML_STATUS_SUCCESS, "block on the CPU");
    ggml_backend_tensor_get(b.out, want->data, 0, ggml_nbytes(want));
    ggml_backend_sched_free(sched);
    block_free(&b);
    if (!block_build(&b, false)) {
        ok(false, "block built again");
        return;
    }

    ggml_backend_t both[] = { blas, cpu };
    sched = ggml_backend_sched_new(both, NULL, 2, 2048, false, true);
    struct seen seen = { .want = b.products[0] };
    ggml_backend_sched_set_eval_callback(sched, eval_cb, &seen);
    ok(ggml_backend_sched_graph_compute(sched, b.graph) == GGML_STATUS_SUCCESS, "block on {BLAS, CPU}");
    int on_blas = 0, for_blas = 0;
    for (int i = 0; i < b.n_products; i++) {
        on_blas += ggml_backend_sched_get_tensor_backend(sched, b.products[i]) == blas;
        for_blas += !cpu_multiplies_in_integers(b.products[i]->src[0]->type);
    }
    is_int(on_blas, for_blas, "every product of the block ran on BLAS but those the CPU does in integers");
    is_ptr(ggml_backend_sched_get_tensor_backend(sched, b.out), cpu, "the final ADD ran on the CPU");
    ok(seen.asked && seen.observed, "the eval callback saw a BLAS product");
    double nmse = nmse_between(b.out, want);
    ok(nmse <= 1e-4, "block output {BLAS, CPU} vs CPU: NMSE %.3g", nmse);
    ggml_backend_sched_free(sched);

    ggml_backend_buffer_free(rbuf);
    ggml_free(rctx);
    block_free(&b);

    /* other nodes cannot be compared: BLAS computes products only */
    struct ggml_context *ctx = new_context();
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, EMBD, TOKENS);
    struct ggml_tensor *y = ggml_rms_norm(ctx, x, 1e-5f);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    optest_fill(x, &seed, -1.0, 1.0);
    tap_log_errors();
    ok(!ggml_backend_compare_graph_backend(cpu, blas, g, compare_nodes, &n_compared, NULL, 0),
       "comparing an RMS_NORM node fails: BLAS computes only products");
    logged_one_error("with one error");
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

/* -------------------------------------------------------- the scheduler */

struct placement {
    ggml_backend_t f32, f16, q8, vec, add;  /* where each node ran */
};

/* Products of 256 x 256 weights with a batch of n columns and with one column, through {BLAS, CPU}. */
static bool place(ggml_backend_t blas, ggml_backend_t cpu, int64_t n, struct placement *p)
{
    struct ggml_context *ctx = new_context();
    struct ggml_tensor *w32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 256);
    struct ggml_tensor *w16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 256, 256);
    struct ggml_tensor *w8 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 256, 256);
    ggml_backend_buffer_t weights = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_set_usage(weights, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    optest_fill(w32, &seed, -1.0, 1.0);
    optest_fill(w16, &seed, -1.0, 1.0);
    optest_fill(w8, &seed, -1.0, 1.0);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, n);
    struct ggml_tensor *v = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 1);
    ggml_set_input(x);
    ggml_set_input(v);
    struct ggml_tensor *y32 = ggml_mul_mat(ctx, w32, x), *y16 = ggml_mul_mat(ctx, w16, x);
    struct ggml_tensor *y8 = ggml_mul_mat(ctx, w8, x);
    struct ggml_tensor *yv = ggml_mul_mat(ctx, w32, v);
    struct ggml_tensor *sum = ggml_add(ctx, ggml_add(ctx, y32, y16), y8);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, sum);
    ggml_build_forward_expand(g, yv);
    ggml_backend_t both[] = { blas, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(both, NULL, 2, 256, false, true);
    bool good = ggml_backend_sched_alloc_graph(sched, g);
    if (good) {
        float *data = malloc((size_t) n * 256 * sizeof *data);
        for (int64_t i = 0; i < n * 256; i++)
            data[i] = (float) (i % 7) - 3.0f;
        ggml_backend_tensor_set(x, data, 0, ggml_nbytes(x));
        ggml_backend_tensor_set(v, data, 0, ggml_nbytes(v));
        free(data);
        good = ggml_backend_sched_graph_compute(sched, g) == GGML_STATUS_SUCCESS;
    }
    p->f32 = ggml_backend_sched_get_tensor_backend(sched, y32);
    p->f16 = ggml_backend_sched_get_tensor_backend(sched, y16);
    p->q8 = ggml_backend_sched_get_tensor_backend(sched, y8);
    p->vec = ggml_backend_sched_get_tensor_backend(sched, yv);
    p->add = ggml_backend_sched_get_tensor_backend(sched, sum);
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(weights);
    ggml_free(ctx);
    return good;
}

static void test_scheduler(ggml_backend_dev_t dev, ggml_backend_t cpu)
{
    struct placement p;
    const bool integer_q8 = cpu_multiplies_in_integers(GGML_TYPE_Q8_0);
    int (*calibration)(void) =
        (int (*)(void)) ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev), "blas_calibration");
    ok(calibration != NULL, "the plugin gives its calibration verdict (a test hook)");
    if (calibration == NULL)
        return;
    unsetenv("GGML_BLAS_MIN_BATCH");
    /* the measured defaults first, without the calibration against the CPU backend */
    setenv("GGML_BLAS_CALIBRATE", "0", 1);
    ggml_backend_t blas = ggml_backend_dev_init(dev, NULL);
    ok(place(blas, cpu, 64, &p), "scheduler {BLAS, CPU} computes the graph");
    is_ptr(p.f32, cpu, "by default, a 256x256x64 F32 product stays on the CPU");
    is_ptr(p.f16, cpu, "and with F16 weights");
    is_ptr(p.vec, cpu, "a matrix-vector product stays on the CPU");
    is_ptr(p.add, cpu, "ADD stays on the CPU");
    ok(place(blas, cpu, 1024, &p), "the same with a batch of 1024");
    /* with kernels older than the processor nothing goes to BLAS by default */
    ggml_backend_t big = old_kernels ? cpu : blas;
    is_ptr(p.f32, big, "by default, a 256x256x1024 F32 product goes to %s", old_kernels ? "the CPU (old kernels)" : "BLAS");
    is_ptr(p.f16, big, "and with F16 weights");
    is_ptr(p.q8, integer_q8 ? cpu : big, "Q8_0 weights: %s",
           integer_q8 ? "CPU (integer products)" : old_kernels ? "CPU (old kernels)" : "BLAS");
    is_int(calibration(), -1, "GGML_BLAS_CALIBRATE=0: nothing was measured");

    /* the calibration decides the large products: BLAS takes them only when its sgemm is faster */
    unsetenv("GGML_BLAS_CALIBRATE");
    ok(place(blas, cpu, 1024, &p), "with the calibration, a batch of 1024");
    const int verdict = calibration();
    ok(verdict == (old_kernels ? -1 : 0) || verdict == (old_kernels ? -1 : 1),
       "the calibration ran when a default decision needed it (verdict %d)", verdict);
    ggml_backend_t large = !old_kernels && verdict == 1 ? blas : cpu;
    is_ptr(p.f32, large, "a 256x256x1024 F32 product goes to %s, as the calibration says", large == blas ? "BLAS" : "the CPU");
    is_ptr(p.f16, large, "and with F16 weights");
    ok(place(blas, cpu, 64, &p), "with the calibration, a batch of 64");
    is_ptr(p.f32, cpu, "a batch of 64 stays on the CPU whatever the calibration says");
    is_int(calibration(), verdict, "the calibration runs once per process");
    ggml_backend_free(blas);
    setenv("GGML_BLAS_CALIBRATE", "0", 1);

    blas = ggml_backend_dev_init(dev, "min_batch=128");
    ok(place(blas, cpu, 256, &p), "with min_batch=128");
    is_ptr(p.f32, blas, "params min_batch=128 send a batch of 256 to BLAS");
    is_ptr(p.f16, blas, "with F16 weights too (one threshold for every type)");
    ok(place(blas, cpu, 64, &p), "with min_batch=128, a batch of 64");
    is_ptr(p.f32, cpu, "params min_batch=128 keep a batch of 64 on the CPU");
    ggml_backend_free(blas);

    blas = ggml_backend_dev_init(dev, "min_batch=1");
    ok(place(blas, cpu, 64, &p), "with min_batch=1");
    is_ptr(p.vec, blas, "params min_batch=1 send the matrix-vector product to BLAS");
    is_ptr(p.q8, integer_q8 ? cpu : blas, "but Q8_0 weights to %s", integer_q8 ? "the CPU" : "BLAS");
    ggml_backend_free(blas);

    setenv("GGML_BLAS_MIN_BATCH", "100", 1);
    blas = ggml_backend_dev_init(dev, NULL);
    ok(place(blas, cpu, 64, &p), "with GGML_BLAS_MIN_BATCH=100");
    is_ptr(p.f16, cpu, "GGML_BLAS_MIN_BATCH=100 keeps a batch of 64 on the CPU");
    ggml_backend_free(blas);
    blas = ggml_backend_dev_init(dev, "min_batch=64");
    ok(place(blas, cpu, 64, &p), "params over the environment");
    is_ptr(p.f16, blas, "params min_batch=64 win over GGML_BLAS_MIN_BATCH");
    ggml_backend_free(blas);
    unsetenv("GGML_BLAS_MIN_BATCH");

    blas = ggml_backend_dev_init(dev, NULL);
    ok(place(blas, cpu, 64, &p), "back to the default");
    is_ptr(p.f32, cpu, "the default keeps the batch of 64 on the CPU again");
    ggml_backend_free(blas);
    is_int(tap_log_errors(), 0, "no error logged by the scheduler tests");
}

int main(void)
{
    tap_capture_log();
    test_absent();

    const char *dir = getenv("BLAS_PLUGIN_DIR");
    if (dir == NULL || dir[0] == '\0') {
        tap_skip(1, "the BLAS plugin is not built (configure --with-openblas=no, or OpenBLAS not found)");
        return tap_done();
    }
    setenv("GGML_BACKEND_PATH", dir, 1);
    ggml_backend_dev_t dev = test_registry();
    if (dev == NULL)
        return tap_done();
    test_backend_functions(dev);
    test_products(dev);

    ggml_backend_t blas = ggml_backend_dev_init(dev, "min_batch=1");
    ggml_backend_t cpu = ggml_backend_cpu_init();
    test_empty_sum(blas);
    test_block(blas, cpu);
    ggml_backend_free(blas);
    test_scheduler(dev, cpu);
    ggml_backend_free(cpu);
    return tap_done();
}
