/*
 * backward.c - reverse-mode differentiation of a forward graph:
 * ggml_build_backward_expand.
 *
 * Model (upstream ggml's): a node needs a gradient when it is a parameter
 * (GGML_TENSOR_FLAG_PARAM), a loss (GGML_TENSOR_FLAG_LOSS), or one of its
 * sources needs one through an edge that carries gradients.  Gradients
 * live in the graph's grads array, in the slot of the tensor's hash key;
 * an accumulator (grad_accs) is a gradient that persists across passes
 * and is added to in place.  The loss always gets an F32 accumulator, so
 * that ggml_graph_reset can seed it with 1; parameters get the caller's
 * accumulators when given.  The gradient nodes are appended to the graph
 * while walking the forward nodes from last to first.
 *
 * Errors never abort: every condition that would make the expansion
 * impossible (an op without a gradient on a path from a parameter to the
 * loss, a source of a type that cannot hold gradients, an in-place node)
 * is checked before any node is added, logged once, and the graph is
 * left as it was.
 */
#include "config.h"

#include <stdlib.h>

#include "ggml-impl.h"

#define FUNC "ggml_build_backward_expand"

/* Bits of the sources an op differentiates (bit j: src[j]). */
#define SRC0 1u
#define SRC1 2u
#define SRC2 4u

/* The differentiation state of one call. */
struct backward {
    struct ggml_context *ctx;
    struct ggml_cgraph *cgraph;
    bool *needed;     /* by hash slot: the tensor needs a gradient */
    bool ok;          /* false once a constructor failed */
};

/* Hash slot of t in the graph, or GGML__HASHSET_FULL when t is not in it. */
static size_t slot_of(const struct ggml_cgraph *cgraph, const struct ggml_tensor *t)
{
    if (t == NULL)
        return GGML__HASHSET_FULL;
    size_t i = ggml__hash_find(&cgraph->visited_hash_set, t);
    if (i == GGML__HASHSET_FULL || !ggml__bitset_get(cgraph->visited_hash_set.used, i))
        return GGML__HASHSET_FULL;
    return i;
}

/*
 * Sources of node whose gradient has no effect on anything: shapes only
 * (IM2COL's kernel), indices (GET_ROWS, ROPE positions), a copy's
 * destination, or the input of a piecewise-constant function.
 */
static int differentiated_sources(const struct ggml_tensor *node);

static unsigned ignored_sources(const struct ggml_tensor *node)
{
    switch (node->op) {
    case GGML_OP_IM2COL:
    case GGML_OP_IM2COL_BACK:
        return SRC0;
    case GGML_OP_UNARY:
        return differentiated_sources(node) == 0 ? SRC0 : 0;
    case GGML_OP_CPY:
    case GGML_OP_GET_ROWS:
    case GGML_OP_GET_ROWS_BACK:
    case GGML_OP_ROPE:
        return SRC1;
    default:
        return 0;
    }
}

/*
 * The sources node's backward expansion gives gradients to, or -1 when
 * its op has no gradient here.
 */
static int differentiated_sources(const struct ggml_tensor *node)
{
    switch (node->op) {
    case GGML_OP_NONE:
        return 0;
    case GGML_OP_DUP: case GGML_OP_SQR: case GGML_OP_SQRT: case GGML_OP_LOG: case GGML_OP_SIN:
    case GGML_OP_COS: case GGML_OP_SUM: case GGML_OP_SUM_ROWS: case GGML_OP_MEAN: case GGML_OP_REPEAT:
    case GGML_OP_REPEAT_BACK: case GGML_OP_RMS_NORM: case GGML_OP_SCALE: case GGML_OP_CPY:
    case GGML_OP_CONT: case GGML_OP_RESHAPE: case GGML_OP_VIEW: case GGML_OP_PERMUTE:
    case GGML_OP_TRANSPOSE: case GGML_OP_GET_ROWS: case GGML_OP_DIAG_MASK_INF:
    case GGML_OP_DIAG_MASK_ZERO: case GGML_OP_SOFT_MAX: case GGML_OP_ROPE:
    case GGML_OP_CROSS_ENTROPY_LOSS: case GGML_OP_POOL_2D:
    /* beyond upstream, which has no gradient for these */
    case GGML_OP_POOL_1D: case GGML_OP_CUMSUM: case GGML_OP_TRI: case GGML_OP_FILL: case GGML_OP_DIAG:
        return SRC0;
    case GGML_OP_IM2COL:
        return SRC1;
    case GGML_OP_ADD: case GGML_OP_ADD1: case GGML_OP_ACC: case GGML_OP_SUB: case GGML_OP_MUL:
    case GGML_OP_DIV: case GGML_OP_MUL_MAT: case GGML_OP_SET:
        return SRC0 | SRC1;
    case GGML_OP_UNARY:
        switch (ggml_get_unary_op(node)) {
        /* piecewise constant: no gradient flows through them, as upstream */
        case GGML_UNARY_OP_SGN: case GGML_UNARY_OP_STEP:
            return 0;
        case GGML_UNARY_OP_ABS: case GGML_UNARY_OP_NEG: case GGML_UNARY_OP_RELU: case GGML_UNARY_OP_SILU:
        case GGML_UNARY_OP_EXP: case GGML_UNARY_OP_EXPM1: case GGML_UNARY_OP_SOFTPLUS:
        /* the rounding functions (no gradient in upstream): an explicit zero */
        case GGML_UNARY_OP_FLOOR: case GGML_UNARY_OP_CEIL: case GGML_UNARY_OP_ROUND: case GGML_UNARY_OP_TRUNC:
        /* GELU in its tanh form and GELU_QUICK, which upstream does not differentiate either */
        case GGML_UNARY_OP_GELU: case GGML_UNARY_OP_GELU_QUICK:
            return SRC0;
        default:
            return -1;
        }
    case GGML_OP_GLU:
        /* split (gate in src[1]) or not (both halves in src[0]) */
        switch (ggml_get_glu_op(node)) {
        case GGML_GLU_OP_SWIGLU: case GGML_GLU_OP_REGLU: case GGML_GLU_OP_GEGLU: case GGML_GLU_OP_GEGLU_QUICK:
            break;
        default:
            return -1;
        }
        return node->src[1] != NULL ? SRC0 | SRC1 : SRC0;
    default:
        return -1;
    }
}

