/*
 * cpu/repack.c - the "CPU_REPACK" buffer type: CPU memory whose Q4_0,
 * Q8_0 and IQ4_NL weight matrices are stored interleaved for the integer
 * tiles (simd/packed-rows.h), and the K-quants Q4_K, Q5_K and Q6_K in the
 * kernel level's own layout where it has one (AVX512_VNNI: its
 * qgemm_pack and qgemm_unpack; the level is fixed for the process),
 * offered through the CPU registry's "ggml_backend_dev_get_extra_bufts"
 * when the kernel level has integer tiles (AVX2: Q4_0; AVX512_VNNI: the
 * six; NEON with the dot product: the first three).
 *
 * Which tensors are packed (would_pack): of a packable type that the
 * kernel level multiplies with integer tiles, contiguous, not a view,
 * rows a multiple of GGML__QGEMM_ROWS, rows of at most INT32_MAX
 * values.  init_tensor marks them (tensor->extra); any other tensor in
 * such a buffer is stored as in a CPU buffer.  set_tensor, get_tensor
 * and memset_tensor take and give the standard layout at any offset and
 * size: whole groups of rows are packed or unpacked directly, a group
 * only partly written is unpacked, patched and packed again.  The
 * packing permutes the bytes of each group, so clearing the buffer
 * needs no care.  The buffer is not host memory (its data is not in the
 * standard layout): a packed tensor is read only by the CPU's MUL_MAT
 * and MUL_MAT_ID as src0 (ggml__cpu_repack_allows), and copies to other
 * buffers go through get_tensor.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "backend-private.h"
#include "cpu-private.h"
#include "simd/packed-rows.h"

#define ROWS GGML__QGEMM_ROWS

static const char *repack_buft_get_name(ggml_backend_buffer_type_t buft);
static ggml_backend_buffer_t repack_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size);
static size_t repack_buft_get_alignment(ggml_backend_buffer_type_t buft);
static bool repack_buft_is_host(ggml_backend_buffer_type_t buft);

static struct ggml_backend_buffer_type repack_buffer_type = {
    .iface = {
        .get_name = repack_buft_get_name,
        .alloc_buffer = repack_buft_alloc_buffer,
        .get_alignment = repack_buft_get_alignment,
        .get_max_size = NULL,
        .get_alloc_size = NULL,   /* a packed tensor is as large as a plain one */
        .is_host = repack_buft_is_host,
    },
    .device = &ggml__cpu_device,
    .context = NULL,
};

/* tensor->extra of the packed tensors */
static const char packed_mark;

/* Packed by packed-rows.h at every level, or by the level's own qgemm_pack (qgemm_unpack reverses it). */
static bool packs_type(enum ggml_type type)
{
    return ggml__packable_type(type) ||
           ((unsigned) type < GGML_TYPE_COUNT && ggml__kernels()->qgemm_unpack[type] != NULL);
}

bool ggml__cpu_would_pack(const struct ggml_tensor *t)
{
    return packs_type(t->type) && ggml__cpu_integer_products(t->type) && t->view_src == NULL &&
           ggml_is_contiguous(t) && t->ne[1] % ROWS == 0 && t->ne[0] <= INT32_MAX;
}

static bool in_repack_buffer(const struct ggml_tensor *t)
{
    const ggml_backend_buffer_t buffer = t->view_src != NULL ? t->view_src->buffer : t->buffer;
    return buffer != NULL && buffer->buft == &repack_buffer_type;
}

bool ggml__cpu_tensor_packed(const struct ggml_tensor *t)
{
    return t->extra == &packed_mark && in_repack_buffer(t);
}

/* Bytes of one group of rows of t. */
static size_t group_bytes(const struct ggml_tensor *t)
{
    return ROWS * ggml_row_size(t->type, t->ne[0]);
}

/* plain: 16 rows of type of nb blocks; packed: their group (packed-rows.h, or the level's own layout). */
static void pack_group(enum ggml_type type, int64_t nb, const char *plain, char *packed)
{
    ggml__kernels()->qgemm_pack[type](nb, plain, (size_t) nb * ggml_type_size(type), ROWS, packed);
}

static void unpack_group(enum ggml_type type, int64_t nb, const char *packed, char *plain)
{
    const size_t stride = (size_t) nb * ggml_type_size(type);
    if (ggml__kernels()->qgemm_unpack[type] != NULL)
        ggml__kernels()->qgemm_unpack[type](nb, packed, plain, stride);
    else
        ggml__unpack_rows(type, nb, packed, plain, stride);
}

/*
 * Writes [offset, offset + size) of packed tensor t in the standard
 * layout: from data, or (data NULL) bytes equal to value.
 */
static void write_packed(ggml_backend_buffer_t buffer, struct ggml_tensor *t, const void *data, uint8_t value,
                         size_t offset, size_t size, const char *func)
{
    if (size == 0)
        return;
    const size_t gb = group_bytes(t);
    const int64_t nb = t->ne[0] / ggml_blck_size(t->type);
    char *plain = malloc(gb), *packed = malloc(gb);
    if (plain == NULL || packed == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory for %zu bytes to repack tensor '%s': not written",
                  2 * gb, t->name);
        free(plain);
        free(packed);
        return;
    }
    const size_t base = ggml__cpu_buffer_offset(buffer, t);
    for (size_t g0 = offset / gb * gb; g0 < offset + size; g0 += gb) {
        const size_t from = offset > g0 ? offset : g0, to = offset + size < g0 + gb ? offset + size : g0 + gb;
        if (to - from < gb)
            unpack_group(t->type, nb, (const char *) t->data + g0, plain);
        if (data != NULL)
            memcpy(plain + (from - g0), (const char *) data + (from - offset), to - from);
        else
            memset(plain + (from - g0), value, to - from);
        pack_group(t->type, nb, plain, packed);
        ggml__cpu_buffer_write(buffer, base + g0, packed, gb);
    }
    free(plain);
    free(packed);
}

