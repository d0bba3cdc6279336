/*
 * simd/avx512/qgemm-k-vnni.c - the integer tiles of the quantized matrix
 * product (kernels.h, qgemm_tile) for q4_K, q5_K and q6_K weights against
 * q8_K columns with AVX512_VNNI: 16 rows by up to 16 columns.
 *
 * Per 256-value block, each run of 32 values of the 16 rows has its
 * codes (unsigned: 0..15 for q4_K, 0..31 for q5_K, 0..63 for q6_K)
 * transposed so that vector q holds codes 4q .. 4q + 3 of the 16 rows,
 * one row per 32-bit lane (as the Q4_0 tile of qgemm-vnni.c does).  A
 * column's run then takes 8 vpdpbusd, each multiplying the rows' four
 * codes by the column's four activations at the same place (broadcast),
 * which leaves the 16 rows' sums of code times activation; multiplied by
 * the rows' scales of the sub-block they add up over the block in 32-bit
 * lanes (exact: the bounds of simd/generic/dot-k.c).
 *   q4_K, q5_K: one sub-block per run (6-bit scales); the minimums'
 *         term, sum over s of the rows' minimum times the column's sum
 *         over s (from its 16-value sums), takes four vpdpwssd on 16-bit
 *         pairs.
 *   q6_K: two sub-blocks of 16 per run (signed 8-bit scales); the codes'
 *         offset of 32 is taken off once per block, 32 times the sum over
 *         s of the rows' scale times the column's 16-value sum (eight
 *         vpdpwssd on 16-bit pairs).
 * The integer sums are those of the generic dot products, and the
 * block's share is formed with ggml__q4_K_block_dot's or
 * ggml__q6_K_block_dot's float operations in the same order, so every
 * output is the generic vec_dot's value bit for bit.
 *
 * Products of many columns first interleave each group of 16 rows into
 * a layout of this level (qgemm_pack: ggml__avx512_vnni_qgemm_pack_q4_K,
 * _q5_K, _q6_K), as many bytes as the rows' blocks, so that the
 * transposes and the scales' decoding are done once per group, not once
 * per 16 columns; the packed tiles read that layout.  CPU_REPACK buffers
 * (cpu/repack.c) store these types in that layout too, and read them
 * back through qgemm_unpack (ggml__avx512_vnni_qgemm_unpack_q4_K, ...).
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
#define ALWAYS_INLINE static inline __attribute__((always_inline))

_Static_assert(ROWS == 16 && COLS == 16, "the tiles below are 16 x 16");

/*
 * Bytes at .. at + 31 of block b of the 16 rows (blocks of block_bytes):
 * w[q] lane r = 32-bit word q of row r's.
 */
ALWAYS_INLINE void rows_words(const char *const *row, size_t block_bytes, int64_t b, size_t at, __m512i w[8])
{
    __m256i lo[8], hi[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        lo[r] = _mm256_loadu_si256((const __m256i *) (const void *) (row[r] + (size_t) b * block_bytes + at));
        hi[r] = _mm256_loadu_si256((const __m256i *) (const void *) (row[r + 8] + (size_t) b * block_bytes + at));
    }
    ggml__transpose_words8(lo);
    ggml__transpose_words8(hi);
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        w[q] = _mm512_inserti64x4(_mm512_castsi256_si512(lo[q]), hi[q], 1);
}

/* The reverse of rows_words: w[q] lane r to word q of bytes at .. at + 31 of block b of row r. */
ALWAYS_INLINE void store_rows_words(char *const *row, size_t block_bytes, int64_t b, size_t at, const __m512i w[8])
{
    __m256i lo[8], hi[8];
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++) {
        lo[q] = _mm512_castsi512_si256(w[q]);
        hi[q] = _mm512_extracti64x4_epi64(w[q], 1);
    }
    ggml__transpose_words8(lo);   /* its own inverse */
    ggml__transpose_words8(hi);
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
        _mm256_storeu_si256((__m256i *) (void *) (row[r] + (size_t) b * block_bytes + at), lo[r]);
        _mm256_storeu_si256((__m256i *) (void *) (row[r + 8] + (size_t) b * block_bytes + at), hi[r]);
    }
}

