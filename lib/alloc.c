/*
 * alloc.c - placing tensors in backend buffers.
 *
 *   ggml_tallocr    hands out consecutive aligned addresses of one buffer.
 *   ggml_gallocr    plans the memory of a whole graph: intermediate results
 *                   are placed when they are produced and their bytes are
 *                   returned once their last consumer has run, so that
 *                   later results reuse them; operations that allow it
 *                   write over their operand (in place).
 *   ggml_backend_alloc_ctx_tensors*
 *                   give every unallocated tensor of a no_alloc context its
 *                   own memory, in one buffer or, when the buffer type's
 *                   maximum size requires it, several (a multi-buffer).
 *
 * Planning works on offsets only; backend memory is touched when the plan
 * is backed (reserve) and when tensors are given their addresses
 * (alloc_graph).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "backend-private.h"

/* x rounded up to a multiple of align (any align; 0 and 1 mean none);
 * SIZE_MAX when that overflows, which no capacity check ever accepts. */
static size_t round_up(size_t x, size_t align)
{
    if (align <= 1)
        return x;
    size_t rem = x % align;
    if (rem == 0)
        return x;
    if (x > SIZE_MAX - (align - rem))
        return SIZE_MAX;
    return x + (align - rem);
}

/* Bytes to add to offset so that base + offset is a multiple of align. */
static size_t padding_at(const void *base, size_t offset, size_t align)
{
    if (align <= 1)
        return 0;
    size_t misalign = ((uintptr_t) base + offset) % align;
    return misalign ? align - misalign : 0;
}

/* The tensor owns no memory of its own: a view, or data set elsewhere. */
static bool tensor_is_external(const struct ggml_tensor *t)
{
    return t->data != NULL || t->buffer != NULL;
}

/*
 * Turns the status of ggml_backend_tensor_alloc / ggml_backend_view_init
 * into success, logging (as func) the one failure they may leave unsaid:
 * the tensor was placed (its buffer is set) but the backend's init_tensor
 * refused it.  Their other failures are logged by them.
 */
static bool placed_ok(enum ggml_status status, const struct ggml_tensor *t, const char *func)
{
    if (status == GGML_STATUS_SUCCESS)
        return true;
    if (t->buffer != NULL)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s buffer could not set up tensor '%s' (%s)",
                     ggml_backend_buffer_name(t->buffer), t->name, ggml_status_to_string(status));
    return false;
}

/* ================================================================ tallocr */

struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer)
{
    struct ggml_tallocr talloc = { .buffer = NULL, .base = NULL, .alignment = 1, .offset = 0 };
    if (!ggml__handle_check(GGML__HANDLE_BUFFER, buffer, __func__))
        return talloc;
    void *base = NULL;
    if (ggml_backend_buffer_get_size(buffer) > 0) {
        base = ggml_backend_buffer_get_base(buffer);
        if (base == NULL)
            return talloc; /* get_base said why */
    }
    size_t align = ggml_backend_buffer_get_alignment(buffer);
    talloc.buffer = buffer;
    talloc.base = base;
    talloc.alignment = align ? align : 1;
    talloc.offset = padding_at(base, 0, talloc.alignment);
    return talloc;
}

enum ggml_status ggml_tallocr_alloc(struct ggml_tallocr *talloc, struct ggml_tensor *tensor)
{
    if (talloc == NULL || tensor == NULL) {
        ggml__error("%s is NULL", talloc == NULL ? "talloc" : "tensor");
        return GGML_STATUS_FAILED;
    }
    if (talloc->buffer == NULL) {
        ggml__error("allocator has no buffer (ggml_tallocr_new failed)");
        return GGML_STATUS_FAILED;
    }
    ggml_backend_buffer_t buffer = talloc->buffer;
    if (!ggml__handle_check(GGML__HANDLE_BUFFER, buffer, __func__))
        return GGML_STATUS_FAILED;
    if (tensor->data != NULL || tensor->buffer != NULL || tensor->view_src != NULL) {
        ggml__error("tensor '%s' %s", tensor->name,
                    tensor->view_src ? "is a view (use ggml_backend_view_init)" : "already has data");
        return GGML_STATUS_FAILED;
    }
    const size_t size = round_up(ggml_backend_buffer_get_alloc_size(buffer, tensor), talloc->alignment);
    const size_t capacity = ggml_backend_buffer_get_size(buffer);
    const size_t available = talloc->offset <= capacity ? capacity - talloc->offset : 0;
    if (size > available) {
        ggml__error("not enough space in %s buffer for tensor '%s' (needs %zu bytes, %zu available)",
                    ggml_backend_buffer_name(buffer), tensor->name, size, available);
        return GGML_STATUS_ALLOC_FAILED;
    }
    char *base = capacity > 0 ? ggml_backend_buffer_get_base(buffer) : NULL;
    void *addr = base ? base + talloc->offset : NULL;
    enum ggml_status status = ggml_backend_tensor_alloc(buffer, tensor, addr);
    /* bytes a placed tensor points at are taken, even if init_tensor failed */
    if (addr != NULL && tensor->data == addr)
        talloc->offset += size;
    placed_ok(status, tensor, __func__);
    return status;
}

/* ========================================================= offset planner */

/*
 * The address space of one buffer type is split into chunks, each backed
 * by one backend buffer no larger than the type's maximum size (except a
 * single tensor that is larger by itself, and the last chunk, which takes
 * whatever is left so planning never fails for want of chunks).
 *
 * Each chunk keeps its free space as a list of blocks sorted by offset;
 * two blocks are never adjacent (a freed range is merged with the blocks
 * it touches).  The tail block, when present, is the last one and ends at
 * the chunk's limit: taking from it may grow the chunk's high-water mark,
 * which is the size its backend buffer needs.
 */
#define GALLOCR_MAX_CHUNKS 16
#define CHUNK_MAX_FREE_BLOCKS 256

struct free_block {
    size_t offset;
    size_t size;
};

