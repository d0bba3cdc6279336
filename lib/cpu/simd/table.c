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

#include <string.h>
#include <strings.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "kernels.h"
#include "generic/generic.h"
#if HAVE_ISA_AVX2
#    include "avx2/avx2.h"
#endif
#if HAVE_ISA_NEON
#    include "neon/neon.h"
#endif

static const char *const isa_names[GGML__ISA_COUNT] = {
    [GGML__ISA_GENERIC] = "generic",
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
    k->vec_dot[GGML_TYPE_F16] = ggml__generic_vec_dot_f16;
    k->vec_dot[GGML_TYPE_BF16] = ggml__generic_vec_dot_bf16;
    k->vec_dot[GGML_TYPE_Q4_0] = ggml__generic_vec_dot_q4_0_q8_0;
    k->vec_dot[GGML_TYPE_Q4_1] = ggml__generic_vec_dot_q4_1_q8_1;
    k->vec_dot[GGML_TYPE_Q5_0] = ggml__generic_vec_dot_q5_0_q8_0;
    k->vec_dot[GGML_TYPE_Q5_1] = ggml__generic_vec_dot_q5_1_q8_1;
    k->vec_dot[GGML_TYPE_Q8_0] = ggml__generic_vec_dot_q8_0_q8_0;

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

    k->to_float[GGML_TYPE_F16] = ggml__generic_f16_to_f32;
    k->to_float[GGML_TYPE_BF16] = ggml__generic_bf16_to_f32;
    k->to_float[GGML_TYPE_Q4_0] = ggml__dequantize_row_q4_0;
    k->to_float[GGML_TYPE_Q4_1] = ggml__dequantize_row_q4_1;
    k->to_float[GGML_TYPE_Q5_0] = ggml__dequantize_row_q5_0;
    k->to_float[GGML_TYPE_Q5_1] = ggml__dequantize_row_q5_1;
    k->to_float[GGML_TYPE_Q8_0] = ggml__dequantize_row_q8_0;
    k->to_float[GGML_TYPE_Q8_1] = ggml__dequantize_row_q8_1;
    /* unary and glu: NULL, the ops' portable row functions */
}

#if HAVE_ISA_AVX2
static void fill_avx2(struct ggml__cpu_kernels *k, const struct ggml__isa_caps *caps)
{
    (void) caps;
    k->vec_dot[GGML_TYPE_F32] = ggml__avx2_vec_dot_f32;
    k->vec_dot[GGML_TYPE_F16] = ggml__avx2_vec_dot_f16;
    k->vec_dot[GGML_TYPE_BF16] = ggml__avx2_vec_dot_bf16;
    k->vec_dot[GGML_TYPE_Q4_0] = ggml__avx2_vec_dot_q4_0_q8_0;
    k->vec_dot[GGML_TYPE_Q4_1] = ggml__avx2_vec_dot_q4_1_q8_1;
    k->vec_dot[GGML_TYPE_Q5_0] = ggml__avx2_vec_dot_q5_0_q8_0;
    k->vec_dot[GGML_TYPE_Q5_1] = ggml__avx2_vec_dot_q5_1_q8_1;
    k->vec_dot[GGML_TYPE_Q8_0] = ggml__avx2_vec_dot_q8_0_q8_0;

    k->from_float[GGML_TYPE_F16] = ggml__avx2_f32_to_f16;
    k->from_float[GGML_TYPE_BF16] = ggml__avx2_f32_to_bf16;
    k->from_float[GGML_TYPE_Q8_0] = ggml__avx2_quantize_row_q8_0;
    k->from_float[GGML_TYPE_Q8_1] = ggml__avx2_quantize_row_q8_1;

    k->to_float[GGML_TYPE_F16] = ggml__avx2_f16_to_f32;
    k->to_float[GGML_TYPE_BF16] = ggml__avx2_bf16_to_f32;
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
#    if HAVE_ISA_NEON_DOTPROD
    if (caps->dotprod) {
        k->vec_dot[GGML_TYPE_Q4_0] = ggml__neon_dotprod_vec_dot_q4_0_q8_0;
        k->vec_dot[GGML_TYPE_Q4_1] = ggml__neon_dotprod_vec_dot_q4_1_q8_1;
        k->vec_dot[GGML_TYPE_Q5_0] = ggml__neon_dotprod_vec_dot_q5_0_q8_0;
        k->vec_dot[GGML_TYPE_Q5_1] = ggml__neon_dotprod_vec_dot_q5_1_q8_1;
        k->vec_dot[GGML_TYPE_Q8_0] = ggml__neon_dotprod_vec_dot_q8_0_q8_0;
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
    fill_generic(k, caps);
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
