/*
 * blas.c - the BLAS accelerator plugin (libggml-blas.so): matrix products
 * on host memory through CBLAS, normally OpenBLAS.
 *
 * Objects: one registry "BLAS" with one device "BLAS" of type ACCEL.  The
 * device has no memory of its own: its buffer type is the CPU buffer
 * type, and it uses any host buffer type.  Put before the CPU in a
 * scheduler, it takes the products the CPU would otherwise compute (the
 * scheduler moves a node up to a higher-priority backend that has the
 * same buffer type and supports the op).
 *
 * What it computes (everything on F32 results):
 *   MUL_MAT   dst[m, n] = sum_k src0[k, m] * src1[k, n]
 *   OUT_PROD  dst[m, n] = sum_k src0[m, k] * src1[n, k]
 * with src0 repeated over dims 2 and 3 of src1 as ggml does.  Both are the
 * one row-major product C[N x M] = P[N x K] * Q[M x K]^T, where P reads
 * src1 and Q reads src0 with the strides of the op (see struct operand),
 * so one sgemm call per 2-D slice does the work.  src1 must be F32; src0
 * may be F32, F16, BF16 or a quantized type with a to_float conversion,
 * converted to F32 into the backend's work area first.  An F32 operand is
 * read in place whenever its strides can be described to CBLAS (either
 * dimension of stride one element, the other a row length or more); only
 * otherwise is it gathered into the work area.  Layout ops (NONE, VIEW,
 * RESHAPE, PERMUTE, TRANSPOSE) cost nothing; any other node makes
 * graph_compute fail with a message.
 *
 * When a product is worth it (supports_op): MUL_MAT's batch N =
 * src1->ne[1], or OUT_PROD's summed length K, must be at least min_batch,
 * and the two other dimensions at least min(32, min_batch).  Below that
 * the product stays on the CPU backend, and so do MUL_MATs whose weights
 * the CPU backend multiplies in 8-bit integer arithmetic (it says which:
 * "ggml_backend_cpu_integer_products" of the CPU registry), at any batch.
 * graph_compute itself takes any product of the right types and shapes,
 * however small.
 *
 * min_batch, unless set, is 512 for F32 and quantized weights and 1024
 * for F16 and BF16 ones.  Measured on a 2-core x86-64 machine (AVX-512
 * with VNNI and BF16, OpenBLAS 0.3.21 pthreads, 2 threads on both sides)
 * with `bench-blas sweep` (examples/bench-blas.c): the CPU backend's
 * mul_mat against this device, conversion of the weights included, for
 * square weights of 1024 and 4096 and batches of 1 to 2048.  CPU time
 * over BLAS time, weights 1024 / 4096 (the CPU's products of K-quants
 * with up to 128 columns now take its dot products, faster than shown):
 *             batch 8     32    128   512  2048
 *   F32          0.45  0.75  1.84  1.14  1.08
 *                0.57  0.76  0.90  1.08  1.23
 *   F16          0.17  0.27  0.57  0.89  1.27
 *                0.35  0.34  0.75  0.98  1.06
 *   BF16         0.26  0.45  0.76  0.94  0.56
 *                0.43  0.76  0.78  0.93  1.10
 *   Q4_1         0.54  0.48  0.58  1.18  1.27
 *                0.51  0.78  1.04  1.19  1.30
 *   Q4_K         0.72  0.92  1.12  1.05  1.23
 *                0.85  1.12  0.82  1.09  1.37
 *   Q6_K         0.70  0.78  1.07  1.19  1.50
 *                0.92  0.97  1.08  1.03  1.33
 *   Q4_0, Q8_0   0.03 to 0.55 at every size and batch (integer tiles)
 * The CPU's own tiles convert the weights panel by panel and reach
 * sgemm's speed for F32, so BLAS gains only once the batch is large
 * enough to pay for converting the whole weight matrix at once.  (The
 * machine was shared: single figures vary by some 20%.)
 *
 * With the default thresholds, the device takes products only where
 * its sgemm is faster than the CPU backend on this machine at all
 * (blas_faster_than_cpu, by a margin): measured once per process, the
 * first time a default decision needs it.  With AVX-512 the CPU backend's F32 tile
 * outruns OpenBLAS 0.3.21 on the machines measured (2 cores, 2048 x 512
 * x 2048: Zen 5 13 ms against 20 through this device; Emerald Rapids 19
 * against sgemm's 23); its AVX2 level comes within the margin of it, and
 * only the generic level leaves the products to BLAS.
 * GGML_BLAS_CALIBRATE=0 in the environment skips the measurement.
 *
 * A BLAS library running kernels older than the processor takes no
 * products by default (blas_kernels_below_processor): OpenBLAS built for
 * several processors (DYNAMIC_ARCH, as Debian's) falls back to its
 * Prescott (SSE3) kernels on a processor it does not recognize, as
 * Debian 12's 0.3.21 does on Intel's Emerald Rapids (family 6, model
 * 207).  Measured there (2 cores, AVX-512 with VNNI, 2 threads), sgemm of
 * 2048 x 512 x 2048: 132 ms with those kernels, 23 ms with
 * OPENBLAS_CORETYPE=SkylakeX, the CPU backend's own product 16 ms; through
 * this device such products took 2 to 5 times the CPU backend's time
 * (F32 77 against 41 ms, F16 132 against 38, before the CPU backend's
 * AVX-512 tile halved those).  The plugin then logs one
 * warning naming the remedy and says so in its description.  An explicit
 * min_batch applies to every type alike; it is a property of the device,
 * shared by its backends: GGML_BLAS_MIN_BATCH in the environment sets it
 * when the plugin loads and whenever a backend is created, and the params
 * "min_batch=N" of ggml_backend_dev_init set it, taking precedence.
 *
 * Threads: each backend has n_threads (default: the processors this
 * process may run on), given to the BLAS library before each product
 * (openblas_set_num_threads; with FlexiBLAS, flexiblas_set_num_threads,
 * which passes it to the backend it loaded) and used to split conversions over a small
 * team of its own threads (team.c), asleep when idle.
 * ggml_backend_set_n_threads (through get_proc_address) or
 * ggml_backend_blas_set_n_threads change it; params "n_threads=N" set it
 * at creation.  The CPU backend's pool, used between BLAS products in a
 * scheduler, sleeps when idle as this team does: neither takes cores
 * from the other while waiting.
 *
 * Functions reachable through ggml_backend_reg_get_proc_address:
 *   void   ggml_backend_set_n_threads(ggml_backend_t, int)
 *   int    blas_calibration(void)        the verdict: -1 not measured, 0
 *                                        the CPU backend is faster, 1 BLAS is
 *   size_t blas_conversion_count(void)   operands converted to F32 or
 *                                        gathered so far (a test hook)
 *
 * The plugin sees only the public headers and ggml-backend-impl.h.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#ifdef HAVE_FLEXIBLAS_API
#    include <flexiblas_api.h>
#endif

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"

#include "blas-guid.h"
#include "plugin-log.h"
#include "team.h"

/* Measured defaults (see the header comment), and the cap on the other
 * two dimensions' minimum. */
