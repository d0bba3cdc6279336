/*
 * test-plugins.c - loading backend plugins: ggml_backend_load, _unload,
 * _load_all and _load_all_from_path with the test plugins of
 * tests/plugins (found in $TEST_PLUGIN_DIR), and the testdev plugin used
 * end to end: its device, its non-host buffers, copies CPU -> plugin ->
 * CPU, and a computation on the plugin's backend.
 *
 *   libggml-testdev.so     registry TESTDEV, score 10
 *   libggml-testdev-hi.so  registry TESTDEV, score 20
 *   libggml-badversion.so  api_version GGML_BACKEND_API_VERSION + 1
 *   libggml-noinit.so      no ggml_backend_init
 *   libggml-nullinit.so    ggml_backend_init returns NULL
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "tap.h"

static const char *plugin_dir;

/* ------------------------------------------------------------ the log */

/* Every message since logs_reset, with its level (on top of tap.h's count). */
#define MAX_LOGS 64
static struct {
    enum ggml_log_level level;
    char text[512];
} logs[MAX_LOGS];
static int n_logs;

static void recording_sink(enum ggml_log_level level, const char *text, void *user_data)
{
    if (level != GGML_LOG_LEVEL_CONT && n_logs < MAX_LOGS) {
        logs[n_logs].level = level;
        snprintf(logs[n_logs].text, sizeof logs[n_logs].text, "%s", text);
        n_logs++;
    }
    tap_log_sink(level, text, user_data);
}

static void logs_reset(void)
{
    n_logs = 0;
    tap_log_errors();
}

/* Messages at level that contain needle. */
static int logs_matching(enum ggml_log_level level, const char *needle)
{
    int n = 0;
    for (int i = 0; i < n_logs; i++)
        n += logs[i].level == level && strstr(logs[i].text, needle) != NULL;
    return n;
}

static int logs_at(enum ggml_log_level level)
{
    return logs_matching(level, "");
}

/* ------------------------------------------------------------- helpers */

/* dir/name, in one of eight static buffers used in turn. */
static char *path_in(const char *dir, const char *name)
{
    static char paths[8][PATH_MAX];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, PATH_MAX, "%s/%s", dir, name);
    return p;
}

static char *plugin_path(const char *name)
{
    char file[NAME_MAX + 1];
    snprintf(file, sizeof file, "libggml-%s.so", name);
    return path_in(plugin_dir, file);
}

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

/* Registered registries called name (ignoring case). */
static int count_registries(const char *name)
{
    int n = 0;
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        const char *reg_name = ggml_backend_reg_name(ggml_backend_reg_get(i));
        n += reg_name != NULL && strcasecmp(reg_name, name) == 0;
    }
    return n;
}

/* The TESTDEV_SCORE the registry's plugin was built with, or -1. */
static int testdev_score_of(ggml_backend_reg_t reg)
{
    if (reg == NULL)
        return -1;
    int (*score)(void) = (int (*)(void)) ggml_backend_reg_get_proc_address(reg, "testdev_score");
    return score ? score() : -1;
}

static size_t testdev_live_buffers(ggml_backend_reg_t reg)
{
    size_t (*live)(void) = (size_t (*)(void)) ggml_backend_reg_get_proc_address(reg, "testdev_live_buffers");
    return live ? live() : SIZE_MAX;
}

static size_t testdev_bounds_errors(ggml_backend_reg_t reg)
{
    size_t (*errors)(void) = (size_t (*)(void)) ggml_backend_reg_get_proc_address(reg, "testdev_bounds_errors");
    return errors ? errors() : SIZE_MAX;
}

/* Unloads whatever TESTDEV registry is registered. */
static void unload_testdev(void)
{
    ggml_backend_reg_t reg;
    while ((reg = ggml_backend_reg_by_name("TESTDEV")) != NULL)
        ggml_backend_unload(reg);
}

/* -------------------------------------------------- ggml_backend_load */

