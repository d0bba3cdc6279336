/*
 * features.c - run-time detection of the CPU's instruction set extensions.
 *
 * x86: cpuid (and xgetbv, so that AVX state saving by the OS is honoured);
 * Arm: the kernel's hwcaps (getauxval).  Every ggml_cpu_has_* answers 0 on
 * architectures where the feature cannot exist.  Detection runs once
 * (pthread_once); the answers never change afterwards.
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#    include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#    include <sys/auxv.h>
#    include <sys/prctl.h>
#endif

#include "ggml-impl.h"
#include "cpu-private.h"
#include "simd/kernels.h"

struct cpu_features {
    bool sse3, ssse3, avx, avx_vnni, avx2, bmi2, f16c, fma;
    bool avx512, avx512_vbmi, avx512_vnni, avx512_bf16, amx_int8;
    bool amd;   /* vendor AuthenticAMD */
    bool avx512_bw, avx512_dq, avx512_vl;   /* with F: the AVX-512 kernel level */
    bool neon, arm_fma, fp16_va, dotprod, matmul_int8, sve, sme, sme2;
    int sve_cnt;
};

static struct cpu_features features;
static pthread_once_t features_once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) || defined(__i386__)
static unsigned long long read_xcr0(void)
{
    unsigned int lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long) hi << 32) | lo;
}

static void detect_x86(struct cpu_features *f)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return;
    f->amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;   /* "Auth" "enti" "cAMD" */
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    f->sse3 = c & (1u << 0);
    f->ssse3 = c & (1u << 9);
    f->fma = c & (1u << 12);
    f->f16c = c & (1u << 29);
    const bool osxsave = c & (1u << 27);
    const bool avx_cpu = c & (1u << 28);
    unsigned long long xcr0 = osxsave ? read_xcr0() : 0;
    const bool ymm_state = (xcr0 & 0x6) == 0x6;           /* SSE and AVX state */
    const bool zmm_state = (xcr0 & 0xe6) == 0xe6;         /* plus opmask, ZMM */
    const bool amx_state = (xcr0 & 0x60000) == 0x60000;   /* tile config and data */
    f->avx = avx_cpu && ymm_state;
    if (!f->avx) {
        f->fma = false;
        f->f16c = false;
    }
    if (__get_cpuid_max(0, NULL) < 7)
        return;
    __cpuid_count(7, 0, a, b, c, d);
    f->avx2 = f->avx && (b & (1u << 5));
    f->bmi2 = b & (1u << 8);
    f->avx512 = zmm_state && (b & (1u << 16));             /* AVX512F */
    f->avx512_dq = f->avx512 && (b & (1u << 17));
    f->avx512_bw = f->avx512 && (b & (1u << 30));
    f->avx512_vl = f->avx512 && (b & (1u << 31));
    f->avx512_vbmi = f->avx512 && (c & (1u << 1));
    f->avx512_vnni = f->avx512 && (c & (1u << 11));
    f->amx_int8 = amx_state && (d & (1u << 25));
    __cpuid_count(7, 1, a, b, c, d);
    f->avx_vnni = f->avx2 && (a & (1u << 4));
    f->avx512_bf16 = f->avx512 && (a & (1u << 5));
}
#endif

#if defined(__aarch64__) && defined(__linux__)
static void detect_arm(struct cpu_features *f)
{
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned long hw2 = getauxval(AT_HWCAP2);
    f->neon = true;   /* mandatory on AArch64 */
    f->arm_fma = true;
    f->fp16_va = hw & (1ul << 10);   /* HWCAP_ASIMDHP */
    f->dotprod = hw & (1ul << 20);   /* HWCAP_ASIMDDP */
    f->sve = hw & (1ul << 22);       /* HWCAP_SVE */
    f->matmul_int8 = hw2 & (1ul << 13); /* HWCAP2_I8MM */
    f->sme = hw2 & (1ul << 23);      /* HWCAP2_SME */
    f->sme2 = hw2 & (1ul << 37);     /* HWCAP2_SME2 */
    if (f->sve) {
        /* the vector length the kernel gives this process, in bytes */
        int vl = prctl(PR_SVE_GET_VL);
        f->sve_cnt = vl > 0 ? (vl & PR_SVE_VL_LEN_MASK) : 0;
    }
}
#endif

