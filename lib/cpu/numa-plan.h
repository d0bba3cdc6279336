/*
 * numa-plan.h - where the CPU backend puts threads and memory, as pure
 * functions of a hwloc topology, a NUMA strategy and the CPUs the process
 * may use.
 *
 * Not installed.  Nothing here binds, allocates tensor memory or logs: the
 * callers (numa.c, threadpool.c, cpu/buffer.c) apply the plans, and the
 * tests check them on synthetic topologies.  Only hwloc, the C library and
 * the public headers are used, so the tests can compile this file alone.
 */
#ifndef GGML_BACKEND_NUMA_PLAN_H
#define GGML_BACKEND_NUMA_PLAN_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "ggml-backend.h"
#include "ggml-cpu.h"

/* NUMA nodes a layout tracks; nodes past this are not used for placement. */
#define GGML__NUMA_MAX_NODES 64

/*
 * What ggml_numa_init settles for one topology.  Invariants: 1 <= n_nodes
 * <= GGML__NUMA_MAX_NODES; nodes[] are the NUMA nodes that hold at least
 * one allowed CPU, in hwloc's logical order (topology order, whatever the
 * OS numbering); strategy is DISABLED whenever n_nodes == 1 (a single node
 * leaves nothing to place); 0 <= caller_node < n_nodes.
 */
struct ggml__numa_layout {
    hwloc_topology_t topology;        /* borrowed; NULL: no topology, nothing placed */
    enum ggml_numa_strategy requested;
    enum ggml_numa_strategy strategy; /* the one in effect */
    int n_nodes;
    hwloc_obj_t nodes[GGML__NUMA_MAX_NODES];
    int caller_node;                  /* the node ISOLATE keeps everything on */
    hwloc_bitmap_t allowed;           /* PUs the process may run on (owned) */
};

/*
 * Settles the layout of requested on topology.  allowed: the PUs the
 * process may use (its binding), or NULL for the topology's allowed set;
 * either way intersected with the topology's allowed set.  caller_pu: OS
 * index of the PU the caller runs on, or -1 when unknown (then the first
 * node is the caller's).  A NULL topology gives a one-node DISABLED layout.
 * Returns false only when out of memory (*layout is then empty).
 */
bool ggml__numa_layout_init(struct ggml__numa_layout *layout, hwloc_topology_t topology,
                            enum ggml_numa_strategy requested, hwloc_const_cpuset_t allowed, int caller_pu);
void ggml__numa_layout_free(struct ggml__numa_layout *layout);

/*
 * Where one thread of a pool runs.  cpuset NULL: not bound (it keeps the
 * CPUs the process has).  node: index into the layout's nodes[] of the
 * node it runs on, whose copy of MIRROR weights it reads (0 when unbound).
 */
struct ggml__thread_place {
    hwloc_bitmap_t cpuset;
    int node;
};

/*
 * Plans n_threads threads (thread 0 is the caller of a job).  cpumask
 * (GGML_MAX_N_THREADS entries, indexed by OS PU number) wins over the
 * strategy when any entry is set: strict_cpu gives each thread one PU of
 * the mask in turn, otherwise every thread gets the whole mask.  Without a
 * mask: DISTRIBUTE and MIRROR put thread t on node t mod n_nodes, ISOLATE
 * puts every thread on the caller's node, and each of those threads is
 * bound to the next core of its node (performance cores first, then in
 * topology order; round again when the node has fewer cores than threads);
 * DISABLED and NUMACTL bind nothing.  Returns false when out of memory,
 * with nothing left allocated.
 */
bool ggml__numa_plan_threads(const struct ggml__numa_layout *layout, int n_threads, const bool *cpumask,
                             bool strict_cpu, struct ggml__thread_place *places);
void ggml__numa_places_free(struct ggml__thread_place *places, int n_threads);

/* How a CPU buffer's memory is placed. */
enum ggml__mem_policy {
    GGML__MEM_FIRST_TOUCH, /* pages land on the node of the thread that first writes them */
    GGML__MEM_INTERLEAVE,  /* pages spread round robin over every node of the layout */
    GGML__MEM_BIND,        /* all pages on one node */
    GGML__MEM_REPLICATE,   /* one full copy on each node of the layout */
};

struct ggml__buffer_place {
    enum ggml__mem_policy policy;
    int node; /* GGML__MEM_BIND: index into the layout's nodes[] */
};

/*
 * The placement of a CPU buffer used for usage: WEIGHTS buffers are
 * interleaved (DISTRIBUTE) or replicated (MIRROR); ISOLATE binds every
 * buffer to the caller's node; everything else is first touch (NUMACTL
 * thereby keeps the process's memory policy).
 */
struct ggml__buffer_place ggml__numa_plan_buffer(const struct ggml__numa_layout *layout,
                                                 enum ggml_backend_buffer_usage usage);

/*
 * Threads a pool gets by default: the cores with an allowed PU, counting
 * only the highest-performance kind when hwloc ranks CPU kinds (hybrid
 * machines).  At least 1; 1 without a topology.
 */
int ggml__numa_default_threads(hwloc_topology_t topology, hwloc_const_cpuset_t allowed);

/* The names DISABLED, DISTRIBUTE, ISOLATE, NUMACTL, MIRROR, or "invalid". */
const char *ggml__numa_strategy_name(enum ggml_numa_strategy strategy);

/*
 * Writes to buf (NUL-terminated, cut at size) the layout's nodes and the
 * plans for a pool of n_threads: each thread's PUs and node, and each
 * buffer usage's placement.  Returns the length the full text needs.
 */
size_t ggml__numa_describe(const struct ggml__numa_layout *layout, int n_threads, char *buf, size_t size);

#endif
