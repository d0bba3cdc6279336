/*
 * small-quants-ref.h - decoders for the tests, written from the format
 * definitions (ggml 0.21.0's layouts) of MXFP4, NVFP4, Q1_0, Q2_0, IQ4_NL
 * and Q8_0, in double:
 *   MXFP4   e, 16 nibble bytes (low: j < 16, high: j >= 16);
 *           x = E2M1(q) * 2^(e - 127)
 *   NVFP4   d[4] UE4M3, 32 nibble bytes, 8 per 16-value sub-block (low:
 *           j < 8, high: j >= 8); x = E2M1(q) * UE4M3(d[s])
 *   Q1_0    d, 16 bytes of bits (bit j % 8 of byte j / 8): x = +-d
 *   Q2_0    d, 16 bytes of 2-bit codes (bits 2 (j % 4) of byte j / 4):
 *           x = (q - 1) * d
 *   IQ4_NL  d, nibbles as MXFP4: x = d * level[q]
 *   Q8_0    d, 32 int8: x = d * q
 * E2M1 magnitudes by code 0..7: 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 the sign.
 * Include after tap.h.
 */
#ifndef GGML_BACKEND_TESTS_SMALL_QUANTS_REF_H
#define GGML_BACKEND_TESTS_SMALL_QUANTS_REF_H

static const double e2m1[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
static const double iq4nl_level[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };

static double fp4(int q)
{
    return (q & 8 ? -1 : 1) * e2m1[q & 7];
}

static double half_at(const uint8_t *p)
{
    return ggml_fp16_to_fp32((ggml_fp16_t) (p[0] | p[1] << 8));
}

/* UE4M3 as ggml 0.21.0 reads it: the top bit ignored, 0x7f read as 0. */
static double ue4m3(uint8_t b)
{
    if (b == 0x7f)
        return 0;
    const int e = (b >> 3) & 15, m = b & 7;
    return e == 0 ? ldexp(m, -9) : ldexp(1 + m / 8.0, e - 7);
}

/* Value i of a row of type t, in double. */
static double small_ref_value(enum ggml_type t, const uint8_t *row, int64_t i)
{
    const int64_t qk = ggml_blck_size(t), j = i % qk;
    const uint8_t *b = row + (i / qk) * ggml_type_size(t);
    switch (t) {
    case GGML_TYPE_MXFP4: {
        const int q = j < 16 ? b[1 + j] & 15 : b[1 + j - 16] >> 4;
        return fp4(q) * ldexp(1.0, b[0] - 127);
    }
    case GGML_TYPE_NVFP4: {
        const int s = (int) j / 16, k = (int) j % 16;
        const int q = k < 8 ? b[4 + 8 * s + k] & 15 : b[4 + 8 * s + k - 8] >> 4;
        return fp4(q) * ue4m3(b[s]);
    }
    case GGML_TYPE_Q1_0:
        return (b[2 + j / 8] >> (j % 8)) & 1 ? half_at(b) : -half_at(b);
    case GGML_TYPE_Q2_0:
        return (((b[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * half_at(b);
    case GGML_TYPE_IQ4_NL: {
        const int q = j < 16 ? b[2 + j] & 15 : b[2 + j - 16] >> 4;
        return iq4nl_level[q] * half_at(b);
    }
    case GGML_TYPE_Q8_0:
        return (int8_t) b[2 + j] * half_at(b);
    default:
        return NAN;
    }
}

#endif
