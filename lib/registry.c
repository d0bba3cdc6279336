/*
 * registry.c - the global lists of registries and devices, their lookups,
 * and the ggml_backend_init_* shortcuts.
 *
 * Invariants:
 *  - every registry appears at most once in regs[], every device at most
 *    once in devs[];
 *  - every device entry names the registry it was registered under (its
 *    owner), and that registry is in regs[]: removing a registry removes
 *    its devices with it, so no device outlives its registry in the lists;
 *  - regs[] and devs[] keep registration order (built-ins first), which is
 *    the order of ggml_backend_reg_get and ggml_backend_dev_get.
 *
 * The built-in registries are registered on the first call into the
 * registry (pthread_once).  A built-in's registration function must not
 * call back into the registry.  Every access to the lists holds one
 * recursive mutex, so a backend's own callbacks (get_name, get_device, ...)
 * may use the public registry functions while the registry calls them.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "backend-private.h"
#include "ggml-cpu.h"
#include "registry-private.h"

#ifndef GGML_BACKEND_DIR
#    error "GGML_BACKEND_DIR must name the plugin directory (set by lib/local.mk)"
#endif

const char *ggml__backend_dir(void)
{
    return GGML_BACKEND_DIR;
}

/* ------------------------------------------------------------ built-ins */

/*
 * Registries compiled into the library, registered in this order before
 * anything else.  NULL-terminated.
 */
static ggml_backend_reg_t (*const builtin_registries[])(void) = {
    ggml_backend_cpu_reg,
    NULL,
};

/* ---------------------------------------------------------------- lists */

struct reg_entry {
    ggml_backend_reg_t reg;
    void *dl_handle;  /* NULL: registered in process */
    int score;
    char *path;       /* NULL: registered in process */
};

struct dev_entry {
    ggml_backend_dev_t dev;
    ggml_backend_reg_t owner;  /* registry it was registered under */
};

static struct reg_entry *regs;
static size_t n_regs, cap_regs;
static struct dev_entry *devs;
static size_t n_devs, cap_devs;

static pthread_once_t registry_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t registry_mutex;

static bool add_registry_locked(ggml_backend_reg_t reg, void *dl_handle, int score, const char *path,
                                const char *func);

static void registry_init(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&registry_mutex, &attr);
    pthread_mutexattr_destroy(&attr);

    for (size_t i = 0; builtin_registries[i] != NULL; i++) {
        ggml_backend_reg_t reg = builtin_registries[i]();
        if (reg != NULL)
            add_registry_locked(reg, NULL, 0, NULL, "ggml_backend_register");
    }
}

void ggml__registry_lock(void)
{
    pthread_once(&registry_once, registry_init);
    pthread_mutex_lock(&registry_mutex);
}

void ggml__registry_unlock(void)
{
    pthread_mutex_unlock(&registry_mutex);
}

bool ggml__name_equal(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return false;
    for (;; a++, b++) {
        unsigned char ca = (unsigned char) *a, cb = (unsigned char) *b;
        if (ca >= 'A' && ca <= 'Z')
            ca = (unsigned char) (ca - 'A' + 'a');
        if (cb >= 'A' && cb <= 'Z')
            cb = (unsigned char) (cb - 'A' + 'a');
        if (ca != cb)
            return false;
        if (ca == '\0')
            return true;
    }
}

static struct reg_entry *find_reg_locked(ggml_backend_reg_t reg)
{
    for (size_t i = 0; i < n_regs; i++)
        if (regs[i].reg == reg)
            return &regs[i];
    return NULL;
}

static bool device_listed_locked(ggml_backend_dev_t dev)
{
    for (size_t i = 0; i < n_devs; i++)
        if (devs[i].dev == dev)
            return true;
    return false;
}

static void copy_record(const struct reg_entry *e, struct ggml__reg_record *out)
{
    out->reg = e->reg;
    out->dl_handle = e->dl_handle;
    out->score = e->score;
    out->path = e->path;
}

/*
 * Appends reg and the devices it reports.  Memory for both lists and the
 * path is reserved before anything changes, so a failure (logged once as
 * func) leaves the lists as they were.  A registry already listed is left
 * alone.
 */
