/*
 * meta.c - the META device: several "simple" devices acting as one.
 *
 * Storage.  A META buffer of size S is one buffer of S bytes on every
 * simple device.  A tensor at offset o of the META buffer keeps device d's
 * form of its data at offset o of simple buffer d (its "slot"); the slot
 * is as large as the whole tensor, so any form fits in it: a slice
 * (contiguous, the tensor's shape with the split axis shortened), a full
 * copy (MIRRORED) or a full-shaped partial sum (PARTIAL).  The META
 * buffer's base address is simple buffer 0's, so a tensor's data pointer is
 * its device-0 slot.  Each META buffer records the split state of every
 * tensor initialized in it (struct meta_record).
 *
 * Computation.  graph_compute walks the META graph in order and gives
 * every node a split state derived from its sources' (plan_node); a source
 * in an unsuitable state is converted first (gathered through host
 * memory, all-reduced, or sliced into temporary buffers).  Nodes between
 * two conversions are queued as one graph per simple backend.  A computed
 * tensor's final state is written back to its buffer's record so that
 * ggml_backend_tensor_get reads it correctly.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "backend-private.h"

#define MAX_DEVS GGML_BACKEND_META_MAX_DEVICES

typedef struct ggml_backend_meta_split_state split_state;

const char *ggml_backend_meta_split_axis_name(enum ggml_backend_meta_split_axis split_axis)
{
    switch (split_axis) {
    case GGML_BACKEND_SPLIT_AXIS_0: return "0";
    case GGML_BACKEND_SPLIT_AXIS_1: return "1";
    case GGML_BACKEND_SPLIT_AXIS_2: return "2";
    case GGML_BACKEND_SPLIT_AXIS_3: return "3";
    case GGML_BACKEND_SPLIT_AXIS_MIRRORED: return "MIRRORED";
    case GGML_BACKEND_SPLIT_AXIS_PARTIAL: return "PARTIAL";
    case GGML_BACKEND_SPLIT_AXIS_NONE: return "NONE";
    case GGML_BACKEND_SPLIT_AXIS_UNKNOWN: return "UNKNOWN";
    }
    ggml__error("%d is not a split axis", (int) split_axis);
    return NULL;
}

/* ------------------------------------------------------ pointer map */

/* Open-addressing map from a tensor's address to a malloc'd value. */
struct ptr_map {
    const void **keys;
    void **vals;
    size_t cap, n; /* cap is 0 or a power of two */
};

static size_t ptr_slot(const struct ptr_map *m, const void *key)
{
    size_t h = ((size_t) (uintptr_t) key >> 4) * (size_t) 0x9E3779B97F4A7C15ull;
    size_t i = h & (m->cap - 1);
    while (m->keys[i] != NULL && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void *ptr_map_get(const struct ptr_map *m, const void *key)
{
    if (m->cap == 0)
        return NULL;
    return m->vals[ptr_slot(m, key)];
}

/* Stores val under key (replacing nothing: key must be absent); false when out of memory. */
static bool ptr_map_put(struct ptr_map *m, const void *key, void *val)
{
    if (2 * (m->n + 1) > m->cap) {
        struct ptr_map bigger = { .cap = m->cap ? 2 * m->cap : 64 };
        bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
        bigger.vals = calloc(bigger.cap, sizeof *bigger.vals);
        if (bigger.keys == NULL || bigger.vals == NULL) {
            free(bigger.keys);
            free(bigger.vals);
            ggml__error("out of memory");
            return false;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i] != NULL) {
                size_t j = ptr_slot(&bigger, m->keys[i]);
                bigger.keys[j] = m->keys[i];
                bigger.vals[j] = m->vals[i];
            }
        }
        bigger.n = m->n;
        free(m->keys);
        free(m->vals);
        *m = bigger;
    }
    size_t i = ptr_slot(m, key);
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return true;
}

/* Frees every value and empties the map. */
static void ptr_map_clear(struct ptr_map *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->vals[i]);
    free(m->keys);
    free(m->vals);
    *m = (struct ptr_map) { 0 };
}

/* ---------------------------------------------------------- devices */

struct meta_device {
    struct ggml_backend_device dev;      /* dev.context points here */
    struct ggml_backend_buffer_type buft; /* the META buffer type */
    ggml_backend_dev_t simple[MAX_DEVS];
    size_t n;
    ggml_backend_meta_get_split_state_t get_split_state;
    void *ud;
    char *name, *description, *buft_name;
    struct meta_device *next;
};

/* Every META device made; they live until the process ends. */
static struct meta_device *meta_devices;
static pthread_mutex_t meta_devices_mutex = PTHREAD_MUTEX_INITIALIZER;

static struct meta_device *meta_dev_of(ggml_backend_dev_t dev)
{
    return dev->context;
}

static bool is_split_axis(enum ggml_backend_meta_split_axis axis)
{
    return axis >= GGML_BACKEND_SPLIT_AXIS_0 && axis <= GGML_BACKEND_SPLIT_AXIS_3;
}

/* Elements per unit along axis: a split of dimension 0 cuts whole blocks. */
static int64_t unit_elements(const struct ggml_tensor *t, int axis)
{
    return axis == 0 ? ggml_blck_size(t->type) : 1;
}

/* Elements along the split axis that device d holds. */
static int64_t local_extent(const split_state *st, size_t n, size_t d)
{
    int64_t sum = 0;
    for (uint32_t s = 0; s < st->n_segments; s++)
        sum += st->ne[s * n + d] * (int64_t) st->nr[s];
    return sum;
}

/* Same axis and, for a split, the same pieces. */
static bool same_state(const split_state *a, const split_state *b, size_t n)
{
    if (a->axis != b->axis)
        return false;
    if (!is_split_axis(a->axis))
        return true;
    if (a->n_segments != b->n_segments)
        return false;
    for (uint32_t s = 0; s < a->n_segments; s++) {
        if (a->nr[s] != b->nr[s])
            return false;
        for (size_t d = 0; d < n; d++)
            if (a->ne[s * n + d] != b->ne[s * n + d])
                return false;
    }
    return true;
}

/*
 * Checks the state the callback gave tensor t and completes it: an axis
 * split with n_segments == 0 becomes one segment cut evenly in units (whole
 * blocks along dimension 0), the first devices taking one unit more when
 * the units do not divide.  False (logged) for PARTIAL, an unknown axis, a
 * split of a non-contiguous tensor or pieces that do not add up.
 */
