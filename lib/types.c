/*
 * types.c - what each ggml_type is: name, block shape, converters, and how
 * to check a row of it for bad values.
 *
 * The enum values are a file format (GGUF stores them), so the table is
 * indexed by value and has an entry for every slot below GGML_TYPE_COUNT,
 * including the removed ones (4, 5, 31-33, 36-38), which keep ggml's names
 * and a block size of zero.
 *
 * Invalid type values.  A value outside the enum is reported by every
 * function here.  A removed slot is answered as ggml answers it by the
 * functions that only describe a slot (ggml_type_name, ggml_is_quantized,
 * ggml_get_type_traits), so programs that walk 0 .. GGML_TYPE_COUNT-1 and
 * skip entries whose blck_size is 0 keep working quietly; the functions
 * whose result a caller would divide or allocate by (block and type size,
 * row size, validation) report it and return 0 or false.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>

#include "ggml-impl.h"
#include "quants-impl.h"

static_assert(GGML_TYPE_COUNT == 43, "the type table below lists 43 slots: update it");

/* Adapters giving the public row converters the traits' exact signatures. */
static void f16_to_float(const void *restrict x, float *restrict y, int64_t k)
{
    ggml_fp16_to_fp32_row(x, y, k);
}

static void f16_from_float(const float *restrict x, void *restrict y, int64_t k)
{
    ggml_fp32_to_fp16_row(x, y, k);
}

static void bf16_to_float(const void *restrict x, float *restrict y, int64_t k)
{
    ggml_bf16_to_fp32_row(x, y, k);
}

static void bf16_from_float(const float *restrict x, void *restrict y, int64_t k)
{
    ggml_fp32_to_bf16_row_ref(x, y, k);
}

/*
 * Block sizes and byte sizes are ggml's.  For the formats not implemented
 * yet the comment names the block's fields (QK_K = 256 values a block);
 * their converters stay NULL until they are implemented.  F32 has none
 * in ggml either, and Q8_1 only a quantizer.
 */
#define REMOVED(name) { .type_name = (name), .blck_size = 0, .type_size = 0, .is_quantized = false }

