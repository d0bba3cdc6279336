/*
 * simd/avx512/intrin.h - the intrinsics of the AVX-512 level.
 *
 * Not installed.  Every file of the level includes this instead of
 * <immintrin.h>.  In a normal build it is <immintrin.h>.  In a test build
 * configured with --enable-isa-emulation (GGML_ISA_EMULATED) the same
 * names come from SIMDe, which implements them with AVX2 instructions,
 * and the few SIMDe lacks are defined below from 256-bit halves; that
 * build runs the level's code on AVX2 machines so that its tests run
 * everywhere.  Anything defined here must mean what Intel's intrinsic of
 * the same name means, lane for lane, rounding included.
 */
#ifndef GGML_BACKEND_SIMD_AVX512_INTRIN_H
#define GGML_BACKEND_SIMD_AVX512_INTRIN_H

#include <stdint.h>

#if !GGML_ISA_EMULATED

#    include <immintrin.h>

#else

#    define SIMDE_ENABLE_NATIVE_ALIASES
#    include <string.h>
#    include <simde/x86/avx512.h>
#    include <simde/x86/f16c.h>

/* The halves of a 512-bit vector, and a vector from its halves. */
static inline simde__m256 ggml__emu_lo_ps(simde__m512 v) { return simde_mm512_castps512_ps256(v); }
static inline simde__m256 ggml__emu_hi_ps(simde__m512 v)
{
    return simde_mm256_castsi256_ps(simde_mm512_extracti64x4_epi64(simde_mm512_castps_si512(v), 1));
}
static inline simde__m256i ggml__emu_lo_si(simde__m512i v) { return simde_mm512_castsi512_si256(v); }
static inline simde__m256i ggml__emu_hi_si(simde__m512i v) { return simde_mm512_extracti64x4_epi64(v, 1); }
static inline simde__m512 ggml__emu_join_ps(simde__m256 lo, simde__m256 hi)
{
    return simde_mm512_insertf32x8(simde_mm512_castps256_ps512(lo), hi, 1);
}
static inline simde__m512i ggml__emu_join_si(simde__m256i lo, simde__m256i hi)
{
    return simde_mm512_inserti64x4(simde_mm512_castsi256_si512(lo), hi, 1);
}

static inline simde__m512 ggml__emu_cvtph_ps(simde__m256i h)
{
    return ggml__emu_join_ps(simde_mm256_cvtph_ps(simde_mm256_castsi256_si128(h)),
                             simde_mm256_cvtph_ps(simde_mm256_extracti128_si256(h, 1)));
}
/* Round to nearest even only: the one mode this project asks for. */
static inline simde__m256i ggml__emu_cvtps_ph(simde__m512 v)
{
    return simde_mm256_set_m128i(simde_mm256_cvtps_ph(ggml__emu_hi_ps(v), SIMDE_MM_FROUND_TO_NEAREST_INT),
                                 simde_mm256_cvtps_ph(ggml__emu_lo_ps(v), SIMDE_MM_FROUND_TO_NEAREST_INT));
}
static inline simde__m512i ggml__emu_cvtps_epi32(simde__m512 v)
{
    return ggml__emu_join_si(simde_mm256_cvtps_epi32(ggml__emu_lo_ps(v)), simde_mm256_cvtps_epi32(ggml__emu_hi_ps(v)));
}
/* Truncation toward zero (0x80000000 out of range), as VCVTTPS2DQ. */
static inline simde__m512i ggml__emu_cvttps_epi32(simde__m512 v)
{
    return ggml__emu_join_si(simde_mm256_cvttps_epi32(ggml__emu_lo_ps(v)), simde_mm256_cvttps_epi32(ggml__emu_hi_ps(v)));
}
static inline simde__m512i ggml__emu_cvtepi16_epi32(simde__m256i v)
{
    return ggml__emu_join_si(simde_mm256_cvtepi16_epi32(simde_mm256_castsi256_si128(v)),
                             simde_mm256_cvtepi16_epi32(simde_mm256_extracti128_si256(v, 1)));
}
static inline simde__m512i ggml__emu_cvtepu16_epi32(simde__m256i v)
{
    return ggml__emu_join_si(simde_mm256_cvtepu16_epi32(simde_mm256_castsi256_si128(v)),
                             simde_mm256_cvtepu16_epi32(simde_mm256_extracti128_si256(v, 1)));
}
static inline simde__m512i ggml__emu_cvtepu8_epi32(simde__m128i v)
{
    return ggml__emu_join_si(simde_mm256_cvtepu8_epi32(v), simde_mm256_cvtepu8_epi32(simde_mm_srli_si128(v, 8)));
}
static inline simde__m512i ggml__emu_cvtepi8_epi32(simde__m128i v)
{
    return ggml__emu_join_si(simde_mm256_cvtepi8_epi32(v), simde_mm256_cvtepi8_epi32(simde_mm_srli_si128(v, 8)));
}
/* Truncation to the low byte of each lane, as VPMOVDB. */
static inline simde__m128i ggml__emu_cvtepi32_epi8(simde__m512i v)
{
    simde__m512i_private p = simde__m512i_to_private(v);
    int8_t b[16];
    for (int i = 0; i < 16; i++)
        b[i] = (int8_t) (p.i32[i] & 0xff);
    return simde_mm_loadu_si128(b);
}
/* Truncation to the low 16 bits of each lane, as VPMOVDW. */
static inline simde__m256i ggml__emu_cvtepi32_epi16(simde__m512i v)
{
    simde__m512i_private p = simde__m512i_to_private(v);
    int16_t h[16];
    for (int i = 0; i < 16; i++)
        h[i] = (int16_t) (p.i32[i] & 0xffff);
    return simde_mm256_loadu_si256(h);
}
/* The sum of the 16 lanes, wrapping modulo 2^32 as the integer adds do. */
static inline int ggml__emu_reduce_add_epi32(simde__m512i v)
{
    simde__m512i_private p = simde__m512i_to_private(v);
    uint32_t sum = 0;
    for (int i = 0; i < 16; i++)
        sum += (uint32_t) p.i32[i];
    return (int) (int32_t) sum;
}
static inline simde__m512 ggml__emu_cvtepi32_ps(simde__m512i v)
{
    return ggml__emu_join_ps(simde_mm256_cvtepi32_ps(ggml__emu_lo_si(v)), simde_mm256_cvtepi32_ps(ggml__emu_hi_si(v)));
}
/* Lanes 0-1 of the result: 128-bit blocks of a, lanes 2-3: of b, each
   chosen by two bits of imm. */
