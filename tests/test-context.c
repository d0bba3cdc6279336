/*
 * test-context.c - contexts: buffers, memory accounting, full contexts,
 * enumeration and lookup of tensors.
 *
 * Memory rule checked throughout: a tensor costs ggml_tensor_overhead()
 * plus its data padded to GGML_MEM_ALIGN (no data in no_alloc mode).
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "tap.h"

/* Bytes of one element (or one block) and elements per block, from the
 * format definitions: f32 4, f16 2, i32 4, q4_0 an fp16 scale + 16 bytes
 * of nibbles per 32 values. */
#define F32_SIZE 4
#define F16_SIZE 2
#define I32_SIZE 4
#define Q4_0_BLOCK 32
#define Q4_0_SIZE 18

/* Under AddressSanitizer a failed huge malloc must return NULL (as libc
 * does) rather than abort, or the SIZE_MAX/2 test cannot run. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_UNDER_ASAN 1
#endif
#endif
#ifdef TEST_UNDER_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

static size_t pad_align(size_t n)
{
    return (n + GGML_MEM_ALIGN - 1) / GGML_MEM_ALIGN * GGML_MEM_ALIGN;
}

static bool is_aligned(const void *p)
{
    return (uintptr_t) p % GGML_MEM_ALIGN == 0;
}

/* ---------------------------------------------------------- buffers */

static void test_caller_buffer(void)
{
    static alignas(64) unsigned char buf[64 * 1024];
    struct ggml_init_params params = { sizeof buf, buf, false };
    struct ggml_context *ctx = ggml_init(params);

    ok(ctx != NULL, "ggml_init with a caller buffer");
    if (!ctx)
        return;
    is_ptr(ggml_get_mem_buffer(ctx), buf, "ggml_get_mem_buffer is the caller's buffer");
    is_uint(ggml_get_mem_size(ctx), sizeof buf, "ggml_get_mem_size is the caller's size");
    is_uint(ggml_used_mem(ctx), 0, "a new context uses no memory");
    ok(!ggml_get_no_alloc(ctx), "no_alloc is false as requested");
    ok(ggml_get_first_tensor(ctx) == NULL, "a new context has no tensors");

    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100);
    ok(t != NULL, "a tensor in the caller's buffer");
    if (t) {
        ok((unsigned char *) t >= buf && (unsigned char *) t < buf + sizeof buf,
           "the tensor header lives in the caller's buffer");
        ok((unsigned char *) t->data >= buf && (unsigned char *) t->data + 400 <= buf + sizeof buf,
           "the tensor data lives in the caller's buffer");
    }
    ggml_free(ctx);
    /* The buffer is the caller's: still writable after ggml_free. */
    memset(buf, 0xa5, sizeof buf);
    ok(buf[sizeof buf - 1] == 0xa5, "the caller's buffer is untouched by ggml_free");
}

static void test_own_buffer(void)
{
    struct ggml_init_params params = { 1 << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);

    ok(ctx != NULL, "ggml_init with its own buffer");
    if (!ctx)
        return;
    ok(ggml_get_mem_buffer(ctx) != NULL, "the context allocated a buffer");
    ok(is_aligned(ggml_get_mem_buffer(ctx)), "the buffer is aligned to GGML_MEM_ALIGN");
    is_uint(ggml_get_mem_size(ctx), 1 << 20, "ggml_get_mem_size of a 1 MiB context");
    is_uint(ggml_used_mem(ctx), 0, "a new context uses no memory");
    ggml_free(ctx);

    /* A size that is not a multiple of the alignment is rounded up. */
    params.mem_size = 1000;
    ctx = ggml_init(params);
    ok(ctx != NULL, "ggml_init with 1000 bytes");
    if (ctx) {
        is_uint(ggml_get_mem_size(ctx), pad_align(1000), "1000 bytes are rounded up to GGML_MEM_ALIGN");
        ggml_free(ctx);
    }
    is_int(tap_log_errors(), 0, "creating contexts logs no error");
}

