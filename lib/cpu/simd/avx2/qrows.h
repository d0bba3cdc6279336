/*
 * simd/avx2/qrows.h - the AVX2 level's rows kernels (kernels.h,
 * vec_dot_rows: matrix x vector) for the 32-value block formats Q4_0,
 * Q4_1, Q5_0, Q5_1 and Q8_0, once for both forms of a block's integer
 * sums; and the codes of those blocks (qrows_codes, fifth_bits).
 *
 * Not installed.  Included by dot.c (vpmaddubsw) and dot-vnni.c
 * (vpdpbusd, AVX-VNNI) only, after <immintrin.h>, <string.h>,
 * quants-impl.h, block-formats.h and prefetch-rows.h, with
 * QROWS_NAME(name) defined (the public name of a kernel).  The includer
 * defines the two hooks declared below, before or after it (they are
 * always inlined; t is a constant):
 *   qrows_block_start(t, ya)   what every row's sums against the
 *       activation block ya (codes in [-127, 127], as the Q8 encoders
 *       make them) share: computed once a block;
 *   qrows_row_sums(t, codes, ya, start)   8 int32 lanes that add up to
 *       the exact integer sum of the 32 products w * a of a weight block,
 *       given by its codes as qrows_codes returns them.
 *
 * Up to four rows a step of one block: y's block is loaded, and its start
 * computed, once for all rows, and each row keeps 8 float lanes of its
 * own, to which the block's integer lanes are added, converted and scaled
 * by the row's and y's scales: no horizontal step per block.  Gathering
 * the four rows' sums into one vector by horizontal adds, so that one
 * scale vector served them, was 1.12 times slower for Q8_0 (Zen 5, 4096 x
 * 4096, one thread).  The minimums' part of Q4_1 and Q5_1 rows, m * s_y,
 * is summed apart, a float per row.  Each row's lanes are summed once at
 * the end.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_QROWS_H
#define GGML_BACKEND_SIMD_AVX2_QROWS_H

#define QROWS_INLINE static inline __attribute__((always_inline))

QROWS_INLINE __m256i qrows_block_start(enum ggml_type t, __m256i ya);
QROWS_INLINE __m256i qrows_row_sums(enum ggml_type t, __m256i codes, __m256i ya, __m256i start);

/* 0x10 in byte j where bit j of the block's qh is set, else 0. */
QROWS_INLINE __m256i fifth_bits(const uint8_t qh[4])
{
    uint32_t bits;
    memcpy(&bits, qh, sizeof bits);
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int) bits),
        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
    const __m256i select = _mm256_set1_epi64x((long long) 0x8040201008040201ull);
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, select), select);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

#define QROWS_FIELD(type, p, f) (((const type *) (const void *) (p))->f)

/*
 * The codes of the block at p, in element order: Q8_0's signed bytes as
 * stored; the others' unsigned values u (0..15, or 0..31 with the fifth
 * bits), whose weights are u - 8 (Q4_0), u - 16 (Q5_0) or d * u + m
 * (block-formats.h).
 */
QROWS_INLINE __m256i qrows_codes(enum ggml_type t, const char *p)
{
    if (t == GGML_TYPE_Q8_0)
        return _mm256_loadu_si256((const __m256i *) (const void *) QROWS_FIELD(block_q8_0, p, qs));
    const uint8_t *qs = t == GGML_TYPE_Q4_0 ? QROWS_FIELD(block_q4_0, p, qs)
                      : t == GGML_TYPE_Q4_1 ? QROWS_FIELD(block_q4_1, p, qs)
                      : t == GGML_TYPE_Q5_0 ? QROWS_FIELD(block_q5_0, p, qs)
                                            : QROWS_FIELD(block_q5_1, p, qs);
    const __m256i packed = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) (const void *) qs));
    /* the upper copy of the 16 bytes shifted by 4: its low nibbles are the high ones (elements 16..31) */
    __m256i u = _mm256_and_si256(_mm256_srlv_epi32(packed, _mm256_set_epi32(4, 4, 4, 4, 0, 0, 0, 0)),
                                 _mm256_set1_epi8(0x0f));
    if (t == GGML_TYPE_Q5_0)
        u = _mm256_or_si256(u, fifth_bits(QROWS_FIELD(block_q5_0, p, qh)));
    else if (t == GGML_TYPE_Q5_1)
        u = _mm256_or_si256(u, fifth_bits(QROWS_FIELD(block_q5_1, p, qh)));
    return u;
}