const struct ggml_type_traits ggml__type_traits_table[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32] = { .type_name = "f32", .blck_size = 1, .type_size = sizeof(float) },
    [GGML_TYPE_F16] = {
        .type_name = "f16", .blck_size = 1, .type_size = sizeof(ggml_fp16_t),
        .to_float = f16_to_float, .from_float_ref = f16_from_float,
    },
    [GGML_TYPE_Q4_0] = {
        .type_name = "q4_0", .blck_size = QK4_0, .type_size = sizeof(block_q4_0), .is_quantized = true,
        .to_float = ggml__dequantize_row_q4_0, .from_float_ref = ggml__quantize_row_q4_0_ref,
    },
    [GGML_TYPE_Q4_1] = {
        .type_name = "q4_1", .blck_size = QK4_1, .type_size = sizeof(block_q4_1), .is_quantized = true,
        .to_float = ggml__dequantize_row_q4_1, .from_float_ref = ggml__quantize_row_q4_1_ref,
    },
    [4] = REMOVED("DEPRECATED"),                                     /* was Q4_2 */
    [5] = REMOVED("DEPRECATED"),                                     /* was Q4_3 */
    [GGML_TYPE_Q5_0] = {
        .type_name = "q5_0", .blck_size = QK5_0, .type_size = sizeof(block_q5_0), .is_quantized = true,
        .to_float = ggml__dequantize_row_q5_0, .from_float_ref = ggml__quantize_row_q5_0_ref,
    },
    [GGML_TYPE_Q5_1] = {
        .type_name = "q5_1", .blck_size = QK5_1, .type_size = sizeof(block_q5_1), .is_quantized = true,
        .to_float = ggml__dequantize_row_q5_1, .from_float_ref = ggml__quantize_row_q5_1_ref,
    },
    [GGML_TYPE_Q8_0] = {
        .type_name = "q8_0", .blck_size = QK8_0, .type_size = sizeof(block_q8_0), .is_quantized = true,
        .to_float = ggml__dequantize_row_q8_0, .from_float_ref = ggml__quantize_row_q8_0_ref,
    },
    [GGML_TYPE_Q8_1] = {
        .type_name = "q8_1", .blck_size = QK8_1, .type_size = sizeof(block_q8_1), .is_quantized = true,
        .from_float_ref = ggml__quantize_row_q8_1_ref,
    },
    /* scales[16], qs[64], d, dmin */
    [GGML_TYPE_Q2_K] = {
        .type_name = "q2_K", .blck_size = QK_K, .type_size = sizeof(block_q2_K), .is_quantized = true,
        .to_float = ggml__dequantize_row_q2_K, .from_float_ref = ggml__quantize_row_q2_K_ref,
    },
    /* hmask[32], qs[64], scales[12], d */
    [GGML_TYPE_Q3_K] = {
        .type_name = "q3_K", .blck_size = QK_K, .type_size = sizeof(block_q3_K), .is_quantized = true,
        .to_float = ggml__dequantize_row_q3_K, .from_float_ref = ggml__quantize_row_q3_K_ref,
    },
    /* d, dmin, scales[12], qs[128] */
    [GGML_TYPE_Q4_K] = {
        .type_name = "q4_K", .blck_size = QK_K, .type_size = sizeof(block_q4_K), .is_quantized = true,
        .to_float = ggml__dequantize_row_q4_K, .from_float_ref = ggml__quantize_row_q4_K_ref,
    },
    /* d, dmin, scales[12], qh[32], qs[128] */
    [GGML_TYPE_Q5_K] = {
        .type_name = "q5_K", .blck_size = QK_K, .type_size = sizeof(block_q5_K), .is_quantized = true,
        .to_float = ggml__dequantize_row_q5_K, .from_float_ref = ggml__quantize_row_q5_K_ref,
    },
    /* ql[128], qh[64], scales[16], d */
    [GGML_TYPE_Q6_K] = {
        .type_name = "q6_K", .blck_size = QK_K, .type_size = sizeof(block_q6_K), .is_quantized = true,
        .to_float = ggml__dequantize_row_q6_K, .from_float_ref = ggml__quantize_row_q6_K_ref,
    },
    /* float d, qs[256], int16 bsums[16] */
    [GGML_TYPE_Q8_K] = { .type_name = "q8_K", .blck_size = 256, .type_size = 292, .is_quantized = true },
    [GGML_TYPE_IQ2_XXS] = {
        .type_name = "iq2_xxs", .blck_size = QK_K, .type_size = sizeof(block_iq2_xxs), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq2_xxs,
    },
    [GGML_TYPE_IQ2_XS] = {
        .type_name = "iq2_xs", .blck_size = QK_K, .type_size = sizeof(block_iq2_xs), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq2_xs,
    },
    [GGML_TYPE_IQ3_XXS] = {
        .type_name = "iq3_xxs", .blck_size = QK_K, .type_size = sizeof(block_iq3_xxs), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq3_xxs, .from_float_ref = ggml__quantize_row_iq3_xxs_ref,
    },
    [GGML_TYPE_IQ1_S] = {
        .type_name = "iq1_s", .blck_size = QK_K, .type_size = sizeof(block_iq1_s), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq1_s,
    },
    [GGML_TYPE_IQ4_NL] = {
        .type_name = "iq4_nl", .blck_size = QK4_NL, .type_size = sizeof(block_iq4_nl), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq4_nl, .from_float_ref = ggml__quantize_row_iq4_nl_ref,
    },
    [GGML_TYPE_IQ3_S] = {
        .type_name = "iq3_s", .blck_size = QK_K, .type_size = sizeof(block_iq3_s), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq3_s, .from_float_ref = ggml__quantize_row_iq3_s_ref,
    },
    [GGML_TYPE_IQ2_S] = {
        .type_name = "iq2_s", .blck_size = QK_K, .type_size = sizeof(block_iq2_s), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq2_s, .from_float_ref = ggml__quantize_row_iq2_s_ref,
    },
    [GGML_TYPE_I8]  = { .type_name = "i8",  .blck_size = 1, .type_size = sizeof(int8_t) },
    [GGML_TYPE_I16] = { .type_name = "i16", .blck_size = 1, .type_size = sizeof(int16_t) },
    [GGML_TYPE_I32] = { .type_name = "i32", .blck_size = 1, .type_size = sizeof(int32_t) },
    [GGML_TYPE_I64] = { .type_name = "i64", .blck_size = 1, .type_size = sizeof(int64_t) },
    [GGML_TYPE_F64] = { .type_name = "f64", .blck_size = 1, .type_size = sizeof(double) },
    [GGML_TYPE_IQ1_M] = {
        .type_name = "iq1_m", .blck_size = QK_K, .type_size = sizeof(block_iq1_m), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq1_m,
    },
    [GGML_TYPE_BF16] = {
        .type_name = "bf16", .blck_size = 1, .type_size = sizeof(ggml_bf16_t),
        .to_float = bf16_to_float, .from_float_ref = bf16_from_float,
    },
    [31] = REMOVED("TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking"),
    [32] = REMOVED("TYPE_Q4_0_4_8 REMOVED, use Q4_0 with runtime repacking"),
    [33] = REMOVED("TYPE_Q4_0_8_8 REMOVED, use Q4_0 with runtime repacking"),
    [36] = REMOVED("TYPE_IQ4_NL_4_4 REMOVED, use IQ4_NL with runtime repacking"),
    [37] = REMOVED("TYPE_IQ4_NL_4_8 REMOVED, use IQ4_NL with runtime repacking"),
    [38] = REMOVED("TYPE_IQ4_NL_8_8 REMOVED, use IQ4_NL with runtime repacking"),
    [GGML_TYPE_MXFP4] = {
        .type_name = "mxfp4", .blck_size = QK_MXFP4, .type_size = sizeof(block_mxfp4), .is_quantized = true,
        .to_float = ggml__dequantize_row_mxfp4, .from_float_ref = ggml__quantize_row_mxfp4_ref,
    },
    [GGML_TYPE_NVFP4] = {
        .type_name = "nvfp4", .blck_size = QK_NVFP4, .type_size = sizeof(block_nvfp4), .is_quantized = true,
        .to_float = ggml__dequantize_row_nvfp4, .from_float_ref = ggml__quantize_row_nvfp4_ref,
    },
    [GGML_TYPE_Q1_0] = {
        .type_name = "q1_0", .blck_size = QK1_0, .type_size = sizeof(block_q1_0), .is_quantized = true,
        .to_float = ggml__dequantize_row_q1_0, .from_float_ref = ggml__quantize_row_q1_0_ref,
    },
    [GGML_TYPE_Q2_0] = {
        .type_name = "q2_0", .blck_size = QK2_0, .type_size = sizeof(block_q2_0), .is_quantized = true,
        .to_float = ggml__dequantize_row_q2_0, .from_float_ref = ggml__quantize_row_q2_0_ref,
    },
    /* TQ1_0, TQ2_0, IQ4_XS: lib/quants-tq.c */
    [GGML_TYPE_TQ1_0] = {
        .type_name = "tq1_0", .blck_size = QK_K, .type_size = sizeof(block_tq1_0), .is_quantized = true,
        .to_float = ggml__dequantize_row_tq1_0, .from_float_ref = ggml__quantize_row_tq1_0_ref,
    },
    [GGML_TYPE_TQ2_0] = {
        .type_name = "tq2_0", .blck_size = QK_K, .type_size = sizeof(block_tq2_0), .is_quantized = true,
        .to_float = ggml__dequantize_row_tq2_0, .from_float_ref = ggml__quantize_row_tq2_0_ref,
    },
    [GGML_TYPE_IQ4_XS] = {
        .type_name = "iq4_xs", .blck_size = QK_K, .type_size = sizeof(block_iq4_xs), .is_quantized = true,
        .to_float = ggml__dequantize_row_iq4_xs, .from_float_ref = ggml__quantize_row_iq4_xs_ref,
    },
};

