/*
 * test-gguf.c - GGUF files (gguf.h, lib/gguf.c).
 *
 * Checked:
 *   - a file encoded here byte by byte, from the format's description
 *     (little-endian header, pairs, tensor descriptions, padding to the
 *     alignment, data), is read back with every value, shape, type, offset
 *     and data byte; the library's writer produces the same bytes from the
 *     same content;
 *   - round trips of every value type and of arrays of each through
 *     gguf_write_to_file, and through a buffer, a callback in small chunks
 *     and a stream that does not start at offset 0;
 *   - a catalog of damaged files (each field made wrong in turn) and every
 *     truncation of a valid file: each read returns NULL after exactly one
 *     logged error, with no context left behind;
 *   - 200000 keys read, and refused when one repeats (duplicates are found
 *     by sorting: a quadratic search would take minutes here);
 *   - 3000 randomly mutated files read without a crash (the sanitizer build
 *     checks the memory accesses): NULL after one error, or a context;
 *   - getters and setters on wrong types and ids: one error and 0/NULL;
 *     the alignment key moves the offsets; tensor types and offsets;
 *     metadata size and bytes.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml.h"
#include "gguf.h"
#include "tap.h"

/* ------------------------------------------------ an encoder of the test's own */

struct bytes {
    unsigned char *p;
    size_t n, cap;
};

static void add(struct bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

/* little-endian, whatever the host (the test states the format, not the host's layout) */
static void add_le(struct bytes *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        unsigned char c = (unsigned char) (v >> (8 * i));
        add(b, &c, 1);
    }
}

static void add_str(struct bytes *b, const char *s)
{
    add_le(b, strlen(s), 8);
    add(b, s, strlen(s));
}

static void pad_to(struct bytes *b, size_t alignment)
{
    while (b->n % alignment != 0)
        add_le(b, 0, 1);
}

/* Where the fields of the reference file lie, for the damage catalog. */
struct layout {
    size_t version, n_tensors, n_kv;
    size_t key0_len, key0_type, key1_str_len;   /* pair 0: "a.u32" u32; pair 1: "b.name" str */
    size_t arr_type, arr_n;                     /* pair 2: "c.arr" array of i16 */
    size_t align_type, align_value;             /* pair 3: general.alignment */
    size_t t0_name_len, t0_ndims, t0_ne0, t0_ne1, t0_type, t0_offset;
    size_t t1_name_len, t1_offset;
    size_t data, data_end;                      /* data section; end of the last tensor's bytes */
};

static const float t0_values[3][4] = { { 1, 2, 3, 4 }, { -1, -2, -3, -4 }, { 0.5f, 0.25f, 8, 16 } };
static const int16_t arr_values[5] = { -3, 7, 0, 32767, -32768 };

/*
 * The reference file, alignment 64: pairs a.u32 = 0xdeadbeef, b.name =
 * "tiny model", c.arr = 5 i16, general.alignment = 64; tensors "t0" F32
 * [4, 3] (t0_values) and "t1" I8 [5] (1..5).
 */
static struct bytes reference_file(struct layout *l)
{
    struct bytes b = { 0 };
    add(&b, "GGUF", 4);
    l->version = b.n;
    add_le(&b, 3, 4);
    l->n_tensors = b.n;
    add_le(&b, 2, 8);
    l->n_kv = b.n;
    add_le(&b, 4, 8);
    l->key0_len = b.n;
    add_str(&b, "a.u32");
    l->key0_type = b.n;
    add_le(&b, GGUF_TYPE_UINT32, 4);
    add_le(&b, 0xdeadbeef, 4);
    add_str(&b, "b.name");
    add_le(&b, GGUF_TYPE_STRING, 4);
    l->key1_str_len = b.n;
    add_str(&b, "tiny model");
    add_str(&b, "c.arr");
    add_le(&b, GGUF_TYPE_ARRAY, 4);
    l->arr_type = b.n;
    add_le(&b, GGUF_TYPE_INT16, 4);
    l->arr_n = b.n;
    add_le(&b, 5, 8);
    for (int i = 0; i < 5; i++)
        add_le(&b, (uint16_t) arr_values[i], 2);
    add_str(&b, GGUF_KEY_GENERAL_ALIGNMENT);
    l->align_type = b.n;
    add_le(&b, GGUF_TYPE_UINT32, 4);
    l->align_value = b.n;
    add_le(&b, 64, 4);
    l->t0_name_len = b.n;
    add_str(&b, "t0");
    l->t0_ndims = b.n;
    add_le(&b, 2, 4);
    l->t0_ne0 = b.n;
    add_le(&b, 4, 8);
    l->t0_ne1 = b.n;
    add_le(&b, 3, 8);
    l->t0_type = b.n;
    add_le(&b, GGML_TYPE_F32, 4);
    l->t0_offset = b.n;
    add_le(&b, 0, 8);
    l->t1_name_len = b.n;
    add_str(&b, "t1");
    add_le(&b, 1, 4);
    add_le(&b, 5, 8);
    add_le(&b, GGML_TYPE_I8, 4);
    l->t1_offset = b.n;
    add_le(&b, 64, 8);   /* 48 bytes of t0 padded to 64 */
    pad_to(&b, 64);
    l->data = b.n;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            uint32_t u;
            memcpy(&u, &t0_values[r][c], 4);
            add_le(&b, u, 4);
        }
    pad_to(&b, 64);
    for (int i = 1; i <= 5; i++)
        add_le(&b, (uint64_t) i, 1);
    l->data_end = b.n;
    pad_to(&b, 64);
    return b;
}

