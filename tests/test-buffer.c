/*
 * test-buffer.c - buffer types and buffers: every ggml_backend_buft_* and
 * ggml_backend_buffer_* wrapper and the default it supplies for an absent
 * optional member, usage flags, clear, reset, init_tensor, the CPU buffer
 * types (huge pages for large ones), multi-buffers, moving tensor data in and out of buffers (bounds,
 * views, copies across buffers), ggml_backend_tensor_alloc,
 * ggml_backend_view_init, and the handle checks (NULL, double free, use
 * after free, foreign buffers).
 *
 * The test defines its own buffer types through ggml-backend-impl.h:
 *
 *   "TestMin"      every optional member NULL (free_buffer, init_tensor,
 *                  memset_tensor, cpy_tensor, reset, get_alignment,
 *                  get_max_size, get_alloc_size, is_host), so that each
 *                  documented default is what the library supplies;
 *   "TestFull"     every member present and counted, so that each wrapper
 *                  is seen to call the member;
 *   "TestHostFull" as TestFull, but its memory is host memory (is_host true).
 *
 * TestMin and TestFull keep their bytes in a private "storage" block; the
 * base address they hand out is a separate poisoned block, so a library
 * that reads or writes tensor->data of a non-host buffer directly instead
 * of going through set_tensor/get_tensor is caught (the poison changes or
 * shows up in the data).  Every range the library passes to the test
 * buffers is checked against the buffer; a range outside it counts as a
 * violation, and the test ends by asserting there were none.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "tap.h"

#define POISON 0xCC

/* ------------------------------------------------------- in-test buffers */

/* How one in-test buffer type behaves. */
struct tb_buft {
    const char *name;
    bool full;                      /* every optional member implemented */
    bool host;                      /* is_host answer (full types only) */
    size_t alignment;               /* get_alignment answer (full only) */
    size_t max_size;                /* get_max_size answer (full only) */
    size_t alloc_pad;               /* get_alloc_size = nbytes + alloc_pad (full only) */
    bool fail_alloc;                /* alloc_buffer returns NULL */
    bool fail_alloc_logged;         /* ... after a call that logged why */
    enum ggml_status init_status;   /* init_tensor answer (full only) */
    bool cpy_refuses;               /* cpy_tensor returns false (full only) */
};

/* One in-test buffer. */
struct tb_buffer {
    struct tb_buft *type;
    unsigned char *storage;   /* the bytes the buffer holds */
    unsigned char *base;      /* what get_base hands out (== storage for host types) */
    size_t size;
    bool freed;               /* free_buffer was called */
    struct tb_buffer *next;   /* every buffer made, released at the end */
};

/* Calls of the interface members since the last reset_calls(). */
static struct {
    int alloc_buffer, get_alignment, get_max_size, get_alloc_size, is_host;
    int free_buffer, get_base, init_tensor, memset_tensor, set_tensor, get_tensor;
    int set_tensor_2d, get_tensor_2d, cpy_tensor, clear, reset;
    int clear_value;
} calls;

/* Ranges outside a buffer, or uses of a freed buffer, seen by the members. */
static int violations;
static struct tb_buffer *all_buffers;

static void reset_calls(void)
{
    memset(&calls, 0, sizeof calls);
}

static struct ggml_backend_device test_device; /* only its address is used */

static struct tb_buft min_ctx = { .name = "TestMin" };
static struct tb_buft full_ctx = {
    .name = "TestFull", .full = true, .host = false,
    .alignment = 128, .max_size = 4096, .alloc_pad = 32,
    .init_status = GGML_STATUS_SUCCESS,
};
static struct tb_buft hostfull_ctx = {
    .name = "TestHostFull", .full = true, .host = true,
    .alignment = 32, .max_size = 1 << 20, .alloc_pad = 0,
    .init_status = GGML_STATUS_SUCCESS,
};

static struct tb_buffer *tb_of(ggml_backend_buffer_t buffer)
{
    return (struct tb_buffer *) buffer->context;
}

/* Address in storage of size bytes at offset of tensor, or NULL (counted). */
static unsigned char *tb_locate(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor,
                                size_t offset, size_t size)
{
    struct tb_buffer *tb = tb_of(buffer);
    uintptr_t at = (uintptr_t) tensor->data, lo = (uintptr_t) tb->base;
    if (tb->freed || at < lo || at - lo > tb->size) {
        violations++;
        return NULL;
    }
    size_t room = tb->size - (size_t) (at - lo);
    if (offset > room || size > room - offset) {
        violations++;
        return NULL;
    }
    return tb->storage + (at - lo) + offset;
}

static void tb_free_buffer(ggml_backend_buffer_t buffer)
{
    calls.free_buffer++;
    if (tb_of(buffer)->freed)
        violations++;
    tb_of(buffer)->freed = true;
}

static void *tb_get_base(ggml_backend_buffer_t buffer)
{
    calls.get_base++;
    return tb_of(buffer)->base;
}

static enum ggml_status tb_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor)
{
    (void) tensor;
    calls.init_tensor++;
    return tb_of(buffer)->type->init_status;
}

static void tb_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, uint8_t value,
                             size_t offset, size_t size)
{
    calls.memset_tensor++;
    unsigned char *p = tb_locate(buffer, tensor, offset, size);
    if (p)
        memset(p, value, size);
}

static void tb_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, const void *data,
                          size_t offset, size_t size)
{
    calls.set_tensor++;
    unsigned char *p = tb_locate(buffer, tensor, offset, size);
    if (p)
        memcpy(p, data, size);
}

static void tb_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, void *data,
                          size_t offset, size_t size)
{
    calls.get_tensor++;
    unsigned char *p = tb_locate(buffer, tensor, offset, size);
    if (p)
        memcpy(data, p, size);
}

/* The runs of a 2-D transfer, each through tb_locate (so each is bounds-checked). */
static void tb_set_tensor_2d(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, const void *data,
                             size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data)
{
    calls.set_tensor_2d++;
    for (size_t i = 0; i < n_copies; i++) {
        unsigned char *p = tb_locate(buffer, tensor, offset + i * stride_tensor, size);
        if (p)
            memcpy(p, (const char *) data + i * stride_data, size);
    }
}

static void tb_get_tensor_2d(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, void *data,
                             size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data)
{
    calls.get_tensor_2d++;
    for (size_t i = 0; i < n_copies; i++) {
        unsigned char *p = tb_locate(buffer, tensor, offset + i * stride_tensor, size);
        if (p)
            memcpy((char *) data + i * stride_data, p, size);
    }
}

static ggml_backend_buffer_t tb_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size);

/* Copies only from another buffer of a full in-test type. */
static bool tb_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    calls.cpy_tensor++;
    if (tb_of(buffer)->type->cpy_refuses)
        return false;
    ggml_backend_buffer_t src_buffer = src->view_src ? src->view_src->buffer : src->buffer;
    if (src_buffer == NULL || src_buffer->buft->iface.alloc_buffer != tb_buft_alloc_buffer ||
        !tb_of(src_buffer)->type->full)
        return false;
    size_t n = ggml_nbytes(src);
    unsigned char *from = tb_locate(src_buffer, src, 0, n);
    unsigned char *to = tb_locate(buffer, dst, 0, n);
    if (from && to)
        memcpy(to, from, n);
    return true;
}

static void tb_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    calls.clear++;
    calls.clear_value = value;
    if (tb_of(buffer)->freed)
        violations++;
    else
        memset(tb_of(buffer)->storage, value, tb_of(buffer)->size);
}

static void tb_reset(ggml_backend_buffer_t buffer)
{
    (void) buffer;
    calls.reset++;
}

/* TestMin: only the required members. */
static const struct ggml_backend_buffer_i min_buffer_iface = {
    .free_buffer = NULL,
    .get_base = tb_get_base,
    .init_tensor = NULL,
    .memset_tensor = NULL,
    .set_tensor = tb_set_tensor,
    .get_tensor = tb_get_tensor,
    .cpy_tensor = NULL,
    .clear = tb_clear,
    .reset = NULL,
};

/* TestFull / TestHostFull: every member. */
static const struct ggml_backend_buffer_i full_buffer_iface = {
    .free_buffer = tb_free_buffer,
    .get_base = tb_get_base,
    .init_tensor = tb_init_tensor,
    .memset_tensor = tb_memset_tensor,
    .set_tensor = tb_set_tensor,
    .get_tensor = tb_get_tensor,
    .set_tensor_2d = tb_set_tensor_2d,
    .get_tensor_2d = tb_get_tensor_2d,
    .cpy_tensor = tb_cpy_tensor,
    .clear = tb_clear,
    .reset = tb_reset,
};

static const char *tb_buft_get_name(ggml_backend_buffer_type_t buft)
{
    return ((struct tb_buft *) buft->context)->name;
}