#define DEFAULT_MIN_BATCH      512
#define DEFAULT_MIN_BATCH_HALF 1024   /* F16 and BF16 weights */
#define MIN_OTHER_DIMS    32
#define MAX_THREADS       512

/* Below this many elements a conversion runs on the calling thread. */
#define MIN_PARALLEL_ELEMENTS 32768

#define MIN_BATCH_ENV "GGML_BLAS_MIN_BATCH"

/* --------------------------------------------------------------- logging */

/* Logs "func: message" through the application's logger. */
#define blas_log ggml__plugin_log

/* ------------------------------------------------------- device settings */

/* The device's threshold (see the header comment): 0 for the measured
 * defaults per type, -1 until first read. */
static atomic_int device_min_batch = -1;

/* Parses a whole decimal number in lo..hi; false when s is anything else. */
static bool parse_int(const char *s, size_t len, int lo, int hi, int *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = (int) v;
    return true;
}

/* min_batch from the environment, or 0 for the defaults (a bad value is logged). */
static int min_batch_from_env(const char *func)
{
    const char *env = getenv(MIN_BATCH_ENV);
    int value;
    if (env == NULL || env[0] == '\0')
        return 0;
    if (!parse_int(env, strlen(env), 1, INT_MAX, &value)) {
        blas_log(GGML_LOG_LEVEL_WARN, func, "%s=%s is not a positive number: using the defaults", MIN_BATCH_ENV,
                 env);
        return 0;
    }
    return value;
}

static int current_min_batch(void)
{
    int v = atomic_load(&device_min_batch);
    if (v < 0) {
        v = min_batch_from_env(__func__);
        atomic_store(&device_min_batch, v);
    }
    return v;
}

/* Processors this process may run on. */
static int available_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int) (n < MAX_THREADS ? n : MAX_THREADS) : 1;
}

/* ------------------------------------------------------------ operands */

/*
 * A 2-D F32 operand X of rows x cols as CBLAS sees it: X itself stored
 * row-major (trans false) or X^T stored row-major (trans true), with
 * leading dimension ld, in elements.
 */
struct operand {
    const float *data;
    int ld;
    bool trans;
};

/*
 * Describes the operand whose element (r, c) is at byte offset
 * r * rs + c * cs; false when CBLAS cannot read it in place.  A dimension
 * of extent 1 does not constrain its stride.
 */
static bool describe(int64_t rows, int64_t cols, size_t rs, size_t cs, int *ld, bool *trans)
{
    const size_t f = sizeof(float);
    if ((cols <= 1 || cs == f) && (rows <= 1 || (rs % f == 0 && rs / f >= (size_t) cols && rs / f <= INT_MAX))) {
        *trans = false;
        *ld = rows <= 1 ? (int) (cols > 1 ? cols : 1) : (int) (rs / f);
        return true;
    }
    if ((rows <= 1 || rs == f) && (cols <= 1 || (cs % f == 0 && cs / f >= (size_t) rows && cs / f <= INT_MAX))) {
        *trans = true;
        *ld = cols <= 1 ? (int) (rows > 1 ? rows : 1) : (int) (cs / f);
        return true;
    }
    return false;
}

/* The product dimensions and the operands' strides of a MUL_MAT or OUT_PROD
 * node, in the terms of the header comment. */
struct product {
    int64_t m, n, k;
    size_t p_rs, p_cs;   /* P (src1): byte strides of its rows (n) and columns (k) */
    size_t q_rs, q_cs;   /* Q (src0): the same for rows (m) and columns (k) */
};

static struct product product_of(const struct ggml_tensor *node)
{
    const struct ggml_tensor *src0 = node->src[0], *src1 = node->src[1];
    struct product p;
    p.m = node->ne[0];
    p.n = node->ne[1];
    if (node->op == GGML_OP_MUL_MAT) {
        p.k = src0->ne[0];
        p.p_rs = src1->nb[1];
        p.p_cs = src1->nb[0];
        p.q_rs = src0->nb[1];
        p.q_cs = src0->nb[0];
    } else {
        p.k = src0->ne[1];
        p.p_rs = src1->nb[0];
        p.p_cs = src1->nb[1];
        p.q_rs = src0->nb[0];
        p.q_cs = src0->nb[1];
    }
    return p;
}

/* ------------------------------------------------------- what it takes */

static bool is_layout_op(enum ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
           op == GGML_OP_TRANSPOSE;
}

