/*
 * testdev.c - a small but complete backend plugin, used by the tests and
 * written to be read by plugin authors.
 *
 * It pretends to be a GPU: its memory cannot be read by the host.  Each
 * buffer keeps a malloc'd block behind the buffer interface and hands out
 * "device addresses" that are plain integers (never dereferenced), so the
 * library can only reach the data through set_tensor, get_tensor and
 * friends, exactly as with a real device.
 *
 * What a plugin provides, from the bottom up:
 *   - a buffer type (ggml_backend_buffer_type_i): allocates buffers;
 *   - buffers (ggml_backend_buffer_i): move data between host memory and
 *     the device memory behind them;
 *   - a backend (ggml_backend_i): a stream that computes graphs;
 *   - a device (ggml_backend_device_i): describes the hardware, creates
 *     backends and events, says which ops and buffer types it can use;
 *   - a registry (ggml_backend_reg_i): lists the devices;
 *   - the exported entry points ggml_backend_init and ggml_backend_score,
 *     defined by GGML_BACKEND_DL_IMPL and GGML_BACKEND_DL_SCORE_IMPL.
 * Everything else is static: a plugin exports nothing but its entry points.
 *
 * The device computes NONE, VIEW, RESHAPE, PERMUTE and TRANSPOSE (nothing
 * to do: the library has laid the views out already) and CPY, CONT and
 * DUP of F32 tensors with any strides.
 *
 * Built twice by tests/plugins/local.mk: libggml-testdev (TESTDEV_SCORE
 * 10) and libggml-testdev-hi (TESTDEV_SCORE 20), both registering
 * "TESTDEV", so that the tests see the loader pick the higher score.
 *
 * Functions reachable through ggml_backend_reg_get_proc_address:
 *   size_t testdev_live_buffers(void)  buffers allocated and not yet freed
 *   int    testdev_score(void)         this build's TESTDEV_SCORE (whatever
 *                                      TESTDEV_FORCE_SCORE says)
 *   size_t testdev_bounds_errors(void) accesses refused for leaving a buffer
 */
#include "config.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"

#ifndef TESTDEV_SCORE
#    define TESTDEV_SCORE 10
#endif

#define TESTDEV_NAME      "TESTDEV"
#define TESTDEV_ALIGNMENT 64
#define TESTDEV_MAX_SIZE  ((size_t) 1 << 20)  /* small, so tests can split allocations */
#define TESTDEV_MEMORY    ((size_t) 64 << 20) /* the "device memory" it reports */

/* ------------------------------------------------------------ bookkeeping */

static atomic_size_t live_buffers;    /* buffers allocated, not yet freed */
static atomic_size_t bytes_in_use;    /* their sizes, for get_memory */
static atomic_size_t bounds_errors;   /* accesses refused by check_range */
/* next fake device address: starts at 0x1000 and only grows, so that two
 * buffers never share an address; these values are never dereferenced */
static atomic_uintptr_t next_address = 0x1000;

/* Reports a problem through the application's logger. */
static void testdev_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void testdev_log_error(const char *fmt, ...)
{
    ggml_log_callback callback;
    void *user_data;
    char text[256];
    va_list ap;

    va_start(ap, fmt);
    int n = snprintf(text, sizeof text, "testdev: ");
    vsnprintf(text + n, sizeof text - (size_t) n - 1, fmt, ap);
    va_end(ap);
    strcat(text, "\n");
    ggml_log_get(&callback, &user_data);
    if (callback)
        callback(GGML_LOG_LEVEL_ERROR, text, user_data);
}

/* ----------------------------------------------------------------- buffer */

/*
 * The context of one buffer: the real memory, and the fake address the
 * library sees as the buffer's base.  A tensor of the buffer has
 * tensor->data = base + offset; memory + offset is where its bytes are.
 */
struct testdev_buffer {
    uint8_t *memory;
    uintptr_t base;
    size_t size;
};

/*
 * Translates size bytes at offset into tensor to a pointer into the real
 * memory, or NULL (counted and logged) when the range leaves the buffer.
 * The library checks ranges against the tensor; a backend still checks
 * against its own memory, because a wrong pointer here is a wild write.
 */
