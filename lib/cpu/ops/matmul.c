/*
 * ops/matmul.c - MUL_MAT, MUL_MAT_ID and OUT_PROD.
 *
 * All three are products C = A * B^T computed as a set of "columns": each
 * column j has a row b_j of K floats and a destination row c_j of M
 * floats, and c_j[m] = sum_k A(m, k) * b_j[k].
 *
 *   MUL_MAT     A is a matrix of src0 (rows along k, any supported type,
 *               broadcast over src1's dims 2 and 3); a column is a row of
 *               src1, a destination row is a row of dst.
 *   MUL_MAT_ID  the same, with A chosen per column by ids.
 *   OUT_PROD    A(m, k) = src0[m, k] (F32, columns along m), b_j is
 *               column j of src1 read along its dim 1.
 *
 * Rounding.  As in ggml, src1 is first converted to the vec_dot_type of
 * src0's CPU traits (F32, F16, BF16, Q8_0 or Q8_1) and the product is that
 * of src0 with the converted values.  Both paths below read those values
 * back as floats: the rows b_j hold src1 rounded to vec_dot_type, and A is
 * widened or dequantized to float, so the products are exact and only the
 * sums round (in single precision in the fast path, in double in the
 * reference path).
 *
 * Scratch (the plan's work buffer, sized by work_size): the converted
 * rows b_j, shared by the node's threads (skipped when src1 is already F32
 * rows of the right kind and can be read in place), then one area per
 * thread.  The b_j are written by all threads, then a barrier; the kernels
 * therefore run on every thread of the job (no n_tasks).
 *
 * Fast path.  Threads split C into blocks of rows of A or of columns,
 * whichever balances better.  Each thread walks its block in panels of NC
 * columns, KC values of k and MC rows (MC: packed_block_rows, sized to
 * the level-2 cache): it converts the MC x KC block of A
 * into floats, packed in tiles of the level's gemm_mr rows stored k-major
 * (kept in the level-2 cache and reused by every column of the panel); for
 * each gemm_nr columns it packs their KC values of B, every value repeated
 * gemm_lanes times (kept in the level-1 cache), and computes the tiles of
 * C with the level's gemm_tile kernel (lib/cpu/simd/kernels.h).
 * Where the level has a dot tile (dot_tile: AVX-512), F32 products of up
 * to DOT_TILE_F32_COLS columns and F16 and BF16 products of up to
 * DOT_TILE_HALF_COLS read A's rows in place instead, four rows by four
 * columns a call (product_by_dot_tiles).  Where the level prefers its
 * BF16 tile (gemm_bf16_preferred: AVX512_BF16 at full rate), F16 and BF16
 * products of more columns pack A and B as BF16 pairs for it instead
 * (product_block_bf16).
 * Products with few columns (matrix times vector; up to dot_columns_max
 * for types slow to convert) skip the packing and take dot products of
 * A's rows instead, and so do
 * products of quantized weights where the level has an integer tile
 * (qgemm_tile: Q4_0 and Q8_0 with AVX2; Q4_0, Q5_0, Q8_0 and IQ4_NL
 * with AVX512_VNNI), whatever
 * their columns, and weights stored interleaved for the integer tiles
 * (CPU_REPACK buffers, cpu/repack.c: qgemm_packed_tile, every level).
 *
 * Reference path (use_ref).  Plain loops: every output element is a dot
 * product in double of a converted row of A with b_j.
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "cpu-private.h"
#include "simd/packed-rows.h"

#define ROW_GRAIN 16   /* threads split A's rows in multiples of this (of every level's tile rows) */
#define KC 256         /* values of k per panel; a multiple of every block size */
#define NC 512         /* columns per panel */
#define GEMV_COLS 3    /* at most this many columns: dot products instead of tiles */
#define SCRATCH_ALIGN 64

/*
 * The blocks of weights the products keep in the level-2 cache (the
 * CPU's, ggml__kernels()->l2_bytes): a quarter of it for the panels the
 * dot tiles and the integer tiles walk (256 KiB of a 1 MiB cache; the
 * columns and the outputs pass through the rest), half of it for the
 * packed F32 block of MC rows by KC values (512 rows with 1 MiB).
 */
static size_t l2_panel_bytes(void)
{
    return ggml__kernels()->l2_bytes / 4;
}

static int64_t packed_block_rows(void)
{
    const int64_t rows = (int64_t) (ggml__kernels()->l2_bytes / 2 / (KC * sizeof(float))) / GGML__GEMM_MR_MAX *
                         GGML__GEMM_MR_MAX;
    return rows < GGML__GEMM_MR_MAX ? GGML__GEMM_MR_MAX : rows > 2048 ? 2048 : rows;
}

/* ------------------------------------------------------------ conversions */

/* True when extent n can be made by repeating extent d (broadcasting). */
static bool repeats(int64_t n, int64_t d)
{
    return d == 0 ? n == 0 : n % d == 0;
}

/* Types src0 may have: those with a vec_dot in the CPU traits. */
static bool matmul_src0_type(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16:
    case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1: case GGML_TYPE_Q8_0:
    case GGML_TYPE_MXFP4: case GGML_TYPE_NVFP4: case GGML_TYPE_Q1_0:
    case GGML_TYPE_Q2_0: case GGML_TYPE_IQ4_NL:
    case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: case GGML_TYPE_Q6_K:
    case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K:
    case GGML_TYPE_TQ1_0: case GGML_TYPE_TQ2_0: case GGML_TYPE_IQ4_XS:
    case GGML_TYPE_IQ1_S: case GGML_TYPE_IQ1_M:
    case GGML_TYPE_IQ3_XXS: case GGML_TYPE_IQ3_S:
    case GGML_TYPE_IQ2_XXS: case GGML_TYPE_IQ2_XS: case GGML_TYPE_IQ2_S:
        return true;
    default:
        return false;
    }
}

static enum ggml_type vec_dot_type_of(enum ggml_type type)
{
    return ggml_get_type_traits_cpu(type)->vec_dot_type;
}

/* n values of a row of type (contiguous; n a multiple of its block) as floats. */
static void row_to_float(enum ggml_type type, const void *src, float *dst, int64_t n)
{
    if (n <= 0)
        return;
    switch (type) {
    case GGML_TYPE_F32:  memcpy(dst, src, (size_t) n * sizeof *dst); break;
    case GGML_TYPE_F16:  ggml_cpu_fp16_to_fp32(src, dst, n); break;
    case GGML_TYPE_BF16: ggml_cpu_bf16_to_fp32(src, dst, n); break;
    case GGML_TYPE_Q8_1: ggml__dequantize_row_q8_1(src, dst, n); break;
    case GGML_TYPE_Q8_K: ggml__dequantize_row_q8_K(src, dst, n); break;
    default:             ggml_get_type_traits(type)->to_float(src, dst, n); break;
    }
}

/* The F32, F16 or BF16 value at p, as a float. */
static inline float load_element(enum ggml_type type, const char *p)
{
    switch (type) {
    case GGML_TYPE_F16:  return ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
    case GGML_TYPE_BF16: return ggml_bf16_to_fp32(*(const ggml_bf16_t *) p);
    default:             return *(const float *) p;
    }
}

/*
 * Writes the n values of a src1 row (first value at src, element stride
 * nb0) into out as floats, rounded as vec_dot_type rounds them.  A
 * quantized src1 (which then is of vec_dot_type) has contiguous blocks.
 * qtmp holds ggml_row_size(vdt, n) bytes.
 */
static void load_b_row(enum ggml_type type, const char *src, size_t nb0, int64_t n, enum ggml_type vdt,
                       float *restrict out, void *restrict qtmp)
{
    if (ggml_is_quantized(type)) {
        row_to_float(type, src, out, n);
        return;
    }
    if (nb0 == ggml_type_size(type))
        row_to_float(type, src, out, n);
    else
        for (int64_t i = 0; i < n; i++)
            out[i] = load_element(type, src + i * nb0);
    if (type == GGML_TYPE_F32 && vdt != GGML_TYPE_F32) {
        ggml_get_type_traits_cpu(vdt)->from_float(out, qtmp, n);
        row_to_float(vdt, qtmp, out, n);
    }
}

/* ----------------------------------------------------------------- scratch */

static size_t align_up(size_t n)
{
    return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
}

/* Floats between consecutive converted rows b_j. */
static int64_t b_stride(int64_t K)
{
    return (K + 15) / 16 * 16;
}

/*
 * Where things live in the work buffer.  Offsets are from the first
 * SCRATCH_ALIGN boundary of the buffer; the thread areas' pieces are
 * offsets from the start of each area.  Everything is sized for the node
 * at hand, so that small products need little memory.
 */
struct scratch {
    size_t b_rows;        /* offset of the converted rows b_j (if any) */
    size_t a_f32;         /* offset of src0 converted to F32 (OUT_PROD) */
    size_t experts;       /* offset of the column lists (MUL_MAT_ID) */
    size_t threads;       /* offset of the first thread's area */
    size_t per_thread;    /* bytes of each thread's area */
    size_t bpack, row, pointers;    /* pieces of a thread's area (apack is first) */
    size_t total;         /* bytes needed from the buffer's start */
};

static int64_t min_i64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/*
 * Lays out a thread's area for products of M rows, K values and at most
 * ncols columns per call, which must also hold ggml_row_size(vdt, K)
 * bytes (a src1 row being encoded) or ref_doubles doubles (the reference
 * path), and fixes the total for nth threads after used bytes of shared
 * scratch.
 */
static void scratch_layout(struct scratch *sc, size_t used, int nth, int64_t M, int64_t K, int64_t ncols,
                           enum ggml_type vdt, int64_t ref_doubles)
{
    const int64_t tile_rows = GGML__GEMM_MR_MAX;
    const size_t kc = (size_t) min_i64(KC, K);
    const size_t mc = (size_t) min_i64(packed_block_rows(), (M + tile_rows - 1) / tile_rows * tile_rows);
    sc->bpack = align_up(mc * kc * sizeof(float));
    sc->row = sc->bpack + align_up((size_t) GGML__GEMM_B_MAX * kc * sizeof(float));
    sc->pointers = sc->row + align_up(kc * sizeof(float));
    size_t size = sc->pointers + align_up(2 * (size_t) min_i64(NC, ncols) * sizeof(void *));
    const size_t quant = align_up(ggml_row_size(vdt, K)), ref = align_up((size_t) ref_doubles * sizeof(double));
    size = size > quant ? size : quant;
    sc->per_thread = size > ref ? size : ref;
    sc->threads = align_up(used);
    sc->total = sc->threads + (size_t) nth * sc->per_thread + SCRATCH_ALIGN;
}

/* The per-thread pieces of the tiled product. */
struct thread_ws {
    float *apack;         /* up to MC x KC floats: tiles of gemm_mr rows, k-major */
    float *bpack;         /* KC x gemm_nr x gemm_lanes floats */
    float *row;           /* KC floats: a converted piece of a row of A */
    const float **brows;  /* NC pointers */
    float **crows;        /* NC pointers */
    void *area;           /* the whole area (for other uses) */
};

