/*
 * test-types.c - the type table: names, block shapes, row sizes, file-type
 * mapping, validation of row data, and the handling of invalid types.
 *
 * The expected values are written out here from ggml's block layouts (the
 * field list of each block is in the comment), not read from the library.
 */
#include "config.h"

#include "tap.h"

struct expected_type {
    int type;
    const char *name;
    int64_t blck_size;
    size_t type_size;
    bool quantized;
};

static const struct expected_type expected[] = {
    { GGML_TYPE_F32,     "f32",     1,   4,   false },
    { GGML_TYPE_F16,     "f16",     1,   2,   false },
    { GGML_TYPE_Q4_0,    "q4_0",    32,  18,  true },  /* d + 16 nibble bytes */
    { GGML_TYPE_Q4_1,    "q4_1",    32,  20,  true },  /* d, m + 16 */
    { GGML_TYPE_Q5_0,    "q5_0",    32,  22,  true },  /* d, qh[4] + 16 */
    { GGML_TYPE_Q5_1,    "q5_1",    32,  24,  true },  /* d, m, qh[4] + 16 */
    { GGML_TYPE_Q8_0,    "q8_0",    32,  34,  true },  /* d + 32 */
    { GGML_TYPE_Q8_1,    "q8_1",    32,  36,  true },  /* d, s + 32 */
    { GGML_TYPE_Q2_K,    "q2_K",    256, 84,  true },  /* 16 + 64 + d + dmin */
    { GGML_TYPE_Q3_K,    "q3_K",    256, 110, true },  /* 32 + 64 + 12 + d */
    { GGML_TYPE_Q4_K,    "q4_K",    256, 144, true },  /* d + dmin + 12 + 128 */
    { GGML_TYPE_Q5_K,    "q5_K",    256, 176, true },  /* d + dmin + 12 + 32 + 128 */
    { GGML_TYPE_Q6_K,    "q6_K",    256, 210, true },  /* 128 + 64 + 16 + d */
    { GGML_TYPE_Q8_K,    "q8_K",    256, 292, true },  /* float d + 256 + 16 int16 */
    { GGML_TYPE_IQ2_XXS, "iq2_xxs", 256, 66,  true },  /* d + 32 uint16 */
    { GGML_TYPE_IQ2_XS,  "iq2_xs",  256, 74,  true },  /* d + 32 uint16 + 8 */
    { GGML_TYPE_IQ3_XXS, "iq3_xxs", 256, 98,  true },  /* d + 96 */
    { GGML_TYPE_IQ1_S,   "iq1_s",   256, 50,  true },  /* d + 32 + 8 uint16 */
    { GGML_TYPE_IQ4_NL,  "iq4_nl",  32,  18,  true },  /* d + 16 */
    { GGML_TYPE_IQ3_S,   "iq3_s",   256, 110, true },  /* d + 64 + 8 + 32 + 4 */
    { GGML_TYPE_IQ2_S,   "iq2_s",   256, 82,  true },  /* d + 64 + 8 + 8 */
    { GGML_TYPE_IQ4_XS,  "iq4_xs",  256, 136, true },  /* d + uint16 + 4 + 128 */
    { GGML_TYPE_I8,      "i8",      1,   1,   false },
    { GGML_TYPE_I16,     "i16",     1,   2,   false },
    { GGML_TYPE_I32,     "i32",     1,   4,   false },
    { GGML_TYPE_I64,     "i64",     1,   8,   false },
    { GGML_TYPE_F64,     "f64",     1,   8,   false },
    { GGML_TYPE_IQ1_M,   "iq1_m",   256, 56,  true },  /* 32 + 16 + 8 */
    { GGML_TYPE_BF16,    "bf16",    1,   2,   false },
    { GGML_TYPE_TQ1_0,   "tq1_0",   256, 54,  true },  /* 48 + 4 + d */
    { GGML_TYPE_TQ2_0,   "tq2_0",   256, 66,  true },  /* 64 + d */
    { GGML_TYPE_MXFP4,   "mxfp4",   32,  17,  true },  /* e + 16 */
    { GGML_TYPE_NVFP4,   "nvfp4",   64,  36,  true },  /* 4 scales + 32 */
    { GGML_TYPE_Q1_0,    "q1_0",    128, 18,  true },  /* d + 16 */
    { GGML_TYPE_Q2_0,    "q2_0",    64,  18,  true },  /* d + 16 */
};

