/*
 * test-op-repack.c - the CPU device's extra buffer type "CPU_REPACK"
 * (lib/cpu/repack.c), through the public API only.
 *
 * Checked, at every kernel level (run-levels.sh):
 *   - "ggml_backend_dev_get_extra_bufts" of the CPU registry: a
 *     NULL-terminated list, with CPU_REPACK exactly when the level has
 *     integer tiles (AVX2: Q4_0; AVX512_VNNI: Q4_0, Q8_0, IQ4_NL, Q4_K,
 *     Q5_K, Q6_K); without it the rest is skipped;
 *   - the buffer type: not host memory, CPU device, supported by it;
 *   - Q4_0, Q8_0, IQ4_NL, Q4_K, Q5_K and Q6_K matrices are stored
 *     differently from their bytes (packed) where the level has their
 *     integer tile, other tensors as they are; set, get and memset at
 *     any offset and size give back the standard layout (random bytes,
 *     partial groups of rows, odd offsets), copies to a CPU buffer too;
 *   - MUL_MAT with packed weights, 1 to 33 columns, broadcast batches and
 *     3-D weights, 1 to 4 threads and the reference kernels: every output
 *     within 1e-5 of sum |w x| of a double-precision product of the
 *     dequantized weights and the columns rounded through the type's
 *     vec_dot_type (Q8_0 or Q8_K), computed here;
 *     and the same floats as the same product with the weights in a
 *     plain CPU buffer when that takes the integer tiles (over 3 columns);
 *   - MUL_MAT_ID with packed experts, 1 to 40 tokens (experts with one
 *     column, a few, many), 1 to 4 threads and the reference kernels,
 *     against the same double-precision reference;
 *   - supports_op: packed data only as MUL_MAT's or MUL_MAT_ID's src0
 *     (not GET_ROWS, not a view, not written), unpacked tensors anywhere;
 *   - a scheduler over the CPU backend computes a graph whose weights
 *     were allocated with ggml_backend_alloc_ctx_tensors_from_buft.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "tap.h"
#include "op-test.h"

typedef ggml_backend_buffer_type_t *(*extra_bufts_fn)(ggml_backend_dev_t);

static uint64_t seed = 0x72657061636bull;

static const enum ggml_type packed_types[] = { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_IQ4_NL,
                                               GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K };
#define N_PACKED_TYPES (sizeof packed_types / sizeof packed_types[0])

/* The CPU registry's answer: the level multiplies weights of type with integer tiles (and packs them). */
static bool cpu_integer_products(enum ggml_type type)
{
    bool (*fn)(enum ggml_type) = (bool (*)(enum ggml_type)) ggml_backend_reg_get_proc_address(
        ggml_backend_cpu_reg(), "ggml_backend_cpu_integer_products");
    return fn != NULL && fn(type);
}

/* Values a row for a test shape of k, as a whole number of blocks of type (256-value K-quants: k rounded up). */
static int64_t row_values(enum ggml_type type, int64_t k)
{
    const int64_t bs = ggml_blck_size(type);
    return (k + bs - 1) / bs * bs;
}

static struct ggml_context *new_context(void)
{
    struct ggml_init_params p = { 64 * ggml_tensor_overhead() + 2 * ggml_graph_overhead(), NULL, true };
    return ggml_init(p);
}

/* The CPU device's CPU_REPACK type, or NULL; checks the list on the way. */
static ggml_backend_buffer_type_t find_repack(void)
{
    ggml_backend_dev_t cpu = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    extra_bufts_fn fn = (extra_bufts_fn) ggml_backend_reg_get_proc_address(ggml_backend_cpu_reg(),
                                                                           "ggml_backend_dev_get_extra_bufts");
    ok(fn != NULL, "the CPU registry has ggml_backend_dev_get_extra_bufts");
    if (fn == NULL)
        return NULL;
    ggml_backend_buffer_type_t *list = fn(cpu), found = NULL;
    int n = 0;
    for (; list != NULL && list[n] != NULL; n++)
        if (strcmp(ggml_backend_buft_name(list[n]), "CPU_REPACK") == 0)
            found = list[n];
    ok(list != NULL && n <= 1, "a NULL-terminated list (%d entries)", n);
    const bool tiles = cpu_integer_products(GGML_TYPE_Q4_0);
    ok((found != NULL) == tiles, "CPU_REPACK is offered %s", tiles ? "(integer tiles)" : "only with integer tiles");
    return found;
}