struct chunk {
    size_t limit;                  /* offsets of this chunk lie in [0, limit) */
    size_t high;                   /* highest end offset handed out */
    int n_free;
    struct free_block free[CHUNK_MAX_FREE_BLOCKS];
};

struct chunk_addr {
    int chunk;
    size_t offset;
};

struct planner {
    size_t alignment;              /* every size is rounded up to this */
    size_t chunk_size;             /* preferred limit of a chunk */
    int n_chunks;
    struct chunk chunks[GALLOCR_MAX_CHUNKS];
};

/* Largest address space a plan may use: sums of such sizes cannot overflow. */
#define PLANNER_SPACE (SIZE_MAX / 2)

static void planner_init(struct planner *p, size_t alignment, size_t max_size)
{
    p->alignment = alignment ? alignment : 1;
    p->chunk_size = max_size == 0 || max_size > PLANNER_SPACE ? PLANNER_SPACE : max_size;
    p->n_chunks = 0;
}

static void planner_reset(struct planner *p)
{
    p->n_chunks = 0;
}

/* The planned size of a tensor of size bytes: at least one alignment unit,
 * so that every placed tensor gets an address of its own. */
static size_t planner_size(const struct planner *p, size_t size)
{
    return round_up(size ? size : 1, p->alignment);
}

static size_t planner_total(const struct planner *p)
{
    size_t total = 0;
    for (int c = 0; c < p->n_chunks; c++)
        total += p->chunks[c].high;
    return total;
}

static bool chunk_has_tail(const struct chunk *c)
{
    if (c->n_free == 0)
        return false;
    const struct free_block *last = &c->free[c->n_free - 1];
    return last->offset + last->size == c->limit;
}

static void chunk_remove_block(struct chunk *c, int i)
{
    memmove(&c->free[i], &c->free[i + 1], (size_t) (c->n_free - i - 1) * sizeof c->free[0]);
    c->n_free--;
}

/*
 * Takes size bytes (already a planner_size) and returns where.  Best fit
 * among the free blocks inside the chunks; failing that, the tail of the
 * chunk that grows least (or wastes least when one needs no growth);
 * failing that, a new chunk.  False only when size exceeds the address
 * space a plan may use.
 */
static bool planner_alloc(struct planner *p, size_t size, struct chunk_addr *out)
{
    int best_c = -1, best_i = -1;
    size_t best_size = SIZE_MAX;

    for (int c = 0; c < p->n_chunks; c++) {
        struct chunk *ch = &p->chunks[c];
        int n_inner = chunk_has_tail(ch) ? ch->n_free - 1 : ch->n_free;
        for (int i = 0; i < n_inner; i++) {
            if (ch->free[i].size >= size && ch->free[i].size < best_size) {
                best_c = c;
                best_i = i;
                best_size = ch->free[i].size;
            }
        }
    }

    if (best_c < 0) {
        size_t best_growth = SIZE_MAX, best_waste = SIZE_MAX;
        for (int c = 0; c < p->n_chunks; c++) {
            struct chunk *ch = &p->chunks[c];
            if (!chunk_has_tail(ch))
                continue;
            struct free_block *tail = &ch->free[ch->n_free - 1];
            if (tail->size < size)
                continue;
            size_t end = tail->offset + size;
            size_t growth = end > ch->high ? end - ch->high : 0;
            size_t waste = end < ch->high ? ch->high - end : 0;
            if (growth < best_growth || (growth == 0 && waste < best_waste)) {
                best_c = c;
                best_i = ch->n_free - 1;
                best_growth = growth;
                best_waste = waste;
            }
        }
    }

    if (best_c < 0) {
        if (size > PLANNER_SPACE || p->n_chunks == GALLOCR_MAX_CHUNKS)
            return false;
        struct chunk *ch = &p->chunks[p->n_chunks];
        ch->limit = size > p->chunk_size ? size : p->chunk_size;
        if (p->n_chunks == GALLOCR_MAX_CHUNKS - 1)
            ch->limit = PLANNER_SPACE;
        ch->high = 0;
        ch->n_free = 1;
        ch->free[0] = (struct free_block) { .offset = 0, .size = ch->limit };
        best_c = p->n_chunks++;
        best_i = 0;
    }

    struct chunk *ch = &p->chunks[best_c];
    struct free_block *block = &ch->free[best_i];
    out->chunk = best_c;
    out->offset = block->offset;
    block->offset += size;
    block->size -= size;
    if (block->size == 0)
        chunk_remove_block(ch, best_i);
    if (out->offset + size > ch->high)
        ch->high = out->offset + size;
    return true;
}

/*
 * Returns size bytes at addr to the free list, merged with the blocks they
 * touch.  When the list is full and nothing merges, the bytes are left out
 * of the list: the plan then uses more memory, never overlapping memory.
 */
static void planner_free(struct planner *p, struct chunk_addr addr, size_t size)
{
    struct chunk *ch = &p->chunks[addr.chunk];
    int pos = 0;
    while (pos < ch->n_free && ch->free[pos].offset < addr.offset)
        pos++;
    bool joins_prev = pos > 0 && ch->free[pos - 1].offset + ch->free[pos - 1].size == addr.offset;
    bool joins_next = pos < ch->n_free && addr.offset + size == ch->free[pos].offset;
    if (joins_prev && joins_next) {
        ch->free[pos - 1].size += size + ch->free[pos].size;
        chunk_remove_block(ch, pos);
    } else if (joins_prev) {
        ch->free[pos - 1].size += size;
    } else if (joins_next) {
        ch->free[pos].offset = addr.offset;
        ch->free[pos].size += size;
    } else if (ch->n_free < CHUNK_MAX_FREE_BLOCKS) {
        memmove(&ch->free[pos + 1], &ch->free[pos], (size_t) (ch->n_free - pos) * sizeof ch->free[0]);
        ch->free[pos] = (struct free_block) { .offset = addr.offset, .size = size };
        ch->n_free++;
    }
}

