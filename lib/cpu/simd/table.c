/*
 * simd/table.c - the kernel table of each instruction-set level: which
 * function each level puts in each entry.
 *
 * To add a kernel to a level: write it in that level's directory, declare
 * it in the level's header, and assign it in the level's fill function
 * below.  To add a level: a directory with its files and header, a
 * convenience library with its flags in lib/local.mk and a probe in
 * configure.ac (HAVE_ISA_<LEVEL>), an enum value and a name in kernels.h
 * and here, its requirements in ggml__isa_runs_on, and a fill function
 * here, called by ggml__kernels_build after those of the levels below it.
 *
 * This file is compiled with the library's baseline flags: it only takes
 * the addresses of other levels' functions, never calls them.
 */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "kernels.h"
#include "generic/generic.h"
#if HAVE_ISA_AVX2
#    include "avx2/avx2.h"
#endif
#if HAVE_ISA_AVX512
#    include "avx512/avx512.h"
#endif
#if HAVE_ISA_NEON
#    include "neon/neon.h"
#endif
#if HAVE_ISA_SSE2
#    include "sse2/sse2.h"
#endif

static const char *const isa_names[GGML__ISA_COUNT] = {
    [GGML__ISA_GENERIC] = "generic",
    [GGML__ISA_SSE2] = "sse2",
    [GGML__ISA_AVX2] = "avx2",
    [GGML__ISA_AVX512] = "avx512",
    [GGML__ISA_NEON] = "neon",
};

const char *ggml__isa_name(enum ggml__isa level)
{
    return (unsigned) level < GGML__ISA_COUNT ? isa_names[level] : "unknown";
}

enum ggml__isa ggml__isa_from_name(const char *name)
{
    for (int level = 0; name != NULL && level < GGML__ISA_COUNT; level++)
        if (strcasecmp(name, isa_names[level]) == 0)
            return (enum ggml__isa) level;
    return GGML__ISA_COUNT;
}

bool ggml__isa_built(enum ggml__isa level)
{
    switch (level) {
    case GGML__ISA_GENERIC: return true;
    case GGML__ISA_SSE2:    return HAVE_ISA_SSE2;
    case GGML__ISA_AVX2:    return HAVE_ISA_AVX2;
    case GGML__ISA_AVX512:  return HAVE_ISA_AVX512;
    case GGML__ISA_NEON:    return HAVE_ISA_NEON;
    default:                return false;
    }
}

bool ggml__isa_runs_on(enum ggml__isa level, const struct ggml__isa_caps *caps)
{
    switch (level) {
    case GGML__ISA_GENERIC: return true;
    case GGML__ISA_SSE2:    return true;   /* built for x86-64 only, where every CPU has it */
    case GGML__ISA_AVX2:    return caps->avx2;
    case GGML__ISA_AVX512:  return caps->avx2 && caps->avx512;
    case GGML__ISA_NEON:    return caps->neon;
    default:                return false;
    }
}

/* ------------------------------------------------------------ the levels */

