/*
 * test-kernels.c - every kernel level this machine runs, entry by entry,
 * against the generic level and against double-precision references
 * written here.
 *
 * Linked with the library's internals (libggml-backend-core.la): builds
 * the table of each level with ggml__kernels_build.  Levels this build
 * lacks or this CPU cannot run are skipped with the reason.
 *
 * What is checked, on odd lengths (1, 15, 31, 33, 257, ...) and with
 * pointers aligned only as their element type needs (4 bytes for F32, 2
 * for F16, BF16 and blocks), never to a vector's width:
 *   - vec_dot of every type: within a bound of the reference dot product
 *     of the decoded rows (block layouts decoded here, from ggml's file
 *     format), relative to the sum of |products|; the K-quants' equal to
 *     the generic level's bit for bit;
 *   - axpy (F32, F16): within two roundings of the double result;
 *   - from_float (F16, BF16, Q8_0, Q8_1, ...) and to_float (F16, BF16):
 *     bit for bit equal to the generic level, on random values, rounding
 *     ties and special values; every binary16 and bfloat16 input
 *     exhaustively for to_float;
 *   - unary and glu entries (exp, tanh, erfc approximations): within the
 *     relative bounds their comments state, against double precision over
 *     a sweep of the whole float line (tiny, huge, +-0, +-inf, NaN), in
 *     rows of odd lengths, in place and not (the generic level's entries
 *     are the ops' libm row functions, checked by the op tests);
 *   - reduce_max, softmax_exp_sum, scale, sum, sum_sq, sum_sq_dev, the
 *     binary rows: against double precision (the binary rows and scale
 *     bit for bit) and against the generic level.
 *   - transpose32 and transpose16: every element where a transpose
 *     written here puts it, bit for bit, padding between rows untouched,
 *     on shapes that are not multiples of any tile, strides with gaps;
 *   - gemm_tile, gemm_bf16_tile and qgemm_tile: every partial tile against double
 *     precision (the K-quants' tiles against the generic vec_dot, bit
 *     for bit), nothing outside the tile written.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-cpu.h"
#include "tap.h"
#include "quants-impl.h"
#include "small-quants-ref.h"
#include "cpu-private.h"
#include "simd/kernels.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t) (rng_state >> 16);
}

/* Uniform in [-1, 1). */
static float rng_unit(void)
{
    return (float) ((double) rng_u32() / 2147483648.0 - 1.0);
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t) (p[0] | p[1] << 8);
}

static double f16(const uint8_t *p)
{
    return ggml_fp16_to_fp32(rd16(p));
}

/* ------------------------------------------------------ reference decoders */

/* Block size in bytes of the formats decoded below. */
static size_t block_bytes(enum ggml_type t)
{
    switch (t) {
    case GGML_TYPE_Q4_0: return 18;
    case GGML_TYPE_Q4_1: return 20;
    case GGML_TYPE_Q5_0: return 22;
    case GGML_TYPE_Q5_1: return 24;
    case GGML_TYPE_Q8_0: return 34;
    case GGML_TYPE_Q8_1: return 36;
    case GGML_TYPE_Q4_K: return 144;
    case GGML_TYPE_Q5_K: return 176;
    case GGML_TYPE_Q6_K: return 210;
    case GGML_TYPE_Q2_K: return 84;
    case GGML_TYPE_Q3_K: return 110;
    case GGML_TYPE_Q8_K: return 292;
    case GGML_TYPE_TQ1_0: return 54;
    case GGML_TYPE_TQ2_0: return 66;
    case GGML_TYPE_IQ4_XS: return 136;
    case GGML_TYPE_IQ1_S: return 50;
    case GGML_TYPE_IQ1_M: return 56;
    case GGML_TYPE_IQ3_XXS: return 98;
    case GGML_TYPE_IQ3_S: return 110;
    case GGML_TYPE_IQ2_XXS: return 66;
    case GGML_TYPE_IQ2_XS:  return 74;
    case GGML_TYPE_IQ2_S:   return 82;
    default:             return 0;
    }
}

/*
 * Value j of row x of type t, in double, from ggml's layouts:
 *   Q4_0 d, 16 bytes of nibbles (low: j < 16, high: j >= 16), (q - 8) * d
 *   Q4_1 d, m, nibbles: q * d + m
 *   Q5_0 d, 4 bytes of fifth bits, nibbles: (q - 16) * d
 *   Q5_1 d, m, fifth bits, nibbles: q * d + m
 *   Q8_0 d, 32 int8: q * d;  Q8_1 d, s, 32 int8: q * d
 * and of the 256-value K-quants (k_value below).
 */
/*
 * Value i of a K-quant row:
 *   Q4_K d, dmin, 12 bytes of 6-bit scales sc and mins mn (sub-block s < 4:
 *        low 6 bits of bytes s and s + 4; s >= 4: nibbles of byte s + 4,
 *        high bits in the top 2 bits of bytes s - 4 and s), 128 bytes of
 *        nibbles (value 64 c + l: byte 32 c + l % 32, low nibble for l < 32):
 *        d * sc * q - dmin * mn;
 *   Q5_K as Q4_K with 32 bytes of fifth bits before the nibbles: bit 4 of
 *        value v is bit v / 32 of byte v % 32 of them;
 *   Q6_K 128 bytes ql, 64 bytes qh, 16 int8 scales, d: in half h, value
 *        32 p + l has low bits in ql[64 h + l + 32 (p & 1)] (high nibble for
 *        p >= 2) and high bits at bit 2 p of qh[32 h + l]: d * sc * (q - 32);
 *   Q8_K float d, 256 int8, 16 int16 sums: q * d;
 *   Q2_K 16 bytes of scale (low nibble) and min (high nibble) per 16
 *        values, 64 bytes of 2-bit codes (value 128 h + 32 p + l: bits
 *        2 p of byte 16 + 32 h + l), d at 80, dmin at 82:
 *        d * sc * q - dmin * mn;
 *   Q3_K 32 bytes hmask, 64 bytes of 2-bit codes (as Q2_K's, at 32), 12
 *        bytes of 6-bit scales, d at 108: value v's third bit is bit v / 32
 *        of hmask[v % 32]; scale s (0..15) has its low nibble in nibble s / 8
 *        of byte 96 + s % 8, its top two bits at bit 2 (s / 4) of byte
 *        104 + s % 4: d * (scale - 32) * (q - 4), q the 3-bit code.
 *   TQ1_0 48 + 4 bytes of base-3 digits, d: value v's byte is v % 32
 *        (v < 160), 32 + (v - 160) % 16 (v < 240) or 48 + (v - 240) % 4, its
 *        digit n the quotient of v - first value of the group by the group's
 *        byte count; digit n of byte B is floor(3 ((B 3^n) mod 256) / 256):
 *        d * (digit - 1);
 *   TQ2_0 64 bytes, d: value v in bits 2 ((v % 128) / 32) of byte
 *        32 (v / 128) + v % 32: d * (q - 1);
 *   IQ4_XS d, 16-bit high scale bits, 4 bytes of low scale nibbles, 128
 *        bytes of nibbles (sub-block s = v / 32: bytes 16 s.., low nibble for
 *        v % 32 < 16); scale ls = nibble s % 2 of byte s / 2 | bits 2 s of
 *        the 16-bit word << 4: d * (ls - 32) * iq4nl_level[q].
 */
/* The IQ1 grid (format data; test-quants-iq1 checks the decoders that use
   it against upstream's floats). */
extern const uint16_t ggml__iq1_grid[2048];

/*
 * Value v of an IQ1_S or IQ1_M block b, group g = v / 8, grid point index
 * (byte qs[g] | 3 high bits << 8) with v's level l = bits 2 (v % 8) .. +1 of
 * the grid entry minus 1:  value = d * (2 s + 1) * (l +- 1/8).
 *   IQ1_S d at 0, qs at 2, 16-bit qh[8] at 34: qh[g / 4] holds the high
 *        index bits of g at bit 3 (g % 4), s at bit 12, the shift's sign
 *        (set: -1/8) at bit 15;
 *   IQ1_M qs at 0, qh at 32 (nibble g: high index bits 0..2, sign bit 3;
 *        low nibble of byte g / 2 for even g), four 16-bit scale words at
 *        48: s of 16 values h at bit 3 (h % 4) of word h / 4, bits 4 w ..
 *        4 w + 3 of the binary16 d in the top nibble of word w.
 */
static double iq1_value(enum ggml_type t, const uint8_t *b, int v)
{
    const int g = v / 8;
    unsigned index, s;
    bool negative;
    uint16_t d_bits;
    if (t == GGML_TYPE_IQ1_S) {
        const unsigned qh = rd16(b + 34 + 2 * (g / 4));
        index = b[2 + g] | ((qh >> (3 * (g % 4))) & 7) << 8;
        s = (qh >> 12) & 7;
        negative = qh >> 15;
        d_bits = rd16(b);
    } else {
        const unsigned nibble = (b[32 + g / 2] >> (4 * (g % 2))) & 15;
        index = b[g] | (nibble & 7) << 8;
        negative = nibble >> 3;
        s = (rd16(b + 48 + 2 * (v / 64)) >> (3 * (v / 16 % 4))) & 7;
        d_bits = 0;
        for (int w = 0; w < 4; w++)
            d_bits |= (uint16_t) ((rd16(b + 48 + 2 * w) >> 12) << (4 * w));
    }
    const int level = (int) ((ggml__iq1_grid[index] >> (2 * (v % 8))) & 3) - 1;
    return ggml_fp16_to_fp32(d_bits) * (2.0 * s + 1.0) * (level + (negative ? -0.125 : 0.125));
}

/*
 * The IQ3 codebooks are format data (upstream ggml's tables, which
 * test-quants-iq3 checks through upstream-decoded blocks); the library's
 * copies are used here.
 */
extern const uint32_t ggml__iq3_xxs_grid[256];
extern const uint32_t ggml__iq3_s_grid[512];

/*
 * Value v of an IQ3 block (the 256-value formats with a codebook):
 *   IQ3_XXS d, 64 codebook indices (group of four g at byte 2 + g), eight
 *           32-bit words (sub-block s at byte 66 + 4 s): bits 7 h .. 7 h + 6
 *           signs of values 8 h .. 8 h + 6 of the sub-block, value 8 h + 7
 *           negative when those seven hold an odd number of ones; bits
 *           28..31 l: d (l + 1/2) / 2 * magnitude;
 *   IQ3_S   d, 64 low index bytes (at 2 + g), 8 bytes of ninth bits
 *           (bit g % 8 of byte 66 + g / 8), 32 sign bytes (bit v % 8 of byte
 *           74 + v / 8), 4 scale bytes (nibble s % 2 of byte 106 + s / 2):
 *           d (2 l + 1) * magnitude.
 */
static double iq3_value(enum ggml_type t, const uint8_t *b, int v)
{
    const int s = v / 32, g = v / 4;
    if (t == GGML_TYPE_IQ3_XXS) {
        const uint32_t word = (uint32_t) b[66 + 4 * s] | (uint32_t) b[67 + 4 * s] << 8 |
                              (uint32_t) b[68 + 4 * s] << 16 | (uint32_t) b[69 + 4 * s] << 24;
        const uint32_t seven = (word >> (7 * (v % 32 / 8))) & 0x7f;
        int ones = 0;
        for (int j = 0; j < 7; j++)
            ones += (int) ((seven >> j) & 1);
        const bool negative = v % 8 == 7 ? ones % 2 == 1 : ((seven >> (v % 8)) & 1) != 0;
        const double magnitude = (ggml__iq3_xxs_grid[b[2 + g]] >> (8 * (v % 4))) & 0xff;
        const double value = f16(b) * ((word >> 28) + 0.5) * 0.5 * magnitude;
        return negative ? -value : value;
    }
    const int index = b[2 + g] | ((b[66 + g / 8] >> (g % 8)) & 1) << 8;
    const double magnitude = (ggml__iq3_s_grid[index] >> (8 * (v % 4))) & 0xff;
    const int l = (b[106 + s / 2] >> (4 * (s % 2))) & 15;
    const double value = f16(b) * (2 * l + 1) * magnitude;
    return (b[74 + v / 8] >> (v % 8)) & 1 ? -value : value;
}