static bool complete_static_state(const struct ggml_tensor *t, split_state *st, size_t n)
{
    if (st->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED)
        return true;
    if (st->axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s': PARTIAL is not a state for a tensor that is not computed", t->name);
        return false;
    }
    if (!is_split_axis(st->axis)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s': split axis %d is not 0..3, MIRRORED or PARTIAL", t->name, (int) st->axis);
        return false;
    }
    if (!ggml_is_contiguous(t)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s': only a contiguous tensor can be split", t->name);
        return false;
    }
    const int axis = (int) st->axis;
    const int64_t unit = unit_elements(t, axis);
    if (st->n_segments == 0) {
        const int64_t units = t->ne[axis] / unit;
        st->n_segments = 1;
        st->nr[0] = 1;
        for (size_t d = 0; d < n; d++)
            st->ne[d] = (units / (int64_t) n + ((int64_t) d < units % (int64_t) n ? 1 : 0)) * unit;
        return true;
    }
    if (st->n_segments > 16) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s': %u segments (at most 16)", t->name, st->n_segments);
        return false;
    }
    int64_t total = 0;
    for (uint32_t s = 0; s < st->n_segments; s++) {
        for (size_t d = 0; d < n; d++) {
            const int64_t piece = st->ne[s * n + d];
            if (piece < 0 || piece % unit != 0) {
                ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s': piece %" PRId64 " of segment %u is negative or not a multiple of %" PRId64,
                             t->name, piece, s, unit);
                return false;
            }
            total += piece * (int64_t) st->nr[s];
        }
    }
    if (total != t->ne[axis]) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s': the pieces along axis %d add up to %" PRId64 ", not %" PRId64,
                     t->name, axis, total, t->ne[axis]);
        return false;
    }
    return true;
}

/*
 * Gives local (device d's form of meta in state st) meta's shape: a slice
 * is contiguous with the split axis shortened; a full form keeps meta's
 * strides.  Data, buffer and everything else are left alone.
 */
static void set_local_shape(struct ggml_tensor *local, const struct ggml_tensor *meta, const split_state *st,
                            size_t n, size_t d)
{
    memcpy(local->ne, meta->ne, sizeof local->ne);
    memcpy(local->nb, meta->nb, sizeof local->nb);
    local->type = meta->type;
    if (!is_split_axis(st->axis))
        return;
    local->ne[st->axis] = local_extent(st, n, d);
    local->nb[0] = ggml_type_size(meta->type);
    local->nb[1] = local->nb[0] * (size_t) (local->ne[0] / ggml_blck_size(meta->type));
    for (int i = 2; i < GGML_MAX_DIMS; i++)
        local->nb[i] = local->nb[i - 1] * (size_t) local->ne[i - 1];
}

/* A plain tensor: device d's form of meta in state st at data in buffer. */
static void make_local(struct ggml_tensor *local, const struct ggml_tensor *meta, const split_state *st, size_t n,
                       size_t d, void *data, ggml_backend_buffer_t buffer)
{
    memset(local, 0, sizeof *local);
    set_local_shape(local, meta, st, n, d);
    local->data = data;
    local->buffer = buffer;
    memcpy(local->name, meta->name, sizeof local->name);
}

/*
 * Moves bytes between the whole tensor t (contiguous, at full) and the
 * devices' slices of it in state st (contiguous, at local[d]); to_full
 * gives the direction.
 */
static void reshuffle(const struct ggml_tensor *t, const split_state *st, size_t n, char *full, char *const *local,
                      bool to_full)
{
    const int axis = (int) st->axis;
    const int64_t unit = unit_elements(t, axis);
    const size_t unit_bytes = axis == 0 ? ggml_type_size(t->type) : t->nb[axis];
    int64_t outer = 1;
    for (int i = axis + 1; i < GGML_MAX_DIMS; i++)
        outer *= t->ne[i];
    size_t local_row[MAX_DEVS];
    for (size_t d = 0; d < n; d++)
        local_row[d] = (size_t) (local_extent(st, n, d) / unit) * unit_bytes;
    const size_t full_row = (size_t) (t->ne[axis] / unit) * unit_bytes;
    for (int64_t o = 0; o < outer; o++) {
        char *f = full + (size_t) o * full_row;
        size_t at[MAX_DEVS] = { 0 };
        for (uint32_t s = 0; s < st->n_segments; s++) {
            for (uint32_t r = 0; r < st->nr[s]; r++) {
                for (size_t d = 0; d < n; d++) {
                    const size_t bytes = (size_t) (st->ne[s * n + d] / unit) * unit_bytes;
                    char *l = local[d] + (size_t) o * local_row[d] + at[d];
                    if (to_full)
                        memcpy(f, l, bytes);
                    else
                        memcpy(l, f, bytes);
                    f += bytes;
                    at[d] += bytes;
                }
            }
        }
    }
}

/*
 * Reads the whole of meta (in state st, device forms locals[0..n)) into
 * full (ggml_nbytes(meta) bytes, meta's layout): a slice per device is
 * reassembled, a mirror read from device 0, partial sums (F32 only) added
 * in device order.  False (logged) when it cannot.
 */
static bool gather(const struct ggml_tensor *meta, const split_state *st, size_t n, struct ggml_tensor *const *locals,
                   void *full)
{
    const size_t bytes = ggml_nbytes(meta);
    if (st->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        ggml_backend_tensor_get(locals[0], full, 0, bytes);
        return true;
    }
    if (st->axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
        if (meta->type != GGML_TYPE_F32 || !ggml_is_contiguous(meta)) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s': partial sums of type %s cannot be added", meta->name,
                         ggml_type_name(meta->type));
            return false;
        }
        float *sum = full, *part = malloc(bytes);
        if (part == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "out of memory");
            return false;
        }
        const int64_t count = ggml_nelements(meta);
        ggml_backend_tensor_get(locals[0], sum, 0, bytes);
        for (size_t d = 1; d < n; d++) {
            ggml_backend_tensor_get(locals[d], part, 0, bytes);
            for (int64_t i = 0; i < count; i++)
                sum[i] += part[i];
        }
        free(part);
        return true;
    }
    char *slices[MAX_DEVS] = { 0 };
    bool ok = true;
    for (size_t d = 0; d < n && ok; d++) {
        slices[d] = malloc(ggml_nbytes(locals[d]) + 1);
        ok = slices[d] != NULL;
        if (ok)
            ggml_backend_tensor_get(locals[d], slices[d], 0, ggml_nbytes(locals[d]));
    }
    if (ok)
        reshuffle(meta, st, n, full, slices, true);
    else
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "out of memory");
    for (size_t d = 0; d < n; d++)
        free(slices[d]);
    return ok;
}

/* Writes the whole of meta from full into its device forms: a mirror to
 * every device, a split as slices.  False (logged) when it cannot. */