/* ------------------------------------------------------------- lookups */

static bool in_enum(enum ggml_type type)
{
    return (int) type >= 0 && (int) type < GGML_TYPE_COUNT;
}

bool ggml__type_is_valid(enum ggml_type type)
{
    return in_enum(type) && ggml__type_traits_table[type].blck_size != 0;
}

/* Logs (as func) why type cannot be used; false for such a type. */
static bool usable(enum ggml_type type, const char *func)
{
    if (!in_enum(type)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "invalid type %d", (int) type);
        return false;
    }
    if (ggml__type_traits_table[type].blck_size == 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "type %d has been removed (%s)",
                     (int) type, ggml__type_traits_table[type].type_name);
        return false;
    }
    return true;
}

const struct ggml_type_traits *ggml_get_type_traits(enum ggml_type type)
{
    if (!in_enum(type)) {
        ggml__error("invalid type %d", (int) type);
        return NULL;
    }
    return &ggml__type_traits_table[type];
}

const char *ggml_type_name(enum ggml_type type)
{
    if (!in_enum(type)) {
        ggml__error("invalid type %d", (int) type);
        return "NONE";
    }
    return ggml__type_traits_table[type].type_name;
}

int64_t ggml_blck_size(enum ggml_type type)
{
    return usable(type, __func__) ? ggml__type_traits_table[type].blck_size : 0;
}

