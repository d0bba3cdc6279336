/*
 * test-utils.c - status strings, op names, version, GUIDs, timing, files,
 * the log hook and the abort hook.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ggml.h"
#include "tap.h"

/* ------------------------------------------------------------ statuses */

static void test_status_strings(void)
{
    const enum ggml_status all[] = {
        GGML_STATUS_ALLOC_FAILED, GGML_STATUS_FAILED, GGML_STATUS_SUCCESS, GGML_STATUS_ABORTED,
    };
    const int n = (int) (sizeof all / sizeof all[0]);
    const char *str[4];

    for (int i = 0; i < n; i++) {
        str[i] = ggml_status_to_string(all[i]);
        ok(str[i] != NULL && str[i][0] != '\0', "status %d has a non-empty description", (int) all[i]);
    }
    bool distinct = true;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (str[i] && str[j] && strcmp(str[i], str[j]) == 0)
                distinct = false;
    ok(distinct, "the four statuses have distinct descriptions");

    const char *unknown = ggml_status_to_string((enum ggml_status) 42);
    ok(unknown != NULL && unknown[0] != '\0', "an unknown status still gets a description");
    bool differs = unknown != NULL;
    for (int i = 0; i < n && differs; i++)
        if (str[i] && strcmp(str[i], unknown) == 0)
            differs = false;
    ok(differs, "the unknown status is not described as a known one");
    is_int(tap_log_errors(), 0, "describing statuses logs no error");
}

/* ------------------------------------------------------------ op names */

