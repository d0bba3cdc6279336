/*
 * simd/avx2/qgemm.c - the integer tiles (kernels.h, qgemm_tile and
 * qgemm_packed_tile) of the AVX2 level, for Q4_0 and Q8_0 weights,
 * without VNNI, and the interleaving of rows into packed-rows.h's layout
 * that every AVX2 tile reads.
 *
 * Q4_0 (q4tile.h): against a column's four codes at the same place
 * (broadcast), vpmaddubsw gives each row's two pair sums of a word's
 * unsigned weights in 16 bits: the weights' codes u = w + 8 are 0..15
 * and the column's in -128..127, so a pair is at most 2 * 15 * 128 =
 * 3840 and the eight pair sums a 16-bit lane gathers over a block's four
 * words add up to at most 30720, inside 16 bits without saturation.  vpmaddwd by ones then gives
 * each row's exact block sum in 32 bits.
 *
 * Q8_0 has a tile of its own (the last section).
 */
#include "config.h"

#include <immintrin.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "../packed-rows.h"
#include "vmath.h"
#include "words8x8.h"

#define ROWS GGML__QGEMM_ROWS
#define HALF 8

_Static_assert(ROWS == 2 * HALF, "a group is two halves of 8 rows");

/* ------------------------------------------------ interleaving the rows */

/*
 * qgemm_pack (kernels.h): packed-rows.h's layout, written a group block at
 * a time with the code words transposed in registers: 16 loads of a
 * row's words, unpacks, then one store for each word of 4 (18-byte
 * blocks) or 8 (Q8_0) rows.  The scales are copied one by one.
 */

/* Block at of the 16 rows with 4 code words (Q4_0, IQ4_NL) into g: four rows at a time, 4 x 4 transposes. */
static inline void words_of_18(const char *const row[ROWS], size_t at, char *g)
{
    for (int r = 0; r < ROWS; r += 4) {
#define ROW_WORDS(i) _mm_loadu_si128((const __m128i *) (const void *) (row[r + (i)] + at + 2))
        const __m128i x0 = ROW_WORDS(0), x1 = ROW_WORDS(1), x2 = ROW_WORDS(2), x3 = ROW_WORDS(3);
#undef ROW_WORDS
        const __m128i t0 = _mm_unpacklo_epi32(x0, x1), t1 = _mm_unpackhi_epi32(x0, x1);
        const __m128i t2 = _mm_unpacklo_epi32(x2, x3), t3 = _mm_unpackhi_epi32(x2, x3);
        char *w = g + 2 * ROWS + 4 * r;
        _mm_storeu_si128((__m128i *) (void *) w, _mm_unpacklo_epi64(t0, t2));
        _mm_storeu_si128((__m128i *) (void *) (w + 4 * ROWS), _mm_unpackhi_epi64(t0, t2));
        _mm_storeu_si128((__m128i *) (void *) (w + 8 * ROWS), _mm_unpacklo_epi64(t1, t3));
        _mm_storeu_si128((__m128i *) (void *) (w + 12 * ROWS), _mm_unpackhi_epi64(t1, t3));
    }
}

/* Block at of the 16 rows with 8 code words (Q8_0) into g: eight rows at a time, 8 x 8 transposes. */
static inline void words_of_34(const char *const row[ROWS], size_t at, char *g)
{
    for (int h = 0; h < ROWS; h += 8) {
        __m256i v[8];
        for (int i = 0; i < 8; i++)
            v[i] = _mm256_loadu_si256((const __m256i *) (const void *) (row[h + i] + at + 2));
        ggml__transpose_words8(v);
        for (int q = 0; q < 8; q++)
            _mm256_storeu_si256((__m256i *) (void *) (g + 2 * ROWS + 4 * (ROWS * q + h)), v[q]);
    }
}

/* The interleaving of blocks of bs bytes (18 or 34, a constant after inlining). */
static inline __attribute__((always_inline)) void pack_rows_of(const size_t bs, int64_t nb, const char *rows,
                                                               size_t stride, int mr, char *group)
{
    const char *row[ROWS];
    ggml__group_rows(rows, stride, mr, row);
    for (int64_t b = 0; b < nb; b++) {
        const size_t at = (size_t) b * bs;
        char *g = group + (size_t) b * ROWS * bs;
        for (int r = 0; r < ROWS; r++)
            memcpy(g + 2 * r, row[r] + at, 2);   /* the scales */
        if (bs == 34)
            words_of_34(row, at, g);
        else
            words_of_18(row, at, g);
    }
}

_Static_assert(sizeof(block_q4_0) == 18 && sizeof(block_iq4_nl) == 18 && sizeof(block_q8_0) == 34,
               "the block sizes of the interleaved types");

void ggml__avx2_qgemm_pack_q4_0(int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    pack_rows_of(18, nb, rows, stride, mr, group);
}

void ggml__avx2_qgemm_pack_q8_0(int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    pack_rows_of(34, nb, rows, stride, mr, group);
}

/* ------------------------------------------------ Q4_0: 16-bit pair sums */

/*
 * q4tile.h: the pair sums of a word's low and high nibbles, added in 16
 * bits (at most 30720 a block, above).  The adds are the saturating ones,
 * which never saturate here: GCC reassociates plain ones into one tree of
 * a block's 32 products per column, which does not fit the registers.
 */
static inline __attribute__((always_inline)) __m256i q4_word_products(__m256i sums, __m256i low, __m256i high,
                                                                      int32_t low_codes, int32_t high_codes)
{
    sums = _mm256_adds_epi16(sums, _mm256_maddubs_epi16(low, _mm256_set1_epi32(low_codes)));
    return _mm256_adds_epi16(sums, _mm256_maddubs_epi16(high, _mm256_set1_epi32(high_codes)));
}

