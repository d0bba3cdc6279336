/*
 * graph.c - computation graphs: creation inside a context, forward
 * expansion, copies, lookups, printing and Graphviz output.
 *
 * Memory of a graph (one context object):
 *   struct ggml_cgraph | nodes[size] | leafs[size] | hash keys[hash_size]
 *   | grads[hash_size] | grad_accs[hash_size] (with grads only)
 *   | use_counts[hash_size] | used bitset
 * where hash_size = ggml__hash_size(2 * size) so that every node and leaf
 * fits in the visited set with room to spare.
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "ggml-cpu.h"
#include "ggml-backend.h"

static size_t graph_hash_size(size_t size)
{
    return ggml__hash_size(size * 2);
}

static size_t graph_nbytes(size_t size, bool grads)
{
    const size_t hash_size = graph_hash_size(size);
    size_t nbytes = sizeof(struct ggml_cgraph);
    nbytes += size * sizeof(struct ggml_tensor *) * 2;                 /* nodes, leafs */
    nbytes += hash_size * sizeof(struct ggml_tensor *);               /* hash keys */
    if (grads)
        nbytes += hash_size * sizeof(struct ggml_tensor *) * 2;       /* grads, grad_accs */
    nbytes += hash_size * sizeof(int32_t);                            /* use_counts */
    nbytes += ggml__bitset_size(hash_size) * sizeof(uint32_t);        /* used */
    return nbytes;
}

/* Largest size whose memory computation cannot overflow. */
#define GRAPH_MAX_SIZE ((size_t) INT_MAX / 4)

size_t ggml_graph_overhead_custom(size_t size, bool grads)
{
    if (size == 0 || size > GRAPH_MAX_SIZE) {
        ggml__error("graph size %zu is outside 1..%zu", size, GRAPH_MAX_SIZE);
        return 0;
    }
    return GGML__OBJECT_SIZE + GGML_PAD(graph_nbytes(size, grads), GGML_MEM_ALIGN);
}

size_t ggml_graph_overhead(void)
{
    return ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, false);
}

struct ggml_cgraph *ggml_new_graph_custom(struct ggml_context *ctx, size_t size, bool grads)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return NULL;
    }
    if (size == 0 || size > GRAPH_MAX_SIZE) {
        ggml__error("graph size %zu is outside 1..%zu", size, GRAPH_MAX_SIZE);
        return NULL;
    }
    struct ggml_object *obj = ggml__new_object(ctx, GGML_OBJECT_TYPE_GRAPH,
                                               graph_nbytes(size, grads), __func__);
    if (obj == NULL)
        return NULL;

    const size_t hash_size = graph_hash_size(size);
    struct ggml_cgraph *cgraph = (struct ggml_cgraph *) ((char *) ctx->mem_buffer + obj->offs);
    struct ggml_tensor **ptrs = (struct ggml_tensor **) (cgraph + 1);
    struct ggml_tensor **nodes = ptrs;
    struct ggml_tensor **leafs = nodes + size;
    struct ggml_tensor **keys = leafs + size;
    struct ggml_tensor **grads_p = grads ? keys + hash_size : NULL;
    struct ggml_tensor **grad_accs = grads ? grads_p + hash_size : NULL;
    int32_t *use_counts = (int32_t *) (grads ? grad_accs + hash_size : keys + hash_size);
    uint32_t *used = (uint32_t *) (use_counts + hash_size);

    *cgraph = (struct ggml_cgraph) {
        .size = (int) size,
        .n_nodes = 0,
        .n_leafs = 0,
        .nodes = nodes,
        .grads = grads_p,
        .grad_accs = grad_accs,
        .leafs = leafs,
        .use_counts = use_counts,
        .visited_hash_set = { .size = hash_size, .used = used, .keys = keys },
        .order = GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT,
        .failed = false,
    };
    ggml__hash_set_reset(&cgraph->visited_hash_set);
    if (grads) {
        memset(grads_p, 0, hash_size * sizeof *grads_p);
        memset(grad_accs, 0, hash_size * sizeof *grad_accs);
    }
    return cgraph;
}