static void test_op_names(void)
{
    static const struct {
        enum ggml_op op;
        const char *name;
        const char *symbol;
    } known[] = {
        { GGML_OP_NONE,      "NONE",      "none" },
        { GGML_OP_DUP,       "DUP",       "x" },
        { GGML_OP_ADD,       "ADD",       "x+y" },
        { GGML_OP_SUB,       "SUB",       "x-y" },
        { GGML_OP_MUL,       "MUL",       "x*y" },
        { GGML_OP_DIV,       "DIV",       "x/y" },
        { GGML_OP_MUL_MAT,   "MUL_MAT",   "X*Y" },
        { GGML_OP_SCALE,     "SCALE",     "x*v" },
        { GGML_OP_CONT,      "CONT",      "cont(x)" },
        { GGML_OP_RESHAPE,   "RESHAPE",   "reshape(x)" },
        { GGML_OP_VIEW,      "VIEW",      "view(x)" },
        { GGML_OP_PERMUTE,   "PERMUTE",   "permute(x)" },
        { GGML_OP_TRANSPOSE, "TRANSPOSE", "transpose(x)" },
        { GGML_OP_GET_ROWS,  "GET_ROWS",  "get_rows(x)" },
        { GGML_OP_SOFT_MAX,  "SOFT_MAX",  "soft_max(x)" },
        { GGML_OP_ROPE,      "ROPE",      "rope(x)" },
        { GGML_OP_UNARY,     "UNARY",     "unary(x)" },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        is_str(ggml_op_name(known[i].op), known[i].name, "ggml_op_name(%d)", (int) known[i].op);
        is_str(ggml_op_symbol(known[i].op), known[i].symbol, "ggml_op_symbol(%s)", known[i].name);
    }
    is_str(ggml_op_name(GGML_OP_CPY), "CPY", "ggml_op_name(GGML_OP_CPY)");
    is_str(ggml_op_name(GGML_OP_GLU), "GLU", "ggml_op_name(GGML_OP_GLU)");

    /* Every op in range has a name and a symbol; names are unique. */
    bool all_named = true, unique = true;
    for (int op = 0; op < GGML_OP_COUNT; op++) {
        const char *name = ggml_op_name((enum ggml_op) op);
        const char *sym = ggml_op_symbol((enum ggml_op) op);
        if (!name || !name[0] || !sym || !sym[0]) {
            all_named = false;
            tap_diag("op %d: name %s, symbol %s", op, name ? name : "(null)", sym ? sym : "(null)");
            continue;
        }
        for (int other = 0; other < op; other++) {
            const char *o = ggml_op_name((enum ggml_op) other);
            if (o && strcmp(o, name) == 0) {
                unique = false;
                tap_diag("ops %d and %d are both named %s", other, op, name);
            }
        }
    }
    ok(all_named, "every op below GGML_OP_COUNT has a name and a symbol");
    ok(unique, "op names are unique");

    /* Values outside the enum must not crash (whatever they return). */
    const int bad_ops[] = { GGML_OP_COUNT, GGML_OP_COUNT + 7, -1, 100000 };
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        const char *name = ggml_op_name((enum ggml_op) bad_ops[i]);
        const char *sym = ggml_op_symbol((enum ggml_op) bad_ops[i]);
        ok((name == NULL || strlen(name) < 4096) && (sym == NULL || strlen(sym) < 4096),
           "ggml_op_name/symbol(%d) out of range does not crash", bad_ops[i]);
    }
    tap_log_errors();

    static const struct {
        enum ggml_unary_op op;
        const char *name;
    } unary[] = {
        { GGML_UNARY_OP_ABS,         "ABS" },
        { GGML_UNARY_OP_SGN,         "SGN" },
        { GGML_UNARY_OP_NEG,         "NEG" },
        { GGML_UNARY_OP_STEP,        "STEP" },
        { GGML_UNARY_OP_TANH,        "TANH" },
        { GGML_UNARY_OP_ELU,         "ELU" },
        { GGML_UNARY_OP_RELU,        "RELU" },
        { GGML_UNARY_OP_SIGMOID,     "SIGMOID" },
        { GGML_UNARY_OP_GELU,        "GELU" },
        { GGML_UNARY_OP_GELU_QUICK,  "GELU_QUICK" },
        { GGML_UNARY_OP_SILU,        "SILU" },
        { GGML_UNARY_OP_HARDSWISH,   "HARDSWISH" },
        { GGML_UNARY_OP_HARDSIGMOID, "HARDSIGMOID" },
        { GGML_UNARY_OP_EXP,         "EXP" },
    };
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++)
        is_str(ggml_unary_op_name(unary[i].op), unary[i].name, "ggml_unary_op_name(%d)", (int) unary[i].op);
    bool unary_named = true;
    for (int op = 0; op < GGML_UNARY_OP_COUNT; op++) {
        const char *name = ggml_unary_op_name((enum ggml_unary_op) op);
        if (!name || !name[0])
            unary_named = false;
    }
    ok(unary_named, "every unary op below GGML_UNARY_OP_COUNT has a name");
    const char *bad_unary = ggml_unary_op_name((enum ggml_unary_op) (GGML_UNARY_OP_COUNT + 3));
    ok(bad_unary == NULL || strlen(bad_unary) < 4096, "ggml_unary_op_name out of range does not crash");
    bad_unary = ggml_unary_op_name((enum ggml_unary_op) -2);
    ok(bad_unary == NULL || strlen(bad_unary) < 4096, "ggml_unary_op_name(-2) does not crash");

    static const struct {
        enum ggml_glu_op op;
        const char *name;
    } glu[] = {
        { GGML_GLU_OP_REGLU,  "REGLU" },
        { GGML_GLU_OP_GEGLU,  "GEGLU" },
        { GGML_GLU_OP_SWIGLU, "SWIGLU" },
    };
    for (size_t i = 0; i < sizeof glu / sizeof glu[0]; i++)
        is_str(ggml_glu_op_name(glu[i].op), glu[i].name, "ggml_glu_op_name(%d)", (int) glu[i].op);
    bool glu_named = true;
    for (int op = 0; op < GGML_GLU_OP_COUNT; op++) {
        const char *name = ggml_glu_op_name((enum ggml_glu_op) op);
        if (!name || !name[0])
            glu_named = false;
    }
    ok(glu_named, "every GLU op below GGML_GLU_OP_COUNT has a name");
    const char *bad_glu = ggml_glu_op_name((enum ggml_glu_op) (GGML_GLU_OP_COUNT + 1));
    ok(bad_glu == NULL || strlen(bad_glu) < 4096, "ggml_glu_op_name out of range does not crash");
    tap_log_errors();
}

