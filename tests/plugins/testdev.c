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
 * The device computes, all in F32 and with any strides:
 *   - NONE, VIEW, RESHAPE, PERMUTE and TRANSPOSE: nothing to do, the
 *     library has laid the views out already (these take any type);
 *   - CPY, CONT and DUP;
 *   - ADD, SUB and MUL, src1 repeated over src0 (ggml_can_repeat);
 *   - SCALE: src0 * s + b, s and b the floats op_params[0] and [1];
 *   - MUL_MAT: dst[m, n] = sum over k of src0[k, m] * src1[k, n], src0
 *     repeated over dims 2 and 3 of src1 as in ggml.
 * It refuses any other op.  supports_op looks at the op, types and shapes
 * only, not at where the sources are: whether the device can read a
 * buffer is supports_buft's question, and the scheduler copies in a
 * source the device cannot read (which is how an op whose weights are in
 * host memory is offloaded).  graph_compute applies the same rule and
 * also fails, with a message, when a source is not in a TESTDEV buffer.
 * offload_op asks for MUL_MAT with a batch (src1->ne[1]) of 32 or more.
 *
 * Built twice by tests/plugins/local.mk: libggml-testdev (TESTDEV_SCORE
 * 10) and libggml-testdev-hi (TESTDEV_SCORE 20), both registering
 * "TESTDEV", so that the tests see the loader pick the higher score.
 *
 * Functions reachable through ggml_backend_reg_get_proc_address:
 *   size_t testdev_live_buffers(void)    buffers allocated and not yet freed
 *   int    testdev_score(void)           this build's TESTDEV_SCORE (whatever
 *                                        TESTDEV_FORCE_SCORE says)
 *   size_t testdev_bounds_errors(void)   accesses refused for leaving a buffer
 * and these counters, counted since the last testdev_reset_counters:
 *   size_t testdev_uploads(void)         set_tensor calls (host -> device)
 *   size_t testdev_downloads(void)       get_tensor calls (device -> host)
 *   size_t testdev_device_copies(void)   successful cpy_tensor (device -> device)
 *   size_t testdev_graph_computes(void)  graph_compute calls
 *   size_t testdev_nodes_computed(void)  nodes computed, layout ops not counted
 *   size_t testdev_events_recorded(void) event_record calls
 *   size_t testdev_events_waited(void)   event_wait calls
 *   void   testdev_reset_counters(void)  zeroes the seven counters above
 *   void   testdev_set_alloc_limit(size_t bytes)
 *                                        alloc_buffer fails (returns NULL) for
 *                                        a size above bytes; 0, the default,
 *                                        lifts the limit
 * The state is per module, shared by all backends of the device.
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
/* alloc_buffer refuses sizes above this; 0 = no limit */
static atomic_size_t alloc_limit;

/* What the tests count; testdev_reset_counters zeroes them all. */
static atomic_size_t uploads;          /* set_tensor calls */
static atomic_size_t downloads;        /* get_tensor calls */
static atomic_size_t device_copies;    /* cpy_tensor calls that copied */
static atomic_size_t graph_computes;   /* graph_compute calls */
static atomic_size_t nodes_computed;   /* nodes computed, layout ops not counted */
static atomic_size_t events_recorded;  /* event_record calls */
static atomic_size_t events_waited;    /* event_wait calls */

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
    atomic_fetch_add(&uploads, 1);
    uint8_t *p = check_range(buffer, tensor, offset, size);
    if (p)
        memcpy(p, data, size);
}

static void testdev_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor,
                                      void *data, size_t offset, size_t size)
{
    atomic_fetch_add(&downloads, 1);
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
    atomic_fetch_add(&device_copies, 1);
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
    const size_t limit = atomic_load(&alloc_limit);
    if (limit != 0 && size > limit)
        return NULL;  /* as if out of memory: the library reports the failure */
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

/*
 * Elements are addressed by a 4-D index i[0..3], i[0] the fastest.  The
 * kernels walk the destination's elements in row-major order: unravel turns
 * the position k in that walk into an index, index_offset turns an index
 * into a byte offset in any tensor, whatever its strides.
 */
static void unravel(const struct ggml_tensor *t, int64_t k, int64_t i[GGML_MAX_DIMS])
{
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        i[d] = k % t->ne[d];
        k /= t->ne[d];
    }
}