static bool scatter(const struct ggml_tensor *meta, const split_state *st, size_t n, struct ggml_tensor *const *locals,
                    const void *full)
{
    if (!is_split_axis(st->axis)) {
        for (size_t d = 0; d < n; d++)
            ggml_backend_tensor_set(locals[d], full, 0, ggml_nbytes(meta));
        return true;
    }
    char *slices[MAX_DEVS] = { 0 };
    bool ok = true;
    for (size_t d = 0; d < n && ok; d++)
        ok = (slices[d] = malloc(ggml_nbytes(locals[d]) + 1)) != NULL;
    if (ok) {
        reshuffle(meta, st, n, (char *) (uintptr_t) full, slices, false);
        for (size_t d = 0; d < n; d++)
            ggml_backend_tensor_set(locals[d], slices[d], 0, ggml_nbytes(locals[d]));
    } else {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "out of memory");
    }
    for (size_t d = 0; d < n; d++)
        free(slices[d]);
    return ok;
}

/* ---------------------------------------------------------- buffers */

/* The split state of one tensor placed in a META buffer. */
struct meta_record {
    split_state state; /* axis UNKNOWN for a computed tensor not computed yet */
};

struct meta_buffer {
    struct meta_device *mdev;
    ggml_backend_buffer_t simple[MAX_DEVS];
    char *base[MAX_DEVS];  /* each simple buffer's base (NULL when size is 0) */
    struct ptr_map records; /* tensor -> struct meta_record */
};

static bool buffer_is_meta(ggml_backend_buffer_t buffer);

/* The record of tensor t in its META buffer mb, or NULL (logged). */
static struct meta_record *record_of(struct meta_buffer *mb, const struct ggml_tensor *t)
{
    struct meta_record *rec = ptr_map_get(&mb->records, t);
    if (rec == NULL)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s' was not initialized in its META buffer", t->name);
    return rec;
}

/* Device d's slot of tensor t of META buffer mb. */
static char *slot_of(const struct meta_buffer *mb, const struct ggml_tensor *t, size_t d)
{
    return mb->base[d] + ((const char *) t->data - mb->base[0]);
}

/* locals[d] becomes device d's form of t, in its slot, as its record says. */
static void slot_locals(struct meta_buffer *mb, const struct ggml_tensor *t, const split_state *st,
                        struct ggml_tensor *locals)
{
    for (size_t d = 0; d < mb->mdev->n; d++)
        make_local(&locals[d], t, st, mb->mdev->n, d, slot_of(mb, t, d), mb->simple[d]);
}

static void meta_buffer_free(ggml_backend_buffer_t buffer)
{
    struct meta_buffer *mb = buffer->context;
    for (size_t d = 0; d < mb->mdev->n; d++)
        ggml_backend_buffer_free(mb->simple[d]);
    ptr_map_clear(&mb->records);
    free(mb);
}

static void *meta_buffer_get_base(ggml_backend_buffer_t buffer)
{
    struct meta_buffer *mb = buffer->context;
    return mb->base[0];
}

/*
 * A view takes its source's state when it is a mirror, or when it is the
 * whole source; other views of split tensors are refused.  A tensor that
 * is not computed gets the callback's state; a computed one stays UNKNOWN
 * until graph_compute computes it.
 */
static enum ggml_status meta_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor)
{
    struct meta_buffer *mb = buffer->context;
    struct meta_device *mdev = mb->mdev;
    split_state st = { .axis = GGML_BACKEND_SPLIT_AXIS_UNKNOWN };
    if (tensor->view_src != NULL && tensor->op != GGML_OP_NONE && tensor->op != GGML_OP_VIEW &&
        tensor->op != GGML_OP_RESHAPE && tensor->op != GGML_OP_PERMUTE && tensor->op != GGML_OP_TRANSPOSE) {
        /* an in-place result: computed like any node */
    } else if (tensor->view_src != NULL) {
        const struct meta_record *src = ptr_map_get(&mb->records, tensor->view_src);
        if (src == NULL) {
            ggml__error("view '%s': its source '%s' is not initialized in this META buffer", tensor->name,
                        tensor->view_src->name);
            return GGML_STATUS_FAILED;
        }
        const bool whole = tensor->view_offs == 0 && ggml__same_layout(tensor, tensor->view_src);
        if (src->state.axis == GGML_BACKEND_SPLIT_AXIS_UNKNOWN || src->state.axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED || whole) {
            st = src->state;
        } else {
            ggml__error("view '%s' of '%s' (split along %s): only the whole of a split tensor can be viewed",
                        tensor->name, tensor->view_src->name, ggml_backend_meta_split_axis_name(src->state.axis));
            return GGML_STATUS_FAILED;
        }
    } else if (tensor->op == GGML_OP_NONE) {
        st = mdev->get_split_state(tensor, mdev->ud);
        if (!complete_static_state(tensor, &st, mdev->n))
            return GGML_STATUS_FAILED;
    }
    struct meta_record *rec = ptr_map_get(&mb->records, tensor);
    if (rec == NULL) {
        rec = malloc(sizeof *rec);
        if (rec == NULL || !ptr_map_put(&mb->records, tensor, rec)) {
            free(rec);
            ggml__error("out of memory");
            return GGML_STATUS_ALLOC_FAILED;
        }
    }
    rec->state = st;
    return GGML_STATUS_SUCCESS;
}

/*
 * Applies a change of bytes [offset, offset + size) of tensor: either data
 * (set) or value (memset).  A mirror is changed on every device; a split
 * tensor is changed whole or through a host copy of it.
 */
static void meta_buffer_write(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, const void *data,
                              uint8_t value, size_t offset, size_t size)
{
    struct meta_buffer *mb = buffer->context;
    const size_t n = mb->mdev->n;
    struct meta_record *rec = record_of(mb, tensor);
    if (rec == NULL)
        return;
    struct ggml_tensor locals[MAX_DEVS];
    struct ggml_tensor *ptrs[MAX_DEVS];
    for (size_t d = 0; d < n; d++)
        ptrs[d] = &locals[d];
    if (rec->state.axis == GGML_BACKEND_SPLIT_AXIS_UNKNOWN)
        rec->state.axis = GGML_BACKEND_SPLIT_AXIS_MIRRORED; /* a computed tensor written before computed */
    slot_locals(mb, tensor, &rec->state, locals);
    if (rec->state.axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        for (size_t d = 0; d < n; d++) {
            if (data)
                ggml_backend_tensor_set(&locals[d], data, offset, size);
            else
                ggml_backend_tensor_memset(&locals[d], value, offset, size);
        }
        return;
    }
    const size_t bytes = ggml_nbytes(tensor);
    char *full = malloc(bytes);
    if (full == NULL) {
        ggml__error("out of memory");
        return;
    }
    if ((offset == 0 && size == bytes) || gather(tensor, &rec->state, n, ptrs, full)) {
        if (data)
            memcpy(full + offset, data, size);
        else
            memset(full + offset, value, size);
        if (rec->state.axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
            /* the sum, written whole-shaped, is now a mirror */
            rec->state.axis = GGML_BACKEND_SPLIT_AXIS_MIRRORED;
            slot_locals(mb, tensor, &rec->state, locals);
        }
        scatter(tensor, &rec->state, n, ptrs, full);
    }
    free(full);
}

