/*
 * test-alloc.c - the allocators of ggml-alloc.h: the linear tensor
 * allocator, the graph allocator (reuse by lifetime, in-place results,
 * views, inputs and outputs, several buffer types, chunked buffers,
 * re-reservation, allocation failure) and allocation of a context's
 * tensors (splitting over several buffers, too-large tensors).
 *
 * Expected sizes and addresses are worked out in the comments from the
 * rules of the allocator, never read back from it.  Random graphs are
 * run through a tiny interpreter twice, once in gallocr memory and once
 * with every tensor in memory of its own, and must give the same results;
 * an independent lifetime check asserts that no two tensors whose
 * lifetimes overlap share a byte.
 */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "tap.h"

/* ------------------------------------------------------------ helpers */

static size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

static struct ggml_context *meta_ctx(size_t n_tensors)
{
    struct ggml_init_params params = {
        .mem_size = n_tensors * ggml_tensor_overhead() + 2 * ggml_graph_overhead_custom(1024, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    return ggml_init(params);
}

static struct ggml_context *data_ctx(size_t n_tensors, size_t data_bytes)
{
    struct ggml_init_params params = {
        .mem_size = n_tensors * ggml_tensor_overhead() + ggml_graph_overhead_custom(1024, false) + data_bytes,
        .mem_buffer = NULL,
        .no_alloc = false,
    };
    return ggml_init(params);
}

static struct ggml_cgraph *new_graph(struct ggml_context *ctx)
{
    return ggml_new_graph_custom(ctx, 1024, false);
}

/* A node built by hand: same shape as src0, op set directly, so that
 * in-place rules can be tested without the op constructors. */
static struct ggml_tensor *hand_op(struct ggml_context *ctx, enum ggml_op op,
                                   struct ggml_tensor *src0, struct ggml_tensor *src1)
{
    struct ggml_tensor *t = ggml_dup_tensor(ctx, src0);
    t->op = op;
    t->src[0] = src0;
    t->src[1] = src1;
    return t;
}

static bool ranges_overlap(const struct ggml_tensor *a, const struct ggml_tensor *b)
{
    uintptr_t a0 = (uintptr_t) a->data, a1 = a0 + ggml_nbytes(a);
    uintptr_t b0 = (uintptr_t) b->data, b1 = b0 + ggml_nbytes(b);
    return a0 < b1 && b0 < a1;
}

static size_t offset_in_buffer(const struct ggml_tensor *t)
{
    return (size_t) ((const char *) t->data - (const char *) ggml_backend_buffer_get_base(t->buffer));
}

/* ------------------------------------------------- test buffer types */

/*
 * Host memory behind a buffer type whose behaviour the tests set: its
 * alignment, maximum size, padding added to every tensor, and when its
 * alloc_buffer fails.  It counts what it allocates.
 */
struct test_buft {
    struct ggml_backend_buffer_type buft;
    const char *name;
    size_t alignment;
    size_t max_size;        /* 0: no maximum */
    size_t extra;           /* bytes added to each tensor's alloc size */
    size_t fail_above;      /* alloc_buffer returns NULL above this size */
    int allow;              /* successful allocations left (-1: any number) */
    int fail_init;          /* init_tensor fails: 1 for every tensor, 2 for views */
    int n_allocs, n_live, n_failed;
    size_t largest, last_size;
};

static void tb_free(ggml_backend_buffer_t buffer)
{
    struct test_buft *tb = buffer->buft->context;
    tb->n_live--;
    free(buffer->context);
}

static void *tb_get_base(ggml_backend_buffer_t buffer)
{
    return buffer->context;
}

static enum ggml_status tb_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *t)
{
    struct test_buft *tb = buffer->buft->context;
    if (tb->fail_init == 1 || (tb->fail_init == 2 && t->view_src != NULL))
        return GGML_STATUS_FAILED; /* silently, as a backend may */
    return GGML_STATUS_SUCCESS;
}

static void tb_memset(ggml_backend_buffer_t buffer, struct ggml_tensor *t, uint8_t v, size_t off, size_t size)
{
    (void) buffer;
    memset((char *) t->data + off, v, size);
}

static void tb_set(ggml_backend_buffer_t buffer, struct ggml_tensor *t, const void *data, size_t off, size_t size)
{
    (void) buffer;
    memcpy((char *) t->data + off, data, size);
}

static void tb_get(ggml_backend_buffer_t buffer, const struct ggml_tensor *t, void *data, size_t off, size_t size)
{
    (void) buffer;
    memcpy(data, (const char *) t->data + off, size);
}

static void tb_clear(ggml_backend_buffer_t buffer, uint8_t v)
{
    memset(buffer->context, v, buffer->size);
}

static const struct ggml_backend_buffer_i tb_buffer_iface = {
    .free_buffer = tb_free,
    .get_base = tb_get_base,
    .init_tensor = tb_init_tensor,
    .memset_tensor = tb_memset,
    .set_tensor = tb_set,
    .get_tensor = tb_get,
    .clear = tb_clear,
};

static const char *tbt_name(ggml_backend_buffer_type_t buft)
{
    return ((struct test_buft *) buft->context)->name;
}

static ggml_backend_buffer_t tbt_alloc(ggml_backend_buffer_type_t buft, size_t size)
{
    struct test_buft *tb = buft->context;
    if (size > tb->fail_above || tb->allow == 0) {
        tb->n_failed++;
        return NULL;
    }
    size_t mem_align = 16;
    while (mem_align < tb->alignment)
        mem_align *= 2;
    void *mem = aligned_alloc(mem_align, round_up(size ? size : 1, mem_align));
    if (mem == NULL)
        return NULL;
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, tb_buffer_iface, mem, size);
    if (buffer == NULL) {
        free(mem);
        return NULL;
    }
    if (tb->allow > 0)
        tb->allow--;
    tb->n_allocs++;
    tb->n_live++;
    tb->last_size = size;
    if (size > tb->largest)
        tb->largest = size;
    return buffer;
}

static size_t tbt_alignment(ggml_backend_buffer_type_t buft)
{
    return ((struct test_buft *) buft->context)->alignment;
}

static size_t tbt_max_size(ggml_backend_buffer_type_t buft)
{
    struct test_buft *tb = buft->context;
    return tb->max_size ? tb->max_size : SIZE_MAX;
}

static size_t tbt_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor *t)
{
    return ggml_nbytes(t) + ((struct test_buft *) buft->context)->extra;
}

static bool tbt_is_host(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return true;
}

static void test_buft_init(struct test_buft *tb, const char *name, size_t alignment)
{
    memset(tb, 0, sizeof *tb);
    tb->buft = (struct ggml_backend_buffer_type) {
        .iface = {
            .get_name = tbt_name,
            .alloc_buffer = tbt_alloc,
            .get_alignment = tbt_alignment,
            .get_max_size = tbt_max_size,
            .get_alloc_size = tbt_alloc_size,
            .is_host = tbt_is_host,
        },
        .device = NULL,
        .context = tb,
    };
    tb->name = name;
    tb->alignment = alignment;
    tb->fail_above = SIZE_MAX;
    tb->allow = -1;
}

/* ------------------------------------------------------------ tallocr */

