/*
 * simd/avx2/qgemm-vnni.c - the AVX2 level's integer tile for Q8_0
 * weights on processors with AVX-VNNI (kernels.h, qgemm_tile and
 * qgemm_packed_tile), chosen over qgemm.c's 16-bit products when the CPU
 * has it.
 *
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
 * the first-level cache.  As in qgemm.c, the tile runs through all 16
 * rows by 2 columns at a time: four integer sums, four float
 * accumulators, two broadcast column words and the weights fit the 16
 * registers.
 */
#include "config.h"

#include <immintrin.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "../packed-rows.h"

#define ROWS GGML__QGEMM_ROWS
#define HALF 8
#define CHUNK 8   /* blocks a chunk: the columns' unsigned codes for them take 4 KiB */

_Static_assert(ROWS == 2 * HALF, "a group is two halves of 8 rows");
_Static_assert(sizeof(block_q8_0) == 34, "Q8_0 blocks of 34 bytes");

struct chunk {
    __m256i row_sums[CHUNK][2];                     /* block, half: sum of each row's 32 codes */
    uint8_t codes[GGML__QGEMM_COLS][CHUNK][32];     /* column, block: its codes + 128 */
};

/* Lanes of a half that hold rows (rows < 8: the others are neither read nor written). */
static inline __m256i row_mask(int rows)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Word q of half h of group block g (packed-rows.h): codes 4q .. 4q + 3 of the half's 8 rows. */
static inline __m256i weight_word(const char *g, int h, int q)
{
    return _mm256_loadu_si256((const __m256i *) (const void *) (g + 2 * ROWS + 4 * (ROWS * q + HALF * h)));
}

/* The row sums of blocks [0, nb) of the group's halves that hold rows (mr), and the columns' codes + 128. */
static void chunk_init(const char *group, int nb, int mr, const struct ggml__qcolumn *cols, int nr, int b0,
                       struct chunk *ch)
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

/*
 * Rows [0, 8 * halves) of the group (rows[h] of half h) by columns j0 ..
 * j0 + width - 1 (halves and width constants after inlining), over the
 * chunk's nb blocks, the columns' blocks [b0, b0 + nb): c[j][8h + i] set,
 * or added to when accumulate.
 */
static inline __attribute__((always_inline)) void tile(const struct chunk *ch, const char *group, int nb,
                                                       const int halves, const int rows[2], int b0,
                                                       const struct ggml__qcolumn *cols, int j0, const int width,
                                                       float *const *c, bool accumulate)
{
    __m256i mask[2];
    __m256 acc[2][2];
    for (int h = 0; h < halves; h++) {
        mask[h] = row_mask(rows[h]);
        for (int j = 0; j < width; j++)
            acc[h][j] = accumulate ? _mm256_maskload_ps(c[j0 + j] + HALF * h, mask[h]) : _mm256_setzero_ps();
    }
    for (int b = 0; b < nb; b++) {
        const char *g = group + (size_t) b * ROWS * sizeof(block_q8_0);
        __m256i sum[2][2];
        for (int h = 0; h < halves; h++)
            for (int j = 0; j < width; j++)
                sum[h][j] = _mm256_setzero_si256();
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
        for (int h = 0; h < halves; h++) {
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (const void *) (g + 2 * HALF * h)));
            const __m256i offset = _mm256_slli_epi32(ch->row_sums[b][h], 7);
            for (int j = 0; j < width; j++) {
                const __m256i exact = _mm256_sub_epi32(sum[h][j], offset);
                const __m256 scaled =
                    _mm256_mul_ps(_mm256_cvtepi32_ps(exact), _mm256_set1_ps(cols[j0 + j].d[b0 + b]));
                acc[h][j] = _mm256_fmadd_ps(d, scaled, acc[h][j]);
            }
        }
    }
    for (int h = 0; h < halves; h++)
        for (int j = 0; j < width; j++)
            _mm256_maskstore_ps(c[j0 + j] + HALF * h, mask[h], acc[h][j]);
}

/* The tile on nb <= CHUNK blocks of a group against the columns' [b0, b0 + nb), set or accumulated. */
static void group_tile(struct chunk *ch, const char *group, int nb, int b0, int mr, const struct ggml__qcolumn *cols,
                       int nr, float *const *c, bool accumulate)
{
    chunk_init(group, nb, mr, cols, nr, b0, ch);
    const int rows[2] = { mr < HALF ? mr : HALF, mr > HALF ? mr - HALF : 0 };
    for (int j0 = 0; j0 < nr; j0 += 2) {
        const bool pair = nr - j0 >= 2;
        if (mr > HALF) {
            if (pair)
                tile(ch, group, nb, 2, rows, b0, cols, j0, 2, c, accumulate);
            else
                tile(ch, group, nb, 2, rows, b0, cols, j0, 1, c, accumulate);
        } else {
            if (pair)
                tile(ch, group, nb, 1, rows, b0, cols, j0, 2, c, accumulate);
            else
                tile(ch, group, nb, 1, rows, b0, cols, j0, 1, c, accumulate);
        }
    }
}

void ggml__avx2_vnni_qgemm_packed_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                            const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    (void) a_stride;
    struct chunk ch;
    for (int b0 = 0; b0 < nb; b0 += CHUNK) {
        const int n = nb - b0 < CHUNK ? nb - b0 : CHUNK;
        group_tile(&ch, (const char *) a + (size_t) b0 * ROWS * sizeof(block_q8_0), n, b0, mr, cols, nr, c, b0 > 0);
    }
}

void ggml__avx2_vnni_qgemm_tile_q8_0(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                     int nr, float *const *c)
{
    struct chunk ch;
    char group[CHUNK * ROWS * sizeof(block_q8_0)];
    for (int b0 = 0; b0 < nb; b0 += CHUNK) {
        const int n = nb - b0 < CHUNK ? nb - b0 : CHUNK;
        /* rows past mr: row 0 again, never stored */
        ggml__avx2_qgemm_pack_q8_0(n, (const char *) a + (size_t) b0 * sizeof(block_q8_0), a_stride, mr, group);
        group_tile(&ch, group, n, b0, mr, cols, nr, c, b0 > 0);
    }
}
