/*
 * loader.c - backend plugins: ggml_backend_load, ggml_backend_unload,
 * ggml_backend_load_all and ggml_backend_load_all_from_path.
 *
 * A plugin is a shared module exporting ggml_backend_init (returns its
 * registry) and optionally ggml_backend_score.  Loading one:
 *   1. dlopen(path, RTLD_NOW | RTLD_LOCAL): unresolved symbols fail now,
 *      and the plugin's symbols never satisfy another module's;
 *   2. a module already registered (dlopen returned a known handle) gives
 *      back its registry: loading a file twice loads it once;
 *   3. ggml_backend_score, when exported, is asked first: 0 or less means
 *      "cannot run on this system" and the module is closed again; a
 *      plugin without it scores 1, the lowest preference;
 *   4. ggml_backend_init must exist and return a registry whose api_version
 *      is GGML_BACKEND_API_VERSION, with the required table members;
 *   5. when a registry of the same name (compared ignoring case) is
 *      already registered, the higher score stays and the other is
 *      unloaded; on a tie the one already registered stays, and a registry
 *      registered in process (built-in or ggml_backend_register) always
 *      stays.  The decision is logged at INFO.
 *
 * Where ggml_backend_load_all looks, in this order:
 *   - the plugin directory, ggml__backend_dir() (configure's backenddir);
 *   - each colon-separated entry of GGML_BACKEND_PATH (read with
 *     secure_getenv, so ignored in set-user-ID programs): a directory is
 *     scanned, a file is loaded whatever its name.  Relative entries are
 *     ignored with a warning, empty ones silently.
 * ggml_backend_load_all_from_path(dir) scans dir instead of the plugin
 * directory (as upstream: the caller chose where plugins live), then the
 * GGML_BACKEND_PATH entries; with dir NULL it is ggml_backend_load_all.
 * The working directory and the executable's directory are never searched.
 * ggml__load_plugin_by_file_name (for ggml__plugin_reg) loads one
 * named file from the first GGML_BACKEND_PATH entry, then the plugin
 * directory, that has it.
 *
 * Scanning a directory loads, in alphabetical order, the files named
 * libggml-NAME.so, NAME non-empty, except libggml-backend.so (this
 * library's development link).  Other names, versioned names such as
 * libggml-x.so.1 included, are skipped.
 *
 * Which files are plugins, however they are named (a scan, a
 * GGML_BACKEND_PATH entry, ggml_backend_load): only a regular file, or a
 * symbolic link to one, is opened; a FIFO would block dlopen for good, a
 * device node could act when opened.  The file and the directory that
 * holds it (after symbolic links) must belong to root or the effective
 * user and must not be writable by every user, sticky or not: a plugin
 * runs with the program's rights, so whoever may replace it must be
 * trusted as much as the program.  Group write permission is accepted
 * (user private groups make it common).  Each refusal is logged with the
 * reason, at the levels below.  A bare file name given to
 * ggml_backend_load goes to dlopen unchecked: the dynamic linker picks
 * the file along its search path, which the program's environment sets.
 *
 * Log levels: every file that is not loaded gets exactly one message.  An
 * explicit ggml_backend_load of a bad file is an ERROR.  A bad file found
 * while scanning (or named by GGML_BACKEND_PATH) is logged at WARN: a stray
 * file in a plugin directory is the system's business, not a failure of
 * the calling program, and must not look like a library error.  A plugin
 * that declines to run here (score 0) is a note: WARN when loaded
 * explicitly, INFO when found by a scan.
 *
 * Unloading (ggml_backend_unload, or a plugin outranked by a later one)
 * removes the registry and its devices from the lists, then closes the
 * module.  Backends, buffers and events the plugin made must be freed
 * before: the loader cannot know them, and their code goes away.
 *
 * Locking: loader_mutex serializes loads and unloads; it is taken before
 * the registry's lock and plugin code runs without the registry's lock
 * held.  A plugin must not call ggml_backend_load from its entry points.
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ggml-impl.h"
#include "backend-private.h"
#include "registry-private.h"

#define PLUGIN_PREFIX "libggml-"
#define PLUGIN_SUFFIX ".so"
#define SELF_NAME     "libggml-backend.so"

static pthread_mutex_t loader_mutex = PTHREAD_MUTEX_INITIALIZER;

/* --------------------------------------------------------- one plugin */

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    return "of an unknown kind";
}