/* Name of node's operation for messages: the unary or GLU function when it has one. */
static const char *op_label(const struct ggml_tensor *node)
{
    if (node->op == GGML_OP_UNARY)
        return ggml_unary_op_name(ggml_get_unary_op(node));
    if (node->op == GGML_OP_GLU)
        return ggml_glu_op_name(ggml_get_glu_op(node));
    return ggml_op_name(node->op);
}

/*
 * Pass 1: marks in b->needed the nodes that need a gradient, forward from
 * the parameters.  False (logged) when a source that needs one cannot
 * hold it (not F32/F16) or a needing node writes into another tensor.
 */
static bool mark_needed(struct backward *b)
{
    struct ggml_cgraph *cgraph = b->cgraph;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor *node = cgraph->nodes[i];
        if (node->type == GGML_TYPE_I32)
            continue;
        bool needs = (node->flags & (GGML_TENSOR_FLAG_PARAM | GGML_TENSOR_FLAG_LOSS)) != 0;
        const unsigned ignored = ignored_sources(node);
        for (int j = 0; j < GGML_MAX_SRC && !needs; j++) {
            const struct ggml_tensor *src = node->src[j];
            const size_t s = slot_of(cgraph, src);
            if (src == NULL || ((ignored >> j) & 1u) || s == GGML__HASHSET_FULL || !b->needed[s])
                continue;
            if (src->type != GGML_TYPE_F32 && src->type != GGML_TYPE_F16) {
                ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC, "'%s' (%s) needs a gradient but is %s; want f32 or f16",
                             src->name, ggml_op_name(src->op), ggml_type_name(src->type));
                return false;
            }
            needs = true;
        }
        if (!needs)
            continue;
        const bool reinterprets = node->op == GGML_OP_CPY || node->op == GGML_OP_VIEW ||
                                  node->op == GGML_OP_RESHAPE || node->op == GGML_OP_PERMUTE ||
                                  node->op == GGML_OP_TRANSPOSE;
        if (node->view_src != NULL && !reinterprets) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC,
                         "'%s' (%s) is computed in place; in-place ops cannot be differentiated",
                         node->name, op_label(node));
            return false;
        }
        b->needed[slot_of(cgraph, node)] = true;
    }
    return true;
}

/*
 * Pass 2: walks back from the loss (and from the nodes given an
 * accumulator) along the edges that carry gradients, and checks that
 * every node reached differentiates each of its sources that needs a
 * gradient.  False (logged, naming the op) otherwise.
 */
static bool check_differentiable(struct backward *b, struct ggml_tensor **grad_accs)
{
    struct ggml_cgraph *cgraph = b->cgraph;
    bool *reached = calloc(cgraph->visited_hash_set.size, sizeof *reached);
    if (reached == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC, "out of memory");
        return false;
    }
    bool ok = true;
    for (int i = cgraph->n_nodes - 1; i >= 0 && ok; i--) {
        struct ggml_tensor *node = cgraph->nodes[i];
        const size_t s = slot_of(cgraph, node);
        if (!b->needed[s])
            continue;
        if ((node->flags & GGML_TENSOR_FLAG_LOSS) || (grad_accs != NULL && grad_accs[i] != NULL))
            reached[s] = true;
        if (!reached[s])
            continue;
        const int diff = differentiated_sources(node);
        const unsigned ignored = ignored_sources(node);
        for (int j = 0; j < GGML_MAX_SRC && ok; j++) {
            const size_t sj = slot_of(cgraph, node->src[j]);
            if (sj == GGML__HASHSET_FULL || !b->needed[sj] || ((ignored >> j) & 1u))
                continue;
            if (diff < 0) {
                ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC,
                             "op %s ('%s') has no backward pass; it lies between a parameter and the loss",
                             op_label(node), node->name);
                ok = false;
            } else if (!((unsigned) diff >> j & 1u)) {
                ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC,
                             "op %s ('%s') has no gradient for its source %d ('%s')", op_label(node),
                             node->name, j, node->src[j]->name);
                ok = false;
            } else {
                reached[sj] = true;
            }
        }
    }
    free(reached);
    return ok;
}

/* ------------------------------------------------- gradient accumulation */

