/*
 * test-registry.c - the registry with registries defined in this program:
 * registration, enumeration, case-insensitive lookups, lookups by type,
 * ggml_backend_init_by_name/_by_type/_best, get_proc_address, removal,
 * concurrent registration, and every error path.
 *
 * Built-in registries (the CPU backend, added by a later step) may already
 * be registered: every expectation is relative to what the registry held
 * before the test added anything.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "tap.h"

/* ------------------------------------------------------- test devices */

/* What a test device is; its ggml_backend_device's context. */
struct fake_device {
    const char *name;
    enum ggml_backend_dev_type type;
    bool init_fails;          /* init_backend returns NULL */
    const char *last_params;  /* params of the last init_backend */
};

static int live_backends;

static const char *fake_dev_name(ggml_backend_dev_t dev)
{
    return ((struct fake_device *) dev->context)->name;
}

static const char *fake_dev_description(ggml_backend_dev_t dev)
{
    return "fake device of test-registry";
}

static void fake_dev_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = 1;
    *total_bytes = 2;
}

static enum ggml_backend_dev_type fake_dev_type(ggml_backend_dev_t dev)
{
    return ((struct fake_device *) dev->context)->type;
}

static void fake_dev_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    props->name = fake_dev_name(dev);
    props->description = fake_dev_description(dev);
    fake_dev_memory(dev, &props->memory_free, &props->memory_total);
    props->type = fake_dev_type(dev);
}

static const char *fake_backend_name(ggml_backend_t backend)
{
    return fake_dev_name(backend->device);
}

static void fake_backend_free(ggml_backend_t backend)
{
    live_backends--;
    free(backend);
}

static enum ggml_status fake_backend_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    return GGML_STATUS_SUCCESS;
}

static ggml_backend_t fake_dev_init(ggml_backend_dev_t dev, const char *params)
{
    struct fake_device *fake = dev->context;
    fake->last_params = params;
    if (fake->init_fails)
        return NULL;
    ggml_backend_t backend = calloc(1, sizeof *backend);
    if (backend == NULL)
        return NULL;
    backend->iface.get_name = fake_backend_name;
    backend->iface.free = fake_backend_free;
    backend->iface.graph_compute = fake_backend_compute;
    backend->device = dev;
    live_backends++;
    return backend;
}

static ggml_backend_buffer_type_t fake_dev_buft(ggml_backend_dev_t dev)
{
    return NULL;
}

static bool fake_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    return false;
}

static bool fake_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    return false;
}

#define FAKE_DEVICE_IFACE                                                  \
    {                                                                      \
        .get_name = fake_dev_name, .get_description = fake_dev_description, \
        .get_memory = fake_dev_memory, .get_type = fake_dev_type,          \
        .get_props = fake_dev_props, .init_backend = fake_dev_init,        \
        .get_buffer_type = fake_dev_buft,                                  \
        .supports_op = fake_dev_supports_op,                               \
        .supports_buft = fake_dev_supports_buft,                           \
    }

/* -------------------------------------------------------- test registries */

/* Context of a test registry: its name and devices. */
struct fake_registry {
    const char *name;
    size_t n_devices;
    ggml_backend_dev_t devices[4];
};

static const char *fake_reg_name(ggml_backend_reg_t reg)
{
    return ((struct fake_registry *) reg->context)->name;
}

static size_t fake_reg_count(ggml_backend_reg_t reg)
{
    return ((struct fake_registry *) reg->context)->n_devices;
}

static ggml_backend_dev_t fake_reg_device(ggml_backend_reg_t reg, size_t index)
{
    struct fake_registry *fake = reg->context;
    return index < fake->n_devices ? fake->devices[index] : NULL;
}

static int beta_answer(void)
{
    return 42;
}

static void *beta_proc_address(ggml_backend_reg_t reg, const char *name)
{
    return strcmp(name, "beta_answer") == 0 ? (void *) beta_answer : NULL;
}

/* the devices, defined with their registries below */
static struct ggml_backend_device alpha0, alpha1, beta0, extra0, cpuonly0, failing0, orphan0;