/* Byte offset of the element at index i in t.  An index past a dimension
 * of t wraps around (i[d] % t->ne[d]): that is how a smaller src1 repeats
 * over src0, and it changes nothing for an index inside t.  An empty
 * dimension (MUL_MAT's K may be 0) contributes nothing. */
static size_t index_offset(const struct ggml_tensor *t, const int64_t i[GGML_MAX_DIMS])
{
    int64_t offset = 0;
    for (int d = 0; d < GGML_MAX_DIMS; d++)
        if (t->ne[d] > 1)
            offset += (i[d] % t->ne[d]) * (int64_t) t->nb[d];
    return (size_t) offset;
}

/* Byte offset of the element with flat (row-major) index k in t. */
static size_t element_offset(const struct ggml_tensor *t, int64_t k)
{
    int64_t i[GGML_MAX_DIMS];
    unravel(t, k, i);
    return index_offset(t, i);
}

static float load_f32(const uint8_t *p)
{
    float value;
    memcpy(&value, p, sizeof value);
    return value;
}

static void store_f32(uint8_t *p, float value)
{
    memcpy(p, &value, sizeof value);
}

/* dst[k] = src[k] for every flat index k; any strides on both sides. */
static bool copy_f32(const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    const uint8_t *from = device_pointer(src);
    uint8_t *to = device_pointer(dst);
    if (from == NULL || to == NULL)
        return false;
    const int64_t n = ggml_nelements(dst);
    for (int64_t k = 0; k < n; k++)
        store_f32(to + element_offset(dst, k), load_f32(from + element_offset(src, k)));
    return true;
}

/* dst = src0 op src1 for op ADD, SUB or MUL, src1 repeated over src0 (dst
 * has src0's shape); any strides. */
static bool binary_f32(enum ggml_op op, const struct ggml_tensor *src0, const struct ggml_tensor *src1,
                       struct ggml_tensor *dst)
{
    const uint8_t *a = device_pointer(src0);
    const uint8_t *b = device_pointer(src1);
    uint8_t *to = device_pointer(dst);
    if (a == NULL || b == NULL || to == NULL)
        return false;
    const int64_t n = ggml_nelements(dst);
    for (int64_t k = 0; k < n; k++) {
        int64_t i[GGML_MAX_DIMS];
        unravel(dst, k, i);
        const float x = load_f32(a + index_offset(src0, i));
        const float y = load_f32(b + index_offset(src1, i));
        float result;
        switch (op) {
        case GGML_OP_ADD: result = x + y; break;
        case GGML_OP_SUB: result = x - y; break;
        case GGML_OP_MUL: result = x * y; break;
        default: return false;  /* op_supported lets no other op through */
        }
        store_f32(to + index_offset(dst, i), result);
    }
    return true;
}

/* dst = src * s + b (SCALE's op_params: float s, float b); any strides. */
static bool scale_f32(const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    float s, b;
    memcpy(&s, &dst->op_params[0], sizeof s);
    memcpy(&b, &dst->op_params[1], sizeof b);
    const uint8_t *from = device_pointer(src);
    uint8_t *to = device_pointer(dst);
    if (from == NULL || to == NULL)
        return false;
    const int64_t n = ggml_nelements(dst);
    for (int64_t k = 0; k < n; k++) {
        int64_t i[GGML_MAX_DIMS];
        unravel(dst, k, i);
        store_f32(to + index_offset(dst, i), load_f32(from + index_offset(src, i)) * s + b);
    }
    return true;
}

/*
 * dst[m, n, i2, i3] = sum over k of src0[k, m, j2, j3] * src1[k, n, i2, i3],
 * where src0 repeats over src1's dims 2 and 3: j2 = i2 / (ne12 / ne02),
 * and the same for dim 3, as in ggml.  Accumulates in double; any strides.
 */