static void put_le(struct bytes *b, size_t at, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b->p[at + i] = (unsigned char) (v >> (8 * i));
}

/* ------------------------------------------------ reading the reference */

static bool same_reference(const struct gguf_context *g, struct ggml_context *tctx, bool with_data)
{
    bool good = g != NULL && gguf_get_version(g) == 3 && gguf_get_n_kv(g) == 4 && gguf_get_n_tensors(g) == 2 &&
                gguf_get_alignment(g) == 64;
    if (!good)
        return false;
    const int64_t k0 = gguf_find_key(g, "a.u32"), k1 = gguf_find_key(g, "b.name"), k2 = gguf_find_key(g, "c.arr");
    good = good && k0 == 0 && k1 == 1 && k2 == 2 && gguf_find_key(g, "nope") == -1;
    good = good && gguf_get_kv_type(g, k0) == GGUF_TYPE_UINT32 && gguf_get_val_u32(g, k0) == 0xdeadbeef;
    good = good && gguf_get_kv_type(g, k1) == GGUF_TYPE_STRING && strcmp(gguf_get_val_str(g, k1), "tiny model") == 0;
    good = good && gguf_get_kv_type(g, k2) == GGUF_TYPE_ARRAY && gguf_get_arr_type(g, k2) == GGUF_TYPE_INT16 &&
           gguf_get_arr_n(g, k2) == 5 && memcmp(gguf_get_arr_data(g, k2), arr_values, sizeof arr_values) == 0;
    good = good && strcmp(gguf_get_key(g, 3), GGUF_KEY_GENERAL_ALIGNMENT) == 0;
    good = good && gguf_find_tensor(g, "t0") == 0 && gguf_find_tensor(g, "t1") == 1 && gguf_find_tensor(g, "x") == -1;
    const int64_t *ne0 = gguf_get_tensor_ne(g, 0), *ne1 = gguf_get_tensor_ne(g, 1);
    good = good && ne0[0] == 4 && ne0[1] == 3 && ne0[2] == 1 && ne0[3] == 1 && ne1[0] == 5 && ne1[1] == 1;
    good = good && gguf_get_tensor_type(g, 0) == GGML_TYPE_F32 && gguf_get_tensor_type(g, 1) == GGML_TYPE_I8;
    good = good && gguf_get_tensor_offset(g, 0) == 0 && gguf_get_tensor_offset(g, 1) == 64;
    good = good && gguf_get_tensor_size(g, 0) == 48 && gguf_get_tensor_size(g, 1) == 5;
    good = good && strcmp(gguf_get_tensor_name(g, 1), "t1") == 0;
    if (tctx != NULL) {
        struct ggml_tensor *t0 = ggml_get_tensor(tctx, "t0"), *t1 = ggml_get_tensor(tctx, "t1");
        good = good && t0 != NULL && t1 != NULL && t0->type == GGML_TYPE_F32 && t0->ne[0] == 4 && t0->ne[1] == 3 &&
               t1->ne[0] == 5;
        if (good && with_data) {
            good = t0->data != NULL && memcmp(t0->data, t0_values, sizeof t0_values) == 0 && t1->data != NULL;
            for (int i = 0; good && i < 5; i++)
                good = ((const int8_t *) t1->data)[i] == i + 1;
        } else if (good) {
            good = t0->data == NULL && t1->data == NULL;
        }
    }
    return good;
}

struct chunked {
    const unsigned char *p;
    size_t n;
};