/* ALPHA: an accelerator and an integrated GPU; no get_proc_address. */
static struct fake_device alpha0_fake = { .name = "Alpha0", .type = GGML_BACKEND_DEVICE_TYPE_ACCEL };
static struct fake_device alpha1_fake = { .name = "Alpha1", .type = GGML_BACKEND_DEVICE_TYPE_IGPU };
static struct fake_registry alpha_fake = { .name = "ALPHA", .n_devices = 2, .devices = { &alpha0, &alpha1 } };
static struct ggml_backend_reg alpha_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = fake_reg_name, .get_device_count = fake_reg_count, .get_device = fake_reg_device },
    .context = &alpha_fake,
};
static struct ggml_backend_device alpha0 = { .iface = FAKE_DEVICE_IFACE, .reg = &alpha_reg, .context = &alpha0_fake };
static struct ggml_backend_device alpha1 = { .iface = FAKE_DEVICE_IFACE, .reg = &alpha_reg, .context = &alpha1_fake };

/* Beta: one GPU, plus a device added later with ggml_backend_device_register. */
static struct fake_device beta0_fake = { .name = "Beta-GPU", .type = GGML_BACKEND_DEVICE_TYPE_GPU };
static struct fake_device extra_fake = { .name = "Extra0", .type = GGML_BACKEND_DEVICE_TYPE_GPU };
static struct fake_registry beta_fake = { .name = "Beta", .n_devices = 1, .devices = { &beta0 } };
static struct ggml_backend_reg beta_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = fake_reg_name, .get_device_count = fake_reg_count, .get_device = fake_reg_device,
               .get_proc_address = beta_proc_address },
    .context = &beta_fake,
};
static struct ggml_backend_device beta0 = { .iface = FAKE_DEVICE_IFACE, .reg = &beta_reg, .context = &beta0_fake };
static struct ggml_backend_device extra0 = { .iface = FAKE_DEVICE_IFACE, .reg = &beta_reg, .context = &extra_fake };

/* CpuOnly: a CPU device whose init fails on request. */
static struct fake_device cpuonly0_fake = { .name = "CpuOnly0", .type = GGML_BACKEND_DEVICE_TYPE_CPU };
static struct fake_registry cpuonly_fake = { .name = "CpuOnly", .n_devices = 1, .devices = { &cpuonly0 } };
static struct ggml_backend_reg cpuonly_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = fake_reg_name, .get_device_count = fake_reg_count, .get_device = fake_reg_device },
    .context = &cpuonly_fake,
};
static struct ggml_backend_device cpuonly0 = { .iface = FAKE_DEVICE_IFACE, .reg = &cpuonly_reg, .context = &cpuonly0_fake };

/* Failing: a device that cannot create a backend. */
static struct fake_device failing0_fake = { .name = "Failing0", .type = GGML_BACKEND_DEVICE_TYPE_ACCEL,
                                            .init_fails = true };
static struct fake_registry failing_fake = { .name = "Failing", .n_devices = 1, .devices = { &failing0 } };
static struct ggml_backend_reg failing_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = fake_reg_name, .get_device_count = fake_reg_count, .get_device = fake_reg_device },
    .context = &failing_fake,
};
static struct ggml_backend_device failing0 = { .iface = FAKE_DEVICE_IFACE, .reg = &failing_reg, .context = &failing0_fake };

/* Empty: no devices at all. */
static struct fake_registry empty_fake = { .name = "Empty", .n_devices = 0 };
static struct ggml_backend_reg empty_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = fake_reg_name, .get_device_count = fake_reg_count, .get_device = fake_reg_device },
    .context = &empty_fake,
};

/* Never registered: its device cannot be registered either. */
static struct fake_device orphan0_fake = { .name = "Orphan0", .type = GGML_BACKEND_DEVICE_TYPE_GPU };
static struct fake_registry orphan_fake = { .name = "Orphan", .n_devices = 1, .devices = { &orphan0 } };
static struct ggml_backend_reg orphan_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = fake_reg_name, .get_device_count = fake_reg_count, .get_device = fake_reg_device },
    .context = &orphan_fake,
};
static struct ggml_backend_device orphan0 = { .iface = FAKE_DEVICE_IFACE, .reg = &orphan_reg, .context = &orphan0_fake };

/* Wrong plugin ABI, and a table without get_name. */
static struct fake_registry badv_fake = { .name = "BadVersion", .n_devices = 0 };
static struct ggml_backend_reg badv_reg = {
    .api_version = GGML_BACKEND_API_VERSION + 1,
    .iface = { .get_name = fake_reg_name, .get_device_count = fake_reg_count, .get_device = fake_reg_device },
    .context = &badv_fake,
};
static struct fake_registry noname_fake = { .name = "NoName", .n_devices = 0 };
static struct ggml_backend_reg noname_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = NULL, .get_device_count = fake_reg_count, .get_device = fake_reg_device },
    .context = &noname_fake,
};

