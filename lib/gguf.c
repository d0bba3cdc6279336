/*
 * gguf.c - GGUF files (gguf.h): a reader that trusts nothing, the
 * key/value and tensor tables, editing, and a writer.
 *
 * Reading.  Every read goes through struct source: an absolute position
 * and the bytes that may still be read (the rest of the file, the buffer,
 * or the callback's max_expected_size).  Before anything is allocated for
 * a count or a length, the bytes that count needs at the least are
 * compared with what is left, so memory stays within a small multiple of
 * the source's size whatever the file claims.  Each refusal logs one
 * error naming the source, the offset of the offending field and what was
 * wrong, and the reader returns NULL with nothing leaked.
 *
 * Checked: the magic, the version (2 or 3; 1, 0 and byte-swapped ones
 * refused), the counts (non-negative, coverable by the bytes left), keys
 * (not empty, no NUL inside, no duplicates: found by sorting, so that a
 * file of millions of names costs no more than its reading), value types (arrays of a
 * scalar or of strings, not of arrays), string lengths, the alignment key
 * (u32, a power of two), tensor names (shorter than GGML_MAX_NAME, no NUL
 * inside, no duplicates), dimensions (at most GGML_MAX_DIMS, sizes >= 0,
 * element count and byte size representable), types (ones with blocks,
 * rows a whole number of blocks), and offsets: each tensor's data starts
 * where the previous tensor's padded data ends (the layout the writer
 * makes), so ranges are aligned, in order and never overlap; and the data
 * section's end lies within the source.
 *
 * Values are kept in their file form: scalars and arrays as little-endian
 * bytes of their element type (BOOL as one byte 0 or 1), strings as
 * length plus bytes plus a NUL (so a string with a NUL inside reads short
 * through the C API, as upstream's does).
 *
 * The key "general.alignment" sets the alignment of the file: setting it
 * (u32, a power of two) or removing it moves the tensors' offsets with it,
 * so a written file always agrees with its key.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "ggml-backend.h"
#include "gguf.h"

/* ------------------------------------------------------------ the tables */

struct gguf_str {
    uint64_t len;
    char *s;   /* len bytes and a NUL */
};

struct gguf_kv {
    char *key;
    enum gguf_type type;   /* of the value, or of the elements of an array */
    bool is_array;
    uint64_t n;            /* elements: 1 for a single value */
    void *data;            /* n elements: bytes of type, or struct gguf_str for STRING */
};

struct gguf_tensor_info {
    struct ggml_tensor t;   /* name, type, ne, nb; data and buffer when added for writing */
    uint64_t offset;        /* from the start of the data section */
};

struct gguf_context {
    uint32_t version;
    size_t alignment;
    size_t offset;   /* of the data section in the source */
    size_t size;     /* of the data section, every tensor padded */
    struct gguf_kv *kv;
    int64_t n_kv, cap_kv;
    struct gguf_tensor_info *info;
    int64_t n_info, cap_info;
};

static const char *const type_names[GGUF_TYPE_COUNT] = {
    [GGUF_TYPE_UINT8] = "u8",   [GGUF_TYPE_INT8] = "i8",     [GGUF_TYPE_UINT16] = "u16",
    [GGUF_TYPE_INT16] = "i16",  [GGUF_TYPE_UINT32] = "u32",  [GGUF_TYPE_INT32] = "i32",
    [GGUF_TYPE_FLOAT32] = "f32", [GGUF_TYPE_BOOL] = "bool",  [GGUF_TYPE_STRING] = "str",
    [GGUF_TYPE_ARRAY] = "arr",  [GGUF_TYPE_UINT64] = "u64",  [GGUF_TYPE_INT64] = "i64",
    [GGUF_TYPE_FLOAT64] = "f64",
};

/* Bytes of one element of type in a file; 0 for STRING (variable), ARRAY and values that are not types. */
static size_t type_size(enum gguf_type type)
{
    switch (type) {
    case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL:
        return 1;
    case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16:
        return 2;
    case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32:
        return 4;
    case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64:
        return 8;
    default:
        return 0;
    }
}

const char *gguf_type_name(enum gguf_type type)
{
    return (unsigned) type < GGUF_TYPE_COUNT ? type_names[type] : NULL;
}

static void free_value(struct gguf_kv *kv)
{
    if (kv->type == GGUF_TYPE_STRING && kv->data != NULL) {
        struct gguf_str *str = kv->data;
        for (uint64_t i = 0; i < kv->n; i++)
            free(str[i].s);
    }
    free(kv->data);
    free(kv->key);
    kv->data = NULL;
    kv->key = NULL;
}

void gguf_free(struct gguf_context *ctx)
{
    if (ctx == NULL)
        return;
    for (int64_t i = 0; i < ctx->n_kv; i++)
        free_value(&ctx->kv[i]);
    free(ctx->kv);
    free(ctx->info);
    free(ctx);
}

struct gguf_context *gguf_init_empty(void)
{
    struct gguf_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        ggml__error("out of memory");
        return NULL;
    }
    ctx->version = GGUF_VERSION;
    ctx->alignment = GGUF_DEFAULT_ALIGNMENT;
    return ctx;
}

/* Room for one more element in an array of *cap elements of size bytes (doubling). */
static bool grow(void **array, int64_t n, int64_t *cap, size_t size)
{
    if (n < *cap)
        return true;
    const int64_t want = *cap > 0 ? 2 * *cap : 8;
    if ((uint64_t) want > SIZE_MAX / size)
        return false;
    void *p = realloc(*array, (size_t) want * size);
    if (p == NULL)
        return false;
    *array = p;
    *cap = want;
    return true;
}

/* The padded size of a tensor's data. */
static size_t padded_bytes(const struct ggml_tensor *t, size_t alignment)
{
    return GGML_PAD(ggml_nbytes(t), alignment);
}

/* Offsets of tensors from `from` on, each after the previous one's padded data; the data section's size. */
static void lay_out(struct gguf_context *ctx, int64_t from)
{
    for (int64_t i = from > 0 ? from : 0; i < ctx->n_info; i++)
        ctx->info[i].offset = i == 0 ? 0 : ctx->info[i - 1].offset + padded_bytes(&ctx->info[i - 1].t, ctx->alignment);
    ctx->size = ctx->n_info == 0 ? 0
                                 : ctx->info[ctx->n_info - 1].offset +
                                       padded_bytes(&ctx->info[ctx->n_info - 1].t, ctx->alignment);
}

/* A type of the enum that still exists (removed ones have no blocks); nothing logged. */
static bool tensor_type_ok(uint32_t type)
{
    return type < GGML_TYPE_COUNT && ggml__blck_size_of((enum ggml_type) type) > 0 &&
           ggml__type_size_of((enum ggml_type) type) > 0;
}

/* nb[] of t from its type and ne[] (ne[0] a whole number of blocks). */
static void set_strides(struct ggml_tensor *t)
{
    t->nb[0] = ggml_type_size(t->type);
    t->nb[1] = t->nb[0] * (size_t) (t->ne[0] / ggml_blck_size(t->type));
    for (int d = 2; d < GGML_MAX_DIMS; d++)
        t->nb[d] = t->nb[d - 1] * (size_t) t->ne[d - 1];
}