static void test_tallocr(void)
{
    ggml_backend_buffer_type_t cpu = ggml_backend_cpu_buffer_type();
    ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(cpu, 1000);
    ok(buffer != NULL, "tallocr: a 1000-byte CPU buffer");
    char *base = ggml_backend_buffer_get_base(buffer);

    struct ggml_tallocr talloc = ggml_tallocr_new(buffer);
    is_ptr(talloc.buffer, buffer, "tallocr_new: buffer");
    is_ptr(talloc.base, base, "tallocr_new: base");
    is_uint(talloc.alignment, 64, "tallocr_new: alignment of the CPU buffer type");
    is_uint(talloc.offset, 0, "tallocr_new: starts at offset 0 of an aligned base");

    struct ggml_context *ctx = meta_ctx(16);
    struct ggml_tensor *a = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10), "ta");   /* 40 -> 64 */
    struct ggml_tensor *b = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 17), "tb");   /* 68 -> 128 */
    struct ggml_tensor *c = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100), "tc");  /* 400 -> 448 */
    struct ggml_tensor *d = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100), "td");  /* 448 */
    struct ggml_tensor *e = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 80), "te");   /* 320 */
    struct ggml_tensor *f = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1), "tf");    /* 64 */

    is_int(ggml_tallocr_alloc(&talloc, a), GGML_STATUS_SUCCESS, "tallocr: a placed");
    is_ptr(a->data, base, "tallocr: a at offset 0");
    is_ptr(a->buffer, buffer, "tallocr: a in the buffer");
    is_int(ggml_tallocr_alloc(&talloc, b), GGML_STATUS_SUCCESS, "tallocr: b placed");
    is_ptr(b->data, base + 64, "tallocr: b at the next 64-byte boundary");
    is_int(ggml_tallocr_alloc(&talloc, c), GGML_STATUS_SUCCESS, "tallocr: c placed");
    is_ptr(c->data, base + 192, "tallocr: c after b's 128 padded bytes");
    is_uint(talloc.offset, 640, "tallocr: offset after three tensors");

    tap_log_errors();
    is_int(ggml_tallocr_alloc(&talloc, d), GGML_STATUS_ALLOC_FAILED, "tallocr: d (448 bytes) does not fit in 360");
    logged_one_error("tallocr: one message for a full buffer");
    ok(strstr(tap_last_log(), "td") && strstr(tap_last_log(), "448") && strstr(tap_last_log(), "360"),
       "tallocr: the message names the tensor, needed and available bytes: %s", tap_last_log());
    ok(d->data == NULL && d->buffer == NULL, "tallocr: d left unallocated");
    is_uint(talloc.offset, 640, "tallocr: a failure does not move the offset");

    is_int(ggml_tallocr_alloc(&talloc, e), GGML_STATUS_SUCCESS, "tallocr: still usable after a failure");
    is_ptr(e->data, base + 640, "tallocr: e at 640");
    ok((char *) e->data + ggml_nbytes(e) <= base + 1000, "tallocr: e ends inside the buffer");
    is_int(ggml_tallocr_alloc(&talloc, f), GGML_STATUS_ALLOC_FAILED, "tallocr: 64 bytes at 960 pass the end (1000)");
    logged_one_error("tallocr: one message");

    is_int(ggml_tallocr_alloc(&talloc, a), GGML_STATUS_FAILED, "tallocr: an allocated tensor is refused");
    logged_one_error("tallocr: one message for an allocated tensor");
    struct ggml_tensor *v = ggml_view_1d(ctx, d, 4, 0);
    is_int(ggml_tallocr_alloc(&talloc, v), GGML_STATUS_FAILED, "tallocr: a view is refused");
    logged_one_error("tallocr: one message for a view");
    is_uint(talloc.offset, 960, "tallocr: refusals do not move the offset");
    is_int(ggml_tallocr_alloc(NULL, d), GGML_STATUS_FAILED, "tallocr: NULL allocator");
    logged_one_error("tallocr: one message for NULL allocator");
    is_int(ggml_tallocr_alloc(&talloc, NULL), GGML_STATUS_FAILED, "tallocr: NULL tensor");
    logged_one_error("tallocr: one message for NULL tensor");

    struct ggml_tallocr none = ggml_tallocr_new(NULL);
    logged_one_error("tallocr_new: one message for a NULL buffer");
    ok(none.buffer == NULL, "tallocr_new(NULL): no buffer");
    is_int(ggml_tallocr_alloc(&none, d), GGML_STATUS_FAILED, "tallocr: allocator without buffer");
    logged_one_error("tallocr: one message for an allocator without buffer");

    ggml_backend_buffer_free(buffer);
    struct ggml_tallocr freed = ggml_tallocr_new(buffer);
    logged_one_error("tallocr_new: one message for a freed buffer");
    ok(freed.buffer == NULL, "tallocr_new(freed): no buffer");
    is_int(ggml_tallocr_alloc(&talloc, d), GGML_STATUS_FAILED, "tallocr: allocator over a freed buffer");
    logged_one_error("tallocr: one message for a freed buffer");
    ggml_free(ctx);

    /* an odd alignment (not a power of two) still gives aligned offsets */
    struct test_buft odd;
    test_buft_init(&odd, "odd", 24);
    buffer = ggml_backend_buft_alloc_buffer(&odd.buft, 240);
    talloc = ggml_tallocr_new(buffer);
    ctx = meta_ctx(4);
    a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5); /* 20 -> 24 */
    b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7); /* 28 -> 48 */
    c = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    is_int(ggml_tallocr_alloc(&talloc, a), GGML_STATUS_SUCCESS, "tallocr (align 24): a");
    is_int(ggml_tallocr_alloc(&talloc, b), GGML_STATUS_SUCCESS, "tallocr (align 24): b");
    is_int(ggml_tallocr_alloc(&talloc, c), GGML_STATUS_SUCCESS, "tallocr (align 24): c");
    is_uint((uintptr_t) a->data % 24, 0, "tallocr (align 24): a's address is a multiple of 24");
    is_uint((char *) b->data - (char *) a->data, 24, "tallocr (align 24): b 24 bytes after a");
    is_uint((char *) c->data - (char *) a->data, 72, "tallocr (align 24): c 24 + 48 bytes after a");
    ggml_free(ctx);

    /* the backend refuses the tensor in init_tensor, without a word */
    odd.fail_init = 1;
    ctx = meta_ctx(4);
    a = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5), "refused");
    size_t before = talloc.offset;
    tap_log_errors();
    is_int(ggml_tallocr_alloc(&talloc, a), GGML_STATUS_FAILED, "tallocr: init_tensor failure is returned");
    logged_one_error("tallocr: one message for it");
    ok(strstr(tap_last_log(), "refused") != NULL, "tallocr: naming the tensor: %s", tap_last_log());
    is_uint(talloc.offset, before + 24, "tallocr: the bytes the tensor points at stay taken");
    odd.fail_init = 0;
    ggml_free(ctx);
    ggml_backend_buffer_free(buffer);
    is_int(odd.n_live, 0, "tallocr: test buffers all freed");
}

/* ------------------------------------------------ gallocr: handles */

static void test_gallocr_handles(void)
{
    ggml_backend_buffer_type_t cpu = ggml_backend_cpu_buffer_type();
    tap_log_errors();

    ok(ggml_gallocr_new(NULL) == NULL, "gallocr_new(NULL) fails");
    logged_one_error("gallocr_new(NULL): one message");
    ok(ggml_gallocr_new_n(NULL, 1) == NULL, "gallocr_new_n(NULL, 1) fails");
    logged_one_error("gallocr_new_n(NULL): one message");
    ok(ggml_gallocr_new_n(&cpu, 0) == NULL, "gallocr_new_n(bufts, 0) fails");
    logged_one_error("gallocr_new_n(0): one message");
    ggml_backend_buffer_type_t with_null[2] = { cpu, NULL };
    ok(ggml_gallocr_new_n(with_null, 2) == NULL, "gallocr_new_n with a NULL buffer type fails");
    logged_one_error("gallocr_new_n(NULL entry): one message");

    ggml_gallocr_free(NULL);
    is_int(tap_log_errors(), 0, "gallocr_free(NULL) is a silent no-op");

    ggml_gallocr_t galloc = ggml_gallocr_new(cpu);
    ok(galloc != NULL, "gallocr_new(CPU)");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 0, "no buffer before the first reservation");
    is_int(tap_log_errors(), 0, "no message for a fresh allocator");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 1), 0, "buffer id 1 of a one-buffer allocator");
    logged_one_error("get_buffer_size: one message for a bad id");
    is_uint(ggml_gallocr_get_buffer_size(galloc, -1), 0, "buffer id -1");
    logged_one_error("get_buffer_size: one message for id -1");
    ok(!ggml_gallocr_reserve(galloc, NULL), "reserve(NULL graph) fails");
    logged_one_error("reserve(NULL graph): one message");
    ok(!ggml_gallocr_alloc_graph(galloc, NULL), "alloc_graph(NULL graph) fails");
    logged_one_error("alloc_graph(NULL graph): one message");
    ok(!ggml_gallocr_reserve_n(galloc, NULL, NULL, NULL), "reserve_n(NULL graph) fails");
    logged_one_error("reserve_n(NULL graph): one message");

    struct ggml_context *ctx = meta_ctx(8);
    struct ggml_tensor *x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    struct ggml_cgraph *graph = new_graph(ctx);
    ggml_build_forward_expand(graph, ggml_cont(ctx, x));
    ggml_gallocr_reserve_n_size(galloc, graph, NULL, NULL, NULL);
    logged_one_error("reserve_n_size(sizes NULL): one message");
    int bad_ids[1] = { 1 };
    ok(!ggml_gallocr_reserve_n(galloc, graph, bad_ids, NULL), "reserve_n with node buffer id 1 of 1 fails");
    logged_one_error("reserve_n(bad node id): one message");
    ok(!ggml_gallocr_reserve_n(galloc, graph, NULL, bad_ids), "reserve_n with leaf buffer id 1 of 1 fails");
    logged_one_error("reserve_n(bad leaf id): one message");
    ok(ggml_gallocr_reserve(galloc, graph), "the allocator is usable after these errors");

    /* a graph built from a NULL tensor: the earlier error said it all */
    struct ggml_cgraph *failed = new_graph(ctx);
    ggml_build_forward_expand(failed, ggml_cont(ctx, x));
    ggml_build_forward_expand(failed, NULL);
    tap_log_errors();
    ok(!ggml_gallocr_reserve(galloc, failed), "reserve of a failed graph returns false");
    is_int(tap_log_errors(), 0, "... without a second message");
    ok(!ggml_gallocr_alloc_graph(galloc, failed), "alloc_graph of a failed graph returns false");
    is_int(tap_log_errors(), 0, "... without a second message");
    size_t size = 12345;
    ggml_gallocr_reserve_n_size(galloc, failed, NULL, NULL, &size);
    is_uint(size, 0, "reserve_n_size of a failed graph gives 0");

    ggml_gallocr_free(galloc);
    is_int(tap_log_errors(), 0, "gallocr_free: no message");
    ggml_gallocr_free(galloc);
    logged_one_error("gallocr_free twice: the double free is reported");
    ok(!ggml_gallocr_reserve(galloc, graph), "reserve on a freed allocator fails");
    logged_one_error("reserve(freed): one message");
    ok(!ggml_gallocr_reserve_n(galloc, graph, NULL, NULL), "reserve_n on a freed allocator fails");
    logged_one_error("reserve_n(freed): one message");
    ok(!ggml_gallocr_alloc_graph(galloc, graph), "alloc_graph on a freed allocator fails");
    logged_one_error("alloc_graph(freed): one message");
    size = 7;
    ggml_gallocr_reserve_n_size(galloc, graph, NULL, NULL, &size);
    logged_one_error("reserve_n_size(freed): one message");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 0, "get_buffer_size on a freed allocator");
    logged_one_error("get_buffer_size(freed): one message");
    ok(!ggml_gallocr_reserve(NULL, graph), "reserve(NULL allocator) fails");
    logged_one_error("reserve(NULL allocator): one message");
    ok(!ggml_gallocr_alloc_graph(NULL, graph), "alloc_graph(NULL allocator) fails");
    logged_one_error("alloc_graph(NULL allocator): one message");
    ok(!ggml_gallocr_alloc_graph((ggml_gallocr_t) ctx, graph), "alloc_graph(foreign pointer) fails");
    logged_one_error("alloc_graph(foreign pointer): one message");
    ggml_free(ctx);
}

/* ---------------------------------------- gallocr: chain of 100 ops */

