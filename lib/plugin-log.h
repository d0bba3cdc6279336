/*
 * plugin-log.h - logging for the plugins (the BLAS and RPC devices), which
 * see only the public API: "func: message\n" through the application's
 * logger (ggml_log_get), nothing when it has none.
 *
 * Not installed.  Include after ggml.h.
 */
#ifndef GGML_BACKEND_PLUGIN_LOG_H
#define GGML_BACKEND_PLUGIN_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void ggml__plugin_log(enum ggml_log_level level, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), unused));
static void ggml__plugin_log(enum ggml_log_level level, const char *func, const char *fmt, ...)
{
    ggml_log_callback callback;
    void *user_data;
    char text[512];
    va_list ap;

    ggml_log_get(&callback, &user_data);
    if (callback == NULL)
        return;
    int n = snprintf(text, sizeof text, "%s: ", func);
    va_start(ap, fmt);
    vsnprintf(text + n, sizeof text - (size_t) n - 1, fmt, ap);
    va_end(ap);
    strcat(text, "\n");
    callback(level, text, user_data);
}

#endif
