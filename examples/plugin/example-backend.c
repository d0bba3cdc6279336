/*
 * example-backend.c - a complete backend plugin for libggml-backend, built
 * out of the library's tree.  Start here to write a backend for a GPU.
 *
 * The plugin registers the backend "EXAMPLE" with one device, "EXAMPLE0",
 * of type GPU.  The device stands in for a real accelerator:
 *
 *   - Its memory is device memory: the library never receives a pointer it
 *     could dereference.  Behind each buffer there is a malloc'd block (where
 *     a GPU backend would call its driver's allocator), and the addresses the
 *     library sees are numbers in a made-up device address space.  Data goes
 *     in and out only through the buffer functions (set_tensor, get_tensor,
 *     ...), as it would over a bus.
 *   - It computes, on F32 tensors with any strides: ADD and MUL (the second
 *     operand repeated over the first), SCALE (x * s + b) and MUL_MAT; and
 *     the layout operations (NONE, VIEW, RESHAPE, PERMUTE, TRANSPOSE), which
 *     move no data and so are nothing to do.  The "kernels" run on the host,
 *     one thread, in the caller's thread.  Everything else it refuses, and a
 *     scheduler (ggml_backend_sched_new(3)) runs those nodes on the CPU.
 *
 * The file is laid out bottom-up, in the order a backend is best written:
 *   1. device memory and the address translation;
 *   2. buffers             struct ggml_backend_buffer_i
 *   3. the buffer type     struct ggml_backend_buffer_type_i
 *   4. kernels
 *   5. the backend         struct ggml_backend_i         (a stream of work)
 *   6. the device          struct ggml_backend_device_i
 *   7. the registry        struct ggml_backend_reg_i
 *   8. the entry points    GGML_BACKEND_DL_IMPL, GGML_BACKEND_DL_SCORE_IMPL
 * Every member of every interface is set below, NULL included, with what the
 * library expects of it; ggml-backend-plugins(7) is the reference.
 *
 * The rules a plugin lives by:
 *   - Never stop the process (no abort, exit, assert): return NULL, false or
 *     a ggml_status, and say why through the application's logger.
 *   - Export nothing but ggml_backend_init and ggml_backend_score: every
 *     function here is static, and the Makefile compiles with
 *     -fvisibility=hidden and -DGGML_BACKEND_DL.
 *   - The public functions of the library check handles, arguments and
 *     ranges before they call the plugin, and supply a default for every
 *     optional member left NULL.  The plugin still checks its own memory
 *     bounds: a mistake there is a wild write.
 *   - The loader may unload the module (a plugin of the same name with a
 *     higher score, or ggml_backend_unload): leave no threads or handlers
 *     behind that would outlive the module.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggml.h>
#include <ggml-backend.h>
#include <ggml-backend-impl.h>

#define EXAMPLE_REG_NAME    "EXAMPLE"
#define EXAMPLE_DEV_NAME    "EXAMPLE0"
#define EXAMPLE_ALIGNMENT   256                     /* typical of GPUs */
#define EXAMPLE_MAX_BUFFER  ((size_t) 256 << 20)    /* largest single allocation */
#define EXAMPLE_MEMORY      ((size_t) 1 << 30)      /* the memory the device claims */

/* What the device has done since the module was loaded; read by programs
 * through ggml_backend_reg_get_proc_address (see the registry below). */
static atomic_size_t nodes_computed;   /* nodes computed, layout ops not counted */
static atomic_size_t bytes_allocated;  /* sum of the sizes of live buffers */

/* Logs one message, at level ERROR, through the logger the application
 * installed with ggml_log_set (stderr by default), prefixed with the
 * backend's name so that the reader knows who speaks. */
static void example_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void example_log_error(const char *fmt, ...)
{
    char text[512];
    int n = snprintf(text, sizeof text, "%s: ", EXAMPLE_REG_NAME);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + n, sizeof text - (size_t) n - 1, fmt, ap);
    va_end(ap);
    strcat(text, "\n");

    ggml_log_callback callback = NULL;
    void *user_data = NULL;
    ggml_log_get(&callback, &user_data);
    if (callback != NULL)
        callback(GGML_LOG_LEVEL_ERROR, text, user_data);
}

