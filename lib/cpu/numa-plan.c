/*
 * numa-plan.c - thread and buffer placement plans (see numa-plan.h).
 *
 * CPUs are always handled as hwloc bitmaps of OS PU numbers and walked in
 * hwloc's logical (topology) order, so no assumption is made about how the
 * OS numbers them: on machines that interleave PU numbers across nodes
 * (PU 0 on node 0, PU 1 on node 1, ...) the plans are the same as on
 * machines that number them node by node.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numa-plan.h"

const char *ggml__numa_strategy_name(enum ggml_numa_strategy strategy)
{
    switch (strategy) {
    case GGML_NUMA_STRATEGY_DISABLED:   return "DISABLED";
    case GGML_NUMA_STRATEGY_DISTRIBUTE: return "DISTRIBUTE";
    case GGML_NUMA_STRATEGY_ISOLATE:    return "ISOLATE";
    case GGML_NUMA_STRATEGY_NUMACTL:    return "NUMACTL";
    case GGML_NUMA_STRATEGY_MIRROR:     return "MIRROR";
    default:                            return "invalid";
    }
}

/* ------------------------------------------------------------- layout */

bool ggml__numa_layout_init(struct ggml__numa_layout *layout, hwloc_topology_t topology,
                            enum ggml_numa_strategy requested, hwloc_const_cpuset_t allowed, int caller_pu)
{
    memset(layout, 0, sizeof *layout);
    layout->topology = topology;
    layout->requested = requested;
    layout->strategy = GGML_NUMA_STRATEGY_DISABLED;
    layout->n_nodes = 1;
    layout->allowed = hwloc_bitmap_alloc();
    if (layout->allowed == NULL)
        return false;
    if (topology == NULL)
        return true;

    hwloc_bitmap_copy(layout->allowed, hwloc_topology_get_allowed_cpuset(topology));
    if (allowed != NULL && hwloc_bitmap_intersects(layout->allowed, allowed))
        hwloc_bitmap_and(layout->allowed, layout->allowed, allowed);

    /* Nodes with allowed CPUs; a node sharing its CPUs with one already
     * taken (high-bandwidth or CXL memory beside DRAM) adds no CPUs to
     * spread threads over, so it is not counted. */
    int n = 0;
    hwloc_obj_t node = NULL;
    while ((node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) != NULL &&
           n < GGML__NUMA_MAX_NODES) {
        if (node->cpuset == NULL || !hwloc_bitmap_intersects(node->cpuset, layout->allowed))
            continue;
        bool seen = false;
        for (int i = 0; i < n && !seen; i++)
            seen = hwloc_bitmap_isequal(layout->nodes[i]->cpuset, node->cpuset);
        if (!seen)
            layout->nodes[n++] = node;
    }
    if (n == 0) {
        layout->nodes[0] = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, NULL);
        n = 1;
    }
    layout->n_nodes = n;
    for (int i = 0; i < n && caller_pu >= 0; i++)
        if (layout->nodes[i] != NULL && hwloc_bitmap_isset(layout->nodes[i]->cpuset, (unsigned) caller_pu))
            layout->caller_node = i;
    if (n > 1)
        layout->strategy = requested;
    return true;
}

void ggml__numa_layout_free(struct ggml__numa_layout *layout)
{
    hwloc_bitmap_free(layout->allowed);
    layout->allowed = NULL;
}

/* ------------------------------------------------------------ threads */

/* Performance rank of a core: the efficiency hwloc gives its CPU kind
 * (higher is more powerful), 0 when the kinds are not ranked. */
static int core_rank(hwloc_topology_t topology, hwloc_obj_t core)
{
    int kind = hwloc_cpukinds_get_by_cpuset(topology, core->cpuset, 0);
    int efficiency = -1;
    if (kind < 0 || hwloc_cpukinds_get_info(topology, (unsigned) kind, NULL, &efficiency, NULL, NULL, 0) != 0)
        return 0;
    return efficiency < 0 ? 0 : efficiency;
}

/* A core (or a PU, on topologies without cores) and its performance rank. */
struct ranked_core {
    hwloc_obj_t obj;
    int rank;
};

/* The cores of node (NULL: of every node) with an allowed PU, best first
 * (rank, then topology order); *n_out of them in a new array, or NULL when
 * none or no memory.  Each core's rank is looked up once. */
static struct ranked_core *node_cores(const struct ggml__numa_layout *layout, hwloc_obj_t node, int *n_out)
{
    hwloc_topology_t topology = layout->topology;
    int total = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    hwloc_obj_type_t type = HWLOC_OBJ_CORE;
    if (total <= 0) { /* no core objects: use PUs */
        type = HWLOC_OBJ_PU;
        total = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
    }
    *n_out = 0;
    struct ranked_core *cores = total > 0 ? malloc((size_t) total * sizeof *cores) : NULL;
    if (cores == NULL)
        return NULL;
    int n = 0;
    for (hwloc_obj_t core = NULL; (core = hwloc_get_next_obj_by_type(topology, type, core)) != NULL;) {
        if (!hwloc_bitmap_intersects(core->cpuset, layout->allowed) ||
            (node != NULL && !hwloc_bitmap_isincluded(core->cpuset, node->cpuset)))
            continue;
        const int rank = core_rank(topology, core);
        /* insertion keeps topology order among cores of equal rank */
        int at = n;
        while (at > 0 && cores[at - 1].rank < rank) {
            cores[at] = cores[at - 1];
            at--;
        }
        cores[at] = (struct ranked_core) { core, rank };
        n++;
    }
    *n_out = n;
    return cores;
}