/* Bytes at .. at + 31 of block b of the 16 rows as rows_words' 8 vectors, stored 64 bytes apart at packed. */
ALWAYS_INLINE void pack_words(const char *const *row, size_t block_bytes, int64_t b, size_t at, char *packed)
{
    __m512i w[8];
    rows_words(row, block_bytes, b, at, w);
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        _mm512_storeu_si512(packed + 64 * q, w[q]);
}

/* The reverse of pack_words. */
ALWAYS_INLINE void unpack_words(char *const *row, size_t block_bytes, int64_t b, size_t at, const char *packed)
{
    __m512i w[8];
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++)
        w[q] = _mm512_loadu_si512(packed + 64 * q);
    store_rows_words(row, block_bytes, b, at, w);
}

/* The 16 rows of an unpacking, stride bytes apart from rows. */
ALWAYS_INLINE void unpacked_rows(char *rows, size_t stride, char *row[ROWS])
{
    for (int r = 0; r < ROWS; r++)
        row[r] = rows + (size_t) r * stride;
}

/* The 16 row pointers of a tile or a pack: rows past mr repeat row 0. */
ALWAYS_INLINE void tile_rows(const char *rows, size_t stride, int mr, const char *row[ROWS])
{
    for (int r = 0; r < ROWS; r++)
        row[r] = rows + (r < mr ? (size_t) r * stride : 0);
}

/* Four activations of a q8_K block from byte offset at, as one 32-bit word. */
static inline int32_t activation_word(const block_q8_K *y, int at)
{
    int32_t word;
    memcpy(&word, y->qs + at, sizeof word);
    return word;
}

/* The 32-bit word at p (any alignment). */
static inline int32_t word_at(const void *p)
{
    int32_t word;
    memcpy(&word, p, sizeof word);
    return word;
}

/* sum_k of v[k] (four unsigned codes a lane) times column y's activations at + 4k .. at + 4k + 3, k < n. */
ALWAYS_INLINE __m512i run_dot(const __m512i *v, int n, const block_q8_K *y, int at)
{
    __m512i t = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int k = 0; k < n; k++)
        t = _mm512_dpbusd_epi32(t, v[k], _mm512_set1_epi32(activation_word(y, at + 4 * k)));
    return t;
}

/* ---- q4_K and q5_K ---- */

/*
 * q5_K is q4_K with a fifth bit per code (qh) between the scales and the
 * low four bits: d, dmin and the scales lie at the same offsets in both.
 */
_Static_assert(offsetof(block_q4_K, scales) == offsetof(block_q5_K, scales) &&
                   offsetof(block_q4_K, dmin) == offsetof(block_q5_K, dmin),
               "q4_K and q5_K share their first fields");

/* The size of a block of q4_K (five false) or q5_K, and where its low four bits lie. */
#define Q45_K_BLOCK(five) ((five) ? sizeof(block_q5_K) : sizeof(block_q4_K))
#define Q45_K_QS(five) ((five) ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs))

/* The per-block values of the 16 rows that the tile multiplies by. */
struct q45_K_rows {
    ggml_fp16_t d[ROWS], dmin[ROWS];
    int32_t scale[8][ROWS];        /* scale[s][r]: row r's 6-bit scale of sub-block s */
    uint32_t min_pair[4][ROWS];    /* row r's minimums of sub-blocks 2p (low half) and 2p + 1 */
};