/* Reentrant: its callbacks use the public registry functions, which the
 * registry calls while it holds its lock. */
static size_t reentrant_calls;
static const char *reentrant_name(ggml_backend_reg_t reg)
{
    reentrant_calls += ggml_backend_reg_count() > 0;
    return "Reentrant";
}
static size_t reentrant_count(ggml_backend_reg_t reg)
{
    reentrant_calls += ggml_backend_dev_count() < SIZE_MAX;
    return 0;
}
static struct ggml_backend_reg reentrant_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = { .get_name = reentrant_name, .get_device_count = reentrant_count, .get_device = fake_reg_device },
    .context = NULL,
};

/* ------------------------------------------------------------- helpers */

static size_t base_regs, base_devs;
static ggml_backend_dev_t base_first_cpu; /* first CPU device before the test */

/* True when the decimal number n appears in text as a word of its own. */
static bool mentions_number(const char *text, int n)
{
    char want[16];
    snprintf(want, sizeof want, "%d", n);
    size_t len = strlen(want);
    for (const char *p = strstr(text, want); p != NULL; p = strstr(p + 1, want)) {
        bool left = p == text || p[-1] < '0' || p[-1] > '9';
        bool right = p[len] < '0' || p[len] > '9';
        if (left && right)
            return true;
    }
    return false;
}

static bool devices_listed(ggml_backend_dev_t dev)
{
    for (size_t i = 0; i < ggml_backend_dev_count(); i++)
        if (ggml_backend_dev_get(i) == dev)
            return true;
    return false;
}

/* ---------------------------------------------------------------- tests */

static void test_baseline(void)
{
    base_regs = ggml_backend_reg_count();
    base_devs = ggml_backend_dev_count();
    for (size_t i = 0; i < base_devs && base_first_cpu == NULL; i++)
        if (ggml_backend_dev_type(ggml_backend_dev_get(i)) == GGML_BACKEND_DEVICE_TYPE_CPU)
            base_first_cpu = ggml_backend_dev_get(i);
    tap_diag("%zu registries and %zu devices are built in", base_regs, base_devs);
    is_int(tap_log_errors(), 0, "enumerating the built-in registries logs no error");

    for (size_t i = 0; i < base_regs; i++)
        ok(ggml_backend_reg_get(i) != NULL, "built-in registry %zu is listed", i);
    if (base_devs == 0) {
        is_ptr(ggml_backend_init_best(), NULL, "init_best with no device at all returns NULL");
        logged_one_error("init_best with no device logs one error");
    }
}

static void test_register(void)
{
    ggml_backend_register(&cpuonly_reg);
    ggml_backend_register(&alpha_reg);
    is_int(tap_log_errors(), 0, "registering two registries logs no error");
    is_uint(ggml_backend_reg_count(), base_regs + 2, "two registries were added");
    is_uint(ggml_backend_dev_count(), base_devs + 3, "their three devices were added");
    /* the one built-in registry, the CPU's, and its device stay behind everything added */
    is_ptr(ggml_backend_reg_get(base_regs - 1), &cpuonly_reg, "registries keep registration order (first)");
    is_ptr(ggml_backend_reg_get(base_regs), &alpha_reg, "registries keep registration order (second)");
    is_ptr(ggml_backend_reg_get(base_regs + 1), ggml_backend_cpu_reg(), "the built-in CPU registry stays last");
    is_ptr(ggml_backend_dev_get(base_devs - 1), &cpuonly0, "devices keep registration order (CpuOnly0)");
    is_ptr(ggml_backend_dev_get(base_devs), &alpha0, "devices keep the registry's order (Alpha0)");
    is_ptr(ggml_backend_dev_get(base_devs + 1), &alpha1, "devices keep the registry's order (Alpha1)");
    is_ptr(ggml_backend_dev_get(base_devs + 2), base_first_cpu, "the built-in CPU device stays last");

    ggml_backend_register(&alpha_reg);
    is_int(tap_log_errors(), 0, "registering a registry twice is not an error");
    is_uint(ggml_backend_reg_count(), base_regs + 2, "a registry registered twice is listed once");
    is_uint(ggml_backend_dev_count(), base_devs + 3, "its devices are listed once");

    ggml_backend_register(&empty_reg);
    is_uint(ggml_backend_reg_count(), base_regs + 3, "a registry without devices is listed");
    is_uint(ggml_backend_dev_count(), base_devs + 3, "and adds no device");

    reentrant_calls = 0;
    ggml_backend_register(&reentrant_reg);
    ok(reentrant_calls >= 1, "a registry's callbacks may call the registry (%zu calls)", reentrant_calls);
    is_ptr(ggml_backend_reg_by_name("reentrant"), &reentrant_reg, "the reentrant registry is found by name");
    is_int(tap_log_errors(), 0, "registering without trouble logs no error");
}