/* ------------------------------------------- 1. device memory, addresses */

/*
 * One block of device memory.  The library only ever sees device_address
 * (as the buffer's base, and tensor->data = base + offset for the tensors
 * placed in it); host_copy is where the bytes really are.  On a GPU the
 * two would be the same device pointer, handed to the kernels as is.
 */
struct example_memory {
    uintptr_t device_address;
    unsigned char *host_copy;
    size_t size;
};

/* Next free device address.  It only grows, in steps rounded up to the
 * alignment plus a gap, so that two buffers never share an address and a
 * tensor's address tells which buffer holds it.  Never dereferenced. */
static atomic_uintptr_t next_device_address = 0x10000000;

static ggml_backend_buffer_type_t example_buffer_type(void);

/* The buffer that holds t's data (a view lives in its source's buffer). */
static ggml_backend_buffer_t buffer_of(const struct ggml_tensor *t)
{
    return t->view_src != NULL ? t->view_src->buffer : t->buffer;
}

/*
 * Host pointer to size bytes at byte offset of t's data in buffer, or NULL
 * (logged) when the range leaves the buffer's memory.
 */
static unsigned char *translate(ggml_backend_buffer_t buffer, const struct ggml_tensor *t, size_t offset,
                                size_t size)
{
    const struct example_memory *mem = buffer->context;
    const uintptr_t addr = (uintptr_t) t->data;
    if (addr < mem->device_address || addr - mem->device_address > mem->size) {
        example_log_error("tensor '%s' is not in buffer at %#lx", t->name, (unsigned long) mem->device_address);
        return NULL;
    }
    const size_t position = addr - mem->device_address;
    if (offset > mem->size - position || size > mem->size - position - offset) {
        example_log_error("%zu bytes at offset %zu of tensor '%s' leave the buffer", size, offset, t->name);
        return NULL;
    }
    return mem->host_copy + position + offset;
}

/* Host pointer to the whole data of t, which must be in an EXAMPLE buffer:
 * what the kernels work on. */
static unsigned char *device_data(const struct ggml_tensor *t)
{
    ggml_backend_buffer_t buffer = buffer_of(t);
    if (buffer == NULL || buffer->buft != example_buffer_type()) {
        example_log_error("tensor '%s' is not in %s memory", t->name, EXAMPLE_REG_NAME);
        return NULL;
    }
    return translate(buffer, t, 0, ggml_nbytes(t));
}

/* -------------------------------------------------------------- 2. buffers */

/* free_buffer (optional): release the memory and the context.  The struct
 * ggml_backend_buffer itself belongs to the library, which frees it after
 * this call. */
static void example_buffer_free_buffer(ggml_backend_buffer_t buffer)
{
    struct example_memory *mem = buffer->context;
    atomic_fetch_sub(&bytes_allocated, mem->size);
    free(mem->host_copy);
    free(mem);
}

/* get_base (required): the address of the first byte, aligned as
 * get_alignment says, never NULL.  The allocators place tensors at
 * base + offset; the library does arithmetic on these addresses but never
 * dereferences them, since is_host is false. */
static void *example_buffer_get_base(ggml_backend_buffer_t buffer)
{
    const struct example_memory *mem = buffer->context;
    return (void *) mem->device_address;
}

/* memset_tensor (optional): set size bytes at offset of the tensor's data to
 * value.  The library has checked the range against the tensor. */
static void example_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor,
                                         uint8_t value, size_t offset, size_t size)
{
    unsigned char *p = translate(buffer, tensor, offset, size);
    if (p != NULL)
        memset(p, value, size);
}

/* set_tensor (required): host -> device, size bytes from data into the
 * tensor at offset.  ggml_backend_tensor_set(3) lands here. */
static void example_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor,
                                      const void *data, size_t offset, size_t size)
{
    unsigned char *p = translate(buffer, tensor, offset, size);
    if (p != NULL)
        memcpy(p, data, size);
}

/* get_tensor (required): device -> host, size bytes of the tensor at offset
 * into data.  ggml_backend_tensor_get(3) lands here. */