/*
 * The ownership and permission rule for a plugin file and the directory
 * holding it: owned by root or the effective user, and not writable by
 * every user (sticky or not).  Returns NULL when st passes, else why not.
 */
static const char *unsafe_owner_or_mode(const struct stat *st)
{
    if (st->st_uid != 0 && st->st_uid != geteuid())
        return "belongs to a user other than root and this process's user";
    if (st->st_mode & S_IWOTH)
        return "is writable by every user";
    return NULL;
}

/*
 * Checks that path may be opened as a plugin (see "Which files are
 * plugins" in the header comment).  Returns the name to give dlopen,
 * allocated: the file's canonical path, or a bare file name unchanged.
 * NULL after logging why not at level as func.
 */
static char *checked_plugin_path(const char *path, enum ggml_log_level level, const char *func)
{
    if (strchr(path, '/') == NULL) {
        /* a bare name is the dynamic linker's to find along its search path */
        char *name = strdup(path);
        if (name == NULL)
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
        return name;
    }
    char *resolved = realpath(path, NULL);
    if (resolved == NULL) {
        ggml__log_at(level, func, "cannot load plugin %s: %s", path, strerror(errno));
        return NULL;
    }
    /* realpath's result is absolute: the directory ends at its last slash */
    size_t dir_len = (size_t) (strrchr(resolved, '/') - resolved);
    char *dir = strndup(resolved, dir_len > 0 ? dir_len : 1);
    struct stat file_st, dir_st;
    const char *why;
    bool safe = false;
    if (dir == NULL)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
    else if (stat(resolved, &file_st) != 0)
        ggml__log_at(level, func, "cannot load plugin %s: %s", path, strerror(errno));
    else if (!S_ISREG(file_st.st_mode))
        ggml__log_at(level, func, "plugin %s is %s, not a regular file", path, file_kind(file_st.st_mode));
    else if ((why = unsafe_owner_or_mode(&file_st)) != NULL)
        ggml__log_at(level, func, "plugin %s %s", path, why);
    else if (stat(dir, &dir_st) != 0)
        ggml__log_at(level, func, "cannot load plugin %s: its directory %s: %s", path, dir, strerror(errno));
    else if ((why = unsafe_owner_or_mode(&dir_st)) != NULL)
        ggml__log_at(level, func, "plugin %s: its directory %s %s", path, dir, why);
    else
        safe = true;
    free(dir);
    if (!safe) {
        free(resolved);
        return NULL;
    }
    return resolved;
}

/*
 * Loads the plugin at path and registers it.  explicit selects the log
 * levels (see the header comment); messages are logged as func.  Returns
 * the registry now registered for the plugin's name (the plugin's, or the
 * one that outranked it), or NULL when the file was rejected.
 */
