/*
 * test-headers.c - the ABI facts of the public headers.
 *
 * Every number below is upstream ggml 0.21.0's (the headers of its include
 * directory), not computed from our headers, so that an accidental
 * reordering or a changed field shows up here.  The enumerators of ggml_type, ggml_ftype, ggml_op,
 * ggml_unary_op and ggml_glu_op are all listed, in upstream's order, with
 * the numbers a program compiled against upstream's ggml.h printed; their
 * COUNT values match too, so our enums can have no other member either.  Type
 * numbers are stored in model files; struct layouts are shared with
 * programs and plugins built against upstream headers.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stddef.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-blas.h"
#include "ggml-rpc.h"

#include "tap.h"

#define VALUE(name, want) is_int(name, want, "%s == %s", #name, #want)
#define SIZE(type, want)  is_uint(sizeof(type), want, "sizeof(%s) == %s", #type, #want)
#define OFFSET(type, field, want) \
    is_uint(offsetof(type, field), want, "offsetof(%s, %s) == %s", #type, #field, #want)

static void test_types(void)
{
    VALUE(GGML_TYPE_F32, 0);
    VALUE(GGML_TYPE_F16, 1);
    VALUE(GGML_TYPE_Q4_0, 2);
    VALUE(GGML_TYPE_Q4_1, 3);
    VALUE(GGML_TYPE_Q5_0, 6);
    VALUE(GGML_TYPE_Q5_1, 7);
    VALUE(GGML_TYPE_Q8_0, 8);
    VALUE(GGML_TYPE_Q8_1, 9);
    VALUE(GGML_TYPE_Q2_K, 10);
    VALUE(GGML_TYPE_Q3_K, 11);
    VALUE(GGML_TYPE_Q4_K, 12);
    VALUE(GGML_TYPE_Q5_K, 13);
    VALUE(GGML_TYPE_Q6_K, 14);
    VALUE(GGML_TYPE_Q8_K, 15);
    VALUE(GGML_TYPE_IQ2_XXS, 16);
    VALUE(GGML_TYPE_IQ2_XS, 17);
    VALUE(GGML_TYPE_IQ3_XXS, 18);
    VALUE(GGML_TYPE_IQ1_S, 19);
    VALUE(GGML_TYPE_IQ4_NL, 20);
    VALUE(GGML_TYPE_IQ3_S, 21);
    VALUE(GGML_TYPE_IQ2_S, 22);
    VALUE(GGML_TYPE_IQ4_XS, 23);
    VALUE(GGML_TYPE_I8, 24);
    VALUE(GGML_TYPE_I16, 25);
    VALUE(GGML_TYPE_I32, 26);
    VALUE(GGML_TYPE_I64, 27);
    VALUE(GGML_TYPE_F64, 28);
    VALUE(GGML_TYPE_IQ1_M, 29);
    VALUE(GGML_TYPE_BF16, 30);
    VALUE(GGML_TYPE_TQ1_0, 34);
    VALUE(GGML_TYPE_TQ2_0, 35);
    VALUE(GGML_TYPE_MXFP4, 39);
    VALUE(GGML_TYPE_NVFP4, 40);
    VALUE(GGML_TYPE_Q1_0, 41);
    VALUE(GGML_TYPE_Q2_0, 42);
    VALUE(GGML_TYPE_COUNT, 43);

    VALUE(GGML_PREC_DEFAULT, 0);
    VALUE(GGML_PREC_F32, 10);

    VALUE(GGML_FTYPE_UNKNOWN, -1);
    VALUE(GGML_FTYPE_ALL_F32, 0);
    VALUE(GGML_FTYPE_MOSTLY_F16, 1);
    VALUE(GGML_FTYPE_MOSTLY_Q4_0, 2);
    VALUE(GGML_FTYPE_MOSTLY_Q4_1, 3);
    VALUE(GGML_FTYPE_MOSTLY_Q4_1_SOME_F16, 4);
    VALUE(GGML_FTYPE_MOSTLY_Q8_0, 7);
    VALUE(GGML_FTYPE_MOSTLY_Q5_0, 8);
    VALUE(GGML_FTYPE_MOSTLY_Q5_1, 9);
    VALUE(GGML_FTYPE_MOSTLY_Q2_K, 10);
    VALUE(GGML_FTYPE_MOSTLY_Q3_K, 11);
    VALUE(GGML_FTYPE_MOSTLY_Q4_K, 12);
    VALUE(GGML_FTYPE_MOSTLY_Q5_K, 13);
    VALUE(GGML_FTYPE_MOSTLY_Q6_K, 14);
    VALUE(GGML_FTYPE_MOSTLY_IQ2_XXS, 15);
    VALUE(GGML_FTYPE_MOSTLY_IQ2_XS, 16);
    VALUE(GGML_FTYPE_MOSTLY_IQ3_XXS, 17);
    VALUE(GGML_FTYPE_MOSTLY_IQ1_S, 18);
    VALUE(GGML_FTYPE_MOSTLY_IQ4_NL, 19);
    VALUE(GGML_FTYPE_MOSTLY_IQ3_S, 20);
    VALUE(GGML_FTYPE_MOSTLY_IQ2_S, 21);
    VALUE(GGML_FTYPE_MOSTLY_IQ4_XS, 22);
    VALUE(GGML_FTYPE_MOSTLY_IQ1_M, 23);
    VALUE(GGML_FTYPE_MOSTLY_BF16, 24);
    VALUE(GGML_FTYPE_MOSTLY_MXFP4, 25);
    VALUE(GGML_FTYPE_MOSTLY_NVFP4, 26);
    VALUE(GGML_FTYPE_MOSTLY_Q1_0, 27);
    VALUE(GGML_FTYPE_MOSTLY_Q2_0, 28);
}

static void test_ops(void)
{
    VALUE(GGML_OP_NONE, 0);
    VALUE(GGML_OP_DUP, 1);
    VALUE(GGML_OP_ADD, 2);
    VALUE(GGML_OP_ADD_ID, 3);
    VALUE(GGML_OP_ADD1, 4);
    VALUE(GGML_OP_ACC, 5);
    VALUE(GGML_OP_SUB, 6);
    VALUE(GGML_OP_MUL, 7);
    VALUE(GGML_OP_DIV, 8);
    VALUE(GGML_OP_SQR, 9);
    VALUE(GGML_OP_SQRT, 10);
    VALUE(GGML_OP_LOG, 11);
    VALUE(GGML_OP_SIN, 12);
    VALUE(GGML_OP_COS, 13);
    VALUE(GGML_OP_SUM, 14);
    VALUE(GGML_OP_SUM_ROWS, 15);
    VALUE(GGML_OP_CUMSUM, 16);
    VALUE(GGML_OP_MEAN, 17);
    VALUE(GGML_OP_ARGMAX, 18);
    VALUE(GGML_OP_COUNT_EQUAL, 19);
    VALUE(GGML_OP_REPEAT, 20);
    VALUE(GGML_OP_REPEAT_BACK, 21);
    VALUE(GGML_OP_CONCAT, 22);
    VALUE(GGML_OP_SILU_BACK, 23);
    VALUE(GGML_OP_NORM, 24);
    VALUE(GGML_OP_RMS_NORM, 25);
    VALUE(GGML_OP_RMS_NORM_BACK, 26);
    VALUE(GGML_OP_GROUP_NORM, 27);
    VALUE(GGML_OP_L2_NORM, 28);
    VALUE(GGML_OP_MUL_MAT, 29);
    VALUE(GGML_OP_MUL_MAT_ID, 30);
    VALUE(GGML_OP_OUT_PROD, 31);
    VALUE(GGML_OP_SCALE, 32);
    VALUE(GGML_OP_SET, 33);
    VALUE(GGML_OP_CPY, 34);
    VALUE(GGML_OP_CONT, 35);
    VALUE(GGML_OP_RESHAPE, 36);
    VALUE(GGML_OP_VIEW, 37);
    VALUE(GGML_OP_PERMUTE, 38);
    VALUE(GGML_OP_TRANSPOSE, 39);
    VALUE(GGML_OP_GET_ROWS, 40);
    VALUE(GGML_OP_GET_ROWS_BACK, 41);
    VALUE(GGML_OP_SET_ROWS, 42);
    VALUE(GGML_OP_DIAG, 43);
    VALUE(GGML_OP_DIAG_MASK_INF, 44);
    VALUE(GGML_OP_DIAG_MASK_ZERO, 45);
    VALUE(GGML_OP_SOFT_MAX, 46);
    VALUE(GGML_OP_SOFT_MAX_BACK, 47);
    VALUE(GGML_OP_ROPE, 48);
    VALUE(GGML_OP_ROPE_BACK, 49);
    VALUE(GGML_OP_CLAMP, 50);
    VALUE(GGML_OP_CONV_TRANSPOSE_1D, 51);
    VALUE(GGML_OP_IM2COL, 52);
    VALUE(GGML_OP_IM2COL_BACK, 53);
    VALUE(GGML_OP_IM2COL_3D, 54);
    VALUE(GGML_OP_COL2IM_1D, 55);
    VALUE(GGML_OP_CONV_2D, 56);
    VALUE(GGML_OP_CONV_3D, 57);
    VALUE(GGML_OP_CONV_2D_DW, 58);
    VALUE(GGML_OP_CONV_TRANSPOSE_2D, 59);
    VALUE(GGML_OP_POOL_1D, 60);
    VALUE(GGML_OP_POOL_2D, 61);
    VALUE(GGML_OP_POOL_2D_BACK, 62);
    VALUE(GGML_OP_UPSCALE, 63);
    VALUE(GGML_OP_PAD, 64);
    VALUE(GGML_OP_PAD_REFLECT_1D, 65);
    VALUE(GGML_OP_ROLL, 66);
    VALUE(GGML_OP_ARANGE, 67);
    VALUE(GGML_OP_TIMESTEP_EMBEDDING, 68);
    VALUE(GGML_OP_ARGSORT, 69);
    VALUE(GGML_OP_TOP_K, 70);
    VALUE(GGML_OP_LEAKY_RELU, 71);
    VALUE(GGML_OP_TRI, 72);
    VALUE(GGML_OP_FILL, 73);
    VALUE(GGML_OP_FLASH_ATTN_EXT, 74);
    VALUE(GGML_OP_FLASH_ATTN_BACK, 75);
    VALUE(GGML_OP_SSM_CONV, 76);
    VALUE(GGML_OP_SSM_SCAN, 77);
    VALUE(GGML_OP_WIN_PART, 78);
    VALUE(GGML_OP_WIN_UNPART, 79);
    VALUE(GGML_OP_GET_REL_POS, 80);
    VALUE(GGML_OP_ADD_REL_POS, 81);
    VALUE(GGML_OP_RWKV_WKV6, 82);
    VALUE(GGML_OP_GATED_LINEAR_ATTN, 83);
    VALUE(GGML_OP_RWKV_WKV7, 84);
    VALUE(GGML_OP_SOLVE_TRI, 85);
    VALUE(GGML_OP_GATED_DELTA_NET, 86);
    VALUE(GGML_OP_LIGHTNING_INDEXER, 87);
    VALUE(GGML_OP_DSV4_HC_COMB, 88);
    VALUE(GGML_OP_DSV4_HC_PRE, 89);
    VALUE(GGML_OP_DSV4_HC_POST, 90);
    VALUE(GGML_OP_UNARY, 91);
    VALUE(GGML_OP_MAP_CUSTOM1, 92);
    VALUE(GGML_OP_MAP_CUSTOM2, 93);
    VALUE(GGML_OP_MAP_CUSTOM3, 94);
    VALUE(GGML_OP_CUSTOM, 95);
    VALUE(GGML_OP_CROSS_ENTROPY_LOSS, 96);
    VALUE(GGML_OP_CROSS_ENTROPY_LOSS_BACK, 97);
    VALUE(GGML_OP_OPT_STEP_ADAMW, 98);
    VALUE(GGML_OP_OPT_STEP_SGD, 99);
    VALUE(GGML_OP_GLU, 100);
    VALUE(GGML_OP_COUNT, 101);

    VALUE(GGML_UNARY_OP_ABS, 0);
    VALUE(GGML_UNARY_OP_SGN, 1);
    VALUE(GGML_UNARY_OP_NEG, 2);
    VALUE(GGML_UNARY_OP_STEP, 3);
    VALUE(GGML_UNARY_OP_TANH, 4);
    VALUE(GGML_UNARY_OP_ELU, 5);
    VALUE(GGML_UNARY_OP_RELU, 6);
    VALUE(GGML_UNARY_OP_SIGMOID, 7);
    VALUE(GGML_UNARY_OP_GELU, 8);
    VALUE(GGML_UNARY_OP_GELU_QUICK, 9);
    VALUE(GGML_UNARY_OP_SILU, 10);
    VALUE(GGML_UNARY_OP_HARDSWISH, 11);
    VALUE(GGML_UNARY_OP_HARDSIGMOID, 12);
    VALUE(GGML_UNARY_OP_EXP, 13);
    VALUE(GGML_UNARY_OP_EXPM1, 14);
    VALUE(GGML_UNARY_OP_SOFTPLUS, 15);
    VALUE(GGML_UNARY_OP_GELU_ERF, 16);
    VALUE(GGML_UNARY_OP_XIELU, 17);
    VALUE(GGML_UNARY_OP_FLOOR, 18);
    VALUE(GGML_UNARY_OP_CEIL, 19);
    VALUE(GGML_UNARY_OP_ROUND, 20);
    VALUE(GGML_UNARY_OP_TRUNC, 21);
    VALUE(GGML_UNARY_OP_COUNT, 22);

    VALUE(GGML_GLU_OP_REGLU, 0);
    VALUE(GGML_GLU_OP_GEGLU, 1);
    VALUE(GGML_GLU_OP_SWIGLU, 2);
    VALUE(GGML_GLU_OP_SWIGLU_OAI, 3);
    VALUE(GGML_GLU_OP_GEGLU_ERF, 4);
    VALUE(GGML_GLU_OP_GEGLU_QUICK, 5);
    VALUE(GGML_GLU_OP_COUNT, 6);
}

static void test_small_enums(void)
{
    VALUE(GGML_STATUS_ALLOC_FAILED, -2);
    VALUE(GGML_STATUS_FAILED, -1);
    VALUE(GGML_STATUS_SUCCESS, 0);
    VALUE(GGML_STATUS_ABORTED, 1);

    VALUE(GGML_LOG_LEVEL_NONE, 0);
    VALUE(GGML_LOG_LEVEL_DEBUG, 1);
    VALUE(GGML_LOG_LEVEL_INFO, 2);
    VALUE(GGML_LOG_LEVEL_WARN, 3);
    VALUE(GGML_LOG_LEVEL_ERROR, 4);
    VALUE(GGML_LOG_LEVEL_CONT, 5);

    VALUE(GGML_TENSOR_FLAG_INPUT, 1);
    VALUE(GGML_TENSOR_FLAG_OUTPUT, 2);
    VALUE(GGML_TENSOR_FLAG_PARAM, 4);
    VALUE(GGML_TENSOR_FLAG_LOSS, 8);
    VALUE(GGML_TENSOR_FLAG_COMPUTE, 16);

    VALUE(GGML_OBJECT_TYPE_TENSOR, 0);
    VALUE(GGML_OBJECT_TYPE_GRAPH, 1);
    VALUE(GGML_OBJECT_TYPE_WORK_BUFFER, 2);

    VALUE(GGML_TRI_TYPE_UPPER_DIAG, 0);
    VALUE(GGML_TRI_TYPE_LOWER, 3);
    VALUE(GGML_SCALE_MODE_BICUBIC, 2);
    VALUE(GGML_SCALE_FLAG_ALIGN_CORNERS, 256);
    VALUE(GGML_SCALE_FLAG_ANTIALIAS, 512);
    VALUE(GGML_SORT_ORDER_DESC, 1);
    VALUE(GGML_OP_POOL_AVG, 1);
    VALUE(GGML_HINT_SRC0_IS_HADAMARD, 1);
    VALUE(GGML_SCHED_PRIO_LOW, -1);
    VALUE(GGML_SCHED_PRIO_REALTIME, 3);

    VALUE(GGML_NUMA_STRATEGY_DISABLED, 0);
    VALUE(GGML_NUMA_STRATEGY_DISTRIBUTE, 1);
    VALUE(GGML_NUMA_STRATEGY_ISOLATE, 2);
    VALUE(GGML_NUMA_STRATEGY_NUMACTL, 3);
    VALUE(GGML_NUMA_STRATEGY_MIRROR, 4);

    VALUE(GGML_BACKEND_BUFFER_USAGE_ANY, 0);
    VALUE(GGML_BACKEND_BUFFER_USAGE_WEIGHTS, 1);
    VALUE(GGML_BACKEND_BUFFER_USAGE_COMPUTE, 2);

    VALUE(GGML_BACKEND_DEVICE_TYPE_CPU, 0);
    VALUE(GGML_BACKEND_DEVICE_TYPE_GPU, 1);
    VALUE(GGML_BACKEND_DEVICE_TYPE_GPU_UMA, 2);
    VALUE(GGML_BACKEND_DEVICE_TYPE_IGPU, 2);
    VALUE(GGML_BACKEND_DEVICE_TYPE_ACCEL, 3);
}

static void test_macros(void)
{
    VALUE(GGML_MAX_DIMS, 4);
    VALUE(GGML_MAX_PARAMS, 2048);
    VALUE(GGML_MAX_SRC, 10);
    VALUE(GGML_MAX_N_THREADS, 512);
    VALUE(GGML_MAX_OP_PARAMS, 64);
    VALUE(GGML_MAX_NAME, 64);
    VALUE(GGML_DEFAULT_N_THREADS, 4);
    VALUE(GGML_DEFAULT_GRAPH_SIZE, 2048);
    VALUE(GGML_FILE_MAGIC, 0x67676d6c);
    VALUE(GGML_FILE_VERSION, 2);
    VALUE(GGML_QNT_VERSION, 2);
    VALUE(GGML_QNT_VERSION_FACTOR, 1000);
    VALUE(GGML_EXIT_SUCCESS, 0);
    VALUE(GGML_EXIT_ABORTED, 1);
    VALUE(GGML_ROPE_TYPE_NORMAL, 0);
    VALUE(GGML_ROPE_TYPE_NEOX, 2);
    VALUE(GGML_ROPE_TYPE_MROPE, 8);
    VALUE(GGML_ROPE_TYPE_VISION, 24);
    VALUE(GGML_ROPE_TYPE_IMROPE, 40);
    VALUE(GGML_MROPE_SECTIONS, 4);
    VALUE(GGML_KQ_MASK_PAD, 1);
    VALUE(GGML_N_TASKS_MAX, -1);
    VALUE(GGML_BACKEND_API_VERSION, 2);
    VALUE(GGML_PAD(13, 16), 16);
    VALUE(GGML_PAD(32, 16), 32);
    VALUE(GGML_PAD(0, 8), 0);

    /* GGML_ASSERT must be usable as a statement after if/else and as a
     * void expression; a true condition does nothing. */
    int hits = 0;
    if (hits == 0)
        GGML_ASSERT(hits == 0);
    else
        GGML_ASSERT(hits != 0);
    hits = (GGML_ASSERT(hits == 0), hits + 1);
    VALUE(hits, 1);
}