static char *scratch_base(const struct ggml__compute_params *params)
{
    uintptr_t p = (uintptr_t) params->wdata;
    return (char *) ((p + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN);
}

static struct thread_ws thread_workspace(const struct ggml__compute_params *params, const struct scratch *sc,
                                         int64_t ncols)
{
    char *area = scratch_base(params) + sc->threads + (size_t) params->ith * sc->per_thread;
    struct thread_ws ws;
    ws.area = area;
    ws.apack = (float *) (void *) area;
    ws.bpack = (float *) (void *) (area + sc->bpack);
    ws.row = (float *) (void *) (area + sc->row);
    ws.brows = (const float **) (void *) (area + sc->pointers);
    ws.crows = (float **) (void *) (area + sc->pointers + (size_t) min_i64(NC, ncols) * sizeof(void *));
    return ws;
}

/* ------------------------------------------------------- the tiled product */

/*
 * The left operand, element (m, k).  Rows mode: row m starts at
 * data + m * stride and runs along k in type (mul_mat's src0).  Columns
 * mode (F32 only): column k starts at data + k * stride and runs along m
 * (out_prod's src0).
 */
struct operand {
    enum ggml_type type;
    const char *data;
    size_t stride;
    bool columns;
    bool bf16_pairs;   /* every panel in BF16 pairs (bf16_pairs_for), whatever its columns */
};

/* Values [k0, k0 + n) of row m of a rows-mode operand, as floats. */
static const float *operand_row(const struct operand *a, int64_t m, int64_t k0, int64_t n, float *buf)
{
    const char *row = a->data + m * a->stride;
    if (a->type == GGML_TYPE_F32)
        return (const float *) (const void *) row + k0;
    const size_t offset = (size_t) (k0 / ggml_blck_size(a->type)) * ggml_type_size(a->type);
    row_to_float(a->type, row + offset, buf, n);
    return buf;
}

/* The B panel's space holds a tile's rows of A while they are packed (see pack_panel). */
_Static_assert(GGML__GEMM_B_MAX >= GGML__GEMM_MR_MAX, "the B panel holds a tile's rows of A");

/*
 * pack[k][i] = A(m0 + i, k0 + k) for i < mr, 0 for mr <= i < tile_mr.
 * Rows mode: the mr rows, as floats (converted into rows, which holds
 * tile_mr x kc floats, unless they are F32 already), are transposed by
 * the level's transpose32 kernel.
 */
static void pack_panel(const struct operand *a, int64_t m0, int mr, int tile_mr, int64_t k0, int kc,
                       float *restrict pack, float *restrict rows)
{
    if (a->columns) {
        for (int k = 0; k < kc; k++) {
            const float *col = (const float *) (const void *) (a->data + (k0 + k) * a->stride) + m0;
            float *p = pack + k * tile_mr;
            for (int i = 0; i < mr; i++)
                p[i] = col[i];
            for (int i = mr; i < tile_mr; i++)
                p[i] = 0.0f;
        }
        return;
    }
    const void *src = rows;
    ptrdiff_t src_stride = (ptrdiff_t) (kc * sizeof(float));
    if (a->type == GGML_TYPE_F32) {
        src = a->data + m0 * a->stride + k0 * (int64_t) sizeof(float);
        src_stride = (ptrdiff_t) a->stride;
    } else {
        for (int i = 0; i < mr; i++)
            (void) operand_row(a, m0 + i, k0, kc, rows + (size_t) i * kc);
    }
    ggml__kernels()->transpose32(mr, kc, src, src_stride, pack, (ptrdiff_t) (tile_mr * sizeof(float)));
    for (int k = 0; mr < tile_mr && k < kc; k++)
        for (int i = mr; i < tile_mr; i++)
            pack[k * tile_mr + i] = 0.0f;
}

/* bpack[k][j][0..lanes) = b[j][k] for j < nr, 0 for nr <= j < tile_nr. */
static void pack_columns(const float *const *b, int nr, int tile_nr, int lanes, int kc, float *restrict bpack)
{
    for (int j = 0; j < tile_nr; j++) {
        const float *bj = b[j < nr ? j : 0];
        for (int k = 0; k < kc; k++) {
            const float v = j < nr ? bj[k] : 0.0f;
            for (int l = 0; l < lanes; l++)
                bpack[(k * tile_nr + j) * lanes + l] = v;
        }
    }
}

/* c[j][m] = sum_k A(m, k) * b[j][k] for m in [m0, m1), j < ncols, by dot products. */
static void product_by_dots(const struct operand *a, int64_t m0, int64_t m1, int64_t K, int ncols,
                            const float *const *b, float *const *c, float *buf)
{
    const ggml_vec_dot_t dot_f32 = ggml__kernels()->vec_dot[GGML_TYPE_F32];
    const int64_t step = a->type == GGML_TYPE_F32 ? (K > 0 ? K : 1) : KC;
    for (int64_t m = m0; m < m1; m++) {
        float sum[GEMV_COLS] = { 0.0f };
        for (int64_t k0 = 0; k0 < K; k0 += step) {
            const int64_t n = K - k0 < step ? K - k0 : step;
            const float *row = operand_row(a, m, k0, n, buf);
            for (int j = 0; j < ncols; j++) {
                float s;
                dot_f32((int) n, &s, 0, row, 0, b[j] + k0, 0, 1);
                sum[j] += s;
            }
        }
        for (int j = 0; j < ncols; j++)
            c[j][m] = sum[j];
    }
}

/*
 * product_by_dots with the level's dot tile (four rows by four columns a
 * call, rows read as they are): A's rows in panels of about
 * l2_panel_bytes, which the second-level cache keeps while every group
 * of four columns passes over them.
 *
 * Against the packed tiles, the dot tile saves packing A (a transpose,
 * and for F16 and BF16 a conversion too) and loses the tiles' register
 * blocking, which tells only with many columns.  On Zen 4 (2 threads,
 * best of 5), whose 512-bit multiply-adds are two 256-bit halves, with
 * the 16 x 6 AVX2 tile: F32 2048x2048 by 32 columns took 1.34 ms against
 * 3.81 ms packed, by 256 columns 11.0 against 11.1, by 512 24.0 against
 * 23.0; F16 by 512 columns 19.5 against 24.9.  On Emerald Rapids (2
 * threads, two 512-bit FMA units a core) with the level's own 32 x 12
 * tile, ms dot / packed, 4096 x 4096 weights (the machine shared: some
 * 10-20% of noise):
 *   F32  16 cols 4.2 / 5.6   32: 6.8 / 7.4   64: 15.0 / 13.2   128: 22.6 / 20.8
 *   F16  16 cols 2.9 / 6.1   64: 11.4 / 13.8   128: 22.9 / 28.0, 23.7 / 19.6
 *        256: 46.3 / 36.9, 43.6 / 36.8   2048x512x2048: 24.6 / 16.8
 *   BF16 256: 42.8 / 47.1   2048x512x2048: 22.8 / 20.7
 * On Zen 5 (2 threads, A/B medians of 21, ms, dot tile up to 64 F32
 * columns / up to 48): M x K weights by 64 columns, 1024 x 1024 0.35 /
 * 0.44, 2816 x 1024 1.00 / 1.36, 1024 x 2816 1.43 / 1.44, 4096 x 4096
 * 8.6 / 9.3, by 56 columns 7.3 / 8.3; the 64-token F32 block 1.05 to 1.3
 * times faster.  From 96 columns on the packed tile won (4096 x 4096 by
 * 96: 11.4 packed against 12.1).
 * So F32 products take the dot tile up to DOT_TILE_F32_COLS columns a
 * call, F16 and BF16 ones up to DOT_TILE_HALF_COLS; the BF16 pairs
 * (bf16_pairs_for) start past it too, as below it packing A costs more
 * than the pairs save (4096 x 4096 F16 by 64 columns: 7.6 ms in BF16
 * pairs against 6.8 by the dot tile).
 */
#define DOT_TILE_F32_COLS 64
#define DOT_TILE_HALF_COLS 128

static bool use_dot_tile(const struct operand *a, int64_t K, int ncols)
{
    return !a->columns && ggml__kernels()->dot_tile[a->type] != NULL && K <= INT_MAX &&
           ncols <= (a->type == GGML_TYPE_F32 ? DOT_TILE_F32_COLS : DOT_TILE_HALF_COLS);
}

static void product_by_dot_tiles(const struct operand *a, int64_t m0, int64_t m1, int64_t K, int ncols,
                                 const float *const *b, float *const *c)
{
    void (*tile)(int, const void *, size_t, int, const float *const *, int, float *const *) =
        ggml__kernels()->dot_tile[a->type];
    const size_t row_bytes = ggml_row_size(a->type, K);
    int64_t panel = (int64_t) (l2_panel_bytes() / row_bytes) / 4 * 4;
    panel = panel < 4 ? 4 : panel;
    for (int64_t p0 = m0; p0 < m1; p0 += panel) {
        const int64_t p1 = m1 - p0 < panel ? m1 : p0 + panel;
        for (int j0 = 0; j0 < ncols; j0 += 4) {
            const int nc = ncols - j0 < 4 ? ncols - j0 : 4;
            for (int64_t m = p0; m < p1; m += 4) {
                float *ct[4];
                for (int j = 0; j < nc; j++)
                    ct[j] = c[j0 + j] + m;
                tile((int) K, a->data + m * a->stride, a->stride, (int) (p1 - m < 4 ? p1 - m : 4), b + j0, nc, ct);
            }
        }
    }
}

/* ------------------------------------------------ the tiles in BF16 pairs */

/*
 * Where the level's gemm_bf16_tile is preferred (AVX512_BF16 at full
 * rate: kernels.h gemm_bf16_preferred), F16 and BF16 weights by more
 * columns than the dot tile takes (counted over the whole product, or an
 * expert's, so that the result does not depend on how the threads share
 * the columns) are multiplied in BF16 pairs, F16 ones unless the node
 * asks for GGML_PREC_F32 (ggml_mul_mat_set_prec): A's rows and B's
 * columns rounded to BF16 (exact for BF16 weights, whose
 * columns the vec_dot_type rounds to BF16 already; F16 weights lose their
 * three lowest significand bits), products summed in F32.  The panels are
 * product_block's with two values of k to a 32-bit word, so a tile step
 * multiplies twice the values of an F32 step.
 */
static bool bf16_pairs_for(enum ggml_type type, int64_t ncols, enum ggml_prec prec)
{
    return ggml__kernels()->gemm_bf16_preferred && ncols > DOT_TILE_HALF_COLS &&
           (type == GGML_TYPE_BF16 || (type == GGML_TYPE_F16 && prec == GGML_PREC_DEFAULT));
}

/* n floats as BF16 into words, the high half of a last odd value's word zero. */
static void bf16_words(const struct ggml__cpu_kernels *k, const float *x, int n, uint32_t *words)
{
    k->from_float[GGML_TYPE_BF16](x, words, n);
    if (n % 2 != 0)
        ((uint16_t *) (void *) words)[n] = 0;
}

/*
 * pack[p][i] = the BF16 pair (A(m0 + i, k0 + 2p), A(m0 + i, k0 + 2p + 1))
 * for i < mr, 0 for mr <= i < tile_mr: each row as BF16 words (BF16 rows
 * of even kc read in place where their words are aligned), transposed by
 * the level's transpose32.
 */
static void pack_panel_bf16(const struct ggml__cpu_kernels *k, const struct operand *a, int64_t m0, int mr,
                            int tile_mr, int64_t k0, int kc, uint32_t *restrict pack, uint32_t *restrict rows,
                            float *restrict row)
{
    const int kp = (kc + 1) / 2;
    const void *src = rows;
    ptrdiff_t src_stride = (ptrdiff_t) (kp * sizeof(uint32_t));
    const char *in_place = a->data + m0 * a->stride + k0 * (int64_t) sizeof(ggml_bf16_t);
    if (a->type == GGML_TYPE_BF16 && kc % 2 == 0 && a->stride % sizeof(uint32_t) == 0 &&
        (uintptr_t) in_place % sizeof(uint32_t) == 0) {
        src = in_place;
        src_stride = (ptrdiff_t) a->stride;
    } else {
        for (int i = 0; i < mr; i++)
            bf16_words(k, operand_row(a, m0 + i, k0, kc, row), kc, rows + (size_t) i * kp);
    }
    k->transpose32(mr, kp, src, src_stride, pack, (ptrdiff_t) (tile_mr * sizeof(uint32_t)));
    for (int p = 0; mr < tile_mr && p < kp; p++)
        for (int i = mr; i < tile_mr; i++)
            pack[p * tile_mr + i] = 0;
}

/* bpack[p][j] = the BF16 pair (b[j][2p], b[j][2p + 1]) for j < nr, 0 for nr <= j < tile_nr. */
static void pack_columns_bf16(const struct ggml__cpu_kernels *k, const float *const *b, int nr, int tile_nr, int kc,
                              uint32_t *restrict bpack, uint32_t *restrict words)
{
    const int kp = (kc + 1) / 2;
    for (int j = 0; j < tile_nr; j++) {
        if (j < nr)
            bf16_words(k, b[j], kc, words);
        for (int p = 0; p < kp; p++)
            bpack[p * tile_nr + j] = j < nr ? words[p] : 0;
    }
}

/* product_block's packed loop with the BF16 tiles (an operand with bf16_pairs). */
static void product_block_bf16(const struct ggml__cpu_kernels *kt, const struct operand *a, int64_t m0, int64_t m1,
                               int64_t K, int ncols, const float *const *b, float *const *c,
                               const struct thread_ws *ws)
{
    const int tile_mr = kt->gemm_mr, tile_nr = kt->gemm_nr;
    const int64_t mc_rows = packed_block_rows();
    uint32_t *apack = (uint32_t *) (void *) ws->apack, *bpack = (uint32_t *) (void *) ws->bpack;
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        const int kc = (int) (K - k0 < KC ? K - k0 : KC), kp = (kc + 1) / 2;
        for (int64_t mc = m0; mc < m1; mc += mc_rows) {
            const int64_t mc_end = m1 - mc < mc_rows ? m1 : mc + mc_rows;
            for (int64_t mb = mc; mb < mc_end; mb += tile_mr) {
                const int mr = (int) (mc_end - mb < tile_mr ? mc_end - mb : tile_mr);
                pack_panel_bf16(kt, a, mb, mr, tile_mr, k0, kc, apack + (mb - mc) * kp, bpack, ws->row);
            }
            for (int j0 = 0; j0 < ncols; j0 += tile_nr) {
                const int nr = ncols - j0 < tile_nr ? ncols - j0 : tile_nr;
                const float *bt[GGML__GEMM_NR_MAX];
                for (int j = 0; j < nr; j++)
                    bt[j] = b[j0 + j] + k0;
                pack_columns_bf16(kt, bt, nr, tile_nr, kc, bpack, (uint32_t *) (void *) ws->row);
                for (int64_t mb = mc; mb < mc_end; mb += tile_mr) {
                    const int mr = (int) (mc_end - mb < tile_mr ? mc_end - mb : tile_mr);
                    float *ct[GGML__GEMM_NR_MAX];
                    for (int j = 0; j < nr; j++)
                        ct[j] = c[j0 + j] + mb;
                    kt->gemm_bf16_tile(kp, apack + (mb - mc) * kp, bpack, ct, mr, nr, k0 > 0);
                }
            }
        }
    }
}

