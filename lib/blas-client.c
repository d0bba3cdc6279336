/*
 * blas-client.c - the ggml-blas.h functions: the core library's side of
 * the BLAS plugin (lib/blas/).
 *
 * The device lives in the plugin libggml-blas.so, which links the BLAS
 * library; this file only finds it.  ggml_backend_blas_reg returns the
 * registry named "BLAS" when one is registered, and otherwise loads the
 * plugin file from GGML_BACKEND_PATH or the plugin directory
 * (ggml__plugin_reg).  The other functions go through it.
 * Identity is the backend's guid, which the plugin stamps on every BLAS
 * backend (blas/blas-guid.h); the thread count is set through the
 * plugin's "ggml_backend_set_n_threads" proc address.
 */
#include "config.h"

#include "ggml-impl.h"
#include "backend-private.h"
#include "registry-private.h"
#include "ggml-blas.h"

#include "blas/blas-guid.h"

static ggml_guid blas_guid = GGML_BLAS_GUID_BYTES;

/* The BLAS registry, registered or loaded now; NULL (one ERROR, as func)
 * when the plugin cannot be found or loaded. */
static ggml_backend_reg_t blas_reg(const char *func)
{
    return ggml__plugin_reg(GGML_BLAS_NAME, GGML_BLAS_PLUGIN_FILE, func);
}

ggml_backend_reg_t ggml_backend_blas_reg(void)
{
    return blas_reg(__func__);
}

ggml_backend_t ggml_backend_blas_init(void)
{
    ggml_backend_reg_t reg = blas_reg(__func__);
    if (reg == NULL)
        return NULL;
    if (ggml_backend_reg_dev_count(reg) < 1) {
        ggml__error("the BLAS registry has no device");
        return NULL;
    }
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(reg, 0);
    return dev != NULL ? ggml_backend_dev_init(dev, NULL) : NULL;
}

bool ggml_backend_is_blas(ggml_backend_t backend)
{
    if (!ggml__handle_check(GGML__HANDLE_BACKEND, backend, __func__))
        return false;
    return backend->guid != NULL && ggml_guid_matches(backend->guid, &blas_guid);
}

void ggml_backend_blas_set_n_threads(ggml_backend_t backend_blas, int n_threads)
{
    if (!ggml__handle_check(GGML__HANDLE_BACKEND, backend_blas, __func__))
        return;
    if (backend_blas->guid == NULL || !ggml_guid_matches(backend_blas->guid, &blas_guid)) {
        ggml__error("backend %s is not a BLAS backend", ggml_backend_name(backend_blas));
        return;
    }
    if (n_threads < 1 || n_threads > GGML_MAX_N_THREADS) {
        ggml__error("n_threads must be 1..%d, got %d", GGML_MAX_N_THREADS, n_threads);
        return;
    }
    /* a BLAS backend exists, so its plugin is loaded and registered */
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(backend_blas->device);
    void (*set_n_threads)(ggml_backend_t, int) = NULL;
    if (reg != NULL)
        set_n_threads = (void (*)(ggml_backend_t, int)) ggml_backend_reg_get_proc_address(reg,
                                                                                    "ggml_backend_set_n_threads");
    if (set_n_threads == NULL) {
        ggml__error("the BLAS registry does not provide ggml_backend_set_n_threads");
        return;
    }
    set_n_threads(backend_blas, n_threads);
}