static void detect(void)
{
#if defined(__x86_64__) || defined(__i386__)
    detect_x86(&features);
#elif defined(__aarch64__) && defined(__linux__)
    detect_arm(&features);
#endif
}

static const struct cpu_features *cpu(void)
{
    pthread_once(&features_once, detect);
    return &features;
}

int ggml_cpu_has_sse3(void)        { return cpu()->sse3; }
int ggml_cpu_has_ssse3(void)       { return cpu()->ssse3; }
int ggml_cpu_has_avx(void)         { return cpu()->avx; }
int ggml_cpu_has_avx_vnni(void)    { return cpu()->avx_vnni; }
int ggml_cpu_has_avx2(void)        { return cpu()->avx2; }
int ggml_cpu_has_bmi2(void)        { return cpu()->bmi2; }
int ggml_cpu_has_f16c(void)        { return cpu()->f16c; }
int ggml_cpu_has_fma(void)         { return cpu()->fma; }
int ggml_cpu_has_avx512(void)      { return cpu()->avx512; }
int ggml_cpu_has_avx512_vbmi(void) { return cpu()->avx512_vbmi; }
int ggml_cpu_has_avx512_vnni(void) { return cpu()->avx512_vnni; }
int ggml_cpu_has_avx512_bf16(void) { return cpu()->avx512_bf16; }
int ggml_cpu_has_amx_int8(void)    { return cpu()->amx_int8; }
int ggml_cpu_has_neon(void)        { return cpu()->neon; }
int ggml_cpu_has_arm_fma(void)     { return cpu()->arm_fma; }
int ggml_cpu_has_fp16_va(void)     { return cpu()->fp16_va; }
int ggml_cpu_has_dotprod(void)     { return cpu()->dotprod; }
int ggml_cpu_has_matmul_int8(void) { return cpu()->matmul_int8; }
int ggml_cpu_has_sve(void)         { return cpu()->sve; }
int ggml_cpu_get_sve_cnt(void)     { return cpu()->sve_cnt; }
int ggml_cpu_has_sme(void)         { return cpu()->sme; }
int ggml_cpu_has_sme2(void)        { return cpu()->sme2; }
/* architectures this library does not target: never present */
int ggml_cpu_has_riscv_v(void)     { return 0; }
int ggml_cpu_get_rvv_vlen(void)    { return 0; }
int ggml_cpu_has_vsx(void)         { return 0; }
int ggml_cpu_has_vxe(void)         { return 0; }
int ggml_cpu_has_wasm_simd(void)   { return 0; }
int ggml_cpu_has_llamafile(void)   { return 0; }

/* ------------------------------------------------------- the kernel level */

static struct ggml__isa_caps isa_caps;
static struct ggml__cpu_kernels kernels;
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;

static void fill_isa_caps(struct ggml__isa_caps *c, const struct cpu_features *f)
{
    c->avx2 = f->avx2 && f->fma && f->f16c;
    c->avx512 = f->avx512 && f->avx512_bw && f->avx512_dq && f->avx512_vl;
    c->avx512_vnni = c->avx512 && f->avx512_vnni;
    c->avx512_bf16 = c->avx512 && f->avx512_bf16;
    c->avx_vnni = c->avx2 && f->avx_vnni;
#if GGML_ISA_EMULATED
    /* A test build (configure --enable-isa-emulation): the AVX-512 level
       runs through SIMDe on any CPU with AVX2, all its variants included.
       ggml_cpu_has_* still report the CPU itself. */
    c->avx512 = c->avx2;
    c->avx512_vnni = c->avx2;
    c->avx512_bf16 = c->avx2;
#endif
    /* emulated too only where the CPU itself has it, as ggml_cpu_has_avx512_bf16 says */
    c->bf16_dot_full_rate = c->avx512_bf16 && f->avx512_bf16 && f->amd;
    c->neon = f->neon;
    c->dotprod = f->neon && f->dotprod;
    c->i8mm = f->neon && f->matmul_int8;
    c->fp16_va = f->neon && f->fp16_va;
}