static void test_zero_size(void)
{
    /* Upstream accepts mem_size 0 and gives the context GGML_MEM_ALIGN bytes. */
    struct ggml_init_params params = { 0, NULL, false };
    struct ggml_context *ctx = ggml_init(params);

    ok(ctx != NULL, "ggml_init with mem_size 0 returns a context");
    is_int(tap_log_errors(), 0, "ggml_init with mem_size 0 logs no error");
    if (!ctx)
        return;
    is_uint(ggml_get_mem_size(ctx), GGML_MEM_ALIGN, "mem_size 0 becomes GGML_MEM_ALIGN");
    is_uint(ggml_used_mem(ctx), 0, "the empty context uses no memory");
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    ok(t == NULL, "no tensor fits into an empty context");
    logged_one_error("a tensor in an empty context logs one error");
    ggml_free(ctx);
}

static void test_huge_size(void)
{
    struct ggml_init_params params = { SIZE_MAX / 2, NULL, false };
    struct ggml_context *ctx = ggml_init(params);

    ok(ctx == NULL, "ggml_init with SIZE_MAX/2 bytes returns NULL");
    logged_one_error("ggml_init with SIZE_MAX/2 bytes logs one error");
    ggml_free(ctx);

    params.mem_size = SIZE_MAX;
    ctx = ggml_init(params);
    ok(ctx == NULL, "ggml_init with SIZE_MAX bytes returns NULL");
    logged_one_error("ggml_init with SIZE_MAX bytes logs one error");
    ggml_free(ctx);

    /* A huge mem_size is fine with no_alloc only if no buffer is needed;
     * upstream allocates it regardless, so it must fail the same way. */
    params.mem_size = SIZE_MAX / 2;
    params.no_alloc = true;
    ctx = ggml_init(params);
    ok(ctx == NULL, "ggml_init with SIZE_MAX/2 bytes and no_alloc returns NULL");
    logged_one_error("... and logs one error");
    ggml_free(ctx);
}

static void test_free_null(void)
{
    ggml_free(NULL);
    ggml_reset(NULL);
    is_int(tap_log_errors(), 0, "ggml_free(NULL) and ggml_reset(NULL) are harmless");
}

/* ------------------------------------------------ memory accounting */

struct shape_case {
    enum ggml_type type;
    int n_dims;
    int64_t ne[4];
    size_t bytes; /* expected ggml_nbytes */
    const char *what;
};