/* Makes t the current gradient of the tensor in slot s and adds it to the graph. */
static void set_grad(struct backward *b, size_t s, struct ggml_tensor *t)
{
    struct ggml_cgraph *cgraph = b->cgraph;
    if (t == NULL) {
        /* the constructor has logged why */
        b->ok = false;
        return;
    }
    cgraph->grads[s] = t;
    ggml_format_name(t, "grad for %s", cgraph->visited_hash_set.keys[s]->name);
    ggml_build_forward_expand(cgraph, t);
}

/* grad(src) += t; an accumulator is added to in place. */
static void add_grad(struct backward *b, size_t s, struct ggml_tensor *t)
{
    struct ggml_tensor **grads = b->cgraph->grads;
    if (t == NULL) {
        b->ok = false;
        return;
    }
    if (grads[s] == NULL)
        set_grad(b, s, t);
    else if (b->cgraph->grad_accs[s] != NULL)
        set_grad(b, s, ggml_add_inplace(b->ctx, grads[s], t));
    else
        set_grad(b, s, ggml_add(b->ctx, grads[s], t));
}

/* grad(src) -= t. */
static void sub_grad(struct backward *b, size_t s, struct ggml_tensor *t)
{
    struct ggml_tensor **grads = b->cgraph->grads;
    if (t == NULL) {
        b->ok = false;
        return;
    }
    if (grads[s] == NULL)
        set_grad(b, s, ggml_neg(b->ctx, t));
    else if (b->cgraph->grad_accs[s] != NULL)
        set_grad(b, s, ggml_sub_inplace(b->ctx, grads[s], t));
    else
        set_grad(b, s, ggml_sub(b->ctx, grads[s], t));
}

/* grad(src) += t broadcast, t a single value. */
static void add_scalar_grad(struct backward *b, size_t s, struct ggml_tensor *t)
{
    struct ggml_tensor *src = b->cgraph->visited_hash_set.keys[s];
    if (t == NULL) {
        b->ok = false;
        return;
    }
    if (b->cgraph->grads[s] == NULL)
        set_grad(b, s, ggml_repeat(b->ctx, t, src));
    else
        add_grad(b, s, t);
}

/* grad(src) += t placed at the strides and byte offset of a view into src. */
static void acc_grad(struct backward *b, size_t s, struct ggml_tensor *t, size_t nb1, size_t nb2, size_t nb3,
                     size_t offset)
{
    struct ggml_tensor **grads = b->cgraph->grads;
    struct ggml_tensor *src = b->cgraph->visited_hash_set.keys[s];
    if (grads[s] == NULL) {
        /* zeros of src's shape (as upstream: NaN if src holds Inf or NaN) */
        struct ggml_tensor *zero = ggml_scale(b->ctx, src, 0.0f);
        set_grad(b, s, ggml_acc(b->ctx, zero, t, nb1, nb2, nb3, offset));
    } else if (b->cgraph->grad_accs[s] != NULL) {
        set_grad(b, s, ggml_acc_inplace(b->ctx, grads[s], t, nb1, nb2, nb3, offset));
    } else {
        set_grad(b, s, ggml_acc(b->ctx, grads[s], t, nb1, nb2, nb3, offset));
    }
}

/* ------------------------------------------------------- per-op backward */

/* Gradient of src0 of a MUL_MAT, summed over the batches src0 was broadcast to. */
static struct ggml_tensor *mul_mat_grad_a(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                          struct ggml_tensor *grad)
{
    /* out_prod reads its first operand by rows */
    if (b->nb[0] > b->nb[1])
        b = ggml_cont(ctx, b);
    struct ggml_tensor *t = ggml_out_prod(ctx, b, grad);
    if (t == NULL || ggml_are_same_shape(t, a))
        return t;
    /* t's dim 2 runs over (a's batch, repeat): regroup as [.., a batch, repeat] and fold the repeats */
    const int64_t nr2 = t->ne[2] / a->ne[2];
    t = ggml_view_4d(ctx, t, a->ne[0], a->ne[1], a->ne[2], nr2, t->nb[1], t->nb[2] * (size_t) nr2, t->nb[2], 0);
    return ggml_repeat_back(ctx, t, a);
}

#define GELU_K 0.79788456080286535588f /* sqrt(2 / pi) */
#define GELU_A 0.044715f
#define GELU_QUICK_C 1.702f

/*
 * The derivative of a gated unit's activation at x, built from ops:
 * ReLU: step(x); GELU (tanh form, u = k (x + a x^3)):
 * 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 a x^2);
 * GELU_QUICK (x sigmoid(c x)): s (1 + c x (1 - s)), s = sigmoid(c x).
 * NULL when a constructor failed (logged).
 */
