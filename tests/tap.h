/*
 * tap.h - a tiny Test Anything Protocol helper for the libggml-backend tests.
 *
 * Each test program is one process covering one area.  Assertions print
 * "ok N - name" or "not ok N - name" followed by diagnostics naming the file,
 * the line, both values and the last message the library logged, so that a
 * failure in a log is readable without a debugger.  tap_done() prints the
 * plan ("1..N") at the end and returns the exit status for main().
 *
 * Every test program should call tap_capture_log() first: the library's
 * log output is then recorded (not printed) and the error-path tests can
 * assert that exactly one message was logged with tap_log_errors().
 */
#ifndef GGML_BACKEND_TESTS_TAP_H
#define GGML_BACKEND_TESTS_TAP_H

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"

static int tap_count;
static int tap_failed;
static int tap_log_error_count;
static int tap_log_total_count;
static char tap_last_message[1024];

/* Log sink used while a test runs: keeps the last message, counts errors. */
static void tap_log_sink(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR)
        tap_log_error_count++;
    tap_log_total_count++;
    if (level != GGML_LOG_LEVEL_CONT)
        tap_last_message[0] = '\0';
    size_t used = strlen(tap_last_message);
    snprintf(tap_last_message + used, sizeof tap_last_message - used, "%s", text);
    size_t len = strlen(tap_last_message);
    while (len > 0 && tap_last_message[len - 1] == '\n')
        tap_last_message[--len] = '\0';
}

static inline void tap_capture_log(void)
{
    ggml_log_set(tap_log_sink, NULL);
}

/* Number of ERROR-level messages logged since the last call; resets it. */
static inline int tap_log_errors(void)
{
    int n = tap_log_error_count;
    tap_log_error_count = 0;
    return n;
}

static inline const char *tap_last_log(void)
{
    return tap_last_message;
}

static inline void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void tap_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("# ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
}

/* Records one result; returns cond so callers can chain extra diagnostics. */
static inline bool tap_result(bool cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline bool tap_result(bool cond, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    printf("%s %d - ", cond ? "ok" : "not ok", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    if (!cond) {
        tap_failed++;
        printf("# %s:%d: failed\n", file, line);
        if (tap_last_message[0] != '\0')
            printf("# last logged message: %s\n", tap_last_message);
    }
    fflush(stdout);
    return cond;
}

#define ok(cond, ...) tap_result((cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...)                                                  \
    do {                                                                         \
        long long tap_g_ = (long long) (got), tap_w_ = (long long) (want);       \
        if (!tap_result(tap_g_ == tap_w_, __FILE__, __LINE__, __VA_ARGS__))      \
            printf("# %s == %s (%lld vs %lld)\n", #got, #want, tap_g_, tap_w_);  \
    } while (0)

#define is_uint(got, want, ...)                                                 \
    do {                                                                         \
        unsigned long long tap_g_ = (unsigned long long) (got);                  \
        unsigned long long tap_w_ = (unsigned long long) (want);                 \
        if (!tap_result(tap_g_ == tap_w_, __FILE__, __LINE__, __VA_ARGS__))      \
            printf("# %s == %s (%llu vs %llu, 0x%llx vs 0x%llx)\n", #got, #want, \
                   tap_g_, tap_w_, tap_g_, tap_w_);                              \
    } while (0)

#define is_ptr(got, want, ...)                                                  \
    do {                                                                         \
        const void *tap_g_ = (const void *) (got), *tap_w_ = (const void *) (want); \
        if (!tap_result(tap_g_ == tap_w_, __FILE__, __LINE__, __VA_ARGS__))      \
            printf("# %s == %s (%p vs %p)\n", #got, #want, tap_g_, tap_w_);      \
    } while (0)

#define is_str(got, want, ...)                                                  \
    do {                                                                         \
        const char *tap_g_ = (got), *tap_w_ = (want);                            \
        bool tap_c_ = tap_g_ && tap_w_ ? strcmp(tap_g_, tap_w_) == 0 : tap_g_ == tap_w_; \
        if (!tap_result(tap_c_, __FILE__, __LINE__, __VA_ARGS__))                \
            printf("# %s == %s (\"%s\" vs \"%s\")\n", #got, #want,               \
                   tap_g_ ? tap_g_ : "(null)", tap_w_ ? tap_w_ : "(null)");      \
    } while (0)

/* |got - want| <= tol, with NaN never close to anything. */
#define is_near(got, want, tol, ...)                                            \
    do {                                                                         \
        double tap_g_ = (double) (got), tap_w_ = (double) (want), tap_t_ = (tol); \
        if (!tap_result(fabs(tap_g_ - tap_w_) <= tap_t_, __FILE__, __LINE__, __VA_ARGS__)) \
            printf("# %s ~= %s (%.9g vs %.9g, tolerance %.3g)\n", #got, #want,   \
                   tap_g_, tap_w_, tap_t_);                                      \
    } while (0)

/* Asserts that the last call logged exactly one ERROR message. */
#define logged_one_error(...)                                                   \
    do {                                                                         \
        int tap_n_ = tap_log_errors();                                           \
        if (!tap_result(tap_n_ == 1, __FILE__, __LINE__, __VA_ARGS__))           \
            printf("# expected exactly one error message, got %d\n", tap_n_);    \
    } while (0)

static inline void tap_skip(int n, const char *reason)
{
    for (int i = 0; i < n; i++) {
        tap_count++;
        printf("ok %d # SKIP %s\n", tap_count, reason);
    }
}

/* Prints the plan and returns the process exit status. */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_count);
    if (tap_failed)
        printf("# %d of %d tests failed\n", tap_failed, tap_count);
    return tap_failed ? 1 : 0;
}

#endif
