/*
 * test-op-matmul.c - MUL_MAT, MUL_MAT_ID, OUT_PROD, the CPU type traits and
 * the ggml_cpu_* row conversions.
 *
 * Products are checked against references computed here in double
 * precision from the inputs as stored.  The CPU backend first rounds
 * src1 to its vec_dot_type (F16, BF16, Q8_0, Q8_1 or Q8_K for a src0 of
 * the matching type), so each product is checked twice:
 *   - tightly, against a reference that rounds src1 the same way (the
 *     error measured is the kernel's own: single-precision sums, NMSE
 *     about 1e-13, threshold 1e-10 for every type);
 *   - loosely, against the unrounded src1 (the error of the format):
 *     F32 1e-10; F16 1e-6 (binary16 keeps 11 bits: NMSE about 2e-8);
 *     BF16 1e-5 (8 bits: about 1.3e-6); Q8_0/Q8_1/Q8_K 1e-3 (a 127-level
 *     block scale on uniform data: about 2e-5).
 * Every case runs on 1 to 4 threads, with the reference kernels and with
 * the fast ones.
 */
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#    include <cpuid.h>
#endif

#include "ggml-alloc.h"
#include "ggml-backend.h"

#include "tap.h"
#include "op-test.h"

static const enum ggml_type src0_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0,
    GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
};
#define N_SRC0_TYPES (sizeof src0_types / sizeof src0_types[0])
/* More src0 types, of 32 to 128 values a block and vec_dot_type Q8_0
   (tested by test_small_types and test_vec_dot). */
static const enum ggml_type small_types[] = {
    GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_IQ4_NL,
};
#define N_SMALL_TYPES (sizeof small_types / sizeof small_types[0])

/* The 256-value block types (K-quants, TQ, IQ; vec_dot_type q8_K): cases
   of their own, with K a multiple of 256. */
static const enum ggml_type k_types[] = {
    GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
    GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0, GGML_TYPE_IQ4_XS,
    GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M,
    GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
    GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
};
#define N_K_TYPES (sizeof k_types / sizeof k_types[0])
#define N_ANY_SRC0_TYPES (N_SRC0_TYPES + N_SMALL_TYPES + N_K_TYPES)

/* Type i of src0_types, then of small_types, then of k_types. */
static enum ggml_type any_src0_type(size_t i)
{
    return i < N_SRC0_TYPES                 ? src0_types[i]
         : i < N_SRC0_TYPES + N_SMALL_TYPES ? small_types[i - N_SRC0_TYPES]
                                            : k_types[i - N_SRC0_TYPES - N_SMALL_TYPES];
}

#define TIGHT_NMSE 1e-10

static double loose_nmse(enum ggml_type src0_type)
{
    switch (src0_type) {
    case GGML_TYPE_F32:  return 1e-10;
    case GGML_TYPE_F16:  return 1e-6;
    case GGML_TYPE_BF16: return 1e-5;
    default:             return 1e-3;
    }
}

static struct ggml_context *new_context(size_t megabytes)
{
    struct ggml_init_params params = { megabytes << 20, NULL, false };
    return ggml_init(params);
}

static uint16_t read_u16(const uint8_t *p)
{
    return (uint16_t) (p[0] | p[1] << 8);
}

/*
 * n values of a row of type as floats.  Q8_0, Q8_1 and Q8_K are decoded
 * here from their block layouts (ggml's file format): binary16 d (and s
 * for Q8_1), then 32 int8 quants; value j = d * q[j]; Q8_K: single d,
 * 256 int8 quants, 16 int16 sums.
 */
static void decode_row(enum ggml_type type, const void *src, float *dst, int64_t n)
{
    const uint8_t *p = src;
    switch (type) {
    case GGML_TYPE_F32:
        memcpy(dst, src, (size_t) n * sizeof *dst);
        break;
    case GGML_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            dst[i] = ggml_fp16_to_fp32(read_u16(p + 2 * i));
        break;
    case GGML_TYPE_BF16:
        for (int64_t i = 0; i < n; i++) {
            ggml_bf16_t h = { read_u16(p + 2 * i) };
            dst[i] = ggml_bf16_to_fp32(h);
        }
        break;
    case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q8_1: {
        const size_t header = type == GGML_TYPE_Q8_0 ? 2 : 4, block = header + 32;
        for (int64_t b = 0; b < n / 32; b++) {
            const float d = ggml_fp16_to_fp32(read_u16(p + b * block));
            for (int j = 0; j < 32; j++)
                dst[b * 32 + j] = d * (float) (int8_t) p[b * block + header + j];
        }
        break;
    }
    case GGML_TYPE_Q8_K:
        for (int64_t b = 0; b < n / 256; b++) {
            float d;
            memcpy(&d, p + b * 292, sizeof d);
            for (int j = 0; j < 256; j++)
                dst[b * 256 + j] = d * (float) (int8_t) p[b * 292 + 4 + j];
        }
        break;
    default:
        ggml_get_type_traits(type)->to_float(src, dst, n);
        break;
    }
}

/* Rounds row (n values) as the CPU backend rounds src1 for a src0 of type src0_type. */
static void round_like_vec_dot(enum ggml_type src0_type, float *row, int64_t n)
{
    const enum ggml_type vdt = ggml_get_type_traits_cpu(src0_type)->vec_dot_type;
    if (vdt == GGML_TYPE_F32)
        return;
    void *buf = malloc(ggml_row_size(vdt, n) + 1);
    ggml_get_type_traits_cpu(vdt)->from_float(row, buf, n);
    decode_row(vdt, buf, row, n);
    free(buf);
}

/* All values of t as doubles, indexed i0 + ne0 * (i1 + ne1 * (i2 + ne2 * i3)). */
static double *tensor_values(const struct ggml_tensor *t)
{
    double *v = malloc((size_t) (ggml_nelements(t) + 1) * sizeof *v);
    int64_t k = 0;
    if (t->type == GGML_TYPE_Q8_1) {
        /* no to_float for optest_get: decode whole rows */
        float *row = malloc((size_t) (t->ne[0] + 1) * sizeof *row);
        for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
                for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                    decode_row(t->type, optest_elem(t, 0, i1, i2, i3), row, t->ne[0]);
                    for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
                        v[k++] = row[i0];
                }
        free(row);
        return v;
    }
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
                    v[k++] = optest_get(t, i0, i1, i2, i3);
    return v;
}

/* Rows (along dim 0) of a values array rounded like src0_type's vec_dot_type. */
static void round_rows(double *v, int64_t row_len, int64_t n_rows, enum ggml_type src0_type)
{
    float *row = malloc((size_t) (row_len + 1) * sizeof *row);
    for (int64_t r = 0; r < n_rows; r++) {
        for (int64_t i = 0; i < row_len; i++)
            row[i] = (float) v[r * row_len + i];
        round_like_vec_dot(src0_type, row, row_len);
        for (int64_t i = 0; i < row_len; i++)
            v[r * row_len + i] = row[i];
    }
    free(row);
}

/* ---------------------------------------------------------------- MUL_MAT */

enum layout { CONTIGUOUS, TRANSPOSED, PERMUTED };

struct mm_case {
    enum ggml_type ta, tb;
    int64_t K, M, N;
    int64_t a2, a3, b2, b3;
    enum layout b_layout;
    bool a_padded;    /* a is a view whose rows are longer than K */
};

/* v rounded to the nearest BF16 value, ties to even (finite values). */
static double round_to_bf16(double v)
{
    float f = (float) v;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Whether the processor is AMD's (CPUID vendor "AuthenticAMD"). */
static bool cpu_is_amd(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned int a, b, c, d;
    return __get_cpuid(0, &a, &b, &c, &d) && memcmp(&b, "Auth", 4) == 0 && memcmp(&d, "enti", 4) == 0 &&
           memcmp(&c, "cAMD", 4) == 0;
#else
    return false;
#endif
}

/*
 * Whether the fast kernels multiply F16 and BF16 weights by N columns in
 * BF16 pairs (ggml_mul_mat(3)): at the avx512 level of an AMD processor
 * with AVX512_BF16, more than 128 columns.
 */
static bool in_bf16_pairs(enum ggml_type ta, int64_t N)
{
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("CPU");
    ggml_backend_get_features_t get = (ggml_backend_get_features_t) ggml_backend_reg_get_proc_address(
        reg, "ggml_backend_get_features");
    bool level = false, bf16 = false;
    for (struct ggml_backend_feature *f = get != NULL ? get(reg) : NULL; f != NULL && f->name != NULL; f++) {
        level = level || (strcmp(f->name, "ISA") == 0 && strcmp(f->value, "avx512") == 0);
        bf16 = bf16 || (strcmp(f->name, "AVX512_BF16") == 0 && strcmp(f->value, "1") == 0);
    }
    return level && bf16 && cpu_is_amd() && (ta == GGML_TYPE_F16 || ta == GGML_TYPE_BF16) && N > 128;
}

/*
 * ref[m + M * (n + N * (i2 + b2 * i3))] = sum_k a[k, m, i2 / r2, i3 / r3] * b[k, n, i2, i3];
 * round_b: b rounded as vec_dot_type; in_bf16: then a and b rounded to BF16.
 */
static double *mul_mat_reference(const struct ggml_tensor *a, const struct ggml_tensor *b, bool round_b,
                                 bool in_bf16)
{
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
    double *av = tensor_values(a), *bv = tensor_values(b);
    if (round_b && b->type == GGML_TYPE_F32)
        round_rows(bv, K, ggml_nrows(b), a->type);
    for (int64_t i = 0; in_bf16 && i < ggml_nelements(a); i++)
        av[i] = round_to_bf16(av[i]);
    for (int64_t i = 0; in_bf16 && i < ggml_nelements(b); i++)
        bv[i] = round_to_bf16(bv[i]);
    double *ref = malloc((size_t) (M * N * b->ne[2] * b->ne[3] + 1) * sizeof *ref);
    int64_t o = 0;
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++) {
            const int64_t i02 = i2 / (b->ne[2] / a->ne[2]), i03 = i3 / (b->ne[3] / a->ne[3]);
            const double *am = av + (i02 + a->ne[2] * i03) * M * K;
            const double *bm = bv + (i2 + b->ne[2] * i3) * N * K;
            for (int64_t n = 0; n < N; n++)
                for (int64_t m = 0; m < M; m++, o++) {
                    double s = 0.0;
                    for (int64_t k = 0; k < K; k++)
                        s += am[m * K + k] * bm[n * K + k];
                    ref[o] = s;
                }
        }
    free(av);
    free(bv);
    return ref;
}