static uint8_t *check_range(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, size_t offset,
                            size_t size)
{
    struct testdev_buffer *ctx = buffer->context;
    uintptr_t addr = (uintptr_t) tensor->data;

    if (addr < ctx->base || addr - ctx->base > ctx->size || offset > ctx->size - (addr - ctx->base) ||
        size > ctx->size - (addr - ctx->base) - offset) {
        atomic_fetch_add(&bounds_errors, 1);
        testdev_log_error("%zu bytes at offset %zu of tensor '%s' leave the buffer", size, offset, tensor->name);
        return NULL;
    }
    return ctx->memory + (addr - ctx->base) + offset;
}

static void testdev_buffer_free(ggml_backend_buffer_t buffer)
{
    struct testdev_buffer *ctx = buffer->context;
    atomic_fetch_sub(&bytes_in_use, ctx->size);
    atomic_fetch_sub(&live_buffers, 1);
    free(ctx->memory);
    free(ctx);
}

static void *testdev_buffer_get_base(ggml_backend_buffer_t buffer)
{
    struct testdev_buffer *ctx = buffer->context;
    return (void *) ctx->base;
}

static void testdev_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor,
                                         uint8_t value, size_t offset, size_t size)
{
    uint8_t *p = check_range(buffer, tensor, offset, size);
    if (p)
        memset(p, value, size);
}

static void testdev_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor,
                                      const void *data, size_t offset, size_t size)
{
    uint8_t *p = check_range(buffer, tensor, offset, size);
    if (p)
        memcpy(p, data, size);
}

static void testdev_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor,
                                      void *data, size_t offset, size_t size)
{
    const uint8_t *p = check_range(buffer, tensor, offset, size);
    if (p)
        memcpy(data, p, size);
}

static ggml_backend_buffer_type_t testdev_buffer_type(void);

/* The buffer holding a tensor's data (a view's source's buffer). */
static ggml_backend_buffer_t tensor_buffer(const struct ggml_tensor *tensor)
{
    return tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
}

/*
 * Device-to-device copy: only when src is in a TESTDEV buffer too.
 * Returning false makes the library copy through host memory instead.
 */
static bool testdev_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *src,
                                      struct ggml_tensor *dst)
{
    ggml_backend_buffer_t src_buffer = tensor_buffer(src);
    if (src_buffer == NULL || src_buffer->buft != testdev_buffer_type())
        return false;
    const size_t n = ggml_nbytes(src);
    const uint8_t *from = check_range(src_buffer, src, 0, n);
    uint8_t *to = check_range(buffer, dst, 0, n);
    if (from == NULL || to == NULL)
        return false;
    memmove(to, from, n);
    return true;
}

static void testdev_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    struct testdev_buffer *ctx = buffer->context;
    memset(ctx->memory, value, ctx->size);
}

static const struct ggml_backend_buffer_i testdev_buffer_iface = {
    .free_buffer   = testdev_buffer_free,           /* releases the memory and the context */
    .get_base      = testdev_buffer_get_base,       /* the fake device address */
    .init_tensor   = NULL,                          /* no per-tensor state */
    .memset_tensor = testdev_buffer_memset_tensor,  /* device memset */
    .set_tensor    = testdev_buffer_set_tensor,     /* host -> device */
    .get_tensor    = testdev_buffer_get_tensor,     /* device -> host */
    .cpy_tensor    = testdev_buffer_cpy_tensor,     /* device -> device */
    .clear         = testdev_buffer_clear,          /* whole buffer */
    .reset         = NULL,                          /* no per-tensor state */
};

/* ------------------------------------------------------------ buffer type */

static const char *testdev_buft_get_name(ggml_backend_buffer_type_t buft)
{
    return TESTDEV_NAME;
}