static void example_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor,
                                      void *data, size_t offset, size_t size)
{
    const unsigned char *p = translate(buffer, tensor, offset, size);
    if (p != NULL)
        memcpy(data, p, size);
}

/* cpy_tensor (optional): copy all of src into dst (in this buffer), same
 * type and shape, without going through the host; return false, having done
 * nothing, when src is memory this device cannot reach, and the library
 * copies through host memory (get_tensor, then set_tensor). */
static bool example_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *src,
                                      struct ggml_tensor *dst)
{
    ggml_backend_buffer_t src_buffer = buffer_of(src);
    if (src_buffer == NULL || src_buffer->buft != example_buffer_type())
        return false;
    const size_t n = ggml_nbytes(src);
    const unsigned char *from = translate(src_buffer, src, 0, n);
    unsigned char *to = translate(buffer, dst, 0, n);
    if (from == NULL || to == NULL)
        return false;
    memmove(to, from, n);
    return true;
}

/* clear (required): set every byte of the buffer to value. */
static void example_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    struct example_memory *mem = buffer->context;
    memset(mem->host_copy, value, mem->size);
}

static const struct ggml_backend_buffer_i example_buffer_iface = {
    .free_buffer   = example_buffer_free_buffer,
    .get_base      = example_buffer_get_base,
    /* init_tensor (optional): called for each tensor or view placed in the
     * buffer, to attach per-tensor state (tensor->extra).  None here. */
    .init_tensor   = NULL,
    .memset_tensor = example_buffer_memset_tensor,
    .set_tensor    = example_buffer_set_tensor,
    .get_tensor    = example_buffer_get_tensor,
    .cpy_tensor    = example_buffer_cpy_tensor,
    .clear         = example_buffer_clear,
    /* reset (optional): drop what init_tensor attached.  Nothing here. */
    .reset         = NULL,
};

/* ---------------------------------------------------------- 3. buffer type */

/* get_name (required): the buffer type's name, a string that lives as long
 * as the module. */
static const char *example_buft_get_name(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return EXAMPLE_REG_NAME;
}

/* alloc_buffer (required): get size bytes of device memory (size > 0: the
 * library answers 0-byte requests itself) and wrap them with
 * ggml_backend_buffer_init.  NULL when out of memory; the library logs the
 * failure with the type's name and the size. */
static ggml_backend_buffer_t example_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    /* a real device fails when its memory is full: so does this one */
    if (size > EXAMPLE_MEMORY - atomic_load(&bytes_allocated))
        return NULL;

    struct example_memory *mem = malloc(sizeof *mem);
    if (mem == NULL)
        return NULL;
    mem->host_copy = malloc(size);
    if (mem->host_copy == NULL) {
        free(mem);
        return NULL;
    }
    mem->size = size;
    const size_t span = (size + EXAMPLE_ALIGNMENT - 1) / EXAMPLE_ALIGNMENT * EXAMPLE_ALIGNMENT + 0x10000;
    mem->device_address = atomic_fetch_add(&next_device_address, span);

    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, example_buffer_iface, mem, size);
    if (buffer == NULL) {  /* the library logged why */
        free(mem->host_copy);
        free(mem);
        return NULL;
    }
    atomic_fetch_add(&bytes_allocated, size);
    return buffer;
}

/* get_alignment (optional, default GGML_MEM_ALIGN): the alignment of every
 * tensor's address; the allocators place tensors at multiples of it from
 * the base. */
static size_t example_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return EXAMPLE_ALIGNMENT;
}

/* get_max_size (optional, default SIZE_MAX): the largest buffer the device
 * allocates in one piece; the allocators split larger requests. */
static size_t example_buft_get_max_size(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return EXAMPLE_MAX_BUFFER;
}

static struct ggml_backend_device example_device;

static struct ggml_backend_buffer_type example_buft = {
    .iface = {
        .get_name       = example_buft_get_name,
        .alloc_buffer   = example_buft_alloc_buffer,
        .get_alignment  = example_buft_get_alignment,
        .get_max_size   = example_buft_get_max_size,
        /* get_alloc_size (optional, default ggml_nbytes): bytes a tensor
         * takes, more when kernels read past the end or keep extra data. */
        .get_alloc_size = NULL,
        /* is_host (optional, default false): true only for host memory the
         * CPU may read at tensor->data.  Device memory: leave it NULL. */
        .is_host        = NULL,
    },
    .device  = &example_device,  /* the device the memory belongs to */
    .context = NULL,             /* nothing per buffer type */
};