/*
 * For src0 types whose vec_dot_type is Q8_1 (Q4_1, Q5_1): ggml's integer
 * dot product takes the minimum's term of each block as m_a * s_b, with
 * s_b the block's stored sum (binary16 of d * sum q, d unrounded), where
 * the plain product of the decoded values has m_a * d_b * sum q.
 * q8_1_sum_term gives that difference for a row of A (arow, type at) and
 * a row of b (bn, K values); added to the reference with round_b, it
 * gives the reference of the dot-product path.  A's block: binary16 d,
 * binary16 m, then the quants (m at byte 2).
 */
static double q8_1_sum_term(enum ggml_type at, const uint8_t *arow, const double *bn, int64_t K)
{
    const size_t qblock = 36;   /* Q8_1: d, s, 32 quants */
    float *row = malloc((size_t) (K + 1) * sizeof *row);
    uint8_t *q = malloc(ggml_row_size(GGML_TYPE_Q8_1, K) + 1);
    for (int64_t k = 0; k < K; k++)
        row[k] = (float) bn[k];
    ggml_get_type_traits_cpu(GGML_TYPE_Q8_1)->from_float(row, q, K);
    double term = 0.0;
    for (int64_t blk = 0; blk < K / 32; blk++) {
        const uint8_t *qb = q + blk * qblock;
        long qsum = 0;
        for (int j = 0; j < 32; j++)
            qsum += (int8_t) qb[4 + j];
        const double d = ggml_fp16_to_fp32(read_u16(qb)), sb = ggml_fp16_to_fp32(read_u16(qb + 2));
        const double ma = ggml_fp16_to_fp32(read_u16(arow + blk * ggml_type_size(at) + 2));
        term += ma * (sb - d * (double) qsum);
    }
    free(q);
    free(row);
    return term;
}

/* Adds q8_1_sum_term to ref (from mul_mat_reference with round_b) for every output of a x b. */
static void add_q8_1_sum_terms(const struct ggml_tensor *a, const struct ggml_tensor *b, double *ref)
{
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
    double *bv = tensor_values(b);
    int64_t o = 0;
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++) {
            const int64_t i02 = i2 / (b->ne[2] / a->ne[2]), i03 = i3 / (b->ne[3] / a->ne[3]);
            for (int64_t n = 0; n < N; n++) {
                const double *bn = bv + ((i2 + b->ne[2] * i3) * N + n) * K;
                for (int64_t m = 0; m < M; m++, o++)
                    ref[o] += q8_1_sum_term(a->type, (const uint8_t *) a->data + m * a->nb[1] + i02 * a->nb[2] +
                                                         i03 * a->nb[3], bn, K);
            }
        }
    free(bv);
}

static const char *layout_name(enum layout l)
{
    return l == CONTIGUOUS ? "" : l == TRANSPOSED ? ", b transposed" : ", b permuted";
}

static void check_mul_mat(const struct mm_case *c, uint64_t *seed)
{
    struct ggml_context *ctx = new_context(64);
    const int64_t K = c->K, M = c->M, N = c->N;

    struct ggml_tensor *a;
    if (c->a_padded) {
        const int64_t extra = ggml_blck_size(c->ta);
        struct ggml_tensor *big = ggml_new_tensor_4d(ctx, c->ta, K + extra, M, c->a2, c->a3);
        optest_fill(big, seed, -1.0, 1.0);
        a = ggml_view_4d(ctx, big, K, M, c->a2, c->a3, big->nb[1], big->nb[2], big->nb[3], 0);
    } else {
        a = ggml_new_tensor_4d(ctx, c->ta, K, M, c->a2, c->a3);
        optest_fill(a, seed, -1.0, 1.0);
    }

    struct ggml_tensor *b, *base;
    switch (c->b_layout) {
    case TRANSPOSED:
        base = ggml_new_tensor_4d(ctx, c->tb, N, K, c->b2, c->b3);
        optest_fill(base, seed, -1.0, 1.0);
        b = ggml_transpose(ctx, base);
        break;
    case PERMUTED:
        base = ggml_new_tensor_4d(ctx, c->tb, K, c->b2, N, c->b3);
        optest_fill(base, seed, -1.0, 1.0);
        b = ggml_permute(ctx, base, 0, 2, 1, 3);
        break;
    default:
        b = ggml_new_tensor_4d(ctx, c->tb, K, N, c->b2, c->b3);
        optest_fill(b, seed, -1.0, 1.0);
        break;
    }

    double *tight = mul_mat_reference(a, b, true, false);
    double *loose = mul_mat_reference(a, b, false, false);
    /* Q4_1, Q5_1: the dot-product path's semantics (see add_q8_1_sum_terms) */
    double *tight_sums = NULL;
    if (ggml_get_type_traits_cpu(c->ta)->vec_dot_type == GGML_TYPE_Q8_1 && b->type == GGML_TYPE_F32) {
        tight_sums = mul_mat_reference(a, b, true, false);
        add_q8_1_sum_terms(a, b, tight_sums);
    }
    /* the fast kernels' BF16 pairs: checked against a and b rounded so, and loosely as BF16 weights */
    const bool pairs = in_bf16_pairs(c->ta, N);
    double *tight_pairs = pairs ? mul_mat_reference(a, b, true, true) : NULL;
    double worst_tight = 0.0, worst_loose = 0.0;
    bool all_ok = true;
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            struct ggml_tensor *out = ggml_mul_mat(ctx, a, b);
            enum ggml_status status = out ? optest_compute(ctx, out, n_threads, use_ref) : GGML_STATUS_FAILED;
            const bool in_pairs = pairs && !use_ref;
            double nt = out ? optest_nmse(out, in_pairs ? tight_pairs : tight) : INFINITY;
            double nl = out ? optest_nmse(out, loose) : INFINITY;
            if (out != NULL && tight_sums != NULL && !(nt <= TIGHT_NMSE))
                nt = optest_nmse(out, tight_sums);
            const double loose_limit = loose_nmse(in_pairs ? GGML_TYPE_BF16 : c->ta);
            if (status != GGML_STATUS_SUCCESS || !(nt <= TIGHT_NMSE) || !(nl <= loose_limit)) {
                all_ok = false;
                tap_diag("%d threads, %s: status %d, nmse %.3g / %.3g", n_threads, use_ref ? "reference" : "fast",
                         (int) status, nt, nl);
            }
            worst_tight = nt > worst_tight ? nt : worst_tight;
            worst_loose = nl > worst_loose ? nl : worst_loose;
        }
    ok(all_ok, "mul_mat %s x %s, K %lld, M %lld, N %lld, a [%lld,%lld] over b [%lld,%lld]%s%s%s: nmse %.2g / %.2g",
       ggml_type_name(c->ta), ggml_type_name(c->tb), (long long) K, (long long) M, (long long) N,
       (long long) c->a2, (long long) c->a3, (long long) c->b2, (long long) c->b3, layout_name(c->b_layout),
       c->a_padded ? ", a padded" : "", pairs ? ", BF16 pairs" : "", worst_tight, worst_loose);
    free(tight);
    free(tight_pairs);
    free(tight_sums);
    free(loose);
    ggml_free(ctx);
}