static ggml_backend_reg_t load_plugin(const char *path, bool explicit, const char *func)
{
    const enum ggml_log_level reject = explicit ? GGML_LOG_LEVEL_ERROR : GGML_LOG_LEVEL_WARN;
    const enum ggml_log_level note = explicit ? GGML_LOG_LEVEL_WARN : GGML_LOG_LEVEL_INFO;
    ggml_backend_reg_t result = NULL;
    struct ggml__reg_record rec;

    pthread_mutex_lock(&loader_mutex);

    /*
     * The checks and dlopen look the name up twice: whoever can rename
     * entries of the file's directory in between could slip another file
     * in.  Only root, the effective user (the directory is theirs) or, for
     * a group-writable directory, its group can, since a directory that
     * any user may write to is refused; its parent directories are not
     * checked.  Opening the file first (O_NONBLOCK, then fstat) would not
     * shorten the window, as dlopen opens the name again, and opening a
     * device node can act on the device; dlopen of /proc/self/fd/N would
     * close it, but the C library then knows the module by that name,
     * which the next descriptor of that number reuses.  So the name is
     * checked right before dlopen, under loader_mutex.
     */
    char *resolved = checked_plugin_path(path, reject, func);
    if (resolved == NULL)
        goto out;
    dlerror();
    void *handle = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        /* dlerror's text usually starts with the name: do not say it twice */
        const char *why = dlerror();
        size_t len = strlen(resolved);
        if (why == NULL)
            why = "unknown error";
        else if (strncmp(why, resolved, len) == 0 && strncmp(why + len, ": ", 2) == 0)
            why += len + 2;
        ggml__log_at(reject, func, "cannot load plugin %s: %s", path, why);
        free(resolved);
        goto out;
    }
    free(resolved);

    ggml__registry_lock();
    bool known = ggml__registry_find_handle(handle, &rec);
    ggml__registry_unlock();
    if (known) {
        /* dlopen counted a second reference: give it back */
        ggml__log_at(GGML_LOG_LEVEL_DEBUG, func, "plugin %s is already loaded", path);
        dlclose(handle);
        result = rec.reg;
        goto out;
    }

    int score = 1;
    ggml_backend_score_t score_fn = (ggml_backend_score_t) dlsym(handle, "ggml_backend_score");
    if (score_fn != NULL) {
        score = score_fn();
        if (score <= 0) {
            ggml__log_at(note, func, "plugin %s cannot run on this system (score %d): not loaded", path, score);
            goto reject;
        }
    }

    ggml_backend_init_t init_fn = (ggml_backend_init_t) dlsym(handle, "ggml_backend_init");
    if (init_fn == NULL) {
        ggml__log_at(reject, func, "plugin %s does not export ggml_backend_init", path);
        goto reject;
    }
    ggml_backend_reg_t reg = init_fn();
    if (reg == NULL) {
        ggml__log_at(reject, func, "plugin %s: ggml_backend_init returned NULL", path);
        goto reject;
    }
    /* a registry of another version may lay its table out differently:
     * nothing in it is read before this check */
    if (reg->api_version != GGML_BACKEND_API_VERSION) {
        ggml__log_at(reject, func, "plugin %s: API version %d, this library needs %d", path, reg->api_version,
                     GGML_BACKEND_API_VERSION);
        goto reject;
    }
    if (reg->iface.get_name == NULL || reg->iface.get_device_count == NULL || reg->iface.get_device == NULL) {
        ggml__log_at(reject, func, "plugin %s: its registry lacks get_name, get_device_count or get_device",
                     path);
        goto reject;
    }
    const char *name = reg->iface.get_name(reg);
    if (name == NULL || name[0] == '\0') {
        ggml__log_at(reject, func, "plugin %s: its registry has no name", path);
        goto reject;
    }

    void *evicted = NULL;
    bool keep_handle = false;
    ggml__registry_lock();
    if (ggml__registry_find_reg(reg, &rec)) {
        /* the module handed out a registry that is registered already.
         * If its init registered it in process, the registry's code is in
         * this module: keep the module open for good. */
        result = reg;
        keep_handle = rec.dl_handle == NULL;
    } else if (ggml__registry_find_name(name, &rec)) {
        if (rec.dl_handle == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_INFO, func,
                         "%s: kept the registry registered in process over plugin %s", name, path);
            result = rec.reg;
        } else if (rec.score >= score) {
            ggml__log_at(GGML_LOG_LEVEL_INFO, func, "%s: kept %s (score %d) over %s (score %d)", name,
                         rec.path, rec.score, path, score);
            result = rec.reg;
        } else if (ggml__registry_add_plugin(reg, handle, score, path, func)) {
            /* the winner is added first: if that fails, the old one stays */
            ggml__log_at(GGML_LOG_LEVEL_INFO, func, "%s: kept %s (score %d) over %s (score %d)", name,
                         path, score, rec.path, rec.score);
            ggml__registry_remove(rec.reg, &evicted);
            result = reg;
            keep_handle = true;
        }
    } else if (ggml__registry_add_plugin(reg, handle, score, path, func)) {
        size_t n = reg->iface.get_device_count(reg);
        ggml__log_at(GGML_LOG_LEVEL_INFO, func, "loaded %s (score %d, %zu device%s) from %s", name, score, n,
                     n == 1 ? "" : "s", path);
        result = reg;
        keep_handle = true;
    }
    ggml__registry_unlock();
    if (evicted != NULL)
        dlclose(evicted);
    if (keep_handle)
        goto out;