static void q45_K_decode_rows(const char *const *row, size_t block_bytes, int b, struct q45_K_rows *out)
{
    for (int r = 0; r < ROWS; r++) {
        /* the fields shared with q5_K (the assertion above) */
        const block_q4_K *blk = (const block_q4_K *) (const void *) (row[r] + (size_t) b * block_bytes);
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
 * Codes of sub-block s in place in v, from the words of its 32-byte
 * quarter (the low nibbles for even s, the high ones for odd) and, for
 * q5_K (high not NULL), bit s of the words of qh as bit 4.
 */
ALWAYS_INLINE void q45_K_codes(__m512i v[8], const __m512i *high, int s)
{
    const __m512i mask = _mm512_set1_epi8(0x0f), fifth = _mm512_set1_epi8(0x10);
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++) {
        v[q] = _mm512_and_si512(s % 2 ? _mm512_srli_epi16(v[q], 4) : v[q], mask);
        if (high != NULL) {
            /* bit s to bit 4; what crosses a byte is masked off */
            const __m512i h = s < 4 ? _mm512_slli_epi16(high[q], 4 - s)
                            : s > 4 ? _mm512_srli_epi16(high[q], s - 4)
                                    : high[q];
            v[q] = _mm512_ternarylogic_epi32(v[q], h, fifth, 0xf8);   /* a | (b & c) */
        }
    }
}

/*
 * The interleaved layout of 16 q4_K or q5_K rows, per block (as many
 * bytes as the 16 rows' blocks): the 16 d, the 16 dmin, the 12 scale
 * bytes of the 16 rows byte by byte (byte i of row r at 64 + 16 i + r);
 * for q5_K the eight 4-byte words of qh of the 16 rows (word w of row r
 * at 256 + 64 w + 4 r); then for each 32-byte quarter p of the low four
 * bits, its eight words of the 16 rows (word w of row r at codes + 64 (8
 * p + w) + 4 r, codes 256 for q4_K and 768 for q5_K).
 */
enum { Q45_K_D = 0, Q45_K_DMIN = 32, Q45_K_SCALES = 64, Q5_K_HIGH = 256 };
#define Q45_K_CODES(five) ((five) ? 768 : 256)
_Static_assert(Q45_K_CODES(0) + 4 * 8 * 64 == ROWS * sizeof(block_q4_K) &&
                   Q45_K_CODES(1) + 4 * 8 * 64 == ROWS * sizeof(block_q5_K) && Q5_K_HIGH + 8 * 64 == Q45_K_CODES(1),
               "the group block is the rows' blocks");

ALWAYS_INLINE void q45_K_pack(bool five, int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    const char *row[ROWS];
    tile_rows(rows, stride, mr, row);
    const size_t block_bytes = Q45_K_BLOCK(five);
    for (int64_t b = 0; b < nb; b++) {
        char *g = group + (size_t) b * ROWS * block_bytes;
        for (int r = 0; r < ROWS; r++) {
            const block_q4_K *blk = (const block_q4_K *) (const void *) (row[r] + (size_t) b * block_bytes);
            memcpy(g + Q45_K_D + 2 * r, &blk->d, 2);
            memcpy(g + Q45_K_DMIN + 2 * r, &blk->dmin, 2);
            for (int i = 0; i < K_SCALE_BYTES; i++)
                g[Q45_K_SCALES + 16 * i + r] = (char) blk->scales[i];
        }
        if (five)
            pack_words(row, block_bytes, b, offsetof(block_q5_K, qh), g + Q5_K_HIGH);
        for (int p = 0; p < 4; p++)
            pack_words(row, block_bytes, b, Q45_K_QS(five) + 32 * (size_t) p, g + Q45_K_CODES(five) + 512 * p);
    }
}

void ggml__avx512_vnni_qgemm_pack_q4_K(int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    q45_K_pack(false, nb, rows, stride, mr, group);
}

void ggml__avx512_vnni_qgemm_pack_q5_K(int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    q45_K_pack(true, nb, rows, stride, mr, group);
}

/* The reverse of q45_K_pack for all 16 rows: group into rows stride bytes apart. */
ALWAYS_INLINE void q45_K_unpack(bool five, int64_t nb, const char *group, char *rows, size_t stride)
{
    char *row[ROWS];
    unpacked_rows(rows, stride, row);
    const size_t block_bytes = Q45_K_BLOCK(five);
    for (int64_t b = 0; b < nb; b++) {
        const char *g = group + (size_t) b * ROWS * block_bytes;
        for (int r = 0; r < ROWS; r++) {
            block_q4_K *blk = (block_q4_K *) (void *) (row[r] + (size_t) b * block_bytes);
            memcpy(&blk->d, g + Q45_K_D + 2 * r, 2);
            memcpy(&blk->dmin, g + Q45_K_DMIN + 2 * r, 2);
            for (int i = 0; i < K_SCALE_BYTES; i++)
                blk->scales[i] = (uint8_t) g[Q45_K_SCALES + 16 * i + r];
        }
        if (five)
            unpack_words(row, block_bytes, b, offsetof(block_q5_K, qh), g + Q5_K_HIGH);
        for (int p = 0; p < 4; p++)
            unpack_words(row, block_bytes, b, Q45_K_QS(five) + 32 * (size_t) p, g + Q45_K_CODES(five) + 512 * p);
    }
}

void ggml__avx512_vnni_qgemm_unpack_q4_K(int64_t nb, const char *group, char *rows, size_t stride)
{
    q45_K_unpack(false, nb, group, rows, stride);
}

void ggml__avx512_vnni_qgemm_unpack_q5_K(int64_t nb, const char *group, char *rows, size_t stride)
{
    q45_K_unpack(true, nb, group, rows, stride);
}

/*
 * The per-block values of the 16 rows from their group block g: the
 * scales and the minimums' pairs decoded from the bytes stored byte by
 * byte (ggml__q4_K_scale_min in 16 lanes), d and dmin converted.
 */
ALWAYS_INLINE void q45_K_decode_packed(const char *g, __m512i scale[8], __m512i min_pair[4], __m512 *d, __m512 *dmin)
{
    __m128i byte[K_SCALE_BYTES];
    for (int i = 0; i < K_SCALE_BYTES; i++)
        byte[i] = _mm_loadu_si128((const __m128i *) (const void *) (g + Q45_K_SCALES + 16 * i));
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
    *d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) (g + Q45_K_D)));
    *dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) (g + Q45_K_DMIN)));
}

