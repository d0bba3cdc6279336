/*
 * handles.c - the table of live handles, and the busy flag of objects that
 * serve one thread at a time (see backend-private.h).
 *
 * One open-addressing pointer set per handle kind, with tombstones for
 * removed entries, guarded by one mutex.  The table only compares pointer
 * values; it never dereferences a handle.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "backend-private.h"

#define SLOT_EMPTY NULL
#define SLOT_REMOVED ((const void *) (uintptr_t) 1)

struct pointer_set {
    const void **slots;
    size_t capacity;     /* a power of two, or 0 before the first insert */
    size_t occupied;     /* live entries plus tombstones */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pointer_set live[GGML__HANDLE_KIND_COUNT];

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

/* Slot holding p, or the empty slot where the probe for p ended. */
static size_t set_probe(const struct pointer_set *set, const void *p)
{
    size_t mask = set->capacity - 1;
    size_t i = pointer_hash(p) & mask;
    while (set->slots[i] != SLOT_EMPTY && set->slots[i] != p)
        i = (i + 1) & mask;
    return i;
}

static bool set_contains(const struct pointer_set *set, const void *p)
{
    return set->capacity != 0 && set->slots[set_probe(set, p)] == p;
}

/*
 * Rebuilds the set without tombstones, sized so that the live entries fill
 * at most a quarter of it (the size follows the live count, so churn of
 * short-lived handles never makes it grow).
 */
static bool set_rebuild(struct pointer_set *set)
{
    size_t n_live = 0;
    for (size_t i = 0; i < set->capacity; i++)
        if (set->slots[i] != SLOT_EMPTY && set->slots[i] != SLOT_REMOVED)
            n_live++;
    size_t capacity = 64;
    while (capacity < 4 * (n_live + 1))
        capacity *= 2;
    const void **slots = calloc(capacity, sizeof *slots);
    if (slots == NULL)
        return false;
    struct pointer_set grown = { slots, capacity, 0 };
    for (size_t i = 0; i < set->capacity; i++) {
        const void *p = set->slots[i];
        if (p != SLOT_EMPTY && p != SLOT_REMOVED) {
            grown.slots[set_probe(&grown, p)] = p;
            grown.occupied++;
        }
    }
    free(set->slots);
    *set = grown;
    return true;
}

static bool set_insert(struct pointer_set *set, const void *p)
{
    if (set_contains(set, p))
        return true;
    if (2 * (set->occupied + 1) > set->capacity && !set_rebuild(set))
        return false;
    set->slots[set_probe(set, p)] = p;
    set->occupied++;
    return true;
}

static bool set_remove(struct pointer_set *set, const void *p)
{
    if (!set_contains(set, p))
        return false;
    set->slots[set_probe(set, p)] = SLOT_REMOVED;
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
    pthread_mutex_lock(&table_lock);
    bool ok = set_contains(&live[kind], handle);
    pthread_mutex_unlock(&table_lock);
    if (!ok)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s %p is not live (freed, or not a %s%s)",
                     kind_names[kind], handle, kind_names[kind], unknown_hint(kind));
    return ok;
}

bool ggml__handle_is_live(enum ggml__handle_kind kind, const void *handle)
{
    if (handle == NULL)
        return false;
    pthread_mutex_lock(&table_lock);
    bool found = set_contains(&live[kind], handle);
    pthread_mutex_unlock(&table_lock);
    return found;
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