/* ggml_op_desc: the unary/GLU sub-op name for those ops, the op name otherwise. */
static void test_op_desc(void)
{
    struct ggml_init_params params = { 1024 * 1024, NULL, true };
    struct ggml_context *ctx = ggml_init(params);
    ok(ctx != NULL, "context for ggml_op_desc");
    if (!ctx)
        return;

    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    is_str(ggml_op_desc(a), "NONE", "ggml_op_desc of a leaf");

    struct ggml_tensor *t = ggml_transpose(ctx, a);
    is_str(ggml_op_desc(t), "TRANSPOSE", "ggml_op_desc of a transpose");

    struct ggml_tensor *c = ggml_cont(ctx, t);
    is_str(ggml_op_desc(c), "CONT", "ggml_op_desc of a cont");

    /* A unary node: the op and its parameter are public fields. */
    struct ggml_tensor *u = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    u->op = GGML_OP_UNARY;
    u->op_params[0] = GGML_UNARY_OP_RELU;
    is_str(ggml_op_desc(u), "RELU", "ggml_op_desc of a UNARY node names the unary op");
    is_int(ggml_get_unary_op(u), GGML_UNARY_OP_RELU, "ggml_get_unary_op reads op_params[0]");

    struct ggml_tensor *g = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    g->op = GGML_OP_GLU;
    g->op_params[0] = GGML_GLU_OP_SWIGLU;
    is_str(ggml_op_desc(g), "SWIGLU", "ggml_op_desc of a GLU node names the GLU op");
    is_int(ggml_get_glu_op(g), GGML_GLU_OP_SWIGLU, "ggml_get_glu_op reads op_params[0]");

    is_int(tap_log_errors(), 0, "ggml_op_desc logs no error");
    ggml_free(ctx);
}

/* ------------------------------------------------------ version, guid */

static void test_version(void)
{
    const char *v = ggml_version();
    ok(v != NULL && v[0] != '\0', "ggml_version is a non-empty string (%s)", v ? v : "(null)");
    const char *c = ggml_commit();
    ok(c != NULL, "ggml_commit is not NULL (%s)", c ? c : "(null)");
}

static void test_guid(void)
{
    ggml_guid a = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                    0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10 };
    ggml_guid b;
    memcpy(b, a, sizeof b);

    ok(ggml_guid_matches(&a, &a), "a GUID matches itself");
    ok(ggml_guid_matches(&a, &b), "a GUID matches an equal copy");
    b[15] ^= 0x01;
    ok(!ggml_guid_matches(&a, &b), "GUIDs differing in the last byte do not match");
    b[15] ^= 0x01;
    b[0] ^= 0x80;
    ok(!ggml_guid_matches(&a, &b), "GUIDs differing in the first byte do not match");
}

/* ---------------------------------------------------------------- time */

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static volatile double sink;