/* src0 types: F32 as is, the others through their to_float. */
static bool src0_type_ok(const struct ggml_tensor *src0)
{
    if (src0->type == GGML_TYPE_F32)
        return true;
    const struct ggml_type_traits *tr = ggml_get_type_traits(src0->type);
    if (tr == NULL || tr->to_float == NULL)
        return false;
    if (src0->type == GGML_TYPE_F16 || src0->type == GGML_TYPE_BF16)
        return true;
    /* quantized rows are converted whole: their blocks must be packed */
    return ggml_is_quantized(src0->type) && src0->nb[0] == ggml_type_size(src0->type) &&
           src0->ne[0] % ggml_blck_size(src0->type) == 0;
}

static bool fits_int(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

/*
 * Whether the device computes a MUL_MAT or OUT_PROD node at all (types,
 * shapes, the destination's layout), whatever its size.  Shapes are
 * checked again, as a node labelled by hand can have any.
 */
static bool product_computable(const struct ggml_tensor *node)
{
    const struct ggml_tensor *src0 = node->src[0], *src1 = node->src[1];
    if (src0 == NULL || src1 == NULL || node->type != GGML_TYPE_F32 || src1->type != GGML_TYPE_F32 ||
        !src0_type_ok(src0))
        return false;
    const int shared = node->op == GGML_OP_MUL_MAT ? 0 : 1;  /* the summed dimension */
    const int64_t m = node->op == GGML_OP_MUL_MAT ? src0->ne[1] : src0->ne[0];
    const int64_t n = node->op == GGML_OP_MUL_MAT ? src1->ne[1] : src1->ne[0];
    if (src0->ne[shared] != src1->ne[shared] || node->ne[0] != m || node->ne[1] != n ||
        node->ne[2] != src1->ne[2] || node->ne[3] != src1->ne[3])
        return false;
    if (src0->ne[2] <= 0 || src0->ne[3] <= 0 || src1->ne[2] % src0->ne[2] != 0 ||
        src1->ne[3] % src0->ne[3] != 0)
        return false;
    if (!fits_int(m) || !fits_int(n) || !fits_int(src0->ne[shared]))
        return false;
    /* C is written row-major in place: elements packed, rows apart */
    return node->nb[0] == sizeof(float) && node->nb[1] % sizeof(float) == 0 &&
           (n <= 1 || node->nb[1] / sizeof(float) >= (size_t) m) && node->nb[1] / sizeof(float) <= INT_MAX;
}

/*
 * True when the BLAS library multiplies with kernels written for
 * processors older than this one (see the header comment): set once by
 * blas_reg_get.  On x86-64, OpenBLAS's names of its targets without AVX2
 * on a processor with AVX2 and FMA.
 */
static bool kernels_below_processor;

#ifdef HAVE_OPENBLAS_API
static bool openblas_target_without_avx2(const char *core)
{
    static const char *const targets[] = {
        "Unknown", "Generic", "Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom", "Core2",
        "Penryn", "Dunnington", "Nehalem", "Athlon", "Opteron", "Opteron_SSE3", "Barcelona", "Nano",
        "Sandybridge", "Bobcat", "Bulldozer", "Piledriver",
    };
    for (size_t i = 0; core != NULL && i < sizeof targets / sizeof targets[0]; i++)
        if (strcasecmp(core, targets[i]) == 0)
            return true;
    return false;
}
#endif

static bool blas_kernels_below_processor(void)
{
#ifdef HAVE_OPENBLAS_API
    return ggml_cpu_has_avx2() && ggml_cpu_has_fma() && openblas_target_without_avx2(openblas_get_corename());
#else
    return false;
#endif
}

/* The CPU backend's answer to "ggml_backend_cpu_integer_products", resolved once by blas_reg_get. */
static bool (*cpu_integer_products)(enum ggml_type);

static void find_cpu_integer_products(void)
{
    ggml_backend_reg_t cpu = ggml_backend_cpu_reg();
    void *fn = cpu != NULL ? ggml_backend_reg_get_proc_address(cpu, "ggml_backend_cpu_integer_products") : NULL;
    cpu_integer_products = (bool (*)(enum ggml_type)) fn;
}

/* ------------------------------------------------------- calibration */

/*
 * Whether this BLAS library's sgemm is faster than the CPU backend's own
 * product on this machine (see the header comment): measured once per
 * process, the first time a default decision needs it, on a
 * CALIBRATION_M x CALIBRATION_K x CALIBRATION_N F32 product with the
 * processors this process may use, best of CALIBRATION_REPS after a
 * warm-up for each side, the CPU backend's first.  BLAS counts as
 * faster only when its time is below CALIBRATION_MARGIN times the CPU
 * backend's, so that noise near a tie keeps the products on the CPU,
 * which needs no conversion of F16 and BF16 weights.  (On a shared
 * 2-core VM a new CPU backend ran its products at half speed for a whole
 * calibration in one process of six; with a margin of 0.9 that process
 * gave its large products to a slower BLAS.)
 */
#define CALIBRATION_M      1024
#define CALIBRATION_K      1024
#define CALIBRATION_N      512
#define CALIBRATION_REPS   6
#define CALIBRATION_MARGIN 0.75
#define CALIBRATE_ENV      "GGML_BLAS_CALIBRATE"

enum calibration { CALIBRATION_NONE = -1, CALIBRATION_CPU_FASTER = 0, CALIBRATION_BLAS_FASTER = 1 };

static pthread_once_t calibration_once = PTHREAD_ONCE_INIT;
static atomic_int calibration_verdict = CALIBRATION_NONE;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void set_library_threads(int n_threads)
{
#if defined(HAVE_FLEXIBLAS_API)
    flexiblas_set_num_threads(n_threads);
#elif defined(HAVE_OPENBLAS_API)
    openblas_set_num_threads(n_threads);
#else
    (void) n_threads;
#endif
}

/* The CPU backend's side: a scheduler-free product on a CPU backend of its own. */
struct cpu_product {
    ggml_backend_t backend;
    struct ggml_context *ctx;
    ggml_backend_buffer_t buffer;
    struct ggml_cgraph *graph;
};

static bool cpu_product_init(struct cpu_product *cp, int n_threads)
{
    memset(cp, 0, sizeof *cp);
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    cp->backend = dev != NULL ? ggml_backend_dev_init(dev, NULL) : NULL;
    struct ggml_init_params params = { 4 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    cp->ctx = cp->backend != NULL ? ggml_init(params) : NULL;
    if (cp->ctx == NULL)
        return false;
    ggml_backend_cpu_set_n_threads(cp->backend, n_threads);
    struct ggml_tensor *a = ggml_new_tensor_2d(cp->ctx, GGML_TYPE_F32, CALIBRATION_K, CALIBRATION_M);
    struct ggml_tensor *b = ggml_new_tensor_2d(cp->ctx, GGML_TYPE_F32, CALIBRATION_K, CALIBRATION_N);
    cp->graph = ggml_new_graph(cp->ctx);
    ggml_build_forward_expand(cp->graph, ggml_mul_mat(cp->ctx, a, b));
    cp->buffer = ggml_backend_alloc_ctx_tensors(cp->ctx, cp->backend);
    if (cp->buffer == NULL)
        return false;
    ggml_backend_buffer_clear(cp->buffer, 0);
    return ggml_backend_graph_compute(cp->backend, cp->graph) == GGML_STATUS_SUCCESS;
}

static void cpu_product_free(struct cpu_product *cp)
{
    ggml_backend_buffer_free(cp->buffer);
    ggml_free(cp->ctx);
    ggml_backend_free(cp->backend);
}

static void calibrate(void)
{
    const int n_threads = available_cpus();
    const size_t a_size = (size_t) CALIBRATION_M * CALIBRATION_K, b_size = (size_t) CALIBRATION_K * CALIBRATION_N;
    float *a = calloc(a_size + b_size + (size_t) CALIBRATION_M * CALIBRATION_N, sizeof *a);
    struct cpu_product cp;
    bool ok = cpu_product_init(&cp, n_threads) && a != NULL;
    double cpu_best = INFINITY, blas_best = INFINITY;
    /* the CPU backend first: OpenBLAS's threads keep spinning for a while after an sgemm returns and would
       take the cores from a product timed right after it (1024x1024x512 on Zen 5: 5.3 ms so, 2.9 alone) */
    for (int rep = 0; ok && rep <= CALIBRATION_REPS; rep++) {   /* rep 0: a second warm-up (a new pool's
                                                                   first products run up to twice as long) */
        const double t0 = now_seconds();
        ok = ggml_backend_graph_compute(cp.backend, cp.graph) == GGML_STATUS_SUCCESS;
        const double t = now_seconds() - t0;
        if (rep > 0)
            cpu_best = t < cpu_best ? t : cpu_best;
    }
    set_library_threads(n_threads);
    for (int rep = 0; ok && rep <= CALIBRATION_REPS; rep++) {   /* rep 0: the warm-up */
        const double t0 = now_seconds();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, CALIBRATION_N, CALIBRATION_M, CALIBRATION_K, 1.0f,
                    a + a_size, CALIBRATION_K, a, CALIBRATION_K, 0.0f, a + a_size + b_size, CALIBRATION_M);
        const double t = now_seconds() - t0;
        if (rep > 0)
            blas_best = t < blas_best ? t : blas_best;
    }
    cpu_product_free(&cp);
    free(a);
    if (!ok) {
        blas_log(GGML_LOG_LEVEL_WARN, __func__, "the CPU backend's product could not be timed: BLAS takes products");
        atomic_store(&calibration_verdict, CALIBRATION_BLAS_FASTER);
        return;
    }
    const bool blas_faster = blas_best < CALIBRATION_MARGIN * cpu_best;
    blas_log(GGML_LOG_LEVEL_DEBUG, __func__, "%dx%dx%d F32 with %d threads: sgemm %.3f ms, CPU backend %.3f ms: %s",
             CALIBRATION_M, CALIBRATION_K, CALIBRATION_N, n_threads, 1e3 * blas_best, 1e3 * cpu_best,
             blas_faster ? "BLAS takes large products" : "the CPU backend keeps the products");
    atomic_store(&calibration_verdict, blas_faster ? CALIBRATION_BLAS_FASTER : CALIBRATION_CPU_FASTER);
}

/* False when GGML_BLAS_CALIBRATE is 0: the defaults then apply without measuring. */
static bool calibration_wanted(void)
{
    const char *env = getenv(CALIBRATE_ENV);
    return env == NULL || strcmp(env, "0") != 0;
}

/* Whether the calibration lets BLAS take products by default (measuring first if needed). */
static bool blas_faster_than_cpu(void)
{
    if (!calibration_wanted())
        return true;
    pthread_once(&calibration_once, calibrate);
    return atomic_load(&calibration_verdict) == CALIBRATION_BLAS_FASTER;
}

/* A test hook ("blas_calibration"): the verdict so far, CALIBRATION_NONE before any. */
static int blas_calibration(void)
{
    return atomic_load(&calibration_verdict);
}

/* Whether BLAS is worth it for the node, min_batch 0 meaning the defaults (see the header comment). */
static bool product_worth_it(const struct ggml_tensor *node, int min_batch)
{
    const enum ggml_type type = node->src[0]->type;
    if (node->op == GGML_OP_MUL_MAT && cpu_integer_products != NULL && cpu_integer_products(type))
        return false;
    if (min_batch == 0 && kernels_below_processor)
        return false;
    const bool defaults = min_batch == 0;
    if (defaults)
        min_batch = type == GGML_TYPE_F16 || type == GGML_TYPE_BF16 ? DEFAULT_MIN_BATCH_HALF : DEFAULT_MIN_BATCH;
    const struct product p = product_of(node);
    const int64_t batch = node->op == GGML_OP_MUL_MAT ? p.n : p.k;
    const int64_t other = node->op == GGML_OP_MUL_MAT ? p.k : p.n;
    const int64_t min_other = min_batch < MIN_OTHER_DIMS ? min_batch : MIN_OTHER_DIMS;
    return batch >= min_batch && p.m >= min_other && other >= min_other && (!defaults || blas_faster_than_cpu());
}

/* The buffer holding t's data (its view source's for a view). */
static ggml_backend_buffer_t data_buffer(const struct ggml_tensor *t)
{
    return t->view_src ? t->view_src->buffer : t->buffer;
}

/* Sources not yet allocated count as readable: the scheduler asks before
 * allocating. */
static bool sources_in_host_memory(const struct ggml_tensor *node)
{
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor *src = node->src[i];
        if (src == NULL)
            continue;
        ggml_backend_buffer_t buffer = data_buffer(src);
        if (buffer != NULL && !ggml_backend_buft_is_host(buffer->buft))
            return false;
    }
    return true;
}