static void fill_generic(struct ggml__cpu_kernels *k, const struct ggml__isa_caps *caps)
{
    (void) caps;
    k->vec_dot[GGML_TYPE_F32] = ggml__generic_vec_dot_f32;
    k->qgemm_packed_tile[GGML_TYPE_Q4_0] = ggml__generic_qgemm_packed_tile_q4_0;
    k->qgemm_packed_tile[GGML_TYPE_Q8_0] = ggml__generic_qgemm_packed_tile_q8_0;
    k->qgemm_packed_tile[GGML_TYPE_IQ4_NL] = ggml__generic_qgemm_packed_tile_iq4_nl;
    k->qgemm_pack[GGML_TYPE_Q4_0] = ggml__generic_qgemm_pack_q4_0;
    k->qgemm_pack[GGML_TYPE_IQ4_NL] = ggml__generic_qgemm_pack_q4_0;
    k->qgemm_pack[GGML_TYPE_Q8_0] = ggml__generic_qgemm_pack_q8_0;
    k->vec_dot[GGML_TYPE_F16] = ggml__generic_vec_dot_f16;
    k->vec_dot[GGML_TYPE_BF16] = ggml__generic_vec_dot_bf16;
    k->vec_dot[GGML_TYPE_Q4_0] = ggml__generic_vec_dot_q4_0_q8_0;
    k->vec_dot[GGML_TYPE_Q4_1] = ggml__generic_vec_dot_q4_1_q8_1;
    k->vec_dot[GGML_TYPE_Q5_0] = ggml__generic_vec_dot_q5_0_q8_0;
    k->vec_dot[GGML_TYPE_Q5_1] = ggml__generic_vec_dot_q5_1_q8_1;
    k->vec_dot[GGML_TYPE_Q8_0] = ggml__generic_vec_dot_q8_0_q8_0;
    k->vec_dot[GGML_TYPE_MXFP4] = ggml__generic_vec_dot_mxfp4_q8_0;
    k->vec_dot[GGML_TYPE_NVFP4] = ggml__generic_vec_dot_nvfp4_q8_0;
    k->vec_dot[GGML_TYPE_Q1_0] = ggml__generic_vec_dot_q1_0_q8_0;
    k->vec_dot[GGML_TYPE_Q2_0] = ggml__generic_vec_dot_q2_0_q8_0;
    k->vec_dot[GGML_TYPE_IQ4_NL] = ggml__generic_vec_dot_iq4_nl_q8_0;
    k->vec_dot[GGML_TYPE_Q4_K] = ggml__generic_vec_dot_q4_K_q8_K;
    k->vec_dot[GGML_TYPE_Q5_K] = ggml__generic_vec_dot_q5_K_q8_K;
    k->vec_dot[GGML_TYPE_Q6_K] = ggml__generic_vec_dot_q6_K_q8_K;
    k->vec_dot[GGML_TYPE_Q2_K] = ggml__generic_vec_dot_q2_K_q8_K;
    k->vec_dot[GGML_TYPE_Q3_K] = ggml__generic_vec_dot_q3_K_q8_K;
    k->vec_dot[GGML_TYPE_TQ1_0] = ggml__generic_vec_dot_tq1_0_q8_K;
    k->vec_dot[GGML_TYPE_TQ2_0] = ggml__generic_vec_dot_tq2_0_q8_K;
    k->vec_dot[GGML_TYPE_IQ4_XS] = ggml__generic_vec_dot_iq4_xs_q8_K;
    k->from_float[GGML_TYPE_TQ1_0] = ggml__quantize_row_tq1_0_ref;
    k->from_float[GGML_TYPE_TQ2_0] = ggml__quantize_row_tq2_0_ref;
    k->from_float[GGML_TYPE_IQ4_XS] = ggml__quantize_row_iq4_xs_ref;
    k->vec_dot[GGML_TYPE_IQ1_S] = ggml__generic_vec_dot_iq1_s_q8_K;
    k->vec_dot[GGML_TYPE_IQ1_M] = ggml__generic_vec_dot_iq1_m_q8_K;
    k->vec_dot[GGML_TYPE_IQ3_XXS] = ggml__generic_vec_dot_iq3_xxs_q8_K;
    k->vec_dot[GGML_TYPE_IQ3_S] = ggml__generic_vec_dot_iq3_s_q8_K;
    k->vec_dot[GGML_TYPE_IQ2_XXS] = ggml__generic_vec_dot_iq2_xxs_q8_K;
    k->vec_dot[GGML_TYPE_IQ2_XS] = ggml__generic_vec_dot_iq2_xs_q8_K;
    k->vec_dot[GGML_TYPE_IQ2_S] = ggml__generic_vec_dot_iq2_s_q8_K;

    k->from_float[GGML_TYPE_F32] = ggml__generic_f32_to_f32;
    k->from_float[GGML_TYPE_F16] = ggml__generic_f32_to_f16;
    k->from_float[GGML_TYPE_BF16] = ggml__generic_f32_to_bf16;
    k->from_float[GGML_TYPE_I32] = ggml__generic_f32_to_i32;
    k->from_float[GGML_TYPE_Q4_0] = ggml__quantize_row_q4_0_ref;
    k->from_float[GGML_TYPE_Q4_1] = ggml__quantize_row_q4_1_ref;
    k->from_float[GGML_TYPE_Q5_0] = ggml__quantize_row_q5_0_ref;
    k->from_float[GGML_TYPE_Q5_1] = ggml__quantize_row_q5_1_ref;
    k->from_float[GGML_TYPE_Q8_0] = ggml__quantize_row_q8_0_ref;
    k->from_float[GGML_TYPE_Q8_1] = ggml__quantize_row_q8_1_ref;
    k->from_float[GGML_TYPE_MXFP4] = ggml__quantize_row_mxfp4_ref;
    k->from_float[GGML_TYPE_NVFP4] = ggml__quantize_row_nvfp4_ref;
    k->from_float[GGML_TYPE_Q1_0] = ggml__quantize_row_q1_0_ref;
    k->from_float[GGML_TYPE_Q2_0] = ggml__quantize_row_q2_0_ref;
    k->from_float[GGML_TYPE_IQ4_NL] = ggml__quantize_row_iq4_nl_ref;
    k->from_float[GGML_TYPE_Q4_K] = ggml__quantize_row_q4_K_ref;
    k->from_float[GGML_TYPE_Q5_K] = ggml__quantize_row_q5_K_ref;
    k->from_float[GGML_TYPE_Q6_K] = ggml__quantize_row_q6_K_ref;
    k->from_float[GGML_TYPE_Q2_K] = ggml__quantize_row_q2_K_ref;
    k->from_float[GGML_TYPE_Q3_K] = ggml__quantize_row_q3_K_ref;
    k->from_float[GGML_TYPE_Q8_K] = ggml__quantize_row_q8_K;

    /* every type's reference decoder, then the generic level's own forms */
    for (int type = 0; type < GGML_TYPE_COUNT; type++)
        k->to_float[type] = ggml_get_type_traits((enum ggml_type) type)->to_float;
    k->to_float[GGML_TYPE_F16] = ggml__generic_f16_to_f32;
    k->to_float[GGML_TYPE_BF16] = ggml__generic_bf16_to_f32;
    k->to_float[GGML_TYPE_Q8_1] = ggml__dequantize_row_q8_1;
    k->to_float[GGML_TYPE_Q8_K] = ggml__dequantize_row_q8_K;
    k->axpy[GGML_TYPE_F32] = ggml__generic_axpy_f32;
    k->axpy[GGML_TYPE_F16] = ggml__generic_axpy_f16;
    /* unary and glu: NULL, the ops' portable row functions */

    k->reduce_max = ggml__generic_reduce_max;
    k->softmax_exp_sum = ggml__generic_softmax_exp_sum;
    k->scale = ggml__generic_scale;
    k->sum = ggml__generic_sum;
    k->sum_sq = ggml__generic_sum_sq;
    k->sum_sq_dev = ggml__generic_sum_sq_dev;
    k->binary[GGML__BINARY_ADD] = ggml__generic_add;
    k->binary[GGML__BINARY_SUB] = ggml__generic_sub;
    k->binary[GGML__BINARY_MUL] = ggml__generic_mul;
    k->binary[GGML__BINARY_DIV] = ggml__generic_div;
    k->binary_scalar[GGML__BINARY_ADD] = ggml__generic_add_scalar;
    k->binary_scalar[GGML__BINARY_SUB] = ggml__generic_sub_scalar;
    k->binary_scalar[GGML__BINARY_MUL] = ggml__generic_mul_scalar;
    k->binary_scalar[GGML__BINARY_DIV] = ggml__generic_div_scalar;

    k->transpose32 = ggml__generic_transpose32;
    k->transpose16 = ggml__generic_transpose16;

    k->gemm_mr = GGML__GENERIC_GEMM_MR;
    k->gemm_nr = GGML__GENERIC_GEMM_NR;
    k->gemm_lanes = GGML__GENERIC_GEMM_LANES;
    k->gemm_tile = ggml__generic_gemm_tile_f32;
}

