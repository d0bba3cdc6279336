/*
 * test-numa.c - NUMA placement plans on synthetic topologies, and the
 * public NUMA calls on this machine.
 *
 * The plans (lib/cpu/numa-plan.c, compiled into this program) are checked
 * on the hwloc XML topologies of tests/topologies (see its README): one
 * node; 2 packages x 2 nodes; 8 nodes with PU numbers interleaved across
 * nodes; a hybrid machine with performance and efficiency cores; a process
 * restricted to part of the machine.  For each strategy: which PUs each
 * thread is bound to and which node's copy of the weights it reads, where
 * each kind of buffer is placed, and the default thread count.  Expected
 * PU lists are written out from the topology descriptions in the README,
 * not computed by the code under test.
 *
 * Then, on the real machine: ggml_numa_init's argument checks, "chosen
 * once", ggml_is_numa against the node count hwloc reports, and the CPU
 * registry's NUMA proc addresses.  That the computed results do not depend
 * on the strategy and that binding is applied is checked by
 * tests/check-numa.sh, one process per strategy.
 */
#include "config.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "numa-plan.h"

#define MAX_TEST_THREADS 32

static const enum ggml_numa_strategy all_strategies[] = {
    GGML_NUMA_STRATEGY_DISABLED, GGML_NUMA_STRATEGY_DISTRIBUTE, GGML_NUMA_STRATEGY_ISOLATE,
    GGML_NUMA_STRATEGY_NUMACTL,  GGML_NUMA_STRATEGY_MIRROR,
};
#define N_STRATEGIES ((int) (sizeof all_strategies / sizeof all_strategies[0]))

static hwloc_topology_t load_topology(const char *name)
{
    const char *srcdir = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/topologies/%s", srcdir ? srcdir : ".", name);
    hwloc_topology_t topology;
    if (hwloc_topology_init(&topology) != 0)
        return NULL;
    if (hwloc_topology_set_xml(topology, path) != 0 || hwloc_topology_load(topology) != 0) {
        hwloc_topology_destroy(topology);
        printf("Bail out! cannot load topology %s\n", path);
        exit(99);
    }
    return topology;
}

/* A bitmap given as a PU list ("0-1,8"), in a new bitmap. */
static hwloc_bitmap_t cpus(const char *list)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_list_sscanf(set, list);
    return set;
}

/* A plan of n threads, as "PUs@node" per thread separated by spaces
 * ("-@0" for an unbound thread), in a static string. */
static const char *plan_text(const struct ggml__numa_layout *layout, int n, const bool *cpumask, bool strict)
{
    static char text[4096];
    struct ggml__thread_place places[MAX_TEST_THREADS];
    text[0] = '\0';
    if (!ggml__numa_plan_threads(layout, n, cpumask, strict, places))
        return "(plan failed)";
    size_t len = 0;
    for (int t = 0; t < n; t++) {
        char list[256] = "-";
        if (places[t].cpuset != NULL)
            hwloc_bitmap_list_snprintf(list, sizeof list, places[t].cpuset);
        len += (size_t) snprintf(text + len, sizeof text - len, "%s%s@%d", t ? " " : "", list, places[t].node);
    }
    ggml__numa_places_free(places, n);
    return text;
}

/* The buffer placements for WEIGHTS, COMPUTE and ANY, as "policy[:node]"
 * joined by spaces (F first touch, I interleave, B bind, R replicate). */
static const char *buffers_text(const struct ggml__numa_layout *layout)
{
    static char text[64];
    static const enum ggml_backend_buffer_usage usages[] = {
        GGML_BACKEND_BUFFER_USAGE_WEIGHTS, GGML_BACKEND_BUFFER_USAGE_COMPUTE, GGML_BACKEND_BUFFER_USAGE_ANY
    };
    size_t len = 0;
    for (int i = 0; i < 3; i++) {
        struct ggml__buffer_place p = ggml__numa_plan_buffer(layout, usages[i]);
        const char letter = "FIBR"[p.policy];
        if (p.policy == GGML__MEM_BIND)
            len += (size_t) snprintf(text + len, sizeof text - len, "%s%c:%d", i ? " " : "", letter, p.node);
        else
            len += (size_t) snprintf(text + len, sizeof text - len, "%s%c", i ? " " : "", letter);
    }
    return text;
}

