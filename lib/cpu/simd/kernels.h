/*
 * simd/kernels.h - the CPU backend's kernel table: one set of row kernels
 * per instruction-set level, chosen once per process.
 *
 * Not installed.  Include after config.h and ggml-impl.h.
 *
 * Layout (lib/cpu/simd/):
 *   kernels.h          this table and the level names
 *   table.c            builds the table of a level from the levels below it
 *   vmath-template.h   exp, tanh, erfc and the activations, written once
 *                      for the vector levels' widths (each level's vmath.h)
 *   transpose-tiles.h  the cache tiles of the vector levels' transposes
 *   prefetch-rows.h    software prefetch of the rows after a vec_dot_rows call
 *   packed-rows.h      the interleaved weight rows of the integer tiles
 *   generic/           portable C: the fallback, and what every level is
 *                      tested against (compiled with the library's flags)
 *   avx2/              x86-64 with AVX2, FMA and F16C (-mavx2 -mfma -mf16c)
 *   avx512/            AVX-512 F, BW, DQ and VL on top of AVX2
 *   neon/              AArch64 Advanced SIMD (dotprod entries in a file
 *                      of their own, compiled with +dotprod)
 * Each level directory is an Automake convenience library built with that
 * level's flags only (lib/local.mk); configure builds the levels the
 * compiler accepts.  Code of a level runs only after the table of that
 * level was chosen, so a level's files may use its instructions anywhere.
 *
 * How a table is made (table.c, which lists every level's entries): start
 * from the generic entries, then let each level from the lowest up to the
 * chosen one (of the same architecture) replace the entries it has.  A NULL entry in the element-wise families means
 * "the op's own portable row function" (lib/cpu/ops/unary.c): those ops
 * keep their generic form next to their reference.
 *
 * Contract of every entry: the same results as the generic entry, bit for
 * bit for codecs and for integer sums of quantized blocks; float dot
 * products and element-wise approximations within the bounds stated where
 * they are defined (tests/test-kernels.c checks each level's entries
 * against the generic ones and against double precision).  No entry
 * allocates, logs or reads global state; every entry accepts pointers
 * aligned only as their element type needs (4 bytes for F32, 2 for F16,
 * BF16 and the block formats: no vector alignment) and any n >= 0 (a
 * multiple of the block size for block formats).
 */
#ifndef GGML_BACKEND_CPU_SIMD_KERNELS_H
#define GGML_BACKEND_CPU_SIMD_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml.h"
#include "ggml-cpu.h"

/* The parameter list of ggml_vec_dot_t, for declaring entries. */
#define GGML__VEC_DOT_PARAMS                                                                     \
    int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx, const void *restrict vy, \
        size_t by, int nrc

/* The element-wise binary ops of the binary[] and binary_scalar[] entries. */
enum ggml__binary_op {
    GGML__BINARY_ADD,
    GGML__BINARY_SUB,
    GGML__BINARY_MUL,
    GGML__BINARY_DIV,
    GGML__BINARY_COUNT
};

/* The levels, lowest first within an architecture. */
enum ggml__isa {
    GGML__ISA_GENERIC,
    GGML__ISA_SSE2,      /* the x86-64 baseline */
    GGML__ISA_AVX2,      /* AVX2 + FMA + F16C */
    GGML__ISA_AVX512,    /* AVX-512 F/BW/DQ/VL, plus AVX2's requirements */
    GGML__ISA_NEON,      /* AArch64 Advanced SIMD */
    GGML__ISA_COUNT
};

/* CPU features that choose entries inside a level (never in a loop). */
struct ggml__isa_caps {
    bool avx2, avx512, avx512_vnni, avx512_bf16, avx_vnni;
    /*
     * vdpbf16ps issues as often as a 512-bit vfmadd231ps, so that a BF16
     * pair step does twice an F32 step's multiply-adds: AMD's Zen 4 and
     * Zen 5.  Not Intel's AVX512_BF16 processors, whose vdpbf16ps has one
     * port where the multiply-add has two, so that the F32 tile is the
     * faster product there.
     */
    bool bf16_dot_full_rate;
    bool neon, dotprod, i8mm, fp16_va;
};

/* The second-level cache's size assumed where the system does not say. */
#define GGML__L2_DEFAULT_BYTES ((size_t) 1 << 20)

/* The largest tile shape of any level (see gemm_tile). */
#define GGML__GEMM_MR_MAX 32
#define GGML__GEMM_NR_MAX 12
#define GGML__GEMM_B_MAX 32

/* The shape of a qgemm_tile call: at most this many rows and columns. */
#define GGML__QGEMM_ROWS 16
#define GGML__QGEMM_COLS 16

