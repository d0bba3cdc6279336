/*
 * op-names.c - printable names of ops, unary ops and GLU ops.
 *
 * Names are the enum names without their prefix ("MUL_MAT" for
 * GGML_OP_MUL_MAT, "SILU" for GGML_UNARY_OP_SILU); symbols are short formulas for graph dumps.  Every lookup
 * accepts any value and answers "UNKNOWN" outside the enum.
 */
#include "config.h"

#include "ggml-impl.h"

#define OP(name, symbol) [GGML_OP_##name] = { #name, symbol }

static const struct {
    const char *name;
    const char *symbol;
} op_table[GGML_OP_COUNT] = {
    OP(NONE, "none"),
    OP(DUP, "x"),
    OP(ADD, "x+y"),
    OP(ADD_ID, "x[i]+y"),
    OP(ADD1, "x+1"),
    OP(ACC, "view(x)+=y"),
    OP(SUB, "x-y"),
    OP(MUL, "x*y"),
    OP(DIV, "x/y"),
    OP(SQR, "x^2"),
    OP(SQRT, "sqrt(x)"),
    OP(LOG, "log(x)"),
    OP(SIN, "sin(x)"),
    OP(COS, "cos(x)"),
    OP(SUM, "sum(x)"),
    OP(SUM_ROWS, "sum_rows(x)"),
    OP(CUMSUM, "cumsum(x)"),
    OP(MEAN, "mean(x)"),
    OP(ARGMAX, "argmax(x)"),
    OP(COUNT_EQUAL, "count_equal(x,y)"),
    OP(REPEAT, "repeat(x)"),
    OP(REPEAT_BACK, "repeat_back(x)"),
    OP(CONCAT, "concat(x,y)"),
    OP(SILU_BACK, "silu_back(x)"),
    OP(NORM, "norm(x)"),
    OP(RMS_NORM, "rms_norm(x)"),
    OP(RMS_NORM_BACK, "rms_norm_back(x)"),
    OP(GROUP_NORM, "group_norm(x)"),
    OP(L2_NORM, "l2_norm(x)"),
    OP(MUL_MAT, "X*Y"),
    OP(MUL_MAT_ID, "X[i]*Y"),
    OP(OUT_PROD, "X outer Y"),
    OP(SCALE, "x*v"),
    OP(SET, "view(x)=y"),
    OP(CPY, "x->y"),
    OP(CONT, "cont(x)"),
    OP(RESHAPE, "reshape(x)"),
    OP(VIEW, "view(x)"),
    OP(PERMUTE, "permute(x)"),
    OP(TRANSPOSE, "transpose(x)"),
    OP(GET_ROWS, "get_rows(x)"),
    OP(GET_ROWS_BACK, "get_rows_back(x)"),
    OP(SET_ROWS, "set_rows(x)"),
    OP(DIAG, "diag(x)"),
    OP(DIAG_MASK_INF, "diag_mask_inf(x)"),
    OP(DIAG_MASK_ZERO, "diag_mask_zero(x)"),
    OP(SOFT_MAX, "soft_max(x)"),
    OP(SOFT_MAX_BACK, "soft_max_back(x)"),
    OP(ROPE, "rope(x)"),
    OP(ROPE_BACK, "rope_back(x)"),
    OP(CLAMP, "clamp(x)"),
    OP(CONV_TRANSPOSE_1D, "conv_transpose_1d(x)"),
    OP(IM2COL, "im2col(x)"),
    OP(IM2COL_BACK, "im2col_back(x)"),
    OP(IM2COL_3D, "im2col_3d(x)"),
    OP(COL2IM_1D, "col2im_1d(x)"),
    OP(CONV_2D, "conv_2d(x)"),
    OP(CONV_3D, "conv_3d(x)"),
    OP(CONV_2D_DW, "conv_2d_dw(x)"),
    OP(CONV_TRANSPOSE_2D, "conv_transpose_2d(x)"),
    OP(POOL_1D, "pool_1d(x)"),
    OP(POOL_2D, "pool_2d(x)"),
    OP(POOL_2D_BACK, "pool_2d_back(x)"),
    OP(UPSCALE, "upscale(x)"),
    OP(PAD, "pad(x)"),
    OP(PAD_REFLECT_1D, "pad_reflect_1d(x)"),
    OP(ROLL, "roll(x)"),
    OP(ARANGE, "arange(x)"),
    OP(TIMESTEP_EMBEDDING, "timestep_embedding(x)"),
    OP(ARGSORT, "argsort(x)"),
    OP(TOP_K, "top_k(x)"),
    OP(LEAKY_RELU, "leaky_relu(x)"),
    OP(TRI, "tri(x)"),
    OP(FILL, "fill(x)"),
    OP(FLASH_ATTN_EXT, "flash_attn_ext(x)"),
    OP(FLASH_ATTN_BACK, "flash_attn_back(x)"),
    OP(SSM_CONV, "ssm_conv(x)"),
    OP(SSM_SCAN, "ssm_scan(x)"),
    OP(WIN_PART, "win_part(x)"),
    OP(WIN_UNPART, "win_unpart(x)"),
    OP(GET_REL_POS, "get_rel_pos(x)"),
    OP(ADD_REL_POS, "add_rel_pos(x)"),
    OP(RWKV_WKV6, "rwkv_wkv6(k, v, r, tf, td, s)"),
    OP(GATED_LINEAR_ATTN, "gated_linear_attn(k, v, q, gate, s)"),
    OP(RWKV_WKV7, "rwkv_wkv7(r, w, k, v, a, b, s)"),
    OP(SOLVE_TRI, "solve_tri(A, B)"),
    OP(GATED_DELTA_NET, "gated_delta_net(q, k, v, g, beta, s)"),
    OP(LIGHTNING_INDEXER, "lightning_indexer(q, k, w)"),
    OP(DSV4_HC_COMB, "dsv4_hc_comb(x)"),
    OP(DSV4_HC_PRE, "dsv4_hc_pre(x)"),
    OP(DSV4_HC_POST, "dsv4_hc_post(x)"),
    OP(UNARY, "unary(x)"),
    OP(MAP_CUSTOM1, "custom(x)"),
    OP(MAP_CUSTOM2, "custom(x,y)"),
    OP(MAP_CUSTOM3, "custom(x,y,z)"),
    OP(CUSTOM, "custom(...)"),
    OP(CROSS_ENTROPY_LOSS, "cross_entropy_loss(x,y)"),
    OP(CROSS_ENTROPY_LOSS_BACK, "cross_entropy_loss_back(x,y)"),
    OP(OPT_STEP_ADAMW, "adamw(x)"),
    OP(OPT_STEP_SGD, "sgd(x)"),
    OP(GLU, "glu(x)"),
};

