/*
 * simd/avx2/q8tile.h - the AVX2 level's Q8_0 integer tile (kernels.h,
 * qgemm_tile and qgemm_packed_tile), once for both forms of a block's
 * integer sums.
 *
 * Not installed.  Included at the end of qgemm.c (16-bit products) and
 * qgemm-vnni.c (vpdpbusd, AVX-VNNI) only, after <immintrin.h>,
 * <stdbool.h>, quants-impl.h, avx2.h, vmath.h and ../packed-rows.h, once
 * they define ROWS (GGML__QGEMM_ROWS), HALF (8) and
 *   Q8_CHUNK          blocks of a group prepared at a time;
 *   struct q8_chunk   what is prepared once for them and then serves
 *                     every row and column of the tile;
 *   static void q8_chunk_init(struct q8_chunk *ch, const char *group,
 *                             int nb, int mr,
 *                             const struct ggml__qcolumn *cols, int nr,
 *                             int b0)
 *                     prepares blocks [0, nb) of a group (packed-rows.h
 *                     layout; only the halves holding the mr rows need be
 *                     read) and the columns' blocks [b0, b0 + nb);
 *   static inline void q8_block_sums(const struct q8_chunk *ch,
 *                                    const char *g, int b, int halves,
 *                                    int j0, int width,
 *                                    __m256i sum[2][2])
 *                     (always inlined) sets sum[h][j], lane i, to the
 *                     exact integer sum of the 32 products of row 8h + i
 *                     of chunk block b (group block g) by column j0 + j,
 *                     for h < halves and j < width;
 *   Q8_TILE_NAME(name) the public name of an entry.
 *
 * The float steps are the generic level's: per block, the integer sum
 * converted, times the column's scale, then a multiply-add by the row's
 * scale, so the packed tile gives the generic floats bit for bit.  The
 * tile steps through all 16 rows of a group by 2 columns, so that a
 * loaded weight vector serves two columns and a broadcast column word
 * both halves: four integer sums, four float accumulators and the
 * operands fit the 16 registers.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_Q8TILE_H
#define GGML_BACKEND_SIMD_AVX2_Q8TILE_H

/*
 * Rows [0, 8 * halves) of the group (rows[h] of half h; halves and width
 * constants after inlining) by columns j0 .. j0 + width - 1, over the
 * chunk's nb blocks, which are the columns' blocks [b0, b0 + nb):
 * c[j][8h + i] set, or added to when accumulate.
 */
static inline __attribute__((always_inline)) void q8_tile(const struct q8_chunk *ch, const char *group, int nb,
                                                          const int halves, const int rows[2], int b0,
                                                          const struct ggml__qcolumn *cols, int j0, const int width,
                                                          float *const *c, bool accumulate)
{
    __m256i mask[2];
    __m256 acc[2][2];
    for (int h = 0; h < halves; h++) {
        mask[h] = avx2_first_lanes(rows[h]);
        for (int j = 0; j < width; j++)
            acc[h][j] = accumulate ? _mm256_maskload_ps(c[j0 + j] + HALF * h, mask[h]) : _mm256_setzero_ps();
    }
    for (int b = 0; b < nb; b++) {
        const char *g = group + (size_t) b * ROWS * sizeof(block_q8_0);
        __m256i sum[2][2];
        q8_block_sums(ch, g, b, halves, j0, width, sum);
        /* unrolled, so that the accumulators stay in registers */
#pragma GCC unroll 2
        for (int h = 0; h < halves; h++) {
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (const void *) (g + 2 * HALF * h)));
#pragma GCC unroll 2
            for (int j = 0; j < width; j++) {
                const __m256 scaled =
                    _mm256_mul_ps(_mm256_cvtepi32_ps(sum[h][j]), _mm256_set1_ps(cols[j0 + j].d[b0 + b]));
                acc[h][j] = _mm256_fmadd_ps(d, scaled, acc[h][j]);
            }
        }
    }
    for (int h = 0; h < halves; h++)
        for (int j = 0; j < width; j++)
            _mm256_maskstore_ps(c[j0 + j] + HALF * h, mask[h], acc[h][j]);
}

/* The tile on nb <= Q8_CHUNK blocks of a group against the columns' [b0, b0 + nb), set or accumulated. */
static void q8_group_tile(struct q8_chunk *ch, const char *group, int nb, int b0, int mr,
                          const struct ggml__qcolumn *cols, int nr, float *const *c, bool accumulate)
{
    q8_chunk_init(ch, group, nb, mr, cols, nr, b0);
    const int rows[2] = { mr < HALF ? mr : HALF, mr > HALF ? mr - HALF : 0 };
    for (int j0 = 0; j0 < nr; j0 += 2) {
        const bool pair = nr - j0 >= 2;
        if (mr > HALF) {
            if (pair)
                q8_tile(ch, group, nb, 2, rows, b0, cols, j0, 2, c, accumulate);
            else
                q8_tile(ch, group, nb, 2, rows, b0, cols, j0, 1, c, accumulate);
        } else {
            if (pair)
                q8_tile(ch, group, nb, 1, rows, b0, cols, j0, 2, c, accumulate);
            else
                q8_tile(ch, group, nb, 1, rows, b0, cols, j0, 1, c, accumulate);
        }
    }
}

void Q8_TILE_NAME(packed_tile_q8_0)(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                    int nr, float *const *c)
{
    (void) a_stride;
    struct q8_chunk ch;
    for (int b0 = 0; b0 < nb; b0 += Q8_CHUNK) {
        const int n = nb - b0 < Q8_CHUNK ? nb - b0 : Q8_CHUNK;
        q8_group_tile(&ch, (const char *) a + (size_t) b0 * ROWS * sizeof(block_q8_0), n, b0, mr, cols, nr, c,
                      b0 > 0);
    }
}

void Q8_TILE_NAME(tile_q8_0)(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols, int nr,
                             float *const *c)
{
    struct q8_chunk ch;
    char group[Q8_CHUNK * ROWS * sizeof(block_q8_0)];
    for (int b0 = 0; b0 < nb; b0 += Q8_CHUNK) {
        const int n = nb - b0 < Q8_CHUNK ? nb - b0 : Q8_CHUNK;
        /* rows past mr: row 0 again, never stored */
        ggml__avx2_qgemm_pack_q8_0(n, (const char *) a + (size_t) b0 * sizeof(block_q8_0), a_stride, mr, group);
        q8_group_tile(&ch, group, n, b0, mr, cols, nr, c, b0 > 0);
    }
}

#endif