struct ggml_cgraph *ggml_new_graph(struct ggml_context *ctx)
{
    return ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE, false);
}

bool ggml__graph_failed(const struct ggml_cgraph *cgraph)
{
    return cgraph->failed;
}

struct ggml_cgraph ggml_graph_view(struct ggml_cgraph *cgraph, int i0, int i1)
{
    struct ggml_cgraph view = {
        .size = i1 - i0,
        .n_nodes = i1 - i0,
        .n_leafs = 0,
        .nodes = cgraph->nodes + i0,
        .grads = NULL,
        .grad_accs = NULL,
        .leafs = NULL,
        .use_counts = cgraph->use_counts,
        .visited_hash_set = cgraph->visited_hash_set,
        .order = cgraph->order,
        .failed = cgraph->failed,
    };
    return view;
}

/* --------------------------------------------------------------- building */

/* Appends a tensor whose sources are all in the graph already. */
static bool graph_append(struct ggml_cgraph *cgraph, struct ggml_tensor *node)
{
    if (node->op == GGML_OP_NONE && !(node->flags & GGML_TENSOR_FLAG_PARAM)) {
        if (cgraph->n_leafs >= cgraph->size) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_build_forward_expand",
                         "graph is full: more than %d leafs", cgraph->size);
            return false;
        }
        if (node->name[0] == '\0')
            ggml_format_name(node, "leaf_%d", cgraph->n_leafs);
        cgraph->leafs[cgraph->n_leafs++] = node;
    } else {
        if (cgraph->n_nodes >= cgraph->size) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_build_forward_expand",
                         "graph is full: more than %d nodes", cgraph->size);
            return false;
        }
        if (node->name[0] == '\0')
            ggml_format_name(node, "node_%d", cgraph->n_nodes);
        cgraph->nodes[cgraph->n_nodes++] = node;
    }
    return true;
}

/* Index of the k-th source to visit, honouring the evaluation order. */
static int src_index(const struct ggml_cgraph *cgraph, int k)
{
    return cgraph->order == GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT ? k : GGML_MAX_SRC - 1 - k;
}

struct visit_frame {
    struct ggml_tensor *node;
    int next_src;
    bool fresh;          /* first visit: count edges, append when done */
};

/* A growable stack of frames; false (after logging) when out of memory. */
struct visit_stack {
    struct visit_frame *frames;
    size_t depth;
    size_t capacity;
};

static bool visit_push(struct visit_stack *stack, struct ggml_tensor *node, bool fresh, bool compute)
{
    if (stack->depth == stack->capacity) {
        size_t capacity = stack->capacity ? 2 * stack->capacity : 64;
        struct visit_frame *grown = realloc(stack->frames, capacity * sizeof *grown);
        if (grown == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_build_forward_expand", "out of memory");
            return false;
        }
        stack->frames = grown;
        stack->capacity = capacity;
    }
    /* flagged on entry, so a tensor reached twice is walked once */
    if (compute)
        node->flags |= GGML_TENSOR_FLAG_COMPUTE;
    stack->frames[stack->depth++] = (struct visit_frame) { node, 0, fresh };
    return true;
}

/*
 * Adds root and everything it depends on to the graph: a depth-first
 * post-order walk with an explicit stack (graphs can be deeper than a
 * thread's stack allows for recursion).  A tensor enters the visited set
 * when first reached and is appended once all its sources are; each edge
 * from a newly added tensor counts one use of its source.  With compute,
 * every tensor reached gets GGML_TENSOR_FLAG_COMPUTE, including tensors
 * already in the graph, whose sources are then walked again to pass the
 * flag on without changing order or use counts.
 */