static const struct shape_case shapes[] = {
    { GGML_TYPE_F32,  1, { 10, 1, 1, 1 },   10 * F32_SIZE,                  "f32 [10]" },
    { GGML_TYPE_F32,  2, { 16, 4, 1, 1 },   64 * F32_SIZE,                  "f32 [16,4]" },
    { GGML_TYPE_F16,  1, { 7, 1, 1, 1 },    7 * F16_SIZE,                   "f16 [7]" },
    { GGML_TYPE_F16,  3, { 3, 5, 7, 1 },    105 * F16_SIZE,                 "f16 [3,5,7]" },
    { GGML_TYPE_I32,  2, { 3, 5, 1, 1 },    15 * I32_SIZE,                  "i32 [3,5]" },
    { GGML_TYPE_Q4_0, 2, { 64, 3, 1, 1 },   2 * 3 * Q4_0_SIZE,              "q4_0 [64,3]" },
    { GGML_TYPE_Q4_0, 4, { 96, 2, 2, 2 },   3 * 8 * Q4_0_SIZE,              "q4_0 [96,2,2,2]" },
    { GGML_TYPE_F32,  4, { 2, 3, 4, 5 },    120 * F32_SIZE,                 "f32 [2,3,4,5]" },
    { GGML_TYPE_F32,  1, { 1, 1, 1, 1 },    F32_SIZE,                       "f32 scalar" },
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static void test_used_mem_growth(void)
{
    size_t overhead = ggml_tensor_overhead();
    ok(overhead > sizeof(struct ggml_tensor), "ggml_tensor_overhead (%zu) exceeds sizeof(struct ggml_tensor) (%zu)",
       overhead, sizeof(struct ggml_tensor));
    is_uint(overhead % GGML_MEM_ALIGN, 0, "ggml_tensor_overhead is a multiple of GGML_MEM_ALIGN");

    struct ggml_init_params params = { 1 << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    ok(ctx != NULL, "context for memory accounting");
    if (!ctx)
        return;

    char *base = ggml_get_mem_buffer(ctx);
    for (size_t i = 0; i < N_SHAPES; i++) {
        const struct shape_case *c = &shapes[i];
        size_t before = ggml_used_mem(ctx);
        struct ggml_tensor *t = ggml_new_tensor(ctx, c->type, c->n_dims, c->ne);
        size_t after = ggml_used_mem(ctx);
        ok(t != NULL, "allocate %s", c->what);
        if (!t)
            continue;
        is_uint(ggml_nbytes(t), c->bytes, "ggml_nbytes of %s", c->what);
        is_uint(after - before, overhead + pad_align(c->bytes),
                "%s costs overhead + padded data", c->what);
        ok(t->data != NULL && is_aligned(t->data), "%s data is aligned", c->what);
        ok((char *) t->data >= base && (char *) t->data + c->bytes <= base + ggml_get_mem_size(ctx),
           "%s data lies inside the context buffer", c->what);
    }
    ggml_free(ctx);

    params.no_alloc = true;
    ctx = ggml_init(params);
    ok(ctx != NULL, "no_alloc context for memory accounting");
    if (!ctx)
        return;
    ok(ggml_get_no_alloc(ctx), "ggml_get_no_alloc is true as requested");
    for (size_t i = 0; i < N_SHAPES; i++) {
        const struct shape_case *c = &shapes[i];
        size_t before = ggml_used_mem(ctx);
        struct ggml_tensor *t = ggml_new_tensor(ctx, c->type, c->n_dims, c->ne);
        size_t after = ggml_used_mem(ctx);
        ok(t != NULL && t->data == NULL, "no_alloc %s has no data", c->what);
        is_uint(after - before, overhead, "no_alloc %s costs exactly ggml_tensor_overhead()", c->what);
    }
    ggml_free(ctx);
    is_int(tap_log_errors(), 0, "memory accounting logs no error");
}

/* A context sized for exactly n tensors holds n of them and refuses the next. */
static void check_exact_fit(const struct shape_case *c, int n, bool no_alloc)
{
    size_t per_tensor = ggml_tensor_overhead() + (no_alloc ? 0 : pad_align(c->bytes));
    struct ggml_init_params params = { (size_t) n * per_tensor, NULL, no_alloc };
    struct ggml_context *ctx = ggml_init(params);
    const char *mode = no_alloc ? "no_alloc" : "alloc";

    ok(ctx != NULL, "context for %d x %s (%s)", n, c->what, mode);
    if (!ctx)
        return;

    int made = 0;
    for (int i = 0; i < n; i++)
        if (ggml_new_tensor(ctx, c->type, c->n_dims, c->ne))
            made++;
    is_int(made, n, "%d x %s fit into n * (overhead + data) bytes (%s)", n, c->what, mode);
    is_int(tap_log_errors(), 0, "filling the context logs no error (%s)", mode);
    is_uint(ggml_used_mem(ctx), params.mem_size, "the context is exactly full (%s)", mode);

    struct ggml_tensor *extra = ggml_new_tensor(ctx, c->type, c->n_dims, c->ne);
    ok(extra == NULL, "tensor %d of %s does not fit (%s)", n + 1, c->what, mode);
    logged_one_error("a full context logs one error (%s)", mode);
    is_uint(ggml_used_mem(ctx), params.mem_size, "a failed allocation leaves used memory unchanged (%s)", mode);

    int count = 0;
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t))
        count++;
    is_int(count, n, "the context still lists its %d tensors (%s)", n, mode);

    ggml_reset(ctx);
    is_uint(ggml_used_mem(ctx), 0, "ggml_reset empties the context (%s)", mode);
    ok(ggml_get_first_tensor(ctx) == NULL, "ggml_reset forgets the tensors (%s)", mode);
    made = 0;
    for (int i = 0; i < n; i++)
        if (ggml_new_tensor(ctx, c->type, c->n_dims, c->ne))
            made++;
    is_int(made, n, "after ggml_reset, %d tensors fit again (%s)", n, mode);
    is_int(tap_log_errors(), 0, "refilling logs no error (%s)", mode);
    ggml_free(ctx);
}

