/*
 * simd/avx2/qrows.h - the AVX2 level's Q8_0 rows kernel (kernels.h,
 * vec_dot_rows: matrix x vector for Q8_0 weights), once for both forms of
 * a block's integer sums.
 *
 * Not installed.  Included by dot.c (vpmaddubsw) and dot-vnni.c
 * (vpdpbusd, AVX-VNNI) only, after <immintrin.h>, quants-impl.h and
 * prefetch-rows.h, once they define (both always inlined)
 *   static inline __m256i q8_block_start(__m256i ya);
 *       what every row's sums of the activation block ya start from;
 *   static inline __m256i q8_row_sums(const block_q8_0 *x, __m256i ya,
 *                                     __m256i start);
 *       8 int32 lanes that add up, with start, to the exact integer sum of
 *       the 32 products of x's codes by ya's (in [-127, 127], as the Q8
 *       encoders make them);
 * and QROWS_NAME(name), the public name of the kernel.
 *
 * Up to four rows a step of one block: y's block is loaded and its start
 * computed once for all rows, and each row keeps 8 float lanes of its
 * own, to which the block's integer lanes are added, converted and scaled
 * by the row's and y's scales: no horizontal step per block.  (Gathering
 * four rows' sums into one vector by horizontal adds, so that one scale
 * vector served them, was 1.12 times slower: Zen 5, 4096 x 4096, one
 * thread.)  Each row's lanes are summed once at the end.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_QROWS_H
#define GGML_BACKEND_SIMD_AVX2_QROWS_H

/* Row r's step on block b: its lanes into acc_r (nr a constant after inlining). */
#define QROWS_ROW_STEP(r)                                                                                      \
    if (nr > (r)) {                                                                                           \
        const block_q8_0 *xb = (const block_q8_0 *) (const void *) ((const char *) vx + (size_t) (r) * bx) + b; \
        const __m256i isum = q8_row_sums(xb, ya, start);                                                      \
        acc_##r = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(_cvtsh_ss(xb->d) * dy), acc_##r); \
    }

static inline __attribute__((always_inline)) float qrows_hsum(__m256 v)
{
    __m128 t = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    t = _mm_add_ps(t, _mm_movehl_ps(t, t));
    t = _mm_add_ss(t, _mm_movehdup_ps(t));
    return _mm_cvtss_f32(t);
}

static inline __attribute__((always_inline)) void q8_rows(int n, float *s, const void *vx, size_t bx,
                                                          const void *vy, const int nr)
{
    const block_q8_0 *y = vy;
    __m256 acc_0 = _mm256_setzero_ps(), acc_1 = acc_0, acc_2 = acc_0, acc_3 = acc_0;
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(vx, bx, nr, n / QK8_0);
    for (int b = 0; b < n / QK8_0; b++) {
        ggml__rows_prefetch_step(&ahead);
        const __m256i ya = _mm256_loadu_si256((const __m256i *) (const void *) y[b].qs);
        const __m256i start = q8_block_start(ya);
        const float dy = _cvtsh_ss(y[b].d);
        QROWS_ROW_STEP(0) QROWS_ROW_STEP(1) QROWS_ROW_STEP(2) QROWS_ROW_STEP(3)
    }
    const __m256 acc[4] = { acc_0, acc_1, acc_2, acc_3 };
    for (int r = 0; r < nr; r++)
        s[r] = qrows_hsum(acc[r]);
}

#undef QROWS_ROW_STEP

void QROWS_NAME(vec_dot_rows_q8_0)(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    switch (nr) {
    case 4: q8_rows(n, s, vx, bx, vy, 4); break;
    case 3: q8_rows(n, s, vx, bx, vy, 3); break;
    case 2: q8_rows(n, s, vx, bx, vy, 2); break;
    default: q8_rows(n, s, vx, bx, vy, 1); break;
    }
}

#endif