static ggml_backend_buffer_t testdev_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    struct testdev_buffer *ctx = malloc(sizeof *ctx);
    if (ctx == NULL)
        return NULL;
    ctx->memory = malloc(size);
    if (ctx->memory == NULL) {
        free(ctx);
        return NULL;  /* the library reports the failure */
    }
    ctx->size = size;
    /* reserve [base, base + size) rounded to the alignment, plus a gap */
    size_t span = (size + TESTDEV_ALIGNMENT - 1) / TESTDEV_ALIGNMENT * TESTDEV_ALIGNMENT + 0x1000;
    ctx->base = atomic_fetch_add(&next_address, span);

    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, testdev_buffer_iface, ctx, size);
    if (buffer == NULL) {
        free(ctx->memory);
        free(ctx);
        return NULL;
    }
    atomic_fetch_add(&live_buffers, 1);
    atomic_fetch_add(&bytes_in_use, size);
    return buffer;
}

static size_t testdev_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    return TESTDEV_ALIGNMENT;
}

static size_t testdev_buft_get_max_size(ggml_backend_buffer_type_t buft)
{
    return TESTDEV_MAX_SIZE;
}

/* --------------------------------------------------------------- compute */

/* Real address of the data of t, which must live in a TESTDEV buffer. */
static uint8_t *device_pointer(const struct ggml_tensor *t)
{
    ggml_backend_buffer_t buffer = tensor_buffer(t);
    if (buffer == NULL || buffer->buft != testdev_buffer_type()) {
        testdev_log_error("tensor '%s' is not in a TESTDEV buffer", t->name);
        return NULL;
    }
    return check_range(buffer, t, 0, ggml_nbytes(t));
}

/* Byte offset of the element with flat (row-major) index i in t. */
static size_t element_offset(const struct ggml_tensor *t, int64_t i)
{
    const int64_t i0 = i % t->ne[0];
    const int64_t i1 = i / t->ne[0] % t->ne[1];
    const int64_t i2 = i / (t->ne[0] * t->ne[1]) % t->ne[2];
    const int64_t i3 = i / (t->ne[0] * t->ne[1] * t->ne[2]);
    return (size_t) (i0 * (int64_t) t->nb[0] + i1 * (int64_t) t->nb[1] + i2 * (int64_t) t->nb[2] +
                     i3 * (int64_t) t->nb[3]);
}

/* dst[k] = src[k] for every flat index k; any strides on both sides. */
static bool copy_f32(const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    const int64_t n = ggml_nelements(dst);
    if (ggml_nelements(src) != n)
        return false;
    const uint8_t *from = device_pointer(src);
    uint8_t *to = device_pointer(dst);
    if (from == NULL || to == NULL)
        return false;
    for (int64_t k = 0; k < n; k++) {
        float value;
        memcpy(&value, from + element_offset(src, k), sizeof value);
        memcpy(to + element_offset(dst, k), &value, sizeof value);
    }
    return true;
}

static bool is_layout_op(enum ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
           op == GGML_OP_TRANSPOSE;
}

static bool is_copy_op(enum ggml_op op)
{
    return op == GGML_OP_CPY || op == GGML_OP_CONT || op == GGML_OP_DUP;
}

/* ---------------------------------------------------------------- backend */

static ggml_guid testdev_guid = {
    0x74, 0x65, 0x73, 0x74, 0x64, 0x65, 0x76, 0x00, 0x9b, 0x1e, 0x42, 0x6d, 0x0c, 0x5a, 0x33, 0x17,
};

static const char *testdev_backend_get_name(ggml_backend_t backend)
{
    return TESTDEV_NAME;
}

static void testdev_backend_free(ggml_backend_t backend)
{
    free(backend);
}

static enum ggml_status testdev_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    const int n = ggml_graph_n_nodes(cgraph);
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *node = ggml_graph_node(cgraph, i);
        if (is_layout_op(node->op))
            continue;
        if (!is_copy_op(node->op) || node->type != GGML_TYPE_F32 || node->src[0] == NULL ||
            node->src[0]->type != GGML_TYPE_F32) {
            testdev_log_error("cannot compute %s node '%s'", ggml_op_name(node->op), node->name);
            return GGML_STATUS_FAILED;
        }
        /* CPY's result is a view of its destination, src[1]: write through it */
        if (!copy_f32(node->src[0], node))
            return GGML_STATUS_FAILED;
    }
    return GGML_STATUS_SUCCESS;
}