static void test_register_errors(void)
{
    const size_t regs = ggml_backend_reg_count(), devs = ggml_backend_dev_count();

    ggml_backend_register(NULL);
    logged_one_error("ggml_backend_register(NULL) logs one error");

    ggml_backend_register(&badv_reg);
    logged_one_error("a registry of another API version is refused with one error");
    ok(mentions_number(tap_last_log(), GGML_BACKEND_API_VERSION + 1),
       "the message names the registry's version %d", GGML_BACKEND_API_VERSION + 1);
    ok(mentions_number(tap_last_log(), GGML_BACKEND_API_VERSION),
       "the message names the library's version %d", GGML_BACKEND_API_VERSION);
    is_ptr(ggml_backend_reg_by_name("BadVersion"), NULL, "the refused registry is not listed");

    ggml_backend_register(&noname_reg);
    logged_one_error("a registry without get_name is refused with one error");

    is_uint(ggml_backend_reg_count(), regs, "refused registries are not counted");
    is_uint(ggml_backend_dev_count(), devs, "refused registries add no device");
}

static void test_one_registry(void)
{
    is_str(ggml_backend_reg_name(&alpha_reg), "ALPHA", "reg_name");
    is_uint(ggml_backend_reg_dev_count(&alpha_reg), 2, "reg_dev_count of ALPHA");
    is_uint(ggml_backend_reg_dev_count(&empty_reg), 0, "reg_dev_count of an empty registry");
    is_ptr(ggml_backend_reg_dev_get(&alpha_reg, 0), &alpha0, "reg_dev_get 0");
    is_ptr(ggml_backend_reg_dev_get(&alpha_reg, 1), &alpha1, "reg_dev_get 1");
    is_int(tap_log_errors(), 0, "per-registry queries log no error");

    int (*answer)(void) = (int (*)(void)) ggml_backend_reg_get_proc_address(&beta_reg, "beta_answer");
    ok(answer != NULL, "get_proc_address finds a registry's function");
    if (answer)
        is_int(answer(), 42, "the function found is the registry's");
    is_ptr(ggml_backend_reg_get_proc_address(&beta_reg, "no_such_function"), NULL,
           "get_proc_address of an unknown name returns NULL");
    is_ptr(ggml_backend_reg_get_proc_address(&alpha_reg, "beta_answer"), NULL,
           "get_proc_address of a registry without the member returns NULL");
    is_int(tap_log_errors(), 0, "an unknown procedure is not an error");

    is_ptr(ggml_backend_reg_name(NULL), NULL, "reg_name(NULL) returns NULL");
    logged_one_error("reg_name(NULL) logs one error");
    is_uint(ggml_backend_reg_dev_count(NULL), 0, "reg_dev_count(NULL) returns 0");
    logged_one_error("reg_dev_count(NULL) logs one error");
    is_ptr(ggml_backend_reg_dev_get(NULL, 0), NULL, "reg_dev_get(NULL, 0) returns NULL");
    logged_one_error("reg_dev_get(NULL, 0) logs one error");
    is_ptr(ggml_backend_reg_dev_get(&alpha_reg, 2), NULL, "reg_dev_get past the end returns NULL");
    logged_one_error("reg_dev_get past the end logs one error");
    is_ptr(ggml_backend_reg_dev_get(&empty_reg, 0), NULL, "reg_dev_get of an empty registry returns NULL");
    logged_one_error("reg_dev_get of an empty registry logs one error");
    is_ptr(ggml_backend_reg_get_proc_address(NULL, "beta_answer"), NULL, "get_proc_address(NULL, ...) returns NULL");
    logged_one_error("get_proc_address with a NULL registry logs one error");
    is_ptr(ggml_backend_reg_get_proc_address(&beta_reg, NULL), NULL, "get_proc_address(reg, NULL) returns NULL");
    logged_one_error("get_proc_address with a NULL name logs one error");
}

