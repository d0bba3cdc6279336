/*
 * log.c - the library's one logging path, and the abort hook.
 *
 * Every diagnostic goes through ggml__log_at(), which hands complete lines
 * to the callback installed with ggml_log_set() (stderr when none is).
 * The callback and its user data are read and written under a mutex so a
 * program may swap loggers while other threads log.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>

#include "ggml-impl.h"

/* Whether the default writer shows DEBUG messages (GGML_BACKEND_DEBUG set). */
static pthread_once_t debug_once = PTHREAD_ONCE_INIT;
static bool show_debug;

static void read_debug_setting(void)
{
    const char *value = secure_getenv("GGML_BACKEND_DEBUG");
    show_debug = value != NULL && value[0] != '\0';
}

/*
 * The default writer: standard error, without DEBUG messages unless asked
 * for.  A CONT message belongs to the message before it in the same thread.
 */
static void log_to_stderr(enum ggml_log_level level, const char *text, void *user_data)
{
    static _Thread_local enum ggml_log_level last_level = GGML_LOG_LEVEL_NONE;
    (void) user_data;
    pthread_once(&debug_once, read_debug_setting);
    if (level != GGML_LOG_LEVEL_CONT)
        last_level = level;
    if (last_level == GGML_LOG_LEVEL_DEBUG && !show_debug)
        return;
    fputs(text, stderr);
    fflush(stderr);
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static ggml_log_callback log_callback = log_to_stderr;
static void *log_user_data;

void ggml_log_set(ggml_log_callback callback, void *user_data)
{
    pthread_mutex_lock(&log_lock);
    log_callback = callback ? callback : log_to_stderr;
    log_user_data = callback ? user_data : NULL;
    pthread_mutex_unlock(&log_lock);
}

void ggml_log_get(ggml_log_callback *callback, void **user_data)
{
    pthread_mutex_lock(&log_lock);
    if (callback)
        *callback = log_callback;
    if (user_data)
        *user_data = log_user_data;
    pthread_mutex_unlock(&log_lock);
}

static _Thread_local unsigned long errors_logged;

unsigned long ggml__errors_logged(void)
{
    return errors_logged;
}

/* Formats into a stack buffer, or a heap one for long messages. */
static void log_vprintf(enum ggml_log_level level, const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void log_vprintf(enum ggml_log_level level, const char *prefix, const char *fmt, va_list ap)
{
    char small[512];
    char *text = small;
    size_t used = 0;

    if (prefix)
        used = (size_t) snprintf(small, sizeof small, "%s: ", prefix);
    if (used >= sizeof small)
        used = sizeof small - 1;

    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small + used, sizeof small - used, fmt, ap);
    if (n >= 0 && (size_t) n + used + 2 > sizeof small) {
        char *big = malloc(used + (size_t) n + 2);
        if (big) {
            memcpy(big, small, used);
            vsnprintf(big + used, (size_t) n + 1, fmt, again);
            text = big;
        }
    }
    va_end(again);

    if (prefix) {
        size_t len = strlen(text);
        if (len == 0 || text[len - 1] != '\n') {
            if (text == small && len + 1 >= sizeof small)
                len = sizeof small - 2;
            text[len] = '\n';
            text[len + 1] = '\0';
        }
    }

    if (level == GGML_LOG_LEVEL_ERROR)
        errors_logged++;
    ggml_log_callback callback;
    void *user_data;
    ggml_log_get(&callback, &user_data);
    callback(level, text, user_data);

    if (text != small)
        free(text);
}

void ggml__log_at(enum ggml_log_level level, const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vprintf(level, func, fmt, ap);
    va_end(ap);
}

void ggml__log_raw(enum ggml_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vprintf(level, NULL, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ abort */

static ggml_abort_callback_t abort_callback;

ggml_abort_callback_t ggml_set_abort_callback(ggml_abort_callback_t callback)
{
    pthread_mutex_lock(&log_lock);
    ggml_abort_callback_t previous = abort_callback;
    abort_callback = callback;
    pthread_mutex_unlock(&log_lock);
    return previous;
}

/*
 * Reached only through GGML_ABORT/GGML_ASSERT: in this library those guard
 * invariants that no caller input can break, so getting here is a bug.
 */
void ggml_abort(const char *file, int line, const char *fmt, ...)
{
    char message[2048];
    int used = snprintf(message, sizeof message, "%s:%d: ", file, line);
    if (used < 0 || (size_t) used >= sizeof message)
        used = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message + used, sizeof message - (size_t) used, fmt, ap);
    va_end(ap);

    pthread_mutex_lock(&log_lock);
    ggml_abort_callback_t callback = abort_callback;
    pthread_mutex_unlock(&log_lock);

    if (callback)
        callback(message);
    else
        fprintf(stderr, "%s\n", message);
    abort();
}
