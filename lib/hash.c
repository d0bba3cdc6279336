/*
 * hash.c - sizing, allocation and reset of the tensor-pointer hash sets
 * used by graphs (and by the allocator and scheduler).
 */
#include "config.h"

#include <stdlib.h>

#include "ggml-impl.h"

/*
 * Primes roughly doubling from 2 to just under 2^32; a set of capacity p
 * for n expected keys keeps the load factor under one half.
 */
static const size_t hash_primes[] = {
    2, 3, 5, 11, 17, 37, 67, 131, 257, 521, 1031, 2053, 4099, 8209, 16411,
    32771, 65537, 131101, 262147, 524309, 1048583, 2097169, 4194319, 8388617,
    16777259, 33554467, 67108879, 134217757, 268435459, 536870923,
    1073741827, 2147483659u, 4294967291u
};

size_t ggml__hash_size(size_t min_sz)
{
    size_t n = sizeof hash_primes / sizeof hash_primes[0];
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (hash_primes[mid] < min_sz)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* beyond the table, any odd number is an acceptable modulus */
    return lo < n ? hash_primes[lo] : (min_sz | 1);
}

size_t ggml__bitset_size(size_t n)
{
    return (n + 31) / 32;
}

struct ggml_hash_set ggml__hash_set_new(size_t size)
{
    struct ggml_hash_set set;
    set.size = ggml__hash_size(size);
    set.keys = malloc(set.size * sizeof(struct ggml_tensor *));
    set.used = calloc(ggml__bitset_size(set.size), sizeof(uint32_t));
    if (set.keys == NULL || set.used == NULL) {
        ggml__error("out of memory for a hash set of %zu slots", set.size);
        free(set.keys);
        free(set.used);
        set.keys = NULL;
        set.used = NULL;
        set.size = 0;
    }
    return set;
}

void ggml__hash_set_free(struct ggml_hash_set *set)
{
    free(set->used);
    free(set->keys);
    set->used = NULL;
    set->keys = NULL;
    set->size = 0;
}

void ggml__hash_set_reset(struct ggml_hash_set *set)
{
    if (set->used)
        memset(set->used, 0, ggml__bitset_size(set->size) * sizeof(uint32_t));
}

bool ggml__hash_table_reserve(struct ggml_hash_set *set, void **values, size_t elem, size_t min_slots,
                              const char *func)
{
    if (set->size >= min_slots && set->keys != NULL && *values != NULL)
        return true;
    ggml__hash_set_free(set);
    free(*values);
    *values = NULL;
    *set = ggml__hash_set_new(min_slots);
    if (set->keys == NULL)
        return false; /* logged */
    *values = malloc(set->size * elem);
    if (*values == NULL) {
        ggml__hash_set_free(set);
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
        return false;
    }
    return true;
}