/* ================================================================ gallocr */

/*
 * Buffer ids that name the same buffer type share one pool: one planner
 * and one set of backend buffers (one per chunk).
 */
struct pool {
    ggml_backend_buffer_type_t buft;
    ggml_backend_buffer_t buffers[GALLOCR_MAX_CHUNKS];   /* NULL: not allocated */
    struct planner planner;
};

/* Planning state of one tensor, kept in a table parallel to the hash set. */
struct tensor_state {
    int n_children;          /* consumers that have not run yet */
    int n_views;             /* views of it that are still alive */
    int buffer_id;           /* where it was placed ... */
    struct chunk_addr addr;  /* ... and at which offset */
    bool placed;             /* has an address in this plan */
    bool live;               /* holds plan memory that is released when it dies */
    int32_t position;        /* see graph_positions() */
};

/* Where the plan put one tensor; buffer_id -1 for a view or a tensor
 * with memory of its own (nothing to place). */
struct tensor_place {
    int buffer_id;
    struct chunk_addr addr;
    size_t size_max;         /* alloc size it was planned with */
};

/*
 * The shape of a node in the graph a plan was made for: a plan made for
 * one graph is reused for another only when every node has the same op,
 * input/output flags and sources (by position), since lifetimes, and so
 * the sharing of memory, follow from these.
 */
struct node_shape {
    int32_t op;
    int32_t flags;
    int32_t src[GGML_MAX_SRC];
    int32_t view_src;
};

struct node_place {
    struct tensor_place dst;
    struct tensor_place src[GGML_MAX_SRC];
    struct node_shape shape;
};

struct leaf_place {
    struct tensor_place place;
    int32_t flags;
};

struct ggml_gallocr {
    int n_buffers;
    int *pool_of;                    /* [n_buffers] index into pools */
    int n_pools;
    struct pool *pools;              /* [n_pools] */

    struct ggml_hash_set hash;       /* tensors of the graph being planned */
    struct tensor_state *states;     /* [hash.size] */

    struct node_place *node_places;  /* [n_nodes] of the last plan */
    int n_nodes, cap_nodes;
    struct leaf_place *leaf_places;  /* [n_leafs] of the last plan */
    int n_leafs, cap_leafs;

    bool plan_valid;                 /* the places describe the last planned graph */
    bool plan_backed;                /* every chunk of that plan has a large enough buffer */

    const char *func;                /* entry point planning on behalf of (for messages) */
    bool plan_failed;                /* planning hit an error (already logged) */
};

/* Flags of tensors whose memory is never released nor written over. */
#define KEEP_FLAGS (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT)

#define REQUIRE_GALLOCR(galloc, ret)                                        \
    do {                                                                    \
        if (!ggml__handle_check(GGML__HANDLE_GALLOCR, (galloc), __func__))  \
            return ret;                                                     \
    } while (0)

/*
 * Operations whose result may be written over one of their operands (an
 * operand of the same type, shape and strides): the kernels of these must
 * work when dst and that source are the same memory.
 */
static bool op_can_inplace(enum ggml_op op)
{
    switch (op) {
    case GGML_OP_FILL:
    case GGML_OP_SCALE:
    case GGML_OP_DIAG_MASK_ZERO:
    case GGML_OP_DIAG_MASK_INF:
    case GGML_OP_ADD:
    case GGML_OP_ADD_ID:
    case GGML_OP_ADD1:
    case GGML_OP_SUB:
    case GGML_OP_MUL:
    case GGML_OP_DIV:
    case GGML_OP_SQR:
    case GGML_OP_SQRT:
    case GGML_OP_LOG:
    case GGML_OP_UNARY:
    case GGML_OP_ROPE:
    case GGML_OP_ROPE_BACK:
    case GGML_OP_SILU_BACK:
    case GGML_OP_RMS_NORM:
    case GGML_OP_RMS_NORM_BACK:
    case GGML_OP_CLAMP:
    case GGML_OP_SOFT_MAX:
    case GGML_OP_SOFT_MAX_BACK:
        return true;
    default:
        return false;
    }
}

static void gallocr_destroy(struct ggml_gallocr *galloc)
{
    if (galloc->pools) {
        for (int p = 0; p < galloc->n_pools; p++)
            for (int c = 0; c < GALLOCR_MAX_CHUNKS; c++)
                ggml_backend_buffer_free(galloc->pools[p].buffers[c]);
    }
    ggml__hash_set_free(&galloc->hash);
    free(galloc->states);
    free(galloc->node_places);
    free(galloc->leaf_places);
    free(galloc->pools);
    free(galloc->pool_of);
    free(galloc);
}

ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t *bufts, int n_bufs)
{
    if (bufts == NULL || n_bufs < 1) {
        ggml__error("need at least one buffer type (bufts %p, n_bufs %d)", (void *) bufts, n_bufs);
        return NULL;
    }
    for (int i = 0; i < n_bufs; i++) {
        if (bufts[i] == NULL) {
            ggml__error("buffer type %d is NULL", i);
            return NULL;
        }
    }
    struct ggml_gallocr *galloc = calloc(1, sizeof *galloc);
    if (galloc == NULL) {
        ggml__error("out of memory");
        return NULL;
    }
    galloc->n_buffers = n_bufs;
    galloc->pool_of = calloc((size_t) n_bufs, sizeof *galloc->pool_of);
    galloc->pools = calloc((size_t) n_bufs, sizeof *galloc->pools);
    if (galloc->pool_of == NULL || galloc->pools == NULL) {
        ggml__error("out of memory");
        gallocr_destroy(galloc);
        return NULL;
    }
    for (int i = 0; i < n_bufs; i++) {
        int p = 0;
        while (p < galloc->n_pools && galloc->pools[p].buft != bufts[i])
            p++;
        if (p == galloc->n_pools) {
            struct pool *pool = &galloc->pools[galloc->n_pools++];
            pool->buft = bufts[i];
            planner_init(&pool->planner, ggml_backend_buft_get_alignment(bufts[i]),
                         ggml_backend_buft_get_max_size(bufts[i]));
        }
        galloc->pool_of[i] = p;
    }
    if (!ggml__handle_add(GGML__HANDLE_GALLOCR, galloc, __func__)) {
        gallocr_destroy(galloc);
        return NULL;
    }
    return galloc;
}

ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft)
{
    if (buft == NULL) {
        ggml__error("buffer type is NULL");
        return NULL;
    }
    return ggml_gallocr_new_n(&buft, 1);
}