static void test_mul_mat(void)
{
    uint64_t seed = 0x6d756c6d6174ull;
    const int64_t sizes[] = { 1, 3, 31, 33 };
    const int64_t batches[][4] = { { 1, 1, 1, 1 }, { 1, 1, 2, 3 }, { 2, 1, 2, 3 } };
    for (size_t t = 0; t < N_SRC0_TYPES; t++) {
        const enum ggml_type ta = src0_types[t];
        const bool quantized = ggml_is_quantized(ta);
        int variant = 0;
        for (size_t im = 0; im < 4; im++)
            for (size_t in = 0; in < 4; in++, variant++) {
                /* K: odd lengths for float types, whole blocks for quantized ones;
                   257 and 288 cross the kernel's k-panel of 256 */
                const int64_t k_float[] = { 1, 33, 257 }, k_quant[] = { 32, 288 };
                const int64_t K = quantized ? k_quant[variant % 2] : k_float[variant % 3];
                const int64_t *bt = batches[variant % 3];
                const struct mm_case c = {
                    ta, GGML_TYPE_F32, K, sizes[im], sizes[in], bt[0], bt[1], bt[2], bt[3],
                    (enum layout) (variant % 5 == 4 ? TRANSPOSED : variant % 7 == 6 ? PERMUTED : CONTIGUOUS),
                    variant % 4 == 1,
                };
                check_mul_mat(&c, &seed);
            }
        /* bigger: several tiles, panels of columns and k */
        const struct mm_case big = { ta, GGML_TYPE_F32, quantized ? 544 : 531, 67, 300, 1, 1, 1, 1, CONTIGUOUS, false };
        check_mul_mat(&big, &seed);
        /* src1 non-contiguous in every way, with broadcasting */
        const struct mm_case tr = { ta, GGML_TYPE_F32, quantized ? 64 : 37, 19, 13, 1, 2, 3, 2, TRANSPOSED, true };
        check_mul_mat(&tr, &seed);
        const struct mm_case pm = { ta, GGML_TYPE_F32, quantized ? 96 : 45, 9, 17, 2, 1, 4, 3, PERMUTED, false };
        check_mul_mat(&pm, &seed);
    }
    /* more rows of A than one packed block (512) */
    const struct mm_case tall_f32 = { GGML_TYPE_F32, GGML_TYPE_F32, 40, 600, 7, 1, 1, 1, 1, CONTIGUOUS, false };
    check_mul_mat(&tall_f32, &seed);
    const struct mm_case tall_q = { GGML_TYPE_Q5_1, GGML_TYPE_F32, 64, 530, 9, 1, 1, 1, 1, PERMUTED, false };
    check_mul_mat(&tall_q, &seed);
    /* more columns than the dot tile takes: F16 and BF16 weights in BF16 pairs where the level has them,
       BF16 rows read in place (even K, aligned rows, also padded) or converted (odd K) */
    const struct mm_case pairs[] = {
        { GGML_TYPE_BF16, GGML_TYPE_F32, 512, 40, 200, 1, 1, 1, 1, CONTIGUOUS, false },
        { GGML_TYPE_BF16, GGML_TYPE_F32, 64, 45, 140, 1, 1, 1, 1, CONTIGUOUS, true },
        { GGML_TYPE_BF16, GGML_TYPE_F32, 33, 17, 131, 1, 1, 1, 1, TRANSPOSED, false },
        { GGML_TYPE_F16, GGML_TYPE_F32, 258, 33, 129, 1, 1, 2, 1, CONTIGUOUS, false },
        { GGML_TYPE_F16, GGML_TYPE_F16, 70, 31, 150, 1, 1, 1, 1, CONTIGUOUS, true },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        check_mul_mat(&pairs[i], &seed);
    /* K = 0: the sums are empty, the result is zeros */
    const struct mm_case empty_f32 = { GGML_TYPE_F32, GGML_TYPE_F32, 0, 5, 7, 1, 1, 2, 1, CONTIGUOUS, false };
    check_mul_mat(&empty_f32, &seed);
    const struct mm_case empty_f16 = { GGML_TYPE_F16, GGML_TYPE_F32, 0, 9, 2, 1, 1, 1, 1, TRANSPOSED, false };
    check_mul_mat(&empty_f16, &seed);
    /* src1 already of vec_dot_type */
    const struct { enum ggml_type ta, tb; } direct[] = {
        { GGML_TYPE_F16, GGML_TYPE_F16 }, { GGML_TYPE_BF16, GGML_TYPE_BF16 }, { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0 },
        { GGML_TYPE_Q4_1, GGML_TYPE_Q8_1 }, { GGML_TYPE_Q5_0, GGML_TYPE_Q8_0 }, { GGML_TYPE_Q5_1, GGML_TYPE_Q8_1 },
        { GGML_TYPE_Q8_0, GGML_TYPE_Q8_0 },
    };
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++) {
        const struct mm_case c = { direct[i].ta, direct[i].tb, 64, 33, 31, 1, 1, 2, 1, CONTIGUOUS, false };
        check_mul_mat(&c, &seed);
        if (!ggml_is_quantized(direct[i].tb)) {
            const struct mm_case t = { direct[i].ta, direct[i].tb, 35, 5, 7, 1, 1, 1, 1, TRANSPOSED, false };
            check_mul_mat(&t, &seed);
        }
    }
}

/*
 * GGML_PREC_F32 on a node of F16 weights by more columns than the dot
 * tile takes: single precision throughout, checked tightly against the
 * F16 reference (where BF16 pairs would miss it by some 1e-6).
 */
static void test_mul_mat_prec_f32(void)
{
    uint64_t seed = 0x70726563ull;
    struct ggml_context *ctx = new_context(16);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 96, 37);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 96, 150);
    optest_fill(a, &seed, -1.0, 1.0);
    optest_fill(b, &seed, -1.0, 1.0);
    double *tight = mul_mat_reference(a, b, true, false);
    bool all_ok = true;
    double worst = 0.0;
    for (int n_threads = 1; n_threads <= 4; n_threads++) {
        struct ggml_tensor *out = ggml_mul_mat(ctx, a, b);
        ggml_mul_mat_set_prec(out, GGML_PREC_F32);
        const enum ggml_status status = optest_compute(ctx, out, n_threads, false);
        const double nt = optest_nmse(out, tight);
        worst = nt > worst ? nt : worst;
        all_ok = all_ok && status == GGML_STATUS_SUCCESS && nt <= TIGHT_NMSE;
    }
    ok(all_ok, "mul_mat f16 x f32, K 96, M 37, N 150, GGML_PREC_F32: single precision, nmse %.2g", worst);
    free(tight);
    ggml_free(ctx);
}

/*
 * MUL_MAT, MUL_MAT_ID and OUT_PROD of small_types: the dot path (at most 3 columns),
 * the packed path (rows converted with to_float), src1 of every layout and
 * already Q8_0, batches with broadcasting.
 */
static void check_mul_mat_id(enum ggml_type ta, int64_t K, int64_t M, int64_t n_as, int64_t n_used, int64_t ne11,
                             int64_t T, bool bad_id, uint64_t *seed);
static void check_out_prod(enum ggml_type ta, int64_t P, int64_t Q, int64_t K, int64_t a2, int64_t a3, int64_t b2,
                           int64_t b3, bool b_transposed, uint64_t *seed);

