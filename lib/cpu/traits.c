/*
 * traits.c - what the CPU backend offers for each type through the public
 * API: the row conversions ggml_cpu_fp32_to_* and ggml_cpu_*_to_fp32, and
 * the table behind ggml_get_type_traits_cpu(), whose from_float and
 * vec_dot members are the entries of the kernel table in use
 * (simd/kernels.h).
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "simd/kernels.h"

/* As fp16.c: n <= 0 does nothing; NULL with work to do is reported. */
static bool row_args_ok(const void *x, const void *y, int64_t n, const char *func)
{
    if (n > 0 && (x == NULL || y == NULL)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "NULL %s with n = %" PRId64,
                     x == NULL ? "source" : "destination", n);
        return false;
    }
    return n > 0;
}

void ggml_cpu_fp32_to_fp32(const float *x, float *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__) && x != y)
        memmove(y, x, (size_t) n * sizeof *y);
}

void ggml_cpu_fp32_to_i32(const float *x, int32_t *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        ggml__kernels()->from_float[GGML_TYPE_I32](x, y, n);
}

void ggml_cpu_fp32_to_fp16(const float *x, ggml_fp16_t *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        ggml__kernels()->from_float[GGML_TYPE_F16](x, y, n);
}

void ggml_cpu_fp16_to_fp32(const ggml_fp16_t *x, float *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        ggml__kernels()->to_float[GGML_TYPE_F16](x, y, n);
}

void ggml_cpu_fp32_to_bf16(const float *x, ggml_bf16_t *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        ggml__kernels()->from_float[GGML_TYPE_BF16](x, y, n);
}

void ggml_cpu_bf16_to_fp32(const ggml_bf16_t *x, float *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        ggml__kernels()->to_float[GGML_TYPE_BF16](x, y, n);
}

/* ------------------------------------------------------------ the table */

/*
 * Types without an entry (zeroed: no from_float, no vec_dot, vec_dot_type
 * F32, nrows 0) are those the CPU backend has no kernels for yet, the
 * integer types other than I32, and the removed slots.  Q8_1, Q8_K and I32 only
 * have an encoder: they are what other rows are converted to.
 */
static struct ggml_type_traits_cpu type_traits_cpu[GGML_TYPE_COUNT];
static pthread_once_t type_traits_once = PTHREAD_ONCE_INIT;

static void fill_type_traits(void)
{
    static const struct {
        enum ggml_type type, vec_dot_type;
    } with_dot[] = {
        { GGML_TYPE_F32, GGML_TYPE_F32 },   { GGML_TYPE_F16, GGML_TYPE_F16 },
        { GGML_TYPE_BF16, GGML_TYPE_BF16 }, { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0 },
        { GGML_TYPE_Q4_1, GGML_TYPE_Q8_1 }, { GGML_TYPE_Q5_0, GGML_TYPE_Q8_0 },
        { GGML_TYPE_Q5_1, GGML_TYPE_Q8_1 }, { GGML_TYPE_Q8_0, GGML_TYPE_Q8_0 },
        { GGML_TYPE_MXFP4, GGML_TYPE_Q8_0 }, { GGML_TYPE_NVFP4, GGML_TYPE_Q8_0 },
        { GGML_TYPE_Q1_0, GGML_TYPE_Q8_0 },  { GGML_TYPE_Q2_0, GGML_TYPE_Q8_0 },
        { GGML_TYPE_IQ4_NL, GGML_TYPE_Q8_0 },
        { GGML_TYPE_Q4_K, GGML_TYPE_Q8_K }, { GGML_TYPE_Q5_K, GGML_TYPE_Q8_K },
        { GGML_TYPE_Q6_K, GGML_TYPE_Q8_K },
        { GGML_TYPE_Q2_K, GGML_TYPE_Q8_K }, { GGML_TYPE_Q3_K, GGML_TYPE_Q8_K },
        { GGML_TYPE_TQ1_0, GGML_TYPE_Q8_K }, { GGML_TYPE_TQ2_0, GGML_TYPE_Q8_K },
        { GGML_TYPE_IQ4_XS, GGML_TYPE_Q8_K },
        { GGML_TYPE_IQ1_S, GGML_TYPE_Q8_K }, { GGML_TYPE_IQ1_M, GGML_TYPE_Q8_K },
        { GGML_TYPE_IQ3_XXS, GGML_TYPE_Q8_K }, { GGML_TYPE_IQ3_S, GGML_TYPE_Q8_K },
        { GGML_TYPE_IQ2_XXS, GGML_TYPE_Q8_K }, { GGML_TYPE_IQ2_XS, GGML_TYPE_Q8_K },
        { GGML_TYPE_IQ2_S, GGML_TYPE_Q8_K },
    };
    const struct ggml__cpu_kernels *k = ggml__kernels();
    for (size_t i = 0; i < sizeof with_dot / sizeof with_dot[0]; i++) {
        struct ggml_type_traits_cpu *t = &type_traits_cpu[with_dot[i].type];
        t->vec_dot = k->vec_dot[with_dot[i].type];
        t->vec_dot_type = with_dot[i].vec_dot_type;
        t->nrows = 1;
    }
    type_traits_cpu[GGML_TYPE_Q8_1].vec_dot_type = GGML_TYPE_Q8_1;
    type_traits_cpu[GGML_TYPE_Q8_1].nrows = 1;
    type_traits_cpu[GGML_TYPE_Q8_K].vec_dot_type = GGML_TYPE_Q8_K;
    type_traits_cpu[GGML_TYPE_Q8_K].nrows = 1;
    for (int type = 0; type < GGML_TYPE_COUNT; type++)
        type_traits_cpu[type].from_float = k->from_float[type];
}

/*
 * Arguments: type  any value of enum ggml_type.
 * Returns:   the type's CPU traits (a zeroed entry for a type without CPU
 *            kernels or a removed slot), or NULL after logging one error
 *            when type lies outside the enumeration.
 */
const struct ggml_type_traits_cpu *ggml_get_type_traits_cpu(enum ggml_type type)
{
    if ((int) type < 0 || (int) type >= GGML_TYPE_COUNT) {
        ggml__error("invalid type %d", (int) type);
        return NULL;
    }
    pthread_once(&type_traits_once, fill_type_traits);
    return &type_traits_cpu[type];
}