#if HAVE_ISA_SSE2
/* The x86-64 baseline: below every other x86-64 level, whose tables start from it. */
static void fill_sse2(struct ggml__cpu_kernels *k, const struct ggml__isa_caps *caps)
{
    (void) caps;
    k->vec_dot[GGML_TYPE_F16] = ggml__sse2_vec_dot_f16;
    k->vec_dot[GGML_TYPE_Q8_0] = ggml__sse2_vec_dot_q8_0_q8_0;
    k->rows_by_f32[GGML_TYPE_F16] = ggml__sse2_rows_by_f32_f16;
    k->to_float[GGML_TYPE_F16] = ggml__sse2_f16_to_f32;

    k->unary[GGML_UNARY_OP_ABS] = ggml__sse2_unary_abs;
    k->unary[GGML_UNARY_OP_NEG] = ggml__sse2_unary_neg;
    k->unary[GGML_UNARY_OP_RELU] = ggml__sse2_unary_relu;
    k->unary[GGML_UNARY_OP_TANH] = ggml__sse2_unary_tanh;
    k->unary[GGML_UNARY_OP_SIGMOID] = ggml__sse2_unary_sigmoid;
    k->unary[GGML_UNARY_OP_EXP] = ggml__sse2_unary_exp;
    k->unary[GGML_UNARY_OP_SILU] = ggml__sse2_unary_silu;
    k->unary[GGML_UNARY_OP_GELU] = ggml__sse2_unary_gelu;
    k->unary[GGML_UNARY_OP_GELU_QUICK] = ggml__sse2_unary_gelu_quick;
    k->unary_stream[GGML_UNARY_OP_ABS] = ggml__sse2_unary_stream_abs;
    k->unary_stream[GGML_UNARY_OP_NEG] = ggml__sse2_unary_stream_neg;
    k->unary_stream[GGML_UNARY_OP_RELU] = ggml__sse2_unary_stream_relu;
    k->unary_stream[GGML_UNARY_OP_TANH] = ggml__sse2_unary_stream_tanh;
    k->unary_stream[GGML_UNARY_OP_SIGMOID] = ggml__sse2_unary_stream_sigmoid;
    k->unary_stream[GGML_UNARY_OP_EXP] = ggml__sse2_unary_stream_exp;
    k->unary_stream[GGML_UNARY_OP_SILU] = ggml__sse2_unary_stream_silu;
    k->unary_stream[GGML_UNARY_OP_GELU] = ggml__sse2_unary_stream_gelu;
    k->unary_stream[GGML_UNARY_OP_GELU_QUICK] = ggml__sse2_unary_stream_gelu_quick;
    k->glu[GGML_GLU_OP_REGLU] = ggml__sse2_glu_reglu;
    k->glu[GGML_GLU_OP_SWIGLU] = ggml__sse2_glu_swiglu;
    k->glu[GGML_GLU_OP_GEGLU] = ggml__sse2_glu_geglu;
    k->glu[GGML_GLU_OP_GEGLU_QUICK] = ggml__sse2_glu_geglu_quick;

    k->reduce_max = ggml__sse2_reduce_max;
    k->softmax_exp_sum = ggml__sse2_softmax_exp_sum;
    k->scale = ggml__sse2_scale;
    k->binary_stream[GGML__BINARY_ADD] = ggml__sse2_add_stream;
    k->binary_stream[GGML__BINARY_SUB] = ggml__sse2_sub_stream;
    k->binary_stream[GGML__BINARY_MUL] = ggml__sse2_mul_stream;
    k->binary_stream[GGML__BINARY_DIV] = ggml__sse2_div_stream;
}
#endif

