/*
 * registry-private.h - what the plugin loader (loader.c) needs from the
 * registry (registry.c).
 *
 * Not installed.  Include after config.h, ggml-impl.h and backend-private.h.
 *
 * The registry keeps one record per registered registry: the registry, the
 * dlopen handle of the plugin that provided it (NULL for a registry added in
 * process with ggml_backend_register, built-ins included), the plugin's
 * score and the path it was loaded from.  Every device is remembered with
 * the registry it was registered under, so removing a registry removes
 * exactly its devices.
 *
 * Locking: the registry's lists are guarded by one recursive mutex, taken
 * by every public registry function.  The loader serializes whole loads and
 * unloads with a mutex of its own, always taken before the registry's (never
 * the other way round), and calls into a plugin (dlopen, ggml_backend_score,
 * ggml_backend_init, dlclose) without holding the registry's mutex.
 */
#ifndef GGML_BACKEND_REGISTRY_PRIVATE_H
#define GGML_BACKEND_REGISTRY_PRIVATE_H

#include <stdbool.h>

#include "ggml-backend-impl.h"

/* One registered registry, as the loader sees it (a copy). */
struct ggml__reg_record {
    ggml_backend_reg_t reg;  /* the registry */
    void *dl_handle;         /* dlopen handle, or NULL for an in-process registry */
    int score;               /* plugin score; meaningless when dl_handle is NULL */
    const char *path;        /* file it was loaded from, or NULL; owned by the registry */
};

/*
 * Holds the registry's mutex so that a lookup and the change that depends
 * on it happen atomically.  Recursive: the public registry functions may be
 * called while it is held.  Makes sure the built-in registries are
 * registered first.
 */
void ggml__registry_lock(void);
void ggml__registry_unlock(void);

/*
 * Lookups for the loader; the caller holds the registry lock, and the
 * copied record (its path included) is valid until it releases it.  Each
 * returns false when nothing matches.  Names compare case-insensitively.
 */
bool ggml__registry_find_handle(const void *dl_handle, struct ggml__reg_record *out);
bool ggml__registry_find_reg(ggml_backend_reg_t reg, struct ggml__reg_record *out);
bool ggml__registry_find_name(const char *name, struct ggml__reg_record *out);

/*
 * Adds a loaded plugin's registry and every device it reports (the caller
 * holds the registry lock and has checked api_version).  path is copied.
 * Returns false, after logging one ERROR message as func, when out of
 * memory; nothing is then registered.
 */
bool ggml__registry_add_plugin(ggml_backend_reg_t reg, void *dl_handle, int score, const char *path,
                               const char *func);

/*
 * Removes reg and every device registered under it from the lists.
 * Returns false when reg is not registered (nothing logged).  Otherwise
 * stores the record's dlopen handle (NULL for an in-process registry) into
 * *dl_handle; the caller dlcloses it after releasing the registry lock.
 */
bool ggml__registry_remove(ggml_backend_reg_t reg, void **dl_handle);

/*
 * Loads the plugin named file_name from GGML_BACKEND_PATH or the plugin
 * directory (see loader.c); NULL, without an ERROR message, when no such
 * file loads.  Used by the ggml-blas.h functions.
 */
ggml_backend_reg_t ggml__load_plugin_by_file_name(const char *file_name, const char *func);

/*
 * The registry named reg_name when one is registered, otherwise the
 * plugin file_name loaded now (ggml__load_plugin_by_file_name); NULL, with
 * one ERROR as func, when neither is available.  The ggml-blas.h and
 * ggml-rpc.h functions find their plugins with it.
 */
ggml_backend_reg_t ggml__plugin_reg(const char *reg_name, const char *file_name, const char *func);

/* True when the two names are equal ignoring ASCII case. */
bool ggml__name_equal(const char *a, const char *b);

#endif
