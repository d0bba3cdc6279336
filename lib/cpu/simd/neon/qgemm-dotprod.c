/*
 * simd/neon/qgemm-dotprod.c - the integer tiles (kernels.h, qgemm_tile
 * and qgemm_packed_tile) of the NEON level with the ARMv8.2 dot-product
 * instructions, for Q4_0, Q8_0 and IQ4_NL weights (compiled with
 * +dotprod; in the table only when the CPU has them).
 *
 * The tile works on the interleaved layout of packed-rows.h: one 16-byte
 * load takes code word w of four rows, one row per 32-bit lane.  SDOT by
 * element (vdotq_laneq_s32) multiplies those four rows' four codes by one
 * column's four codes at the same place, taken from a register holding
 * four of the column's words, and adds the four products into each row's
 * lane: int8 by int8, exact, whatever the bytes.  Q8_0 codes are used as
 * they are; Q4_0 nibbles become their signed weights u - 8, IQ4_NL
 * nibbles their levels by a table look-up, both exact in int8.  A block's
 * sums are exact in 32 bits (at most 32 * 128 * 128), then converted,
 * multiplied by the column's scale and added to the rows' accumulators by
 * one fused multiply-add with their scales: the generic level's floats
 * bit for bit.
 *
 * Registers (32 of 128 bits): a half of 8 rows (two vectors of four rows)
 * against up to 4 columns holds 8 block sums, 8 accumulators and the
 * columns' 8 vectors of codes.  Rows in the standard layout (qgemm_tile)
 * are interleaved first, PACK_BLOCKS blocks at a time on the stack.
 */
#include "config.h"

#include <arm_neon.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "neon.h"
#include "../packed-rows.h"

#define ROWS GGML__QGEMM_ROWS
#define HALF 8
#define COLS_STEP 4
#define PACK_BLOCKS 16   /* 16 blocks of 16 Q8_0 rows: 8.5 KiB of stack */

_Static_assert(ROWS == 2 * HALF, "a group is two halves of 8 rows");

/* The signed weights of the nibbles of packed (low or high ones) of a 4-bit type t. */
static inline __attribute__((always_inline)) int8x16_t nibble_weights(enum ggml_type t, uint8x16_t packed, bool high,
                                                                      int8x16_t levels)
{
    const uint8x16_t u = high ? vshrq_n_u8(packed, 4) : vandq_u8(packed, vdupq_n_u8(0x0f));
    if (t == GGML_TYPE_IQ4_NL)
        return vqtbl1q_s8(levels, u);
    return vsubq_s8(vreinterpretq_s8_u8(u), vdupq_n_s8(8));
}

/*
 * The sums of one word position: x_lo, x_hi the weights of rows 0..3 and
 * 4..7 of the half, against lane `lane` (a literal) of each column's
 * vector col[j].
 */
#define DOT_WORD(x_lo, x_hi, col, lane)                                             \
    do {                                                                            \
        for (int j = 0; j < width; j++) {                                           \
            sums[j][0] = vdotq_laneq_s32(sums[j][0], x_lo, col[j], lane);           \
            sums[j][1] = vdotq_laneq_s32(sums[j][1], x_hi, col[j], lane);           \
        }                                                                           \
    } while (0)

/* Word w (a literal) of a Q8_0 block: 32 bytes at words + 4 * ROWS * w. */
#define Q8_WORD(w, col)                                                                                   \
    do {                                                                                                  \
        const int8_t *p = (const int8_t *) (const void *) (words + 4 * ROWS * (w));                      \
        const int8x16_t x_lo = vld1q_s8(p), x_hi = vld1q_s8(p + 16);                                     \
        DOT_WORD(x_lo, x_hi, col, (w) % 4);                                                               \
    } while (0)

/* Packed word w (a literal) of a 4-bit block: low nibbles codes 4w.., high ones 16 + 4w.. */
#define NIBBLE_WORD(w)                                                                                    \
    do {                                                                                                  \
        const uint8_t *p = (const uint8_t *) (const void *) (words + 4 * ROWS * (w));                    \
        const uint8x16_t u_lo = vld1q_u8(p), u_hi = vld1q_u8(p + 16);                                    \
        DOT_WORD(nibble_weights(t, u_lo, false, levels), nibble_weights(t, u_hi, false, levels), col_lo, w); \
        DOT_WORD(nibble_weights(t, u_lo, true, levels), nibble_weights(t, u_hi, true, levels), col_hi, w);   \
    } while (0)

/*
 * Rows 8h .. 8h + rows - 1 of the group (type t) by width columns (t and
 * width constants after inlining; cols[j] for j < width), blocks [0, nb)
 * of the group against the columns' blocks [b0, b0 + nb): c[j][8h + i]
 * is set, or added to when accumulate.
 */
