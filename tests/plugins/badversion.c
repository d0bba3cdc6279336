/*
 * badversion.c - a plugin built for another plugin ABI: its registry's
 * api_version is GGML_BACKEND_API_VERSION + 1, so the loader must refuse it
 * (naming both versions) without reading anything else of the registry.
 */
#include "config.h"

#include "ggml-backend-impl.h"

static const char *badversion_get_name(ggml_backend_reg_t reg)
{
    return "BADVERSION";
}

static size_t badversion_get_device_count(ggml_backend_reg_t reg)
{
    return 0;
}

static ggml_backend_dev_t badversion_get_device(ggml_backend_reg_t reg, size_t index)
{
    return NULL;
}

static struct ggml_backend_reg badversion_reg = {
    .api_version = GGML_BACKEND_API_VERSION + 1,
    .iface = {
        .get_name = badversion_get_name,
        .get_device_count = badversion_get_device_count,
        .get_device = badversion_get_device,
        .get_proc_address = NULL,
    },
    .context = NULL,
};

static ggml_backend_reg_t badversion_reg_get(void)
{
    return &badversion_reg;
}

GGML_BACKEND_DL_IMPL(badversion_reg_get)
