/*
 * ggml-impl.h - internal declarations shared by the modules of the tensor core.
 *
 * Not installed.  Names shared across files carry the ggml__ marker; names
 * local to one file are static.  Every .c file includes config.h first, then
 * this header.
 */
#ifndef GGML_BACKEND_GGML_IMPL_H
#define GGML_BACKEND_GGML_IMPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ggml.h"

/* ---------------------------------------------------------------- logging */

/*
 * Sends one message to the installed log callback (stderr by default).
 * func names the public entry point that detected the problem; the message
 * becomes "func: text\n".
 */
void ggml__log_at(enum ggml_log_level level, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sends text unchanged (no prefix, no newline added). */
void ggml__log_raw(enum ggml_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ERROR messages the calling thread has logged so far: a wrapper compares
 * it before and after a call to report a failure the call left unreported,
 * and only then (one failure, one message). */
unsigned ggml__errors_logged(void);

#define ggml__error(...) ggml__log_at(GGML_LOG_LEVEL_ERROR, __func__, __VA_ARGS__)
#define ggml__warn(...)  ggml__log_at(GGML_LOG_LEVEL_WARN, __func__, __VA_ARGS__)
#define ggml__info(...)  ggml__log_at(GGML_LOG_LEVEL_INFO, __func__, __VA_ARGS__)
#define ggml__debug(...) ggml__log_at(GGML_LOG_LEVEL_DEBUG, __func__, __VA_ARGS__)

/*
 * expr (a tensor computed from t), or NULL without evaluating expr when t
 * is NULL: chains of constructors where a failed one has logged already
 * and the next must not log again about its NULL operand.
 */
#define GGML__THEN(t, expr) ((t) != NULL ? (expr) : NULL)

/* --------------------------------------------------- float to integer */

/*
 * v converted to an integer in [min, max] (min <= 0 <= max, each a value
 * of the destination type), defined for every input where C's conversion
 * is not: a value inside the range is truncated toward zero, as C
 * converts; one beyond it saturates to min or max (the infinities too);
 * NaN gives 0.  Every float-to-integer conversion in the library goes
 * through here: element copies to integer types, quantizers (whose levels
 * are the range), indices and sizes computed in floating point.  Callers
 * that round (roundf, floorf, + 0.5) do so before the call.
 */
static inline int64_t ggml__float_to_int(double v, int64_t min, int64_t max)
{
    if (v != v)
        return 0;
    /* (double) INT64_MAX rounds up to 2^63; every other bound is exact */
    return v <= (double) min ? min : v >= (double) max ? max : (int64_t) v;
}

/* ------------------------------------------------------------ type traits */

/* True for a value inside the enum that names a type this library knows. */
bool ggml__type_is_valid(enum ggml_type type);

/* Every type's traits (lib/types.c); removed types have blck_size 0. */
extern const struct ggml_type_traits ggml__type_traits_table[GGML_TYPE_COUNT];

/* Elements per block of a type, 0 for a value outside the enum or a
   removed type: ggml_blck_size without the log, for hot paths. */
static inline int64_t ggml__blck_size_of(enum ggml_type type)
{
    return (unsigned) type < GGML_TYPE_COUNT ? ggml__type_traits_table[type].blck_size : 0;
}

/* Bytes per block of a type whose ggml__blck_size_of is not 0. */
static inline size_t ggml__type_size_of(enum ggml_type type)
{
    return ggml__type_traits_table[type].type_size;
}

/* Bytes spanned by a tensor of this type, shape and strides, from its first
 * byte to past its last (0 if empty, as ggml_nbytes); false when that does
 * not fit in size_t. */
static inline bool ggml__extent_bytes(enum ggml_type type, const int64_t ne[GGML_MAX_DIMS],
                                      const size_t nb[GGML_MAX_DIMS], size_t *bytes)
{
    *bytes = 0;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        if (ne[i] <= 0)
            return true;

    const int64_t blck_size = ggml__blck_size_of(type);
    size_t nbytes, term;
    int first;
    if (blck_size == 0)
        return false;
    /* every count and stride below 2^31: no sum of products can overflow */
    if (((uint64_t) ne[0] | (uint64_t) ne[1] | (uint64_t) ne[2] | (uint64_t) ne[3] | nb[0] | nb[1] | nb[2] |
         nb[3]) < ((uint64_t) 1 << 31)) {
        nbytes = blck_size == 1 ? ggml__type_size_of(type) + (size_t) (ne[0] - 1) * nb[0]
                                : (size_t) ne[0] * nb[0] / (size_t) blck_size;
        *bytes = nbytes + (size_t) (ne[1] - 1) * nb[1] + (size_t) (ne[2] - 1) * nb[2] + (size_t) (ne[3] - 1) * nb[3];
        return true;
    }
    if (blck_size == 1) {
        nbytes = ggml__type_size_of(type);
        first = 0;
    } else {
        /* ne[0] * nb[0] / blck_size, without the product overflowing when the quotient fits */
        const size_t whole = (size_t) (ne[0] / blck_size), part = (size_t) (ne[0] % blck_size);
        size_t part_bytes;
        if (__builtin_mul_overflow(whole, nb[0], &nbytes) || __builtin_mul_overflow(part, nb[0], &part_bytes) ||
            __builtin_add_overflow(nbytes, part_bytes / (size_t) blck_size, &nbytes))
            return false;
        first = 1;
    }
    for (int i = first; i < GGML_MAX_DIMS; i++)
        if (__builtin_mul_overflow((size_t) (ne[i] - 1), nb[i], &term) || __builtin_add_overflow(nbytes, term, &nbytes))
            return false;
    *bytes = nbytes;
    return true;
}

/* ---------------------------------------------------------------- context */

/*
 * A context is one arena.  Objects (tensors, graphs, raw buffers) are carved
 * from it front to back; each starts with a struct ggml_object header and
 * its payload follows at obj->offs from mem_buffer.  Invariant: every
 * payload offset and size is a multiple of GGML_MEM_ALIGN, so
 * ggml_tensor_overhead() bounds the metadata cost of one tensor exactly.
 */
struct ggml_object {
    size_t offs;                 /* payload offset from ctx->mem_buffer */
    size_t size;                 /* payload size in bytes (aligned) */
    struct ggml_object *next;    /* next object in creation order */
    enum ggml_object_type type;
    char padding[4];
};

#define GGML__OBJECT_SIZE sizeof(struct ggml_object)

struct ggml_context {
    size_t mem_size;
    void *mem_buffer;
    bool mem_buffer_owned;       /* ggml_free releases mem_buffer */
    bool no_alloc;               /* tensors get metadata only */
    int n_objects;
    struct ggml_object *objects_begin;
    struct ggml_object *objects_end;
};

/*
 * Appends an object with a payload of at least size bytes to the arena.
 * Returns NULL after logging (on behalf of func) when it does not fit.
 */
struct ggml_object *ggml__new_object(struct ggml_context *ctx, enum ggml_object_type type,
                                     size_t size, const char *func);

/* ---------------------------------------------------------------- tensors */

/*
 * Creates a tensor of the given shape.  When view_src is not NULL the new
 * tensor aliases view_src's data at view_offs (which must lie inside it);
 * otherwise it gets its own data unless the context is no_alloc.  Returns
 * NULL after logging (as func) when the shape is bad or the context is full.
 */
struct ggml_tensor *ggml__new_tensor_impl(struct ggml_context *ctx, enum ggml_type type,
                                          int n_dims, const int64_t *ne,
                                          struct ggml_tensor *view_src, size_t view_offs,
                                          const char *func);

/* Output extent of a convolution as ggml computes it: (in + 2p - d(k-1) - 1)
 * / s + 1 with C's division, which truncates toward zero, so a dilated
 * kernel that overhangs the padded input by less than a stride still gives
 * one output (its taps past the input read as padding); a value < 1 when
 * it overhangs more (in, k, p >= 0; s, d >= 1); GGML__CONV_OUT_OVERFLOW
 * when the padded input's extent exceeds INT64_MAX. */
#define GGML__CONV_OUT_OVERFLOW INT64_MAX
static inline int64_t ggml__conv_out_size(int64_t in, int64_t k, int s, int p, int d)
{
    int64_t reach, padded, span;
    if (__builtin_mul_overflow((int64_t) d, k - 1, &reach) || __builtin_add_overflow(reach, 1, &reach))
        return 0; /* the dilated kernel is longer than any input */
    if (__builtin_add_overflow(in, 2 * (int64_t) p, &padded) || __builtin_sub_overflow(padded, reach, &span))
        return GGML__CONV_OUT_OVERFLOW;
    return span / s + 1;
}

/*
 * Whether ggml_im2col_back can make a result of shape ne from gradient a,
 * kernel b and op_params { s0, s1, p0, p1, d0, d1, is_2D }: the
 * constructor's check, which the CPU backend also applies to nodes that
 * came from elsewhere.
 */
bool ggml__im2col_back_fits(const struct ggml_tensor *a, const struct ggml_tensor *b, const int64_t ne[4],
                            const int32_t params[7]);

/* Whether node (LIGHTNING_INDEXER, DSV4_HC_COMB, DSV4_HC_PRE or
   DSV4_HC_POST) is one its constructor could make: types, shapes, n_iter. */
bool ggml__deepseek_node_fits(const struct ggml_tensor *node);

/* The number of elements of array a (an array, not a pointer). */
#define GGML__COUNT(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A new node of op: a tensor of type and shape (n_dims, ne) with its own
 * data, sources a and b (either may be NULL) and n_params int32 op
 * parameters (params may be NULL when n_params is 0).  NULL after logging
 * as func, like ggml__new_tensor_impl.
 */
struct ggml_tensor *ggml__new_op_node(struct ggml_context *ctx, enum ggml_op op, enum ggml_type type, int n_dims,
                                      const int64_t *ne, struct ggml_tensor *a, struct ggml_tensor *b,
                                      const int32_t *params, size_t n_params, const char *func);

/* ggml_view_tensor / ggml_dup_tensor, logging on behalf of func. */
struct ggml_tensor *ggml__view_tensor_impl(struct ggml_context *ctx, struct ggml_tensor *src,
                                           const char *func);
struct ggml_tensor *ggml__dup_tensor_impl(struct ggml_context *ctx, const struct ggml_tensor *src,
                                          const char *func);

/*
 * Bytes of t's view source (t itself when it is not a view) from t's first
 * byte to its end: the most that any access through t may reach.
 */
size_t ggml__view_room(const struct ggml_tensor *t);

/* ggml_nbytes of a non-NULL tensor, without the argument check: SIZE_MAX
   when its extent does not fit in size_t. */
static inline size_t ggml__nbytes(const struct ggml_tensor *t)
{
    size_t bytes;
    return ggml__extent_bytes(t->type, t->ne, t->nb, &bytes) ? bytes : SIZE_MAX;
}

/* ggml_is_contiguous_rows and ggml_are_same_shape without the argument
   checks, for kernels and the graph walk (non-NULL tensors). */
static inline bool ggml__rows_contiguous(const struct ggml_tensor *t)
{
    return t->ne[0] == ggml__blck_size_of(t->type) ||
           (ggml__blck_size_of(t->type) != 0 && t->nb[0] == ggml__type_size_of(t->type));
}

/* The most hyper-connection streams ggml_dsv4_hc_comb takes (upstream's
   models use 4); the CPU kernel keeps a token's hc x hc matrix on the stack. */
#define GGML__DSV4_HC_MAX 16

/* ggml_is_empty of a non-NULL tensor, without the argument check. */
static inline bool ggml__has_no_elements(const struct ggml_tensor *t)
{
    return t->ne[0] == 0 || t->ne[1] == 0 || t->ne[2] == 0 || t->ne[3] == 0;
}

static inline bool ggml__same_shape(const struct ggml_tensor *a, const struct ggml_tensor *b)
{
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

/* ggml_add_rel_pos's shape rule: a [W*W, Q1*Q2, N, 1], pw and ph
   [W, Q1, Q2, N]. */
static inline bool ggml__add_rel_pos_fits(const struct ggml_tensor *a, const struct ggml_tensor *pw,
                                          const struct ggml_tensor *ph)
{
    int64_t keys, queries;
    return ggml__same_shape(pw, ph) && pw->ne[3] == a->ne[2] &&
           !__builtin_mul_overflow(pw->ne[0], pw->ne[0], &keys) && keys == a->ne[0] &&
           !__builtin_mul_overflow(pw->ne[1], pw->ne[2], &queries) && queries == a->ne[1] && a->ne[3] == 1;
}

/*
 * True when kernels may address t element by element through its strides:
 * its ggml_nbytes stays inside ggml__view_room, and for a block-quantized
 * type each row is a run of whole adjacent blocks (ne[0] a multiple of the
 * block size, nb[0] the block's size).  A transposed or permuted view that
 * splits blocks across dimensions fails it; only the view ops and
 * transfers bounded by ggml__view_room may handle such a tensor.
 */
static inline bool ggml__layout_in_bounds(const struct ggml_tensor *t)
{
    const int64_t blck_size = ggml__blck_size_of(t->type);
    if (blck_size == 0)
        return false;
    if (blck_size > 1 && t->ne[0] != 0 && t->ne[1] != 0 && t->ne[2] != 0 && t->ne[3] != 0 &&
        (t->ne[0] % blck_size != 0 || t->nb[0] != ggml__type_size_of(t->type)))
        return false;
    size_t bytes, room;
    if (!ggml__extent_bytes(t->type, t->ne, t->nb, &bytes))
        return false;
    if (t->view_src == NULL)
        return true;
    if (!ggml__extent_bytes(t->view_src->type, t->view_src->ne, t->view_src->nb, &room))
        return false;
    return bytes <= (t->view_offs < room ? room - t->view_offs : 0); /* as ggml__view_room */
}

/* ---------------------------------------------------------- op constructors */

/* True when b can be broadcast over a (ggml_can_repeat); logs as func if not. */
bool ggml__check_broadcast(const struct ggml_tensor *a, const struct ggml_tensor *b, const char *func);

/*
 * An element-wise binary op node: a's shape and type, b broadcast over a,
 * a view of a when inplace.  NULL inputs give NULL silently; a bad shape
 * gives NULL after one message (as func).
 */
struct ggml_tensor *ggml__binary_op(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                    struct ggml_tensor *b, bool inplace, const char *func);

/*
 * A DIAG_MASK_INF or DIAG_MASK_ZERO node (op) over a with n_past in
 * op_params[0]; a view of a when inplace.  n_past < 0 is refused (logged
 * as func).
 */
struct ggml_tensor *ggml__diag_mask_op(struct ggml_context *ctx, enum ggml_op op, struct ggml_tensor *a,
                                       int n_past, bool inplace, const char *func);

/* Writes op parameters into tensor->op_params; size <= GGML_MAX_OP_PARAMS. */
static inline void ggml__set_op_params(struct ggml_tensor *tensor, const void *params, size_t size)
{
    memcpy(tensor->op_params, params, size);
}

static inline int32_t ggml__get_op_params_i32(const struct ggml_tensor *tensor, int i)
{
    return tensor->op_params[i];
}

static inline void ggml__set_op_params_i32(struct ggml_tensor *tensor, int i, int32_t value)
{
    tensor->op_params[i] = value;
}

static inline float ggml__get_op_params_f32(const struct ggml_tensor *tensor, int i)
{
    float value;
    memcpy(&value, &tensor->op_params[i], sizeof value);
    return value;
}

static inline void ggml__set_op_params_f32(struct ggml_tensor *tensor, int i, float value)
{
    memcpy(&tensor->op_params[i], &value, sizeof value);
}

/* ---------------------------------------------------------------- arrays */

/*
 * Grows the malloc'd *array of *cap items (elem bytes each) so that it
 * holds at least need items, doubling; existing items are kept.  Returns
 * false without logging (the caller reports) when memory runs out; *array
 * and *cap are then unchanged.
 */
bool ggml__grow_array(void **array, size_t *cap, size_t need, size_t elem);

/* ------------------------------------------------------------- hash sets */

/*
 * An open-addressing set of tensor pointers (linear probing), sized by
 * ggml__hash_size() to a prime at least twice the expected count so that
 * probes stay short.  "used" is a bitset over the slots.
 */
struct ggml_hash_set {
    size_t size;
    uint32_t *used;
    struct ggml_tensor **keys;
};

#define GGML__HASHSET_FULL         ((size_t) -1)
#define GGML__HASHSET_ALREADY_EXISTS ((size_t) -2)

size_t ggml__hash_size(size_t min_sz);
/* Allocates a set with malloc; keys/used are NULL on failure (logged). */
struct ggml_hash_set ggml__hash_set_new(size_t size);
void ggml__hash_set_free(struct ggml_hash_set *set);
void ggml__hash_set_reset(struct ggml_hash_set *set);
/*
 * A hash set with a value array beside it (*values, elem bytes per slot):
 * makes the set hold at least min_slots slots, replacing both (contents
 * lost) when it is smaller.  False (logged as func) when out of memory;
 * the set is then empty and *values NULL.
 */
bool ggml__hash_table_reserve(struct ggml_hash_set *set, void **values, size_t elem, size_t min_slots,
                              const char *func);
/* Bytes needed for the bitset of a set with the given number of slots. */
size_t ggml__bitset_size(size_t n);

static inline bool ggml__bitset_get(const uint32_t *bits, size_t i)
{
    return (bits[i >> 5] >> (i & 31)) & 1u;
}

static inline void ggml__bitset_set(uint32_t *bits, size_t i)
{
    bits[i >> 5] |= 1u << (i & 31);
}

static inline void ggml__bitset_clear(uint32_t *bits, size_t i)
{
    bits[i >> 5] &= ~(1u << (i & 31));
}

static inline size_t ggml__hash(const struct ggml_tensor *p)
{
    /* tensors are at least 16-byte aligned: drop the always-zero bits */
    return (size_t) (uintptr_t) p >> 4;
}

/* Slot holding key, or the first empty slot where it would go, or FULL. */
static inline size_t ggml__hash_find(const struct ggml_hash_set *set, const struct ggml_tensor *key)
{
    size_t start = ggml__hash(key) % set->size;
    size_t i = start;
    while (ggml__bitset_get(set->used, i) && set->keys[i] != key) {
        i = i + 1 == set->size ? 0 : i + 1;
        if (i == start)
            return GGML__HASHSET_FULL;
    }
    return i;
}

static inline bool ggml__hash_contains(const struct ggml_hash_set *set, const struct ggml_tensor *key)
{
    size_t i = ggml__hash_find(set, key);
    return i != GGML__HASHSET_FULL && ggml__bitset_get(set->used, i);
}

/* Inserts key; returns its slot, ALREADY_EXISTS, or FULL. */
static inline size_t ggml__hash_insert(struct ggml_hash_set *set, struct ggml_tensor *key)
{
    size_t i = ggml__hash_find(set, key);
    if (i == GGML__HASHSET_FULL)
        return GGML__HASHSET_FULL;
    if (ggml__bitset_get(set->used, i))
        return GGML__HASHSET_ALREADY_EXISTS;
    ggml__bitset_set(set->used, i);
    set->keys[i] = key;
    return i;
}

/* Inserts key if absent; returns its slot either way, or FULL. */
static inline size_t ggml__hash_find_or_insert(struct ggml_hash_set *set, struct ggml_tensor *key)
{
    size_t i = ggml__hash_find(set, key);
    if (i == GGML__HASHSET_FULL)
        return GGML__HASHSET_FULL;
    if (!ggml__bitset_get(set->used, i)) {
        ggml__bitset_set(set->used, i);
        set->keys[i] = key;
    }
    return i;
}

/* ----------------------------------------------------------------- graphs */

enum ggml_cgraph_eval_order {
    GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT = 0,
    GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT,
    GGML_CGRAPH_EVAL_ORDER_COUNT
};

/*
 * A computation graph.  nodes[0..n_nodes) are the op tensors in an order
 * where every source comes first; leafs[0..n_leafs) are the tensors with no
 * op (inputs, weights, constants).  visited_hash_set holds every tensor of
 * either list.  grads/grad_accs are NULL unless the graph was made with
 * grads; they are indexed by the hash slot of the forward tensor.
 * failed is set when a NULL tensor was expanded into the graph: computing
 * such a graph returns GGML_STATUS_FAILED.
 */
struct ggml_cgraph {
    int size;
    int n_nodes;
    int n_leafs;
    struct ggml_tensor **nodes;
    struct ggml_tensor **grads;
    struct ggml_tensor **grad_accs;
    struct ggml_tensor **leafs;
    int32_t *use_counts;         /* indexed by hash slot */
    struct ggml_hash_set visited_hash_set;
    enum ggml_cgraph_eval_order order;
    bool failed;
};

/*
 * Subgraph of nodes[i0..i1) sharing the parent's arrays (no leafs); valid
 * while the parent is.  Upstream keeps this internal too.
 */
struct ggml_cgraph ggml_graph_view(struct ggml_cgraph *cgraph, int i0, int i1);

/* True when the graph was built from a NULL tensor (an earlier error). */
bool ggml__graph_failed(const struct ggml_cgraph *cgraph);

#endif