/* The stream is synchronous: when a call returns, its work is done, so an
 * event is reached as soon as it is recorded. */
static void testdev_backend_event_record(ggml_backend_t backend, ggml_backend_event_t event)
{
}

static void testdev_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event)
{
}

static const struct ggml_backend_i testdev_backend_iface = {
    .get_name           = testdev_backend_get_name,
    .free               = testdev_backend_free,
    .set_tensor_async   = NULL,  /* synchronous: library default */
    .get_tensor_async   = NULL,  /* synchronous: library default */
    .cpy_tensor_async   = NULL,  /* synchronous: library default */
    .synchronize        = NULL,  /* nothing is ever pending */
    .graph_plan_create  = NULL,  /* no plans */
    .graph_plan_free    = NULL,
    .graph_plan_update  = NULL,
    .graph_plan_compute = NULL,
    .graph_compute      = testdev_backend_graph_compute,
    .event_record       = testdev_backend_event_record,
    .event_wait         = testdev_backend_event_wait,
    .graph_optimize     = NULL,  /* node order kept */
};

/* ----------------------------------------------------------------- device */

static const char *testdev_dev_get_name(ggml_backend_dev_t dev)
{
    return "TESTDEV0";
}

static const char *testdev_dev_get_description(ggml_backend_dev_t dev)
{
    return "test device";
}

static void testdev_dev_get_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes)
{
    size_t used = atomic_load(&bytes_in_use);
    *total_bytes = TESTDEV_MEMORY;
    *free_bytes = used < TESTDEV_MEMORY ? TESTDEV_MEMORY - used : 0;
}

static enum ggml_backend_dev_type testdev_dev_get_type(ggml_backend_dev_t dev)
{
    return GGML_BACKEND_DEVICE_TYPE_GPU;
}

static void testdev_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    props->name = testdev_dev_get_name(dev);
    props->description = testdev_dev_get_description(dev);
    testdev_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = testdev_dev_get_type(dev);
    props->device_id = NULL;
    props->caps = (struct ggml_backend_dev_caps) {
        .async = false,
        .host_buffer = false,
        .buffer_from_host_ptr = false,
        .events = true,
    };
}

static ggml_backend_t testdev_dev_init_backend(ggml_backend_dev_t dev, const char *params)
{
    ggml_backend_t backend = malloc(sizeof *backend);
    if (backend == NULL)
        return NULL;  /* the library reports the failure */
    *backend = (struct ggml_backend) {
        .guid = &testdev_guid,
        .iface = testdev_backend_iface,
        .device = dev,
        .context = NULL,
    };
    return backend;
}

static ggml_backend_buffer_type_t testdev_dev_get_buffer_type(ggml_backend_dev_t dev)
{
    return testdev_buffer_type();
}

static bool testdev_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    if (is_layout_op(op->op))
        return true;
    if (is_copy_op(op->op))
        return op->type == GGML_TYPE_F32 && op->src[0] != NULL && op->src[0]->type == GGML_TYPE_F32;
    return false;
}

static bool testdev_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    return buft == testdev_buffer_type();
}

static ggml_backend_event_t testdev_dev_event_new(ggml_backend_dev_t dev)
{
    ggml_backend_event_t event = malloc(sizeof *event);
    if (event != NULL)
        *event = (struct ggml_backend_event) { .device = dev, .context = NULL };
    return event;
}

static void testdev_dev_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event)
{
    free(event);
}

static void testdev_dev_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event)
{
    /* synchronous stream: every recorded event has been reached */
}


/* --------------------------------------------------------------- registry */

static const char *testdev_reg_get_name(ggml_backend_reg_t reg)
{
    return TESTDEV_NAME;
}

static size_t testdev_reg_get_device_count(ggml_backend_reg_t reg)
{
    return 1;
}

static ggml_backend_dev_t testdev_reg_get_device(ggml_backend_reg_t reg, size_t index);

static size_t testdev_live_buffers(void)
{
    return atomic_load(&live_buffers);
}