static bool add_registry_locked(ggml_backend_reg_t reg, void *dl_handle, int score, const char *path,
                                const char *func)
{
    if (find_reg_locked(reg) != NULL)
        return true;

    const size_t n = reg->iface.get_device_count(reg);
    char *path_copy = NULL;
    if (path != NULL && (path_copy = strdup(path)) == NULL)
        goto oom;
    if (!ggml__grow_array((void **) &regs, &cap_regs, n_regs + 1, sizeof regs[0]) ||
        !ggml__grow_array((void **) &devs, &cap_devs, n_devs + n, sizeof devs[0]))
        goto oom;

    regs[n_regs++] = (struct reg_entry) {
        .reg = reg, .dl_handle = dl_handle, .score = score, .path = path_copy,
    };
    for (size_t i = 0; i < n; i++) {
        ggml_backend_dev_t dev = reg->iface.get_device(reg, i);
        if (dev == NULL) {
            ggml__log_at(GGML_LOG_LEVEL_WARN, func, "registry %s reported no device at index %zu",
                         reg->iface.get_name(reg), i);
            continue;
        }
        if (!device_listed_locked(dev))
            devs[n_devs++] = (struct dev_entry) { .dev = dev, .owner = reg };
    }
    ggml__log_at(GGML_LOG_LEVEL_DEBUG, func, "registered %s (%zu device%s)", reg->iface.get_name(reg), n,
                 n == 1 ? "" : "s");
    return true;

oom:
    free(path_copy);
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory registering %s", reg->iface.get_name(reg));
    return false;
}

/* ------------------------------------------------- loader's internal API */

bool ggml__registry_find_handle(const void *dl_handle, struct ggml__reg_record *out)
{
    for (size_t i = 0; i < n_regs; i++) {
        if (dl_handle != NULL && regs[i].dl_handle == dl_handle) {
            copy_record(&regs[i], out);
            return true;
        }
    }
    return false;
}

bool ggml__registry_find_reg(ggml_backend_reg_t reg, struct ggml__reg_record *out)
{
    const struct reg_entry *e = find_reg_locked(reg);
    if (e != NULL)
        copy_record(e, out);
    return e != NULL;
}

bool ggml__registry_find_name(const char *name, struct ggml__reg_record *out)
{
    for (size_t i = 0; i < n_regs; i++) {
        if (ggml__name_equal(regs[i].reg->iface.get_name(regs[i].reg), name)) {
            copy_record(&regs[i], out);
            return true;
        }
    }
    return false;
}

bool ggml__registry_add_plugin(ggml_backend_reg_t reg, void *dl_handle, int score, const char *path,
                               const char *func)
{
    return add_registry_locked(reg, dl_handle, score, path, func);
}

bool ggml__registry_remove(ggml_backend_reg_t reg, void **dl_handle)
{
    struct reg_entry *e = find_reg_locked(reg);
    if (e == NULL)
        return false;

    size_t kept = 0;
    for (size_t i = 0; i < n_devs; i++)
        if (devs[i].owner != reg)
            devs[kept++] = devs[i];
    n_devs = kept;

    *dl_handle = e->dl_handle;
    free(e->path);
    size_t index = (size_t) (e - regs);
    memmove(&regs[index], &regs[index + 1], (n_regs - index - 1) * sizeof regs[0]);
    n_regs--;
    return true;
}

/* ---------------------------------------------------------- registration */

void ggml_backend_register(ggml_backend_reg_t reg)
{
    if (reg == NULL) {
        ggml__error("reg is NULL");
        return;
    }
    /* a registry of another version may lay its table out differently:
     * nothing in it is read before this check */
    if (reg->api_version != GGML_BACKEND_API_VERSION) {
        ggml__error("registry %p has API version %d, this library needs %d", (void *) reg, reg->api_version,
                    GGML_BACKEND_API_VERSION);
        return;
    }
    if (reg->iface.get_name == NULL || reg->iface.get_device_count == NULL || reg->iface.get_device == NULL) {
        ggml__error("registry %p lacks get_name, get_device_count or get_device", (void *) reg);
        return;
    }
    ggml__registry_lock();
    add_registry_locked(reg, NULL, 0, NULL, __func__);
    ggml__registry_unlock();
}

void ggml_backend_device_register(ggml_backend_dev_t device)
{
    if (device == NULL) {
        ggml__error("device is NULL");
        return;
    }
    ggml__registry_lock();
    if (device->reg == NULL || find_reg_locked(device->reg) == NULL) {
        ggml__error("device %p: its registry %p is not registered (call ggml_backend_register first)",
                    (void *) device, (void *) device->reg);
    } else if (!device_listed_locked(device)) {
        if (ggml__grow_array((void **) &devs, &cap_devs, n_devs + 1, sizeof devs[0]))
            devs[n_devs++] = (struct dev_entry) { .dev = device, .owner = device->reg };
        else
            ggml__error("out of memory");
    }
    ggml__registry_unlock();
}

/* ---------------------------------------------------------- one registry */

const char *ggml_backend_reg_name(ggml_backend_reg_t reg)
{
    if (reg == NULL) {
        ggml__error("reg is NULL");
        return NULL;
    }
    return reg->iface.get_name(reg);
}

size_t ggml_backend_reg_dev_count(ggml_backend_reg_t reg)
{
    if (reg == NULL) {
        ggml__error("reg is NULL");
        return 0;
    }
    return reg->iface.get_device_count(reg);
}