/*
 * c[j][m] = sum_k A(m, k) * b[j][k] for m in [m0, m1) and j < ncols
 * (ncols <= NC): the product of a block of rows of A with a panel of
 * columns.
 */
static void product_block(const struct operand *a, int64_t m0, int64_t m1, int64_t K, int ncols,
                          const float *const *b, float *const *c, const struct thread_ws *ws)
{
    if (m0 >= m1 || ncols == 0)
        return;
    if (K == 0) {
        for (int j = 0; j < ncols; j++)
            for (int64_t m = m0; m < m1; m++)
                c[j][m] = 0.0f;
        return;
    }
    const struct ggml__cpu_kernels *kt = ggml__kernels();
    if (a->bf16_pairs) {
        product_block_bf16(kt, a, m0, m1, K, ncols, b, c, ws);
        return;
    }
    if (ncols <= GEMV_COLS && !a->columns) {
        product_by_dots(a, m0, m1, K, ncols, b, c, ws->row);
        return;
    }
    if (use_dot_tile(a, K, ncols)) {
        product_by_dot_tiles(a, m0, m1, K, ncols, b, c);
        return;
    }
    const int tile_mr = kt->gemm_mr, tile_nr = kt->gemm_nr;
    const int64_t mc_rows = packed_block_rows();
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        const int kc = (int) (K - k0 < KC ? K - k0 : KC);
        for (int64_t mc = m0; mc < m1; mc += mc_rows) {
            const int64_t mc_end = m1 - mc < mc_rows ? m1 : mc + mc_rows;
            for (int64_t mb = mc; mb < mc_end; mb += tile_mr) {
                const int mr = (int) (mc_end - mb < tile_mr ? mc_end - mb : tile_mr);
                pack_panel(a, mb, mr, tile_mr, k0, kc, ws->apack + (mb - mc) * kc, ws->bpack);
            }
            for (int j0 = 0; j0 < ncols; j0 += tile_nr) {
                const int nr = ncols - j0 < tile_nr ? ncols - j0 : tile_nr;
                const float *bt[GGML__GEMM_NR_MAX];
                for (int j = 0; j < nr; j++)
                    bt[j] = b[j0 + j] + k0;
                pack_columns(bt, nr, tile_nr, kt->gemm_lanes, kc, ws->bpack);
                for (int64_t mb = mc; mb < mc_end; mb += tile_mr) {
                    const int mr = (int) (mc_end - mb < tile_mr ? mc_end - mb : tile_mr);
                    float *ct[GGML__GEMM_NR_MAX];
                    for (int j = 0; j < nr; j++)
                        ct[j] = c[j0 + j] + mb;
                    kt->gemm_tile(kc, ws->apack + (mb - mc) * kc, ws->bpack, ct, mr, nr, k0 > 0);
                }
            }
        }
    }
}

/* ------------------------------------------------------ splitting the work */

/* Row conversions of A count as this many columns' worth of work per row. */
#define CONVERT_COST 8

/*
 * How nth threads share an M x ncols product: true to split the rows of
 * A (in groups of ROW_GRAIN), false to split the columns; whichever leaves the
 * busiest thread the least work.  Splitting columns makes every thread
 * convert all of A, which the cost counts.
 */
static bool split_rows(int64_t M, int64_t ncols, int nth)
{
    if (nth <= 1)
        return true;
    const int64_t tiles = (M + ROW_GRAIN - 1) / ROW_GRAIN;
    int64_t rows = (tiles + nth - 1) / nth * ROW_GRAIN;
    rows = rows < M ? rows : M;
    const int64_t cols = (ncols + nth - 1) / nth;
    return (double) rows * (double) (ncols + CONVERT_COST) <= (double) M * (double) (cols + CONVERT_COST);
}

/* Thread ith's rows [*m0, *m1) of an M-row split in groups of ROW_GRAIN. */
static void thread_rows(int64_t M, int ith, int nth, int64_t *m0, int64_t *m1)
{
    int64_t t0, t1;
    ggml__split_rows((M + ROW_GRAIN - 1) / ROW_GRAIN, ith, nth, &t0, &t1);
    *m0 = t0 * ROW_GRAIN < M ? t0 * ROW_GRAIN : M;
    *m1 = t1 * ROW_GRAIN < M ? t1 * ROW_GRAIN : M;
}

/*
 * Thread ith's share of an M x (N * n_batches) product: rows [m0, m1) of
 * A and flat columns [c0, c1) over all batches (one of the two ranges is
 * the whole, as split_rows decides).
 */
struct thread_share {
    int64_t m0, m1, c0, c1;
};

static struct thread_share share_product(int64_t M, int64_t N, int64_t n_batches, int ith, int nth)
{
    struct thread_share share = { 0, M, 0, N * n_batches };
    if (split_rows(M, N * n_batches, nth))
        thread_rows(M, ith, nth, &share.m0, &share.m1);
    else
        ggml__split_rows(N * n_batches, ith, nth, &share.c0, &share.c1);
    return share;
}

/* The columns [*j0, *j1) of batch bt inside the share; false when none. */
static bool share_batch_columns(const struct thread_share *share, int64_t N, int64_t bt, int64_t *j0, int64_t *j1)
{
    *j0 = share->c0 > bt * N ? share->c0 - bt * N : 0;
    *j1 = share->c1 < (bt + 1) * N ? share->c1 - bt * N : N;
    return *j0 < *j1;
}

/* Supplies the rows of column j of a product. */
typedef void (*column_fn)(const void *ctx, int64_t j, const float **b, float **c);

/* Columns [j0, j1) of a product, rows [m0, m1), in panels of NC columns. */
static void product_columns(const struct operand *a, int64_t m0, int64_t m1, int64_t K, int64_t j0, int64_t j1,
                            column_fn column, const void *ctx, const struct thread_ws *ws)
{
    for (int64_t p = j0; p < j1; p += NC) {
        const int n = (int) (j1 - p < NC ? j1 - p : NC);
        for (int j = 0; j < n; j++)
            column(ctx, p + j, &ws->brows[j], &ws->crows[j]);
        product_block(a, m0, m1, K, n, ws->brows, ws->crows, ws);
    }
}

/* ----------------------------------------------------------- shared rows b_j */

/*
 * The columns of MUL_MAT and MUL_MAT_ID are the rows of src1, numbered
 * r = i11 + ne11 * (i12 + ne12 * i13).  They are read in place when src1
 * has F32 rows and vec_dot_type is F32; otherwise converted into scratch.
 */
static bool src1_in_place(const struct ggml_tensor *src0, const struct ggml_tensor *src1)
{
    return src1->type == GGML_TYPE_F32 && vec_dot_type_of(src0->type) == GGML_TYPE_F32 &&
           src1->nb[0] == sizeof(float);
}

static const float *src1_row(const struct ggml_tensor *src1, int64_t r, bool in_place, const float *rows)
{
    if (!in_place)
        return rows + r * b_stride(src1->ne[0]);
    const int64_t i11 = r % src1->ne[1], i12 = (r / src1->ne[1]) % src1->ne[2];
    const int64_t i13 = r / (src1->ne[1] * src1->ne[2]);
    return (const float *) (const void *) ((const char *) src1->data + i11 * src1->nb[1] + i12 * src1->nb[2] +
                                           i13 * src1->nb[3]);
}