static void test_chain_100(void)
{
    /* x (input) -> 100 ops alternating cont(y) and cont(transpose(y)),
     * every result 64x64 F32 = 16384 bytes (a multiple of 64).  A result
     * dies when the next cont has read it, so two results alternate over
     * two slots next to the input: 3 tensors in all. */
    const size_t T = 64 * 64 * sizeof(float);
    struct ggml_context *ctx = meta_ctx(256);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 64);
    ggml_set_input(x);
    struct ggml_tensor *results[100];
    struct ggml_tensor *cur = x;
    for (int i = 0; i < 100; i++) {
        cur = ggml_cont(ctx, i % 2 ? ggml_transpose(ctx, cur) : cur);
        results[i] = cur;
    }
    ggml_set_output(cur);
    struct ggml_cgraph *graph = new_graph(ctx);
    ggml_build_forward_expand(graph, cur);
    is_int(ggml_graph_n_nodes(graph), 150, "chain: 100 conts and 50 transposes");

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    size_t size = 0;
    ggml_gallocr_reserve_n_size(galloc, graph, NULL, NULL, &size);
    is_uint(size, 3 * T, "chain: reserve_n_size gives 3 tensors (49152 bytes)");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 0, "chain: reserve_n_size allocated nothing");
    ok(ggml_gallocr_alloc_graph(galloc, graph), "chain: alloc_graph");
    size = ggml_gallocr_get_buffer_size(galloc, 0);
    is_uint(size, 3 * T, "chain: the compute buffer holds 3 tensors, not 101");
    ok(size <= 3 * T, "chain: within 3 tensors' size");

    ok(x->buffer != NULL && offset_in_buffer(x) == 0, "chain: the input is placed first, at offset 0");
    int bad = 0;
    for (int i = 0; i < 100; i++) {
        size_t want = i % 2 ? 2 * T : T; /* the two slots alternate */
        if (results[i]->buffer != x->buffer || offset_in_buffer(results[i]) != want)
            bad++;
        if (ranges_overlap(results[i], x))
            bad++;
    }
    is_int(bad, 0, "chain: results alternate between offsets T and 2T and never touch the input");
    ggml_gallocr_free(galloc);
    ggml_free(ctx);

    /* 100 SCALE nodes built by hand: each may overwrite its parent, except
     * the first, whose parent is the input: 2 tensors in all. */
    ctx = meta_ctx(256);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 64);
    ggml_set_input(x);
    cur = x;
    for (int i = 0; i < 100; i++) {
        cur = hand_op(ctx, GGML_OP_SCALE, cur, NULL);
        results[i] = cur;
    }
    ggml_set_output(cur);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, cur);
    galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    ok(ggml_gallocr_alloc_graph(galloc, graph), "scale chain: alloc_graph");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 2 * T, "scale chain: input plus one shared result");
    bad = 0;
    for (int i = 1; i < 100; i++)
        if (results[i]->data != results[0]->data)
            bad++;
    is_int(bad, 0, "scale chain: every result in place of the first");
    ok(!ranges_overlap(results[0], x), "scale chain: the input is not overwritten");
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
}

/* ------------------------------------------- gallocr: in-place rules */

static void test_inplace(void)
{
    /* 16x8 F32 = 512 bytes, a multiple of the CPU alignment (64) */
    const size_t T = 512;
    ggml_backend_buffer_type_t cpu = ggml_backend_cpu_buffer_type();
    ggml_gallocr_t galloc = ggml_gallocr_new(cpu);

    /* a = cont(x); b = scale(a); c = scale(b): b and c write over a */
    struct ggml_context *ctx = meta_ctx(32);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    struct ggml_tensor *a = ggml_cont(ctx, x);
    struct ggml_tensor *b = hand_op(ctx, GGML_OP_SCALE, a, NULL);
    struct ggml_tensor *c = hand_op(ctx, GGML_OP_SCALE, b, NULL);
    ggml_set_output(c);
    struct ggml_cgraph *graph = new_graph(ctx);
    ggml_build_forward_expand(graph, c);
    ok(ggml_gallocr_reserve(galloc, graph), "in place: reserve");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 2 * T, "in place: x + one shared slot");
    ok(ggml_gallocr_alloc_graph(galloc, graph), "in place: alloc_graph");
    is_uint(offset_in_buffer(x), 0, "in place: x at 0");
    is_uint(offset_in_buffer(a), T, "in place: a at 512");
    is_ptr(b->data, a->data, "in place: scale(a) shares a's memory (a's only consumer)");
    is_ptr(c->data, a->data, "in place: scale(b) shares it too");
    ggml_free(ctx);

    /* a has a second consumer: b = scale(a) must not overwrite it; d = add(a, b)
     * runs after the last other use of a and may */
    ctx = meta_ctx(32);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    a = ggml_cont(ctx, x);
    b = hand_op(ctx, GGML_OP_SCALE, a, NULL);
    struct ggml_tensor *d = hand_op(ctx, GGML_OP_ADD, a, b);
    ggml_set_output(d);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, d);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "shared parent: alloc_graph");
    ok(b->data != a->data && !ranges_overlap(a, b), "shared parent: scale(a) gets its own memory");
    is_ptr(d->data, a->data, "shared parent: add(a, b) takes a's memory once b has read a");
    is_uint(offset_in_buffer(b), 2 * T, "shared parent: b at 1024");
    ggml_free(ctx);

    /* the same operand twice: add(a, a) has two reads of a pending */
    ctx = meta_ctx(32);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    a = ggml_cont(ctx, x);
    d = hand_op(ctx, GGML_OP_ADD, a, a);
    ggml_set_output(d);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, d);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "add(a, a): alloc_graph");
    ok(!ranges_overlap(a, d), "add(a, a): not in place (a is read twice)");
    ggml_free(ctx);

    /* an output is never written over, nor an input */
    ctx = meta_ctx(32);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    a = ggml_cont(ctx, x);
    ggml_set_output(a);
    b = hand_op(ctx, GGML_OP_SCALE, a, NULL);
    c = hand_op(ctx, GGML_OP_SCALE, x, NULL);
    ggml_set_output(b);
    ggml_set_output(c);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, b);
    ggml_build_forward_expand(graph, c);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "outputs: alloc_graph");
    ok(!ranges_overlap(a, b), "scale of an output does not overwrite it");
    ok(!ranges_overlap(x, c), "scale of an input does not overwrite it");
    ggml_free(ctx);

    /* different layout: same byte count, other shape -> not in place */
    ctx = meta_ctx(32);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    a = ggml_cont(ctx, x);
    b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 128);
    b->op = GGML_OP_SCALE;
    b->src[0] = a;
    ggml_set_output(b);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, b);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "layout: alloc_graph");
    ok(!ranges_overlap(a, b), "a result of another shape is not placed over its operand");
    ggml_free(ctx);

    /* an op that may not run in place (CONT) never shares its operand */
    ctx = meta_ctx(32);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    a = ggml_cont(ctx, x);
    b = ggml_cont(ctx, a);
    ggml_set_output(b);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, b);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "cont: alloc_graph");
    ok(!ranges_overlap(a, b), "cont(a) does not overwrite a");
    ggml_free(ctx);

    /* in place through a view at offset 0 of a tensor nothing else reads:
     * a (512) -> v = first half of a (view) -> s = scale(v) takes a's first
     * 256 bytes; the other 256 return to the free list and e = cont of a
     * 64-float view of x fits there */
    ctx = meta_ctx(32);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    a = ggml_cont(ctx, x);
    struct ggml_tensor *v = ggml_view_1d(ctx, a, 64, 0);
    struct ggml_tensor *s = hand_op(ctx, GGML_OP_SCALE, v, NULL);
    struct ggml_tensor *e = ggml_cont(ctx, ggml_view_1d(ctx, x, 64, 0));
    ggml_set_output(s);
    ggml_set_output(e);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, s);
    ggml_build_forward_expand(graph, e);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "view parent: alloc_graph");
    is_ptr(v->data, a->data, "view parent: the view shares a's memory");
    is_ptr(s->data, a->data, "view parent: scale(view) written over a");
    is_ptr(e->data, (char *) a->data + 256, "view parent: the freed half of a is reused");
    ggml_free(ctx);

    ggml_gallocr_free(galloc);
}

/* --------------------------------- gallocr: views, inputs, outputs */