static ggml_backend_buffer_type_t example_buffer_type(void)
{
    return &example_buft;
}

/* -------------------------------------------------------------- 4. kernels */

/* Address of element (i0, i1, i2, i3) of t, whose data starts at base:
 * the strides nb[] say where each dimension steps, so views, permutations
 * and transpositions need no special case. */
static float *at(unsigned char *base, const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return (float *) (base + i0 * (int64_t) t->nb[0] + i1 * (int64_t) t->nb[1] + i2 * (int64_t) t->nb[2] +
                      i3 * (int64_t) t->nb[3]);
}

/* dst = src0 + src1 or src0 * src1; src1 repeats over src0 (each of its
 * dimensions divides src0's), dst has src0's shape. */
static void kernel_binary(enum ggml_op op, struct ggml_tensor *dst, unsigned char *d,
                          const struct ggml_tensor *src0, unsigned char *a,
                          const struct ggml_tensor *src1, unsigned char *b)
{
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    const float x = *at(a, src0, i0, i1, i2, i3);
                    const float y = *at(b, src1, i0 % src1->ne[0], i1 % src1->ne[1], i2 % src1->ne[2],
                                        i3 % src1->ne[3]);
                    *at(d, dst, i0, i1, i2, i3) = op == GGML_OP_ADD ? x + y : x * y;
                }
}

/* dst = src * s + b, s and b the two floats in op_params (ggml_scale sets
 * b to 0, ggml_scale_bias sets both). */
static void kernel_scale(struct ggml_tensor *dst, unsigned char *d, const struct ggml_tensor *src, unsigned char *a)
{
    float s, b;
    memcpy(&s, &dst->op_params[0], sizeof s);
    memcpy(&b, &dst->op_params[1], sizeof b);
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++)
                    *at(d, dst, i0, i1, i2, i3) = *at(a, src, i0, i1, i2, i3) * s + b;
}

/*
 * MUL_MAT: src0 [K, M, ne02, ne03] (the weights), src1 [K, N, ne12, ne13]
 * (the activations), dst [M, N, ne12, ne13]:
 *     dst[m, n, i2, i3] = sum over k of src0[k, m, j2, j3] * src1[k, n, i2, i3]
 * where src0 repeats over the batch dimensions: j2 = i2 / (ne12 / ne02),
 * j3 = i3 / (ne13 / ne03).  Each result is a dot product of two rows.
 */
static void kernel_mul_mat(struct ggml_tensor *dst, unsigned char *d, const struct ggml_tensor *src0,
                           unsigned char *a, const struct ggml_tensor *src1, unsigned char *b)
{
    const int64_t r2 = src1->ne[2] / src0->ne[2], r3 = src1->ne[3] / src0->ne[3];
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
            for (int64_t n = 0; n < dst->ne[1]; n++)
                for (int64_t m = 0; m < dst->ne[0]; m++) {
                    float sum = 0.0f;
                    for (int64_t k = 0; k < src0->ne[0]; k++)
                        sum += *at(a, src0, k, m, i2 / r2, i3 / r3) * *at(b, src1, k, n, i2, i3);
                    *at(d, dst, m, n, i2, i3) = sum;
                }
}