static ggml_backend_buffer_t tb_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    struct tb_buft *type = buft->context;
    calls.alloc_buffer++;
    if (type->fail_alloc_logged) {
        const struct ggml_backend_buffer_i none = { 0 };
        return ggml_backend_buffer_init(NULL, none, NULL, size);
    }
    if (type->fail_alloc)
        return NULL;
    struct tb_buffer *tb = calloc(1, sizeof *tb);
    if (tb == NULL)
        return NULL;
    tb->type = type;
    tb->size = size;
    tb->storage = calloc(1, size ? size : 1);
    tb->base = type->host ? tb->storage : malloc(size ? size : 1);
    if (tb->storage == NULL || tb->base == NULL) {
        if (tb->base != tb->storage)
            free(tb->base);
        free(tb->storage);
        free(tb);
        return NULL;
    }
    if (!type->host)
        memset(tb->base, POISON, size);
    tb->next = all_buffers;
    all_buffers = tb;
    return ggml_backend_buffer_init(buft, type->full ? full_buffer_iface : min_buffer_iface, tb, size);
}

static size_t tb_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    calls.get_alignment++;
    return ((struct tb_buft *) buft->context)->alignment;
}

static size_t tb_buft_get_max_size(ggml_backend_buffer_type_t buft)
{
    calls.get_max_size++;
    return ((struct tb_buft *) buft->context)->max_size;
}

static size_t tb_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor *tensor)
{
    calls.get_alloc_size++;
    return ggml_nbytes(tensor) + ((struct tb_buft *) buft->context)->alloc_pad;
}

static bool tb_buft_is_host(ggml_backend_buffer_type_t buft)
{
    calls.is_host++;
    return ((struct tb_buft *) buft->context)->host;
}

static struct ggml_backend_buffer_type min_buft = {
    .iface = {
        .get_name = tb_buft_get_name,
        .alloc_buffer = tb_buft_alloc_buffer,
        .get_alignment = NULL,
        .get_max_size = NULL,
        .get_alloc_size = NULL,
        .is_host = NULL,
    },
    .device = &test_device,
    .context = &min_ctx,
};

#define FULL_BUFT_IFACE                                  \
    {                                                    \
        .get_name = tb_buft_get_name,                    \
        .alloc_buffer = tb_buft_alloc_buffer,            \
        .get_alignment = tb_buft_get_alignment,          \
        .get_max_size = tb_buft_get_max_size,            \
        .get_alloc_size = tb_buft_get_alloc_size,        \
        .is_host = tb_buft_is_host,                      \
    }

static struct ggml_backend_buffer_type full_buft = {
    .iface = FULL_BUFT_IFACE, .device = NULL, .context = &full_ctx,
};
static struct ggml_backend_buffer_type hostfull_buft = {
    .iface = FULL_BUFT_IFACE, .device = NULL, .context = &hostfull_ctx,
};

static void free_all_test_buffers(void)
{
    while (all_buffers) {
        struct tb_buffer *next = all_buffers->next;
        if (all_buffers->base != all_buffers->storage)
            free(all_buffers->base);
        free(all_buffers->storage);
        free(all_buffers);
        all_buffers = next;
    }
}

/* True when no byte of the base block of a non-host buffer was touched. */
static bool poison_intact(ggml_backend_buffer_t buffer)
{
    struct tb_buffer *tb = tb_of(buffer);
    for (size_t i = 0; i < tb->size; i++)
        if (tb->base[i] != POISON)
            return false;
    return true;
}

/* ---------------------------------------------------------------- helpers */

static struct ggml_context *ctx;

static struct ggml_tensor *new_f32(int64_t n, const char *name)
{
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    if (t)
        ggml_set_name(t, name);
    return t;
}

/* Places t at byte offset of buffer's base; true on success. */
static bool place(ggml_backend_buffer_t buffer, struct ggml_tensor *t, size_t offset)
{
    char *base = ggml_backend_buffer_get_base(buffer);
    return base && ggml_backend_tensor_alloc(buffer, t, base + offset) == GGML_STATUS_SUCCESS;
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char) (seed * 37u + i * 11u + 1u);
}

static bool all_bytes(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return false;
    return true;
}

/* ----------------------------------------------------------- buffer types */

static void test_buft_defaults(void)
{
    ggml_backend_buffer_type_t buft = &min_buft;
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    struct ggml_tensor *h = ggml_new_tensor_1d(ctx, GGML_TYPE_I16, 7);
    tap_log_errors();

    is_str(ggml_backend_buft_name(buft), "TestMin", "buft_name calls get_name");
    is_uint(ggml_backend_buft_get_alignment(buft), GGML_MEM_ALIGN,
            "get_alignment absent: alignment defaults to GGML_MEM_ALIGN");
    is_uint(ggml_backend_buft_get_max_size(buft), SIZE_MAX, "get_max_size absent: SIZE_MAX");
    is_uint(ggml_backend_buft_get_alloc_size(buft, t), 5 * 3 * 4, "get_alloc_size absent: ggml_nbytes (f32 5x3)");
    is_uint(ggml_backend_buft_get_alloc_size(buft, h), 7 * 2, "get_alloc_size absent: ggml_nbytes (i16 7)");
    ok(!ggml_backend_buft_is_host(buft), "is_host absent: false");
    is_ptr(ggml_backend_buft_get_device(buft), &test_device, "buft_get_device returns buft->device");
    is_ptr(ggml_backend_buft_get_device(&full_buft), NULL, "buft_get_device: NULL device");
    is_int(tap_log_errors(), 0, "the defaults log nothing");
}

static void test_buft_members_called(void)
{
    ggml_backend_buffer_type_t buft = &full_buft;
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    reset_calls();
    tap_log_errors();

    is_str(ggml_backend_buft_name(buft), "TestFull", "full: buft_name");
    is_uint(ggml_backend_buft_get_alignment(buft), 128, "full: get_alignment answer");
    is_int(calls.get_alignment, 1, "full: get_alignment called once");
    is_uint(ggml_backend_buft_get_max_size(buft), 4096, "full: get_max_size answer");
    is_int(calls.get_max_size, 1, "full: get_max_size called once");
    is_uint(ggml_backend_buft_get_alloc_size(buft, t), 60 + 32, "full: get_alloc_size answer");
    is_int(calls.get_alloc_size, 1, "full: get_alloc_size called once");
    ok(!ggml_backend_buft_is_host(buft), "full: is_host answer false");
    is_int(calls.is_host, 1, "full: is_host called once");
    ok(ggml_backend_buft_is_host(&hostfull_buft), "host full: is_host answer true");
    is_int(calls.is_host, 2, "host full: is_host called");
    is_int(tap_log_errors(), 0, "no messages");

    /* NULL buffer type */
    is_ptr(ggml_backend_buft_name(NULL), NULL, "buft_name(NULL) is NULL");
    logged_one_error("buft_name(NULL) logs one error");
    is_ptr(ggml_backend_buft_alloc_buffer(NULL, 16), NULL, "buft_alloc_buffer(NULL) is NULL");
    logged_one_error("buft_alloc_buffer(NULL) logs one error");
    ggml_backend_buft_get_alignment(NULL);
    logged_one_error("buft_get_alignment(NULL) logs one error");
    ok(!ggml_backend_buft_is_host(NULL), "buft_is_host(NULL) is false");
    logged_one_error("buft_is_host(NULL) logs one error");
}

/* --------------------------------------------------------------- buffers */

static void test_buffer_defaults(void)
{
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    reset_calls();
    tap_log_errors();

    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(&min_buft, 100);
    ok(buf != NULL, "min: alloc 100 bytes");
    if (!buf)
        return;
    is_int(calls.alloc_buffer, 1, "min: alloc_buffer called once");
    is_uint(ggml_backend_buffer_get_size(buf), 100, "min: buffer size");
    is_ptr(ggml_backend_buffer_get_type(buf), &min_buft, "min: buffer type");
    is_str(ggml_backend_buffer_name(buf), "TestMin", "min: buffer name is its type's");
    is_int(ggml_backend_buffer_get_usage(buf), GGML_BACKEND_BUFFER_USAGE_ANY, "min: usage starts as ANY");
    is_ptr(ggml_backend_buffer_get_base(buf), tb_of(buf)->base, "min: get_base answer");
    is_uint(ggml_backend_buffer_get_alignment(buf), GGML_MEM_ALIGN, "min: buffer alignment default");
    is_uint(ggml_backend_buffer_get_max_size(buf), SIZE_MAX, "min: buffer max size default");
    is_uint(ggml_backend_buffer_get_alloc_size(buf, t), 60, "min: buffer alloc size default");
    ok(!ggml_backend_buffer_is_host(buf), "min: buffer is_host default false");
    ok(!ggml_backend_buffer_is_multi_buffer(buf), "min: not a multi-buffer");
    is_int(ggml_backend_buffer_init_tensor(buf, t), GGML_STATUS_SUCCESS, "min: init_tensor absent: SUCCESS");
    ggml_backend_buffer_reset(buf);
    ok(true, "min: reset absent is harmless");
    ggml_backend_buffer_clear(buf, 0x3C);
    is_int(calls.clear, 1, "min: clear calls the member");
    is_int(calls.clear_value, 0x3C, "min: clear passes the value");
    ok(all_bytes(tb_of(buf)->storage, 100, 0x3C), "min: clear set every byte");
    is_int(tap_log_errors(), 0, "min: no messages so far");

    ggml_backend_buffer_free(buf);
    is_int(tap_log_errors(), 0, "min: free without free_buffer logs nothing");
    is_uint(ggml_backend_buffer_get_size(buf), 0, "min: freed buffer has size 0");
    logged_one_error("min: using the freed buffer logs one error");
}