static void meta_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, const void *data,
                                   size_t offset, size_t size)
{
    meta_buffer_write(buffer, tensor, data, 0, offset, size);
}

static void meta_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, uint8_t value,
                                      size_t offset, size_t size)
{
    meta_buffer_write(buffer, tensor, NULL, value, offset, size);
}

static void meta_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, void *data,
                                   size_t offset, size_t size)
{
    struct meta_buffer *mb = buffer->context;
    const size_t n = mb->mdev->n;
    struct meta_record *rec = record_of(mb, tensor);
    if (rec == NULL)
        return;
    if (rec->state.axis == GGML_BACKEND_SPLIT_AXIS_UNKNOWN) {
        ggml__error("tensor '%s' has not been computed or set", tensor->name);
        return;
    }
    struct ggml_tensor locals[MAX_DEVS];
    struct ggml_tensor *ptrs[MAX_DEVS];
    for (size_t d = 0; d < n; d++)
        ptrs[d] = &locals[d];
    slot_locals(mb, tensor, &rec->state, locals);
    if (rec->state.axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        ggml_backend_tensor_get(&locals[0], data, offset, size);
        return;
    }
    const size_t bytes = ggml_nbytes(tensor);
    char *full = malloc(bytes);
    if (full == NULL) {
        ggml__error("out of memory");
        return;
    }
    if (gather(tensor, &rec->state, n, ptrs, full))
        memcpy(data, full + offset, size);
    free(full);
}

static void meta_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    struct meta_buffer *mb = buffer->context;
    for (size_t d = 0; d < mb->mdev->n; d++)
        ggml_backend_buffer_clear(mb->simple[d], value);
}

static void meta_buffer_reset(ggml_backend_buffer_t buffer)
{
    struct meta_buffer *mb = buffer->context;
    ptr_map_clear(&mb->records);
    for (size_t d = 0; d < mb->mdev->n; d++)
        ggml_backend_buffer_reset(mb->simple[d]);
}

static const struct ggml_backend_buffer_i meta_buffer_iface = {
    .free_buffer = meta_buffer_free,
    .get_base = meta_buffer_get_base,
    .init_tensor = meta_buffer_init_tensor,
    .memset_tensor = meta_buffer_memset_tensor,
    .set_tensor = meta_buffer_set_tensor,
    .get_tensor = meta_buffer_get_tensor,
    .clear = meta_buffer_clear,
    .reset = meta_buffer_reset,
};

static bool buffer_is_meta(ggml_backend_buffer_t buffer)
{
    return buffer != NULL && buffer->iface.get_tensor == meta_buffer_get_tensor;
}

/* ----------------------------------------------------- buffer type */

static const char *meta_buft_get_name(ggml_backend_buffer_type_t buft)
{
    return meta_dev_of(buft->device)->buft_name;
}

static ggml_backend_buffer_t meta_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    struct meta_device *mdev = meta_dev_of(buft->device);
    struct meta_buffer *mb = calloc(1, sizeof *mb);
    if (mb == NULL) {
        ggml__error("out of memory");
        return NULL;
    }
    mb->mdev = mdev;
    bool ok = true;
    for (size_t d = 0; d < mdev->n && ok; d++) {
        mb->simple[d] = ggml_backend_buft_alloc_buffer(ggml_backend_dev_buffer_type(mdev->simple[d]), size);
        ok = mb->simple[d] != NULL && (mb->base[d] = ggml_backend_buffer_get_base(mb->simple[d])) != NULL;
    }
    ggml_backend_buffer_t buffer = ok ? ggml_backend_buffer_init(buft, meta_buffer_iface, mb, size) : NULL;
    if (buffer == NULL) {
        for (size_t d = 0; d < mdev->n; d++)
            ggml_backend_buffer_free(mb->simple[d]);
        free(mb);
    }
    return buffer;
}

/* The largest alignment of the simple buffer types (alignments are powers of two). */
static size_t meta_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    struct meta_device *mdev = meta_dev_of(buft->device);
    size_t align = 1;
    for (size_t d = 0; d < mdev->n; d++) {
        size_t a = ggml_backend_buft_get_alignment(ggml_backend_dev_buffer_type(mdev->simple[d]));
        align = a > align ? a : align;
    }
    return align;
}

static size_t meta_buft_get_max_size(ggml_backend_buffer_type_t buft)
{
    struct meta_device *mdev = meta_dev_of(buft->device);
    size_t max = SIZE_MAX;
    for (size_t d = 0; d < mdev->n; d++) {
        size_t m = ggml_backend_buft_get_max_size(ggml_backend_dev_buffer_type(mdev->simple[d]));
        max = m < max ? m : max;
    }
    return max;
}

/* A slot holds the whole tensor on every device. */
static size_t meta_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor *tensor)
{
    struct meta_device *mdev = meta_dev_of(buft->device);
    size_t size = 0;
    for (size_t d = 0; d < mdev->n; d++) {
        size_t s = ggml_backend_buft_get_alloc_size(ggml_backend_dev_buffer_type(mdev->simple[d]), tensor);
        size = s > size ? s : size;
    }
    return size;
}

static const struct ggml_backend_buffer_type_i meta_buft_iface = {
    .get_name = meta_buft_get_name,
    .alloc_buffer = meta_buft_alloc_buffer,
    .get_alignment = meta_buft_get_alignment,
    .get_max_size = meta_buft_get_max_size,
    .get_alloc_size = meta_buft_get_alloc_size,
    .is_host = NULL, /* slices are not the standard layout of the whole */
};

/* ---------------------------------------------------------- compute */

struct meta_backend {
    struct meta_device *mdev;
    ggml_backend_t simple[MAX_DEVS];
    void *comm; /* the registry's communication context, or NULL */
    ggml_backend_comm_allreduce_tensor_t allreduce;
    ggml_backend_comm_free_t comm_free;
};

/* A META tensor's current form during one graph_compute. */
struct tform {
    const struct ggml_tensor *meta;
    split_state st;
    bool in_slot; /* locals are its slots, which conversions may overwrite (computed tensors) */
    struct ggml_tensor local[MAX_DEVS];
};