/* This thread's share of the conversion of src1's rows into scratch. */
static void convert_src1_rows(const struct ggml__compute_params *params, const struct ggml_tensor *src0,
                              const struct ggml_tensor *src1, float *rows, void *qtmp)
{
    const enum ggml_type vdt = vec_dot_type_of(src0->type);
    const int64_t K = src1->ne[0];
    int64_t first, last;
    ggml__split_rows(ggml_nrows(src1), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t i11 = r % src1->ne[1], i12 = (r / src1->ne[1]) % src1->ne[2];
        const int64_t i13 = r / (src1->ne[1] * src1->ne[2]);
        const char *src = (const char *) src1->data + i11 * src1->nb[1] + i12 * src1->nb[2] + i13 * src1->nb[3];
        load_b_row(src1->type, src, src1->nb[0], K, vdt, rows + r * b_stride(K), qtmp);
    }
}

/*
 * The reference path's conversion of a row of A: the library's scalar
 * decoders (ggml_get_type_traits), independent of the fast kernels.
 */
static void ref_row_to_float(enum ggml_type type, const void *src, float *dst, int64_t n)
{
    if (n <= 0)
        return;
    if (type == GGML_TYPE_F32)
        memcpy(dst, src, (size_t) n * sizeof *dst);
    else
        ggml_get_type_traits(type)->to_float(src, dst, n);
}

/* Plain double-precision dot product of a converted row of A with b. */
static double dot_ref(const float *a, const float *b, int64_t K)
{
    double sum = 0.0;
    for (int64_t k = 0; k < K; k++)
        sum += (double) a[k] * (double) b[k];
    return sum;
}

/* ------------------------------------------------------------------ MUL_MAT */

/*
 * Accepted: src0 of a type with a CPU vec_dot, elements adjacent
 * (nb[0] = type size); src1 F32 with any strides, or already of
 * vec_dot_type (F16/BF16 with any strides, Q8_0/Q8_1 with adjacent
 * blocks); dst F32 of shape [ne01, ne11, ne12, ne13], elements adjacent;
 * src0 broadcast over src1 in dims 2 and 3.
 */
static bool src1_type_ok(const struct ggml_tensor *src0, const struct ggml_tensor *src1)
{
    const enum ggml_type vdt = vec_dot_type_of(src0->type);
    if (src1->type == GGML_TYPE_F32)
        return true;
    if (src1->type != vdt)
        return false;
    return !ggml_is_quantized(vdt) || src1->nb[0] == ggml_type_size(vdt);
}

static bool mul_mat_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    if (a == NULL || b == NULL || !matmul_src0_type(a->type) || !src1_type_ok(a, b))
        return false;
    if (a->nb[0] != ggml_type_size(a->type) || dst->type != GGML_TYPE_F32 || dst->nb[0] != sizeof(float))
        return false;
    if (a->ne[0] != b->ne[0] || b->ne[0] % ggml_blck_size(vec_dot_type_of(a->type)) != 0)
        return false;
    if (!repeats(b->ne[2], a->ne[2]) || !repeats(b->ne[3], a->ne[3]))
        return false;
    return dst->ne[0] == a->ne[1] && dst->ne[1] == b->ne[1] && dst->ne[2] == b->ne[2] && dst->ne[3] == b->ne[3];
}

static void mul_mat_scratch(const struct ggml_tensor *dst, int nth, struct scratch *sc)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t K = a->ne[0];
    memset(sc, 0, sizeof *sc);
    size_t used = 0;
    if (!src1_in_place(a, b))
        used = (size_t) ggml_nrows(b) * (size_t) b_stride(K) * sizeof(float);
    scratch_layout(sc, used, nth, a->ne[1], K, b->ne[1], vec_dot_type_of(a->type), K);
}

/* src0's matrix for the batch (i12, i13) of src1: broadcast by repetition of blocks. */
static struct operand mul_mat_operand(const struct ggml_tensor *a, const struct ggml_tensor *b, int64_t i12,
                                      int64_t i13)
{
    const int64_t i02 = i12 / (b->ne[2] / a->ne[2]), i03 = i13 / (b->ne[3] / a->ne[3]);
    struct operand op = {
        .type = a->type,
        .data = (const char *) a->data + i02 * a->nb[2] + i03 * a->nb[3],
        .stride = a->nb[1],
        .columns = false,
    };
    return op;
}

/* ------------------------- matrix x a few columns, and integer tiles */

/*
 * Products with at most GEMV_COLS columns per batch (token generation)
 * take the kernel table's dot products directly on src0's rows, in their
 * own type: quantized weights against src1 encoded as their vec_dot_type
 * (Q8_0 or Q8_1: integer block sums), F16 and BF16 weights against src1
 * rounded to that type, as ggml defines the product.  Nothing of src0 is
 * converted, so the product streams the weights once at memory speed.
 * Products with more columns whose weights the level has an integer
 * tile for (qgemm_tile) take the same way with tiles of rows by columns
 * instead of dot products: each weight block loaded serves every column
 * of the tile, each column block every row; the tiles also need, per
 * encoded column and block, its scale as a float and the sum of its codes
 * (column_scales, computed with the encoding).
 *
 * Scratch: src1's rows encoded as vec_dot_type (unless src1 already has
 * such rows), ENCODED_STRIDE bytes apart, then one float row per thread
 * for gathering a strided src1 row before it is encoded, then the shared
 * counter of the chunks handed out.  Threads encode their share of src1's
 * rows, meet at a barrier, then take chunks of the flat range of (batch,
 * row of src0) outputs from the counter until none is left: a thread
 * that the system holds back leaves its share to the others.  Which
 * thread computes an output does not change its value.
 */
typedef void (*qgemm_tile_fn)(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                              int nr, float *const *c);

/*
 * Columns per batch up to which a product of weights of type takes dot
 * products rather than converted tiles (types with an integer tile take
 * them whatever their columns).  Converting a type whose blocks are slow
 * to decode costs as much as many columns' dot products: these are the
 * crossovers measured with `ggml-backend-bench --device CPU --op mul_mat`
 * on 4096 x 4096 weights, 8 to 256 columns, 2 threads, AVX-512 level
 * (the two paths' times in ms at 8 and 64 columns, tiles / dots):
 *   Q4_K 23.9/2.2  34.3/20.3     Q6_K 38.2/3.3  49.2/16.6
 *   Q5_K 20.6/2.9  29.6/22.0     Q2_K 28.2/21.0 at 48
 *   TQ2_0 18.3/4.4 (16)  37.3/39.0 (128)   TQ1_0 12.6/3.7  28.5/26.5
 *   IQ3_XXS 68.6/11.4  78.2/79.5   IQ3_S 60.1/64.1 at 48
 *   Q1_0 45.5/8.7  52.7/59.3       IQ2_S 51.8/29.3 at 24, 60.9/109.8
 *   Q4_1 9.0/6.5 at 16, 17.6/18.9 at 32   Q5_1 21.6/35.8 at 48
 *   Q3_K 28.3/13.2  33.3/42.6 at 24
 *   IQ4_XS, MXFP4, NVFP4 and the float types: tiles from 16 columns
 *   on (10.3/13.0, 11.3/16.0, 15.7/36.6 at 16 or 24).
 * IQ2_XXS, IQ2_XS, IQ1_S and IQ1_M, which the bench cannot quantize
 * (they need importance weights), are given IQ2_S's crossover.
 */
static int64_t dot_columns_max(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_Q4_K: case GGML_TYPE_Q6_K:  return 128;
    case GGML_TYPE_TQ2_0:                       return 96;
    case GGML_TYPE_Q5_K: case GGML_TYPE_Q2_K:
    case GGML_TYPE_TQ1_0: case GGML_TYPE_IQ3_XXS: return 64;
    case GGML_TYPE_IQ3_S: case GGML_TYPE_Q1_0: return 40;
    case GGML_TYPE_IQ2_XXS: case GGML_TYPE_IQ2_XS: case GGML_TYPE_IQ2_S:
    case GGML_TYPE_IQ1_S: case GGML_TYPE_IQ1_M:  return 32;
    case GGML_TYPE_Q5_1:                        return 24;
    case GGML_TYPE_Q4_1: case GGML_TYPE_Q3_K:  return 16;
    default:                                    return GEMV_COLS;
    }
}

/* How a product of the weights a by ncols columns (of one matrix of a) is computed. */
enum product_way {
    BY_DOTS,            /* the kernel table's dot products on a's rows */
    BY_INTEGER_TILES,   /* the level's integer tiles (qgemm_tile; qgemm_packed_tile for packed weights) */
    BY_FLOAT_TILES,     /* a's rows converted to floats: the tiled product */
};

/*
 * Packed weights (CPU_REPACK) are read by the integer tiles only,
 * whatever the columns; other weights take them for more columns than
 * the plain dot products take when the level has an integer tile for
 * their type (their vec_dot_type is then Q8_0, or Q8_K for the K-quants), the dot products up to
 * dot_columns_max columns, and the float tiles beyond.
 */
static enum product_way product_way(const struct ggml_tensor *a, int64_t ncols)
{
    if (ggml__cpu_tensor_packed(a))
        return BY_INTEGER_TILES;
    if (a->ne[0] > INT32_MAX || a->ne[0] == 0)   /* (MUL_MAT takes K = 0 apart) */
        return BY_FLOAT_TILES;
    if (ncols > GEMV_COLS && ggml__kernels()->qgemm_tile[a->type] != NULL)
        return BY_INTEGER_TILES;
    return ncols <= dot_columns_max(a->type) ? BY_DOTS : BY_FLOAT_TILES;
}

/* The integer tile for the weights a (when product_way chose them). */
static qgemm_tile_fn integer_tile(const struct ggml_tensor *a)
{
    const struct ggml__cpu_kernels *k = ggml__kernels();
    return ggml__cpu_tensor_packed(a) ? k->qgemm_packed_tile[a->type] : k->qgemm_tile[a->type];
}

/* The integer tile for the product dst when it takes one, else NULL. */
static qgemm_tile_fn qgemm_tile_for(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0];
    return product_way(a, dst->src[1]->ne[1]) == BY_INTEGER_TILES ? integer_tile(a) : NULL;
}

bool ggml__cpu_integer_products(enum ggml_type type)
{
    return (unsigned) type < GGML_TYPE_COUNT && ggml__kernels()->qgemm_tile[type] != NULL;
}

static bool use_dot_products(const struct ggml_tensor *dst)
{
    return product_way(dst->src[0], dst->src[1]->ne[1]) != BY_FLOAT_TILES;
}

/*
 * Rows the dot products take a call where the level has a multi-row
 * kernel.  Whether long float rows run better one at a time depends on
 * the processor, so that is the level's decision: it leaves
 * vec_dot_rows out, or its kernel takes the rows one by one (kernels.h).
 */
#define ROWS_PER_CALL 4

/*
 * The type the dot products read src1's rows in for weights of type
 * type: F32 where the level multiplies such rows by floats
 * (rows_by_f32), the floats then rounded as the vec_dot_type rounds them
 * (the same products, without widening y again for every row: the
 * widenings, not the memory, bound a product of F16 rows by F16 values:
 * 4096 x 4096 F16 weights x a vector took 0.68 ms against F16 values,
 * 0.55 against floats, AVX-512, Emerald Rapids, 2 threads); else the
 * vec_dot_type.
 */