static inline simde__m512 ggml__emu_shuffle_f32x4(simde__m512 a, simde__m512 b, int imm)
{
    simde__m512_private pa = simde__m512_to_private(a), pb = simde__m512_to_private(b), r;
    for (int lane = 0; lane < 4; lane++) {
        const simde__m512_private *from = lane < 2 ? &pa : &pb;
        for (int i = 0; i < 4; i++)
            r.f32[4 * lane + i] = from->f32[4 * ((imm >> (2 * lane)) & 3) + i];
    }
    return simde__m512_from_private(r);
}
static inline float ggml__emu_cvtss_f32(simde__m512 v) { return simde_mm256_cvtss_f32(ggml__emu_lo_ps(v)); }
static inline float ggml__emu_reduce_max_ps(simde__m512 v)
{
    simde__m512_private p = simde__m512_to_private(v);
    float m = p.f32[0];
    for (int i = 1; i < 16; i++)
        m = p.f32[i] > m ? p.f32[i] : m;
    return m;
}
static inline float ggml__emu_reduce_add_ps(simde__m512 v)
{
    /* pairwise, in the order of the hardware's (documented) tree */
    simde__m256 s8 = simde_mm256_add_ps(ggml__emu_lo_ps(v), ggml__emu_hi_ps(v));
    simde__m128 s4 = simde_mm_add_ps(simde_mm256_castps256_ps128(s8), simde_mm256_extractf128_ps(s8, 1));
    simde__m128 s2 = simde_mm_add_ps(s4, simde_mm_movehl_ps(s4, s4));
    return simde_mm_cvtss_f32(simde_mm_add_ss(s2, simde_mm_shuffle_ps(s2, s2, 1)));
}
/* Arithmetic right shift of each int32 lane by k (k > 31: the sign in every bit). */
static inline simde__m512i ggml__emu_srai_epi32(simde__m512i v, int k)
{
    const simde__m128i count = simde_mm_cvtsi32_si128(k);
    return ggml__emu_join_si(simde_mm256_sra_epi32(ggml__emu_lo_si(v), count),
                             simde_mm256_sra_epi32(ggml__emu_hi_si(v), count));
}
/* The eight floats of v widened to doubles (exact). */
static inline simde__m512d ggml__emu_cvtps_pd(simde__m256 v)
{
    return simde_mm512_insertf64x4(simde_mm512_castpd256_pd512(simde_mm256_cvtps_pd(simde_mm256_castps256_ps128(v))),
                                   simde_mm256_cvtps_pd(simde_mm256_extractf128_ps(v, 1)), 1);
}
/* Masked loads and stores: lanes outside the mask are neither read nor
   written (the loads are element by element, as the kernels' tails
   may end at the last byte of a buffer). */
static inline simde__m512 ggml__emu_maskz_loadu_ps(simde__mmask16 k, const void *p)
{
    simde__m512_private r = simde__m512_to_private(simde_mm512_setzero_ps());
    for (int i = 0; i < 16; i++)
        if (k & (1u << i)) {
            float f;
            memcpy(&f, (const char *) p + 4 * i, 4);
            r.f32[i] = f;
        }
    return simde__m512_from_private(r);
}
static inline void ggml__emu_mask_storeu_ps(void *p, simde__mmask16 k, simde__m512 v)
{
    simde__m512_private r = simde__m512_to_private(v);
    for (int i = 0; i < 16; i++)
        if (k & (1u << i)) {
            const float f = r.f32[i];
            memcpy((char *) p + 4 * i, &f, 4);
        }
}
static inline simde__m512i ggml__emu_maskz_loadu_epi16(simde__mmask32 k, const void *p)
{
    simde__m512i_private r = simde__m512i_to_private(simde_mm512_setzero_si512());
    for (int i = 0; i < 32; i++)
        if (k & (1u << i)) {
            int16_t h;
            memcpy(&h, (const char *) p + 2 * i, 2);
            r.i16[i] = h;
        }
    return simde__m512i_from_private(r);
}
static inline void ggml__emu_mask_storeu_epi16(void *p, simde__mmask32 k, simde__m512i v)
{
    simde__m512i_private r = simde__m512i_to_private(v);
    for (int i = 0; i < 32; i++)
        if (k & (1u << i)) {
            const int16_t h = r.i16[i];
            memcpy((char *) p + 2 * i, &h, 2);
        }
}