static void test_load_by_path(void)
{
    const size_t regs = ggml_backend_reg_count(), devs = ggml_backend_dev_count();

    logs_reset();
    ggml_backend_reg_t reg = ggml_backend_load(plugin_path("testdev"));
    ok(reg != NULL, "ggml_backend_load loads the test plugin by path");
    is_int(tap_log_errors(), 0, "loading it logs no error");
    is_int(logs_matching(GGML_LOG_LEVEL_INFO, "libggml-testdev.so"), 1, "one INFO message says what was loaded");
    if (reg == NULL) {
        tap_skip(17, "the test plugin did not load");
        return;
    }
    is_str(ggml_backend_reg_name(reg), "TESTDEV", "its registry is TESTDEV");
    is_int(testdev_score_of(reg), 10, "it is the score-10 build");
    is_uint(ggml_backend_reg_count(), regs + 1, "one registry was added");
    is_ptr(ggml_backend_reg_by_name("testdev"), reg, "it is found by name");
    is_uint(ggml_backend_reg_dev_count(reg), 1, "it has one device");

    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(reg, 0);
    is_str(ggml_backend_dev_name(dev), "TESTDEV0", "the device is TESTDEV0");
    is_str(ggml_backend_dev_description(dev), "test device", "described as a test device");
    is_int(ggml_backend_dev_type(dev), GGML_BACKEND_DEVICE_TYPE_GPU, "of type GPU");
    is_ptr(ggml_backend_dev_backend_reg(dev), reg, "belonging to the registry");
    is_uint(ggml_backend_dev_count(), devs + 1, "the device was added to the global list");
    is_ptr(ggml_backend_dev_get(devs - 1), dev, "at its end, before the built-in CPU device");
    is_int(ggml_backend_dev_type(ggml_backend_dev_get(devs)), GGML_BACKEND_DEVICE_TYPE_CPU, "which stays last");
    is_ptr(ggml_backend_dev_by_name("testdev0"), dev, "and is found by name");

    logs_reset();
    is_ptr(ggml_backend_load(plugin_path("testdev")), reg, "loading the same file again returns the same registry");
    char other_spelling[PATH_MAX];
    snprintf(other_spelling, sizeof other_spelling, "%s/./libggml-testdev.so", plugin_dir);
    is_ptr(ggml_backend_load(other_spelling), reg, "so does another path to the same file");
    is_int(tap_log_errors(), 0, "without an error");
    is_uint(ggml_backend_reg_count(), regs + 1, "the registry is listed once");
    is_uint(ggml_backend_dev_count(), devs + 1, "its device is listed once");
}

static void test_score_choice(void)
{
    ggml_backend_reg_t low = ggml_backend_reg_by_name("TESTDEV");
    ggml_backend_dev_t low_dev = ggml_backend_dev_by_name("TESTDEV0");
    const size_t devs = ggml_backend_dev_count();
    if (low == NULL) {
        tap_skip(9, "the test plugin is not loaded");
        return;
    }

    logs_reset();
    ggml_backend_reg_t hi = ggml_backend_load(plugin_path("testdev-hi"));
    ok(hi != NULL && hi != low, "a plugin of the same name and a higher score is loaded");
    is_int(testdev_score_of(hi), 20, "it is the score-20 build");
    is_int(count_registries("TESTDEV"), 1, "it replaces the lower-scored registry");
    is_ptr(ggml_backend_reg_by_name("TESTDEV"), hi, "the name now finds the higher-scored one");
    is_uint(ggml_backend_dev_count(), devs, "the device count is unchanged");
    ggml_backend_dev_t hi_dev = ggml_backend_dev_by_name("TESTDEV0");
    ok(hi_dev != NULL && hi_dev != low_dev, "TESTDEV0 is now the new plugin's device");
    is_int(tap_log_errors(), 0, "replacing a plugin is not an error");
    is_int(logs_matching(GGML_LOG_LEVEL_INFO, "libggml-testdev-hi.so"), 1, "one INFO message says which was kept");

    logs_reset();
    ggml_backend_reg_t again = ggml_backend_load(plugin_path("testdev"));
    ok(again == hi && count_registries("TESTDEV") == 1 && testdev_score_of(ggml_backend_reg_by_name("TESTDEV")) == 20,
       "loading the lower-scored plugin now keeps the higher-scored one");
}