static size_t read_chunked(void *userdata, void *output, uint64_t offset, size_t len)
{
    const struct chunked *c = userdata;
    if (len > 7 || offset > c->n) /* the reader must respect max_chunk_read */
        return 0;
    const size_t k = len < c->n - offset ? len : c->n - offset;
    memcpy(output, c->p + offset, k);
    return k;
}

static void test_reference(void)
{
    struct layout l;
    struct bytes b = reference_file(&l);
    struct ggml_context *tctx = NULL;
    struct gguf_init_params with_data = { false, &tctx }, no_data = { true, &tctx }, bare = { true, NULL };

    struct gguf_context *g = gguf_init_from_buffer(b.p, b.n, with_data);
    ok(same_reference(g, tctx, true), "the reference file from a buffer: values, tensors and data");
    is_int((int) gguf_get_data_offset(g), (int) l.data, "the data section starts where the format puts it");
    ok(tctx != NULL && ggml_get_tensor(tctx, "GGUF tensor data binary blob") != NULL,
       "the context holds the data in one tensor named as upstream names it");
    ggml_free(tctx);
    gguf_free(g);

    g = gguf_init_from_buffer(b.p, b.n, no_data);
    ok(same_reference(g, tctx, false), "with no_alloc: tensors without data");
    ggml_free(tctx);
    gguf_free(g);

    g = gguf_init_from_buffer(b.p, b.n, bare);
    ok(same_reference(g, NULL, false), "without a context: the tables only");

    /* the library's writer makes the same bytes from the same content */
    size_t meta = gguf_get_meta_size(g);
    is_int((int) meta, (int) l.data, "gguf_get_meta_size: everything before the data section");
    unsigned char *m = malloc(meta);
    gguf_get_meta_data(g, m);
    ok(memcmp(m, b.p, meta) == 0, "gguf_get_meta_data: the reference bytes");
    free(m);
    gguf_free(g);

    struct chunked c = { b.p, b.n };
    g = gguf_init_from_callback(read_chunked, &c, 7, b.n, with_data);
    ok(same_reference(g, tctx, true), "through a callback 7 bytes at a time");
    ggml_free(tctx);
    gguf_free(g);

    /* a stream positioned after 13 bytes of something else */
    FILE *f = tmpfile();
    fwrite("not gguf yet.", 1, 13, f);
    fwrite(b.p, 1, b.n, f);
    fseek(f, 13, SEEK_SET);
    g = gguf_init_from_file_ptr(f, with_data);
    ok(same_reference(g, tctx, true), "from a stream that starts 13 bytes in");
    is_int((int) gguf_get_data_offset(g), (int) (13 + l.data), "whose data offset counts from the file's start");
    ggml_free(tctx);
    gguf_free(g);
    fclose(f);

    /* the writer, whole file: the reference bytes again (the data padded) */
    g = gguf_init_from_buffer(b.p, b.n, with_data);
    char path[] = "/tmp/test-gguf-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    ok(fd >= 0 && gguf_write_to_file(g, path, false), "gguf_write_to_file");
    ggml_free(tctx);
    gguf_free(g);
    f = fopen(path, "rb");
    unsigned char *w = malloc(b.n + 16);
    size_t got = f != NULL ? fread(w, 1, b.n + 16, f) : 0;
    ok(got == b.n && memcmp(w, b.p, b.n) == 0, "writes the reference file byte for byte (%zu bytes)", got);
    if (f != NULL)
        fclose(f);
    g = gguf_init_from_file(path, with_data);
    ok(same_reference(g, tctx, true), "gguf_init_from_file reads it back");
    ggml_free(tctx);
    gguf_free(g);
    remove(path);
    free(w);
    is_int(tap_log_errors(), 0, "no error logged by valid files");
    free(b.p);
}

/* ------------------------------------------------ damaged files */

/* A read of b that must fail with one error and leave no context. */
static void refused(const struct bytes *b, const char *what)
{
    struct ggml_context *tctx = (struct ggml_context *) (uintptr_t) 1;
    struct gguf_init_params p = { false, &tctx };
    struct gguf_context *g = gguf_init_from_buffer(b->p, b->n, p);
    const int errors = tap_log_errors();
    ok(g == NULL && tctx == NULL && errors == 1, "refused: %s (%d error%s: %s)", what, errors, errors == 1 ? "" : "s",
       tap_last_log());
    gguf_free(g);
}