static void test_views_and_lifetimes(void)
{
    const size_t T = 512;
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());

    /* a view keeps its source alive: t = transpose(a) is read after b is
     * made, so b must not take a's place */
    struct ggml_context *ctx = meta_ctx(32);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    struct ggml_tensor *a = ggml_cont(ctx, x);
    struct ggml_tensor *t = ggml_transpose(ctx, a);
    struct ggml_tensor *r = ggml_view_2d(ctx, a, 16, 4, a->nb[1], 4 * a->nb[1]);
    struct ggml_tensor *b = ggml_cont(ctx, x);
    struct ggml_tensor *c = ggml_cont(ctx, t);
    struct ggml_tensor *d = ggml_cont(ctx, r);
    ggml_set_output(b);
    ggml_set_output(c);
    ggml_set_output(d);
    struct ggml_cgraph *graph = new_graph(ctx);
    ggml_build_forward_expand(graph, t);
    ggml_build_forward_expand(graph, r);
    ggml_build_forward_expand(graph, b);
    ggml_build_forward_expand(graph, c);
    ggml_build_forward_expand(graph, d);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "views: alloc_graph");
    is_ptr(t->data, a->data, "views: a transposed view shares its source's memory");
    is_ptr(t->buffer, a->buffer, "views: ... and buffer");
    is_ptr(r->data, (char *) a->data + 4 * a->nb[1], "views: a row view points at its offset");
    ok(!ranges_overlap(a, b) && !ranges_overlap(a, c) && !ranges_overlap(a, d),
       "views: nothing is placed over a source while a view of it is alive");
    ggml_free(ctx);
    ggml_gallocr_free(galloc);

    /* inputs and outputs are never reused: x (input) and o (output) come
     * first, then a chain of 10 conts alternates over two more slots */
    galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    ctx = meta_ctx(64);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    ggml_set_input(x);
    struct ggml_tensor *o = ggml_cont(ctx, x);
    ggml_set_output(o);
    struct ggml_tensor *chain[10];
    struct ggml_tensor *cur = o;
    for (int i = 0; i < 10; i++)
        cur = chain[i] = ggml_cont(ctx, cur);
    ggml_set_output(cur);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, cur);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "in/out: alloc_graph");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 4 * T, "in/out: input, output and two slots");
    int touched = 0;
    for (int i = 0; i < 10; i++)
        touched += ranges_overlap(chain[i], x) + ranges_overlap(chain[i], o);
    is_int(touched, 0, "in/out: no later result touches the input or the output");
    ggml_free(ctx);
    ggml_gallocr_free(galloc);

    /* tensors with data of their own are left alone and cost nothing */
    galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    ctx = meta_ctx(32);
    ggml_backend_buffer_t weights = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 1024);
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    struct ggml_tallocr talloc = ggml_tallocr_new(weights);
    ggml_tallocr_alloc(&talloc, w);
    void *w_data = w->data;
    struct ggml_tensor *wt = ggml_transpose(ctx, w);
    struct ggml_tensor *y = ggml_cont(ctx, wt);
    ggml_set_output(y);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, y);
    size_t size = 0;
    ggml_gallocr_reserve_n_size(galloc, graph, NULL, NULL, &size);
    is_uint(size, T, "pre-allocated: only the result needs memory");
    ok(ggml_gallocr_alloc_graph(galloc, graph), "pre-allocated: alloc_graph");
    ok(w->data == w_data && w->buffer == weights, "pre-allocated: the weight stays where it was");
    ok(wt->buffer == weights && wt->data == w_data, "pre-allocated: its view is set up in its buffer");
    ok(y->buffer != weights, "pre-allocated: the result goes to the compute buffer");
    ggml_free(ctx);
    ggml_backend_buffer_free(weights);
    ggml_gallocr_free(galloc);
}

/* ----------------------------------- gallocr: several buffer types */

static void test_multi_buffers(void)
{
    /* tensors 10x8 F32 = 320 bytes; A aligns to 64 (320), B to 256 (512) */
    struct test_buft ta, tb;
    test_buft_init(&ta, "A", 64);
    test_buft_init(&tb, "B", 256);
    ggml_backend_buffer_type_t bufts[2] = { &ta.buft, &tb.buft };
    ggml_gallocr_t galloc = ggml_gallocr_new_n(bufts, 2);
    ok(galloc != NULL, "multi: gallocr_new_n(A, B)");

    /* x (leaf, A) -> n1 (A) -> n2 (B) -> n3 (B) -> n4 (A): n1 dies when
     * n2 has read it, so n4 takes its place.  A: x + n1/n4 = 640;
     * B: n2 + n3 = 1024. */
    struct ggml_context *ctx = meta_ctx(32);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 8);
    ggml_set_input(x);
    struct ggml_tensor *n1 = ggml_cont(ctx, x);
    struct ggml_tensor *n2 = ggml_cont(ctx, n1);
    struct ggml_tensor *n3 = ggml_cont(ctx, n2);
    struct ggml_tensor *n4 = ggml_cont(ctx, n3);
    ggml_set_output(n4);
    struct ggml_cgraph *graph = new_graph(ctx);
    ggml_build_forward_expand(graph, n4);
    int node_ids[4] = { 0, 1, 1, 0 };
    int leaf_ids[1] = { 0 };

    tap_log_errors();
    ok(!ggml_gallocr_alloc_graph(galloc, graph), "multi: alloc_graph before reserve_n returns false");
    is_int(tap_log_errors(), 0, "multi: ... without an error (the caller is to reserve)");

    size_t sizes[2] = { 1, 1 };
    ggml_gallocr_reserve_n_size(galloc, graph, node_ids, leaf_ids, sizes);
    is_uint(sizes[0], 640, "multi: reserve_n_size of A");
    is_uint(sizes[1], 1024, "multi: reserve_n_size of B");
    is_int(ta.n_allocs + tb.n_allocs, 0, "multi: reserve_n_size allocates nothing");
    ok(!ggml_gallocr_alloc_graph(galloc, graph), "multi: a size-only reservation is not enough");

    ok(ggml_gallocr_reserve_n(galloc, graph, node_ids, leaf_ids), "multi: reserve_n");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 640, "multi: buffer A");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 1), 1024, "multi: buffer B");
    ok(ggml_gallocr_alloc_graph(galloc, graph), "multi: alloc_graph after reserve_n");
    ok(ggml_backend_buffer_get_type(x->buffer) == &ta.buft, "multi: x in A");
    ok(ggml_backend_buffer_get_type(n1->buffer) == &ta.buft, "multi: n1 in A");
    ok(ggml_backend_buffer_get_type(n2->buffer) == &tb.buft, "multi: n2 in B");
    ok(ggml_backend_buffer_get_type(n3->buffer) == &tb.buft, "multi: n3 in B");
    ok(ggml_backend_buffer_get_type(n4->buffer) == &ta.buft, "multi: n4 in A");
    is_ptr(n4->data, n1->data, "multi: n4 reuses n1's memory");
    is_int(ggml_backend_buffer_get_usage(n2->buffer), GGML_BACKEND_BUFFER_USAGE_COMPUTE,
           "multi: buffers are marked for compute");

    /* a larger graph of the same shape: alloc_graph cannot re-reserve
     * several buffers itself */
    struct ggml_context *ctx2 = meta_ctx(32);
    x = ggml_new_tensor_2d(ctx2, GGML_TYPE_F32, 20, 8);
    ggml_set_input(x);
    n1 = ggml_cont(ctx2, x);
    n2 = ggml_cont(ctx2, n1);
    n3 = ggml_cont(ctx2, n2);
    n4 = ggml_cont(ctx2, n3);
    struct ggml_cgraph *bigger = new_graph(ctx2);
    ggml_build_forward_expand(bigger, n4);
    tap_log_errors();
    ok(!ggml_gallocr_alloc_graph(galloc, bigger), "multi: alloc_graph of a larger graph returns false");
    is_int(tap_log_errors(), 0, "multi: ... without an error");
    ok(ggml_gallocr_reserve_n(galloc, bigger, node_ids, leaf_ids), "multi: reserve_n of the larger graph");
    ok(ggml_gallocr_alloc_graph(galloc, bigger), "multi: then alloc_graph");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 1280, "multi: A grew to 2 x 640");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 1), 1536, "multi: B grew to 2 x 768 (640 at 256 alignment)");
    ggml_free(ctx2);

    /* leaf buffer ids: the leaf goes to B, its consumer to A */
    ctx2 = meta_ctx(8);
    x = ggml_new_tensor_2d(ctx2, GGML_TYPE_F32, 10, 8);
    n1 = ggml_cont(ctx2, x);
    struct ggml_cgraph *small = new_graph(ctx2);
    ggml_build_forward_expand(small, n1);
    int one_node[1] = { 0 }, one_leaf[1] = { 1 };
    ok(ggml_gallocr_reserve_n(galloc, small, one_node, one_leaf), "multi: reserve_n with a leaf in B");
    ok(ggml_gallocr_alloc_graph(galloc, small), "multi: alloc_graph");
    ok(ggml_backend_buffer_get_type(x->buffer) == &tb.buft, "multi: the leaf in B");
    ok(ggml_backend_buffer_get_type(n1->buffer) == &ta.buft, "multi: the node in A");
    ggml_free(ctx2);
    ggml_free(ctx);
    ggml_gallocr_free(galloc);
    is_int(ta.n_live + tb.n_live, 0, "multi: gallocr_free freed every buffer");

    /* one buffer type named twice: one buffer, counted at its first id */
    ggml_backend_buffer_type_t same[2] = { &ta.buft, &ta.buft };
    galloc = ggml_gallocr_new_n(same, 2);
    ctx = meta_ctx(32);
    x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 8);
    ggml_set_input(x);
    n1 = ggml_cont(ctx, x);
    n2 = ggml_cont(ctx, n1);
    n3 = ggml_cont(ctx, n2);
    n4 = ggml_cont(ctx, n3);
    graph = new_graph(ctx);
    ggml_build_forward_expand(graph, n4);
    int allocs_before = ta.n_allocs;
    ggml_gallocr_reserve_n_size(galloc, graph, node_ids, leaf_ids, sizes);
    is_uint(sizes[0], 3 * 320, "same type twice: one plan for both ids (x + two slots)");
    is_uint(sizes[1], 0, "same type twice: the second id counts nothing");
    ok(ggml_gallocr_reserve_n(galloc, graph, node_ids, leaf_ids), "same type twice: reserve_n");
    is_int(ta.n_allocs - allocs_before, 1, "same type twice: one buffer allocated");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 960, "same type twice: size at id 0");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 1), 0, "same type twice: 0 at id 1");
    ok(ggml_gallocr_alloc_graph(galloc, graph), "same type twice: alloc_graph");
    ok(n2->buffer == n1->buffer, "same type twice: both ids share the buffer");
    ggml_free(ctx);
    ggml_gallocr_free(galloc);
    is_int(ta.n_live, 0, "same type twice: buffer freed");
}

/* ----------------------------- gallocr: re-reservation and chunks */

/* x (input) -> n conts, each result shaped like x (ne0 x 8 F32) */
static struct ggml_cgraph *cont_chain(struct ggml_context *ctx, int64_t ne0, int n)
{
    struct ggml_tensor *cur = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, 8);
    ggml_set_input(cur);
    for (int i = 0; i < n; i++)
        cur = ggml_cont(ctx, cur);
    ggml_set_output(cur);
    struct ggml_cgraph *graph = new_graph(ctx);
    ggml_build_forward_expand(graph, cur);
    return graph;
}