static void test_lookups(void)
{
    const size_t n_regs = ggml_backend_reg_count(), n_devs = ggml_backend_dev_count();

    is_ptr(ggml_backend_reg_by_name("ALPHA"), &alpha_reg, "reg_by_name, same case");
    is_ptr(ggml_backend_reg_by_name("alpha"), &alpha_reg, "reg_by_name, lower case");
    is_ptr(ggml_backend_reg_by_name("aLpHa"), &alpha_reg, "reg_by_name, mixed case");
    is_ptr(ggml_backend_reg_by_name("CPUONLY"), &cpuonly_reg, "reg_by_name of a mixed-case name in upper case");
    is_ptr(ggml_backend_reg_by_name("alph"), NULL, "reg_by_name of a prefix returns NULL");
    is_ptr(ggml_backend_reg_by_name("alphax"), NULL, "reg_by_name of a longer name returns NULL");
    is_ptr(ggml_backend_reg_by_name(""), NULL, "reg_by_name of an empty name returns NULL");
    is_int(tap_log_errors(), 0, "registry lookups, found or not, log no error");

    is_ptr(ggml_backend_dev_by_name("Alpha1"), &alpha1, "dev_by_name, same case");
    is_ptr(ggml_backend_dev_by_name("ALPHA1"), &alpha1, "dev_by_name, upper case");
    is_ptr(ggml_backend_dev_by_name("cpuonly0"), &cpuonly0, "dev_by_name, lower case");
    is_ptr(ggml_backend_dev_by_name("Alpha"), NULL, "dev_by_name of a registry name returns NULL");
    is_ptr(ggml_backend_dev_by_name("Alpha10"), NULL, "dev_by_name of a longer name returns NULL");
    is_int(tap_log_errors(), 0, "device lookups, found or not, log no error");

    is_ptr(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_ACCEL), &alpha0, "dev_by_type ACCEL");
    is_ptr(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_GPU_UMA), &alpha1, "dev_by_type GPU_UMA");
    is_ptr(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_IGPU), &alpha1, "dev_by_type IGPU (alias)");
    is_ptr(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), &cpuonly0,
           "dev_by_type CPU gives the first CPU device in the list (CpuOnly0, before the built-in CPU)");
    is_ptr(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_GPU), NULL, "dev_by_type GPU with no GPU returns NULL");
    is_ptr(ggml_backend_dev_by_type((enum ggml_backend_dev_type) 99), NULL, "dev_by_type of an unknown type returns NULL");
    is_int(tap_log_errors(), 0, "lookups by type log no error");

    is_ptr(ggml_backend_reg_get(n_regs), NULL, "reg_get past the end returns NULL");
    logged_one_error("reg_get past the end logs one error");
    is_ptr(ggml_backend_reg_get(SIZE_MAX), NULL, "reg_get(SIZE_MAX) returns NULL");
    logged_one_error("reg_get(SIZE_MAX) logs one error");
    is_ptr(ggml_backend_dev_get(n_devs), NULL, "dev_get past the end returns NULL");
    logged_one_error("dev_get past the end logs one error");
    is_ptr(ggml_backend_reg_by_name(NULL), NULL, "reg_by_name(NULL) returns NULL");
    logged_one_error("reg_by_name(NULL) logs one error");
    is_ptr(ggml_backend_dev_by_name(NULL), NULL, "dev_by_name(NULL) returns NULL");
    logged_one_error("dev_by_name(NULL) logs one error");
    is_uint(ggml_backend_reg_count(), n_regs, "failed lookups change nothing (registries)");
    is_uint(ggml_backend_dev_count(), n_devs, "failed lookups change nothing (devices)");
}