#if HAVE_ISA_AVX2
static void fill_avx2(struct ggml__cpu_kernels *k, const struct ggml__isa_caps *caps)
{
    (void) caps;
    k->vec_dot[GGML_TYPE_F32] = ggml__avx2_vec_dot_f32;
    k->gemm_mr = GGML__AVX2_GEMM_MR;
    k->gemm_nr = GGML__AVX2_GEMM_NR;
    k->gemm_lanes = GGML__AVX2_GEMM_LANES;
    k->gemm_tile = ggml__avx2_gemm_tile_f32;
    k->qgemm_tile[GGML_TYPE_Q4_0] = ggml__avx2_qgemm_tile_q4_0;
    k->qgemm_packed_tile[GGML_TYPE_Q4_0] = ggml__avx2_qgemm_packed_tile_q4_0;
    k->qgemm_tile[GGML_TYPE_Q8_0] = ggml__avx2_qgemm_tile_q8_0;
    k->qgemm_packed_tile[GGML_TYPE_Q8_0] = ggml__avx2_qgemm_packed_tile_q8_0;
    k->qgemm_pack[GGML_TYPE_Q4_0] = ggml__avx2_qgemm_pack_q4_0;
    k->qgemm_pack[GGML_TYPE_IQ4_NL] = ggml__avx2_qgemm_pack_q4_0;
    k->qgemm_pack[GGML_TYPE_Q8_0] = ggml__avx2_qgemm_pack_q8_0;
#    if HAVE_ISA_AVX2_VNNI
    if (caps->avx_vnni) {
        k->qgemm_tile[GGML_TYPE_Q8_0] = ggml__avx2_vnni_qgemm_tile_q8_0;
        k->qgemm_packed_tile[GGML_TYPE_Q8_0] = ggml__avx2_vnni_qgemm_packed_tile_q8_0;
        k->qgemm_tile[GGML_TYPE_Q4_0] = ggml__avx2_vnni_qgemm_tile_q4_0;
        k->qgemm_packed_tile[GGML_TYPE_Q4_0] = ggml__avx2_vnni_qgemm_packed_tile_q4_0;
    }
#    endif
    k->vec_dot[GGML_TYPE_F16] = ggml__avx2_vec_dot_f16;
    k->vec_dot[GGML_TYPE_BF16] = ggml__avx2_vec_dot_bf16;
    k->vec_dot[GGML_TYPE_Q4_0] = ggml__avx2_vec_dot_q4_0_q8_0;
    k->vec_dot[GGML_TYPE_Q4_1] = ggml__avx2_vec_dot_q4_1_q8_1;
    k->vec_dot[GGML_TYPE_Q5_0] = ggml__avx2_vec_dot_q5_0_q8_0;
    k->vec_dot[GGML_TYPE_Q5_1] = ggml__avx2_vec_dot_q5_1_q8_1;
    k->vec_dot[GGML_TYPE_Q8_0] = ggml__avx2_vec_dot_q8_0_q8_0;
    k->vec_dot[GGML_TYPE_MXFP4] = ggml__avx2_vec_dot_mxfp4_q8_0;
    k->vec_dot[GGML_TYPE_IQ4_NL] = ggml__avx2_vec_dot_iq4_nl_q8_0;
    k->vec_dot[GGML_TYPE_NVFP4] = ggml__avx2_vec_dot_nvfp4_q8_0;
    k->vec_dot[GGML_TYPE_Q1_0] = ggml__avx2_vec_dot_q1_0_q8_0;
    k->vec_dot[GGML_TYPE_Q2_0] = ggml__avx2_vec_dot_q2_0_q8_0;
    k->vec_dot[GGML_TYPE_Q4_K] = ggml__avx2_vec_dot_q4_K_q8_K;
    k->vec_dot[GGML_TYPE_Q5_K] = ggml__avx2_vec_dot_q5_K_q8_K;
    k->vec_dot[GGML_TYPE_Q6_K] = ggml__avx2_vec_dot_q6_K_q8_K;
    k->vec_dot[GGML_TYPE_Q2_K] = ggml__avx2_vec_dot_q2_K_q8_K;
    k->vec_dot[GGML_TYPE_Q3_K] = ggml__avx2_vec_dot_q3_K_q8_K;
    k->vec_dot[GGML_TYPE_TQ1_0] = ggml__avx2_vec_dot_tq1_0_q8_K;
    k->vec_dot[GGML_TYPE_TQ2_0] = ggml__avx2_vec_dot_tq2_0_q8_K;
    k->vec_dot[GGML_TYPE_IQ4_XS] = ggml__avx2_vec_dot_iq4_xs_q8_K;
    k->vec_dot[GGML_TYPE_IQ3_XXS] = ggml__avx2_vec_dot_iq3_xxs_q8_K;
    k->vec_dot[GGML_TYPE_IQ3_S] = ggml__avx2_vec_dot_iq3_s_q8_K;
    k->vec_dot[GGML_TYPE_IQ1_S] = ggml__avx2_vec_dot_iq1_s_q8_K;
    k->vec_dot[GGML_TYPE_IQ1_M] = ggml__avx2_vec_dot_iq1_m_q8_K;
    k->vec_dot[GGML_TYPE_IQ2_XXS] = ggml__avx2_vec_dot_iq2_xxs_q8_K;
    k->vec_dot[GGML_TYPE_IQ2_XS] = ggml__avx2_vec_dot_iq2_xs_q8_K;
    k->vec_dot[GGML_TYPE_IQ2_S] = ggml__avx2_vec_dot_iq2_s_q8_K;
    k->vec_dot_rows[GGML_TYPE_F32] = ggml__avx2_vec_dot_rows_f32;
    k->rows_by_f32[GGML_TYPE_F16] = ggml__avx2_rows_by_f32_f16;
    k->vec_dot_rows[GGML_TYPE_BF16] = ggml__avx2_vec_dot_rows_bf16;
    k->vec_dot_rows[GGML_TYPE_Q4_0] = ggml__avx2_vec_dot_rows_q4_0;
    k->vec_dot_rows[GGML_TYPE_Q4_1] = ggml__avx2_vec_dot_rows_q4_1;
    k->vec_dot_rows[GGML_TYPE_Q5_0] = ggml__avx2_vec_dot_rows_q5_0;
    k->vec_dot_rows[GGML_TYPE_Q5_1] = ggml__avx2_vec_dot_rows_q5_1;
    k->vec_dot_rows[GGML_TYPE_Q8_0] = ggml__avx2_vec_dot_rows_q8_0;
#    if HAVE_ISA_AVX2_VNNI
    if (caps->avx_vnni) {
        k->vec_dot_rows[GGML_TYPE_Q4_0] = ggml__avx2_vnni_vec_dot_rows_q4_0;
        k->vec_dot_rows[GGML_TYPE_Q4_1] = ggml__avx2_vnni_vec_dot_rows_q4_1;
        k->vec_dot_rows[GGML_TYPE_Q5_0] = ggml__avx2_vnni_vec_dot_rows_q5_0;
        k->vec_dot_rows[GGML_TYPE_Q5_1] = ggml__avx2_vnni_vec_dot_rows_q5_1;
        k->vec_dot_rows[GGML_TYPE_Q8_0] = ggml__avx2_vnni_vec_dot_rows_q8_0;
    }
#    endif
    k->vec_dot_rows[GGML_TYPE_Q4_K] = ggml__avx2_vec_dot_rows_q4_K;
    k->vec_dot_rows[GGML_TYPE_Q5_K] = ggml__avx2_vec_dot_rows_q5_K;
    k->vec_dot_rows[GGML_TYPE_Q6_K] = ggml__avx2_vec_dot_rows_q6_K;

    k->from_float[GGML_TYPE_F16] = ggml__avx2_f32_to_f16;
    k->from_float[GGML_TYPE_BF16] = ggml__avx2_f32_to_bf16;
    k->from_float[GGML_TYPE_Q8_0] = ggml__avx2_quantize_row_q8_0;
    k->from_float[GGML_TYPE_Q8_1] = ggml__avx2_quantize_row_q8_1;
    k->from_float[GGML_TYPE_Q4_0] = ggml__avx2_quantize_row_q4_0;
    k->from_float[GGML_TYPE_Q4_1] = ggml__avx2_quantize_row_q4_1;
    k->from_float[GGML_TYPE_Q5_0] = ggml__avx2_quantize_row_q5_0;
    k->from_float[GGML_TYPE_Q5_1] = ggml__avx2_quantize_row_q5_1;

    k->to_float[GGML_TYPE_F16] = ggml__avx2_f16_to_f32;
    k->to_float[GGML_TYPE_BF16] = ggml__avx2_bf16_to_f32;

    k->axpy[GGML_TYPE_F32] = ggml__avx2_axpy_f32;
    k->axpy[GGML_TYPE_F16] = ggml__avx2_axpy_f16;

    k->unary[GGML_UNARY_OP_ABS] = ggml__avx2_unary_abs;
    k->unary[GGML_UNARY_OP_NEG] = ggml__avx2_unary_neg;
    k->unary[GGML_UNARY_OP_RELU] = ggml__avx2_unary_relu;
    k->unary[GGML_UNARY_OP_TANH] = ggml__avx2_unary_tanh;
    k->unary[GGML_UNARY_OP_SIGMOID] = ggml__avx2_unary_sigmoid;
    k->unary[GGML_UNARY_OP_EXP] = ggml__avx2_unary_exp;
    k->unary[GGML_UNARY_OP_SILU] = ggml__avx2_unary_silu;
    k->unary[GGML_UNARY_OP_GELU] = ggml__avx2_unary_gelu;
    k->unary[GGML_UNARY_OP_GELU_QUICK] = ggml__avx2_unary_gelu_quick;
    k->unary[GGML_UNARY_OP_GELU_ERF] = ggml__avx2_unary_gelu_erf;
    k->unary_stream[GGML_UNARY_OP_ABS] = ggml__avx2_unary_stream_abs;
    k->unary_stream[GGML_UNARY_OP_NEG] = ggml__avx2_unary_stream_neg;
    k->unary_stream[GGML_UNARY_OP_RELU] = ggml__avx2_unary_stream_relu;
    k->unary_stream[GGML_UNARY_OP_TANH] = ggml__avx2_unary_stream_tanh;
    k->unary_stream[GGML_UNARY_OP_SIGMOID] = ggml__avx2_unary_stream_sigmoid;
    k->unary_stream[GGML_UNARY_OP_EXP] = ggml__avx2_unary_stream_exp;
    k->unary_stream[GGML_UNARY_OP_SILU] = ggml__avx2_unary_stream_silu;
    k->unary_stream[GGML_UNARY_OP_GELU] = ggml__avx2_unary_stream_gelu;
    k->unary_stream[GGML_UNARY_OP_GELU_QUICK] = ggml__avx2_unary_stream_gelu_quick;
    k->unary_stream[GGML_UNARY_OP_GELU_ERF] = ggml__avx2_unary_stream_gelu_erf;
    k->glu[GGML_GLU_OP_REGLU] = ggml__avx2_glu_reglu;
    k->glu[GGML_GLU_OP_SWIGLU] = ggml__avx2_glu_swiglu;
    k->glu[GGML_GLU_OP_GEGLU] = ggml__avx2_glu_geglu;
    k->glu[GGML_GLU_OP_GEGLU_QUICK] = ggml__avx2_glu_geglu_quick;
    k->glu[GGML_GLU_OP_GEGLU_ERF] = ggml__avx2_glu_geglu_erf;

    k->reduce_max = ggml__avx2_reduce_max;
    k->softmax_exp_sum = ggml__avx2_softmax_exp_sum;
    k->scale = ggml__avx2_scale;
    k->sum = ggml__avx2_sum;
    k->sum_sq = ggml__avx2_sum_sq;
    k->sum_sq_dev = ggml__avx2_sum_sq_dev;
    k->binary[GGML__BINARY_ADD] = ggml__avx2_add;
    k->binary[GGML__BINARY_SUB] = ggml__avx2_sub;
    k->binary[GGML__BINARY_MUL] = ggml__avx2_mul;
    k->binary[GGML__BINARY_DIV] = ggml__avx2_div;
    k->binary_scalar[GGML__BINARY_ADD] = ggml__avx2_add_scalar;
    k->binary_scalar[GGML__BINARY_SUB] = ggml__avx2_sub_scalar;
    k->binary_scalar[GGML__BINARY_MUL] = ggml__avx2_mul_scalar;
    k->binary_scalar[GGML__BINARY_DIV] = ggml__avx2_div_scalar;
    k->binary_stream[GGML__BINARY_ADD] = ggml__avx2_add_stream;
    k->binary_stream[GGML__BINARY_SUB] = ggml__avx2_sub_stream;
    k->binary_stream[GGML__BINARY_MUL] = ggml__avx2_mul_stream;
    k->binary_stream[GGML__BINARY_DIV] = ggml__avx2_div_stream;
    k->transpose32 = ggml__avx2_transpose32;
    k->transpose16 = ggml__avx2_transpose16;
}
#endif