/* ------------------------------------------------------------ reading */

struct source {
    gguf_reader_callback_t read;
    void *userdata;
    size_t max_chunk;
    uint64_t start;    /* absolute position of the file's first byte (the magic) */
    uint64_t pos;      /* absolute position of the next byte */
    uint64_t left;     /* bytes that may still be read */
    const char *name;  /* for messages: the file name, "buffer" or "callback" */
    const char *func;  /* the public entry point, for messages */
};

/* Logs the one error of a refused source: where and what. */
__attribute__((format(printf, 3, 4))) static void refuse(const struct source *src, uint64_t at, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ggml__log_at(GGML_LOG_LEVEL_ERROR, src->func, "%s: at offset %" PRIu64 ": %s", src->name, at, what);
}

/* Reads n bytes into dst; false (nothing logged) when the source has fewer. */
static bool take(struct source *src, void *dst, uint64_t n)
{
    if (n > src->left)
        return false;
    uint8_t *out = dst;
    uint64_t done = 0;
    while (done < n) {
        const size_t chunk = n - done < src->max_chunk ? (size_t) (n - done) : src->max_chunk;
        const size_t got = src->read(src->userdata, out + done, src->pos + done, chunk);
        if (got > chunk)   /* a callback that claims more than asked for */
            return false;
        done += got;
        if (got < chunk) {
            src->pos += done;
            src->left = 0;   /* the source ended early */
            return false;
        }
    }
    src->pos += n;
    src->left -= n;
    return true;
}

/* Skips n bytes (padding); false when the source has fewer. */
static bool skip(struct source *src, uint64_t n)
{
    if (n > src->left)
        return false;
    src->pos += n;
    src->left -= n;
    return true;
}

/*
 * Integers of the file, little-endian, read as they lie: the library's
 * formats (these and the quantized blocks) assume a little-endian host.
 */
static bool take_u32(struct source *src, uint32_t *v) { return take(src, v, sizeof *v); }
static bool take_u64(struct source *src, uint64_t *v) { return take(src, v, sizeof *v); }
static bool take_i64(struct source *src, int64_t *v) { return take(src, v, sizeof *v); }

/* A string: u64 length, then its bytes; what names it for messages. */
static bool take_string(struct source *src, struct gguf_str *out, const char *what)
{
    const uint64_t at = src->pos;
    uint64_t len;
    if (!take_u64(src, &len)) {
        refuse(src, at, "the file ends inside the length of %s", what);
        return false;
    }
    if (len > src->left) {
        refuse(src, at, "%s claims %" PRIu64 " bytes, %" PRIu64 " are left", what, len, src->left);
        return false;
    }
    char *s = malloc((size_t) len + 1);
    if (s == NULL) {
        refuse(src, at, "out of memory for %s of %" PRIu64 " bytes", what, len);
        return false;
    }
    if (!take(src, s, len)) {
        refuse(src, at + 8, "the file ends inside %s", what);
        free(s);
        return false;
    }
    s[len] = '\0';
    out->len = len;
    out->s = s;
    return true;
}

/* A value of n elements of type (n 1 and !is_array: a single value) into kv->data. */
static bool take_value(struct source *src, struct gguf_kv *kv)
{
    const uint64_t at = src->pos;
    if (kv->type == GGUF_TYPE_STRING) {
        /* each string takes at least its 8-byte length */
        if (kv->n > src->left / 8) {
            refuse(src, at, "key '%s': %" PRIu64 " strings cannot fit in the %" PRIu64 " bytes left", kv->key, kv->n,
                   src->left);
            return false;
        }
        struct gguf_str *str = calloc(kv->n > 0 ? (size_t) kv->n : 1, sizeof *str);
        if (str == NULL) {
            refuse(src, at, "key '%s': out of memory for %" PRIu64 " strings", kv->key, kv->n);
            return false;
        }
        kv->data = str;
        for (uint64_t i = 0; i < kv->n; i++)
            if (!take_string(src, &str[i], "a string value"))
                return false;
        return true;
    }
    const size_t size = type_size(kv->type);
    if (kv->n > src->left / size) {
        refuse(src, at, "key '%s': %" PRIu64 " values of %zu bytes cannot fit in the %" PRIu64 " bytes left", kv->key,
               kv->n, size, src->left);
        return false;
    }
    const size_t bytes = (size_t) kv->n * size;
    kv->data = malloc(bytes > 0 ? bytes : 1);
    if (kv->data == NULL) {
        refuse(src, at, "key '%s': out of memory for %zu bytes", kv->key, bytes);
        return false;
    }
    if (!take(src, kv->data, bytes)) {
        refuse(src, at, "the file ends inside the value of key '%s'", kv->key);
        return false;
    }
    if (kv->type == GGUF_TYPE_BOOL)
        for (size_t i = 0; i < bytes; i++)
            ((uint8_t *) kv->data)[i] = ((uint8_t *) kv->data)[i] != 0;
    return true;
}

static int64_t find_key(const struct gguf_context *ctx, const char *key)
{
    for (int64_t i = 0; i < ctx->n_kv; i++)
        if (strcmp(ctx->kv[i].key, key) == 0)
            return i;
    return -1;
}

static int64_t find_tensor(const struct gguf_context *ctx, const char *name)
{
    for (int64_t i = 0; i < ctx->n_info; i++)
        if (strcmp(ctx->info[i].t.name, name) == 0)
            return i;
    return -1;
}

/* A name of the file (a key or a tensor name) and where it starts. */
struct name_at {
    const char *name;
    uint64_t at;
};

static int by_name_then_offset(const void *pa, const void *pb)
{
    const struct name_at *a = pa, *b = pb;
    const int c = strcmp(a->name, b->name);
    return c != 0 ? c : a->at < b->at ? -1 : a->at > b->at;
}

/*
 * Refuses (one error, at the offset of the first repetition in the file)
 * when two of the n names are equal: sorted, in O(n log n), so that a file
 * of a million names is checked as quickly as it is read.
 */
static bool all_different(struct source *src, struct name_at *names, int64_t n, const char *what)
{
    qsort(names, (size_t) n, sizeof *names, by_name_then_offset);
    const struct name_at *repeated = NULL;
    for (int64_t i = 1; i < n; i++)
        if (strcmp(names[i - 1].name, names[i].name) == 0 && (repeated == NULL || names[i].at < repeated->at))
            repeated = &names[i];
    if (repeated != NULL)
        refuse(src, repeated->at, "%s '%s' appears twice", what, repeated->name);
    return repeated == NULL;
}