/* Layout of strategy on topology for a process allowed the PUs in list
 * (NULL: the topology's allowed set), called from caller_pu. */
static void layout_of(struct ggml__numa_layout *layout, hwloc_topology_t topology, enum ggml_numa_strategy strategy,
                      const char *allowed_list, int caller_pu)
{
    hwloc_bitmap_t allowed = allowed_list ? cpus(allowed_list) : NULL;
    if (!ggml__numa_layout_init(layout, topology, strategy, allowed, caller_pu)) {
        printf("Bail out! out of memory\n");
        exit(99);
    }
    hwloc_bitmap_free(allowed);
}

/* ------------------------------------------------------------- topologies */

static void test_one_node(void)
{
    hwloc_topology_t topology = load_topology("one-node.xml");
    for (int i = 0; i < N_STRATEGIES; i++) {
        const char *name = ggml__numa_strategy_name(all_strategies[i]);
        struct ggml__numa_layout layout;
        layout_of(&layout, topology, all_strategies[i], NULL, 3);
        is_int(layout.n_nodes, 1, "one node, %s: one node", name);
        is_int(layout.strategy, GGML_NUMA_STRATEGY_DISABLED, "one node, %s behaves as DISABLED", name);
        is_str(plan_text(&layout, 4, NULL, false), "-@0 -@0 -@0 -@0", "one node, %s: threads not bound", name);
        is_str(buffers_text(&layout), "F F F", "one node, %s: buffers first touch", name);
        ggml__numa_layout_free(&layout);
    }
    is_int(ggml__numa_default_threads(topology, NULL), 4, "one node: default threads = 4 cores");
    hwloc_topology_destroy(topology);
}