static void test_small_types(void)
{
    uint64_t seed = 0x736d616c6cull;
    for (size_t t = 0; t < N_SMALL_TYPES; t++) {
        const enum ggml_type ta = small_types[t];
        const int64_t blk = ggml_blck_size(ta);
        const int64_t K1 = blk < 128 ? 128 : blk, K3 = 3 * K1;
        const struct mm_case cases[] = {
            { ta, GGML_TYPE_F32, K1, 7, 1, 1, 1, 1, 1, CONTIGUOUS, false },
            { ta, GGML_TYPE_F32, K3, 33, 3, 1, 1, 2, 3, CONTIGUOUS, true },
            { ta, GGML_TYPE_F32, K3, 31, 33, 1, 1, 1, 1, CONTIGUOUS, false },
            { ta, GGML_TYPE_F32, K1, 9, 17, 2, 1, 4, 3, PERMUTED, false },
            { ta, GGML_TYPE_F32, K1, 19, 13, 1, 2, 3, 2, TRANSPOSED, true },
            { ta, GGML_TYPE_F32, 4 * K1, 67, 300, 1, 1, 1, 1, CONTIGUOUS, false },
            { ta, GGML_TYPE_Q8_0, K1, 33, 31, 1, 1, 2, 1, CONTIGUOUS, false },
            { ta, GGML_TYPE_Q8_0, K3, 5, 2, 1, 1, 1, 1, CONTIGUOUS, false },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            check_mul_mat(&cases[i], &seed);
        check_mul_mat_id(ta, K1, 31, 4, 2, 2, 5, false, &seed);
        check_mul_mat_id(ta, K3, 3, 6, 3, 1, 33, false, &seed);
        check_mul_mat_id(ta, K1, 9, 4, 2, 2, 6, true, &seed);
        check_out_prod(ta, K1, 33, 31, 1, 1, 1, 1, false, &seed);
        check_out_prod(ta, K1, 7, 9, 1, 1, 2, 3, true, &seed);
    }
}

/* ------------------------------------------------------------- MUL_MAT_ID */

/* ref[m + M * (e + n_used * t)] = sum_k as[k, m, ids[e, t]] * b[k, e % ne11, t] (NaN for a bad id) */
static double *mul_mat_id_reference(const struct ggml_tensor *as, const struct ggml_tensor *b,
                                    const struct ggml_tensor *ids, bool round_b, bool q8_1_sums)
{
    const int64_t K = as->ne[0], M = as->ne[1], n_used = ids->ne[0], T = ids->ne[1];
    double *av = tensor_values(as), *bv = tensor_values(b), *raw = tensor_values(b);
    if (round_b)
        round_rows(bv, K, ggml_nrows(b), as->type);
    double *ref = malloc((size_t) (M * n_used * T + 1) * sizeof *ref);
    for (int64_t t = 0; t < T; t++)
        for (int64_t e = 0; e < n_used; e++) {
            const int64_t x = (int64_t) optest_get(ids, e, t, 0, 0);
            const double *brow = bv + (e % b->ne[1] + b->ne[1] * t) * K;
            for (int64_t m = 0; m < M; m++) {
                double s = 0.0;
                for (int64_t k = 0; k < K; k++)
                    s += x >= 0 && x < as->ne[2] ? av[(x * M + m) * K + k] * brow[k] : NAN;
                if (q8_1_sums && x >= 0 && x < as->ne[2])
                    s += q8_1_sum_term(as->type, (const uint8_t *) as->data + m * as->nb[1] + x * as->nb[2],
                                       raw + (brow - bv), K);
                ref[m + M * (e + n_used * t)] = K > 0 ? s : 0.0;
            }
        }
    free(av);
    free(bv);
    free(raw);
    return ref;
}

/* NMSE over the entries whose reference is not NaN; those must be NaN in out. */
static double nmse_with_nan(const struct ggml_tensor *out, const double *ref)
{
    double err = 0.0, norm = 0.0;
    int64_t k = 0;
    for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
            for (int64_t i0 = 0; i0 < out->ne[0]; i0++, k++) {
                const double got = optest_get(out, i0, i1, i2, 0);
                if (isnan(ref[k])) {
                    if (!isnan(got))
                        return INFINITY;
                    continue;
                }
                err += (got - ref[k]) * (got - ref[k]);
                norm += ref[k] * ref[k];
            }
    if (isnan(err))
        return INFINITY;
    return norm > 0.0 ? err / norm : err;
}

/*
 * nmse_with_nan where each expert's outputs follow ref_a or ref_b, the
 * closer (Q4_1 and Q5_1: an expert's product takes the dot products or
 * the float tiles by the number of its columns).
 */
static double nmse_by_expert(const struct ggml_tensor *out, const struct ggml_tensor *ids, int64_t n_as,
                             const double *ref_a, const double *ref_b)
{
    double *err = calloc((size_t) (2 * n_as), sizeof *err), norm = 0.0;
    const int64_t M = out->ne[0];
    bool nan_ok = true;
    for (int64_t t = 0; t < out->ne[2]; t++)
        for (int64_t e = 0; e < out->ne[1]; e++) {
            const int64_t x = (int64_t) optest_get(ids, e, t, 0, 0);
            for (int64_t m = 0; m < M; m++) {
                const int64_t k = m + M * (e + out->ne[1] * t);
                const double got = optest_get(out, m, e, t, 0);
                if (isnan(ref_a[k])) {
                    nan_ok = nan_ok && isnan(got);
                    continue;
                }
                err[2 * x] += (got - ref_a[k]) * (got - ref_a[k]);
                err[2 * x + 1] += (got - ref_b[k]) * (got - ref_b[k]);
                norm += ref_a[k] * ref_a[k];
            }
        }
    double sum = 0.0;
    for (int64_t x = 0; x < n_as; x++)
        sum += err[2 * x] < err[2 * x + 1] ? err[2 * x] : err[2 * x + 1];
    free(err);
    if (!nan_ok || isnan(sum))
        return INFINITY;
    return norm > 0.0 ? sum / norm : sum;
}

static void check_mul_mat_id(enum ggml_type ta, int64_t K, int64_t M, int64_t n_as, int64_t n_used, int64_t ne11,
                             int64_t T, bool bad_id, uint64_t *seed)
{
    struct ggml_context *ctx = new_context(32);
    struct ggml_tensor *as = ggml_new_tensor_3d(ctx, ta, K, M, n_as);
    struct ggml_tensor *b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, K, ne11, T);
    struct ggml_tensor *ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, T);
    ggml_set_name(ids, "ids");
    optest_fill(as, seed, -1.0, 1.0);
    optest_fill(b, seed, -1.0, 1.0);
    for (int64_t t = 0; t < T; t++)
        for (int64_t e = 0; e < n_used; e++) {
            /* distinct experts per token when there are enough, as a router picks them */
            int64_t x = (int64_t) (optest_next(seed) % (uint64_t) n_as);
            if (n_used <= n_as)
                x = (x + e) % n_as;
            optest_set(ids, e, t, 0, 0, (double) x);
        }
    if (bad_id)
        optest_set(ids, n_used - 1, T / 2, 0, 0, (double) n_as);

    double *tight = mul_mat_id_reference(as, b, ids, true, false);
    double *loose = mul_mat_id_reference(as, b, ids, false, false);
    /* Q4_1, Q5_1: experts with few columns take the dot products (see q8_1_sum_term) */
    double *tight_sums = NULL;
    if (ggml_get_type_traits_cpu(ta)->vec_dot_type == GGML_TYPE_Q8_1)
        tight_sums = mul_mat_id_reference(as, b, ids, true, true);
    double worst_tight = 0.0, worst_loose = 0.0;
    bool all_ok = true;
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            struct ggml_tensor *out = ggml_mul_mat_id(ctx, as, b, ids);
            tap_log_errors();
            enum ggml_status status = out ? optest_compute(ctx, out, n_threads, use_ref) : GGML_STATUS_FAILED;
            const int errors = tap_log_errors();
            double nt = out ? nmse_with_nan(out, tight) : INFINITY, nl = out ? nmse_with_nan(out, loose) : INFINITY;
            if (out != NULL && tight_sums != NULL && !(nt <= TIGHT_NMSE))
                nt = nmse_by_expert(out, ids, n_as, tight, tight_sums);
            if (status != GGML_STATUS_SUCCESS || !(nt <= TIGHT_NMSE) || !(nl <= loose_nmse(ta)) ||
                errors != (bad_id ? 1 : 0)) {
                all_ok = false;
                tap_diag("%d threads, %s: status %d, nmse %.3g / %.3g, %d errors logged", n_threads,
                         use_ref ? "reference" : "fast", (int) status, nt, nl, errors);
            }
            worst_tight = nt > worst_tight ? nt : worst_tight;
            worst_loose = nl > worst_loose ? nl : worst_loose;
        }
    ok(all_ok, "mul_mat_id %s, K %lld, M %lld, %lld experts, %lld used, b rows %lld, %lld tokens%s: nmse %.2g / %.2g",
       ggml_type_name(ta), (long long) K, (long long) M, (long long) n_as, (long long) n_used, (long long) ne11,
       (long long) T, bad_id ? ", a bad id (NaN, one error)" : "", worst_tight, worst_loose);
    free(tight);
    free(loose);
    free(tight_sums);
    ggml_free(ctx);
}

static void test_mul_mat_id(void)
{
    uint64_t seed = 0x6d6d6964ull;
    for (size_t t = 0; t < N_SRC0_TYPES; t++) {
        const enum ggml_type ta = src0_types[t];
        const int64_t K = ggml_is_quantized(ta) ? 64 : 33;
        check_mul_mat_id(ta, K, 31, 4, 2, 2, 5, false, &seed);
        check_mul_mat_id(ta, K, 3, 6, 3, 1, 33, false, &seed);
    }
    check_mul_mat_id(GGML_TYPE_F32, 257, 33, 8, 4, 4, 31, false, &seed);
    check_mul_mat_id(GGML_TYPE_Q4_0, 288, 40, 3, 3, 3, 70, false, &seed);   /* many tokens per expert */
    /* experts with 1-3 columns (dot products) beside ones with more (tiles, interleaved rows) */
    check_mul_mat_id(GGML_TYPE_Q8_0, 96, 48, 16, 2, 2, 20, false, &seed);
    check_mul_mat_id(GGML_TYPE_IQ4_NL, 64, 33, 8, 2, 1, 40, false, &seed);
    check_mul_mat_id(GGML_TYPE_Q4_1, 64, 20, 8, 2, 2, 60, false, &seed);
    check_mul_mat_id(GGML_TYPE_F16, 40, 17, 8, 2, 2, 30, false, &seed);
    check_mul_mat_id(GGML_TYPE_F16, 16, 5, 2, 5, 5, 3, false, &seed);       /* experts used twice */
    check_mul_mat_id(GGML_TYPE_F32, 0, 7, 4, 2, 2, 3, false, &seed);        /* K = 0 */
    check_mul_mat_id(GGML_TYPE_F32, 20, 7, 4, 2, 1, 6, true, &seed);
    check_mul_mat_id(GGML_TYPE_Q8_0, 32, 9, 4, 2, 2, 6, true, &seed);
}