void ggml_gallocr_free(ggml_gallocr_t galloc)
{
    if (galloc == NULL)
        return;
    if (!ggml__handle_remove(GGML__HANDLE_GALLOCR, galloc, __func__))
        return;
    gallocr_destroy(galloc);
}

/* ------------------------------------------------------------- planning */

static struct pool *pool_of_id(struct ggml_gallocr *galloc, int buffer_id)
{
    return &galloc->pools[galloc->pool_of[buffer_id]];
}

/* Planned size of t in buffer buffer_id. */
static size_t planned_size(struct ggml_gallocr *galloc, const struct ggml_tensor *t, int buffer_id)
{
    struct pool *pool = pool_of_id(galloc, buffer_id);
    return planner_size(&pool->planner, ggml_backend_buft_get_alloc_size(pool->buft, t));
}

/* The state of t, created (zeroed) on first use.  The hash set is sized
 * for every tensor a plan can touch (see plan_make_room), so it never fills. */
static struct tensor_state *state_of(struct ggml_gallocr *galloc, struct ggml_tensor *t)
{
    size_t slot = ggml__hash_find_or_insert(&galloc->hash, t);
    GGML_ASSERT(slot != GGML__HASHSET_FULL);
    return &galloc->states[slot];
}

/* Gives up t's memory, unless the caller reads it after the graph ran. */
static void plan_release(struct ggml_gallocr *galloc, struct ggml_tensor *t)
{
    if (t->flags & KEEP_FLAGS)
        return;
    struct tensor_state *st = state_of(galloc, t);
    struct pool *pool = pool_of_id(galloc, st->buffer_id);
    planner_free(&pool->planner, st->addr, planned_size(galloc, t, st->buffer_id));
    st->live = false;
}

/*
 * Lets node take over the memory of parent (its operand) when nothing
 * else needs that memory any more: parent has no other consumer and no
 * live view; for a parent that is a view at offset 0, its source has no
 * consumer and no other view.  Inputs and outputs, and views of them, are
 * never written over.  The part of the memory node does not need returns
 * to the free list.
 */
static bool plan_try_inplace(struct ggml_gallocr *galloc, struct ggml_tensor *node,
                             struct tensor_state *st, struct ggml_tensor *parent, int buffer_id)
{
    struct ggml_tensor *owner = parent->view_src ? parent->view_src : parent;
    if ((parent->flags & KEEP_FLAGS) || (owner->flags & KEEP_FLAGS))
        return false;
    if (!ggml__same_layout(node, parent))
        return false;
    struct tensor_state *pst = state_of(galloc, parent);
    if (pst->n_children != 1 || pst->n_views != 0)
        return false;
    struct tensor_state *ost = pst;
    if (parent->view_src != NULL) {
        if (parent->view_offs != 0)
            return false;
        ost = state_of(galloc, owner);
        if (ost->n_views != 1 || ost->n_children != 0)
            return false;
    }
    if (!ost->live || galloc->pool_of[ost->buffer_id] != galloc->pool_of[buffer_id])
        return false;
    size_t have = planned_size(galloc, owner, ost->buffer_id);
    size_t need = planned_size(galloc, node, ost->buffer_id);
    if (need > have)
        return false;

    st->buffer_id = ost->buffer_id;
    st->addr = ost->addr;
    ost->live = false; /* the memory is node's now */
    if (have > need) {
        struct chunk_addr rest = { .chunk = ost->addr.chunk, .offset = ost->addr.offset + need };
        planner_free(&pool_of_id(galloc, ost->buffer_id)->planner, rest, have - need);
    }
    return true;
}

/* Gives t an address in buffer buffer_id unless it has one, is a view or
 * has memory of its own. */
static void plan_place(struct ggml_gallocr *galloc, struct ggml_tensor *t, int buffer_id)
{
    struct tensor_state *st = state_of(galloc, t);
    if (st->placed || t->view_src != NULL || tensor_is_external(t))
        return;
    st->placed = true;
    st->live = true;

    if (op_can_inplace(t->op)) {
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (t->src[j] != NULL && plan_try_inplace(galloc, t, st, t->src[j], buffer_id))
                return;
        }
    }

    struct pool *pool = pool_of_id(galloc, buffer_id);
    size_t alloc_size = ggml_backend_buft_get_alloc_size(pool->buft, t);
    st->buffer_id = buffer_id;
    if (!planner_alloc(&pool->planner, planner_size(&pool->planner, alloc_size), &st->addr)) {
        st->addr = (struct chunk_addr) { .chunk = 0, .offset = 0 };
        st->live = false;
        if (!galloc->plan_failed)
            ggml__log_at(GGML_LOG_LEVEL_ERROR, galloc->func,
                         "tensor '%s' needs %zu bytes, more than a %s buffer can address",
                         t->name, alloc_size, ggml_backend_buft_name(pool->buft));
        galloc->plan_failed = true;
    }
}

/* One step of the walk: node consumed parent; release what died. */
static void plan_consumed(struct ggml_gallocr *galloc, struct ggml_tensor *parent)
{
    struct tensor_state *pst = state_of(galloc, parent);
    pst->n_children--;
    if (pst->n_children != 0 || pst->n_views != 0)
        return;
    if (parent->view_src != NULL) {
        /* a view that is an input or output keeps its source's memory */
        if (parent->flags & KEEP_FLAGS)
            return;
        struct tensor_state *ost = state_of(galloc, parent->view_src);
        ost->n_views--;
        if (ost->n_views == 0 && ost->n_children == 0 && ost->live)
            plan_release(galloc, parent->view_src);
    } else if (pst->live) {
        plan_release(galloc, parent);
    }
}