/* The best level this build has and this CPU runs. */
static enum ggml__isa best_isa(const struct ggml__isa_caps *c)
{
    enum ggml__isa best = GGML__ISA_GENERIC;
    for (int level = 0; level < GGML__ISA_COUNT; level++)
        if (ggml__isa_built((enum ggml__isa) level) && ggml__isa_runs_on((enum ggml__isa) level, c))
            best = (enum ggml__isa) level;
    return best;
}

/*
 * The level GGML_CPU_ISA asks for, when this build has it and the CPU runs
 * it; otherwise one warning and best.  (Levels of one architecture are
 * ordered, so a level the CPU runs is never above best.)
 */
static enum ggml__isa requested_isa(const struct ggml__isa_caps *c, enum ggml__isa best)
{
    const char *want = getenv("GGML_CPU_ISA");
    if (want == NULL || want[0] == '\0')
        return best;
    const enum ggml__isa level = ggml__isa_from_name(want);
    const char *why = NULL;
    if (level == GGML__ISA_COUNT)
        why = "names no kernel level (generic, avx2, avx512, neon)";
    else if (!ggml__isa_built(level))
        why = "is not built into this library";
    else if (!ggml__isa_runs_on(level, c))
        why = "needs instructions this CPU lacks";
    if (why == NULL)
        return level;
    ggml__log_at(GGML_LOG_LEVEL_WARN, "ggml_cpu_init", "GGML_CPU_ISA=%s %s; using %s", want, why,
                 ggml__isa_name(best));
    return best;
}

/*
 * The first cache of the given level hwloc reports with a size (level 0:
 * the largest level it has: the last-level cache), or NULL.  hwloc reads
 * the kernel's description (what the processor reports, a virtual
 * machine's share included).
 */
static hwloc_obj_t cache_object(int level)
{
    static const hwloc_obj_type_t by_level[] = { HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                                 HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE };
    const int n_levels = (int) (sizeof by_level / sizeof by_level[0]);
    hwloc_topology_t topology = ggml__cpu_topology();
    for (int l = level > 0 ? level : n_levels; topology != NULL && l >= (level > 0 ? level : 1); l--) {
        const hwloc_obj_t cache = hwloc_get_next_obj_by_type(topology, by_level[l - 1], NULL);
        if (cache != NULL && cache->attr != NULL && cache->attr->cache.size > 0)
            return cache;
    }
    return NULL;
}

/* The size of cache_object(level), else the C library's figure; 0 if neither says. */
static size_t cache_bytes(int level)
{
    const hwloc_obj_t cache = cache_object(level);
    if (cache != NULL)
        return (size_t) cache->attr->cache.size;
    long size = -1;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    if (level == 0)
        size = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (size <= 0 && (level == 0 || level == 2))
        size = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return size > 0 ? (size_t) size : 0;
}

/*
 * The bytes of the last-level cache (last, as cache_bytes(0) gives it)
 * that the output of an element-wise op can expect to stay in: at most
 * LLC_BYTES_PER_PU for each processor sharing that cache that hwloc
 * shows.  A virtual machine given a few cores of a large processor sees
 * the whole cache, which the machine's other tenants mostly fill: on a
 * 2-core slice of an Emerald Rapids (260 MiB of L3 reported), SiLU over
 * 4096 x 4096 floats (64 MiB of output) took 5.2 to 5.4 ms with ordinary
 * stores, 3.7 to 4.5 ms with streaming ones (upstream ggml 4.8 to 5.2).
 * Processors that have their cache to themselves are far from the limit
 * (4 MiB a PU is more than x86-64 and Arm server processors give a core).
 * choose_kernels keeps it at least the level-2 cache's size.
 */
#define LLC_BYTES_PER_PU ((size_t) 4 << 20)

static size_t last_cache_share(size_t last)
{
    const hwloc_obj_t cache = cache_object(0);
    /* without hwloc's view, every online processor is taken to share it */
    long pus = cache != NULL && cache->cpuset != NULL ? hwloc_bitmap_weight(cache->cpuset) : 0;
    if (pus <= 0)
        pus = sysconf(_SC_NPROCESSORS_ONLN);
    if (pus <= 0)
        return last;
    const size_t share = (size_t) pus * LLC_BYTES_PER_PU;
    return share < last ? share : last;
}