/* Struct layouts on LP64 (8-byte pointers and size_t, 4-byte enums). */
static void test_layouts(void)
{
    if (sizeof(void *) != 8 || sizeof(size_t) != 8) {
        tap_skip(1, "struct layout literals are for LP64 targets");
        return;
    }

    VALUE(GGML_MEM_ALIGN, 16);
    SIZE(ggml_fp16_t, 2);
    SIZE(ggml_bf16_t, 2);
    SIZE(ggml_guid, 16);

    SIZE(struct ggml_tensor, 336);
    VALUE(GGML_TENSOR_SIZE, 336);
    OFFSET(struct ggml_tensor, type, 0);
    OFFSET(struct ggml_tensor, buffer, 8);
    OFFSET(struct ggml_tensor, ne, 16);
    OFFSET(struct ggml_tensor, nb, 48);
    OFFSET(struct ggml_tensor, op, 80);
    OFFSET(struct ggml_tensor, op_params, 84);
    OFFSET(struct ggml_tensor, flags, 148);
    OFFSET(struct ggml_tensor, src, 152);
    OFFSET(struct ggml_tensor, view_src, 232);
    OFFSET(struct ggml_tensor, view_offs, 240);
    OFFSET(struct ggml_tensor, data, 248);
    OFFSET(struct ggml_tensor, name, 256);
    OFFSET(struct ggml_tensor, extra, 320);
    OFFSET(struct ggml_tensor, padding, 328);

    SIZE(struct ggml_init_params, 24);
    OFFSET(struct ggml_init_params, mem_size, 0);
    OFFSET(struct ggml_init_params, mem_buffer, 8);
    OFFSET(struct ggml_init_params, no_alloc, 16);

    SIZE(struct ggml_type_traits, 56);
    OFFSET(struct ggml_type_traits, type_name, 0);
    OFFSET(struct ggml_type_traits, blck_size, 8);
    OFFSET(struct ggml_type_traits, blck_size_interleave, 16);
    OFFSET(struct ggml_type_traits, type_size, 24);
    OFFSET(struct ggml_type_traits, is_quantized, 32);
    OFFSET(struct ggml_type_traits, to_float, 40);
    OFFSET(struct ggml_type_traits, from_float_ref, 48);

    SIZE(struct ggml_threadpool_params, 528);
    OFFSET(struct ggml_threadpool_params, cpumask, 0);
    OFFSET(struct ggml_threadpool_params, n_threads, 512);
    OFFSET(struct ggml_threadpool_params, prio, 516);
    OFFSET(struct ggml_threadpool_params, poll, 520);
    OFFSET(struct ggml_threadpool_params, strict_cpu, 524);
    OFFSET(struct ggml_threadpool_params, paused, 525);

    SIZE(struct ggml_cplan, 56);
    OFFSET(struct ggml_cplan, work_size, 0);
    OFFSET(struct ggml_cplan, work_data, 8);
    OFFSET(struct ggml_cplan, n_threads, 16);
    OFFSET(struct ggml_cplan, threadpool, 24);
    OFFSET(struct ggml_cplan, abort_callback, 32);
    OFFSET(struct ggml_cplan, abort_callback_data, 40);
    OFFSET(struct ggml_cplan, use_ref, 48);

    SIZE(struct ggml_type_traits_cpu, 32);
    OFFSET(struct ggml_type_traits_cpu, from_float, 0);
    OFFSET(struct ggml_type_traits_cpu, vec_dot, 8);
    OFFSET(struct ggml_type_traits_cpu, vec_dot_type, 16);
    OFFSET(struct ggml_type_traits_cpu, nrows, 24);

    SIZE(struct ggml_tallocr, 32);
    OFFSET(struct ggml_tallocr, buffer, 0);
    OFFSET(struct ggml_tallocr, base, 8);
    OFFSET(struct ggml_tallocr, alignment, 16);
    OFFSET(struct ggml_tallocr, offset, 24);

    SIZE(struct ggml_backend_dev_caps, 5);
    OFFSET(struct ggml_backend_dev_caps, async, 0);
    OFFSET(struct ggml_backend_dev_caps, host_buffer, 1);
    OFFSET(struct ggml_backend_dev_caps, buffer_from_host_ptr, 2);
    OFFSET(struct ggml_backend_dev_caps, events, 3);
    OFFSET(struct ggml_backend_dev_caps, mmap_support, 4);

    SIZE(struct ggml_backend_dev_props, 56);
    OFFSET(struct ggml_backend_dev_props, name, 0);
    OFFSET(struct ggml_backend_dev_props, description, 8);
    OFFSET(struct ggml_backend_dev_props, memory_free, 16);
    OFFSET(struct ggml_backend_dev_props, memory_total, 24);
    OFFSET(struct ggml_backend_dev_props, type, 32);
    OFFSET(struct ggml_backend_dev_props, device_id, 40);
    OFFSET(struct ggml_backend_dev_props, caps, 48);

    SIZE(struct ggml_backend_feature, 16);
    SIZE(struct ggml_backend_graph_copy, 32);
    OFFSET(struct ggml_backend_graph_copy, buffer, 0);
    OFFSET(struct ggml_backend_graph_copy, ctx_allocated, 8);
    OFFSET(struct ggml_backend_graph_copy, ctx_unallocated, 16);
    OFFSET(struct ggml_backend_graph_copy, graph, 24);

    /* The plugin interface. */
    SIZE(struct ggml_backend_buffer_type_i, 48);
    OFFSET(struct ggml_backend_buffer_type_i, is_host, 40);
    SIZE(struct ggml_backend_buffer_type, 64);
    OFFSET(struct ggml_backend_buffer_type, device, 48);
    OFFSET(struct ggml_backend_buffer_type, context, 56);

    SIZE(struct ggml_backend_buffer_i, 88);
    OFFSET(struct ggml_backend_buffer_i, init_tensor, 16);
    OFFSET(struct ggml_backend_buffer_i, set_tensor_2d, 48);
    OFFSET(struct ggml_backend_buffer_i, get_tensor_2d, 56);
    OFFSET(struct ggml_backend_buffer_i, cpy_tensor, 64);
    OFFSET(struct ggml_backend_buffer_i, reset, 80);
    SIZE(struct ggml_backend_buffer, 120);
    OFFSET(struct ggml_backend_buffer, buft, 88);
    OFFSET(struct ggml_backend_buffer, context, 96);
    OFFSET(struct ggml_backend_buffer, size, 104);
    OFFSET(struct ggml_backend_buffer, usage, 112);

    SIZE(struct ggml_backend_i, 128);
    OFFSET(struct ggml_backend_i, set_tensor_2d_async, 32);
    OFFSET(struct ggml_backend_i, get_tensor_2d_async, 40);
    OFFSET(struct ggml_backend_i, synchronize, 56);
    OFFSET(struct ggml_backend_i, graph_compute, 96);
    OFFSET(struct ggml_backend_i, event_wait, 112);
    OFFSET(struct ggml_backend_i, graph_optimize, 120);
    SIZE(struct ggml_backend, 152);
    OFFSET(struct ggml_backend, guid, 0);
    OFFSET(struct ggml_backend, iface, 8);
    OFFSET(struct ggml_backend, device, 136);
    OFFSET(struct ggml_backend, context, 144);

    SIZE(struct ggml_backend_event, 16);

    SIZE(struct ggml_backend_device_i, 120);
    OFFSET(struct ggml_backend_device_i, init_backend, 40);
    OFFSET(struct ggml_backend_device_i, supports_op, 72);
    OFFSET(struct ggml_backend_device_i, event_synchronize, 112);
    SIZE(struct ggml_backend_device, 136);
    OFFSET(struct ggml_backend_device, reg, 120);
    OFFSET(struct ggml_backend_device, context, 128);

    SIZE(struct ggml_backend_reg_i, 32);
    SIZE(struct ggml_backend_reg, 48);
    OFFSET(struct ggml_backend_reg, api_version, 0);
    OFFSET(struct ggml_backend_reg, iface, 8);
    OFFSET(struct ggml_backend_reg, context, 40);
}

int main(void)
{
    tap_capture_log();

    test_types();
    test_ops();
    test_small_enums();
    test_macros();
    test_layouts();

    return tap_done();
}