static void graph_visit(struct ggml_cgraph *cgraph, struct ggml_tensor *root, bool compute)
{
    struct ggml_hash_set *visited = &cgraph->visited_hash_set;
    struct visit_stack stack = { NULL, 0, 0 };
    bool ok = true;

    size_t slot = ggml__hash_insert(visited, root);
    if (slot == GGML__HASHSET_FULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_build_forward_expand", "graph hash set is full");
        cgraph->failed = true;
        return;
    }
    if (slot != GGML__HASHSET_ALREADY_EXISTS) {
        cgraph->use_counts[slot] = 0;
        ok = visit_push(&stack, root, true, compute);
    } else if (compute && !(root->flags & GGML_TENSOR_FLAG_COMPUTE)) {
        ok = visit_push(&stack, root, false, compute);
    }

    while (ok && stack.depth > 0) {
        struct visit_frame *top = &stack.frames[stack.depth - 1];
        if (top->next_src == GGML_MAX_SRC) {
            if (top->fresh && !graph_append(cgraph, top->node)) {
                ok = false;
                break;
            }
            stack.depth--;
            continue;
        }
        const bool fresh = top->fresh;
        struct ggml_tensor *src = top->node->src[src_index(cgraph, top->next_src++)];
        if (src == NULL)
            continue;
        if (!fresh) {
            if (compute && !(src->flags & GGML_TENSOR_FLAG_COMPUTE))
                ok = visit_push(&stack, src, false, compute);
            continue;
        }
        size_t src_slot = ggml__hash_insert(visited, src);
        if (src_slot == GGML__HASHSET_FULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_build_forward_expand", "graph hash set is full");
            ok = false;
        } else if (src_slot == GGML__HASHSET_ALREADY_EXISTS) {
            cgraph->use_counts[ggml__hash_find(visited, src)]++;
            if (compute && !(src->flags & GGML_TENSOR_FLAG_COMPUTE))
                ok = visit_push(&stack, src, false, compute);
        } else {
            cgraph->use_counts[src_slot] = 1;
            ok = visit_push(&stack, src, true, compute);
        }
    }
    if (!ok)
        cgraph->failed = true;
    free(stack.frames);
}

/* ggml_build_forward_expand (compute) and ggml_build_forward_order (not), logged as func. */
static void build_forward(struct ggml_cgraph *cgraph, struct ggml_tensor *tensor, bool compute, const char *func)
{
    if (cgraph == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "cgraph is NULL");
        return;
    }
    if (tensor == NULL) {
        /* the constructor that returned NULL has already said why */
        cgraph->failed = true;
        return;
    }
    graph_visit(cgraph, tensor, compute);
}

void ggml_build_forward_expand(struct ggml_cgraph *cgraph, struct ggml_tensor *tensor)
{
    build_forward(cgraph, tensor, true, __func__);
}

void ggml_build_forward_order(struct ggml_cgraph *cgraph, struct ggml_tensor *tensor)
{
    build_forward(cgraph, tensor, false, __func__);
}

struct ggml_tensor *ggml_build_forward_select(struct ggml_cgraph *cgraph, struct ggml_tensor **tensors,
                                              int n_tensors, int idx)
{
    if (cgraph == NULL || tensors == NULL) {
        ggml__error("%s is NULL", cgraph == NULL ? "cgraph" : "tensors");
        return NULL;
    }
    if (n_tensors < 1 || idx < 0 || idx >= n_tensors) {
        ggml__error("idx %d is outside the %d tensors", idx, n_tensors);
        cgraph->failed = true;
        return NULL;
    }
    for (int i = 0; i < n_tensors; i++) {
        if (tensors[i] == NULL) {
            cgraph->failed = true;
            return NULL;
        }
    }
    /* every branch is part of the graph's shape; only one is computed */
    for (int i = 0; i < n_tensors; i++)
        if (i != idx)
            graph_visit(cgraph, tensors[i], false);
    graph_visit(cgraph, tensors[idx], true);
    return tensors[idx];
}

/* ---------------------------------------------------------------- queries */

int ggml_graph_size(struct ggml_cgraph *cgraph)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return 0;
    }
    return cgraph->size;
}