static enum ggml_status repack_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor)
{
    (void) buffer;
    tensor->extra = ggml__cpu_would_pack(tensor) ? (void *) &packed_mark : NULL;
    return GGML_STATUS_SUCCESS;
}

static void repack_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, const void *data,
                              size_t offset, size_t size)
{
    if (ggml__cpu_tensor_packed(tensor))
        write_packed(buffer, tensor, data, 0, offset, size, "ggml_backend_tensor_set");
    else
        ggml__cpu_buffer_write(buffer, ggml__cpu_buffer_offset(buffer, tensor) + offset, data, size);
}

static void repack_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, uint8_t value,
                                 size_t offset, size_t size)
{
    if (ggml__cpu_tensor_packed(tensor)) {
        write_packed(buffer, tensor, NULL, value, offset, size, "ggml_backend_tensor_memset");
        return;
    }
    struct ggml_backend_buffer_i base = ggml__cpu_buffer_iface();
    base.memset_tensor(buffer, tensor, value, offset, size);
}

static void repack_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, void *data,
                              size_t offset, size_t size)
{
    (void) buffer;
    if (!ggml__cpu_tensor_packed(tensor)) {
        memcpy(data, (const char *) tensor->data + offset, size);
        return;
    }
    const size_t gb = group_bytes(tensor);
    const int64_t nb = tensor->ne[0] / ggml_blck_size(tensor->type);
    char *plain = NULL;
    for (size_t g0 = offset / gb * gb; g0 < offset + size; g0 += gb) {
        const size_t from = offset > g0 ? offset : g0, to = offset + size < g0 + gb ? offset + size : g0 + gb;
        if (to - from == gb) {   /* a whole group: straight to the caller */
            unpack_group(tensor->type, nb, (const char *) tensor->data + g0, (char *) data + (g0 - offset));
            continue;
        }
        if (plain == NULL && (plain = malloc(gb)) == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_backend_tensor_get",
                      "out of memory for %zu bytes to unpack tensor '%s': zeros returned", gb, tensor->name);
            memset(data, 0, size);
            return;
        }
        unpack_group(tensor->type, nb, (const char *) tensor->data + g0, plain);
        memcpy((char *) data + (from - offset), plain + (from - g0), to - from);
    }
    free(plain);
}

/* From host memory (any standard-layout buffer); otherwise through get_tensor and set_tensor. */
static bool repack_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *src, struct ggml_tensor *dst)
{
    const ggml_backend_buffer_t src_buffer = src->view_src ? src->view_src->buffer : src->buffer;
    if (src_buffer == NULL || !ggml_backend_buffer_is_host(src_buffer))
        return false;
    repack_set_tensor(buffer, dst, src->data, 0, ggml_nbytes(src));
    return true;
}

static const char *repack_buft_get_name(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return "CPU_REPACK";
}

static ggml_backend_buffer_t repack_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    struct ggml_backend_buffer_i iface = ggml__cpu_buffer_iface();
    iface.init_tensor = repack_init_tensor;
    iface.memset_tensor = repack_memset_tensor;
    iface.set_tensor = repack_set_tensor;
    iface.get_tensor = repack_get_tensor;
    iface.cpy_tensor = repack_cpy_tensor;
    return ggml__cpu_buffer_alloc(buft, iface, size);
}

static size_t repack_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return ggml_backend_buft_get_alignment(ggml_backend_cpu_buffer_type());
}

static bool repack_buft_is_host(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return false;
}

bool ggml__cpu_is_repack_buft(ggml_backend_buffer_type_t buft)
{
    return buft == &repack_buffer_type;
}

bool ggml__cpu_repack_allows(const struct ggml_tensor *op)
{
    /* leaves and layout ops compute nothing: what reads them is checked */
    if (ggml__op_is_noop(op->op))
        return true;
    const struct ggml_tensor *const dst_owner = op->view_src != NULL ? op->view_src : op;
    if (in_repack_buffer(op) && ggml__cpu_would_pack(dst_owner))
        return false;   /* nothing writes packed data */
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor *src = op->src[i];
        if (src == NULL || !in_repack_buffer(src))
            continue;
        if (src->view_src != NULL ? ggml__cpu_would_pack(src->view_src)
                                  : ggml__cpu_would_pack(src) && !(i == 0 && (op->op == GGML_OP_MUL_MAT ||
                                                                              op->op == GGML_OP_MUL_MAT_ID)))
            return false;
    }
    return true;
}

ggml_backend_buffer_type_t *ggml__cpu_extra_bufts(ggml_backend_dev_t dev)
{
    static ggml_backend_buffer_type_t with_repack[] = { &repack_buffer_type, NULL };
    static ggml_backend_buffer_type_t none[] = { NULL };
    (void) dev;
    ggml_cpu_init();
    return ggml__kernels()->qgemm_tile[GGML_TYPE_Q4_0] != NULL ? with_repack : none;
}