static const struct {
    int type;
    const char *name;
} removed[] = {
    { 4, "DEPRECATED" },
    { 5, "DEPRECATED" },
    { 31, "TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking" },
    { 32, "TYPE_Q4_0_4_8 REMOVED, use Q4_0 with runtime repacking" },
    { 33, "TYPE_Q4_0_8_8 REMOVED, use Q4_0 with runtime repacking" },
    { 36, "TYPE_IQ4_NL_4_4 REMOVED, use IQ4_NL with runtime repacking" },
    { 37, "TYPE_IQ4_NL_4_8 REMOVED, use IQ4_NL with runtime repacking" },
    { 38, "TYPE_IQ4_NL_8_8 REMOVED, use IQ4_NL with runtime repacking" },
};

#define N_EXPECTED ((int) (sizeof expected / sizeof expected[0]))
#define N_REMOVED ((int) (sizeof removed / sizeof removed[0]))

static void check_table(void)
{
    is_int(GGML_TYPE_COUNT, N_EXPECTED + N_REMOVED, "every slot below GGML_TYPE_COUNT is listed here");

    for (int i = 0; i < N_EXPECTED; i++) {
        const struct expected_type *e = &expected[i];
        enum ggml_type t = (enum ggml_type) e->type;
        is_str(ggml_type_name(t), e->name, "type %d is named %s", e->type, e->name);
        is_int(ggml_blck_size(t), e->blck_size, "%s: block size %" PRId64, e->name, e->blck_size);
        is_uint(ggml_type_size(t), e->type_size, "%s: block bytes %zu", e->name, e->type_size);
        is_int(ggml_is_quantized(t), e->quantized, "%s: is_quantized %d", e->name, e->quantized);

        const struct ggml_type_traits *tt = ggml_get_type_traits(t);
        ok(tt && strcmp(tt->type_name, e->name) == 0 && tt->blck_size == e->blck_size &&
               tt->type_size == e->type_size && tt->is_quantized == e->quantized &&
               tt->blck_size_interleave == 0,
           "%s: ggml_get_type_traits agrees", e->name);
    }
    is_int(tap_log_errors(), 0, "no errors while reading the table");
}

static void check_converters(void)
{
    const struct { int type; bool to, from; } conv[] = {
        { GGML_TYPE_F32, false, false },   /* ggml leaves f32 to the CPU backend */
        { GGML_TYPE_F16, true, true },
        { GGML_TYPE_BF16, true, true },
        { GGML_TYPE_Q4_0, true, true },
        { GGML_TYPE_Q4_1, true, true },
        { GGML_TYPE_Q5_0, true, true },
        { GGML_TYPE_Q5_1, true, true },
        { GGML_TYPE_Q8_0, true, true },
        { GGML_TYPE_Q8_1, false, true },   /* ggml has no to_float for q8_1 */
        { GGML_TYPE_I32, false, false },
    };
    for (size_t i = 0; i < sizeof conv / sizeof conv[0]; i++) {
        const struct ggml_type_traits *tt = ggml_get_type_traits((enum ggml_type) conv[i].type);
        ok(tt && (tt->to_float != NULL) == conv[i].to && (tt->from_float_ref != NULL) == conv[i].from,
           "%s: to_float %s, from_float_ref %s", ggml_type_name((enum ggml_type) conv[i].type),
           conv[i].to ? "set" : "NULL", conv[i].from ? "set" : "NULL");
    }

    /* the f16 and bf16 converters are the public row functions */
    const float x[4] = { 1.0f, -2.0f, 0.5f, 65504.0f };
    ggml_fp16_t h[4];
    float y[4];
    const struct ggml_type_traits *tt = ggml_get_type_traits(GGML_TYPE_F16);
    tt->from_float_ref(x, h, 4);
    tt->to_float(h, y, 4);
    ok(h[0] == 0x3c00 && h[1] == 0xc000 && h[3] == 0x7bff && memcmp(x, y, sizeof x) == 0,
       "f16 traits convert both ways");
    ggml_bf16_t b[4];
    tt = ggml_get_type_traits(GGML_TYPE_BF16);
    tt->from_float_ref(x, b, 4);
    tt->to_float(b, y, 4);
    ok(b[0].bits == 0x3f80 && b[1].bits == 0xc000 && y[2] == 0.5f, "bf16 traits convert both ways");
}

