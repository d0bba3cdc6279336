/*
 * simd/avx512/qgemm-vnni.c - the integer tile of the quantized matrix
 * product (kernels.h, qgemm_tile) with AVX512_VNNI: 16 rows of Q4_0,
 * Q5_0, Q8_0 or IQ4_NL weights by up to 16 Q8_0 columns.
 *
 * Per block of 32 values, the 16 rows' weights are made unsigned, u = w
 * + offset (8 for Q4_0, 16 for Q5_0, 128 for Q8_0 and IQ4_NL, whose
 * weights are its levels), and transposed so that vector q
 * holds codes 4q .. 4q + 3 of the 16 rows, one row per 32-bit lane.  A
 * column's block then takes 8 vpdpbusd, each multiplying the 16 rows'
 * four codes by the column's four codes at the same place (broadcast),
 * which leaves the 16 rows' integer sums sum u * q (exact: at most 32 *
 * 255 * 128) in the 16 lanes.  The offset comes out, still in integers,
 * with the column's precomputed sum of codes: sum w q = sum u q - offset *
 * sum q.  One conversion, a multiply by the column's scale and a
 * multiply-add by the 16 rows' own block scales then finish the block.
 *
 * Rows stored interleaved (packed-rows.h, "CPU_REPACK" buffers) are in
 * that transposed order already: their tile loads each block's codes of
 * the 16 rows in four (4-bit types) or eight loads and skips the
 * transpose.
 */
#include "config.h"

#include <string.h>

#include "intrin.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "avx512.h"
#include "block-formats.h"
#include "../avx2/words8x8.h"

#define ROWS GGML__QGEMM_ROWS
#define COLS GGML__QGEMM_COLS

_Static_assert(ROWS == 16 && COLS == 16, "the tile below is 16 x 16");

/* The 32 codes of a Q8_0 block plus 128, unsigned, in element order. */
static inline __m256i unsigned_q8_0(const block_q8_0 *b)
{
    return _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (const void *) b->qs), _mm256_set1_epi8((char) 0x80));
}

/*
 * The 32 nibbles of a 4-bit block (element j in the low nibble of byte j,
 * element j + 16 in its high one), in element order.
 */
static inline __m256i nibbles(const uint8_t qs[16])
{
    const __m128i packed = _mm_loadu_si128((const __m128i *) (const void *) qs);
    const __m128i mask = _mm_set1_epi8(0x0f);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(packed, 4), mask), _mm_and_si128(packed, mask));
}

/* The 32 codes of a Q5_0 block plus 16: its nibbles and fifth bits, in element order. */
static inline __m256i unsigned_q5_0(const block_q5_0 *b)
{
    uint32_t qh;
    memcpy(&qh, b->qh, sizeof qh);
    return _mm256_or_si256(nibbles(b->qs), _mm256_maskz_mov_epi8((__mmask32) qh, _mm256_set1_epi8(0x10)));
}

/* ggml__iq4nl_values plus 128 (unsigned bytes), in both 128-bit lanes. */
static inline __m256i iq4_nl_unsigned_levels(void)
{
    uint8_t shifted[16];
    for (int i = 0; i < 16; i++)
        shifted[i] = (uint8_t) (ggml__iq4nl_values[i] + 128);
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) (const void *) shifted));
}

/* The 32 values of an IQ4_NL block plus 128 (levels: iq4_nl_unsigned_levels), in element order. */
static inline __m256i unsigned_iq4_nl(const block_iq4_nl *b, __m256i levels)
{
    return _mm256_shuffle_epi8(levels, nibbles(b->qs));
}

/* Four codes of a column's block, at byte offset 4q, as one 32-bit word. */
static inline int32_t column_word(const block_q8_0 *b, int q)
{
    int32_t word;
    memcpy(&word, b->qs + 4 * q, sizeof word);
    return word;
}

/* The weights of a block at blk plus ggml__code_bias(t), unsigned, in element order (levels: IQ4_NL's). */
static inline __attribute__((always_inline)) __m256i unsigned_codes(enum ggml_type t, const char *blk,
                                                                    __m256i levels)
{
    switch (t) {
    case GGML_TYPE_Q8_0: return unsigned_q8_0((const block_q8_0 *) (const void *) blk);
    case GGML_TYPE_Q5_0: return unsigned_q5_0((const block_q5_0 *) (const void *) blk);
    case GGML_TYPE_IQ4_NL: return unsigned_iq4_nl((const block_iq4_nl *) (const void *) blk, levels);
    default: return nibbles(((const block_q4_0 *) (const void *) blk)->qs);
    }
}


/*
 * Block b of 16 rows (row[r], rows of type t), as the tile multiplies
 * it: v[q] lane r = codes 4q .. 4q + 3 of row r made unsigned, *da lane r
 * = row r's scale.
 */
static inline __attribute__((always_inline)) void rows_block(enum ggml_type t, const char *const *row, int b,
                                                             __m256i levels, __m512i v[8], __m512 *da)
{
    const size_t block_bytes = ggml__small_block_bytes(t);
    /* rows 0..7 and 8..15 transposed apart, then joined: lane r of v[q] is row r */
    __m256i lo[8], hi[8];
    ggml_fp16_t d[ROWS];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        const char *blk_lo = row[r] + (size_t) b * block_bytes, *blk_hi = row[r + 8] + (size_t) b * block_bytes;
        memcpy(&d[r], blk_lo, sizeof d[r]);   /* d opens the block */
        memcpy(&d[r + 8], blk_hi, sizeof d[r + 8]);
        lo[r] = unsigned_codes(t, blk_lo, levels);
        hi[r] = unsigned_codes(t, blk_hi, levels);
    }
    ggml__transpose_words8(lo);
    ggml__transpose_words8(hi);
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        v[q] = _mm512_inserti64x4(_mm512_castsi256_si512(lo[q]), hi[q], 1);
    *da = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) d));
}