static int id_at(const int *ids, int i)
{
    return ids ? ids[i] : 0;
}

#define POSITION_NONE INT32_MIN

/*
 * Empties the hash set and enters the nodes and leafs of graph with their
 * position: i + 1 for node i, -(i + 1) for leaf i.  Only the entered
 * states are written; the caller zeroes the table when it needs more.
 */
static void graph_positions(struct ggml_gallocr *galloc, struct ggml_cgraph *graph)
{
    ggml__hash_set_reset(&galloc->hash);
    for (int i = 0; i < graph->n_nodes; i++) {
        size_t slot = ggml__hash_find_or_insert(&galloc->hash, graph->nodes[i]);
        GGML_ASSERT(slot != GGML__HASHSET_FULL);
        galloc->states[slot].position = i + 1;
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        size_t slot = ggml__hash_find_or_insert(&galloc->hash, graph->leafs[i]);
        GGML_ASSERT(slot != GGML__HASHSET_FULL);
        galloc->states[slot].position = -(i + 1);
    }
}

/* Position of t entered by graph_positions (0: neither node nor leaf). */
static int32_t position_of(struct ggml_gallocr *galloc, const struct ggml_tensor *t)
{
    if (t == NULL)
        return POSITION_NONE;
    size_t slot = ggml__hash_find(&galloc->hash, t);
    if (slot == GGML__HASHSET_FULL || !ggml__bitset_get(galloc->hash.used, slot))
        return 0;
    return galloc->states[slot].position;
}

static void shape_of(struct ggml_gallocr *galloc, const struct ggml_tensor *node, struct node_shape *shape)
{
    shape->op = (int32_t) node->op;
    shape->flags = node->flags & KEEP_FLAGS;
    for (int j = 0; j < GGML_MAX_SRC; j++)
        shape->src[j] = position_of(galloc, node->src[j]);
    shape->view_src = position_of(galloc, node->view_src);
}

static bool same_shape(const struct node_shape *a, const struct node_shape *b)
{
    if (a->op != b->op || a->flags != b->flags || a->view_src != b->view_src)
        return false;
    for (int j = 0; j < GGML_MAX_SRC; j++)
        if (a->src[j] != b->src[j])
            return false;
    return true;
}

/* Records where t went in the plan just made. */
static void record_place(struct ggml_gallocr *galloc, struct ggml_tensor *t, struct tensor_place *place)
{
    *place = (struct tensor_place) { .buffer_id = -1, .addr = { -1, 0 }, .size_max = 0 };
    if (t == NULL || t->view_src != NULL || tensor_is_external(t))
        return;
    struct tensor_state *st = state_of(galloc, t);
    if (!st->placed)
        return;
    place->buffer_id = st->buffer_id;
    place->addr = st->addr;
    place->size_max = ggml_backend_buft_get_alloc_size(pool_of_id(galloc, st->buffer_id)->buft, t);
}

/* Makes sure the plan tables can hold the graph; false (logged) when out of memory. */
static bool plan_make_room(struct ggml_gallocr *galloc, const struct ggml_cgraph *graph)
{
    /* every tensor a plan touches is a leaf, a node, a source of a node,
     * or the view source of one of those */
    size_t touched = 1 + 2 * (size_t) graph->n_leafs;
    for (int i = 0; i < graph->n_nodes; i++) {
        touched += 2;
        for (int j = 0; j < GGML_MAX_SRC; j++)
            if (graph->nodes[i]->src[j] != NULL)
                touched += 2;
    }
    size_t want = touched + touched / 4;
    if (!ggml__hash_table_reserve(&galloc->hash, (void **) &galloc->states, sizeof *galloc->states, want,
                                  galloc->func))
        return false;
    if (galloc->cap_nodes < graph->n_nodes) {
        struct node_place *places = malloc((size_t) graph->n_nodes * sizeof *places);
        if (places == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, galloc->func, "out of memory");
            return false;
        }
        free(galloc->node_places);
        galloc->node_places = places;
        galloc->cap_nodes = graph->n_nodes;
    }
    if (galloc->cap_leafs < graph->n_leafs) {
        struct leaf_place *places = malloc((size_t) graph->n_leafs * sizeof *places);
        if (places == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, galloc->func, "out of memory");
            return false;
        }
        free(galloc->leaf_places);
        galloc->leaf_places = places;
        galloc->cap_leafs = graph->n_leafs;
    }
    return true;
}

/* Checks the graph and buffer ids; false (logged as func) when unusable,
 * false without a message for a graph built from a NULL tensor. */
static bool plan_check_args(struct ggml_gallocr *galloc, struct ggml_cgraph *graph,
                            const int *node_ids, const int *leaf_ids, const char *func)
{
    if (graph == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "graph is NULL");
        return false;
    }
    if (ggml__graph_failed(graph))
        return false; /* the constructor that returned NULL has already said why */
    for (int i = 0; i < graph->n_nodes; i++) {
        if (graph->nodes[i] == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "graph node %d is NULL", i);
            return false;
        }
        int id = id_at(node_ids, i);
        if (id < 0 || id >= galloc->n_buffers) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "node %d ('%s') has buffer id %d, outside [0, %d)",
                         i, graph->nodes[i]->name, id, galloc->n_buffers);
            return false;
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        if (graph->leafs[i] == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "graph leaf %d is NULL", i);
            return false;
        }
        int id = id_at(leaf_ids, i);
        if (id < 0 || id >= galloc->n_buffers) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "leaf %d ('%s') has buffer id %d, outside [0, %d)",
                         i, graph->leafs[i]->name, id, galloc->n_buffers);
            return false;
        }
    }
    return true;
}