size_t ggml_type_size(enum ggml_type type)
{
    return usable(type, __func__) ? ggml__type_traits_table[type].type_size : 0;
}

/* Bytes of ne values: ne / blck_size blocks.  ne must be a whole number of blocks. */
size_t ggml_row_size(enum ggml_type type, int64_t ne)
{
    if (!usable(type, __func__))
        return 0;
    const int64_t blck = ggml__type_traits_table[type].blck_size;
    const size_t size = ggml__type_traits_table[type].type_size;
    if (ne < 0 || ne % blck != 0) {
        ggml__error("%" PRId64 " values are not a whole number of %s blocks of %" PRId64,
                    ne, ggml__type_traits_table[type].type_name, blck);
        return 0;
    }
    if ((uint64_t) (ne / blck) > SIZE_MAX / size) {
        ggml__error("a row of %" PRId64 " %s values does not fit in size_t",
                    ne, ggml__type_traits_table[type].type_name);
        return 0;
    }
    return (size_t) (ne / blck) * size;
}

double ggml_type_sizef(enum ggml_type type)
{
    if (!usable(type, __func__))
        return 0.0;
    return (double) ggml__type_traits_table[type].type_size / (double) ggml__type_traits_table[type].blck_size;
}

bool ggml_is_quantized(enum ggml_type type)
{
    if (!in_enum(type)) {
        ggml__error("invalid type %d", (int) type);
        return false;
    }
    return ggml__type_traits_table[type].is_quantized;
}

enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype)
{
    switch (ftype) {
    case GGML_FTYPE_ALL_F32:        return GGML_TYPE_F32;
    case GGML_FTYPE_MOSTLY_F16:     return GGML_TYPE_F16;
    case GGML_FTYPE_MOSTLY_BF16:    return GGML_TYPE_BF16;
    case GGML_FTYPE_MOSTLY_Q4_0:    return GGML_TYPE_Q4_0;
    case GGML_FTYPE_MOSTLY_Q4_1:    return GGML_TYPE_Q4_1;
    case GGML_FTYPE_MOSTLY_Q5_0:    return GGML_TYPE_Q5_0;
    case GGML_FTYPE_MOSTLY_Q5_1:    return GGML_TYPE_Q5_1;
    case GGML_FTYPE_MOSTLY_Q8_0:    return GGML_TYPE_Q8_0;
    case GGML_FTYPE_MOSTLY_MXFP4:   return GGML_TYPE_MXFP4;
    case GGML_FTYPE_MOSTLY_NVFP4:   return GGML_TYPE_NVFP4;
    case GGML_FTYPE_MOSTLY_Q1_0:    return GGML_TYPE_Q1_0;
    case GGML_FTYPE_MOSTLY_Q2_0:    return GGML_TYPE_Q2_0;
    case GGML_FTYPE_MOSTLY_Q2_K:    return GGML_TYPE_Q2_K;
    case GGML_FTYPE_MOSTLY_Q3_K:    return GGML_TYPE_Q3_K;
    case GGML_FTYPE_MOSTLY_Q4_K:    return GGML_TYPE_Q4_K;
    case GGML_FTYPE_MOSTLY_Q5_K:    return GGML_TYPE_Q5_K;
    case GGML_FTYPE_MOSTLY_Q6_K:    return GGML_TYPE_Q6_K;
    case GGML_FTYPE_MOSTLY_IQ2_XXS: return GGML_TYPE_IQ2_XXS;
    case GGML_FTYPE_MOSTLY_IQ2_XS:  return GGML_TYPE_IQ2_XS;
    case GGML_FTYPE_MOSTLY_IQ3_XXS: return GGML_TYPE_IQ3_XXS;
    case GGML_FTYPE_MOSTLY_IQ1_S:   return GGML_TYPE_IQ1_S;
    case GGML_FTYPE_MOSTLY_IQ1_M:   return GGML_TYPE_IQ1_M;
    case GGML_FTYPE_MOSTLY_IQ4_NL:  return GGML_TYPE_IQ4_NL;
    case GGML_FTYPE_MOSTLY_IQ4_XS:  return GGML_TYPE_IQ4_XS;
    case GGML_FTYPE_MOSTLY_IQ3_S:   return GGML_TYPE_IQ3_S;
    case GGML_FTYPE_MOSTLY_IQ2_S:   return GGML_TYPE_IQ2_S;
    case GGML_FTYPE_UNKNOWN:
    case GGML_FTYPE_MOSTLY_Q4_1_SOME_F16:
        break;
    }
    /* UNKNOWN, the mixed Q4_1/F16 file type and values outside the enum */
    ggml__error("file type %d has no single tensor type", (int) ftype);
    return GGML_TYPE_COUNT;
}

