/*
 * ggml-backend-gguf - what a GGUF model file holds, and whether it is
 * sound: version, alignment, metadata (long arrays abbreviated), the
 * tensor table with types, shapes, sizes and offsets, and totals.
 *
 *   ggml-backend-gguf [--json] [--check] [--all] [--help] [--version] FILE...
 *
 * Each file is read with gguf_init_from_file (every field checked; the
 * tensors' data is not loaded), and its data section is compared with
 * the file's size.  A file that fails either is reported (the library's
 * message goes to stderr) and makes the exit status 1.
 *
 * Exit status: 0 when every file is sound; 1 when one is not; 2 on a bad
 * option or no file.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ggml.h"
#include "gguf.h"
#include "tool-util.h"

#define PROGRAM "ggml-backend-gguf"

/* Elements of an array shown before "..." unless --all. */
enum { SHOWN_ELEMENTS = 8 };

struct options {
    bool json, check, all;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROGRAM " [options] FILE...\n"
            "Prints what each GGUF file holds and checks it.\n"
            "  --json      print one JSON array, an object per file\n"
            "  --check     only check the files (one line each)\n"
            "  --all       print every element of long arrays\n"
            "  --help, --version\n"
            "Exit status: 0 every file is sound, 1 one is not, 2 bad usage.\n");
}

/*
 * Element i of pair key_id (an array's, or its single value with i 0) as
 * text or JSON; data is the pair's values (gguf_get_arr_data or
 * gguf_get_val_data), not used for strings.
 */
static void print_element(const struct gguf_context *g, int64_t key_id, enum gguf_type type, const void *data,
                          size_t i, bool json, FILE *out)
{
    if (type == GGUF_TYPE_STRING) {
        const char *s = gguf_get_kv_type(g, key_id) == GGUF_TYPE_ARRAY ? gguf_get_arr_str(g, key_id, i)
                                                                         : gguf_get_val_str(g, key_id);
        tool_json_string(out, s);   /* quoted and escaped in both forms */
        return;
    }
    const unsigned char *p = data;
    switch (type) {
    case GGUF_TYPE_UINT8:   fprintf(out, "%u", (unsigned) p[i]); break;
    case GGUF_TYPE_INT8:    fprintf(out, "%d", (int) (int8_t) p[i]); break;
    case GGUF_TYPE_BOOL:    fputs(p[i] ? "true" : "false", out); break;
    case GGUF_TYPE_UINT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); fprintf(out, "%u", (unsigned) v); break; }
    case GGUF_TYPE_INT16:  { int16_t v; memcpy(&v, p + 2 * i, 2); fprintf(out, "%d", (int) v); break; }
    case GGUF_TYPE_UINT32: { uint32_t v; memcpy(&v, p + 4 * i, 4); fprintf(out, "%" PRIu32, v); break; }
    case GGUF_TYPE_INT32:  { int32_t v; memcpy(&v, p + 4 * i, 4); fprintf(out, "%" PRId32, v); break; }
    case GGUF_TYPE_UINT64: { uint64_t v; memcpy(&v, p + 8 * i, 8); fprintf(out, "%" PRIu64, v); break; }
    case GGUF_TYPE_INT64:  { int64_t v; memcpy(&v, p + 8 * i, 8); fprintf(out, "%" PRId64, v); break; }
    case GGUF_TYPE_FLOAT32: {
        float v;
        memcpy(&v, p + 4 * i, 4);
        if (json && (v != v || v - v != 0))   /* JSON has no NaN or infinity */
            fputs("null", out);
        else
            fprintf(out, "%.9g", (double) v);
        break;
    }
    case GGUF_TYPE_FLOAT64: {
        double v;
        memcpy(&v, p + 8 * i, 8);
        if (json && (v != v || v - v != 0))
            fputs("null", out);
        else
            fprintf(out, "%.17g", v);
        break;
    }
    default:
        fputs("null", out);
        break;
    }
}

