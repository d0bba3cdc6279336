/*
 * simd/avx512/qgemm-k-vnni.c - the integer tile of the quantized matrix
 * product (kernels.h, qgemm_tile) for q4_K weights against q8_K columns
 * with AVX512_VNNI: 16 rows by up to 16 columns.
 *
 * Per 256-value block and 32-value sub-block s, the 16 rows' 4-bit codes
 * (unsigned, 0..15) are transposed so that vector q holds codes 4q ..
 * 4q + 3 of the 16 rows, one row per 32-bit lane (as the Q4_0 tile of
 * qgemm-vnni.c does).  A column's sub-block then takes 8 vpdpbusd, each
 * multiplying the rows' four codes by the column's four codes at the same
 * place (broadcast), which leaves the 16 rows' sums of code times
 * activation; multiplied by the rows' 6-bit scales of s they add up over
 * the block in 32-bit lanes (exact: at most 8 * 63 * 32 * 15 * 128 in
 * magnitude).  The minimums' term, sum over s of the rows' minimum times
 * the column's sum over s (from its 16-value sums), takes four vpdpwssd
 * on 16-bit pairs.  Both integer sums are those of the generic dot
 * product (simd/generic/dot-k.c), and the block's share is formed with
 * ggml__q4_K_block_dot's float operations in the same order, so every
 * output is the generic vec_dot's value bit for bit.
 *
 * Products of many columns first interleave each group of 16 rows into
 * a layout of this level (qgemm_pack, ggml__avx512_vnni_qgemm_pack_q4_K)
 * so that the transposes and the scales' decoding are done once per
 * group, not once per 16 columns; the packed tile reads that layout.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "intrin.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "avx512.h"
#include "../avx2/words8x8.h"

#define ROWS GGML__QGEMM_ROWS
#define COLS GGML__QGEMM_COLS

_Static_assert(ROWS == 16 && COLS == 16, "the tile below is 16 x 16");

/* The per-block values of the 16 rows that the tile multiplies by. */
struct q4_K_rows {
    ggml_fp16_t d[ROWS], dmin[ROWS];
    int32_t scale[8][ROWS];        /* scale[s][r]: row r's 6-bit scale of sub-block s */
    uint32_t min_pair[4][ROWS];    /* row r's minimums of sub-blocks 2p (low half) and 2p + 1 */
};

static void decode_rows(const char *const *row, int b, struct q4_K_rows *out)
{
    for (int r = 0; r < ROWS; r++) {
        const block_q4_K *blk = (const block_q4_K *) (const void *) row[r] + b;
        out->d[r] = blk->d;
        out->dmin[r] = blk->dmin;
        for (int p = 0; p < 4; p++) {
            int sc0, mn0, sc1, mn1;
            ggml__q4_K_scale_min(blk->scales, 2 * p, &sc0, &mn0);
            ggml__q4_K_scale_min(blk->scales, 2 * p + 1, &sc1, &mn1);
            out->scale[2 * p][r] = sc0;
            out->scale[2 * p + 1][r] = sc1;
            out->min_pair[p][r] = (uint32_t) mn0 | (uint32_t) mn1 << 16;
        }
    }
}

/*
 * Sub-block s of block b of the 16 rows: v[q] lane r = codes 4q .. 4q + 3
 * of row r.  Sub-blocks 2p and 2p + 1 are the low and the high nibbles of
 * the block's bytes 32p .. 32p + 31.
 */
static inline __attribute__((always_inline)) void rows_sub(const char *const *row, int b, int s, __m512i v[8])
{
    const __m256i mask = _mm256_set1_epi8(0x0f);
    __m256i lo[8], hi[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        const block_q4_K *b_lo = (const block_q4_K *) (const void *) row[r] + b;
        const block_q4_K *b_hi = (const block_q4_K *) (const void *) row[r + 8] + b;
        __m256i q_lo = _mm256_loadu_si256((const __m256i *) (const void *) (b_lo->qs + 32 * (s / 2)));
        __m256i q_hi = _mm256_loadu_si256((const __m256i *) (const void *) (b_hi->qs + 32 * (s / 2)));
        if (s % 2) {
            q_lo = _mm256_srli_epi16(q_lo, 4);
            q_hi = _mm256_srli_epi16(q_hi, 4);
        }
        lo[r] = _mm256_and_si256(q_lo, mask);
        hi[r] = _mm256_and_si256(q_hi, mask);
    }
    ggml__transpose_words8(lo);
    ggml__transpose_words8(hi);
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        v[q] = _mm512_inserti64x4(_mm512_castsi256_si512(lo[q]), hi[q], 1);
}

/*
 * The interleaved layout of 16 q4_K rows, per block (as many bytes as the
 * 16 rows' blocks): the 16 d, the 16 dmin, the 12 scale bytes of the 16
 * rows byte by byte (byte i of row r at 64 + 16 i + r), then for each
 * 32-byte quarter p of the codes, its eight 4-byte words of the 16 rows
 * (word w of row r at 256 + 64 (8 p + w) + 4 r).
 */