#if HAVE_ISA_AVX512
/* Over the AVX2 level's entries; the VNNI and BF16 kernels when the CPU
   has those extensions (and this build has them). */
static void fill_avx512(struct ggml__cpu_kernels *k, const struct ggml__isa_caps *caps)
{
    k->vec_dot[GGML_TYPE_F32] = ggml__avx512_vec_dot_f32;
    k->vec_dot[GGML_TYPE_F16] = ggml__avx512_vec_dot_f16;
    k->vec_dot[GGML_TYPE_BF16] = ggml__avx512_vec_dot_bf16;
    k->vec_dot[GGML_TYPE_Q4_0] = ggml__avx512_vec_dot_q4_0_q8_0;
    k->vec_dot[GGML_TYPE_Q4_1] = ggml__avx512_vec_dot_q4_1_q8_1;
    k->vec_dot[GGML_TYPE_Q5_0] = ggml__avx512_vec_dot_q5_0_q8_0;
    k->vec_dot[GGML_TYPE_Q5_1] = ggml__avx512_vec_dot_q5_1_q8_1;
    k->vec_dot[GGML_TYPE_Q8_0] = ggml__avx512_vec_dot_q8_0_q8_0;
    /* F32 rows x a vector: one row at a time (vec_dot) measured faster at
       this level than four (4096 x 1024 weights: 0.105 against 0.120 ms) */
    k->vec_dot_rows[GGML_TYPE_F32] = NULL;
    k->rows_by_f32[GGML_TYPE_F16] = ggml__avx512_rows_by_f32_f16;
    k->dot_tile[GGML_TYPE_F32] = ggml__avx512_dot_tile_f32;
    k->dot_tile[GGML_TYPE_F16] = ggml__avx512_dot_tile_f16;
    k->dot_tile[GGML_TYPE_BF16] = ggml__avx512_dot_tile_bf16;
    k->gemm_mr = GGML__AVX512_GEMM_MR;
    k->gemm_nr = GGML__AVX512_GEMM_NR;
    k->gemm_lanes = GGML__AVX512_GEMM_LANES;
    k->gemm_tile = ggml__avx512_gemm_tile_f32;

    k->from_float[GGML_TYPE_F16] = ggml__avx512_f32_to_f16;
    k->from_float[GGML_TYPE_BF16] = ggml__avx512_f32_to_bf16;
    k->from_float[GGML_TYPE_Q8_0] = ggml__avx512_quantize_row_q8_0;
    k->from_float[GGML_TYPE_Q8_1] = ggml__avx512_quantize_row_q8_1;

    k->to_float[GGML_TYPE_F16] = ggml__avx512_f16_to_f32;
    k->to_float[GGML_TYPE_BF16] = ggml__avx512_bf16_to_f32;

    k->axpy[GGML_TYPE_F32] = ggml__avx512_axpy_f32;
    k->axpy[GGML_TYPE_F16] = ggml__avx512_axpy_f16;

    k->unary[GGML_UNARY_OP_ABS] = ggml__avx512_unary_abs;
    k->unary[GGML_UNARY_OP_NEG] = ggml__avx512_unary_neg;
    k->unary[GGML_UNARY_OP_RELU] = ggml__avx512_unary_relu;
    k->unary[GGML_UNARY_OP_TANH] = ggml__avx512_unary_tanh;
    k->unary[GGML_UNARY_OP_SIGMOID] = ggml__avx512_unary_sigmoid;
    k->unary[GGML_UNARY_OP_EXP] = ggml__avx512_unary_exp;
    k->unary[GGML_UNARY_OP_SILU] = ggml__avx512_unary_silu;
    k->unary[GGML_UNARY_OP_GELU] = ggml__avx512_unary_gelu;
    k->unary[GGML_UNARY_OP_GELU_QUICK] = ggml__avx512_unary_gelu_quick;
    k->unary[GGML_UNARY_OP_GELU_ERF] = ggml__avx512_unary_gelu_erf;
    k->unary_stream[GGML_UNARY_OP_ABS] = ggml__avx512_unary_stream_abs;
    k->unary_stream[GGML_UNARY_OP_NEG] = ggml__avx512_unary_stream_neg;
    k->unary_stream[GGML_UNARY_OP_RELU] = ggml__avx512_unary_stream_relu;
    k->unary_stream[GGML_UNARY_OP_TANH] = ggml__avx512_unary_stream_tanh;
    k->unary_stream[GGML_UNARY_OP_SIGMOID] = ggml__avx512_unary_stream_sigmoid;
    k->unary_stream[GGML_UNARY_OP_EXP] = ggml__avx512_unary_stream_exp;
    k->unary_stream[GGML_UNARY_OP_SILU] = ggml__avx512_unary_stream_silu;
    k->unary_stream[GGML_UNARY_OP_GELU] = ggml__avx512_unary_stream_gelu;
    k->unary_stream[GGML_UNARY_OP_GELU_QUICK] = ggml__avx512_unary_stream_gelu_quick;
    k->unary_stream[GGML_UNARY_OP_GELU_ERF] = ggml__avx512_unary_stream_gelu_erf;
    k->glu[GGML_GLU_OP_REGLU] = ggml__avx512_glu_reglu;
    k->glu[GGML_GLU_OP_SWIGLU] = ggml__avx512_glu_swiglu;
    k->glu[GGML_GLU_OP_GEGLU] = ggml__avx512_glu_geglu;
    k->glu[GGML_GLU_OP_GEGLU_QUICK] = ggml__avx512_glu_geglu_quick;
    k->glu[GGML_GLU_OP_GEGLU_ERF] = ggml__avx512_glu_geglu_erf;

    k->reduce_max = ggml__avx512_reduce_max;
    k->softmax_exp_sum = ggml__avx512_softmax_exp_sum;
    k->scale = ggml__avx512_scale;
    k->sum = ggml__avx512_sum;
    k->sum_sq = ggml__avx512_sum_sq;
    k->sum_sq_dev = ggml__avx512_sum_sq_dev;
    k->binary[GGML__BINARY_ADD] = ggml__avx512_add;
    k->binary[GGML__BINARY_SUB] = ggml__avx512_sub;
    k->binary[GGML__BINARY_MUL] = ggml__avx512_mul;
    k->binary[GGML__BINARY_DIV] = ggml__avx512_div;
    k->binary_scalar[GGML__BINARY_ADD] = ggml__avx512_add_scalar;
    k->binary_scalar[GGML__BINARY_SUB] = ggml__avx512_sub_scalar;
    k->binary_scalar[GGML__BINARY_MUL] = ggml__avx512_mul_scalar;
    k->binary_scalar[GGML__BINARY_DIV] = ggml__avx512_div_scalar;
    k->binary_stream[GGML__BINARY_ADD] = ggml__avx512_add_stream;
    k->binary_stream[GGML__BINARY_SUB] = ggml__avx512_sub_stream;
    k->binary_stream[GGML__BINARY_MUL] = ggml__avx512_mul_stream;
    k->binary_stream[GGML__BINARY_DIV] = ggml__avx512_div_stream;
    /* transpose16: the AVX2 level's (avx512/transpose.c says why) */
    k->transpose32 = ggml__avx512_transpose32;
#    if HAVE_ISA_AVX512_VNNI
    if (caps->avx512_vnni) {
        k->vec_dot[GGML_TYPE_Q4_0] = ggml__avx512_vnni_vec_dot_q4_0_q8_0;
        k->vec_dot[GGML_TYPE_Q4_1] = ggml__avx512_vnni_vec_dot_q4_1_q8_1;
        k->vec_dot[GGML_TYPE_Q5_0] = ggml__avx512_vnni_vec_dot_q5_0_q8_0;
        k->vec_dot[GGML_TYPE_Q5_1] = ggml__avx512_vnni_vec_dot_q5_1_q8_1;
        k->vec_dot[GGML_TYPE_Q8_0] = ggml__avx512_vnni_vec_dot_q8_0_q8_0;
        k->vec_dot_rows[GGML_TYPE_Q4_0] = ggml__avx512_vnni_vec_dot_rows_q4_0;
        k->vec_dot_rows[GGML_TYPE_Q4_1] = ggml__avx512_vnni_vec_dot_rows_q4_1;
        k->vec_dot_rows[GGML_TYPE_Q5_0] = ggml__avx512_vnni_vec_dot_rows_q5_0;
        k->vec_dot_rows[GGML_TYPE_Q5_1] = ggml__avx512_vnni_vec_dot_rows_q5_1;
        k->vec_dot_rows[GGML_TYPE_Q8_0] = ggml__avx512_vnni_vec_dot_rows_q8_0;
        k->vec_dot_rows[GGML_TYPE_Q4_K] = ggml__avx512_vnni_vec_dot_rows_q4_K;
        k->vec_dot_rows[GGML_TYPE_Q5_K] = ggml__avx512_vnni_vec_dot_rows_q5_K;
        k->vec_dot_rows[GGML_TYPE_Q6_K] = ggml__avx512_vnni_vec_dot_rows_q6_K;
        k->qgemm_tile[GGML_TYPE_Q8_0] = ggml__avx512_vnni_qgemm_tile_q8_0;
        k->qgemm_tile[GGML_TYPE_Q4_0] = ggml__avx512_vnni_qgemm_tile_q4_0;
        k->qgemm_tile[GGML_TYPE_Q5_0] = ggml__avx512_vnni_qgemm_tile_q5_0;
        k->qgemm_tile[GGML_TYPE_IQ4_NL] = ggml__avx512_vnni_qgemm_tile_iq4_nl;
        k->qgemm_tile[GGML_TYPE_Q4_K] = ggml__avx512_vnni_qgemm_tile_q4_K;
        k->qgemm_packed_tile[GGML_TYPE_Q4_K] = ggml__avx512_vnni_qgemm_packed_tile_q4_K;
        k->qgemm_pack[GGML_TYPE_Q4_K] = ggml__avx512_vnni_qgemm_pack_q4_K;
        k->qgemm_unpack[GGML_TYPE_Q4_K] = ggml__avx512_vnni_qgemm_unpack_q4_K;
        k->qgemm_tile[GGML_TYPE_Q5_K] = ggml__avx512_vnni_qgemm_tile_q5_K;
        k->qgemm_packed_tile[GGML_TYPE_Q5_K] = ggml__avx512_vnni_qgemm_packed_tile_q5_K;
        k->qgemm_pack[GGML_TYPE_Q5_K] = ggml__avx512_vnni_qgemm_pack_q5_K;
        k->qgemm_unpack[GGML_TYPE_Q5_K] = ggml__avx512_vnni_qgemm_unpack_q5_K;
        k->qgemm_tile[GGML_TYPE_Q6_K] = ggml__avx512_vnni_qgemm_tile_q6_K;
        k->qgemm_packed_tile[GGML_TYPE_Q6_K] = ggml__avx512_vnni_qgemm_packed_tile_q6_K;
        k->qgemm_pack[GGML_TYPE_Q6_K] = ggml__avx512_vnni_qgemm_pack_q6_K;
        k->qgemm_unpack[GGML_TYPE_Q6_K] = ggml__avx512_vnni_qgemm_unpack_q6_K;
        k->qgemm_packed_tile[GGML_TYPE_Q8_0] = ggml__avx512_vnni_qgemm_packed_tile_q8_0;
        k->qgemm_packed_tile[GGML_TYPE_Q4_0] = ggml__avx512_vnni_qgemm_packed_tile_q4_0;
        k->qgemm_packed_tile[GGML_TYPE_IQ4_NL] = ggml__avx512_vnni_qgemm_packed_tile_iq4_nl;
    }
    if (caps->avx512_bf16) {
        k->vec_dot[GGML_TYPE_BF16] = ggml__avx512_bf16_vec_dot_bf16;
        k->gemm_bf16_tile = ggml__avx512_bf16_gemm_tile;
        k->gemm_bf16_preferred = caps->bf16_dot_full_rate;
        /* one row at a time measured faster than four (4096 x 2048 weights: 0.098 against 0.130 ms) */
        k->vec_dot_rows[GGML_TYPE_BF16] = NULL;
    }
#    else
    (void) caps;
#    endif
}
#endif