/* --------------------------------------------------------- conversion */

/*
 * Converts t (any strides) to a packed F32 array of the same shape, rows
 * split over the team's members.  Rows are converted whole with to_float
 * when their elements are packed, element by element otherwise (F32, F16
 * and BF16 only: quantized rows are always packed, see src0_type_ok).
 */
struct convert_job {
    const struct ggml_tensor *t;
    float *out;
    ggml_to_float_t to_float;  /* NULL for F32 */
    bool packed_rows;
    int64_t n_rows;
};

static void convert_rows(void *arg, int ith, int nth)
{
    const struct convert_job *job = arg;
    const struct ggml_tensor *t = job->t;
    const int64_t ne0 = t->ne[0], ne1 = t->ne[1], ne2 = t->ne[2];
    const int64_t first = job->n_rows * ith / nth, last = job->n_rows * (ith + 1) / nth;
    for (int64_t r = first; r < last; r++) {
        const int64_t i1 = r % ne1, i2 = r / ne1 % ne2, i3 = r / ne1 / ne2;
        const char *row = (const char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
        float *dst = job->out + r * ne0;
        if (job->packed_rows) {
            if (job->to_float == NULL)
                memcpy(dst, row, (size_t) ne0 * sizeof(float));
            else
                job->to_float(row, dst, ne0);
        } else {
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                const char *p = row + i0 * t->nb[0];
                if (job->to_float == NULL)
                    memcpy(dst + i0, p, sizeof(float));
                else
                    job->to_float(p, dst + i0, 1);
            }
        }
    }
}