static void test_buffer_members_called(void)
{
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    reset_calls();
    tap_log_errors();

    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(&full_buft, 256);
    ok(buf != NULL, "full: alloc 256 bytes");
    if (!buf)
        return;
    is_int(calls.alloc_buffer, 1, "full: alloc_buffer called once");
    is_ptr(ggml_backend_buffer_get_base(buf), tb_of(buf)->base, "full: get_base answer");
    ok(calls.get_base >= 1, "full: get_base called");
    reset_calls();
    is_uint(ggml_backend_buffer_get_alignment(buf), 128, "full: buffer alignment from the type");
    is_int(calls.get_alignment, 1, "full: buffer_get_alignment calls the type");
    is_uint(ggml_backend_buffer_get_max_size(buf), 4096, "full: buffer max size from the type");
    is_int(calls.get_max_size, 1, "full: buffer_get_max_size calls the type");
    is_uint(ggml_backend_buffer_get_alloc_size(buf, t), 92, "full: buffer alloc size from the type");
    is_int(calls.get_alloc_size, 1, "full: buffer_get_alloc_size calls the type");
    ok(!ggml_backend_buffer_is_host(buf), "full: buffer is_host from the type");
    is_int(calls.is_host, 1, "full: buffer_is_host calls the type");

    is_int(ggml_backend_buffer_init_tensor(buf, t), GGML_STATUS_SUCCESS, "full: init_tensor answer");
    is_int(calls.init_tensor, 1, "full: init_tensor called");
    full_ctx.init_status = GGML_STATUS_ABORTED;
    is_int(ggml_backend_buffer_init_tensor(buf, t), GGML_STATUS_ABORTED, "full: init_tensor status is passed back");
    full_ctx.init_status = GGML_STATUS_SUCCESS;
    tap_log_errors();

    ggml_backend_buffer_reset(buf);
    is_int(calls.reset, 1, "full: reset calls the member");
    ggml_backend_buffer_clear(buf, 7);
    is_int(calls.clear, 1, "full: clear calls the member");
    is_int(calls.clear_value, 7, "full: clear passes the value");

    struct tb_buffer *tb = tb_of(buf);
    ggml_backend_buffer_free(buf);
    is_int(calls.free_buffer, 1, "full: free calls free_buffer once");
    ok(tb->freed, "full: free_buffer got the buffer");
    is_int(tap_log_errors(), 0, "full: no messages");
}

static void test_zero_size_and_failure(void)
{
    reset_calls();
    tap_log_errors();
    ggml_backend_buffer_t b0 = ggml_backend_buft_alloc_buffer(&full_buft, 0);
    ok(b0 != NULL, "size 0: a valid buffer");
    if (b0) {
        is_int(calls.alloc_buffer, 0, "size 0: the type's alloc_buffer is not called");
        is_uint(ggml_backend_buffer_get_size(b0), 0, "size 0: size is 0");
        is_ptr(ggml_backend_buffer_get_base(b0), NULL, "size 0: base is NULL");
        is_ptr(ggml_backend_buffer_get_type(b0), &full_buft, "size 0: type is kept");
        is_str(ggml_backend_buffer_name(b0), "TestFull", "size 0: name of the type");
        ggml_backend_buffer_clear(b0, 1);
        is_int(calls.clear, 0, "size 0: clear has nothing to do");
        ggml_backend_buffer_free(b0);
        is_int(calls.free_buffer, 0, "size 0: no free_buffer of the type");
        is_int(tap_log_errors(), 0, "size 0: no messages");
    }

    full_ctx.fail_alloc = true;
    reset_calls();
    is_ptr(ggml_backend_buft_alloc_buffer(&full_buft, 64), NULL, "failing alloc_buffer: NULL");
    logged_one_error("failing alloc_buffer: one error");
    is_int(calls.alloc_buffer, 1, "failing alloc_buffer: member called once");
    full_ctx.fail_alloc = false;
    /* as a type whose ggml_backend_buffer_init fails for want of memory */
    full_ctx.fail_alloc_logged = true;
    is_ptr(ggml_backend_buft_alloc_buffer(&full_buft, 64), NULL, "alloc_buffer failing with a message: NULL");
    logged_one_error("alloc_buffer failing with a message: its message only");
    full_ctx.fail_alloc_logged = false;
    ggml_backend_buffer_t again = ggml_backend_buft_alloc_buffer(&full_buft, 64);
    ok(again != NULL, "after a failure the type still allocates");
    ggml_backend_buffer_free(again);
}

static void test_buffer_init_direct(void)
{
    static int token;
    tap_log_errors();
    const struct ggml_backend_buffer_i empty = { 0 };
    ggml_backend_buffer_t b = ggml_backend_buffer_init(&min_buft, empty, &token, 16);
    ok(b != NULL, "buffer_init: buffer made");
    if (!b)
        return;
    is_ptr(b->context, &token, "buffer_init: context kept");
    is_uint(b->size, 16, "buffer_init: size kept");
    is_ptr(b->buft, &min_buft, "buffer_init: type kept");
    is_int(b->usage, GGML_BACKEND_BUFFER_USAGE_ANY, "buffer_init: usage ANY");
    is_uint(ggml_backend_buffer_get_size(b), 16, "buffer_init: a live handle");
    is_int(tap_log_errors(), 0, "buffer_init: no messages");
    is_ptr(ggml_backend_buffer_get_base(b), NULL, "no get_base in a non-empty buffer: NULL");
    logged_one_error("no get_base in a non-empty buffer: one error");
    ggml_backend_buffer_clear(b, 0);
    logged_one_error("no clear member in a non-empty buffer: one error");
    ggml_backend_buffer_free(b);
    is_int(tap_log_errors(), 0, "buffer_init: free with no free_buffer logs nothing");
}