static double k_value(enum ggml_type t, const uint8_t *x, int64_t i)
{
    const uint8_t *b = x + i / 256 * block_bytes(t);
    const int v = (int) (i % 256);
    switch (t) {
    case GGML_TYPE_Q4_K:
    case GGML_TYPE_Q5_K: {
        const int s = v / 32;
        const uint8_t *sc8 = b + 4;
        const int sc = s < 4 ? sc8[s] & 63 : (sc8[s + 4] & 15) | (sc8[s - 4] >> 6) << 4;
        const int mn = s < 4 ? sc8[s + 4] & 63 : (sc8[s + 4] >> 4) | (sc8[s] >> 6) << 4;
        const int qs_at = t == GGML_TYPE_Q4_K ? 16 : 48;   /* q5_K: 32 bytes of fifth bits at 16 */
        const uint8_t byte = b[qs_at + 32 * (v / 64) + v % 32];
        int q = v % 64 < 32 ? byte & 15 : byte >> 4;
        if (t == GGML_TYPE_Q5_K)
            q |= ((b[16 + v % 32] >> (v / 32)) & 1) << 4;
        return f16(b) * sc * q - f16(b + 2) * mn;
    }
    case GGML_TYPE_Q6_K: {
        const int h = v / 128, p = v % 128 / 32, l = v % 32;
        const uint8_t lo = b[64 * h + l + 32 * (p & 1)];
        const int q = (p < 2 ? lo & 15 : lo >> 4) | ((b[128 + 32 * h + l] >> (2 * p)) & 3) << 4;
        return f16(b + 208) * (int8_t) b[192 + v / 16] * (q - 32);
    }
    case GGML_TYPE_Q8_K: {
        float d;
        memcpy(&d, b, sizeof d);
        return (double) d * (int8_t) b[4 + v];
    }
    case GGML_TYPE_Q2_K:
    case GGML_TYPE_Q3_K: {
        const int h = v / 128, p = v % 128 / 32, l = v % 32;
        const int qs_at = t == GGML_TYPE_Q2_K ? 16 : 32;
        const int q = (b[qs_at + 32 * h + l] >> (2 * p)) & 3;
        if (t == GGML_TYPE_Q2_K)
            return f16(b + 80) * (b[v / 16] & 15) * q - f16(b + 82) * (b[v / 16] >> 4);
        const int s = v / 16;
        const int scale = ((b[96 + s % 8] >> (4 * (s / 8))) & 15) | ((b[104 + s % 4] >> (2 * (s / 4))) & 3) << 4;
        const int q3 = q | ((b[v % 32] >> (v / 32)) & 1) << 2;
        return f16(b + 108) * (scale - 32) * (q3 - 4);
    }
    case GGML_TYPE_TQ1_0: {
        const int first = v < 160 ? 0 : v < 240 ? 160 : 240, nbytes = v < 160 ? 32 : v < 240 ? 16 : 4;
        const int at = (v < 160 ? 0 : v < 240 ? 32 : 48) + (v - first) % nbytes, digit = (v - first) / nbytes;
        unsigned power = 1;
        for (int n = 0; n < digit; n++)
            power *= 3;
        const unsigned trit = 3u * ((b[at] * power) % 256u) / 256u;
        return f16(b + 52) * ((int) trit - 1);
    }
    case GGML_TYPE_TQ2_0: {
        const int q = (b[32 * (v / 128) + v % 32] >> (2 * (v % 128 / 32))) & 3;
        return f16(b + 64) * (q - 1);
    }
    case GGML_TYPE_IQ4_XS: {
        const int s = v / 32;
        const int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 15) | ((rd16(b + 2) >> (2 * s)) & 3) << 4;
        const uint8_t byte = b[8 + 16 * s + v % 16];
        return f16(b) * (ls - 32) * iq4nl_level[v % 32 < 16 ? byte & 15 : byte >> 4];
    }
    case GGML_TYPE_IQ1_S:
    case GGML_TYPE_IQ1_M:
        return iq1_value(t, b, v);
    case GGML_TYPE_IQ3_XXS:
    case GGML_TYPE_IQ3_S:
        return iq3_value(t, b, v);
    default:
        return NAN;
    }
}

/*
 * Value i of an IQ2 row (256-value blocks, binary16 d first): group
 * g = v / 8 of sub-block b = v / 32 has a lattice point P (the library's
 * point lists: coordinate c of P is 8, 25 or 43 for the 2-bit code
 * (P >> 2c) & 3), eight signs and a 4-bit scale s:
 *   XXS: 32-bit words w0, w1 at byte 2 + 8b: P = points[byte g % 4 of w0],
 *        signs: bits 7 (g % 4).. of w1 (7 bits, the eighth their parity),
 *        s = w1 >> 28;
 *   XS:  16-bit q at byte 2 + 2g: P = points[q & 511], 7 signs q >> 9,
 *        s: nibble (g % 4) / 2 of byte 66 + b;
 *   S:   P = points[byte 2 + g | ((byte 66 + b) >> 2 (g % 4) & 3) << 8],
 *        signs byte 34 + g, s as XS at byte 74 + b;
 * value d (2 s + 1) / 8 * coordinate, negated for a set sign.
 */
static double iq2_value(enum ggml_type t, const uint8_t *x, int64_t i)
{
    const uint8_t *b = x + i / 256 * block_bytes(t);
    const int v = (int) (i % 256), g = v / 8, c = v % 8, sub = v / 32;
    unsigned point, signs, s;
    if (t == GGML_TYPE_IQ2_XXS) {
        const uint8_t *w = b + 2 + 8 * sub;
        const uint32_t w1 = (uint32_t) w[4] | (uint32_t) w[5] << 8 | (uint32_t) w[6] << 16 | (uint32_t) w[7] << 24;
        point = ggml__iq2xxs_points[w[g % 4]];
        signs = (w1 >> (7 * (g % 4))) & 127;
        s = w1 >> 28;
    } else if (t == GGML_TYPE_IQ2_XS) {
        const unsigned q = rd16(b + 2 + 2 * g);
        point = ggml__iq2xs_points[q & 511];
        signs = q >> 9;
        s = (b[66 + sub] >> (4 * ((g % 4) / 2))) & 15;
    } else {
        point = ggml__iq2s_points[b[2 + g] | ((b[66 + sub] >> (2 * (g % 4))) & 3u) << 8];
        signs = b[34 + g];
        s = (b[74 + sub] >> (4 * ((g % 4) / 2))) & 15;
    }
    if (t != GGML_TYPE_IQ2_S) {
        int n_neg = 0;
        for (int j = 0; j < 7; j++)
            n_neg += (signs >> j) & 1;
        signs |= (unsigned) (n_neg & 1) << 7;
    }
    static const int level[3] = { 8, 25, 43 };
    const double value = f16(b) * (2.0 * s + 1.0) / 8.0 * level[(point >> (2 * c)) & 3];
    return (signs >> c) & 1 ? -value : value;
}

static double ref_value(enum ggml_type t, const uint8_t *x, int64_t i)
{
    if (t == GGML_TYPE_IQ2_XXS || t == GGML_TYPE_IQ2_XS || t == GGML_TYPE_IQ2_S)
        return iq2_value(t, x, i);
    if (ggml_blck_size(t) == 256)
        return k_value(t, x, i);

    const int64_t blk = i / 32, j = i % 32;
    const uint8_t *b = x + blk * block_bytes(t);
    switch (t) {
    case GGML_TYPE_F32: {
        float v;
        memcpy(&v, x + 4 * i, sizeof v);
        return v;
    }
    case GGML_TYPE_F16:
        return f16(x + 2 * i);
    case GGML_TYPE_BF16: {
        const ggml_bf16_t h = { rd16(x + 2 * i) };
        return ggml_bf16_to_fp32(h);
    }
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_1: {
        const uint8_t *qs = b + (t == GGML_TYPE_Q4_0 ? 2 : 4);
        const int q = j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
        return t == GGML_TYPE_Q4_0 ? (q - 8) * f16(b) : q * f16(b) + f16(b + 2);
    }
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1: {
        const uint8_t *qh = b + (t == GGML_TYPE_Q5_0 ? 2 : 4), *qs = qh + 4;
        const uint32_t bits = (uint32_t) qh[0] | (uint32_t) qh[1] << 8 | (uint32_t) qh[2] << 16 | (uint32_t) qh[3] << 24;
        const int q = (j < 16 ? qs[j] & 15 : qs[j - 16] >> 4) | (int) ((bits >> j) & 1) << 4;
        return t == GGML_TYPE_Q5_0 ? (q - 16) * f16(b) : q * f16(b) + f16(b + 2);
    }
    case GGML_TYPE_Q8_0:
        return (int8_t) b[2 + j] * f16(b);
    case GGML_TYPE_Q8_1:
        return (int8_t) b[4 + j] * f16(b);
    case GGML_TYPE_MXFP4: case GGML_TYPE_NVFP4: case GGML_TYPE_Q1_0:
    case GGML_TYPE_Q2_0: case GGML_TYPE_IQ4_NL:
        return small_ref_value(t, x, i);
    default:
        return NAN;
    }
}

/*
 * The reference of vec_dot(x of type t, y of vdt): the sum of products of
 * the decoded values, with the minimum's term of Q4_1/Q5_1 blocks taken
 * as m * s (s: the Q8_1 block's stored sum) as the block formats define
 * the integer product.  *mag receives the sum of |products|.
 */
static double ref_dot(enum ggml_type t, enum ggml_type vdt, const uint8_t *x, const uint8_t *y, int64_t n,
                      double *mag)
{
    double sum = 0.0, m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double p = ref_value(t, x, i) * ref_value(vdt, y, i);
        sum += p;
        m += fabs(p);
    }
    if (vdt == GGML_TYPE_Q8_1)
        for (int64_t blk = 0; blk < n / 32; blk++) {
            const uint8_t *xb = x + blk * block_bytes(t), *yb = y + blk * 36;
            double qsum = 0.0;
            for (int j = 0; j < 32; j++)
                qsum += (int8_t) yb[4 + j];
            sum += f16(xb + 2) * (f16(yb + 2) - f16(yb) * qsum);
        }
    *mag = m;
    return sum;
}

/* ------------------------------------------------------------------ rows */

/* A row of n values of type t made from random floats in [-1, 1), at a
   pointer the element's alignment past a 64-byte boundary (4 bytes for
   F32 and Q8_K, 2 for the others). */
struct row {
    uint8_t *mem, *data;
    float *values;
};