/* ------------------------------------------------------------- backend */

struct blas_backend {
    int n_threads;
    struct blas_team *team;   /* conversion threads, made on first need */
    float *work;              /* converted and gathered operands */
    size_t work_bytes;
};

static ggml_guid blas_guid_value = GGML_BLAS_GUID_BYTES;

static const char *blas_backend_get_name(ggml_backend_t backend)
{
    return GGML_BLAS_NAME;
}

static void blas_backend_free(ggml_backend_t backend)
{
    struct blas_backend *ctx = backend->context;
    blas_team_free(ctx->team);
    free(ctx->work);
    free(ctx);
    free(backend);
}

/* A work area of at least bytes (64-byte aligned), or NULL when out of
 * memory (logged as func).  Grows, never shrinks. */
static float *work_area(struct blas_backend *ctx, size_t bytes, const char *func)
{
    if (bytes == 0)
        bytes = 64; /* empty operands (k == 0) still get an address: NULL means out of memory */
    if (bytes <= ctx->work_bytes)
        return ctx->work;
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes) != 0) {
        blas_log(GGML_LOG_LEVEL_ERROR, func, "out of memory for a work area of %zu bytes", bytes);
        return NULL;
    }
    free(ctx->work);
    ctx->work = p;
    ctx->work_bytes = bytes;
    return ctx->work;
}

/* Operands converted or gathered so far, by every backend of the module:
 * a test hook ("blas_conversion_count"), which shows that F32 operands
 * CBLAS can read are used in place. */
static atomic_size_t conversions;

static size_t blas_conversion_count(void)
{
    return atomic_load(&conversions);
}

static void convert(struct blas_backend *ctx, const struct ggml_tensor *t, float *out)
{
    atomic_fetch_add(&conversions, 1);
    const size_t esize = ggml_type_size(t->type);
    struct convert_job job = {
        .t = t,
        .out = out,
        .to_float = t->type == GGML_TYPE_F32 ? NULL : ggml_get_type_traits(t->type)->to_float,
        .packed_rows = t->nb[0] == esize,
        .n_rows = t->ne[1] * t->ne[2] * t->ne[3],
    };
    int nth = ctx->n_threads;
    if (ggml_nelements(t) < MIN_PARALLEL_ELEMENTS)
        nth = 1;
    if (nth > job.n_rows)
        nth = (int) job.n_rows;
    if (nth > 1 && ctx->team == NULL)
        ctx->team = blas_team_new();  /* NULL: runs on this thread */
    blas_team_run(ctx->team, nth, convert_rows, &job);
}

/* Packed byte strides of an F32 array of t's shape. */
static void packed_strides(const struct ggml_tensor *t, size_t nb[GGML_MAX_DIMS])
{
    nb[0] = sizeof(float);
    for (int d = 1; d < GGML_MAX_DIMS; d++)
        nb[d] = nb[d - 1] * (size_t) t->ne[d - 1];
}

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t) 63;
}