static enum ggml_type dots_src1_type(enum ggml_type type)
{
    if (ggml__kernels()->rows_by_f32[type] != NULL)
        return GGML_TYPE_F32;
    return vec_dot_type_of(type);
}

/* True when src1's rows can be passed to the dot products as they are. */
static bool src1_encoded_in_place(const struct ggml_tensor *a, const struct ggml_tensor *b)
{
    const enum ggml_type read_as = dots_src1_type(a->type);
    return b->type == read_as && read_as == vec_dot_type_of(a->type) && b->nb[0] == ggml_type_size(b->type);
}

static size_t encoded_stride(const struct ggml_tensor *a)
{
    return align_up(ggml_row_size(dots_src1_type(a->type), a->ne[0]));
}

/*
 * Bytes of the column scales of the integer tiles: per src1 row and Q8_0
 * block, d and the codes' sum (none for q8_K columns: their blocks hold
 * both).
 */
static size_t column_scales_size(const struct ggml_tensor *a, const struct ggml_tensor *b)
{
    if (vec_dot_type_of(a->type) != GGML_TYPE_Q8_0)
        return 0;
    return (size_t) ggml_nrows(b) * (size_t) (a->ne[0] / QK8_0) * 2 * sizeof(float);
}

/*
 * Bytes of the encoded src1 rows and the per-thread gather rows of a
 * product of src0 a with src1 b on nth threads.
 */
static size_t encoded_area_size(const struct ggml_tensor *a, const struct ggml_tensor *b, int nth)
{
    size_t size = 0;
    if (!src1_encoded_in_place(a, b))
        size += (size_t) ggml_nrows(b) * encoded_stride(a);
    return size + (size_t) nth * align_up((size_t) a->ne[0] * sizeof(float));
}

/*
 * The tiles take the rows of their range in panels of panel_rows(a) rows
 * (a multiple of GGML__QGEMM_ROWS, some l2_panel_bytes of weights): each panel
 * against every group of columns, so that a panel stays in the level-2
 * cache while the columns pass and a group of columns in the level-1
 * cache while the panel's rows pass.
 */
#define PANEL_ROWS_MAX 256

static int64_t panel_rows(const struct ggml_tensor *a)
{
    const size_t row = ggml_row_size(a->type, a->ne[0]);
    int64_t rows = row > 0 ? (int64_t) (l2_panel_bytes() / row) / GGML__QGEMM_ROWS * GGML__QGEMM_ROWS
                           : PANEL_ROWS_MAX;
    return rows < GGML__QGEMM_ROWS ? GGML__QGEMM_ROWS : rows > PANEL_ROWS_MAX ? PANEL_ROWS_MAX : rows;
}

/*
 * Products with more columns than this interleave their rows.  With the
 * interleaving in registers (qgemm_pack) it repays itself early: 4096 x
 * 4096 Q4_0 weights (2 threads, AVX512_VNNI, best of 5) by 4 columns took
 * 0.42 ms interleaved against 0.8-1.5 read as they are, by 16 columns 1.03
 * against 1.60; Q8_0, twice the bytes to move, by 4 columns 0.83 against
 * 0.61, by 8 1.09 against 1.29, by 32 (2048 rows) 0.60 against 0.71.
 */
static int64_t pack_min_cols(enum ggml_type type)
{
    return type == GGML_TYPE_Q8_0 ? 4 : 0;
}

/*
 * True when the integer tiles of the weights a by ncols columns take
 * them interleaved in a thread's panel (group_area_bytes) for the level's
 * packed tile: weights not packed already, a packed tile for the type,
 * and enough columns to repay the interleaving (pack_min_cols).
 */
static bool interleaves(const struct ggml_tensor *a, int64_t ncols)
{
    return product_way(a, ncols) == BY_INTEGER_TILES && !ggml__cpu_tensor_packed(a) &&
           ncols > pack_min_cols(a->type) && ggml__kernels()->qgemm_packed_tile[a->type] != NULL;
}

/* Bytes of a thread's panel of rows of a interleaved. */
static size_t group_area_bytes(const struct ggml_tensor *a)
{
    return align_up((size_t) panel_rows(a) * ggml_row_size(a->type, a->ne[0]));
}

/*
 * Where the parts of the scratch area of a product of src0 a by src1 b
 * by dot products lie, as byte offsets from the area's base: the encoded
 * rows of src1 from start, then for the integer tiles their column scales
 * and each thread's interleaved group of rows, then the chunk counter in
 * a line of its own.
 */
struct dots_layout {
    size_t encoded;      /* encode_src1_rows's area */
    size_t scales;       /* the column scales, with integer tiles */
    size_t groups;       /* thread i's group at groups + i * group_size */
    size_t group_size;   /* 0: no interleaving */
    size_t counter;
    size_t total;        /* the work size, with room to align the base */
};

static struct dots_layout dots_layout_from(const struct ggml_tensor *a, const struct ggml_tensor *b, int nth,
                                           size_t start, bool tiles, bool interleave)
{
    struct dots_layout l = { align_up(start), 0, 0, 0, 0, 0 };
    size_t end = l.encoded + encoded_area_size(a, b, nth);
    if (tiles) {
        l.scales = align_up(end);
        l.groups = align_up(l.scales + column_scales_size(a, b));
        l.group_size = interleave ? group_area_bytes(a) : 0;
        end = l.groups + (size_t) nth * l.group_size;
    }
    l.counter = align_up(end);
    l.total = SCRATCH_ALIGN + l.counter + SCRATCH_ALIGN;
    return l;
}

static struct dots_layout dots_layout(const struct ggml_tensor *dst, int nth)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    return dots_layout_from(a, b, nth, 0, qgemm_tile_for(dst) != NULL, interleaves(a, b->ne[1]));
}

/* Outputs a chunk of the dot products (a multiple of the 16-row blocks): some eight chunks a thread. */
static int64_t dots_chunk_rows(int64_t total, int nth)
{
    const int64_t rows = total / ((int64_t) nth * 8) / 16 * 16;
    return rows < 64 ? 64 : rows;
}

/* Row r of src1 (r = i11 + ne11 * (i12 + ne12 * i13)). */
static const char *src1_row_bytes(const struct ggml_tensor *b, int64_t r)
{
    const int64_t i11 = r % b->ne[1], i12 = (r / b->ne[1]) % b->ne[2], i13 = r / (b->ne[1] * b->ne[2]);
    return (const char *) b->data + i11 * b->nb[1] + i12 * b->nb[2] + i13 * b->nb[3];
}

/* src1's rows as the dot products read them: row r at rows + r * stride, or in place. */
struct encoded_rows {
    const struct ggml_tensor *src1;
    char *rows;
    size_t stride;
    bool in_place;
};

static const char *encoded_row(const struct encoded_rows *er, int64_t r)
{
    return er->in_place ? src1_row_bytes(er->src1, r) : er->rows + r * er->stride;
}

/*
 * This thread's share of the encoding of src1 b's rows for src0 a into
 * area (encoded_area_size bytes); no barrier.
 */
static struct encoded_rows encode_src1_rows(const struct ggml__compute_params *params, const struct ggml_tensor *a,
                                            const struct ggml_tensor *b, char *area)
{
    const int64_t K = a->ne[0];
    const enum ggml_type vdt = vec_dot_type_of(a->type), read_as = dots_src1_type(a->type);
    struct encoded_rows er = { b, area, encoded_stride(a), src1_encoded_in_place(a, b) };
    if (er.in_place)
        return er;
    float *gather = (float *) (void *) (area + (size_t) ggml_nrows(b) * er.stride +
                                        (size_t) params->ith * align_up((size_t) K * sizeof(float)));
    int64_t first, last;
    ggml__split_rows(ggml_nrows(b), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const char *src = src1_row_bytes(b, r);
        if (read_as != vdt) {   /* floats rounded as vdt rounds them; gather as load_b_row's scratch */
            load_b_row(b->type, src, b->nb[0], K, vdt, (float *) (void *) (er.rows + r * er.stride), gather);
            continue;
        }
        const float *row = (const float *) (const void *) src;
        if (b->type != GGML_TYPE_F32 || b->nb[0] != sizeof(float)) {
            for (int64_t i = 0; i < K; i++)
                gather[i] = load_element(b->type, src + i * b->nb[0]);
            row = gather;
        }
        params->kernels->from_float[vdt](row, er.rows + r * er.stride, K);
    }
    return er;
}

/*
 * c[m] = row m of the src0 matrix at a (rows stride bytes apart, type
 * type) dot brow (a row of dots_src1_type), for m in [m0, m1):
 * ROWS_PER_CALL rows at a time where the table has a multi-row kernel.
 */
static void dots_for_rows(const struct ggml__cpu_kernels *k, enum ggml_type type, int64_t K, const char *a,
                          size_t stride, int64_t m0, int64_t m1, const char *brow, float *c)
{
    const int per_call = ROWS_PER_CALL;
    int64_t m = m0;
    if (k->rows_by_f32[type] != NULL) {   /* brow holds floats: dots_src1_type */
        for (; m < m1; m += per_call)
            k->rows_by_f32[type]((int) K, c + m, a + m * stride, stride, (const float *) (const void *) brow,
                                 (int) (m1 - m < per_call ? m1 - m : per_call));
        return;
    }
    void (*rows)(int, float *, const void *, size_t, const void *, int) = k->vec_dot_rows[type];
    if (rows != NULL)
        for (; m < m1; m += per_call)
            rows((int) K, c + m, a + m * stride, stride, brow, (int) (m1 - m < per_call ? m1 - m : per_call));
    for (; m < m1; m++)
        k->vec_dot[type]((int) K, &c[m], 0, a + m * stride, 0, brow, 0, 1);
}

/*
 * The integer tiles' column scales of this thread's share of src1's
 * encoded rows (the same share encode_src1_rows encoded): for row r, nb
 * floats d[i] at scales + r * 2 * nb, then nb int32 sums of the blocks'
 * codes (kernels.h, struct ggml__qcolumn).
 */
static void column_scales(const struct ggml__compute_params *params, const struct encoded_rows *er, int64_t nb,
                          float *scales)
{
    int64_t first, last;
    ggml__split_rows(ggml_nrows(er->src1), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const block_q8_0 *q = (const block_q8_0 *) (const void *) encoded_row(er, r);
        float *d = scales + r * 2 * nb;
        int32_t *sum = (int32_t *) (void *) (d + nb);
        for (int64_t i = 0; i < nb; i++) {
            int32_t s = 0;
            for (int j = 0; j < QK8_0; j++)
                s += q[i].qs[j];
            d[i] = ggml_fp16_to_fp32(q[i].d);
            sum[i] = s;
        }
    }
}

/* Column r's data in the scales area (see column_scales; scales NULL: q8_K columns). */
static struct ggml__qcolumn qcolumn(const struct encoded_rows *er, const float *scales, int64_t nb, int64_t r)
{
    if (scales == NULL)
        return (struct ggml__qcolumn) { encoded_row(er, r), NULL, NULL };
    const float *d = scales + r * 2 * nb;
    return (struct ggml__qcolumn) { encoded_row(er, r), d, (const int32_t *) (const void *) (d + nb) };
}

/*
 * The columns of one matrix of src0 in a product by dot products or
 * integer tiles: column j < n multiplies src1's row *r (as encoded) into
 * the output row *c (a float per row of src0).
 */