/* The key/value pair at the source's position appended to ctx (duplicates: all_different). */
static bool read_kv(struct source *src, struct gguf_context *ctx)
{
    const uint64_t at = src->pos;
    struct gguf_str key;
    if (!take_string(src, &key, "a key"))
        return false;
    if (key.len == 0 || strlen(key.s) != key.len) {
        if (key.len == 0)
            refuse(src, at, "a key is empty");
        else
            refuse(src, at, "key '%s' has a NUL byte inside", key.s);
        free(key.s);
        return false;
    }
    if (!grow((void **) &ctx->kv, ctx->n_kv, &ctx->cap_kv, sizeof *ctx->kv)) {
        refuse(src, at, "out of memory for key '%s'", key.s);
        free(key.s);
        return false;
    }
    struct gguf_kv *kv = &ctx->kv[ctx->n_kv++];
    *kv = (struct gguf_kv) { .key = key.s, .n = 1 };
    const uint64_t type_at = src->pos;
    uint32_t type;
    if (!take_u32(src, &type)) {
        refuse(src, type_at, "the file ends inside the type of key '%s'", kv->key);
        return false;
    }
    if (type == GGUF_TYPE_ARRAY) {
        kv->is_array = true;
        if (!take_u32(src, &type) || !take_u64(src, &kv->n)) {
            refuse(src, type_at, "the file ends inside the array header of key '%s'", kv->key);
            return false;
        }
    }
    if (type >= GGUF_TYPE_COUNT || type == GGUF_TYPE_ARRAY) {
        refuse(src, type_at, "key '%s' has %s type %" PRIu32, kv->key, kv->is_array ? "an array of" : "the invalid",
               type);
        return false;
    }
    kv->type = (enum gguf_type) type;
    return take_value(src, kv);
}

/* The alignment the pairs give (general.alignment), 0 when the key is there but unusable. */
static size_t alignment_of(const struct gguf_context *ctx)
{
    const int64_t id = find_key(ctx, GGUF_KEY_GENERAL_ALIGNMENT);
    if (id < 0)
        return GGUF_DEFAULT_ALIGNMENT;
    const struct gguf_kv *kv = &ctx->kv[id];
    if (kv->type != GGUF_TYPE_UINT32 || kv->is_array)
        return 0;
    uint32_t a;
    memcpy(&a, kv->data, sizeof a);
    return a != 0 && (a & (a - 1)) == 0 ? a : 0;
}

/* The tensor description at the source's position appended to ctx (duplicates: all_different). */
static bool read_tensor_info(struct source *src, struct gguf_context *ctx)
{
    const uint64_t at = src->pos;
    struct gguf_str name;
    if (!take_string(src, &name, "a tensor name"))
        return false;
    if (name.len >= GGML_MAX_NAME || strlen(name.s) != name.len) {
        if (name.len >= GGML_MAX_NAME)
            refuse(src, at, "a tensor name of %" PRIu64 " bytes: at most %d", name.len, GGML_MAX_NAME - 1);
        else
            refuse(src, at, "tensor name '%s' has a NUL byte inside", name.s);
        free(name.s);
        return false;
    }
    if (!grow((void **) &ctx->info, ctx->n_info, &ctx->cap_info, sizeof *ctx->info)) {
        refuse(src, at, "out of memory for tensor '%s'", name.s);
        free(name.s);
        return false;
    }
    struct gguf_tensor_info *info = &ctx->info[ctx->n_info];
    memset(info, 0, sizeof *info);
    struct ggml_tensor *t = &info->t;
    memcpy(t->name, name.s, (size_t) name.len + 1);
    free(name.s);

    const uint64_t dims_at = src->pos;
    uint32_t n_dims;
    if (!take_u32(src, &n_dims)) {
        refuse(src, dims_at, "the file ends inside tensor '%s'", t->name);
        return false;
    }
    if (n_dims > GGML_MAX_DIMS) {
        refuse(src, dims_at, "tensor '%s' has %" PRIu32 " dimensions, at most %d", t->name, n_dims, GGML_MAX_DIMS);
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        t->ne[d] = 1;
        if ((uint32_t) d < n_dims && !take_i64(src, &t->ne[d])) {
            refuse(src, dims_at, "the file ends inside the shape of tensor '%s'", t->name);
            return false;
        }
        if (t->ne[d] < 0) {
            refuse(src, dims_at, "tensor '%s' has %" PRId64 " elements along dimension %d", t->name, t->ne[d], d);
            return false;
        }
    }
    const uint64_t type_at = src->pos;
    uint32_t type;
    if (!take_u32(src, &type)) {
        refuse(src, type_at, "the file ends inside tensor '%s'", t->name);
        return false;
    }
    if (!tensor_type_ok(type)) {
        refuse(src, type_at, "tensor '%s' has the invalid type %" PRIu32, t->name, type);
        return false;
    }
    t->type = (enum ggml_type) type;
    const int64_t block = ggml_blck_size(t->type);
    if (t->ne[0] % block != 0) {
        refuse(src, type_at, "tensor '%s' of type %s has rows of %" PRId64 " values, not a multiple of %" PRId64,
               t->name, ggml_type_name(t->type), t->ne[0], block);
        return false;
    }
    /*
     * ggml_new_tensor's rule: with empty extents counted as 1, the elements
     * within int64_t and the bytes within size_t (here less the alignment,
     * for the padding), so that the context can hold the tensor
     */
    uint64_t bytes = ggml_type_size(t->type);
    int64_t count = block;
    bool too_large = false;
    for (int d = 0; d < GGML_MAX_DIMS && !too_large; d++) {
        int64_t step = d == 0 ? t->ne[0] / block : t->ne[d];
        step = step == 0 ? 1 : step;
        too_large = __builtin_mul_overflow(bytes, (uint64_t) step, &bytes) ||
                    __builtin_mul_overflow(count, step, &count);
    }
    if (too_large || bytes > SIZE_MAX - ctx->alignment) {
        refuse(src, dims_at, "tensor '%s' of type %s with shape %" PRId64 " x %" PRId64 " x %" PRId64 " x %" PRId64
               " has more elements or bytes than can be counted", t->name, ggml_type_name(t->type), t->ne[0], t->ne[1],
               t->ne[2], t->ne[3]);
        return false;
    }
    set_strides(t);
    const uint64_t offset_at = src->pos;
    if (!take_u64(src, &info->offset)) {
        refuse(src, offset_at, "the file ends inside tensor '%s'", t->name);
        return false;
    }
    /* the writer's layout: right after the previous tensor's padded data */
    const uint64_t expected = ctx->size;
    if (info->offset != expected) {
        refuse(src, offset_at, "tensor '%s' has data at offset %" PRIu64 ", expected %" PRIu64
               " (aligned to %zu, after the previous tensor)", t->name, info->offset, expected, ctx->alignment);
        return false;
    }
    const size_t padded = padded_bytes(t, ctx->alignment);
    if (padded > SIZE_MAX - ctx->size) {
        refuse(src, offset_at, "the data section would be larger than size_t counts at tensor '%s'", t->name);
        return false;
    }
    ctx->size += padded;
    ctx->n_info++;
    return true;
}

/*
 * The context of a source's tensors (params.ctx), data read from the
 * source unless no_alloc: one I8 tensor holding the data section up to
 * the last tensor's last byte (its final padding, which a file may lack,
 * is not kept), the tensors pointing into it.
 */