static struct row make_row(const struct ggml__cpu_kernels *generic, enum ggml_type t, int64_t n)
{
    struct row r;
    const size_t bytes = ggml_row_size(t, n);
    r.mem = aligned_alloc(64, (bytes + 64 + 63) / 64 * 64);
    r.data = r.mem + (t == GGML_TYPE_F32 || t == GGML_TYPE_Q8_K ? 4 : 2);   /* q8_K: a float d */
    r.values = malloc((size_t) (n + 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        r.values[i] = rng_unit();
    if (generic->from_float[t] != NULL) {
        generic->from_float[t](r.values, r.data, n);
    } else {   /* the lattice types: the public quantizer, importance weights 1 */
        float *ones = malloc((size_t) n * sizeof *ones);
        for (int64_t i = 0; i < n; i++)
            ones[i] = 1.0f;
        ggml_quantize_chunk(t, r.values, r.data, 0, 1, n, ones);
        free(ones);
    }
    return r;
}

static void free_row(struct row *r)
{
    free(r->mem);
    free(r->values);
}

static const enum ggml_type dot_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0,
    GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
    GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_IQ4_NL,
    GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
    GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0, GGML_TYPE_IQ4_XS,
    GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M,
    GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
    GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
};

/* Types whose vec_dot must give the generic level's bits at every level
   (integer block sums scaled in a fixed order). */
static bool same_bits_as_generic(enum ggml_type t)
{
    return t == GGML_TYPE_MXFP4 || t == GGML_TYPE_NVFP4 || t == GGML_TYPE_Q1_0 || t == GGML_TYPE_Q2_0 ||
           t == GGML_TYPE_IQ4_NL;
}

static enum ggml_type vdt_of(enum ggml_type t)
{
    return ggml_blck_size(t) == 256                   ? GGML_TYPE_Q8_K
         : t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_1 ? GGML_TYPE_Q8_1
         : ggml_is_quantized(t)                       ? GGML_TYPE_Q8_0
                                                      : t;
}

/* The types with a grid or codebook of points and sign bits. */
static bool lattice_type(enum ggml_type t)
{
    return t == GGML_TYPE_IQ1_S || t == GGML_TYPE_IQ1_M || t == GGML_TYPE_IQ2_XXS || t == GGML_TYPE_IQ2_XS ||
           t == GGML_TYPE_IQ2_S || t == GGML_TYPE_IQ3_XXS || t == GGML_TYPE_IQ3_S;
}

/* Every bit of a lattice type's block set but those of its binary16 scale d
   (first for all but IQ1_M, whose d is the top nibbles of its four 16-bit
   scale words at 48): the last grid points, every sign negative, every
   sub-block scale at its largest. */
static void set_lattice_extremes(enum ggml_type t, uint8_t *block)
{
    if (t == GGML_TYPE_IQ1_M) {
        memset(block, 0xff, 48);
        for (int w = 0; w < 4; w++) {
            block[48 + 2 * w] = 0xff;
            block[49 + 2 * w] |= 0x0f;
        }
    } else {
        memset(block + 2, 0xff, block_bytes(t) - 2);
    }
}

/* vec_dot of each type on lengths of every remainder. */
static void check_vec_dot(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const int64_t float_lengths[] = { 1, 7, 8, 15, 31, 32, 33, 64, 257, 1000, 4096 };
    static const int64_t block_lengths[] = { 32, 64, 96, 288, 384, 1024, 4096 };
    static const int64_t k_lengths[] = { 256, 512, 768, 1280, 4096 };
    for (size_t ti = 0; ti < sizeof dot_types / sizeof dot_types[0]; ti++) {
        const enum ggml_type t = dot_types[ti], vdt = vdt_of(t);
        const bool blocks = ggml_is_quantized(t), k_blocks = ggml_blck_size(t) == 256;
        const int64_t *lengths = k_blocks ? k_lengths : blocks ? block_lengths : float_lengths;
        const size_t n_lengths = k_blocks ? sizeof k_lengths / sizeof k_lengths[0]
                               : blocks   ? sizeof block_lengths / sizeof block_lengths[0]
                                          : sizeof float_lengths / sizeof float_lengths[0];
        double worst = 0.0;
        bool all_ok = k->vec_dot[t] != NULL;
        for (size_t li = 0; all_ok && li < n_lengths; li++) {
            const int64_t n = lengths[li];
            if (n % ggml_blck_size(t) != 0)
                continue;
            struct row x = make_row(generic, t, n), y = make_row(generic, vdt, n);
            /* then, for the bit-identical types and the 256-value ones, y's first block at the
               extremes of int8, -128 too; then for the lattice types x's first block too */
            const int passes = lattice_type(t) ? 3 : same_bits_as_generic(t) || k_blocks ? 2 : 1;
            for (int pass = 0; pass < passes; pass++) {
                if (pass == 2)
                    set_lattice_extremes(t, x.data);
                if (pass == 1 && !k_blocks)
                    for (int j = 0; j < 32; j++)
                        ((int8_t *) y.data)[2 + j] = (int8_t) (j % 3 == 0 ? -128 : j % 3 == 1 ? 127 : -127);
                if (pass == 1 && k_blocks) {   /* q8_K: codes at 4, the sums of 16 codes at 260 */
                    for (int g = 0; g < 16; g++) {
                        int16_t group = 0;
                        for (int j = 16 * g; j < 16 * g + 16; j++) {
                            const int8_t v = (int8_t) (j % 3 == 0 ? -128 : j % 3 == 1 ? 127 : -127);
                            ((int8_t *) y.data)[4 + j] = v;
                            group = (int16_t) (group + v);
                        }
                        memcpy(y.data + 260 + 2 * g, &group, sizeof group);
                    }
                }
                double mag;
                const double want = ref_dot(t, vdt, x.data, y.data, n, &mag);
                float got = NAN, got_generic = NAN;
                k->vec_dot[t]((int) n, &got, 0, x.data, 0, y.data, 0, 1);
                generic->vec_dot[t]((int) n, &got_generic, 0, x.data, 0, y.data, 0, 1);
                /* single-precision sums in partial sums: far below 1e-5 of the magnitude */
                const double bound = 1e-5 * mag + 1e-30;
                const double err = fabs(got - want) / (mag + 1e-30);
                worst = err > worst ? err : worst;
                if (!(fabs(got - want) <= bound) || !(fabs(got_generic - want) <= bound) ||
                    ((same_bits_as_generic(t) || k_blocks) && memcmp(&got, &got_generic, sizeof got) != 0)) {
                    static const char *const pass_names[] = { "", " (int8 extremes)", " (x and int8 extremes)" };
                    tap_diag("%s n=%lld%s: level %.9g, generic %.9g, reference %.9g (|products| %.3g)",
                             ggml_type_name(t), (long long) n, pass_names[pass], got, got_generic, want, mag);
                    all_ok = false;
                }
            }
            free_row(&x);
            free_row(&y);
        }
        ok(all_ok, "%s: vec_dot %s x %s within 1e-5 of |products| of the reference (worst %.2g)%s",
           ggml__isa_name(k->level), ggml_type_name(t), ggml_type_name(vdt), worst,
           same_bits_as_generic(t) || k_blocks ? ", the generic level's bits" : "");
    }
}

/*
 * vec_dot_rows: 1..4 rows at a stride against one y, each within vec_dot's
 * bound of its reference and close to the level's and the generic vec_dot
 * of the same row (the K-quants: the generic vec_dot's bits).
 */
static void check_vec_dot_rows(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    /* (47: a step of 32, one of 16 and a partial vector at the AVX-512 level) */
    static const int64_t float_lengths[] = { 1, 15, 16, 33, 47, 257, 4096 };
    static const int64_t block_lengths[] = { 32, 96, 288, 4096 };
    static const int64_t k_lengths[] = { 256, 512, 768, 1280, 4096 };
    for (size_t ti = 0; ti < sizeof dot_types / sizeof dot_types[0]; ti++) {
        const enum ggml_type t = dot_types[ti], vdt = vdt_of(t);
        if (k->vec_dot_rows[t] == NULL)
            continue;
        const bool blocks = ggml_is_quantized(t), k_blocks = ggml_blck_size(t) == 256;
        const int64_t *lengths = k_blocks ? k_lengths : blocks ? block_lengths : float_lengths;
        bool all_ok = true;
        const size_t n_lengths = k_blocks ? sizeof k_lengths / sizeof k_lengths[0]
                               : blocks   ? sizeof block_lengths / sizeof block_lengths[0]
                                          : sizeof float_lengths / sizeof float_lengths[0];
        for (size_t li = 0; all_ok && li < n_lengths; li++) {
            const int64_t n = lengths[li];
            /* rows not packed: a stride of their own (a multiple of the element's alignment) */
            const size_t row_bytes = ggml_row_size(t, n) + 12;
            /* room for the four rows and their gaps: one block of 256 or two of 32 more */
            struct row x = make_row(generic, t, 4 * n + (k_blocks ? 256 : 64)), y = make_row(generic, vdt, n);
            for (int r = 1; r < 4; r++)
                generic->from_float[t](x.values + r * n, x.data + r * row_bytes, n);
            if (t == GGML_TYPE_Q8_0) {
                /* the extremes of the weights' bytes in row 1's first block: -128 too, which no encoder makes */
                int8_t *qs = (int8_t *) (x.data + row_bytes + sizeof(ggml_fp16_t));
                for (int j = 0; j < 32; j++)
                    qs[j] = (int8_t) (j % 3 == 0 ? -128 : j % 3 == 1 ? 127 : -127);
            }
            if (k_blocks) {
                /* row 1's first block at the extremes: every code and (q4_K, q5_K) every 6-bit scale
                   and minimum at its largest (all bits set), q6_K's scales alternately 127 and -128 */
                uint8_t *blk = x.data + row_bytes;
                if (t == GGML_TYPE_Q6_K) {
                    memset(blk, 0xff, 192);
                    for (int j = 0; j < 16; j++)
                        blk[192 + j] = j % 2 ? 0x80 : 0x7f;
                } else {
                    memset(blk + 4, 0xff, block_bytes(t) - 4);
                }
            }
            for (int nr = 1; nr <= 4 && all_ok; nr++) {
                float s[5] = { NAN, NAN, NAN, NAN, -1.0f };
                k->vec_dot_rows[t]((int) n, s, x.data, row_bytes, y.data, nr);
                all_ok = s[4] == -1.0f && (nr == 4 || s[nr] != s[nr]);   /* nothing written past s[nr - 1] */
                for (int r = 0; r < nr && all_ok; r++) {
                    double mag;
                    const uint8_t *row = x.data + r * row_bytes;
                    const double want = ref_dot(t, vdt, row, y.data, n, &mag);
                    float one = NAN, one_generic = NAN;
                    k->vec_dot[t]((int) n, &one, 0, row, 0, y.data, 0, 1);
                    generic->vec_dot[t]((int) n, &one_generic, 0, row, 0, y.data, 0, 1);
                    /* each is within 1e-5 of |products| of the reference, so within twice that of each other */
                    const double bound = 1e-5 * mag + 1e-30;
                    if (!(fabs(s[r] - want) <= bound) || !(fabs(s[r] - one) <= 2 * bound) ||
                        !(fabs(s[r] - one_generic) <= 2 * bound) ||
                        (k_blocks && memcmp(&s[r], &one_generic, sizeof one_generic) != 0)) {
                        tap_diag("%s n=%lld nr=%d row %d: %.9g, vec_dot %.9g, generic %.9g, reference %.9g",
                                 ggml_type_name(t), (long long) n, nr, r, s[r], one, one_generic, want);
                        all_ok = false;
                    }
                }
            }
            free_row(&x);
            free_row(&y);
        }
        ok(all_ok, "%s: vec_dot_rows %s, 1..4 rows at a stride, within 1e-5 of |products| and near vec_dot%s",
           ggml__isa_name(k->level), ggml_type_name(t), k_blocks ? ", the generic vec_dot's bits" : "");
    }
}

/* from_float[t] of level k equals the generic level's bit for bit on values (n of them). */
static bool same_encoding(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic,
                          enum ggml_type t, const float *values, int64_t n)
{
    const size_t bytes = ggml_row_size(t, n);
    /* 2 bytes past malloc's alignment: the 16-bit element alignment only */
    uint8_t *a = malloc(bytes + 4), *b = malloc(bytes + 4);
    memset(a, 0xa5, bytes + 4);
    memset(b, 0xa5, bytes + 4);
    k->from_float[t](values, a + 2, n);
    generic->from_float[t](values, b + 2, n);
    const bool same = memcmp(a, b, bytes + 4) == 0;
    free(a);
    free(b);
    return same;
}

static void check_from_float(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const enum ggml_type types[] = {
        GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    };
    enum { N = 32 * 40 + 32 };
    float *v = malloc((N + 1) * sizeof *v);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const enum ggml_type t = types[ti];
        const bool blocks = ggml_is_quantized(t);
        bool all_ok = k->from_float[t] != NULL;
        /* random values over many magnitudes */
        for (int i = 0; i < N; i++)
            v[i] = rng_unit() * ldexpf(1.0f, (int) (rng_u32() % 40) - 20);
        for (int64_t n = blocks ? 32 : 1; all_ok && n <= N; n += blocks ? 32 * 13 : 37)
            all_ok = same_encoding(k, generic, t, v + (blocks ? 0 : 1), n - (blocks ? 0 : 1));
        /* quantizer ties: amax 127 gives scale 1, so x.5 values round half away from zero */
        for (int i = 0; i < N; i++)
            v[i] = (float) ((int) (rng_u32() % 254) - 127) + ((i & 1) ? 0.5f : -0.5f);
        for (int i = 0; i < N; i += 32)
            v[i] = i % 64 ? 127.0f : -127.0f;
        all_ok = all_ok && same_encoding(k, generic, t, v, N);
        /* specials: zeros, subnormals, huge values, infinities (NaN only for 16-bit floats) */
        const float specials[] = { 0.0f, -0.0f, 1e-45f, -1e-40f, 6e-8f, 3e-5f, 65504.0f, 65520.0f,
                                   -70000.0f, 3e38f, INFINITY, -INFINITY, 1.0f / 3.0f, 0.1f, 2.5f, -7.5f };
        const int n_specials = (int) (sizeof specials / sizeof specials[0]);
        for (int i = 0; i < N; i++)
            v[i] = specials[(i * 7 + i / 16) % n_specials];
        all_ok = all_ok && same_encoding(k, generic, t, v, N);
        if (!blocks) {
            for (int i = 0; i < N; i++)
                v[i] = (i % 3) ? NAN : -NAN;
            all_ok = all_ok && same_encoding(k, generic, t, v, N);
        } else if (t != GGML_TYPE_Q8_0 && t != GGML_TYPE_Q8_1) {
            /* NaN among values, all-NaN blocks, signed zeros, ties of opposite signs (not Q8: see convert.c) */
            for (int i = 0; i < N; i++) {
                const int block = i / 32;
                v[i] = block % 4 == 0 ? NAN : rng_unit() * 4.0f;
                v[i] = block % 4 == 1 && i % 5 == 0 ? NAN : v[i];
                v[i] = block % 4 == 2 ? ((i % 3) ? 0.0f : -0.0f) : v[i];
                v[i] = block % 4 == 3 && i % 32 == 7 ? -9.0f : block % 4 == 3 && i % 32 == 20 ? 9.0f : v[i];
            }
            all_ok = all_ok && same_encoding(k, generic, t, v, N);
        }
        ok(all_ok, "%s: from_float %s equals generic bit for bit (random, ties, specials, lengths 1..%d)",
           ggml__isa_name(k->level), ggml_type_name(t), N);
    }
    free(v);
}

/* to_float of F16 and BF16 on every one of the 65536 inputs. */
static void check_to_float(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const enum ggml_type types[] = { GGML_TYPE_F16, GGML_TYPE_BF16 };
    enum { N = 65536 };
    uint16_t *in = malloc(N * sizeof *in + 2);
    float *a = malloc(N * sizeof *a + 4), *b = malloc(N * sizeof *b + 4);
    for (int i = 0; i < N; i++)
        in[i] = (uint16_t) i;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const enum ggml_type t = types[ti];
        bool all_ok = k->to_float[t] != NULL;
        /* whole, then odd lengths from odd offsets */
        if (all_ok) {
            k->to_float[t](in, a, N);
            generic->to_float[t](in, b, N);
            all_ok = memcmp(a, b, N * sizeof *a) == 0;
        }
        /* (a[0] and a[n + 1] compared too: nothing written outside the row) */
        for (int n = 1; all_ok && n < 300; n += 17) {
            memset(a, 0, (size_t) (n + 2) * sizeof *a);
            memset(b, 0, (size_t) (n + 2) * sizeof *b);
            k->to_float[t](in + 1000 + n, a + 1, n);
            generic->to_float[t](in + 1000 + n, b + 1, n);
            all_ok = memcmp(a, b, (size_t) (n + 2) * sizeof *a) == 0;
        }
        ok(all_ok, "%s: to_float %s equals generic bit for bit on all 65536 inputs and odd lengths",
           ggml__isa_name(k->level), ggml_type_name(t));
    }
    free(in);
    free(a);
    free(b);
}

/* axpy of F32 and F16 rows: acc + w * x within a few ulps of the double result. */
static void check_axpy(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    static const int64_t lengths[] = { 1, 7, 8, 15, 31, 33, 257 };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const enum ggml_type t = types[ti];
        bool all_ok = k->axpy[t] != NULL;
        for (size_t li = 0; all_ok && li < sizeof lengths / sizeof lengths[0]; li++) {
            const int64_t n = lengths[li];
            struct row x = make_row(generic, t, n);
            float *acc = malloc((size_t) (n + 2) * sizeof *acc), *acc0 = malloc((size_t) (n + 1) * sizeof *acc0);
            for (int64_t i = 0; i < n; i++)
                acc0[i] = rng_unit();
            memcpy(acc + 1, acc0, (size_t) n * sizeof *acc);   /* acc one float off its alignment */
            const float w = rng_unit() * 3.0f;
            acc[0] = acc[n + 1] = -7.0f;   /* nothing written outside the row */
            k->axpy[t](n, acc + 1, x.data, w);
            if (acc[0] != -7.0f || acc[n + 1] != -7.0f) {
                tap_diag("%s n=%lld: wrote outside the row", ggml_type_name(t), (long long) n);
                all_ok = false;
            }
            for (int64_t i = 0; i < n && all_ok; i++) {
                const double xv = ref_value(t, x.data, i), want = acc0[i] + (double) w * xv;
                /* one rounding of the product and one of the sum at most */
                const double bound = 1.2e-7 * (fabs(acc0[i]) + 2.0 * fabs((double) w * xv)) + 1e-38;
                if (!(fabs(acc[1 + i] - want) <= bound)) {
                    tap_diag("%s n=%lld i=%lld: %.9g, reference %.9g", ggml_type_name(t), (long long) n,
                             (long long) i, acc[1 + i], want);
                    all_ok = false;
                }
            }
            free(acc);
            free(acc0);
            free_row(&x);
        }
        ok(all_ok, "%s: axpy %s within two roundings of the double result, lengths 1..257, unaligned",
           ggml__isa_name(k->level), ggml_type_name(t));
    }
}

