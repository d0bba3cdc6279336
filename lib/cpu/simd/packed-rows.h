/*
 * simd/packed-rows.h - weight rows interleaved for the integer tiles
 * (kernels.h, qgemm_packed_tile), as "CPU_REPACK" buffers store them
 * (lib/cpu/repack.c).
 *
 * Types: those whose block is a binary16 scale d followed by code bytes
 * in 32-bit words with nothing else (Q4_0: 4 words, Q8_0: 8, IQ4_NL: 4).
 * A group of GGML__QGEMM_ROWS consecutive rows of nb blocks is stored as
 * nb group blocks, group block b at b * GGML__QGEMM_ROWS * block bytes:
 *   - the 16 rows' scales of block b, row r's at byte 2 r;
 *   - then the rows' code words, word w of row r's block b (its code
 *     bytes 4w .. 4w + 3) at byte 2 * 16 + 4 * (16 w + r).
 * So one 64-byte load takes word w of all 16 rows, one row per 32-bit
 * lane: the tiles' layout, without a transpose.  A group holds the same
 * bytes as its rows, permuted: it is exactly as large, and a byte fill
 * is the same in either layout.
 */
#ifndef GGML_BACKEND_CPU_SIMD_PACKED_ROWS_H
#define GGML_BACKEND_CPU_SIMD_PACKED_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "ggml.h"
#include "quants-impl.h"
#include "kernels.h"

/* True for the types this layout has. */
static inline bool ggml__packable_type(enum ggml_type type)
{
    return type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q8_0 || type == GGML_TYPE_IQ4_NL;
}

/* Where byte i of row r's block is in its group block. */
static inline size_t ggml__packed_offset(int r, size_t i)
{
    if (i < 2)
        return 2 * (size_t) r + i;
    const size_t w = (i - 2) / 4;
    return 2 * GGML__QGEMM_ROWS + 4 * (GGML__QGEMM_ROWS * w + (size_t) r) + (i - 2) % 4;
}

/* The 16 rows of a group at rows, stride bytes apart; rows past mr: row 0 again. */
static inline void ggml__group_rows(const char *rows, size_t stride, int mr, const char *row[GGML__QGEMM_ROWS])
{
    for (int r = 0; r < GGML__QGEMM_ROWS; r++)
        row[r] = rows + (r < mr ? (size_t) r * stride : 0);
}

/* ggml__pack_rows for blocks of bs bytes (a constant after inlining: the word copies unroll). */
static inline __attribute__((always_inline)) void ggml__pack_rows_of(const size_t bs, int64_t nb, const char *rows,
                                                                     size_t stride, int mr, char *group)
{
    const char *row[GGML__QGEMM_ROWS];
    ggml__group_rows(rows, stride, mr, row);
    /* a group block at a time: its bytes are written together */
    for (int64_t b = 0; b < nb; b++) {
        char *g = group + (size_t) b * GGML__QGEMM_ROWS * bs;
        for (int r = 0; r < GGML__QGEMM_ROWS; r++) {
            const char *blk = row[r] + (size_t) b * bs;
            memcpy(g + 2 * r, blk, 2);
            for (size_t w = 0; w < (bs - 2) / 4; w++)
                memcpy(g + 2 * GGML__QGEMM_ROWS + 4 * (GGML__QGEMM_ROWS * w + (size_t) r), blk + 2 + 4 * w, 4);
        }
    }
}

/*
 * Interleaves 16 rows of nb blocks of type (a packable type; rows stride
 * bytes apart) into their group; only rows r < mr are read, the group's
 * others repeat row 0.
 */
static inline void ggml__pack_rows(enum ggml_type type, int64_t nb, const char *rows, size_t stride, int mr,
                                   char *group)
{
    if (type == GGML_TYPE_Q8_0)
        ggml__pack_rows_of(sizeof(block_q8_0), nb, rows, stride, mr, group);
    else   /* Q4_0 and IQ4_NL: 18-byte blocks */
        ggml__pack_rows_of(sizeof(block_q4_0), nb, rows, stride, mr, group);
}

/* The reverse of ggml__pack_rows for all 16 rows: group into rows stride bytes apart. */
static inline void ggml__unpack_rows(enum ggml_type type, int64_t nb, const char *group, char *rows, size_t stride)
{
    const size_t bs = ggml_type_size(type);
    for (int64_t b = 0; b < nb; b++) {
        const char *g = group + (size_t) b * GGML__QGEMM_ROWS * bs;
        for (int r = 0; r < GGML__QGEMM_ROWS; r++) {
            char *blk = rows + (size_t) r * stride + (size_t) b * bs;
            memcpy(blk, g + ggml__packed_offset(r, 0), 2);
            for (size_t i = 2; i < bs; i += 4)
                memcpy(blk + i, g + ggml__packed_offset(r, i), 4);
        }
    }
}

#endif
