/*
 * noinit.c - a shared module named like a plugin that exports no
 * ggml_backend_init: the loader must refuse it with one message.
 */
#include "config.h"

#include "ggml-backend.h"

/* Something to export, so the module is not empty. */
GGML_BACKEND_API int noinit_answer(void);

int noinit_answer(void)
{
    return 42;
}