static bool make_tensors(struct source *src, struct gguf_context *ctx, struct gguf_init_params params)
{
    const int64_t n = ctx->n_info;
    const uint64_t data_end = n == 0 ? 0 : ctx->info[n - 1].offset + ggml_nbytes(&ctx->info[n - 1].t);
    if (!params.no_alloc && data_end > src->left) {
        refuse(src, src->pos, "the tensors' data needs %" PRIu64 " bytes, the file has %" PRIu64 " left", data_end,
               src->left);
        return false;
    }
    /* data_end is now at most the source's size */
    const size_t overhead = ggml_tensor_overhead();
    if ((uint64_t) n + 1 > SIZE_MAX / overhead ||
        (!params.no_alloc && data_end > SIZE_MAX - ((size_t) n + 1) * overhead)) {
        refuse(src, src->pos, "a context for %" PRId64 " tensors would be larger than size_t counts", n);
        return false;
    }
    const size_t mem = ((size_t) n + 1) * overhead + (params.no_alloc ? 0 : (size_t) data_end);
    struct ggml_init_params ip = { mem, NULL, params.no_alloc };
    struct ggml_context *tctx = ggml_init(ip);
    if (tctx == NULL)
        return false; /* ggml_init logged it */
    char *blob = NULL;
    if (!params.no_alloc) {
        struct ggml_tensor *data = ggml_new_tensor_1d(tctx, GGML_TYPE_I8, (int64_t) data_end);
        if (data == NULL) {
            refuse(src, src->pos, "no room for the %" PRIu64 " bytes of tensor data", data_end);
            ggml_free(tctx);
            return false;
        }
        ggml_set_name(data, "GGUF tensor data binary blob");
        blob = data->data;
        const uint64_t at = src->pos;
        if (!take(src, blob, data_end)) {
            refuse(src, at, "the file ends inside the tensors' data");
            ggml_free(tctx);
            return false;
        }
    }
    ggml_set_no_alloc(tctx, true);
    for (int64_t i = 0; i < n; i++) {
        const struct gguf_tensor_info *info = &ctx->info[i];
        struct ggml_tensor *t = ggml_new_tensor(tctx, info->t.type, GGML_MAX_DIMS, info->t.ne);
        if (t == NULL) {
            refuse(src, src->pos, "no room for tensor '%s' in its context", info->t.name);
            ggml_free(tctx);
            return false;
        }
        ggml_set_name(t, info->t.name);
        if (blob != NULL) {
            t->data = blob + info->offset;
            ctx->info[i].t.data = t->data;   /* what gguf_write_to_file writes, while tctx lives */
        }
    }
    ggml_set_no_alloc(tctx, params.no_alloc);
    *params.ctx = tctx;
    return true;
}

/* The whole reading of a source: the context, or NULL after one logged error. */
static struct gguf_context *read_source(struct source *src, struct gguf_init_params params)
{
    if (params.ctx != NULL)
        *params.ctx = NULL;
    struct gguf_context *ctx = gguf_init_empty();
    if (ctx == NULL)
        return NULL;
    struct name_at *names = NULL;
    char magic[4];
    uint64_t at = src->pos;
    if (!take(src, magic, sizeof magic)) {
        refuse(src, at, "shorter than the 4 bytes of the magic");
        goto fail;
    }
    if (memcmp(magic, GGUF_MAGIC, 4) != 0) {
        refuse(src, at, "not a GGUF file (the magic is %02x %02x %02x %02x, not \"GGUF\")", (uint8_t) magic[0],
               (uint8_t) magic[1], (uint8_t) magic[2], (uint8_t) magic[3]);
        goto fail;
    }
    at = src->pos;
    if (!take_u32(src, &ctx->version)) {
        refuse(src, at, "the file ends inside the version");
        goto fail;
    }
    if ((ctx->version & 0xffffu) == 0 && ctx->version != 0) {
        refuse(src, at, "version %#" PRIx32 ": a big-endian file (or a damaged one); only little-endian files are read",
               ctx->version);
        goto fail;
    }
    if (ctx->version < 2 || ctx->version > GGUF_VERSION) {
        refuse(src, at, "version %" PRIu32 " is not read (versions 2 and %d are)", ctx->version, GGUF_VERSION);
        goto fail;
    }
    int64_t n_tensors, n_kv;
    at = src->pos;
    if (!take_i64(src, &n_tensors) || !take_i64(src, &n_kv)) {
        refuse(src, at, "the file ends inside the header");
        goto fail;
    }
    /* a pair takes at least 8 + 1 + 4 + 1 bytes, a tensor description 8 + 4 + 4 + 8 */
    if (n_tensors < 0 || (uint64_t) n_tensors > src->left / 24) {
        refuse(src, at, "%" PRId64 " tensors cannot be described in the %" PRIu64 " bytes left", n_tensors, src->left);
        goto fail;
    }
    if (n_kv < 0 || (uint64_t) n_kv > src->left / 14) {
        refuse(src, at + 8, "%" PRId64 " key/value pairs cannot fit in the %" PRIu64 " bytes left", n_kv, src->left);
        goto fail;
    }
    /* where each name starts, for all_different: no larger than the counts checked above */
    names = malloc((size_t) (n_kv > n_tensors ? n_kv : n_tensors) * sizeof *names + 1);
    if (names == NULL) {
        refuse(src, at, "out of memory for %" PRId64 " names", n_kv > n_tensors ? n_kv : n_tensors);
        goto fail;
    }
    for (int64_t i = 0; i < n_kv; i++) {
        names[i].at = src->pos;
        if (!read_kv(src, ctx))
            goto fail;
        names[i].name = ctx->kv[i].key;
    }
    if (!all_different(src, names, n_kv, "key"))
        goto fail;
    ctx->alignment = alignment_of(ctx);
    if (ctx->alignment == 0) {
        const struct gguf_kv *kv = &ctx->kv[find_key(ctx, GGUF_KEY_GENERAL_ALIGNMENT)];
        refuse(src, src->pos, "key %s must be a u32 power of two, it is %s%s", GGUF_KEY_GENERAL_ALIGNMENT,
               kv->is_array ? "an array of " : "", kv->type == GGUF_TYPE_UINT32 ? "another value" : type_names[kv->type]);
        goto fail;
    }
    for (int64_t i = 0; i < n_tensors; i++) {
        names[i].at = src->pos;
        if (!read_tensor_info(src, ctx))
            goto fail;
    }
    for (int64_t i = 0; i < n_tensors; i++)
        names[i].name = ctx->info[i].t.name;   /* after the table stopped moving */
    if (!all_different(src, names, n_tensors, "tensor"))
        goto fail;
    if (n_tensors > 0) {
        at = src->pos;
        /* padding counts from the file's start, as the writer's does */
        const uint64_t used = src->pos - src->start;
        if (!skip(src, GGML_PAD(used, ctx->alignment) - used)) {
            refuse(src, at, "the file ends before its data section");
            goto fail;
        }
    }
    ctx->offset = (size_t) src->pos;
    if (params.ctx != NULL && !make_tensors(src, ctx, params))
        goto fail;
    free(names);
    return ctx;
fail:
    free(names);
    gguf_free(ctx);
    return NULL;
}