/* ---------------------------------------------------- element-wise rows */

#define GELU_SQRT_2_OVER_PI 0.79788456080286535588f
#define GELU_COEF_A         0.044715f
#define GELU_QUICK_COEF     1.702f

/* The op's functions in double, of the float input and the op's float constants. */
/* e^a, or +inf where the op's float e^a overflows (x / (1 + e^a) is then a zero, as in the op) */
static double float_exp(double a) { return exp(a) > (double) FLT_MAX ? INFINITY : exp(a); }
static double ref_sigmoid(double x) { return 1.0 / (1.0 + float_exp(-x)); }
static double ref_silu(double x) { return x / (1.0 + float_exp(-x)); }
static double gelu_u(double x) { return (double) GELU_SQRT_2_OVER_PI * x * (1.0 + (double) GELU_COEF_A * x * x); }
static double ref_gelu(double x) { return x / (1.0 + float_exp(-2.0 * gelu_u(x))); }
static double ref_gelu_quick(double x) { return x / (1.0 + float_exp(-(double) GELU_QUICK_COEF * x)); }
static double ref_gelu_erf(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double ref_relu(double x) { return x > 0.0 ? x : 0.0; }
static double ref_abs(double x) { return fabs(x); }
static double ref_neg(double x) { return -x; }

/* The size of the exponent argument rounded in float before exp (error scales with it). */
static double cond_none(double x) { (void) x; return 0.0; }
static double cond_gelu(double x) { return fabs(2.0 * gelu_u(x)); }
static double cond_gelu_quick(double x) { return fabs((double) GELU_QUICK_COEF * x); }

/*
 * One entry of the unary or glu family: the reference and the bound on the
 * relative error, bound * (1 + cond(x)), as the kernels' comments state
 * them (simd/vmath-template.h, shared by the AVX2 and AVX-512 levels).
 */
struct elem_case {
    const char *name;
    int op;
    double (*ref)(double x);
    double (*cond)(double x);
    double bound;
};

static const struct elem_case unary_cases[] = {
    { "abs", GGML_UNARY_OP_ABS, ref_abs, cond_none, 0.0 },
    { "neg", GGML_UNARY_OP_NEG, ref_neg, cond_none, 0.0 },
    { "relu", GGML_UNARY_OP_RELU, ref_relu, cond_none, 0.0 },
    { "exp", GGML_UNARY_OP_EXP, exp, cond_none, 2.5e-7 },
    { "tanh", GGML_UNARY_OP_TANH, tanh, cond_none, 4e-7 },
    { "sigmoid", GGML_UNARY_OP_SIGMOID, ref_sigmoid, cond_none, 5e-7 },
    { "silu", GGML_UNARY_OP_SILU, ref_silu, cond_none, 5e-7 },
    { "gelu", GGML_UNARY_OP_GELU, ref_gelu, cond_gelu, 5e-7 },
    { "gelu_quick", GGML_UNARY_OP_GELU_QUICK, ref_gelu_quick, cond_gelu_quick, 5e-7 },
    { "gelu_erf", GGML_UNARY_OP_GELU_ERF, ref_gelu_erf, cond_none, 1.5e-6 },
};

static const struct elem_case glu_cases[] = {
    { "reglu", GGML_GLU_OP_REGLU, ref_relu, cond_none, 0.0 },
    { "swiglu", GGML_GLU_OP_SWIGLU, ref_silu, cond_none, 5e-7 },
    { "geglu", GGML_GLU_OP_GEGLU, ref_gelu, cond_gelu, 5e-7 },
    { "geglu_quick", GGML_GLU_OP_GEGLU_QUICK, ref_gelu_quick, cond_gelu_quick, 5e-7 },
    { "geglu_erf", GGML_GLU_OP_GEGLU_ERF, ref_gelu_erf, cond_none, 1.5e-6 },
};

/*
 * got against want (double) within rel * |want| + slack (slack: a few
 * subnormal steps, the rounding of results in the subnormal range):
 * NaN exactly where want is NaN; beyond the float range, the infinity of
 * want's sign (or a value within the bound); a zero of want's sign when
 * want is an exact zero.  *worst gets the largest relative error among
 * normal results.
 */
static bool within(float got, double want, double rel, double slack, double *worst)
{
    if (isnan(want))
        return isnan(got);
    if (isnan(got))
        return false;
    if (want == 0.0)
        return got == 0.0f && !signbit(got) == !signbit(want);
    if (isinf(got) && fabs(want) >= (double) FLT_MAX)
        return (got > 0) == (want > 0);
    const double err = fabs((double) got - want);
    if (fabs(want) >= (double) FLT_MIN) {
        const double r = err / fabs(want);
        *worst = r > *worst ? r : *worst;
    }
    return err <= rel * fabs(want) + slack;
}

/* The sweep of the float line: every 1531st bit pattern of each sign, then special values. */
static float *sweep_inputs(size_t *count)
{
    static const float specials[] = {
        0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MIN, -FLT_MIN, 1e-45f, -1e-45f, FLT_MAX, -FLT_MAX,
        88.72f, 88.7228394f, 88.73f, 89.0f, -87.3f, -103.0f, -103.97f, -104.5f, 0.4f, -0.4f, 0.39999f, 20.0f,
        -20.0f, 14.2f, -14.2f, -13.0f, 10.0f, -10.0f, 1e-20f, -1e-20f, 3e19f, -3e19f,
    };
    const size_t n_specials = sizeof specials / sizeof specials[0];
    const uint32_t step = 1531;
    const size_t n = 2 * (0x7f800000u / step + 1) + n_specials;
    float *v = malloc((n + 1) * sizeof *v);
    size_t c = 0;
    for (uint32_t b = 0; b < 0x7f800000u; b += step) {
        float f;
        memcpy(&f, &b, sizeof f);
        v[c++] = f;
        v[c++] = -f;
    }
    for (size_t i = 0; i < n_specials; i++)
        v[c++] = specials[i];
    *count = c;
    return v;
}

/*
 * The n floats at a and b have the same bits, except that a NaN matches
 * any NaN: the sign and payload a NaN result takes are unspecified (the
 * emulated AVX-512 build gave -nan for -nan in one form, nan in another).
 */
static bool same_floats(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i]) != 0 && !(isnan(a[i]) && isnan(b[i])))
            return false;
    return true;
}

/* unary[op] over the sweep in rows of odd lengths at unaligned pointers; in place equals out of place. */
static void check_unary(const struct ggml__cpu_kernels *k)
{
    size_t count;
    float *in = sweep_inputs(&count);
    float *out = malloc((count + 2) * sizeof *out), *inplace = malloc((count + 2) * sizeof *inplace);
    static const int64_t lengths[] = { 1, 15, 31, 33, 257, 1031 };
    for (size_t c = 0; c < sizeof unary_cases / sizeof unary_cases[0]; c++) {
        const struct elem_case *u = &unary_cases[c];
        if (k->unary[u->op] == NULL) {
            tap_skip(1, "level has no unary entry (the op's portable row)");
            continue;
        }
        bool all_ok = true;
        double worst = 0.0;
        size_t li = 0;
        out[count + 1] = 12345.0f;
        memcpy(inplace + 1, in, count * sizeof *in);
        for (size_t at = 0; at < count; li++) {
            const int64_t len = (int64_t) (count - at) < lengths[li % 6] ? (int64_t) (count - at) : lengths[li % 6];
            k->unary[u->op](len, out + 1 + at, in + at);
            k->unary[u->op](len, inplace + 1 + at, inplace + 1 + at);
            at += (size_t) len;
        }
        all_ok = out[count + 1] == 12345.0f && same_floats(out + 1, inplace + 1, count);
        if (k->unary_stream[u->op] != NULL) {
            /* the non-temporal form: the same bits (any NaN for a NaN), nothing past the end */
            inplace[count + 1] = 12345.0f;
            for (size_t at = 0; at < count; li++) {
                const int64_t len = (int64_t) (count - at) < lengths[li % 6] ? (int64_t) (count - at) : lengths[li % 6];
                k->unary_stream[u->op](len, inplace + 1 + at, in + at);
                at += (size_t) len;
            }
            if (inplace[count + 1] != 12345.0f || !same_floats(out + 1, inplace + 1, count)) {
                tap_diag("%s: unary_stream differs from unary", u->name);
                all_ok = false;
            }
        }
        for (size_t i = 0; i < count; i++) {
            const double want = u->ref((double) in[i]);
            if (!within(out[1 + i], want, u->bound * (1.0 + u->cond((double) in[i])), 0x1p-148, &worst) && all_ok) {
                tap_diag("%s(%.9g) = %.9g, reference %.17g", u->name, in[i], out[1 + i], want);
                all_ok = false;
            }
        }
        ok(all_ok, "%s: unary %s%s within %.2g relative of double precision over %zu inputs (worst %.3g)",
           ggml__isa_name(k->level), u->name, k->unary_stream[u->op] != NULL ? " (and its streaming form)" : "",
           u->bound, count, worst);
    }
    free(in);
    free(out);
    free(inplace);
}

/* glu[op]: act(x) * g with x over the sweep and random gates, plus the product's rounding. */
static void check_glu(const struct ggml__cpu_kernels *k)
{
    size_t count;
    float *x = sweep_inputs(&count);
    float *g = malloc((count + 1) * sizeof *g), *out = malloc((count + 2) * sizeof *out);
    for (size_t i = 0; i < count; i++)
        g[i + 1] = rng_unit() * 4.0f;
    for (size_t c = 0; c < sizeof glu_cases / sizeof glu_cases[0]; c++) {
        const struct elem_case *u = &glu_cases[c];
        if (k->glu[u->op] == NULL) {
            tap_skip(1, "level has no glu entry (the op's portable row)");
            continue;
        }
        bool all_ok = true;
        double worst = 0.0;
        for (size_t at = 0, li = 0; at < count; li++) {
            const size_t len = count - at < 33 + 64 * (li % 5) ? count - at : 33 + 64 * (li % 5);
            k->glu[u->op]((int64_t) len, out + 1 + at, x + at, g + 1 + at);
            at += len;
        }
        for (size_t i = 0; i < count; i++) {
            const double want = u->ref((double) x[i]) * (double) g[i + 1];
            const double rel = u->bound * (1.0 + u->cond((double) x[i])) + 0x1p-24;
            /* a subnormal activation's rounding, times the gate, then the product's */
            const double slack = 0x1p-149 * (1.0 + fabs((double) g[i + 1]));
            if (!within(out[1 + i], want, rel, slack, &worst) && all_ok) {
                tap_diag("%s(%.9g, %.9g) = %.9g, reference %.17g", u->name, x[i], g[i + 1], out[1 + i], want);
                all_ok = false;
            }
        }
        ok(all_ok, "%s: glu %s within %.2g relative (plus the product's rounding) of double precision (worst %.3g)",
           ggml__isa_name(k->level), u->name, u->bound, worst);
    }
    free(x);
    free(g);
    free(out);
}

/*
 * The levels whose unary and glu entries instantiate one formula
 * (simd/vmath-template.h: AVX2 and AVX-512) give the same bits at every
 * width: k's entries against other's over the sweep (NaN against NaN).
 */
static void check_same_elementwise(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *other)
{
    size_t count;
    float *x = sweep_inputs(&count);
    float *g = malloc(count * sizeof *g), *a = malloc(count * sizeof *a), *b = malloc(count * sizeof *b);
    for (size_t i = 0; i < count; i++)
        g[i] = rng_unit() * 4.0f;
    bool all_ok = true;
    for (int family = 0; family < 2; family++) {
        const size_t n_cases = family == 0 ? sizeof unary_cases / sizeof unary_cases[0]
                                           : sizeof glu_cases / sizeof glu_cases[0];
        for (size_t c = 0; c < n_cases; c++) {
            const struct elem_case *u = family == 0 ? &unary_cases[c] : &glu_cases[c];
            if (family == 0 && k->unary[u->op] != NULL && other->unary[u->op] != NULL) {
                k->unary[u->op]((int64_t) count, a, x);
                other->unary[u->op]((int64_t) count, b, x);
            } else if (family == 1 && k->glu[u->op] != NULL && other->glu[u->op] != NULL) {
                k->glu[u->op]((int64_t) count, a, x, g);
                other->glu[u->op]((int64_t) count, b, x, g);
            } else {
                continue;
            }
            for (size_t i = 0; i < count; i++)
                if (!(isnan(a[i]) && isnan(b[i])) && memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
                    tap_diag("%s(%.9g): %s %.9g, %s %.9g", u->name, x[i], ggml__isa_name(k->level), a[i],
                             ggml__isa_name(other->level), b[i]);
                    all_ok = false;
                    break;
                }
        }
    }
    ok(all_ok, "%s: unary and glu entries give the bits of the %s level's", ggml__isa_name(k->level),
       ggml__isa_name(other->level));
    free(x);
    free(g);
    free(a);
    free(b);
}

static const int64_t row_lengths[] = { 0, 1, 7, 15, 16, 31, 33, 257, 1000 };
#define N_ROW_LENGTHS (sizeof row_lengths / sizeof row_lengths[0])