struct compute {
    struct meta_backend *mbe;
    size_t n;
    struct ptr_map forms;        /* META tensor -> struct tform */
    struct tform **extra_forms;  /* forms not in the map (slices of mirrors) */
    size_t n_extra, cap_extra;
    ggml_backend_buffer_t *temps; /* temporary simple buffers */
    size_t n_temps, cap_temps;
    struct tform **pending;      /* nodes queued since the last flush */
    size_t n_pending, cap_pending;
};

static bool grow(void **array, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t cap2 = *cap ? 2 * *cap : 16;
    while (cap2 < need)
        cap2 *= 2;
    void *p = realloc(*array, cap2 * elem);
    if (p == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "out of memory");
        return false;
    }
    *array = p;
    *cap = cap2;
    return true;
}

static struct tform *new_extra_form(struct compute *c)
{
    if (!grow((void **) &c->extra_forms, &c->cap_extra, c->n_extra + 1, sizeof *c->extra_forms))
        return NULL;
    struct tform *f = calloc(1, sizeof *f);
    if (f == NULL)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "out of memory");
    else
        c->extra_forms[c->n_extra++] = f;
    return f;
}

/* The META buffer holding t, or NULL (logged) when t is not in one of this device's. */
static struct meta_buffer *meta_buffer_of(struct compute *c, const struct ggml_tensor *t)
{
    ggml_backend_buffer_t buffer = t->view_src ? t->view_src->buffer : t->buffer;
    if (t->data == NULL || !buffer_is_meta(buffer) || buffer->buft != &c->mbe->mdev->buft) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s' is not allocated in a buffer of the META device %s",
                     t->name, c->mbe->mdev->name);
        return NULL;
    }
    return buffer->context;
}

/* The current form of a tensor this graph does not compute: its record's. */
static struct tform *form_of(struct compute *c, const struct ggml_tensor *t)
{
    struct tform *f = ptr_map_get(&c->forms, t);
    if (f != NULL)
        return f;
    struct meta_buffer *mb = meta_buffer_of(c, t);
    struct meta_record *rec = mb ? record_of(mb, t) : NULL;
    if (rec == NULL)
        return NULL;
    if (rec->state.axis == GGML_BACKEND_SPLIT_AXIS_UNKNOWN) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "tensor '%s' is read before it is computed or set", t->name);
        return NULL;
    }
    f = calloc(1, sizeof *f);
    if (f == NULL || !ptr_map_put(&c->forms, t, f)) {
        free(f);
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "out of memory");
        return NULL;
    }
    f->meta = t;
    f->st = rec->state;
    slot_locals(mb, t, &f->st, f->local);
    return f;
}

/* Runs the queued nodes: one graph per simple backend.  Afterwards they
 * are leaves to later graphs. */
static enum ggml_status flush(struct compute *c)
{
    if (c->n_pending == 0)
        return GGML_STATUS_SUCCESS;
    const size_t size = c->n_pending * (GGML_MAX_SRC + 1) + 16;
    enum ggml_status status = GGML_STATUS_SUCCESS;
    for (size_t d = 0; d < c->n && status == GGML_STATUS_SUCCESS; d++) {
        struct ggml_init_params params = {
            .mem_size = ggml_graph_overhead_custom(size, false), .mem_buffer = NULL, .no_alloc = true
        };
        struct ggml_context *ctx = ggml_init(params);
        struct ggml_cgraph *graph = ctx ? ggml_new_graph_custom(ctx, size, false) : NULL;
        if (graph == NULL) {
            ggml_free(ctx);
            return GGML_STATUS_ALLOC_FAILED;
        }
        for (size_t i = 0; i < c->n_pending; i++)
            ggml_build_forward_expand(graph, &c->pending[i]->local[d]);
        status = ggml_backend_graph_compute(c->mbe->simple[d], graph);
        ggml_free(ctx);
    }
    for (size_t i = 0; i < c->n_pending; i++) {
        for (size_t d = 0; d < c->n; d++) {
            c->pending[i]->local[d].op = GGML_OP_NONE;
            memset(c->pending[i]->local[d].src, 0, sizeof c->pending[i]->local[d].src);
        }
    }
    c->n_pending = 0;
    return status;
}

/* New temporary buffers, one per device, sized for t in state st; locals point into them. */
static bool temp_locals(struct compute *c, struct tform *f)
{
    if (!grow((void **) &c->temps, &c->cap_temps, c->n_temps + c->n, sizeof *c->temps))
        return false;
    for (size_t d = 0; d < c->n; d++) {
        struct ggml_tensor shape;
        make_local(&shape, f->meta, &f->st, c->n, d, NULL, NULL);
        ggml_backend_dev_t dev = c->mbe->mdev->simple[d];
        ggml_backend_buffer_t buf =
            ggml_backend_buft_alloc_buffer(ggml_backend_dev_buffer_type(dev), ggml_nbytes(&shape) + 64);
        if (buf == NULL)
            return false;
        c->temps[c->n_temps++] = buf;
        make_local(&f->local[d], f->meta, &f->st, c->n, d, ggml_backend_buffer_get_base(buf), buf);
    }
    return true;
}

static bool to_mirrored(struct compute *c, struct tform *f)
{
    if (f->st.axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED)
        return true;
    if (flush(c) != GGML_STATUS_SUCCESS)
        return false;
    struct ggml_tensor *ptrs[MAX_DEVS];
    for (size_t d = 0; d < c->n; d++)
        ptrs[d] = &f->local[d];
    if (f->st.axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL && c->mbe->allreduce != NULL &&
        c->mbe->allreduce(c->mbe->comm, ptrs)) {
        f->st.axis = GGML_BACKEND_SPLIT_AXIS_MIRRORED;
        return true;
    }
    char *full = malloc(ggml_nbytes(f->meta));
    bool ok = full != NULL && gather(f->meta, &f->st, c->n, ptrs, full);
    if (ok) {
        f->st.axis = GGML_BACKEND_SPLIT_AXIS_MIRRORED;
        if (f->in_slot) {
            for (size_t d = 0; d < c->n; d++)
                set_local_shape(&f->local[d], f->meta, &f->st, c->n, d);
        } else {
            ok = temp_locals(c, f);
        }
        ok = ok && scatter(f->meta, &f->st, c->n, ptrs, full);
    } else if (full == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "out of memory");
    }
    free(full);
    return ok;
}

/* A form of f's tensor in state want: f itself, or a slice of its mirror in
 * temporary buffers.  NULL (logged) when it cannot. */
