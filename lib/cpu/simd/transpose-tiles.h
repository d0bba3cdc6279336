/*
 * simd/transpose-tiles.h - the tile walk of the vector levels' transposes
 * (avx2/transpose.c, avx512/transpose.c): the matrix is walked in square
 * tiles small enough that a tile's source and destination rows stay in the
 * L1 cache together; inside a tile, square blocks of side elements are
 * transposed in registers by the level's block function, and the rows and
 * columns short of a block go one element at a time.
 *
 * Not installed.  Include in a level's file after <stdint.h>, <stddef.h>
 * and <string.h>; TRANSPOSE_TILES is used in a function with the
 * parameters of the transpose entries (simd/kernels.h).
 */
#ifndef GGML_BACKEND_SIMD_TRANSPOSE_TILES_H
#define GGML_BACKEND_SIMD_TRANSPOSE_TILES_H

/* Tile side in elements (a multiple of the block sides): 32 x 32 x 4 bytes = 4 KiB per tile. */
#define TRANSPOSE_TILE 32

/* Rows [r0, r1) x columns [c0, c1) one element of es bytes at a time. */
static inline void transpose_elements(int64_t r0, int64_t r1, int64_t c0, int64_t c1, const char *s, ptrdiff_t ss,
                                      char *d, ptrdiff_t ds, size_t es)
{
    for (int64_t r = r0; r < r1; r++)
        for (int64_t c = c0; c < c1; c++)
            memcpy(d + c * ds + r * (ptrdiff_t) es, s + r * ss + c * (ptrdiff_t) es, es);
}

/*
 * The transpose of rows x cols elements of es bytes from src to dst
 * (strides src_stride, dst_stride) with block(s, ss, d, ds), which
 * transposes the side x side block at s (rows ss bytes apart) into d (rows
 * ds bytes apart).
 */
#define TRANSPOSE_TILES(block, side, es)                                                              \
    do {                                                                                              \
        const char *s = src;                                                                          \
        char *d = dst;                                                                                \
        for (int64_t r0 = 0; r0 < rows; r0 += TRANSPOSE_TILE) {                                       \
            const int64_t r1 = r0 + TRANSPOSE_TILE < rows ? r0 + TRANSPOSE_TILE : rows;               \
            for (int64_t c0 = 0; c0 < cols; c0 += TRANSPOSE_TILE) {                                   \
                const int64_t c1 = c0 + TRANSPOSE_TILE < cols ? c0 + TRANSPOSE_TILE : cols;           \
                int64_t r = r0;                                                                       \
                for (; r + (side) <= r1; r += (side)) {                                               \
                    int64_t c = c0;                                                                   \
                    for (; c + (side) <= c1; c += (side))                                             \
                        block(s + r * src_stride + c * (es), src_stride, d + c * dst_stride + r * (es), \
                              dst_stride);                                                            \
                    transpose_elements(r, r + (side), c, c1, s, src_stride, d, dst_stride, (es));     \
                }                                                                                     \
                transpose_elements(r, r1, c0, c1, s, src_stride, d, dst_stride, (es));                \
            }                                                                                         \
        }                                                                                             \
    } while (0)

#endif