static void test_usage(void)
{
    tap_log_errors();
    ggml_backend_buffer_t b = ggml_backend_buft_alloc_buffer(&min_buft, 32);
    if (!ok(b != NULL, "usage: buffer"))
        return;
    ggml_backend_buffer_set_usage(b, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    is_int(ggml_backend_buffer_get_usage(b), GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "usage: WEIGHTS");
    ggml_backend_buffer_set_usage(b, GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    is_int(ggml_backend_buffer_get_usage(b), GGML_BACKEND_BUFFER_USAGE_COMPUTE, "usage: COMPUTE");
    ggml_backend_buffer_set_usage(b, GGML_BACKEND_BUFFER_USAGE_ANY);
    is_int(ggml_backend_buffer_get_usage(b), GGML_BACKEND_BUFFER_USAGE_ANY, "usage: back to ANY");
    is_int(tap_log_errors(), 0, "usage: no messages");
    ggml_backend_buffer_free(b);
}

/* free_buffer of a buffer the library never made: only counts. */
static void fake_free_buffer(ggml_backend_buffer_t buffer)
{
    (void) buffer;
    calls.free_buffer++;
}

static void test_handles(void)
{
    tap_log_errors();
    reset_calls();
    ggml_backend_buffer_free(NULL);
    is_int(tap_log_errors(), 0, "buffer_free(NULL) is harmless and silent");

    is_uint(ggml_backend_buffer_get_size(NULL), 0, "get_size(NULL) is 0");
    logged_one_error("get_size(NULL) logs one error");
    is_ptr(ggml_backend_buffer_name(NULL), NULL, "buffer_name(NULL) is NULL");
    logged_one_error("buffer_name(NULL) logs one error");

    ggml_backend_buffer_t b = ggml_backend_buft_alloc_buffer(&full_buft, 64);
    if (!ok(b != NULL, "handles: buffer"))
        return;
    ggml_backend_buffer_free(b);
    is_int(calls.free_buffer, 1, "first free calls free_buffer");
    is_int(tap_log_errors(), 0, "first free is silent");
    ggml_backend_buffer_free(b);
    logged_one_error("double free is detected with one error");
    is_int(calls.free_buffer, 1, "double free does not call free_buffer again");

    is_uint(ggml_backend_buffer_get_size(b), 0, "get_size of a freed buffer is 0");
    logged_one_error("get_size of a freed buffer logs one error");
    is_ptr(ggml_backend_buffer_name(b), NULL, "name of a freed buffer is NULL");
    logged_one_error("name of a freed buffer logs one error");
    is_ptr(ggml_backend_buffer_get_base(b), NULL, "base of a freed buffer is NULL");
    logged_one_error("get_base of a freed buffer logs one error");
    ok(!ggml_backend_buffer_is_host(b), "is_host of a freed buffer is false");
    logged_one_error("is_host of a freed buffer logs one error");
    ggml_backend_buffer_set_usage(b, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    logged_one_error("set_usage of a freed buffer logs one error");
    ggml_backend_buffer_clear(b, 0);
    logged_one_error("clear of a freed buffer logs one error");
    is_int(calls.clear, 0, "clear of a freed buffer calls nothing");
    ggml_backend_buffer_reset(b);
    logged_one_error("reset of a freed buffer logs one error");
    is_int(calls.reset, 0, "reset of a freed buffer calls nothing");

    /* a buffer object the library never made */
    struct ggml_backend_buffer fake = { .buft = &min_buft, .size = 77 };
    fake.iface.free_buffer = fake_free_buffer;
    is_uint(ggml_backend_buffer_get_size(&fake), 0, "a foreign buffer is refused");
    logged_one_error("a foreign buffer logs one error");
    ggml_backend_buffer_free(&fake);
    logged_one_error("freeing a foreign buffer logs one error");
    is_int(calls.free_buffer, 1, "freeing a foreign buffer calls nothing");
}

/* ------------------------------------------------------------ CPU buffers */

static void test_cpu_buffer_type(void)
{
    tap_log_errors();
    ggml_backend_buffer_type_t cpu = ggml_backend_cpu_buffer_type();
    if (!ok(cpu != NULL, "cpu buffer type exists"))
        return;
    is_ptr(ggml_backend_cpu_buffer_type(), cpu, "cpu buffer type is one object");
    is_str(ggml_backend_buft_name(cpu), "CPU", "cpu buffer type name");
    ok(ggml_backend_buft_is_host(cpu), "cpu buffer type is host");
    is_uint(ggml_backend_buft_get_max_size(cpu), SIZE_MAX, "cpu buffer type max size SIZE_MAX");
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    is_uint(ggml_backend_buft_get_alloc_size(cpu, t), 60, "cpu alloc size is ggml_nbytes");
    size_t align = ggml_backend_buft_get_alignment(cpu);
    ok(align >= 16 && (align & (align - 1)) == 0 && 64 % align == 0,
       "cpu alignment (%zu) is a power of two dividing 64", align);

    static const size_t sizes[] = { 1, 3, 17, 100, 1000, 4097 };
    bool aligned = true;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ggml_backend_buffer_t b = ggml_backend_buft_alloc_buffer(cpu, sizes[i]);
        if (!b) {
            aligned = false;
            continue;
        }
        aligned = aligned && (uintptr_t) ggml_backend_buffer_get_base(b) % 64 == 0 &&
                  ggml_backend_buffer_get_size(b) == sizes[i];
        ggml_backend_buffer_free(b);
    }
    ok(aligned, "cpu buffers of 1..4097 bytes have 64-byte aligned bases and their size");

    ggml_backend_buffer_t b = ggml_backend_buft_alloc_buffer(cpu, 1000);
    if (ok(b != NULL, "cpu buffer of 1000 bytes")) {
        unsigned char *base = ggml_backend_buffer_get_base(b);
        ok(ggml_backend_buffer_is_host(b), "cpu buffer is host");
        is_str(ggml_backend_buffer_name(b), "CPU", "cpu buffer name");
        is_ptr(ggml_backend_buffer_get_type(b), cpu, "cpu buffer type");
        ggml_backend_buffer_clear(b, 0xA5);
        ok(all_bytes(base, 1000, 0xA5), "cpu clear(0xA5) sets every byte");
        ggml_backend_buffer_clear(b, 0);
        ok(all_bytes(base, 1000, 0), "cpu clear(0) sets every byte");
        ggml_backend_buffer_free(b);
    }

    ggml_backend_buffer_t b0 = ggml_backend_buft_alloc_buffer(cpu, 0);
    ok(b0 != NULL, "cpu alloc of 0 bytes works");
    if (b0) {
        is_uint(ggml_backend_buffer_get_size(b0), 0, "cpu empty buffer: size 0");
        is_ptr(ggml_backend_buffer_get_base(b0), NULL, "cpu empty buffer: base NULL");
        ggml_backend_buffer_free(b0);
    }
    is_int(tap_log_errors(), 0, "cpu buffer type: no messages so far");

    is_ptr(ggml_backend_buft_alloc_buffer(cpu, SIZE_MAX / 2), NULL, "cpu alloc of SIZE_MAX/2 bytes fails");
    logged_one_error("cpu alloc of SIZE_MAX/2 bytes logs one error");
    is_ptr(ggml_backend_buft_alloc_buffer(cpu, SIZE_MAX), NULL, "cpu alloc of SIZE_MAX bytes fails");
    logged_one_error("cpu alloc of SIZE_MAX bytes logs one error");
    b = ggml_backend_buft_alloc_buffer(cpu, 64);
    ok(b != NULL, "cpu buffer type still works after a failure");
    ggml_backend_buffer_free(b);
}

/*
 * The VmFlags line of the mapping of /proc/self/smaps that holds addr,
 * copied to flags (size bytes); false when the file cannot be read.
 */
static bool mapping_flags(const void *addr, char *flags, size_t size)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return false;
    char line[512];
    bool inside = false, found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            inside = (uintptr_t) addr >= lo && (uintptr_t) addr < hi;
        else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, size, "%s", line + 8);
            found = true;
        }
    }
    fclose(f);
    return found;
}

/* Buffers of 2 MiB or more start on a 2 MiB boundary and are advised for huge pages. */
static void test_cpu_buffer_huge_pages(void)
{
    ggml_backend_buffer_type_t cpu = ggml_backend_cpu_buffer_type();
    static const size_t sizes[] = { (size_t) 2 << 20, ((size_t) 5 << 20) + 3 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ggml_backend_buffer_t b = ggml_backend_buft_alloc_buffer(cpu, sizes[i]);
        if (!ok(b != NULL, "cpu buffer of %zu bytes", sizes[i]))
            continue;
        unsigned char *base = ggml_backend_buffer_get_base(b);
        ok((uintptr_t) base % ((size_t) 2 << 20) == 0, "cpu buffer of %zu bytes starts on a 2 MiB boundary", sizes[i]);
        ggml_backend_buffer_clear(b, 0x5A);
        ok(base[0] == 0x5A && base[sizes[i] - 1] == 0x5A, "cpu buffer of %zu bytes: clear reaches both ends", sizes[i]);
        char flags[512];
        FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
        if (thp == NULL || !mapping_flags(base, flags, sizeof flags))
            tap_skip(1, "no transparent huge pages here, or no /proc/self/smaps");
        else
            ok(strstr(flags, " hg") != NULL, "cpu buffer of %zu bytes is advised for huge pages (VmFlags:%s)", sizes[i],
               strtok(flags, "\n"));
        if (thp)
            fclose(thp);
        ggml_backend_buffer_free(b);
    }
}

static void test_cpu_buffer_from_ptr(void)
{
    static _Alignas(64) unsigned char mapped[256];
    tap_log_errors();
    memset(mapped, 0, sizeof mapped);
    ggml_backend_buffer_t b = ggml_backend_cpu_buffer_from_ptr(mapped, sizeof mapped);
    if (!ok(b != NULL, "from_ptr: buffer made"))
        return;
    is_ptr(ggml_backend_buffer_get_base(b), mapped, "from_ptr: base is the pointer");
    is_uint(ggml_backend_buffer_get_size(b), 256, "from_ptr: size");
    ok(ggml_backend_buffer_is_host(b), "from_ptr: host memory");
    is_str(ggml_backend_buffer_name(b), "CPU_Mapped", "from_ptr: buffer type name");

    struct ggml_tensor *t = new_f32(8, "mapped");
    ok(place(b, t, 32), "from_ptr: tensor placed at offset 32");
    unsigned char src[32];
    fill_pattern(src, sizeof src, 3);
    ggml_backend_tensor_set(t, src, 0, sizeof src);
    ok(memcmp(mapped + 32, src, sizeof src) == 0, "from_ptr: tensor_set writes the caller's memory");
    ok(all_bytes(mapped, 32, 0) && all_bytes(mapped + 64, 192, 0), "from_ptr: nothing else written");
    ggml_backend_buffer_clear(b, 0x11);
    ok(all_bytes(mapped, 256, 0x11), "from_ptr: clear writes the caller's memory");
    is_int(tap_log_errors(), 0, "from_ptr: no messages");
    ggml_backend_buffer_free(b);
    mapped[0] = 0x22; /* the memory stays the caller's: still writable */
    ok(mapped[0] == 0x22 && mapped[255] == 0x11, "from_ptr: freeing the buffer leaves the memory alone");

    is_ptr(ggml_backend_cpu_buffer_from_ptr(NULL, 16), NULL, "from_ptr(NULL) fails");
    logged_one_error("from_ptr(NULL) logs one error");
    is_ptr(ggml_backend_cpu_buffer_from_ptr(mapped + 1, 16), NULL, "from_ptr of a misaligned pointer fails");
    logged_one_error("from_ptr of a misaligned pointer logs one error");
}

/* ---------------------------------------------------------- multi-buffers */

