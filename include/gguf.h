/*
 * gguf.h - GGUF model files: key/value metadata and a table of tensors,
 * read into a ggml context, edited, and written back.
 *
 * A file holds the magic "GGUF", a version (2 or 3), the counts of
 * tensors and of key/value pairs, the pairs, the tensors' descriptions
 * (name, shape, type, offset) and, from an offset that is a multiple of
 * the file's alignment, the tensors' data, each tensor padded to that
 * alignment.  Everything is little-endian.  The readers check every count,
 * length, type, shape and offset against the bytes actually there before
 * using it: a damaged or hostile file makes them log one error (the
 * source, the offset, what was wrong) and return NULL.  See gguf(3)
 * pages: gguf_init_from_file(3), gguf_find_key(3), gguf_set_val_u8(3),
 * gguf_get_n_tensors(3), gguf_write_to_file(3).
 */
#ifndef GGUF_H
#define GGUF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ggml.h"

#define GGUF_MAGIC   "GGUF"
#define GGUF_VERSION 3

#define GGUF_KEY_GENERAL_ALIGNMENT "general.alignment"

#define GGUF_DEFAULT_ALIGNMENT 32

#ifdef __cplusplus
extern "C" {
#endif

/* The type of a value; an ARRAY holds elements of one other type. */
enum gguf_type {
    GGUF_TYPE_UINT8   = 0,
    GGUF_TYPE_INT8    = 1,
    GGUF_TYPE_UINT16  = 2,
    GGUF_TYPE_INT16   = 3,
    GGUF_TYPE_UINT32  = 4,
    GGUF_TYPE_INT32   = 5,
    GGUF_TYPE_FLOAT32 = 6,
    GGUF_TYPE_BOOL    = 7,
    GGUF_TYPE_STRING  = 8,
    GGUF_TYPE_ARRAY   = 9,
    GGUF_TYPE_UINT64  = 10,
    GGUF_TYPE_INT64   = 11,
    GGUF_TYPE_FLOAT64 = 12,
    GGUF_TYPE_COUNT,   /* not a type: the number of them */
};

struct gguf_context;

struct gguf_init_params {
    bool no_alloc;               /* with ctx: tensors without data (metadata only) */
    struct ggml_context ** ctx;  /* if not NULL: receives a new context holding the file's tensors */
};

/*
 * Reads len bytes at offset of a source into output; returns the number
 * read (less only at its end or on error).
 */
typedef size_t (*gguf_reader_callback_t)(void * userdata, void * output, uint64_t offset, size_t len);

/* Contexts: new and empty, or read from a file, an open stream, memory or a callback; NULL on error. */
GGML_API struct gguf_context * gguf_init_empty(void);
GGML_API struct gguf_context * gguf_init_from_file_ptr(FILE * file, struct gguf_init_params params);
GGML_API struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params);
GGML_API struct gguf_context * gguf_init_from_buffer(const void * data, size_t size, struct gguf_init_params params);
GGML_API struct gguf_context * gguf_init_from_callback(gguf_reader_callback_t callback, void * userdata,
                                                       size_t max_chunk_read, uint64_t max_expected_size,
                                                       struct gguf_init_params params);

GGML_API void gguf_free(struct gguf_context * ctx);

/* "u8", "i8", ..., "str", "arr", ...; NULL for a value that is not a type. */
GGML_API const char * gguf_type_name(enum gguf_type type);

GGML_API uint32_t gguf_get_version    (const struct gguf_context * ctx);
GGML_API size_t   gguf_get_alignment  (const struct gguf_context * ctx);
/* Where the tensors' data starts in the file (padded to the alignment when there are tensors). */
GGML_API size_t   gguf_get_data_offset(const struct gguf_context * ctx);

/* Keys and values; key ids run from 0 to gguf_get_n_kv() - 1, -1 means "not found". */
GGML_API int64_t        gguf_get_n_kv    (const struct gguf_context * ctx);
GGML_API int64_t        gguf_find_key    (const struct gguf_context * ctx, const char * key);
GGML_API const char *   gguf_get_key     (const struct gguf_context * ctx, int64_t key_id);
GGML_API enum gguf_type gguf_get_kv_type (const struct gguf_context * ctx, int64_t key_id);
GGML_API enum gguf_type gguf_get_arr_type(const struct gguf_context * ctx, int64_t key_id);

/* A single value of exactly that type (otherwise an error is logged and 0, false or NULL returned). */
GGML_API uint8_t      gguf_get_val_u8  (const struct gguf_context * ctx, int64_t key_id);
GGML_API int8_t       gguf_get_val_i8  (const struct gguf_context * ctx, int64_t key_id);
GGML_API uint16_t     gguf_get_val_u16 (const struct gguf_context * ctx, int64_t key_id);
GGML_API int16_t      gguf_get_val_i16 (const struct gguf_context * ctx, int64_t key_id);
GGML_API uint32_t     gguf_get_val_u32 (const struct gguf_context * ctx, int64_t key_id);
GGML_API int32_t      gguf_get_val_i32 (const struct gguf_context * ctx, int64_t key_id);
GGML_API float        gguf_get_val_f32 (const struct gguf_context * ctx, int64_t key_id);
GGML_API uint64_t     gguf_get_val_u64 (const struct gguf_context * ctx, int64_t key_id);
GGML_API int64_t      gguf_get_val_i64 (const struct gguf_context * ctx, int64_t key_id);
GGML_API double       gguf_get_val_f64 (const struct gguf_context * ctx, int64_t key_id);
GGML_API bool         gguf_get_val_bool(const struct gguf_context * ctx, int64_t key_id);
GGML_API const char * gguf_get_val_str (const struct gguf_context * ctx, int64_t key_id);
GGML_API const void * gguf_get_val_data(const struct gguf_context * ctx, int64_t key_id);