int ggml_graph_n_nodes(struct ggml_cgraph *cgraph)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return 0;
    }
    return cgraph->n_nodes;
}

struct ggml_tensor **ggml_graph_nodes(struct ggml_cgraph *cgraph)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return NULL;
    }
    return cgraph->nodes;
}

struct ggml_tensor *ggml_graph_node(struct ggml_cgraph *cgraph, int i)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return NULL;
    }
    int index = i < 0 ? cgraph->n_nodes + i : i;
    if (index < 0 || index >= cgraph->n_nodes) {
        ggml__error("node %d is outside the graph's %d nodes", i, cgraph->n_nodes);
        return NULL;
    }
    return cgraph->nodes[index];
}

void ggml_graph_add_node(struct ggml_cgraph *cgraph, struct ggml_tensor *tensor)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return;
    }
    if (tensor == NULL) {
        cgraph->failed = true;
        return;
    }
    if (cgraph->n_nodes >= cgraph->size) {
        ggml__error("graph is full: more than %d nodes", cgraph->size);
        cgraph->failed = true;
        return;
    }
    cgraph->nodes[cgraph->n_nodes++] = tensor;
}

struct ggml_tensor *ggml_graph_get_tensor(const struct ggml_cgraph *cgraph, const char *name)
{
    if (cgraph == NULL || name == NULL) {
        ggml__error("%s is NULL", cgraph == NULL ? "cgraph" : "name");
        return NULL;
    }
    for (int i = 0; i < cgraph->n_leafs; i++)
        if (strcmp(cgraph->leafs[i]->name, name) == 0)
            return cgraph->leafs[i];
    for (int i = 0; i < cgraph->n_nodes; i++)
        if (strcmp(cgraph->nodes[i]->name, name) == 0)
            return cgraph->nodes[i];
    return NULL;
}

/* Gradient slot of node, or NULL when the graph has none for it. */
static struct ggml_tensor *graph_grad_slot(struct ggml_tensor *const *array,
                                           const struct ggml_cgraph *cgraph,
                                           const struct ggml_tensor *node)
{
    if (array == NULL || node == NULL)
        return NULL;
    size_t i = ggml__hash_find(&cgraph->visited_hash_set, node);
    if (i == GGML__HASHSET_FULL || !ggml__bitset_get(cgraph->visited_hash_set.used, i))
        return NULL;
    return array[i];
}

struct ggml_tensor *ggml_graph_get_grad(const struct ggml_cgraph *cgraph, const struct ggml_tensor *node)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return NULL;
    }
    return graph_grad_slot(cgraph->grads, cgraph, node);
}

struct ggml_tensor *ggml_graph_get_grad_acc(const struct ggml_cgraph *cgraph, const struct ggml_tensor *node)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return NULL;
    }
    return graph_grad_slot(cgraph->grad_accs, cgraph, node);
}

/* ------------------------------------------------------- copies and reset */

void ggml_graph_cpy(struct ggml_cgraph *src, struct ggml_cgraph *dst)
{
    if (src == NULL || dst == NULL) {
        ggml__error("%s is NULL", src == NULL ? "src" : "dst");
        return;
    }
    if (dst->size < src->n_leafs || dst->size < src->n_nodes ||
        dst->visited_hash_set.size < src->visited_hash_set.size) {
        ggml__error("destination graph (size %d) cannot hold %d nodes and %d leafs",
                    dst->size, src->n_nodes, src->n_leafs);
        return;
    }
    if (src->grads != NULL && dst->grads == NULL) {
        ggml__error("source graph has gradients, destination graph has no room for them");
        return;
    }

    dst->n_leafs = src->n_leafs;
    dst->n_nodes = src->n_nodes;
    dst->order = src->order;
    dst->failed = src->failed;
    /* a graph view has no leaf array */
    if (src->n_leafs > 0)
        memcpy(dst->leafs, src->leafs, (size_t) src->n_leafs * sizeof *src->leafs);
    if (src->n_nodes > 0)
        memcpy(dst->nodes, src->nodes, (size_t) src->n_nodes * sizeof *src->nodes);

    ggml__hash_set_reset(&dst->visited_hash_set);
    if (dst->grads) {
        memset(dst->grads, 0, dst->visited_hash_set.size * sizeof *dst->grads);
        memset(dst->grad_accs, 0, dst->visited_hash_set.size * sizeof *dst->grad_accs);
    }
    const struct ggml_hash_set *from = &src->visited_hash_set;
    for (size_t i = 0; i < from->size; i++) {
        if (!ggml__bitset_get(from->used, i))
            continue;
        size_t slot = ggml__hash_insert(&dst->visited_hash_set, from->keys[i]);
        dst->use_counts[slot] = src->use_counts[i];
        if (src->grads) {
            dst->grads[slot] = src->grads[i];
            dst->grad_accs[slot] = src->grad_accs[i];
        }
    }
}