static void test_unload(void)
{
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("TESTDEV");
    const size_t regs = ggml_backend_reg_count(), devs = ggml_backend_dev_count();
    if (reg == NULL) {
        tap_skip(8, "the test plugin is not loaded");
        return;
    }
    logs_reset();
    ggml_backend_unload(reg);
    is_int(tap_log_errors(), 0, "ggml_backend_unload logs no error");
    is_uint(ggml_backend_reg_count(), regs - 1, "the registry is gone");
    is_uint(ggml_backend_dev_count(), devs - 1, "its device is gone");
    is_ptr(ggml_backend_reg_by_name("TESTDEV"), NULL, "reg_by_name no longer finds it");
    is_ptr(ggml_backend_dev_by_name("TESTDEV0"), NULL, "dev_by_name no longer finds its device");

    ggml_backend_unload(reg);
    logged_one_error("unloading it again logs one error");
    ggml_backend_unload(NULL);
    logged_one_error("unloading NULL logs one error");

    reg = ggml_backend_load(plugin_path("testdev"));
    ok(reg != NULL && ggml_backend_dev_by_name("TESTDEV0") != NULL, "an unloaded plugin can be loaded again");
    unload_testdev();
}

#define N_THREADS 4

static void *load_in_thread(void *arg)
{
    return ggml_backend_load(arg);
}

static void test_concurrent_loads(void)
{
    pthread_t ids[N_THREADS];
    void *regs[N_THREADS] = { NULL };
    int started = 0;

    for (int t = 0; t < N_THREADS; t++)
        started += pthread_create(&ids[t], NULL, load_in_thread, plugin_path(t % 2 ? "testdev" : "testdev-hi")) == 0;
    for (int t = 0; t < started; t++)
        pthread_join(ids[t], &regs[t]);
    is_int(started, N_THREADS, "%d threads load plugins at once", N_THREADS);
    is_int(count_registries("TESTDEV"), 1, "one TESTDEV registry results");
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("TESTDEV");
    is_int(testdev_score_of(reg), 20, "the higher-scored one");
    int same = 0;
    for (int t = 0; t < started; t++)
        same += regs[t] == reg;
    ok(same >= N_THREADS / 2, "the threads loading it got it (%d of %d got the final registry)", same, started);
    is_int(tap_log_errors(), 0, "concurrent loads log no error");
    unload_testdev();
}

static void test_rejections(void)
{
    const size_t regs = ggml_backend_reg_count(), devs = ggml_backend_dev_count();

    logs_reset();
    is_ptr(ggml_backend_load(plugin_path("badversion")), NULL, "a plugin of another API version is refused");
    logged_one_error("with one error");
    ok(mentions_number(tap_last_log(), GGML_BACKEND_API_VERSION + 1), "naming the plugin's version %d",
       GGML_BACKEND_API_VERSION + 1);
    ok(mentions_number(tap_last_log(), GGML_BACKEND_API_VERSION), "and the library's version %d",
       GGML_BACKEND_API_VERSION);
    ok(strstr(tap_last_log(), "libggml-badversion.so") != NULL, "and the file");
    is_ptr(ggml_backend_reg_by_name("BADVERSION"), NULL, "its registry is not registered");

    is_ptr(ggml_backend_load(plugin_path("noinit")), NULL, "a module without ggml_backend_init is refused");
    logged_one_error("with one error");
    ok(strstr(tap_last_log(), "ggml_backend_init") != NULL && strstr(tap_last_log(), "libggml-noinit.so") != NULL,
       "naming the missing function and the file");

    is_ptr(ggml_backend_load(plugin_path("nullinit")), NULL, "a plugin whose init returns NULL is refused");
    logged_one_error("with one error");
    ok(strstr(tap_last_log(), "libggml-nullinit.so") != NULL, "naming the file");

    is_ptr(ggml_backend_load(plugin_path("does-not-exist")), NULL, "a missing file is refused");
    logged_one_error("with one error");
    ok(strstr(tap_last_log(), "libggml-does-not-exist.so") != NULL, "naming the file");

    is_ptr(ggml_backend_load(plugin_dir), NULL, "a directory is refused");
    logged_one_error("with one error");
    is_ptr(ggml_backend_load(NULL), NULL, "ggml_backend_load(NULL) returns NULL");
    logged_one_error("with one error");

    is_int(logs_at(GGML_LOG_LEVEL_ERROR), 6, "each refusal logged exactly one error in all");
    is_int(logs_at(GGML_LOG_LEVEL_WARN) + logs_at(GGML_LOG_LEVEL_INFO), 0, "and nothing else");
    is_uint(ggml_backend_reg_count(), regs, "no registry was added");
    is_uint(ggml_backend_dev_count(), devs, "no device was added");
}