struct column_set {
    int64_t n;
    void (*column)(const void *ctx, int64_t j, int64_t *r, float **c);
    const void *ctx;
};

/* What a thread's outputs of a product by dot products or integer tiles share. */
struct dots_product {
    const struct ggml__cpu_kernels *k;
    const struct ggml_tensor *a;       /* src0 */
    const struct encoded_rows *er;
    float *scales;                     /* the integer tiles' column scales (column_scales) */
    char *group;                       /* this thread's area for interleaved rows, or NULL */
};

/*
 * c_j[m] = row m of op dot column j of cs, for m in [m0, m1): blocks of
 * 16 rows, read from the cache for the columns after the first.
 */
static void dots_for_rows_of(const struct dots_product *dp, const struct operand *op, int64_t m0, int64_t m1,
                             const struct column_set *cs)
{
    for (int64_t m = m0; m < m1; m += 16) {
        const int64_t m_stop = m1 - m < 16 ? m1 : m + 16;
        for (int64_t j = 0; j < cs->n; j++) {
            int64_t r;
            float *c;
            cs->column(cs->ctx, j, &r, &c);
            dots_for_rows(dp->k, dp->a->type, dp->a->ne[0], op->data, op->stride, m, m_stop,
                          encoded_row(dp->er, r), c);
        }
    }
}

/*
 * The same by the integer tile tile: panel by panel of rows
 * (panel_rows), each group of GGML__QGEMM_COLS columns against the
 * panel's groups of GGML__QGEMM_ROWS rows.  With a group area (group not
 * NULL), the panel's whole groups of rows are first interleaved there
 * (packed-rows.h) and multiplied by the level's packed tile, so the
 * columns do not each pay for rearranging the rows.
 */
static void tiles_for_rows(const struct dots_product *dp, qgemm_tile_fn tile, char *group, const struct operand *op,
                           int64_t m0, int64_t m1, const struct column_set *cs)
{
    const struct ggml_tensor *a = dp->a;
    const int64_t nb = a->ne[0] / ggml_blck_size(a->type), panel = panel_rows(a);
    const size_t group_bytes = GGML__QGEMM_ROWS * ggml_row_size(a->type, a->ne[0]);
    const qgemm_tile_fn packed_tile = dp->k->qgemm_packed_tile[a->type];
    for (int64_t p0 = m0; p0 < m1; p0 += panel) {
        const int64_t p1 = m1 - p0 < panel ? m1 : p0 + panel;
        /* the panel's whole groups interleaved: [p0, packed_end) */
        int64_t packed_end = p0;
        if (group != NULL)
            for (; p1 - packed_end >= GGML__QGEMM_ROWS; packed_end += GGML__QGEMM_ROWS)
                dp->k->qgemm_pack[a->type](nb, op->data + packed_end * op->stride, op->stride, GGML__QGEMM_ROWS,
                                           group + (size_t) ((packed_end - p0) / GGML__QGEMM_ROWS) * group_bytes);
        for (int64_t j0 = 0; j0 < cs->n; j0 += GGML__QGEMM_COLS) {
            const int nr = (int) (cs->n - j0 < GGML__QGEMM_COLS ? cs->n - j0 : GGML__QGEMM_COLS);
            struct ggml__qcolumn cols[GGML__QGEMM_COLS];
            float *crow[GGML__QGEMM_COLS], *c[GGML__QGEMM_COLS];
            for (int j = 0; j < nr; j++) {
                int64_t r;
                cs->column(cs->ctx, j0 + j, &r, &crow[j]);
                cols[j] = qcolumn(dp->er, dp->scales, nb, r);
            }
            for (int64_t m = p0; m < p1; m += GGML__QGEMM_ROWS) {
                const int mr = (int) (p1 - m < GGML__QGEMM_ROWS ? p1 - m : GGML__QGEMM_ROWS);
                for (int j = 0; j < nr; j++)
                    c[j] = crow[j] + m;
                if (m < packed_end)
                    packed_tile((int) nb, group + (size_t) ((m - p0) / GGML__QGEMM_ROWS) * group_bytes, 0, mr,
                                cols, nr, c);
                else
                    tile((int) nb, op->data + m * op->stride, op->stride, mr, cols, nr, c);
            }
        }
    }
}

/*
 * This thread's part of the preparation of a product by dot products or
 * integer tiles laid out as l: its share of src1's rows encoded (when
 * encode) and, with tiles, their column scales; thread 0 zeroes the
 * chunk counter.  After the barrier that must follow, the threads take
 * chunks of the flat range of outputs (take_chunk) until none is left,
 * so that a thread the system holds back leaves its share to the others;
 * which thread computes an output does not change its value.
 */
static struct dots_product prepare_dots(const struct ggml__compute_params *params, const struct ggml_tensor *a,
                                        const struct ggml_tensor *b, const struct dots_layout *l, bool encode,
                                        bool tiles, struct encoded_rows *er)
{
    char *area = scratch_base(params);
    struct dots_product dp = { params->kernels, a, er, NULL, NULL };
    if (encode)
        *er = encode_src1_rows(params, a, b, area + l->encoded);
    if (tiles && vec_dot_type_of(a->type) == GGML_TYPE_Q8_0) {
        dp.scales = (float *) (void *) (area + l->scales);
        column_scales(params, er, a->ne[0] / QK8_0, dp.scales);
    }
    if (tiles && l->group_size > 0)
        dp.group = area + l->groups + (size_t) params->ith * l->group_size;
    if (params->ith == 0)   /* every thread passed the barrier before this node: none reads the counter any more */
        atomic_store_explicit((atomic_llong *) (void *) (area + l->counter), 0, memory_order_relaxed);
    return dp;
}

/* Takes the next chunk [*f0, *f1) of [0, total) from the counter of layout l; false when none is left. */
static bool take_chunk(const struct ggml__compute_params *params, const struct dots_layout *l, int64_t total,
                       int64_t *f0, int64_t *f1)
{
    atomic_llong *next = (atomic_llong *) (void *) (scratch_base(params) + l->counter);
    const int64_t chunk = dots_chunk_rows(total, params->nth);
    *f0 = atomic_fetch_add_explicit(next, chunk, memory_order_relaxed);
    *f1 = total - *f0 < chunk ? total : *f0 + chunk;
    return *f0 < total;
}

/* Columns of one batch of a MUL_MAT: column j is row j of the batch's src1 matrix. */
struct mul_mat_batch {
    const struct ggml_tensor *src1, *dst;
    const float *b_rows;    /* src1's rows as floats (float tiles) */
    bool in_place;
    int64_t i12, i13;
};

/* Column j: src1's row r and the output row c. */
static void mul_mat_encoded_column(const void *ctx, int64_t j, int64_t *r, float **c)
{
    const struct mul_mat_batch *mb = ctx;
    const struct ggml_tensor *src1 = mb->src1, *dst = mb->dst;
    *r = j + src1->ne[1] * (mb->i12 + src1->ne[2] * mb->i13);
    *c = (float *) (void *) ((char *) dst->data + j * dst->nb[1] + mb->i12 * dst->nb[2] + mb->i13 * dst->nb[3]);
}

/* Column j: src1's row as floats and the output row c. */
static void mul_mat_column(const void *ctx, int64_t j, const float **b, float **c)
{
    const struct mul_mat_batch *mb = ctx;
    int64_t r;
    mul_mat_encoded_column(ctx, j, &r, c);
    *b = src1_row(mb->src1, r, mb->in_place, mb->b_rows);
}

/* The outputs [f0, f1) of the flat range of (batch, row of src0) of the product dst, by the tile or dot products. */
static void outputs(const struct dots_product *dp, struct ggml_tensor *dst, qgemm_tile_fn tile, int64_t f0, int64_t f1)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t M = a->ne[1];
    for (int64_t f = f0; f < f1;) {
        const int64_t bt = f / M, m_begin = f % M;
        const int64_t m_end = f1 - bt * M < M ? f1 - bt * M : M;
        const struct mul_mat_batch mb = { b, dst, NULL, false, bt % b->ne[2], bt / b->ne[2] };
        const struct column_set cs = { b->ne[1], mul_mat_encoded_column, &mb };
        const struct operand op = mul_mat_operand(a, b, mb.i12, mb.i13);
        if (tile != NULL)
            tiles_for_rows(dp, tile, dp->group, &op, m_begin, m_end, &cs);
        else
            dots_for_rows_of(dp, &op, m_begin, m_end, &cs);
        f = bt * M + m_end;
    }
}

static void mul_mat_by_dots(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const qgemm_tile_fn tile = qgemm_tile_for(dst);
    const struct dots_layout l = dots_layout(dst, params->nth);
    struct encoded_rows er;
    const struct dots_product dp = prepare_dots(params, a, b, &l, true, tile != NULL, &er);
    ggml__threadpool_barrier(params->pool);   /* src1 encoded, counter set */
    const int64_t total = b->ne[2] * b->ne[3] * a->ne[1];
    for (int64_t f0, f1; take_chunk(params, &l, total, &f0, &f1);)
        outputs(&dp, dst, tile, f0, f1);
}

static size_t mul_mat_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    struct scratch sc;
    mul_mat_scratch(dst, n_tasks, &sc);
    if (use_dot_products(dst)) {
        const size_t dots = dots_layout(dst, n_tasks).total;
        return dots > sc.total ? dots : sc.total;
    }
    return sc.total;
}

static void mul_mat_ref(const struct ggml__compute_params *params, struct ggml_tensor *dst, const float *b_rows,
                        bool in_place, float *a_row)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t K = a->ne[0], M = a->ne[1];
    int64_t first, last;
    ggml__split_rows(ggml_nrows(b), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t i11 = r % b->ne[1], i12 = (r / b->ne[1]) % b->ne[2], i13 = r / (b->ne[1] * b->ne[2]);
        const struct operand op = mul_mat_operand(a, b, i12, i13);
        const float *brow = src1_row(b, r, in_place, b_rows);
        float *out = (float *) (void *) ((char *) dst->data + i11 * dst->nb[1] + i12 * dst->nb[2] + i13 * dst->nb[3]);
        for (int64_t m = 0; m < M; m++) {
            ref_row_to_float(a->type, op.data + m * op.stride, a_row, K);
            out[m] = (float) dot_ref(a_row, brow, K);
        }
    }
}