ggml_backend_dev_t ggml_backend_reg_dev_get(ggml_backend_reg_t reg, size_t index)
{
    if (reg == NULL) {
        ggml__error("reg is NULL");
        return NULL;
    }
    const size_t n = reg->iface.get_device_count(reg);
    if (index >= n) {
        ggml__error("index %zu is out of range: registry %s has %zu device%s", index,
                    reg->iface.get_name(reg), n, n == 1 ? "" : "s");
        return NULL;
    }
    return reg->iface.get_device(reg, index);
}

void *ggml_backend_reg_get_proc_address(ggml_backend_reg_t reg, const char *name)
{
    if (reg == NULL || name == NULL) {
        ggml__error("%s is NULL", reg == NULL ? "reg" : "name");
        return NULL;
    }
    return reg->iface.get_proc_address ? reg->iface.get_proc_address(reg, name) : NULL;
}

/* --------------------------------------------------------- enumeration */

size_t ggml_backend_reg_count(void)
{
    ggml__registry_lock();
    size_t n = n_regs;
    ggml__registry_unlock();
    return n;
}

ggml_backend_reg_t ggml_backend_reg_get(size_t index)
{
    ggml_backend_reg_t reg = NULL;
    ggml__registry_lock();
    if (index < n_regs)
        reg = regs[index].reg;
    else
        ggml__error("index %zu is out of range: %zu registr%s registered", index, n_regs,
                    n_regs == 1 ? "y is" : "ies are");
    ggml__registry_unlock();
    return reg;
}

ggml_backend_reg_t ggml_backend_reg_by_name(const char *name)
{
    if (name == NULL) {
        ggml__error("name is NULL");
        return NULL;
    }
    struct ggml__reg_record rec;
    ggml__registry_lock();
    bool found = ggml__registry_find_name(name, &rec);
    ggml__registry_unlock();
    return found ? rec.reg : NULL;
}

size_t ggml_backend_dev_count(void)
{
    ggml__registry_lock();
    size_t n = n_devs;
    ggml__registry_unlock();
    return n;
}

ggml_backend_dev_t ggml_backend_dev_get(size_t index)
{
    ggml_backend_dev_t dev = NULL;
    ggml__registry_lock();
    if (index < n_devs)
        dev = devs[index].dev;
    else
        ggml__error("index %zu is out of range: %zu device%s registered", index, n_devs,
                    n_devs == 1 ? " is" : "s are");
    ggml__registry_unlock();
    return dev;
}

ggml_backend_dev_t ggml_backend_dev_by_name(const char *name)
{
    if (name == NULL) {
        ggml__error("name is NULL");
        return NULL;
    }
    ggml_backend_dev_t dev = NULL;
    ggml__registry_lock();
    for (size_t i = 0; i < n_devs && dev == NULL; i++)
        if (ggml__name_equal(devs[i].dev->iface.get_name(devs[i].dev), name))
            dev = devs[i].dev;
    ggml__registry_unlock();
    return dev;
}

ggml_backend_dev_t ggml_backend_dev_by_type(enum ggml_backend_dev_type type)
{
    ggml_backend_dev_t dev = NULL;
    ggml__registry_lock();
    for (size_t i = 0; i < n_devs && dev == NULL; i++)
        if (devs[i].dev->iface.get_type(devs[i].dev) == type)
            dev = devs[i].dev;
    ggml__registry_unlock();
    return dev;
}

/* ------------------------------------------------------------ shortcuts */

static const char *type_name(enum ggml_backend_dev_type type)
{
    switch (type) {
    case GGML_BACKEND_DEVICE_TYPE_CPU:     return "CPU";
    case GGML_BACKEND_DEVICE_TYPE_GPU:     return "GPU";
    case GGML_BACKEND_DEVICE_TYPE_GPU_UMA: return "GPU_UMA";
    case GGML_BACKEND_DEVICE_TYPE_ACCEL:   return "ACCEL";
    }
    return "unknown";
}

ggml_backend_t ggml_backend_init_by_name(const char *name, const char *params)
{
    if (name == NULL) {
        ggml__error("name is NULL");
        return NULL;
    }
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(name);
    if (dev == NULL) {
        ggml__error("no device named '%s' is registered", name);
        return NULL;
    }
    return ggml_backend_dev_init(dev, params);
}

ggml_backend_t ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char *params)
{
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(type);
    if (dev == NULL) {
        ggml__error("no device of type %s (%d) is registered", type_name(type), (int) type);
        return NULL;
    }
    return ggml_backend_dev_init(dev, params);
}

ggml_backend_t ggml_backend_init_best(void)
{
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_GPU);
    if (dev == NULL)
        dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_GPU_UMA);
    if (dev == NULL)
        dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (dev == NULL) {
        ggml__error("no GPU, integrated GPU or CPU device is registered");
        return NULL;
    }
    return ggml_backend_dev_init(dev, NULL);
}
