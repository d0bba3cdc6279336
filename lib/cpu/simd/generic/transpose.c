/*
 * simd/generic/transpose.c - the generic level's matrix transposes of 4-
 * and 2-byte elements (the transpose32 and transpose16 entries), in
 * portable C.
 *
 * The matrix is walked in square tiles small enough that a tile's source
 * rows and destination rows stay in the L1 cache together, so every cache
 * line read or written is used whole before it leaves.  Elements are moved
 * with memcpy of their size: any alignment of the pointers and strides is
 * accepted, and compilers turn each into one load and one store.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "generic.h"

/* Tile side in elements: 32 x 32 x 4 bytes = 4 KiB read and written per tile. */
#define TILE 32

/* The one loop nest of both widths (es: the element size, a constant). */
#define TRANSPOSE_TILED(es)                                                                          \
    do {                                                                                             \
        const char *s = src;                                                                         \
        char *d = dst;                                                                               \
        for (int64_t r0 = 0; r0 < rows; r0 += TILE) {                                                \
            const int64_t r1 = r0 + TILE < rows ? r0 + TILE : rows;                                  \
            for (int64_t c0 = 0; c0 < cols; c0 += TILE) {                                            \
                const int64_t c1 = c0 + TILE < cols ? c0 + TILE : cols;                              \
                for (int64_t r = r0; r < r1; r++)                                                    \
                    for (int64_t c = c0; c < c1; c++)                                                \
                        memcpy(d + c * dst_stride + r * (es), s + r * src_stride + c * (es), (es));  \
            }                                                                                        \
        }                                                                                            \
    } while (0)

void ggml__generic_transpose32(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                               void *restrict dst, ptrdiff_t dst_stride)
{
    TRANSPOSE_TILED(4);
}

void ggml__generic_transpose16(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                               void *restrict dst, ptrdiff_t dst_stride)
{
    TRANSPOSE_TILED(2);
}