static struct ggml_tensor *activation_slope(struct ggml_context *ctx, enum ggml_glu_op op, struct ggml_tensor *x)
{
    if (op == GGML_GLU_OP_REGLU)
        return ggml_step(ctx, x);
    if (op == GGML_GLU_OP_GEGLU_QUICK) {
        struct ggml_tensor *s = ggml_sigmoid(ctx, ggml_scale(ctx, x, GELU_QUICK_C));
        struct ggml_tensor *t = GGML__THEN(s, ggml_mul(ctx, x, ggml_scale_bias(ctx, s, -1.0f, 1.0f)));
        return GGML__THEN(t, ggml_mul(ctx, s, ggml_scale_bias(ctx, t, GELU_QUICK_C, 1.0f)));
    }
    struct ggml_tensor *x2 = ggml_sqr(ctx, x);
    struct ggml_tensor *u = GGML__THEN(x2, ggml_scale(ctx, ggml_mul(ctx, x, ggml_scale_bias(ctx, x2, GELU_A, 1.0f)), GELU_K));
    struct ggml_tensor *t = GGML__THEN(u, ggml_tanh(ctx, u));
    struct ggml_tensor *du = GGML__THEN(t, ggml_scale_bias(ctx, x2, 3.0f * GELU_A * GELU_K, GELU_K));
    struct ggml_tensor *far = GGML__THEN(du, ggml_mul(ctx, ggml_mul(ctx, x, ggml_scale_bias(ctx, ggml_sqr(ctx, t), -1.0f, 1.0f)), du));
    return GGML__THEN(far, ggml_add(ctx, ggml_scale_bias(ctx, t, 0.5f, 0.5f), ggml_scale(ctx, far, 0.5f)));
}

/* Backward of one UNARY node; i0 is the slot of its source. */
static void unary_backward(struct backward *b, struct ggml_tensor *node, struct ggml_tensor *grad, size_t i0)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *x = node->src[0];
    switch (ggml_get_unary_op(node)) {
    case GGML_UNARY_OP_ABS:
        add_grad(b, i0, ggml_mul(ctx, ggml_sgn(ctx, x), grad));
        break;
    case GGML_UNARY_OP_NEG:
        sub_grad(b, i0, grad);
        break;
    case GGML_UNARY_OP_RELU:
        add_grad(b, i0, ggml_mul(ctx, ggml_step(ctx, x), grad));
        break;
    case GGML_UNARY_OP_SILU:
        add_grad(b, i0, ggml_silu_back(ctx, grad, x));
        break;
    case GGML_UNARY_OP_EXP:
        add_grad(b, i0, ggml_mul(ctx, node, grad));
        break;
    case GGML_UNARY_OP_EXPM1:
        add_grad(b, i0, ggml_mul(ctx, grad, ggml_exp(ctx, x)));
        break;
    case GGML_UNARY_OP_SOFTPLUS:
        add_grad(b, i0, ggml_mul(ctx, grad, ggml_sigmoid(ctx, x)));
        break;
    case GGML_UNARY_OP_GELU:
        add_grad(b, i0, ggml_mul(ctx, grad, activation_slope(ctx, GGML_GLU_OP_GEGLU, x)));
        break;
    case GGML_UNARY_OP_GELU_QUICK:
        add_grad(b, i0, ggml_mul(ctx, grad, activation_slope(ctx, GGML_GLU_OP_GEGLU_QUICK, x)));
        break;
    case GGML_UNARY_OP_FLOOR:
    case GGML_UNARY_OP_CEIL:
    case GGML_UNARY_OP_ROUND:
    case GGML_UNARY_OP_TRUNC:
        /* piecewise constant: an explicit zero gradient (its derivative wherever it has one) */
        add_grad(b, i0, ggml_scale(ctx, grad, 0.0f));
        break;
    default:
        break; /* SGN, STEP: zero gradient; others were refused by check_differentiable */
    }
}

/* Backward of a ROPE node into its src0 (positions src1 and factors src2 get none). */
static struct ggml_tensor *rope_backward(struct ggml_context *ctx, struct ggml_tensor *node, struct ggml_tensor *grad)
{
    const int n_dims = ggml__get_op_params_i32(node, 1);
    const int mode = ggml__get_op_params_i32(node, 2);
    const int n_ctx_orig = ggml__get_op_params_i32(node, 4);
    const float freq_base = ggml__get_op_params_f32(node, 5);
    const float freq_scale = ggml__get_op_params_f32(node, 6);
    const float ext_factor = ggml__get_op_params_f32(node, 7);
    const float attn_factor = ggml__get_op_params_f32(node, 8);
    const float beta_fast = ggml__get_op_params_f32(node, 9);
    const float beta_slow = ggml__get_op_params_f32(node, 10);
    int sections[GGML_MROPE_SECTIONS];
    for (int k = 0; k < GGML_MROPE_SECTIONS; k++)
        sections[k] = ggml__get_op_params_i32(node, 11 + k);
    struct ggml_tensor *pos = node->src[1], *factors = node->src[2];
    /* one position per row: plain rope; four per row: multi-section rope */
    if (grad->ne[2] == pos->ne[0])
        return ggml_rope_ext_back(ctx, grad, pos, factors, n_dims, mode, n_ctx_orig, freq_base, freq_scale,
                                  ext_factor, attn_factor, beta_fast, beta_slow);
    return ggml_rope_multi_back(ctx, grad, pos, factors, n_dims, sections, mode, n_ctx_orig, freq_base,
                                freq_scale, ext_factor, attn_factor, beta_fast, beta_slow);
}

/* Strides and offset of a SET or ACC node: op_params i32 { nb1, nb2, nb3, offset }. */
static void placement(const struct ggml_tensor *node, size_t *nb1, size_t *nb2, size_t *nb3, size_t *offset)
{
    *nb1 = (size_t) ggml__get_op_params_i32(node, 0);
    *nb2 = (size_t) ggml__get_op_params_i32(node, 1);
    *nb3 = (size_t) ggml__get_op_params_i32(node, 2);
    *offset = (size_t) ggml__get_op_params_i32(node, 3);
}

