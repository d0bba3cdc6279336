/*
 * quants-k23.c - the K-quant formats q2_K (2-bit codes, 4-bit scales and
 * minimums) and q3_K (3-bit symmetric codes, 6-bit scales); layouts in
 * quants-impl.h.
 *
 * The quantizers are the scale searches of quants-k.c: q2_K is an affine
 * format like q4_K (16 sub-blocks of 16 values here), q3_K a symmetric
 * one like q6_K.  They minimise the squared error of the decoded values,
 * weighted by the importance weights when ggml_quantize_chunk gets them
 * (by 1 otherwise); this file describes the two formats to them and packs
 * the results.
 *
 * The decoders compute exactly what ggml's do (single precision, the same
 * products in the same order), so a block decodes to the same floats
 * everywhere.  Like quants.c this file must be compiled without
 * floating-point contraction.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* The 2-bit field of value v (0..255) in a q2_K or q3_K qs array. */
static inline int low2_code(const uint8_t *qs, int v)
{
    return (qs[32 * (v / 128) + v % 32] >> (2 * ((v % 128) / 32))) & 3;
}

/* The qs array of 256 codes: the low two bits of codes[v], v = 128 h +
   32 p + l, at bits 2 p of qs[32 h + l] (the layout low2_code reads). */
static void pack_low2_codes(uint8_t qs[QK_K / 4], const uint8_t codes[QK_K])
{
    for (int h = 0; h < 2; h++) {
        const uint8_t *c = codes + 128 * h;
        for (int l = 0; l < 32; l++)
            qs[32 * h + l] = (uint8_t) ((c[l] & 3) | (c[l + 32] & 3) << 2 | (c[l + 64] & 3) << 4 | (c[l + 96] & 3) << 6);
    }
}

/* ------------------------------------------------------------------ q2_K */

void ggml__dequantize_row_q2_K(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_q2_K *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        const float dmin = ggml__fp16_to_fp32(x[i].dmin);
        for (int s = 0; s < QK_K / 16; s++) {
            const float step = d * (float) (x[i].scales[s] & 0x0f);
            const float offset = dmin * (float) (x[i].scales[s] >> 4);
            for (int v = 16 * s; v < 16 * s + 16; v++)
                y[i * QK_K + v] = step * (float) low2_code(x[i].qs, v) - offset;
        }
    }
}

/*
 * Candidates of d: largest / 15 and 3% below; of dmin: largest / 15;
 * four starting steps for a sub-block's fit.  With the trials of codes
 * around the rounded ones and the least-squares refinement, more
 * candidates (of this table, or steps) change the error by less than 0.3%
 * and cost a pass over the block (sub-block) each.
 */
static const float q2_K_factors[] = { 1.0f, 0.97f, 1.03f, 0.94f, 1.06f, 0.91f, 1.09f };
static const struct ggml__affine_k_format q2_K_format = { 16, 3, 15, q2_K_factors, 2, 1, 6, 2 };

static void quantize_block_q2_K(const float *x, const float *w, void *vy)
{
    block_q2_K *y = vy;
    struct ggml__affine_k k;
    ggml__quantize_affine_k(x, w, &q2_K_format, &k);
    memset(y, 0, sizeof *y);
    y->d = ggml__fp32_to_fp16(k.d);
    y->dmin = ggml__fp32_to_fp16(k.dmin);
    for (int s = 0; s < QK_K / 16; s++)
        y->scales[s] = (uint8_t) (k.sc[s] | (k.mn[s] << 4));
    pack_low2_codes(y->qs, k.q);
}

/*
 * The reference quantizer (from_float) weights each value by its
 * magnitude, as ggml's does: the large values, which dominate the dot
 * products this encoder feeds, are kept closest.  (With two bits a value,
 * equal weights give a lower RMSE but dot products several times further
 * off on smooth data.)  ggml_quantize_chunk without importance weights
 * writes the same blocks.
 */
void ggml__quantize_row_q2_K_ref(const float *restrict x, void *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(x, y, k, QK_K, __func__);
    for (int64_t i = 0; i < nb; i++) {
        float w[QK_K];
        for (int j = 0; j < QK_K; j++) {
            const float a = fabsf(x[i * QK_K + j]);
            w[j] = (a <= FLT_MAX ? a : 0.0f) + 1e-30f;
        }
        quantize_block_q2_K(x + i * QK_K, w, (char *) y + i * (int64_t) sizeof(block_q2_K));
    }
}