/*
 * A column of the integer matrix product (qgemm_tile): an activation row
 * encoded as Q8_0 blocks q, and per block b its scale d[b] as a float and
 * the sum of its 32 codes, sum[b]; for weights whose vec_dot_type is Q8_K
 * (the K-quants), q8_K blocks q, which hold their scales and sums (d and
 * sum unused).
 */
struct ggml__qcolumn {
    const void *q;
    const float *d;
    const int32_t *sum;
};

struct ggml__cpu_kernels {
    enum ggml__isa level;
    /* Outputs of at least this many bytes (the last-level cache's size,
       at most 4 MiB for each processor sharing it, at least the level-2
       cache's size) are written by the unary_stream and binary_stream
       entries (set with the table in lib/cpu/features.c; SIZE_MAX in a
       table built elsewhere). */
    size_t stream_min_bytes;
    /* The second-level cache's size, which sizes the matrix products'
       blocks of weights (set with the table in lib/cpu/features.c;
       GGML__L2_DEFAULT_BYTES in a table built elsewhere). */
    size_t l2_bytes;

    /*
     * vec_dot[t]: dot product of a row of type t with a row of
     * ggml_get_type_traits_cpu(t)->vec_dot_type, the ggml_vec_dot_t
     * contract with nrc = 1.  F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
     * MXFP4, NVFP4, Q1_0, Q2_0, IQ4_NL, Q4_K, Q5_K, Q6_K, TQ1_0, TQ2_0,
     * IQ4_XS.
     */
    ggml_vec_dot_t vec_dot[GGML_TYPE_COUNT];

    /*
     * The tile of the tiled F32 matrix product (lib/cpu/ops/matmul.c):
     *   c[j][i] (+)= sum over k < kc of apack[k * gemm_mr + i] *
     *                bpack[(k * gemm_nr + j) * gemm_lanes]
     * for i < mr <= gemm_mr, j < nr <= gemm_nr; stored when accumulate is
     * false, added otherwise.  The caller packs A's rows k-major in groups
     * of gemm_mr (zero past mr) and B's columns in groups of gemm_nr
     * (zero past nr), each value repeated gemm_lanes times.  Single
     * precision sums of exact products, in k order per element (every
     * level rounds alike up to the fused multiply-add).  The shape is the
     * level's: at most GGML__GEMM_MR_MAX x GGML__GEMM_NR_MAX, gemm_nr *
     * gemm_lanes at most GGML__GEMM_B_MAX.
     */
    int gemm_mr, gemm_nr, gemm_lanes;
    void (*gemm_tile)(int kc, const float *restrict apack, const float *restrict bpack, float *const *c, int mr,
                      int nr, bool accumulate);

    /*
     * gemm_bf16_tile: gemm_tile's product in BF16 pairs (NULL: the level
     * has none), of the same gemm_mr x gemm_nr shape:
     *   c[j][i] (+)= sum over p < kp of a(p, i).lo * b(p, j).lo +
     *                                   a(p, i).hi * b(p, j).hi
     * where a(p, i) is the 32-bit word apack[p * gemm_mr + i] and b(p, j)
     * bpack[p * gemm_nr + j], each holding two BF16 values (lo in the low
     * 16 bits: the smaller k).  Sums in single precision as vdpbf16ps
     * makes them (the two products of a pair added first; denormal inputs
     * and results may be flushed to zero); within 1e-5 of the sum of the
     * products' magnitudes.  Stored or added to as gemm_tile's.
     */
    void (*gemm_bf16_tile)(int kp, const uint32_t *restrict apack, const uint32_t *restrict bpack, float *const *c,
                           int mr, int nr, bool accumulate);
    /*
     * gemm_bf16_preferred: the CPU runs gemm_bf16_tile faster than
     * gemm_tile on the same values, so products of F16 and BF16 weights
     * take it (ops/matmul.c).  A property of the processor, not a
     * measurement at run time, so that a product's floats do not depend
     * on the machine's load (isa caps bf16_dot_full_rate).
     */
    bool gemm_bf16_preferred;

    /*
     * qgemm_tile[t]: the matrix product in integer arithmetic for weights
     * of type t against Q8_0 columns (NULL: the level has none; the
     * product then takes the F32 tiles or the dot products); for the
     * K-quants (Q4_K), against q8_K columns, blocks of 256 values, each
     * output the generic vec_dot's value bit for bit:
     *   c[j][r] = sum over blocks b < nb of
     *             d_t(r, b) * d_j[b] * sum_i w_t(r, b, i) * q_j(b, i)
     * for rows r < mr of A (row r at a + r * a_stride bytes, nb blocks of
     * t) and columns j < nr (cols[j]), mr <= GGML__QGEMM_ROWS, nr <=
     * GGML__QGEMM_COLS; nothing else is written.  The sums over a block's
     * 32 products are exact integers; each c[j][r] is within 1e-5 of the
     * sum of |products| of the double-precision value.
     */
    void (*qgemm_tile[GGML_TYPE_COUNT])(int nb, const void *a, size_t a_stride, int mr,
                                        const struct ggml__qcolumn *cols, int nr, float *const *c);