/*
 * Plans the graph: walks the nodes in order, placing each result when it
 * is produced and releasing a tensor's memory after its last consumer.
 * Leafs are placed first, then graph inputs, so nothing is ever placed
 * over them; inputs and outputs are never released.  On success the
 * places of every node, source and leaf are recorded and the planners
 * hold the size each chunk needs.  Allocates no backend memory.
 */
static bool plan_graph(struct ggml_gallocr *galloc, struct ggml_cgraph *graph,
                       const int *node_ids, const int *leaf_ids, const char *func)
{
    galloc->func = func;
    galloc->plan_failed = false;
    if (!plan_check_args(galloc, graph, node_ids, leaf_ids, func))
        return false;
    galloc->plan_valid = false;
    galloc->plan_backed = false;
    if (!plan_make_room(galloc, graph))
        return false;

    memset(galloc->states, 0, galloc->hash.size * sizeof *galloc->states);
    graph_positions(galloc, graph);
    for (int p = 0; p < galloc->n_pools; p++)
        planner_reset(&galloc->pools[p].planner);

    /* leafs first: the caller may want them allocated even when unused */
    for (int i = 0; i < graph->n_leafs; i++)
        plan_place(galloc, graph->leafs[i], id_at(leaf_ids, i));

    /* count consumers and views; place the graph inputs before anything else */
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor *node = graph->nodes[i];
        int id = id_at(node_ids, i);
        /* an op NONE node only orders other nodes: its view is no use */
        if (node->view_src != NULL && node->op != GGML_OP_NONE)
            state_of(galloc, node->view_src)->n_views++;
        if (node->flags & GGML_TENSOR_FLAG_INPUT)
            plan_place(galloc, node, id);
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor *src = node->src[j];
            if (src == NULL)
                continue;
            state_of(galloc, src)->n_children++;
            if (src->flags & GGML_TENSOR_FLAG_INPUT)
                plan_place(galloc, src, id);
        }
    }

    /* run the graph on paper */
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor *node = graph->nodes[i];
        int id = id_at(node_ids, i);
        for (int j = 0; j < GGML_MAX_SRC; j++)
            if (node->src[j] != NULL)
                plan_place(galloc, node->src[j], id);
        plan_place(galloc, node, id);
        for (int j = 0; j < GGML_MAX_SRC; j++)
            if (node->src[j] != NULL)
                plan_consumed(galloc, node->src[j]);
    }
    if (galloc->plan_failed)
        return false;

    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor *node = graph->nodes[i];
        struct node_place *place = &galloc->node_places[i];
        record_place(galloc, node, &place->dst);
        for (int j = 0; j < GGML_MAX_SRC; j++)
            record_place(galloc, node->src[j], &place->src[j]);
        shape_of(galloc, node, &place->shape);
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        record_place(galloc, graph->leafs[i], &galloc->leaf_places[i].place);
        galloc->leaf_places[i].flags = graph->leafs[i]->flags & KEEP_FLAGS;
    }
    galloc->n_nodes = graph->n_nodes;
    galloc->n_leafs = graph->n_leafs;
    galloc->plan_valid = true;
    return true;
}

/*
 * Gives every chunk of the plan a backend buffer at least as large as it
 * needs (buffers never shrink).  False when a buffer type cannot allocate;
 * ggml_backend_buft_alloc_buffer has then logged why.
 */
static bool back_plan(struct ggml_gallocr *galloc)
{
    for (int p = 0; p < galloc->n_pools; p++) {
        struct pool *pool = &galloc->pools[p];
        for (int c = 0; c < pool->planner.n_chunks; c++) {
            size_t need = pool->planner.chunks[c].high;
            ggml_backend_buffer_t have = pool->buffers[c];
            if (have != NULL && ggml_backend_buffer_get_size(have) >= need)
                continue;
            /* the old buffer goes first, so both never exist at once */
            ggml_backend_buffer_free(have);
            pool->buffers[c] = ggml_backend_buft_alloc_buffer(pool->buft, need);
            if (pool->buffers[c] == NULL)
                return false;
            ggml_backend_buffer_set_usage(pool->buffers[c], GGML_BACKEND_BUFFER_USAGE_COMPUTE);
        }
    }
    galloc->plan_backed = true;
    return true;
}

bool ggml_gallocr_reserve_n(ggml_gallocr_t galloc, struct ggml_cgraph *graph,
                            const int *node_buffer_ids, const int *leaf_buffer_ids)
{
    REQUIRE_GALLOCR(galloc, false);
    if (!plan_graph(galloc, graph, node_buffer_ids, leaf_buffer_ids, __func__))
        return false;
    return back_plan(galloc);
}

bool ggml_gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph *graph)
{
    REQUIRE_GALLOCR(galloc, false);
    if (!plan_graph(galloc, graph, NULL, NULL, __func__))
        return false;
    return back_plan(galloc);
}

void ggml_gallocr_reserve_n_size(ggml_gallocr_t galloc, struct ggml_cgraph *graph,
                                 const int *node_buffer_ids, const int *leaf_buffer_ids, size_t *sizes)
{
    REQUIRE_GALLOCR(galloc, );
    if (sizes == NULL) {
        ggml__error("sizes is NULL");
        return;
    }
    for (int i = 0; i < galloc->n_buffers; i++)
        sizes[i] = 0;
    if (!plan_graph(galloc, graph, node_buffer_ids, leaf_buffer_ids, __func__))
        return;
    /* a buffer type named twice is counted once, at its first id */
    for (int i = 0; i < galloc->n_buffers; i++) {
        int p = galloc->pool_of[i];
        bool first = true;
        for (int j = 0; j < i; j++)
            if (galloc->pool_of[j] == p)
                first = false;
        if (first)
            sizes[i] = planner_total(&galloc->pools[p].planner);
    }
}