static enum ggml_status compute_product(struct blas_backend *ctx, struct ggml_tensor *node, const char *func)
{
    const struct ggml_tensor *src0 = node->src[0], *src1 = node->src[1];
    struct product p = product_of(node);
    if (p.m == 0 || p.n == 0 || node->ne[2] == 0 || node->ne[3] == 0)
        return GGML_STATUS_SUCCESS;

    /* where the operands are read from, and with which 4-D byte strides */
    const char *q_base = src0->data, *p_base = src1->data;
    size_t q_nb[GGML_MAX_DIMS], p_nb[GGML_MAX_DIMS];
    memcpy(q_nb, src0->nb, sizeof q_nb);
    memcpy(p_nb, src1->nb, sizeof p_nb);

    int ld;
    bool trans;
    const bool q_copy = src0->type != GGML_TYPE_F32 || !describe(p.m, p.k, p.q_rs, p.q_cs, &ld, &trans);
    const bool p_copy = !describe(p.n, p.k, p.p_rs, p.p_cs, &ld, &trans);
    if (q_copy || p_copy) {
        const size_t q_bytes = q_copy ? align64((size_t) ggml_nelements(src0) * sizeof(float)) : 0;
        const size_t p_bytes = p_copy ? (size_t) ggml_nelements(src1) * sizeof(float) : 0;
        float *work = work_area(ctx, q_bytes + p_bytes, func);
        if (work == NULL)
            return GGML_STATUS_ALLOC_FAILED;
        if (q_copy) {
            convert(ctx, src0, work);
            q_base = (const char *) work;
            packed_strides(src0, q_nb);
        }
        if (p_copy) {
            float *to = (float *) ((char *) work + q_bytes);
            convert(ctx, src1, to);
            p_base = (const char *) to;
            packed_strides(src1, p_nb);
        }
        /* the strides of the packed copies */
        struct ggml_tensor q_view = *src0, p_view = *src1;
        memcpy(q_view.nb, q_nb, sizeof q_nb);
        memcpy(p_view.nb, p_nb, sizeof p_nb);
        struct ggml_tensor n_view = *node;
        n_view.src[0] = &q_view;
        n_view.src[1] = &p_view;
        p = product_of(&n_view);
    }

    struct operand P, Q;
    bool ok = describe(p.n, p.k, p.p_rs, p.p_cs, &P.ld, &P.trans);
    ok = ok && describe(p.m, p.k, p.q_rs, p.q_cs, &Q.ld, &Q.trans);
    if (!ok) {  /* cannot happen: packed copies are always describable */
        blas_log(GGML_LOG_LEVEL_ERROR, func, "node '%s': operand layout not understood", node->name);
        return GGML_STATUS_FAILED;
    }

    set_library_threads(ctx->n_threads);

    const int64_t ne2 = node->ne[2], ne3 = node->ne[3];
    const int64_t r2 = ne2 / src0->ne[2], r3 = ne3 / src0->ne[3];
    const int ldc = (int) (p.n <= 1 ? p.m : (int64_t) (node->nb[1] / sizeof(float)));
    int64_t n = p.n, planes = ne2 * ne3;

    /* MUL_MAT of one 2-D src0 by slices of src1 that continue each other's
     * rows, into slices of dst that do too: one call */
    if (node->op == GGML_OP_MUL_MAT && src0->ne[2] == 1 && src0->ne[3] == 1 && planes > 1 && !P.trans && p.n > 1 &&
        p_nb[2] == p_nb[1] * (size_t) p.n && p_nb[3] == p_nb[2] * (size_t) ne2 &&
        node->nb[2] == node->nb[1] * (size_t) p.n && node->nb[3] == node->nb[2] * (size_t) ne2 &&
        fits_int(p.n * planes)) {
        n = p.n * planes;
        planes = 1;
    }

    for (int64_t pl = 0; pl < planes; pl++) {
        const int64_t i2 = pl % ne2, i3 = pl / ne2;
        float *c = (float *) ((char *) node->data + i2 * node->nb[2] + i3 * node->nb[3]);
        if (p.k == 0) {  /* an empty sum: zeros */
            for (int64_t r = 0; r < n; r++)
                memset((char *) c + r * (int64_t) node->nb[1], 0, (size_t) p.m * sizeof(float));
            continue;
        }
        P.data = (const float *) (p_base + i2 * p_nb[2] + i3 * p_nb[3]);
        Q.data = (const float *) (q_base + (i2 / r2) * q_nb[2] + (i3 / r3) * q_nb[3]);
        cblas_sgemm(CblasRowMajor, P.trans ? CblasTrans : CblasNoTrans, Q.trans ? CblasNoTrans : CblasTrans,
                    (int) n, (int) p.m, (int) p.k, 1.0f, P.data, P.ld, Q.data, Q.ld, 0.0f, c, ldc);
    }
    return GGML_STATUS_SUCCESS;
}

static enum ggml_status blas_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph *cgraph)
{
    struct blas_backend *ctx = backend->context;
    const int n = ggml_graph_n_nodes(cgraph);
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *node = ggml_graph_node(cgraph, i);
        if (is_layout_op(node->op))
            continue;
        if ((node->op != GGML_OP_MUL_MAT && node->op != GGML_OP_OUT_PROD) || !product_computable(node)) {
            blas_log(GGML_LOG_LEVEL_ERROR, __func__, "cannot compute node %d '%s' (%s, type %s)", i, node->name,
                     ggml_op_desc(node), ggml_type_name(node->src[0] ? node->src[0]->type : node->type));
            return GGML_STATUS_FAILED;
        }
        if (!sources_in_host_memory(node) || node->data == NULL || node->src[0]->data == NULL ||
            node->src[1]->data == NULL) {
            blas_log(GGML_LOG_LEVEL_ERROR, __func__, "node %d '%s': its tensors must be allocated in host memory",
                     i, node->name);
            return GGML_STATUS_FAILED;
        }
        enum ggml_status status = compute_product(ctx, node, __func__);
        if (status != GGML_STATUS_SUCCESS)
            return status;
    }
    return GGML_STATUS_SUCCESS;
}