/* Arrays: the element count (1 for a single value), the elements (not strings), string i. */
GGML_API size_t       gguf_get_arr_n   (const struct gguf_context * ctx, int64_t key_id);
GGML_API const void * gguf_get_arr_data(const struct gguf_context * ctx, int64_t key_id);
GGML_API const char * gguf_get_arr_str (const struct gguf_context * ctx, int64_t key_id, size_t i);

/* Tensors; ids run from 0 to gguf_get_n_tensors() - 1, -1 means "not found". */
GGML_API int64_t         gguf_get_n_tensors    (const struct gguf_context * ctx);
GGML_API int64_t         gguf_find_tensor      (const struct gguf_context * ctx, const char * name);
/* Offset of the tensor's data from the start of the data section. */
GGML_API size_t          gguf_get_tensor_offset(const struct gguf_context * ctx, int64_t tensor_id);
GGML_API const char *    gguf_get_tensor_name  (const struct gguf_context * ctx, int64_t tensor_id);
/* GGML_MAX_DIMS sizes; 1 past the tensor's dimensions. */
GGML_API const int64_t * gguf_get_tensor_ne    (const struct gguf_context * ctx, int64_t tensor_id);
GGML_API enum ggml_type  gguf_get_tensor_type  (const struct gguf_context * ctx, int64_t tensor_id);
GGML_API size_t          gguf_get_tensor_size  (const struct gguf_context * ctx, int64_t tensor_id);

/* Removes key; returns the id it had, or -1 if there was none. */
GGML_API int64_t gguf_remove_key(struct gguf_context * ctx, const char * key);

/* Sets key to a value (replacing any value it had; the key moves to the end). */
GGML_API void gguf_set_val_u8  (struct gguf_context * ctx, const char * key, uint8_t      val);
GGML_API void gguf_set_val_i8  (struct gguf_context * ctx, const char * key, int8_t       val);
GGML_API void gguf_set_val_u16 (struct gguf_context * ctx, const char * key, uint16_t     val);
GGML_API void gguf_set_val_i16 (struct gguf_context * ctx, const char * key, int16_t      val);
GGML_API void gguf_set_val_u32 (struct gguf_context * ctx, const char * key, uint32_t     val);
GGML_API void gguf_set_val_i32 (struct gguf_context * ctx, const char * key, int32_t      val);
GGML_API void gguf_set_val_f32 (struct gguf_context * ctx, const char * key, float        val);
GGML_API void gguf_set_val_u64 (struct gguf_context * ctx, const char * key, uint64_t     val);
GGML_API void gguf_set_val_i64 (struct gguf_context * ctx, const char * key, int64_t      val);
GGML_API void gguf_set_val_f64 (struct gguf_context * ctx, const char * key, double       val);
GGML_API void gguf_set_val_bool(struct gguf_context * ctx, const char * key, bool         val);
GGML_API void gguf_set_val_str (struct gguf_context * ctx, const char * key, const char * val);
/* An array of n elements of type (not STRING or ARRAY) copied from data, or of n strings. */
GGML_API void gguf_set_arr_data(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * data,
                                size_t n);
GGML_API void gguf_set_arr_str (struct gguf_context * ctx, const char * key, const char ** data, size_t n);
/* Every key of src set in ctx. */
GGML_API void gguf_set_kv(struct gguf_context * ctx, const struct gguf_context * src);

/* Appends tensor's description (and data pointer or buffer, for writing); names must differ. */
GGML_API void gguf_add_tensor(struct gguf_context * ctx, const struct ggml_tensor * tensor);
/* Changes a tensor's type; the offsets of the tensors after it follow. */
GGML_API void gguf_set_tensor_type(struct gguf_context * ctx, const char * name, enum ggml_type type);
/* Where the data of a tensor is taken from when writing. */
GGML_API void gguf_set_tensor_data(struct gguf_context * ctx, const char * name, const void * data);

/* Writes the whole file, or only what precedes the data section; false on error. */
GGML_API bool gguf_write_to_file_ptr(const struct gguf_context * ctx, FILE * file, bool only_meta);
GGML_API bool gguf_write_to_file(const struct gguf_context * ctx, const char * fname, bool only_meta);

/* Bytes before the data section, padding included, and those bytes. */
GGML_API size_t gguf_get_meta_size(const struct gguf_context * ctx);
GGML_API void   gguf_get_meta_data(const struct gguf_context * ctx, void * data);

#ifdef __cplusplus
}
#endif

#endif /* GGUF_H */