/* The value of pair key_id: a single value, or "[e0, e1, ...]" (abbreviated unless all). */
static void print_value(const struct gguf_context *g, int64_t key_id, bool json, bool all, FILE *out)
{
    const enum gguf_type kv_type = gguf_get_kv_type(g, key_id);
    if (kv_type != GGUF_TYPE_ARRAY) {
        const void *data = kv_type == GGUF_TYPE_STRING ? NULL : gguf_get_val_data(g, key_id);
        print_element(g, key_id, kv_type, data, 0, json, out);
        return;
    }
    const enum gguf_type type = gguf_get_arr_type(g, key_id);
    const void *data = type == GGUF_TYPE_STRING ? NULL : gguf_get_arr_data(g, key_id);
    const size_t n = gguf_get_arr_n(g, key_id), shown = all || n <= SHOWN_ELEMENTS ? n : SHOWN_ELEMENTS;
    putc('[', out);
    for (size_t i = 0; i < shown; i++) {
        if (i > 0)
            fputs(", ", out);
        print_element(g, key_id, type, data, i, json, out);
    }
    if (shown < n && !json)
        fprintf(out, ", ... (%zu more)", n - shown);
    putc(']', out);
}

/* The checks beyond the reader's: the data section ends within the file. */
static bool data_fits(const char *path, const struct gguf_context *g, uint64_t *file_size)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    *file_size = (uint64_t) st.st_size;
    const int64_t n = gguf_get_n_tensors(g);
    if (n == 0)
        return true;
    uint64_t end;
    const bool overflow =
        __builtin_add_overflow((uint64_t) gguf_get_data_offset(g), (uint64_t) gguf_get_tensor_offset(g, n - 1), &end) ||
        __builtin_add_overflow(end, (uint64_t) gguf_get_tensor_size(g, n - 1), &end);
    if (overflow || end > *file_size) {
        fprintf(stderr, PROGRAM ": %s: the tensors' data ends past the file's %" PRIu64 " bytes\n", path, *file_size);
        return false;
    }
    return true;
}

/* "[4096, 32000]": the tensor's dimensions (at least one). */
static void print_shape(const int64_t *ne, FILE *out)
{
    int dims = GGML_MAX_DIMS;
    while (dims > 1 && ne[dims - 1] == 1)
        dims--;
    putc('[', out);
    for (int d = 0; d < dims; d++)
        fprintf(out, d > 0 ? ", %" PRId64 : "%" PRId64, ne[d]);
    putc(']', out);
}

/* Sums over the tensor table; unsigned, as a hostile table may sum past int64_t. */
struct totals {
    uint64_t elements, bytes;
};

static struct totals tensor_totals(const struct gguf_context *g)
{
    struct totals sum = { 0, 0 };
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        const int64_t *ne = gguf_get_tensor_ne(g, i);
        sum.elements += (uint64_t) (ne[0] * ne[1] * ne[2] * ne[3]);   /* each product checked by the reader */
        sum.bytes += gguf_get_tensor_size(g, i);
    }
    return sum;
}

static void print_text(const char *path, const struct gguf_context *g, uint64_t file_size, bool all)
{
    printf("%s: GGUF version %" PRIu32 ", alignment %zu, %" PRIu64 " bytes, data at offset %zu\n", path,
           gguf_get_version(g), gguf_get_alignment(g), file_size, gguf_get_data_offset(g));
    const int64_t n_kv = gguf_get_n_kv(g), n_t = gguf_get_n_tensors(g);
    printf("metadata: %" PRId64 " key%s\n", n_kv, n_kv == 1 ? "" : "s");
    for (int64_t i = 0; i < n_kv; i++) {
        const enum gguf_type t = gguf_get_kv_type(g, i);
        printf("  %-40s ", gguf_get_key(g, i));
        if (t == GGUF_TYPE_ARRAY)
            printf("%s[%zu] ", gguf_type_name(gguf_get_arr_type(g, i)), gguf_get_arr_n(g, i));
        else
            printf("%s ", gguf_type_name(t));
        print_value(g, i, false, all, stdout);
        putchar('\n');
    }
    printf("tensors: %" PRId64 "\n", n_t);
    for (int64_t i = 0; i < n_t; i++) {
        printf("  %-40s %-8s ", gguf_get_tensor_name(g, i), ggml_type_name(gguf_get_tensor_type(g, i)));
        print_shape(gguf_get_tensor_ne(g, i), stdout);
        printf(" %zu bytes at %zu\n", gguf_get_tensor_size(g, i), gguf_get_tensor_offset(g, i));
    }
    const struct totals sum = tensor_totals(g);
    printf("total: %" PRId64 " tensors, %" PRIu64 " elements, %" PRIu64 " bytes (%.2f MiB)\n", n_t, sum.elements,
           sum.bytes, (double) sum.bytes / (1024.0 * 1024.0));
}