static const struct ggml_backend_i blas_backend_iface = {
    .get_name           = blas_backend_get_name,        /* "BLAS" */
    .free               = blas_backend_free,            /* threads, work area, context */
    .set_tensor_async   = NULL,                         /* synchronous: library default */
    .get_tensor_async   = NULL,
    .cpy_tensor_async   = NULL,
    .synchronize        = NULL,                         /* nothing is ever pending */
    .graph_plan_create  = NULL,                         /* no plans */
    .graph_plan_free    = NULL,
    .graph_plan_update  = NULL,
    .graph_plan_compute = NULL,
    .graph_compute      = blas_backend_graph_compute,   /* products; layout ops are free */
    .event_record       = NULL,                         /* no events */
    .event_wait         = NULL,
    .graph_optimize     = NULL,                         /* node order kept */
};

static bool is_blas_backend(ggml_backend_t backend)
{
    return backend != NULL && backend->guid != NULL && ggml_guid_matches(backend->guid, &blas_guid_value);
}

/* ggml_backend_set_n_threads, reached through get_proc_address. */
static void blas_set_n_threads(ggml_backend_t backend, int n_threads)
{
    if (!is_blas_backend(backend)) {
        blas_log(GGML_LOG_LEVEL_ERROR, "ggml_backend_set_n_threads", "backend %s is not a BLAS backend",
                 backend ? ggml_backend_name(backend) : "(NULL)");
        return;
    }
    if (n_threads < 1 || n_threads > MAX_THREADS) {
        blas_log(GGML_LOG_LEVEL_ERROR, "ggml_backend_set_n_threads", "n_threads must be 1..%d, got %d",
                 MAX_THREADS, n_threads);
        return;
    }
    struct blas_backend *ctx = backend->context;
    ctx->n_threads = n_threads;
}

/* ----------------------------------------------------------------- device */

static char device_description[256];

static const char *blas_dev_get_name(ggml_backend_dev_t dev)
{
    return GGML_BLAS_NAME;
}

static const char *blas_dev_get_description(ggml_backend_dev_t dev)
{
    return device_description;
}

/* Host memory: report the machine's. */
static void blas_dev_get_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    *total_bytes = pages > 0 && size > 0 ? (size_t) pages * (size_t) size : 0;
    *free_bytes = avail > 0 && size > 0 ? (size_t) avail * (size_t) size : 0;
}

static enum ggml_backend_dev_type blas_dev_get_type(ggml_backend_dev_t dev)
{
    return GGML_BACKEND_DEVICE_TYPE_ACCEL;
}

static void blas_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    props->name = blas_dev_get_name(dev);
    props->description = blas_dev_get_description(dev);
    blas_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = blas_dev_get_type(dev);
    props->device_id = NULL;
    props->caps = (struct ggml_backend_dev_caps) {
        .async = false,
        .host_buffer = false,
        .buffer_from_host_ptr = true,
        .events = false,
        .mmap_support = true,
    };
}

/*
 * Reads params: settings "key=value" separated by commas, semicolons or
 * spaces; keys min_batch (>= 1) and n_threads (1..MAX_THREADS).  Returns
 * false, after a WARN naming the problem (the library then logs the
 * failed creation as an error), on anything else.
 */
static bool parse_params(const char *params, int *min_batch, int *n_threads)
{
    const char *s = params;
    while (s != NULL && *s != '\0') {
        while (*s == ',' || *s == ';' || isspace((unsigned char) *s))
            s++;
        if (*s == '\0')
            break;
        const char *end = s;
        while (*end != '\0' && *end != ',' && *end != ';' && !isspace((unsigned char) *end))
            end++;
        const char *eq = memchr(s, '=', (size_t) (end - s));
        bool ok = false;
        if (eq != NULL) {
            const size_t klen = (size_t) (eq - s), vlen = (size_t) (end - eq - 1);
            if (klen == 9 && strncmp(s, "min_batch", 9) == 0)
                ok = parse_int(eq + 1, vlen, 1, INT_MAX, min_batch);
            else if (klen == 9 && strncmp(s, "n_threads", 9) == 0)
                ok = parse_int(eq + 1, vlen, 1, MAX_THREADS, n_threads);
        }
        if (!ok) {
            blas_log(GGML_LOG_LEVEL_WARN, "ggml_backend_dev_init",
                     "BLAS: bad setting '%.*s' in params (expected min_batch=N, N >= 1, or n_threads=N, 1 <= N <= %d)",
                     (int) (end - s), s, MAX_THREADS);
            return false;
        }
        s = end;
    }
    return true;
}

static ggml_backend_t blas_dev_init_backend(ggml_backend_dev_t dev, const char *params)
{
    int min_batch = -1, n_threads = available_cpus();
    if (!parse_params(params, &min_batch, &n_threads))
        return NULL;
    atomic_store(&device_min_batch, min_batch > 0 ? min_batch : min_batch_from_env("ggml_backend_dev_init"));

    struct blas_backend *ctx = calloc(1, sizeof *ctx);
    ggml_backend_t backend = malloc(sizeof *backend);
    if (ctx == NULL || backend == NULL) {
        free(ctx);
        free(backend);
        return NULL;  /* the library reports the failure */
    }
    ctx->n_threads = n_threads > MAX_THREADS ? MAX_THREADS : n_threads;
    *backend = (struct ggml_backend) {
        .guid = &blas_guid_value,
        .iface = blas_backend_iface,
        .device = dev,
        .context = ctx,
    };
    return backend;
}