/* reduce_max, scale, the sums and the binary rows against double precision and the generic level. */
static void check_rows(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    enum { N = 1000 };
    float *x = malloc((N + 1) * sizeof *x), *y = malloc((N + 1) * sizeof *y);
    float *z = malloc((N + 3) * sizeof *z), *zg = malloc((N + 2) * sizeof *zg);
    bool max_ok = true, scale_ok = true, sums_ok = true, bin_ok = true, exp_ok = true;
    double exp_worst = 0.0;
    for (size_t li = 0; li < N_ROW_LENGTHS; li++) {
        const int64_t n = row_lengths[li];
        for (int64_t i = 0; i < n; i++) {
            x[1 + i] = rng_unit() * ldexpf(1.0f, (int) (rng_u32() % 20) - 10);
            y[1 + i] = rng_unit() * ldexpf(1.0f, (int) (rng_u32() % 20) - 10);
        }
        const float *xs = x + 1, *ys = y + 1;

        /* reduce_max: exact, NaN skipped, -inf for an empty row */
        double want_max = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            want_max = xs[i] > want_max ? xs[i] : want_max;
        max_ok = max_ok && k->reduce_max(n, xs) == (float) want_max;
        if (n > 2) {
            x[1 + n / 2] = NAN;
            double want_without = -INFINITY;
            for (int64_t i = 0; i < n; i++)
                want_without = i != n / 2 && xs[i] > want_without ? xs[i] : want_without;
            max_ok = max_ok && k->reduce_max(n, xs) == (float) want_without;
            x[1 + n / 2] = 0.0f;
        }
        if (n > 0) {
            /* NaN first and last (the last often in a masked tail), then a row of NaN, then +inf */
            const float first = xs[0], last = xs[n - 1];
            x[1] = NAN;
            x[n] = NAN;
            double want_inner = -INFINITY;
            for (int64_t i = 1; i + 1 < n; i++)
                want_inner = xs[i] > want_inner ? xs[i] : want_inner;
            max_ok = max_ok && k->reduce_max(n, xs) == (float) want_inner;
            float *nans = malloc((size_t) n * sizeof *nans);
            for (int64_t i = 0; i < n; i++)
                nans[i] = NAN;
            max_ok = max_ok && k->reduce_max(n, nans) == -INFINITY;
            nans[n - 1] = INFINITY;
            max_ok = max_ok && k->reduce_max(n, nans) == INFINITY;
            free(nans);
            x[1] = first;
            x[n] = last;
        }

        /* softmax_exp_sum: y = exp(x - max) within exp's bound, the sum of the y in double;
           -inf inputs (masked positions) give zeros, the first and the last (often in a tail) */
        const float kept_first = n > 2 ? xs[0] : 0.0f, kept_last = n > 2 ? xs[n - 1] : 0.0f;
        if (n > 2)
            x[1] = x[n] = -INFINITY;
        const float max = n > 0 ? k->reduce_max(n, xs) : 0.0f;
        z[1 + n] = 777.0f;
        const double s = k->softmax_exp_sum(n, z + 1, xs, max);
        double want_sum = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const double want = exp((double) (xs[i] - max));
            want_sum += (double) z[1 + i];
            exp_ok = exp_ok && within(z[1 + i], want, 2.5e-7, 0x1p-149, &exp_worst);
        }
        exp_ok = exp_ok && z[1 + n] == 777.0f && fabs(s - want_sum) <= 1e-12 * want_sum;
        if (n > 2) {
            exp_ok = exp_ok && z[1] == 0.0f && z[n] == 0.0f;
            x[1] = kept_first;
            x[n] = kept_last;
        }

        /* scale: the float product */
        k->scale(n, z + 1, xs, 0.37f);
        for (int64_t i = 0; i < n; i++)
            scale_ok = scale_ok && z[1 + i] == xs[i] * 0.37f;

        /* sums in double: within 1e-13 of the sum of |terms| */
        double ws = 0.0, wsq = 0.0, wdev = 0.0, mag = 0.0;
        const double mean = 0.01;
        for (int64_t i = 0; i < n; i++) {
            ws += xs[i];
            mag += fabs(xs[i]);
            wsq += (double) xs[i] * xs[i];
            wdev += ((double) xs[i] - mean) * ((double) xs[i] - mean);
        }
        sums_ok = sums_ok && fabs(k->sum(n, xs) - ws) <= 1e-13 * mag && fabs(k->sum_sq(n, xs) - wsq) <= 1e-13 * wsq &&
                  fabs(k->sum_sq_dev(n, xs, mean) - wdev) <= 1e-13 * wdev;

        /* binary rows: the float operation, bit for bit, equal to generic; in place too */
        for (int op = 0; op < GGML__BINARY_COUNT; op++) {
            for (int scalar = 0; scalar < 2; scalar++) {
                if (scalar) {
                    k->binary_scalar[op](n, z + 1, xs, ys[0]);
                    generic->binary_scalar[op](n, zg + 1, xs, ys[0]);
                } else {
                    k->binary[op](n, z + 1, xs, ys);
                    generic->binary[op](n, zg + 1, xs, ys);
                }
                for (int64_t i = 0; i < n; i++) {
                    const float b = scalar ? ys[0] : ys[i];
                    const float want = op == GGML__BINARY_ADD   ? xs[i] + b
                                     : op == GGML__BINARY_SUB   ? xs[i] - b
                                     : op == GGML__BINARY_MUL   ? xs[i] * b
                                                                : xs[i] / b;
                    bin_ok = bin_ok && z[1 + i] == want && zg[1 + i] == want;
                }
            }
            memcpy(z + 1, xs, (size_t) n * sizeof *z);
            k->binary[op](n, z + 1, z + 1, ys);
            generic->binary[op](n, zg + 1, xs, ys);
            bin_ok = bin_ok && memcmp(z + 1, zg + 1, (size_t) n * sizeof *z) == 0;
            if (k->binary_stream[op] != NULL) {
                /* the non-temporal form: the same bits, at two alignments of z, nothing past the end */
                for (int shift = 0; shift < 2; shift++) {
                    z[1 + shift + n] = 12345.0f;
                    k->binary_stream[op](n, z + 1 + shift, xs, ys);
                    bin_ok = bin_ok && memcmp(z + 1 + shift, zg + 1, (size_t) n * sizeof *z) == 0 &&
                             z[1 + shift + n] == 12345.0f;
                }
            }
        }
    }
    ok(max_ok, "%s: reduce_max exact, NaN skipped (first, middle, last), -inf for n = 0 and rows of NaN",
       ggml__isa_name(k->level));
    ok(exp_ok, "%s: softmax_exp_sum within 2.5e-7 of exp (0 for -inf), its sum that of the outputs (worst %.3g)",
       ggml__isa_name(k->level), exp_worst);
    ok(scale_ok, "%s: scale is the float product", ggml__isa_name(k->level));
    ok(sums_ok, "%s: sum, sum_sq, sum_sq_dev within 1e-13 of double precision", ggml__isa_name(k->level));
    ok(bin_ok, "%s: add, sub, mul, div rows (and their streaming forms) and scalars equal the float operation "
       "and generic, in place too", ggml__isa_name(k->level));
    free(x);
    free(y);
    free(z);
    free(zg);
}

/*
 * transpose32 and transpose16 of random bits on odd shapes, with rows
 * padded by a few bytes and both pointers one byte off alignment, with
 * positive strides and with negative ones (rows walked from the last in
 * memory): every element lands where the loop below puts it and the
 * padding keeps its sentinel.  Run for every level, generic included.
 */
static void check_transpose(const struct ggml__cpu_kernels *k)
{
    static const int64_t shapes[][2] = { { 1, 1 },    { 1, 9 },    { 9, 1 },   { 8, 8 },    { 16, 16 },
                                         { 15, 33 },  { 33, 15 },  { 17, 47 }, { 257, 31 }, { 31, 257 },
                                         { 64, 65 },  { 48, 80 },  { 100, 100 } };
    for (int width = 4; width >= 2; width -= 2) {
        void (*transpose)(int64_t, int64_t, const void *, ptrdiff_t, void *, ptrdiff_t) =
            width == 4 ? k->transpose32 : k->transpose16;
        bool all_ok = transpose != NULL;
        for (size_t i = 0; all_ok && i < 2 * (sizeof shapes / sizeof shapes[0]); i++) {
            const int64_t rows = shapes[i / 2][0], cols = shapes[i / 2][1];
            const bool negative = i % 2 == 1;
            const ptrdiff_t src_row = (ptrdiff_t) (cols * width + 6), dst_row = (ptrdiff_t) (rows * width + 10);
            const size_t src_size = (size_t) (rows * src_row) + 1, dst_size = (size_t) (cols * dst_row) + 1;
            /* the first row's offset in the buffer, and the strides */
            const ptrdiff_t src_first = 1 + (negative ? (ptrdiff_t) (rows - 1) * src_row : 0);
            const ptrdiff_t dst_first = 1 + (negative ? (ptrdiff_t) (cols - 1) * dst_row : 0);
            const ptrdiff_t src_stride = negative ? -src_row : src_row, dst_stride = negative ? -dst_row : dst_row;
            uint8_t *src = malloc(src_size), *got = malloc(dst_size), *want = malloc(dst_size);
            for (size_t j = 0; j < src_size; j++)
                src[j] = (uint8_t) rng_u32();
            memset(got, 0x5a, dst_size);
            memset(want, 0x5a, dst_size);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < cols; c++)
                    memcpy(want + dst_first + c * dst_stride + r * width, src + src_first + r * src_stride + c * width,
                           (size_t) width);
            transpose(rows, cols, src + src_first, src_stride, got + dst_first, dst_stride);
            all_ok = memcmp(got, want, dst_size) == 0;
            if (!all_ok)
                tap_diag("%s: transpose%d of %lld x %lld (%s strides) differs", ggml__isa_name(k->level), 8 * width,
                         (long long) rows, (long long) cols, negative ? "negative" : "positive");
            free(src);
            free(got);
            free(want);
        }
        ok(all_ok,
           "%s: transpose%d puts every element in place on odd shapes, padded rows, unaligned pointers, "
           "negative strides",
           ggml__isa_name(k->level), 8 * width);
    }
}

/*
 * The output columns of a gemm tile under test: GGML__GEMM_NR_MAX columns
 * of GGML__GEMM_MR_MAX + 3 random floats (one guard before c[j], the
 * rest after), kept in start to check what the tile may not touch.
 */
struct tile_out {
    float buf[GGML__GEMM_NR_MAX][GGML__GEMM_MR_MAX + 3], start[GGML__GEMM_NR_MAX][GGML__GEMM_MR_MAX + 3];
    float *c[GGML__GEMM_NR_MAX];
};

static void tile_out_init(struct tile_out *t)
{
    for (int j = 0; j < GGML__GEMM_NR_MAX; j++) {
        for (int i = 0; i < GGML__GEMM_MR_MAX + 3; i++)
            t->start[j][i] = t->buf[j][i] = 2.0f * rng_unit() - 1.0f;
        t->c[j] = t->buf[j] + 1;
    }
}

/*
 * True when the tile wrote c[j][i] (i < mr, j < nr) within kc + 2
 * roundings of sums[j][i] (the products' exact sum, plus the start value
 * when accumulating; mags[j][i] the sum of their magnitudes) and left
 * every other float alone; worst is raised to the largest error over its
 * bound.  what names the case in diagnostics.
 */
static bool tile_out_ok(const struct tile_out *t, int mr, int nr, int kc, const double sums[][GGML__GEMM_MR_MAX],
                        const double mags[][GGML__GEMM_MR_MAX], const char *what, double *worst)
{
    bool all_ok = true;
    for (int j = 0; j < GGML__GEMM_NR_MAX; j++)
        for (int i = -1; i < GGML__GEMM_MR_MAX + 2; i++) {
            const float got = t->c[j][i];
            if (j >= nr || i < 0 || i >= mr) {
                if (memcmp(&got, &t->start[j][i + 1], sizeof got) != 0) {
                    all_ok = false;
                    tap_diag("%s: element (%d, %d) outside the tile written", what, i, j);
                }
                continue;
            }
            const double bound = (kc + 2) * 0x1p-24 * mags[j][i], err = fabs(got - sums[j][i]);
            *worst = err / (bound > 0 ? bound : 1) > *worst ? err / (bound > 0 ? bound : 1) : *worst;
            if (!(err <= bound)) {
                all_ok = false;
                tap_diag("%s: c(%d, %d) = %.9g, reference %.9g", what, i, j, got, sums[j][i]);
            }
        }
    return all_ok;
}

/* sums[j][i] and mags[j][i] for tile_out_ok: row i of a by column j of b (kc floats each, exact products). */
static void tile_reference(const float *a, const float *b, int kc, int mr, int nr, const struct tile_out *out,
                           bool accumulate, double sums[][GGML__GEMM_MR_MAX], double mags[][GGML__GEMM_MR_MAX])
{
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < mr; i++) {
            double want = accumulate ? (double) out->start[j][i + 1] : 0.0, mag = fabs(want);
            for (int kk = 0; kk < kc; kk++) {
                const double prod = (double) a[i * kc + kk] * b[j * kc + kk];
                want += prod;
                mag += fabs(prod);
            }
            sums[j][i] = want;
            mags[j][i] = mag;
        }
}

/*
 * gemm_tile: random tiles of every partial shape (mr, nr up to the
 * level's), kc of 1 to 300, packed as the contract says, stored and
 * accumulated, against a double-precision sum: within kc + 2 units of
 * rounding of the sum of |products| (plus the accumulated value's); the
 * floats past mr in each column and the columns past nr stay untouched.
 */
