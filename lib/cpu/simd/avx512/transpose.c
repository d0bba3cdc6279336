/*
 * simd/avx512/transpose.c - the transpose of 4-byte elements for the
 * AVX-512 level (the transpose32 entry): 16 x 16 blocks transposed in
 * sixteen 512-bit registers, walked in square tiles that fit the L1 cache
 * (simd/transpose-tiles.h).  Bits are moved unchanged, so the results are
 * the generic level's.
 *
 * The level has no transpose16 of its own: 2-byte elements have no
 * single-instruction 512-bit two-source word shuffle (VPERMT2W takes
 * several micro-operations on the CPUs that have it), and a 16 x 16 block
 * of words fits 256-bit registers, which is an AVX2 kernel; the table
 * keeps the AVX2 level's 8 x 8 blocks.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "intrin.h"
#include "avx512.h"
#include "transpose-tiles.h"

/* Lane group L of a vector: its elements 4L..4L+3. */

/*
 * In each lane group L, the 4 x 4 block of the rows *a, *b, *c, *d is
 * transposed: afterwards *a holds element 4L of the four rows, *b element
 * 4L + 1, *c 4L + 2 and *d 4L + 3.
 */
static inline void transpose_groups(__m512 *a, __m512 *b, __m512 *c, __m512 *d)
{
    /* a0 b0 a1 b1 (lo) and a2 b2 a3 b3 (hi), in each group */
    const __m512 ab_lo = _mm512_unpacklo_ps(*a, *b), ab_hi = _mm512_unpackhi_ps(*a, *b);
    const __m512 cd_lo = _mm512_unpacklo_ps(*c, *d), cd_hi = _mm512_unpackhi_ps(*c, *d);
    *a = _mm512_shuffle_ps(ab_lo, cd_lo, 0x44);
    *b = _mm512_shuffle_ps(ab_lo, cd_lo, 0xee);
    *c = _mm512_shuffle_ps(ab_hi, cd_hi, 0x44);
    *d = _mm512_shuffle_ps(ab_hi, cd_hi, 0xee);
}

/*
 * Rows j, 4 + j, 8 + j and 12 + j of the transposed block (at d, rows ds
 * bytes apart) from q0..q3, whose group L holds column 4L + j of the rows
 * 0..3, 4..7, 8..11 and 12..15 (transpose_groups' results).
 */
static inline void store_columns(__m512 q0, __m512 q1, __m512 q2, __m512 q3, char *d, ptrdiff_t ds, int j)
{
    /* groups 0, 2 of q0 and of q1 (columns j, 8 + j of rows 0..7), groups 1, 3 (columns 4 + j, 12 + j) */
    const __m512 top_even = _mm512_shuffle_f32x4(q0, q1, 0x88), top_odd = _mm512_shuffle_f32x4(q0, q1, 0xdd);
    /* the same of rows 8..15 */
    const __m512 low_even = _mm512_shuffle_f32x4(q2, q3, 0x88), low_odd = _mm512_shuffle_f32x4(q2, q3, 0xdd);
    _mm512_storeu_ps((float *) (void *) (d + (0 + j) * ds), _mm512_shuffle_f32x4(top_even, low_even, 0x88));
    _mm512_storeu_ps((float *) (void *) (d + (4 + j) * ds), _mm512_shuffle_f32x4(top_odd, low_odd, 0x88));
    _mm512_storeu_ps((float *) (void *) (d + (8 + j) * ds), _mm512_shuffle_f32x4(top_even, low_even, 0xdd));
    _mm512_storeu_ps((float *) (void *) (d + (12 + j) * ds), _mm512_shuffle_f32x4(top_odd, low_odd, 0xdd));
}

/*
 * The 16 x 16 block of 4-byte elements at s (rows ss bytes apart) into d
 * (rows ds apart): 16 loads, 64 shuffles, 16 stores, all in registers.
 */
static inline void block16x16_32(const char *s, ptrdiff_t ss, char *d, ptrdiff_t ds)
{
#define ROW(i) _mm512_loadu_ps((const float *) (const void *) (s + (i) * ss))
    __m512 r0 = ROW(0), r1 = ROW(1), r2 = ROW(2), r3 = ROW(3), r4 = ROW(4), r5 = ROW(5), r6 = ROW(6), r7 = ROW(7);
    __m512 r8 = ROW(8), r9 = ROW(9), r10 = ROW(10), r11 = ROW(11), r12 = ROW(12), r13 = ROW(13), r14 = ROW(14),
           r15 = ROW(15);
#undef ROW
    transpose_groups(&r0, &r1, &r2, &r3);
    transpose_groups(&r4, &r5, &r6, &r7);
    transpose_groups(&r8, &r9, &r10, &r11);
    transpose_groups(&r12, &r13, &r14, &r15);
    store_columns(r0, r4, r8, r12, d, ds, 0);
    store_columns(r1, r5, r9, r13, d, ds, 1);
    store_columns(r2, r6, r10, r14, d, ds, 2);
    store_columns(r3, r7, r11, r15, d, ds, 3);
}

void ggml__avx512_transpose32(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                              void *restrict dst, ptrdiff_t dst_stride)
{
    TRANSPOSE_TILES(block16x16_32, 16, 4);
}