/* Gradient of the part of node that src1 of SET or ACC covers, with src1's shape. */
static struct ggml_tensor *placed_part(struct ggml_context *ctx, struct ggml_tensor *node, struct ggml_tensor *grad)
{
    size_t nb1, nb2, nb3, offset;
    const struct ggml_tensor *part = node->src[1];
    placement(node, &nb1, &nb2, &nb3, &offset);
    return ggml_view_4d(ctx, grad, part->ne[0], part->ne[1], part->ne[2], part->ne[3], nb1, nb2, nb3, offset);
}

/* Backward of a VIEW node: grad placed where the view sits in its source, in the gradient's element size. */
static void view_backward(struct backward *b, struct ggml_tensor *node, struct ggml_tensor *grad, size_t i0)
{
    const struct ggml_tensor *src = node->src[0];
    const struct ggml_tensor *have = b->cgraph->grads[i0];
    size_t offset;
    memcpy(&offset, node->op_params, sizeof offset);
    size_t nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];
    if (have != NULL && have->type != src->type) {
        const size_t from = ggml_element_size(src), to = ggml_element_size(have);
        offset = offset / from * to;
        nb1 = nb1 / from * to;
        nb2 = nb2 / from * to;
        nb3 = nb3 / from * to;
    }
    acc_grad(b, i0, grad, nb1, nb2, nb3, offset);
}

/* Axes that undo a PERMUTE node: op_params i32 { axis0..axis3 }. */
static struct ggml_tensor *unpermute(struct ggml_context *ctx, struct ggml_tensor *node, struct ggml_tensor *grad)
{
    int back[4] = { 0, 1, 2, 3 };
    for (int k = 0; k < 4; k++)
        back[ggml__get_op_params_i32(node, k) & 3] = k;
    return ggml_permute(ctx, grad, back[0], back[1], back[2], back[3]);
}

/* Elementwise and reduction ops; true when node's op is one of them. */
static bool arith_backward(struct backward *b, struct ggml_tensor *node, struct ggml_tensor *grad,
                           size_t i0, size_t i1)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *x = node->src[0], *y = node->src[1];
    const bool n0 = i0 != GGML__HASHSET_FULL, n1 = i1 != GGML__HASHSET_FULL;
    switch (node->op) {
    case GGML_OP_DUP:
        if (n0) add_grad(b, i0, grad);
        return true;
    case GGML_OP_ADD:
        if (n0) add_grad(b, i0, grad);
        if (n1) add_grad(b, i1, ggml_are_same_shape(x, y) ? grad : ggml_repeat_back(ctx, grad, y));
        return true;
    case GGML_OP_ADD1:
        if (n0) add_grad(b, i0, grad);
        /* d/db of a + b (b one value) is the sum of the gradient (upstream takes the
           mean of the rows, which has b's shape only for a vector) */
        if (n1) add_grad(b, i1, ggml_sum(ctx, grad));
        return true;
    case GGML_OP_SUB:
        if (n0) add_grad(b, i0, grad);
        if (n1) sub_grad(b, i1, ggml_are_same_shape(x, y) ? grad : ggml_repeat_back(ctx, grad, y));
        return true;
    case GGML_OP_MUL:
        if (n0) add_grad(b, i0, ggml_mul(ctx, grad, y));
        if (n1) {
            struct ggml_tensor *t = ggml_mul(ctx, x, grad);
            add_grad(b, i1, ggml_are_same_shape(x, y) ? t : ggml_repeat_back(ctx, t, y));
        }
        return true;
    case GGML_OP_DIV:
        if (n0) add_grad(b, i0, ggml_div(ctx, grad, y));
        if (n1) {
            struct ggml_tensor *t = ggml_mul(ctx, grad, ggml_div(ctx, node, y));
            sub_grad(b, i1, ggml_are_same_shape(x, y) ? t : ggml_repeat_back(ctx, t, y));
        }
        return true;
    case GGML_OP_SQR:
        if (n0) add_grad(b, i0, ggml_scale(ctx, ggml_mul(ctx, x, grad), 2.0f));
        return true;
    case GGML_OP_SQRT:
        if (n0) add_grad(b, i0, ggml_scale(ctx, ggml_div(ctx, grad, node), 0.5f));
        return true;
    case GGML_OP_LOG:
        if (n0) add_grad(b, i0, ggml_div(ctx, grad, x));
        return true;
    case GGML_OP_SIN:
        if (n0) add_grad(b, i0, ggml_mul(ctx, grad, ggml_cos(ctx, x)));
        return true;
    case GGML_OP_COS:
        if (n0) sub_grad(b, i0, ggml_mul(ctx, grad, ggml_sin(ctx, x)));
        return true;
    case GGML_OP_SUM:
        if (n0) add_scalar_grad(b, i0, grad);
        return true;
    case GGML_OP_SUM_ROWS:
        if (n0) add_grad(b, i0, ggml_repeat(ctx, grad, x));
        return true;
    case GGML_OP_MEAN:
        if (n0) add_scalar_grad(b, i0, ggml_scale(ctx, grad, 1.0f / (float) x->ne[0]));
        return true;
    case GGML_OP_REPEAT:
        if (n0) add_grad(b, i0, ggml_repeat_back(ctx, grad, x));
        return true;
    case GGML_OP_REPEAT_BACK:
        if (n0) add_grad(b, i0, ggml_repeat(ctx, grad, x));
        return true;
    case GGML_OP_SCALE:
        if (n0) add_grad(b, i0, ggml_scale(ctx, grad, ggml__get_op_params_f32(node, 0)));
        return true;
    case GGML_OP_MUL_MAT:
        if (n0) add_grad(b, i0, mul_mat_grad_a(ctx, x, y, grad));
        if (n1) add_grad(b, i1, ggml_out_prod(ctx, x, ggml_transpose(ctx, grad)));
        return true;
    default:
        return false;
    }
}