static bool mul_mat_f32(const struct ggml_tensor *src0, const struct ggml_tensor *src1, struct ggml_tensor *dst)
{
    const uint8_t *a = device_pointer(src0);
    const uint8_t *b = device_pointer(src1);
    uint8_t *to = device_pointer(dst);
    if (a == NULL || b == NULL || to == NULL)
        return false;
    const int64_t r2 = src1->ne[2] / src0->ne[2];
    const int64_t r3 = src1->ne[3] / src0->ne[3];
    const int64_t n = ggml_nelements(dst);
    for (int64_t e = 0; e < n; e++) {
        int64_t i[GGML_MAX_DIMS];
        unravel(dst, e, i);
        const int64_t i0[GGML_MAX_DIMS] = { 0, i[0], i[2] / r2, i[3] / r3 };  /* src0's row m */
        const int64_t i1[GGML_MAX_DIMS] = { 0, i[1], i[2], i[3] };            /* src1's row n */
        const uint8_t *row0 = a + index_offset(src0, i0);
        const uint8_t *row1 = b + index_offset(src1, i1);
        double sum = 0.0;
        for (int64_t k = 0; k < src0->ne[0]; k++)
            sum += (double) load_f32(row0 + k * (int64_t) src0->nb[0]) *
                   (double) load_f32(row1 + k * (int64_t) src1->nb[0]);
        store_f32(to + index_offset(dst, i), (float) sum);
    }
    return true;
}

static bool is_layout_op(enum ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
           op == GGML_OP_TRANSPOSE;
}

static bool is_f32(const struct ggml_tensor *t)
{
    return t != NULL && t->type == GGML_TYPE_F32;
}

/*
 * Whether the device computes op: the rule behind both supports_op and
 * graph_compute.  Shapes are checked too, as a node labelled by hand can
 * have any; the kernels rely on them.
 */
static bool op_supported(const struct ggml_tensor *op)
{
    if (is_layout_op(op->op))
        return true;

    const struct ggml_tensor *src0 = op->src[0], *src1 = op->src[1];
    if (!is_f32(op) || !is_f32(src0))
        return false;
    switch (op->op) {
    case GGML_OP_CPY:
    case GGML_OP_CONT:
    case GGML_OP_DUP:
        return ggml_nelements(src0) == ggml_nelements(op);
    case GGML_OP_ADD:
    case GGML_OP_SUB:
    case GGML_OP_MUL:
        return is_f32(src1) && ggml_are_same_shape(src0, op) && ggml_can_repeat(src1, src0);
    case GGML_OP_SCALE:
        return ggml_are_same_shape(src0, op);
    case GGML_OP_MUL_MAT:
        /* src0 [K, M, ne02, ne03], src1 [K, N, ne12, ne13], dst [M, N, ne12, ne13],
         * ne02 dividing ne12 and ne03 dividing ne13 (an empty src0 batch,
         * ne02 or ne03 = 0, is refused: there would be nothing to repeat) */
        return is_f32(src1) && src0->ne[0] == src1->ne[0] && op->ne[0] == src0->ne[1] &&
               op->ne[1] == src1->ne[1] && op->ne[2] == src1->ne[2] && op->ne[3] == src1->ne[3] &&
               src0->ne[2] > 0 && src1->ne[2] % src0->ne[2] == 0 &&
               src0->ne[3] > 0 && src1->ne[3] % src0->ne[3] == 0;
    default:
        return false;
    }
}

/* Computes one node that op_supported accepted. */
static bool compute_node(struct ggml_tensor *node)
{
    switch (node->op) {
    case GGML_OP_CPY:  /* CPY's result is a view of its destination, src[1]: write through it */
    case GGML_OP_CONT:
    case GGML_OP_DUP:
        return copy_f32(node->src[0], node);
    case GGML_OP_ADD:
    case GGML_OP_SUB:
    case GGML_OP_MUL:
        return binary_f32(node->op, node->src[0], node->src[1], node);
    case GGML_OP_SCALE:
        return scale_f32(node->src[0], node);
    case GGML_OP_MUL_MAT:
        return mul_mat_f32(node->src[0], node->src[1], node);
    default:
        return false;
    }
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
    atomic_fetch_add(&graph_computes, 1);
    const int n = ggml_graph_n_nodes(cgraph);
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *node = ggml_graph_node(cgraph, i);
        if (is_layout_op(node->op))
            continue;
        /* a caller may skip supports_op: refuse what it would refuse */
        if (!op_supported(node)) {
            testdev_log_error("cannot compute %s node '%s'", ggml_op_name(node->op), node->name);
            return GGML_STATUS_FAILED;
        }
        if (!compute_node(node))
            return GGML_STATUS_FAILED;  /* device_pointer said why */
        atomic_fetch_add(&nodes_computed, 1);
    }
    return GGML_STATUS_SUCCESS;
}