/* Many experts, few pairs: the scratch follows the pairs, not the experts. */
static void test_mul_mat_id_many_experts(void)
{
    const int64_t n_as = INT64_C(1) << 30;
    struct ggml_init_params params = { 16 * ggml_tensor_overhead() + ggml_graph_overhead() + 4096, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *as = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 0, 3, n_as);   /* no bytes: K = 0 */
    struct ggml_tensor *b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 0, 2, 4);
    struct ggml_tensor *ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 2, 4);
    for (int i = 0; i < 8; i++)
        ggml_set_i32_1d(ids, i, (int32_t) (i % 2 ? n_as - 1 - i : 5 * i));
    struct ggml_tensor *r = ggml_mul_mat_id(ctx, as, b, ids);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, r);
    struct ggml_cplan plan = ggml_graph_plan(g, 2, NULL);
    ok(plan.work_size < 4096, "mul_mat_id of 8 pairs over 2^30 experts plans %zu bytes of scratch", plan.work_size);
    is_int(ggml_graph_compute_with_ctx(ctx, g, 2), GGML_STATUS_SUCCESS, "... and computes");
    bool zeros = true;
    for (int64_t i = 0; i < ggml_nelements(r); i++)
        zeros = zeros && ggml_get_f32_1d(r, (int) i) == 0.0f;
    ok(zeros, "... an empty inner dimension gives zeros");
    ggml_free(ctx);
}

/* ---------------------------------------------------------------- OUT_PROD */

/* ref[i0 + P * (i1 + Q * (i2 + b2 * i3))] = sum_k a[i0, k, i2 / r2, i3 / r3] * b[i1, k, i2, i3] */
static double *out_prod_reference(const struct ggml_tensor *a, const struct ggml_tensor *b)
{
    const int64_t P = a->ne[0], K = a->ne[1], Q = b->ne[0];
    double *av = tensor_values(a), *bv = tensor_values(b);
    double *ref = malloc((size_t) (P * Q * b->ne[2] * b->ne[3] + 1) * sizeof *ref);
    int64_t o = 0;
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++) {
            const int64_t i02 = i2 / (b->ne[2] / a->ne[2]), i03 = i3 / (b->ne[3] / a->ne[3]);
            const double *am = av + (i02 + a->ne[2] * i03) * P * K;
            const double *bm = bv + (i2 + b->ne[2] * i3) * Q * K;
            for (int64_t i1 = 0; i1 < Q; i1++)
                for (int64_t i0 = 0; i0 < P; i0++, o++) {
                    double s = 0.0;
                    for (int64_t k = 0; k < K; k++)
                        s += am[k * P + i0] * bm[k * Q + i1];
                    ref[o] = s;
                }
        }
    free(av);
    free(bv);
    return ref;
}

static void check_out_prod(enum ggml_type ta, int64_t P, int64_t Q, int64_t K, int64_t a2, int64_t a3, int64_t b2,
                           int64_t b3, bool b_transposed, uint64_t *seed)
{
    struct ggml_context *ctx = new_context(32);
    struct ggml_tensor *a = ggml_new_tensor_4d(ctx, ta, P, K, a2, a3);
    optest_fill(a, seed, -1.0, 1.0);
    struct ggml_tensor *b;
    if (b_transposed) {
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, K, Q, b2, b3);
        optest_fill(base, seed, -1.0, 1.0);
        b = ggml_transpose(ctx, base);
    } else {
        b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, Q, K, b2, b3);
        optest_fill(b, seed, -1.0, 1.0);
    }
    double *ref = out_prod_reference(a, b);
    double worst = 0.0;
    bool all_ok = true;
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            struct ggml_tensor *out = ggml_out_prod(ctx, a, b);
            enum ggml_status status = out ? optest_compute(ctx, out, n_threads, use_ref) : GGML_STATUS_FAILED;
            double nmse = out ? optest_nmse(out, ref) : INFINITY;
            if (status != GGML_STATUS_SUCCESS || !(nmse <= TIGHT_NMSE)) {
                all_ok = false;
                tap_diag("%d threads, %s: status %d, nmse %.3g", n_threads, use_ref ? "reference" : "fast",
                         (int) status, nmse);
            }
            worst = nmse > worst ? nmse : worst;
        }
    ok(all_ok, "out_prod %s, P %lld, Q %lld, K %lld, a [%lld,%lld] over b [%lld,%lld]%s: nmse %.2g",
       ggml_type_name(ta), (long long) P, (long long) Q, (long long) K, (long long) a2, (long long) a3,
       (long long) b2, (long long) b3, b_transposed ? ", b transposed" : "", worst);
    free(ref);
    ggml_free(ctx);
}

static void test_out_prod(void)
{
    uint64_t seed = 0x6f757470ull;
    const int64_t sizes[] = { 1, 3, 31, 33 };
    const int64_t ks[] = { 1, 33, 257 };
    int variant = 0;
    for (size_t ip = 0; ip < 4; ip++)
        for (size_t iq = 0; iq < 4; iq++, variant++) {
            const int64_t b2 = variant % 3 == 0 ? 1 : 2, b3 = variant % 3 == 2 ? 3 : 1;
            const int64_t a2 = variant % 2 ? 1 : b2;
            check_out_prod(GGML_TYPE_F32, sizes[ip], sizes[iq], ks[variant % 3], a2, 1, b2, b3, variant % 4 == 3,
                           &seed);
        }
    check_out_prod(GGML_TYPE_F32, 70, 300, 300, 1, 1, 1, 1, false, &seed);
    check_out_prod(GGML_TYPE_F32, 9, 4, 0, 1, 1, 1, 1, false, &seed);        /* K = 0 */
    check_out_prod(GGML_TYPE_F32, 530, 7, 5, 1, 1, 1, 1, true, &seed);       /* more than MC rows */
    check_out_prod(GGML_TYPE_F16, 33, 31, 17, 1, 1, 2, 1, false, &seed);
    check_out_prod(GGML_TYPE_F16, 3, 40, 65, 2, 1, 2, 2, true, &seed);
    check_out_prod(GGML_TYPE_BF16, 31, 3, 33, 1, 1, 1, 1, true, &seed);
    for (size_t t = 3; t < N_SRC0_TYPES; t++) {
        check_out_prod(src0_types[t], 64, 33, 31, 1, 1, 1, 1, false, &seed);
        check_out_prod(src0_types[t], 32, 7, 9, 1, 1, 2, 3, true, &seed);
    }
}

/*
 * The 256-value formats (k_types): the dot path (few columns: how many depends on the type) and the packed path, src1
 * laid out in every way, broadcasting, K over several blocks.
 */
static void test_mul_mat_k(void)
{
    uint64_t seed = 0x6b717561ull;
    /* M of at least 3: the loose NMSE of a single output is not a measure
       of the format (one dot product near zero makes it large) */
    const int64_t m_sizes[] = { 5, 3, 33 }, n_sizes[] = { 1, 3, 33 };
    const int64_t batches[][4] = { { 1, 1, 1, 1 }, { 1, 1, 2, 3 }, { 2, 1, 2, 3 } };
    for (size_t t = 0; t < N_K_TYPES; t++) {
        const enum ggml_type ta = k_types[t];
        int variant = 0;
        for (size_t im = 0; im < 3; im++)
            for (size_t in = 0; in < 3; in++, variant++) {
                const int64_t K = 256 * (1 + variant % 3);
                const int64_t *bt = batches[variant % 3];
                const struct mm_case c = {
                    ta, GGML_TYPE_F32, K, m_sizes[im], n_sizes[in], bt[0], bt[1], bt[2], bt[3],
                    (enum layout) (variant % 4 == 3 ? TRANSPOSED : variant % 5 == 4 ? PERMUTED : CONTIGUOUS),
                    variant % 4 == 1,
                };
                check_mul_mat(&c, &seed);
            }
        const struct mm_case big = { ta, GGML_TYPE_F32, 1280, 67, 100, 1, 1, 1, 1, CONTIGUOUS, false };
        check_mul_mat(&big, &seed);
        /* more columns than any type's dot products take: the packed path */
        const struct mm_case wide = { ta, GGML_TYPE_F32, 512, 17, 200, 1, 1, 1, 1, CONTIGUOUS, false };
        check_mul_mat(&wide, &seed);
        check_mul_mat_id(ta, 256, 31, 4, 2, 2, 5, false, &seed);
        check_mul_mat_id(ta, 512, 3, 6, 3, 1, 33, false, &seed);
        check_out_prod(ta, 256, 33, 31, 1, 1, 1, 1, false, &seed);
        check_out_prod(ta, 256, 7, 9, 1, 1, 2, 3, true, &seed);
    }
}

/* ------------------------------------------------------------ type traits */