void ggml__quantize_q2_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix)
{
    if (imatrix != NULL) {
        ggml__quantize_k_rows(quantize_block_q2_K, sizeof(block_q2_K), x, y, nrows, n_per_row, imatrix, __func__);
        return;
    }
    for (int64_t r = 0; r < nrows; r++)
        ggml__quantize_row_q2_K_ref(x + r * n_per_row, (char *) y + r * (n_per_row / QK_K) * (int64_t) sizeof(block_q2_K),
                                    n_per_row);
}

/* ------------------------------------------------------------------ q3_K */

void ggml__dequantize_row_q3_K(const void *restrict vx, float *restrict y, int64_t k)
{
    const int64_t nb = ggml__quant_row_blocks(vx, y, k, QK_K, __func__);
    const block_q3_K *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int s = 0; s < QK_K / 16; s++) {
            const float step = d * (float) (ggml__q3_K_scale(x[i].scales, s) - 32);
            for (int v = 16 * s; v < 16 * s + 16; v++) {
                const int high = (x[i].hmask[v % 32] >> (v / 32)) & 1;
                const int q = low2_code(x[i].qs, v) - (high ? 0 : 4);
                y[i * QK_K + v] = step * (float) q;
            }
        }
    }
}

/*
 * Without importance weights q3_K takes one fit per side of a sub-block
 * and one d, as cheap as ggml's own quantizer and still closer; with them
 * it searches more (four fits a side, four d), as ggml's weighted
 * quantizer also does.
 */
static const float q3_K_factors[] = { 1.0f, 0.98f };
static const struct ggml__symmetric_k_format q3_K_format = { -4, 3, -32, 31, q3_K_factors, 1, 1, 0.0f, 2, 1 };
static const struct ggml__symmetric_k_format q3_K_weighted_format = { -4, 3, -32, 31, q3_K_factors, 2, 4, 0.3f, 2, 2 };

static void quantize_block_q3_K_with(const struct ggml__symmetric_k_format *format, const float *x, const float *w,
                                     block_q3_K *y)
{
    int sc[QK_K / 16];
    int8_t q[QK_K];
    const float d = ggml__quantize_symmetric_k(x, w, format, sc, q);
    memset(y, 0, sizeof *y);
    y->d = ggml__fp32_to_fp16(d);
    for (int s = 0; s < QK_K / 16; s++) {
        const int stored = sc[s] + 32;
        y->scales[s % 8] |= (uint8_t) ((stored & 0x0f) << (4 * (s / 8)));
        y->scales[8 + s % 4] |= (uint8_t) ((stored >> 4) << (2 * (s / 4)));
    }
    uint8_t codes[QK_K];
    for (int v = 0; v < QK_K; v++)
        codes[v] = (uint8_t) (q[v] + 4);   /* 0..7 */
    pack_low2_codes(y->qs, codes);
    /* the third bit of value 32 j + l at bit j of hmask[l] (zeroed above) */
    for (int j = 0; j < 8; j++)
        for (int l = 0; l < 32; l++)
            y->hmask[l] |= (uint8_t) ((codes[32 * j + l] >> 2) << j);
}

static void quantize_block_q3_K(const float *x, const float *w, void *y)
{
    quantize_block_q3_K_with(&q3_K_format, x, w, y);
}

static void quantize_block_q3_K_weighted(const float *x, const float *w, void *y)
{
    quantize_block_q3_K_with(&q3_K_weighted_format, x, w, y);
}

void ggml__quantize_row_q3_K_ref(const float *restrict x, void *restrict y, int64_t k)
{
    ggml__quantize_k_rows(quantize_block_q3_K, sizeof(block_q3_K), x, y, 1, k, NULL, __func__);
}

void ggml__quantize_q3_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix)
{
    ggml__quantize_k_rows(imatrix != NULL ? quantize_block_q3_K_weighted : quantize_block_q3_K, sizeof(block_q3_K), x,
                          y, nrows, n_per_row, imatrix, __func__);
}