/* The q8_K block's sums over sub-blocks 2p and 2p + 1 of 32 as a pair of 16-bit halves (each |sum| <= 32 * 128). */
static inline int32_t q45_K_sum_pair(const block_q8_K *y, int p)
{
    const int s0 = y->bsums[4 * p] + y->bsums[4 * p + 1], s1 = y->bsums[4 * p + 2] + y->bsums[4 * p + 3];
    return (int32_t) ((uint32_t) (uint16_t) s0 | (uint32_t) (uint16_t) s1 << 16);
}

/*
 * The q4_K (five false) or q5_K tile computing width columns (nr <= width
 * <= COLS): rows past mr read row 0, columns past nr column 0.
 */
ALWAYS_INLINE void q45_K_tile_of(bool five, bool packed, const int width, int nb, const void *a, size_t a_stride,
                                 int mr, const block_q8_K *const *col, __m512 *acc)
{
    const char *row[ROWS];
    tile_rows(a, a_stride, mr, row);
    const size_t block_bytes = Q45_K_BLOCK(five);
    for (int b = 0; b < nb; b++) {
        const char *g = (const char *) a + (size_t) b * ROWS * block_bytes;
        __m512i scale[8], min_pair[4], high[8];
        __m512 d, dmin;
        if (packed) {
            q45_K_decode_packed(g, scale, min_pair, &d, &dmin);
        } else {
            struct q45_K_rows rs;
            q45_K_decode_rows(row, block_bytes, b, &rs);
            for (int s = 0; s < 8; s++)
                scale[s] = _mm512_loadu_si512(rs.scale[s]);
            for (int p = 0; p < 4; p++)
                min_pair[p] = _mm512_loadu_si512(rs.min_pair[p]);
            d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) rs.d));
            dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) rs.dmin));
        }
        if (five) {
            if (packed) {
#pragma GCC unroll 8
                for (int q = 0; q < 8; q++)
                    high[q] = _mm512_loadu_si512(g + Q5_K_HIGH + 64 * q);
            } else {
                rows_words(row, block_bytes, b, offsetof(block_q5_K, qh), high);
            }
        }
        __m512i scaled[COLS];
#pragma GCC unroll 16
        for (int j = 0; j < width; j++)
            scaled[j] = _mm512_setzero_si512();
        for (int s = 0; s < 8; s++) {
            __m512i v[8];
            if (packed) {
#pragma GCC unroll 8
                for (int q = 0; q < 8; q++)
                    v[q] = _mm512_loadu_si512(g + Q45_K_CODES(five) + 64 * (8 * (s / 2) + q));
            } else {
                rows_words(row, block_bytes, b, Q45_K_QS(five) + 32 * (size_t) (s / 2), v);
            }
            q45_K_codes(v, five ? high : NULL, s);
#pragma GCC unroll 16
            for (int j = 0; j < width; j++)
                scaled[j] = _mm512_add_epi32(scaled[j], _mm512_mullo_epi32(run_dot(v, 8, col[j] + b, 32 * s),
                                                                           scale[s]));
        }
        /* ggml__q4_K_block_dot in 16 lanes, then added to the running sum */