/* Copies, views and layout ops; true when node's op is one of them. */
static bool layout_backward(struct backward *b, struct ggml_tensor *node, struct ggml_tensor *grad,
                            size_t i0, size_t i1)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *x = node->src[0], *y = node->src[1];
    const bool n0 = i0 != GGML__HASHSET_FULL, n1 = i1 != GGML__HASHSET_FULL;
    size_t nb1, nb2, nb3, offset;
    switch (node->op) {
    case GGML_OP_ACC:
        if (n0) add_grad(b, i0, grad);
        if (n1) add_grad(b, i1, ggml_reshape(ctx, ggml_cont(ctx, placed_part(ctx, node, grad)), y));
        return true;
    case GGML_OP_SET:
        /* src0 keeps its gradient outside the part src1 overwrote */
        placement(node, &nb1, &nb2, &nb3, &offset);
        if (n0)
            add_grad(b, i0, ggml_acc(ctx, grad, ggml_neg(ctx, placed_part(ctx, node, grad)), nb1, nb2, nb3, offset));
        if (n1) add_grad(b, i1, ggml_reshape(ctx, ggml_cont(ctx, placed_part(ctx, node, grad)), y));
        return true;
    case GGML_OP_CPY:
        /* the destination src1 is overwritten: no gradient flows to it */
        if (n0) add_grad(b, i0, ggml_reshape(ctx, grad, x));
        return true;
    case GGML_OP_CONT:
        if (n0) add_grad(b, i0, ggml_are_same_shape(node, x) ? grad : ggml_reshape(ctx, grad, x));
        return true;
    case GGML_OP_RESHAPE:
        if (n0) add_grad(b, i0, ggml_reshape(ctx, ggml_is_contiguous(grad) ? grad : ggml_cont(ctx, grad), x));
        return true;
    case GGML_OP_VIEW:
        if (n0) view_backward(b, node, grad, i0);
        return true;
    case GGML_OP_PERMUTE:
        if (n0) add_grad(b, i0, unpermute(ctx, node, grad));
        return true;
    case GGML_OP_TRANSPOSE:
        if (n0) add_grad(b, i0, ggml_transpose(ctx, grad));
        return true;
    case GGML_OP_GET_ROWS:
        if (n0) add_grad(b, i0, ggml_get_rows_back(ctx, grad, y, x));
        return true;
    default:
        return false;
    }
}

/* The remaining differentiable ops (activations, attention pieces, loss). */
/* The activation of a gated unit at x. */
static struct ggml_tensor *activation(struct ggml_context *ctx, enum ggml_glu_op op, struct ggml_tensor *x)
{
    switch (op) {
    case GGML_GLU_OP_SWIGLU: return ggml_silu(ctx, x);
    case GGML_GLU_OP_REGLU: return ggml_relu(ctx, x);
    case GGML_GLU_OP_GEGLU_QUICK: return ggml_gelu_quick(ctx, x);
    default: return ggml_gelu(ctx, x);
    }
}

/*
 * GLU: node = act(x) * g, act SiLU (SWIGLU), ReLU (REGLU), GELU in its
 * tanh form (GEGLU) or GELU_QUICK (GEGLU_QUICK); x and g are src[0] and
 * src[1] (split), or the two halves of each row of src[0], x the first
 * unless swapped, whose gradient is then the two halves' gradients side
 * by side.
 */
static void glu_backward(struct backward *b, struct ggml_tensor *node, struct ggml_tensor *grad, size_t i0, size_t i1)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *src = node->src[0], *x = src, *g = node->src[1];
    const enum ggml_glu_op op = ggml_get_glu_op(node);
    const bool split = g != NULL, silu = op == GGML_GLU_OP_SWIGLU;
    const bool swapped = !split && ggml__get_op_params_i32(node, 1) != 0;
    if (i0 == GGML__HASHSET_FULL && i1 == GGML__HASHSET_FULL)
        return;
    if (!split) {
        const size_t half = (size_t) node->ne[0] * ggml_element_size(src);
        x = ggml_view_4d(ctx, src, node->ne[0], src->ne[1], src->ne[2], src->ne[3], src->nb[1], src->nb[2], src->nb[3],
                         swapped ? half : 0);
        g = ggml_view_4d(ctx, src, node->ne[0], src->ne[1], src->ne[2], src->ne[3], src->nb[1], src->nb[2], src->nb[3],
                         swapped ? 0 : half);
    }
    const bool need_dx = !split || i0 != GGML__HASHSET_FULL, need_dg = !split || i1 != GGML__HASHSET_FULL;
    struct ggml_tensor *dx = NULL, *dg = NULL;
    if (need_dx)
        dx = silu ? ggml_silu_back(ctx, ggml_mul(ctx, grad, g), x)
                  : GGML__THEN(x, ggml_mul(ctx, activation_slope(ctx, op, x), ggml_mul(ctx, grad, g)));
    if (need_dg)
        dg = GGML__THEN(x, ggml_mul(ctx, activation(ctx, op, x), grad));
    if (split) {
        if (need_dx)
            add_grad(b, i0, dx);
        if (need_dg)
            add_grad(b, i1, dg);
    } else {
        add_grad(b, i0, swapped ? ggml_concat(ctx, dg, dx, 0) : ggml_concat(ctx, dx, dg, 0));
    }
}