/* The operations that only describe a new view of existing data: the
 * library has set their data pointers already, there is nothing to run. */
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
 * The one rule of what the device computes, used by supports_op and again
 * by graph_compute (a program may compute a graph without asking).  It
 * looks at the operation, types and shapes only, never at data (which may
 * not exist yet) nor at where the sources are (supports_buft's question).
 */
static bool example_can_compute(const struct ggml_tensor *op)
{
    if (is_layout_op(op->op))
        return true;
    const struct ggml_tensor *src0 = op->src[0], *src1 = op->src[1];
    if (!is_f32(op) || !is_f32(src0))
        return false;
    switch (op->op) {
    case GGML_OP_ADD:
    case GGML_OP_MUL:
        return is_f32(src1) && ggml_are_same_shape(src0, op) && ggml_can_repeat(src1, src0);
    case GGML_OP_SCALE:
        return ggml_are_same_shape(src0, op);
    case GGML_OP_MUL_MAT:
        return is_f32(src1) && src0->ne[0] == src1->ne[0] && op->ne[0] == src0->ne[1] &&
               op->ne[1] == src1->ne[1] && op->ne[2] == src1->ne[2] && op->ne[3] == src1->ne[3] &&
               src0->ne[2] > 0 && src1->ne[2] % src0->ne[2] == 0 && src0->ne[3] > 0 &&
               src1->ne[3] % src0->ne[3] == 0;
    default:
        return false;
    }
}

/* Runs one node that example_can_compute accepted; false (logged) when a
 * tensor is not in this device's memory. */
static bool example_compute_node(struct ggml_tensor *node)
{
    unsigned char *d = device_data(node);
    unsigned char *a = device_data(node->src[0]);
    unsigned char *b = node->src[1] != NULL ? device_data(node->src[1]) : NULL;
    if (d == NULL || a == NULL || (node->src[1] != NULL && b == NULL))
        return false;
    switch (node->op) {
    case GGML_OP_ADD:
    case GGML_OP_MUL:
        kernel_binary(node->op, node, d, node->src[0], a, node->src[1], b);
        return true;
    case GGML_OP_SCALE:
        kernel_scale(node, d, node->src[0], a);
        return true;
    case GGML_OP_MUL_MAT:
        kernel_mul_mat(node, d, node->src[0], a, node->src[1], b);
        return true;
    default:
        return false;
    }
}

/* -------------------------------------------------------------- 5. backend */

/* Identifies the implementation: the same 16 bytes for every backend this
 * plugin makes, different from every other backend's.  Programs compare it
 * with ggml_backend_guid(3). */
static ggml_guid example_guid = {
    0x45, 0x58, 0x41, 0x4d, 0x50, 0x4c, 0x45, 0x2d, 0x67, 0x70, 0x75, 0x2d, 0x8c, 0x31, 0x5e, 0xa7,
};

/* get_name (required): the backend's name; here the device's. */
static const char *example_backend_get_name(ggml_backend_t backend)
{
    (void) backend;
    return EXAMPLE_DEV_NAME;
}

/* free (required): finish the queued work, then release the context and
 * the struct ggml_backend, which init_backend allocated. */
static void example_backend_free(ggml_backend_t backend)
{
    free(backend);
}

/*
 * graph_compute (required): compute the nodes in order.  Skip the layout
 * operations, empty tensors, and nodes without GGML_TENSOR_FLAG_COMPUTE
 * (see ggml_build_forward_select(3)).  A backend that queues the work may
 * return before it is done; synchronize then waits.  This one is
 * synchronous.
 */
static enum ggml_status example_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    (void) backend;
    for (int i = 0; i < ggml_graph_n_nodes(cgraph); i++) {
        struct ggml_tensor *node = ggml_graph_node(cgraph, i);
        if (is_layout_op(node->op) || ggml_is_empty(node) || !(node->flags & GGML_TENSOR_FLAG_COMPUTE))
            continue;
        if (!example_can_compute(node)) {
            example_log_error("cannot compute %s node '%s'", ggml_op_desc(node), node->name);
            return GGML_STATUS_FAILED;
        }
        if (!example_compute_node(node))
            return GGML_STATUS_FAILED;
        atomic_fetch_add(&nodes_computed, 1);
    }
    return GGML_STATUS_SUCCESS;
}