static struct tform *to_state(struct compute *c, struct tform *f, const split_state *want)
{
    if (same_state(&f->st, want, c->n))
        return f;
    if (!to_mirrored(c, f))
        return NULL;
    if (want->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED)
        return f;
    struct tform *slice = new_extra_form(c);
    if (slice == NULL)
        return NULL;
    slice->meta = f->meta;
    slice->st = *want;
    char *full = malloc(ggml_nbytes(f->meta));
    bool ok = full != NULL && temp_locals(c, slice);
    if (ok) {
        ggml_backend_tensor_get(&f->local[0], full, 0, ggml_nbytes(f->meta));
        struct ggml_tensor *ptrs[MAX_DEVS];
        for (size_t d = 0; d < c->n; d++)
            ptrs[d] = &slice->local[d];
        ok = scatter(f->meta, want, c->n, ptrs, full);
    }
    free(full);
    return ok ? slice : NULL;
}

static const split_state mirrored = { .axis = GGML_BACKEND_SPLIT_AXIS_MIRRORED };

/* want copies have the axis moved from `from` to `to` (pieces kept). */
static split_state moved_axis(const split_state *st, enum ggml_backend_meta_split_axis to)
{
    split_state moved = *st;
    moved.axis = to;
    return moved;
}

/* True when the pieces of st (in elements) cut whole blocks of type. */
static bool pieces_fit(const split_state *st, size_t n, enum ggml_type type)
{
    for (uint32_t s = 0; s < st->n_segments; s++)
        for (size_t d = 0; d < n; d++)
            if (st->ne[s * n + d] % ggml_blck_size(type) != 0)
                return false;
    return true;
}

/*
 * The split state node gets from its sources' forms src[] and the state
 * want[i] each source must be in first.  Whatever is not recognised here
 * is computed whole on mirrored sources.
 */
static split_state plan_node(const struct compute *c, const struct ggml_tensor *node, struct tform *const *src,
                             split_state *want)
{
    const size_t n = c->n;
    for (int i = 0; i < GGML_MAX_SRC; i++)
        want[i] = src[i] ? src[i]->st : mirrored;
    const split_state *s0 = src[0] ? &src[0]->st : NULL, *s1 = src[1] ? &src[1]->st : NULL;
    const bool split0 = s0 && is_split_axis(s0->axis);
    switch (node->op) {
    case GGML_OP_MUL_MAT:
        if (s1->axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL)
            break;
        if (s0->axis == GGML_BACKEND_SPLIT_AXIS_1 && s1->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED)
            return moved_axis(s0, GGML_BACKEND_SPLIT_AXIS_0);
        if (s0->axis == GGML_BACKEND_SPLIT_AXIS_0 && pieces_fit(s0, n, node->src[1]->type) &&
            ggml_is_contiguous(node->src[1]) && s1->axis != GGML_BACKEND_SPLIT_AXIS_1) {
            want[1] = *s0;
            return (split_state) { .axis = GGML_BACKEND_SPLIT_AXIS_PARTIAL };
        }
        if (s0->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED && s1->axis == GGML_BACKEND_SPLIT_AXIS_1)
            return *s1;
        if (s0->axis >= GGML_BACKEND_SPLIT_AXIS_2 && is_split_axis(s0->axis) && same_state(s0, s1, n) &&
            node->src[0]->ne[s0->axis] == node->src[1]->ne[s0->axis])
            return *s0;
        if (s0->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED && s1->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED)
            return mirrored;
        break;
    case GGML_OP_ADD:
    case GGML_OP_SUB:
    case GGML_OP_MUL:
    case GGML_OP_DIV:
        if (split0 && s1->axis != GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
            const int axis = (int) s0->axis;
            if (node->src[1]->ne[axis] == 1)
                want[1] = mirrored;
            else if (node->src[1]->ne[axis] == node->src[0]->ne[axis] && ggml_is_contiguous(node->src[1]) &&
                     pieces_fit(s0, n, node->src[1]->type))
                want[1] = *s0;
            else
                break;
            return *s0;
        }
        break;
    case GGML_OP_UNARY:
    case GGML_OP_SCALE:
    case GGML_OP_SQR:
    case GGML_OP_SQRT:
    case GGML_OP_CLAMP:
        if (split0 || s0->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED)
            return *s0;
        break;
    case GGML_OP_NORM:
    case GGML_OP_RMS_NORM:
    case GGML_OP_SOFT_MAX:
        if (node->src[1] == NULL && split0 && s0->axis != GGML_BACKEND_SPLIT_AXIS_0)
            return *s0;
        break;
    default:
        break;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++)
        want[i] = mirrored;
    return mirrored;
}

static bool is_view_op(enum ggml_op op)
{
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

/* Queues node: its sources brought to the planned states, its device forms
 * built in its slots (a view: into its mirrored source's forms). */
static bool queue_node(struct compute *c, struct ggml_tensor *node)
{
    struct meta_buffer *mb = meta_buffer_of(c, node);
    if (mb == NULL)
        return false;
    if (ptr_map_get(&c->forms, node) != NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "node '%s' appears twice in the graph", node->name);
        return false;
    }
    struct tform *src[GGML_MAX_SRC] = { 0 };
    for (int i = 0; i < GGML_MAX_SRC; i++)
        if (node->src[i] != NULL && (src[i] = form_of(c, node->src[i])) == NULL)
            return false;
    split_state want[GGML_MAX_SRC];
    struct tform *f = calloc(1, sizeof *f);
    if (f == NULL || !ptr_map_put(&c->forms, node, f)) {
        free(f);
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_meta", "out of memory");
        return false;
    }
    f->meta = node;
    f->in_slot = true;
    f->st = is_view_op(node->op) ? mirrored : plan_node(c, node, src, want);
    for (int i = 0; i < GGML_MAX_SRC; i++)
        if (src[i] != NULL && (src[i] = to_state(c, src[i], is_view_op(node->op) ? &mirrored : &want[i])) == NULL)
            return false;
    struct tform *view_src = NULL;
    if (is_view_op(node->op) && node->view_src != NULL) {
        if ((view_src = form_of(c, node->view_src)) == NULL || !to_mirrored(c, view_src))
            return false;
    }
    for (size_t d = 0; d < c->n; d++) {
        struct ggml_tensor *l = &f->local[d];
        *l = *node;
        set_local_shape(l, node, &f->st, c->n, d);
        for (int i = 0; i < GGML_MAX_SRC; i++)
            l->src[i] = src[i] ? &src[i]->local[d] : NULL;
        l->extra = NULL;
        l->view_src = NULL;
        l->view_offs = 0;
        l->buffer = mb->simple[d];
        l->data = slot_of(mb, node, d);
        if (view_src != NULL) {
            l->view_src = &view_src->local[d];
            l->view_offs = (size_t) ((char *) node->data - (char *) node->view_src->data);
            l->data = (char *) view_src->local[d].data + l->view_offs;
            l->buffer = view_src->local[d].buffer;
        }
    }
    if (!grow((void **) &c->pending, &c->cap_pending, c->n_pending + 1, sizeof *c->pending))
        return false;
    c->pending[c->n_pending++] = f;
    return true;
}