/* q4tile.h: each row's 16 pair sums (two a lane) added into one 32-bit sum. */
static inline __attribute__((always_inline)) __m256i q4_block_sums(__m256i sums)
{
    return _mm256_madd_epi16(sums, _mm256_set1_epi16(1));
}

#define Q4_TILE_NAME(name) ggml__avx2_qgemm_##name
#include "q4tile.h"

/* ------------------------------------------------ Q8_0: 16-bit products */

/*
 * Q8_0 weights are signed bytes, -128 included, and so are the columns'
 * codes (a Q8_0 src1 read in place may hold -128): vpmaddubsw, which
 * needs one operand unsigned, cannot multiply them exactly (the usual
 * |w| * sign(q, w) turns a column's -128 against a negative weight into
 * -128).  Both sides are widened to 16 bits instead and multiplied by
 * vpmaddwd: a pair sum is at most 2 * 128 * 128 in magnitude, exact in 32
 * bits, and one instruction does 16 products.
 *
 * Widened weights, per block and half h: 16 vectors, vector p holding
 * codes 2p and 2p + 1 of row i of the half in 32-bit lane i, so that
 * vpmaddwd by the column's codes 2p and 2p + 1 (broadcast) adds one pair
 * of products to each row's lane: 16 of them give the half's 8 block sums
 * in row order.  The float steps are those of the Q4_0 tile, so the
 * packed tile gives the generic level's floats bit for bit.
 *
 * The weights of Q8_CHUNK blocks of a group and the columns' codes for
 * them are widened once into a q8_chunk on the stack (16 KiB, in the
 * first-level cache) and serve every column and row of the tile.  The
 * tile (q8tile.h) then steps through all 16 rows by 2 columns, so that a
 * vpmaddwd costs one load: a half at a time by 4 columns took two, and
 * the 2048 x 512 x 2048 product ran 1.26 times slower that way (Zen 5,
 * 2 threads: 19.3 against 24.3 ms).
 */
#define Q8_CHUNK 8

struct q8_chunk {
    __m256i w[Q8_CHUNK][2][16];                  /* block, half, pair of codes */
    int16_t col[GGML__QGEMM_COLS][Q8_CHUNK][32]; /* column, block, codes */
};

/* Widens blocks [0, nb) of a group (packed-rows.h layout) for the halves holding rows (mr of them). */
static void widen_q8_weights(const char *group, int nb, int mr, struct q8_chunk *ch)
{
    for (int b = 0; b < nb; b++) {
        const char *words = group + (size_t) b * ROWS * sizeof(block_q8_0) + 2 * ROWS;
        for (int h = 0; h < 2 && HALF * h < mr; h++)
            for (int q = 0; q < 8; q++) {
                /* word q of the half's rows: codes 4q .. 4q + 3 of row i in lane i */
                const __m256i v =
                    _mm256_loadu_si256((const __m256i *) (const void *) (words + 4 * (ROWS * q + HALF * h)));
                /* codes 4q and 4q + 2 as 16-bit values, then 4q + 1 and 4q + 3 */
                const __m256i even = _mm256_srai_epi16(_mm256_slli_epi16(v, 8), 8), odd = _mm256_srai_epi16(v, 8);
                ch->w[b][h][2 * q] = _mm256_blend_epi16(even, _mm256_slli_epi32(odd, 16), 0xaa);
                ch->w[b][h][2 * q + 1] = _mm256_blend_epi16(_mm256_srli_epi32(even, 16), odd, 0xaa);
            }
    }
}

/* Widens the codes of the columns' blocks [b0, b0 + nb). */
static void widen_q8_columns(const struct ggml__qcolumn *cols, int nr, int b0, int nb, struct q8_chunk *ch)
{
    for (int j = 0; j < nr; j++)
        for (int b = 0; b < nb; b++) {
            const int8_t *qs = ((const block_q8_0 *) cols[j].q)[b0 + b].qs;
            __m256i *out = (__m256i *) (void *) ch->col[j][b];
            _mm256_storeu_si256(out, _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (const void *) qs)));
            _mm256_storeu_si256(out + 1,
                                _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (const void *) (qs + 16))));
        }
}

/* Prepares a chunk (q8tile.h): the group's weights and the columns' codes, widened to 16 bits. */
static void q8_chunk_init(struct q8_chunk *ch, const char *group, int nb, int mr, const struct ggml__qcolumn *cols,
                          int nr, int b0)
{
    widen_q8_weights(group, nb, mr, ch);
    widen_q8_columns(cols, nr, b0, nb, ch);
}

/* Every block sum of the tile's rows by columns j0 .. j0 + width - 1 for chunk block b (q8tile.h). */
static inline __attribute__((always_inline)) void q8_block_sums(const struct q8_chunk *ch, const char *g, int b,
                                                                const int halves, int j0, const int width,
                                                                __m256i sum[2][2])
{
    (void) g;
    for (int h = 0; h < halves; h++)
        for (int j = 0; j < width; j++)
            sum[h][j] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int p = 0; p < 16; p++) {
        __m256i pair[2];
        for (int j = 0; j < width; j++) {
            int32_t word;
            memcpy(&word, ch->col[j0 + j][b] + 2 * p, sizeof word);
            pair[j] = _mm256_set1_epi32(word);
        }
        for (int h = 0; h < halves; h++) {
            const __m256i w = _mm256_load_si256(&ch->w[b][h][p]);
            for (int j = 0; j < width; j++)
                sum[h][j] = _mm256_add_epi32(sum[h][j], _mm256_madd_epi16(w, pair[j]));
        }
    }
}

#define Q8_TILE_NAME(name) ggml__avx2_qgemm_##name
#include "q8tile.h"
