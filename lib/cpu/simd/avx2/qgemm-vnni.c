/*
 * simd/avx2/qgemm-vnni.c - the AVX2 level's integer tiles for Q8_0 and
 * Q4_0 weights on processors with AVX-VNNI (kernels.h, qgemm_tile and
 * qgemm_packed_tile), chosen over qgemm.c's 16-bit products when the CPU
 * has it.
 *
 * Q4_0 (q4tile.h): the weights' unsigned codes 0..15 are vpdpbusd's
 * unsigned side and the column's codes its signed side, so each row's
 * products go straight into 32-bit sums, exact (at most 32 * 15 * 128).
 *
 * Q8_0:
 * vpdpbusd multiplies unsigned bytes by signed ones and adds each four
 * products into a 32-bit lane, without saturation.  The weights stay the
 * signed side, read as stored in the interleaved layout of
 * packed-rows.h (one 32-byte load: code word q of 8 rows, row i in lane
 * i); the columns' codes are made unsigned, a + 128 (exact for every
 * code, -128 included, so a Q8_0 src1 read in place is multiplied
 * exactly too), and the offset comes out with the rows' code sums:
 *   sum_i (a_i + 128) w_i = sum_i a_i w_i + 128 sum_i w_i,
 * the sums of each block's weights computed once per chunk (vpdpbusd by
 * ones).  Every sum is an exact integer (at most 32 * 255 * 128 in
 * magnitude), so the float steps, those of qgemm.c's tiles, give the
 * generic level's floats bit for bit.
 *
 * A tile step is one vpdpbusd for 32 products, its weight operand from
 * the first-level cache; the tile around it is q8tile.h's, as for
 * qgemm.c's 16-bit products.
 */
#include "config.h"

#include <immintrin.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "vmath.h"
#include "../packed-rows.h"

#define ROWS GGML__QGEMM_ROWS
#define HALF 8
#define Q8_CHUNK 8   /* blocks a chunk: the columns' unsigned codes for them take 4 KiB */

_Static_assert(ROWS == 2 * HALF, "a group is two halves of 8 rows");
_Static_assert(sizeof(block_q8_0) == 34, "Q8_0 blocks of 34 bytes");

/* q4tile.h: the products of a word's low and high nibbles, added four at a time into 32-bit lanes. */
static inline __attribute__((always_inline)) __m256i q4_word_products(__m256i sums, __m256i low, __m256i high,
                                                                      int32_t low_codes, int32_t high_codes)
{
    sums = _mm256_dpbusd_avx_epi32(sums, low, _mm256_set1_epi32(low_codes));
    return _mm256_dpbusd_avx_epi32(sums, high, _mm256_set1_epi32(high_codes));
}

/* q4tile.h: the sums are whole already. */
static inline __attribute__((always_inline)) __m256i q4_block_sums(__m256i sums)
{
    return sums;
}

#define Q4_TILE_NAME(name) ggml__avx2_vnni_qgemm_##name
#include "q4tile.h"

struct q8_chunk {
    __m256i row_sums[Q8_CHUNK][2];                     /* block, half: sum of each row's 32 codes */
    uint8_t codes[GGML__QGEMM_COLS][Q8_CHUNK][32];     /* column, block: its codes + 128 */
};

/* Word q of half h of group block g (packed-rows.h): codes 4q .. 4q + 3 of the half's 8 rows. */
static inline __m256i weight_word(const char *g, int h, int q)
{
    return _mm256_loadu_si256((const __m256i *) (const void *) (g + 2 * ROWS + 4 * (ROWS * q + HALF * h)));
}

/* Prepares a chunk (q8tile.h): the row sums of blocks [0, nb) of the group's halves that hold rows (mr), and
   the columns' codes + 128. */
static void q8_chunk_init(struct q8_chunk *ch, const char *group, int nb, int mr, const struct ggml__qcolumn *cols,
                          int nr, int b0)
{
    const __m256i ones = _mm256_set1_epi8(1), bias = _mm256_set1_epi8((char) 0x80);
    for (int b = 0; b < nb; b++) {
        const char *g = group + (size_t) b * ROWS * sizeof(block_q8_0);
        for (int h = 0; h < 2 && HALF * h < mr; h++) {
            __m256i s = _mm256_setzero_si256();
            for (int q = 0; q < 8; q++)
                s = _mm256_dpbusd_avx_epi32(s, ones, weight_word(g, h, q));
            ch->row_sums[b][h] = s;
        }
    }
    for (int j = 0; j < nr; j++)
        for (int b = 0; b < nb; b++) {
            const int8_t *qs = ((const block_q8_0 *) cols[j].q)[b0 + b].qs;
            const __m256i a = _mm256_loadu_si256((const __m256i *) (const void *) qs);
            _mm256_storeu_si256((__m256i *) (void *) ch->codes[j][b], _mm256_xor_si256(a, bias));
        }
}

/* Every block sum of the tile's rows by columns j0 .. j0 + width - 1 for chunk block b (q8tile.h): the
   unsigned codes' products added to -128 times the rows' code sums. */
static inline __attribute__((always_inline)) void q8_block_sums(const struct q8_chunk *ch, const char *g, int b,
                                                                const int halves, int j0, const int width,
                                                                __m256i sum[2][2])
{
    for (int h = 0; h < halves; h++) {
        const __m256i start = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(ch->row_sums[b][h], 7));
        for (int j = 0; j < width; j++)
            sum[h][j] = start;
    }
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++) {
        __m256i word[2];
        for (int j = 0; j < width; j++) {
            int32_t w;
            memcpy(&w, ch->codes[j0 + j][b] + 4 * q, sizeof w);
            word[j] = _mm256_set1_epi32(w);
        }
        for (int h = 0; h < halves; h++) {
            const __m256i w = weight_word(g, h, q);
            for (int j = 0; j < width; j++)
                sum[h][j] = _mm256_dpbusd_avx_epi32(sum[h][j], word[j], w);
        }
    }
}

#define Q8_TILE_NAME(name) ggml__avx2_vnni_qgemm_##name
#include "q8tile.h"
