/*
 * test-gguf-load.c - a GGUF file's tensors into backend buffers
 * (ggml-backend-gguf.h, lib/gguf-load.c).
 *
 * A file with tensors of four types (one of them empty) and a key is
 * written with the library's writer from bytes made here; every load
 * below must give back exactly those bytes:
 *   - ggml_backend_gguf_load into the CPU device by mapping (a mapped
 *     buffer, copy-on-write: writing a tensor leaves the file alone), by
 *     reading (no_mmap), into CPU_REPACK where the level has it, and into
 *     the test plugin's device, whose memory the host cannot read;
 *   - ggml_backend_gguf_load_tensors into a context of the caller's with
 *     some of the file's tensors and one of its own, left untouched;
 *   - progress reports: from 0 to the total of the tensors' bytes, never
 *     going back, and a callback that refuses stops the load;
 *   - refusals, each NULL/false with exactly one logged error: no file, a
 *     damaged header, a file cut inside its data (read and mapped), a
 *     tensor of the wrong type, shape or with no buffer, NULL arguments.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-backend-gguf.h"
#include "ggml-cpu.h"
#include "gguf.h"
#include "tap.h"

/* The file's tensors: name, type, shape; their bytes come from pattern(). */
struct spec {
    const char *name;
    enum ggml_type type;
    int64_t ne[2];
};

static const struct spec specs[] = {
    { "tok_embd.weight", GGML_TYPE_F32, { 33, 5 } },
    { "blk.0.ffn_up.weight", GGML_TYPE_Q8_0, { 64, 6 } },
    { "empty", GGML_TYPE_F32, { 0, 4 } },
    { "positions", GGML_TYPE_I32, { 7, 1 } },
};
enum { N_SPECS = sizeof specs / sizeof specs[0] };

/* Byte i of tensor t: scales of Q8_0 blocks kept finite (0x3c = 1.0 in F16's high byte). */
static uint8_t pattern(int t, size_t i)
{
    if (specs[t].type == GGML_TYPE_Q8_0 && i % 34 == 1)
        return 0x3c;
    return (uint8_t) (i * 131u + (unsigned) t * 17u + (i >> 8));
}

static size_t spec_bytes(int t)
{
    return ggml_row_size(specs[t].type, specs[t].ne[0]) * (size_t) specs[t].ne[1];
}

static char path[PATH_MAX];

/* Writes the test file at path; its size in *file_size. */
static bool write_file(long *file_size)
{
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + 16384, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct gguf_context *g = gguf_init_empty();
    gguf_set_val_str(g, "general.name", "loader test");
    for (int t = 0; t < N_SPECS; t++) {
        struct ggml_tensor *x = ggml_new_tensor_2d(ctx, specs[t].type, specs[t].ne[0], specs[t].ne[1]);
        ggml_set_name(x, specs[t].name);
        for (size_t i = 0; i < spec_bytes(t); i++)
            ((uint8_t *) x->data)[i] = pattern(t, i);
        gguf_add_tensor(g, x);
    }
    const bool written = gguf_write_to_file(g, path, false);
    gguf_free(g);
    ggml_free(ctx);
    FILE *f = fopen(path, "rb");
    *file_size = -1;
    if (f != NULL && fseek(f, 0, SEEK_END) == 0)
        *file_size = ftell(f);
    if (f != NULL)
        fclose(f);
    return written && *file_size > 0;
}

/* True when every tensor of spec in ctx holds pattern()'s bytes (read through the backend API). */
static bool tensors_match(struct ggml_context *ctx, const char *what)
{
    bool all = true;
    for (int t = 0; t < N_SPECS; t++) {
        struct ggml_tensor *x = ggml_get_tensor(ctx, specs[t].name);
        bool same = x != NULL && x->type == specs[t].type && x->ne[0] == specs[t].ne[0] &&
                    x->ne[1] == specs[t].ne[1] && ggml_nbytes(x) == spec_bytes(t);
        if (same && spec_bytes(t) > 0) {
            uint8_t *got = malloc(spec_bytes(t));
            ggml_backend_tensor_get(x, got, 0, spec_bytes(t));
            for (size_t i = 0; same && i < spec_bytes(t); i++)
                same = got[i] == pattern(t, i);
            free(got);
        }
        if (!same)
            tap_diag("%s: tensor %s differs", what, specs[t].name);
        all = all && same;
    }
    return all;
}

/* Progress reports as seen by the callback. */
struct seen {
    int calls;
    uint64_t first, last, total;
    bool backwards, total_changed;
    int refuse_at; /* the call that returns false; 0: none */
};