struct ggml_cgraph *ggml_graph_dup(struct ggml_context *ctx, struct ggml_cgraph *cgraph, bool force_grads)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return NULL;
    }
    struct ggml_cgraph *result =
        ggml_new_graph_custom(ctx, (size_t) cgraph->size, cgraph->grads != NULL || force_grads);
    if (result)
        ggml_graph_cpy(cgraph, result);
    return result;
}

void ggml_graph_clear(struct ggml_cgraph *cgraph)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return;
    }
    cgraph->n_leafs = 0;
    cgraph->n_nodes = 0;
    cgraph->failed = false;
    ggml__hash_set_reset(&cgraph->visited_hash_set);
}

/*
 * Sets every gradient accumulator to zero, except the loss's, set to one
 * (ggml_build_backward_expand gives the loss an F32 accumulator of one
 * element: the seed of the backward pass), and zeroes the moments of the
 * AdamW steps.  The other gradients are computed, not reset.
 * Accumulators without memory yet are skipped.
 */
void ggml_graph_reset(struct ggml_cgraph *cgraph)
{
    if (cgraph == NULL)
        return;
    if (cgraph->grads == NULL) {
        ggml__error("graph has no gradients to reset (create it with grads = true)");
        return;
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor *node = cgraph->nodes[i];
        struct ggml_tensor *grad_acc = ggml_graph_get_grad_acc(cgraph, node);
        if (node->op == GGML_OP_OPT_STEP_ADAMW) {
            for (int m = 2; m <= 3; m++)
                if (node->src[m] != NULL && node->src[m]->data != NULL)
                    ggml_set_zero(node->src[m]);
        }
        if (grad_acc == NULL || grad_acc->data == NULL)
            continue;
        if (!(node->flags & GGML_TENSOR_FLAG_LOSS)) {
            ggml_set_zero(grad_acc);
        } else if (grad_acc->type != GGML_TYPE_F32 || ggml_nelements(grad_acc) != 1) {
            ggml__error("the loss '%s' has a gradient of %" PRId64 " %s values; want one f32 value",
                        node->name, ggml_nelements(grad_acc), ggml_type_name(grad_acc->type));
        } else {
            const float one = 1.0f;
            if (grad_acc->buffer != NULL)
                ggml_backend_tensor_set(grad_acc, &one, 0, sizeof one);
            else
                memcpy(grad_acc->data, &one, sizeof one);
        }
    }
}

/* ------------------------------------------------------------ diagnostics */

static void format_shape(char *out, size_t size, const struct ggml_tensor *t)
{
    snprintf(out, size, "%" PRId64 " x %" PRId64 " x %" PRId64 " x %" PRId64,
             t->ne[0], t->ne[1], t->ne[2], t->ne[3]);
}