static void check_gemm_tile(const struct ggml__cpu_kernels *k)
{
    static const int kcs[] = { 1, 2, 7, 33, 256, 300 };
    const int tmr = k->gemm_mr, tnr = k->gemm_nr, lanes = k->gemm_lanes;
    bool shape_ok = k->gemm_tile != NULL && tmr >= 1 && tmr <= GGML__GEMM_MR_MAX && tnr >= 1 &&
                    tnr <= GGML__GEMM_NR_MAX && lanes >= 1 && tnr * lanes <= GGML__GEMM_B_MAX;
    ok(shape_ok, "%s: gemm tile %d x %d, %d lanes, within the largest shape", ggml__isa_name(k->level), tmr, tnr,
       lanes);
    if (!shape_ok)
        return;
    double worst = 0.0;
    bool all_ok = true;
    for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++) {
        const int kc = kcs[ki];
        float *apack = malloc((size_t) kc * tmr * sizeof *apack);
        float *bpack = malloc((size_t) kc * tnr * lanes * sizeof *bpack);
        float *a = malloc((size_t) kc * tmr * sizeof *a), *b = malloc((size_t) kc * tnr * sizeof *b);
        for (int mr = 1; mr <= tmr; mr++)
            for (int nr = 1; nr <= tnr; nr++)
                for (int accumulate = 0; accumulate < 2; accumulate++) {
                    for (int i = 0; i < kc * tmr; i++)
                        a[i] = 2.0f * rng_unit() - 1.0f;
                    for (int i = 0; i < kc * tnr; i++)
                        b[i] = 2.0f * rng_unit() - 1.0f;
                    for (int kk = 0; kk < kc; kk++) {
                        for (int i = 0; i < tmr; i++)
                            apack[kk * tmr + i] = i < mr ? a[i * kc + kk] : 0.0f;
                        for (int j = 0; j < tnr; j++)
                            for (int l = 0; l < lanes; l++)
                                bpack[(kk * tnr + j) * lanes + l] = j < nr ? b[j * kc + kk] : 0.0f;
                    }
                    struct tile_out out;
                    tile_out_init(&out);
                    k->gemm_tile(kc, apack, bpack, out.c, mr, nr, accumulate != 0);
                    double sums[GGML__GEMM_NR_MAX][GGML__GEMM_MR_MAX], mags[GGML__GEMM_NR_MAX][GGML__GEMM_MR_MAX];
                    tile_reference(a, b, kc, mr, nr, &out, accumulate != 0, sums, mags);
                    char what[64];
                    snprintf(what, sizeof what, "kc %d, %d x %d%s", kc, mr, nr, accumulate ? " accumulated" : "");
                    all_ok = tile_out_ok(&out, mr, nr, kc, sums, mags, what, &worst) && all_ok;
                }
        free(apack);
        free(bpack);
        free(a);
        free(b);
    }
    ok(all_ok, "%s: gemm tile of every partial shape, kc 1..300, stored and accumulated, within kc + 2 roundings "
       "(worst %.2f of the bound), nothing outside written", ggml__isa_name(k->level), worst);
}

/* A random BF16 value in [-1, 1): the bits, rounded to nearest even from a float. */
static uint16_t random_bf16(void)
{
    float f = 2.0f * rng_unit() - 1.0f;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t) ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static double bf16_value(uint16_t h)
{
    const uint32_t u = (uint32_t) h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/*
 * gemm_bf16_tile (levels with AVX512_BF16): random tiles of every partial
 * shape, kp pairs of BF16 values, against the double-precision sum of the
 * same products; nothing outside the tile written.
 */
static void check_gemm_bf16_tile(const struct ggml__cpu_kernels *k)
{
    if (k->gemm_bf16_tile == NULL)
        return;
    static const int kps[] = { 1, 2, 7, 33, 128, 150 };
    const int tmr = k->gemm_mr, tnr = k->gemm_nr;
    double worst = 0.0;
    bool all_ok = true;
    for (size_t ki = 0; ki < sizeof kps / sizeof kps[0]; ki++) {
        const int kp = kps[ki], kc = 2 * kp;
        uint32_t *apack = malloc((size_t) kp * tmr * sizeof *apack), *bpack = malloc((size_t) kp * tnr * sizeof *bpack);
        uint16_t *a = malloc((size_t) kc * tmr * sizeof *a), *b = malloc((size_t) kc * tnr * sizeof *b);
        float *af = malloc((size_t) kc * tmr * sizeof *af), *bf = malloc((size_t) kc * tnr * sizeof *bf);
        for (int mr = 1; mr <= tmr; mr++)
            for (int nr = 1; nr <= tnr; nr++)
                for (int accumulate = 0; accumulate < 2; accumulate++) {
                    for (int i = 0; i < kc * tmr; i++)
                        a[i] = random_bf16();
                    for (int i = 0; i < kc * tnr; i++)
                        b[i] = random_bf16();
                    for (int p = 0; p < kp; p++) {
                        for (int i = 0; i < tmr; i++)
                            apack[p * tmr + i] =
                                i < mr ? (uint32_t) a[i * kc + 2 * p] | (uint32_t) a[i * kc + 2 * p + 1] << 16 : 0;
                        for (int j = 0; j < tnr; j++)
                            bpack[p * tnr + j] =
                                j < nr ? (uint32_t) b[j * kc + 2 * p] | (uint32_t) b[j * kc + 2 * p + 1] << 16 : 0;
                    }
                    struct tile_out out;
                    tile_out_init(&out);
                    k->gemm_bf16_tile(kp, apack, bpack, out.c, mr, nr, accumulate != 0);
                    for (int i = 0; i < kc * tmr; i++)
                        af[i] = (float) bf16_value(a[i]);
                    for (int i = 0; i < kc * tnr; i++)
                        bf[i] = (float) bf16_value(b[i]);
                    double sums[GGML__GEMM_NR_MAX][GGML__GEMM_MR_MAX], mags[GGML__GEMM_NR_MAX][GGML__GEMM_MR_MAX];
                    tile_reference(af, bf, kc, mr, nr, &out, accumulate != 0, sums, mags);
                    char what[64];
                    snprintf(what, sizeof what, "kp %d, %d x %d%s", kp, mr, nr, accumulate ? " accumulated" : "");
                    all_ok = tile_out_ok(&out, mr, nr, kc, sums, mags, what, &worst) && all_ok;
                }
        free(apack);
        free(bpack);
        free(a);
        free(b);
        free(af);
        free(bf);
    }
    ok(all_ok, "%s: BF16 gemm tile of every partial shape, kp 1..150, stored and accumulated, within 2 kp + 2 "
       "roundings (worst %.2f of the bound), nothing outside written", ggml__isa_name(k->level), worst);
}

/* Weight i of a Q8_0, Q4_0, Q5_0 or IQ4_NL block at p (its value over the block's scale d). */
static int block_weight(enum ggml_type t, const uint8_t *p, int i)
{
    switch (t) {
    case GGML_TYPE_Q8_0:
        return ((const block_q8_0 *) (const void *) p)->qs[i];
    case GGML_TYPE_Q5_0: {
        const block_q5_0 *b = (const void *) p;
        const int nibble = i < 16 ? b->qs[i] & 0x0f : b->qs[i - 16] >> 4;
        return (nibble | ((b->qh[i / 8] >> (i % 8)) & 1) << 4) - 16;
    }
    case GGML_TYPE_IQ4_NL: {
        const block_iq4_nl *b = (const void *) p;
        return ggml__iq4nl_values[i < 16 ? b->qs[i] & 0x0f : b->qs[i - 16] >> 4];
    }
    default: {
        const uint8_t byte = ((const block_q4_0 *) (const void *) p)->qs[i % 16];
        return (i < 16 ? byte & 0x0f : byte >> 4) - 8;
    }
    }
}

/*
 * qgemm_tile: every entry a level has (the generic level has none) on
 * random blocks of raw codes (every byte value, -128 included) and on
 * blocks of extreme codes, 1 to 64 blocks, every partial shape, against a
 * double-precision sum computed here from the codes: within 1e-5 of the
 * sum of |products|, nothing outside the tile written.
 */
/*
 * The double-precision sum over nb blocks of a weight row (block b at
 * row + b * block_stride, type t) times a Q8_0 column (blocks col, float
 * scales cd), and the sum of the |products|.
 */
static void qgemm_reference(enum ggml_type t, const uint8_t *row, size_t block_stride, int nb, const block_q8_0 *col,
                            const float *cd, double *ref, double *mag)
{
    *ref = *mag = 0.0;
    for (int b = 0; b < nb; b++) {
        const uint8_t *blk = row + (size_t) b * block_stride;
        ggml_fp16_t dh;
        memcpy(&dh, blk, sizeof dh);
        const double scale = (double) ggml_fp16_to_fp32(dh) * cd[b];
        long isum = 0, iabs = 0;
        for (int i = 0; i < 32; i++) {
            const long p = (long) block_weight(t, blk, i) * col[b].qs[i];
            isum += p;
            iabs += p < 0 ? -p : p;
        }
        *ref += scale * (double) isum;
        *mag += fabs(scale) * (double) iabs;
    }
}

static void check_qgemm_tile(const struct ggml__cpu_kernels *k)
{
    static const int nbs[] = { 1, 2, 5, 64 };
    enum { ROWS = GGML__QGEMM_ROWS, COLS = GGML__QGEMM_COLS, MAX_NB = 64 };
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        if (k->qgemm_tile[t] == NULL || ggml_get_type_traits_cpu((enum ggml_type) t)->vec_dot_type == GGML_TYPE_Q8_K)
            continue;   /* the K-quants: check_qgemm_tile_k */
        const bool q8 = t == GGML_TYPE_Q8_0;
        const size_t bsize = ggml_type_size((enum ggml_type) t);
        bool all_ok = (t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q5_0 || t == GGML_TYPE_IQ4_NL) &&
                      ggml_get_type_traits_cpu((enum ggml_type) t)->vec_dot_type == GGML_TYPE_Q8_0;
        double worst = 0.0;
        /* rows 6 bytes apart beyond their blocks: only the blocks' 2-byte alignment */
        const size_t stride = MAX_NB * bsize + 6;
        uint8_t *a = malloc(ROWS * stride);
        block_q8_0 *col = malloc(COLS * MAX_NB * sizeof *col);
        float *cd = malloc(COLS * MAX_NB * sizeof *cd);
        int32_t *csum = malloc(COLS * MAX_NB * sizeof *csum);
        for (size_t ni = 0; all_ok && ni < sizeof nbs / sizeof nbs[0]; ni++)
            for (int extreme = 0; extreme < 2; extreme++)
                for (int mr = 1; mr <= ROWS; mr++)
                    for (int nr = 1; nr <= COLS; nr++) {
                        const int nb = nbs[ni];
                        for (size_t i = 0; i < ROWS * stride; i++)
                            a[i] = extreme ? (q8 ? 0x80 : t == GGML_TYPE_IQ4_NL ? 0xff : 0x00) : (uint8_t) rng_u32();
                        for (int r = 0; r < ROWS; r++)
                            for (int b = 0; b < nb; b++) {
                                const ggml_fp16_t d = ggml_fp32_to_fp16((0.01f + rng_unit()) * (rng_u32() & 1 ? 1 : -1));
                                memcpy(a + r * stride + b * bsize, &d, sizeof d);
                            }
                        struct ggml__qcolumn cols[COLS];
                        for (int j = 0; j < COLS; j++) {
                            for (int b = 0; b < nb; b++) {
                                block_q8_0 *q = &col[j * MAX_NB + b];
                                cd[j * MAX_NB + b] = 0.01f + rng_unit();
                                q->d = ggml_fp32_to_fp16(cd[j * MAX_NB + b]);
                                cd[j * MAX_NB + b] = ggml_fp16_to_fp32(q->d);
                                int32_t sum = 0;
                                for (int i = 0; i < 32; i++) {
                                    q->qs[i] = extreme ? (j % 2 ? 127 : -128) : (int8_t) rng_u32();
                                    sum += q->qs[i];
                                }
                                csum[j * MAX_NB + b] = sum;
                            }
                            cols[j] = (struct ggml__qcolumn) { &col[j * MAX_NB], &cd[j * MAX_NB], &csum[j * MAX_NB] };
                        }
                        float cbuf[COLS][ROWS + 2], *c[COLS];
                        for (int j = 0; j < COLS; j++) {
                            for (int i = 0; i < ROWS + 2; i++)
                                cbuf[j][i] = -7.0f;
                            c[j] = cbuf[j] + 1;
                        }
                        k->qgemm_tile[t](nb, a, stride, mr, cols, nr, c);
                        for (int j = 0; j < COLS; j++)
                            for (int r = -1; r <= ROWS; r++) {
                                if (j >= nr || r < 0 || r >= mr) {
                                    if (c[j][r] != -7.0f) {
                                        all_ok = false;
                                        tap_diag("%s nb %d, %d x %d: element (%d, %d) outside the tile written",
                                                 ggml_type_name((enum ggml_type) t), nb, mr, nr, r, j);
                                    }
                                    continue;
                                }
                                double want, mag;
                                qgemm_reference((enum ggml_type) t, a + r * stride, bsize, nb, &col[j * MAX_NB],
                                                &cd[j * MAX_NB], &want, &mag);
                                const double err = fabs(c[j][r] - want), bound = 1e-5 * mag;
                                worst = bound > 0 && err / bound > worst ? err / bound : worst;
                                if (!(err <= bound)) {
                                    all_ok = false;
                                    tap_diag("%s nb %d, %d x %d%s: c(%d, %d) = %.9g, reference %.9g",
                                             ggml_type_name((enum ggml_type) t), nb, mr, nr,
                                             extreme ? " extreme" : "", r, j, c[j][r], want);
                                }
                            }
                    }
        free(a);
        free(col);
        free(cd);
        free(csum);
        ok(all_ok, "%s: qgemm tile %s, %d x %d, every partial shape, 1..64 blocks, raw and extreme codes, within "
           "1e-5 of |products| (worst %.3f of the bound), nothing outside written",
           ggml__isa_name(k->level), ggml_type_name((enum ggml_type) t), ROWS, COLS, worst);
    }
}

/*
 * qgemm_packed_tile: 16 rows interleaved as packed-rows.h documents (the
 * layout written here from that description) against a double sum of
 * the codes, and bit for bit against the generic entry.
 */