static bool on_progress(uint64_t done, uint64_t total, void *data)
{
    struct seen *s = data;
    if (s->calls == 0) {
        s->first = done;
        s->total = total;
    } else {
        s->backwards |= done < s->last;
        s->total_changed |= total != s->total;
    }
    s->last = done;
    s->calls++;
    return s->calls != s->refuse_at;
}

static uint64_t all_tensor_bytes(void)
{
    uint64_t total = 0;
    for (int t = 0; t < N_SPECS; t++)
        total += spec_bytes(t);
    return total;
}

static void check_progress(const struct seen *s, const char *what)
{
    ok(s->calls >= 2 && s->first == 0 && s->last == s->total && !s->backwards && !s->total_changed,
       "%s: %d progress reports from 0 to %" PRIu64 " bytes, never back", what, s->calls, s->total);
}

/* Loads with params, checks the bytes and the progress; returns the buffer (caller frees all). */
static ggml_backend_buffer_t load_and_check(struct ggml_backend_gguf_load_params params, const char *what,
                                            struct ggml_context **ctx, struct gguf_context **gguf)
{
    struct seen seen = { 0 };
    params.progress = on_progress;
    params.progress_data = &seen;
    tap_log_errors();
    ggml_backend_buffer_t buffer = ggml_backend_gguf_load(path, &params, ctx, gguf);
    ok(buffer != NULL && *ctx != NULL && *gguf != NULL && tap_log_errors() == 0, "%s: loaded, no error", what);
    if (buffer == NULL)
        return NULL;
    ok(tensors_match(*ctx, what), "%s: every tensor has the file's bytes", what);
    is_int(ggml_backend_buffer_get_usage(buffer), GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "%s: a weights buffer", what);
    const int64_t key = gguf_find_key(*gguf, "general.name");
    ok(key >= 0 && strcmp(gguf_get_val_str(*gguf, key), "loader test") == 0, "%s: the metadata comes along", what);
    check_progress(&seen, what);
    is_uint(seen.total, all_tensor_bytes(), "%s: the total is the tensors' bytes", what);
    return buffer;
}

static void free_all(ggml_backend_buffer_t buffer, struct ggml_context *ctx, struct gguf_context *gguf)
{
    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);
    gguf_free(gguf);
}

/* Byte at offset of the file at path, -1 when unreadable. */
static int file_byte(long offset)
{
    FILE *f = fopen(path, "rb");
    int c = f != NULL && fseek(f, offset, SEEK_SET) == 0 ? fgetc(f) : -1;
    if (f != NULL)
        fclose(f);
    return c;
}

static void test_cpu(void)
{
    struct ggml_context *ctx;
    struct gguf_context *gguf;
    struct ggml_backend_gguf_load_params params = { 0 };
    ggml_backend_buffer_t mapped = load_and_check(params, "CPU, mapped", &ctx, &gguf);
    if (mapped != NULL) {
        ok(ggml_backend_buffer_is_host(mapped), "the mapped buffer is host memory");
        ok(ggml_backend_buffer_get_type(mapped) != ggml_backend_cpu_buffer_type(),
           "it wraps the file (%s), it is not a plain CPU buffer", ggml_backend_buffer_name(mapped));
        struct ggml_tensor *x = ggml_get_tensor(ctx, specs[0].name);
        const int64_t id = gguf_find_tensor(gguf, specs[0].name);
        const long at = (long) (gguf_get_data_offset(gguf) + gguf_get_tensor_offset(gguf, id));
        ((uint8_t *) x->data)[0] = (uint8_t) ~pattern(0, 0);
        is_int(file_byte(at), pattern(0, 0), "writing a mapped tensor leaves the file as it was");
        /* the mapping outlives the gguf and ggml contexts: it belongs to the buffer */
        struct ggml_tensor *last = ggml_get_tensor(ctx, specs[N_SPECS - 1].name);
        int32_t value;
        ggml_backend_tensor_get(last, &value, 0, sizeof value);
        uint8_t want[4] = { pattern(N_SPECS - 1, 0), pattern(N_SPECS - 1, 1), pattern(N_SPECS - 1, 2),
                            pattern(N_SPECS - 1, 3) };
        ok(memcmp(&value, want, 4) == 0, "the last tensor reads through the mapping");
        free_all(mapped, ctx, gguf);
    }

    params.no_mmap = true;
    ggml_backend_buffer_t read = load_and_check(params, "CPU, read", &ctx, &gguf);
    if (read != NULL) {
        is_ptr(ggml_backend_buffer_get_type(read), ggml_backend_cpu_buffer_type(), "a plain CPU buffer");
        free_all(read, ctx, gguf);
    }

    /* a caller that does not want the metadata */
    params.no_mmap = false;
    ggml_backend_buffer_t b = ggml_backend_gguf_load(path, &params, &ctx, NULL);
    ok(b != NULL && tensors_match(ctx, "without gguf"), "the gguf out-parameter may be NULL");
    ggml_backend_buffer_free(b);
    ggml_free(ctx);
    b = ggml_backend_gguf_load(path, NULL, &ctx, NULL);
    ok(b != NULL && tensors_match(ctx, "NULL params"), "params may be NULL (the defaults)");
    ggml_backend_buffer_free(b);
    ggml_free(ctx);
}