/* Index into the layout's nodes of the node holding the first PU of set. */
static int node_of_cpuset(const struct ggml__numa_layout *layout, hwloc_const_cpuset_t set)
{
    int first = hwloc_bitmap_first(set);
    for (int i = 0; i < layout->n_nodes && first >= 0; i++)
        if (layout->nodes[i] != NULL && hwloc_bitmap_isset(layout->nodes[i]->cpuset, (unsigned) first))
            return i;
    return 0;
}

/* Places from an explicit cpumask (see ggml__numa_plan_threads). */
static bool plan_from_mask(const struct ggml__numa_layout *layout, int n_threads, const bool *cpumask,
                           bool strict_cpu, struct ggml__thread_place *places)
{
    int next = 0;
    for (int t = 0; t < n_threads; t++) {
        hwloc_bitmap_t set = places[t].cpuset = hwloc_bitmap_alloc();
        if (set == NULL)
            return false;
        if (strict_cpu) {
            while (!cpumask[next])
                next = (next + 1) % GGML_MAX_N_THREADS;
            hwloc_bitmap_only(set, (unsigned) next);
            next = (next + 1) % GGML_MAX_N_THREADS;
        } else {
            for (int i = 0; i < GGML_MAX_N_THREADS; i++)
                if (cpumask[i])
                    hwloc_bitmap_set(set, (unsigned) i);
        }
        places[t].node = node_of_cpuset(layout, set);
    }
    return true;
}

bool ggml__numa_plan_threads(const struct ggml__numa_layout *layout, int n_threads, const bool *cpumask,
                             bool strict_cpu, struct ggml__thread_place *places)
{
    for (int t = 0; t < n_threads; t++)
        places[t] = (struct ggml__thread_place) { .cpuset = NULL, .node = 0 };

    bool have_mask = false;
    for (int i = 0; cpumask != NULL && i < GGML_MAX_N_THREADS && !have_mask; i++)
        have_mask = cpumask[i];
    if (have_mask) {
        if (plan_from_mask(layout, n_threads, cpumask, strict_cpu, places))
            return true;
        ggml__numa_places_free(places, n_threads);
        return false;
    }

    const enum ggml_numa_strategy strategy = layout->strategy;
    if (layout->topology == NULL ||
        (strategy != GGML_NUMA_STRATEGY_DISTRIBUTE && strategy != GGML_NUMA_STRATEGY_MIRROR &&
         strategy != GGML_NUMA_STRATEGY_ISOLATE))
        return true;

    /* per node, its cores in preference order and how many are taken */
    struct ranked_core *cores[GGML__NUMA_MAX_NODES] = { 0 };
    int n_cores[GGML__NUMA_MAX_NODES] = { 0 };
    int taken[GGML__NUMA_MAX_NODES] = { 0 };
    bool ok = true;
    for (int t = 0; t < n_threads && ok; t++) {
        const int node = strategy == GGML_NUMA_STRATEGY_ISOLATE ? layout->caller_node : t % layout->n_nodes;
        if (cores[node] == NULL && n_cores[node] == 0) {
            cores[node] = node_cores(layout, layout->nodes[node], &n_cores[node]);
            if (cores[node] == NULL)
                n_cores[node] = -1; /* none usable: the thread stays unbound */
        }
        places[t].node = node;
        if (n_cores[node] <= 0)
            continue;
        hwloc_obj_t core = cores[node][taken[node]++ % n_cores[node]].obj;
        ok = (places[t].cpuset = hwloc_bitmap_alloc()) != NULL;
        if (ok)
            hwloc_bitmap_and(places[t].cpuset, core->cpuset, layout->allowed);
    }
    for (int i = 0; i < layout->n_nodes; i++)
        free(cores[i]);
    if (!ok)
        ggml__numa_places_free(places, n_threads);
    return ok;
}

void ggml__numa_places_free(struct ggml__thread_place *places, int n_threads)
{
    for (int t = 0; t < n_threads; t++) {
        hwloc_bitmap_free(places[t].cpuset);
        places[t].cpuset = NULL;
    }
}

/* ------------------------------------------------------------ buffers */