static void test_two_sockets(void)
{
    /* nodes 0..3 hold PUs 8n..8n+7; core c of node n is PUs 8n+2c, 8n+2c+1 */
    hwloc_topology_t topology = load_topology("two-sockets-two-nodes.xml");
    struct ggml__numa_layout layout;

    layout_of(&layout, topology, GGML_NUMA_STRATEGY_DISTRIBUTE, NULL, 0);
    is_int(layout.n_nodes, 4, "2x2: four nodes");
    is_int(layout.strategy, GGML_NUMA_STRATEGY_DISTRIBUTE, "2x2: DISTRIBUTE in effect");
    for (int i = 0; i < 4; i++)
        is_int(layout.nodes[i]->os_index, i, "2x2: node %d is OS node %d", i, i);
    is_str(plan_text(&layout, 8, NULL, false), "0-1@0 8-9@1 16-17@2 24-25@3 2-3@0 10-11@1 18-19@2 26-27@3",
           "2x2 DISTRIBUTE: thread t on node t mod 4, each on the next core of its node");
    is_str(buffers_text(&layout), "I F F", "2x2 DISTRIBUTE: weights interleaved, the rest first touch");
    {
        /* 17 threads over 16 cores: the 17th goes round to node 0's first core */
        const char *text = plan_text(&layout, 17, NULL, false);
        const char *last = strrchr(text, ' ');
        is_str(last ? last + 1 : text, "0-1@0", "2x2 DISTRIBUTE: thread 16 of 17 shares node 0's first core");
    }
    is_int(ggml__numa_default_threads(topology, NULL), 16, "2x2: default threads = 16 cores");

    bool mask[GGML_MAX_N_THREADS] = { false };
    mask[5] = mask[12] = true;
    is_str(plan_text(&layout, 3, mask, true), "5@0 12@1 5@0", "2x2: a strict cpumask wins over DISTRIBUTE");
    is_str(plan_text(&layout, 2, mask, false), "5,12@0 5,12@0", "2x2: a cpumask without strict_cpu: every thread gets it");
    ggml__numa_layout_free(&layout);

    layout_of(&layout, topology, GGML_NUMA_STRATEGY_MIRROR, NULL, 0);
    is_str(plan_text(&layout, 4, NULL, false), "0-1@0 8-9@1 16-17@2 24-25@3", "2x2 MIRROR: threads as DISTRIBUTE");
    is_str(buffers_text(&layout), "R F F", "2x2 MIRROR: weights one copy per node, compute first touch");
    ggml__numa_layout_free(&layout);

    layout_of(&layout, topology, GGML_NUMA_STRATEGY_ISOLATE, NULL, 19);
    is_int(layout.caller_node, 2, "2x2 ISOLATE: a caller on PU 19 is on node 2");
    is_str(plan_text(&layout, 5, NULL, false), "16-17@2 18-19@2 20-21@2 22-23@2 16-17@2",
           "2x2 ISOLATE: every thread on the caller's node, one core each, then round again");
    is_str(buffers_text(&layout), "B:2 B:2 B:2", "2x2 ISOLATE: every buffer bound to the caller's node");
    ggml__numa_layout_free(&layout);

    layout_of(&layout, topology, GGML_NUMA_STRATEGY_NUMACTL, NULL, 0);
    is_int(layout.strategy, GGML_NUMA_STRATEGY_NUMACTL, "2x2: NUMACTL in effect");
    is_str(plan_text(&layout, 3, NULL, false), "-@0 -@0 -@0", "2x2 NUMACTL: threads keep the process's cpuset");
    is_str(buffers_text(&layout), "F F F", "2x2 NUMACTL: buffers keep the process's memory policy");
    ggml__numa_layout_free(&layout);

    layout_of(&layout, topology, GGML_NUMA_STRATEGY_DISABLED, NULL, 0);
    is_str(plan_text(&layout, 3, NULL, false), "-@0 -@0 -@0", "2x2 DISABLED: threads not bound");
    is_str(buffers_text(&layout), "F F F", "2x2 DISABLED: buffers first touch");
    ggml__numa_layout_free(&layout);

    /* a process bound to part of the machine (taskset, numactl, a cgroup) */
    layout_of(&layout, topology, GGML_NUMA_STRATEGY_DISTRIBUTE, "8-15", 9);
    is_int(layout.n_nodes, 1, "2x2, process on node 1 only: one node");
    is_int(layout.strategy, GGML_NUMA_STRATEGY_DISABLED, "2x2, process on node 1 only: DISTRIBUTE behaves as DISABLED");
    ggml__numa_layout_free(&layout);
    layout_of(&layout, topology, GGML_NUMA_STRATEGY_DISTRIBUTE, "0-1,8-9", 0);
    is_int(layout.n_nodes, 2, "2x2, process on one core of nodes 0 and 1: two nodes");
    is_str(plan_text(&layout, 4, NULL, false), "0-1@0 8-9@1 0-1@0 8-9@1",
           "2x2, process on one core of nodes 0 and 1: threads stay inside its cpuset");
    is_int(ggml__numa_default_threads(topology, layout.allowed), 2, "2x2, process on two cores: default threads = 2");
    ggml__numa_layout_free(&layout);

    /* the text ggml-backend-info prints */
    layout_of(&layout, topology, GGML_NUMA_STRATEGY_DISTRIBUTE, NULL, 0);
    char text[2048];
    size_t need = ggml__numa_describe(&layout, 2, text, sizeof text);
    is_int(need, strlen(text), "describe: returns the length it wrote");
    ok(strstr(text, "strategy: DISTRIBUTE\n") != NULL, "describe: names the strategy");
    ok(strstr(text, "  node 3 (OS node 3): PUs 24-31\n") != NULL, "describe: lists each node's PUs");
    ok(strstr(text, "  thread 1: node 1, PUs 8-9\n") != NULL, "describe: lists each thread's place");
    ok(strstr(text, "  weights: interleaved over the nodes\n") != NULL, "describe: lists the buffer placements");
    char small[16];
    is_int(ggml__numa_describe(&layout, 2, small, sizeof small), need, "describe into 16 bytes: the full length");
    is_int(strlen(small), sizeof small - 1, "describe into 16 bytes: cut and terminated");
    ggml__numa_layout_free(&layout);
    hwloc_topology_destroy(topology);
}

static void test_eight_nodes_interleaved(void)
{
    /* core c of node n is PU n + 8c: numbering interleaves across nodes */
    hwloc_topology_t topology = load_topology("eight-nodes-interleaved.xml");
    struct ggml__numa_layout layout;
    layout_of(&layout, topology, GGML_NUMA_STRATEGY_DISTRIBUTE, NULL, 0);
    is_int(layout.n_nodes, 8, "8 nodes: eight nodes");
    char want[1024] = "";
    size_t len = 0;
    for (int t = 0; t < 16; t++)
        len += (size_t) snprintf(want + len, sizeof want - len, "%s%d@%d", t ? " " : "", t % 8 + 8 * (t / 8), t % 8);
    is_str(plan_text(&layout, 16, NULL, false), want,
           "8 interleaved nodes DISTRIBUTE: thread t on node t mod 8, on PU node + 8 * round");
    ggml__numa_layout_free(&layout);

    layout_of(&layout, topology, GGML_NUMA_STRATEGY_ISOLATE, NULL, 11);
    is_int(layout.caller_node, 3, "8 interleaved nodes: PU 11 is on node 3");
    is_str(plan_text(&layout, 4, NULL, false), "3@3 11@3 19@3 27@3",
           "8 interleaved nodes ISOLATE: the caller's node's PUs 3, 11, 19, 27");
    ggml__numa_layout_free(&layout);
    hwloc_topology_destroy(topology);
}

