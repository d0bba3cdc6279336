/*
 * numa.c - what the CPU backend knows of the machine, ggml_numa_init and
 * the memory placement the CPU buffers apply.
 *
 * hwloc is consulted once per process, at the first CPU backend init,
 * ggml_numa_init or other first use (process_probe): the topology (the
 * real machine restricted to the process's cpuset and cgroup, or what
 * HWLOC_XMLFILE / HWLOC_SYNTHETIC describe), the CPUs the process is bound
 * to, the default thread count and the processor's name are read together
 * and cached.  hwloc does not survive an allocation failure inside its own
 * queries, so nothing after that first use calls into hwloc's system
 * interfaces: later plans walk the cached topology (plain reads and
 * hwloc_bitmap_* calls, which report allocation failure), and threads and
 * memory are bound with the kernel's own calls (sched_setaffinity, mbind)
 * from masks made when a pool or a layout is made.  When hwloc cannot load
 * a topology the process has one node and the CPUs of its affinity mask,
 * and one warning says so.
 *
 * The layout (numa-plan.h) in effect changes at most once: an implicit
 * DISABLED one serves until ggml_numa_init publishes the chosen one, which
 * then never changes; neither is ever freed, so a pointer to either stays
 * valid.  Pools and buffers read the layout when they are made, so
 * objects made before ggml_numa_init keep the placement they were made with.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__linux__)
#    include <linux/mempolicy.h>
#    include <sys/syscall.h>
#endif

#include "ggml-impl.h"
#include "cpu-private.h"
#include "numa-plan.h"

/* ------------------------------------------------------------- the probe */

/* What the first use learns; read-only once process_probe has run. */
static struct {
    hwloc_topology_t topology;  /* NULL: hwloc failed; one node, nothing placed by hwloc */
    hwloc_bitmap_t binding;     /* the PUs the process was bound to, or NULL (the allowed set) */
    bool binds;                 /* binding applies: no topology, or this machine's */
    int default_threads;
    const char *model;
    size_t mask_size;           /* bytes of a kernel CPU mask covering every CPU */
} probe;

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static struct ggml__numa_layout implicit_layout; /* DISABLED, before ggml_numa_init */

/* CPUs of the calling thread's affinity mask, for a process without a
 * topology (at least 1). */
static int affinity_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int) (online < INT_MAX ? online : INT_MAX) : 1;
}

static bool load_topology(void)
{
    if (hwloc_topology_init(&probe.topology) != 0) {
        probe.topology = NULL;
        return false;
    }
    if (hwloc_topology_load(probe.topology) != 0) {
        hwloc_topology_destroy(probe.topology);
        probe.topology = NULL;
        return false;
    }
    return true;
}

static void process_probe(void)
{
    long configured = sysconf(_SC_NPROCESSORS_CONF);
    int bits = configured > CPU_SETSIZE ? (int) (configured < INT_MAX / 2 ? configured : INT_MAX / 2) : CPU_SETSIZE;
    probe.binds = true;
    probe.model = "CPU";
    if (!load_topology()) {
        ggml__log_at(GGML_LOG_LEVEL_WARN, "ggml_backend_cpu_init",
                     "hwloc cannot read this machine's topology (%s); the CPU backend sees one NUMA node "
                     "and the CPUs of the process's affinity mask", strerror(errno));
        probe.default_threads = affinity_cpu_count();
    } else {
        hwloc_topology_t topo = probe.topology;
        probe.binds = hwloc_topology_is_thissystem(topo);
        probe.binding = hwloc_bitmap_alloc();
        if (probe.binding != NULL && hwloc_get_cpubind(topo, probe.binding, HWLOC_CPUBIND_PROCESS) != 0) {
            hwloc_bitmap_free(probe.binding);
            probe.binding = NULL;
        }
        probe.default_threads = ggml__numa_default_threads(topo, probe.binding);
        hwloc_obj_t package = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, NULL);
        const char *model = package ? hwloc_obj_get_info_by_name(package, "CPUModel") : NULL;
        if (model != NULL)
            probe.model = model;
        int last = hwloc_bitmap_last(hwloc_topology_get_complete_cpuset(topo));
        if (last >= bits)
            bits = last + 1;
    }
    probe.mask_size = CPU_ALLOC_SIZE(bits);
    ggml__numa_layout_init(&implicit_layout, probe.topology, GGML_NUMA_STRATEGY_DISABLED, probe.binding, -1);
}

hwloc_topology_t ggml__cpu_topology(void)
{
    pthread_once(&probe_once, process_probe);
    return probe.topology;
}

int ggml__cpu_physical_cores(void)
{
    pthread_once(&probe_once, process_probe);
    return probe.default_threads;
}

const char *ggml__cpu_model_name(void)
{
    pthread_once(&probe_once, process_probe);
    return probe.model;
}

/* --------------------------------------------------------- kernel masks */

