/*
 * handles.c - the table of live handles, and the busy flag of objects that
 * serve one thread at a time (see backend-private.h).
 *
 * One open-addressing pointer set per handle kind, with tombstones for
 * removed entries.  The table only compares pointer values; it never
 * dereferences a handle.
 *
 * Every public call looks a handle up, so lookups take no lock: writers
 * (adding and removing handles, under table_lock) make table_seq odd while
 * they change any set, and a lookup that saw it odd, or changed, tries
 * again (a sequence lock).  A lookup may read an array while a writer
 * changes it, so every slot is an atomic pointer, a probe stops after
 * capacity slots whatever it reads, and an array is never freed while the
 * process runs: a set grows into a new array (the old one stays, listed
 * in retired_arrays), never shrinks, and drops its tombstones in place.
 * What the arrays take is bounded by twice the largest set.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "backend-private.h"

#define SLOT_EMPTY NULL
#define SLOT_REMOVED ((const void *) (uintptr_t) 1)

typedef _Atomic(const void *) slot_t;

struct pointer_set {
    _Atomic(slot_t *) slots;
    atomic_size_t capacity; /* a power of two, or 0 before the first insert */
    size_t occupied;        /* live entries plus tombstones (writers only) */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint table_seq; /* odd while a writer changes a set */
static struct pointer_set live[GGML__HANDLE_KIND_COUNT];

/* Arrays replaced by larger ones, which a lookup may still be reading. */
struct retired_array {
    slot_t *slots;
    struct retired_array *next;
};
static struct retired_array *retired_arrays;

static const char *const kind_names[GGML__HANDLE_KIND_COUNT] = {
    [GGML__HANDLE_BUFFER] = "buffer",
    [GGML__HANDLE_BACKEND] = "backend",
    [GGML__HANDLE_EVENT] = "event",
    [GGML__HANDLE_GALLOCR] = "graph allocator",
    [GGML__HANDLE_SCHED] = "scheduler",
};

static size_t pointer_hash(const void *p)
{
    uint64_t x = (uint64_t) (uintptr_t) p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t) x;
}

static const void *slot_get(slot_t *slots, size_t i)
{
    return atomic_load_explicit(&slots[i], memory_order_relaxed);
}

static void slot_put(slot_t *slots, size_t i, const void *p)
{
    atomic_store_explicit(&slots[i], p, memory_order_relaxed);
}

/* Slot of slots[capacity] holding p, or the empty slot where the probe for
   p ended; capacity when neither turned up in capacity slots (a lookup
   racing a writer). */
static inline __attribute__((always_inline)) size_t probe(slot_t *slots, size_t capacity, const void *p)
{
    const size_t mask = capacity - 1;
    size_t i = pointer_hash(p) & mask;
    for (size_t n = 0; n < capacity; n++, i = (i + 1) & mask) {
        const void *q = slot_get(slots, i);
        if (q == SLOT_EMPTY || q == p)
            return i;
    }
    return capacity;
}

/* Writers (table_lock held): the set's array and its capacity. */
static slot_t *set_slots(const struct pointer_set *set)
{
    return atomic_load_explicit(&set->slots, memory_order_relaxed);
}

static size_t set_capacity(const struct pointer_set *set)
{
    return atomic_load_explicit(&set->capacity, memory_order_relaxed);
}

static bool set_contains_locked(const struct pointer_set *set, const void *p)
{
    const size_t capacity = set_capacity(set);
    if (capacity == 0)
        return false;
    const size_t i = probe(set_slots(set), capacity, p);
    return i < capacity && slot_get(set_slots(set), i) == p;
}

/* A lookup without the lock (see the top of the file). */
static inline __attribute__((always_inline)) bool set_contains(const struct pointer_set *set, const void *p)
{
    for (unsigned tries = 1;; tries++) {
        const unsigned seq = atomic_load_explicit(&table_seq, memory_order_acquire);
        if (seq & 1u) {
            /* a writer is busy: its changes take a few hundred ns, unless
               it was preempted; then its CPU is given back to it */
            if (tries % 64 == 0)
                sched_yield();
            continue;
        }
        slot_t *slots = atomic_load_explicit(&set->slots, memory_order_relaxed);
        const size_t capacity = atomic_load_explicit(&set->capacity, memory_order_relaxed);
        bool found = false;
        if (capacity != 0 && slots != NULL) {
            const size_t i = probe(slots, capacity, p);
            found = i < capacity && slot_get(slots, i) == p;
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&table_seq, memory_order_relaxed) == seq)
            return found;
    }
}

