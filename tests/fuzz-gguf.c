/*
 * fuzz-gguf.c - a fuzz target for the GGUF reader (lib/gguf.c).
 *
 * One input is one file's bytes.  It is read with gguf_init_from_buffer,
 * with and without its data (the first byte of the input chooses), and
 * whatever was read is used through the public getters: every key with
 * the getter of its type, every array element, every tensor's name,
 * shape, type, size and offset, the tensors of the ggml context, and the
 * metadata written back and read again, which must give the same tables.
 * A refusal must come with exactly one logged error.  Memory errors are
 * for the sanitizers to find.
 *
 * Built two ways:
 *   - with -DFUZZ_GGUF_LIBFUZZER and -fsanitize=fuzzer (configure
 *     --enable-libfuzzer, clang): LLVMFuzzerTestOneInput for libFuzzer;
 *     tests/fuzz-gguf --write-corpus DIR (the plain build) writes the seeds;
 *   - plain: a driver whose seed corpus is written here with the library's
 *     writer (every value type, strings and arrays, tensors of several
 *     types and shapes, alignment 32 and 64, no tensors), replayed, then
 *     mutated (bytes flipped, set, inserted, deleted, files cut) a bounded
 *     number of times from a fixed seed:
 *
 *       fuzz-gguf [--tap] [--mutations N] [--seed S] [FILE...]
 *       fuzz-gguf --write-corpus DIR
 *
 *     FILEs are replayed too (a libFuzzer finding, say).  With --tap it
 *     prints TAP; the exit status is 0 when every input behaved.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"

static int errors_logged;

static void count_errors(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) text, (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR)
        errors_logged++;
}

/* Touches every value of a single value or an array; returns a checksum so nothing is optimised away. */
static uint64_t use_value(const struct gguf_context *g, int64_t k)
{
    uint64_t sum = 0;
    const enum gguf_type t = gguf_get_kv_type(g, k);
    if (t == GGUF_TYPE_ARRAY) {
        const enum gguf_type et = gguf_get_arr_type(g, k);
        const size_t n = gguf_get_arr_n(g, k);
        if (et == GGUF_TYPE_STRING) {
            for (size_t i = 0; i < n; i++)
                sum += strlen(gguf_get_arr_str(g, k, i));
        } else {
            const unsigned char *p = gguf_get_arr_data(g, k);
            size_t bytes = 0;
            switch (et) {
            case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: bytes = n; break;
            case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: bytes = 2 * n; break;
            case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: bytes = 4 * n; break;
            default: bytes = 8 * n; break;
            }
            for (size_t i = 0; i < bytes; i++)
                sum += p[i];
        }
        return sum;
    }
    switch (t) {
    case GGUF_TYPE_UINT8:   return gguf_get_val_u8(g, k);
    case GGUF_TYPE_INT8:    return (uint64_t) gguf_get_val_i8(g, k);
    case GGUF_TYPE_UINT16:  return gguf_get_val_u16(g, k);
    case GGUF_TYPE_INT16:   return (uint64_t) gguf_get_val_i16(g, k);
    case GGUF_TYPE_UINT32:  return gguf_get_val_u32(g, k);
    case GGUF_TYPE_INT32:   return (uint64_t) gguf_get_val_i32(g, k);
    case GGUF_TYPE_FLOAT32: return gguf_get_val_f32(g, k) == 0.0f;
    case GGUF_TYPE_UINT64:  return gguf_get_val_u64(g, k);
    case GGUF_TYPE_INT64:   return (uint64_t) gguf_get_val_i64(g, k);
    case GGUF_TYPE_FLOAT64: return gguf_get_val_f64(g, k) == 0.0;
    case GGUF_TYPE_BOOL:    return gguf_get_val_bool(g, k);
    case GGUF_TYPE_STRING:  return strlen(gguf_get_val_str(g, k));
    default:                return 0;
    }
}