#pragma GCC unroll 16
        for (int j = 0; j < width; j++) {
            const block_q8_K *y = col[j] + b;
            __m512i mins = _mm512_setzero_si512();
            for (int p = 0; p < 4; p++)
                mins = _mm512_dpwssd_epi32(mins, min_pair[p], _mm512_set1_epi32(q45_K_sum_pair(y, p)));
            const __m512 dy = _mm512_set1_ps(y->d);
            const __m512 product = _mm512_mul_ps(_mm512_mul_ps(dy, d), _mm512_cvtepi32_ps(scaled[j]));
            const __m512 min_product = _mm512_mul_ps(_mm512_mul_ps(dy, dmin), _mm512_cvtepi32_ps(mins));
            acc[j] = _mm512_add_ps(acc[j], _mm512_sub_ps(product, min_product));
        }
    }
}

/* ---- q6_K ---- */

/*
 * The interleaved layout of 16 q6_K rows, per block (as many bytes as the
 * 16 rows' blocks): for each 32-byte quarter p of ql, its eight 4-byte
 * words of the 16 rows (word w of row r at 64 (8 p + w) + 4 r), the same
 * for the two 32-byte halves h of qh (at 2048 + 64 (8 h + w) + 4 r), the
 * 16 scales of the 16 rows byte by byte (scale s of row r at 3072 + 16 s
 * + r), then the 16 d.
 */
enum { Q6_K_LOW = 0, Q6_K_HIGH = 2048, Q6_K_SCALES = 3072, Q6_K_D = 3328 };
_Static_assert(Q6_K_D + 2 * ROWS == ROWS * sizeof(block_q6_K), "the group block is the rows' blocks");

void ggml__avx512_vnni_qgemm_pack_q6_K(int64_t nb, const char *rows, size_t stride, int mr, char *group)
{
    const char *row[ROWS];
    tile_rows(rows, stride, mr, row);
    for (int64_t b = 0; b < nb; b++) {
        char *g = group + (size_t) b * ROWS * sizeof(block_q6_K);
        for (int r = 0; r < ROWS; r++) {
            const block_q6_K *blk = (const block_q6_K *) (const void *) row[r] + b;
            memcpy(g + Q6_K_D + 2 * r, &blk->d, 2);
            for (int s = 0; s < QK_K / 16; s++)
                g[Q6_K_SCALES + 16 * s + r] = (char) blk->scales[s];
        }
        for (int p = 0; p < 4; p++)
            pack_words(row, sizeof(block_q6_K), b, offsetof(block_q6_K, ql) + 32 * (size_t) p, g + Q6_K_LOW + 512 * p);
        for (int h = 0; h < 2; h++)
            pack_words(row, sizeof(block_q6_K), b, offsetof(block_q6_K, qh) + 32 * (size_t) h, g + Q6_K_HIGH + 512 * h);
    }
}

/* The reverse of ggml__avx512_vnni_qgemm_pack_q6_K for all 16 rows: group into rows stride bytes apart. */
void ggml__avx512_vnni_qgemm_unpack_q6_K(int64_t nb, const char *group, char *rows, size_t stride)
{
    char *row[ROWS];
    unpacked_rows(rows, stride, row);
    for (int64_t b = 0; b < nb; b++) {
        const char *g = group + (size_t) b * ROWS * sizeof(block_q6_K);
        for (int r = 0; r < ROWS; r++) {
            block_q6_K *blk = (block_q6_K *) (void *) row[r] + b;
            memcpy(&blk->d, g + Q6_K_D + 2 * r, 2);
            for (int s = 0; s < QK_K / 16; s++)
                blk->scales[s] = (int8_t) g[Q6_K_SCALES + 16 * s + r];
        }
        for (int p = 0; p < 4; p++)
            unpack_words(row, sizeof(block_q6_K), b, offsetof(block_q6_K, ql) + 32 * (size_t) p,
                         g + Q6_K_LOW + 512 * p);
        for (int h = 0; h < 2; h++)
            unpack_words(row, sizeof(block_q6_K), b, offsetof(block_q6_K, qh) + 32 * (size_t) h,
                         g + Q6_K_HIGH + 512 * h);
    }
}

/*
 * The 6-bit codes of part `part` of half h (values 128 h + 32 part + l,
 * l < 32: block_q6_K) from the words of its ql quarter (low: the low
 * nibbles for part < 2, the high ones otherwise) and of the half's qh
 * (high: the two bits at 2 part), in place in low.
 */