/* Around a writer's changes (table_lock held). */
static void write_begin(void)
{
    atomic_store_explicit(&table_seq, atomic_load_explicit(&table_seq, memory_order_relaxed) + 1u,
                          memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static void write_end(void)
{
    atomic_store_explicit(&table_seq, atomic_load_explicit(&table_seq, memory_order_relaxed) + 1u,
                          memory_order_release);
}

/*
 * Makes room for one more entry: rebuilds the set without tombstones, into
 * an array sized so that the live entries fill at most a quarter of it
 * (in place when that is the size it has: churn of short-lived handles
 * never makes it grow).  False when out of memory, the set unchanged.
 */
static bool set_rebuild(struct pointer_set *set)
{
    const size_t old_capacity = set_capacity(set);
    slot_t *old = set_slots(set);
    size_t n_live = 0;
    for (size_t i = 0; i < old_capacity; i++)
        if (slot_get(old, i) != SLOT_EMPTY && slot_get(old, i) != SLOT_REMOVED)
            n_live++;
    size_t capacity = 64;
    while (capacity < 4 * (n_live + 1))
        capacity *= 2;
    if (capacity < old_capacity)
        capacity = old_capacity;
    /* the live entries, then the array they go into */
    const void **keep = malloc((n_live + 1) * sizeof *keep);
    slot_t *slots = capacity == old_capacity ? old : calloc(capacity, sizeof *slots);
    struct retired_array *retired = capacity == old_capacity ? NULL : malloc(sizeof *retired);
    if (keep == NULL || slots == NULL || (capacity != old_capacity && retired == NULL)) {
        free(keep);
        if (slots != old)
            free(slots);
        free(retired);
        return false;
    }
    size_t n = 0;
    for (size_t i = 0; i < old_capacity; i++) {
        const void *p = slot_get(old, i);
        if (p != SLOT_EMPTY && p != SLOT_REMOVED)
            keep[n++] = p;
    }
    write_begin();
    if (slots == old)
        for (size_t i = 0; i < capacity; i++)
            slot_put(slots, i, SLOT_EMPTY);
    for (size_t k = 0; k < n; k++)
        slot_put(slots, probe(slots, capacity, keep[k]), keep[k]);
    atomic_store_explicit(&set->slots, slots, memory_order_relaxed);
    atomic_store_explicit(&set->capacity, capacity, memory_order_relaxed);
    write_end();
    set->occupied = n;
    if (old != NULL && slots != old) {
        retired->slots = old;
        retired->next = retired_arrays;
        retired_arrays = retired;
    } else {
        free(retired);
    }
    free(keep);
    return true;
}

static bool set_insert(struct pointer_set *set, const void *p)
{
    if (set_contains_locked(set, p))
        return true;
    if (2 * (set->occupied + 1) > set_capacity(set) && !set_rebuild(set))
        return false;
    write_begin();
    slot_put(set_slots(set), probe(set_slots(set), set_capacity(set), p), p);
    write_end();
    set->occupied++;
    return true;
}

static bool set_remove(struct pointer_set *set, const void *p)
{
    if (!set_contains_locked(set, p))
        return false;
    write_begin();
    slot_put(set_slots(set), probe(set_slots(set), set_capacity(set), p), SLOT_REMOVED);
    write_end();
    return true;
}

/* What to add to "not live" for a handle the table has never seen. */
static const char *unknown_hint(enum ggml__handle_kind kind)
{
    return kind == GGML__HANDLE_BACKEND ? "; a plugin must pass the backends it makes outside init_backend "
                                          "to ggml_backend_publish"
                                        : "";
}

bool ggml__handle_add(enum ggml__handle_kind kind, const void *handle, const char *func)
{
    pthread_mutex_lock(&table_lock);
    bool ok = set_insert(&live[kind], handle);
    pthread_mutex_unlock(&table_lock);
    if (!ok)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory recording a %s handle", kind_names[kind]);
    return ok;
}

bool ggml__handle_remove(enum ggml__handle_kind kind, const void *handle, const char *func)
{
    if (handle == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s is NULL", kind_names[kind]);
        return false;
    }
    pthread_mutex_lock(&table_lock);
    bool ok = set_remove(&live[kind], handle);
    pthread_mutex_unlock(&table_lock);
    if (!ok)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s %p is not live (already freed, or never created%s)",
                     kind_names[kind], handle, unknown_hint(kind));
    return ok;
}

bool ggml__handle_check(enum ggml__handle_kind kind, const void *handle, const char *func)
{
    if (handle == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s is NULL", kind_names[kind]);
        return false;
    }
    const bool ok = set_contains(&live[kind], handle);
    if (!ok)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s %p is not live (freed, or not a %s%s)",
                     kind_names[kind], handle, kind_names[kind], unknown_hint(kind));
    return ok;
}

bool ggml__handle_is_live(enum ggml__handle_kind kind, const void *handle)
{
    if (handle == NULL)
        return false;
    return set_contains(&live[kind], handle);
}

bool ggml__claim(atomic_bool *busy, const char *what, const char *func)
{
    bool idle = false;
    if (atomic_compare_exchange_strong(busy, &idle, true))
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                 "%s is in use by another thread (it serves one thread at a time)", what);
    return false;
}

void ggml__release(atomic_bool *busy)
{
    atomic_store(busy, false);
}