static void test_init_shortcuts(void)
{
    /* only CpuOnly, ALPHA (ACCEL + IGPU), Empty and Reentrant so far */
    ggml_backend_t b = ggml_backend_init_by_name("alpha1", "threads=3");
    ok(b != NULL, "init_by_name creates a backend");
    is_ptr(ggml_backend_get_device(b), &alpha1, "on the device of that name");
    is_str(alpha1_fake.last_params, "threads=3", "params reach the device's init_backend");
    is_int(live_backends, 1, "one backend is alive");
    ggml_backend_free(b);
    is_int(live_backends, 0, "ggml_backend_free releases it");
    is_int(tap_log_errors(), 0, "init_by_name logs no error on success");

    b = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_ACCEL, NULL);
    is_ptr(ggml_backend_get_device(b), &alpha0, "init_by_type ACCEL uses the first ACCEL device");
    is_ptr(alpha0_fake.last_params, NULL, "NULL params reach the device");
    ggml_backend_free(b);

    b = ggml_backend_init_best();
    is_ptr(ggml_backend_get_device(b), &alpha1, "init_best without a GPU picks the integrated GPU");
    ggml_backend_free(b);
    is_int(tap_log_errors(), 0, "the shortcuts log no error on success");

    is_ptr(ggml_backend_init_by_name("NoSuchDevice", NULL), NULL, "init_by_name of an unknown device returns NULL");
    logged_one_error("init_by_name of an unknown device logs one error");
    ok(strstr(tap_last_log(), "NoSuchDevice") != NULL, "the message names the device");
    is_ptr(ggml_backend_init_by_name(NULL, NULL), NULL, "init_by_name(NULL) returns NULL");
    logged_one_error("init_by_name(NULL) logs one error");
    is_ptr(ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_GPU, NULL), NULL,
           "init_by_type of a type without device returns NULL");
    logged_one_error("init_by_type of a type without device logs one error");

    ggml_backend_register(&failing_reg);
    is_ptr(ggml_backend_init_by_name("failing0", NULL), NULL, "init_by_name of a device that cannot init returns NULL");
    logged_one_error("a device that cannot init logs one error");
    is_int(live_backends, 0, "no backend leaked");

    ggml_backend_register(&beta_reg);
    b = ggml_backend_init_best();
    is_ptr(ggml_backend_get_device(b), &beta0, "init_best prefers a GPU");
    ggml_backend_free(b);
    b = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_GPU, "x");
    is_ptr(ggml_backend_get_device(b), &beta0, "init_by_type GPU");
    ggml_backend_free(b);
    is_int(live_backends, 0, "every backend was freed");
    is_int(tap_log_errors(), 0, "no error on the way");
}

static void test_device_register(void)
{
    const size_t devs = ggml_backend_dev_count();

    ggml_backend_device_register(&extra0);
    is_int(tap_log_errors(), 0, "device_register logs no error");
    is_uint(ggml_backend_dev_count(), devs + 1, "device_register adds the device");
    is_ptr(ggml_backend_dev_get(devs - 1), &extra0, "at the end of the list, before the built-in CPU device");
    is_ptr(ggml_backend_dev_get(devs), base_first_cpu, "which stays last");
    is_ptr(ggml_backend_dev_by_name("EXTRA0"), &extra0, "it is found by name");
    is_uint(ggml_backend_reg_dev_count(&beta_reg), 1, "the registry's own count is its business");

    ggml_backend_device_register(&extra0);
    is_int(tap_log_errors(), 0, "registering a device twice is not an error");
    is_uint(ggml_backend_dev_count(), devs + 1, "it is listed once");

    ggml_backend_device_register(&beta0);
    is_uint(ggml_backend_dev_count(), devs + 1, "a device its registry listed is not added twice");

    ggml_backend_device_register(NULL);
    logged_one_error("device_register(NULL) logs one error");
    ggml_backend_device_register(&orphan0);
    logged_one_error("a device of an unregistered registry is refused with one error");
    ok(!devices_listed(&orphan0), "the orphan device is not listed");
    is_uint(ggml_backend_dev_count(), devs + 1, "refused devices are not counted");
}