/* The same keys, types and tensor table in two contexts. */
static bool same_tables(const struct gguf_context *a, const struct gguf_context *b)
{
    if (gguf_get_n_kv(a) != gguf_get_n_kv(b) || gguf_get_n_tensors(a) != gguf_get_n_tensors(b))
        return false;
    for (int64_t k = 0; k < gguf_get_n_kv(a); k++)
        if (strcmp(gguf_get_key(a, k), gguf_get_key(b, k)) != 0 || gguf_get_kv_type(a, k) != gguf_get_kv_type(b, k) ||
            gguf_get_arr_n(a, k) != gguf_get_arr_n(b, k))
            return false;
    for (int64_t t = 0; t < gguf_get_n_tensors(a); t++)
        if (strcmp(gguf_get_tensor_name(a, t), gguf_get_tensor_name(b, t)) != 0 ||
            gguf_get_tensor_type(a, t) != gguf_get_tensor_type(b, t) ||
            gguf_get_tensor_offset(a, t) != gguf_get_tensor_offset(b, t) ||
            memcmp(gguf_get_tensor_ne(a, t), gguf_get_tensor_ne(b, t), GGML_MAX_DIMS * sizeof(int64_t)) != 0)
            return false;
    return true;
}

/* One input; false when the library misbehaved in a way this can see. */
static bool one_input(const uint8_t *data, size_t size)
{
    struct ggml_context *tctx = NULL;
    struct gguf_init_params params = { size > 0 && data[0] % 2 == 0, &tctx };
    errors_logged = 0;
    struct gguf_context *g = gguf_init_from_buffer(data, size, params);
    if (g == NULL)
        return errors_logged == 1 && tctx == NULL;
    bool good = errors_logged == 0;
    volatile uint64_t sink = 0;
    for (int64_t k = 0; k < gguf_get_n_kv(g); k++)
        sink += use_value(g, k) + strlen(gguf_get_key(g, k));
    for (int64_t t = 0; t < gguf_get_n_tensors(g); t++) {
        const struct ggml_tensor *tensor = ggml_get_tensor(tctx, gguf_get_tensor_name(g, t));
        good = good && tensor != NULL && ggml_nbytes(tensor) == gguf_get_tensor_size(g, t);
        if (good && !params.no_alloc && tensor->data != NULL && ggml_nbytes(tensor) > 0)
            sink += ((const uint8_t *) tensor->data)[ggml_nbytes(tensor) - 1];
    }
    /* the metadata written back reads as the same tables (not made when
       a huge alignment pads it to more than 16 MiB: the file may say so) */
    const size_t meta = gguf_get_meta_size(g);
    uint8_t *bytes = meta <= ((size_t) 16 << 20) ? malloc(meta > 0 ? meta : 1) : NULL;
    if (bytes != NULL) {
        gguf_get_meta_data(g, bytes);
        struct gguf_init_params bare = { true, NULL };
        struct gguf_context *again = gguf_init_from_buffer(bytes, meta, bare);
        good = good && again != NULL && same_tables(g, again);
        gguf_free(again);
        free(bytes);
    }
    (void) sink;
    gguf_free(g);
    ggml_free(tctx);
    return good && errors_logged == 0;
}

#ifdef FUZZ_GGUF_LIBFUZZER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool logging_set;
    if (!logging_set) {
        ggml_log_set(count_errors, NULL);
        logging_set = true;
    }
    if (!one_input(data, size))
        abort();   /* libFuzzer keeps the input */
    return 0;
}

#else

/* ------------------------------------------------------------ the seeds */

struct seed {
    uint8_t *bytes;
    size_t size;
};

/* The file of g (metadata and data) in memory. */
static struct seed file_of(const struct gguf_context *g, struct ggml_context *tensors)
{
    struct seed s = { NULL, 0 };
    FILE *f = tmpfile();
    if (f == NULL || !gguf_write_to_file_ptr(g, f, false)) {
        if (f != NULL)
            fclose(f);
        return s;
    }
    (void) tensors;
    const long n = ftell(f);
    rewind(f);
    s.bytes = malloc(n > 0 ? (size_t) n : 1);
    s.size = s.bytes != NULL ? fread(s.bytes, 1, (size_t) n, f) : 0;
    fclose(f);
    return s;
}

/* The seed corpus: n_seeds files written with the library's writer. */
enum { N_SEEDS = 4 };

