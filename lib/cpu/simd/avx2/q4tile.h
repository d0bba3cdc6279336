/*
 * simd/avx2/q4tile.h - the AVX2 level's Q4_0 integer tile (kernels.h,
 * qgemm_tile and qgemm_packed_tile), once for both forms of a code
 * word's integer products.
 *
 * Not installed.  Included by qgemm.c (vpmaddubsw) and qgemm-vnni.c
 * (vpdpbusd, AVX-VNNI) only, after <immintrin.h>, <stdbool.h>,
 * <string.h>, quants-impl.h, avx2.h, vmath.h and ../packed-rows.h, once
 * they define ROWS (GGML__QGEMM_ROWS), HALF (8) and
 *   static inline __m256i q4_word_products(__m256i sums, __m256i low,
 *                                          __m256i high, int32_t low_codes,
 *                                          int32_t high_codes)
 *                     (always inlined) adds to sums, in the includer's own
 *                     form, the products of a code word's unsigned
 *                     weights (low: its low nibbles, high: its high ones,
 *                     0..15 in each byte, row i in 32-bit lane i) by the
 *                     column's four codes at the same places (broadcast);
 *   static inline __m256i q4_block_sums(__m256i sums)
 *                     (always inlined) the exact 32-bit sum of each lane's
 *                     products once a block's four words are added;
 *   Q4_TILE_NAME(name) the public name of an entry.
 *
 * The layout is packed-rows.h's: one 32-byte load takes code word q of 8
 * rows (half of a 16-row group), whose low nibbles are codes 4q .. 4q + 3
 * and whose high ones are codes 16 + 4q .. 16 + 4q + 3 of those rows.
 * The weights are taken unsigned, u = w + 8, and the offset comes out
 * with the column's code sum: sum w q = sum u q - 8 sum q.  One
 * conversion, a multiply by the column's scale and a multiply-add by the
 * rows' scales finish the block: the generic level's floats bit for bit.
 *
 * A tile is a half (8 rows) by up to COLS_STEP (4) columns: a word is
 * unpacked once for four columns, and the four columns' integer sums and
 * float accumulators, the two unpacked vectors and the products fit the
 * 16 registers.  Rows in the standard layout (qgemm_tile) are
 * interleaved first, PACK_BLOCKS blocks at a time on the stack.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_Q4TILE_H
#define GGML_BACKEND_SIMD_AVX2_Q4TILE_H

#define COLS_STEP 4
#define PACK_BLOCKS 32   /* 32 blocks of 16 Q4_0 rows: 9 KiB of stack */

/* Four codes of a column's block, at byte offset 4q, as one 32-bit word. */
static inline int32_t column_word(const block_q8_0 *b, int q)
{
    int32_t word;
    memcpy(&word, b->qs + 4 * q, sizeof word);
    return word;
}

/*
 * Rows 8h .. 8h + rows - 1 of the group by width columns (a constant
 * after inlining; cols[j] for j < width), blocks [0, nb) of the group
 * against the columns' blocks [b0, b0 + nb): c[j][8h + i] is set, or
 * added to when accumulate.
 */
static inline __attribute__((always_inline)) void q4_half_tile(const char *group, int nb, int h, int b0, int rows,
                                                               const struct ggml__qcolumn *cols, const int width,
                                                               float *const *c, bool accumulate)
{
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    __m256 acc[COLS_STEP];
    for (int j = 0; j < width; j++)
        acc[j] = accumulate ? _mm256_maskload_ps(c[j] + HALF * h, avx2_first_lanes(rows)) : _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const char *g = group + (size_t) b * ROWS * sizeof(block_q4_0);
        const char *words = g + 2 * ROWS + 4 * HALF * h;
        __m256i sums[COLS_STEP];
        for (int j = 0; j < width; j++)
            sums[j] = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            const __m256i packed = _mm256_loadu_si256((const __m256i *) (const void *) (words + 4 * ROWS * q));
            const __m256i low = _mm256_and_si256(packed, low4);
            const __m256i high = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
#pragma GCC unroll 4
            for (int j = 0; j < width; j++) {
                const block_q8_0 *qb = (const block_q8_0 *) cols[j].q + b0 + b;
                sums[j] = q4_word_products(sums[j], low, high, column_word(qb, q), column_word(qb, q + 4));
            }
        }
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (const void *) (g + 2 * HALF * h)));
#pragma GCC unroll 4
        for (int j = 0; j < width; j++) {
            const __m256i s = _mm256_sub_epi32(q4_block_sums(sums[j]), _mm256_set1_epi32(8 * cols[j].sum[b0 + b]));
            const __m256 scaled = _mm256_mul_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(cols[j].d[b0 + b]));
            acc[j] = _mm256_fmadd_ps(d, scaled, acc[j]);
        }
    }
    for (int j = 0; j < width; j++)
        _mm256_maskstore_ps(c[j] + HALF * h, avx2_first_lanes(rows), acc[j]);
}

/*
 * The tile on a group (blocks [0, nb) against the columns' [b0, b0 + nb)),
 * set or accumulated: each half that holds rows (of its mr) by steps of
 * up to COLS_STEP columns, the step's width a constant in each call so
 * that the half tiles keep their accumulators in registers.
 */
static void q4_group_tile(const char *group, int nb, int b0, int mr, const struct ggml__qcolumn *cols, int nr,
                          float *const *c, bool accumulate)
{
    for (int h = 0; h < 2 && HALF * h < mr; h++) {
        const int rows = mr - HALF * h < HALF ? mr - HALF * h : HALF;
        for (int j0 = 0; j0 < nr; j0 += COLS_STEP) {
            const struct ggml__qcolumn *step = cols + j0;
            float *const *out = c + j0;
            switch (nr - j0 < COLS_STEP ? nr - j0 : COLS_STEP) {
            case 1: q4_half_tile(group, nb, h, b0, rows, step, 1, out, accumulate); break;
            case 2: q4_half_tile(group, nb, h, b0, rows, step, 2, out, accumulate); break;
            case 3: q4_half_tile(group, nb, h, b0, rows, step, 3, out, accumulate); break;
            default: q4_half_tile(group, nb, h, b0, rows, step, 4, out, accumulate); break;
            }
        }
    }
}

void Q4_TILE_NAME(packed_tile_q4_0)(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                    int nr, float *const *c)
{
    (void) a_stride;
    q4_group_tile(a, nb, 0, mr, cols, nr, c, false);
}

void Q4_TILE_NAME(tile_q4_0)(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols, int nr,
                             float *const *c)
{
    char group[PACK_BLOCKS * ROWS * sizeof(block_q4_0)];
    for (int b0 = 0; b0 < nb; b0 += PACK_BLOCKS) {
        const int n = nb - b0 < PACK_BLOCKS ? nb - b0 : PACK_BLOCKS;
        /* rows past mr: row 0 again, never stored */
        ggml__avx2_qgemm_pack_q4_0(n, (const char *) a + (size_t) b0 * sizeof(block_q4_0), a_stride, mr, group);
        q4_group_tile(group, n, b0, mr, cols, nr, c, b0 > 0);
    }
}

#undef COLS_STEP
#undef PACK_BLOCKS

#endif