static void test_score_zero(void)
{
    const size_t regs = ggml_backend_reg_count();

    setenv("TESTDEV_FORCE_SCORE", "0", 1);
    logs_reset();
    is_ptr(ggml_backend_load(plugin_path("testdev")), NULL, "a plugin scoring 0 is not loaded");
    is_int(tap_log_errors(), 0, "that is not an error");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "libggml-testdev.so"), 1, "but one warning when loaded explicitly");

    logs_reset();
    ggml_backend_load_all_from_path(plugin_dir);
    is_int(count_registries("TESTDEV"), 0, "a scan skips plugins scoring 0");
    is_int(tap_log_errors(), 0, "without an error");
    is_int(logs_matching(GGML_LOG_LEVEL_INFO, "libggml-testdev.so") +
           logs_matching(GGML_LOG_LEVEL_INFO, "libggml-testdev-hi.so"), 2, "with one note for each");
    unsetenv("TESTDEV_FORCE_SCORE");
    is_uint(ggml_backend_reg_count(), regs, "nothing was registered");
}

/* ----------------------------------------------- load_all and the path */

static void test_load_all_from_path(void)
{
    unsetenv("GGML_BACKEND_PATH");
    logs_reset();
    ggml_backend_load_all_from_path(plugin_dir);
    is_int(tap_log_errors(), 0, "stray files found by a scan are not errors");
    is_int(count_registries("TESTDEV"), 1, "the directory yields exactly one TESTDEV registry");
    is_int(testdev_score_of(ggml_backend_reg_by_name("TESTDEV")), 20, "the higher-scored one");
    is_int(count_registries("BADVERSION"), 0, "the wrong-version plugin is not registered");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "libggml-badversion.so"), 1, "one warning for the wrong version");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "libggml-noinit.so"), 1, "one warning for the missing init");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "libggml-nullinit.so"), 1, "one warning for the NULL init");
    is_int(logs_matching(GGML_LOG_LEVEL_INFO, "TESTDEV: kept"), 1, "one note says which TESTDEV was kept");

    const size_t regs = ggml_backend_reg_count(), devs = ggml_backend_dev_count();
    logs_reset();
    ggml_backend_load_all_from_path(plugin_dir);
    is_uint(ggml_backend_reg_count(), regs, "scanning again adds no registry");
    is_uint(ggml_backend_dev_count(), devs, "nor device");
    is_int(tap_log_errors(), 0, "nor errors");
    unload_testdev();

    logs_reset();
    ggml_backend_load_all_from_path("/nonexistent/ggml-plugins");
    logged_one_error("a directory that cannot be read logs one error");
    is_int(count_registries("TESTDEV"), 0, "and loads nothing");
}

static void test_backend_path(void)
{
    char list[3 * PATH_MAX];

    setenv("GGML_BACKEND_PATH", plugin_dir, 1);
    logs_reset();
    ggml_backend_load_all();
    is_int(tap_log_errors(), 0, "GGML_BACKEND_PATH naming the directory: no error");
    is_int(count_registries("TESTDEV"), 1, "it yields one TESTDEV registry");
    is_int(testdev_score_of(ggml_backend_reg_by_name("TESTDEV")), 20, "the higher-scored one");
    unload_testdev();

    setenv("GGML_BACKEND_PATH", plugin_path("testdev"), 1);
    logs_reset();
    ggml_backend_load_all();
    is_int(tap_log_errors(), 0, "GGML_BACKEND_PATH naming one file: no error");
    is_int(testdev_score_of(ggml_backend_reg_by_name("TESTDEV")), 10, "that file is loaded");
    is_int(count_registries("BADVERSION") + logs_at(GGML_LOG_LEVEL_WARN), 0,
           "and nothing else is looked at");
    unload_testdev();

    snprintf(list, sizeof list, "relative/dir::%s:/nonexistent/ggml-plugins", plugin_path("testdev-hi"));
    setenv("GGML_BACKEND_PATH", list, 1);
    logs_reset();
    ggml_backend_load_all();
    is_int(tap_log_errors(), 0, "a list with bad entries: no error");
    is_int(testdev_score_of(ggml_backend_reg_by_name("TESTDEV")), 20, "its good entry is loaded");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "relative/dir"), 1, "a relative entry is ignored with one warning");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "/nonexistent/ggml-plugins"), 1,
           "a missing entry is ignored with one warning");
    unload_testdev();

    snprintf(list, sizeof list, "%s:%s", plugin_path("badversion"), plugin_path("nullinit"));
    setenv("GGML_BACKEND_PATH", list, 1);
    logs_reset();
    ggml_backend_load_all();
    is_int(tap_log_errors(), 0, "bad files named by GGML_BACKEND_PATH are not errors");
    is_int(logs_at(GGML_LOG_LEVEL_WARN), 2, "each gets one warning");

    unsetenv("GGML_BACKEND_PATH");
}