static int testdev_score(void)
{
    return TESTDEV_SCORE;
}

static size_t testdev_bounds_errors(void)
{
    return atomic_load(&bounds_errors);
}

static void *testdev_reg_get_proc_address(ggml_backend_reg_t reg, const char *name)
{
    if (strcmp(name, "testdev_live_buffers") == 0)
        return (void *) testdev_live_buffers;
    if (strcmp(name, "testdev_score") == 0)
        return (void *) testdev_score;
    if (strcmp(name, "testdev_bounds_errors") == 0)
        return (void *) testdev_bounds_errors;
    return NULL;
}

/*
 * The objects are static: they live as long as the module is loaded, and
 * ggml_backend_unload unregisters them before the module is closed.  The
 * function tables are written in place (a static object's initializer
 * cannot copy another object).
 */
static struct ggml_backend_reg testdev_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name         = testdev_reg_get_name,           /* "TESTDEV" */
        .get_device_count = testdev_reg_get_device_count,   /* 1 */
        .get_device       = testdev_reg_get_device,         /* TESTDEV0 */
        .get_proc_address = testdev_reg_get_proc_address,   /* the test hooks above */
    },
    .context = NULL,
};

static struct ggml_backend_device testdev_device = {
    .iface = {
        .get_name             = testdev_dev_get_name,            /* "TESTDEV0" */
        .get_description      = testdev_dev_get_description,     /* "test device" */
        .get_memory           = testdev_dev_get_memory,          /* 64 MiB minus live buffers */
        .get_type             = testdev_dev_get_type,            /* GPU */
        .get_props            = testdev_dev_get_props,           /* all of the above, and caps */
        .init_backend         = testdev_dev_init_backend,        /* params ignored */
        .get_buffer_type      = testdev_dev_get_buffer_type,     /* TESTDEV */
        .get_host_buffer_type = NULL,                            /* no pinned host memory */
        .buffer_from_host_ptr = NULL,                            /* cannot wrap host memory */
        .supports_op          = testdev_dev_supports_op,         /* layout ops, F32 copies */
        .supports_buft        = testdev_dev_supports_buft,       /* its own buffers only */
        .offload_op           = NULL,                            /* never asks for ops */
        .event_new            = testdev_dev_event_new,
        .event_free           = testdev_dev_event_free,
        .event_synchronize    = testdev_dev_event_synchronize,
    },
    .reg = &testdev_reg,
    .context = NULL,
};

static struct ggml_backend_buffer_type testdev_buft = {
    .iface = {
        .get_name       = testdev_buft_get_name,       /* "TESTDEV" */
        .alloc_buffer   = testdev_buft_alloc_buffer,   /* malloc'd block behind a fake address */
        .get_alignment  = testdev_buft_get_alignment,  /* 64 */
        .get_max_size   = testdev_buft_get_max_size,   /* 1 MiB */
        .get_alloc_size = NULL,                        /* library default: ggml_nbytes */
        .is_host        = NULL,                        /* library default: false */
    },
    .device = &testdev_device,
    .context = NULL,
};

static ggml_backend_buffer_type_t testdev_buffer_type(void)
{
    return &testdev_buft;
}

static ggml_backend_dev_t testdev_reg_get_device(ggml_backend_reg_t reg, size_t index)
{
    return index == 0 ? &testdev_device : NULL;
}

static ggml_backend_reg_t testdev_reg_get(void)
{
    return &testdev_reg;
}

/* ----------------------------------------------------------- entry points */

/*
 * How well this plugin suits the system; 0 would mean it cannot run here
 * (a real backend probes its hardware or CPU features).  For the tests,
 * TESTDEV_FORCE_SCORE in the environment overrides the build's score.
 */
static int testdev_system_score(void)
{
    const char *forced = getenv("TESTDEV_FORCE_SCORE");
    return forced != NULL ? atoi(forced) : TESTDEV_SCORE;
}

GGML_BACKEND_DL_IMPL(testdev_reg_get)
GGML_BACKEND_DL_SCORE_IMPL(testdev_system_score)