static void test_multi_buffer(void)
{
    tap_log_errors();
    reset_calls();
    ggml_backend_buffer_t parts[2] = {
        ggml_backend_buft_alloc_buffer(&full_buft, 100),
        ggml_backend_buft_alloc_buffer(&full_buft, 200),
    };
    if (!ok(parts[0] && parts[1], "multi: two parts"))
        return;
    ggml_backend_buffer_t keep[2] = { parts[0], parts[1] };
    ggml_backend_buffer_t multi = ggml_backend_multi_buffer_alloc_buffer(parts, 2);
    if (!ok(multi != NULL, "multi: made"))
        return;
    parts[0] = parts[1] = NULL; /* the multi-buffer must hold its own list */

    ok(ggml_backend_buffer_is_multi_buffer(multi), "multi: is_multi_buffer true");
    ok(!ggml_backend_buffer_is_multi_buffer(keep[0]), "multi: a part is not a multi-buffer");
    is_uint(ggml_backend_buffer_get_size(multi), 300, "multi: size is the sum of the parts");
    is_ptr(ggml_backend_buffer_get_type(multi), &full_buft, "multi: type of the first part");
    is_int(tap_log_errors(), 0, "multi: no messages");

    ggml_backend_buffer_set_usage(multi, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    is_int(ggml_backend_buffer_get_usage(multi), GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "multi: set_usage sets its usage");
    is_int(ggml_backend_buffer_get_usage(keep[0]), GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "multi: set_usage reaches part 0");
    is_int(ggml_backend_buffer_get_usage(keep[1]), GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "multi: set_usage reaches part 1");
    ggml_backend_multi_buffer_set_usage(multi, GGML_BACKEND_BUFFER_USAGE_COMPUTE);
    is_int(ggml_backend_buffer_get_usage(keep[0]), GGML_BACKEND_BUFFER_USAGE_COMPUTE, "multi_buffer_set_usage reaches part 0");
    is_int(ggml_backend_buffer_get_usage(keep[1]), GGML_BACKEND_BUFFER_USAGE_COMPUTE, "multi_buffer_set_usage reaches part 1");

    ggml_backend_buffer_clear(multi, 0x42);
    is_int(calls.clear, 2, "multi: clear clears every part");
    ok(all_bytes(tb_of(keep[0])->storage, 100, 0x42) && all_bytes(tb_of(keep[1])->storage, 200, 0x42),
       "multi: every byte of every part cleared");
    is_int(tap_log_errors(), 0, "multi: no messages");

    ggml_backend_multi_buffer_set_usage(keep[0], GGML_BACKEND_BUFFER_USAGE_ANY);
    logged_one_error("multi_buffer_set_usage on a plain buffer logs one error");
    is_int(ggml_backend_buffer_get_usage(keep[0]), GGML_BACKEND_BUFFER_USAGE_COMPUTE, "... and changes nothing");

    reset_calls();
    ggml_backend_buffer_free(multi);
    is_int(calls.free_buffer, 2, "multi: freeing it frees both parts");
    is_int(tap_log_errors(), 0, "multi: free is silent");
    is_uint(ggml_backend_buffer_get_size(keep[0]), 0, "multi: part 0 is no longer live");
    logged_one_error("multi: using a freed part logs one error");

    is_ptr(ggml_backend_multi_buffer_alloc_buffer(NULL, 0), NULL, "multi of no buffers fails");
    logged_one_error("multi of no buffers logs one error");
    ggml_backend_buffer_t one = ggml_backend_buft_alloc_buffer(&min_buft, 8);
    is_ptr(ggml_backend_multi_buffer_alloc_buffer(&one, 0), NULL, "multi with n_buffers 0 fails");
    logged_one_error("multi with n_buffers 0 logs one error");
    ggml_backend_buffer_free(one);
}

/* ----------------------------------------------- tensor_alloc and views */

static void test_tensor_alloc(void)
{
    tap_log_errors();
    ggml_backend_buffer_t b = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 256);
    if (!ok(b != NULL, "tensor_alloc: cpu buffer"))
        return;
    char *base = ggml_backend_buffer_get_base(b);

    struct ggml_tensor *t = new_f32(8, "t"); /* 32 bytes */
    is_int(ggml_backend_tensor_alloc(b, t, base + 64), GGML_STATUS_SUCCESS, "tensor_alloc inside the buffer");
    is_ptr(t->buffer, b, "tensor_alloc sets the buffer");
    is_ptr(t->data, base + 64, "tensor_alloc sets the address");
    is_int(tap_log_errors(), 0, "tensor_alloc: no messages");

    is_int(ggml_backend_tensor_alloc(b, t, base + 128), GGML_STATUS_FAILED, "tensor_alloc of an allocated tensor fails");
    logged_one_error("tensor_alloc of an allocated tensor logs one error");
    is_ptr(t->data, base + 64, "... and leaves it where it was");

    struct ggml_tensor *u = new_f32(8, "u");
    is_int(ggml_backend_tensor_alloc(b, u, base + 240), GGML_STATUS_FAILED, "tensor_alloc past the end fails");
    logged_one_error("tensor_alloc past the end logs one error");
    ok(u->buffer == NULL && u->data == NULL, "... and leaves the tensor unallocated");
    is_int(ggml_backend_tensor_alloc(b, u, base - 64), GGML_STATUS_FAILED, "tensor_alloc before the base fails");
    logged_one_error("tensor_alloc before the base logs one error");
    is_int(ggml_backend_tensor_alloc(b, u, base + 256 + 64), GGML_STATUS_FAILED, "tensor_alloc after the end fails");
    logged_one_error("tensor_alloc after the end logs one error");
    is_int(ggml_backend_tensor_alloc(b, u, base + 224), GGML_STATUS_SUCCESS, "tensor_alloc ending exactly at the end");
    is_int(ggml_backend_tensor_alloc(NULL, new_f32(2, "n"), base), GGML_STATUS_FAILED, "tensor_alloc(NULL buffer) fails");
    logged_one_error("tensor_alloc(NULL buffer) logs one error");
    is_int(ggml_backend_tensor_alloc(b, NULL, base), GGML_STATUS_FAILED, "tensor_alloc(NULL tensor) fails");
    logged_one_error("tensor_alloc(NULL tensor) logs one error");

    /* a view must go through ggml_backend_view_init */
    struct ggml_tensor *src = new_f32(8, "src");
    struct ggml_tensor *view = ggml_view_1d(ctx, src, 2, 8);
    is_int(ggml_backend_tensor_alloc(b, view, base), GGML_STATUS_FAILED, "tensor_alloc of a view fails");
    logged_one_error("tensor_alloc of a view logs one error");

    /* the type's alloc size, not ggml_nbytes, must fit */
    reset_calls();
    ggml_backend_buffer_t f = ggml_backend_buft_alloc_buffer(&full_buft, 256);
    if (ok(f != NULL, "tensor_alloc: full buffer")) {
        char *fbase = ggml_backend_buffer_get_base(f);
        struct ggml_tensor *p = new_f32(8, "p"); /* 32 bytes, alloc size 64 */
        is_int(ggml_backend_tensor_alloc(f, p, fbase + 224), GGML_STATUS_FAILED,
               "tensor_alloc checks the alloc size (nbytes + padding) against the end");
        logged_one_error("... with one error");
        is_int(ggml_backend_tensor_alloc(f, p, fbase + 192), GGML_STATUS_SUCCESS, "padding fits at 192");
        is_int(calls.init_tensor, 1, "tensor_alloc calls init_tensor once");
        struct ggml_tensor *q = new_f32(4, "q");
        full_ctx.init_status = GGML_STATUS_ALLOC_FAILED;
        is_int(ggml_backend_tensor_alloc(f, q, fbase), GGML_STATUS_ALLOC_FAILED,
               "tensor_alloc returns init_tensor's status");
        full_ctx.init_status = GGML_STATUS_SUCCESS;
        tap_log_errors();
        ggml_backend_buffer_free(f);
    }

    /* an empty buffer has no room */
    ggml_backend_buffer_t e = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 0);
    struct ggml_tensor *w = new_f32(1, "w");
    is_int(ggml_backend_tensor_alloc(e, w, base), GGML_STATUS_FAILED, "tensor_alloc in an empty buffer fails");
    logged_one_error("tensor_alloc in an empty buffer logs one error");
    ggml_backend_buffer_free(e);
    ggml_backend_buffer_free(b);
}

static void test_view_init(void)
{
    tap_log_errors();
    reset_calls();
    ggml_backend_buffer_t f = ggml_backend_buft_alloc_buffer(&full_buft, 256);
    if (!ok(f != NULL, "view_init: full buffer"))
        return;
    struct ggml_tensor *t = new_f32(8, "t");
    struct ggml_tensor *v = ggml_view_1d(ctx, t, 4, 8); /* made before t has memory */
    struct ggml_tensor *lone = new_f32(4, "lone");
    struct ggml_tensor *orphan_src = new_f32(4, "orphan_src");
    struct ggml_tensor *orphan = ggml_view_1d(ctx, orphan_src, 2, 4);
    ok(v && v->data == NULL && v->buffer == NULL, "view of an unallocated tensor has no data yet");

    ok(place(f, t, 64), "view_init: source placed");
    int init_before = calls.init_tensor;
    is_int(ggml_backend_view_init(v), GGML_STATUS_SUCCESS, "view_init succeeds");
    is_ptr(v->buffer, f, "view_init: buffer of the source");
    is_ptr(v->data, (char *) t->data + 8, "view_init: data = source data + view_offs");
    is_int(calls.init_tensor, init_before + 1, "view_init calls init_tensor");
    is_int(tap_log_errors(), 0, "view_init: no messages");

    full_ctx.init_status = GGML_STATUS_FAILED;
    struct ggml_tensor *v2 = ggml_view_1d(ctx, t, 2, 0);
    v2->buffer = NULL;
    v2->data = NULL;
    is_int(ggml_backend_view_init(v2), GGML_STATUS_FAILED, "view_init returns init_tensor's status");
    full_ctx.init_status = GGML_STATUS_SUCCESS;
    tap_log_errors();

    is_int(ggml_backend_view_init(lone), GGML_STATUS_FAILED, "view_init of a non-view fails");
    logged_one_error("view_init of a non-view logs one error");
    is_int(ggml_backend_view_init(orphan), GGML_STATUS_FAILED, "view_init of a view of an unallocated tensor fails");
    logged_one_error("view_init of a view of an unallocated tensor logs one error");
    ok(orphan->buffer == NULL && orphan->data == NULL, "... and leaves it unallocated");
    is_int(ggml_backend_view_init(NULL), GGML_STATUS_FAILED, "view_init(NULL) fails");
    logged_one_error("view_init(NULL) logs one error");
    is_int(ggml_backend_view_init(v), GGML_STATUS_FAILED, "view_init of an initialized view fails (upstream asserts buffer == NULL)");
    logged_one_error("view_init of an initialized view logs one error");
    ggml_backend_buffer_free(f);
}