static void mul_mat_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t M = a->ne[1], K = a->ne[0], N = b->ne[1];
    if (K == 0) {
        /* empty sums: zeros; a and b hold no bytes (their data may be NULL) */
        int64_t first, last;
        ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
        for (int64_t r = first; r < last; r++) {
            const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
            memset((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3], 0,
                   (size_t) M * sizeof(float));
        }
        return;
    }
    /* packed weights: the tiles, bit for bit the same at every level, serve as reference too */
    if ((!params->use_ref || ggml__cpu_tensor_packed(a)) && use_dot_products(dst)) {
        mul_mat_by_dots(params, dst);
        return;
    }
    struct scratch sc;
    mul_mat_scratch(dst, params->nth, &sc);
    const struct thread_ws ws = thread_workspace(params, &sc, N);
    float *b_rows = (float *) (void *) (scratch_base(params) + sc.b_rows);

    const bool in_place = src1_in_place(a, b);
    if (!in_place) {
        convert_src1_rows(params, a, b, b_rows, ws.area);
        ggml__threadpool_barrier(params->pool);
    }
    if (params->use_ref) {
        mul_mat_ref(params, dst, b_rows, in_place, ws.area);
        return;
    }

    const int64_t n_batches = b->ne[2] * b->ne[3];
    const struct thread_share share = share_product(M, N, n_batches, params->ith, params->nth);
    const int64_t m0 = share.m0, m1 = share.m1;
    for (int64_t bt = 0; bt < n_batches; bt++) {
        int64_t j0, j1;
        if (!share_batch_columns(&share, N, bt, &j0, &j1))
            continue;
        const struct mul_mat_batch batch = {
            .src1 = b, .dst = dst, .b_rows = b_rows, .in_place = in_place,
            .i12 = bt % b->ne[2], .i13 = bt / b->ne[2],
        };
        struct operand op = mul_mat_operand(a, b, batch.i12, batch.i13);
        op.bf16_pairs = bf16_pairs_for(a->type, N, (enum ggml_prec) dst->op_params[0]);
        product_columns(&op, m0, m1, K, j0, j1, mul_mat_column, &batch, &ws);
    }
}

const struct ggml__op_impl ggml__op_mul_mat = {
    .kernel = mul_mat_kernel,
    .supports = mul_mat_supports,
    .n_tasks = NULL,   /* every thread: the kernel has a barrier */
    .work_size = mul_mat_work_size,
};

/* --------------------------------------------------------------- MUL_MAT_ID */

/*
 * as [K, M, n_as], b [K, ne11, n_tokens], ids I32 [n_used, n_tokens],
 * dst [M, n_used, n_tokens]: dst[:, e, t] = as[:, :, ids[e, t]] *
 * b[:, e % ne11, t].  A pair (e, t) whose id is not an expert index gets
 * NaN and one message per computation.
 */
static bool mul_mat_id_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *as = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    if (as == NULL || b == NULL || ids == NULL || !matmul_src0_type(as->type) || !src1_type_ok(as, b))
        return false;
    if (as->nb[0] != ggml_type_size(as->type) || dst->type != GGML_TYPE_F32 || dst->nb[0] != sizeof(float))
        return false;
    if (ids->type != GGML_TYPE_I32 || ids->ne[2] != 1 || ids->ne[3] != 1 || as->ne[3] != 1 || b->ne[3] != 1)
        return false;
    if (as->ne[0] != b->ne[0] || b->ne[0] % ggml_blck_size(vec_dot_type_of(as->type)) != 0)
        return false;
    if (ids->ne[1] != b->ne[2] || !repeats(ids->ne[0], b->ne[1]))
        return false;
    return dst->ne[0] == as->ne[1] && dst->ne[1] == ids->ne[0] && dst->ne[2] == ids->ne[1] && dst->ne[3] == 1;
}

/*
 * The pairs (e, t) with a valid expert id, sorted by expert and, within an
 * expert, by pair index; group g holds the pairs of one expert,
 * pairs[first[g] .. first[g + 1]).  The memory is linear in the number of
 * pairs, whatever the number of experts.
 */
struct expert_pair {
    int64_t expert;
    int64_t pair;         /* e + t * n_used */
};

struct expert_lists {
    int64_t *n_groups;          /* 1 */
    int64_t *first;             /* n_pairs + 1 */
    struct expert_pair *pairs;  /* n_pairs */
};

static size_t expert_lists_size(int64_t n_pairs)
{
    return (size_t) (n_pairs + 2) * sizeof(int64_t) + (size_t) n_pairs * sizeof(struct expert_pair);
}

static struct expert_lists expert_lists_at(char *at, int64_t n_pairs)
{
    struct expert_lists el;
    el.n_groups = (int64_t *) (void *) at;
    el.first = el.n_groups + 1;
    el.pairs = (struct expert_pair *) (void *) (el.first + n_pairs + 1);
    return el;
}

/*
 * The scratch of MUL_MAT_ID: src1's rows as floats (unless they are
 * already; for the reference path and the float tiles), the column lists,
 * the threads' areas of the float tiles, then (the dots layout) src1's
 * rows encoded, with the integer tiles their column scales and the
 * threads' areas for interleaved rows, and the chunk counter.  What the
 * experts' products need is sized for an expert with every pair, the
 * most any can have (product_way moves on from dots to tiles as the
 * columns grow).
 */
static void mul_mat_id_scratch(const struct ggml_tensor *dst, int nth, struct scratch *sc, struct dots_layout *dl)
{
    const struct ggml_tensor *as = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    const int64_t K = as->ne[0], n_pairs = ids->ne[0] * ids->ne[1];
    memset(sc, 0, sizeof *sc);
    size_t used = 0;
    if (!src1_in_place(as, b))
        used = (size_t) ggml_nrows(b) * (size_t) b_stride(K) * sizeof(float);
    sc->experts = align_up(used);
    used = sc->experts + expert_lists_size(n_pairs);
    scratch_layout(sc, used, nth, as->ne[1], K, n_pairs, vec_dot_type_of(as->type), K);
    *dl = dots_layout_from(as, b, nth, sc->total, product_way(as, n_pairs) == BY_INTEGER_TILES,
                           interleaves(as, n_pairs));
}

static size_t mul_mat_id_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    struct scratch sc;
    struct dots_layout dl;
    mul_mat_id_scratch(dst, n_tasks, &sc, &dl);
    return dl.total;
}

static int32_t expert_id(const struct ggml_tensor *ids, int64_t e, int64_t t)
{
    return *(const int32_t *) (const void *) ((const char *) ids->data + e * ids->nb[0] + t * ids->nb[1]);
}

static float *mul_mat_id_out(const struct ggml_tensor *dst, int64_t e, int64_t t)
{
    return (float *) (void *) ((char *) dst->data + e * dst->nb[1] + t * dst->nb[2]);
}

static int compare_expert_pairs(const void *a, const void *b)
{
    const struct expert_pair *x = a, *y = b;
    if (x->expert != y->expert)
        return x->expert < y->expert ? -1 : 1;
    return (x->pair > y->pair) - (x->pair < y->pair);
}

/* Thread 0: sorts the pairs by expert; fills the pairs with a bad id with NaN. */
static void group_by_expert(const struct ggml_tensor *dst, const struct expert_lists *el)
{
    const struct ggml_tensor *as = dst->src[0], *ids = dst->src[2];
    const int64_t n_as = as->ne[2], n_used = ids->ne[0], n_pairs = ids->ne[0] * ids->ne[1];
    int64_t n_valid = 0, bad = 0, bad_p = 0;
    for (int64_t p = 0; p < n_pairs; p++) {
        const int32_t x = expert_id(ids, p % n_used, p / n_used);
        if (x < 0 || x >= n_as) {
            if (bad++ == 0)
                bad_p = p;
            float *out = mul_mat_id_out(dst, p % n_used, p / n_used);
            for (int64_t m = 0; m < dst->ne[0]; m++)
                out[m] = NAN;
            continue;
        }
        el->pairs[n_valid++] = (struct expert_pair) { .expert = x, .pair = p };
    }
    if (n_valid > 1)
        qsort(el->pairs, (size_t) n_valid, sizeof *el->pairs, compare_expert_pairs);
    int64_t g = 0;
    for (int64_t q = 0; q < n_valid; q++)
        if (q == 0 || el->pairs[q].expert != el->pairs[q - 1].expert)
            el->first[g++] = q;
    el->first[g] = n_valid;
    *el->n_groups = g;
    if (bad > 0)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_mul_mat_id",
                     "'%s': %" PRId64 " expert ids outside [0, %" PRId64 "), the first ids[%" PRId64 ", %" PRId64
                     "] = %d; their results are NaN", ids->name, bad, n_as, bad_p % n_used, bad_p / n_used,
                     (int) expert_id(ids, bad_p % n_used, bad_p / n_used));
}

/* Columns of one expert: its pairs, in order. */
struct expert_columns {
    const struct ggml_tensor *src1, *dst;
    const float *b_rows;
    bool in_place;
    const struct expert_pair *pairs;
    int64_t n_used;
};

/* Column j: src1's row r and the output row c. */
static void expert_encoded_column(const void *ctx, int64_t j, int64_t *r, float **c)
{
    const struct expert_columns *ec = ctx;
    const int64_t p = ec->pairs[j].pair, e = p % ec->n_used, t = p / ec->n_used;
    *r = e % ec->src1->ne[1] + t * ec->src1->ne[1];
    *c = mul_mat_id_out(ec->dst, e, t);
}

/* Column j: src1's row as floats and the output row c. */
static void expert_column(const void *ctx, int64_t j, const float **b, float **c)
{
    const struct expert_columns *ec = ctx;
    int64_t r;
    expert_encoded_column(ctx, j, &r, c);
    *b = src1_row(ec->src1, r, ec->in_place, ec->b_rows);
}

static struct operand expert_operand(const struct ggml_tensor *as, int64_t x)
{
    struct operand op = {
        .type = as->type,
        .data = (const char *) as->data + x * as->nb[2],
        .stride = as->nb[1],
        .columns = false,
    };
    return op;
}

/*
 * The outputs [f0, f1) of the flat range of (expert group, row of src0):
 * each expert's product as product_way chooses for its columns.
 */
static void experts_outputs(const struct dots_product *dp, const struct ggml_tensor *dst,
                            const struct expert_lists *el, const struct expert_columns *all, const struct thread_ws *ws,
                            int64_t f0, int64_t f1)
{
    const struct ggml_tensor *as = dst->src[0];
    const int64_t K = as->ne[0], M = as->ne[1];
    for (int64_t f = f0; f < f1;) {
        const int64_t g = f / M, m_begin = f % M;
        const int64_t m_end = f1 - g * M < M ? f1 - g * M : M;
        const int64_t count = el->first[g + 1] - el->first[g];
        struct expert_columns ec = *all;
        ec.pairs = el->pairs + el->first[g];
        const struct column_set cs = { count, expert_encoded_column, &ec };
        const struct operand op = expert_operand(as, ec.pairs[0].expert);
        switch (product_way(as, count)) {
        case BY_INTEGER_TILES:
            tiles_for_rows(dp, integer_tile(as), interleaves(as, count) ? dp->group : NULL, &op, m_begin, m_end, &cs);
            break;
        case BY_DOTS:
            dots_for_rows_of(dp, &op, m_begin, m_end, &cs);
            break;
        case BY_FLOAT_TILES: {
            struct operand tiled = op;
            tiled.bf16_pairs = bf16_pairs_for(as->type, count, GGML_PREC_DEFAULT);
            product_columns(&tiled, m_begin, m_end, K, 0, count, expert_column, &ec, ws);
            break;
        }
        }
        f = g * M + m_end;
    }
}

/* The reference path: every pair with a valid id, split over the threads. */
static void mul_mat_id_ref(const struct ggml__compute_params *params, const struct ggml_tensor *dst,
                           const struct expert_lists *el, const struct expert_columns *all, float *a_row)
{
    const struct ggml_tensor *as = dst->src[0];
    const int64_t K = as->ne[0], M = as->ne[1];
    int64_t first, last;
    ggml__split_rows(el->first[*el->n_groups], params->ith, params->nth, &first, &last);
    for (int64_t q = first; q < last; q++) {
        const struct operand op = expert_operand(as, el->pairs[q].expert);
        struct expert_columns one = *all;
        one.pairs = el->pairs + q;
        const float *brow;
        float *out;
        expert_column(&one, 0, &brow, &out);
        for (int64_t m = 0; m < M; m++) {
            ref_row_to_float(as->type, op.data + m * op.stride, a_row, K);
            out[m] = (float) dot_ref(a_row, brow, K);
        }
    }
}