static void test_rereserve(void)
{
    struct test_buft tb;
    test_buft_init(&tb, "counted", 64);
    ggml_gallocr_t galloc = ggml_gallocr_new(&tb.buft);

    /* small: 16x8 F32 = 512, x + 2 slots = 1536; big: 64x8 = 2048 -> 6144 */
    struct ggml_context *c1 = meta_ctx(32), *c2 = meta_ctx(32), *c3 = meta_ctx(32), *c4 = meta_ctx(32);
    struct ggml_cgraph *small = cont_chain(c1, 16, 4);
    struct ggml_cgraph *big = cont_chain(c2, 64, 4);
    struct ggml_cgraph *small2 = cont_chain(c3, 16, 4);
    struct ggml_cgraph *small3 = cont_chain(c4, 16, 4);

    ok(ggml_gallocr_reserve(galloc, small), "re-reserve: reserve the small graph");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 1536, "re-reserve: 1536 bytes");
    is_int(tb.n_allocs, 1, "re-reserve: one buffer");
    ok(ggml_gallocr_alloc_graph(galloc, big), "re-reserve: alloc_graph of a larger graph");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 6144, "re-reserve: the buffer grew to 6144");
    is_int(tb.n_allocs, 2, "re-reserve: a second buffer replaced the first");
    is_int(tb.n_live, 1, "re-reserve: the first one was freed");
    struct ggml_tensor *out = ggml_graph_node(big, -1);
    ok(out->data != NULL && offset_in_buffer(out) + ggml_nbytes(out) <= 6144, "re-reserve: the output is inside");

    ok(ggml_gallocr_alloc_graph(galloc, small2), "re-reserve: a smaller graph afterwards");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 6144, "re-reserve: buffers never shrink");
    is_int(tb.n_allocs, 2, "re-reserve: no new buffer for a smaller graph");

    size_t size = 0;
    ggml_gallocr_reserve_n_size(galloc, small, NULL, NULL, &size);
    is_uint(size, 1536, "re-reserve: reserve_n_size of the small graph");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 6144, "re-reserve: reserve_n_size leaves the buffer");
    ok(ggml_gallocr_alloc_graph(galloc, small3), "re-reserve: alloc_graph after reserve_n_size");
    is_int(tb.n_allocs, 2, "re-reserve: still no new buffer");
    ggml_gallocr_free(galloc);
    is_int(tb.n_live, 0, "re-reserve: all freed");

    /* graphs with the same counts and sizes but other operands or flags:
     * a = cont(x), b = cont(a), c = cont(b), d = add(c, b) puts c where a
     * was; with d = add(c, a), or a flagged output, a must outlive c */
    galloc = ggml_gallocr_new(&tb.buft);
    for (int variant = 0; variant < 3; variant++) {
        struct ggml_context *vc = meta_ctx(16);
        struct ggml_tensor *x = ggml_new_tensor_2d(vc, GGML_TYPE_F32, 16, 8);
        ggml_set_input(x);
        struct ggml_tensor *a = ggml_cont(vc, x);
        struct ggml_tensor *b = ggml_cont(vc, a);
        struct ggml_tensor *c = ggml_cont(vc, b);
        struct ggml_tensor *d = hand_op(vc, GGML_OP_ADD, c, variant == 1 ? a : b);
        if (variant == 2)
            ggml_set_output(a);
        ggml_set_output(d);
        struct ggml_cgraph *graph = new_graph(vc);
        ggml_build_forward_expand(graph, d);
        ok(ggml_gallocr_alloc_graph(galloc, graph), "shape %d: alloc_graph", variant);
        if (variant == 0)
            is_ptr(c->data, a->data, "shape 0: c takes a's place");
        else
            ok(!ranges_overlap(a, c), "shape %d: the plan of the first graph is not reused", variant);
        ggml_free(vc);
    }
    ggml_gallocr_free(galloc);
    ggml_free(c1);
    ggml_free(c2);
    ggml_free(c3);
    ggml_free(c4);

    /* a buffer type whose buffers hold at most 1024 bytes: x + 2 slots of
     * 512 do not fit one buffer.  x and n1 fill chunk 0; n2 opens chunk 1;
     * n3 goes where n1 was; n4 where n2 was: 1024 + 512 in two buffers. */
    struct test_buft small_max;
    test_buft_init(&small_max, "max1024", 64);
    small_max.max_size = 1024;
    galloc = ggml_gallocr_new(&small_max.buft);
    c1 = meta_ctx(32);
    struct ggml_cgraph *graph = cont_chain(c1, 16, 4);
    ok(ggml_gallocr_alloc_graph(galloc, graph), "chunks: alloc_graph");
    is_int(small_max.n_allocs, 2, "chunks: two backend buffers");
    is_uint(small_max.largest, 1024, "chunks: none larger than the maximum");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 1536, "chunks: 1536 bytes in all");
    struct ggml_tensor *x = ggml_graph_node(graph, 0)->src[0];
    struct ggml_tensor *n[4];
    for (int i = 0; i < 4; i++)
        n[i] = ggml_graph_node(graph, i);
    ok(x->buffer == n[0]->buffer && n[1]->buffer != x->buffer, "chunks: n2 in the second buffer");
    is_ptr(n[2]->data, n[0]->data, "chunks: n3 reuses n1's place");
    is_ptr(n[3]->data, n[1]->data, "chunks: n4 reuses n2's place");
    ggml_gallocr_free(galloc);
    is_int(small_max.n_live, 0, "chunks: all freed");
    ggml_free(c1);

    /* the chunk that needs no growth wins: leafs in CPU memory, nodes in
     * max1024.  n1 (256, output) opens chunk 0; n2 (1024) opens chunk 1;
     * n3 (256, output) grows chunk 0 to 512 and n2 dies; n4 (256) fits
     * chunk 1's 1024 bytes without growth, where chunk 0 would grow to
     * 768.  Total 512 + 1024. */
    small_max.n_allocs = 0;
    ggml_backend_buffer_type_t two[2] = { ggml_backend_cpu_buffer_type(), &small_max.buft };
    galloc = ggml_gallocr_new_n(two, 2);
    c1 = meta_ctx(16);
    struct ggml_tensor *lx = ggml_new_tensor_2d(c1, GGML_TYPE_F32, 8, 8);
    struct ggml_tensor *ly = ggml_new_tensor_2d(c1, GGML_TYPE_F32, 16, 16);
    ggml_set_input(lx);
    ggml_set_input(ly);
    struct ggml_tensor *m1 = ggml_cont(c1, lx);
    struct ggml_tensor *m2 = ggml_cont(c1, ly);
    struct ggml_tensor *m3 = hand_op(c1, GGML_OP_MUL_MAT, m1, m2);
    struct ggml_tensor *m4 = ggml_cont(c1, lx);
    ggml_set_output(m1);
    ggml_set_output(m3);
    ggml_set_output(m4);
    graph = new_graph(c1);
    struct ggml_tensor *order[4] = { m1, m2, m3, m4 };
    for (int i = 0; i < 4; i++)
        ggml_build_forward_expand(graph, order[i]);
    int node_ids[4] = { 1, 1, 1, 1 }, leaf_ids[2] = { 0, 0 };
    ok(ggml_gallocr_reserve_n(galloc, graph, node_ids, leaf_ids), "least growth: reserve_n");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 1), 1536, "least growth: 512 + 1024 bytes");
    ok(ggml_gallocr_alloc_graph(galloc, graph), "least growth: alloc_graph");
    ok(m4->buffer == m2->buffer && m4->data == m2->data, "least growth: n4 where n2 was");
    ggml_gallocr_free(galloc);
    ggml_free(c1);
}

/* ------------------------------------ gallocr: allocation failure */

static void test_alloc_failure(void)
{
    struct test_buft tb;
    test_buft_init(&tb, "failing", 64);
    tb.fail_above = 2000;
    ggml_gallocr_t galloc = ggml_gallocr_new(&tb.buft);

    /* big needs 3 x 2048 > 2000, small 3 x 512 = 1536 */
    struct ggml_context *c1 = meta_ctx(32), *c2 = meta_ctx(32), *c3 = meta_ctx(32), *c4 = meta_ctx(32);
    struct ggml_cgraph *big = cont_chain(c1, 64, 4);
    struct ggml_cgraph *small = cont_chain(c2, 16, 4);
    struct ggml_cgraph *big2 = cont_chain(c3, 64, 4);
    struct ggml_cgraph *small2 = cont_chain(c4, 16, 4);

    tap_log_errors();
    ok(!ggml_gallocr_reserve(galloc, big), "failure: reserve returns false when the buffer cannot be had");
    logged_one_error("failure: one message");
    is_int(tb.n_failed, 1, "failure: the buffer type was asked once");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 0, "failure: no buffer");
    ok(!ggml_gallocr_alloc_graph(galloc, big), "failure: alloc_graph of the same graph fails too");
    logged_one_error("failure: one message from alloc_graph");
    ok(ggml_graph_node(big, -1)->data == NULL, "failure: nothing placed");

    ok(ggml_gallocr_reserve(galloc, small), "failure: a later reservation that fits succeeds");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 1536, "failure: 1536 bytes");
    ok(ggml_gallocr_alloc_graph(galloc, small), "failure: alloc_graph after it");
    ok(ggml_graph_node(small, -1)->data != NULL, "failure: tensors placed");
    ok(!ggml_gallocr_alloc_graph(galloc, big2), "failure: growing past the limit fails");
    logged_one_error("failure: one message");
    ok(ggml_gallocr_alloc_graph(galloc, small2), "failure: and the allocator still works");
    ok(ggml_graph_node(small2, -1)->data != NULL, "failure: tensors placed again");
    tap_log_errors();

    /* the backend's init_tensor refuses a tensor */
    struct ggml_context *c5 = meta_ctx(32), *c6 = meta_ctx(32);
    struct ggml_cgraph *small3 = cont_chain(c5, 16, 4);
    struct ggml_cgraph *small4 = cont_chain(c6, 16, 4);
    tb.fail_init = 1;
    ok(!ggml_gallocr_alloc_graph(galloc, small3), "failure: alloc_graph returns false when init_tensor fails");
    logged_one_error("failure: one message for it");
    tb.fail_init = 0;
    ok(ggml_gallocr_alloc_graph(galloc, small4), "failure: the next graph is allocated");
    ggml_free(c5);
    ggml_free(c6);
    ggml_gallocr_free(galloc);
    is_int(tb.n_live, 0, "failure: all freed");
    ggml_free(c1);
    ggml_free(c2);
    ggml_free(c3);
    ggml_free(c4);
}

