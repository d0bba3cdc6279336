/*
 * numa.c - the process's hwloc topology, ggml_numa_init and the memory
 * placement the CPU buffers apply.
 *
 * The topology is loaded once, on first use, the way hwloc loads it for
 * any program: the real machine restricted to the process's cpuset and
 * cgroup, or what HWLOC_XMLFILE / HWLOC_SYNTHETIC describe.
 *
 * The layout (numa-plan.h) in effect changes at most once: an implicit
 * DISABLED one serves until ggml_numa_init publishes the chosen one, which
 * then never changes; neither is ever freed, so a pointer to either stays
 * valid.  Pools and buffers read the layout when they are made, so
 * objects made before ggml_numa_init keep the placement they were made with.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "cpu-private.h"
#include "numa-plan.h"

/* ---------------------------------------------------------------- topology */

static pthread_once_t topology_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t topology;
static bool topology_ok;

static void topology_load(void)
{
    if (hwloc_topology_init(&topology) != 0)
        return;
    if (hwloc_topology_load(topology) != 0) {
        hwloc_topology_destroy(topology);
        return;
    }
    topology_ok = true;
}

hwloc_topology_t ggml__cpu_topology(void)
{
    pthread_once(&topology_once, topology_load);
    return topology_ok ? topology : NULL;
}

/* The PUs the process may run on (its binding), in a new bitmap; NULL on
 * failure (then the topology's allowed set applies). */
static hwloc_bitmap_t process_cpuset(hwloc_topology_t topo)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set != NULL && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0) {
        hwloc_bitmap_free(set);
        set = NULL;
    }
    return set;
}

int ggml__cpu_physical_cores(void)
{
    hwloc_topology_t topo = ggml__cpu_topology();
    if (topo == NULL)
        return 1;
    hwloc_bitmap_t allowed = process_cpuset(topo);
    int cores = ggml__numa_default_threads(topo, allowed);
    hwloc_bitmap_free(allowed);
    return cores;
}

const char *ggml__cpu_model_name(void)
{
    hwloc_topology_t topo = ggml__cpu_topology();
    hwloc_obj_t package = topo ? hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, NULL) : NULL;
    const char *model = package ? hwloc_obj_get_info_by_name(package, "CPUModel") : NULL;
    return model ? model : "CPU";
}

/* ------------------------------------------------------------------ layout */

static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ggml__numa_layout implicit_layout; /* DISABLED, before ggml_numa_init */
static struct ggml__numa_layout chosen_layout;   /* settled by ggml_numa_init */
static _Atomic(const struct ggml__numa_layout *) current_layout;
static bool numa_chosen;

/* Settles *layout for requested on the process's topology and binding. */
static bool settle(struct ggml__numa_layout *layout, enum ggml_numa_strategy requested)
{
    hwloc_topology_t topo = ggml__cpu_topology();
    hwloc_bitmap_t allowed = topo ? process_cpuset(topo) : NULL;
    int caller_pu = -1;
    hwloc_bitmap_t here = topo ? hwloc_bitmap_alloc() : NULL;
    if (here != NULL && hwloc_get_last_cpu_location(topo, here, HWLOC_CPUBIND_THREAD) == 0)
        caller_pu = hwloc_bitmap_first(here);
    hwloc_bitmap_free(here);
    bool ok = ggml__numa_layout_init(layout, topo, requested, allowed, caller_pu);
    hwloc_bitmap_free(allowed);
    return ok;
}

const struct ggml__numa_layout *ggml__numa_layout(void)
{
    const struct ggml__numa_layout *layout = atomic_load(&current_layout);
    if (layout != NULL)
        return layout;
    pthread_mutex_lock(&layout_lock);
    if ((layout = atomic_load(&current_layout)) == NULL) {
        settle(&implicit_layout, GGML_NUMA_STRATEGY_DISABLED);
        atomic_store(&current_layout, &implicit_layout);
        layout = &implicit_layout;
    }
    pthread_mutex_unlock(&layout_lock);
    return layout;
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
    if (!settle(&chosen_layout, numa)) {
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
    if (chosen_layout.topology != NULL && !hwloc_topology_is_thissystem(chosen_layout.topology) &&
        chosen_layout.strategy != GGML_NUMA_STRATEGY_DISABLED)
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
    hwloc_topology_t topo = layout->topology;
    if (topo == NULL || size == 0 || place.policy == GGML__MEM_FIRST_TOUCH || place.policy == GGML__MEM_REPLICATE)
        return true;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    if (nodes == NULL)
        return false;
    hwloc_membind_policy_t policy = HWLOC_MEMBIND_BIND;
    if (place.policy == GGML__MEM_INTERLEAVE) {
        policy = HWLOC_MEMBIND_INTERLEAVE;
        for (int i = 0; i < layout->n_nodes; i++)
            hwloc_bitmap_set(nodes, layout->nodes[i]->os_index);
    } else {
        hwloc_bitmap_set(nodes, layout->nodes[place.node]->os_index);
    }
    int flags = HWLOC_MEMBIND_BYNODESET | (migrate ? HWLOC_MEMBIND_MIGRATE : 0);
    bool ok = hwloc_set_area_membind(topo, ptr, size, nodes, policy, flags) == 0;
    hwloc_bitmap_free(nodes);
    if (!ok)
        note_binding_failed(place.policy == GGML__MEM_INTERLEAVE ? "interleave memory over the NUMA nodes"
                                                                 : "bind memory to a NUMA node");
    return ok;
}

void *ggml__numa_alloc_pages(size_t size)
{
    hwloc_topology_t topo = ggml__cpu_topology();
    return topo != NULL ? hwloc_alloc(topo, size) : NULL;
}

void ggml__numa_free_pages(void *ptr, size_t size)
{
    hwloc_topology_t topo = ggml__cpu_topology();
    if (ptr != NULL && topo != NULL)
        hwloc_free(topo, ptr, size);
}