/* Writes the final state of every computed tensor to its buffer's record. */
static void record_states(struct compute *c)
{
    for (size_t i = 0; i < c->forms.cap; i++) {
        const struct tform *f = c->forms.vals[i];
        if (f == NULL || !f->in_slot)
            continue;
        ggml_backend_buffer_t buffer = f->meta->view_src ? f->meta->view_src->buffer : f->meta->buffer;
        struct meta_record *rec = ptr_map_get(&((struct meta_buffer *) buffer->context)->records, f->meta);
        if (rec != NULL)
            rec->state = f->st;
    }
}

static enum ggml_status meta_graph_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    struct compute c = { .mbe = backend->context, .n = ((struct meta_backend *) backend->context)->mdev->n };
    enum ggml_status status = GGML_STATUS_SUCCESS;
    const int n_nodes = ggml_graph_n_nodes(cgraph);
    for (int i = 0; i < n_nodes && status == GGML_STATUS_SUCCESS; i++) {
        struct ggml_tensor *node = ggml_graph_node(cgraph, i);
        if (node->op != GGML_OP_NONE && !queue_node(&c, node))
            status = GGML_STATUS_FAILED;
    }
    if (status == GGML_STATUS_SUCCESS)
        status = flush(&c);
    record_states(&c);
    for (size_t d = 0; d < c.n; d++)
        ggml_backend_synchronize(c.mbe->simple[d]);
    for (size_t i = 0; i < c.n_temps; i++)
        ggml_backend_buffer_free(c.temps[i]);
    for (size_t i = 0; i < c.n_extra; i++)
        free(c.extra_forms[i]);
    free(c.temps);
    free(c.extra_forms);
    free(c.pending);
    ptr_map_clear(&c.forms);
    return status;
}

/* ---------------------------------------------------------- backend */

static const char *meta_backend_get_name(ggml_backend_t backend)
{
    return ((struct meta_backend *) backend->context)->mdev->name;
}

static void meta_backend_free(ggml_backend_t backend)
{
    struct meta_backend *mbe = backend->context;
    if (mbe->comm != NULL && mbe->comm_free != NULL)
        mbe->comm_free(mbe->comm);
    for (size_t d = 0; d < mbe->mdev->n; d++)
        ggml_backend_free(mbe->simple[d]);
    free(mbe);
    free(backend);
}

static void meta_backend_synchronize(ggml_backend_t backend)
{
    struct meta_backend *mbe = backend->context;
    for (size_t d = 0; d < mbe->mdev->n; d++)
        ggml_backend_synchronize(mbe->simple[d]);
}

static const struct ggml_backend_i meta_backend_iface = {
    .get_name = meta_backend_get_name,
    .free = meta_backend_free,
    .synchronize = meta_backend_synchronize,
    .graph_compute = meta_graph_compute,
};

static ggml_guid_t meta_guid(void)
{
    static ggml_guid guid = { 0x6d, 0x65, 0x74, 0x61, 0x2d, 0x6c, 0x69, 0x62,
                              0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x62, 0x6b, 0x31 };
    return &guid;
}

/* Looks up the registry's communication functions (all three, or none is used). */
static void meta_backend_open_comm(struct meta_backend *mbe)
{
    if (mbe->mdev->n < 2)
        return;
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(mbe->mdev->simple[0]);
    if (reg == NULL || reg->iface.get_proc_address == NULL)
        return;
    ggml_backend_comm_init_t init = (ggml_backend_comm_init_t) reg->iface.get_proc_address(reg, "ggml_backend_comm_init");
    ggml_backend_comm_allreduce_tensor_t allreduce =
        (ggml_backend_comm_allreduce_tensor_t) reg->iface.get_proc_address(reg, "ggml_backend_comm_allreduce_tensor");
    ggml_backend_comm_free_t comm_free = (ggml_backend_comm_free_t) reg->iface.get_proc_address(reg, "ggml_backend_comm_free");
    if (init == NULL || allreduce == NULL || comm_free == NULL)
        return;
    mbe->comm = init(mbe->simple, mbe->mdev->n);
    if (mbe->comm != NULL) {
        mbe->allreduce = allreduce;
        mbe->comm_free = comm_free;
    }
}

static ggml_backend_t meta_dev_init_backend(ggml_backend_dev_t dev, const char *params)
{
    struct meta_device *mdev = meta_dev_of(dev);
    struct meta_backend *mbe = calloc(1, sizeof *mbe);
    ggml_backend_t backend = malloc(sizeof *backend);
    bool ok = mbe != NULL && backend != NULL;
    if (!ok)
        ggml__error("out of memory");
    if (mbe != NULL)
        mbe->mdev = mdev;
    for (size_t d = 0; d < mdev->n && ok; d++)
        ok = (mbe->simple[d] = ggml_backend_dev_init(mdev->simple[d], params)) != NULL;
    if (!ok) {
        if (mbe != NULL)
            for (size_t d = 0; d < mdev->n; d++)
                ggml_backend_free(mbe->simple[d]);
        free(mbe);
        free(backend);
        return NULL;
    }
    meta_backend_open_comm(mbe);
    *backend = (struct ggml_backend) { .guid = meta_guid(), .iface = meta_backend_iface, .device = dev, .context = mbe };
    return backend;
}

/* ------------------------------------------------- device interface */

static const char *meta_dev_get_name(ggml_backend_dev_t dev)
{
    return meta_dev_of(dev)->name;
}

static const char *meta_dev_get_description(ggml_backend_dev_t dev)
{
    return meta_dev_of(dev)->description;
}

static void meta_dev_get_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes)
{
    struct meta_device *mdev = meta_dev_of(dev);
    *free_bytes = *total_bytes = 0;
    for (size_t d = 0; d < mdev->n; d++) {
        size_t f, t;
        ggml_backend_dev_memory(mdev->simple[d], &f, &t);
        *free_bytes += f;
        *total_bytes += t;
    }
}

static enum ggml_backend_dev_type meta_dev_get_type(ggml_backend_dev_t dev)
{
    return GGML_BACKEND_DEVICE_TYPE_META;
}

static void meta_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    props->name = meta_dev_get_name(dev);
    props->description = meta_dev_get_description(dev);
    meta_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = GGML_BACKEND_DEVICE_TYPE_META;
    props->device_id = NULL;
    props->caps = (struct ggml_backend_dev_caps) { 0 };
}