/* ------------------------------------------------------------ tensor data */

/* Round trips, partial ranges, bounds and argument checks on one buffer. */
static void check_tensor_io(ggml_backend_buffer_t b, const char *what)
{
    const bool host = ggml_backend_buffer_is_host(b);
    const bool has_memset = b->iface.memset_tensor != NULL;
    unsigned char *bytes = host ? ggml_backend_buffer_get_base(b) : tb_of(b)->storage;
    ggml_backend_buffer_clear(b, 0xEE);
    tap_log_errors();

    struct ggml_tensor *t = new_f32(8, "io"); /* 32 bytes at offset 64 */
    if (!ok(place(b, t, 64), "%s: tensor placed", what))
        return;

    unsigned char src[32], dst[32];
    fill_pattern(src, 32, 1);
    ggml_backend_tensor_set(t, src, 0, 32);
    ok(memcmp(bytes + 64, src, 32) == 0, "%s: tensor_set stores the bytes", what);
    memset(dst, 0, sizeof dst);
    ggml_backend_tensor_get(t, dst, 0, 32);
    ok(memcmp(dst, src, 32) == 0, "%s: tensor_get reads them back", what);
    ok(all_bytes(bytes, 64, 0xEE) && all_bytes(bytes + 96, 160, 0xEE), "%s: guard bytes intact", what);

    unsigned char part[8];
    fill_pattern(part, 8, 9);
    ggml_backend_tensor_set(t, part, 8, 8);
    ok(memcmp(bytes + 72, part, 8) == 0 && memcmp(bytes + 64, src, 8) == 0 && memcmp(bytes + 80, src + 16, 16) == 0,
       "%s: tensor_set at offset 8 writes bytes 8..16 only", what);
    ggml_backend_tensor_get(t, dst, 8, 8);
    ok(memcmp(dst, part, 8) == 0, "%s: tensor_get at offset 8", what);
    ggml_backend_tensor_set(t, src, 24, 8);
    ok(memcmp(bytes + 88, src, 8) == 0, "%s: tensor_set of the last 8 bytes", what);
    is_int(tap_log_errors(), 0, "%s: no messages", what);

    if (has_memset) {
        ggml_backend_tensor_memset(t, 0x5A, 4, 12);
        ok(all_bytes(bytes + 68, 12, 0x5A) && bytes[67] != 0x5A && bytes[80] != 0x5A,
           "%s: tensor_memset sets bytes 4..16 only", what);
        is_int(tap_log_errors(), 0, "%s: memset logs nothing", what);
    } else {
        unsigned char before[32];
        memcpy(before, bytes + 64, 32);
        ggml_backend_tensor_memset(t, 0x5A, 4, 12);
        logged_one_error("%s: memset_tensor absent: tensor_memset logs one error", what);
        ok(memcmp(before, bytes + 64, 32) == 0, "%s: ... and writes nothing", what);
    }

    /* size 0 is a no-op, whatever the other arguments */
    ggml_backend_tensor_set(t, NULL, 0, 0);
    ggml_backend_tensor_set(t, src, 1000, 0);
    ggml_backend_tensor_get(t, NULL, 0, 0);
    ggml_backend_tensor_memset(t, 1, 1000, 0);
    is_int(tap_log_errors(), 0, "%s: size 0 transfers are silent no-ops", what);

    /* out of bounds: an error, nothing written or read */
    unsigned char snapshot[256];
    memcpy(snapshot, bytes, 256);
    ggml_backend_tensor_set(t, src, 24, 16);
    logged_one_error("%s: tensor_set past the end logs one error", what);
    ggml_backend_tensor_set(t, src, 33, 1);
    logged_one_error("%s: tensor_set at an offset past the end logs one error", what);
    ggml_backend_tensor_set(t, src, SIZE_MAX - 3, 8);
    logged_one_error("%s: tensor_set with offset+size overflowing logs one error", what);
    ggml_backend_tensor_memset(t, 0, 16, 17);
    logged_one_error("%s: tensor_memset past the end logs one error", what);
    ok(memcmp(snapshot, bytes, 256) == 0, "%s: out-of-bounds writes wrote nothing", what);
    memset(dst, 0x77, sizeof dst);
    ggml_backend_tensor_get(t, dst, 0, 33);
    logged_one_error("%s: tensor_get past the end logs one error", what);
    ok(all_bytes(dst, 32, 0x77), "%s: out-of-bounds read filled nothing", what);

    /* NULL data with a size */
    ggml_backend_tensor_set(t, NULL, 0, 4);
    logged_one_error("%s: tensor_set with NULL data logs one error", what);
    ggml_backend_tensor_get(t, NULL, 0, 4);
    logged_one_error("%s: tensor_get with NULL data logs one error", what);
    ok(memcmp(snapshot, bytes, 256) == 0, "%s: bad calls wrote nothing", what);

    /* views: data goes to the source's buffer, bounds are the view's */
    struct ggml_tensor *v = ggml_view_1d(ctx, t, 2, 16); /* bytes 16..24 of t */
    ok(v && v->view_src == t, "%s: view made", what);
    unsigned char vv[8];
    fill_pattern(vv, 8, 21);
    ggml_backend_tensor_set(v, vv, 0, 8);
    ok(memcmp(bytes + 80, vv, 8) == 0, "%s: tensor_set on a view writes the source's bytes", what);
    ggml_backend_tensor_get(t, dst, 16, 8);
    ok(memcmp(dst, vv, 8) == 0, "%s: ... seen through the source", what);
    memset(dst, 0, 8);
    ggml_backend_tensor_get(v, dst, 4, 4);
    ok(memcmp(dst, vv + 4, 4) == 0, "%s: tensor_get on a view at offset 4", what);
    is_int(tap_log_errors(), 0, "%s: view transfers log nothing", what);
    memcpy(snapshot, bytes, 256);
    ggml_backend_tensor_set(v, src, 0, 12);
    logged_one_error("%s: a view's bounds are its own (12 bytes into 8) - one error", what);
    ok(memcmp(snapshot, bytes, 256) == 0, "%s: ... nothing written", what);

    if (!host)
        ok(poison_intact(b), "%s: the non-host base was never dereferenced", what);
}

static void test_tensor_data(void)
{
    ggml_backend_buffer_t cpu = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 256);
    ggml_backend_buffer_t min = ggml_backend_buft_alloc_buffer(&min_buft, 256);
    ggml_backend_buffer_t full = ggml_backend_buft_alloc_buffer(&full_buft, 256);
    if (!ok(cpu && min && full, "tensor data: buffers"))
        return;
    check_tensor_io(cpu, "cpu");
    check_tensor_io(min, "min");
    reset_calls();
    check_tensor_io(full, "full");
    ok(calls.set_tensor > 0 && calls.get_tensor > 0 && calls.memset_tensor > 0,
       "full: set/get/memset went through the members");

    /* unallocated tensors, tensors without a buffer, NULL tensors */
    tap_log_errors();
    unsigned char data[16] = { 0 };
    struct ggml_tensor *un = new_f32(4, "unallocated");
    ggml_backend_tensor_set(un, data, 0, 16);
    logged_one_error("tensor_set of an unallocated tensor logs one error");
    ggml_backend_tensor_get(un, data, 0, 16);
    logged_one_error("tensor_get of an unallocated tensor logs one error");
    ggml_backend_tensor_memset(un, 0, 0, 16);
    logged_one_error("tensor_memset of an unallocated tensor logs one error");
    ggml_backend_tensor_set(NULL, data, 0, 16);
    logged_one_error("tensor_set(NULL) logs one error");
    ggml_backend_tensor_get(NULL, data, 0, 16);
    logged_one_error("tensor_get(NULL) logs one error");

    struct ggml_init_params params = { 1024, NULL, false };
    struct ggml_context *with_data = ggml_init(params);
    struct ggml_tensor *plain = ggml_new_tensor_1d(with_data, GGML_TYPE_F32, 4);
    ok(plain && plain->data && !plain->buffer, "a context tensor has data but no buffer");
    ggml_backend_tensor_set(plain, data, 0, 16);
    logged_one_error("tensor_set of a tensor without a buffer logs one error");
    ggml_free(with_data);

    /* a tensor in a buffer that has been freed */
    struct ggml_tensor *gone = new_f32(4, "gone");
    ggml_backend_buffer_t tmp = ggml_backend_buft_alloc_buffer(&full_buft, 64);
    place(tmp, gone, 0);
    ggml_backend_buffer_free(tmp);
    reset_calls();
    tap_log_errors();
    ggml_backend_tensor_set(gone, data, 0, 16);
    logged_one_error("tensor_set into a freed buffer logs one error");
    is_int(calls.set_tensor, 0, "... and calls nothing");

    ggml_backend_buffer_free(cpu);
    ggml_backend_buffer_free(min);
    ggml_backend_buffer_free(full);
}