/* The stream is synchronous: when a call returns, its work is done, so an
 * event is reached as soon as it is recorded, and waiting has nothing to
 * wait for.  Both only count their calls. */
static void testdev_backend_event_record(ggml_backend_t backend, ggml_backend_event_t event)
{
    atomic_fetch_add(&events_recorded, 1);
}

static void testdev_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event)
{
    atomic_fetch_add(&events_waited, 1);
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
    return op_supported(op);
}

/* Whether op is worth moving here from the CPU, whose memory holds its
 * weights: a matrix product over a large enough batch. */
static bool testdev_dev_offload_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    return op->op == GGML_OP_MUL_MAT && op->src[1] != NULL && op->src[1]->ne[1] >= 32;
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

static size_t testdev_uploads(void)
{
    return atomic_load(&uploads);
}

static size_t testdev_downloads(void)
{
    return atomic_load(&downloads);
}

static size_t testdev_device_copies(void)
{
    return atomic_load(&device_copies);
}

static size_t testdev_graph_computes(void)
{
    return atomic_load(&graph_computes);
}

static size_t testdev_nodes_computed(void)
{
    return atomic_load(&nodes_computed);
}

static size_t testdev_events_recorded(void)
{
    return atomic_load(&events_recorded);
}

static size_t testdev_events_waited(void)
{
    return atomic_load(&events_waited);
}

/* Zeroes the seven counters (not live_buffers nor bounds_errors, which
 * describe the module's state rather than traffic). */
static void testdev_reset_counters(void)
{
    atomic_store(&uploads, 0);
    atomic_store(&downloads, 0);
    atomic_store(&device_copies, 0);
    atomic_store(&graph_computes, 0);
    atomic_store(&nodes_computed, 0);
    atomic_store(&events_recorded, 0);
    atomic_store(&events_waited, 0);
}

static void testdev_set_alloc_limit(size_t bytes)
{
    atomic_store(&alloc_limit, bytes);
}

/* The test hooks, by name.  A function pointer travels as void *, which
 * POSIX (dlsym) guarantees to work; the caller casts it back. */
static const struct {
    const char *name;
    void *function;
} testdev_hooks[] = {
    { "testdev_live_buffers", (void *) testdev_live_buffers },
    { "testdev_score", (void *) testdev_score },
    { "testdev_bounds_errors", (void *) testdev_bounds_errors },
    { "testdev_uploads", (void *) testdev_uploads },
    { "testdev_downloads", (void *) testdev_downloads },
    { "testdev_device_copies", (void *) testdev_device_copies },
    { "testdev_graph_computes", (void *) testdev_graph_computes },
    { "testdev_nodes_computed", (void *) testdev_nodes_computed },
    { "testdev_events_recorded", (void *) testdev_events_recorded },
    { "testdev_events_waited", (void *) testdev_events_waited },
    { "testdev_reset_counters", (void *) testdev_reset_counters },
    { "testdev_set_alloc_limit", (void *) testdev_set_alloc_limit },
};

static void *testdev_reg_get_proc_address(ggml_backend_reg_t reg, const char *name)
{
    for (size_t i = 0; i < sizeof testdev_hooks / sizeof testdev_hooks[0]; i++)
        if (strcmp(name, testdev_hooks[i].name) == 0)
            return testdev_hooks[i].function;
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
        .supports_op          = testdev_dev_supports_op,         /* op_supported */
        .supports_buft        = testdev_dev_supports_buft,       /* its own buffers only */
        .offload_op           = testdev_dev_offload_op,          /* MUL_MAT, batch >= 32 */
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