cpu_set_t *ggml__cpu_mask_new(hwloc_const_bitmap_t cpus, size_t *size)
{
    pthread_once(&probe_once, process_probe);
    *size = probe.mask_size;
    cpu_set_t *mask = malloc(probe.mask_size);
    if (mask == NULL)
        return NULL;
    CPU_ZERO_S(probe.mask_size, mask);
    if (cpus != NULL) {
        const int bits = (int) (probe.mask_size * CHAR_BIT);
        for (int pu = hwloc_bitmap_first(cpus); pu >= 0 && pu < bits; pu = hwloc_bitmap_next(cpus, pu))
            CPU_SET_S((size_t) pu, probe.mask_size, mask);
    }
    return mask;
}

bool ggml__cpu_binding_applies(void)
{
    pthread_once(&probe_once, process_probe);
    return probe.binds;
}

/* ------------------------------------------------------------------ layout */

static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ggml__numa_layout chosen_layout;   /* settled by ggml_numa_init */
static _Atomic(const struct ggml__numa_layout *) current_layout;
static bool numa_chosen;

/*
 * Kernel node masks (mbind's format: bit n = OS node n) of the chosen
 * layout, made with it when it places memory on this machine: all[] holds
 * every node of the layout, node[i] the layout's node i.  n_bits is what
 * mbind is told (one past the highest node, plus the one the kernel drops).
 */
static struct {
    unsigned long *all;
    unsigned long *node[GGML__NUMA_MAX_NODES];
    unsigned long n_bits;
} node_masks;

#define LONG_BITS (sizeof(unsigned long) * CHAR_BIT)

static void mask_set(unsigned long *mask, unsigned bit)
{
    mask[bit / LONG_BITS] |= 1ul << (bit % LONG_BITS);
}

/* Makes node_masks for layout; false when out of memory. */
static bool make_node_masks(const struct ggml__numa_layout *layout)
{
    unsigned highest = 0;
    for (int i = 0; i < layout->n_nodes; i++)
        if (layout->nodes[i] != NULL && layout->nodes[i]->os_index > highest)
            highest = layout->nodes[i]->os_index;
    const size_t n_longs = (highest + 2) / LONG_BITS + 1;
    unsigned long *block = calloc((size_t) (layout->n_nodes + 1) * n_longs, sizeof *block);
    if (block == NULL)
        return false;
    node_masks.all = block;
    node_masks.n_bits = (unsigned long) highest + 2;
    for (int i = 0; i < layout->n_nodes; i++) {
        node_masks.node[i] = block + (size_t) (i + 1) * n_longs;
        if (layout->nodes[i] != NULL) {
            mask_set(node_masks.all, layout->nodes[i]->os_index);
            mask_set(node_masks.node[i], layout->nodes[i]->os_index);
        }
    }
    return true;
}

const struct ggml__numa_layout *ggml__numa_layout(void)
{
    pthread_once(&probe_once, process_probe);
    const struct ggml__numa_layout *layout = atomic_load(&current_layout);
    return layout != NULL ? layout : &implicit_layout;
}

/* Settles the chosen layout for requested from the probe (no new hwloc
 * query: the caller's CPU comes from the kernel) and its node masks. */
static bool settle_chosen(enum ggml_numa_strategy requested)
{
    pthread_once(&probe_once, process_probe);
    const int caller_pu = probe.topology != NULL && probe.binds ? sched_getcpu() : -1;
    if (!ggml__numa_layout_init(&chosen_layout, probe.topology, requested, probe.binding, caller_pu))
        return false;
    if (chosen_layout.strategy == GGML_NUMA_STRATEGY_DISABLED ||
        chosen_layout.strategy == GGML_NUMA_STRATEGY_NUMACTL || !probe.binds || make_node_masks(&chosen_layout))
        return true;
    ggml__numa_layout_free(&chosen_layout);
    return false;
}

void ggml_numa_init(enum ggml_numa_strategy numa)
{
    if ((int) numa < 0 || numa >= GGML_NUMA_STRATEGY_COUNT) {
        ggml__error("invalid NUMA strategy %d", (int) numa);
        return;
    }
    pthread_mutex_lock(&layout_lock);
    if (numa_chosen) {
        if (chosen_layout.requested != numa)
            ggml__warn("the NUMA strategy is already %s; %s is ignored (it is chosen once per process)",
                       ggml__numa_strategy_name(chosen_layout.requested), ggml__numa_strategy_name(numa));
        pthread_mutex_unlock(&layout_lock);
        return;
    }
    if (!settle_chosen(numa)) {
        ggml__error("out of memory");
        pthread_mutex_unlock(&layout_lock);
        return;
    }
    numa_chosen = true;
    atomic_store(&current_layout, &chosen_layout);
    pthread_mutex_unlock(&layout_lock);

    const char *name = ggml__numa_strategy_name(numa);
    if (chosen_layout.topology == NULL)
        ggml__info("no hwloc topology: %s behaves as DISABLED", name);
    else if (numa == GGML_NUMA_STRATEGY_DISABLED)
        ggml__info("DISABLED: threads and memory are not placed (%d NUMA node%s)", chosen_layout.n_nodes,
                   chosen_layout.n_nodes == 1 ? "" : "s");
    else if (chosen_layout.strategy != numa)
        ggml__info("one NUMA node: %s behaves as DISABLED", name);
    else
        ggml__info("NUMA strategy %s over %d nodes", name, chosen_layout.n_nodes);
    if (chosen_layout.topology != NULL && !probe.binds && chosen_layout.strategy != GGML_NUMA_STRATEGY_DISABLED)
        ggml__info("the topology is not this machine's (HWLOC_XMLFILE or HWLOC_SYNTHETIC): "
                   "threads and memory are planned on it but not bound");
}