/* ggml_type_sizef is deprecated in the header; it is still tested. */
static double type_sizef(enum ggml_type type)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return ggml_type_sizef(type);
#pragma GCC diagnostic pop
}

static void check_row_size(void)
{
    is_uint(ggml_row_size(GGML_TYPE_F32, 10), 40, "10 f32 take 40 bytes");
    is_uint(ggml_row_size(GGML_TYPE_F16, 7), 14, "7 f16 take 14 bytes");
    is_uint(ggml_row_size(GGML_TYPE_Q4_0, 64), 36, "64 q4_0 values take 2 blocks of 18 bytes");
    is_uint(ggml_row_size(GGML_TYPE_Q8_1, 4096), 128 * 36, "4096 q8_1 values take 128 blocks");
    is_uint(ggml_row_size(GGML_TYPE_Q2_K, 512), 168, "512 q2_K values take 2 blocks of 84 bytes");
    is_uint(ggml_row_size(GGML_TYPE_Q6_K, 0), 0, "an empty row takes no bytes");
    is_int(tap_log_errors(), 0, "valid row sizes log nothing");

    is_uint(ggml_row_size(GGML_TYPE_Q4_0, 33), 0, "33 q4_0 values are not whole blocks");
    logged_one_error("a partial block logs one error");
    is_uint(ggml_row_size(GGML_TYPE_Q4_K, 100), 0, "100 q4_K values are not whole blocks");
    logged_one_error("a partial super-block logs one error");
    is_uint(ggml_row_size(GGML_TYPE_F32, -1), 0, "a negative count gives 0");
    logged_one_error("a negative count logs one error");
    is_uint(ggml_row_size(GGML_TYPE_I64, INT64_MAX), 0, "a row too large for size_t gives 0");
    logged_one_error("an overflowing row size logs one error");

    is_near(type_sizef(GGML_TYPE_Q4_0), 18.0 / 32.0, 0.0, "q4_0 takes 0.5625 bytes a value");
    is_near(type_sizef(GGML_TYPE_F32), 4.0, 0.0, "f32 takes 4 bytes a value");
    is_near(type_sizef(GGML_TYPE_Q6_K), 210.0 / 256.0, 0.0, "q6_K takes 210/256 bytes a value");
}