static void test_never_cwd(void)
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL || chdir(plugin_dir) != 0) {
        tap_skip(3, "cannot change into the plugin directory");
        return;
    }
    unsetenv("GGML_BACKEND_PATH");
    ggml_backend_load_all();
    is_int(count_registries("TESTDEV"), 0, "load_all loads nothing from the working directory");

    setenv("GGML_BACKEND_PATH", ".", 1);
    logs_reset();
    ggml_backend_load_all();
    is_int(count_registries("TESTDEV"), 0, "not even when GGML_BACKEND_PATH says \".\"");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "'.'"), 1, "which is ignored with a warning");
    unsetenv("GGML_BACKEND_PATH");
    tap_log_errors();
    if (chdir(cwd) != 0)
        tap_diag("cannot return to %s", cwd);
}

/* ------------------------------------------- files that are not plugins */

/* A scratch directory of this test, mode 0700, and paths in it. */
static char scratch[PATH_MAX];

static char *scratch_path(const char *name)
{
    return path_in(scratch, name);
}

/* Copies the file src to dst with the given mode; false on any failure. */
static bool copy_file(const char *src, const char *dst, mode_t mode)
{
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    bool done = in >= 0 && out >= 0;
    char block[8192];
    ssize_t n = 0;
    while (done && (n = read(in, block, sizeof block)) > 0)
        done = write(out, block, (size_t) n) == n;
    done = done && n == 0 && fchmod(out, mode) == 0;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        done = false;
    return done;
}

/*
 * A FIFO is never opened, whoever names it: dlopen of one blocks until a
 * writer comes.  alarm turns a regression into a failure, not a hang.
 */
static void test_fifo(void)
{
    const char *fifo = scratch_path("libggml-fifo.so");
    const char *link = scratch_path("libggml-fifolink.so");
    if (mkfifo(fifo, 0600) != 0 || symlink(fifo, link) != 0) {
        tap_skip(9, "cannot make a FIFO and a link to it");
        return;
    }
    alarm(30);
    logs_reset();
    is_ptr(ggml_backend_load(fifo), NULL, "ggml_backend_load of a FIFO returns NULL");
    logged_one_error("with one error");
    ok(strstr(tap_last_log(), "FIFO") != NULL && strstr(tap_last_log(), fifo) != NULL,
       "saying the file is a FIFO: %s", tap_last_log());
    is_ptr(ggml_backend_load(link), NULL, "so does a symbolic link to a FIFO");
    logged_one_error("with one error");

    setenv("GGML_BACKEND_PATH", fifo, 1);
    logs_reset();
    ggml_backend_load_all();
    is_int(tap_log_errors(), 0, "a FIFO named by GGML_BACKEND_PATH is not an error");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "FIFO"), 1, "but one warning");

    setenv("GGML_BACKEND_PATH", scratch, 1);
    logs_reset();
    ggml_backend_load_all();
    is_int(tap_log_errors(), 0, "FIFOs found by a scan are not errors");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "FIFO"), 2, "each gets one warning");
    unsetenv("GGML_BACKEND_PATH");
    alarm(0);
    unlink(link);
    unlink(fifo);
}

/* ggml_backend_load of path is refused with one error containing why. */
static void refused_with(const char *path, const char *why, const char *what)
{
    logs_reset();
    is_ptr(ggml_backend_load(path), NULL, "%s is refused", what);
    logged_one_error("with one error");
    ok(strstr(tap_last_log(), why) != NULL, "saying it: %s", tap_last_log());
    is_int(count_registries("TESTDEV"), 0, "nothing is registered");
}