enum { PACKED_D = 0, PACKED_DMIN = 32, PACKED_SCALES = 64, PACKED_CODES = 256 };
_Static_assert(PACKED_CODES + 4 * 8 * 64 == ROWS * sizeof(block_q4_K), "the group block is the rows' blocks");

void ggml__avx512_vnni_qgemm_pack_q4_K(int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    const char *row[ROWS];
    for (int r = 0; r < ROWS; r++)
        row[r] = rows + (r < mr ? (size_t) r * stride : 0);
    for (int64_t b = 0; b < nb; b++) {
        char *g = group + (size_t) b * ROWS * sizeof(block_q4_K);
        for (int r = 0; r < ROWS; r++) {
            const block_q4_K *blk = (const block_q4_K *) (const void *) row[r] + b;
            memcpy(g + PACKED_D + 2 * r, &blk->d, 2);
            memcpy(g + PACKED_DMIN + 2 * r, &blk->dmin, 2);
            for (int i = 0; i < K_SCALE_BYTES; i++)
                g[PACKED_SCALES + 16 * i + r] = (char) blk->scales[i];
        }
        for (int p = 0; p < 4; p++) {
            __m256i lo[8], hi[8];
            for (int r = 0; r < 8; r++) {
                lo[r] = _mm256_loadu_si256((const __m256i *) (const void *) (((const block_q4_K *) (const void *)
                                                                                  row[r] + b)->qs + 32 * p));
                hi[r] = _mm256_loadu_si256((const __m256i *) (const void *) (((const block_q4_K *) (const void *)
                                                                                  row[r + 8] + b)->qs + 32 * p));
            }
            ggml__transpose_words8(lo);
            ggml__transpose_words8(hi);
            for (int w = 0; w < 8; w++)
                _mm512_storeu_si512(g + PACKED_CODES + 64 * (8 * p + w),
                                    _mm512_inserti64x4(_mm512_castsi256_si512(lo[w]), hi[w], 1));
        }
    }
}

/*
 * The per-block values of the 16 rows from their group block g: the
 * scales and the minimums' pairs decoded from the bytes stored byte by
 * byte (ggml__q4_K_scale_min in 16 lanes), d and dmin converted.
 */
static inline __attribute__((always_inline)) void decode_packed(const char *g, __m512i scale[8], __m512i min_pair[4],
                                                                __m512 *d, __m512 *dmin)
{
    __m128i byte[K_SCALE_BYTES];
    for (int i = 0; i < K_SCALE_BYTES; i++)
        byte[i] = _mm_loadu_si128((const __m128i *) (const void *) (g + PACKED_SCALES + 16 * i));
    const __m128i low6 = _mm_set1_epi8(63), low4 = _mm_set1_epi8(0x0f);
    __m128i sc[8], mn[8];
    for (int s = 0; s < 4; s++) {
        sc[s] = _mm_and_si128(byte[s], low6);
        mn[s] = _mm_and_si128(byte[s + 4], low6);
        /* the top two bits of bytes s and s + 4, at bits 4 and 5 */
        const __m128i top_sc = _mm_and_si128(_mm_srli_epi16(byte[s], 2), _mm_set1_epi8(0x30));
        const __m128i top_mn = _mm_and_si128(_mm_srli_epi16(byte[s + 4], 2), _mm_set1_epi8(0x30));
        sc[s + 4] = _mm_or_si128(_mm_and_si128(byte[s + 8], low4), top_sc);
        mn[s + 4] = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(byte[s + 8], 4), low4), top_mn);
    }
    for (int s = 0; s < 8; s++)
        scale[s] = _mm512_cvtepu8_epi32(sc[s]);
    for (int p = 0; p < 4; p++)
        min_pair[p] = _mm512_or_si512(_mm512_cvtepu8_epi32(mn[2 * p]),
                                      _mm512_slli_epi32(_mm512_cvtepu8_epi32(mn[2 * p + 1]), 16));
    *d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) (g + PACKED_D)));
    *dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) (g + PACKED_DMIN)));
}

/* Sub-block s of the group block g: v[q] lane r = codes 4q .. 4q + 3 of row r. */
static inline __attribute__((always_inline)) void packed_sub(const char *g, int s, __m512i v[8])
{
    const __m512i mask = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++) {
        __m512i w = _mm512_loadu_si512(g + PACKED_CODES + 64 * (8 * (s / 2) + q));
        if (s % 2)
            w = _mm512_srli_epi16(w, 4);
        v[q] = _mm512_and_si512(w, mask);
    }
}

/* Four activations of a q8_K block from byte offset at, as one 32-bit word. */
static inline int32_t activation_word(const block_q8_K *y, int at)
{
    int32_t word;
    memcpy(&word, y->qs + at, sizeof word);
    return word;
}