static void check_invalid_types(void)
{
    const int bad[] = { -1, GGML_TYPE_COUNT, 1000, -2147483647 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        enum ggml_type t = (enum ggml_type) bad[i];
        is_str(ggml_type_name(t), "NONE", "type %d is named NONE", bad[i]);
        logged_one_error("ggml_type_name(%d) logs one error", bad[i]);
        is_int(ggml_blck_size(t), 0, "type %d: block size 0", bad[i]);
        logged_one_error("ggml_blck_size(%d) logs one error", bad[i]);
        is_uint(ggml_type_size(t), 0, "type %d: type size 0", bad[i]);
        logged_one_error("ggml_type_size(%d) logs one error", bad[i]);
        is_uint(ggml_row_size(t, 32), 0, "type %d: row size 0", bad[i]);
        logged_one_error("ggml_row_size(%d) logs one error", bad[i]);
        is_near(type_sizef(t), 0.0, 0.0, "type %d: sizef 0", bad[i]);
        logged_one_error("type_sizef(%d) logs one error", bad[i]);
        ok(!ggml_is_quantized(t), "type %d is not quantized", bad[i]);
        logged_one_error("ggml_is_quantized(%d) logs one error", bad[i]);
        is_ptr(ggml_get_type_traits(t), NULL, "type %d has no traits", bad[i]);
        logged_one_error("ggml_get_type_traits(%d) logs one error", bad[i]);
        float f = 0;
        ok(!ggml_validate_row_data(t, &f, sizeof f), "type %d does not validate", bad[i]);
        logged_one_error("ggml_validate_row_data(%d) logs one error", bad[i]);
    }

    for (int i = 0; i < N_REMOVED; i++) {
        enum ggml_type t = (enum ggml_type) removed[i].type;
        /* describing a removed slot is quiet and answers as ggml does */
        is_str(ggml_type_name(t), removed[i].name, "removed slot %d keeps ggml's name", removed[i].type);
        const struct ggml_type_traits *tt = ggml_get_type_traits(t);
        ok(tt && tt->blck_size == 0 && tt->type_size == 0 && !tt->is_quantized &&
               !tt->to_float && !tt->from_float_ref,
           "removed slot %d has an empty traits entry", removed[i].type);
        ok(!ggml_is_quantized(t), "removed slot %d is not quantized", removed[i].type);
        is_int(tap_log_errors(), 0, "describing removed slot %d logs nothing", removed[i].type);
        /* using it is an error */
        is_int(ggml_blck_size(t), 0, "removed slot %d: block size 0", removed[i].type);
        logged_one_error("ggml_blck_size on removed slot %d logs one error", removed[i].type);
        is_uint(ggml_type_size(t), 0, "removed slot %d: type size 0", removed[i].type);
        logged_one_error("ggml_type_size on removed slot %d logs one error", removed[i].type);
        is_uint(ggml_row_size(t, 0), 0, "removed slot %d: row size 0", removed[i].type);
        logged_one_error("ggml_row_size on removed slot %d logs one error", removed[i].type);
        ok(!ggml_validate_row_data(t, NULL, 0), "removed slot %d does not validate", removed[i].type);
        logged_one_error("ggml_validate_row_data on removed slot %d logs one error", removed[i].type);
    }
}