typedef ggml_backend_buffer_type_t *(*extra_bufts_fn)(ggml_backend_dev_t);

static void test_repack(void)
{
    extra_bufts_fn fn = (extra_bufts_fn) ggml_backend_reg_get_proc_address(ggml_backend_cpu_reg(),
                                                                           "ggml_backend_dev_get_extra_bufts");
    ggml_backend_buffer_type_t *list = fn != NULL ? fn(ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0)) : NULL;
    if (list == NULL || list[0] == NULL) {
        tap_skip(6, "this CPU level offers no extra buffer type");
        return;
    }
    struct ggml_context *ctx;
    struct gguf_context *gguf;
    struct ggml_backend_gguf_load_params params = { .buft = list[0] };
    ggml_backend_buffer_t b = load_and_check(params, "CPU_REPACK (not host memory: read and staged)", &ctx, &gguf);
    free_all(b, ctx, gguf);
}

static void test_plugin(void)
{
    const char *env = getenv("TEST_PLUGIN_DIR");
    char dir[PATH_MAX], lib[PATH_MAX + 32];
    if (env == NULL || env[0] == '\0' || realpath(env, dir) == NULL) {
        tap_skip(6, "TEST_PLUGIN_DIR does not name a directory (make check sets it to tests/plugins/.libs)");
        return;
    }
    snprintf(lib, sizeof lib, "%s/libggml-testdev.so", dir);
    ggml_backend_reg_t reg = ggml_backend_load(lib);
    if (reg == NULL || ggml_backend_reg_dev_count(reg) == 0) {
        ok(false, "the test plugin loads");
        return;
    }
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(ggml_backend_reg_dev_get(reg, 0));
    struct ggml_context *ctx;
    struct gguf_context *gguf;
    struct ggml_backend_gguf_load_params params = { .buft = buft };
    ggml_backend_buffer_t b = load_and_check(params, "test device (its memory is not the host's)", &ctx, &gguf);
    free_all(b, ctx, gguf);
    ggml_backend_unload(reg);
}

/* load_tensors into a context holding one tensor (type, ne0 x ne1, name) that cannot receive the data. */
static void refused_receiver(const struct gguf_context *gguf, enum ggml_type type, int64_t ne0, int64_t ne1,
                             const char *name, const char *what)
{
    struct ggml_init_params ip = { ggml_tensor_overhead(), NULL, true };
    struct ggml_context *bad = ggml_init(ip);
    ggml_set_name(ggml_new_tensor_2d(bad, type, ne0, ne1), name);
    tap_log_errors();
    ok(!ggml_backend_gguf_load_tensors(path, gguf, bad, NULL, NULL) && tap_log_errors() == 1,
       "%s: false, one error (%s)", what, tap_last_log());
    ggml_free(bad);
}