/*
 * The same from a group of interleaved rows (packed-rows.h): the scales
 * and the code words are loaded as they are, 16 rows a load.
 */
static inline __attribute__((always_inline)) void packed_block(enum ggml_type t, const char *group, int b,
                                                               __m256i levels, __m512i v[8], __m512 *da)
{
    const char *g = group + (size_t) b * ROWS * ggml__small_block_bytes(t);
    *da = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) g));
    const char *words = g + 2 * ROWS;
    if (t == GGML_TYPE_Q8_0) {
#pragma GCC unroll 8
        for (int q = 0; q < 8; q++)
            v[q] = _mm512_xor_si512(_mm512_loadu_si512(words + 64 * q), _mm512_set1_epi8((char) 0x80));
        return;
    }
    /* 4-bit codes: word q holds codes 4q .. 4q + 3 low and 16 + 4q .. 16 + 4q + 3 high */
    const __m512i mask = _mm512_set1_epi8(0x0f);
    const __m512i levels4 = _mm512_broadcast_i64x4(levels);
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
        const __m512i packed = _mm512_loadu_si512(words + 64 * q);
        __m512i low = _mm512_and_si512(packed, mask), high = _mm512_and_si512(_mm512_srli_epi16(packed, 4), mask);
        if (t == GGML_TYPE_IQ4_NL) {
            low = _mm512_shuffle_epi8(levels4, low);
            high = _mm512_shuffle_epi8(levels4, high);
        }
        v[q] = low;
        v[q + 4] = high;
    }
}

/*
 * The tile for weights of type t (a constant after inlining), rows at a
 * a_stride bytes apart or, packed, one group of interleaved rows at a,
 * computing width columns (nr <= width <= COLS): rows past mr read row
 * 0, columns past nr read column 0; neither is stored.
 */
static inline __attribute__((always_inline)) void tile_of(enum ggml_type t, bool packed, const int width, int nb,
                                                          const void *a, size_t a_stride, int mr,
                                                          const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    const int offset = ggml__code_bias(t);
    const __m256i levels = t == GGML_TYPE_IQ4_NL ? iq4_nl_unsigned_levels() : _mm256_setzero_si256();
    const char *row[ROWS];
    for (int r = 0; r < ROWS; r++)
        row[r] = (const char *) a + (r < mr ? (size_t) r * a_stride : 0);
    const block_q8_0 *col[COLS];
    const float *cd[COLS];
    const int32_t *csum[COLS];
    for (int j = 0; j < width; j++) {
        const struct ggml__qcolumn *cj = &cols[j < nr ? j : 0];
        col[j] = cj->q;
        cd[j] = cj->d;
        csum[j] = cj->sum;
    }
    __m512 acc[COLS];
#pragma GCC unroll 16
    for (int j = 0; j < width; j++)
        acc[j] = _mm512_setzero_ps();

    for (int b = 0; b < nb; b++) {
        __m512i v[8];
        __m512 da;
        if (packed)
            packed_block(t, a, b, levels, v, &da);
        else
            rows_block(t, row, b, levels, v, &da);
#pragma GCC unroll 16
        for (int j = 0; j < width; j++) {
            const block_q8_0 *q = col[j] + b;
            __m512i s = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++)
                s = _mm512_dpbusd_epi32(s, v[k], _mm512_set1_epi32(column_word(q, k)));
            s = _mm512_sub_epi32(s, _mm512_set1_epi32(offset * csum[j][b]));
            const __m512 scaled = _mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_set1_ps(cd[j][b]));
            acc[j] = _mm512_fmadd_ps(da, scaled, acc[j]);
        }
    }
    const __mmask16 rows_kept = (__mmask16) (mr >= 16 ? 0xffffu : (1u << mr) - 1u);
    for (int j = 0; j < nr; j++)
        _mm512_mask_storeu_ps(c[j], rows_kept, acc[j]);
}

/* The tile with as few columns computed as cover nr (a constant width each: the accumulators stay in registers). */
static inline __attribute__((always_inline)) void tile(enum ggml_type t, bool packed, int nb, const void *a,
                                                       size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                                       int nr, float *const *c)
{
    if (nr <= 1)
        tile_of(t, packed, 1, nb, a, a_stride, mr, cols, nr, c);
    else if (nr <= 4)
        tile_of(t, packed, 4, nb, a, a_stride, mr, cols, nr, c);
    else if (nr <= 8)
        tile_of(t, packed, 8, nb, a, a_stride, mr, cols, nr, c);
    else
        tile_of(t, packed, COLS, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(GGML_TYPE_Q8_0, false, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(GGML_TYPE_Q4_0, false, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_tile_q5_0(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(GGML_TYPE_Q5_0, false, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_tile_iq4_nl(int nb, const void *a, size_t a_stride, int mr,
                                         const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(GGML_TYPE_IQ4_NL, false, nb, a, a_stride, mr, cols, nr, c);
}

/* qgemm_packed_tile entries */
void ggml__avx512_vnni_qgemm_packed_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(GGML_TYPE_Q8_0, true, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_packed_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(GGML_TYPE_Q4_0, true, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_packed_tile_iq4_nl(int nb, const void *a, size_t a_stride, int mr,
                                                const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(GGML_TYPE_IQ4_NL, true, nb, a, a_stride, mr, cols, nr, c);
}
