/*
 * test-cpu-hwloc.c - the CPU backend consults hwloc once per process.
 *
 * hwloc does not survive an allocation failure inside its own queries, so
 * after the first CPU backend init of a process nothing may call into it
 * again.  This program defines the hwloc functions that query or change
 * the system; the library's calls resolve to these definitions (an
 * executable's symbols come first), which count the call and forward it to
 * hwloc.  Checked:
 *
 *   - in a child process whose HWLOC_XMLFILE names a file that is not XML
 *     and whose HWLOC_COMPONENTS allows only the XML component (hwloc's
 *     topology load then fails): the CPU backend still works, on
 *     one node, after exactly one warning;
 *   - here: the first init consults hwloc; later backend inits, buffers
 *     placed under a NUMA strategy, computations on a pool bound to a CPU
 *     and ggml_numa_init make no further call into hwloc.
 */
#include "config.h"

#include <dlfcn.h>
#include <hwloc.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

/* ---------------------------------------------------- counted hwloc calls */

static atomic_int hwloc_calls;

#define COUNTED(ret, name, params, args)                                  \
    ret name params                                                       \
    {                                                                     \
        typedef ret(*name##_fn) params;                                   \
        static name##_fn real;                                            \
        atomic_fetch_add(&hwloc_calls, 1);                                \
        if (real == NULL)                                                 \
            *(void **) &real = dlsym(RTLD_NEXT, #name);                   \
        return real args;                                                 \
    }

COUNTED(int, hwloc_topology_init, (hwloc_topology_t *t), (t))
COUNTED(int, hwloc_topology_load, (hwloc_topology_t t), (t))
COUNTED(int, hwloc_get_cpubind, (hwloc_topology_t t, hwloc_cpuset_t s, int f), (t, s, f))
COUNTED(int, hwloc_set_cpubind, (hwloc_topology_t t, hwloc_const_cpuset_t s, int f), (t, s, f))
COUNTED(int, hwloc_get_thread_cpubind, (hwloc_topology_t t, pthread_t th, hwloc_cpuset_t s, int f),
        (t, th, s, f))
COUNTED(int, hwloc_set_thread_cpubind, (hwloc_topology_t t, pthread_t th, hwloc_const_cpuset_t s, int f),
        (t, th, s, f))
COUNTED(int, hwloc_get_last_cpu_location, (hwloc_topology_t t, hwloc_cpuset_t s, int f), (t, s, f))
COUNTED(int, hwloc_set_membind,
        (hwloc_topology_t t, hwloc_const_bitmap_t s, hwloc_membind_policy_t p, int f), (t, s, p, f))
COUNTED(int, hwloc_set_area_membind,
        (hwloc_topology_t t, const void *a, size_t n, hwloc_const_bitmap_t s, hwloc_membind_policy_t p, int f),
        (t, a, n, s, p, f))
COUNTED(void *, hwloc_alloc, (hwloc_topology_t t, size_t n), (t, n))
COUNTED(void *, hwloc_alloc_membind,
        (hwloc_topology_t t, size_t n, hwloc_const_bitmap_t s, hwloc_membind_policy_t p, int f),
        (t, n, s, p, f))
COUNTED(int, hwloc_free, (hwloc_topology_t t, void *a, size_t n), (t, a, n))

/* ------------------------------------------------------------ a workload */

enum { N = 37 };

/*
 * Computes y = 2 (w + x) on backend, w and x in a new buffer used for
 * WEIGHTS (placed as the NUMA strategy says); true when y is exact (small
 * integers: exact in F32).
 */
static bool compute_once(ggml_backend_t backend)
{
    struct ggml_init_params params = { .mem_size = 8 * ggml_tensor_overhead() + ggml_graph_overhead(),
                                       .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context *ctx = ggml_init(params);
    if (ctx == NULL)
        return false;
    struct ggml_tensor *w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor *x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor *y = ggml_scale(ctx, ggml_add(ctx, w, x), 2.0f);
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, y);
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors(ctx, backend);
    bool exact = buffer != NULL;
    if (exact) {
        ggml_backend_buffer_set_usage(buffer, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        float wv[N], xv[N], yv[N];
        for (int i = 0; i < N; i++) {
            wv[i] = (float) i;
            xv[i] = (float) (100 - 3 * i);
        }
        ggml_backend_tensor_set(w, wv, 0, sizeof wv);
        ggml_backend_tensor_set(x, xv, 0, sizeof xv);
        exact = ggml_backend_graph_compute(backend, graph) == GGML_STATUS_SUCCESS;
        ggml_backend_tensor_get(y, yv, 0, sizeof yv);
        for (int i = 0; i < N && exact; i++)
            exact = yv[i] == 2.0f * (float) (100 - 2 * i);
    }
    ggml_backend_buffer_free(buffer);
    ggml_free(ctx);
    return exact;
}

/* ------------------------------------------------------ hwloc that fails */

static int fallback_warnings, fallback_errors;

static void count_levels(enum ggml_log_level level, const char *text, void *data)
{
    (void) data;
    if (level == GGML_LOG_LEVEL_WARN) {
        fallback_warnings++;
        printf("# child warning: %s", text);
    } else if (level == GGML_LOG_LEVEL_ERROR) {
        fallback_errors++;
        printf("# child error: %s", text);
    }
}

/* The child: hwloc's topology load fails; returns the number of failed checks. */
static int run_fallback(const char *bad_xml)
{
    int failed = 0;
#define EXPECT(cond, what)                                     \
    do {                                                       \
        if (!(cond)) {                                         \
            failed++;                                          \
            printf("# child: failed: %s\n", what);             \
        }                                                      \
    } while (0)
    setenv("HWLOC_XMLFILE", bad_xml, 1);
    /* only the XML component, no fallback to the system's discovery when
       it fails (hwloc falls back when its libxml2 plugin is installed) */
    setenv("HWLOC_COMPONENTS", "xml,stop", 1);
    ggml_log_set(count_levels, NULL);
    ggml_backend_t backend = ggml_backend_cpu_init();
    EXPECT(backend != NULL, "ggml_backend_cpu_init works without a topology");
    EXPECT(fallback_warnings == 1, "one warning says hwloc failed");
    EXPECT(hwloc_calls > 0, "hwloc was asked");
    if (backend == NULL)
        return failed + 1;
    ggml_backend_cpu_set_n_threads(backend, 2);
    EXPECT(compute_once(backend), "2 threads compute the exact result");
    ggml_numa_init(GGML_NUMA_STRATEGY_DISTRIBUTE);
    EXPECT(!ggml_is_numa(), "one node: not NUMA");
    EXPECT(compute_once(backend), "DISTRIBUTE on one node computes the exact result");
    ggml_backend_t second = ggml_backend_cpu_init();
    EXPECT(second != NULL && compute_once(second), "a second backend computes too");
    ggml_backend_free(second);
    ggml_backend_free(backend);
    EXPECT(fallback_warnings == 1, "the warning is not repeated");
    EXPECT(fallback_errors == 0, "no error is logged");
#undef EXPECT
    return failed;
}

static void test_fallback(void)
{
    char path[] = "/tmp/test-cpu-hwloc.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, "not XML\n", 8) != 8) {
        tap_skip(1, "cannot write a temporary file");
        return;
    }
    close(fd);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        alarm(60);
        int failed = run_fallback(path);
        fflush(stdout);
        _exit(failed > 0 ? 1 : 0);
    }
    int status = -1;
    if (child > 0)
        waitpid(child, &status, 0);
    unlink(path);
    ok(child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
       "hwloc cannot load a topology: the CPU backend works on one node after one warning");
}

/* ------------------------------------------------------ hwloc once only */

/* A pool of two threads both bound to the first CPU the process may use. */
static struct ggml_threadpool *bound_pool(void)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return NULL;
    struct ggml_threadpool_params params = ggml_threadpool_params_default(2);
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < GGML_MAX_N_THREADS; cpu++) {
        if (CPU_ISSET(cpu, &allowed)) {
            params.cpumask[cpu] = true;
            break;
        }
    }
    params.strict_cpu = true;
    return ggml_threadpool_new(&params);
}