static void test_buffer_type(ggml_backend_buffer_type_t repack)
{
    ggml_backend_dev_t cpu = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    ok(!ggml_backend_buft_is_host(repack), "CPU_REPACK is not host memory (its layout is its own)");
    is_ptr(ggml_backend_buft_get_device(repack), cpu, "it belongs to the CPU device");
    ok(ggml_backend_dev_supports_buft(cpu, repack), "which supports it");
    is_int((int) ggml_backend_buft_get_alignment(repack), 64, "64-byte alignment");
}

/* Random bytes: any pattern must survive set and get. */
static void random_bytes(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char) (optest_next(&seed) >> 24);
}

static void test_round_trip(ggml_backend_buffer_type_t repack)
{
    struct ggml_context *ctx = new_context();
    struct ggml_tensor *t[N_PACKED_TYPES + 2];
    for (size_t i = 0; i < N_PACKED_TYPES; i++)
        t[i] = ggml_new_tensor_3d(ctx, packed_types[i], row_values(packed_types[i], 96), 48, 2);
    t[N_PACKED_TYPES] = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 20);   /* rows not a multiple of 16 */
    t[N_PACKED_TYPES + 1] = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 16);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, repack);
    ok(buf != NULL, "tensors allocated in a CPU_REPACK buffer");
    if (buf == NULL) {
        ggml_free(ctx);
        return;
    }
    is_str(ggml_backend_buffer_name(buf), "CPU_REPACK", "named CPU_REPACK");
    for (size_t i = 0; i < N_PACKED_TYPES + 2; i++) {
        const size_t n = ggml_nbytes(t[i]);
        const bool packed = i < N_PACKED_TYPES && cpu_integer_products(t[i]->type);
        const char *name = i == N_PACKED_TYPES ? "q4_0 of 20 rows" : ggml_type_name(t[i]->type);
        unsigned char *want = malloc(n), *got = malloc(n), *patch = malloc(n);
        random_bytes(want, n);
        ggml_backend_tensor_set(t[i], want, 0, n);
        ok((memcmp(t[i]->data, want, n) != 0) == packed, "%s: stored %s", name, packed ? "packed" : "as given");
        memset(got, 0, n);
        ggml_backend_tensor_get(t[i], got, 0, n);
        ok(memcmp(got, want, n) == 0, "%s: whole tensor back", name);

        /* partial writes and reads across groups of rows, at odd offsets */
        bool same = true;
        const size_t spans[][2] = { { 37, n / 4 }, { 0, 1 }, { n - 3, 3 }, { n / 3, n / 2 }, { 5, n - 9 } };
        for (size_t s = 0; s < sizeof spans / sizeof spans[0]; s++) {
            const size_t off = spans[s][0], len = spans[s][1];
            random_bytes(patch, len);
            ggml_backend_tensor_set(t[i], patch, off, len);
            memcpy(want + off, patch, len);
            ggml_backend_tensor_get(t[i], got, 0, n);
            same = same && memcmp(got, want, n) == 0;
            memset(got, 0, n);
            ggml_backend_tensor_get(t[i], got + off, off, len);
            same = same && memcmp(got + off, want + off, len) == 0;
        }
        ok(same, "%s: partial sets and gets at odd offsets", name);

        ggml_backend_tensor_memset(t[i], 0x5a, 41, n / 3);
        memset(want + 41, 0x5a, n / 3);
        ggml_backend_tensor_get(t[i], got, 0, n);
        ok(memcmp(got, want, n) == 0, "%s: memset of a part", name);
        free(want);
        free(got);
        free(patch);
    }

    /* a copy into a CPU buffer is in the standard layout */
    struct ggml_context *cctx = new_context();
    struct ggml_tensor *copy = ggml_dup_tensor(cctx, t[0]);
    ggml_backend_buffer_t cbuf = ggml_backend_alloc_ctx_tensors_from_buft(cctx, ggml_backend_cpu_buffer_type());
    ggml_backend_tensor_copy(t[0], copy);
    unsigned char *want = malloc(ggml_nbytes(t[0]));
    ggml_backend_tensor_get(t[0], want, 0, ggml_nbytes(t[0]));
    ok(memcmp(copy->data, want, ggml_nbytes(t[0])) == 0, "ggml_backend_tensor_copy to a CPU buffer unpacks");
    /* and back into the repack buffer */
    random_bytes(copy->data, ggml_nbytes(copy));
    ggml_backend_tensor_copy(copy, t[0]);
    ggml_backend_tensor_get(t[0], want, 0, ggml_nbytes(t[0]));
    ok(memcmp(copy->data, want, ggml_nbytes(t[0])) == 0, "and from a CPU buffer packs");
    free(want);

    /* clearing the buffer: zeros in either layout */
    ggml_backend_buffer_clear(buf, 0);
    unsigned char *z = calloc(1, ggml_nbytes(t[1])), *g = malloc(ggml_nbytes(t[1]));
    ggml_backend_tensor_get(t[1], g, 0, ggml_nbytes(t[1]));
    ok(memcmp(z, g, ggml_nbytes(t[1])) == 0, "a cleared buffer reads back zeros");
    free(z);
    free(g);
    is_int(tap_log_errors(), 0, "no error logged by the round trips");
    ggml_backend_buffer_free(cbuf);
    ggml_free(cctx);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