/* Writable by every user, or in a directory that is: refused. */
static void test_unsafe_permissions(void)
{
    const char *copy = scratch_path("libggml-copy.so");
    if (!copy_file(plugin_path("testdev"), copy, 0644)) {
        tap_skip(27, "cannot copy the test plugin");
        return;
    }
    logs_reset();
    ok(ggml_backend_load(copy) != NULL, "a copy of the test plugin, mode 0644, loads");
    is_int(tap_log_errors(), 0, "without an error");
    unload_testdev();

    chmod(copy, 0666);
    refused_with(copy, "writable by every user", "the copy made writable by every user (0666)");
    chmod(copy, 0646);
    refused_with(copy, "writable by every user", "the copy with mode 0646");
    chmod(copy, 0664);
    logs_reset();
    ok(ggml_backend_load(copy) != NULL, "group write permission is accepted");
    is_int(tap_log_errors(), 0, "without an error");
    unload_testdev();
    chmod(copy, 0644);

    const char *open_dir = scratch_path("open");
    const char *in_open = scratch_path("open/libggml-copy.so");
    if (mkdir(open_dir, 0755) != 0 || !copy_file(plugin_path("testdev"), in_open, 0644)) {
        tap_skip(15, "cannot make a directory with a copy of the test plugin");
        return;
    }
    chmod(open_dir, 0777);
    refused_with(in_open, "directory", "a plugin in a directory writable by every user");
    chmod(open_dir, 01777);
    refused_with(in_open, "writable by every user", "a plugin in a sticky directory writable by every user");

    const char *link = scratch_path("libggml-link.so");
    if (symlink(in_open, link) == 0)
        refused_with(link, "directory", "a link from a safe directory to a plugin in such a directory");
    else
        tap_skip(4, "cannot make a symbolic link");

    setenv("GGML_BACKEND_PATH", open_dir, 1);
    logs_reset();
    ggml_backend_load_all();
    is_int(tap_log_errors(), 0, "found by a scan it is not an error");
    is_int(logs_matching(GGML_LOG_LEVEL_WARN, "writable by every user"), 1, "but one warning");
    is_int(count_registries("TESTDEV"), 0, "and it is not loaded");
    unsetenv("GGML_BACKEND_PATH");
    unlink(link);
    unlink(in_open);
    rmdir(open_dir);
    unlink(copy);
}

/* Owned by a user other than root and this process's: refused. */
static void test_foreign_owner(void)
{
    const struct passwd *nobody = getpwnam("nobody");
    if (geteuid() != 0 || nobody == NULL || nobody->pw_uid == 0) {
        tap_skip(8, geteuid() != 0 ? "not running as root: cannot give a file away"
                                   : "no user nobody");
        return;
    }
    const char *copy = scratch_path("libggml-copy.so");
    const char *dir = scratch_path("theirs");
    const char *in_dir = scratch_path("theirs/libggml-copy.so");
    if (!copy_file(plugin_path("testdev"), copy, 0644) || chown(copy, nobody->pw_uid, (gid_t) -1) != 0 ||
        mkdir(dir, 0755) != 0 || !copy_file(plugin_path("testdev"), in_dir, 0644) ||
        chown(dir, nobody->pw_uid, (gid_t) -1) != 0) {
        tap_skip(8, "cannot make files owned by nobody");
        return;
    }
    refused_with(copy, "user other than root", "a plugin file owned by nobody");
    refused_with(in_dir, "directory", "a plugin in a directory owned by nobody");
    unlink(in_dir);
    rmdir(dir);
    unlink(copy);
}

static void test_unsafe_files(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/test-plugins.XXXXXX", tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
    if (mkdtemp(scratch) == NULL) {
        tap_skip(1, "cannot make a scratch directory");
        return;
    }
    test_fifo();
    test_unsafe_permissions();
    test_foreign_owner();
    if (rmdir(scratch) != 0)
        tap_diag("cannot remove %s: %s", scratch, strerror(errno));
}

/* ------------------------------------------------------- end to end */

#define A_COLS 7
#define A_ROWS 5
#define BIG_FLOATS (150 * 1024) /* 600 KiB: two of them exceed the 1 MiB buffer limit */