static void test_unregister(void)
{
    const size_t regs = ggml_backend_reg_count(), devs = ggml_backend_dev_count();

    ggml_backend_unload(&beta_reg);
    is_int(tap_log_errors(), 0, "removing an in-process registry logs no error");
    is_uint(ggml_backend_reg_count(), regs - 1, "the registry is gone");
    is_uint(ggml_backend_dev_count(), devs - 2, "with both its devices, the late one included");
    is_ptr(ggml_backend_reg_by_name("beta"), NULL, "reg_by_name no longer finds it");
    is_ptr(ggml_backend_dev_by_name("beta-gpu"), NULL, "dev_by_name no longer finds its device");
    is_ptr(ggml_backend_dev_by_name("extra0"), NULL, "nor the device registered later");
    ok(!devices_listed(&beta0) && !devices_listed(&extra0), "no device of the registry is enumerated");
    is_ptr(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_GPU), NULL, "no GPU is left");
    is_ptr(ggml_backend_reg_by_name("alpha"), &alpha_reg, "other registries stay");
    ok(devices_listed(&alpha0) && devices_listed(&alpha1), "with their devices");

    ggml_backend_t b = ggml_backend_init_best();
    is_ptr(ggml_backend_get_device(b), &alpha1, "init_best falls back to the integrated GPU");
    ggml_backend_free(b);

    ggml_backend_unload(&beta_reg);
    logged_one_error("removing a registry twice logs one error");
    ggml_backend_unload(&orphan_reg);
    logged_one_error("removing a registry never registered logs one error");
    ggml_backend_unload(NULL);
    logged_one_error("ggml_backend_unload(NULL) logs one error");
    is_uint(ggml_backend_reg_count(), regs - 1, "failed removals change nothing");

    /* IGPU gone: init_best falls back to the CPU */
    ggml_backend_unload(&alpha_reg);
    b = ggml_backend_init_best();
    ok(b != NULL && ggml_backend_dev_type(ggml_backend_get_device(b)) == GGML_BACKEND_DEVICE_TYPE_CPU,
       "init_best without any GPU picks a CPU device");
    if (base_first_cpu == NULL)
        is_ptr(ggml_backend_get_device(b), &cpuonly0, "the only CPU device");
    ggml_backend_free(b);

    /* registries can come back */
    ggml_backend_register(&beta_reg);
    is_ptr(ggml_backend_reg_by_name("BETA"), &beta_reg, "a removed registry can be registered again");
    ok(devices_listed(&beta0), "with its devices");
    ok(!devices_listed(&extra0), "but not the device registered separately before");
    is_int(tap_log_errors(), 0, "no error on the way");
}

/* ----------------------------------------------------------- threads */

#define N_THREADS 4
#define REGS_PER_THREAD 16

struct thread_regs {
    char names[REGS_PER_THREAD][32];
    struct fake_registry fakes[REGS_PER_THREAD];
    struct ggml_backend_reg regs[REGS_PER_THREAD];
    int found;
};

static void *register_many(void *arg)
{
    struct thread_regs *t = arg;
    for (int i = 0; i < REGS_PER_THREAD; i++) {
        ggml_backend_register(&t->regs[i]);
        t->found += ggml_backend_reg_by_name(t->names[i]) == &t->regs[i];
        (void) ggml_backend_dev_count();
    }
    return NULL;
}

static void test_threads(void)
{
    static struct thread_regs threads[N_THREADS];
    pthread_t ids[N_THREADS];
    const size_t regs = ggml_backend_reg_count();

    for (int t = 0; t < N_THREADS; t++) {
        for (int i = 0; i < REGS_PER_THREAD; i++) {
            snprintf(threads[t].names[i], sizeof threads[t].names[i], "thr%d-%d", t, i);
            threads[t].fakes[i] = (struct fake_registry) { .name = threads[t].names[i], .n_devices = 0 };
            threads[t].regs[i] = (struct ggml_backend_reg) {
                .api_version = GGML_BACKEND_API_VERSION,
                .iface = { .get_name = fake_reg_name, .get_device_count = fake_reg_count,
                           .get_device = fake_reg_device },
                .context = &threads[t].fakes[i],
            };
        }
    }
    int started = 0;
    for (int t = 0; t < N_THREADS; t++)
        started += pthread_create(&ids[t], NULL, register_many, &threads[t]) == 0;
    is_int(started, N_THREADS, "%d threads register at once", N_THREADS);
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], NULL);

    is_uint(ggml_backend_reg_count(), regs + (size_t) started * REGS_PER_THREAD,
            "every registry registered concurrently is listed once");
    int found = 0;
    for (int t = 0; t < started; t++)
        found += threads[t].found;
    is_int(found, started * REGS_PER_THREAD, "each thread found its registries right after adding them");
    is_int(tap_log_errors(), 0, "concurrent registration logs no error");

    for (int t = 0; t < started; t++)
        for (int i = 0; i < REGS_PER_THREAD; i++)
            ggml_backend_unload(&threads[t].regs[i]);
    is_uint(ggml_backend_reg_count(), regs, "and they can all be removed");
}

int main(void)
{
    tap_capture_log();

    test_baseline();
    test_register();
    test_register_errors();
    test_one_registry();
    test_lookups();
    test_init_shortcuts();
    test_device_register();
    test_unregister();
    test_threads();

    return tap_done();
}