static void test_exact_fit(void)
{
    check_exact_fit(&shapes[1], 5, false); /* data already a multiple of the alignment */
    check_exact_fit(&shapes[0], 7, false); /* 40 bytes of data, padded to 48 */
    check_exact_fit(&shapes[2], 3, false); /* 14 bytes of data */
    check_exact_fit(&shapes[5], 4, false); /* q4_0 */
    check_exact_fit(&shapes[3], 6, true);
}

/* ------------------------------------------------------- inspection */

static void test_max_tensor_size(void)
{
    struct ggml_init_params params = { 1 << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    ok(ctx != NULL, "context for ggml_get_max_tensor_size");
    if (!ctx)
        return;
    is_uint(ggml_get_max_tensor_size(ctx), 0, "an empty context has max tensor size 0");
    ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 10);
    ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 50);
    is_uint(ggml_get_max_tensor_size(ctx), 100 * F32_SIZE, "max tensor size is that of the 10x10 f32");
    ggml_free(ctx);

    params.no_alloc = true;
    ctx = ggml_init(params);
    if (ctx) {
        ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 100, 100, 100);
        ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
        is_uint(ggml_get_max_tensor_size(ctx), 100 * 100 * 100 * F32_SIZE,
                "max tensor size counts tensors without data too");
        ggml_free(ctx);
    }
}