/* A non-temporal store needs an aligned address: two aligned halves. */
static inline void ggml__emu_stream_ps(void *p, simde__m512 v)
{
    simde_mm256_stream_ps((float *) p, ggml__emu_lo_ps(v));
    simde_mm256_stream_ps((float *) p + 8, ggml__emu_hi_ps(v));
}

#    undef _mm512_stream_ps
#    define _mm512_stream_ps(p, v)         ggml__emu_stream_ps(p, v)
#    undef _mm512_cvtph_ps
#    undef _mm512_cvtps_ph
#    undef _mm512_cvtps_epi32
#    undef _mm512_cvttps_epi32
#    undef _mm512_cvtepi16_epi32
#    undef _mm512_cvtepu16_epi32
#    undef _mm512_cvtepi8_epi32
#    undef _mm512_cvtepi32_epi8
#    undef _mm512_cvtepi32_epi16
#    undef _mm512_reduce_add_epi32
#    undef _mm512_madd_epi16
#    undef _mm512_cvtss_f32
#    undef _mm512_cvtepi32_ps
#    undef _mm512_shuffle_f32x4
#    undef _mm512_reduce_max_ps
#    undef _mm512_reduce_add_ps
#    undef _mm512_srai_epi32
#    undef _mm512_cvtps_pd
#    undef _mm512_maskz_loadu_ps
#    undef _mm512_mask_storeu_ps
#    undef _mm512_maskz_loadu_epi16
#    undef _mm512_mask_storeu_epi16
#    define _mm512_cvtph_ps(h)             ggml__emu_cvtph_ps(h)
#    define _mm512_cvtps_ph(v, rounding)   ((void) (rounding), ggml__emu_cvtps_ph(v))
#    define _mm512_cvtps_epi32(v)          ggml__emu_cvtps_epi32(v)
#    define _mm512_cvttps_epi32(v)         ggml__emu_cvttps_epi32(v)
#    define _mm512_cvtepi16_epi32(v)       ggml__emu_cvtepi16_epi32(v)
#    define _mm512_cvtepu16_epi32(v)       ggml__emu_cvtepu16_epi32(v)
#    define _mm512_cvtepu8_epi32(v)        ggml__emu_cvtepu8_epi32(v)
#    define _mm512_cvtepi8_epi32(v)        ggml__emu_cvtepi8_epi32(v)
#    define _mm512_cvtepi32_epi8(v)        ggml__emu_cvtepi32_epi8(v)
#    define _mm512_cvtepi32_epi16(v)       ggml__emu_cvtepi32_epi16(v)
#    define _mm512_reduce_add_epi32(v)     ggml__emu_reduce_add_epi32(v)
/* SIMDe 0.7.4 has the function but aliases the name with four parameters */
#    define _mm512_madd_epi16(a, b)        simde_mm512_madd_epi16(a, b)
#    define _mm512_cvtss_f32(v)            ggml__emu_cvtss_f32(v)
#    define _mm512_cvtepi32_ps(v)          ggml__emu_cvtepi32_ps(v)
#    define _mm512_shuffle_f32x4(a, b, imm) ggml__emu_shuffle_f32x4(a, b, imm)
#    define _mm512_reduce_max_ps(v)        ggml__emu_reduce_max_ps(v)
#    define _mm512_reduce_add_ps(v)        ggml__emu_reduce_add_ps(v)
#    define _mm512_srai_epi32(v, k)        ggml__emu_srai_epi32(v, k)
#    define _mm512_cvtps_pd(v)             ggml__emu_cvtps_pd(v)
#    define _mm512_maskz_loadu_ps(k, p)    ggml__emu_maskz_loadu_ps(k, p)
#    define _mm512_mask_storeu_ps(p, k, v) ggml__emu_mask_storeu_ps(p, k, v)
#    define _mm512_maskz_loadu_epi16(k, p) ggml__emu_maskz_loadu_epi16(k, p)
#    define _mm512_mask_storeu_epi16(p, k, v) ggml__emu_mask_storeu_epi16(p, k, v)

#endif /* GGML_ISA_EMULATED */

/* The lanes [0, n) of a 16-lane vector, 0 <= n <= 16: the mask of a row's
   last partial vector. */
static inline __mmask16 ggml__avx512_first_lanes(int64_t n)
{
    return (__mmask16) ((1u << n) - 1u);
}

#endif