struct gguf_context *gguf_init_from_callback(gguf_reader_callback_t callback, void *userdata, size_t max_chunk_read,
                                             uint64_t max_expected_size, struct gguf_init_params params)
{
    if (callback == NULL) {
        ggml__error("callback is NULL");
        return NULL;
    }
    struct source src = { callback, userdata, max_chunk_read > 0 ? max_chunk_read : SIZE_MAX, 0, 0, max_expected_size,
                          "callback", __func__ };
    return read_source(&src, params);
}

struct memory_source {
    const uint8_t *data;
    size_t size;
};

static size_t read_memory(void *userdata, void *output, uint64_t offset, size_t len)
{
    const struct memory_source *m = userdata;
    if (offset >= m->size)
        return 0;
    const size_t n = len < m->size - (size_t) offset ? len : m->size - (size_t) offset;
    memcpy(output, m->data + offset, n);
    return n;
}

struct gguf_context *gguf_init_from_buffer(const void *data, size_t size, struct gguf_init_params params)
{
    if (data == NULL || size == 0) {
        ggml__error("no data (%s, %zu bytes)", data == NULL ? "NULL" : "not NULL", size);
        return NULL;
    }
    struct memory_source m = { data, size };
    struct source src = { read_memory, &m, SIZE_MAX, 0, 0, size, "buffer", __func__ };
    return read_source(&src, params);
}

struct file_source {
    FILE *file;
    uint64_t pos;   /* where the stream is */
};

static size_t read_file(void *userdata, void *output, uint64_t offset, size_t len)
{
    struct file_source *f = userdata;
    if (offset != f->pos) {
        if (offset > INT64_MAX || fseeko(f->file, (off_t) offset, SEEK_SET) != 0)
            return 0;
        f->pos = offset;
    }
    const size_t n = fread(output, 1, len, f->file);
    f->pos += n;
    return n;
}

/* Reads the open stream file from where it is; name for messages. */
static struct gguf_context *read_stream(FILE *file, const char *name, const char *func, struct gguf_init_params params)
{
    const off_t start = ftello(file);
    off_t end = -1;
    if (start >= 0 && fseeko(file, 0, SEEK_END) == 0)
        end = ftello(file);
    if (start < 0 || end < start || fseeko(file, start, SEEK_SET) != 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s: not a seekable file (%s)", name, strerror(errno));
        return NULL;
    }
    struct file_source f = { file, (uint64_t) start };
    struct source src = { read_file, &f, SIZE_MAX, (uint64_t) start, (uint64_t) start, (uint64_t) (end - start), name,
                          func };
    return read_source(&src, params);
}

struct gguf_context *gguf_init_from_file_ptr(FILE *file, struct gguf_init_params params)
{
    if (file == NULL) {
        ggml__error("file is NULL");
        return NULL;
    }
    return read_stream(file, "stream", __func__, params);
}

struct gguf_context *gguf_init_from_file(const char *fname, struct gguf_init_params params)
{
    if (fname == NULL) {
        ggml__error("fname is NULL");
        return NULL;
    }
    FILE *file = fopen(fname, "rb");
    if (file == NULL) {
        ggml__error("cannot open '%s': %s", fname, strerror(errno));
        return NULL;
    }
    struct gguf_context *ctx = read_stream(file, fname, __func__, params);
    fclose(file);
    return ctx;
}

/* ------------------------------------------------------------ getters */

uint32_t gguf_get_version(const struct gguf_context *ctx)
{
    return ctx != NULL ? ctx->version : 0;
}

size_t gguf_get_alignment(const struct gguf_context *ctx)
{
    return ctx != NULL ? ctx->alignment : 0;
}

size_t gguf_get_data_offset(const struct gguf_context *ctx)
{
    return ctx != NULL ? ctx->offset : 0;
}

int64_t gguf_get_n_kv(const struct gguf_context *ctx)
{
    return ctx != NULL ? ctx->n_kv : 0;
}

int64_t gguf_find_key(const struct gguf_context *ctx, const char *key)
{
    return ctx != NULL && key != NULL ? find_key(ctx, key) : -1;
}

/* Pair key_id of ctx, or NULL after logging for func. */
static const struct gguf_kv *pair(const struct gguf_context *ctx, int64_t key_id, const char *func)
{
    if (ctx == NULL || key_id < 0 || key_id >= ctx->n_kv) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "no key %" PRId64 " (the context has %" PRId64 ")", key_id,
                     ctx != NULL ? ctx->n_kv : 0);
        return NULL;
    }
    return &ctx->kv[key_id];
}

const char *gguf_get_key(const struct gguf_context *ctx, int64_t key_id)
{
    const struct gguf_kv *kv = pair(ctx, key_id, __func__);
    return kv != NULL ? kv->key : NULL;
}

enum gguf_type gguf_get_kv_type(const struct gguf_context *ctx, int64_t key_id)
{
    const struct gguf_kv *kv = pair(ctx, key_id, __func__);
    return kv == NULL ? GGUF_TYPE_COUNT : kv->is_array ? GGUF_TYPE_ARRAY : kv->type;
}

enum gguf_type gguf_get_arr_type(const struct gguf_context *ctx, int64_t key_id)
{
    const struct gguf_kv *kv = pair(ctx, key_id, __func__);
    if (kv != NULL && !kv->is_array) {
        ggml__error("key '%s' is not an array", kv->key);
        return GGUF_TYPE_COUNT;
    }
    return kv != NULL ? kv->type : GGUF_TYPE_COUNT;
}

/* The single value of pair key_id if it has type, else NULL after logging for func. */
static const void *single(const struct gguf_context *ctx, int64_t key_id, enum gguf_type type, const char *func)
{
    const struct gguf_kv *kv = pair(ctx, key_id, func);
    if (kv == NULL)
        return NULL;
    if (kv->is_array || kv->type != type) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "key '%s' holds %s%s, not one %s", kv->key,
                     kv->is_array ? "an array of " : "", type_names[kv->type], type_names[type]);
        return NULL;
    }
    return kv->data;
}

#define SCALAR_GETTER(name, ctype, gtype)                                          \
    ctype name(const struct gguf_context *ctx, int64_t key_id)                     \
    {                                                                              \
        const void *p = single(ctx, key_id, gtype, __func__);                      \
        ctype v = 0;                                                               \
        if (p != NULL)                                                             \
            memcpy(&v, p, sizeof v);                                               \
        return v;                                                                  \
    }

SCALAR_GETTER(gguf_get_val_u8, uint8_t, GGUF_TYPE_UINT8)
SCALAR_GETTER(gguf_get_val_i8, int8_t, GGUF_TYPE_INT8)
SCALAR_GETTER(gguf_get_val_u16, uint16_t, GGUF_TYPE_UINT16)
SCALAR_GETTER(gguf_get_val_i16, int16_t, GGUF_TYPE_INT16)
SCALAR_GETTER(gguf_get_val_u32, uint32_t, GGUF_TYPE_UINT32)
SCALAR_GETTER(gguf_get_val_i32, int32_t, GGUF_TYPE_INT32)
SCALAR_GETTER(gguf_get_val_f32, float, GGUF_TYPE_FLOAT32)
SCALAR_GETTER(gguf_get_val_u64, uint64_t, GGUF_TYPE_UINT64)
SCALAR_GETTER(gguf_get_val_i64, int64_t, GGUF_TYPE_INT64)
SCALAR_GETTER(gguf_get_val_f64, double, GGUF_TYPE_FLOAT64)