static inline __attribute__((always_inline)) void half_tile(enum ggml_type t, const char *group, int nb, int h,
                                                            int b0, int rows, const struct ggml__qcolumn *cols,
                                                            const int width, float *const *c, bool accumulate)
{
    const size_t block_bytes = t == GGML_TYPE_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0);
    const int8x16_t levels = vld1q_s8(ggml__iq4nl_values);
    float32x4_t acc[COLS_STEP][2];
    for (int j = 0; j < width; j++) {
        float start[HALF] = { 0 };
        for (int i = 0; accumulate && i < rows; i++)
            start[i] = c[j][HALF * h + i];
        acc[j][0] = vld1q_f32(start);
        acc[j][1] = vld1q_f32(start + 4);
    }
    for (int b = 0; b < nb; b++) {
        const char *g = group + (size_t) b * ROWS * block_bytes;
        const float16x8_t d16 = vreinterpretq_f16_u16(vld1q_u16((const uint16_t *) (const void *) (g + 2 * HALF * h)));
        const float32x4_t d_lo = vcvt_f32_f16(vget_low_f16(d16)), d_hi = vcvt_f32_f16(vget_high_f16(d16));
        const char *words = g + 2 * ROWS + 4 * HALF * h;
        int8x16_t col_lo[COLS_STEP], col_hi[COLS_STEP];
        int32x4_t sums[COLS_STEP][2];
        for (int j = 0; j < width; j++) {
            const block_q8_0 *qb = (const block_q8_0 *) cols[j].q + b0 + b;
            col_lo[j] = vld1q_s8(qb->qs);
            col_hi[j] = vld1q_s8(qb->qs + 16);
            sums[j][0] = sums[j][1] = vdupq_n_s32(0);
        }
        if (t == GGML_TYPE_Q8_0) {
            Q8_WORD(0, col_lo);
            Q8_WORD(1, col_lo);
            Q8_WORD(2, col_lo);
            Q8_WORD(3, col_lo);
            Q8_WORD(4, col_hi);
            Q8_WORD(5, col_hi);
            Q8_WORD(6, col_hi);
            Q8_WORD(7, col_hi);
        } else {
            NIBBLE_WORD(0);
            NIBBLE_WORD(1);
            NIBBLE_WORD(2);
            NIBBLE_WORD(3);
        }
        for (int j = 0; j < width; j++) {
            const float dj = cols[j].d[b0 + b];
            acc[j][0] = vfmaq_f32(acc[j][0], d_lo, vmulq_n_f32(vcvtq_f32_s32(sums[j][0]), dj));
            acc[j][1] = vfmaq_f32(acc[j][1], d_hi, vmulq_n_f32(vcvtq_f32_s32(sums[j][1]), dj));
        }
    }
    for (int j = 0; j < width; j++) {
        float out[HALF];
        vst1q_f32(out, acc[j][0]);
        vst1q_f32(out + 4, acc[j][1]);
        memcpy(c[j] + HALF * h, out, (size_t) rows * sizeof *out);
    }
}

#undef NIBBLE_WORD
#undef Q8_WORD
#undef DOT_WORD

/* The tile of type t on a group (blocks [0, nb) against the columns' [b0, b0 + nb)), set or accumulated. */
static inline __attribute__((always_inline)) void group_tile(enum ggml_type t, const char *group, int nb, int b0,
                                                             int mr, const struct ggml__qcolumn *cols, int nr,
                                                             float *const *c, bool accumulate)
{
    for (int h = 0; h < 2 && HALF * h < mr; h++) {
        const int rows = mr - HALF * h < HALF ? mr - HALF * h : HALF;
        for (int j0 = 0; j0 < nr; j0 += COLS_STEP) {
            switch (nr - j0 < COLS_STEP ? nr - j0 : COLS_STEP) {
            case 1: half_tile(t, group, nb, h, b0, rows, cols + j0, 1, c + j0, accumulate); break;
            case 2: half_tile(t, group, nb, h, b0, rows, cols + j0, 2, c + j0, accumulate); break;
            case 3: half_tile(t, group, nb, h, b0, rows, cols + j0, 3, c + j0, accumulate); break;
            default: half_tile(t, group, nb, h, b0, rows, cols + j0, 4, c + j0, accumulate); break;
            }
        }
    }
}

/* qgemm_tile: the rows interleaved PACK_BLOCKS blocks at a time (rows past mr: row 0 again, never stored). */
static inline __attribute__((always_inline)) void plain_tile(enum ggml_type t, int nb, const void *a,
                                                             size_t a_stride, int mr,
                                                             const struct ggml__qcolumn *cols, int nr,
                                                             float *const *c)
{
    const size_t block_bytes = t == GGML_TYPE_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0);
    char group[PACK_BLOCKS * ROWS * sizeof(block_q8_0)];
    for (int b0 = 0; b0 < nb; b0 += PACK_BLOCKS) {
        const int n = nb - b0 < PACK_BLOCKS ? nb - b0 : PACK_BLOCKS;
        ggml__pack_rows(t, n, (const char *) a + (size_t) b0 * block_bytes, a_stride, mr, group);
        group_tile(t, group, n, b0, mr, cols, nr, c, b0 > 0);
    }
}

_Static_assert(sizeof(block_q4_0) == sizeof(block_iq4_nl), "Q4_0 and IQ4_NL groups have the same size");

/* Defines the two entries of type t (lower-case name). */
#define DEFINE_TILES(name, t)                                                                                   \
    void ggml__neon_dotprod_qgemm_packed_tile_##name(int nb, const void *a, size_t a_stride, int mr,             \
                                                     const struct ggml__qcolumn *cols, int nr, float *const *c) \
    {                                                                                                          \
        (void) a_stride;                                                                                       \
        group_tile(t, a, nb, 0, mr, cols, nr, c, false);                                                      \
    }                                                                                                          \
    void ggml__neon_dotprod_qgemm_tile_##name(int nb, const void *a, size_t a_stride, int mr,                    \
                                              const struct ggml__qcolumn *cols, int nr, float *const *c)        \
    {                                                                                                          \
        plain_tile(t, nb, a, a_stride, mr, cols, nr, c);                                                       \
    }

DEFINE_TILES(q4_0, GGML_TYPE_Q4_0)
DEFINE_TILES(q8_0, GGML_TYPE_Q8_0)
DEFINE_TILES(iq4_nl, GGML_TYPE_IQ4_NL)