static void test_type_traits(void)
{
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const struct ggml_type_traits_cpu *tr = ggml_get_type_traits_cpu((enum ggml_type) t);
        if (tr == NULL) {
            ok(false, "traits of type %d", t);
            continue;
        }
        bool has_dot = false;
        for (size_t i = 0; i < N_ANY_SRC0_TYPES; i++)
            has_dot |= any_src0_type(i) == (enum ggml_type) t;
        enum ggml_type want_vdt = GGML_TYPE_F32;
        switch (t) {
        case GGML_TYPE_F16: case GGML_TYPE_BF16: want_vdt = (enum ggml_type) t; break;
        case GGML_TYPE_Q4_0: case GGML_TYPE_Q5_0: case GGML_TYPE_Q8_0: want_vdt = GGML_TYPE_Q8_0; break;
        case GGML_TYPE_MXFP4: case GGML_TYPE_NVFP4: case GGML_TYPE_Q1_0: case GGML_TYPE_Q2_0:
        case GGML_TYPE_IQ4_NL: want_vdt = GGML_TYPE_Q8_0; break;
        case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_1: case GGML_TYPE_Q8_1: want_vdt = GGML_TYPE_Q8_1; break;
        case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: case GGML_TYPE_Q6_K: case GGML_TYPE_Q8_K:
        case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K:
        case GGML_TYPE_TQ1_0: case GGML_TYPE_TQ2_0: case GGML_TYPE_IQ4_XS:
        case GGML_TYPE_IQ1_S: case GGML_TYPE_IQ1_M:
        case GGML_TYPE_IQ3_XXS: case GGML_TYPE_IQ3_S:
        case GGML_TYPE_IQ2_XXS: case GGML_TYPE_IQ2_XS: case GGML_TYPE_IQ2_S:
            want_vdt = GGML_TYPE_Q8_K;
            break;
        default: break;
        }
        /* q8_1 and q8_K: only what other rows are converted to */
        const bool activation = t == GGML_TYPE_Q8_1 || t == GGML_TYPE_Q8_K;
        /* the lattice types: no from_float (as in ggml, whose quantizers of
           these need tables or importance weights) */
        const bool no_encoder = t == GGML_TYPE_IQ1_S || t == GGML_TYPE_IQ1_M || t == GGML_TYPE_IQ2_XXS ||
                                t == GGML_TYPE_IQ2_XS || t == GGML_TYPE_IQ2_S || t == GGML_TYPE_IQ3_XXS ||
                                t == GGML_TYPE_IQ3_S;
        const bool has_from_float = (has_dot && !no_encoder) || activation || t == GGML_TYPE_I32;
        const int64_t want_nrows = has_dot || activation ? 1 : 0;
        ok((tr->vec_dot != NULL) == has_dot && (tr->from_float != NULL) == has_from_float &&
           tr->vec_dot_type == want_vdt && tr->nrows == want_nrows,
           "traits of %s: vec_dot %s, from_float %s, vec_dot_type %s, nrows %lld",
           ggml_type_name((enum ggml_type) t), tr->vec_dot ? "yes" : "no", tr->from_float ? "yes" : "no",
           ggml_type_name(tr->vec_dot_type), (long long) tr->nrows);
    }
    const int bad[] = { -1, GGML_TYPE_COUNT, 1000 };
    for (size_t i = 0; i < 3; i++) {
        ok(ggml_get_type_traits_cpu((enum ggml_type) bad[i]) == NULL, "traits of invalid type %d: NULL", bad[i]);
        logged_one_error("traits of invalid type %d: one error", bad[i]);
    }
}

/* from_float of every type that has one, against the library's reference encoders and C conversions. */
static void test_from_float(void)
{
    uint64_t seed = 0xf20f10a7ull;
    enum { n = 768 };   /* whole blocks of every type (Q1_0: 128, the K-quants: 256) */
    float x[n];
    for (int i = 0; i < n; i++)
        x[i] = (float) optest_uniform(&seed, -40.0, 40.0);
    x[5] = 0.0f;
    x[6] = -0.0f;
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const struct ggml_type_traits_cpu *tr = ggml_get_type_traits_cpu((enum ggml_type) t);
        /* q8_K has no ggml_quantize_chunk (as in ggml): test-quants-k checks
           it against upstream's blocks */
        if (tr == NULL || tr->from_float == NULL || t == GGML_TYPE_Q8_K)
            continue;
        const size_t size = ggml_row_size((enum ggml_type) t, n);
        unsigned char got[n * 4], want[n * 4];
        memset(got, 0xa5, sizeof got);
        memset(want, 0x5a, sizeof want);
        tr->from_float(x, got, n);
        if (t == GGML_TYPE_I32) {
            for (int i = 0; i < n; i++) {
                const int32_t v = (int32_t) x[i];
                memcpy(want + 4 * i, &v, 4);
            }
        } else {
            ggml_quantize_chunk((enum ggml_type) t, x, want, 0, 1, n, NULL);
        }
        ok(memcmp(got, want, size) == 0, "from_float of %s matches its reference encoder",
           ggml_type_name((enum ggml_type) t));
    }
}

/*
 * vec_dot of every type with one, against a double-precision sum of the
 * products of the stored values.  For Q4_1/Q5_1 the reference uses the
 * stored s = d * sum(q) of each Q8_1 block for the minimum's term, as the
 * format intends.  Tolerance: single-precision sums, 1e-5 of sum |x y|.
 */
static double block_format_dot(enum ggml_type type, const void *x, const void *y, int64_t n)
{
    float *xv = malloc((size_t) n * sizeof *xv), *yv = malloc((size_t) n * sizeof *yv);
    const enum ggml_type vdt = ggml_get_type_traits_cpu(type)->vec_dot_type;
    decode_row(type, x, xv, n);
    decode_row(vdt, y, yv, n);
    double sum = 0.0;
    if (type == GGML_TYPE_Q4_1 || type == GGML_TYPE_Q5_1) {
        /* x = d q + m: sum_j x_j y_j = d sum q_j y_j + m s with s from the block */
        const size_t xblock = ggml_type_size(type);
        const uint8_t *xb = x, *yb = y;
        for (int64_t b = 0; b < n / 32; b++) {
            const double m = ggml_fp16_to_fp32(read_u16(xb + b * xblock + 2));
            const double s = ggml_fp16_to_fp32(read_u16(yb + b * 36 + 2));
            for (int j = 0; j < 32; j++)
                sum += ((double) xv[b * 32 + j] - m) * yv[b * 32 + j];
            sum += m * s;
        }
    } else {
        for (int64_t i = 0; i < n; i++)
            sum += (double) xv[i] * yv[i];
    }
    free(xv);
    free(yv);
    return sum;
}

static void test_vec_dot(void)
{
    uint64_t seed = 0x7ec0d07ull;
    const int lengths[] = { 32, 64, 320 };
    for (size_t t = 0; t < N_ANY_SRC0_TYPES; t++) {
        const enum ggml_type type = any_src0_type(t);
        const struct ggml_type_traits_cpu *tr = ggml_get_type_traits_cpu(type);
        const enum ggml_type vdt = tr->vec_dot_type;
        for (size_t li = 0; li < 3; li++) {
            /* (blocks of more than 32 values: lengths in proportion; the K-quants: 256, 512, 2560) */
            const int n = ggml_is_quantized(type) ? lengths[li] / 32 * (int) ggml_blck_size(type)
                                                  : lengths[li] + (int) li * 7 + 1;
            float *xf = malloc((size_t) n * sizeof *xf), *yf = malloc((size_t) n * sizeof *yf);
            for (int i = 0; i < n; i++) {
                xf[i] = (float) optest_uniform(&seed, -2.0, 2.0);
                yf[i] = (float) optest_uniform(&seed, -2.0, 2.0);
            }
            void *x = malloc(ggml_row_size(type, n)), *y = malloc(ggml_row_size(vdt, n));
            optest_quantize(type, xf, x, 1, n);
            ggml_get_type_traits_cpu(vdt)->from_float(yf, y, n);
            float got = NAN;
            tr->vec_dot(n, &got, 0, x, 0, y, 0, 1);
            const double want = block_format_dot(type, x, y, n);
            double scale = 0.0;
            float *xv = malloc((size_t) n * sizeof *xv), *yv = malloc((size_t) n * sizeof *yv);
            decode_row(type, x, xv, n);
            decode_row(vdt, y, yv, n);
            for (int i = 0; i < n; i++)
                scale += fabs((double) xv[i] * yv[i]);
            is_near(got, want, 1e-5 * scale + 1e-6, "vec_dot of %s x %s, n %d", ggml_type_name(type),
                    ggml_type_name(vdt), n);
            free(xf);
            free(yf);
            free(xv);
            free(yv);
            free(x);
            free(y);
        }
    }
}

/* ------------------------------------------------------------ conversions */

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

/* Floats that exercise every path: a stride through all bit patterns, plus
   the boundaries and halfway points of binary16 and bfloat16. */
static float *conversion_inputs(int64_t *count)
{
    const int64_t stride = 4099, n_stride = ((int64_t) 1 << 32) / stride;
    const uint32_t specials[] = {
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffc12345u,
        0x00000001u, 0x007fffffu, 0x00800000u,
        0x33000000u, 0x33000001u, 0x33800000u, 0x337fffffu, 0x33c00000u,   /* around half the smallest fp16 */
        0x387fc000u, 0x387fe000u, 0x387fefffu, 0x38800000u,               /* fp16 subnormal/normal boundary */
        0x3f801000u, 0x3f803000u, 0x3f800fffu, 0x3f801001u,               /* fp16 ties to even */
        0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477fffffu, 0x47800000u,   /* fp16 overflow */
        0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x7f7f8000u, 0x7f7fffffu,   /* bf16 ties, overflow */
    };
    const int64_t n_special = (int64_t) (sizeof specials / sizeof specials[0]);
    float *v = malloc((size_t) (n_stride + 2 * n_special) * sizeof *v);
    int64_t n = 0;
    for (int64_t i = 0; i < n_stride; i++)
        v[n++] = f32_from_bits((uint32_t) (i * stride));
    for (int64_t i = 0; i < n_special; i++) {
        v[n++] = f32_from_bits(specials[i]);
        v[n++] = f32_from_bits(specials[i] ^ 0x80000000u);
    }
    *count = n;
    return v;
}