/* Row r of a tensor of weights (rows of k values of type) as doubles. */
static void dequantize_rows(enum ggml_type type, const void *src, int64_t rows, int64_t k, double *out)
{
    float *tmp = malloc((size_t) (rows * k) * sizeof *tmp);
    ggml_get_type_traits(type)->to_float(src, tmp, rows * k);
    for (int64_t i = 0; i < rows * k; i++)
        out[i] = tmp[i];
    free(tmp);
}

/*
 * rows rows of k floats at x, rounded as the CPU backend rounds the
 * columns of a product with weights of type (its vec_dot_type: Q8_0, or
 * Q8_K decoded here from its layout: float d, 256 int8 quants, 16 int16
 * sums), into out.
 */
static void round_columns(enum ggml_type type, const float *x, int64_t rows, int64_t k, double *out)
{
    const enum ggml_type vdt = ggml_get_type_traits_cpu(type)->vec_dot_type;
    char *q = malloc(ggml_row_size(vdt, k) * (size_t) rows);
    for (int64_t r = 0; r < rows; r++)
        ggml_get_type_traits_cpu(vdt)->from_float(x + r * k, q + (size_t) r * ggml_row_size(vdt, k), k);
    if (vdt != GGML_TYPE_Q8_K) {
        dequantize_rows(vdt, q, rows, k, out);
    } else {
        enum { Q8_K_BLOCK = 4 + 256 + 2 * 16 };
        for (int64_t b = 0; b < rows * k / 256; b++) {
            float d;
            memcpy(&d, q + b * Q8_K_BLOCK, sizeof d);
            for (int j = 0; j < 256; j++)
                out[b * 256 + j] = (double) (d * (float) (int8_t) q[b * Q8_K_BLOCK + 4 + j]);
        }
    }
    free(q);
}

/*
 * MUL_MAT of packed weights [k, m, wb] by F32 columns [k, n, cb] (cb a
 * multiple of wb) against the double reference and the same product in
 * a plain CPU buffer.
 */