/* ---------------------------------------------------- random graphs */

struct rng {
    uint64_t s;
};

static uint32_t rnd(struct rng *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t) (r->s >> 33);
}

#define RG_MAX 96

struct rgraph {
    struct ggml_cgraph *graph;
    struct ggml_tensor *pool[RG_MAX];
    int n_pool;
    int leafs[4];
    int n_leafs;
    int roots[RG_MAX];
    int n_roots;
};

static struct ggml_tensor *rg_pick(struct rgraph *g, struct rng *r)
{
    return g->pool[rnd(r) % (uint32_t) g->n_pool];
}

static struct ggml_tensor *rg_contiguous(struct ggml_context *ctx, struct ggml_tensor *t)
{
    return ggml_is_contiguous(t) ? t : ggml_cont(ctx, t);
}

/*
 * Builds the same random graph (for the same seed) in any context: leafs
 * (some inputs), then conts, transposes, row views, reshapes and hand-made
 * SCALE / ADD nodes over earlier tensors; some results are outputs and
 * every root is one.
 */
static void rg_build(struct rgraph *g, struct ggml_context *ctx, uint64_t seed)
{
    struct rng r = { seed };
    memset(g, 0, sizeof *g);
    g->n_leafs = 1 + (int) (rnd(&r) % 3);
    for (int i = 0; i < g->n_leafs; i++) {
        struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
        ggml_format_name(t, "leaf%d", i);
        if (rnd(&r) % 3)
            ggml_set_input(t);
        g->leafs[i] = g->n_pool;
        g->pool[g->n_pool++] = t;
    }
    int n_ops = 8 + (int) (rnd(&r) % 40);
    bool consumed[RG_MAX] = { false };
    for (int k = 0; k < n_ops && g->n_pool < RG_MAX - 2; k++) {
        struct ggml_tensor *src = rg_pick(g, &r), *t = NULL;
        switch (rnd(&r) % 8) {
        case 0:
            t = ggml_cont(ctx, src);
            break;
        case 1:
            t = ggml_cont(ctx, ggml_transpose(ctx, src));
            break;
        case 2:
            t = ggml_transpose(ctx, src);
            break;
        case 3:
        case 4:
            t = hand_op(ctx, GGML_OP_SCALE, src, NULL);
            break;
        case 5: {
            struct ggml_tensor *other = src;
            uint32_t start = rnd(&r);
            for (int i = 0; i < g->n_pool; i++) {
                struct ggml_tensor *c = g->pool[(start + (uint32_t) i) % (uint32_t) g->n_pool];
                if (ggml_are_same_shape(c, src) && c != src) {
                    other = c;
                    break;
                }
            }
            t = hand_op(ctx, GGML_OP_ADD, src, other);
            break;
        }
        case 6: {
            struct ggml_tensor *base = rg_contiguous(ctx, src);
            int64_t half = ggml_nelements(base) / 2;
            t = ggml_view_1d(ctx, base, half, rnd(&r) % 2 ? 0 : (size_t) half * sizeof(float));
            break;
        }
        default:
            t = ggml_reshape_1d(ctx, rg_contiguous(ctx, src), ggml_nelements(src));
            break;
        }
        ggml_format_name(t, "t%d", g->n_pool);
        if (rnd(&r) % 8 == 0)
            ggml_set_output(t);
        for (int i = 0; i < g->n_pool; i++)
            for (int j = 0; j < GGML_MAX_SRC; j++)
                if (t->src[j] == g->pool[i] || (t->src[j] && t->src[j]->src[0] == g->pool[i]))
                    consumed[i] = true;
        g->pool[g->n_pool++] = t;
    }
    /* roots: the last tensor, every output, every tensor nothing consumed */
    g->graph = new_graph(ctx);
    for (int i = g->n_leafs; i < g->n_pool; i++) {
        struct ggml_tensor *t = g->pool[i];
        if (i == g->n_pool - 1 || !consumed[i] || (t->flags & GGML_TENSOR_FLAG_OUTPUT)) {
            ggml_set_output(t);
            g->roots[g->n_roots++] = i;
            ggml_build_forward_expand(g->graph, t);
        }
    }
}

static float *elem(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return (float *) ((char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3]);
}

/* Runs the graph on host memory: CONT copies, SCALE maps x to x/2 + 1,
 * ADD adds; views compute nothing.  Element by element, in the order of
 * the nodes, exactly as a backend would. */
static void rg_run(struct ggml_cgraph *graph)
{
    for (int n = 0; n < ggml_graph_n_nodes(graph); n++) {
        struct ggml_tensor *t = ggml_graph_node(graph, n);
        if (t->op != GGML_OP_CONT && t->op != GGML_OP_SCALE && t->op != GGML_OP_ADD)
            continue;
        for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
                for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
                        float a = *elem(t->src[0], i0, i1, i2, i3);
                        float v = t->op == GGML_OP_CONT ? a
                                : t->op == GGML_OP_SCALE ? a * 0.5f + 1.0f
                                : a + *elem(t->src[1], i0, i1, i2, i3);
                        *elem(t, i0, i1, i2, i3) = v;
                    }
    }
}

static void rg_fill(struct rgraph *g, uint64_t seed)
{
    for (int i = 0; i < g->n_leafs; i++) {
        struct ggml_tensor *t = g->pool[g->leafs[i]];
        float *p = t->data;
        if (p == NULL)
            continue; /* not part of the graph */
        for (int64_t k = 0; k < ggml_nelements(t); k++)
            p[k] = (float) ((seed * 31 + (uint64_t) i * 1009 + (uint64_t) k * 7) % 97) - 48.0f;
    }
}

/* The leafs of a graph (tensors it reads that no node computes), found
 * through the public API: sources and view sources that are not nodes. */
static int graph_leafs(struct ggml_cgraph *graph, struct ggml_tensor **leafs, int max)
{
    int n = 0, n_nodes = ggml_graph_n_nodes(graph);
    for (int i = 0; i < n_nodes; i++) {
        struct ggml_tensor *node = ggml_graph_node(graph, i);
        for (int j = -1; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor *s = j < 0 ? node->view_src : node->src[j];
            if (s == NULL)
                continue;
            bool known = false;
            for (int k = 0; k < n_nodes && !known; k++)
                known = ggml_graph_node(graph, k) == s;
            for (int k = 0; k < n && !known; k++)
                known = leafs[k] == s;
            if (!known && n < max)
                leafs[n++] = s;
        }
    }
    return n;
}

/* The tensor whose memory t uses. */
static struct ggml_tensor *owner_of(struct ggml_tensor *t)
{
    return t->view_src ? t->view_src : t;
}

/*
 * Independent lifetime check.  A tensor with memory of its own is written
 * at its birth (its node's index, -1 for leafs) and read until its death
 * (the last node reading it or a view of it; never for inputs, outputs and
 * sources of output views).  Two tensors may share bytes only when one
 * dies no later than the other is born (equal: the later one is computed
 * in place over the earlier one).  Returns the number of violations.
 */
static int check_lifetimes(struct ggml_cgraph *graph, int *n_checked)
{
    int n_nodes = ggml_graph_n_nodes(graph);
    int cap = n_nodes * (GGML_MAX_SRC + 2) + 1;
    struct ggml_tensor **mem = malloc((size_t) cap * sizeof *mem);
    int *birth = malloc((size_t) cap * sizeof *birth), *death = malloc((size_t) cap * sizeof *death);
    int n = graph_leafs(graph, mem, cap);
    for (int i = 0; i < n; i++)
        birth[i] = death[i] = -1;
    for (int i = 0; i < n_nodes; i++) {
        struct ggml_tensor *t = ggml_graph_node(graph, i);
        if (t->view_src)
            continue;
        mem[n] = t;
        birth[n] = death[n] = i;
        n++;
    }
    for (int k = 0; k < n; k++) {
        struct ggml_tensor *t = mem[k];
        if (t->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT))
            death[k] = INT_MAX;
        for (int i = 0; i < n_nodes; i++) {
            struct ggml_tensor *node = ggml_graph_node(graph, i);
            if (node->view_src == t && (node->flags & GGML_TENSOR_FLAG_OUTPUT))
                death[k] = INT_MAX;
            for (int j = 0; j < GGML_MAX_SRC; j++)
                if (node->src[j] && owner_of(node->src[j]) == t && i > death[k])
                    death[k] = i;
        }
    }
    int bad = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (ranges_overlap(mem[a], mem[b]) && !(death[a] <= birth[b] || death[b] <= birth[a])) {
                if (bad < 3)
                    tap_diag("%s [%d, %d] and %s [%d, %d] share memory", mem[a]->name, birth[a], death[a],
                             mem[b]->name, birth[b], death[b]);
                bad++;
            }
    *n_checked += n;
    free(mem);
    free(birth);
    free(death);
    return bad;
}

static bool tensor_inside_buffer(const struct ggml_tensor *t)
{
    if (t->buffer == NULL || t->data == NULL)
        return false;
    const char *base = ggml_backend_buffer_get_base(t->buffer);
    const char *p = t->data;
    return p >= base && p + ggml_nbytes(t) <= base + ggml_backend_buffer_get_size(t->buffer);
}

/*
 * Allocates n_graphs random graphs with one allocator (so it re-reserves
 * as graphs grow), runs each, and compares with the same graph computed
 * with every tensor in memory of its own.  With two buffer types, nodes
 * and leafs go to random buffers through reserve_n.
 */