ALWAYS_INLINE void q6_K_codes(__m512i low[8], const __m512i high[8], int part)
{
    const __m512i low_mask = _mm512_set1_epi8(0x0f), high_mask = _mm512_set1_epi8(0x30);
#pragma GCC unroll 8
    for (int q = 0; q < 8; q++) {
        const __m512i lo = part < 2 ? low[q] : _mm512_srli_epi16(low[q], 4);
        /* bits 2 part, 2 part + 1 to bits 4, 5; what crosses a byte is masked off */
        const __m512i hi = part == 0 ? _mm512_slli_epi16(high[q], 4)
                         : part == 1 ? _mm512_slli_epi16(high[q], 2)
                         : part == 2 ? high[q]
                                     : _mm512_srli_epi16(high[q], 2);
        low[q] = _mm512_ternarylogic_epi32(_mm512_and_si512(lo, low_mask), hi, high_mask, 0xf8);   /* a | (b & c) */
    }
}

/* The q8_K block's 16-value sums 2p and 2p + 1 as a pair of 16-bit halves. */
static inline int32_t q6_K_sum_pair(const block_q8_K *y, int p)
{
    return word_at(&y->bsums[2 * p]);
}

/* The q6_K tile computing width columns (nr <= width <= COLS): rows past mr read row 0, columns past nr column 0. */
ALWAYS_INLINE void q6_K_tile_of(bool packed, const int width, int nb, const void *a, size_t a_stride, int mr,
                                const block_q8_K *const *col, __m512 *acc)
{
    const char *row[ROWS];
    tile_rows(a, a_stride, mr, row);
    for (int b = 0; b < nb; b++) {
        const char *g = (const char *) a + (size_t) b * ROWS * sizeof(block_q6_K);
        /* scale[s][r]: row r's scale of sub-block s (unpacked rows: gathered here) */
        int8_t gathered[QK_K / 16][ROWS];
        ggml_fp16_t gathered_d[ROWS];
        if (!packed)
            for (int r = 0; r < ROWS; r++) {
                const block_q6_K *blk = (const block_q6_K *) (const void *) row[r] + b;
                gathered_d[r] = blk->d;
                for (int s = 0; s < QK_K / 16; s++)
                    gathered[s][r] = blk->scales[s];
            }
        const char *scales = packed ? g + Q6_K_SCALES : (const char *) gathered;
        const __m512 d = _mm512_cvtph_ps(
            _mm256_loadu_si256((const __m256i *) (const void *) (packed ? g + Q6_K_D : (const char *) gathered_d)));
#define SCALE(s) _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (const void *) (scales + 16 * (s))))
        __m512i scaled[COLS];
#pragma GCC unroll 16
        for (int j = 0; j < width; j++)
            scaled[j] = _mm512_setzero_si512();
        for (int h = 0; h < 2; h++) {
            __m512i high[8];
            if (packed) {
#pragma GCC unroll 8
                for (int q = 0; q < 8; q++)
                    high[q] = _mm512_loadu_si512(g + Q6_K_HIGH + 64 * (8 * h + q));
            } else {
                rows_words(row, sizeof(block_q6_K), b, offsetof(block_q6_K, qh) + 32 * (size_t) h, high);
            }
            for (int part = 0; part < 4; part++) {
                const int quarter = 2 * h + (part & 1), sub = 8 * h + 2 * part;
                __m512i v[8];
                if (packed) {
#pragma GCC unroll 8
                    for (int q = 0; q < 8; q++)
                        v[q] = _mm512_loadu_si512(g + Q6_K_LOW + 64 * (8 * quarter + q));
                } else {
                    rows_words(row, sizeof(block_q6_K), b, offsetof(block_q6_K, ql) + 32 * (size_t) quarter, v);
                }
                q6_K_codes(v, high, part);
                const __m512i scale0 = SCALE(sub), scale1 = SCALE(sub + 1);
                const int at = 128 * h + 32 * part;
#pragma GCC unroll 16
                for (int j = 0; j < width; j++) {
                    const block_q8_K *y = col[j] + b;
                    const __m512i t0 = _mm512_mullo_epi32(run_dot(v, 4, y, at), scale0);
                    const __m512i t1 = _mm512_mullo_epi32(run_dot(v + 4, 4, y, at + 16), scale1);
                    scaled[j] = _mm512_add_epi32(scaled[j], _mm512_add_epi32(t0, t1));
                }
            }
        }
        /* the offset of 32 of every code: 32 sum_s scale[s] bsum[s]; then ggml__q6_K_block_dot in 16 lanes */
        __m512i scale_pair[8];
        for (int p = 0; p < 8; p++)
            scale_pair[p] = _mm512_or_si512(_mm512_and_si512(SCALE(2 * p), _mm512_set1_epi32(0xffff)),
                                            _mm512_slli_epi32(SCALE(2 * p + 1), 16));
#undef SCALE
#pragma GCC unroll 16
        for (int j = 0; j < width; j++) {
            const block_q8_K *y = col[j] + b;
            __m512i offset = _mm512_setzero_si512();
            for (int p = 0; p < 8; p++)
                offset = _mm512_dpwssd_epi32(offset, scale_pair[p], _mm512_set1_epi32(q6_K_sum_pair(y, p)));
            const __m512i sum = _mm512_sub_epi32(scaled[j], _mm512_slli_epi32(offset, 5));
            const __m512 dy = _mm512_set1_ps(y->d);
            acc[j] = _mm512_add_ps(acc[j], _mm512_mul_ps(_mm512_mul_ps(dy, d), _mm512_cvtepi32_ps(sum)));
        }
    }
}