bool gguf_get_val_bool(const struct gguf_context *ctx, int64_t key_id)
{
    const uint8_t *p = single(ctx, key_id, GGUF_TYPE_BOOL, __func__);
    return p != NULL && *p != 0;
}

const char *gguf_get_val_str(const struct gguf_context *ctx, int64_t key_id)
{
    const struct gguf_str *s = single(ctx, key_id, GGUF_TYPE_STRING, __func__);
    return s != NULL ? s->s : NULL;
}

const void *gguf_get_val_data(const struct gguf_context *ctx, int64_t key_id)
{
    const struct gguf_kv *kv = pair(ctx, key_id, __func__);
    if (kv != NULL && (kv->is_array || kv->type == GGUF_TYPE_STRING)) {
        ggml__error("key '%s' holds %s, not one number or bool", kv->key, kv->is_array ? "an array" : "a string");
        return NULL;
    }
    return kv != NULL ? kv->data : NULL;
}

size_t gguf_get_arr_n(const struct gguf_context *ctx, int64_t key_id)
{
    const struct gguf_kv *kv = pair(ctx, key_id, __func__);
    return kv != NULL ? (size_t) kv->n : 0;
}

const void *gguf_get_arr_data(const struct gguf_context *ctx, int64_t key_id)
{
    const struct gguf_kv *kv = pair(ctx, key_id, __func__);
    if (kv != NULL && kv->type == GGUF_TYPE_STRING) {
        ggml__error("key '%s' holds strings: gguf_get_arr_str reads them", kv->key);
        return NULL;
    }
    return kv != NULL ? kv->data : NULL;
}

const char *gguf_get_arr_str(const struct gguf_context *ctx, int64_t key_id, size_t i)
{
    const struct gguf_kv *kv = pair(ctx, key_id, __func__);
    if (kv == NULL)
        return NULL;
    if (kv->type != GGUF_TYPE_STRING) {
        ggml__error("key '%s' does not hold strings", kv->key);
        return NULL;
    }
    if (i >= kv->n) {
        ggml__error("key '%s' has no string %zu (it has %" PRIu64 ")", kv->key, i, kv->n);
        return NULL;
    }
    return ((const struct gguf_str *) kv->data)[i].s;
}

int64_t gguf_get_n_tensors(const struct gguf_context *ctx)
{
    return ctx != NULL ? ctx->n_info : 0;
}

int64_t gguf_find_tensor(const struct gguf_context *ctx, const char *name)
{
    return ctx != NULL && name != NULL ? find_tensor(ctx, name) : -1;
}

/* Tensor tensor_id of ctx, or NULL after logging for func. */
static const struct gguf_tensor_info *tensor_info(const struct gguf_context *ctx, int64_t tensor_id, const char *func)
{
    if (ctx == NULL || tensor_id < 0 || tensor_id >= ctx->n_info) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "no tensor %" PRId64 " (the context has %" PRId64 ")", tensor_id,
                     ctx != NULL ? ctx->n_info : 0);
        return NULL;
    }
    return &ctx->info[tensor_id];
}

size_t gguf_get_tensor_offset(const struct gguf_context *ctx, int64_t tensor_id)
{
    const struct gguf_tensor_info *info = tensor_info(ctx, tensor_id, __func__);
    return info != NULL ? (size_t) info->offset : 0;
}

const char *gguf_get_tensor_name(const struct gguf_context *ctx, int64_t tensor_id)
{
    const struct gguf_tensor_info *info = tensor_info(ctx, tensor_id, __func__);
    return info != NULL ? info->t.name : NULL;
}

const int64_t *gguf_get_tensor_ne(const struct gguf_context *ctx, int64_t tensor_id)
{
    const struct gguf_tensor_info *info = tensor_info(ctx, tensor_id, __func__);
    return info != NULL ? info->t.ne : NULL;
}

enum ggml_type gguf_get_tensor_type(const struct gguf_context *ctx, int64_t tensor_id)
{
    const struct gguf_tensor_info *info = tensor_info(ctx, tensor_id, __func__);
    return info != NULL ? info->t.type : GGML_TYPE_COUNT;
}

size_t gguf_get_tensor_size(const struct gguf_context *ctx, int64_t tensor_id)
{
    const struct gguf_tensor_info *info = tensor_info(ctx, tensor_id, __func__);
    return info != NULL ? ggml_nbytes(&info->t) : 0;
}

/* ------------------------------------------------------------ editing */

/* After a change to the alignment key: the alignment and the offsets follow it. */
static void follow_alignment(struct gguf_context *ctx)
{
    const size_t a = alignment_of(ctx);
    ctx->alignment = a != 0 ? a : GGUF_DEFAULT_ALIGNMENT;
    lay_out(ctx, 0);
}

int64_t gguf_remove_key(struct gguf_context *ctx, const char *key)
{
    if (ctx == NULL || key == NULL) {
        ggml__error("%s is NULL", ctx == NULL ? "ctx" : "key");
        return -1;
    }
    const int64_t id = find_key(ctx, key);
    if (id < 0)
        return -1;
    /* key may be the pair's own string (gguf_get_key): compared before it is freed */
    const bool alignment = strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0;
    free_value(&ctx->kv[id]);
    memmove(&ctx->kv[id], &ctx->kv[id + 1], (size_t) (ctx->n_kv - id - 1) * sizeof *ctx->kv);
    ctx->n_kv--;
    if (alignment)
        follow_alignment(ctx);
    return id;
}

/*
 * Sets key to n elements of type (an array if is_array) copied from
 * data (for STRING: n C strings); false after logging for func.
 */