static void random_graphs(const char *what, ggml_backend_buffer_type_t *bufts, int n_bufts, int n_graphs,
                          uint64_t seed0)
{
    ggml_gallocr_t galloc = ggml_gallocr_new_n(bufts, n_bufts);
    int alloc_failed = 0, outside = 0, overlaps = 0, wrong = 0, inputs_changed = 0, over_naive = 0;
    int n_checked = 0;
    for (int k = 0; k < n_graphs; k++) {
        uint64_t seed = seed0 + (uint64_t) k;
        struct ggml_context *mctx = meta_ctx(4 * RG_MAX);
        struct ggml_context *dctx = data_ctx(4 * RG_MAX, 4 * RG_MAX * 1024);
        struct rgraph g, ref;
        rg_build(&g, mctx, seed);
        rg_build(&ref, dctx, seed);

        /* every other graph: the size of a reservation first, which must
         * not exceed what the graph takes without any reuse */
        struct rng r = { seed ^ 0x5555 };
        int node_ids[1024], leaf_ids[64] = { 0 }; /* leafs in buffer 0 */
        struct ggml_tensor *leafs[8];
        int n_leafs = graph_leafs(g.graph, leafs, 8);
        for (int i = 0; i < ggml_graph_n_nodes(g.graph); i++)
            node_ids[i] = (int) (rnd(&r) % (uint32_t) n_bufts);
        if (k % 2 == 0) {
            size_t naive = 0, reserved = 0, sizes[4] = { 0 };
            for (int i = 0; i < n_leafs; i++)
                naive += round_up(ggml_backend_buft_get_alloc_size(bufts[0], leafs[i]),
                                  ggml_backend_buft_get_alignment(bufts[0]));
            for (int i = 0; i < ggml_graph_n_nodes(g.graph); i++) {
                ggml_backend_buffer_type_t b = bufts[node_ids[i]];
                struct ggml_tensor *t = ggml_graph_node(g.graph, i);
                if (!t->view_src)
                    naive += round_up(ggml_backend_buft_get_alloc_size(b, t), ggml_backend_buft_get_alignment(b));
            }
            ggml_gallocr_reserve_n_size(galloc, g.graph, node_ids, leaf_ids, sizes);
            for (int i = 0; i < n_bufts; i++)
                reserved += sizes[i];
            if (reserved > naive || reserved == 0)
                over_naive++;
        }

        bool ok_alloc;
        if (n_bufts > 1)
            ok_alloc = ggml_gallocr_reserve_n(galloc, g.graph, node_ids, leaf_ids) &&
                       ggml_gallocr_alloc_graph(galloc, g.graph);
        else
            ok_alloc = ggml_gallocr_alloc_graph(galloc, g.graph);
        if (!ok_alloc) {
            alloc_failed++;
            ggml_free(mctx);
            ggml_free(dctx);
            continue;
        }

        for (int i = 0; i < g.n_pool; i++) {
            struct ggml_tensor *t = g.pool[i];
            bool in_graph = false;
            for (int n = 0; n < ggml_graph_n_nodes(g.graph) && !in_graph; n++)
                in_graph = ggml_graph_node(g.graph, n) == t;
            for (int n = 0; n < n_leafs && !in_graph; n++)
                in_graph = leafs[n] == t;
            if (in_graph && !tensor_inside_buffer(t))
                outside++;
        }
        overlaps += check_lifetimes(g.graph, &n_checked);

        rg_fill(&g, seed);
        rg_fill(&ref, seed);
        rg_run(g.graph);
        rg_run(ref.graph);
        for (int i = 0; i < g.n_roots; i++) {
            struct ggml_tensor *a = g.pool[g.roots[i]], *b = ref.pool[ref.roots[i]];
            for (int64_t e = 0; e < ggml_nelements(a); e++) {
                int64_t i0 = e % a->ne[0], i1 = e / a->ne[0];
                if (*elem(a, i0, i1, 0, 0) != *elem(b, i0, i1, 0, 0)) {
                    wrong++;
                    break;
                }
            }
        }
        for (int i = 0; i < g.n_leafs; i++) {
            struct ggml_tensor *a = g.pool[g.leafs[i]], *b = ref.pool[ref.leafs[i]];
            if ((a->flags & GGML_TENSOR_FLAG_INPUT) && a->data && memcmp(a->data, b->data, ggml_nbytes(a)) != 0)
                inputs_changed++;
        }
        ggml_free(mctx);
        ggml_free(dctx);
    }
    is_int(alloc_failed, 0, "random %s: %d graphs allocated", what, n_graphs);
    is_int(outside, 0, "random %s: every tensor inside its buffer", what);
    is_int(overlaps, 0, "random %s: no two live tensors share memory (%d tensors checked)", what, n_checked);
    is_int(wrong, 0, "random %s: results equal those computed without reuse", what);
    is_int(inputs_changed, 0, "random %s: inputs never overwritten", what);
    is_int(over_naive, 0, "random %s: never more memory than without reuse", what);
    ggml_gallocr_free(galloc);
}

static void test_random_graphs(void)
{
    ggml_backend_buffer_type_t cpu = ggml_backend_cpu_buffer_type();
    random_graphs("CPU", &cpu, 1, 300, 1000);

    struct test_buft chunked, padded, other;
    test_buft_init(&chunked, "max1024", 64);
    chunked.max_size = 1024;
    ggml_backend_buffer_type_t b1 = &chunked.buft;
    random_graphs("chunked (max 1024)", &b1, 1, 200, 5000);

    test_buft_init(&padded, "padded", 32);
    padded.extra = 100;
    ggml_backend_buffer_type_t b2 = &padded.buft;
    random_graphs("padded alloc size", &b2, 1, 200, 9000);

    test_buft_init(&other, "other", 128);
    ggml_backend_buffer_type_t two[2] = { cpu, &other.buft };
    random_graphs("two buffer types", two, 2, 200, 13000);
    is_int(chunked.n_live + padded.n_live + other.n_live, 0, "random: every buffer freed");
}

/* ------------------------------------------ gallocr: the free list */

static void test_free_list(void)
{
    /* Freed neighbours merge.  Inputs x (512), y (1024), w (1536) take
     * [0, 3072).  a, b, c = cont(x) at 3072, 3584, 4096; d = op(a, c) at
     * 4608 frees a and c (two separate 512-byte holes); e = op(y, b)
     * (1024 bytes) fits neither and goes to 5120, then b's release joins
     * both holes into [3072, 4608); f = op(w, d) (1536 bytes) fits there
     * exactly.  Peak: 6144. */
    struct ggml_context *ctx = meta_ctx(32);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8);
    struct ggml_tensor *y = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 8);
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 48, 8);
    ggml_set_input(x);
    ggml_set_input(y);
    ggml_set_input(w);
    struct ggml_tensor *a = ggml_cont(ctx, x);
    struct ggml_tensor *b = ggml_cont(ctx, x);
    struct ggml_tensor *c = ggml_cont(ctx, x);
    struct ggml_tensor *d = hand_op(ctx, GGML_OP_MUL_MAT, a, c);
    struct ggml_tensor *e = hand_op(ctx, GGML_OP_MUL_MAT, y, b);
    struct ggml_tensor *f = hand_op(ctx, GGML_OP_MUL_MAT, w, d);
    ggml_set_output(e);
    ggml_set_output(f);
    struct ggml_cgraph *graph = new_graph(ctx);
    struct ggml_tensor *order[6] = { a, b, c, d, e, f };
    for (int i = 0; i < 6; i++)
        ggml_build_forward_expand(graph, order[i]);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    ok(ggml_gallocr_alloc_graph(galloc, graph), "merge: alloc_graph");
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 6144, "merge: peak 6144 bytes");
    is_uint(offset_in_buffer(e), 5120, "merge: e (1024) fits no 512-byte hole");
    is_uint(offset_in_buffer(f), 3072, "merge: f (1536) fills the three merged holes");
    ggml_free(ctx);

    /* More holes than the free list keeps: 600 leafs of 64 bytes; 300
     * nodes of 4 KiB each read an even and an odd leaf (the even ones die:
     * 300 holes between live odd leafs), then 300 small nodes read the odd
     * leafs.  Whatever the list
     * cannot keep stays unused: no two live tensors may overlap. */
    struct ggml_init_params params = {
        .mem_size = 1400 * ggml_tensor_overhead() + ggml_graph_overhead_custom(2048, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    ctx = ggml_init(params);
    struct ggml_tensor *big = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1024);
    ggml_set_input(big);
    struct ggml_tensor *leaf[600];
    for (int i = 0; i < 600; i++)
        leaf[i] = ggml_format_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16), "l%d", i);
    graph = ggml_new_graph_custom(ctx, 2048, false);
    for (int i = 0; i < 300; i++) {
        struct ggml_tensor *n = hand_op(ctx, GGML_OP_MUL_MAT, big, leaf[2 * i]);
        n->src[2] = leaf[2 * i + 1]; /* leafs are placed in the order found */
        ggml_format_name(n, "big%d", i);
        ggml_set_output(n);
        ggml_build_forward_expand(graph, n);
    }
    for (int i = 0; i < 300; i++) {
        struct ggml_tensor *n = hand_op(ctx, GGML_OP_MUL_MAT, leaf[2 * i + 1], NULL);
        ggml_format_name(n, "small%d", i);
        ggml_set_output(n);
        ggml_build_forward_expand(graph, n);
    }
    ok(ggml_gallocr_alloc_graph(galloc, graph), "many holes: alloc_graph");
    int checked = 0;
    is_int(check_lifetimes(graph, &checked), 0, "many holes: no two live tensors share memory");
    /* each small node takes a 64-byte hole and frees another: after the
     * big input, the leafs and the 300 big nodes nothing more is needed */
    is_uint(ggml_gallocr_get_buffer_size(galloc, 0), 4096 + 600 * 64 + 300 * 4096, "many holes: peak");
    ggml_free(ctx);
    ggml_gallocr_free(galloc);
}

/* --------------------------------------------------- ctx tensors */