#if HAVE_ISA_NEON
/* The quantized dot products with SDOT when the CPU has it (and this
   build has them), else with base NEON widening multiplies. */
static void fill_neon(struct ggml__cpu_kernels *k, const struct ggml__isa_caps *caps)
{
    k->vec_dot[GGML_TYPE_F32] = ggml__neon_vec_dot_f32;
    k->vec_dot[GGML_TYPE_F16] = ggml__neon_vec_dot_f16;
    k->vec_dot[GGML_TYPE_BF16] = ggml__neon_vec_dot_bf16;
    k->vec_dot[GGML_TYPE_Q4_0] = ggml__neon_vec_dot_q4_0_q8_0;
    k->vec_dot[GGML_TYPE_Q4_1] = ggml__neon_vec_dot_q4_1_q8_1;
    k->vec_dot[GGML_TYPE_Q5_0] = ggml__neon_vec_dot_q5_0_q8_0;
    k->vec_dot[GGML_TYPE_Q5_1] = ggml__neon_vec_dot_q5_1_q8_1;
    k->vec_dot[GGML_TYPE_Q8_0] = ggml__neon_vec_dot_q8_0_q8_0;
    k->gemm_mr = GGML__NEON_GEMM_MR;
    k->gemm_nr = GGML__NEON_GEMM_NR;
    k->gemm_lanes = GGML__NEON_GEMM_LANES;
    k->gemm_tile = ggml__neon_gemm_tile_f32;
#    if HAVE_ISA_NEON_DOTPROD
    if (caps->dotprod) {
        k->vec_dot[GGML_TYPE_Q4_0] = ggml__neon_dotprod_vec_dot_q4_0_q8_0;
        k->vec_dot[GGML_TYPE_Q4_1] = ggml__neon_dotprod_vec_dot_q4_1_q8_1;
        k->vec_dot[GGML_TYPE_Q5_0] = ggml__neon_dotprod_vec_dot_q5_0_q8_0;
        k->vec_dot[GGML_TYPE_Q5_1] = ggml__neon_dotprod_vec_dot_q5_1_q8_1;
        k->vec_dot[GGML_TYPE_Q8_0] = ggml__neon_dotprod_vec_dot_q8_0_q8_0;
        k->qgemm_tile[GGML_TYPE_Q4_0] = ggml__neon_dotprod_qgemm_tile_q4_0;
        k->qgemm_tile[GGML_TYPE_Q8_0] = ggml__neon_dotprod_qgemm_tile_q8_0;
        k->qgemm_tile[GGML_TYPE_IQ4_NL] = ggml__neon_dotprod_qgemm_tile_iq4_nl;
        k->qgemm_packed_tile[GGML_TYPE_Q4_0] = ggml__neon_dotprod_qgemm_packed_tile_q4_0;
        k->qgemm_packed_tile[GGML_TYPE_Q8_0] = ggml__neon_dotprod_qgemm_packed_tile_q8_0;
        k->qgemm_packed_tile[GGML_TYPE_IQ4_NL] = ggml__neon_dotprod_qgemm_packed_tile_iq4_nl;
    }
#    else
    (void) caps;
#    endif

    k->from_float[GGML_TYPE_F16] = ggml__neon_f32_to_f16;
    k->from_float[GGML_TYPE_BF16] = ggml__neon_f32_to_bf16;
    k->from_float[GGML_TYPE_Q8_0] = ggml__neon_quantize_row_q8_0;
    k->from_float[GGML_TYPE_Q8_1] = ggml__neon_quantize_row_q8_1;

    k->to_float[GGML_TYPE_F16] = ggml__neon_f16_to_f32;
    k->to_float[GGML_TYPE_BF16] = ggml__neon_bf16_to_f32;
}
#endif

/*
 * The table of level for a CPU with caps: generic entries, then those of
 * each level of the same architecture up to level.
 */
bool ggml__kernels_build(struct ggml__cpu_kernels *k, enum ggml__isa level, const struct ggml__isa_caps *caps)
{
    if (!ggml__isa_built(level) || !ggml__isa_runs_on(level, caps))
        return false;
    memset(k, 0, sizeof *k);
    k->level = level;
    k->stream_min_bytes = SIZE_MAX;
    k->l2_bytes = GGML__L2_DEFAULT_BYTES;
    fill_generic(k, caps);
#if HAVE_ISA_SSE2
    if (level == GGML__ISA_SSE2 || level == GGML__ISA_AVX2 || level == GGML__ISA_AVX512)
        fill_sse2(k, caps);
#endif
#if HAVE_ISA_AVX2
    if (level == GGML__ISA_AVX2 || level == GGML__ISA_AVX512)
        fill_avx2(k, caps);
#endif
#if HAVE_ISA_AVX512
    if (level == GGML__ISA_AVX512)
        fill_avx512(k, caps);
#endif
#if HAVE_ISA_NEON
    if (level == GGML__ISA_NEON)
        fill_neon(k, caps);
#endif
    return true;
}