static void test_hybrid(void)
{
    /* nodes of PUs 0-5 and 6-11; performance cores 4, 5, 10, 11 */
    hwloc_topology_t topology = load_topology("hybrid.xml");
    is_int(ggml__numa_default_threads(topology, NULL), 4, "hybrid: default threads = the 4 performance cores");
    hwloc_bitmap_t efficiency_only = cpus("0-3,6-9");
    is_int(ggml__numa_default_threads(topology, efficiency_only), 8,
           "hybrid, process on efficiency cores only: default threads = 8");
    hwloc_bitmap_free(efficiency_only);
    struct ggml__numa_layout layout;
    layout_of(&layout, topology, GGML_NUMA_STRATEGY_DISTRIBUTE, NULL, 0);
    is_str(plan_text(&layout, 6, NULL, false), "4@0 10@1 5@0 11@1 0@0 6@1",
           "hybrid DISTRIBUTE: performance cores first, then efficiency cores in order");
    ggml__numa_layout_free(&layout);
    hwloc_topology_destroy(topology);
}

static void test_restricted(void)
{
    /* nodes of PUs 0-3 and 4-7; PUs 2 and 3 are not allowed */
    hwloc_topology_t topology = load_topology("restricted.xml");
    struct ggml__numa_layout layout;
    layout_of(&layout, topology, GGML_NUMA_STRATEGY_DISTRIBUTE, NULL, 0);
    char list[64];
    hwloc_bitmap_list_snprintf(list, sizeof list, layout.allowed);
    is_str(list, "0-1,4-7", "restricted: the allowed PUs exclude 2 and 3");
    is_int(layout.n_nodes, 2, "restricted: two nodes");
    is_str(plan_text(&layout, 4, NULL, false), "0-1@0 4-5@1 0-1@0 6-7@1",
           "restricted DISTRIBUTE: node 0's one allowed core is reused, PUs 2-3 never used");
    is_int(ggml__numa_default_threads(topology, NULL), 3, "restricted: default threads = 3 allowed cores");
    ggml__numa_layout_free(&layout);
    hwloc_topology_destroy(topology);
}

/* The two-node example of ggml_numa_init(3), as the page states it. */
static void test_man_page_example(void)
{
    hwloc_topology_t topology;
    if (hwloc_topology_init(&topology) != 0 || hwloc_topology_set_synthetic(topology, "numa:2 core:4 pu:1") != 0 ||
        hwloc_topology_load(topology) != 0) {
        printf("Bail out! cannot build the synthetic topology\n");
        exit(99);
    }
    static const struct {
        enum ggml_numa_strategy strategy;
        const char *threads, *buffers;
    } want[] = {
        { GGML_NUMA_STRATEGY_DISABLED, "-@0 -@0 -@0 -@0", "F F F" },
        { GGML_NUMA_STRATEGY_DISTRIBUTE, "0@0 4@1 1@0 5@1", "I F F" },
        { GGML_NUMA_STRATEGY_ISOLATE, "4@1 5@1 6@1 7@1", "B:1 B:1 B:1" },
        { GGML_NUMA_STRATEGY_NUMACTL, "-@0 -@0 -@0 -@0", "F F F" },
        { GGML_NUMA_STRATEGY_MIRROR, "0@0 4@1 1@0 5@1", "R F F" },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *name = ggml__numa_strategy_name(want[i].strategy);
        struct ggml__numa_layout layout;
        layout_of(&layout, topology, want[i].strategy, NULL, 5);
        is_str(plan_text(&layout, 4, NULL, false), want[i].threads, "ggml_numa_init(3) example, %s: threads", name);
        is_str(buffers_text(&layout), want[i].buffers, "ggml_numa_init(3) example, %s: buffers", name);
        ggml__numa_layout_free(&layout);
    }
    hwloc_topology_destroy(topology);
}