/* ---- the entries ---- */

enum k_format { Q4_K, Q5_K, Q6_K };

/* The tile of format f computing width columns, then storing rows < mr of columns < nr. */
ALWAYS_INLINE void tile_of(enum k_format f, bool packed, const int width, int nb, const void *a, size_t a_stride,
                           int mr, const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    const block_q8_K *col[COLS];
    for (int j = 0; j < width; j++)
        col[j] = cols[j < nr ? j : 0].q;
    __m512 acc[COLS];
#pragma GCC unroll 16
    for (int j = 0; j < width; j++)
        acc[j] = _mm512_setzero_ps();
    if (f == Q4_K || f == Q5_K)
        q45_K_tile_of(f == Q5_K, packed, width, nb, a, a_stride, mr, col, acc);
    else
        q6_K_tile_of(packed, width, nb, a, a_stride, mr, col, acc);
    const __mmask16 rows_kept = (__mmask16) (mr >= 16 ? 0xffffu : (1u << mr) - 1u);
    for (int j = 0; j < nr; j++)
        _mm512_mask_storeu_ps(c[j], rows_kept, acc[j]);
}

/* The tile with as few columns computed as cover nr (a constant width each: the accumulators stay in registers). */
ALWAYS_INLINE void tile(enum k_format f, bool packed, int nb, const void *a, size_t a_stride, int mr,
                        const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    if (nr <= 1)
        tile_of(f, packed, 1, nb, a, a_stride, mr, cols, nr, c);
    else if (nr <= 4)
        tile_of(f, packed, 4, nb, a, a_stride, mr, cols, nr, c);
    else if (nr <= 8)
        tile_of(f, packed, 8, nb, a, a_stride, mr, cols, nr, c);
    else
        tile_of(f, packed, COLS, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_tile_q4_K(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(Q4_K, false, nb, a, a_stride, mr, cols, nr, c);
}

/* The group of 16 rows at a, interleaved by ggml__avx512_vnni_qgemm_pack_q4_K (a_stride unused). */
void ggml__avx512_vnni_qgemm_packed_tile_q4_K(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(Q4_K, true, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_tile_q5_K(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(Q5_K, false, nb, a, a_stride, mr, cols, nr, c);
}

/* The group of 16 rows at a, interleaved by ggml__avx512_vnni_qgemm_pack_q5_K (a_stride unused). */
void ggml__avx512_vnni_qgemm_packed_tile_q5_K(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(Q5_K, true, nb, a, a_stride, mr, cols, nr, c);
}

void ggml__avx512_vnni_qgemm_tile_q6_K(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(Q6_K, false, nb, a, a_stride, mr, cols, nr, c);
}

/* The group of 16 rows at a, interleaved by ggml__avx512_vnni_qgemm_pack_q6_K (a_stride unused). */
void ggml__avx512_vnni_qgemm_packed_tile_q6_K(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c)
{
    tile(Q6_K, true, nb, a, a_stride, mr, cols, nr, c);
}