static void check_ftypes(void)
{
    const struct { int ftype, type; } map[] = {
        { GGML_FTYPE_ALL_F32, GGML_TYPE_F32 },
        { GGML_FTYPE_MOSTLY_F16, GGML_TYPE_F16 },
        { GGML_FTYPE_MOSTLY_Q4_0, GGML_TYPE_Q4_0 },
        { GGML_FTYPE_MOSTLY_Q4_1, GGML_TYPE_Q4_1 },
        { GGML_FTYPE_MOSTLY_Q8_0, GGML_TYPE_Q8_0 },
        { GGML_FTYPE_MOSTLY_Q5_0, GGML_TYPE_Q5_0 },
        { GGML_FTYPE_MOSTLY_Q5_1, GGML_TYPE_Q5_1 },
        { GGML_FTYPE_MOSTLY_Q2_K, GGML_TYPE_Q2_K },
        { GGML_FTYPE_MOSTLY_Q3_K, GGML_TYPE_Q3_K },
        { GGML_FTYPE_MOSTLY_Q4_K, GGML_TYPE_Q4_K },
        { GGML_FTYPE_MOSTLY_Q5_K, GGML_TYPE_Q5_K },
        { GGML_FTYPE_MOSTLY_Q6_K, GGML_TYPE_Q6_K },
        { GGML_FTYPE_MOSTLY_IQ2_XXS, GGML_TYPE_IQ2_XXS },
        { GGML_FTYPE_MOSTLY_IQ2_XS, GGML_TYPE_IQ2_XS },
        { GGML_FTYPE_MOSTLY_IQ3_XXS, GGML_TYPE_IQ3_XXS },
        { GGML_FTYPE_MOSTLY_IQ1_S, GGML_TYPE_IQ1_S },
        { GGML_FTYPE_MOSTLY_IQ4_NL, GGML_TYPE_IQ4_NL },
        { GGML_FTYPE_MOSTLY_IQ3_S, GGML_TYPE_IQ3_S },
        { GGML_FTYPE_MOSTLY_IQ2_S, GGML_TYPE_IQ2_S },
        { GGML_FTYPE_MOSTLY_IQ4_XS, GGML_TYPE_IQ4_XS },
        { GGML_FTYPE_MOSTLY_IQ1_M, GGML_TYPE_IQ1_M },
        { GGML_FTYPE_MOSTLY_BF16, GGML_TYPE_BF16 },
        { GGML_FTYPE_MOSTLY_MXFP4, GGML_TYPE_MXFP4 },
        { GGML_FTYPE_MOSTLY_NVFP4, GGML_TYPE_NVFP4 },
        { GGML_FTYPE_MOSTLY_Q1_0, GGML_TYPE_Q1_0 },
        { GGML_FTYPE_MOSTLY_Q2_0, GGML_TYPE_Q2_0 },
    };
    /* the file-type numbers are a file format too */
    is_int(GGML_FTYPE_MOSTLY_Q4_1_SOME_F16, 4, "ftype Q4_1_SOME_F16 is 4");
    is_int(GGML_FTYPE_MOSTLY_Q8_0, 7, "ftype Q8_0 is 7");
    is_int(GGML_FTYPE_MOSTLY_BF16, 24, "ftype BF16 is 24");
    is_int(GGML_FTYPE_MOSTLY_MXFP4, 25, "ftype MXFP4 is 25");
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        is_int(ggml_ftype_to_ggml_type((enum ggml_ftype) map[i].ftype), map[i].type,
               "ftype %d maps to %s", map[i].ftype, ggml_type_name((enum ggml_type) map[i].type));
    is_int(tap_log_errors(), 0, "valid file types log nothing");

    const int bad[] = { GGML_FTYPE_UNKNOWN, GGML_FTYPE_MOSTLY_Q4_1_SOME_F16, 5, 6, 99, -7 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        is_int(ggml_ftype_to_ggml_type((enum ggml_ftype) bad[i]), GGML_TYPE_COUNT,
               "ftype %d has no single type", bad[i]);
        logged_one_error("ftype %d logs one error", bad[i]);
    }
}

static void put_u16(void *p, uint16_t v)
{
    memcpy(p, &v, sizeof v);
}