static void test_device_use(void)
{
    ggml_backend_reg_t reg = ggml_backend_load(plugin_path("testdev"));
    if (reg == NULL) {
        tap_skip(1, "the test plugin did not load");
        return;
    }
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(reg, 0);
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev);
    ggml_backend_buffer_type_t cpu_buft = ggml_backend_cpu_buffer_type();
    ggml_backend_t backend = ggml_backend_dev_init(dev, NULL);
    ok(backend != NULL, "the plugin's device creates a backend");
    is_str(ggml_backend_name(backend), "TESTDEV", "named TESTDEV");
    is_str(ggml_backend_buft_name(buft), "TESTDEV", "its buffer type is TESTDEV");
    ok(!ggml_backend_buft_is_host(buft), "which is not host memory (the library's default)");
    is_uint(ggml_backend_buft_get_alignment(buft), 64, "alignment 64");
    is_uint(ggml_backend_buft_get_max_size(buft), 1 << 20, "max size 1 MiB");
    ok(ggml_backend_dev_supports_buft(dev, buft), "the device uses its own buffers");
    ok(!ggml_backend_dev_supports_buft(dev, cpu_buft), "but not CPU buffers");

    struct ggml_backend_dev_props props;
    ggml_backend_dev_get_props(dev, &props);
    is_str(props.name, "TESTDEV0", "props: name");
    ok(props.caps.events && !props.caps.async && !props.caps.host_buffer, "props: caps");

    /* the device's tensors: a, its transpose made contiguous two ways, and two big ones */
    struct ggml_init_params params = { .mem_size = 32 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, A_COLS, A_ROWS);
    struct ggml_tensor *at = ggml_transpose(ctx, a);
    struct ggml_tensor *cont = ggml_cont(ctx, at);
    struct ggml_tensor *dst = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, A_ROWS, A_COLS);
    struct ggml_tensor *cpy = ggml_cpy(ctx, ggml_transpose(ctx, a), dst);
    struct ggml_tensor *p = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, BIG_FLOATS);
    struct ggml_tensor *q = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, BIG_FLOATS);
    ggml_set_name(a, "a");
    ggml_set_name(p, "p");

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    ok(buf != NULL, "a context's tensors are allocated in the plugin's buffers");
    if (buf == NULL) {
        ggml_free(ctx);
        ggml_backend_free(backend);
        unload_testdev();
        return;
    }
    ok(ggml_backend_buffer_is_multi_buffer(buf), "more than 1 MiB of tensors take a multi-buffer");
    is_uint(testdev_live_buffers(reg), 2, "made of two plugin buffers");
    ok(a->buffer != NULL && !ggml_backend_buffer_is_host(a->buffer), "tensors are in non-host buffers");
    ok((uintptr_t) a->data % 64 == 0 && (uintptr_t) p->data % 64 == 0, "at aligned device addresses");
    size_t mem_free, mem_total;
    ggml_backend_dev_memory(dev, &mem_free, &mem_total);
    is_uint(mem_total - mem_free, ggml_backend_buffer_get_size(buf), "the device counts the memory in use");

    /* host tensors */
    struct ggml_context *hctx = ggml_init(params);
    struct ggml_tensor *ha = ggml_new_tensor_2d(hctx, GGML_TYPE_F32, A_COLS, A_ROWS);
    struct ggml_tensor *hback = ggml_new_tensor_2d(hctx, GGML_TYPE_F32, A_COLS, A_ROWS);
    struct ggml_tensor *hcont = ggml_new_tensor_2d(hctx, GGML_TYPE_F32, A_ROWS, A_COLS);
    struct ggml_tensor *hdst = ggml_new_tensor_2d(hctx, GGML_TYPE_F32, A_ROWS, A_COLS);
    struct ggml_tensor *hp = ggml_new_tensor_1d(hctx, GGML_TYPE_F32, BIG_FLOATS);
    struct ggml_tensor *hq = ggml_new_tensor_1d(hctx, GGML_TYPE_F32, BIG_FLOATS);
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors_from_buft(hctx, cpu_buft);
    ok(hbuf != NULL && ggml_backend_buffer_is_host(hbuf), "host tensors are in a CPU buffer");
    if (hbuf == NULL)
        goto done;

    float *va = ha->data;
    for (int i = 0; i < A_COLS * A_ROWS; i++)
        va[i] = (float) (i * 3 + 1) * 0.5f;
    float *vp = hp->data;
    for (int i = 0; i < BIG_FLOATS; i++)
        vp[i] = (float) (i % 9973) - 17.25f;
    memset(hback->data, 0, ggml_nbytes(hback));
    memset(hq->data, 0, ggml_nbytes(hq));

    tap_log_errors();
    ggml_backend_tensor_copy(ha, a);
    ggml_backend_tensor_copy(a, hback);
    ok(memcmp(hback->data, ha->data, ggml_nbytes(ha)) == 0, "CPU -> plugin -> CPU gives the same bytes back");
    ggml_backend_tensor_copy(hp, p);
    ggml_backend_tensor_copy(p, q);
    ggml_backend_tensor_copy(q, hq);
    ok(memcmp(hq->data, hp->data, ggml_nbytes(hp)) == 0,
       "CPU -> plugin -> plugin (another buffer) -> CPU gives the same bytes back");
    is_int(tap_log_errors(), 0, "the copies log no error");

    /* compute on the plugin: CONT and CPY of a transposed view */
    struct ggml_init_params gparams = {
        .mem_size = ggml_graph_overhead() + 8 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true,
    };
    struct ggml_context *gctx = ggml_init(gparams);
    struct ggml_cgraph *graph = ggml_new_graph(gctx);
    ggml_build_forward_expand(graph, cont);
    ggml_build_forward_expand(graph, cpy);
    ok(ggml_backend_supports_op(backend, cont), "the backend supports CONT of F32");
    ok(ggml_backend_supports_op(backend, cpy), "and CPY of F32");
    ok(ggml_backend_supports_op(backend, at), "and TRANSPOSE");
    ok(!ggml_backend_supports_op(backend, ggml_cast(gctx, a, GGML_TYPE_F16)), "but not a copy to F16");
    struct ggml_tensor *other = ggml_dup_tensor(gctx, a);
    other->op = GGML_OP_DIV;  /* labelled by hand: only the op is looked at */
    other->src[0] = other->src[1] = a;
    ok(!ggml_backend_supports_op(backend, other), "nor DIV");
    is_int(ggml_backend_graph_compute(backend, graph), GGML_STATUS_SUCCESS, "the graph computes");

    ggml_backend_tensor_copy(cont, hcont);
    ggml_backend_tensor_copy(dst, hdst);
    int wrong_cont = 0, wrong_cpy = 0;
    const float *vc = hcont->data, *vd = hdst->data;
    for (int r = 0; r < A_COLS; r++) {      /* rows of the transpose */
        for (int c = 0; c < A_ROWS; c++) {  /* columns of the transpose */
            float want = (float) ((c * A_COLS + r) * 3 + 1) * 0.5f;  /* a[c][r], written as above */
            wrong_cont += vc[r * A_ROWS + c] != want;
            wrong_cpy += vd[r * A_ROWS + c] != want;
        }
    }
    is_int(wrong_cont, 0, "CONT of the transposed view is the transpose");
    is_int(wrong_cpy, 0, "CPY of the transposed view into a contiguous tensor is the transpose");
    ggml_free(gctx);

    /* events */
    ggml_backend_event_t event = ggml_backend_event_new(dev);
    ok(event != NULL, "the device makes events");
    ggml_backend_event_record(event, backend);
    ggml_backend_event_wait(backend, event);
    ggml_backend_event_synchronize(event);
    ggml_backend_event_free(event);
    is_int(tap_log_errors(), 0, "events log no error");

    /* the library checks ranges before the plugin sees them */
    float four[4] = { 0 };
    ggml_backend_tensor_set(a, four, ggml_nbytes(a) - 8, sizeof four);
    logged_one_error("a write past a device tensor logs one error");
    is_uint(testdev_bounds_errors(reg), 0, "and never reaches the plugin");