#undef OP

#define UNARY(name) [GGML_UNARY_OP_##name] = #name

static const char *const unary_table[GGML_UNARY_OP_COUNT] = {
    UNARY(ABS), UNARY(SGN), UNARY(NEG), UNARY(STEP), UNARY(TANH), UNARY(ELU),
    UNARY(RELU), UNARY(SIGMOID), UNARY(GELU), UNARY(GELU_QUICK), UNARY(SILU),
    UNARY(HARDSWISH), UNARY(HARDSIGMOID), UNARY(EXP), UNARY(EXPM1),
    UNARY(SOFTPLUS), UNARY(GELU_ERF), UNARY(XIELU), UNARY(FLOOR), UNARY(CEIL),
    UNARY(ROUND), UNARY(TRUNC),
};

#undef UNARY

#define GLU(name) [GGML_GLU_OP_##name] = #name

static const char *const glu_table[GGML_GLU_OP_COUNT] = {
    GLU(REGLU), GLU(GEGLU), GLU(SWIGLU), GLU(SWIGLU_OAI), GLU(GEGLU_ERF), GLU(GEGLU_QUICK),
};

#undef GLU

const char *ggml_op_name(enum ggml_op op)
{
    if ((int) op < 0 || op >= GGML_OP_COUNT || op_table[op].name == NULL)
        return "UNKNOWN";
    return op_table[op].name;
}

const char *ggml_op_symbol(enum ggml_op op)
{
    if ((int) op < 0 || op >= GGML_OP_COUNT || op_table[op].symbol == NULL)
        return "UNKNOWN";
    return op_table[op].symbol;
}

const char *ggml_unary_op_name(enum ggml_unary_op op)
{
    if ((int) op < 0 || op >= GGML_UNARY_OP_COUNT || unary_table[op] == NULL)
        return "UNKNOWN";
    return unary_table[op];
}

const char *ggml_glu_op_name(enum ggml_glu_op op)
{
    if ((int) op < 0 || op >= GGML_GLU_OP_COUNT || glu_table[op] == NULL)
        return "UNKNOWN";
    return glu_table[op];
}

const char *ggml_op_desc(const struct ggml_tensor *t)
{
    if (t == NULL)
        return "UNKNOWN";
    if (t->op == GGML_OP_UNARY)
        return ggml_unary_op_name((enum ggml_unary_op) t->op_params[0]);
    if (t->op == GGML_OP_GLU)
        return ggml_glu_op_name((enum ggml_glu_op) t->op_params[0]);
    return ggml_op_name(t->op);
}