static ggml_backend_buffer_type_t meta_dev_get_buffer_type(ggml_backend_dev_t dev)
{
    return &meta_dev_of(dev)->buft;
}

/* Every simple device supports op, asked about with its sources (and op)
 * taken out of their META buffers. */
static bool meta_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    struct meta_device *mdev = meta_dev_of(dev);
    struct ggml_tensor copy = *op, srcs[GGML_MAX_SRC];
    copy.buffer = NULL;
    copy.view_src = NULL;
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (op->src[i] == NULL)
            continue;
        srcs[i] = *op->src[i];
        srcs[i].buffer = NULL;
        srcs[i].view_src = NULL;
        copy.src[i] = &srcs[i];
    }
    for (size_t d = 0; d < mdev->n; d++)
        if (!ggml_backend_dev_supports_op(mdev->simple[d], &copy))
            return false;
    return true;
}

static bool meta_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    return buft == &meta_dev_of(dev)->buft;
}

static const struct ggml_backend_device_i meta_device_iface = {
    .get_name = meta_dev_get_name,
    .get_description = meta_dev_get_description,
    .get_memory = meta_dev_get_memory,
    .get_type = meta_dev_get_type,
    .get_props = meta_dev_get_props,
    .init_backend = meta_dev_init_backend,
    .get_buffer_type = meta_dev_get_buffer_type,
    .supports_op = meta_dev_supports_op,
    .supports_buft = meta_dev_supports_buft,
};

/* ---------------------------------------------------------- registry */

/* The META devices' registry: lists the devices made so far; it is not
 * among the registered registries. */
static const char *meta_reg_get_name(ggml_backend_reg_t reg)
{
    return "Meta";
}

static size_t meta_reg_get_device_count(ggml_backend_reg_t reg)
{
    size_t count = 0;
    pthread_mutex_lock(&meta_devices_mutex);
    for (struct meta_device *m = meta_devices; m != NULL; m = m->next)
        count++;
    pthread_mutex_unlock(&meta_devices_mutex);
    return count;
}

static ggml_backend_dev_t meta_reg_get_device(ggml_backend_reg_t reg, size_t index)
{
    ggml_backend_dev_t dev = NULL;
    pthread_mutex_lock(&meta_devices_mutex);
    struct meta_device *m = meta_devices;
    for (size_t i = 0; m != NULL && i < index; i++)
        m = m->next;
    dev = m ? &m->dev : NULL;
    pthread_mutex_unlock(&meta_devices_mutex);
    return dev;
}

static struct ggml_backend_reg meta_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name = meta_reg_get_name,
        .get_device_count = meta_reg_get_device_count,
        .get_device = meta_reg_get_device,
    },
};

/* "Meta(" names[0] "," ... ")", or NULL when out of memory. */
static char *meta_name(const char *const *names, size_t n)
{
    size_t len = sizeof "Meta()";
    for (size_t d = 0; d < n; d++)
        len += strlen(names[d] ? names[d] : "?") + 1;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    strcpy(s, "Meta(");
    for (size_t d = 0; d < n; d++) {
        if (d > 0)
            strcat(s, ",");
        strcat(s, names[d] ? names[d] : "?");
    }
    strcat(s, ")");
    return s;
}

static struct meta_device *find_meta_device_locked(ggml_backend_dev_t *devs, size_t n_devs,
                                                   ggml_backend_meta_get_split_state_t get_split_state, void *ud)
{
    for (struct meta_device *m = meta_devices; m != NULL; m = m->next)
        if (m->n == n_devs && m->get_split_state == get_split_state && m->ud == ud &&
            memcmp(m->simple, devs, n_devs * sizeof *devs) == 0)
            return m;
    return NULL;
}

static struct meta_device *new_meta_device(ggml_backend_dev_t *devs, size_t n_devs,
                                           ggml_backend_meta_get_split_state_t get_split_state, void *ud)
{
    struct meta_device *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    const char *names[MAX_DEVS], *descriptions[MAX_DEVS], *buft_names[MAX_DEVS];
    for (size_t d = 0; d < n_devs; d++) {
        m->simple[d] = devs[d];
        names[d] = ggml_backend_dev_name(devs[d]);
        descriptions[d] = ggml_backend_dev_description(devs[d]);
        buft_names[d] = ggml_backend_buft_name(ggml_backend_dev_buffer_type(devs[d]));
    }
    m->n = n_devs;
    m->get_split_state = get_split_state;
    m->ud = ud;
    m->name = meta_name(names, n_devs);
    m->description = meta_name(descriptions, n_devs);
    m->buft_name = meta_name(buft_names, n_devs);
    if (m->name == NULL || m->description == NULL || m->buft_name == NULL) {
        free(m->name);
        free(m->description);
        free(m->buft_name);
        free(m);
        return NULL;
    }
    m->dev = (struct ggml_backend_device) { .iface = meta_device_iface, .reg = &meta_reg, .context = m };
    m->buft = (struct ggml_backend_buffer_type) { .iface = meta_buft_iface, .device = &m->dev, .context = m };
    return m;
}

ggml_backend_dev_t ggml_backend_meta_device(ggml_backend_dev_t *devs, size_t n_devs,
                                            ggml_backend_meta_get_split_state_t get_split_state,
                                            void *get_split_state_ud)
{
    if (devs == NULL || get_split_state == NULL) {
        ggml__error("%s is NULL", devs == NULL ? "devs" : "get_split_state");
        return NULL;
    }
    if (n_devs == 0 || n_devs > MAX_DEVS) {
        ggml__error("n_devs is %zu, not 1..%d", n_devs, MAX_DEVS);
        return NULL;
    }
    for (size_t d = 0; d < n_devs; d++) {
        if (devs[d] == NULL) {
            ggml__error("devs[%zu] is NULL", d);
            return NULL;
        }
        if (devs[d]->iface.get_type == meta_dev_get_type) {
            ggml__error("devs[%zu] (%s) is a META device itself", d, ggml_backend_dev_name(devs[d]));
            return NULL;
        }
        if (ggml_backend_dev_buffer_type(devs[d]) == NULL) {
            ggml__error("devs[%zu] (%s) has no buffer type", d, ggml_backend_dev_name(devs[d]));
            return NULL;
        }
    }
    pthread_mutex_lock(&meta_devices_mutex);
    struct meta_device *m = find_meta_device_locked(devs, n_devs, get_split_state, get_split_state_ud);
    if (m == NULL && (m = new_meta_device(devs, n_devs, get_split_state, get_split_state_ud)) != NULL) {
        m->next = meta_devices;
        meta_devices = m;
    }
    pthread_mutex_unlock(&meta_devices_mutex);
    if (m == NULL)
        ggml__error("out of memory");
    return m ? &m->dev : NULL;
}