static void test_consulted_once(void)
{
    ggml_backend_t backend = ggml_backend_cpu_init();
    const int at_init = atomic_load(&hwloc_calls);
    ok(backend != NULL, "first ggml_backend_cpu_init");
    ok(at_init > 0, "the first init consults hwloc (%d calls seen)", at_init);

    ggml_numa_init(GGML_NUMA_STRATEGY_DISTRIBUTE);
    bool exact = true;
    for (int round = 0; round < 3; round++) {
        ggml_backend_t again = ggml_backend_cpu_init();
        ggml_backend_cpu_set_n_threads(again, 2);
        exact = exact && again != NULL && compute_once(again);
        ggml_backend_free(again);
    }
    ok(exact, "backends made after the first compute exact results");

    struct ggml_threadpool *pool = bound_pool();
    ok(pool != NULL, "a pool bound to one CPU");
    ggml_backend_cpu_set_threadpool(backend, pool);
    ok(compute_once(backend) && compute_once(backend), "the bound pool computes exact results, twice");
    ggml_backend_cpu_set_threadpool(backend, NULL);
    ggml_backend_free(backend);
    ggml_threadpool_free(pool);
    is_int(atomic_load(&hwloc_calls), at_init,
           "after the first init: backend inits, buffers, ggml_numa_init and bound computes never call hwloc");
    is_int(tap_log_errors(), 0, "no error logged");
}

int main(void)
{
    alarm(120);
    /* first, before this process initializes anything */
    test_fallback();
    tap_capture_log();
    test_consulted_once();
    return tap_done();
}