static void choose_kernels(void)
{
    fill_isa_caps(&isa_caps, cpu());
    const enum ggml__isa level = requested_isa(&isa_caps, best_isa(&isa_caps));
    if (!ggml__kernels_build(&kernels, level, &isa_caps))
        (void) ggml__kernels_build(&kernels, GGML__ISA_GENERIC, &isa_caps);
    const size_t last = cache_bytes(0), l2 = cache_bytes(2);
    kernels.l2_bytes = l2 > 0 ? l2 : GGML__L2_DEFAULT_BYTES;
    const size_t share = last_cache_share(last > 0 ? last : (size_t) 32 << 20);
    kernels.stream_min_bytes = share > kernels.l2_bytes ? share : kernels.l2_bytes;
}

const struct ggml__cpu_kernels *ggml__kernels(void)
{
    pthread_once(&kernels_once, choose_kernels);
    return &kernels;
}

const struct ggml__isa_caps *ggml__isa_caps(void)
{
    pthread_once(&kernels_once, choose_kernels);
    return &isa_caps;
}

void ggml__cpu_features_init(void)
{
    (void) ggml__kernels();
}

void ggml_cpu_init(void)
{
    ggml__cpu_features_init();
}

/* room for the 22 CPU features of fill_feature_list, the four ISA entries and the terminator */
static struct ggml_backend_feature feature_list[32];
static pthread_once_t feature_list_once = PTHREAD_ONCE_INIT;
/* "generic,avx2,...": the levels built in, and those this CPU runs */
static char isa_built_list[64], isa_runnable_list[64];

static void list_levels(char *buf, size_t size, bool runnable_only)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int level = 0; level < GGML__ISA_COUNT; level++) {
        const enum ggml__isa l = (enum ggml__isa) level;
        if (!ggml__isa_built(l) || (runnable_only && !ggml__isa_runs_on(l, ggml__isa_caps())))
            continue;
        const int w = snprintf(buf + used, size - used, "%s%s", used > 0 ? "," : "", ggml__isa_name(l));
        if (w < 0 || (size_t) w >= size - used)
            break;
        used += (size_t) w;
    }
}

static void fill_feature_list(void)
{
    const struct cpu_features *f = cpu();
    const struct {
        const char *name;
        bool present;
    } all[] = {
        { "SSE3", f->sse3 }, { "SSSE3", f->ssse3 }, { "AVX", f->avx }, { "AVX_VNNI", f->avx_vnni },
        { "AVX2", f->avx2 }, { "BMI2", f->bmi2 }, { "F16C", f->f16c }, { "FMA", f->fma },
        { "AVX512", f->avx512 }, { "AVX512_VBMI", f->avx512_vbmi }, { "AVX512_VNNI", f->avx512_vnni },
        { "AVX512_BF16", f->avx512_bf16 }, { "AMX_INT8", f->amx_int8 }, { "NEON", f->neon },
        { "ARM_FMA", f->arm_fma }, { "FP16_VA", f->fp16_va }, { "DOTPROD", f->dotprod },
        { "MATMUL_INT8", f->matmul_int8 }, { "SVE", f->sve }, { "SME", f->sme }, { "SME2", f->sme2 },
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i].present)
            feature_list[n++] = (struct ggml_backend_feature) { all[i].name, "1" };
    /* the kernel level in use (GGML_CPU_ISA), then the levels to choose from */
    list_levels(isa_built_list, sizeof isa_built_list, false);
    list_levels(isa_runnable_list, sizeof isa_runnable_list, true);
    feature_list[n++] = (struct ggml_backend_feature) { "ISA", ggml__isa_name(ggml__kernels()->level) };
    feature_list[n++] = (struct ggml_backend_feature) { "ISA_BUILT", isa_built_list };
    feature_list[n++] = (struct ggml_backend_feature) { "ISA_RUNNABLE", isa_runnable_list };
    if (GGML_ISA_EMULATED) /* a test build: see fill_isa_caps */
        feature_list[n++] = (struct ggml_backend_feature) { "ISA_EMULATED", "avx512" };
    feature_list[n] = (struct ggml_backend_feature) { NULL, NULL };
}

struct ggml_backend_feature *ggml__cpu_feature_list(void)
{
    pthread_once(&feature_list_once, fill_feature_list);
    return feature_list;
}