reject:
    dlclose(handle);
out:
    pthread_mutex_unlock(&loader_mutex);
    return result;
}

ggml_backend_reg_t ggml_backend_load(const char *path)
{
    if (path == NULL) {
        ggml__error("path is NULL");
        return NULL;
    }
    return load_plugin(path, true, __func__);
}

void ggml_backend_unload(ggml_backend_reg_t reg)
{
    if (reg == NULL) {
        ggml__error("reg is NULL");
        return;
    }
    void *handle = NULL;
    pthread_mutex_lock(&loader_mutex);
    ggml__registry_lock();
    struct ggml__reg_record rec;
    bool known = ggml__registry_find_reg(reg, &rec);
    if (known) {
        /* the name lives in the module: log before closing it */
        ggml__log_at(GGML_LOG_LEVEL_DEBUG, __func__, "unloading %s%s%s", reg->iface.get_name(reg),
                     rec.path ? " loaded from " : "", rec.path ? rec.path : "");
        ggml__registry_remove(reg, &handle);
    }
    ggml__registry_unlock();
    if (!known)
        ggml__error("registry %p is not registered", (void *) reg);
    else if (handle != NULL)
        dlclose(handle);
    pthread_mutex_unlock(&loader_mutex);
}

/* ------------------------------------------------------------ scanning */

static bool is_plugin_name(const char *name)
{
    const size_t len = strlen(name), pre = strlen(PLUGIN_PREFIX), suf = strlen(PLUGIN_SUFFIX);
    return len > pre + suf && strncmp(name, PLUGIN_PREFIX, pre) == 0 &&
           strcmp(name + len - suf, PLUGIN_SUFFIX) == 0 && strcmp(name, SELF_NAME) != 0;
}

static int plugin_entry_filter(const struct dirent *entry)
{
    return is_plugin_name(entry->d_name);
}

/*
 * Loads every plugin file of dir (found by a scan: rejections at WARN).
 * A directory that cannot be read is logged at unreadable_level, or at
 * DEBUG when it does not exist and missing_is_quiet is set.
 */
static void scan_dir(const char *dir, enum ggml_log_level unreadable_level, bool missing_is_quiet,
                     const char *func)
{
    struct dirent **entries = NULL;
    int n = scandir(dir, &entries, plugin_entry_filter, alphasort);
    if (n < 0) {
        int err = errno;
        enum ggml_log_level level = err == ENOENT && missing_is_quiet ? GGML_LOG_LEVEL_DEBUG : unreadable_level;
        ggml__log_at(level, func, "cannot read plugin directory %s: %s", dir, strerror(err));
        return;
    }
    for (int i = 0; i < n; i++) {
        size_t len = strlen(dir) + 1 + strlen(entries[i]->d_name) + 1;
        char *path = malloc(len);
        if (path == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
        } else {
            snprintf(path, len, "%s/%s", dir, entries[i]->d_name);
            load_plugin(path, false, func);
            free(path);
        }
        free(entries[i]);
    }
    free(entries);
}

static const char *backend_path_env(void)
{
#ifdef HAVE_SECURE_GETENV
    return secure_getenv("GGML_BACKEND_PATH");
#else
    return getenv("GGML_BACKEND_PATH");
#endif
}

