/*
 * simd/avx512/tile32x12.h - the register tile shared by the AVX-512 F32
 * tile (gemm.c) and the BF16-pair tile (gemm-bf16.c): 32 rows (two
 * 16-lane vectors, lo and hi) by 12 columns, 24 accumulators of the 32
 * registers.  A file includes it after intrin.h, defines STEP(j) (one
 * step's update of lo##j and hi##j) and writes its k loop as
 *     TILE32X12_ACCUMULATORS();
 *     for (...) { load A; TILE32X12_STEPS(); }
 *     TILE32X12_STORE(c, mr, nr, accumulate);
 * Partial tiles store through lane masks; nothing outside c[j][0..mr)
 * for j < nr is read or written.
 */
#ifndef GGML_BACKEND_SIMD_AVX512_TILE32X12_H
#define GGML_BACKEND_SIMD_AVX512_TILE32X12_H

#include <stdbool.h>

/* The lanes of the two vectors of a column that hold rows (mr of them). */
static inline __mmask16 tile32x12_rows_mask(int mr, int half)
{
    const int n = mr - 16 * half;
    return n >= 16 ? (__mmask16) 0xffff : n <= 0 ? (__mmask16) 0 : (__mmask16) ((1u << n) - 1);
}

/* c[0..mr) (+)= the 32 lanes of lo, hi. */
static inline void tile32x12_store_column(float *c, __m512 lo, __m512 hi, __mmask16 m0, __mmask16 m1,
                                          bool accumulate)
{
    if (accumulate) {
        lo = _mm512_add_ps(lo, _mm512_maskz_loadu_ps(m0, c));
        hi = _mm512_add_ps(hi, _mm512_maskz_loadu_ps(m1, c + 16));
    }
    _mm512_mask_storeu_ps(c, m0, lo);
    _mm512_mask_storeu_ps(c + 16, m1, hi);
}

#define TILE32X12_ACCUMULATORS()                                                             \
    __m512 lo0 = _mm512_setzero_ps(), lo1 = lo0, lo2 = lo0, lo3 = lo0, lo4 = lo0, lo5 = lo0; \
    __m512 lo6 = lo0, lo7 = lo0, lo8 = lo0, lo9 = lo0, lo10 = lo0, lo11 = lo0;               \
    __m512 hi0 = lo0, hi1 = lo0, hi2 = lo0, hi3 = lo0, hi4 = lo0, hi5 = lo0;                 \
    __m512 hi6 = lo0, hi7 = lo0, hi8 = lo0, hi9 = lo0, hi10 = lo0, hi11 = lo0

#define TILE32X12_STEPS() \
    do {                  \
        STEP(0);          \
        STEP(1);          \
        STEP(2);          \
        STEP(3);          \
        STEP(4);          \
        STEP(5);          \
        STEP(6);          \
        STEP(7);          \
        STEP(8);          \
        STEP(9);          \
        STEP(10);         \
        STEP(11);         \
    } while (0)

#define TILE32X12_STORE(c, mr, nr, accumulate)                                                     \
    do {                                                                                           \
        const __m512 lo_[12] = { lo0, lo1, lo2, lo3, lo4, lo5, lo6, lo7, lo8, lo9, lo10, lo11 };   \
        const __m512 hi_[12] = { hi0, hi1, hi2, hi3, hi4, hi5, hi6, hi7, hi8, hi9, hi10, hi11 };   \
        const __mmask16 m0_ = tile32x12_rows_mask(mr, 0), m1_ = tile32x12_rows_mask(mr, 1);        \
        for (int j_ = 0; j_ < (nr); j_++)                                                          \
            tile32x12_store_column((c)[j_], lo_[j_], hi_[j_], m0_, m1_, accumulate);               \
    } while (0)

#endif