static void check_validate(void)
{
    float f[5] = { 1.0f, -2.0f, 0.0f, 3.0e38f, -1e-40f };
    ok(ggml_validate_row_data(GGML_TYPE_F32, f, sizeof f), "finite f32 data is valid");
    f[3] = NAN;
    ok(!ggml_validate_row_data(GGML_TYPE_F32, f, sizeof f), "f32 data with a NaN is not valid");
    logged_one_error("a NaN in f32 data logs one error");
    f[3] = -INFINITY;
    ok(!ggml_validate_row_data(GGML_TYPE_F32, f, sizeof f), "f32 data with -inf is not valid");
    logged_one_error("an infinity in f32 data logs one error");
    ok(!ggml_validate_row_data(GGML_TYPE_F32, f, 7), "7 bytes are not whole f32 values");
    logged_one_error("a bad size logs one error");

    double d[2] = { 1.0, 1e300 };
    ok(ggml_validate_row_data(GGML_TYPE_F64, d, sizeof d), "finite f64 data is valid");
    d[1] = NAN;
    ok(!ggml_validate_row_data(GGML_TYPE_F64, d, sizeof d), "f64 data with a NaN is not valid");
    logged_one_error("a NaN in f64 data logs one error");

    uint16_t h[3] = { 0x3c00, 0x7bff, 0x0001 };
    ok(ggml_validate_row_data(GGML_TYPE_F16, h, sizeof h), "finite f16 data is valid");
    h[2] = 0x7e00;
    ok(!ggml_validate_row_data(GGML_TYPE_F16, h, sizeof h), "f16 data with a NaN is not valid");
    logged_one_error("a NaN in f16 data logs one error");
    h[2] = 0xfc00;
    ok(!ggml_validate_row_data(GGML_TYPE_F16, h, sizeof h), "f16 data with -inf is not valid");
    logged_one_error("an infinity in f16 data logs one error");

    uint16_t b[2] = { 0x3f80, 0x7f7f };
    ok(ggml_validate_row_data(GGML_TYPE_BF16, b, sizeof b), "finite bf16 data is valid");
    b[0] = 0x7fc1;
    ok(!ggml_validate_row_data(GGML_TYPE_BF16, b, sizeof b), "bf16 data with a NaN is not valid");
    logged_one_error("a NaN in bf16 data logs one error");
    b[0] = 0x7f80;
    ok(!ggml_validate_row_data(GGML_TYPE_BF16, b, sizeof b), "bf16 data with inf is not valid");
    logged_one_error("an infinity in bf16 data logs one error");

    int32_t ints[2] = { -1, 0x7fc00000 };
    ok(ggml_validate_row_data(GGML_TYPE_I32, ints, sizeof ints), "any i32 data is valid");
    ok(ggml_validate_row_data(GGML_TYPE_Q8_0, NULL, 0), "no data is valid");
    ok(!ggml_validate_row_data(GGML_TYPE_F32, NULL, 8), "NULL data of 8 bytes is not valid");
    logged_one_error("NULL data logs one error");

    /* two q8_0 blocks (34 bytes each): d at offset 0 */
    uint8_t q8[68] = { 0 };
    put_u16(q8, 0x3c00);
    put_u16(q8 + 34, 0x2e66);
    q8[40] = 0xff;   /* quants may hold any byte */
    ok(ggml_validate_row_data(GGML_TYPE_Q8_0, q8, sizeof q8), "q8_0 blocks with finite scales are valid");
    put_u16(q8 + 34, 0x7e00);
    ok(!ggml_validate_row_data(GGML_TYPE_Q8_0, q8, sizeof q8), "a NaN q8_0 scale is not valid");
    logged_one_error("a NaN q8_0 scale logs one error");
    put_u16(q8 + 34, 0x7c00);
    ok(!ggml_validate_row_data(GGML_TYPE_Q8_0, q8, sizeof q8), "an infinite q8_0 scale is not valid");
    logged_one_error("an infinite q8_0 scale logs one error");
    ok(!ggml_validate_row_data(GGML_TYPE_Q8_0, q8, 35), "35 bytes are not whole q8_0 blocks");
    logged_one_error("a partial q8_0 block logs one error");

    /* q4_1: d at 0, m at 2 */
    uint8_t q41[20] = { 0 };
    ok(ggml_validate_row_data(GGML_TYPE_Q4_1, q41, sizeof q41), "a zero q4_1 block is valid");
    put_u16(q41 + 2, 0xfe00);
    ok(!ggml_validate_row_data(GGML_TYPE_Q4_1, q41, sizeof q41), "a NaN q4_1 minimum is not valid");
    logged_one_error("a NaN q4_1 minimum logs one error");

    /* q8_1: d at 0, s at 2 */
    uint8_t q81[36] = { 0 };
    put_u16(q81 + 2, 0x7c00);
    ok(!ggml_validate_row_data(GGML_TYPE_Q8_1, q81, sizeof q81), "an infinite q8_1 sum is not valid");
    logged_one_error("an infinite q8_1 sum logs one error");

    /* q5_0 and q5_1: the qh bytes may hold anything */
    uint8_t q50[22];
    memset(q50, 0xff, sizeof q50);
    put_u16(q50, 0x3800);
    ok(ggml_validate_row_data(GGML_TYPE_Q5_0, q50, sizeof q50), "q5_0 with all bits set in the quants is valid");

    /* K-quants: the scales sit at the end of q2_K, q3_K and q6_K blocks */
    uint8_t big[292] = { 0 };
    put_u16(big + 82, 0x7d00);
    ok(!ggml_validate_row_data(GGML_TYPE_Q2_K, big, 84), "a NaN q2_K dmin (offset 82) is not valid");
    logged_one_error("a NaN q2_K dmin logs one error");
    memset(big, 0, sizeof big);
    put_u16(big + 208, 0x7c00);
    ok(!ggml_validate_row_data(GGML_TYPE_Q6_K, big, 210), "an infinite q6_K d (offset 208) is not valid");
    logged_one_error("an infinite q6_K d logs one error");
    memset(big, 0, sizeof big);
    float inf = INFINITY;
    memcpy(big, &inf, sizeof inf);
    ok(!ggml_validate_row_data(GGML_TYPE_Q8_K, big, 292), "an infinite q8_K float scale is not valid");
    logged_one_error("an infinite q8_K scale logs one error");

    uint8_t mx[34] = { 0 };
    mx[0] = 0xfe;
    ok(ggml_validate_row_data(GGML_TYPE_MXFP4, mx, sizeof mx), "mxfp4 exponent 0xfe is valid");
    mx[17] = 0xff;
    ok(!ggml_validate_row_data(GGML_TYPE_MXFP4, mx, sizeof mx), "mxfp4 exponent 0xff is not valid");
    logged_one_error("an mxfp4 exponent of 0xff logs one error");

    /* q1_0 and q2_0: the block opens with its binary16 scale; nvfp4's scales are all values */
    uint8_t q10[18] = { 0 };
    put_u16(q10, 0x7e00);
    ok(!ggml_validate_row_data(GGML_TYPE_Q1_0, q10, sizeof q10), "a NaN q1_0 d is not valid");
    logged_one_error("a NaN q1_0 d logs one error");
    ok(!ggml_validate_row_data(GGML_TYPE_Q2_0, q10, sizeof q10), "a NaN q2_0 d is not valid");
    logged_one_error("a NaN q2_0 d logs one error");
    uint8_t nv[72];
    memset(nv, 0xff, sizeof nv);
    ok(ggml_validate_row_data(GGML_TYPE_NVFP4, nv, sizeof nv), "nvfp4 blocks of 0xff bytes are valid");
    ok(!ggml_validate_row_data(GGML_TYPE_NVFP4, nv, 40), "40 bytes are not whole nvfp4 blocks");
    logged_one_error("a partial nvfp4 block logs one error");

    /* iq1_m: the scale's four nibbles are the tops of the 16-bit words at 48..55 */
    uint8_t iq[56] = { 0 };
    ok(ggml_validate_row_data(GGML_TYPE_IQ1_M, iq, sizeof iq), "a zero iq1_m block is valid");
    put_u16(iq + 48, 0xe000);   /* nibble 0 -> bits 0..3 of the scale: 0x000e */
    put_u16(iq + 52, 0xf000);   /* nibble 2 -> bits 8..11 */
    put_u16(iq + 54, 0x7000);   /* nibble 3 -> bits 12..15: scale 0x7f0e, a NaN */
    put_u16(iq + 50, 0xc000);   /* nibble 1 -> bits 4..7: 0x7fce */
    ok(!ggml_validate_row_data(GGML_TYPE_IQ1_M, iq, sizeof iq), "an iq1_m scale assembled to NaN is not valid");
    logged_one_error("a NaN iq1_m scale logs one error");
}

int main(void)
{
    tap_capture_log();

    check_table();
    check_converters();
    check_row_size();
    check_invalid_types();
    check_ftypes();
    check_validate();

    return tap_done();
}