/* ---------------------------------------------------------- validation */

/*
 * How to check the data of each type: the float elements themselves, or
 * the scale fields of each block (binary16 at the given byte offsets, or
 * a binary32, or MXFP4's E8M0 exponent, or IQ1_M's scale that is spread
 * over the top nibbles of four 16-bit words at offset 48).
 */
enum check_kind {
    CHECK_NOTHING,
    CHECK_F32,
    CHECK_F64,
    CHECK_F16,
    CHECK_BF16,
    CHECK_HALF_FIELDS,
    CHECK_FLOAT_FIELD,
    CHECK_E8M0,
    CHECK_IQ1_M_SCALE,
};

struct row_check {
    enum check_kind kind;
    int n_fields;
    uint16_t offset[2];
};

#define HALVES1(a)    { CHECK_HALF_FIELDS, 1, { (a), 0 } }
#define HALVES2(a, b) { CHECK_HALF_FIELDS, 2, { (a), (b) } }

static const struct row_check row_checks[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32]     = { CHECK_F32, 0, { 0, 0 } },
    [GGML_TYPE_F16]     = { CHECK_F16, 0, { 0, 0 } },
    [GGML_TYPE_BF16]    = { CHECK_BF16, 0, { 0, 0 } },
    [GGML_TYPE_F64]     = { CHECK_F64, 0, { 0, 0 } },
    [GGML_TYPE_Q4_0]    = HALVES1(0),
    [GGML_TYPE_Q4_1]    = HALVES2(0, 2),
    [GGML_TYPE_Q5_0]    = HALVES1(0),
    [GGML_TYPE_Q5_1]    = HALVES2(0, 2),
    [GGML_TYPE_Q8_0]    = HALVES1(0),
    [GGML_TYPE_Q8_1]    = HALVES2(0, 2),
    [GGML_TYPE_Q2_K]    = HALVES2(80, 82),
    [GGML_TYPE_Q3_K]    = HALVES1(108),
    [GGML_TYPE_Q4_K]    = HALVES2(0, 2),
    [GGML_TYPE_Q5_K]    = HALVES2(0, 2),
    [GGML_TYPE_Q6_K]    = HALVES1(208),
    [GGML_TYPE_Q8_K]    = { CHECK_FLOAT_FIELD, 1, { 0, 0 } },
    [GGML_TYPE_IQ2_XXS] = HALVES1(0),
    [GGML_TYPE_IQ2_XS]  = HALVES1(0),
    [GGML_TYPE_IQ3_XXS] = HALVES1(0),
    [GGML_TYPE_IQ1_S]   = HALVES1(0),
    [GGML_TYPE_IQ4_NL]  = HALVES1(0),
    [GGML_TYPE_IQ3_S]   = HALVES1(0),
    [GGML_TYPE_IQ2_S]   = HALVES1(0),
    [GGML_TYPE_IQ4_XS]  = HALVES1(0),
    [GGML_TYPE_IQ1_M]   = { CHECK_IQ1_M_SCALE, 1, { 48, 0 } },
    [GGML_TYPE_TQ1_0]   = HALVES1(52),
    [GGML_TYPE_TQ2_0]   = HALVES1(64),
    [GGML_TYPE_MXFP4]   = { CHECK_E8M0, 1, { 0, 0 } },
    [GGML_TYPE_Q1_0]    = HALVES1(0),
    [GGML_TYPE_Q2_0]    = HALVES1(0),
    /* I8, I16, I32, I64, NVFP4 (its UE4M3 scales have no NaN or
       infinity here): every bit pattern is a value */
};