static void test_conversions(void)
{
    int64_t n;
    float *x = conversion_inputs(&n);
    ggml_fp16_t *h = malloc((size_t) n * sizeof *h);
    ggml_bf16_t *bh = malloc((size_t) n * sizeof *bh);
    int32_t *iv = malloc((size_t) n * sizeof *iv);
    float *y = malloc((size_t) n * sizeof *y);

    /* +1: an odd start, so the vector loops run on unaligned data */
    ggml_cpu_fp32_to_fp16(x + 1, h + 1, n - 1);
    int64_t bad = 0;
    for (int64_t i = 1; i < n; i++)
        bad += h[i] != ggml_fp32_to_fp16(x[i]);
    is_int(bad, 0, "ggml_cpu_fp32_to_fp16 matches ggml_fp32_to_fp16 on %lld values", (long long) n);

    ggml_cpu_fp32_to_bf16(x + 1, bh + 1, n - 1);
    bad = 0;
    for (int64_t i = 1; i < n; i++)
        bad += bh[i].bits != ggml_fp32_to_bf16(x[i]).bits;
    is_int(bad, 0, "ggml_cpu_fp32_to_bf16 matches ggml_fp32_to_bf16 on %lld values", (long long) n);

    ggml_cpu_fp32_to_i32(x + 1, iv + 1, n - 1);
    bad = 0;
    for (int64_t i = 1; i < n; i++) {
        const bool in_range = x[i] >= -2147483648.0f && x[i] < 2147483648.0f;
        const int32_t want = in_range ? (int32_t) x[i] : isnan(x[i]) ? 0 : x[i] > 0.0f ? INT32_MAX : INT32_MIN;
        bad += iv[i] != want;
    }
    is_int(bad, 0, "ggml_cpu_fp32_to_i32 truncates (saturates outside the range, NaN to 0) on %lld values",
           (long long) n);

    ggml_cpu_fp32_to_fp32(x + 1, y + 1, n - 1);
    is_int(memcmp(x + 1, y + 1, (size_t) (n - 1) * sizeof *x), 0, "ggml_cpu_fp32_to_fp32 copies");

    /* every binary16 and bfloat16 value, compared bit for bit (NaN payloads too) */
    ggml_fp16_t all16[65536 + 1];
    ggml_bf16_t allb[65536 + 1];
    float out[65536 + 1];
    for (int i = 0; i < 65536; i++) {
        all16[i + 1] = (ggml_fp16_t) i;
        allb[i + 1].bits = (uint16_t) i;
    }
    ggml_cpu_fp16_to_fp32(all16 + 1, out + 1, 65536);
    bad = 0;
    for (int i = 0; i < 65536; i++)
        bad += f32_bits(out[i + 1]) != f32_bits(ggml_fp16_to_fp32(all16[i + 1]));
    is_int(bad, 0, "ggml_cpu_fp16_to_fp32 matches ggml_fp16_to_fp32 on every value");
    ggml_cpu_bf16_to_fp32(allb + 1, out + 1, 65536);
    bad = 0;
    for (int i = 0; i < 65536; i++)
        bad += f32_bits(out[i + 1]) != f32_bits(ggml_bf16_to_fp32(allb[i + 1]));
    is_int(bad, 0, "ggml_cpu_bf16_to_fp32 matches ggml_bf16_to_fp32 on every value");

    /* short rows (the scalar tails) leave their neighbours alone */
    for (int len = 0; len <= 40; len++) {
        ggml_fp16_t buf[48];
        for (int i = 0; i < 48; i++)
            buf[i] = 0x1234;
        ggml_cpu_fp32_to_fp16(x + 100, buf + 1, len);
        bool good = buf[0] == 0x1234 && buf[len + 1] == 0x1234;
        for (int i = 0; i < len; i++)
            good = good && buf[i + 1] == ggml_fp32_to_fp16(x[100 + i]);
        if (!good || len == 40)
            ok(good, "ggml_cpu_fp32_to_fp16 on rows of 0 to 40 values writes exactly them");
        if (!good)
            break;
    }

    tap_log_errors();
    ggml_cpu_fp32_to_fp16(NULL, NULL, 0);
    ggml_cpu_fp16_to_fp32(NULL, y, 0);
    is_int(tap_log_errors(), 0, "row conversions of 0 values accept NULL quietly");
    ggml_cpu_fp32_to_fp16(NULL, h, 4);
    logged_one_error("ggml_cpu_fp32_to_fp16 with a NULL source: one error");
    ggml_cpu_bf16_to_fp32(bh, NULL, 4);
    logged_one_error("ggml_cpu_bf16_to_fp32 with a NULL destination: one error");
    ggml_cpu_fp32_to_i32(x, NULL, 1);
    logged_one_error("ggml_cpu_fp32_to_i32 with a NULL destination: one error");

    free(x);
    free(h);
    free(bh);
    free(iv);
    free(y);
}

/* ----------------------------------------------------------- constructors */