static void print_json(const char *path, const struct gguf_context *g, uint64_t file_size, bool all)
{
    printf("{\"file\": ");
    tool_json_string(stdout, path);
    printf(", \"valid\": true, \"version\": %" PRIu32 ", \"alignment\": %zu, \"file_bytes\": %" PRIu64
           ", \"data_offset\": %zu,\n  \"metadata\": [",
           gguf_get_version(g), gguf_get_alignment(g), file_size, gguf_get_data_offset(g));
    for (int64_t i = 0; i < gguf_get_n_kv(g); i++) {
        const enum gguf_type t = gguf_get_kv_type(g, i);
        printf(i > 0 ? ",\n    {\"key\": " : "\n    {\"key\": ");
        tool_json_string(stdout, gguf_get_key(g, i));
        printf(", \"type\": \"%s\"", gguf_type_name(t));
        if (t == GGUF_TYPE_ARRAY)
            printf(", \"element_type\": \"%s\", \"n\": %zu", gguf_type_name(gguf_get_arr_type(g, i)),
                   gguf_get_arr_n(g, i));
        printf(", \"value\": ");
        print_value(g, i, true, all, stdout);
        putchar('}');
    }
    printf("],\n  \"tensors\": [");
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        printf(i > 0 ? ",\n    {\"name\": " : "\n    {\"name\": ");
        tool_json_string(stdout, gguf_get_tensor_name(g, i));
        printf(", \"type\": \"%s\", \"shape\": ", ggml_type_name(gguf_get_tensor_type(g, i)));
        print_shape(gguf_get_tensor_ne(g, i), stdout);
        printf(", \"bytes\": %zu, \"offset\": %zu}", gguf_get_tensor_size(g, i), gguf_get_tensor_offset(g, i));
    }
    const struct totals sum = tensor_totals(g);
    printf("],\n  \"total_tensors\": %" PRId64 ", \"total_elements\": %" PRIu64 ", \"total_bytes\": %" PRIu64 "}",
           gguf_get_n_tensors(g), sum.elements, sum.bytes);
}

/* One file: printed (or checked); true when sound. */
static bool show(const char *path, const struct options *opt, bool first)
{
    struct gguf_init_params params = { true, NULL };
    struct gguf_context *g = gguf_init_from_file(path, params);
    uint64_t file_size = 0;
    const bool sound = g != NULL && data_fits(path, g, &file_size);
    if (opt->json) {
        printf(first ? "[" : ",\n ");
        if (sound) {
            print_json(path, g, file_size, opt->all);
        } else {
            printf("{\"file\": ");
            tool_json_string(stdout, path);
            printf(", \"valid\": false}");
        }
    } else if (opt->check) {
        printf("%s: %s\n", path, sound ? "ok" : "not a sound GGUF file");
    } else if (sound) {
        print_text(path, g, file_size, opt->all);
    } else {
        printf("%s: not a sound GGUF file\n", path);
    }
    gguf_free(g);
    return sound;
}

int main(int argc, char **argv)
{
    struct options opt = { false, false, false };
    int first_file = argc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            first_file = i + 1;
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            first_file = i;
            break;
        }
        if (strcmp(a, "--json") == 0) {
            opt.json = true;
        } else if (strcmp(a, "--check") == 0) {
            opt.check = true;
        } else if (strcmp(a, "--all") == 0) {
            opt.all = true;
        } else if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf(PROGRAM " %s\n", PACKAGE_VERSION);
            return 0;
        } else {
            fprintf(stderr, PROGRAM ": unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (first_file >= argc) {
        fprintf(stderr, PROGRAM ": no file given\n");
        usage(stderr);
        return 2;
    }
    ggml_log_set(tool_log_quiet, NULL);
    bool all_sound = true;
    for (int i = first_file; i < argc; i++)
        all_sound = show(argv[i], &opt, i == first_file) && all_sound;
    if (opt.json)
        printf("]\n");
    return all_sound ? 0 : 1;
}