static void test_no_topology(void)
{
    struct ggml__numa_layout layout;
    layout_of(&layout, NULL, GGML_NUMA_STRATEGY_MIRROR, NULL, -1);
    is_int(layout.strategy, GGML_NUMA_STRATEGY_DISABLED, "no topology: MIRROR behaves as DISABLED");
    is_str(plan_text(&layout, 2, NULL, false), "-@0 -@0", "no topology: threads not bound");
    is_str(buffers_text(&layout), "F F F", "no topology: buffers first touch");
    is_int(ggml__numa_default_threads(NULL, NULL), 1, "no topology: default threads = 1");
    ggml__numa_layout_free(&layout);
}

/* ------------------------------------------------------------ public calls */

/* NUMA nodes with a CPU this process may use, as hwloc sees this machine,
 * counted directly from hwloc (nodes with the same CPUs count once). */
static int machine_nodes(void)
{
    hwloc_topology_t topology;
    if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0)
        return 1;
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topology, bound, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(bound, hwloc_topology_get_allowed_cpuset(topology));
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    int n = 0;
    for (hwloc_obj_t node = NULL; (node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) != NULL;)
        if (hwloc_bitmap_intersects(node->cpuset, bound) && !hwloc_bitmap_isincluded(node->cpuset, seen)) {
            hwloc_bitmap_or(seen, seen, node->cpuset);
            n++;
        }
    hwloc_bitmap_free(seen);
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(topology);
    return n > 0 ? n : 1;
}

static void test_public_calls(void)
{
    ok(!ggml_is_numa(), "ggml_is_numa is false before ggml_numa_init");

    ggml_numa_init((enum ggml_numa_strategy) 99);
    logged_one_error("ggml_numa_init(99): one error");
    ggml_numa_init(GGML_NUMA_STRATEGY_COUNT);
    logged_one_error("ggml_numa_init(COUNT): one error");
    ok(!ggml_is_numa(), "an invalid strategy settles nothing");

    ggml_numa_init(GGML_NUMA_STRATEGY_DISTRIBUTE);
    is_int(tap_log_errors(), 0, "ggml_numa_init(DISTRIBUTE) logs no error on this machine");
    const int nodes = machine_nodes();
    is_int(ggml_is_numa(), nodes > 1, "ggml_is_numa matches this machine's %d usable node(s)", nodes);
    ggml_numa_init(GGML_NUMA_STRATEGY_MIRROR);
    is_int(tap_log_errors(), 0, "a second ggml_numa_init is no error");
    ok(strstr(tap_last_log(), "already DISTRIBUTE") != NULL, "a second ggml_numa_init says the first one stands");

    ggml_backend_reg_t reg = ggml_backend_cpu_reg();
    is_ptr(ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_numa_init"), (void *) ggml_numa_init,
           "proc address ggml_backend_cpu_numa_init");
    is_ptr(ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_is_numa"), (void *) ggml_is_numa,
           "proc address ggml_backend_cpu_is_numa");
    typedef size_t (*describe_fn)(int n_threads, char *buf, size_t size);
    describe_fn describe = (describe_fn) ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_describe_placement");
    ok(describe != NULL, "proc address ggml_backend_cpu_describe_placement");
    if (describe != NULL) {
        char text[4096];
        size_t need = describe(2, text, sizeof text);
        ok(need > 0 && need == strlen(text), "the placement text is %zu bytes", need);
        ok(strncmp(text, "topology: ", 10) == 0, "the placement text starts with the topology");
        ok(strstr(text, nodes > 1 ? "strategy: DISTRIBUTE" : "strategy: DISABLED (DISTRIBUTE requested") != NULL,
           "the placement text names the strategy in effect");
        ok(strstr(text, "  thread 1: ") != NULL, "the placement text has a line per thread");
        is_int(describe(2, NULL, 0), need, "with no buffer it returns the length needed");
        describe(2, NULL, 10);
        logged_one_error("a NULL buffer with a size: one error");
    }
}

int main(void)
{
    tap_capture_log();
    test_one_node();
    test_two_sockets();
    test_eight_nodes_interleaved();
    test_hybrid();
    test_restricted();
    test_man_page_example();
    test_no_topology();
    test_public_calls();
    return tap_done();
}
