/*
 * fp16-impl.h - scalar conversions between binary32 and the two 16-bit
 * float formats (IEEE binary16 "fp16" and bfloat16 "bf16").
 *
 * Not installed.  Every module that converts a single value (the public
 * wrappers in fp16.c, the quantizers, the CPU backend's scalar tails) uses
 * these inline functions so that the library has exactly one definition of
 * each rounding.  They use only integer operations on the bit patterns, so
 * the result does not depend on the FPU's rounding mode, on flush-to-zero
 * or denormals-are-zero modes, or on the compiler's floating-point options.
 *
 * Contracts (bit-identical to upstream ggml's portable conversions):
 *
 *   fp32 -> fp16   round to nearest, ties to even, including results in the
 *                  subnormal range; magnitudes that round above 65504 (from
 *                  65520 up) become infinity; every NaN becomes the quiet NaN
 *                  0x7e00 with the input's sign (the payload is dropped).
 *   fp16 -> fp32   exact; a NaN keeps its payload and gains the quiet bit.
 *   fp32 -> bf16   round to nearest, ties to even, on every finite input,
 *                  subnormals included (they are rounded like any other
 *                  value, never flushed); overflow rounds to infinity; a NaN
 *                  keeps its top payload bits and gains the quiet bit.
 *   bf16 -> fp32   exact (the 16 bits become the high half of the binary32).
 */
#ifndef GGML_BACKEND_FP16_IMPL_H
#define GGML_BACKEND_FP16_IMPL_H

#include <stdint.h>
#include <string.h>

#include "ggml.h"

static inline uint32_t ggml__fp32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float ggml__fp32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* binary16 -> binary32; exact for every finite value and infinity. */
static inline float ggml__fp16_to_fp32(ggml_fp16_t h)
{
    uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;

    if (exp == 0x1fu) {
        /* infinity, or NaN made quiet with its 10 payload bits kept on top */
        uint32_t quiet = mant ? 0x00400000u : 0u;
        return ggml__fp32_from_bits(sign | 0x7f800000u | quiet | (mant << 13));
    }
    if (exp == 0) {
        if (mant == 0)
            return ggml__fp32_from_bits(sign);
        /* subnormal 0.mant * 2^-14: shift the leading one up to the
           implicit position; each shift lowers the exponent by one */
        uint32_t biased = 113u;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            biased--;
        }
        return ggml__fp32_from_bits(sign | (biased << 23) | ((mant & 0x3ffu) << 13));
    }
    /* normal: the exponent bias goes from 15 to 127 */
    return ggml__fp32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* binary32 -> binary16, round to nearest even (see the contract above). */
static inline ggml_fp16_t ggml__fp32_to_fp16(float f)
{
    uint32_t w = ggml__fp32_bits(f);
    uint16_t sign = (uint16_t) ((w >> 16) & 0x8000u);
    uint32_t a = w & 0x7fffffffu;

    if (a > 0x7f800000u)                /* NaN */
        return (ggml_fp16_t) (sign | 0x7e00u);
    if (a >= 0x477ff000u)               /* >= 65520: past the halfway point above 65504 */
        return (ggml_fp16_t) (sign | 0x7c00u);

    if (a >= 0x38800000u) {
        /*
         * Normal result (|f| >= 2^-14).  Rebias the exponent from 127 to
         * 15 in place, then round the 13 dropped mantissa bits: adding
         * 0xfff plus the lowest kept bit carries into the kept bits exactly
         * when the dropped part is above half, or equal to half with an odd
         * kept part.  A carry out of the mantissa bumps the exponent, which
         * is the correct result, and cannot reach infinity here.
         */
        uint32_t r = a - (112u << 23);
        r += 0x0fffu + ((r >> 13) & 1u);
        return (ggml_fp16_t) (sign | (uint16_t) (r >> 13));
    }

    if (a <= 0x33000000u)               /* <= 2^-25: rounds to (signed) zero */
        return (ggml_fp16_t) sign;

    /*
     * Subnormal result: the value is m * 2^(e - 150) with the implicit bit
     * restored in m; in units of the smallest subnormal (2^-24) that is
     * m >> (126 - e).  Here e is 102..112 so the shift is 14..24.  Rounding
     * up from 0x3ff gives 0x400, the smallest normal, which is correct.
     */
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x007fffffu) | 0x00800000u;
    uint32_t shift = 126u - e;
    uint32_t q = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (q & 1u)))
        q++;
    return (ggml_fp16_t) (sign | (uint16_t) q);
}

/* bfloat16 -> binary32; exact. */
static inline float ggml__bf16_to_fp32(ggml_bf16_t h)
{
    return ggml__fp32_from_bits((uint32_t) h.bits << 16);
}

/* binary32 -> bfloat16, round to nearest even (see the contract above). */
static inline ggml_bf16_t ggml__fp32_to_bf16(float f)
{
    uint32_t w = ggml__fp32_bits(f);
    ggml_bf16_t h;

    if ((w & 0x7fffffffu) > 0x7f800000u) {
        /* NaN: truncate, then set the quiet bit so a payload in the
           dropped half cannot turn it into infinity */
        h.bits = (uint16_t) ((w >> 16) | 0x0040u);
        return h;
    }
    /* add just under half an ulp, plus one when the kept part is odd */
    h.bits = (uint16_t) ((w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
    return h;
}

#endif