static int make_seeds(struct seed seeds[N_SEEDS])
{
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + 64 * 1024, NULL, false };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *f32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 3);
    struct ggml_tensor *q4 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 2);
    struct ggml_tensor *q6 = ggml_new_tensor_1d(ctx, GGML_TYPE_Q6_K, 256);
    struct ggml_tensor *i8 = ggml_new_tensor_3d(ctx, GGML_TYPE_I8, 5, 2, 2);
    ggml_set_name(f32, "blk.0.attn_q.weight");
    ggml_set_name(q4, "blk.0.ffn_up.weight");
    ggml_set_name(q6, "output.weight");
    ggml_set_name(i8, "i8");
    struct ggml_tensor *all[] = { f32, q4, q6, i8 };
    for (size_t t = 0; t < 4; t++)
        for (size_t i = 0; i < ggml_nbytes(all[t]); i++)
            ((uint8_t *) all[t]->data)[i] = (uint8_t) (i * 7 + t);

    /* 0: every single value type */
    struct gguf_context *g = gguf_init_empty();
    gguf_set_val_u8(g, "u8", 250);
    gguf_set_val_i8(g, "i8", -7);
    gguf_set_val_u16(g, "u16", 65000);
    gguf_set_val_i16(g, "i16", -300);
    gguf_set_val_u32(g, "u32", 70000);
    gguf_set_val_i32(g, "i32", -70000);
    gguf_set_val_f32(g, "f32", 0.5f);
    gguf_set_val_u64(g, "u64", 1ull << 40);
    gguf_set_val_i64(g, "i64", -(1ll << 40));
    gguf_set_val_f64(g, "f64", 3.25);
    gguf_set_val_bool(g, "bool", true);
    gguf_set_val_str(g, "general.name", "seed");
    seeds[0] = file_of(g, ctx);
    gguf_free(g);

    /* 1: arrays of each kind and two tensors */
    g = gguf_init_empty();
    const char *tokens[] = { "<s>", "</s>", "a", "", "longer token" };
    const float scores[] = { 0, -1, -2.5f, 3, 1e-3f };
    const int32_t types[] = { 1, 2, 1, 3, 1 };
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, 5);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, 5);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, 5);
    gguf_add_tensor(g, f32);
    gguf_add_tensor(g, q4);
    seeds[1] = file_of(g, ctx);
    gguf_free(g);

    /* 2: alignment 64, four tensors of four types */
    g = gguf_init_empty();
    gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, 64);
    gguf_set_val_str(g, "general.architecture", "llama");
    for (size_t t = 0; t < 4; t++)
        gguf_add_tensor(g, all[t]);
    seeds[2] = file_of(g, ctx);
    gguf_free(g);

    /* 3: nothing but the header */
    g = gguf_init_empty();
    seeds[3] = file_of(g, ctx);
    gguf_free(g);
    ggml_free(ctx);
    int made = 0;
    for (int i = 0; i < N_SEEDS; i++)
        made += seeds[i].bytes != NULL;
    return made;
}

/* ------------------------------------------------------------ mutations */

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state += 0x9e3779b97f4a7c15ull;
    uint64_t z = rng_state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A mutated copy of seed: a few edits, mostly in the metadata where the checks are. */
static struct seed mutate(const struct seed *seed)
{
    struct seed m = { malloc(seed->size + 64), seed->size };
    memcpy(m.bytes, seed->bytes, seed->size);
    const int edits = 1 + (int) (rng() % 6);
    for (int e = 0; e < edits && m.size > 0; e++) {
        const size_t span = m.size < 256 ? m.size : 256;
        const size_t at = (size_t) (rng() % span);
        switch (rng() % 6) {
        case 0: m.bytes[at] ^= (uint8_t) (1u << (rng() % 8)); break;
        case 1: m.bytes[at] = (uint8_t) rng(); break;
        case 2: /* a boundary value over a field: 0, -1, huge */
            if (at + 8 <= m.size) {
                static const uint64_t values[] = { 0, UINT64_MAX, 1ull << 62, 0x7fffffff, 0x80000000, 65 };
                const uint64_t v = values[rng() % 6];
                memcpy(m.bytes + at, &v, (rng() % 2) ? 8 : 4);
            }
            break;
        case 3: /* insert a byte */
            if (m.size < seed->size + 64) {
                memmove(m.bytes + at + 1, m.bytes + at, m.size - at);
                m.bytes[at] = (uint8_t) rng();
                m.size++;
            }
            break;
        case 4: /* delete a byte */
            memmove(m.bytes + at, m.bytes + at + 1, m.size - at - 1);
            m.size--;
            break;
        default: /* cut the file */
            m.size = (size_t) (rng() % (m.size + 1));
            break;
        }
    }
    return m;
}