/*
 * ggml_backend_tensor_set_2d / get_2d on buffer (name for messages): a
 * 4 x 3 F32 matrix gets columns 1..2 of each row from a packed 3 x 2 array
 * and gives them back; the other elements keep the fill.  Returns through
 * the counts what the members saw.
 */
static void check_tensor_io_2d(ggml_backend_buffer_t buffer, const char *name)
{
    struct ggml_tensor *m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    if (!ok(m && place(buffer, m, 0), "%s: 2-D transfer: a 4 x 3 matrix", name))
        return;
    const float fill[12] = { -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12 };
    ggml_backend_tensor_set(m, fill, 0, sizeof fill);
    const float cols[3][2] = { { 1, 2 }, { 3, 4 }, { 5, 6 } };
    ggml_backend_tensor_set_2d(m, cols, sizeof(float), 2 * sizeof(float), 3, m->nb[1], sizeof cols[0]);
    float all[12];
    ggml_backend_tensor_get(m, all, 0, sizeof all);
    bool right = true;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            const float want = c == 1 || c == 2 ? cols[r][c - 1] : fill[4 * r + c];
            right = right && all[4 * r + c] == want;
        }
    ok(right, "%s: set_2d wrote columns 1..2 of each row and nothing else", name);
    /* read column 3 of the three rows into a strided host array (every other float) */
    float back[6] = { 0, 0, 0, 0, 0, 0 };
    ggml_backend_tensor_get_2d(m, back, 3 * sizeof(float), sizeof(float), 3, m->nb[1], 2 * sizeof(float));
    ok(back[0] == -4 && back[2] == -8 && back[4] == -12 && back[1] == 0 && back[3] == 0 && back[5] == 0,
       "%s: get_2d read column 3 into every other float", name);

    /* bounds: the last run one float past the end; nothing written */
    tap_log_errors();
    ggml_backend_tensor_set_2d(m, cols, 2 * sizeof(float) + sizeof(float), 2 * sizeof(float), 3, m->nb[1],
                               sizeof cols[0]);
    logged_one_error("%s: set_2d whose last run leaves the tensor logs one error", name);
    ggml_backend_tensor_get(m, all, 0, sizeof all);
    ok(all[3] == -4 && all[11] == -12, "%s: ... and writes nothing", name);
    ggml_backend_tensor_get_2d(m, back, 0, 4, SIZE_MAX / 2, 16, 4);
    logged_one_error("%s: get_2d with an overflowing extent logs one error", name);
    ggml_backend_tensor_set_2d(m, NULL, 0, 4, 2, 16, 4);
    logged_one_error("%s: set_2d of NULL data logs one error", name);
    ggml_backend_tensor_set_2d(m, NULL, 0, 0, 2, 16, 4);
    ggml_backend_tensor_get_2d(m, NULL, 0, 4, 0, 16, 4);
    is_int(tap_log_errors(), 0, "%s: zero size or zero runs copy nothing and log nothing", name);
}

static void test_tensor_data_2d(void)
{
    ggml_backend_buffer_t cpu = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 256);
    ggml_backend_buffer_t min = ggml_backend_buft_alloc_buffer(&min_buft, 256);
    ggml_backend_buffer_t full = ggml_backend_buft_alloc_buffer(&full_buft, 256);
    if (!ok(cpu && min && full, "2-D transfers: buffers"))
        return;
    check_tensor_io_2d(cpu, "cpu");
    reset_calls();
    check_tensor_io_2d(min, "min");
    ok(calls.set_tensor >= 3 && calls.get_tensor >= 3, "min: the runs went through set_tensor / get_tensor");
    reset_calls();
    check_tensor_io_2d(full, "full");
    is_int(calls.set_tensor_2d, 1, "full: one set_tensor_2d call for three runs");
    is_int(calls.get_tensor_2d, 1, "full: one get_tensor_2d call for three runs");
    is_int(violations, 0, "2-D transfers: no range outside the test buffers");
    ggml_backend_buffer_free(cpu);
    ggml_backend_buffer_free(min);
    ggml_backend_buffer_free(full);
}

/* ----------------------------------------------------------- tensor copy */

/* Allocates a fresh buffer of buft holding one f32 [8] tensor filled with seed. */
static struct ggml_tensor *copy_operand(ggml_backend_buffer_type_t buft, ggml_backend_buffer_t *out,
                                        unsigned seed, const char *name)
{
    *out = ggml_backend_buft_alloc_buffer(buft, 128);
    struct ggml_tensor *t = new_f32(8, name);
    if (*out == NULL || !place(*out, t, 32))
        return NULL;
    unsigned char bytes[32];
    fill_pattern(bytes, 32, seed);
    ggml_backend_tensor_set(t, bytes, 0, 32);
    return t;
}

/* Copies src (buft_a) into dst (buft_b) and checks dst's bytes. */
static void check_copy(ggml_backend_buffer_type_t buft_a, ggml_backend_buffer_type_t buft_b, const char *what)
{
    ggml_backend_buffer_t ba, bb;
    struct ggml_tensor *src = copy_operand(buft_a, &ba, 5, "copy_src");
    struct ggml_tensor *dst = copy_operand(buft_b, &bb, 6, "copy_dst");
    if (!ok(src && dst, "%s: operands", what))
        return;
    tap_log_errors();
    ggml_backend_tensor_copy(src, dst);
    unsigned char want[32], got[32];
    fill_pattern(want, 32, 5);
    memset(got, 0, sizeof got);
    ggml_backend_tensor_get(dst, got, 0, 32);
    ok(memcmp(got, want, 32) == 0, "%s: tensor_copy copies the bytes", what);
    ggml_backend_tensor_get(src, got, 0, 32);
    ok(memcmp(got, want, 32) == 0, "%s: ... and leaves the source alone", what);
    is_int(tap_log_errors(), 0, "%s: no messages", what);
    if (!ggml_backend_buffer_is_host(bb))
        ok(poison_intact(bb), "%s: destination's base never dereferenced", what);
    if (!ggml_backend_buffer_is_host(ba))
        ok(poison_intact(ba), "%s: source's base never dereferenced", what);
    ggml_backend_buffer_free(ba);
    ggml_backend_buffer_free(bb);
}

static void test_tensor_copy(void)
{
    ggml_backend_buffer_type_t cpu = ggml_backend_cpu_buffer_type();
    check_copy(cpu, &min_buft, "cpu -> non-host");
    check_copy(&min_buft, cpu, "non-host -> cpu");
    check_copy(&min_buft, &min_buft, "non-host -> non-host (no cpy_tensor: through host memory)");
    check_copy(cpu, cpu, "cpu -> cpu");
    check_copy(&hostfull_buft, &full_buft, "host full -> full");

    reset_calls();
    check_copy(&full_buft, &full_buft, "full -> full (cpy_tensor)");
    is_int(calls.cpy_tensor, 1, "full -> full: cpy_tensor called once");

    full_ctx.cpy_refuses = true;
    reset_calls();
    check_copy(&full_buft, &full_buft, "full -> full (cpy_tensor refuses: through host memory)");
    is_int(calls.cpy_tensor, 1, "refusing cpy_tensor was asked once");
    full_ctx.cpy_refuses = false;

    reset_calls();
    check_copy(&min_buft, &full_buft, "min -> full (cpy_tensor declines a foreign source)");
    is_int(calls.cpy_tensor, 1, "min -> full: destination's cpy_tensor was asked");

    /* ggml_backend_buffer_copy_tensor: only the destination's member */
    ggml_backend_buffer_t ba, bb, bc;
    struct ggml_tensor *a = copy_operand(&full_buft, &ba, 1, "a");
    struct ggml_tensor *b = copy_operand(&full_buft, &bb, 2, "b");
    struct ggml_tensor *c = copy_operand(&min_buft, &bc, 3, "c");
    if (ok(a && b && c, "buffer_copy_tensor: operands")) {
        reset_calls();
        ok(ggml_backend_buffer_copy_tensor(a, b), "buffer_copy_tensor with cpy_tensor: true");
        is_int(calls.cpy_tensor, 1, "buffer_copy_tensor calls the destination's cpy_tensor");
        ok(!ggml_backend_buffer_copy_tensor(a, c), "buffer_copy_tensor without cpy_tensor: false");
        tap_log_errors();

        /* mismatches are errors and write nothing */
        struct ggml_tensor *short_t = new_f32(4, "short");
        struct ggml_tensor *int_t = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 8);
        ggml_backend_buffer_t bs = ggml_backend_buft_alloc_buffer(&min_buft, 128);
        place(bs, short_t, 0);
        place(bs, int_t, 64);
        unsigned char before[32], after[32];
        ggml_backend_tensor_get(b, before, 0, 32);
        tap_log_errors();
        ggml_backend_tensor_copy(short_t, b);
        logged_one_error("tensor_copy of different shapes logs one error");
        ggml_backend_tensor_copy(int_t, b);
        logged_one_error("tensor_copy of different types logs one error");
        struct ggml_tensor *un = new_f32(8, "unallocated");
        ggml_backend_tensor_copy(un, b);
        logged_one_error("tensor_copy from an unallocated tensor logs one error");
        ggml_backend_tensor_copy(a, un);
        logged_one_error("tensor_copy into an unallocated tensor logs one error");
        ggml_backend_tensor_copy(NULL, b);
        logged_one_error("tensor_copy(NULL, dst) logs one error");
        ggml_backend_tensor_get(b, after, 0, 32);
        ok(memcmp(before, after, 32) == 0, "failed copies wrote nothing");
        ggml_backend_tensor_copy(b, b);
        is_int(tap_log_errors(), 0, "tensor_copy of a tensor onto itself is a silent no-op");
        ggml_backend_tensor_get(b, after, 0, 32);
        ok(memcmp(before, after, 32) == 0, "... that leaves it unchanged");
        ggml_backend_buffer_free(bs);
    }
    ggml_backend_buffer_free(ba);
    ggml_backend_buffer_free(bb);
    ggml_backend_buffer_free(bc);
}