/* ------------------------------------------------------------ placing */

/* The place recorded for t still suits it (t needs no more memory). */
static bool place_fits(struct ggml_gallocr *galloc, const struct ggml_tensor *t, const struct tensor_place *place)
{
    if (t->view_src != NULL || tensor_is_external(t))
        return true;
    if (place->buffer_id < 0)
        return false; /* had memory of its own when planned */
    size_t size = ggml_backend_buft_get_alloc_size(pool_of_id(galloc, place->buffer_id)->buft, t);
    return size <= place->size_max;
}

/*
 * The last plan does not suit this graph: not backed by buffers, made for
 * a graph of another shape, or some tensor needs more memory (or memory it
 * did not need then).
 */
static bool needs_new_plan(struct ggml_gallocr *galloc, struct ggml_cgraph *graph)
{
    if (!galloc->plan_valid || !galloc->plan_backed)
        return true;
    if (galloc->n_nodes != graph->n_nodes || galloc->n_leafs != graph->n_leafs)
        return true;
    /* the table was sized for a graph of these counts: it holds them */
    graph_positions(galloc, graph);
    for (int i = 0; i < graph->n_leafs; i++)
        if ((graph->leafs[i]->flags & KEEP_FLAGS) != galloc->leaf_places[i].flags)
            return true;
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct ggml_tensor *node = graph->nodes[i];
        const struct node_place *place = &galloc->node_places[i];
        struct node_shape shape;
        shape_of(galloc, node, &shape);
        if (!same_shape(&shape, &place->shape))
            return true;
        if (!place_fits(galloc, node, &place->dst))
            return true;
        for (int j = 0; j < GGML_MAX_SRC; j++)
            if (node->src[j] != NULL && !place_fits(galloc, node->src[j], &place->src[j]))
                return true;
    }
    for (int i = 0; i < graph->n_leafs; i++)
        if (!place_fits(galloc, graph->leafs[i], &galloc->leaf_places[i].place))
            return true;
    return false;
}

/* Gives t its planned address (or, for a view, its source's memory). */
static bool init_tensor(struct ggml_gallocr *galloc, struct ggml_tensor *t, const struct tensor_place *place)
{
    if (t->view_src != NULL) {
        /* already set up, or a view of memory outside backend buffers */
        if (t->buffer != NULL || t->view_src->buffer == NULL)
            return true;
        return placed_ok(ggml_backend_view_init(t), t, galloc->func);
    }
    if (tensor_is_external(t))
        return true;
    /* needs_new_plan() saw to it that t has a place in a backed chunk */
    GGML_ASSERT(place->buffer_id >= 0 && place->addr.chunk >= 0);
    ggml_backend_buffer_t buffer = pool_of_id(galloc, place->buffer_id)->buffers[place->addr.chunk];
    char *base = ggml_backend_buffer_get_base(buffer);
    if (base == NULL)
        return false; /* logged */
    return placed_ok(ggml_backend_tensor_alloc(buffer, t, base + place->addr.offset), t, galloc->func);
}

bool ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, struct ggml_cgraph *graph)
{
    REQUIRE_GALLOCR(galloc, false);
    galloc->func = __func__;
    if (!plan_check_args(galloc, graph, NULL, NULL, __func__))
        return false;
    if (needs_new_plan(galloc, graph)) {
        if (galloc->n_buffers != 1) {
            /* not an error: the caller (e.g. the scheduler) reserves with
             * its buffer ids and tries again */
            ggml__debug("the graph does not fit the last reservation; with %d buffers, "
                        "call ggml_gallocr_reserve_n first", galloc->n_buffers);
            return false;
        }
        if (!plan_graph(galloc, graph, NULL, NULL, __func__) || !back_plan(galloc))
            return false;
    }

    for (int p = 0; p < galloc->n_pools; p++)
        for (int c = 0; c < GALLOCR_MAX_CHUNKS; c++)
            if (galloc->pools[p].buffers[c] != NULL)
                ggml_backend_buffer_reset(galloc->pools[p].buffers[c]);

    for (int i = 0; i < graph->n_leafs; i++)
        if (!init_tensor(galloc, graph->leafs[i], &galloc->leaf_places[i].place))
            return false;
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor *node = graph->nodes[i];
        struct node_place *place = &galloc->node_places[i];
        for (int j = 0; j < GGML_MAX_SRC; j++)
            if (node->src[j] != NULL && !init_tensor(galloc, node->src[j], &place->src[j]))
                return false;
        if (!init_tensor(galloc, node, &place->dst))
            return false;
    }
    return true;
}

bool ggml__gallocr_plan_fits(ggml_gallocr_t galloc, struct ggml_cgraph *graph)
{
    return !needs_new_plan(galloc, graph);
}

bool ggml__gallocr_owns_buffer(ggml_gallocr_t galloc, ggml_backend_buffer_t buffer)
{
    if (buffer == NULL)
        return false;
    for (int p = 0; p < galloc->n_pools; p++)
        for (int c = 0; c < GALLOCR_MAX_CHUNKS; c++)
            if (galloc->pools[p].buffers[c] == buffer)
                return true;
    return false;
}

size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id)
{
    REQUIRE_GALLOCR(galloc, 0);
    if (buffer_id < 0 || buffer_id >= galloc->n_buffers) {
        ggml__error("buffer id %d is outside [0, %d)", buffer_id, galloc->n_buffers);
        return 0;
    }
    int p = galloc->pool_of[buffer_id];
    for (int i = 0; i < buffer_id; i++)
        if (galloc->pool_of[i] == p)
            return 0; /* the same buffer, counted at its first id */
    size_t total = 0;
    for (int c = 0; c < GALLOCR_MAX_CHUNKS; c++)
        if (galloc->pools[p].buffers[c] != NULL)
            total += ggml_backend_buffer_get_size(galloc->pools[p].buffers[c]);
    return total;
}

/* =========================================================== ctx tensors */