static void check_product(ggml_backend_buffer_type_t repack, enum ggml_type type, int64_t k, int64_t m, int64_t wb,
                          int64_t n, int64_t cb)
{
    struct ggml_context *wctx = new_context(), *pctx = new_context();
    struct ggml_tensor *wp = ggml_new_tensor_3d(wctx, type, k, m, wb);
    struct ggml_tensor *wn = ggml_new_tensor_3d(pctx, type, k, m, wb);
    ggml_backend_buffer_t bp = ggml_backend_alloc_ctx_tensors_from_buft(wctx, repack);
    ggml_backend_buffer_t bn = ggml_backend_alloc_ctx_tensors_from_buft(pctx, ggml_backend_cpu_buffer_type());
    const size_t wbytes = ggml_nbytes(wn);
    optest_fill(wn, &seed, -1.0, 1.0);
    ggml_backend_tensor_set(wp, wn->data, 0, wbytes);

    struct ggml_init_params ip = { 0, NULL, false };
    ip.mem_size = (size_t) (k * n * cb) * sizeof(float) * 4 + 2 * (size_t) (m * n * cb) * sizeof(float) +
                  16 * ggml_tensor_overhead() + 12 * ggml_graph_overhead();
    struct ggml_context *dctx = ggml_init(ip);
    struct ggml_tensor *x = ggml_new_tensor_3d(dctx, GGML_TYPE_F32, k, n, cb);
    optest_fill(x, &seed, -1.0, 1.0);
    struct ggml_tensor *yp = ggml_mul_mat(dctx, wp, x), *yn = ggml_mul_mat(dctx, wn, x);

    /* reference: dequantized weights, columns rounded through the vec_dot_type */
    double *w = malloc((size_t) (k * m * wb) * sizeof *w), *xr = malloc((size_t) (k * n * cb) * sizeof *xr);
    dequantize_rows(type, wn->data, m * wb, k, w);
    round_columns(type, x->data, n * cb, k, xr);

    bool all_within = true, same_as_plain = true, ok_status = true;
    const int threads[] = { 1, 2, 3, 4 };
    for (int ti = 0; ti < 5; ti++) {
        const bool use_ref = ti == 4;
        ok_status = ok_status && optest_compute(dctx, yp, use_ref ? 2 : threads[ti], use_ref) == GGML_STATUS_SUCCESS;
        ok_status = ok_status && optest_compute(dctx, yn, 2, false) == GGML_STATUS_SUCCESS;
        for (int64_t c = 0; c < cb; c++)
            for (int64_t j = 0; j < n; j++)
                for (int64_t r = 0; r < m; r++) {
                    const double *wr = w + ((c / (cb / wb)) * m + r) * k, *xc = xr + (c * n + j) * k;
                    double ref = 0.0, mag = 0.0;
                    for (int64_t i = 0; i < k; i++) {
                        ref += wr[i] * xc[i];
                        mag += fabs(wr[i] * xc[i]);
                    }
                    const float got = ((const float *) yp->data)[(c * n + j) * m + r];
                    const float plain = ((const float *) yn->data)[(c * n + j) * m + r];
                    all_within = all_within && fabs(got - ref) <= 1e-5 * mag + 1e-30;
                    same_as_plain = same_as_plain && got == plain;
                }
    }
    const bool plain_tiles = n > 3 && cpu_integer_products(type);
    ok(ok_status && all_within && (same_as_plain || !plain_tiles),
       "%s [%lld, %lld, %lld] x [%lld, %lld, %lld]: within 1e-5 sum|wx| at 1-4 threads and ref%s",
       ggml_type_name(type), (long long) k, (long long) m, (long long) wb, (long long) k, (long long) n,
       (long long) cb, plain_tiles ? ", the plain buffer's floats" : "");
    free(w);
    free(xr);
    ggml_free(dctx);
    ggml_backend_buffer_free(bp);
    ggml_backend_buffer_free(bn);
    ggml_free(wctx);
    ggml_free(pctx);
}

/*
 * MUL_MAT_ID of packed experts [k, m, n_as] by F32 columns [k, n_used,
 * T], each token's experts distinct, against the double reference.
 */