/* The binary16 value at p (unaligned), as a float. */
QROWS_INLINE float qrows_half(const char *p)
{
    ggml_fp16_t h;
    memcpy(&h, p, sizeof h);
    return _cvtsh_ss(h);
}

QROWS_INLINE float qrows_hsum(__m256 v)
{
    __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    t = _mm_add_ps(t, _mm_movehl_ps(t, t));
    t = _mm_add_ss(t, _mm_movehdup_ps(t));
    return _mm_cvtss_f32(t);
}

/*
 * Row r's step on block b (nr a constant after inlining).  d opens every
 * one of these blocks and the Q8 ones; m follows d in Q4_1 and Q5_1
 * blocks as s does in Q8_1 blocks.
 */
#define QROWS_ROW_STEP(r)                                                                                    \
    if (nr > (r)) {                                                                                         \
        const char *xb = (const char *) vx + (size_t) (r) * bx + (size_t) b * step;                         \
        const __m256i isum = qrows_row_sums(t, qrows_codes(t, xb), ya, start);                              \
        acc_##r = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(qrows_half(xb) * dy), acc_##r); \
        if (minimum)                                                                                        \
            min_##r += qrows_half(xb + sizeof(ggml_fp16_t)) * sy;                                          \
    }

QROWS_INLINE void qrows(enum ggml_type t, int n, float *s, const void *vx, size_t bx, const void *vy, const int nr)
{
    const bool minimum = ggml__block_has_minimum(t);
    const size_t step = ggml__small_block_bytes(t);
    const size_t ystep = minimum ? sizeof(block_q8_1) : sizeof(block_q8_0);
    const size_t yqs = minimum ? offsetof(block_q8_1, qs) : offsetof(block_q8_0, qs);
    const char *yb = vy;
    __m256 acc_0 = _mm256_setzero_ps(), acc_1 = acc_0, acc_2 = acc_0, acc_3 = acc_0;
    float min_0 = 0.0f, min_1 = 0.0f, min_2 = 0.0f, min_3 = 0.0f;
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(vx, bx, nr, n / 32);
    for (int b = 0; b < n / 32; b++, yb += ystep) {
        ggml__rows_prefetch_step(&ahead);
        const __m256i ya = _mm256_loadu_si256((const __m256i *) (const void *) (yb + yqs));
        const __m256i start = qrows_block_start(t, ya);
        const float dy = qrows_half(yb), sy = minimum ? qrows_half(yb + sizeof(ggml_fp16_t)) : 0.0f;
        QROWS_ROW_STEP(0) QROWS_ROW_STEP(1) QROWS_ROW_STEP(2) QROWS_ROW_STEP(3)
    }
    const __m256 acc[4] = { acc_0, acc_1, acc_2, acc_3 };
    const float mins[4] = { min_0, min_1, min_2, min_3 };
    for (int r = 0; r < nr; r++)
        s[r] = qrows_hsum(acc[r]) + mins[r];
}

#undef QROWS_ROW_STEP
#undef QROWS_FIELD

/* The kernel for type t: qrows with a constant number of rows. */
#define QROWS_KERNEL(type, t)                                                                             \
    void QROWS_NAME(vec_dot_rows_##type)(int n, float *s, const void *vx, size_t bx, const void *vy, int nr) \
    {                                                                                                     \
        switch (nr) {                                                                                     \
        case 4: qrows(t, n, s, vx, bx, vy, 4); break;                                                     \
        case 3: qrows(t, n, s, vx, bx, vy, 3); break;                                                     \
        case 2: qrows(t, n, s, vx, bx, vy, 2); break;                                                     \
        default: qrows(t, n, s, vx, bx, vy, 1); break;                                                    \
        }                                                                                                 \
    }

QROWS_KERNEL(q4_0, GGML_TYPE_Q4_0)
QROWS_KERNEL(q4_1, GGML_TYPE_Q4_1)
QROWS_KERNEL(q5_0, GGML_TYPE_Q5_0)
QROWS_KERNEL(q5_1, GGML_TYPE_Q5_1)
QROWS_KERNEL(q8_0, GGML_TYPE_Q8_0)

#undef QROWS_KERNEL

#endif