static void test_damage(void)
{
    struct layout l;
    const struct bytes ref = reference_file(&l);
    struct {
        const char *what;
        size_t at;
        uint64_t value;
        int width;
    } cases[] = {
        { "a magic that is not GGUF", 0, 'G' | 'G' << 8 | 'M' << 16 | 'L' << 24, 4 },
        { "version 1", l.version, 1, 4 },
        { "version 0", l.version, 0, 4 },
        { "version 4", l.version, 4, 4 },
        { "a big-endian version", l.version, 0x03000000, 4 },
        { "a negative tensor count", l.n_tensors, UINT64_MAX, 8 },
        { "2^40 tensors", l.n_tensors, 1ull << 40, 8 },
        { "a negative pair count", l.n_kv, (uint64_t) -5, 8 },
        { "2^60 pairs", l.n_kv, 1ull << 60, 8 },
        { "more pairs than the file holds", l.n_kv, 5, 8 },
        { "a key of 2^62 bytes", l.key0_len, 1ull << 62, 8 },
        { "an empty key", l.key0_len, 0, 8 },
        { "a key with a NUL inside", l.key0_len + 9, 0, 1 },
        { "a duplicate key", l.key0_len + 8, 'c' | '.' << 8 | 'a' << 16 | (uint64_t) 'r' << 24 | (uint64_t) 'r' << 32,
          5 },
        { "value type 13", l.key0_type, 13, 4 },
        { "value type -1", l.key0_type, 0xffffffff, 4 },
        { "an array of arrays", l.arr_type, GGUF_TYPE_ARRAY, 4 },
        { "an array of type 99", l.arr_type, 99, 4 },
        { "an array of 2^61 elements", l.arr_n, 1ull << 61, 8 },
        { "an array longer than the file", l.arr_n, 1000, 8 },
        { "a string longer than the file", l.key1_str_len, 100000, 8 },
        { "alignment of type u16", l.align_type, GGUF_TYPE_UINT16, 4 },
        { "alignment 48", l.align_value, 48, 4 },
        { "alignment 0", l.align_value, 0, 4 },
        { "a tensor name of 64 bytes", l.t0_name_len, 64, 8 },
        { "a duplicate tensor name", l.t1_name_len + 9, '0', 1 },
        { "5 dimensions", l.t0_ndims, 5, 4 },
        { "a negative dimension", l.t0_ne1, (uint64_t) -3, 8 },
        { "2^62 x 4 elements", l.t0_ne1, 1ull << 62, 8 },
        { "tensor type GGML_TYPE_COUNT", l.t0_type, GGML_TYPE_COUNT, 4 },
        { "removed tensor type 4", l.t0_type, 4, 4 },
        { "rows of 4 Q4_0 values", l.t0_type, GGML_TYPE_Q4_0, 4 },
        { "a first offset of 64", l.t0_offset, 64, 8 },
        { "a misaligned offset", l.t1_offset, 48, 8 },
        { "overlapping data", l.t1_offset, 32, 8 },
        { "data past the end", l.t1_offset, 128, 8 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct bytes b = { malloc(ref.n), ref.n, ref.n };
        memcpy(b.p, ref.p, ref.n);
        put_le(&b, cases[i].at, cases[i].value, cases[i].width);
        refused(&b, cases[i].what);
        free(b.p);
    }

    /* an empty tensor whose other extents overflow: ggml_new_tensor could not hold it either */
    struct bytes z = { malloc(ref.n), ref.n, ref.n };
    memcpy(z.p, ref.p, ref.n);
    put_le(&z, l.t0_ne0, 1ull << 62, 8);
    put_le(&z, l.t0_ne1, 0, 8);
    refused(&z, "an empty tensor of 2^62 x 0 (x 4 bytes)");

    /* Q4_0 rows of 2^62 values: 2^57 blocks of 18 bytes fit in size_t, 2^62 x 18 does not;
       the size must come out whole (and the data is then missing), never wrapped */
    memcpy(z.p, ref.p, ref.n);
    put_le(&z, l.t0_type, GGML_TYPE_Q4_0, 4);
    put_le(&z, l.t0_ne0, 1ull << 62, 8);
    put_le(&z, l.t0_ne1, 1, 8);
    put_le(&z, l.t1_offset, (1ull << 57) * 18, 8); /* a multiple of the alignment, 64 */
    refused(&z, "Q4_0 rows of 2^62 values with their data missing");
    struct gguf_init_params shapes_only = { true, NULL };
    struct gguf_context *huge = gguf_init_from_buffer(z.p, z.n, shapes_only);
    is_uint(huge != NULL ? gguf_get_tensor_size(huge, 0) : 0, (1ull << 57) * 18,
            "read without its data, its size is 2^57 blocks of 18 bytes");
    is_int(tap_log_errors(), 0, "and nothing is logged");
    gguf_free(huge);
    free(z.p);

    /* every truncation before the last tensor's last byte; the final padding may be missing */
    bool all_refused = true, rest_read = true;
    for (size_t n = 1; n < ref.n; n++) {
        struct ggml_context *tctx = NULL;
        struct gguf_init_params p = { false, &tctx };
        struct gguf_context *g = gguf_init_from_buffer(ref.p, n, p);
        const int errors = tap_log_errors();
        if (n < l.data_end)
            all_refused = all_refused && g == NULL && tctx == NULL && errors == 1;
        else
            rest_read = rest_read && same_reference(g, tctx, true) && errors == 0;
        ggml_free(tctx);
        gguf_free(g);
    }
    ok(all_refused, "every truncation before the end of the data refused with one error");
    ok(rest_read, "files missing only their final padding read");
    free(ref.p);
}

/* 200000 pairs, the last one repeating key 0 when repeat: read (or refused) in well under a second. */
static void test_many_keys(void)
{
    for (int repeat = 0; repeat < 2; repeat++) {
        struct bytes b = { 0 };
        enum { N = 200000 };
        add(&b, "GGUF", 4);
        add_le(&b, 3, 4);
        add_le(&b, 0, 8);
        add_le(&b, N, 8);
        for (int i = 0; i < N; i++) {
            char key[32];
            snprintf(key, sizeof key, "k.%d", repeat && i == N - 1 ? 0 : i);
            add_str(&b, key);
            add_le(&b, GGUF_TYPE_UINT8, 4);
            add_le(&b, (uint64_t) i & 0xff, 1);
        }
        struct gguf_init_params p = { true, NULL };
        struct gguf_context *g = gguf_init_from_buffer(b.p, b.n, p);
        if (repeat) {
            ok(g == NULL, "200000 keys, the last repeating the first: refused");
            logged_one_error("with one error");
        } else {
            ok(g != NULL && gguf_get_n_kv(g) == N && gguf_get_val_u8(g, gguf_find_key(g, "k.123456")) == (123456 & 0xff),
               "200000 different keys read (duplicates are found by sorting, not pair by pair)");
        }
        gguf_free(g);
        free(b.p);
    }
}

/* ------------------------------------------------ random mutations */

static uint64_t rng = 0x67677566;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_mutations(void)
{
    struct layout l;
    const struct bytes ref = reference_file(&l);
    int refusals = 0, reads = 0;
    bool one_error_each = true;
    for (int i = 0; i < 3000; i++) {
        struct bytes b = { malloc(ref.n), ref.n, ref.n };
        memcpy(b.p, ref.p, ref.n);
        const int edits = 1 + (int) (next() % 4);
        for (int e = 0; e < edits; e++) {
            const size_t at = (size_t) (next() % (l.data + 8));   /* mostly the metadata */
            if (next() % 2)
                b.p[at] ^= (unsigned char) (1u << (next() % 8));
            else
                b.p[at] = (unsigned char) next();
        }
        if (next() % 8 == 0)
            b.n = (size_t) (next() % ref.n) + 1;
        struct ggml_context *tctx = NULL;
        struct gguf_init_params p = { next() % 2 == 0, &tctx };
        struct gguf_context *g = gguf_init_from_buffer(b.p, b.n, p);
        const int errors = tap_log_errors();
        bool fine = true;
        if (g == NULL) {
            refusals++;
            fine = errors == 1 && tctx == NULL;
        } else {
            reads++;
            /* whatever was read is usable */
            fine = errors == 0;
            for (int64_t k = 0; k < gguf_get_n_kv(g); k++)
                fine = fine && gguf_get_key(g, k) != NULL;
            for (int64_t t = 0; t < gguf_get_n_tensors(g); t++)
                fine = fine && ggml_get_tensor(tctx, gguf_get_tensor_name(g, t)) != NULL;
            tap_log_errors();
        }
        if (!fine && one_error_each)
            tap_diag("mutation %d: %s, %d errors (last: %s)", i, g == NULL ? "refused" : "read", errors,
                     tap_last_log());
        one_error_each = one_error_each && fine;
        ggml_free(tctx);
        gguf_free(g);
        free(b.p);
    }
    ok(one_error_each && refusals > 0 && reads > 0,
       "3000 mutated files: %d refused with one error each, %d read and usable", refusals, reads);
    free(ref.p);
}

/* ------------------------------------------------ the API */

static void test_values(void)
{
    struct gguf_context *g = gguf_init_empty();
    ok(g != NULL && gguf_get_version(g) == GGUF_VERSION && gguf_get_alignment(g) == GGUF_DEFAULT_ALIGNMENT &&
           gguf_get_n_kv(g) == 0 && gguf_get_n_tensors(g) == 0,
       "gguf_init_empty: version 3, alignment 32, nothing in it");
    gguf_set_val_u8(g, "u8", 200);
    gguf_set_val_i8(g, "i8", -100);
    gguf_set_val_u16(g, "u16", 60000);
    gguf_set_val_i16(g, "i16", -30000);
    gguf_set_val_u32(g, "u32", 4000000000u);
    gguf_set_val_i32(g, "i32", -2000000000);
    gguf_set_val_f32(g, "f32", 1.5f);
    gguf_set_val_u64(g, "u64", 1ull << 63);
    gguf_set_val_i64(g, "i64", -(1ll << 62));
    gguf_set_val_f64(g, "f64", -0.1);
    gguf_set_val_bool(g, "bool", true);
    gguf_set_val_str(g, "str", "hello");
    const double doubles[3] = { 1.0, -2.5, 1e300 };
    gguf_set_arr_data(g, "arr.f64", GGUF_TYPE_FLOAT64, doubles, 3);
    const bool bools[4] = { true, false, true, true };
    gguf_set_arr_data(g, "arr.bool", GGUF_TYPE_BOOL, bools, 4);
    const char *strs[3] = { "a", "", "ccc" };
    gguf_set_arr_str(g, "arr.str", strs, 3);
    gguf_set_arr_data(g, "arr.empty", GGUF_TYPE_UINT32, NULL, 0);
    is_int(tap_log_errors(), 0, "setting every type logs nothing");

    /* round trip through a file */
    char path[] = "/tmp/test-gguf-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    ok(fd >= 0 && gguf_write_to_file(g, path, false), "written");
    struct gguf_init_params p = { true, NULL };
    struct gguf_context *r = gguf_init_from_file(path, p);
    remove(path);
    bool same = r != NULL && gguf_get_n_kv(r) == 16;
#define KEY(name) gguf_find_key(r, name)
    same = same && gguf_get_val_u8(r, KEY("u8")) == 200 && gguf_get_val_i8(r, KEY("i8")) == -100;
    same = same && gguf_get_val_u16(r, KEY("u16")) == 60000 && gguf_get_val_i16(r, KEY("i16")) == -30000;
    same = same && gguf_get_val_u32(r, KEY("u32")) == 4000000000u && gguf_get_val_i32(r, KEY("i32")) == -2000000000;
    same = same && gguf_get_val_f32(r, KEY("f32")) == 1.5f && gguf_get_val_u64(r, KEY("u64")) == 1ull << 63;
    same = same && gguf_get_val_i64(r, KEY("i64")) == -(1ll << 62) && gguf_get_val_f64(r, KEY("f64")) == -0.1;
    same = same && gguf_get_val_bool(r, KEY("bool")) && strcmp(gguf_get_val_str(r, KEY("str")), "hello") == 0;
    same = same && gguf_get_arr_type(r, KEY("arr.f64")) == GGUF_TYPE_FLOAT64 && gguf_get_arr_n(r, KEY("arr.f64")) == 3 &&
           memcmp(gguf_get_arr_data(r, KEY("arr.f64")), doubles, sizeof doubles) == 0;
    same = same && gguf_get_arr_n(r, KEY("arr.bool")) == 4 &&
           memcmp(gguf_get_arr_data(r, KEY("arr.bool")), (const uint8_t[]) { 1, 0, 1, 1 }, 4) == 0;
    same = same && gguf_get_arr_n(r, KEY("arr.str")) == 3 && strcmp(gguf_get_arr_str(r, KEY("arr.str"), 0), "a") == 0 &&
           strcmp(gguf_get_arr_str(r, KEY("arr.str"), 1), "") == 0 &&
           strcmp(gguf_get_arr_str(r, KEY("arr.str"), 2), "ccc") == 0;
    same = same && gguf_get_arr_n(r, KEY("arr.empty")) == 0 && gguf_get_kv_type(r, KEY("arr.empty")) == GGUF_TYPE_ARRAY;
    same = same && *(const int16_t *) gguf_get_val_data(r, KEY("i16")) == -30000;
    ok(same, "every value type and array read back equal");
    is_int(tap_log_errors(), 0, "without an error");

    /* wrong types and ids: one error, a zero */
    is_int(gguf_get_val_u32(r, KEY("u8")), 0, "gguf_get_val_u32 of a u8: 0");
    logged_one_error("and one error");
    ok(gguf_get_val_str(r, KEY("arr.str")) == NULL, "gguf_get_val_str of an array: NULL");
    logged_one_error("and one error");
    ok(gguf_get_arr_data(r, KEY("arr.str")) == NULL, "gguf_get_arr_data of strings: NULL");
    logged_one_error("and one error");
    ok(gguf_get_arr_str(r, KEY("arr.str"), 3) == NULL, "gguf_get_arr_str past the end: NULL");
    logged_one_error("and one error");
    ok(gguf_get_arr_type(r, KEY("u8")) == GGUF_TYPE_COUNT, "gguf_get_arr_type of a single value: GGUF_TYPE_COUNT");
    logged_one_error("and one error");
    ok(gguf_get_key(r, 16) == NULL && gguf_get_key(r, -1) == NULL, "gguf_get_key of ids out of range: NULL");
    is_int(tap_log_errors(), 2, "one error each");
    ok(gguf_get_val_data(r, KEY("str")) == NULL, "gguf_get_val_data of a string: NULL");
    logged_one_error("and one error");
    ok(gguf_get_tensor_ne(r, 0) == NULL && gguf_get_tensor_type(r, 0) == GGML_TYPE_COUNT,
       "tensor getters on an id out of range: NULL, GGML_TYPE_COUNT");
    is_int(tap_log_errors(), 2, "one error each");
#undef KEY

    /* gguf_set_kv copies; setting an existing key moves it to the end; removal */
    struct gguf_context *c = gguf_init_empty();
    gguf_set_kv(c, r);
    ok(gguf_get_n_kv(c) == 16 && strcmp(gguf_get_arr_str(c, gguf_find_key(c, "arr.str"), 2), "ccc") == 0,
       "gguf_set_kv copies every pair");
    gguf_set_val_str(c, "u8", "now a string");
    ok(gguf_get_n_kv(c) == 16 && gguf_find_key(c, "u8") == 15 && gguf_get_kv_type(c, 15) == GGUF_TYPE_STRING,
       "setting an existing key replaces it, at the end");
    gguf_set_val_i32(c, gguf_get_key(c, gguf_find_key(c, "u16")), 77);   /* the key given by its own string */
    ok(gguf_find_key(c, "u16") == 15 && gguf_get_val_i32(c, 15) == 77, "setting a key named by its own string");
    is_int((int) gguf_remove_key(c, gguf_get_key(c, 15)), 15, "removing a key named by its own string");
    gguf_set_val_u16(c, "u16", 60000);
    is_int((int) gguf_remove_key(c, "i8"), 0, "gguf_remove_key returns the id it had");
    is_int((int) gguf_remove_key(c, "i8"), -1, "and -1 for a key not there");
    is_int(tap_log_errors(), 0, "without an error");
    gguf_free(c);
    gguf_free(r);
    gguf_free(g);

    is_str(gguf_type_name(GGUF_TYPE_UINT8), "u8", "gguf_type_name(UINT8)");
    is_str(gguf_type_name(GGUF_TYPE_STRING), "str", "gguf_type_name(STRING)");
    is_str(gguf_type_name(GGUF_TYPE_FLOAT64), "f64", "gguf_type_name(FLOAT64)");
    ok(gguf_type_name(GGUF_TYPE_COUNT) == NULL, "gguf_type_name(GGUF_TYPE_COUNT): NULL");
}

static void test_tensors(void)
{
    struct ggml_init_params ip = { 4 * ggml_tensor_overhead() + 4096, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 3);   /* 120 bytes */
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 2);   /* 512 bytes */
    struct ggml_tensor *v = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 7);       /* 28 bytes */
    ggml_set_name(a, "a");
    ggml_set_name(q, "q");
    ggml_set_name(v, "v");
    for (int i = 0; i < 30; i++)
        ((float *) a->data)[i] = (float) i;
    for (int i = 0; i < 128; i++)
        ((float *) q->data)[i] = (float) (i % 16) - 8.0f;
    for (int i = 0; i < 7; i++)
        ((int32_t *) v->data)[i] = i * i;

    struct gguf_context *g = gguf_init_empty();
    gguf_add_tensor(g, a);
    gguf_add_tensor(g, q);
    gguf_add_tensor(g, v);
    ok(gguf_get_tensor_offset(g, 1) == 128 && gguf_get_tensor_offset(g, 2) == 640,
       "offsets: each tensor after the previous one's data padded to 32");
    gguf_add_tensor(g, a);
    logged_one_error("a second tensor named 'a' is refused with one error");
    is_int((int) gguf_get_n_tensors(g), 3, "and not added");

    gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, 256);
    ok(gguf_get_alignment(g) == 256 && gguf_get_tensor_offset(g, 1) == 256 && gguf_get_tensor_offset(g, 2) == 768,
       "setting general.alignment to 256 moves the offsets");
    gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, 100);
    logged_one_error("an alignment of 100 is refused with one error");
    gguf_set_val_u8(g, GGUF_KEY_GENERAL_ALIGNMENT, 64);
    logged_one_error("an alignment of type u8 too");
    ok(gguf_get_alignment(g) == 256, "the alignment stays");
    gguf_remove_key(g, GGUF_KEY_GENERAL_ALIGNMENT);
    ok(gguf_get_alignment(g) == 32 && gguf_get_tensor_offset(g, 2) == 640, "removing the key: 32 again");

    gguf_set_tensor_type(g, "q", GGML_TYPE_Q4_0);
    ok(gguf_get_tensor_type(g, 1) == GGML_TYPE_Q4_0 && gguf_get_tensor_size(g, 1) == 72 &&
           gguf_get_tensor_offset(g, 2) == 128 + 96,
       "gguf_set_tensor_type: the size and the next offsets follow (72 bytes of Q4_0)");
    gguf_set_tensor_type(g, "a", GGML_TYPE_Q4_0);
    logged_one_error("a type whose blocks do not fit the rows is refused with one error");
    gguf_set_tensor_type(g, "nope", GGML_TYPE_F16);
    logged_one_error("so is a tensor that is not there");

    /* the data of q, as Q4_0, comes from a buffer set with gguf_set_tensor_data */
    unsigned char q4[72];
    for (int i = 0; i < 72; i++)
        q4[i] = (unsigned char) (i * 37);
    gguf_set_tensor_data(g, "q", q4);
    char path[] = "/tmp/test-gguf-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    ok(fd >= 0 && gguf_write_to_file(g, path, false), "three tensors written");
    struct ggml_context *tctx = NULL;
    struct gguf_init_params p = { false, &tctx };
    struct gguf_context *r = gguf_init_from_file(path, p);
    struct ggml_tensor *ra = tctx ? ggml_get_tensor(tctx, "a") : NULL, *rq = tctx ? ggml_get_tensor(tctx, "q") : NULL;
    struct ggml_tensor *rv = tctx ? ggml_get_tensor(tctx, "v") : NULL;
    ok(r != NULL && ra != NULL && rq != NULL && rv != NULL && memcmp(ra->data, a->data, 120) == 0 &&
           rq->type == GGML_TYPE_Q4_0 && memcmp(rq->data, q4, 72) == 0 && memcmp(rv->data, v->data, 28) == 0,
       "and read back with their data");
    ok(r != NULL && gguf_get_data_offset(r) % 32 == 0 && gguf_get_data_offset(r) == gguf_get_meta_size(g),
       "the data section at the metadata's padded size");
    ggml_free(tctx);
    gguf_free(r);

    /* metadata only, then reading that back without data */
    ok(gguf_write_to_file(g, path, true), "metadata only written");
    struct gguf_init_params meta = { true, NULL };
    r = gguf_init_from_file(path, meta);
    ok(r != NULL && gguf_get_n_tensors(r) == 3, "and read back with no_alloc");
    gguf_free(r);
    remove(path);

    /* a tensor without data cannot be written */
    struct gguf_context *h = gguf_init_empty();
    struct ggml_tensor dataless = *v;
    dataless.data = NULL;
    gguf_add_tensor(h, &dataless);
    FILE *f = tmpfile();
    ok(!gguf_write_to_file_ptr(h, f, false), "a tensor without data: not written");
    logged_one_error("with one error");
    ok(gguf_write_to_file_ptr(h, f, true), "its metadata can be");
    fclose(f);
    ok(!gguf_write_to_file(h, "/nonexistent-dir/x.gguf", false), "an unwritable path: false");
    logged_one_error("with one error");
    ok(gguf_init_from_file("/nonexistent-dir/x.gguf", meta) == NULL, "an unreadable path: NULL");
    logged_one_error("with one error");
    gguf_free(h);
    gguf_free(g);
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_reference();
    test_damage();
    test_many_keys();
    test_mutations();
    test_values();
    test_tensors();
    return tap_done();
}