/* ggml_backend_gguf_load_tensors into a context the caller made. */
static void test_load_tensors(void)
{
    struct gguf_context *gguf = gguf_init_from_file(path, (struct gguf_init_params) { true, NULL });
    struct ggml_init_params ip = { 8 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *first = ggml_new_tensor_2d(ctx, specs[0].type, specs[0].ne[0], specs[0].ne[1]);
    struct ggml_tensor *fourth = ggml_new_tensor_2d(ctx, specs[3].type, specs[3].ne[0], specs[3].ne[1]);
    struct ggml_tensor *mine = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    ggml_set_name(first, specs[0].name);
    ggml_set_name(fourth, specs[3].name);
    ggml_set_name(mine, "not in the file");
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    const float mine_values[3] = { 1.5f, -2.0f, 0.25f };
    ggml_backend_tensor_set(mine, mine_values, 0, sizeof mine_values);

    struct seen seen = { 0 };
    tap_log_errors();
    ok(gguf != NULL && buffer != NULL && ggml_backend_gguf_load_tensors(path, gguf, ctx, on_progress, &seen) &&
           tap_log_errors() == 0,
       "load_tensors fills a context of the caller's");
    bool same = true;
    for (size_t i = 0; i < spec_bytes(0); i++)
        same = same && ((uint8_t *) first->data)[i] == pattern(0, i);
    for (size_t i = 0; i < spec_bytes(3); i++)
        same = same && ((uint8_t *) fourth->data)[i] == pattern(3, i);
    ok(same, "the two tensors it names have the file's bytes");
    ok(memcmp(mine->data, mine_values, sizeof mine_values) == 0, "its own tensor is left alone");
    check_progress(&seen, "load_tensors");
    is_uint(seen.total, spec_bytes(0) + spec_bytes(3), "the total counts the tensors loaded");

    seen = (struct seen) { .refuse_at = 2 };
    ok(!ggml_backend_gguf_load_tensors(path, gguf, ctx, on_progress, &seen) && tap_log_errors() == 1,
       "a callback that refuses stops the load: false, one error (%s)", tap_last_log());
    is_int(seen.calls, 2, "no report after the refusal");

    /* tensors that cannot receive the data (a context of its own each, nothing allocated) */
    refused_receiver(gguf, GGML_TYPE_F16, specs[0].ne[0], specs[0].ne[1], specs[0].name, "a tensor of another type");
    refused_receiver(gguf, specs[0].type, specs[0].ne[1], specs[0].ne[0], specs[0].name,
                     "a tensor of the same size but another shape");
    refused_receiver(gguf, specs[3].type, specs[3].ne[0], specs[3].ne[1], specs[3].name, "a tensor without a buffer");
    ok(!ggml_backend_gguf_load_tensors(NULL, gguf, ctx, NULL, NULL) && tap_log_errors() == 1 &&
           !ggml_backend_gguf_load_tensors(path, NULL, ctx, NULL, NULL) && tap_log_errors() == 1 &&
           !ggml_backend_gguf_load_tensors(path, gguf, NULL, NULL, NULL) && tap_log_errors() == 1,
       "NULL file name, gguf or ctx: false, one error each");
    ok(ggml_backend_gguf_load_tensors(path, gguf, ctx, NULL, NULL) && tap_log_errors() == 0,
       "the context is still usable after the refusals");

    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);
    gguf_free(gguf);
}

/* Loads that must fail with one error and leave *ctx and *gguf NULL. */
static void refused(const char *file, struct ggml_backend_gguf_load_params params, const char *what)
{
    struct ggml_context *ctx = (struct ggml_context *) 1;
    struct gguf_context *gguf = (struct gguf_context *) 1;
    tap_log_errors();
    ggml_backend_buffer_t b = ggml_backend_gguf_load(file, &params, &ctx, &gguf);
    ok(b == NULL && ctx == NULL && gguf == NULL && tap_log_errors() == 1, "%s: NULL, one error (%s)", what,
       tap_last_log());
    free_all(b, b != NULL ? ctx : NULL, b != NULL ? gguf : NULL);
}

static void test_refusals(long file_size)
{
    struct ggml_backend_gguf_load_params mapped = { 0 }, read = { .no_mmap = true };
    char other[PATH_MAX + 16];
    snprintf(other, sizeof other, "%s.cut", path);
    refused("/nonexistent/model.gguf", mapped, "no such file");

    /* the same file cut 5 bytes short: the table is intact, the last tensor's data is not */
    FILE *in = fopen(path, "rb"), *out = fopen(other, "wb");
    for (long i = 0; in != NULL && out != NULL && i < file_size - 5; i++)
        fputc(fgetc(in), out);
    if (in != NULL)
        fclose(in);
    if (out != NULL)
        fclose(out);
    refused(other, mapped, "data cut short, mapped");
    refused(other, read, "data cut short, read");

    /* a damaged magic */
    out = fopen(other, "r+b");
    if (out != NULL) {
        fputs("FUGG", out);
        fclose(out);
    }
    refused(other, mapped, "not a GGUF file");
    unlink(other);

    struct seen seen = { .refuse_at = 1 };
    mapped.progress = read.progress = on_progress;
    mapped.progress_data = read.progress_data = &seen;
    refused(path, mapped, "the callback refuses at once, mapped");
    seen = (struct seen) { .refuse_at = 2 };
    refused(path, read, "the callback refuses after the first report, read");

    struct ggml_context *ctx = NULL;
    tap_log_errors();
    ok(ggml_backend_gguf_load(NULL, NULL, &ctx, NULL) == NULL && tap_log_errors() == 1 &&
           ggml_backend_gguf_load(path, NULL, NULL, NULL) == NULL && tap_log_errors() == 1,
       "NULL file name or ctx: NULL, one error each");
}

int main(void)
{
    tap_capture_log();
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/test-gguf-load-%ld.gguf", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp",
             (long) getpid());
    long file_size;
    const bool written = write_file(&file_size);
    if (!ok(written, "the test file is written (%ld bytes)", file_size)) {
        unlink(path);
        return tap_done();
    }
    test_cpu();
    test_repack();
    test_plugin();
    test_load_tensors();
    test_refusals(file_size);
    unlink(path);
    return tap_done();
}