/* A context tensor that needs memory of its own. */
static bool ctx_tensor_needs_memory(const struct ggml_tensor *t)
{
    return t->view_src == NULL && !tensor_is_external(t);
}

/* Consecutive context tensors [first, end) that share one buffer. */
struct ctx_range {
    struct ggml_tensor *first;
    struct ggml_tensor *end;       /* NULL: to the end of the context */
    size_t size;
};

/*
 * Splits the tensors of ctx that need memory into consecutive ranges of
 * at most the buffer type's maximum size.  Returns the number of ranges
 * (0: nothing to allocate) and, when ranges is not NULL, a malloc'ed array
 * of them; -1 (logged as func) on bad arguments, a tensor larger than the
 * maximum size, or out of memory.
 */
static long ctx_split(struct ggml_context *ctx, ggml_backend_buffer_type_t buft,
                      struct ctx_range **ranges, size_t *total, const char *func)
{
    if (ctx == NULL || buft == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s is NULL", ctx == NULL ? "ctx" : "buffer type");
        return -1;
    }
    if (!ggml_get_no_alloc(ctx)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "the context holds its own tensor data (create it with no_alloc = true)");
        return -1;
    }
    const size_t align = ggml_backend_buft_get_alignment(buft);
    const size_t max_size = ggml_backend_buft_get_max_size(buft);
    struct ctx_range *list = NULL;
    long n = 0, cap = 0;
    size_t cur = 0, sum = 0;
    struct ggml_tensor *first = ggml_get_first_tensor(ctx);

    for (struct ggml_tensor *t = first;; t = ggml_get_next_tensor(ctx, t)) {
        size_t size = 0;
        if (t != NULL && ctx_tensor_needs_memory(t)) {
            size = round_up(ggml_backend_buft_get_alloc_size(buft, t), align);
            if (size > max_size) {
                ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                             "tensor '%s' needs %zu bytes, more than the %zu bytes of the largest %s buffer",
                             t->name, size, max_size, ggml_backend_buft_name(buft));
                free(list);
                return -1;
            }
        }
        /* close the range before t when t ends the context or does not fit */
        if (cur > 0 && (t == NULL || cur > max_size - size)) {
            if (ranges != NULL) {
                if (n == cap) {
                    long grown = cap ? 2 * cap : 4;
                    struct ctx_range *more = realloc(list, (size_t) grown * sizeof *list);
                    if (more == NULL) {
                        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
                        free(list);
                        return -1;
                    }
                    list = more;
                    cap = grown;
                }
                list[n] = (struct ctx_range) { .first = first, .end = t, .size = cur };
            }
            n++;
            sum += cur;
            first = t;
            cur = 0;
        }
        if (t == NULL)
            break;
        cur += size;
    }
    if (ranges != NULL)
        *ranges = list;
    if (total != NULL)
        *total = sum;
    return n;
}

size_t ggml_backend_alloc_ctx_tensors_from_buft_size(struct ggml_context *ctx, ggml_backend_buffer_type_t buft)
{
    size_t total = 0;
    if (ctx_split(ctx, buft, NULL, &total, __func__) < 0)
        return 0;
    return total;
}

/* Undoes a failed allocation: the tensors placed in buffers[0..n) lose their
 * memory again (the context stays usable) and the buffers are freed. */
static void ctx_undo(struct ggml_context *ctx, ggml_backend_buffer_t *buffers, long n)
{
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        for (long i = 0; i < n; i++) {
            if (t->buffer == buffers[i]) {
                t->buffer = NULL;
                t->data = NULL;
                break;
            }
        }
    }
    for (long i = 0; i < n; i++)
        ggml_backend_buffer_free(buffers[i]);
}

/* Sets up the views of ctx whose source has memory and they do not. */
static bool ctx_init_views(struct ggml_context *ctx, const char *func)
{
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL && t->buffer == NULL && t->view_src->buffer != NULL &&
            !placed_ok(ggml_backend_view_init(t), t, func))
            return false;
    }
    return true;
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context *ctx, ggml_backend_buffer_type_t buft)
{
    struct ctx_range *ranges = NULL;
    long n = ctx_split(ctx, buft, &ranges, NULL, __func__);
    if (n < 0)
        return NULL;
    if (n == 0) {
        /* nothing needs memory; views made since the last call still get theirs */
        ctx_init_views(ctx, __func__);
        ggml__debug("no tensor of the context needs memory");
        return NULL;
    }
    ggml_backend_buffer_t *buffers = calloc((size_t) n, sizeof *buffers);
    if (buffers == NULL) {
        ggml__error("out of memory");
        free(ranges);
        return NULL;
    }

    long done = 0;
    bool ok = true;
    for (; ok && done < n; done++) {
        buffers[done] = ggml_backend_buft_alloc_buffer(buft, ranges[done].size);
        if (buffers[done] == NULL) {
            ok = false; /* logged */
            break;
        }
        struct ggml_tallocr talloc = ggml_tallocr_new(buffers[done]);
        for (struct ggml_tensor *t = ranges[done].first; ok && t != ranges[done].end;
             t = ggml_get_next_tensor(ctx, t)) {
            if (!ctx_tensor_needs_memory(t))
                continue;
            if (ggml_tallocr_alloc(&talloc, t) != GGML_STATUS_SUCCESS)
                ok = false; /* logged */
        }
    }
    free(ranges);

    /* views after every source has its memory */
    if (ok)
        ok = ctx_init_views(ctx, __func__);

    ggml_backend_buffer_t result = NULL;
    if (ok)
        result = n == 1 ? buffers[0] : ggml_backend_multi_buffer_alloc_buffer(buffers, (size_t) n);
    if (result == NULL)
        ctx_undo(ctx, buffers, done);
    free(buffers);
    return result;
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(struct ggml_context *ctx, ggml_backend_t backend)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return NULL;
    }
    ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(backend);
    if (buft == NULL)
        return NULL; /* logged */
    return ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
}