static const struct ggml_backend_i example_backend_iface = {
    .get_name           = example_backend_get_name,
    .free               = example_backend_free,
    /* set_tensor_async, get_tensor_async (optional): queue a transfer on the
     * stream.  NULL: the library uses the blocking set_tensor/get_tensor. */
    .set_tensor_async   = NULL,
    .get_tensor_async   = NULL,
    /* cpy_tensor_async (optional): queue a copy from another backend's
     * tensor, ordered after that backend's queued work.  NULL: the library
     * synchronizes both backends and copies. */
    .cpy_tensor_async   = NULL,
    /* synchronize (optional): wait for everything queued.  NULL is right
     * only for a synchronous backend like this one. */
    .synchronize        = NULL,
    /* graph plans (optional, all four or none): prepare a graph once,
     * compute it many times.  NULL: plans are reported as unsupported. */
    .graph_plan_create  = NULL,
    .graph_plan_free    = NULL,
    .graph_plan_update  = NULL,
    .graph_plan_compute = NULL,
    .graph_compute      = example_backend_graph_compute,
    /* event_record, event_wait (optional, with the device's events): mark a
     * point in the stream, make the stream wait for another's point. */
    .event_record       = NULL,
    .event_wait         = NULL,
    /* graph_optimize (optional): reorder nodes before computing.  NULL keeps
     * the order. */
    .graph_optimize     = NULL,
};

/* --------------------------------------------------------------- 6. device */

/* get_name (required): a short name, unique among all devices; programs
 * find the device with ggml_backend_dev_by_name(3). */
static const char *example_dev_get_name(ggml_backend_dev_t dev)
{
    (void) dev;
    return EXAMPLE_DEV_NAME;
}

/* get_description (required): for people, e.g. the product name. */
static const char *example_dev_get_description(ggml_backend_dev_t dev)
{
    (void) dev;
    return "example GPU (simulated in host memory)";
}

/* get_memory (required): free and total device memory in bytes. */
static void example_dev_get_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes)
{
    (void) dev;
    *total_bytes = EXAMPLE_MEMORY;
    *free_bytes = EXAMPLE_MEMORY - atomic_load(&bytes_allocated);
}

/* get_type (required): GPU, a device with its own memory.  (GPU_UMA shares
 * the host's memory, ACCEL works beside the CPU on host memory.) */
static enum ggml_backend_dev_type example_dev_get_type(ggml_backend_dev_t dev)
{
    (void) dev;
    return GGML_BACKEND_DEVICE_TYPE_GPU;
}

/* get_props (required): every member of *props (cleared by the library);
 * caps must match the optional members provided. */
static void example_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    props->name = example_dev_get_name(dev);
    props->description = example_dev_get_description(dev);
    example_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = example_dev_get_type(dev);
    props->device_id = NULL;  /* e.g. a PCI bus id, when there is one */
    props->caps = (struct ggml_backend_dev_caps) {
        .async                = false,  /* no *_async backend members */
        .host_buffer          = false,  /* no get_host_buffer_type */
        .buffer_from_host_ptr = false,  /* no buffer_from_host_ptr */
        .events               = false,  /* no event members */
    };
}

/* init_backend (required): a new stream on the device; params is the
 * program's string from ggml_backend_dev_init(3), possibly NULL.  NULL on
 * failure (the library reports it).  The library records the backend
 * returned here; a function of the plugin that makes a backend anywhere
 * else returns ggml_backend_publish(backend) instead (see
 * ggml_backend_publish(3)). */
static ggml_backend_t example_dev_init_backend(ggml_backend_dev_t dev, const char *params)
{
    (void) params;
    ggml_backend_t backend = malloc(sizeof *backend);
    if (backend == NULL)
        return NULL;
    *backend = (struct ggml_backend) {
        .guid    = &example_guid,
        .iface   = example_backend_iface,
        .device  = dev,
        .context = NULL,  /* a GPU backend keeps its queue/stream here */
    };
    return backend;
}

/* get_buffer_type (required): the device's memory. */
static ggml_backend_buffer_type_t example_dev_get_buffer_type(ggml_backend_dev_t dev)
{
    (void) dev;
    return example_buffer_type();
}

/* supports_op (required): whether the device computes this node. */
static bool example_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    (void) dev;
    return example_can_compute(op);
}

/* supports_buft (required): whether the device's backends can use tensors in
 * buffers of this type.  Only its own memory: the scheduler copies sources
 * held elsewhere (host memory, other devices) into it first. */
static bool example_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    (void) dev;
    return buft == example_buffer_type();
}

/* offload_op (optional, default false): whether a node whose weights are in
 * host memory is worth computing here anyway, the copy included.  Like a
 * GPU: matrix products over a batch of 32 columns or more. */