static bool read_file(const char *path, struct seed *out)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    size_t got;
    while (b != NULL && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(b, cap *= 2);
            if (bigger == NULL) {
                free(b);
                b = NULL;
            }
            b = bigger;
        }
    }
    fclose(f);
    out->bytes = b;
    out->size = n;
    return b != NULL;
}

int main(int argc, char **argv)
{
    bool tap = false;
    long mutations = 20000;
    uint64_t seed_value = 1;
    const char *corpus_dir = NULL;
    int first_file = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tap") == 0) {
            tap = true;
        } else if (strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
            mutations = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed_value = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--write-corpus") == 0 && i + 1 < argc) {
            corpus_dir = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: fuzz-gguf [--tap] [--mutations N] [--seed S] [FILE...] | --write-corpus DIR\n");
            return 2;
        } else {
            first_file = i;
            break;
        }
    }
    ggml_log_set(count_errors, NULL);
    struct seed seeds[N_SEEDS];
    const int made = make_seeds(seeds);
    if (corpus_dir != NULL) {
        int status = 0;
        for (int i = 0; i < N_SEEDS && status == 0; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seed-%d.gguf", corpus_dir, i);
            FILE *f = fopen(path, "wb");
            const bool written = f != NULL && fwrite(seeds[i].bytes, 1, seeds[i].size, f) == seeds[i].size;
            if ((f != NULL && fclose(f) != 0) || !written) {
                fprintf(stderr, "fuzz-gguf: cannot write %s\n", path);
                status = 1;
            }
        }
        for (int i = 0; i < N_SEEDS; i++)
            free(seeds[i].bytes);
        return status;
    }
    int n = 0, failed = 0;
#define RESULT(cond, ...)                                                  \
    do {                                                                   \
        n++;                                                               \
        if (!(cond))                                                       \
            failed++;                                                      \
        if (tap) {                                                         \
            printf("%s %d - ", (cond) ? "ok" : "not ok", n);               \
            printf(__VA_ARGS__);                                           \
            putchar('\n');                                                 \
        }                                                                  \
    } while (0)

    RESULT(made == N_SEEDS, "%d seed files written with the library's writer", made);
    bool seeds_read = true;
    for (int i = 0; i < N_SEEDS; i++) {
        struct gguf_init_params bare = { true, NULL };
        errors_logged = 0;
        struct gguf_context *g = gguf_init_from_buffer(seeds[i].bytes, seeds[i].size, bare);
        seeds_read = seeds_read && g != NULL && one_input(seeds[i].bytes, seeds[i].size);
        gguf_free(g);
    }
    RESULT(seeds_read, "every seed is read, used and written back");

    for (int i = first_file; i < argc; i++) {
        struct seed file;
        const bool readable = read_file(argv[i], &file);
        RESULT(readable && one_input(file.bytes, file.size), "replayed %s", argv[i]);
        free(readable ? file.bytes : NULL);
    }

    rng_state = seed_value;
    long refused = 0, read_back = 0, bad = 0;
    for (long m = 0; m < mutations; m++) {
        struct seed s = mutate(&seeds[m % N_SEEDS]);
        const bool fine = one_input(s.bytes, s.size);
        if (!fine && bad++ == 0) {
            fprintf(stderr, "fuzz-gguf: mutation %ld (seed %" PRIu64 ") misbehaved; its bytes:", m, seed_value);
            for (size_t i = 0; i < s.size; i++)
                fprintf(stderr, "%s%02x", i % 32 ? "" : "\n  ", s.bytes[i]);
            fputc('\n', stderr);
        }
        struct gguf_init_params bare = { true, NULL };
        errors_logged = 0;
        struct gguf_context *g = gguf_init_from_buffer(s.bytes, s.size, bare);
        refused += g == NULL;
        read_back += g != NULL;
        gguf_free(g);
        free(s.bytes);
    }
    RESULT(bad == 0, "%ld mutated files from seed %" PRIu64 ": %ld refused with one error, %ld read and usable", mutations,
           seed_value, refused, read_back);
    for (int i = 0; i < N_SEEDS; i++)
        free(seeds[i].bytes);
    if (tap)
        printf("1..%d\n", n);
    return failed == 0 ? 0 : 1;
}

#endif