static void test_no_alloc_toggle(void)
{
    struct ggml_init_params params = { 1 << 16, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    ok(ctx != NULL, "context for ggml_set_no_alloc");
    if (!ctx)
        return;
    ok(!ggml_get_no_alloc(ctx), "no_alloc starts false");
    ggml_set_no_alloc(ctx, true);
    ok(ggml_get_no_alloc(ctx), "ggml_set_no_alloc(true) is reported");
    size_t before = ggml_used_mem(ctx);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    ok(a != NULL && a->data == NULL, "with no_alloc a tensor gets no data");
    is_uint(ggml_used_mem(ctx) - before, ggml_tensor_overhead(), "and costs only the overhead");
    ggml_set_no_alloc(ctx, false);
    ok(!ggml_get_no_alloc(ctx), "ggml_set_no_alloc(false) is reported");
    before = ggml_used_mem(ctx);
    struct ggml_tensor *b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    ok(b != NULL && b->data != NULL, "without no_alloc a tensor gets data again");
    is_uint(ggml_used_mem(ctx) - before, ggml_tensor_overhead() + 64 * F32_SIZE, "and costs overhead + data");
    ggml_free(ctx);
}

static void test_enumeration(void)
{
    struct ggml_init_params params = { 1 << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    ok(ctx != NULL, "context for enumeration");
    if (!ctx)
        return;

    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    void *raw = ggml_new_buffer(ctx, 100);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 4);
    struct ggml_cgraph *gf = ggml_new_graph_custom(ctx, 16, false);
    struct ggml_tensor *c = ggml_view_1d(ctx, a, 4, 0);
    struct ggml_tensor *d = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    ok(a && raw && b && gf && c && d, "objects of every kind created");

    is_ptr(ggml_get_first_tensor(ctx), a, "the first tensor is the first created");
    is_ptr(ggml_get_next_tensor(ctx, a), b, "a raw buffer between tensors is skipped");
    is_ptr(ggml_get_next_tensor(ctx, b), c, "a graph between tensors is skipped; views are listed");
    is_ptr(ggml_get_next_tensor(ctx, c), d, "creation order is kept");
    is_ptr(ggml_get_next_tensor(ctx, d), NULL, "the last tensor has no next");

    ggml_set_name(a, "alpha");
    ggml_set_name(b, "beta");
    ggml_set_name(d, "delta");
    is_ptr(ggml_get_tensor(ctx, "beta"), b, "ggml_get_tensor finds a tensor by name");
    is_ptr(ggml_get_tensor(ctx, "delta"), d, "ggml_get_tensor finds the last tensor");
    is_ptr(ggml_get_tensor(ctx, "gamma"), NULL, "ggml_get_tensor of an unknown name is NULL");
    is_ptr(ggml_get_tensor(ctx, "alph"), NULL, "ggml_get_tensor needs the whole name");
    ggml_set_name(d, "alpha");
    is_ptr(ggml_get_tensor(ctx, "alpha"), a, "with duplicate names the first tensor wins");
    is_int(tap_log_errors(), 0, "enumeration logs no error");

    /* ggml_print_objects must not disturb anything. */
    size_t used = ggml_used_mem(ctx);
    ggml_print_objects(ctx);
    is_uint(ggml_used_mem(ctx), used, "ggml_print_objects leaves the context unchanged");
    is_int(tap_log_errors(), 0, "ggml_print_objects logs no error");
    ggml_free(ctx);
}

static void test_new_buffer(void)
{
    struct ggml_init_params params = { 4096, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    ok(ctx != NULL, "context for ggml_new_buffer");
    if (!ctx)
        return;

    char *base = ggml_get_mem_buffer(ctx);
    size_t before = ggml_used_mem(ctx);
    char *p = ggml_new_buffer(ctx, 100);
    size_t after = ggml_used_mem(ctx);
    ok(p != NULL, "ggml_new_buffer returns memory");
    ok(p && is_aligned(p), "the buffer is aligned to GGML_MEM_ALIGN");
    ok(p && p >= base && p + 100 <= base + ggml_get_mem_size(ctx), "the buffer lies inside the context");
    ok(after - before >= pad_align(100) && after - before <= ggml_tensor_overhead() + pad_align(100),
       "the buffer costs its padded size plus at most one object header (%zu)", after - before);
    if (p)
        memset(p, 0x5a, 100);
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ok(t && ((char *) t >= p + 100 || (char *) t + sizeof *t <= p), "a later tensor does not overlap the buffer");
    ok(p && p[99] == 0x5a, "the buffer keeps its contents");

    void *too_big = ggml_new_buffer(ctx, 1 << 20);
    ok(too_big == NULL, "ggml_new_buffer larger than the context returns NULL");
    logged_one_error("ggml_new_buffer larger than the context logs one error");
    ggml_free(ctx);
}

static void test_bad_tensors(void)
{
    struct ggml_init_params params = { 1 << 16, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    ok(ctx != NULL, "context for bad tensor requests");
    if (!ctx)
        return;

    size_t used = ggml_used_mem(ctx);
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1 << 20);
    ok(t == NULL, "a tensor larger than the context is refused");
    logged_one_error("a tensor larger than the context logs one error");
    is_uint(ggml_used_mem(ctx), used, "the refused tensor costs nothing");

    t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    ok(t != NULL, "a small tensor still fits after a refusal");

    /* A zero-element tensor is legal: header only, no data bytes. */
    used = ggml_used_mem(ctx);
    t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 5);
    ok(t != NULL, "a tensor with a zero dimension can be created");
    is_uint(ggml_used_mem(ctx) - used, ggml_tensor_overhead(), "an empty tensor costs only the overhead");
    is_int(tap_log_errors(), 0, "an empty tensor logs no error");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();

    test_caller_buffer();
    test_own_buffer();
    test_zero_size();
    test_huge_size();
    test_free_null();
    test_used_mem_growth();
    test_exact_fit();
    test_max_tensor_size();
    test_no_alloc_toggle();
    test_enumeration();
    test_new_buffer();
    test_bad_tensors();

    return tap_done();
}