/* POOL_1D through POOL_2D's gradient: rows of x as images of height 1. */
static struct ggml_tensor *pool_1d_backward(struct ggml_context *ctx, struct ggml_tensor *node, struct ggml_tensor *grad)
{
    struct ggml_tensor *x = node->src[0];
    if (!ggml_is_contiguous(x))
        x = ggml_cont(ctx, x);
    struct ggml_tensor *x4 = GGML__THEN(x, ggml_reshape_4d(ctx, x, x->ne[0], 1, x->ne[1], x->ne[2] * x->ne[3]));
    struct ggml_tensor *g = ggml_is_contiguous(grad) ? grad : ggml_cont(ctx, grad);
    struct ggml_tensor *g4 = GGML__THEN(g, ggml_reshape_4d(ctx, g, g->ne[0], 1, g->ne[1], g->ne[2] * g->ne[3]));
    struct ggml_tensor *d4 = GGML__THEN(x4, GGML__THEN(g4, ggml_pool_2d_back(ctx, g4, x4, (enum ggml_op_pool) ggml__get_op_params_i32(node, 0),
                                                                ggml__get_op_params_i32(node, 1), 1,
                                                                ggml__get_op_params_i32(node, 2), 1,
                                                                (float) ggml__get_op_params_i32(node, 3), 0.0f)));
    return GGML__THEN(d4, ggml_reshape_4d(ctx, d4, node->src[0]->ne[0], node->src[0]->ne[1], node->src[0]->ne[2],
                                    node->src[0]->ne[3]));
}

/* DIAG (x [n, 1, ...] on the diagonal of [n, n, ...]): x's gradient is grad's diagonal. */
static struct ggml_tensor *diag_backward(struct ggml_context *ctx, struct ggml_tensor *x, struct ggml_tensor *grad)
{
    struct ggml_tensor *d = ggml_view_4d(ctx, grad, 1, grad->ne[1], grad->ne[2], grad->ne[3], grad->nb[1] + grad->nb[0],
                                         grad->nb[2], grad->nb[3], 0);
    d = GGML__THEN(d, ggml_cont(ctx, d));
    return GGML__THEN(d, ggml_reshape_4d(ctx, d, x->ne[0], x->ne[1], x->ne[2], x->ne[3]));
}

static void other_backward(struct backward *b, struct ggml_tensor *node, struct ggml_tensor *grad,
                           size_t i0, size_t i1)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *x = node->src[0], *y = node->src[1];
    const bool n0 = i0 != GGML__HASHSET_FULL, n1 = i1 != GGML__HASHSET_FULL;
    switch (node->op) {
    case GGML_OP_RMS_NORM:
        if (n0) add_grad(b, i0, ggml_rms_norm_back(ctx, grad, x, ggml__get_op_params_f32(node, 0)));
        break;
    case GGML_OP_DIAG_MASK_INF:
    case GGML_OP_DIAG_MASK_ZERO:
        /* masked entries do not depend on the input */
        if (n0) add_grad(b, i0, ggml_diag_mask_zero(ctx, grad, ggml__get_op_params_i32(node, 0)));
        break;
    case GGML_OP_SOFT_MAX:
        if (n0)
            add_grad(b, i0, ggml_soft_max_ext_back(ctx, grad, node, ggml__get_op_params_f32(node, 0),
                                                   ggml__get_op_params_f32(node, 1)));
        break;
    case GGML_OP_ROPE:
        if (n0) add_grad(b, i0, rope_backward(ctx, node, grad));
        break;
    case GGML_OP_UNARY:
        if (n0) unary_backward(b, node, grad, i0);
        break;
    case GGML_OP_CROSS_ENTROPY_LOSS:
        if (n0) add_grad(b, i0, ggml_cross_entropy_loss_back(ctx, grad, x, y));
        break;
    case GGML_OP_IM2COL:
        /* the kernel x only gives the extents; the input y gets the gradient */
        if (n1)
            add_grad(b, i1, ggml_im2col_back(ctx, grad, x, y->ne, ggml__get_op_params_i32(node, 0),
                                             ggml__get_op_params_i32(node, 1), ggml__get_op_params_i32(node, 2),
                                             ggml__get_op_params_i32(node, 3), ggml__get_op_params_i32(node, 4),
                                             ggml__get_op_params_i32(node, 5), ggml__get_op_params_i32(node, 6) == 1));
        break;
    case GGML_OP_POOL_2D:
        if (n0)
            add_grad(b, i0, ggml_pool_2d_back(ctx, grad, x, (enum ggml_op_pool) ggml__get_op_params_i32(node, 0),
                                              ggml__get_op_params_i32(node, 1), ggml__get_op_params_i32(node, 2),
                                              ggml__get_op_params_i32(node, 3), ggml__get_op_params_i32(node, 4),
                                              (float) ggml__get_op_params_i32(node, 5),
                                              (float) ggml__get_op_params_i32(node, 6)));
        break;
    case GGML_OP_GLU:
        glu_backward(b, node, grad, i0, i1);
        break;
    case GGML_OP_POOL_1D:
        if (n0) add_grad(b, i0, pool_1d_backward(ctx, node, grad));
        break;
    case GGML_OP_CUMSUM:
        /* x_j reaches every output from j on: the sum of grad from j to the row's end */
        if (n0)
            add_grad(b, i0, ggml_add(ctx, ggml_sub(ctx, grad, ggml_cumsum(ctx, grad)), ggml_sum_rows(ctx, grad)));
        break;
    case GGML_OP_TRI:
        /* the kept triangle passes its gradient on, the rest is constant */
        if (n0) add_grad(b, i0, ggml_tri(ctx, grad, (enum ggml_tri_type) ggml__get_op_params_i32(node, 0)));
        break;
    case GGML_OP_FILL:
        /* the input gives only the shape */
        if (n0) add_grad(b, i0, ggml_scale(ctx, grad, 0.0f));
        break;
    case GGML_OP_DIAG:
        if (n0) add_grad(b, i0, diag_backward(ctx, x, grad));
        break;
    default:
        break;
    }
}