done:
    ggml_backend_buffer_free(hbuf);
    ggml_backend_buffer_free(buf);
    is_uint(testdev_live_buffers(reg), 0, "freeing the multi-buffer frees the plugin's buffers");
    ggml_free(hctx);
    ggml_free(ctx);
    ggml_backend_free(backend);
    unload_testdev();
    is_int(tap_log_errors(), 0, "cleaning up logs no error");
}

int main(void)
{
    tap_capture_log();
    ggml_log_set(recording_sink, NULL);

    /* absolute, so that it still names the directory after a chdir and
     * GGML_BACKEND_PATH accepts it */
    static char dir[PATH_MAX];
    const char *env = getenv("TEST_PLUGIN_DIR");
    if (env == NULL || env[0] == '\0') {
        tap_skip(1, "TEST_PLUGIN_DIR is not set (make check sets it to tests/plugins/.libs)");
        return tap_done();
    }
    if (realpath(env, dir) == NULL) {
        tap_skip(1, "TEST_PLUGIN_DIR does not name a directory");
        return tap_done();
    }
    plugin_dir = dir;
    unsetenv("GGML_BACKEND_PATH");
    unsetenv("TESTDEV_FORCE_SCORE");

    test_load_by_path();
    test_score_choice();
    test_unload();
    test_concurrent_loads();
    test_rejections();
    test_score_zero();
    test_load_all_from_path();
    test_backend_path();
    test_never_cwd();
    test_unsafe_files();
    test_device_use();

    return tap_done();
}