/*
 * Transposed and permuted views of block-quantized tensors: by ggml_nbytes
 * they span far more than the memory of their source, so every transfer
 * must be bounded by the source's memory, not by ggml_nbytes.
 */
/*
 * Tensors of one CPU buffer whose bytes overlap (found by the RPC server's
 * fuzzer: a client may lay tensors out so): copying one onto the other,
 * setting one from the other's memory and getting one into the other's
 * memory move the bytes as if through a temporary.
 */
static void test_overlapping_copy(void)
{
    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 256);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 64), *b = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 64);
    char *base = buf != NULL ? ggml_backend_buffer_get_base(buf) : NULL;
    bool good = buf != NULL && ggml_backend_tensor_alloc(buf, a, base) == GGML_STATUS_SUCCESS &&
                ggml_backend_tensor_alloc(buf, b, base + 1) == GGML_STATUS_SUCCESS;
    int8_t v[64], got[65];
    for (int i = 0; i < 64; i++)
        v[i] = (int8_t) (i + 1);
    if (good) {
        ggml_backend_tensor_set(a, v, 0, sizeof v);
        ggml_backend_tensor_copy(a, b);   /* b = a, one byte further */
        memcpy(got, base, 65);
    }
    bool moved = good && got[0] == 1;
    for (int i = 0; moved && i < 64; i++)
        moved = got[1 + i] == v[i];
    ok(moved, "ggml_backend_tensor_copy onto an overlapping tensor of the same buffer: the source's bytes");
    if (good) {
        ggml_backend_tensor_set(a, v, 0, sizeof v);
        ggml_backend_tensor_set(b, base, 0, 64);     /* from a's own memory */
        memcpy(got, base, 65);
    }
    moved = good && got[0] == 1;
    for (int i = 0; moved && i < 64; i++)
        moved = got[1 + i] == v[i];
    ok(moved, "ggml_backend_tensor_set from memory overlapping the tensor: the bytes as they were");
    if (good) {
        ggml_backend_tensor_set(a, v, 0, sizeof v);
        ggml_backend_tensor_get(b, base, 0, 64);     /* into a's own memory */
        memcpy(got, base, 64);
    }
    moved = good && got[63] == v[63];
    for (int i = 0; moved && i < 63; i++)
        moved = got[i] == v[i + 1];
    ok(moved, "ggml_backend_tensor_get into memory overlapping the tensor: the bytes as they were");
    ggml_backend_buffer_free(buf);
}

static void test_quantized_views(void)
{
    struct ggml_init_params params = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *qctx = ggml_init(params);
    /* Q8_0: blocks of 32 elements in 34 bytes; q owns 2 rows of 1 block */
    struct ggml_tensor *q = ggml_new_tensor_2d(qctx, GGML_TYPE_Q8_0, 32, 2);
    struct ggml_tensor *t = ggml_transpose(qctx, q);
    /* Q4_0: blocks of 32 elements in 18 bytes; p4 owns 2 * 3 blocks */
    struct ggml_tensor *q4 = ggml_new_tensor_3d(qctx, GGML_TYPE_Q4_0, 32, 2, 3);
    struct ggml_tensor *p4 = ggml_permute(qctx, q4, 2, 0, 1, 3);
    /* a transposed view into a larger tensor: the layout of t, more memory */
    struct ggml_tensor *big = ggml_new_tensor_2d(qctx, GGML_TYPE_Q8_0, 32, 100);
    struct ggml_tensor *t_big = ggml_transpose(qctx, ggml_view_2d(qctx, big, 32, 2, 34, 0));
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(qctx, ggml_backend_cpu_buffer_type());
    if (!ok(q && t && q4 && p4 && big && t_big && buf, "quantized views: tensors allocated")) {
        ggml_backend_buffer_free(buf);
        ggml_free(qctx);
        return;
    }
    /* ggml_nbytes keeps its definition: ne0 * nb0 / block + (ne_i - 1) * nb_i */
    is_uint(ggml_nbytes(t), 2 * 34 / 32 + 31 * 34, "nbytes of the transposed Q8_0 view");
    is_uint(ggml_nbytes(p4), 2 * 18 / 32 + 2 * 36 + 31 * 18, "nbytes of the permuted Q4_0 view");
    is_uint(ggml_nbytes(q), 2 * 34, "nbytes of its source");

    static unsigned char host[4096], q_before[68], q_after[68];
    for (size_t i = 0; i < sizeof host; i++)
        host[i] = (unsigned char) (i * 7 + 1);
    ggml_backend_tensor_memset(q, 0xa5, 0, ggml_nbytes(q));
    ggml_backend_tensor_get(q, q_before, 0, sizeof q_before);
    tap_log_errors();

    ggml_backend_tensor_set(t, host, 0, ggml_nbytes(t));
    logged_one_error("tensor_set of nbytes into a transposed Q8_0 view logs one error");
    ggml_backend_tensor_get(t, host, 0, ggml_nbytes(t));
    logged_one_error("tensor_get of nbytes from it logs one error");
    ggml_backend_tensor_memset(t, 0, 0, ggml_nbytes(t));
    logged_one_error("tensor_memset of nbytes of it logs one error");
    ggml_backend_tensor_set(t, host, 60, 9);
    logged_one_error("tensor_set one byte past the source's end logs one error");
    ggml_backend_tensor_set(p4, host, 0, ggml_nbytes(p4));
    logged_one_error("tensor_set of nbytes into a permuted Q4_0 view logs one error");
    ggml_backend_tensor_get(q, q_after, 0, sizeof q_after);
    ok(memcmp(q_before, q_after, sizeof q_before) == 0, "the refused transfers wrote nothing");

    ggml_backend_tensor_copy(t, t_big);
    logged_one_error("tensor_copy from a view reaching past its source logs one error");
    ggml_backend_tensor_copy(t_big, t);
    logged_one_error("tensor_copy into a view reaching past its source logs one error");
    ok(!ggml_backend_buffer_copy_tensor(t, t_big), "buffer_copy_tensor from it: false");
    logged_one_error("... with one error");
    ggml_backend_tensor_get(q, q_after, 0, sizeof q_after);
    ok(memcmp(q_before, q_after, sizeof q_before) == 0, "the refused copies wrote nothing");

    /* the memory the source owns stays reachable through the view */
    ggml_backend_tensor_set(t, host, 0, ggml_nbytes(q));
    is_int(tap_log_errors(), 0, "tensor_set of the source's bytes through the view: no error");
    ggml_backend_tensor_get(q, q_after, 0, sizeof q_after);
    ok(memcmp(host, q_after, sizeof q_after) == 0, "... and they land in the source");
    unsigned char back[68] = { 0 };
    ggml_backend_tensor_get(t, back, 8, 60);
    ok(tap_log_errors() == 0 && memcmp(back, host + 8, 60) == 0, "tensor_get of the last 60 of them");

    ggml_backend_buffer_free(buf);
    ggml_free(qctx);
}

int main(void)
{
    tap_capture_log();
    struct ggml_init_params params = { 512 * ggml_tensor_overhead(), NULL, true };
    ctx = ggml_init(params);
    if (!ctx) {
        printf("Bail out! cannot create a context\n");
        return 1;
    }

    test_buft_defaults();
    test_buft_members_called();
    test_buffer_defaults();
    test_buffer_members_called();
    test_zero_size_and_failure();
    test_buffer_init_direct();
    test_usage();
    test_handles();
    test_cpu_buffer_type();
    test_cpu_buffer_huge_pages();
    test_cpu_buffer_from_ptr();
    test_multi_buffer();
    test_tensor_alloc();
    test_view_init();
    test_tensor_data();
    test_tensor_data_2d();
    test_tensor_copy();
    test_overlapping_copy();
    test_quantized_views();

    is_int(violations, 0, "the library never passed the test buffers a range outside them");

    ggml_free(ctx);
    free_all_test_buffers();
    return tap_done();
}