static void test_ctx_tensors(void)
{
    struct test_buft tb;
    test_buft_init(&tb, "max1024", 64);
    tb.max_size = 1024;

    /* t1, t2: 400 -> 448 each (896); t3: 800 -> 832 does not fit with them;
     * t4: 40 -> 64 joins t3 (896).  Two buffers, 1792 bytes. */
    struct ggml_context *ctx = meta_ctx(16);
    struct ggml_tensor *t1 = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100), "t1");
    struct ggml_tensor *t2 = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100), "t2");
    struct ggml_tensor *t3 = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 200), "t3");
    struct ggml_tensor *v = ggml_view_1d(ctx, t3, 10, 400);
    struct ggml_tensor *vv = ggml_view_1d(ctx, v, 2, 8);
    struct ggml_tensor *t4 = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10), "t4");

    tap_log_errors();
    is_uint(ggml_backend_alloc_ctx_tensors_from_buft_size(ctx, &tb.buft), 1792, "ctx: size 1792 in two parts");
    is_int(tb.n_allocs, 0, "ctx: the size query allocates nothing");
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors_from_buft(ctx, &tb.buft);
    ok(buffer != NULL, "ctx: allocated");
    is_int(tap_log_errors(), 0, "ctx: no message");
    is_int(tb.n_allocs, 2, "ctx: two buffers of at most 1024 bytes");
    is_uint(tb.largest, 896, "ctx: the larger part is 896 bytes");
    ok(ggml_backend_buffer_is_multi_buffer(buffer), "ctx: returned as a multi-buffer");
    is_uint(ggml_backend_buffer_get_size(buffer), 1792, "ctx: multi-buffer size");
    ok(t1->buffer == t2->buffer && t3->buffer == t4->buffer && t1->buffer != t3->buffer,
       "ctx: t1, t2 in one buffer; t3, t4 in the other");
    is_uint(offset_in_buffer(t1), 0, "ctx: t1 at 0");
    is_uint(offset_in_buffer(t2), 448, "ctx: t2 at 448");
    is_uint(offset_in_buffer(t3), 0, "ctx: t3 at 0 of the second buffer");
    is_uint(offset_in_buffer(t4), 832, "ctx: t4 at 832");
    is_ptr(v->data, (char *) t3->data + 400, "ctx: a view points into its source");
    is_ptr(v->buffer, t3->buffer, "ctx: ... in its buffer");
    is_ptr(vv->data, (char *) t3->data + 408, "ctx: a view of a view too");

    tap_log_errors();
    ok(ggml_backend_alloc_ctx_tensors_from_buft(ctx, &tb.buft) == NULL, "ctx: nothing left to allocate -> NULL");
    is_int(tap_log_errors(), 0, "ctx: ... without an error");
    is_uint(ggml_backend_alloc_ctx_tensors_from_buft_size(ctx, &tb.buft), 0, "ctx: size 0 when all are allocated");
    is_int(tb.n_allocs, 2, "ctx: no new buffer");
    ggml_backend_buffer_free(buffer);
    is_int(tb.n_live, 0, "ctx: freeing the multi-buffer frees its parts");
    ggml_free(ctx);

    /* a single buffer when everything fits */
    ctx = meta_ctx(16);
    t1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100);
    t2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    buffer = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    ok(buffer != NULL && !ggml_backend_buffer_is_multi_buffer(buffer), "ctx: one CPU buffer");
    is_uint(ggml_backend_buffer_get_size(buffer), 448 + 64, "ctx: 448 + 64 bytes");
    is_ptr(t1->buffer, buffer, "ctx: t1 in it");
    is_uint(offset_in_buffer(t2), 448, "ctx: t2 at 448");
    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);

    /* an empty context: nothing to allocate */
    ctx = meta_ctx(4);
    tap_log_errors();
    ok(ggml_backend_alloc_ctx_tensors_from_buft(ctx, &tb.buft) == NULL, "ctx: empty context -> NULL");
    is_int(tap_log_errors(), 0, "ctx: ... without an error");
    ggml_free(ctx);

    /* a tensor larger than the maximum size */
    ctx = meta_ctx(8);
    t1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    t2 = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 300), "huge"); /* 1200 bytes */
    int allocs = tb.n_allocs;
    ok(ggml_backend_alloc_ctx_tensors_from_buft(ctx, &tb.buft) == NULL, "ctx: a 1200-byte tensor in 1024-byte buffers");
    logged_one_error("ctx: one message for a too-large tensor");
    ok(strstr(tap_last_log(), "huge") && strstr(tap_last_log(), "1216") && strstr(tap_last_log(), "1024"),
       "ctx: the message names the tensor and both sizes: %s", tap_last_log());
    is_int(tb.n_allocs, allocs, "ctx: nothing allocated");
    ok(t1->data == NULL && t1->buffer == NULL, "ctx: the other tensor stays unallocated");
    is_uint(ggml_backend_alloc_ctx_tensors_from_buft_size(ctx, &tb.buft), 0, "ctx: size query of it gives 0");
    logged_one_error("ctx: ... with one message");
    ggml_free(ctx);

    /* the buffer type fails: on the first buffer, then on the second */
    struct test_buft fail;
    test_buft_init(&fail, "failing", 64);
    fail.max_size = 1024;
    fail.allow = 0;
    ctx = meta_ctx(8);
    t1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 200); /* 832 */
    t2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 200); /* 832: a second buffer */
    v = ggml_view_1d(ctx, t2, 4, 0);
    ok(ggml_backend_alloc_ctx_tensors_from_buft(ctx, &fail.buft) == NULL, "ctx: allocation failure -> NULL");
    logged_one_error("ctx: one message for the failed allocation");
    fail.allow = 1;
    ok(ggml_backend_alloc_ctx_tensors_from_buft(ctx, &fail.buft) == NULL, "ctx: failure of the second buffer -> NULL");
    logged_one_error("ctx: one message");
    ok(t1->data == NULL && t1->buffer == NULL && v->data == NULL, "ctx: tensors of the first buffer reset");
    is_int(fail.n_live, 0, "ctx: the first buffer was freed");
    fail.allow = -1;
    buffer = ggml_backend_alloc_ctx_tensors_from_buft(ctx, &fail.buft);
    ok(buffer != NULL && t1->data != NULL && t2->data != NULL && v->data == t2->data,
       "ctx: the context can be allocated afterwards");
    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);

    /* init_tensor refuses a tensor, then a view */
    for (int mode = 1; mode <= 2; mode++) {
        fail.fail_init = mode;
        ctx = meta_ctx(8);
        t1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 200);
        v = ggml_view_1d(ctx, t1, 4, 16);
        int live = fail.n_live;
        tap_log_errors();
        ok(ggml_backend_alloc_ctx_tensors_from_buft(ctx, &fail.buft) == NULL,
           "ctx: init_tensor failure (%s) -> NULL", mode == 1 ? "tensor" : "view");
        logged_one_error("ctx: one message for it");
        ok(t1->data == NULL && t1->buffer == NULL && v->data == NULL && v->buffer == NULL,
           "ctx: tensors reset after the failure");
        is_int(fail.n_live, live, "ctx: the buffer was freed");
        ggml_free(ctx);
    }
    fail.fail_init = 0;

    /* a view made after its source was allocated: set up by the next call */
    ctx = meta_ctx(8);
    t1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    buffer = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    v = ggml_view_1d(ctx, t1, 8, 32);
    tap_log_errors();
    ok(ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type()) == NULL,
       "ctx: only a new view: NULL");
    is_int(tap_log_errors(), 0, "ctx: ... without an error");
    ok(v->buffer == buffer && v->data == (char *) t1->data + 32, "ctx: ... and the view is set up");
    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);

    /* bad arguments */
    ok(ggml_backend_alloc_ctx_tensors_from_buft(NULL, &tb.buft) == NULL, "ctx: NULL context");
    logged_one_error("ctx: one message for NULL context");
    ctx = meta_ctx(4);
    ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    ok(ggml_backend_alloc_ctx_tensors_from_buft(ctx, NULL) == NULL, "ctx: NULL buffer type");
    logged_one_error("ctx: one message for NULL buffer type");
    is_uint(ggml_backend_alloc_ctx_tensors_from_buft_size(ctx, NULL), 0, "ctx size: NULL buffer type");
    logged_one_error("ctx size: one message");
    ok(ggml_backend_alloc_ctx_tensors(ctx, NULL) == NULL, "ctx: NULL backend");
    logged_one_error("ctx: one message for NULL backend");
    ok(ggml_backend_alloc_ctx_tensors(NULL, NULL) == NULL, "ctx: NULL context and backend");
    logged_one_error("ctx: one message for both");
    ggml_free(ctx);
    struct ggml_context *with_data = data_ctx(4, 1024);
    ggml_new_tensor_1d(with_data, GGML_TYPE_F32, 10);
    ok(ggml_backend_alloc_ctx_tensors_from_buft(with_data, &tb.buft) == NULL, "ctx: a context that holds data");
    logged_one_error("ctx: one message for a context that is not no_alloc");
    ggml_free(with_data);

    /* through a backend's default buffer type */
    tap_log_errors();
    ggml_backend_t backend = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    if (backend == NULL) {
        tap_log_errors();
        tap_skip(2, "no CPU backend registered yet");
    } else {
        ctx = meta_ctx(4);
        t1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
        buffer = ggml_backend_alloc_ctx_tensors(ctx, backend);
        ok(buffer != NULL && t1->buffer == buffer, "ctx: allocated for the CPU backend");
        ok(ggml_backend_buffer_get_type(buffer) == ggml_backend_get_default_buffer_type(backend),
           "ctx: in the backend's default buffer type");
        ggml_backend_buffer_free(buffer);
        ggml_free(ctx);
        ggml_backend_free(backend);
    }
}

int main(void)
{
    tap_capture_log();
    test_tallocr();
    test_gallocr_handles();
    test_chain_100();
    test_inplace();
    test_views_and_lifetimes();
    test_multi_buffers();
    test_rereserve();
    test_alloc_failure();
    test_random_graphs();
    test_free_list();
    test_ctx_tensors();
    return tap_done();
}