/* Adds the gradients of node's sources that need one, given node's gradient. */
static void node_backward(struct backward *b, struct ggml_tensor *node)
{
    struct ggml_cgraph *cgraph = b->cgraph;
    struct ggml_tensor *grad = cgraph->grads[slot_of(cgraph, node)];
    if (grad == NULL || node->op == GGML_OP_NONE)
        return;
    const unsigned ignored = ignored_sources(node);
    size_t src_slot[2];
    for (int j = 0; j < 2; j++) {
        const size_t s = slot_of(cgraph, node->src[j]);
        src_slot[j] = s != GGML__HASHSET_FULL && b->needed[s] && !((ignored >> j) & 1u) ? s : GGML__HASHSET_FULL;
    }
    if (!arith_backward(b, node, grad, src_slot[0], src_slot[1]) &&
        !layout_backward(b, node, grad, src_slot[0], src_slot[1]))
        other_backward(b, node, grad, src_slot[0], src_slot[1]);
}

/* Checks the call's arguments and that the graph has a parameter and a loss; logs why not. */
static bool check_graph(struct ggml_context *ctx, struct ggml_cgraph *cgraph)
{
    if (ctx == NULL || cgraph == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC, "%s is NULL", ctx == NULL ? "ctx" : "cgraph");
        return false;
    }
    if (cgraph->grads == NULL || cgraph->grad_accs == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC, "graph has no gradient slots (create it with grads = true)");
        return false;
    }
    bool any_param = false, any_loss = false;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        any_param = any_param || (cgraph->nodes[i]->flags & GGML_TENSOR_FLAG_PARAM);
        any_loss = any_loss || (cgraph->nodes[i]->flags & GGML_TENSOR_FLAG_LOSS);
    }
    if (!any_param || !any_loss) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC, "graph has no %s (see %s)", any_param ? "loss" : "parameter",
                     any_param ? "ggml_set_loss" : "ggml_set_param");
        return false;
    }
    return true;
}

/*
 * Arguments: ctx receives the gradient tensors; cgraph a forward graph
 * with gradient slots holding at least one parameter and one loss;
 * grad_accs NULL, or one entry per forward node (NULL or the accumulator
 * of that node's gradient, same shape).
 * Effect: the graph's gradients and accumulators are replaced; the
 * gradient nodes are appended.  A refused graph (logged) is left as it
 * was; a context that runs out of memory midway marks the graph failed.
 */
void ggml_build_backward_expand(struct ggml_context *ctx, struct ggml_cgraph *cgraph, struct ggml_tensor **grad_accs)
{
    if (!check_graph(ctx, cgraph))
        return;
    const size_t hash_size = cgraph->visited_hash_set.size;
    struct backward b = { ctx, cgraph, calloc(hash_size, sizeof(bool)), true };
    if (b.needed == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, FUNC, "out of memory");
        return;
    }
    if (!mark_needed(&b) || !check_differentiable(&b, grad_accs)) {
        free(b.needed);
        return;
    }

    memset(cgraph->grads, 0, hash_size * sizeof *cgraph->grads);
    memset(cgraph->grad_accs, 0, hash_size * sizeof *cgraph->grad_accs);
    const int n_forward = cgraph->n_nodes;
    for (int i = 0; i < n_forward && b.ok; i++) {
        struct ggml_tensor *node = cgraph->nodes[i];
        const size_t s = slot_of(cgraph, node);
        if (!b.needed[s])
            continue;
        struct ggml_tensor *acc = grad_accs != NULL ? grad_accs[i] : NULL;
        if (acc == NULL && (node->flags & GGML_TENSOR_FLAG_LOSS)) {
            acc = ggml_new_tensor(ctx, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            b.ok = acc != NULL;
        }
        cgraph->grad_accs[s] = acc;
        cgraph->grads[s] = acc;
    }
    for (int i = n_forward - 1; i >= 0 && b.ok; i--)
        node_backward(&b, cgraph->nodes[i]);
    if (!b.ok)
        cgraph->failed = true;
    free(b.needed);
}