static void check_qgemm_packed_tile(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const int nbs[] = { 1, 3, 64 };
    enum { ROWS = GGML__QGEMM_ROWS, COLS = GGML__QGEMM_COLS, MAX_NB = 64 };
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        if ((k->qgemm_packed_tile[t] == NULL && generic->qgemm_packed_tile[t] == NULL) ||
            ggml_get_type_traits_cpu((enum ggml_type) t)->vec_dot_type == GGML_TYPE_Q8_K)
            continue;   /* the K-quants' layouts are the level's own: check_qgemm_tile_k */
        const size_t bsize = ggml_type_size((enum ggml_type) t);
        bool all_ok = k->qgemm_packed_tile[t] != NULL && generic->qgemm_packed_tile[t] != NULL &&
                      (t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0 || t == GGML_TYPE_IQ4_NL);
        double worst = 0.0;
        uint8_t *rows = malloc(ROWS * MAX_NB * bsize), *group = malloc(ROWS * MAX_NB * bsize);
        block_q8_0 *col = malloc(COLS * MAX_NB * sizeof *col);
        float *cd = malloc(COLS * MAX_NB * sizeof *cd);
        int32_t *csum = malloc(COLS * MAX_NB * sizeof *csum);
        for (size_t ni = 0; all_ok && ni < sizeof nbs / sizeof nbs[0]; ni++)
            for (int shape = 0; shape < 4; shape++) {
                const int nb = nbs[ni], mr = shape < 2 ? ROWS : 1 + (int) (rng_u32() % ROWS);
                const int nr = shape % 2 ? COLS : 1 + (int) (rng_u32() % COLS);
                for (size_t i = 0; i < ROWS * (size_t) nb * bsize; i++)
                    rows[i] = (uint8_t) rng_u32();
                for (int r = 0; r < ROWS; r++)
                    for (int b = 0; b < nb; b++) {
                        const ggml_fp16_t d = ggml_fp32_to_fp16((0.01f + rng_unit()) * (rng_u32() & 1 ? 1 : -1));
                        memcpy(rows + ((size_t) r * nb + b) * bsize, &d, sizeof d);
                    }
                /* the group: per block, 16 scales, then word w of row r at 32 + 4 (16 w + r) */
                for (int b = 0; b < nb; b++)
                    for (int r = 0; r < ROWS; r++) {
                        const uint8_t *blk = rows + ((size_t) r * nb + b) * bsize;
                        uint8_t *g = group + (size_t) b * ROWS * bsize;
                        memcpy(g + 2 * r, blk, 2);
                        for (size_t w = 0; w < (bsize - 2) / 4; w++)
                            memcpy(g + 2 * ROWS + 4 * (ROWS * w + (size_t) r), blk + 2 + 4 * w, 4);
                    }
                struct ggml__qcolumn cols[COLS];
                for (int j = 0; j < COLS; j++) {
                    for (int b = 0; b < nb; b++) {
                        block_q8_0 *q = &col[j * MAX_NB + b];
                        q->d = ggml_fp32_to_fp16(0.01f + rng_unit());
                        cd[j * MAX_NB + b] = ggml_fp16_to_fp32(q->d);
                        int32_t sum = 0;
                        for (int i = 0; i < 32; i++)
                            sum += q->qs[i] = (int8_t) rng_u32();
                        csum[j * MAX_NB + b] = sum;
                    }
                    cols[j] = (struct ggml__qcolumn) { &col[j * MAX_NB], &cd[j * MAX_NB], &csum[j * MAX_NB] };
                }
                float got[COLS][ROWS + 2], want[COLS][ROWS + 2], *c[COLS], *cw[COLS];
                for (int j = 0; j < COLS; j++) {
                    for (int i = 0; i < ROWS + 2; i++)
                        got[j][i] = want[j][i] = -7.0f;
                    c[j] = got[j] + 1;
                    cw[j] = want[j] + 1;
                }
                k->qgemm_packed_tile[t](nb, group, 0, mr, cols, nr, c);
                generic->qgemm_packed_tile[t](nb, group, 0, mr, cols, nr, cw);
                for (int j = 0; j < COLS; j++)
                    for (int r = -1; r <= ROWS; r++) {
                        if (memcmp(&c[j][r], &cw[j][r], sizeof(float)) != 0) {
                            all_ok = false;
                            tap_diag("%s nb %d, %d x %d: c(%d, %d) = %.9g, generic %.9g",
                                     ggml_type_name((enum ggml_type) t), nb, mr, nr, r, j, c[j][r], cw[j][r]);
                        }
                        if (j >= nr || r < 0 || r >= mr) {
                            all_ok = all_ok && c[j][r] == -7.0f;
                            continue;
                        }
                        double ref, mag;
                        qgemm_reference((enum ggml_type) t, rows + (size_t) r * nb * bsize, bsize, nb,
                                        &col[j * MAX_NB], &cd[j * MAX_NB], &ref, &mag);
                        const double err = fabs(c[j][r] - ref), bound = 1e-5 * mag;
                        worst = bound > 0 && err / bound > worst ? err / bound : worst;
                        all_ok = all_ok && err <= bound;
                    }
            }
        free(rows);
        free(group);
        free(col);
        free(cd);
        free(csum);
        ok(all_ok, "%s: packed qgemm tile %s, full and partial tiles, 1..64 blocks, the generic floats bit for bit, "
           "within 1e-5 of |products| (worst %.3f of the bound), nothing outside written",
           ggml__isa_name(k->level), ggml_type_name((enum ggml_type) t), worst);
    }
}

/*
 * dot_tile: 1..4 rows at a stride (padded, so rows are not packed) against
 * 1..4 float columns, each output within 1e-5 of |products| of the
 * double-precision dot product; outputs past mr or nc, and the columns'
 * other entries, untouched.
 */
static void check_dot_tile(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    /* a partial vector alone, one and two vectors and a partial one at every level's width */
    static const int64_t lengths[] = { 1, 7, 15, 16, 33, 47, 257, 1024 };
    static const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const enum ggml_type t = types[ti];
        if (k->dot_tile[t] == NULL)
            continue;
        bool all_ok = true;
        double worst = 0.0;
        for (size_t li = 0; all_ok && li < sizeof lengths / sizeof lengths[0]; li++) {
            const int64_t n = lengths[li];
            const size_t row_bytes = ggml_row_size(t, n) + 12;
            struct row x = make_row(generic, t, 4 * n + 32), y = make_row(generic, GGML_TYPE_F32, 4 * n);
            for (int r = 1; r < 4; r++)
                generic->from_float[t](x.values + r * n, x.data + r * row_bytes, n);
            const float *b[4];
            for (int j = 0; j < 4; j++)
                b[j] = (const float *) (const void *) y.data + j * n;
            for (int mr = 1; mr <= 4 && all_ok; mr++)
                for (int nc = 1; nc <= 4 && all_ok; nc++) {
                    float out[4][6];
                    float *c[4];
                    for (int j = 0; j < 4; j++) {
                        for (int i = 0; i < 6; i++)
                            out[j][i] = -7.0f;
                        c[j] = &out[j][1];
                    }
                    k->dot_tile[t]((int) n, x.data, row_bytes, mr, b, nc, c);
                    for (int j = 0; j < 4 && all_ok; j++)
                        for (int i = -1; i < 5 && all_ok; i++) {
                            if (j >= nc || i < 0 || i >= mr) {
                                if (c[j][i] != -7.0f) {
                                    tap_diag("%s n=%lld mr=%d nc=%d: c[%d][%d] written", ggml_type_name(t),
                                             (long long) n, mr, nc, j, i);
                                    all_ok = false;
                                }
                                continue;
                            }
                            double sum = 0.0, mag = 0.0;
                            for (int64_t e = 0; e < n; e++) {
                                const double p = ref_value(t, x.data + i * row_bytes, e) * b[j][e];
                                sum += p;
                                mag += fabs(p);
                            }
                            const double err = fabs(c[j][i] - sum), bound = 1e-5 * mag + 1e-30;
                            worst = err / bound > worst ? err / bound : worst;
                            if (!(err <= bound)) {
                                tap_diag("%s n=%lld mr=%d nc=%d c[%d][%d] = %.9g, reference %.9g", ggml_type_name(t),
                                         (long long) n, mr, nc, j, i, c[j][i], sum);
                                all_ok = false;
                            }
                        }
                }
            free_row(&x);
            free_row(&y);
        }
        ok(all_ok, "%s: dot_tile %s, 1..4 rows at a stride by 1..4 columns, within 1e-5 of |products| "
           "(worst %.3f of the bound), nothing else written", ggml__isa_name(k->level), ggml_type_name(t), worst);
    }
}

/*
 * rows_by_f32: 1..4 rows at a stride against one F32 row, each within
 * 1e-5 of |products| of the double-precision sum; nothing written past
 * s[nr - 1].
 */
static void check_rows_by_f32(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const int64_t lengths[] = { 1, 15, 16, 33, 47, 64, 257, 4096 };
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        if (k->rows_by_f32[t] == NULL)
            continue;
        bool all_ok = true;
        double worst = 0.0;
        for (size_t li = 0; all_ok && li < sizeof lengths / sizeof lengths[0]; li++) {
            const int64_t n = lengths[li];
            const size_t row_bytes = ggml_row_size((enum ggml_type) t, n) + 12;
            struct row x = make_row(generic, (enum ggml_type) t, 4 * n + 32), y = make_row(generic, GGML_TYPE_F32, n);
            for (int r = 1; r < 4; r++)
                generic->from_float[t](x.values + r * n, x.data + r * row_bytes, n);
            for (int nr = 1; nr <= 4 && all_ok; nr++) {
                float s[5] = { NAN, NAN, NAN, NAN, -1.0f };
                k->rows_by_f32[t]((int) n, s, x.data, row_bytes, (const float *) (const void *) y.data, nr);
                all_ok = s[4] == -1.0f && (nr == 4 || s[nr] != s[nr]);
                for (int r = 0; r < nr && all_ok; r++) {
                    double mag;
                    const double want = ref_dot((enum ggml_type) t, GGML_TYPE_F32, x.data + r * row_bytes, y.data, n,
                                                &mag);
                    const double err = fabs(s[r] - want), bound = 1e-5 * mag + 1e-30;
                    worst = err / bound > worst ? err / bound : worst;
                    if (!(err <= bound)) {
                        tap_diag("%s n=%lld nr=%d row %d: %.9g, reference %.9g", ggml_type_name((enum ggml_type) t),
                                 (long long) n, nr, r, s[r], want);
                        all_ok = false;
                    }
                }
            }
            free_row(&x);
            free_row(&y);
        }
        ok(all_ok, "%s: rows_by_f32 %s, 1..4 rows at a stride by an F32 row, within 1e-5 of |products| "
           "(worst %.3f of the bound), nothing else written", ggml__isa_name(k->level),
           ggml_type_name((enum ggml_type) t), worst);
    }
}

/*
 * qgemm_pack: 16 rows (1..16 of them read, at an odd stride, so unaligned)
 * interleaved byte for byte as the layout says: per block, the 16 scales,
 * then word w of row r at 32 + 4 (16 w + r); rows past mr are row 0;
 * nothing written past the group.
 */
static void check_qgemm_pack(const struct ggml__cpu_kernels *k)
{
    static const int nbs[] = { 1, 3, 17 };
    static const int mrs[] = { 16, 1, 5, 9 };
    enum { ROWS = GGML__QGEMM_ROWS, MAX_NB = 17 };
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        if (k->qgemm_pack[t] == NULL || ggml_get_type_traits_cpu((enum ggml_type) t)->vec_dot_type == GGML_TYPE_Q8_K)
            continue;   /* the K-quants' layouts are the level's own: check_qgemm_tile_k */
        const size_t bsize = ggml_type_size((enum ggml_type) t);
        bool all_ok = t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0 || t == GGML_TYPE_IQ4_NL;
        const size_t stride = MAX_NB * bsize + 7, group_bytes = ROWS * MAX_NB * bsize;
        uint8_t *rows = malloc(ROWS * stride), *got = malloc(group_bytes + 64), *want = malloc(group_bytes + 64);
        for (size_t ni = 0; all_ok && ni < sizeof nbs / sizeof nbs[0]; ni++)
            for (size_t mi = 0; all_ok && mi < sizeof mrs / sizeof mrs[0]; mi++) {
                const int nb = nbs[ni], mr = mrs[mi];
                for (size_t i = 0; i < ROWS * stride; i++)
                    rows[i] = (uint8_t) rng_u32();
                memset(got, 0xa5, group_bytes + 64);
                memset(want, 0xa5, group_bytes + 64);
                for (int b = 0; b < nb; b++)
                    for (int r = 0; r < ROWS; r++) {
                        const uint8_t *blk = rows + (size_t) (r < mr ? r : 0) * stride + (size_t) b * bsize;
                        uint8_t *g = want + (size_t) b * ROWS * bsize;
                        memcpy(g + 2 * r, blk, 2);
                        for (size_t w = 0; w < (bsize - 2) / 4; w++)
                            memcpy(g + 2 * ROWS + 4 * (ROWS * w + (size_t) r), blk + 2 + 4 * w, 4);
                    }
                k->qgemm_pack[t](nb, (const char *) rows, stride, mr, (char *) got);
                if (memcmp(got, want, group_bytes + 64) != 0) {
                    tap_diag("%s nb=%d mr=%d: the group differs", ggml_type_name((enum ggml_type) t), nb, mr);
                    all_ok = false;
                }
            }
        free(rows);
        free(got);
        free(want);
        ok(all_ok, "%s: qgemm_pack %s interleaves 1..16 rows at an odd stride as the layout says, nothing else written",
           ggml__isa_name(k->level), ggml_type_name((enum ggml_type) t));
    }
}

/*
 * The process's table takes its level-2 cache size from hwloc, which reads
 * the kernel's cache description (read here on its own): the two agree
 * where hwloc loads a topology and the kernel describes a level-2 cache
 * (under qemu-user hwloc may see neither); otherwise the size is some
 * positive fallback.  The last-level size is at least as large.
 */
