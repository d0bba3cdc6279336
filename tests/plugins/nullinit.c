/*
 * nullinit.c - a plugin whose ggml_backend_init returns NULL (as a plugin
 * does when it finds no usable hardware): the loader must refuse it with
 * one message.
 */
#include "config.h"

#include <stddef.h>

#include "ggml-backend-impl.h"

static ggml_backend_reg_t nullinit_reg_get(void)
{
    return NULL;
}

GGML_BACKEND_DL_IMPL(nullinit_reg_get)