static uint16_t load_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* "NaN", "inf" or NULL for a binary16 bit pattern. */
static const char *half_problem(uint16_t h)
{
    if ((h & 0x7c00u) != 0x7c00u)
        return NULL;
    return (h & 0x03ffu) ? "NaN" : "inf";
}

static const char *bf16_problem(uint16_t h)
{
    if ((h & 0x7f80u) != 0x7f80u)
        return NULL;
    return (h & 0x007fu) ? "NaN" : "inf";
}

static const char *double_problem(double v)
{
    if (isnan(v))
        return "NaN";
    return isinf(v) ? "inf" : NULL;
}

/*
 * Checks nbytes of data of the given type: false, with one logged message,
 * for a size that is not a whole number of blocks, a NaN or infinity among
 * float elements or in a block's scale, or an E8M0 exponent of 0xff.
 */
bool ggml_validate_row_data(enum ggml_type type, const void *data, size_t nbytes)
{
    if (!usable(type, __func__))
        return false;

    const struct ggml_type_traits *tt = &ggml__type_traits_table[type];
    if (nbytes % tt->type_size != 0) {
        ggml__error("%zu bytes are not a whole number of %s blocks of %zu bytes",
                    nbytes, tt->type_name, tt->type_size);
        return false;
    }
    if (nbytes == 0)
        return true;
    if (data == NULL) {
        ggml__error("NULL data for %zu bytes", nbytes);
        return false;
    }

    const struct row_check *rc = &row_checks[type];
    const uint8_t *p = data;
    const size_t n = nbytes / tt->type_size;

    for (size_t i = 0; i < n; i++) {
        const uint8_t *block = p + i * tt->type_size;
        const char *problem = NULL;

        switch (rc->kind) {
        case CHECK_NOTHING:
            return true;
        case CHECK_F32: {
            float v;
            memcpy(&v, block, sizeof v);
            problem = double_problem(v);
            break;
        }
        case CHECK_F64: {
            double v;
            memcpy(&v, block, sizeof v);
            problem = double_problem(v);
            break;
        }
        case CHECK_F16:
            problem = half_problem(load_u16(block));
            break;
        case CHECK_BF16:
            problem = bf16_problem(load_u16(block));
            break;
        case CHECK_HALF_FIELDS:
            for (int f = 0; f < rc->n_fields && problem == NULL; f++)
                problem = half_problem(load_u16(block + rc->offset[f]));
            break;
        case CHECK_FLOAT_FIELD: {
            float v;
            memcpy(&v, block + rc->offset[0], sizeof v);
            problem = double_problem(v);
            break;
        }
        case CHECK_E8M0:
            if (block[rc->offset[0]] == 0xff)
                problem = "the invalid exponent 0xff";
            break;
        case CHECK_IQ1_M_SCALE: {
            const uint8_t *sc = block + rc->offset[0];
            uint16_t scale = (uint16_t) ((load_u16(sc) >> 12) |
                                         ((load_u16(sc + 2) >> 8) & 0x00f0u) |
                                         ((load_u16(sc + 4) >> 4) & 0x0f00u) |
                                         (load_u16(sc + 6) & 0xf000u));
            problem = half_problem(scale);
            break;
        }
        }

        if (problem != NULL) {
            if (tt->blck_size == 1)
                ggml__error("%s data has %s at element %zu", tt->type_name, problem, i);
            else
                ggml__error("%s data has %s in the scale of block %zu", tt->type_name, problem, i);
            return false;
        }
    }
    return true;
}