static void burn_cpu(void)
{
    /* Spend measurable processor time (clock() has coarse resolution). */
    clock_t start = clock();
    double x = 1.0;
    while (clock() - start < CLOCKS_PER_SEC / 50)
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void test_time(void)
{
    ggml_time_init();

    int64_t ms0 = ggml_time_ms();
    int64_t us0 = ggml_time_us();
    ok(ms0 >= 0 && us0 >= 0, "times are not negative (%" PRId64 " ms, %" PRId64 " us)", ms0, us0);

    sleep_ms(5);

    int64_t ms1 = ggml_time_ms();
    int64_t us1 = ggml_time_us();
    ok(us1 > us0, "ggml_time_us advances across a sleep (%" PRId64 " -> %" PRId64 ")", us0, us1);
    ok(ms1 >= ms0, "ggml_time_ms does not go back (%" PRId64 " -> %" PRId64 ")", ms0, ms1);

    /* ms and us read the same clock: an us reading sits between two ms readings. */
    int64_t before = ggml_time_ms();
    int64_t us = ggml_time_us();
    int64_t after = ggml_time_ms();
    ok(before <= us / 1000 && us / 1000 <= after,
       "ggml_time_us/1000 lies between surrounding ggml_time_ms readings (%" PRId64 " <= %" PRId64 " <= %" PRId64 ")",
       before, us / 1000, after);

    bool monotonic = true;
    int64_t prev = ggml_time_us();
    for (int i = 0; i < 10000; i++) {
        int64_t now = ggml_time_us();
        if (now < prev)
            monotonic = false;
        prev = now;
    }
    ok(monotonic, "10000 successive ggml_time_us readings never go back");

    int64_t c0 = ggml_cycles();
    burn_cpu();
    int64_t c1 = ggml_cycles();
    ok(c1 > 0, "ggml_cycles is positive after some work (%" PRId64 ")", c1);
    ok(c1 >= c0, "ggml_cycles does not go back (%" PRId64 " -> %" PRId64 ")", c0, c1);
    ok(ggml_cycles_per_ms() > 0, "ggml_cycles_per_ms is positive (%" PRId64 ")", ggml_cycles_per_ms());
}

/* --------------------------------------------------------------- fopen */

static void test_fopen(void)
{
    char dir[] = "/tmp/ggml-test-utils-XXXXXX";
    if (!mkdtemp(dir)) {
        tap_skip(4, "mkdtemp failed");
        return;
    }
    char path[256], missing_dir[256], missing_file[256];
    snprintf(path, sizeof path, "%s/file.txt", dir);
    snprintf(missing_dir, sizeof missing_dir, "%s/no-such-dir/file.txt", dir);
    snprintf(missing_file, sizeof missing_file, "%s/no-such-file.txt", dir);

    FILE *f = ggml_fopen(path, "w");
    ok(f != NULL, "ggml_fopen creates a file for writing");
    if (f) {
        fputs("hello\n", f);
        fclose(f);
    }
    f = ggml_fopen(path, "r");
    char line[32] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    is_str(line, "hello\n", "ggml_fopen reads back what was written");

    ok(ggml_fopen(missing_dir, "w") == NULL, "ggml_fopen in a missing directory returns NULL");
    ok(ggml_fopen(missing_file, "r") == NULL, "ggml_fopen of a missing file for reading returns NULL");
    remove(path);
    rmdir(dir);
}

/* ----------------------------------------------------------------- log */

static int my_log_calls;
static int my_log_errors;

static void my_log(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) text;
    my_log_calls++;
    if (level == GGML_LOG_LEVEL_ERROR)
        my_log_errors++;
    if (user_data)
        (*(int *) user_data)++;
}

static void test_log_hook(void)
{
    ggml_log_callback cb = NULL;
    void *ud = NULL;

    int counter = 0;
    ggml_log_set(my_log, &counter);
    ggml_log_get(&cb, &ud);
    ok(cb == my_log, "ggml_log_get returns the callback just set");
    ok(ud == &counter, "ggml_log_get returns the user data just set");

    /* A context too small for a tensor: one error reaches our callback. */
    struct ggml_init_params params = { 1024, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *t = ctx ? ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1 << 20) : NULL;
    ok(ctx != NULL && t == NULL, "an oversized tensor in a 1 KiB context fails");
    is_int(my_log_errors, 1, "the installed callback received exactly one error");
    ok(counter == my_log_calls && counter >= 1, "the callback received the user data pointer (%d calls)", counter);
    ggml_free(ctx);

    ggml_log_set(NULL, NULL);
    cb = my_log;
    ud = &counter;
    ggml_log_get(&cb, &ud);
    ok(cb != NULL && cb != my_log, "ggml_log_set(NULL) restores a default callback");
    ok(ud == NULL, "ggml_log_set(NULL, NULL) clears the user data");

    tap_capture_log();
    ggml_log_get(&cb, &ud);
    ok(cb != NULL && cb != my_log, "the test's own sink is installed again");
    tap_log_errors();
}

/* --------------------------------------------------------------- abort */

static void abort_cb_one(const char *message)
{
    (void) message;
}

static void abort_cb_two(const char *message)
{
    (void) message;
}

static void test_abort_hook(void)
{
    ggml_abort_callback_t prev = ggml_set_abort_callback(abort_cb_one);
    ok(prev == NULL, "no abort callback is installed initially");
    prev = ggml_set_abort_callback(abort_cb_two);
    ok(prev == abort_cb_one, "ggml_set_abort_callback returns the previous callback");
    prev = ggml_set_abort_callback(NULL);
    ok(prev == abort_cb_two, "clearing returns the last callback");
    prev = ggml_set_abort_callback(NULL);
    ok(prev == NULL, "after clearing, the previous callback is NULL");
}

int main(void)
{
    tap_capture_log();

    test_status_strings();
    test_op_names();
    test_op_desc();
    test_version();
    test_guid();
    test_time();
    test_fopen();
    test_log_hook();
    test_abort_hook();

    return tap_done();
}