static void check_cache_sizes(void)
{
    size_t l2 = 0;
    for (int index = 0; index < 8; index++) {
        char path[96], type[16] = "";
        long level = 0, size = 0;
        char unit = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            break;
        if (fscanf(f, "%ld", &level) != 1)
            level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
        if ((f = fopen(path, "r")) != NULL) {
            if (fscanf(f, "%15s", type) != 1)
                type[0] = 0;
            fclose(f);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        if (level != 2 || strcmp(type, "Instruction") == 0 || (f = fopen(path, "r")) == NULL)
            continue;
        if (fscanf(f, "%ld%c", &size, &unit) == 2 && size > 0)
            l2 = (size_t) size << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0);
        fclose(f);
    }
    const struct ggml__cpu_kernels *k = ggml__kernels();
    tap_diag("level-2 cache: %zu bytes in sysfs (0: none), %zu in the table; last level %zu", l2, k->l2_bytes,
             k->stream_min_bytes);
    if (l2 > 0 && ggml__cpu_topology() != NULL)
        ok(k->l2_bytes == l2, "the level-2 cache size is the kernel's (%zu bytes)", l2);
    else
        ok(k->l2_bytes > 0, "a level-2 cache size without the kernel's description (%zu bytes)", k->l2_bytes);
    ok(k->stream_min_bytes >= k->l2_bytes, "the last-level cache is at least the level-2 one");
    /* (the processors sharing the cache that hwloc shows are at most the online ones) */
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const size_t cap = online > 0 ? (size_t) online * ((size_t) 4 << 20) : SIZE_MAX;
    ok(k->stream_min_bytes <= (cap > k->l2_bytes ? cap : k->l2_bytes),
       "streaming stores from %zu bytes: at most 4 MiB of the last-level cache for each of %ld processors",
       k->stream_min_bytes, online);
}

/* Every entry of the table of level l for a CPU with caps. */
/*
 * qgemm_tile of the K-quants (q8_K columns): rows and columns quantized
 * from random values, and extreme ones (every code and 6-bit scale at
 * its largest, activations -128 or 127), 1, 2 and 5 blocks, every partial
 * shape: each output the generic vec_dot's value bit for bit, nothing
 * outside the tile written.  Where the level has qgemm_pack and
 * qgemm_packed_tile for the type (a layout of its own), the same rows
 * packed (mr rows, the rest row 0 again) give the same bits, and the
 * packing writes nothing past the group.
 */
/*
 * unpack (a level's qgemm_unpack) gives back the 16 rows of row_bytes at
 * stride that were packed into group, and writes nothing between them.
 */
static bool unpacks_to(void (*unpack)(int64_t, const char *, char *, size_t), int nb, const uint8_t *group,
                       const uint8_t *rows, size_t stride, size_t row_bytes)
{
    enum { ROWS = GGML__QGEMM_ROWS };
    if (unpack == NULL)
        return false;
    uint8_t *back = malloc(ROWS * stride);
    memset(back, 0x3c, ROWS * stride);
    unpack(nb, (const char *) group, (char *) back, stride);
    bool same = true;
    for (int r = 0; r < ROWS; r++) {
        same = same && memcmp(back + r * stride, rows + r * stride, row_bytes) == 0;
        for (size_t i = row_bytes; i < stride; i++)
            same = same && back[r * stride + i] == 0x3c;
    }
    if (!same)
        tap_diag("qgemm_unpack: the rows differ from those packed, or bytes between them were written");
    free(back);
    return same;
}

static void check_qgemm_tile_k(const struct ggml__cpu_kernels *k, const struct ggml__cpu_kernels *generic)
{
    static const int nbs[] = { 1, 2, 5 };
    enum { ROWS = GGML__QGEMM_ROWS, COLS = GGML__QGEMM_COLS, MAX_NB = 5 };
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const enum ggml_type type = (enum ggml_type) t;
        if (k->qgemm_tile[t] == NULL || ggml_get_type_traits_cpu(type)->vec_dot_type != GGML_TYPE_Q8_K)
            continue;
        bool all_ok = generic->vec_dot[t] != NULL;
        const size_t row_bytes = ggml_row_size(type, MAX_NB * QK_K), col_bytes = sizeof(block_q8_K) * MAX_NB;
        /* rows 2 bytes apart beyond their blocks: only the blocks' 2-byte alignment */
        const size_t stride = row_bytes + 2;
        uint8_t *a = aligned_alloc(64, (ROWS * stride + 63) / 64 * 64);
        block_q8_K *col = aligned_alloc(64, (COLS * col_bytes + 63) / 64 * 64);
        float *values = malloc(MAX_NB * QK_K * sizeof *values);
        const bool has_packed = k->qgemm_pack[t] != NULL && k->qgemm_packed_tile[t] != NULL;
        all_ok = all_ok && (k->qgemm_pack[t] != NULL) == (k->qgemm_packed_tile[t] != NULL);
        const size_t group_bytes = ROWS * row_bytes;
        uint8_t *group = aligned_alloc(64, (group_bytes + 64 + 63) / 64 * 64);
        for (size_t ni = 0; all_ok && ni < sizeof nbs / sizeof nbs[0]; ni++)
            for (int extreme = 0; extreme < 2; extreme++) {
                const int nb = nbs[ni], n = nb * QK_K;
                for (int r = 0; r < ROWS; r++) {
                    uint8_t *row = a + r * stride;
                    for (int i = 0; i < n; i++)
                        values[i] = rng_unit();
                    generic->from_float[t](values, row, n);
                    if (extreme && t == GGML_TYPE_Q4_K)
                        for (int b = 0; b < nb; b++) {
                            block_q4_K *blk = (block_q4_K *) (void *) (row + b * sizeof(block_q4_K));
                            memset(blk->scales, 0xff, sizeof blk->scales);   /* every scale and minimum 63 */
                            memset(blk->qs, 0xff, sizeof blk->qs);           /* every code 15 */
                        }
                    if (extreme && t == GGML_TYPE_Q5_K)
                        for (int b = 0; b < nb; b++) {
                            block_q5_K *blk = (block_q5_K *) (void *) (row + b * sizeof(block_q5_K));
                            memset(blk->scales, 0xff, sizeof blk->scales);   /* every scale and minimum 63 */
                            memset(blk->qs, 0xff, sizeof blk->qs);           /* every code 31 */
                            memset(blk->qh, 0xff, sizeof blk->qh);
                        }
                    if (extreme && t == GGML_TYPE_Q6_K)
                        for (int b = 0; b < nb; b++) {
                            block_q6_K *blk = (block_q6_K *) (void *) (row + b * sizeof(block_q6_K));
                            memset(blk->scales, b % 2 ? 0x7f : 0x80, sizeof blk->scales);   /* scales 127 or -128 */
                            memset(blk->ql, 0xff, sizeof blk->ql);   /* every code 63 */
                            memset(blk->qh, 0xff, sizeof blk->qh);
                        }
                }
                for (int j = 0; j < COLS; j++) {
                    block_q8_K *cj = col + j * MAX_NB;
                    for (int i = 0; i < n; i++)
                        values[i] = rng_unit();
                    generic->from_float[GGML_TYPE_Q8_K](values, cj, n);
                    if (extreme)
                        for (int b = 0; b < nb; b++) {
                            memset(cj[b].qs, j % 2 ? 127 : 0x80, sizeof cj[b].qs);
                            for (int g = 0; g < QK_K / 16; g++)
                                cj[b].bsums[g] = (int16_t) (16 * (j % 2 ? 127 : -128));
                        }
                }
                for (int pass = 0; pass < (has_packed ? 2 : 1); pass++) {
                    for (int mr = 1; mr <= ROWS; mr++)
                        for (int nr = 1; nr <= COLS; nr++) {
                            struct ggml__qcolumn cols[COLS];
                            for (int j = 0; j < COLS; j++)
                                cols[j] = (struct ggml__qcolumn) { col + j * MAX_NB, NULL, NULL };
                            float cbuf[COLS][ROWS + 2], *c[COLS];
                            for (int j = 0; j < COLS; j++) {
                                for (int i = 0; i < ROWS + 2; i++)
                                    cbuf[j][i] = -7.0f;
                                c[j] = cbuf[j] + 1;
                            }
                            const bool packed = pass == 1;
                            if (packed) {
                                memset(group, 0xa5, group_bytes + 64);
                                k->qgemm_pack[t](nb, (const char *) a, stride, mr, (char *) group);
                                for (size_t i = (size_t) nb * ROWS * ggml_type_size(type); i < group_bytes + 64; i++)
                                    all_ok = all_ok && group[i] == 0xa5;
                                if (mr == ROWS && nr == 1)
                                    all_ok = all_ok && unpacks_to(k->qgemm_unpack[t], nb, group, a, stride,
                                                                  ggml_row_size(type, (int64_t) nb * QK_K));
                                k->qgemm_packed_tile[t](nb, group, 0, mr, cols, nr, c);
                            } else {
                                k->qgemm_tile[t](nb, a, stride, mr, cols, nr, c);
                            }
                            for (int j = 0; j < COLS; j++)
                                for (int r = -1; r <= ROWS; r++) {
                                    const bool inside = j < nr && r >= 0 && r < mr;
                                    float want = -7.0f;
                                    if (inside)
                                        generic->vec_dot[t](n, &want, 0, a + r * stride, 0, col + j * MAX_NB, 0, 1);
                                    if (memcmp(&c[j][r], &want, sizeof want) != 0) {
                                        all_ok = false;
                                        tap_diag("%s%s nb %d, %d x %d%s: c(%d, %d) = %.9g, %s %.9g",
                                                 packed ? "packed " : "", ggml_type_name(type), nb, mr, nr,
                                                 extreme ? " extreme" : "", r, j, c[j][r],
                                                 inside ? "generic vec_dot" : "untouched", want);
                                    }
                                }
                        }
                }
            }
        free(a);
        free(col);
        free(values);
        free(group);
        ok(all_ok, "%s: qgemm tile %s x q8_K%s, %d x %d, every partial shape, 1, 2 and 5 blocks, random and extreme "
           "codes: the generic vec_dot's bits, nothing outside written%s",
           ggml__isa_name(k->level), ggml_type_name(type), has_packed ? ", plain and packed" : "", ROWS, COLS,
           has_packed ? "; qgemm_unpack gives the rows back" : "");
    }
}

static void check_level(enum ggml__isa l, const struct ggml__isa_caps *caps, const struct ggml__cpu_kernels *generic)
{
    struct ggml__cpu_kernels k;
    ok(ggml__kernels_build(&k, l, caps) && k.level == l, "%s: the table builds", ggml__isa_name(l));
    check_vec_dot(&k, generic);
    check_vec_dot_rows(&k, generic);
    check_dot_tile(&k, generic);
    check_rows_by_f32(&k, generic);
    check_from_float(&k, generic);
    check_to_float(&k, generic);
    check_axpy(&k, generic);
    check_unary(&k);
    check_glu(&k);
    check_rows(&k, generic);
    check_transpose(&k);
    check_gemm_tile(&k);
    check_gemm_bf16_tile(&k);
    check_qgemm_tile(&k);
    check_qgemm_tile_k(&k, generic);
    check_qgemm_packed_tile(&k, generic);
    check_qgemm_pack(&k);
}

int main(void)
{
    tap_capture_log();
    const struct ggml__isa_caps *caps = ggml__isa_caps();
    /* which variants the levels' tables hold (NEON: SDOT with dotprod) */
    tap_diag("CPU: avx2 %d, avx512 %d (vnni %d, bf16 %d%s), neon %d, dotprod %d", caps->avx2, caps->avx512,
             caps->avx512_vnni, caps->avx512_bf16, GGML_ISA_EMULATED ? ", emulated" : "", caps->neon, caps->dotprod);
    struct ggml__cpu_kernels generic;
    ok(ggml__kernels_build(&generic, GGML__ISA_GENERIC, caps), "the generic table builds");
    ok(ggml__isa_from_name("AVX2") == GGML__ISA_AVX2 && ggml__isa_from_name("nosuch") == GGML__ISA_COUNT,
       "level names are read in any case; unknown names are refused");
    check_vec_dot(&generic, &generic);
    check_axpy(&generic, &generic);
    check_rows(&generic, &generic);
    check_transpose(&generic);
    check_gemm_tile(&generic);
    check_qgemm_tile(&generic);
    check_qgemm_packed_tile(&generic, &generic);
    check_qgemm_pack(&generic);
    check_cache_sizes();

    for (int level = GGML__ISA_GENERIC + 1; level < GGML__ISA_COUNT; level++) {
        const enum ggml__isa l = (enum ggml__isa) level;
        char reason[128];
        if (!ggml__isa_built(l) || !ggml__isa_runs_on(l, caps)) {
            snprintf(reason, sizeof reason, "level %s: %s", ggml__isa_name(l),
                     !ggml__isa_built(l) ? "not built into this library" : "this CPU cannot run it");
            tap_diag("%s", reason);
            tap_skip(1, reason);
            continue;
        }
        check_level(l, caps, &generic);
        struct ggml__cpu_kernels avx2;
        if (l == GGML__ISA_AVX512 && ggml__kernels_build(&avx2, GGML__ISA_AVX2, caps)) {
            struct ggml__cpu_kernels avx512;
            ggml__kernels_build(&avx512, l, caps);
            check_same_elementwise(&avx512, &avx2);
        }
        if (l == GGML__ISA_AVX512 && (caps->avx512_vnni || caps->avx512_bf16)) {
            /* the level's kernels for CPUs without the extensions too */
            struct ggml__isa_caps plain = *caps;
            plain.avx512_vnni = plain.avx512_bf16 = plain.avx_vnni = false;
            tap_diag("avx512 without VNNI and BF16:");
            check_level(l, &plain, &generic);
        }
        if (l == GGML__ISA_AVX2 && caps->avx_vnni) {
            /* and the AVX2 level's for CPUs without AVX-VNNI */
            struct ggml__isa_caps plain = *caps;
            plain.avx_vnni = false;
            tap_diag("avx2 without AVX-VNNI:");
            check_level(l, &plain, &generic);
        }
    }
    ggml_quantize_free();   /* the IQ1 tables make_row built */
    return tap_done();
}