static void check_experts(ggml_backend_buffer_type_t repack, enum ggml_type type, int64_t k, int64_t m, int64_t n_as,
                          int64_t n_used, int64_t T)
{
    struct ggml_context *wctx = new_context();
    struct ggml_tensor *wp = ggml_new_tensor_3d(wctx, type, k, m, n_as);
    ggml_backend_buffer_t bp = ggml_backend_alloc_ctx_tensors_from_buft(wctx, repack);
    const size_t wbytes = ggml_row_size(type, k) * (size_t) (m * n_as);
    char *plain = malloc(wbytes);
    {
        struct ggml_context *pctx = new_context();
        struct ggml_tensor *wn = ggml_new_tensor_3d(pctx, type, k, m, n_as);
        ggml_backend_buffer_t bn = ggml_backend_alloc_ctx_tensors_from_buft(pctx, ggml_backend_cpu_buffer_type());
        optest_fill(wn, &seed, -1.0, 1.0);
        memcpy(plain, wn->data, wbytes);
        ggml_backend_buffer_free(bn);
        ggml_free(pctx);
    }
    ggml_backend_tensor_set(wp, plain, 0, wbytes);

    struct ggml_init_params ip = { 0, NULL, false };
    ip.mem_size = (size_t) (k * n_used * T) * sizeof(float) * 2 + (size_t) (n_used * T) * sizeof(int32_t) +
                  2 * (size_t) (m * n_used * T) * sizeof(float) + 16 * ggml_tensor_overhead() +
                  12 * ggml_graph_overhead();
    struct ggml_context *dctx = ggml_init(ip);
    struct ggml_tensor *x = ggml_new_tensor_3d(dctx, GGML_TYPE_F32, k, n_used, T);
    struct ggml_tensor *ids = ggml_new_tensor_2d(dctx, GGML_TYPE_I32, n_used, T);
    optest_fill(x, &seed, -1.0, 1.0);
    for (int64_t t = 0; t < T; t++) {
        const int64_t first = (int64_t) (optest_next(&seed) % (uint64_t) n_as);
        for (int64_t e = 0; e < n_used; e++)
            ((int32_t *) ids->data)[t * n_used + e] = (int32_t) ((first + e) % n_as);
    }
    struct ggml_tensor *y = ggml_mul_mat_id(dctx, wp, x, ids);

    /* reference: dequantized weights, columns rounded through the vec_dot_type */
    double *w = malloc((size_t) (k * m * n_as) * sizeof *w), *xr = malloc((size_t) (k * n_used * T) * sizeof *xr);
    dequantize_rows(type, plain, m * n_as, k, w);
    round_columns(type, x->data, n_used * T, k, xr);

    bool all_within = true, ok_status = true;
    for (int ti = 0; ti < 5; ti++) {
        const bool use_ref = ti == 4;
        ok_status = ok_status && optest_compute(dctx, y, use_ref ? 2 : ti + 1, use_ref) == GGML_STATUS_SUCCESS;
        for (int64_t t = 0; t < T; t++)
            for (int64_t e = 0; e < n_used; e++) {
                const int64_t xid = ((const int32_t *) ids->data)[t * n_used + e];
                const double *xc = xr + (t * n_used + e) * k;
                for (int64_t r = 0; r < m; r++) {
                    const double *wr = w + (xid * m + r) * k;
                    double ref = 0.0, mag = 0.0;
                    for (int64_t i = 0; i < k; i++) {
                        ref += wr[i] * xc[i];
                        mag += fabs(wr[i] * xc[i]);
                    }
                    const float got = ((const float *) y->data)[(t * n_used + e) * m + r];
                    all_within = all_within && fabs(got - ref) <= 1e-5 * mag + 1e-30;
                }
            }
    }
    ok(ok_status && all_within,
       "MUL_MAT_ID of packed %s experts [%lld, %lld, %lld], %lld used by %lld tokens: within 1e-5 sum|wx| at 1-4 "
       "threads and ref", ggml_type_name(type), (long long) k, (long long) m, (long long) n_as, (long long) n_used,
       (long long) T);
    free(w);
    free(xr);
    free(plain);
    ggml_free(dctx);
    ggml_backend_buffer_free(bp);
    ggml_free(wctx);
}

static void test_products(ggml_backend_buffer_type_t repack)
{
    const int64_t cols[] = { 1, 2, 3, 5, 16, 17, 33 };
    for (size_t t = 0; t < N_PACKED_TYPES; t++) {
        const enum ggml_type type = packed_types[t];
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
            check_product(repack, type, row_values(type, 96), 48, 1, cols[c], 1);
        check_product(repack, type, row_values(type, 320), 32, 2, 7, 4);   /* 3-D weights, broadcast columns */
        check_product(repack, type, row_values(type, 32), 16, 1, 20, 3);
        check_experts(repack, type, row_values(type, 96), 48, 4, 2, 1);    /* one column an expert */
        check_experts(repack, type, row_values(type, 64), 32, 8, 2, 9);    /* a few */
        check_experts(repack, type, row_values(type, 160), 16, 3, 2, 40);  /* many */
    }
}