struct ggml__buffer_place ggml__numa_plan_buffer(const struct ggml__numa_layout *layout,
                                                 enum ggml_backend_buffer_usage usage)
{
    struct ggml__buffer_place place = { .policy = GGML__MEM_FIRST_TOUCH, .node = 0 };
    switch (layout->strategy) {
    case GGML_NUMA_STRATEGY_DISTRIBUTE:
        if (usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS)
            place.policy = GGML__MEM_INTERLEAVE;
        break;
    case GGML_NUMA_STRATEGY_MIRROR:
        if (usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS)
            place.policy = GGML__MEM_REPLICATE;
        break;
    case GGML_NUMA_STRATEGY_ISOLATE:
        place.policy = GGML__MEM_BIND;
        place.node = layout->caller_node;
        break;
    default:
        break;
    }
    return place;
}

int ggml__numa_default_threads(hwloc_topology_t topology, hwloc_const_cpuset_t allowed)
{
    if (topology == NULL)
        return 1;
    struct ggml__numa_layout all;
    if (!ggml__numa_layout_init(&all, topology, GGML_NUMA_STRATEGY_DISABLED, allowed, -1))
        return 1;
    int n_cores = 0;
    struct ranked_core *cores = node_cores(&all, NULL, &n_cores);
    /* cores come best first: count the ones of the first core's rank */
    int count = 0;
    while (count < n_cores && cores[count].rank == cores[0].rank)
        count++;
    free(cores);
    ggml__numa_layout_free(&all);
    return count > 0 ? count : 1;
}

/* ----------------------------------------------------------- describe */

/* Appends to a size-limited buffer, counting what the whole text needs. */
struct text {
    char *buf;
    size_t size, len;
};

static void put(struct text *text, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *text, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    size_t room = text->len < text->size ? text->size - text->len : 0;
    int n = vsnprintf(room > 0 ? text->buf + text->len : NULL, room, format, ap);
    va_end(ap);
    if (n > 0)
        text->len += (size_t) n;
}

static void put_cpuset(struct text *text, hwloc_const_bitmap_t set)
{
    char list[256];
    if (set == NULL) { /* a layout whose bitmap could not be allocated */
        put(text, "unknown");
        return;
    }
    if (hwloc_bitmap_list_snprintf(list, sizeof list, set) >= (int) sizeof list)
        memcpy(list + sizeof list - 4, "...", 4);
    put(text, "%s", list);
}

static const char *policy_text(struct ggml__buffer_place place)
{
    switch (place.policy) {
    case GGML__MEM_INTERLEAVE: return "interleaved over the nodes";
    case GGML__MEM_BIND:       return "bound to node";
    case GGML__MEM_REPLICATE:  return "one copy per node, each thread reads its node's";
    default:                   return "first touch (node of the thread that writes first)";
    }
}

size_t ggml__numa_describe(const struct ggml__numa_layout *layout, int n_threads, char *buf, size_t size)
{
    struct text text = { .buf = buf, .size = size, .len = 0 };
    if (size > 0)
        buf[0] = '\0';
    put(&text, "strategy: %s", ggml__numa_strategy_name(layout->strategy));
    if (layout->requested != layout->strategy)
        put(&text, " (%s requested; one NUMA node)", ggml__numa_strategy_name(layout->requested));
    put(&text, "\nallowed PUs: ");
    put_cpuset(&text, layout->allowed);
    put(&text, "\nnodes: %d\n", layout->n_nodes);
    for (int i = 0; i < layout->n_nodes && layout->nodes[i] != NULL; i++) {
        put(&text, "  node %d (OS node %u): PUs ", i, layout->nodes[i]->os_index);
        put_cpuset(&text, layout->nodes[i]->cpuset);
        put(&text, "%s\n", i == layout->caller_node ? " (caller)" : "");
    }

    struct ggml__thread_place *places = n_threads > 0 ? calloc((size_t) n_threads, sizeof *places) : NULL;
    if (places != NULL && ggml__numa_plan_threads(layout, n_threads, NULL, false, places)) {
        put(&text, "threads: %d\n", n_threads);
        for (int t = 0; t < n_threads; t++) {
            put(&text, "  thread %d: node %d, ", t, places[t].node);
            if (places[t].cpuset != NULL) {
                put(&text, "PUs ");
                put_cpuset(&text, places[t].cpuset);
            } else {
                put(&text, "not bound");
            }
            put(&text, "\n");
        }
        ggml__numa_places_free(places, n_threads);
    }
    free(places);

    static const struct {
        enum ggml_backend_buffer_usage usage;
        const char *name;
    } usages[] = {
        { GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "weights" },
        { GGML_BACKEND_BUFFER_USAGE_COMPUTE, "compute" },
        { GGML_BACKEND_BUFFER_USAGE_ANY, "any" },
    };
    put(&text, "buffers:\n");
    for (size_t i = 0; i < sizeof usages / sizeof usages[0]; i++) {
        struct ggml__buffer_place place = ggml__numa_plan_buffer(layout, usages[i].usage);
        put(&text, "  %s: %s", usages[i].name, policy_text(place));
        if (place.policy == GGML__MEM_BIND)
            put(&text, " %d", place.node);
        put(&text, "\n");
    }
    return text.len;
}