static ggml_backend_buffer_type_t blas_dev_get_buffer_type(ggml_backend_dev_t dev)
{
    return ggml_backend_cpu_buffer_type();
}

static ggml_backend_buffer_t blas_dev_buffer_from_host_ptr(ggml_backend_dev_t dev, void *ptr, size_t size,
                                                           size_t max_tensor_size)
{
    return ggml_backend_cpu_buffer_from_ptr(ptr, size);
}

static bool blas_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    if (is_layout_op(op->op))
        return true;
    if (op->op != GGML_OP_MUL_MAT && op->op != GGML_OP_OUT_PROD)
        return false;
    return product_computable(op) && sources_in_host_memory(op) && product_worth_it(op, current_min_batch());
}

static bool blas_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    return ggml_backend_buft_is_host(buft);
}

/* ---------------------------------------------------------------- registry */

static const char *blas_reg_get_name(ggml_backend_reg_t reg)
{
    return GGML_BLAS_NAME;
}

static size_t blas_reg_get_device_count(ggml_backend_reg_t reg)
{
    return 1;
}

static ggml_backend_dev_t blas_reg_get_device(ggml_backend_reg_t reg, size_t index);

static void *blas_reg_get_proc_address(ggml_backend_reg_t reg, const char *name)
{
    if (name != NULL && strcmp(name, "ggml_backend_set_n_threads") == 0)
        return (void *) blas_set_n_threads;
    if (name != NULL && strcmp(name, "blas_conversion_count") == 0)
        return (void *) blas_conversion_count;
    if (name != NULL && strcmp(name, "blas_calibration") == 0)
        return (void *) blas_calibration;
    return NULL;
}

/* Static objects, living as long as the module (see testdev.c). */
static struct ggml_backend_reg blas_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name         = blas_reg_get_name,          /* "BLAS" */
        .get_device_count = blas_reg_get_device_count,  /* 1 */
        .get_device       = blas_reg_get_device,        /* the BLAS device */
        .get_proc_address = blas_reg_get_proc_address,  /* ggml_backend_set_n_threads, a test hook */
    },
    .context = NULL,
};

static struct ggml_backend_device blas_device = {
    .iface = {
        .get_name             = blas_dev_get_name,              /* "BLAS" */
        .get_description      = blas_dev_get_description,       /* library, version, threading */
        .get_memory           = blas_dev_get_memory,            /* host memory */
        .get_type             = blas_dev_get_type,              /* ACCEL */
        .get_props            = blas_dev_get_props,
        .init_backend         = blas_dev_init_backend,          /* params: min_batch=N, n_threads=N */
        .get_buffer_type      = blas_dev_get_buffer_type,       /* the CPU buffer type */
        .get_host_buffer_type = NULL,                           /* its memory is host memory already */
        .buffer_from_host_ptr = blas_dev_buffer_from_host_ptr,  /* a CPU buffer over the memory */
        .supports_op          = blas_dev_supports_op,           /* large enough products; layout ops */
        .supports_buft        = blas_dev_supports_buft,         /* host buffer types */
        .offload_op           = NULL,                           /* library default: false */
        .event_new            = NULL,                           /* no events */
        .event_free           = NULL,
        .event_synchronize    = NULL,
    },
    .reg = &blas_reg,
    .context = NULL,
};

static ggml_backend_dev_t blas_reg_get_device(ggml_backend_reg_t reg, size_t index)
{
    return index == 0 ? &blas_device : NULL;
}

/* Names the BLAS library, its build and its threading model (FlexiBLAS:
   the backend it loaded at run time). */
static void describe_library(void)
{
#if defined(HAVE_FLEXIBLAS_API)
    char backend[128];
    if (flexiblas_current_backend(backend, sizeof backend) < 0)
        snprintf(backend, sizeof backend, "unknown");
    snprintf(device_description, sizeof device_description, "FlexiBLAS, backend %s (threading: the backend's)",
             backend);
#elif defined(HAVE_OPENBLAS_API)
    const char *threading;
    switch (openblas_get_parallel()) {
    case 0:  threading = "sequential"; break;
    case 1:  threading = "pthreads"; break;
    case 2:  threading = "OpenMP"; break;
    default: threading = "unknown threading"; break;
    }
    const char *config = openblas_get_config();
    snprintf(device_description, sizeof device_description, "%s (%s%s)", config ? config : "OpenBLAS", threading,
             kernels_below_processor ? "; kernels older than this processor: products left to the CPU" : "");
#else
    snprintf(device_description, sizeof device_description, "CBLAS (not OpenBLAS: threading left to the library)");
#endif
}

static ggml_backend_reg_t blas_reg_get(void)
{
    kernels_below_processor = blas_kernels_below_processor();
#ifdef HAVE_OPENBLAS_API
    if (kernels_below_processor)
        blas_log(GGML_LOG_LEVEL_WARN, "BLAS",
                 "OpenBLAS runs its %s kernels on a processor with AVX2 and FMA, slower than the CPU backend: "
                 "the device takes no products unless min_batch is set (OPENBLAS_CORETYPE=Haswell or SkylakeX, "
                 "say, chooses faster kernels)", openblas_get_corename());
#endif
    describe_library();
    find_cpu_integer_products();
    current_min_batch();
    return &blas_reg;
}

/* The plugin runs wherever it loaded (the BLAS library chose its kernels
 * for this processor when it loaded): the lowest preference, as a plugin
 * without a score function would get. */
static int blas_score(void)
{
    return 1;
}

GGML_BACKEND_DL_IMPL(blas_reg_get)
GGML_BACKEND_DL_SCORE_IMPL(blas_score)