/* The q8_K block's sums over sub-blocks 2p and 2p + 1 as a pair of 16-bit halves (each |sum| <= 32 * 128). */
static inline int32_t sum_pair(const block_q8_K *y, int p)
{
    const int s0 = y->bsums[4 * p] + y->bsums[4 * p + 1], s1 = y->bsums[4 * p + 2] + y->bsums[4 * p + 3];
    return (int32_t) ((uint32_t) (uint16_t) s0 | (uint32_t) (uint16_t) s1 << 16);
}

/* The tile computing width columns (nr <= width <= COLS): rows past mr read row 0, columns past nr column 0. */
static inline __attribute__((always_inline)) void tile_of(bool packed, const int width, int nb, const void *a,
                                                          size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                                          int nr, float *const *c)
{
    const char *row[ROWS];
    for (int r = 0; r < ROWS; r++)
        row[r] = (const char *) a + (r < mr ? (size_t) r * a_stride : 0);
    const block_q8_K *col[COLS];
    for (int j = 0; j < width; j++)
        col[j] = cols[j < nr ? j : 0].q;
    __m512 acc[COLS];
#pragma GCC unroll 16
    for (int j = 0; j < width; j++)
        acc[j] = _mm512_setzero_ps();

    for (int b = 0; b < nb; b++) {
        const char *g = (const char *) a + (size_t) b * ROWS * sizeof(block_q4_K);
        __m512i scale[8], min_pair[4];
        __m512 d, dmin;
        if (packed) {
            decode_packed(g, scale, min_pair, &d, &dmin);
        } else {
            struct q4_K_rows rs;
            decode_rows(row, b, &rs);
            for (int s = 0; s < 8; s++)
                scale[s] = _mm512_loadu_si512(rs.scale[s]);
            for (int p = 0; p < 4; p++)
                min_pair[p] = _mm512_loadu_si512(rs.min_pair[p]);
            d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) rs.d));
            dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) rs.dmin));
        }
        __m512i scaled[COLS];
#pragma GCC unroll 16
        for (int j = 0; j < width; j++)
            scaled[j] = _mm512_setzero_si512();
        for (int s = 0; s < 8; s++) {
            __m512i v[8];
            if (packed)
                packed_sub(g, s, v);
            else
                rows_sub(row, b, s, v);
#pragma GCC unroll 16
            for (int j = 0; j < width; j++) {
                const block_q8_K *y = col[j] + b;
                __m512i t = _mm512_setzero_si512();
#pragma GCC unroll 8
                for (int k = 0; k < 8; k++)
                    t = _mm512_dpbusd_epi32(t, v[k], _mm512_set1_epi32(activation_word(y, 32 * s + 4 * k)));
                scaled[j] = _mm512_add_epi32(scaled[j], _mm512_mullo_epi32(t, scale[s]));
            }
        }
        /* ggml__q4_K_block_dot in 16 lanes, then added to the running sum */
#pragma GCC unroll 16
        for (int j = 0; j < width; j++) {
            const block_q8_K *y = col[j] + b;
            __m512i mins = _mm512_setzero_si512();
            for (int p = 0; p < 4; p++)
                mins = _mm512_dpwssd_epi32(mins, min_pair[p], _mm512_set1_epi32(sum_pair(y, p)));
            const __m512 dy = _mm512_set1_ps(y->d);
            const __m512 product = _mm512_mul_ps(_mm512_mul_ps(dy, d), _mm512_cvtepi32_ps(scaled[j]));
            const __m512 min_product = _mm512_mul_ps(_mm512_mul_ps(dy, dmin), _mm512_cvtepi32_ps(mins));
            acc[j] = _mm512_add_ps(acc[j], _mm512_sub_ps(product, min_product));
        }
    }
    const __mmask16 rows_kept = (__mmask16) (mr >= 16 ? 0xffffu : (1u << mr) - 1u);
    for (int j = 0; j < nr; j++)
        _mm512_mask_storeu_ps(c[j], rows_kept, acc[j]);
}

/* The tile with as few columns computed as cover nr (a constant width each: the accumulators stay in registers). */
static inline __attribute__((always_inline)) void tile(bool packed, int nb, const void *a, size_t a_stride, int mr,
                                                       const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    if (nr <= 1)
        tile_of(packed, 1, nb, a, a_stride, mr, cols, nr, c);
    else if (nr <= 4)
        tile_of(packed, 4, nb, a, a_stride, mr, cols, nr, c);
    else if (nr <= 8)
        tile_of(packed, 8, nb, a, a_stride, mr, cols, nr, c);
    else
        tile_of(packed, COLS, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_tile_q4_K(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(false, nb, a, a_stride, mr, cols, nr, c);
}

/* The group of 16 rows at a, interleaved by ggml__avx512_vnni_qgemm_pack_q4_K (a_stride unused). */
void ggml__avx512_vnni_qgemm_packed_tile_q4_K(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(true, nb, a, a_stride, mr, cols, nr, c);
}
