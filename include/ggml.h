/*
 * ggml.h - tensor core of libggml-backend.
 *
 * Contexts (arenas of tensor metadata and, optionally, data), tensors and
 * views, operation constructors that build a computation graph, graphs,
 * element types and quantization, fp16/bf16 conversion, logging and timing.
 *
 * Names, signatures, struct layouts and enum values are those of upstream
 * ggml so that programs written against it build unchanged.  Each
 * declaration carries a one-line contract; ggml(7) and the man3 page of
 * each function hold the details.
 *
 * Error handling differs from upstream in one respect: the library never
 * aborts on bad input.  Constructors given invalid arguments log one
 * message and return NULL; a NULL input yields NULL without a second
 * message, and a graph built from a NULL tensor fails when computed.
 */
#ifndef GGML_H
#define GGML_H

/* ------------------------------------------------------------ attributes */

/* Marks a public symbol.  The library is built with -fvisibility=hidden and
 * a version script; this attribute is what makes a declaration exported. */
#if defined(__GNUC__) || defined(__clang__)
#    define GGML_API __attribute__((visibility("default"))) extern
#else
#    define GGML_API extern
#endif

/* GGML_DEPRECATED(declaration, "hint"): the declaration, flagged so that a
 * call produces a compiler warning carrying the hint. */
#if defined(__GNUC__) || defined(__clang__)
#    define GGML_DEPRECATED(func, hint) func __attribute__((deprecated(hint)))
#elif defined(_MSC_VER)
#    define GGML_DEPRECATED(func, hint) __declspec(deprecated(hint)) func
#else
#    define GGML_DEPRECATED(func, hint) func
#endif

/* GGML_ATTRIBUTE_FORMAT(fmt_index, first_arg_index): printf-style checking. */
#if !defined(__GNUC__) && !defined(__clang__)
#    define GGML_ATTRIBUTE_FORMAT(...)
#elif defined(__MINGW32__) && !defined(__clang__)
#    define GGML_ATTRIBUTE_FORMAT(...) __attribute__((format(gnu_printf, __VA_ARGS__)))
#else
#    define GGML_ATTRIBUTE_FORMAT(...) __attribute__((format(printf, __VA_ARGS__)))
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------- constants */

#define GGML_FILE_MAGIC   0x67676d6c /* the bytes "ggml" read as a little-endian word */
#define GGML_FILE_VERSION 2

#define GGML_QNT_VERSION        2    /* changes whenever a quantized layout changes */
#define GGML_QNT_VERSION_FACTOR 1000 /* ftype = type + GGML_QNT_VERSION * factor in old files */

#define GGML_MAX_DIMS           4    /* tensors have at most this many dimensions */
#define GGML_MAX_PARAMS         2048
#define GGML_MAX_SRC            10   /* source tensors an operation may have */
#define GGML_MAX_N_THREADS      512  /* size of ggml_threadpool_params.cpumask */
#define GGML_MAX_OP_PARAMS      64   /* bytes of ggml_tensor.op_params */

#ifndef GGML_MAX_NAME
#    define GGML_MAX_NAME       64   /* bytes of ggml_tensor.name, terminator included */
#endif

#define GGML_DEFAULT_N_THREADS  4
#define GGML_DEFAULT_GRAPH_SIZE 2048 /* node capacity of ggml_new_graph() */

/* Alignment of every object carved from a context. */
#if UINTPTR_MAX == 0xFFFFFFFF
#    define GGML_MEM_ALIGN 4
#elif defined(__EMSCRIPTEN__)
#    define GGML_MEM_ALIGN 8
#else
#    define GGML_MEM_ALIGN 16
#endif

#define GGML_EXIT_SUCCESS 0
#define GGML_EXIT_ABORTED 1

/* RoPE modes (the mode argument of the ggml_rope* family). */
#define GGML_ROPE_TYPE_NORMAL 0
#define GGML_ROPE_TYPE_NEOX   2
#define GGML_ROPE_TYPE_MROPE  8
#define GGML_ROPE_TYPE_VISION 24
#define GGML_ROPE_TYPE_IMROPE 40

/* Number of section sizes taken by the multi-section RoPE variants. */
#define GGML_MROPE_SECTIONS   4

/* ---------------------------------------------------------------- macros */

/* Silences an unused-variable warning for x. */
#define GGML_UNUSED(x) (void)(x)

/* Silences unused-variable warnings for each of its 1 to 16 arguments
 * (each is cast to void, so arguments should be plain variables). */
#define GGML_UNUSED_VARS(...) \
    do { GGML_UNUSED_N_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)(__VA_ARGS__) } while (0)
#define GGML_UNUSED_N_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, n, ...) \
    GGML_UNUSED_CAT_(GGML_UNUSED_, n)
#define GGML_UNUSED_CAT_(a, b) GGML_UNUSED_CAT2_(a, b)
#define GGML_UNUSED_CAT2_(a, b) a##b
#define GGML_UNUSED_1(x)       (void)(x);
#define GGML_UNUSED_2(x, ...)  (void)(x); GGML_UNUSED_1(__VA_ARGS__)
#define GGML_UNUSED_3(x, ...)  (void)(x); GGML_UNUSED_2(__VA_ARGS__)
#define GGML_UNUSED_4(x, ...)  (void)(x); GGML_UNUSED_3(__VA_ARGS__)
#define GGML_UNUSED_5(x, ...)  (void)(x); GGML_UNUSED_4(__VA_ARGS__)
#define GGML_UNUSED_6(x, ...)  (void)(x); GGML_UNUSED_5(__VA_ARGS__)
#define GGML_UNUSED_7(x, ...)  (void)(x); GGML_UNUSED_6(__VA_ARGS__)
#define GGML_UNUSED_8(x, ...)  (void)(x); GGML_UNUSED_7(__VA_ARGS__)
#define GGML_UNUSED_9(x, ...)  (void)(x); GGML_UNUSED_8(__VA_ARGS__)
#define GGML_UNUSED_10(x, ...) (void)(x); GGML_UNUSED_9(__VA_ARGS__)
#define GGML_UNUSED_11(x, ...) (void)(x); GGML_UNUSED_10(__VA_ARGS__)
#define GGML_UNUSED_12(x, ...) (void)(x); GGML_UNUSED_11(__VA_ARGS__)
#define GGML_UNUSED_13(x, ...) (void)(x); GGML_UNUSED_12(__VA_ARGS__)
#define GGML_UNUSED_14(x, ...) (void)(x); GGML_UNUSED_13(__VA_ARGS__)
#define GGML_UNUSED_15(x, ...) (void)(x); GGML_UNUSED_14(__VA_ARGS__)
#define GGML_UNUSED_16(x, ...) (void)(x); GGML_UNUSED_15(__VA_ARGS__)

/* x rounded up to a multiple of n; n must be a power of two. */
#define GGML_PAD(x, n) (((x) + (n) - 1) & ~((n) - 1))

#ifdef __cplusplus
#    define GGML_NORETURN [[noreturn]]
#elif defined(_MSC_VER)
#    define GGML_NORETURN __declspec(noreturn)
#else
#    define GGML_NORETURN _Noreturn
#endif

/* Reports an internal invariant violation at this file and line and ends
 * the process (see ggml_abort). */
#define GGML_ABORT(...) ggml_abort(__FILE__, __LINE__, __VA_ARGS__)

/* Evaluates x once; if it is false, aborts naming the expression.  Usable
 * as a statement or as a void expression.  Kept for source compatibility:
 * the library itself asserts only what no caller input can reach. */
#define GGML_ASSERT(x) ((x) ? (void) 0 : GGML_ABORT("GGML_ASSERT(%s) failed", #x))

/* Marks a point that control never reaches. */
#if !defined(NDEBUG)
#    define GGML_UNREACHABLE() GGML_ABORT("statement should be unreachable")
#elif defined(__GNUC__) || defined(__clang__)
#    define GGML_UNREACHABLE() __builtin_unreachable()
#elif defined(_MSC_VER)
#    define GGML_UNREACHABLE() __assume(0)
#else
#    define GGML_UNREACHABLE() ((void) 0)
#endif

/*
 * GGML_TENSOR_LOCALS(type, prefix, pointer, array) declares four constants
 * prefix0..prefix3 holding pointer->array[0..3] (0 when pointer is NULL),
 * e.g. GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne) gives ne10..ne13.
 */
#define GGML_TENSOR_LOCALS_1(type, prefix, pointer, array)          \
    const type prefix##0 = (pointer) ? (pointer)->array[0] : 0;     \
    GGML_UNUSED(prefix##0);
#define GGML_TENSOR_LOCALS_2(type, prefix, pointer, array)          \
    GGML_TENSOR_LOCALS_1(type, prefix, pointer, array)              \
    const type prefix##1 = (pointer) ? (pointer)->array[1] : 0;     \
    GGML_UNUSED(prefix##1);
#define GGML_TENSOR_LOCALS_3(type, prefix, pointer, array)          \
    GGML_TENSOR_LOCALS_2(type, prefix, pointer, array)              \
    const type prefix##2 = (pointer) ? (pointer)->array[2] : 0;     \
    GGML_UNUSED(prefix##2);
#define GGML_TENSOR_LOCALS(type, prefix, pointer, array)            \
    GGML_TENSOR_LOCALS_3(type, prefix, pointer, array)              \
    const type prefix##3 = (pointer) ? (pointer)->array[3] : 0;     \
    GGML_UNUSED(prefix##3);

/* Shapes and strides of src0 and dst (ne00.., nb00.., ne0.., nb0..). */
#define GGML_TENSOR_UNARY_OP_LOCALS                 \
    GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb)      \
    GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

/* As above, plus src1 (ne10.., nb10..). */
#define GGML_TENSOR_BINARY_OP_LOCALS                \
    GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb)      \
    GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb1, src1, nb)      \
    GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

/* As above, plus src2 (ne20.., nb20..). */
#define GGML_TENSOR_TERNARY_OP_LOCALS               \
    GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb)      \
    GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb1, src1, nb)      \
    GGML_TENSOR_LOCALS(int64_t, ne2, src2, ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb2, src2, nb)      \
    GGML_TENSOR_LOCALS(int64_t, ne,  dst,  ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb,  dst,  nb)

/* Shapes and strides of src0 and src1 only. */
#define GGML_TENSOR_BINARY_OP_LOCALS01              \
    GGML_TENSOR_LOCALS(int64_t, ne0, src0, ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb0, src0, nb)      \
    GGML_TENSOR_LOCALS(int64_t, ne1, src1, ne)      \
    GGML_TENSOR_LOCALS(size_t,  nb1, src1, nb)