void ggml_graph_print(const struct ggml_cgraph *cgraph)
{
    if (cgraph == NULL) {
        ggml__error("cgraph is NULL");
        return;
    }
    char shape[128];
    ggml__log_raw(GGML_LOG_LEVEL_INFO, "graph: %d nodes, %d leafs%s\n", cgraph->n_nodes,
                  cgraph->n_leafs, cgraph->failed ? " (failed: built from a NULL tensor)" : "");
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor *node = cgraph->nodes[i];
        format_shape(shape, sizeof shape, node);
        ggml__log_raw(GGML_LOG_LEVEL_INFO, "  node %4d: [%s] %-12s %-6s %s%s\n", i, shape,
                      ggml_op_desc(node), ggml_type_name(node->type), node->name,
                      (node->flags & GGML_TENSOR_FLAG_PARAM) ? " (param)" : "");
    }
    for (int i = 0; i < cgraph->n_leafs; i++) {
        const struct ggml_tensor *leaf = cgraph->leafs[i];
        format_shape(shape, sizeof shape, leaf);
        ggml__log_raw(GGML_LOG_LEVEL_INFO, "  leaf %4d: [%s] %-12s %-6s %s\n", i, shape,
                      ggml_op_name(leaf->op), ggml_type_name(leaf->type), leaf->name);
    }
}

/* Writes s as the body of a double-quoted Graphviz string. */
static void dot_escape(FILE *fp, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\' || *s == '{' || *s == '}' || *s == '|' || *s == '<' || *s == '>')
            fputc('\\', fp);
        fputc(*s, fp);
    }
}

static bool graph_has_node(const struct ggml_cgraph *cgraph, const struct ggml_tensor *t)
{
    return cgraph != NULL && ggml__hash_contains(&cgraph->visited_hash_set, t);
}

void ggml_graph_dump_dot(const struct ggml_cgraph *gb, const struct ggml_cgraph *gf, const char *filename)
{
    if (gb == NULL || filename == NULL) {
        ggml__error("%s is NULL", gb == NULL ? "gb" : "filename");
        return;
    }
    FILE *fp = fopen(filename, "w");
    if (fp == NULL) {
        ggml__error("cannot open '%s' for writing", filename);
        return;
    }

    char shape[128];
    fprintf(fp, "digraph ggml_graph {\n  newrank = true;\n  rankdir = TB;\n");
    for (int i = 0; i < gb->n_nodes; i++) {
        const struct ggml_tensor *node = gb->nodes[i];
        /* nodes also present in the forward graph gf are drawn plain */
        const char *color = (node->flags & GGML_TENSOR_FLAG_PARAM) ? "yellow"
                            : (gf != NULL && gf != gb && !graph_has_node(gf, node)) ? "lightblue"
                            : "white";
        format_shape(shape, sizeof shape, node);
        fprintf(fp, "  \"%p\" [style = filled; fillcolor = %s; shape = record; label = \"",
                (const void *) node, color);
        dot_escape(fp, node->name);
        fprintf(fp, " (%s)|%d [%s]|", ggml_type_name(node->type), i, shape);
        dot_escape(fp, ggml_op_desc(node));
        fprintf(fp, "\"; ];\n");
    }
    for (int i = 0; i < gb->n_leafs; i++) {
        const struct ggml_tensor *leaf = gb->leafs[i];
        format_shape(shape, sizeof shape, leaf);
        fprintf(fp, "  \"%p\" [style = filled; fillcolor = pink; shape = record; label = \"<x>",
                (const void *) leaf);
        dot_escape(fp, leaf->name);
        fprintf(fp, " (%s)|[%s]\"; ];\n", ggml_type_name(leaf->type), shape);
    }
    for (int i = 0; i < gb->n_nodes; i++) {
        const struct ggml_tensor *node = gb->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (node->src[j] == NULL)
                continue;
            fprintf(fp, "  \"%p\" -> \"%p\" [label = \"src%d\"; ];\n",
                    (const void *) node->src[j], (const void *) node, j);
        }
    }
    fprintf(fp, "}\n");
    if (fclose(fp) != 0)
        ggml__error("error writing '%s'", filename);
    else
        ggml__log_raw(GGML_LOG_LEVEL_INFO, "%s: wrote %s; render with: dot -Tpng %s -o %s.png\n",
                      __func__, filename, filename, filename);
}