/*
 * Threads encode src1's rows (and, when an expert may take the float
 * tiles, convert them to floats), thread 0 groups the pairs by expert;
 * then the threads share the flat range of (expert group, row of src0)
 * in chunks, as the products by dot products do.
 */
static void mul_mat_id_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *as = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    const int64_t M = as->ne[1], n_used = ids->ne[0], n_pairs = ids->ne[0] * ids->ne[1];
    struct scratch sc;
    struct dots_layout dl;
    mul_mat_id_scratch(dst, params->nth, &sc, &dl);
    const struct thread_ws ws = thread_workspace(params, &sc, n_pairs);
    char *base = scratch_base(params);
    float *b_rows = (float *) (void *) (base + sc.b_rows);
    const struct expert_lists el = expert_lists_at(base + sc.experts, n_pairs);
    /* packed weights: the tiles, bit for bit the same at every level, serve as reference too */
    const bool use_ref = params->use_ref && !ggml__cpu_tensor_packed(as);
    const enum product_way widest = product_way(as, n_pairs);

    const bool in_place = src1_in_place(as, b);
    if (!in_place && (use_ref || widest == BY_FLOAT_TILES))
        convert_src1_rows(params, as, b, b_rows, ws.area);
    struct encoded_rows er = { b, NULL, 0, false };
    struct dots_product dp = { params->kernels, as, &er, NULL, NULL };
    if (!use_ref)
        dp = prepare_dots(params, as, b, &dl, product_way(as, 1) != BY_FLOAT_TILES, widest == BY_INTEGER_TILES,
                          &er);
    if (params->ith == 0)
        group_by_expert(dst, &el);
    ggml__threadpool_barrier(params->pool);   /* src1 converted and encoded, pairs grouped, counter set */

    const struct expert_columns all = {
        .src1 = b, .dst = dst, .b_rows = b_rows, .in_place = in_place, .pairs = el.pairs, .n_used = n_used,
    };
    if (use_ref) {
        mul_mat_id_ref(params, dst, &el, &all, ws.area);
        return;
    }
    const int64_t total = *el.n_groups * M;
    for (int64_t f0, f1; take_chunk(params, &dl, total, &f0, &f1);)
        experts_outputs(&dp, dst, &el, &all, &ws, f0, f1);
}

const struct ggml__op_impl ggml__op_mul_mat_id = {
    .kernel = mul_mat_id_kernel,
    .supports = mul_mat_id_supports,
    .n_tasks = NULL,   /* every thread: the kernel has a barrier */
    .work_size = mul_mat_id_work_size,
};

/* ----------------------------------------------------------------- OUT_PROD */

/*
 * a [ne00, K, ne02, ne03], b [ne10, K, ne12, ne13] (F32, any strides),
 * dst F32 [ne00, ne10, ne12, ne13]:
 *     dst[i0, i1, i2, i3] = sum_k a[i0, k, i02, i03] * b[i1, k, i2, i3]
 * with a broadcast over b in dims 2 and 3 (i02 = i2 / (ne12 / ne02)).
 * a is F32, F16, BF16 or one of the quantized types, elements adjacent;
 * a non-F32 a is converted to F32 scratch first.
 */
static bool out_prod_src0_type(enum ggml_type type)
{
    return matmul_src0_type(type);
}

static bool out_prod_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    if (a == NULL || b == NULL || !out_prod_src0_type(a->type) || b->type != GGML_TYPE_F32)
        return false;
    if (a->nb[0] != ggml_type_size(a->type) || dst->type != GGML_TYPE_F32 || dst->nb[0] != sizeof(float))
        return false;
    if (a->ne[1] != b->ne[1] || !repeats(b->ne[2], a->ne[2]) || !repeats(b->ne[3], a->ne[3]))
        return false;
    return dst->ne[0] == a->ne[0] && dst->ne[1] == b->ne[0] && dst->ne[2] == b->ne[2] && dst->ne[3] == b->ne[3];
}

/* b's "rows" here are its columns: b_j[k] = b[j, k]; in place when dim 1 is adjacent. */
static bool out_prod_b_in_place(const struct ggml_tensor *b)
{
    return b->nb[1] == sizeof(float);
}

static void out_prod_scratch(const struct ggml_tensor *dst, int nth, struct scratch *sc)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t K = a->ne[1];
    memset(sc, 0, sizeof *sc);
    size_t used = 0;
    if (!out_prod_b_in_place(b))
        used = (size_t) (b->ne[0] * b->ne[2] * b->ne[3]) * (size_t) b_stride(K) * sizeof(float);
    sc->a_f32 = align_up(used);
    used = sc->a_f32;
    if (a->type != GGML_TYPE_F32)
        used += (size_t) ggml_nelements(a) * sizeof(float);
    /* the reference path keeps a row of a (floats) and a row of sums (doubles) */
    scratch_layout(sc, used, nth, a->ne[0], K, b->ne[0], GGML_TYPE_F32, 2 * a->ne[0]);
}

static size_t out_prod_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    struct scratch sc;
    out_prod_scratch(dst, n_tasks, &sc);
    return sc.total;
}

/* Column j of batch (i12, i13) of an OUT_PROD. */
struct out_prod_batch {
    const struct ggml_tensor *src1, *dst;
    const float *b_rows;   /* NULL: read b in place */
    int64_t i12, i13;
};

static const float *out_prod_b(const struct ggml_tensor *b, const float *b_rows, int64_t j, int64_t i12, int64_t i13)
{
    if (b_rows != NULL)
        return b_rows + (j + b->ne[0] * (i12 + b->ne[2] * i13)) * b_stride(b->ne[1]);
    return (const float *) (const void *) ((const char *) b->data + j * b->nb[0] + i12 * b->nb[2] + i13 * b->nb[3]);
}

static float *out_prod_out(const struct ggml_tensor *dst, int64_t j, int64_t i12, int64_t i13)
{
    return (float *) (void *) ((char *) dst->data + j * dst->nb[1] + i12 * dst->nb[2] + i13 * dst->nb[3]);
}

static void out_prod_column(const void *ctx, int64_t j, const float **b, float **c)
{
    const struct out_prod_batch *ob = ctx;
    *b = out_prod_b(ob->src1, ob->b_rows, j, ob->i12, ob->i13);
    *c = out_prod_out(ob->dst, j, ob->i12, ob->i13);
}

static void out_prod_ref(const struct ggml__compute_params *params, struct ggml_tensor *dst, void *area)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t ne0 = a->ne[0], K = a->ne[1];
    double *sum = area;
    float *a_row = (float *) (void *) (sum + ne0);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        const int64_t i02 = i2 / (b->ne[2] / a->ne[2]), i03 = i3 / (b->ne[3] / a->ne[3]);
        for (int64_t i0 = 0; i0 < ne0; i0++)
            sum[i0] = 0.0;
        for (int64_t k = 0; k < K; k++) {
            ref_row_to_float(a->type, (const char *) a->data + k * a->nb[1] + i02 * a->nb[2] + i03 * a->nb[3],
                             a_row, ne0);
            const double bv = *(const float *) (const void *) ((const char *) b->data + i1 * b->nb[0] +
                                                              k * b->nb[1] + i2 * b->nb[2] + i3 * b->nb[3]);
            for (int64_t i0 = 0; i0 < ne0; i0++)
                sum[i0] += (double) a_row[i0] * bv;
        }
        float *out = out_prod_out(dst, i1, i2, i3);
        for (int64_t i0 = 0; i0 < ne0; i0++)
            out[i0] = (float) sum[i0];
    }
}

static void out_prod_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int64_t M = a->ne[0], K = a->ne[1], N = b->ne[0];
    struct scratch sc;
    out_prod_scratch(dst, params->nth, &sc);
    const struct thread_ws ws = thread_workspace(params, &sc, N);
    if (params->use_ref) {
        out_prod_ref(params, dst, ws.area);
        return;
    }

    char *base = scratch_base(params);
    float *b_rows = out_prod_b_in_place(b) ? NULL : (float *) (void *) (base + sc.b_rows);
    float *a_f32 = (float *) (void *) (base + sc.a_f32);
    const int64_t n_batches = b->ne[2] * b->ne[3];
    if (b_rows != NULL) {
        int64_t first, last;
        ggml__split_rows(N * n_batches, params->ith, params->nth, &first, &last);
        for (int64_t r = first; r < last; r++) {
            const int64_t j = r % N, i12 = (r / N) % b->ne[2], i13 = r / (N * b->ne[2]);
            const char *src = (const char *) b->data + j * b->nb[0] + i12 * b->nb[2] + i13 * b->nb[3];
            load_b_row(GGML_TYPE_F32, src, b->nb[1], K, GGML_TYPE_F32, b_rows + r * b_stride(K), NULL);
        }
    }
    if (a->type != GGML_TYPE_F32) {
        /* a's rows (along m) as F32, contiguous: [ne03][ne02][K][M] */
        int64_t first, last;
        ggml__split_rows(ggml_nrows(a), params->ith, params->nth, &first, &last);
        for (int64_t r = first; r < last; r++) {
            const int64_t k = r % K, i02 = (r / K) % a->ne[2], i03 = r / (K * a->ne[2]);
            row_to_float(a->type, (const char *) a->data + k * a->nb[1] + i02 * a->nb[2] + i03 * a->nb[3],
                         a_f32 + r * M, M);
        }
    }
    ggml__threadpool_barrier(params->pool);

    const struct thread_share share = share_product(M, N, n_batches, params->ith, params->nth);
    const int64_t m0 = share.m0, m1 = share.m1;
    for (int64_t bt = 0; bt < n_batches; bt++) {
        int64_t j0, j1;
        if (!share_batch_columns(&share, N, bt, &j0, &j1))
            continue;
        const struct out_prod_batch batch = {
            .src1 = b, .dst = dst, .b_rows = b_rows, .i12 = bt % b->ne[2], .i13 = bt / b->ne[2],
        };
        const int64_t i02 = batch.i12 / (b->ne[2] / a->ne[2]), i03 = batch.i13 / (b->ne[3] / a->ne[3]);
        struct operand op = { .type = GGML_TYPE_F32, .columns = true };
        if (a->type == GGML_TYPE_F32) {
            op.data = (const char *) a->data + i02 * a->nb[2] + i03 * a->nb[3];
            op.stride = a->nb[1];
        } else {
            op.data = (const char *) (a_f32 + (i02 + a->ne[2] * i03) * K * M);
            op.stride = (size_t) M * sizeof(float);
        }
        product_columns(&op, m0, m1, K, j0, j1, out_prod_column, &batch, &ws);
    }
}

const struct ggml__op_impl ggml__op_out_prod = {
    .kernel = out_prod_kernel,
    .supports = out_prod_supports,
    .n_tasks = NULL,   /* every thread: the kernel has a barrier */
    .work_size = out_prod_work_size,
};