static void test_constructors(void)
{
    struct ggml_context *ctx = new_context(4);
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 5, 2);
    struct ggml_tensor *b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 3, 4, 3);
    ggml_set_name(a, "a");
    ggml_set_name(b, "b");
    tap_log_errors();

    struct ggml_tensor *c = ggml_mul_mat(ctx, a, b);
    ok(c && c->type == GGML_TYPE_F32 && c->op == GGML_OP_MUL_MAT && c->src[0] == a && c->src[1] == b &&
       c->ne[0] == 5 && c->ne[1] == 3 && c->ne[2] == 4 && c->ne[3] == 3 && ggml_is_contiguous(c),
       "ggml_mul_mat: F32 [M, N, B2, B3]");
    ok(c && c->op_params[0] == GGML_PREC_DEFAULT && c->op_params[1] == GGML_HINT_NONE,
       "ggml_mul_mat: default precision and no hint");
    ggml_mul_mat_set_prec(c, GGML_PREC_F32);
    ok(c && c->op_params[0] == GGML_PREC_F32, "ggml_mul_mat_set_prec stores the precision in op_params[0]");
    ggml_mul_mat_set_hint(c, GGML_HINT_SRC0_IS_HADAMARD);
    ok(c && c->op_params[1] == GGML_HINT_SRC0_IS_HADAMARD, "ggml_mul_mat_set_hint stores the hint in op_params[1]");
    is_int(tap_log_errors(), 0, "valid constructions log nothing");

    ggml_mul_mat_set_prec(a, GGML_PREC_F32);
    logged_one_error("ggml_mul_mat_set_prec on a non-MUL_MAT tensor: one error");
    ok(a->op_params[0] == 0, "... and changes nothing");
    ggml_mul_mat_set_prec(c, (enum ggml_prec) 3);
    logged_one_error("ggml_mul_mat_set_prec with an unknown precision: one error");
    ggml_mul_mat_set_hint(a, GGML_HINT_NONE);
    logged_one_error("ggml_mul_mat_set_hint on a non-MUL_MAT tensor: one error");
    ggml_mul_mat_set_hint(c, (enum ggml_op_hint) 77);
    logged_one_error("ggml_mul_mat_set_hint with an unknown hint: one error");
    ok(c->op_params[0] == GGML_PREC_F32 && c->op_params[1] == GGML_HINT_SRC0_IS_HADAMARD,
       "rejected settings leave op_params alone");

    struct ggml_tensor *k7 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 3);
    ok(ggml_mul_mat(ctx, a, k7) == NULL, "ggml_mul_mat: different K gives NULL");
    logged_one_error("ggml_mul_mat: different K logs one error");
    struct ggml_tensor *b3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 3);
    ok(ggml_mul_mat(ctx, a, b3) == NULL, "ggml_mul_mat: batches that do not repeat give NULL");
    logged_one_error("ggml_mul_mat: bad broadcast logs one error");
    struct ggml_tensor *sq = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 8);
    ok(ggml_mul_mat(ctx, ggml_transpose(ctx, sq), sq) == NULL, "ggml_mul_mat: a transposed a gives NULL");
    logged_one_error("ggml_mul_mat: transposed a logs one error");
    ok(ggml_mul_mat(ctx, NULL, b) == NULL && ggml_mul_mat(ctx, a, NULL) == NULL, "ggml_mul_mat: NULL gives NULL");
    ggml_mul_mat_set_prec(NULL, GGML_PREC_F32);
    ggml_mul_mat_set_hint(NULL, GGML_HINT_NONE);
    is_int(tap_log_errors(), 0, "NULL inputs log nothing");

    /* mul_mat_id */
    struct ggml_tensor *as = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 16, 6, 4);
    struct ggml_tensor *bb = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 16, 1, 5);
    struct ggml_tensor *ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 2, 5);
    struct ggml_tensor *r = ggml_mul_mat_id(ctx, as, bb, ids);
    ok(r && r->op == GGML_OP_MUL_MAT_ID && r->type == GGML_TYPE_F32 && r->ne[0] == 6 && r->ne[1] == 2 &&
       r->ne[2] == 5 && r->ne[3] == 1 && r->src[0] == as && r->src[1] == bb && r->src[2] == ids,
       "ggml_mul_mat_id: F32 [M, n_used, n_tokens]");
    struct ggml_tensor *fids = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 5);
    ok(ggml_mul_mat_id(ctx, as, bb, fids) == NULL, "ggml_mul_mat_id: F32 ids give NULL");
    logged_one_error("ggml_mul_mat_id: F32 ids log one error");
    struct ggml_tensor *ids6 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 2, 6);
    ok(ggml_mul_mat_id(ctx, as, bb, ids6) == NULL, "ggml_mul_mat_id: ids for another token count give NULL");
    logged_one_error("ggml_mul_mat_id: token count mismatch logs one error");
    struct ggml_tensor *b2rows = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 16, 2, 5);
    struct ggml_tensor *ids3 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 5);
    ok(ggml_mul_mat_id(ctx, as, b2rows, ids3) == NULL, "ggml_mul_mat_id: b rows that do not divide n_used give NULL");
    logged_one_error("ggml_mul_mat_id: bad b rows log one error");
    struct ggml_tensor *bk = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 1, 5);
    ok(ggml_mul_mat_id(ctx, as, bk, ids) == NULL, "ggml_mul_mat_id: different K gives NULL");
    logged_one_error("ggml_mul_mat_id: different K logs one error");
    struct ggml_tensor *as4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 16, 6, 4, 2);
    ok(ggml_mul_mat_id(ctx, as4, bb, ids) == NULL, "ggml_mul_mat_id: 4-d as gives NULL");
    logged_one_error("ggml_mul_mat_id: 4-d as logs one error");
    struct ggml_tensor *ast = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 16, 4);
    ok(ggml_mul_mat_id(ctx, ggml_transpose(ctx, ast), bb, ids) == NULL, "ggml_mul_mat_id: transposed as gives NULL");
    logged_one_error("ggml_mul_mat_id: transposed as logs one error");
    ok(ggml_mul_mat_id(ctx, NULL, bb, ids) == NULL && ggml_mul_mat_id(ctx, as, NULL, ids) == NULL &&
       ggml_mul_mat_id(ctx, as, bb, NULL) == NULL, "ggml_mul_mat_id: NULL gives NULL");
    is_int(tap_log_errors(), 0, "ggml_mul_mat_id: NULL inputs log nothing");

    /* out_prod */
    struct ggml_tensor *pa = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 7, 9, 2);
    struct ggml_tensor *pb = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 9, 4, 3);
    struct ggml_tensor *p = ggml_out_prod(ctx, pa, pb);
    ok(p && p->op == GGML_OP_OUT_PROD && p->type == GGML_TYPE_F32 && p->ne[0] == 7 && p->ne[1] == 4 &&
       p->ne[2] == 4 && p->ne[3] == 3 && p->src[0] == pa && p->src[1] == pb, "ggml_out_prod: F32 [P, Q, B2, B3]");
    struct ggml_tensor *pk = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 8);
    ok(ggml_out_prod(ctx, pa, pk) == NULL, "ggml_out_prod: different K gives NULL");
    logged_one_error("ggml_out_prod: different K logs one error");
    struct ggml_tensor *pb3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 9, 3);
    ok(ggml_out_prod(ctx, pa, pb3) == NULL, "ggml_out_prod: bad broadcast gives NULL");
    logged_one_error("ggml_out_prod: bad broadcast logs one error");
    struct ggml_tensor *psq = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 9, 9);
    ok(ggml_out_prod(ctx, ggml_transpose(ctx, psq), psq) == NULL, "ggml_out_prod: transposed a gives NULL");
    logged_one_error("ggml_out_prod: transposed a logs one error");
    ok(ggml_out_prod(ctx, NULL, pb) == NULL && ggml_out_prod(ctx, pa, NULL) == NULL, "ggml_out_prod: NULL gives NULL");
    is_int(tap_log_errors(), 0, "ggml_out_prod: NULL inputs log nothing");
    ggml_free(ctx);
}

/* A context with room for the two inputs only: each constructor reports it. */
static void test_full_context(void)
{
    const size_t room = 2 * (ggml_tensor_overhead() + 8 * 4 * sizeof(float));
    for (int which = 0; which < 3; which++) {
        struct ggml_init_params params = { room + (which == 1 ? ggml_tensor_overhead() + 64 : 0), NULL, false };
        struct ggml_context *ctx = ggml_init(params);
        struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 4, 1);
        struct ggml_tensor *b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 4, 1);
        struct ggml_tensor *r = NULL;
        tap_log_errors();
        if (which == 0) {
            r = ggml_mul_mat(ctx, a, b);
        } else if (which == 1) {
            /* the ids (4 bytes each) fit, the result does not */
            struct ggml_tensor *ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 1, 1);
            struct ggml_tensor *as = ggml_reshape_3d(ctx, a, 8, 2, 2);
            tap_log_errors();
            r = ggml_mul_mat_id(ctx, as, ggml_view_3d(ctx, b, 8, 1, 1, b->nb[1], b->nb[2], 0), ids);
        } else {
            r = ggml_out_prod(ctx, a, b);
        }
        ok(a != NULL && b != NULL && r == NULL, "%s in a full context gives NULL",
           which == 0 ? "ggml_mul_mat" : which == 1 ? "ggml_mul_mat_id" : "ggml_out_prod");
        logged_one_error("... and logs one error");
        ggml_free(ctx);
    }
}

/* Type combinations the CPU backend does not compute are refused, not run. */
static void test_unsupported(void)
{
    struct ggml_context *ctx = new_context(8);
    uint64_t seed = 99;
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 4);
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 2);
    struct ggml_tensor *q81 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_1, 64, 4);
    struct ggml_tensor *f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 2);
    optest_fill(q, &seed, -1, 1);
    optest_fill(h, &seed, -1, 1);
    optest_fill(f, &seed, -1, 1);
    memset(q81->data, 0, ggml_nbytes(q81));
    tap_log_errors();
    ok(optest_compute(ctx, ggml_mul_mat(ctx, q, h), 2, false) == GGML_STATUS_FAILED,
       "mul_mat Q4_0 x F16 (not F32, not Q8_0) is refused");
    logged_one_error("... with one error");
    ok(optest_compute(ctx, ggml_mul_mat(ctx, q81, f), 2, false) == GGML_STATUS_FAILED,
       "mul_mat with a Q8_1 src0 (no vec_dot) is refused");
    logged_one_error("... with one error");
    struct ggml_tensor *hb = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 2);
    optest_fill(hb, &seed, -1, 1);
    ok(optest_compute(ctx, ggml_out_prod(ctx, f, hb), 2, false) == GGML_STATUS_FAILED,
       "out_prod with an F16 src1 is refused");
    logged_one_error("... with one error");
    ggml_free(ctx);
}

/* A product over an empty inner dimension whose operand has no memory at
 * all (the view of an empty tensor a gallocr placed nowhere: data NULL):
 * zeros, without addressing it. */
static void test_empty_sum(void)
{
    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 0, 25, 35);
    struct ggml_tensor *b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 0, 1, 35);
    struct ggml_tensor *c = ggml_mul_mat(ctx, ggml_view_tensor(ctx, a), b);
    ggml_set_output(c);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    ok(ggml_gallocr_alloc_graph(galloc, g), "an empty-sum product is allocated");
    float out[25 * 35];
    memset(out, 0x7f, sizeof out);
    ggml_backend_tensor_set(c, out, 0, sizeof out);
    tap_log_errors();
    for (int threads = 1; threads <= 3; threads++) {
        ggml_backend_cpu_set_n_threads(cpu, threads);
        is_int(ggml_backend_graph_compute(cpu, g), GGML_STATUS_SUCCESS, "mul_mat with K = 0, %d threads", threads);
    }
    is_int(tap_log_errors(), 0, "without a message");
    ggml_backend_tensor_get(c, out, 0, sizeof out);
    bool zeros = true;
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
        zeros = zeros && out[i] == 0.0f;
    ok(zeros, "gives zeros");
    ggml_gallocr_free(galloc);
    ggml_backend_free(cpu);
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_type_traits();
    test_from_float();
    test_vec_dot();
    test_conversions();
    test_constructors();
    test_full_context();
    test_unsupported();
    test_mul_mat();
    test_small_types();
    test_mul_mat_prec_f32();
    test_mul_mat_id();
    test_mul_mat_id_many_experts();
    test_out_prod();
    test_mul_mat_k();
    test_empty_sum();
    ggml_quantize_free();   /* the tables of the IQ1 quantizers */
    return tap_done();
}