bool ggml_is_numa(void)
{
    const struct ggml__numa_layout *layout = atomic_load(&current_layout);
    return layout == &chosen_layout && layout->n_nodes > 1;
}

size_t ggml__cpu_describe_placement(int n_threads, char *buf, size_t size)
{
    if (buf == NULL && size > 0) {
        ggml__error("buf is NULL");
        return 0;
    }
    if (n_threads <= 0)
        n_threads = ggml__cpu_physical_cores();
    if (n_threads > GGML_MAX_N_THREADS)
        n_threads = GGML_MAX_N_THREADS;
    hwloc_topology_t topo = ggml__cpu_topology();
    char head[256];
    if (topo != NULL)
        snprintf(head, sizeof head, "topology: %d packages, %d NUMA nodes, %d cores, %d PUs%s\n",
                 hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE),
                 hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE),
                 hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU),
                 hwloc_topology_is_thissystem(topo) ? "" : " (not this machine: HWLOC_XMLFILE or HWLOC_SYNTHETIC)");
    else
        snprintf(head, sizeof head, "topology: not available\n");
    size_t head_len = strlen(head);
    if (size > 0)
        snprintf(buf, size, "%s", head);
    size_t rest = size > head_len ? size - head_len : 0;
    return head_len + ggml__numa_describe(ggml__numa_layout(), n_threads, rest > 0 ? buf + head_len : NULL, rest);
}

/* ------------------------------------------------------------------ memory */

static atomic_bool binding_noted;

/* One note per process when memory cannot be placed (not permitted, or a
 * topology that is not this machine's): the memory still works. */
static void note_binding_failed(const char *what)
{
    if (!atomic_exchange(&binding_noted, true))
        ggml__log_at(GGML_LOG_LEVEL_WARN, "ggml_numa_init",
                     "cannot %s (%s); CPU buffers keep the default memory policy", what, strerror(errno));
}

bool ggml__numa_place_memory(void *ptr, size_t size, struct ggml__buffer_place place, bool migrate)
{
    const struct ggml__numa_layout *layout = ggml__numa_layout();
    if (layout->topology == NULL || !probe.binds || size == 0 || place.policy == GGML__MEM_FIRST_TOUCH ||
        place.policy == GGML__MEM_REPLICATE || node_masks.all == NULL)
        return true; /* nothing to place, or planned on a topology that is not this machine's */
    const bool interleave = place.policy == GGML__MEM_INTERLEAVE;
#if defined(__linux__)
    /* mbind works on whole pages: the first page of ptr is included */
    const uintptr_t page = (uintptr_t) sysconf(_SC_PAGESIZE);
    const uintptr_t start = (uintptr_t) ptr & ~(page - 1);
    const unsigned long *mask = interleave ? node_masks.all : node_masks.node[place.node];
    bool ok = syscall(SYS_mbind, (void *) start, size + ((uintptr_t) ptr - start),
                      interleave ? MPOL_INTERLEAVE : MPOL_BIND, mask, node_masks.n_bits,
                      migrate ? MPOL_MF_MOVE : 0) == 0;
#else
    (void) ptr;
    (void) migrate;
    errno = ENOSYS;
    bool ok = false;
#endif
    if (!ok)
        note_binding_failed(interleave ? "interleave memory over the NUMA nodes" : "bind memory to a NUMA node");
    return ok;
}

void ggml__advise_huge_pages(void *ptr, size_t size)
{
#ifdef MADV_HUGEPAGE
    if (ptr != NULL && size >= GGML__HUGE_PAGE_BYTES)
        (void) madvise(ptr, size, MADV_HUGEPAGE);   /* EINVAL without THP: 4 KiB pages, as asked for */
#else
    (void) ptr;
    (void) size;
#endif
}

void *ggml__numa_alloc_pages(size_t size)
{
    void *pages = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED)
        return NULL;
    ggml__advise_huge_pages(pages, size);
    return pages;
}

void ggml__numa_free_pages(void *ptr, size_t size)
{
    if (ptr != NULL)
        munmap(ptr, size);
}