static bool set_value(struct gguf_context *ctx, const char *key, enum gguf_type type, bool is_array, const void *data,
                      size_t n, const char *func)
{
    if (ctx == NULL || key == NULL || key[0] == '\0' || (data == NULL && n > 0)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s", ctx == NULL ? "ctx is NULL" : key == NULL ? "key is NULL"
                                                     : key[0] == '\0' ? "the key is empty" : "data is NULL");
        return false;
    }
    if ((unsigned) type >= GGUF_TYPE_COUNT || type == GGUF_TYPE_ARRAY) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "key '%s': %d is not an element type", key, (int) type);
        return false;
    }
    const bool alignment = strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0;
    if (alignment) {
        uint32_t a = 0;
        if (type == GGUF_TYPE_UINT32 && !is_array)
            memcpy(&a, data, sizeof a);
        if (a == 0 || (a & (a - 1)) != 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "key %s must be a u32 power of two", key);
            return false;
        }
    }
    struct gguf_kv kv = { .type = type, .is_array = is_array, .n = n };
    kv.key = strdup(key);
    const size_t size = type_size(type);
    if (type == GGUF_TYPE_STRING) {
        kv.data = calloc(n > 0 ? n : 1, sizeof(struct gguf_str));
        for (size_t i = 0; kv.data != NULL && i < n; i++) {
            const char *s = ((const char *const *) data)[i];
            struct gguf_str *str = &((struct gguf_str *) kv.data)[i];
            str->len = s != NULL ? strlen(s) : 0;
            str->s = strdup(s != NULL ? s : "");
            if (str->s == NULL) {
                kv.n = i;
                free_value(&kv);
                break;
            }
        }
    } else if (n <= SIZE_MAX / size) {
        kv.data = malloc(n * size > 0 ? n * size : 1);
        if (kv.data != NULL && n > 0)
            memcpy(kv.data, data, n * size);
        if (kv.data != NULL && type == GGUF_TYPE_BOOL)
            for (size_t i = 0; i < n; i++)
                ((uint8_t *) kv.data)[i] = ((const uint8_t *) kv.data)[i] != 0;
    }
    if (kv.key == NULL || kv.data == NULL || !grow((void **) &ctx->kv, ctx->n_kv, &ctx->cap_kv, sizeof *ctx->kv)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory for key '%s'", key);
        free_value(&kv);
        return false;
    }
    /* the old value goes, the new one is appended */
    const int64_t old = find_key(ctx, key);
    if (old >= 0) {
        free_value(&ctx->kv[old]);
        memmove(&ctx->kv[old], &ctx->kv[old + 1], (size_t) (ctx->n_kv - old - 1) * sizeof *ctx->kv);
        ctx->n_kv--;
    }
    ctx->kv[ctx->n_kv++] = kv;
    if (alignment)
        follow_alignment(ctx);
    return true;
}

#define SCALAR_SETTER(name, ctype, gtype)                                          \
    void name(struct gguf_context *ctx, const char *key, ctype val)                \
    {                                                                              \
        set_value(ctx, key, gtype, false, &val, 1, __func__);                      \
    }

SCALAR_SETTER(gguf_set_val_u8, uint8_t, GGUF_TYPE_UINT8)
SCALAR_SETTER(gguf_set_val_i8, int8_t, GGUF_TYPE_INT8)
SCALAR_SETTER(gguf_set_val_u16, uint16_t, GGUF_TYPE_UINT16)
SCALAR_SETTER(gguf_set_val_i16, int16_t, GGUF_TYPE_INT16)
SCALAR_SETTER(gguf_set_val_u32, uint32_t, GGUF_TYPE_UINT32)
SCALAR_SETTER(gguf_set_val_i32, int32_t, GGUF_TYPE_INT32)
SCALAR_SETTER(gguf_set_val_f32, float, GGUF_TYPE_FLOAT32)
SCALAR_SETTER(gguf_set_val_u64, uint64_t, GGUF_TYPE_UINT64)
SCALAR_SETTER(gguf_set_val_i64, int64_t, GGUF_TYPE_INT64)
SCALAR_SETTER(gguf_set_val_f64, double, GGUF_TYPE_FLOAT64)

void gguf_set_val_bool(struct gguf_context *ctx, const char *key, bool val)
{
    const uint8_t byte = val;
    set_value(ctx, key, GGUF_TYPE_BOOL, false, &byte, 1, __func__);
}

void gguf_set_val_str(struct gguf_context *ctx, const char *key, const char *val)
{
    if (val == NULL) {
        ggml__error("key '%s': val is NULL", key != NULL ? key : "(NULL)");
        return;
    }
    set_value(ctx, key, GGUF_TYPE_STRING, false, &val, 1, __func__);
}

void gguf_set_arr_data(struct gguf_context *ctx, const char *key, enum gguf_type type, const void *data, size_t n)
{
    if (type == GGUF_TYPE_STRING) {
        ggml__error("key '%s': arrays of strings are set with gguf_set_arr_str", key != NULL ? key : "(NULL)");
        return;
    }
    set_value(ctx, key, type, true, data, n, __func__);
}

void gguf_set_arr_str(struct gguf_context *ctx, const char *key, const char **data, size_t n)
{
    set_value(ctx, key, GGUF_TYPE_STRING, true, data, n, __func__);
}

void gguf_set_kv(struct gguf_context *ctx, const struct gguf_context *src)
{
    if (ctx == NULL || src == NULL) {
        ggml__error("%s is NULL", ctx == NULL ? "ctx" : "src");
        return;
    }
    for (int64_t i = 0; i < src->n_kv; i++) {
        const struct gguf_kv *kv = &src->kv[i];
        const void *data = kv->data;
        const char **strings = NULL;
        if (kv->type == GGUF_TYPE_STRING) {
            strings = malloc((kv->n > 0 ? (size_t) kv->n : 1) * sizeof *strings);
            if (strings == NULL) {
                ggml__error("out of memory for key '%s'", kv->key);
                continue;
            }
            for (uint64_t j = 0; j < kv->n; j++)
                strings[j] = ((const struct gguf_str *) kv->data)[j].s;
            data = strings;
        }
        set_value(ctx, kv->key, kv->type, kv->is_array, data, (size_t) kv->n, __func__);
        free(strings);
    }
}

void gguf_add_tensor(struct gguf_context *ctx, const struct ggml_tensor *tensor)
{
    if (ctx == NULL || tensor == NULL) {
        ggml__error("%s is NULL", ctx == NULL ? "ctx" : "tensor");
        return;
    }
    if (find_tensor(ctx, tensor->name) >= 0) {
        ggml__error("a tensor named '%s' is already there", tensor->name);
        return;
    }
    if (!grow((void **) &ctx->info, ctx->n_info, &ctx->cap_info, sizeof *ctx->info)) {
        ggml__error("out of memory for tensor '%s'", tensor->name);
        return;
    }
    struct gguf_tensor_info *info = &ctx->info[ctx->n_info++];
    info->t = *tensor;
    lay_out(ctx, ctx->n_info - 1);
}

/* The tensor named name, or NULL after logging for func. */
static struct gguf_tensor_info *named_tensor(struct gguf_context *ctx, const char *name, const char *func)
{
    const int64_t id = ctx != NULL && name != NULL ? find_tensor(ctx, name) : -1;
    if (id < 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "no tensor named '%s'", name != NULL ? name : "(NULL)");
        return NULL;
    }
    return &ctx->info[id];
}

void gguf_set_tensor_type(struct gguf_context *ctx, const char *name, enum ggml_type type)
{
    struct gguf_tensor_info *info = named_tensor(ctx, name, __func__);
    if (info == NULL)
        return;
    if (!tensor_type_ok((uint32_t) type) || info->t.ne[0] % ggml_blck_size(type) != 0) {
        ggml__error("tensor '%s': type %d does not fit rows of %" PRId64 " values", name, (int) type, info->t.ne[0]);
        return;
    }
    info->t.type = type;
    set_strides(&info->t);
    lay_out(ctx, info - ctx->info + 1);
}