static void test_supports(ggml_backend_buffer_type_t repack)
{
    ggml_backend_dev_t cpu = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    struct ggml_context *ctx = new_context();
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 32);
    struct ggml_tensor *odd = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 20);
    struct ggml_tensor *e = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_0, 64, 32, 4);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, repack);
    struct ggml_context *gctx = new_context();
    struct ggml_tensor *x = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, 64, 5);
    struct ggml_tensor *ids = ggml_new_tensor_2d(gctx, GGML_TYPE_I32, 2, 5);
    struct ggml_tensor *rows = ggml_new_tensor_1d(gctx, GGML_TYPE_I32, 3);
    struct ggml_tensor *x3 = ggml_new_tensor_3d(gctx, GGML_TYPE_F32, 64, 2, 5);
    ok(ggml_backend_dev_supports_op(cpu, ggml_mul_mat(gctx, w, x)), "MUL_MAT with packed weights: supported");
    ok(ggml_backend_dev_supports_op(cpu, ggml_mul_mat(gctx, odd, x)),
       "MUL_MAT with unpacked weights in the buffer: supported");
    ok(!ggml_backend_dev_supports_op(cpu, ggml_get_rows(gctx, w, rows)), "GET_ROWS of packed data: not supported");
    ok(ggml_backend_dev_supports_op(cpu, ggml_get_rows(gctx, odd, rows)), "GET_ROWS of unpacked data: supported");
    ok(ggml_backend_dev_supports_op(cpu, ggml_mul_mat_id(gctx, e, x3, ids)), "MUL_MAT_ID of packed experts: supported");
    struct ggml_tensor *half = ggml_view_2d(gctx, w, 64, 16, w->nb[1], 0);
    ok(!ggml_backend_dev_supports_op(cpu, ggml_mul_mat(gctx, half, x)),
       "MUL_MAT of a view of packed data: not supported");
    struct ggml_tensor *src = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, 64, 32);
    ok(!ggml_backend_dev_supports_op(cpu, ggml_cpy(gctx, src, w)), "writing packed data (CPY): not supported");
    ggml_free(gctx);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

static void test_scheduler(ggml_backend_buffer_type_t repack)
{
    struct ggml_context *wctx = new_context();
    struct ggml_tensor *w = ggml_new_tensor_2d(wctx, GGML_TYPE_Q4_0, 128, 64);
    struct ggml_tensor *b = ggml_new_tensor_1d(wctx, GGML_TYPE_F32, 64);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, repack);
    ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    struct ggml_context *host = new_context();
    struct ggml_tensor *wh = ggml_dup_tensor(host, w), *bh = ggml_dup_tensor(host, b);
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors_from_buft(host, ggml_backend_cpu_buffer_type());
    optest_fill(wh, &seed, -1.0, 1.0);
    optest_fill(bh, &seed, -1.0, 1.0);
    ggml_backend_tensor_copy(wh, w);
    ggml_backend_tensor_copy(bh, b);

    /* the same graph with the weights in each buffer */
    struct ggml_tensor *outs[2];
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, 256, false, true);
    bool good = true;
    float *res[2];
    for (int v = 0; v < 2; v++) {
        struct ggml_context *g = new_context();
        struct ggml_tensor *x = ggml_new_tensor_2d(g, GGML_TYPE_F32, 128, 9);
        ggml_set_input(x);
        outs[v] = ggml_silu(g, ggml_add(g, ggml_mul_mat(g, v == 0 ? w : wh, x), v == 0 ? b : bh));
        struct ggml_cgraph *gr = ggml_new_graph(g);
        ggml_build_forward_expand(gr, outs[v]);
        ggml_backend_sched_reset(sched);
        good = good && ggml_backend_sched_alloc_graph(sched, gr);
        if (good) {
            float xs[128 * 9];
            for (int i = 0; i < 128 * 9; i++)
                xs[i] = (float) ((i * 7) % 13) / 13.0f - 0.5f;
            ggml_backend_tensor_set(x, xs, 0, sizeof xs);
            good = ggml_backend_sched_graph_compute(sched, gr) == GGML_STATUS_SUCCESS;
        }
        res[v] = malloc(64 * 9 * sizeof(float));
        if (good)
            ggml_backend_tensor_get(outs[v], res[v], 0, 64 * 9 * sizeof(float));
        ggml_free(g);
    }
    ok(good, "a scheduler computes a graph with CPU_REPACK weights");
    double worst = 0.0;
    for (int i = 0; good && i < 64 * 9; i++)
        worst = fmax(worst, fabs(res[0][i] - res[1][i]));
    ok(good && worst <= 1e-5, "the same outputs as with CPU weights (worst difference %.3g)", worst);
    free(res[0]);
    free(res[1]);
    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
    ggml_backend_buffer_free(hbuf);
    ggml_free(host);
    ggml_backend_buffer_free(buf);
    ggml_free(wctx);
}

int main(void)
{
    tap_capture_log();
    ggml_backend_buffer_type_t repack = find_repack();
    if (repack == NULL) {
        tap_skip(1, "this kernel level has no integer tiles: the CPU device offers no CPU_REPACK");
        return tap_done();
    }
    test_buffer_type(repack);
    test_round_trip(repack);
    test_products(repack);
    test_supports(repack);
    test_scheduler(repack);
    return tap_done();
}