static bool example_dev_offload_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    (void) dev;
    return op->op == GGML_OP_MUL_MAT && op->src[1] != NULL && op->src[1]->ne[1] >= 32;
}

static struct ggml_backend_reg example_reg;

static struct ggml_backend_device example_device = {
    .iface = {
        .get_name             = example_dev_get_name,
        .get_description      = example_dev_get_description,
        .get_memory           = example_dev_get_memory,
        .get_type             = example_dev_get_type,
        .get_props            = example_dev_get_props,
        .init_backend         = example_dev_init_backend,
        .get_buffer_type      = example_dev_get_buffer_type,
        /* get_host_buffer_type (optional): pinned host memory for fast
         * transfers.  None here. */
        .get_host_buffer_type = NULL,
        /* buffer_from_host_ptr (optional): wrap host memory (a mapped model
         * file) without copying.  Device memory cannot. */
        .buffer_from_host_ptr = NULL,
        .supports_op          = example_dev_supports_op,
        .supports_buft        = example_dev_supports_buft,
        .offload_op           = example_dev_offload_op,
        /* event_new, event_free, event_synchronize (optional): events, for
         * overlapping the streams of several devices
         * (ggml_backend_sched_new with parallel).  None here. */
        .event_new            = NULL,
        .event_free           = NULL,
        .event_synchronize    = NULL,
    },
    .reg     = &example_reg,  /* the registry that lists the device */
    .context = NULL,          /* a GPU backend keeps its device index here */
};

/* ------------------------------------------------------------ 7. registry */

/* get_name (required): the backend's name, not empty.  One registry of a
 * name is registered at a time; the file is named libggml-<name in lower
 * case>.so. */
static const char *example_reg_get_name(ggml_backend_reg_t reg)
{
    (void) reg;
    return EXAMPLE_REG_NAME;
}

/* get_device_count, get_device (required): the devices found; the loader
 * registers them when the plugin is loaded. */
static size_t example_reg_get_device_count(ggml_backend_reg_t reg)
{
    (void) reg;
    return 1;
}

static ggml_backend_dev_t example_reg_get_device(ggml_backend_reg_t reg, size_t index)
{
    (void) reg;
    return index == 0 ? &example_device : NULL;
}

/* Functions the backend offers beyond the interfaces; programs get them
 * with ggml_backend_reg_get_proc_address(3) and cast them back. */
static size_t example_nodes_computed(void)
{
    return atomic_load(&nodes_computed);
}

/* get_proc_address (optional): the address of such a function by name, or
 * NULL.  A function pointer travels as void *, as with dlsym(3). */
static void *example_reg_get_proc_address(ggml_backend_reg_t reg, const char *name)
{
    (void) reg;
    if (strcmp(name, "example_nodes_computed") == 0)
        return (void *) example_nodes_computed;
    return NULL;
}

static struct ggml_backend_reg example_reg = {
    /* checked by the loader before anything else of the registry is read */
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name         = example_reg_get_name,
        .get_device_count = example_reg_get_device_count,
        .get_device       = example_reg_get_device,
        .get_proc_address = example_reg_get_proc_address,
    },
    .context = NULL,
};

/* -------------------------------------------------------- 8. entry points */

/* What ggml_backend_init returns.  A GPU backend enumerates its devices
 * here (once), and returns NULL when it cannot work at all. */
static ggml_backend_reg_t example_backend_reg(void)
{
    return &example_reg;
}

/* What ggml_backend_score returns, asked before ggml_backend_init: 0 when
 * the plugin cannot run on this machine (no driver, no device, a processor
 * without the instructions it was built for), else a preference among
 * plugins of the same name, higher being better.  Cheap, and leaves
 * nothing behind. */
static int example_backend_score(void)
{
    return 10;
}

/* With -DGGML_BACKEND_DL these define the two exported functions
 * ggml_backend_init and ggml_backend_score; without it, nothing, and a
 * program that compiles this file in registers the backend itself with
 * ggml_backend_register(example_backend_reg()). */
GGML_BACKEND_DL_IMPL(example_backend_reg)
GGML_BACKEND_DL_SCORE_IMPL(example_backend_score)