void gguf_set_tensor_data(struct gguf_context *ctx, const char *name, const void *data)
{
    struct gguf_tensor_info *info = named_tensor(ctx, name, __func__);
    if (info != NULL)
        info->t.data = (void *) (uintptr_t) data;
}

/* ------------------------------------------------------------ writing */

/*
 * Where written bytes go: to file when it is not NULL, else into buf when
 * store (grown as needed up to cap, which a caller's block sets), else
 * nowhere: they are only counted.  After a failure nothing more is put.
 */
struct sink {
    FILE *file;
    bool store;
    uint8_t *buf;
    size_t bytes, cap;
    bool failed;
    int error; /* errno of the failed write to file */
};

static void put(struct sink *s, const void *p, size_t n)
{
    if (s->failed || n == 0)
        return;
    if (s->file != NULL) {
        if (fwrite(p, 1, n, s->file) != n) {
            s->failed = true;
            s->error = errno;
            return;
        }
    } else if (s->store) {
        if (s->bytes + n > s->cap) {
            size_t cap = s->cap > 0 ? s->cap : 4096;
            while (cap < s->bytes + n)
                cap *= 2;
            uint8_t *b = realloc(s->buf, cap);
            if (b == NULL) {
                s->failed = true;
                return;
            }
            s->buf = b;
            s->cap = cap;
        }
        memcpy(s->buf + s->bytes, p, n);
    }
    s->bytes += n;
}

static void put_u32(struct sink *s, uint32_t v) { put(s, &v, sizeof v); }
static void put_u64(struct sink *s, uint64_t v) { put(s, &v, sizeof v); }

static void put_str(struct sink *s, const char *p, uint64_t len)
{
    put_u64(s, len);
    put(s, p, (size_t) len);
}

static void put_zeros(struct sink *s, size_t n)
{
    static const uint8_t zeros[64];
    if (s->file == NULL && !s->store) {
        s->bytes += s->failed ? 0 : n; /* counted, not made */
        return;
    }
    while (n > 0) {
        const size_t k = n < sizeof zeros ? n : sizeof zeros;
        put(s, zeros, k);
        n -= k;
    }
}

/* Everything before the data section, padding included. */
static void put_meta(const struct gguf_context *ctx, struct sink *s)
{
    put(s, GGUF_MAGIC, 4);
    put_u32(s, ctx->version);
    put_u64(s, (uint64_t) ctx->n_info);
    put_u64(s, (uint64_t) ctx->n_kv);
    for (int64_t i = 0; i < ctx->n_kv; i++) {
        const struct gguf_kv *kv = &ctx->kv[i];
        put_str(s, kv->key, strlen(kv->key));
        if (kv->is_array) {
            put_u32(s, GGUF_TYPE_ARRAY);
            put_u32(s, kv->type);
            put_u64(s, kv->n);
        } else {
            put_u32(s, kv->type);
        }
        if (kv->type == GGUF_TYPE_STRING)
            for (uint64_t j = 0; j < kv->n; j++)
                put_str(s, ((const struct gguf_str *) kv->data)[j].s, ((const struct gguf_str *) kv->data)[j].len);
        else
            put(s, kv->data, (size_t) kv->n * type_size(kv->type));
    }
    for (int64_t i = 0; i < ctx->n_info; i++) {
        const struct ggml_tensor *t = &ctx->info[i].t;
        /* up to the last size other than 1 (ggml_n_dims would drop sizes of 0 after the first) */
        uint32_t n_dims = GGML_MAX_DIMS;
        while (n_dims > 1 && t->ne[n_dims - 1] == 1)
            n_dims--;
        put_str(s, t->name, strlen(t->name));
        put_u32(s, n_dims);
        for (uint32_t d = 0; d < n_dims; d++)
            put_u64(s, (uint64_t) t->ne[d]);
        put_u32(s, (uint32_t) t->type);
        put_u64(s, ctx->info[i].offset);
    }
    put_zeros(s, GGML_PAD(s->bytes, ctx->alignment) - s->bytes);
}

size_t gguf_get_meta_size(const struct gguf_context *ctx)
{
    if (ctx == NULL) {
        ggml__error("ctx is NULL");
        return 0;
    }
    struct sink s = { 0 };
    put_meta(ctx, &s);
    return s.bytes;
}

void gguf_get_meta_data(const struct gguf_context *ctx, void *data)
{
    if (ctx == NULL || data == NULL) {
        ggml__error("%s is NULL", ctx == NULL ? "ctx" : "data");
        return;
    }
    struct sink s = { .store = true, .buf = data, .cap = SIZE_MAX }; /* the caller's block: never grown */
    put_meta(ctx, &s);
}

/* Puts the data of tensor info and its padding into s (a file); false after logging for func. */
static bool write_tensor_data(const struct gguf_context *ctx, const struct gguf_tensor_info *info, struct sink *s,
                              const char *func)
{
    const struct ggml_tensor *t = &info->t;
    const size_t n = ggml_nbytes(t);
    if (t->buffer == NULL && t->data == NULL && n > 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor '%s' has no data to write", t->name);
        return false;
    }
    if (!ggml_is_contiguous(t)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor '%s' is not contiguous", t->name);
        return false;
    }
    const void *bytes = t->data;
    void *copy = NULL;
    if (t->buffer != NULL && n > 0) {
        copy = malloc(n);
        if (copy == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory for the %zu bytes of tensor '%s'", n, t->name);
            return false;
        }
        ggml_backend_tensor_get(t, copy, 0, n);
        bytes = copy;
    }
    put(s, bytes, n);
    put_zeros(s, GGML_PAD(n, ctx->alignment) - n);
    free(copy);
    if (s->failed)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "writing tensor '%s' failed: %s", t->name, strerror(s->error));
    return !s->failed;
}

static bool write_file(const struct gguf_context *ctx, FILE *file, bool only_meta, const char *func)
{
    struct sink s = { .file = file };
    put_meta(ctx, &s);
    if (s.failed) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "writing the metadata failed: %s", strerror(s.error));
        return false;
    }
    for (int64_t i = 0; !only_meta && i < ctx->n_info; i++)
        if (!write_tensor_data(ctx, &ctx->info[i], &s, func))
            return false;
    return true;
}

bool gguf_write_to_file_ptr(const struct gguf_context *ctx, FILE *file, bool only_meta)
{
    if (ctx == NULL || file == NULL) {
        ggml__error("%s is NULL", ctx == NULL ? "ctx" : "file");
        return false;
    }
    return write_file(ctx, file, only_meta, __func__);
}

bool gguf_write_to_file(const struct gguf_context *ctx, const char *fname, bool only_meta)
{
    if (ctx == NULL || fname == NULL) {
        ggml__error("%s is NULL", ctx == NULL ? "ctx" : "fname");
        return false;
    }
    FILE *file = fopen(fname, "wb");
    if (file == NULL) {
        ggml__error("cannot open '%s' for writing: %s", fname, strerror(errno));
        return false;
    }
    bool ok = write_file(ctx, file, only_meta, __func__);
    if (fclose(file) != 0 && ok) {
        ggml__error("closing '%s' failed: %s", fname, strerror(errno));
        ok = false;
    }
    return ok;
}