#ifdef __cplusplus
extern "C" {
#endif

    /* ------------------------------------------------------ fatal errors */

    /* Called by ggml_abort with the formatted message instead of printing it. */
    typedef void (*ggml_abort_callback_t)(const char * error_message);

    /* Installs the abort hook (NULL restores the default: print to stderr);
     * returns the previous hook. */
    GGML_API ggml_abort_callback_t ggml_set_abort_callback(ggml_abort_callback_t callback);

    /* Reports an internal invariant failure at file:line, then ends the
     * process.  Never called by the library for caller errors. */
    GGML_NORETURN GGML_ATTRIBUTE_FORMAT(3, 4)
    GGML_API void ggml_abort(const char * file, int line, const char * fmt, ...);

    /* Result of a computation or allocation. */
    enum ggml_status {
        GGML_STATUS_ALLOC_FAILED = -2,
        GGML_STATUS_FAILED       = -1,
        GGML_STATUS_SUCCESS      =  0,
        GGML_STATUS_ABORTED      =  1,
    };

    /* Static English description of a status, never NULL. */
    GGML_API const char * ggml_status_to_string(enum ggml_status status);

    /* ------------------------------------------------ half-size floats */

    /* IEEE 754 binary16, stored as its bit pattern. */
    typedef uint16_t ggml_fp16_t;
    /* binary16 -> binary32, exact. */
    GGML_API float       ggml_fp16_to_fp32(ggml_fp16_t);
    /* binary32 -> binary16, round to nearest even. */
    GGML_API ggml_fp16_t ggml_fp32_to_fp16(float);
    /* Converts n values. */
    GGML_API void        ggml_fp16_to_fp32_row(const ggml_fp16_t *, float *, int64_t);
    GGML_API void        ggml_fp32_to_fp16_row(const float *, ggml_fp16_t *, int64_t);

    /* bfloat16 (the upper half of a binary32), wrapped so it is not an integer. */
    typedef struct { uint16_t bits; } ggml_bf16_t;
    /* binary32 -> bfloat16, round to nearest even (NaN stays NaN). */
    GGML_API ggml_bf16_t ggml_fp32_to_bf16(float);
    /* bfloat16 -> binary32, exact. */
    GGML_API float       ggml_bf16_to_fp32(ggml_bf16_t);
    /* Converts n values. */
    GGML_API void        ggml_bf16_to_fp32_row(const ggml_bf16_t *, float *, int64_t);
    /* Reference (scalar) conversion, bit-identical to ggml_fp32_to_bf16. */
    GGML_API void        ggml_fp32_to_bf16_row_ref(const float *, ggml_bf16_t *, int64_t);
    GGML_API void        ggml_fp32_to_bf16_row(const float *, ggml_bf16_t *, int64_t);

    struct ggml_object;
    struct ggml_context;
    struct ggml_cgraph;

    /* ----------------------------------------------------------- types */

    /* Element types.  The numbers are stored in model files: never renumber.
     * Gaps are types that were removed. */
    enum ggml_type {
        GGML_TYPE_F32     = 0,
        GGML_TYPE_F16     = 1,
        GGML_TYPE_Q4_0    = 2,
        GGML_TYPE_Q4_1    = 3,
        /* 4 and 5 are retired */
        GGML_TYPE_Q5_0    = 6,
        GGML_TYPE_Q5_1    = 7,
        GGML_TYPE_Q8_0    = 8,
        GGML_TYPE_Q8_1    = 9,
        GGML_TYPE_Q2_K    = 10,
        GGML_TYPE_Q3_K    = 11,
        GGML_TYPE_Q4_K    = 12,
        GGML_TYPE_Q5_K    = 13,
        GGML_TYPE_Q6_K    = 14,
        GGML_TYPE_Q8_K    = 15,
        GGML_TYPE_IQ2_XXS = 16,
        GGML_TYPE_IQ2_XS  = 17,
        GGML_TYPE_IQ3_XXS = 18,
        GGML_TYPE_IQ1_S   = 19,
        GGML_TYPE_IQ4_NL  = 20,
        GGML_TYPE_IQ3_S   = 21,
        GGML_TYPE_IQ2_S   = 22,
        GGML_TYPE_IQ4_XS  = 23,
        GGML_TYPE_I8      = 24,
        GGML_TYPE_I16     = 25,
        GGML_TYPE_I32     = 26,
        GGML_TYPE_I64     = 27,
        GGML_TYPE_F64     = 28,
        GGML_TYPE_IQ1_M   = 29,
        GGML_TYPE_BF16    = 30,
        /* 31, 32 and 33 are retired */
        GGML_TYPE_TQ1_0   = 34,
        GGML_TYPE_TQ2_0   = 35,
        /* 36, 37 and 38 are retired */
        GGML_TYPE_MXFP4   = 39,
        GGML_TYPE_NVFP4   = 40, /* 64 E2M1 values in 4 groups, each with a UE4M3 scale */
        GGML_TYPE_Q1_0    = 41,
        GGML_TYPE_Q2_0    = 42,
        GGML_TYPE_COUNT   = 43,
    };

    /* Precision requested for an operation (stored in its op_params). */
    enum ggml_prec {
        GGML_PREC_DEFAULT =  0,
        GGML_PREC_F32     = 10,
    };

    /* Hints a backend may use for a matrix multiplication (ggml_mul_mat_set_hint). */
    enum ggml_op_hint {
        GGML_HINT_NONE             = 0,
        GGML_HINT_SRC0_IS_HADAMARD = 1, /* src0 is a Hadamard matrix */
    };

    /* Whole-model file types of the legacy ggml file format. */
    enum ggml_ftype {
        GGML_FTYPE_UNKNOWN              = -1,
        GGML_FTYPE_ALL_F32              = 0,
        GGML_FTYPE_MOSTLY_F16           = 1,  /* "mostly": 1-d tensors stay F32 */
        GGML_FTYPE_MOSTLY_Q4_0          = 2,
        GGML_FTYPE_MOSTLY_Q4_1          = 3,
        GGML_FTYPE_MOSTLY_Q4_1_SOME_F16 = 4,  /* embeddings and output in F16 */
        GGML_FTYPE_MOSTLY_Q8_0          = 7,
        GGML_FTYPE_MOSTLY_Q5_0          = 8,
        GGML_FTYPE_MOSTLY_Q5_1          = 9,
        GGML_FTYPE_MOSTLY_Q2_K          = 10,
        GGML_FTYPE_MOSTLY_Q3_K          = 11,
        GGML_FTYPE_MOSTLY_Q4_K          = 12,
        GGML_FTYPE_MOSTLY_Q5_K          = 13,
        GGML_FTYPE_MOSTLY_Q6_K          = 14,
        GGML_FTYPE_MOSTLY_IQ2_XXS       = 15,
        GGML_FTYPE_MOSTLY_IQ2_XS        = 16,
        GGML_FTYPE_MOSTLY_IQ3_XXS       = 17,
        GGML_FTYPE_MOSTLY_IQ1_S         = 18,
        GGML_FTYPE_MOSTLY_IQ4_NL        = 19,
        GGML_FTYPE_MOSTLY_IQ3_S         = 20,
        GGML_FTYPE_MOSTLY_IQ2_S         = 21,
        GGML_FTYPE_MOSTLY_IQ4_XS        = 22,
        GGML_FTYPE_MOSTLY_IQ1_M         = 23,
        GGML_FTYPE_MOSTLY_BF16          = 24,
        GGML_FTYPE_MOSTLY_MXFP4         = 25,
        GGML_FTYPE_MOSTLY_NVFP4         = 26,
        GGML_FTYPE_MOSTLY_Q1_0          = 27,
        GGML_FTYPE_MOSTLY_Q2_0          = 28,
    };

    /* Operations (ggml_tensor.op).  The order is upstream's. */
    enum ggml_op {
        GGML_OP_NONE = 0,

        GGML_OP_DUP,
        GGML_OP_ADD,
        GGML_OP_ADD_ID,
        GGML_OP_ADD1,
        GGML_OP_ACC,
        GGML_OP_SUB,
        GGML_OP_MUL,
        GGML_OP_DIV,
        GGML_OP_SQR,
        GGML_OP_SQRT,
        GGML_OP_LOG,
        GGML_OP_SIN,
        GGML_OP_COS,
        GGML_OP_SUM,
        GGML_OP_SUM_ROWS,
        GGML_OP_CUMSUM,
        GGML_OP_MEAN,
        GGML_OP_ARGMAX,
        GGML_OP_COUNT_EQUAL,
        GGML_OP_REPEAT,
        GGML_OP_REPEAT_BACK,
        GGML_OP_CONCAT,
        GGML_OP_SILU_BACK,
        GGML_OP_NORM,
        GGML_OP_RMS_NORM,
        GGML_OP_RMS_NORM_BACK,
        GGML_OP_GROUP_NORM,
        GGML_OP_L2_NORM,

        GGML_OP_MUL_MAT,
        GGML_OP_MUL_MAT_ID,
        GGML_OP_OUT_PROD,

        GGML_OP_SCALE,
        GGML_OP_SET,
        GGML_OP_CPY,
        GGML_OP_CONT,
        GGML_OP_RESHAPE,
        GGML_OP_VIEW,
        GGML_OP_PERMUTE,
        GGML_OP_TRANSPOSE,
        GGML_OP_GET_ROWS,
        GGML_OP_GET_ROWS_BACK,
        GGML_OP_SET_ROWS,
        GGML_OP_DIAG,
        GGML_OP_DIAG_MASK_INF,
        GGML_OP_DIAG_MASK_ZERO,
        GGML_OP_SOFT_MAX,
        GGML_OP_SOFT_MAX_BACK,
        GGML_OP_ROPE,
        GGML_OP_ROPE_BACK,
        GGML_OP_CLAMP,
        GGML_OP_CONV_TRANSPOSE_1D,
        GGML_OP_IM2COL,
        GGML_OP_IM2COL_BACK,
        GGML_OP_IM2COL_3D,
        GGML_OP_COL2IM_1D,
        GGML_OP_CONV_2D,
        GGML_OP_CONV_3D,
        GGML_OP_CONV_2D_DW,
        GGML_OP_CONV_TRANSPOSE_2D,
        GGML_OP_POOL_1D,
        GGML_OP_POOL_2D,
        GGML_OP_POOL_2D_BACK,
        GGML_OP_UPSCALE,
        GGML_OP_PAD,
        GGML_OP_PAD_REFLECT_1D,
        GGML_OP_ROLL,
        GGML_OP_ARANGE,
        GGML_OP_TIMESTEP_EMBEDDING,
        GGML_OP_ARGSORT,
        GGML_OP_TOP_K,
        GGML_OP_LEAKY_RELU,
        GGML_OP_TRI,
        GGML_OP_FILL,

        GGML_OP_FLASH_ATTN_EXT,
        GGML_OP_FLASH_ATTN_BACK,
        GGML_OP_SSM_CONV,
        GGML_OP_SSM_SCAN,
        GGML_OP_WIN_PART,
        GGML_OP_WIN_UNPART,
        GGML_OP_GET_REL_POS,
        GGML_OP_ADD_REL_POS,
        GGML_OP_RWKV_WKV6,
        GGML_OP_GATED_LINEAR_ATTN,
        GGML_OP_RWKV_WKV7,
        GGML_OP_SOLVE_TRI,
        GGML_OP_GATED_DELTA_NET,
        GGML_OP_LIGHTNING_INDEXER,
        GGML_OP_DSV4_HC_COMB,
        GGML_OP_DSV4_HC_PRE,
        GGML_OP_DSV4_HC_POST,

        GGML_OP_UNARY,

        GGML_OP_MAP_CUSTOM1,
        GGML_OP_MAP_CUSTOM2,
        GGML_OP_MAP_CUSTOM3,

        GGML_OP_CUSTOM,

        GGML_OP_CROSS_ENTROPY_LOSS,
        GGML_OP_CROSS_ENTROPY_LOSS_BACK,
        GGML_OP_OPT_STEP_ADAMW,
        GGML_OP_OPT_STEP_SGD,

        GGML_OP_GLU,

        GGML_OP_COUNT,
    };

    /* Element-wise functions carried by GGML_OP_UNARY nodes. */
    enum ggml_unary_op {
        GGML_UNARY_OP_ABS,
        GGML_UNARY_OP_SGN,
        GGML_UNARY_OP_NEG,
        GGML_UNARY_OP_STEP,
        GGML_UNARY_OP_TANH,
        GGML_UNARY_OP_ELU,
        GGML_UNARY_OP_RELU,
        GGML_UNARY_OP_SIGMOID,
        GGML_UNARY_OP_GELU,
        GGML_UNARY_OP_GELU_QUICK,
        GGML_UNARY_OP_SILU,
        GGML_UNARY_OP_HARDSWISH,
        GGML_UNARY_OP_HARDSIGMOID,
        GGML_UNARY_OP_EXP,
        GGML_UNARY_OP_EXPM1,
        GGML_UNARY_OP_SOFTPLUS,
        GGML_UNARY_OP_GELU_ERF,
        GGML_UNARY_OP_XIELU,
        GGML_UNARY_OP_FLOOR,
        GGML_UNARY_OP_CEIL,
        GGML_UNARY_OP_ROUND,
        GGML_UNARY_OP_TRUNC,

        GGML_UNARY_OP_COUNT,
    };

    /* Gated linear units carried by GGML_OP_GLU nodes. */
    enum ggml_glu_op {
        GGML_GLU_OP_REGLU,
        GGML_GLU_OP_GEGLU,
        GGML_GLU_OP_SWIGLU,
        GGML_GLU_OP_SWIGLU_OAI,
        GGML_GLU_OP_GEGLU_ERF,
        GGML_GLU_OP_GEGLU_QUICK,

        GGML_GLU_OP_COUNT,
    };

    /* Kinds of object carved from a context. */
    enum ggml_object_type {
        GGML_OBJECT_TYPE_TENSOR,
        GGML_OBJECT_TYPE_GRAPH,
        GGML_OBJECT_TYPE_WORK_BUFFER
    };

    /* Severity of a log message. */
    enum ggml_log_level {
        GGML_LOG_LEVEL_NONE  = 0,
        GGML_LOG_LEVEL_DEBUG = 1,
        GGML_LOG_LEVEL_INFO  = 2,
        GGML_LOG_LEVEL_WARN  = 3,
        GGML_LOG_LEVEL_ERROR = 4,
        GGML_LOG_LEVEL_CONT  = 5, /* continues the previous message */
    };

    /* Bits of ggml_tensor.flags. */
    enum ggml_tensor_flag {
        GGML_TENSOR_FLAG_INPUT   =  1, /* set by ggml_set_input: written by the caller before compute */
        GGML_TENSOR_FLAG_OUTPUT  =  2, /* set by ggml_set_output: read by the caller after compute */
        GGML_TENSOR_FLAG_PARAM   =  4, /* set by ggml_set_param: trainable */
        GGML_TENSOR_FLAG_LOSS    =  8, /* set by ggml_set_loss: contributes to the loss */
        GGML_TENSOR_FLAG_COMPUTE = 16, /* node is to be computed (see ggml_build_forward_select) */
    };

    /* Which part of a matrix ggml_tri keeps. */
    enum ggml_tri_type {
        GGML_TRI_TYPE_UPPER_DIAG = 0, /* upper triangle with the diagonal */
        GGML_TRI_TYPE_UPPER      = 1, /* strictly upper */
        GGML_TRI_TYPE_LOWER_DIAG = 2, /* lower triangle with the diagonal */
        GGML_TRI_TYPE_LOWER      = 3  /* strictly lower */
    };

    /* Arguments of ggml_init. */
    struct ggml_init_params {
        size_t mem_size;   /* arena size in bytes */
        void * mem_buffer; /* caller-owned arena, or NULL for one the context allocates */
        bool   no_alloc;   /* tensors get metadata only; data comes from a backend buffer */
    };

    /* An n-dimensional tensor, or an operation node producing one. */
    struct ggml_tensor {
        enum ggml_type type;

        struct ggml_backend_buffer * buffer; /* buffer holding data, or NULL */

        int64_t ne[GGML_MAX_DIMS]; /* elements per dimension */
        size_t  nb[GGML_MAX_DIMS]; /* stride per dimension in bytes; nb[0] is the
                                      block size, nb[1] covers one row of blocks
                                      (plus any padding), nb[i] = nb[i-1]*ne[i-1]
                                      when contiguous */

        enum ggml_op op; /* operation producing this tensor; GGML_OP_NONE for a leaf */

        /* operation parameters, int32-aligned */
        int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];

        int32_t flags; /* enum ggml_tensor_flag bits */

        struct ggml_tensor * src[GGML_MAX_SRC]; /* operands, unused slots NULL */

        struct ggml_tensor * view_src;  /* tensor whose data this one aliases, or NULL */
        size_t               view_offs; /* byte offset into view_src's data */

        void * data; /* first element, or NULL when not allocated */

        char name[GGML_MAX_NAME];

        void * extra; /* reserved for the backend owning the buffer */

        char padding[8];
    };