/* Loads what one GGML_BACKEND_PATH entry names (see the header comment). */
static void load_path_entry(const char *entry, const char *func)
{
    if (entry[0] == '\0')
        return;
    if (entry[0] != '/') {
        ggml__log_at(GGML_LOG_LEVEL_WARN, func,
                     "GGML_BACKEND_PATH entry '%s' is not an absolute path: ignored", entry);
        return;
    }
    struct stat st;
    if (stat(entry, &st) != 0) {
        ggml__log_at(GGML_LOG_LEVEL_WARN, func, "GGML_BACKEND_PATH entry %s: %s", entry, strerror(errno));
        return;
    }
    if (S_ISDIR(st.st_mode))
        scan_dir(entry, GGML_LOG_LEVEL_WARN, false, func);
    else
        load_plugin(entry, false, func);
}

/*
 * Loads the plugin file_name (a bare file name such as libggml-blas.so)
 * from the first place that has it: each GGML_BACKEND_PATH entry in order
 * (a directory holding file_name, or an entry naming that file), then the
 * plugin directory.  A file that is found but rejected is logged at WARN
 * and the search goes on.  Returns the registry, or NULL with nothing
 * logged at ERROR: the caller says what it was looking for.
 */
ggml_backend_reg_t ggml__load_plugin_by_file_name(const char *file_name, const char *func)
{
    ggml_backend_reg_t reg = NULL;
    const char *env = backend_path_env();
    char *list = env != NULL ? strdup(env) : NULL;
    for (char *entry = list, *next; entry != NULL && reg == NULL; entry = next) {
        next = strchr(entry, ':');
        if (next != NULL)
            *next++ = '\0';
        if (entry[0] != '/')
            continue;  /* load_all warns about these; here they are simply not searched */
        struct stat st;
        if (stat(entry, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            size_t len = strlen(entry) + 1 + strlen(file_name) + 1;
            char *path = malloc(len);
            if (path == NULL)
                break;
            snprintf(path, len, "%s/%s", entry, file_name);
            if (stat(path, &st) == 0)
                reg = load_plugin(path, false, func);
            free(path);
        } else {
            const char *base = strrchr(entry, '/') + 1;
            if (strcmp(base, file_name) == 0)
                reg = load_plugin(entry, false, func);
        }
    }
    free(list);

    const char *dir = ggml__backend_dir();
    if (reg == NULL && dir[0] == '/') {
        size_t len = strlen(dir) + 1 + strlen(file_name) + 1;
        char *path = malloc(len);
        if (path != NULL) {
            snprintf(path, len, "%s/%s", dir, file_name);
            struct stat st;
            if (stat(path, &st) == 0)
                reg = load_plugin(path, false, func);
            free(path);
        }
    }
    return reg;
}

ggml_backend_reg_t ggml__plugin_reg(const char *reg_name, const char *file_name, const char *func)
{
    ggml_backend_reg_t reg = ggml_backend_reg_by_name(reg_name);
    if (reg == NULL)
        reg = ggml__load_plugin_by_file_name(file_name, func);
    if (reg == NULL)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "the %s plugin is not available: no loadable %s in GGML_BACKEND_PATH or in %s", reg_name,
                     file_name, ggml__backend_dir());
    return reg;
}

/* Scans user_dir, or the plugin directory when it is NULL, then GGML_BACKEND_PATH. */
static void load_all(const char *user_dir, const char *func)
{
    if (user_dir != NULL) {
        scan_dir(user_dir, GGML_LOG_LEVEL_ERROR, false, func);
    } else {
        const char *dir = ggml__backend_dir();
        if (dir[0] == '/')
            scan_dir(dir, GGML_LOG_LEVEL_WARN, true, func);
        else
            ggml__log_at(GGML_LOG_LEVEL_WARN, func, "plugin directory '%s' is not an absolute path: ignored", dir);
    }

    const char *env = backend_path_env();
    if (env == NULL)
        return;
    char *list = strdup(env);
    if (list == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
        return;
    }
    for (char *entry = list, *next; entry != NULL; entry = next) {
        next = strchr(entry, ':');
        if (next != NULL)
            *next++ = '\0';
        load_path_entry(entry, func);
    }
    free(list);
}

void ggml_backend_load_all(void)
{
    load_all(NULL, __func__);
}

void ggml_backend_load_all_from_path(const char *dir_path)
{
    load_all(dir_path, __func__);
}