    /*
     * qgemm_packed_tile[t]: qgemm_tile for GGML__QGEMM_ROWS rows stored
     * interleaved (packed-rows.h: "CPU_REPACK" buffers), group at a
     * (a_stride unused).  Present at every level for the types
     * packed-rows.h packs (the generic entry is portable C); every level
     * gives the generic level's floats bit for bit: per block, the exact
     * integer sum converted, times d_j[b], then one fused multiply-add
     * by d_t(r, b) into c[j][r].
     */
    void (*qgemm_packed_tile[GGML_TYPE_COUNT])(int nb, const void *a, size_t a_stride, int mr,
                                               const struct ggml__qcolumn *cols, int nr, float *const *c);

    /*
     * qgemm_pack[t]: ggml__pack_rows(t, nb, rows, stride, mr, group) of
     * packed-rows.h, byte for byte: 16 rows of nb blocks interleaved into
     * their group (rows past mr: row 0 again).  Present at every level
     * for the types packed-rows.h packs.  For the K-quants (Q4_K, Q5_K,
     * Q6_K) a level may have qgemm_pack and qgemm_packed_tile with a
     * layout of its own, as many bytes as the rows' blocks, and then
     * qgemm_unpack: the packed tile gives the level's qgemm_tile's
     * floats, and CPU_REPACK buffers store such weights in that layout
     * (the level is fixed for the process).
     */
    void (*qgemm_pack[GGML_TYPE_COUNT])(int64_t nb, const char *rows, size_t stride, int mr, char *group);

    /*
     * qgemm_unpack[t]: the reverse of a level's own qgemm_pack for all 16
     * rows: the group at group back into 16 rows of nb blocks, stride
     * bytes apart.  NULL for the types packed-rows.h packs
     * (ggml__unpack_rows reverses them at every level).
     */
    void (*qgemm_unpack[GGML_TYPE_COUNT])(int64_t nb, const char *group, char *rows, size_t stride);

    /*
     * vec_dot_rows[t]: s[r] = vec_dot of row r of x (at x + r * bx bytes)
     * with y, for r < nr (1 <= nr <= 4): several weight rows streamed at
     * once against one activation row (more loads in flight).  Each s[r]
     * is within vec_dot's bounds (integer sums of quantized blocks exact,
     * as vec_dot's); NULL: vec_dot row by row (the generic level has no
     * entries).  y is a row of the vec_dot_type, as for vec_dot.
     */
    void (*vec_dot_rows[GGML_TYPE_COUNT])(int n, float *s, const void *x, size_t bx, const void *y, int nr);

    /*
     * rows_by_f32[t]: s[r] = the dot product of row r of x (at x + r * bx
     * bytes, n values of type t) with the n floats at y, for r < nr
     * (1 <= nr <= 4); single-precision sums of exact products, within
     * vec_dot's bound.  The matrix x vector products of F16 weights take
     * it with y rounded to F16 and held as floats: the products of
     * vec_dot_rows, with only the weights widened in the loop (the
     * widening, not the memory, bounds a product of F16 rows by F16
     * values).  A kernel may take its rows one by one where that
     * streams faster (long rows).  NULL: vec_dot_rows against y of the
     * vec_dot_type.
     */
    void (*rows_by_f32[GGML_TYPE_COUNT])(int n, float *s, const void *x, size_t bx, const float *y, int nr);

    /*
     * dot_tile[t]: c[j][i] = the dot product of row i of a (at a + i * bx
     * bytes, n values of type t: F32, F16 or BF16) with the n floats at
     * b[j], for i < mr and j < nc (1 <= mr, nc <= 4): a block of the
     * matrix product read from the rows as they are, without packing,
     * each loaded vector serving four products.  Single-precision sums of
     * exact products, each within vec_dot's bound; NULL: no such kernel
     * (the AVX-512 level has them: with sixteen vector registers a tile
     * of four columns took two passes and was slower than packing).
     */
    void (*dot_tile[GGML_TYPE_COUNT])(int n, const void *a, size_t bx, int mr, const float *const *b, int nc,
                                      float *const *c);

    /* from_float[t]: encoder of float rows (F16, BF16, Q8_0, Q8_1, ...). */
    ggml_from_float_t from_float[GGML_TYPE_COUNT];