#if defined(__GNUC__) || defined(__clang__)
    __attribute__((unused))
#endif
    static const size_t GGML_TENSOR_SIZE = sizeof(struct ggml_tensor);

    /* Polled during computation; returning true stops it (GGML_STATUS_ABORTED). */
    typedef bool (*ggml_abort_callback)(void * data);

    /* ------------------------------------------------------------- GUID */

    /* 16-byte identifier of a backend implementation. */
    typedef uint8_t ggml_guid[16];
    typedef ggml_guid * ggml_guid_t;

    /* True when both identifiers hold the same 16 bytes. */
    GGML_API bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b);

    /* ------------------------------------------------------------- misc */

    /* Release version of the library, e.g. "0.1.0". */
    GGML_API const char * ggml_version(void);
    /* Source revision the library was built from, or "unknown". */
    GGML_API const char * ggml_commit(void);

    /* Starts the clocks below; safe to call more than once. */
    GGML_API void    ggml_time_init(void);
    /* Monotonic time in milliseconds / microseconds. */
    GGML_API int64_t ggml_time_ms(void);
    GGML_API int64_t ggml_time_us(void);
    /* Processor clock ticks (a monotonic counter) and ticks per millisecond. */
    GGML_API int64_t ggml_cycles(void);
    GGML_API int64_t ggml_cycles_per_ms(void);

    /* fopen for a UTF-8 path. */
    GGML_API FILE *  ggml_fopen(const char * fname, const char * mode);

    /* Debug dump of one object / of every object of a context, through the log. */
    GGML_API void    ggml_print_object (const struct ggml_object * obj);
    GGML_API void    ggml_print_objects(const struct ggml_context * ctx);

    /* Number of elements. */
    GGML_API int64_t ggml_nelements (const struct ggml_tensor * tensor);
    /* Number of rows: ne[1]*ne[2]*ne[3]. */
    GGML_API int64_t ggml_nrows     (const struct ggml_tensor * tensor);
    /* Bytes spanned by the data, strides included. */
    GGML_API size_t  ggml_nbytes    (const struct ggml_tensor * tensor);
    /* ggml_nbytes rounded up to GGML_MEM_ALIGN. */
    GGML_API size_t  ggml_nbytes_pad(const struct ggml_tensor * tensor);

    /* Elements per block of a type (1 for plain types). */
    GGML_API int64_t ggml_blck_size(enum ggml_type type);
    /* Bytes per block of a type. */
    GGML_API size_t  ggml_type_size(enum ggml_type type);
    /* Bytes of a row of ne elements; ne must be a multiple of the block size. */
    GGML_API size_t  ggml_row_size (enum ggml_type type, int64_t ne);

    /* Bytes per element as a fraction (type size / block size). */
    GGML_DEPRECATED(
    GGML_API double ggml_type_sizef(enum ggml_type type),
    "use ggml_row_size() instead");

    /* Static short names ("f16", "ADD", "+"...); a placeholder for bad values. */
    GGML_API const char * ggml_type_name(enum ggml_type type);
    GGML_API const char * ggml_op_name  (enum ggml_op   op);
    GGML_API const char * ggml_op_symbol(enum ggml_op   op);

    GGML_API const char * ggml_unary_op_name(enum ggml_unary_op op);
    GGML_API const char * ggml_glu_op_name(enum ggml_glu_op op);
    /* Unary or GLU function name for such nodes, the op name otherwise. */
    GGML_API const char * ggml_op_desc(const struct ggml_tensor * t);

    /* Bytes per block of the tensor's type. */
    GGML_API size_t  ggml_element_size(const struct ggml_tensor * tensor);

    /* True for block-quantized types. */
    GGML_API bool    ggml_is_quantized(enum ggml_type type);

    /* Main tensor type of a legacy file type, GGML_TYPE_COUNT if none. */
    GGML_API enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype);

    /* Shape predicates. */
    GGML_API bool ggml_is_transposed(const struct ggml_tensor * tensor); /* nb[0] > nb[1] */
    GGML_API bool ggml_is_permuted  (const struct ggml_tensor * tensor); /* strides out of order */
    GGML_API bool ggml_is_empty     (const struct ggml_tensor * tensor); /* some ne[i] == 0 */
    GGML_API bool ggml_is_view      (const struct ggml_tensor * tensor); /* aliases another tensor */
    GGML_API bool ggml_is_scalar    (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_vector    (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_matrix    (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_3d        (const struct ggml_tensor * tensor);
    /* Index of the last dimension above 1, plus one; 1 for a scalar. */
    GGML_API int  ggml_n_dims       (const struct ggml_tensor * tensor);

    /* Elements can be walked with one flat index: no gaps, no permutation. */
    GGML_API bool ggml_is_contiguous  (const struct ggml_tensor * tensor);
    GGML_API bool ggml_is_contiguous_0(const struct ggml_tensor * tensor); /* same as ggml_is_contiguous */
    GGML_API bool ggml_is_contiguous_1(const struct ggml_tensor * tensor); /* contiguous from dimension 1 up */
    GGML_API bool ggml_is_contiguous_2(const struct ggml_tensor * tensor); /* contiguous from dimension 2 up */
    GGML_API bool ggml_is_contiguous_to_1(const struct ggml_tensor * tensor); /* dimension 0 dense */
    GGML_API bool ggml_is_contiguous_to_2(const struct ggml_tensor * tensor); /* dimensions 0 and 1 dense */
    GGML_API bool ggml_is_contiguous_to_3(const struct ggml_tensor * tensor); /* dimensions 0 to 2 dense */

    /* Data fills one gap-free block, in any dimension order. */
    GGML_API bool ggml_is_contiguously_allocated(const struct ggml_tensor * tensor);

    /* Laid out as C,W,H,N in memory and permuted to W,H,C,N. */
    GGML_API bool ggml_is_contiguous_channels(const struct ggml_tensor * tensor);

    /* Dimension 0 is contiguous, or there is a single block per row. */
    GGML_API bool ggml_is_contiguous_rows(const struct ggml_tensor * tensor);

    GGML_API bool ggml_are_same_shape (const struct ggml_tensor * t0, const struct ggml_tensor * t1);
    GGML_API bool ggml_are_same_stride(const struct ggml_tensor * t0, const struct ggml_tensor * t1);

    /* True when t0 can be broadcast (repeated) to the shape of t1. */
    GGML_API bool ggml_can_repeat(const struct ggml_tensor * t0, const struct ggml_tensor * t1);

    /* Context bytes taken by one tensor's metadata. */
    GGML_API size_t ggml_tensor_overhead(void);

    /* Checks nbytes of row data of a type for NaN/Inf and bad block scales. */
    GGML_API bool ggml_validate_row_data(enum ggml_type type, const void * data, size_t nbytes);

    /* --------------------------------------------------------- contexts */

    /* Creates a context; NULL (logged) when the arena cannot be had. */
    GGML_API struct ggml_context * ggml_init (struct ggml_init_params params);
    /* Forgets every object of the context, keeping its arena. */
    GGML_API void                  ggml_reset(struct ggml_context * ctx);
    /* Frees the context and the arena it allocated; NULL is a no-op. */
    GGML_API void                  ggml_free (struct ggml_context * ctx);

    /* Arena bytes in use. */
    GGML_API size_t  ggml_used_mem(const struct ggml_context * ctx);

    GGML_API bool    ggml_get_no_alloc(struct ggml_context * ctx);
    GGML_API void    ggml_set_no_alloc(struct ggml_context * ctx, bool no_alloc);

    GGML_API void *  ggml_get_mem_buffer     (const struct ggml_context * ctx);
    GGML_API size_t  ggml_get_mem_size       (const struct ggml_context * ctx);
    /* Largest ggml_nbytes among the context's tensors. */
    GGML_API size_t  ggml_get_max_tensor_size(const struct ggml_context * ctx);

    /* New tensor of n_dims dimensions (1..4) with shape ne; NULL on error. */
    GGML_API struct ggml_tensor * ggml_new_tensor(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int    n_dims,
            const int64_t *ne);

    GGML_API struct ggml_tensor * ggml_new_tensor_1d(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int64_t ne0);

    GGML_API struct ggml_tensor * ggml_new_tensor_2d(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int64_t ne0,
            int64_t ne1);

    GGML_API struct ggml_tensor * ggml_new_tensor_3d(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int64_t ne0,
            int64_t ne1,
            int64_t ne2);

    GGML_API struct ggml_tensor * ggml_new_tensor_4d(
            struct ggml_context * ctx,
            enum   ggml_type type,
            int64_t ne0,
            int64_t ne1,
            int64_t ne2,
            int64_t ne3);

    /* Raw aligned bytes from the arena; NULL when full. */
    GGML_API void * ggml_new_buffer(struct ggml_context * ctx, size_t nbytes);

    /* New tensor of src's type and shape (data not copied). */
    GGML_API struct ggml_tensor * ggml_dup_tensor (struct ggml_context * ctx, const struct ggml_tensor * src);
    /* New tensor aliasing all of src's data. */
    GGML_API struct ggml_tensor * ggml_view_tensor(struct ggml_context * ctx, struct ggml_tensor * src);

    /* Walks the context's tensors in creation order; NULL at the end. */
    GGML_API struct ggml_tensor * ggml_get_first_tensor(const struct ggml_context * ctx);
    GGML_API struct ggml_tensor * ggml_get_next_tensor (const struct ggml_context * ctx, struct ggml_tensor * tensor);
    /* First tensor of the context with that name, or NULL. */
    GGML_API struct ggml_tensor * ggml_get_tensor(struct ggml_context * ctx, const char * name);

    /* Splits flat element index i into coordinates (any output may be NULL). */
    GGML_API void ggml_unravel_index(const struct ggml_tensor * tensor, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3);

    /* Function of a GGML_OP_UNARY / GGML_OP_GLU node. */
    GGML_API enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor);
    GGML_API enum ggml_glu_op ggml_get_glu_op(const struct ggml_tensor * tensor);

    /* tensor->data; the f32 form checks the type is F32. */
    GGML_API void *  ggml_get_data    (const struct ggml_tensor * tensor);
    GGML_API float * ggml_get_data_f32(const struct ggml_tensor * tensor);

    GGML_API const char *         ggml_get_name   (const struct ggml_tensor * tensor);
    /* Copies name (truncated to GGML_MAX_NAME-1 bytes); returns tensor. */
    GGML_API struct ggml_tensor * ggml_set_name   (      struct ggml_tensor * tensor, const char * name);
    /* printf-style ggml_set_name. */
    GGML_ATTRIBUTE_FORMAT(2, 3)
    GGML_API struct ggml_tensor * ggml_format_name(      struct ggml_tensor * tensor, const char * fmt, ...);

    /* Set the corresponding GGML_TENSOR_FLAG_* bit. */
    GGML_API void ggml_set_input(struct ggml_tensor * tensor);
    GGML_API void ggml_set_output(struct ggml_tensor * tensor);
    GGML_API void ggml_set_param(struct ggml_tensor * tensor);
    GGML_API void ggml_set_loss(struct ggml_tensor * tensor);

    /*
     * ------------------------------------------------------- operations
     *
     * Each constructor returns a new node (or NULL after logging an error)
     * and computes nothing.  An _inplace variant writes its result into a's
     * data and returns a view of a.
     */

    /* Copy of a. */
    GGML_API struct ggml_tensor * ggml_dup(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_dup_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* a + b, b broadcast to a's shape. */
    GGML_API struct ggml_tensor * ggml_add(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    GGML_API struct ggml_tensor * ggml_add_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a + b with the result of the given type. */
    GGML_API struct ggml_tensor * ggml_add_cast(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            enum   ggml_type      type);

    /* dst[i0,i1,i2] = a[i0,i1,i2] + b[i0, ids[i1,i2]]. */
    GGML_API struct ggml_tensor * ggml_add_id(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * ids);

    /* a + scalar b. */
    GGML_DEPRECATED(GGML_API struct ggml_tensor * ggml_add1(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b),
        "use ggml_add instead");

    GGML_DEPRECATED(GGML_API struct ggml_tensor * ggml_add1_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b),
        "use ggml_add_inplace instead");

    /* Copy of a with b added into the view of a given by strides and offset. */
    GGML_API struct ggml_tensor * ggml_acc(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            size_t                nb1,
            size_t                nb2,
            size_t                nb3,
            size_t                offset);

    GGML_API struct ggml_tensor * ggml_acc_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            size_t                nb1,
            size_t                nb2,
            size_t                nb3,
            size_t                offset);

    /* a - b, b broadcast. */
    GGML_API struct ggml_tensor * ggml_sub(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    GGML_API struct ggml_tensor * ggml_sub_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a * b element-wise, b broadcast. */
    GGML_API struct ggml_tensor * ggml_mul(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    GGML_API struct ggml_tensor * ggml_mul_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a / b element-wise, b broadcast. */
    GGML_API struct ggml_tensor * ggml_div(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    GGML_API struct ggml_tensor * ggml_div_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a*a. */
    GGML_API struct ggml_tensor * ggml_sqr(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_sqr_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Square root. */
    GGML_API struct ggml_tensor * ggml_sqrt(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_sqrt_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Natural logarithm. */
    GGML_API struct ggml_tensor * ggml_log(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_log_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* exp(a) - 1, accurate near 0. */
    GGML_API struct ggml_tensor * ggml_expm1(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_expm1_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* log(1 + exp(a)). */
    GGML_API struct ggml_tensor * ggml_softplus(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_softplus_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Sine / cosine. */
    GGML_API struct ggml_tensor * ggml_sin(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_sin_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_cos(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_cos_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Sum of all elements, as a 1-element tensor. */
    GGML_API struct ggml_tensor * ggml_sum(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Sum of each row: shape [1, ne1, ne2, ne3]. */
    GGML_API struct ggml_tensor * ggml_sum_rows(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Running (inclusive prefix) sum along each row. */
    GGML_API struct ggml_tensor * ggml_cumsum(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Mean of each row: shape [1, ne1, ne2, ne3]. */
    GGML_API struct ggml_tensor * ggml_mean(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Index of the largest element of each row (I32). */
    GGML_API struct ggml_tensor * ggml_argmax(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Number of positions where a and b are equal (I64 scalar). */
    GGML_API struct ggml_tensor * ggml_count_equal(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a tiled to the shape of b. */
    GGML_API struct ggml_tensor * ggml_repeat(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a tiled to the given shape. */
    GGML_API struct ggml_tensor * ggml_repeat_4d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
                       int64_t    ne0,
                       int64_t    ne1,
                       int64_t    ne2,
                       int64_t    ne3);

    /* Inverse of ggml_repeat: sums the tiles of a into the shape of b. */
    GGML_API struct ggml_tensor * ggml_repeat_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a and b joined along dimension dim. */
    GGML_API struct ggml_tensor * ggml_concat(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   dim);

    /* |a|. */
    GGML_API struct ggml_tensor * ggml_abs(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_abs_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Sign: -1, 0 or 1. */
    GGML_API struct ggml_tensor * ggml_sgn(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_sgn_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* -a. */
    GGML_API struct ggml_tensor * ggml_neg(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_neg_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* 1 where a > 0, else 0. */
    GGML_API struct ggml_tensor * ggml_step(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_step_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Hyperbolic tangent. */
    GGML_API struct ggml_tensor * ggml_tanh(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_tanh_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* ELU with alpha 1. */
    GGML_API struct ggml_tensor * ggml_elu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_elu_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* max(a, 0). */
    GGML_API struct ggml_tensor * ggml_relu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* a where a > 0, else negative_slope*a; in place when inplace is true. */
    GGML_API struct ggml_tensor * ggml_leaky_relu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a, float negative_slope, bool inplace);

    GGML_API struct ggml_tensor * ggml_relu_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* 1 / (1 + exp(-a)). */
    GGML_API struct ggml_tensor * ggml_sigmoid(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_sigmoid_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* GELU, tanh approximation. */
    GGML_API struct ggml_tensor * ggml_gelu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_gelu_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* GELU computed with the error function. */
    GGML_API struct ggml_tensor * ggml_gelu_erf(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_gelu_erf_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* GELU, sigmoid approximation a*sigmoid(1.702a). */
    GGML_API struct ggml_tensor * ggml_gelu_quick(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_gelu_quick_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* a * sigmoid(a). */
    GGML_API struct ggml_tensor * ggml_silu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_silu_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Gradient of silu: a (dy) times silu'(b), b the forward input x. */
    GGML_API struct ggml_tensor * ggml_silu_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a * min(max(a + 3, 0), 6) / 6. */
    GGML_API struct ggml_tensor * ggml_hardswish(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* min(max(a + 3, 0), 6) / 6. */
    GGML_API struct ggml_tensor * ggml_hardsigmoid(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* exp(a). */
    GGML_API struct ggml_tensor * ggml_exp(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_exp_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Rounding toward -inf, toward +inf, to nearest (halves away from 0), toward 0. */
    GGML_API struct ggml_tensor * ggml_floor(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_floor_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_ceil(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_ceil_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_round(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_round_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_trunc(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_trunc_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* xIELU activation with its four learned constants. */
    GGML_API struct ggml_tensor * ggml_xielu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float alpha_n,
            float alpha_p,
            float beta,
            float eps);

    /* Gated linear unit over rows of a: the first half is the value, the
     * second the gate (the other way round when swapped); rows halve. */
    GGML_API struct ggml_tensor * ggml_glu(
            struct ggml_context * ctx,
             struct ggml_tensor * a,
             enum ggml_glu_op     op,
             bool                 swapped);

    GGML_API struct ggml_tensor * ggml_reglu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_reglu_swapped(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_geglu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_geglu_swapped(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_swiglu(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_swiglu_swapped(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_geglu_erf(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_geglu_erf_swapped(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_geglu_quick(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_geglu_quick_swapped(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Gated linear unit with value a and gate b of the same shape. */
    GGML_API struct ggml_tensor * ggml_glu_split(
            struct ggml_context * ctx,
             struct ggml_tensor * a,
             struct ggml_tensor * b,
             enum ggml_glu_op     op);

    GGML_API struct ggml_tensor * ggml_reglu_split(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    GGML_API struct ggml_tensor * ggml_geglu_split(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    GGML_API struct ggml_tensor * ggml_swiglu_split(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    GGML_API struct ggml_tensor * ggml_geglu_erf_split(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    GGML_API struct ggml_tensor * ggml_geglu_quick_split(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* SwiGLU variant with clamping limit and sigmoid scale alpha. */
    GGML_API struct ggml_tensor * ggml_swiglu_oai(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            float                 alpha,
            float                 limit);

    /* Each row shifted to mean 0 and scaled to variance 1 (eps added to the variance). */
    GGML_API struct ggml_tensor * ggml_norm(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 eps);

    GGML_API struct ggml_tensor * ggml_norm_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 eps);

    /* Each row divided by its root mean square. */
    GGML_API struct ggml_tensor * ggml_rms_norm(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 eps);

    GGML_API struct ggml_tensor * ggml_rms_norm_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 eps);

    /* Gradient of rms_norm with respect to its input: a is dy, b the
     * forward input x (same shape), eps the forward's. */
    GGML_API struct ggml_tensor * ggml_rms_norm_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            float                 eps);

    /* Normalization over groups of ne2/n_groups channels (each ne0*ne1 plane). */
    GGML_API struct ggml_tensor * ggml_group_norm(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   n_groups,
            float                 eps);

    GGML_API struct ggml_tensor * ggml_group_norm_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   n_groups,
            float                 eps);

    /* Each row divided by its Euclidean norm. */
    GGML_API struct ggml_tensor * ggml_l2_norm(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 eps);

    GGML_API struct ggml_tensor * ggml_l2_norm_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 eps);

    /* Matrix product with b transposed: a is [k, n, ...], b is [k, m, ...]
     * (broadcast in dims 2 and 3), result is F32 [n, m, ...]. */
    GGML_API struct ggml_tensor * ggml_mul_mat(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* Requests a precision for a ggml_mul_mat node. */
    GGML_API void ggml_mul_mat_set_prec(
            struct ggml_tensor * a,
            enum ggml_prec       prec);

    /* Attaches a hint to a ggml_mul_mat node. */
    GGML_API void ggml_mul_mat_set_hint(
            struct ggml_tensor * a,
            enum ggml_op_hint    hint);

    /* Matrix product with the matrix of as chosen per row by ids (mixture of experts). */
    GGML_API struct ggml_tensor * ggml_mul_mat_id(
            struct ggml_context * ctx,
            struct ggml_tensor  * as,
            struct ggml_tensor  * b,
            struct ggml_tensor  * ids);

    /* Outer product: a [m, n] and b [p, n] give [m, p]. */
    GGML_API struct ggml_tensor * ggml_out_prod(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* s * a. */
    GGML_API struct ggml_tensor * ggml_scale(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 s);

    GGML_API struct ggml_tensor * ggml_scale_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 s);

    /* s * a + b. */
    GGML_API struct ggml_tensor * ggml_scale_bias(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 s,
            float                 b);

    GGML_API struct ggml_tensor * ggml_scale_bias_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 s,
            float                 b);

    /* Copy of a with b written into the view of a given by strides and byte offset. */
    GGML_API struct ggml_tensor * ggml_set(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            size_t                nb1,
            size_t                nb2,
            size_t                nb3,
            size_t                offset);

    GGML_API struct ggml_tensor * ggml_set_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            size_t                nb1,
            size_t                nb2,
            size_t                nb3,
            size_t                offset);

    /* ggml_set with a's own strides, b treated as 1-d. */
    GGML_API struct ggml_tensor * ggml_set_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            size_t                offset);

    GGML_API struct ggml_tensor * ggml_set_1d_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            size_t                offset);

    /* ggml_set with row stride nb1, b treated as 2-d. */
    GGML_API struct ggml_tensor * ggml_set_2d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            size_t                nb1,
            size_t                offset);

    GGML_API struct ggml_tensor * ggml_set_2d_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            size_t                nb1,
            size_t                offset);

    /* Copies a into b (same element count, converting type); returns a view of b. */
    GGML_API struct ggml_tensor * ggml_cpy(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* a converted to type (float to integer truncates toward 0). */
    GGML_API struct ggml_tensor * ggml_cast(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            enum   ggml_type      type);

    /* Contiguous copy of a. */
    GGML_API struct ggml_tensor * ggml_cont(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Contiguous copy of a with a new shape of the same element count. */
    GGML_API struct ggml_tensor * ggml_cont_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0);

    GGML_API struct ggml_tensor * ggml_cont_2d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1);

    GGML_API struct ggml_tensor * ggml_cont_3d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1,
            int64_t               ne2);

    GGML_API struct ggml_tensor * ggml_cont_4d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1,
            int64_t               ne2,
            int64_t               ne3);

    /* View of contiguous a with b's shape. */
    GGML_API struct ggml_tensor * ggml_reshape(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* View of contiguous a with the given shape (same element count). */
    GGML_API struct ggml_tensor * ggml_reshape_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0);

    GGML_API struct ggml_tensor * ggml_reshape_2d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1);

    GGML_API struct ggml_tensor * ggml_reshape_3d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1,
            int64_t               ne2);

    GGML_API struct ggml_tensor * ggml_reshape_4d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1,
            int64_t               ne2,
            int64_t               ne3);

    /* View of a with the given shape, strides and byte offset; must lie inside a. */
    GGML_API struct ggml_tensor * ggml_view_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            size_t                offset);

    GGML_API struct ggml_tensor * ggml_view_2d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1,
            size_t                nb1,
            size_t                offset);

    GGML_API struct ggml_tensor * ggml_view_3d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1,
            int64_t               ne2,
            size_t                nb1,
            size_t                nb2,
            size_t                offset);

    GGML_API struct ggml_tensor * ggml_view_4d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1,
            int64_t               ne2,
            int64_t               ne3,
            size_t                nb1,
            size_t                nb2,
            size_t                nb3,
            size_t                offset);

    /* View of a whose dimension i becomes dimension axis_i (a permutation of 0..3). */
    GGML_API struct ggml_tensor * ggml_permute(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   axis0,
            int                   axis1,
            int                   axis2,
            int                   axis3);

    /* View of a with dimensions 0 and 1 swapped. */
    GGML_API struct ggml_tensor * ggml_transpose(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* Rows of a [n_embd, ne1, ne2, ne3] picked by I32 indices b [n_rows, ne2, ne3];
     * result [n_embd, n_rows, ne2, ne3]. */
    GGML_API struct ggml_tensor * ggml_get_rows(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* Gradient of get_rows: an F32 tensor of c's shape [n_embd, n_rows],
     * row r the sum of the rows i of a (gradients) with b[i] == r. */
    GGML_API struct ggml_tensor * ggml_get_rows_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c);

    /* Writes the rows of b into the rows of a named by I64/I32 indices c
     * (broadcast over dims 2 and 3); returns a view of a. */
    GGML_API struct ggml_tensor * ggml_set_rows(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c);

    /* Square matrix with row a on its diagonal. */
    GGML_API struct ggml_tensor * ggml_diag(
        struct ggml_context     * ctx,
        struct ggml_tensor      * a);

    /* Elements above the diagonal shifted by n_past set to -INF. */
    GGML_API struct ggml_tensor * ggml_diag_mask_inf(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   n_past);

    GGML_API struct ggml_tensor * ggml_diag_mask_inf_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   n_past);

    /* Elements above the diagonal shifted by n_past set to 0. */
    GGML_API struct ggml_tensor * ggml_diag_mask_zero(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   n_past);

    GGML_API struct ggml_tensor * ggml_diag_mask_zero_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   n_past);

    /* Softmax of each row. */
    GGML_API struct ggml_tensor * ggml_soft_max(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    GGML_API struct ggml_tensor * ggml_soft_max_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a);

    /* softmax(a*scale + mask*slope) per row; mask (F16/F32, optional) is
     * [ne0, >=ne01, ne12, ne13] broadcast over dims 2 and 3; slope is the
     * ALiBi slope of the head, or 1 when max_bias is 0. */
    GGML_API struct ggml_tensor * ggml_soft_max_ext(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * mask,
            float                 scale,
            float                 max_bias);

    GGML_API struct ggml_tensor * ggml_soft_max_ext_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * mask,
            float                 scale,
            float                 max_bias);

    /* Adds per-head attention sinks to a ggml_soft_max_ext node. */
    GGML_API void ggml_soft_max_add_sinks(
            struct ggml_tensor * a,
            struct ggml_tensor * sinks);

    /* Gradient of soft_max_ext with respect to its input: a is dy, b the
     * forward result y; scale * y * (dy - dot(y, dy)) along each row. */
    GGML_API struct ggml_tensor * ggml_soft_max_ext_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            float                 scale,
            float                 max_bias);

    /* As ggml_soft_max_ext_back, writing into a (returns a view of a). */
    GGML_API struct ggml_tensor * ggml_soft_max_ext_back_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            float                 scale,
            float                 max_bias);

    /* Rotary position embedding of the first n_dims of each row of a, with
     * I32 positions b (one per a->ne[2]); mode is a GGML_ROPE_TYPE_* value. */
    GGML_API struct ggml_tensor * ggml_rope(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   n_dims,
            int                   mode);

    GGML_API struct ggml_tensor * ggml_rope_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   n_dims,
            int                   mode);

    /* RoPE with frequency scaling (YaRN); c holds optional per-dimension
     * frequency factors. */
    GGML_API struct ggml_tensor * ggml_rope_ext(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c,
            int                   n_dims,
            int                   mode,
            int                   n_ctx_orig,
            float                 freq_base,
            float                 freq_scale,
            float                 ext_factor,
            float                 attn_factor,
            float                 beta_fast,
            float                 beta_slow);

    /* Multi-section RoPE: the rotated dimensions are split in sections, each
     * driven by its own position stream in b. */
    GGML_API struct ggml_tensor * ggml_rope_multi(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c,
            int                   n_dims,
            int                   sections[GGML_MROPE_SECTIONS],
            int                   mode,
            int                   n_ctx_orig,
            float                 freq_base,
            float                 freq_scale,
            float                 ext_factor,
            float                 attn_factor,
            float                 beta_fast,
            float                 beta_slow);

    GGML_API struct ggml_tensor * ggml_rope_ext_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c,
            int                   n_dims,
            int                   mode,
            int                   n_ctx_orig,
            float                 freq_base,
            float                 freq_scale,
            float                 ext_factor,
            float                 attn_factor,
            float                 beta_fast,
            float                 beta_slow);

    GGML_API struct ggml_tensor * ggml_rope_multi_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c,
            int                   n_dims,
            int                   sections[GGML_MROPE_SECTIONS],
            int                   mode,
            int                   n_ctx_orig,
            float                 freq_base,
            float                 freq_scale,
            float                 ext_factor,
            float                 attn_factor,
            float                 beta_fast,
            float                 beta_slow);

    /* ggml_rope_ext without frequency factors. */
    GGML_DEPRECATED(GGML_API struct ggml_tensor * ggml_rope_custom(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   n_dims,
            int                   mode,
            int                   n_ctx_orig,
            float                 freq_base,
            float                 freq_scale,
            float                 ext_factor,
            float                 attn_factor,
            float                 beta_fast,
            float                 beta_slow),
        "use ggml_rope_ext instead");

    GGML_DEPRECATED(GGML_API struct ggml_tensor * ggml_rope_custom_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   n_dims,
            int                   mode,
            int                   n_ctx_orig,
            float                 freq_base,
            float                 freq_scale,
            float                 ext_factor,
            float                 attn_factor,
            float                 beta_fast,
            float                 beta_slow),
        "use ggml_rope_ext_inplace instead");

    /* Gradient of rope_ext / rope_multi with respect to their input: a is
     * dy, the other arguments the forward's; a ROPE_BACK node rotating by
     * the opposite angles. */
    GGML_API struct ggml_tensor * ggml_rope_ext_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c,
            int                   n_dims,
            int                   mode,
            int                   n_ctx_orig,
            float                 freq_base,
            float                 freq_scale,
            float                 ext_factor,
            float                 attn_factor,
            float                 beta_fast,
            float                 beta_slow);

    GGML_API struct ggml_tensor * ggml_rope_multi_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c,
            int                   n_dims,
            int                   sections[GGML_MROPE_SECTIONS],
            int                   mode,
            int                   n_ctx_orig,
            float                 freq_base,
            float                 freq_scale,
            float                 ext_factor,
            float                 attn_factor,
            float                 beta_fast,
            float                 beta_slow);

    /* Makes the ROPE node a rotate the n_dims values from index n_offs of
     * each row (n_offs even, n_offs + n_dims at most the row length; not
     * in vision mode) instead of from 0; returns a, or NULL (logged). */
    GGML_API struct ggml_tensor * ggml_rope_set_offset(
            struct ggml_tensor  * a,
            int                   n_offs);

    /* First and last dimension index of the YaRN correction band. */
    GGML_API void ggml_rope_yarn_corr_dims(
        int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]);

    /* Each element limited to [min, max]; computed in place, returns a view of a. */
    GGML_API struct ggml_tensor * ggml_clamp(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 min,
            float                 max);

    /* Unfolds the patches of data b seen by kernel a (stride s, padding p,
     * dilation d per dimension) into rows, so that a convolution becomes a
     * matrix product; 1-d unless is_2D. */
    GGML_API struct ggml_tensor * ggml_im2col(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s0,
            int                   s1,
            int                   p0,
            int                   p1,
            int                   d0,
            int                   d1,
            bool                  is_2D,
            enum ggml_type        dst_type);

    /* Gradient of ggml_im2col's input (F32, shape ne): a is the gradient of
     * the im2col output, b the kernel (its extents only). */
    GGML_API struct ggml_tensor * ggml_im2col_back(
        struct ggml_context * ctx,
        struct ggml_tensor  * a,
        struct ggml_tensor  * b,
        int64_t             * ne,
        int                   s0,
        int                   s1,
        int                   p0,
        int                   p1,
        int                   d0,
        int                   d1,
        bool                  is_2D);

    /* Overlap-add of GEMM columns a [K*oc, T_in] into a 1-d signal
     * [T_out, oc] with stride s0 and padding p0 cropped from each end:
     * T_out = (T_in - 1)*s0 + K - 2*p0 (the tail of a transposed convolution). */
    GGML_API struct ggml_tensor * ggml_col2im_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   s0,
            int                   oc,
            int                   p0);

    /* 1-d convolution of data b by kernel a (stride s0, padding p0, dilation d0). */
    GGML_API struct ggml_tensor * ggml_conv_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s0,
            int                   p0,
            int                   d0);

    /* ggml_conv_1d with padding a->ne[0]/2. */
    GGML_API struct ggml_tensor* ggml_conv_1d_ph(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s,
            int                   d);

    /* Depthwise 1-d convolution (one kernel per channel). */
    GGML_API struct ggml_tensor * ggml_conv_1d_dw(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s0,
            int                   p0,
            int                   d0);

    /* ggml_conv_1d_dw with padding a->ne[0]/2. */
    GGML_API struct ggml_tensor * ggml_conv_1d_dw_ph(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s0,
            int                   d0);

    /* 1-d transposed convolution. */
    GGML_API struct ggml_tensor * ggml_conv_transpose_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s0,
            int                   p0,
            int                   d0);

    /* 2-d convolution through im2col and a matrix product. */
    GGML_API struct ggml_tensor * ggml_conv_2d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s0,
            int                   s1,
            int                   p0,
            int                   p1,
            int                   d0,
            int                   d1);

    /* 3-d im2col for IC input channels (width, height, depth order). */
    GGML_API struct ggml_tensor * ggml_im2col_3d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int64_t               IC,
            int                   s0,
            int                   s1,
            int                   s2,
            int                   p0,
            int                   p1,
            int                   p2,
            int                   d0,
            int                   d1,
            int                   d2,
            enum ggml_type        dst_type);

    /* 3-d convolution: a [OC*IC, KD, KH, KW], b [N*IC, ID, IH, IW],
     * result [N*OC, OD, OH, OW]. */
    GGML_API struct ggml_tensor * ggml_conv_3d(
                struct ggml_context * ctx,
                struct ggml_tensor  * a,
                struct ggml_tensor  * b,
                int64_t               IC,
                int                   s0,
                int                   s1,
                int                   s2,
                int                   p0,
                int                   p1,
                int                   p2,
                int                   d0,
                int                   d1,
                int                   d2
        );

    /* 2-d convolution with stride equal to the kernel size and no padding. */
    GGML_API struct ggml_tensor * ggml_conv_2d_sk_p0(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* 2-d convolution with stride 1 and half padding. */
    GGML_API struct ggml_tensor * ggml_conv_2d_s1_ph(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* Depthwise 2-d convolution through im2col. */
    GGML_API struct ggml_tensor * ggml_conv_2d_dw(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                  s0,
            int                  s1,
            int                  p0,
            int                  p1,
            int                  d0,
            int                  d1);

    /* Depthwise 2-d convolution computed directly: a [KW, KH, 1, C],
     * b [W, H, C, N], result [W_out, H_out, C, N]. */
    GGML_API struct ggml_tensor * ggml_conv_2d_dw_direct(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   stride0,
            int                   stride1,
            int                   pad0,
            int                   pad1,
            int                   dilation0,
            int                   dilation1);

    /* 2-d transposed convolution without padding. */
    GGML_API struct ggml_tensor * ggml_conv_transpose_2d_p0(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   stride);

    /* 2-d convolution computed directly: a [KW, KH, IC, OC], b [W, H, C, N]. */
    GGML_API struct ggml_tensor * ggml_conv_2d_direct(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s0,
            int                   s1,
            int                   p0,
            int                   p1,
            int                   d0,
            int                   d1);

    /* 3-d convolution computed directly: a [KW, KH, KD, IC*OC], b [W, H, D, C*N]. */
    GGML_API struct ggml_tensor * ggml_conv_3d_direct(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            int                   s0,
            int                   s1,
            int                   s2,
            int                   p0,
            int                   p1,
            int                   p2,
            int                   d0,
            int                   d1,
            int                   d2,
            int                   n_channels,
            int                   n_batch,
            int                   n_channels_out);

    /* Pooling function. */
    enum ggml_op_pool {
        GGML_OP_POOL_MAX,
        GGML_OP_POOL_AVG,
        GGML_OP_POOL_COUNT,
    };

    /* 1-d pooling with kernel k0, stride s0, padding p0. */
    GGML_API struct ggml_tensor * ggml_pool_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            enum ggml_op_pool     op,
            int                   k0,
            int                   s0,
            int                   p0);

    /* 2-d pooling; the output includes p0 (p1) padding on both sides of dim 0 (1). */
    GGML_API struct ggml_tensor * ggml_pool_2d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            enum ggml_op_pool     op,
            int                   k0,
            int                   k1,
            int                   s0,
            int                   s1,
            float                 p0,
            float                 p1);

    /* Gradient of ggml_pool_2d's input af (F32) from the gradient a of its output. */
    GGML_API struct ggml_tensor * ggml_pool_2d_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * af,
            enum ggml_op_pool     op,
            int                   k0,
            int                   k1,
            int                   s0,
            int                   s1,
            float                 p0,
            float                 p1);

    /* Interpolation used when resampling. */
    enum ggml_scale_mode {
        GGML_SCALE_MODE_NEAREST  = 0,
        GGML_SCALE_MODE_BILINEAR = 1,
        GGML_SCALE_MODE_BICUBIC  = 2,

        GGML_SCALE_MODE_COUNT
    };

    /* Bits that may be or-ed with a ggml_scale_mode. */
    enum ggml_scale_flag {
        GGML_SCALE_FLAG_ALIGN_CORNERS = (1 << 8),
        GGML_SCALE_FLAG_ANTIALIAS     = (1 << 9),
    };

    /* Dimensions 0 and 1 multiplied by scale_factor. */
    GGML_API struct ggml_tensor * ggml_upscale(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   scale_factor,
            enum ggml_scale_mode  mode);

    /* a resampled to the given shape. */
    GGML_DEPRECATED(GGML_API struct ggml_tensor * ggml_upscale_ext(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   ne0,
            int                   ne1,
            int                   ne2,
            int                   ne3,
            enum ggml_scale_mode  mode),
        "use ggml_interpolate instead");

    /* a resampled up or down to the given shape; 2-d modes act on dims 0
     * and 1; mode is a ggml_scale_mode or-ed with ggml_scale_flag bits. */
    GGML_API struct ggml_tensor * ggml_interpolate(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int64_t               ne0,
            int64_t               ne1,
            int64_t               ne2,
            int64_t               ne3,
            uint32_t              mode);

    /* Zeros appended to the end of each dimension. */
    GGML_API struct ggml_tensor * ggml_pad(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                  p0,
            int                  p1,
            int                  p2,
            int                  p3);

    /* Padding appended with values wrapped from the start of each dimension. */
    GGML_API struct ggml_tensor * ggml_pad_circular(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   p0,
            int                   p1,
            int                   p2,
            int                   p3);

    /* Zeros added before (lpN) and after (rpN) each dimension. */
    GGML_API struct ggml_tensor * ggml_pad_ext(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                  lp0,
            int                  rp0,
            int                  lp1,
            int                  rp1,
            int                  lp2,
            int                  rp2,
            int                  lp3,
            int                  rp3
            );

    /* As ggml_pad_ext, padding with wrapped-around values. */
    GGML_API struct ggml_tensor * ggml_pad_ext_circular(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   lp0,
            int                   rp0,
            int                   lp1,
            int                   rp1,
            int                   lp2,
            int                   rp2,
            int                   lp3,
            int                   rp3);

    /* Dimension 0 padded by mirroring: p0 before, p1 after (edge not repeated). */
    GGML_API struct ggml_tensor * ggml_pad_reflect_1d(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   p0,
            int                   p1);

    /* Elements shifted cyclically by shiftN along each dimension. */
    GGML_API struct ggml_tensor * ggml_roll(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   shift0,
            int                   shift1,
            int                   shift2,
            int                   shift3);

    /* a with every element outside the chosen triangle set to 0. */
    GGML_API struct ggml_tensor * ggml_tri(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            enum ggml_tri_type    type);

    /* Tensor of a's shape with every element c. */
    GGML_API struct ggml_tensor * ggml_fill(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 c);

    GGML_API struct ggml_tensor * ggml_fill_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            float                 c);

    /* Sinusoidal embedding [N, dim] of the N timesteps. */
    GGML_API struct ggml_tensor * ggml_timestep_embedding(
            struct ggml_context * ctx,
            struct ggml_tensor  * timesteps,
            int                   dim,
            int                   max_period);

    /* Direction of ggml_argsort. */
    enum ggml_sort_order {
        GGML_SORT_ORDER_ASC,
        GGML_SORT_ORDER_DESC,
    };

    /* Indices (I32) that sort each row. */
    GGML_API struct ggml_tensor * ggml_argsort(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            enum ggml_sort_order  order);

    /* Indices of the k largest elements of each row, in descending order
     * (an argsort followed by a view). */
    GGML_API struct ggml_tensor * ggml_argsort_top_k(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   k);

    /* Indices of the k largest elements of each row, in no set order. */
    GGML_API struct ggml_tensor * ggml_top_k(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   k);

    /* 1-d F32 tensor start, start+step, ... below stop. */
    GGML_API struct ggml_tensor * ggml_arange(
            struct ggml_context * ctx,
            float                 start,
            float                 stop,
            float                 step);

/* Row padding expected of the attention mask of ggml_flash_attn_ext. */
#define GGML_KQ_MASK_PAD 1

    /*
     * Fused attention softmax(q*k^T*scale + mask)*v:
     *   q    [n_embd_k, n_batch, n_head,    ne3]
     *   k    [n_embd_k, n_kv,    n_head_kv, ne3]
     *   v    [n_embd_v, n_kv,    n_head_kv, ne3]   (not transposed)
     *   mask [n_kv, GGML_PAD(n_batch, GGML_KQ_MASK_PAD), ne32, ne33], optional
     *   result [n_embd_v, n_head, n_batch, ne3]    (note the permutation)
     * with n_head a multiple of n_head_kv and of ne32, ne3 of ne33;
     * logit_softcap > 0 applies softcap*tanh(x/softcap) to the scores.
     */
    GGML_API struct ggml_tensor * ggml_flash_attn_ext(
            struct ggml_context * ctx,
            struct ggml_tensor  * q,
            struct ggml_tensor  * k,
            struct ggml_tensor  * v,
            struct ggml_tensor  * mask,
            float                 scale,
            float                 max_bias,
            float                 logit_softcap);

    /* Precision of a ggml_flash_attn_ext node. */
    GGML_API void ggml_flash_attn_ext_set_prec(
            struct ggml_tensor * a,
            enum ggml_prec       prec);

    GGML_API enum ggml_prec ggml_flash_attn_ext_get_prec(
            const struct ggml_tensor * a);

    /* Adds per-head attention sinks to a ggml_flash_attn_ext node. */
    GGML_API void ggml_flash_attn_ext_add_sinks(
            struct ggml_tensor * a,
            struct ggml_tensor * sinks);

    /* Depthwise causal convolution of state space models: sx is the
     * concatenated state and input, c the kernel. */
    GGML_API struct ggml_tensor * ggml_ssm_conv(
            struct ggml_context * ctx,
            struct ggml_tensor  * sx,
            struct ggml_tensor  * c);

    /* Selective scan (Mamba): state s, input x, step dt, matrices A, B, C,
     * ids choosing the state of each sequence.  The result holds y, the
     * final states, then K - 1 earlier states (state k of a sequence: its
     * state k tokens before the end); K >= 1, and 1 for per-state A. */
    GGML_API struct ggml_tensor * ggml_ssm_scan(
            struct ggml_context * ctx,
            struct ggml_tensor  * s,
            struct ggml_tensor  * x,
            struct ggml_tensor  * dt,
            struct ggml_tensor  * A,
            struct ggml_tensor  * B,
            struct ggml_tensor  * C,
            struct ggml_tensor  * ids,
            int64_t               K);

    /* Splits dims 1 and 2 into w x w windows (zero-padded), one per dim-3 index. */
    GGML_API struct ggml_tensor * ggml_win_part(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   w);

    /* Inverse of ggml_win_part for an original w0 x h0 plane. */
    GGML_API struct ggml_tensor * ggml_win_unpart(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   w0,
            int                   h0,
            int                   w);

    /* Element-wise function op applied to a. */
    GGML_API struct ggml_tensor * ggml_unary(
            struct ggml_context * ctx,
             struct ggml_tensor * a,
             enum ggml_unary_op op);

    GGML_API struct ggml_tensor * ggml_unary_inplace(
        struct ggml_context * ctx,
        struct ggml_tensor  * a,
        enum ggml_unary_op op);

    /* Relative position table for qh query and kh key positions. */
    GGML_API struct ggml_tensor * ggml_get_rel_pos(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            int                   qh,
            int                   kh);

    /* Adds decomposed relative position terms pw and ph to attention scores a. */
    GGML_API struct ggml_tensor * ggml_add_rel_pos(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * pw,
            struct ggml_tensor  * ph);

    GGML_API struct ggml_tensor * ggml_add_rel_pos_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * pw,
            struct ggml_tensor  * ph);

    /* RWKV v6 time mixing; the result holds the outputs then the new state. */
    GGML_API struct ggml_tensor * ggml_rwkv_wkv6(
            struct ggml_context * ctx,
            struct ggml_tensor  * k,
            struct ggml_tensor  * v,
            struct ggml_tensor  * r,
            struct ggml_tensor  * tf,
            struct ggml_tensor  * td,
            struct ggml_tensor  * state);

    /* Gated linear attention; the result holds the outputs then the new state. */
    GGML_API struct ggml_tensor * ggml_gated_linear_attn(
            struct ggml_context * ctx,
            struct ggml_tensor  * k,
            struct ggml_tensor  * v,
            struct ggml_tensor  * q,
            struct ggml_tensor  * g,
            struct ggml_tensor  * state,
            float scale);

    /* RWKV v7 time mixing; the result holds the outputs then the new state. */
    GGML_API struct ggml_tensor * ggml_rwkv_wkv7(
            struct ggml_context * ctx,
            struct ggml_tensor  * r,
            struct ggml_tensor  * w,
            struct ggml_tensor  * k,
            struct ggml_tensor  * v,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * state);

    /* Solves A*X = B for lower-triangular, invertible A [n, n] and B
     * [n, m].  As upstream, only left = true, lower = true, uni = false is
     * implemented; other combinations are refused (NULL, logged). */
    GGML_API struct ggml_tensor * ggml_solve_tri(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            bool                  left,
            bool                  lower,
            bool                  uni);

    /* Gated delta rule (gated DeltaNet linear attention): q, k [S, H_qk,
     * n_tokens, n_seqs_qk] with heads and sequences dividing v's, v [S, H,
     * n_tokens, n_seqs], g [1 or S, H, n_tokens, n_seqs] (log decay), beta
     * [1, H, n_tokens, n_seqs], state [S, S, H, n_seqs] (initial).  The
     * result [S*H, n_tokens*n_seqs + K*S*n_seqs] holds the outputs, then K
     * snapshots of the states, the final one first (snapshot n: after
     * token n_tokens-1-n; those with n >= n_tokens are left unwritten). */
    GGML_API struct ggml_tensor * ggml_gated_delta_net(
            struct ggml_context * ctx,
            struct ggml_tensor  * q,
            struct ggml_tensor  * k,
            struct ggml_tensor  * v,
            struct ggml_tensor  * g,
            struct ggml_tensor  * beta,
            struct ggml_tensor  * state,
            int64_t               K);

    /* DeepSeek sparse attention's lightning indexer: q [n_embd, n_head,
     * n_tokens, n_stream], k [n_embd, 1, n_kv, n_stream], weights [n_head,
     * n_tokens, 1, n_stream] (prescaled), mask F16 [n_kv, n_tokens, 1,
     * n_mask] with n_stream a multiple of n_mask; the result [n_kv,
     * n_tokens, 1, n_stream] holds sum over heads of relu(q . k) * weight,
     * plus the mask. */
    GGML_API struct ggml_tensor * ggml_lightning_indexer(
            struct ggml_context * ctx,
            struct ggml_tensor  * q,
            struct ggml_tensor  * k,
            struct ggml_tensor  * weights,
            struct ggml_tensor  * mask);

    /* DeepSeek V4 hyper-connections, which carry hc residual streams.
     * hc_comb: each token's hc x hc mixing matrix [dst, src] from mixes
     * [(2 + hc) hc, n_tokens] (entries 2 hc + dst + hc src, times
     * scale[2], plus the same entries of base): a softmax over dst plus
     * eps, the sums over src normalized, then n_iter - 1 rounds of
     * normalizing over dst, then over src.  Result [hc, hc, n_tokens]. */
    GGML_API struct ggml_tensor * ggml_dsv4_hc_comb(
            struct ggml_context * ctx,
            struct ggml_tensor  * mixes,
            struct ggml_tensor  * scale,
            struct ggml_tensor  * base,
            float                 eps,
            int32_t               n_iter);

    /* hc_pre: x [n_embd, hc, n_tokens] weighted by weights [hc, n_tokens]
     * and summed over the streams: [n_embd, n_tokens]. */
    GGML_API struct ggml_tensor * ggml_dsv4_hc_pre(
            struct ggml_context * ctx,
            struct ggml_tensor  * x,
            struct ggml_tensor  * weights);

    /* hc_post: result[i, dst, t] = x[i, t] post[dst, t] + sum over src of
     * residual[i, src, t] comb[dst, src, t]; x [n_embd, n_tokens],
     * residual [n_embd, hc, n_tokens], post [hc, n_tokens], comb [hc, hc,
     * n_tokens]; result [n_embd, hc, n_tokens]. */
    GGML_API struct ggml_tensor * ggml_dsv4_hc_post(
            struct ggml_context * ctx,
            struct ggml_tensor  * x,
            struct ggml_tensor  * residual,
            struct ggml_tensor  * post,
            struct ggml_tensor  * comb);

    /* ------------------------------------------------- custom operators */

    /* User kernels: thread ith of nth computes its share of dst. */
    typedef void (*ggml_custom1_op_t)(struct ggml_tensor * dst , const struct ggml_tensor * a, int ith, int nth, void * userdata);
    typedef void (*ggml_custom2_op_t)(struct ggml_tensor * dst , const struct ggml_tensor * a, const struct ggml_tensor * b, int ith, int nth, void * userdata);
    typedef void (*ggml_custom3_op_t)(struct ggml_tensor * dst , const struct ggml_tensor * a, const struct ggml_tensor * b, const struct ggml_tensor * c, int ith, int nth, void * userdata);

/* n_tasks value meaning "as many threads as the computation has". */
#define GGML_N_TASKS_MAX (-1)

    /* Node of a's shape computed by fun over operand a (b, c) on n_tasks threads. */
    GGML_API struct ggml_tensor * ggml_map_custom1(
            struct ggml_context   * ctx,
            struct ggml_tensor    * a,
            ggml_custom1_op_t       fun,
            int                     n_tasks,
            void                  * userdata);

    GGML_API struct ggml_tensor * ggml_map_custom1_inplace(
            struct ggml_context   * ctx,
            struct ggml_tensor    * a,
            ggml_custom1_op_t       fun,
            int                     n_tasks,
            void                  * userdata);

    GGML_API struct ggml_tensor * ggml_map_custom2(
            struct ggml_context   * ctx,
            struct ggml_tensor    * a,
            struct ggml_tensor    * b,
            ggml_custom2_op_t       fun,
            int                     n_tasks,
            void                  * userdata);

    GGML_API struct ggml_tensor * ggml_map_custom2_inplace(
            struct ggml_context   * ctx,
            struct ggml_tensor    * a,
            struct ggml_tensor    * b,
            ggml_custom2_op_t       fun,
            int                     n_tasks,
            void                  * userdata);

    GGML_API struct ggml_tensor * ggml_map_custom3(
            struct ggml_context   * ctx,
            struct ggml_tensor    * a,
            struct ggml_tensor    * b,
            struct ggml_tensor    * c,
            ggml_custom3_op_t       fun,
            int                     n_tasks,
            void                  * userdata);

    GGML_API struct ggml_tensor * ggml_map_custom3_inplace(
            struct ggml_context   * ctx,
            struct ggml_tensor    * a,
            struct ggml_tensor    * b,
            struct ggml_tensor    * c,
            ggml_custom3_op_t       fun,
            int                     n_tasks,
            void                  * userdata);

    /* User kernel reading dst->src[0..n_args-1]. */
    typedef void (*ggml_custom_op_t)(struct ggml_tensor * dst , int ith, int nth, void * userdata);

    /* New node of the given type and shape computed by fun from up to
     * GGML_MAX_SRC operands args. */
    GGML_API struct ggml_tensor * ggml_custom_4d(
            struct ggml_context * ctx,
            enum ggml_type        type,
            int64_t               ne0,
            int64_t               ne1,
            int64_t               ne2,
            int64_t               ne3,
            struct ggml_tensor ** args,
            int                   n_args,
            ggml_custom_op_t      fun,
            int                   n_tasks,
            void                * userdata);

    /* As ggml_custom_4d, writing into a (a view of a is returned). */
    GGML_API struct ggml_tensor * ggml_custom_inplace(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor ** args,
            int                   n_args,
            ggml_custom_op_t      fun,
            int                   n_tasks,
            void                * userdata);

    /* ------------------------------------------------ loss and optimizers */

    /* Minus the mean over rows of sum(b * log_softmax(a)): a the logits,
     * b the labels (same shape); one element of a's type. */
    GGML_API struct ggml_tensor * ggml_cross_entropy_loss(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b);

    /* Its gradient with respect to the logits b: (softmax(b) - c) * a / rows,
     * c the labels, a the one-element gradient of the loss. */
    GGML_API struct ggml_tensor * ggml_cross_entropy_loss_back(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * b,
            struct ggml_tensor  * c);

    /* One AdamW step on the trainable F32 weights a, in place (a, m and v
     * updated; returns a view of a); adamw_params holds 7 F32 values
     * { alpha, beta1, beta2, eps, wd, beta1h, beta2h }. */
    GGML_API struct ggml_tensor * ggml_opt_step_adamw(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * grad,
            struct ggml_tensor  * m,
            struct ggml_tensor  * v,
            struct ggml_tensor  * adamw_params);

    /* One SGD step with weight decay on a, in place; sgd_params holds
     * 2 F32 values { alpha, wd }. */
    GGML_API struct ggml_tensor * ggml_opt_step_sgd(
            struct ggml_context * ctx,
            struct ggml_tensor  * a,
            struct ggml_tensor  * grad,
            struct ggml_tensor  * sgd_params);

    /* ----------------------------------------------------------- graphs */

    /* Adds tensors[0..n_tensors) to the graph but marks only tensors[idx]
     * for computation; returns tensors[idx]. */
    GGML_API struct ggml_tensor * ggml_build_forward_select(
            struct ggml_cgraph  * cgraph,
            struct ggml_tensor ** tensors,
            int                   n_tensors,
            int                   idx);

    /* Adds tensor and every node it depends on to the graph, sources first.
     * A NULL tensor marks the graph as failed. */
    GGML_API void ggml_build_forward_expand(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor);
    /* As ggml_build_forward_expand, without marking the new nodes for
     * computation: they get their place in the order now, and are computed
     * once a node that is computed reaches them. */
    GGML_API void ggml_build_forward_order(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor);
    /* Appends the gradients of the nodes between the parameters and the
     * loss; grad_accs (NULL, or one per node) gives accumulators. */
    GGML_API void ggml_build_backward_expand(
        struct ggml_context *  ctx,
        struct ggml_cgraph  *  cgraph,
        struct ggml_tensor  ** grad_accs);

    /* New graph of GGML_DEFAULT_GRAPH_SIZE nodes without gradients. */
    GGML_API struct ggml_cgraph * ggml_new_graph       (struct ggml_context * ctx);
    /* New graph of size nodes, with gradient slots when grads is true. */
    GGML_API struct ggml_cgraph * ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads);
    /* Copy of cgraph in ctx (with gradient slots if it had them or force_grads). */
    GGML_API struct ggml_cgraph * ggml_graph_dup       (struct ggml_context * ctx, struct ggml_cgraph * cgraph, bool force_grads);
    /* Copies src into dst, which must be large enough. */
    GGML_API void                 ggml_graph_cpy       (struct ggml_cgraph * src, struct ggml_cgraph * dst);
    /* Zeroes gradients and optimizer moments, sets the loss gradient to 1. */
    GGML_API void                 ggml_graph_reset     (struct ggml_cgraph * cgraph);
    /* Removes every node and leaf. */
    GGML_API void                 ggml_graph_clear     (struct ggml_cgraph * cgraph);

    GGML_API int                   ggml_graph_size   (struct ggml_cgraph * cgraph);
    /* Node i; a negative i counts from the end. */
    GGML_API struct ggml_tensor *  ggml_graph_node   (struct ggml_cgraph * cgraph, int i);
    GGML_API struct ggml_tensor ** ggml_graph_nodes  (struct ggml_cgraph * cgraph);
    GGML_API int                   ggml_graph_n_nodes(struct ggml_cgraph * cgraph);

    /* Appends tensor as a node without visiting its sources. */
    GGML_API void   ggml_graph_add_node(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor);

    /* Context bytes taken by a default graph / by a graph of size nodes. */
    GGML_API size_t ggml_graph_overhead(void);
    GGML_API size_t ggml_graph_overhead_custom(size_t size, bool grads);

    /* Node or leaf of that name, or NULL. */
    GGML_API struct ggml_tensor * ggml_graph_get_tensor  (const struct ggml_cgraph * cgraph, const char * name);
    /* Gradient / gradient accumulator of a node, or NULL. */
    GGML_API struct ggml_tensor * ggml_graph_get_grad    (const struct ggml_cgraph * cgraph, const struct ggml_tensor * node);
    GGML_API struct ggml_tensor * ggml_graph_get_grad_acc(const struct ggml_cgraph * cgraph, const struct ggml_tensor * node);

    /* Lists the nodes and leafs through the log. */
    GGML_API void ggml_graph_print(const struct ggml_cgraph * cgraph);

    /* Writes graph gb (gf, if not NULL, for the forward part) as Graphviz dot. */
    GGML_API void ggml_graph_dump_dot(const struct ggml_cgraph * gb, const struct ggml_cgraph * gf, const char * filename);

    /* ---------------------------------------------------------- logging */

    /* Receives each message; text ends with '\n' unless more follows (CONT). */
    typedef void (*ggml_log_callback)(enum ggml_log_level level, const char * text, void * user_data);

    /* Current log sink (either output may be NULL). */
    GGML_API void ggml_log_get(ggml_log_callback * log_callback, void ** user_data);
    /* Sends every later message to log_callback; NULL restores stderr. */
    GGML_API void ggml_log_set(ggml_log_callback   log_callback, void *  user_data);

    /* Sets every byte of the tensor's data to 0; returns tensor. */
    GGML_API struct ggml_tensor * ggml_set_zero(struct ggml_tensor * tensor);

    /* ----------------------------------------------------- quantization */

    /* Prepares the tables a type needs (idempotent, thread-safe). */
    GGML_API void ggml_quantize_init(enum ggml_type type);
    /* Releases every table made by ggml_quantize_init. */
    GGML_API void ggml_quantize_free(void);

    /* True when the type cannot be produced without an importance matrix. */
    GGML_API bool ggml_quantize_requires_imatrix(enum ggml_type type);

    /* Quantizes nrows rows of n_per_row floats, from element start (a
     * multiple of n_per_row) of src to the matching row of dst; returns the
     * bytes written. */
    GGML_API size_t ggml_quantize_chunk(
            enum ggml_type   type,
               const float * src,
                      void * dst,
                   int64_t   start,
                   int64_t   nrows,
                   int64_t   n_per_row,
               const float * imatrix);

/* restrict qualifier, spelled for C and C++. */
#ifdef __cplusplus
#    if defined(__GNUC__) || defined(__clang__)
#        define GGML_RESTRICT __restrict__
#    elif defined(_MSC_VER)
#        define GGML_RESTRICT __restrict
#    else
#        define GGML_RESTRICT
#    endif
#else
#    if defined(_MSC_VER) && (__STDC_VERSION__ < 201112L)
#        define GGML_RESTRICT __restrict
#    else
#        define GGML_RESTRICT restrict
#    endif
#endif

    /* Converts k elements to / from float. */
    typedef void (*ggml_to_float_t)  (const void  * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
    typedef void (*ggml_from_float_t)(const float * GGML_RESTRICT x, void  * GGML_RESTRICT y, int64_t k);

    /* Static description of a type. */
    struct ggml_type_traits {
        const char             * type_name;
        int64_t                  blck_size;            /* elements per block */
        int64_t                  blck_size_interleave; /* elements interleaved within a block */
        size_t                   type_size;            /* bytes per block */
        bool                     is_quantized;
        ggml_to_float_t          to_float;             /* NULL when not convertible */
        ggml_from_float_t        from_float_ref;       /* reference encoder, or NULL */
    };

    /* Traits of a type; NULL (logged) for a value outside the enum. */
    GGML_API const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type type);

    /* ------------------------------------------------------ thread pool */

    /* Scheduling priority of pool threads. */
    enum ggml_sched_priority {
        GGML_SCHED_PRIO_LOW = -1,
        GGML_SCHED_PRIO_NORMAL,
        GGML_SCHED_PRIO_MEDIUM,
        GGML_SCHED_PRIO_HIGH,
        GGML_SCHED_PRIO_REALTIME
    };

    /* Parameters of a thread pool; fill with ggml_threadpool_params_default
     * or ggml_threadpool_params_init. */
    struct ggml_threadpool_params {
        bool                cpumask[GGML_MAX_N_THREADS]; /* CPUs to bind to; all false: no binding */
        int                 n_threads;
        enum ggml_sched_priority prio;
        uint32_t            poll;       /* busy-wait level, 0 (sleep at once) to 100 */
        bool                strict_cpu; /* one CPU of the mask per thread */
        bool                paused;     /* create the pool paused */
    };

    struct ggml_threadpool;

    typedef struct ggml_threadpool * ggml_threadpool_t;

    /* Default parameters for n_threads threads. */
    GGML_API struct ggml_threadpool_params ggml_threadpool_params_default(int n_threads);
    GGML_API void                          ggml_threadpool_params_init   (struct ggml_threadpool_params * p, int n_threads);
    /* True when both parameter sets would make the same pool. */
    GGML_API bool                          ggml_threadpool_params_match  (const struct ggml_threadpool_params * p0, const struct ggml_threadpool_params * p1);

#ifdef __cplusplus
}
#endif

#endif /* GGML_H */