    /*
     * to_float[t]: decoder of rows into floats, for every type that has
     * one (ggml_get_type_traits(t)->to_float, or a level's faster form)
     * and Q8_1; NULL for the others.
     */
    ggml_to_float_t to_float[GGML_TYPE_COUNT];

    /*
     * Element-wise F32 rows (y may equal x, or g for glu): unary[op] is
     * y[i] = op(x[i]); glu[op] is y[i] = op(x[i]) * g[i].  NULL: the op's
     * portable row function.
     */
    void (*unary[GGML_UNARY_OP_COUNT])(int64_t n, float *y, const float *x);
    /* unary_stream[op]: unary[op] storing y around the caches (non-temporal
       stores), for outputs larger than the last-level cache, the same
       bits; NULL where the level has none. */
    void (*unary_stream[GGML_UNARY_OP_COUNT])(int64_t n, float *y, const float *x);
    void (*glu[GGML_GLU_OP_COUNT])(int64_t n, float *y, const float *x, const float *g);

    /*
     * axpy[t]: acc[i] += w * x[i] for i < n, x a row of type t (F32, F16):
     * the value rows of attention.  acc and x do not overlap.
     */
    void (*axpy[GGML_TYPE_COUNT])(int64_t n, float *restrict acc, const void *restrict x, float w);

    /*
     * Row kernels of SOFT_MAX, the norms, SUM and the binary ops (added
     * with issue 14; the generic entries are lib/cpu/simd/generic/rows.c,
     * never NULL).  Outputs may equal an input (in place); sums are
     * accumulated in double lanes whose order depends on the level only,
     * never on the threads.
     */
    /* The largest of x[0..n), NaN ignored; -INFINITY when n == 0 or every x[i] is NaN. */
    float (*reduce_max)(int64_t n, const float *x);
    /* y[i] = exp(x[i] - max) (within the level's exp bound); returns the sum of the y[i], in double. */
    double (*softmax_exp_sum)(int64_t n, float *y, const float *x, float max);
    /* y[i] = x[i] * s. */
    void (*scale)(int64_t n, float *y, const float *x, float s);
    /* Sums in double of x[i], of x[i]^2 and of (x[i] - mean)^2. */
    double (*sum)(int64_t n, const float *x);
    double (*sum_sq)(int64_t n, const float *x);
    double (*sum_sq_dev)(int64_t n, const float *x, double mean);
    /* z[i] = x[i] op y[i] (binary), z[i] = x[i] op s (binary_scalar); IEEE single precision, exact ops. */
    void (*binary[GGML__BINARY_COUNT])(int64_t n, float *z, const float *x, const float *y);
    void (*binary_scalar[GGML__BINARY_COUNT])(int64_t n, float *z, const float *x, float s);
    /* binary_stream[op]: binary[op] storing z around the caches
       (non-temporal stores), for outputs larger than the last-level cache;
       the same bits; NULL where the level has none. */
    void (*binary_stream[GGML__BINARY_COUNT])(int64_t n, float *z, const float *x, const float *y);

    /*
     * Transposes (added for the copies of ops/copy.c): a matrix of rows x
     * cols elements of 4 bytes (transpose32) or 2 bytes (transpose16),
     * row r at src + r * src_stride, goes to dst with element (r, c) at
     * dst + c * dst_stride + r * size: column c of src becomes row c of
     * dst.  Bits are copied unchanged; strides are in bytes, any value
     * (negative too); src and dst do not overlap.
     */
    void (*transpose32)(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                        void *restrict dst, ptrdiff_t dst_stride);
    void (*transpose16)(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                        void *restrict dst, ptrdiff_t dst_stride);
};

/* The level's name as GGML_CPU_ISA spells it ("generic", "avx2", ...). */
const char *ggml__isa_name(enum ggml__isa level);

/* The level named name (any case), or GGML__ISA_COUNT when none is. */
enum ggml__isa ggml__isa_from_name(const char *name);

/* True when this build contains the level's kernels. */
bool ggml__isa_built(enum ggml__isa level);

/* True when a CPU with caps can run the level's kernels. */
bool ggml__isa_runs_on(enum ggml__isa level, const struct ggml__isa_caps *caps);

/*
 * Fills *k with the table of level for a CPU with caps.  The level must be
 * built and must run on caps; false (k untouched) otherwise.
 */
bool ggml__kernels_build(struct ggml__cpu_kernels *k, enum ggml__isa level, const struct ggml__isa_caps *caps);

/*
 * The table in use (lib/cpu/simd/select.c): the best level the CPU runs,
 * or the lower one GGML_CPU_ISA names; chosen at the first call.
 */
const struct ggml__cpu_kernels *ggml__kernels(void);

/* The CPU's caps, as the table in use was chosen for. */
const struct ggml__isa_caps *ggml__isa_caps(void);

#endif
