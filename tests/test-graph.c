/*
 * test-graph.c - computation graphs built from structural ops: sizes and
 * overheads, forward expansion order, leafs and nodes, copies, lookups,
 * printing, dot output, and the failure paths (full graph, NULL tensors).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-cpu.h"
#include "tap.h"

static struct ggml_context *ctx;

/* The chain used by most tests:
 *   a (leaf) -> b = transpose(a) -> c = cont(b) -> d = reshape_1d(c)
 *   -> e = view_1d(d) -> f = cpy(e, x), with x a second leaf.
 * Nodes in order: b c d e f; leafs: a x. */
struct chain {
    struct ggml_tensor *a, *x, *b, *c, *d, *e, *f;
};

static struct chain make_chain(void)
{
    struct chain ch;
    ch.a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    ch.x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 6);
    ch.b = ggml_transpose(ctx, ch.a);
    ch.c = ggml_cont(ctx, ch.b);
    ch.d = ggml_reshape_1d(ctx, ch.c, 12);
    ch.e = ggml_view_1d(ctx, ch.d, 6, 0);
    ch.f = ggml_cpy(ctx, ch.e, ch.x);
    /* Names that are not substrings of one another (for the dot test). */
    ggml_set_name(ch.a, "lf_alpha");
    ggml_set_name(ch.x, "lf_xray");
    ggml_set_name(ch.b, "nd_bravo");
    ggml_set_name(ch.c, "nd_charlie");
    ggml_set_name(ch.d, "nd_delta");
    ggml_set_name(ch.e, "nd_echo");
    ggml_set_name(ch.f, "nd_foxtrot");
    return ch;
}

/* Every source that is itself a node of gf comes before its user. */
static bool sources_first(struct ggml_cgraph *gf)
{
    int n = ggml_graph_n_nodes(gf);
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *node = ggml_graph_node(gf, i);
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            struct ggml_tensor *src = node->src[s];
            if (!src || src == node)
                continue;
            for (int j = i + 1; j < n; j++)
                if (ggml_graph_node(gf, j) == src)
                    return false;
        }
    }
    return true;
}

/* ------------------------------------------------------ sizes, overhead */

static void test_new_graph(void)
{
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ok(gf != NULL, "ggml_new_graph");
    if (!gf)
        return;
    is_int(ggml_graph_size(gf), GGML_DEFAULT_GRAPH_SIZE, "ggml_new_graph has the default size");
    is_int(ggml_graph_n_nodes(gf), 0, "a new graph has no nodes");
    ok(ggml_graph_nodes(gf) != NULL, "ggml_graph_nodes is an array even when empty");

    struct ggml_cgraph *g10 = ggml_new_graph_custom(ctx, 10, false);
    ok(g10 != NULL, "ggml_new_graph_custom(10, false)");
    if (g10)
        is_int(ggml_graph_size(g10), 10, "custom graph size");
    struct ggml_cgraph *gg = ggml_new_graph_custom(ctx, 10, true);
    ok(gg != NULL, "ggml_new_graph_custom(10, true)");
    is_int(tap_log_errors(), 0, "creating graphs logs no error");
}

static void test_overhead(void)
{
    size_t ov = ggml_graph_overhead();
    is_uint(ov, ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, false),
            "ggml_graph_overhead is the default custom overhead");
    ok(ggml_graph_overhead_custom(100, true) > ggml_graph_overhead_custom(100, false),
       "grads make a graph larger");
    ok(ggml_graph_overhead_custom(200, false) > ggml_graph_overhead_custom(100, false),
       "a larger graph needs more memory");
    ok(ggml_graph_overhead_custom(100, false) >= 100 * 2 * sizeof(struct ggml_tensor *),
       "the overhead covers at least the node and leaf arrays");

    /* A context of exactly the overhead holds the graph (metadata only). */
    struct ggml_init_params params = { ov, NULL, true };
    struct ggml_context *gctx = ggml_init(params);
    ok(gctx != NULL, "context of ggml_graph_overhead() bytes");
    if (gctx) {
        struct ggml_cgraph *gf = ggml_new_graph(gctx);
        ok(gf != NULL, "a default graph fits in ggml_graph_overhead() bytes");
        ok(ggml_used_mem(gctx) <= ov, "the graph uses at most the overhead (%zu <= %zu)", ggml_used_mem(gctx), ov);
        is_int(tap_log_errors(), 0, "no error while the graph fits");
        ok(ggml_new_graph(gctx) == NULL, "a second graph does not fit");
        logged_one_error("a graph in a full context logs one error");
        ggml_free(gctx);
    }

    size_t ov100 = ggml_graph_overhead_custom(100, true);
    params.mem_size = ov100 + 3 * ggml_tensor_overhead();
    gctx = ggml_init(params);
    if (gctx) {
        struct ggml_cgraph *gf = ggml_new_graph_custom(gctx, 100, true);
        ok(gf != NULL, "a 100-node graph with grads fits in its overhead");
        struct ggml_tensor *t = ggml_new_tensor_1d(gctx, GGML_TYPE_F32, 4);
        ok(t != NULL, "tensors fit next to it");
        ok(ggml_new_graph_custom(gctx, 200, false) == NULL, "a 200-node graph does not fit in what is left");
        logged_one_error("the graph that does not fit logs one error");
        ggml_free(gctx);
    }
}

/* ----------------------------------------------------------- expansion */

static void test_expand(void)
{
    struct chain ch = make_chain();
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, ch.f);
    is_int(tap_log_errors(), 0, "expanding the chain logs no error");

    is_int(ggml_graph_n_nodes(gf), 5, "the chain has 5 nodes");
    struct ggml_tensor *want[5] = { ch.b, ch.c, ch.d, ch.e, ch.f };
    for (int i = 0; i < 5 && i < ggml_graph_n_nodes(gf); i++)
        is_ptr(ggml_graph_node(gf, i), want[i], "node %d is %s", i, want[i]->name);
    ok(sources_first(gf), "every source comes before its user");

    struct ggml_tensor **nodes = ggml_graph_nodes(gf);
    bool same = true;
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++)
        if (nodes[i] != ggml_graph_node(gf, i))
            same = false;
    ok(same, "ggml_graph_nodes lists the same nodes");

    is_ptr(ggml_graph_node(gf, -1), ch.f, "ggml_graph_node(-1) is the last node");
    is_ptr(ggml_graph_node(gf, -2), ch.e, "ggml_graph_node(-2)");
    is_ptr(ggml_graph_node(gf, -5), ch.b, "ggml_graph_node(-n) is the first node");
    is_int(tap_log_errors(), 0, "indexing nodes logs no error");

    ok(ggml_graph_node(gf, 5) == NULL, "ggml_graph_node(n) is NULL");
    logged_one_error("ggml_graph_node(n) logs one error");
    ok(ggml_graph_node(gf, -6) == NULL, "ggml_graph_node(-n-1) is NULL");
    logged_one_error("ggml_graph_node(-n-1) logs one error");

    /* Leafs are not nodes but are known to the graph. */
    bool leaf_is_node = false;
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++)
        if (ggml_graph_node(gf, i) == ch.a || ggml_graph_node(gf, i) == ch.x)
            leaf_is_node = true;
    ok(!leaf_is_node, "tensors without an op are leafs, not nodes");
    is_ptr(ggml_graph_get_tensor(gf, "lf_alpha"), ch.a, "ggml_graph_get_tensor finds a leaf");
    is_ptr(ggml_graph_get_tensor(gf, "lf_xray"), ch.x, "ggml_graph_get_tensor finds the second leaf");
    is_ptr(ggml_graph_get_tensor(gf, "nd_charlie"), ch.c, "ggml_graph_get_tensor finds a node");
    is_ptr(ggml_graph_get_tensor(gf, "nd_foxtrot"), ch.f, "ggml_graph_get_tensor finds the output");
    is_ptr(ggml_graph_get_tensor(gf, "zulu"), NULL, "ggml_graph_get_tensor of an unknown name is NULL");

    /* Expanding again adds nothing; a new output adds only itself. */
    ggml_build_forward_expand(gf, ch.f);
    is_int(ggml_graph_n_nodes(gf), 5, "expanding the same tensor twice adds nothing");
    ggml_build_forward_expand(gf, ch.c);
    is_int(ggml_graph_n_nodes(gf), 5, "expanding an inner node adds nothing");
    struct ggml_tensor *g = ggml_dup(ctx, ch.c);
    ggml_build_forward_expand(gf, g);
    is_int(ggml_graph_n_nodes(gf), 6, "a new user of an existing node adds one node");
    is_ptr(ggml_graph_node(gf, -1), g, "the new node is last");

    is_ptr(ggml_graph_get_grad(gf, ch.c), NULL, "no grad without grads");
    is_ptr(ggml_graph_get_grad_acc(gf, ch.c), NULL, "no grad accumulator without grads");
    is_ptr(ggml_graph_get_grad(gf, ch.a), NULL, "no grad for a leaf");
    is_int(tap_log_errors(), 0, "expansion and lookups log no error");
}

static void test_auto_names_and_params(void)
{
    struct ggml_cgraph *gf = ggml_new_graph_custom(ctx, 16, false);
    struct ggml_tensor *u = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor *v = ggml_dup(ctx, u);
    ggml_set_name(v, "");
    ggml_build_forward_expand(gf, v);
    is_str(ggml_get_name(u), "leaf_0", "an unnamed leaf is named leaf_<index>");
    is_str(ggml_get_name(v), "node_0", "an unnamed node is named node_<index>");

    /* A parameter is a node even without an op. */
    struct ggml_cgraph *gp = ggml_new_graph_custom(ctx, 16, false);
    struct ggml_tensor *p = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_param(p);
    struct ggml_tensor *q = ggml_cont(ctx, p);
    ggml_build_forward_expand(gp, q);
    is_int(ggml_graph_n_nodes(gp), 2, "a parameter and its user are both nodes");
    is_ptr(ggml_graph_node(gp, 0), p, "the parameter comes first");

    /* A cast refers to itself as src[1]: expansion must terminate. */
    struct ggml_cgraph *gc = ggml_new_graph_custom(ctx, 16, false);
    struct ggml_tensor *h = ggml_cast(ctx, u, GGML_TYPE_F16);
    ggml_build_forward_expand(gc, h);
    is_int(ggml_graph_n_nodes(gc), 1, "a cast is one node despite its self-reference");

    /* Diamond: two users of one node, joined again. */
    struct ggml_cgraph *gd = ggml_new_graph_custom(ctx, 16, false);
    struct ggml_tensor *base = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 4);
    struct ggml_tensor *top = ggml_cont(ctx, base);
    struct ggml_tensor *left = ggml_transpose(ctx, top);
    struct ggml_tensor *right = ggml_view_1d(ctx, top, 16, 0);
    struct ggml_tensor *join = ggml_cpy(ctx, left, right);
    ggml_build_forward_expand(gd, join);
    is_int(ggml_graph_n_nodes(gd), 4, "a diamond lists each node once");
    ok(sources_first(gd), "the diamond is in dependency order");
    is_ptr(ggml_graph_node(gd, 0), top, "the shared node comes first");
    is_int(tap_log_errors(), 0, "auto names and params log no error");
}

static void test_add_node(void)
{
    struct ggml_cgraph *g = ggml_new_graph_custom(ctx, 4, false);
    struct ggml_tensor *t[5];
    for (int i = 0; i < 5; i++)
        t[i] = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);

    ggml_graph_add_node(g, t[0]);
    is_int(ggml_graph_n_nodes(g), 1, "ggml_graph_add_node adds a node");
    is_ptr(ggml_graph_node(g, 0), t[0], "the added node is listed");
    for (int i = 1; i < 4; i++)
        ggml_graph_add_node(g, t[i]);
    is_int(ggml_graph_n_nodes(g), 4, "the graph is full at its size");
    is_int(tap_log_errors(), 0, "adding within the size logs no error");
    ggml_graph_add_node(g, t[4]);
    logged_one_error("adding past the size logs one error");
    is_int(ggml_graph_n_nodes(g), 4, "adding past the size changes nothing");
    is_ptr(ggml_graph_node(g, -1), t[3], "the last node is still the fourth");
}

/* ------------------------------------------------ copy, dup, clear, reset */

static void test_copy_and_clear(void)
{
    struct chain ch = make_chain();
    struct ggml_cgraph *gf = ggml_new_graph_custom(ctx, 8, false);
    ggml_build_forward_expand(gf, ch.f);

    struct ggml_cgraph *big = ggml_new_graph_custom(ctx, 64, false);
    ggml_graph_cpy(gf, big);
    is_int(tap_log_errors(), 0, "ggml_graph_cpy into a larger graph logs no error");
    is_int(ggml_graph_n_nodes(big), 5, "the copy has the same number of nodes");
    bool same = true;
    for (int i = 0; i < 5 && i < ggml_graph_n_nodes(big); i++)
        if (ggml_graph_node(big, i) != ggml_graph_node(gf, i))
            same = false;
    ok(same, "the copy lists the same nodes in the same order");
    is_int(ggml_graph_size(big), 64, "the copy keeps its own size");
    is_ptr(ggml_graph_get_tensor(big, "lf_alpha"), ch.a, "the copy knows the leafs");
    ggml_build_forward_expand(big, ch.f);
    is_int(ggml_graph_n_nodes(big), 5, "the copy remembers visited tensors");
    struct ggml_tensor *extra = ggml_dup(ctx, ch.f);
    ggml_build_forward_expand(big, extra);
    is_int(ggml_graph_n_nodes(big), 6, "the copy can grow past the original's size");
    is_int(ggml_graph_n_nodes(gf), 5, "the original is unchanged");

    struct ggml_cgraph *tiny = ggml_new_graph_custom(ctx, 2, false);
    ggml_graph_cpy(gf, tiny);
    logged_one_error("ggml_graph_cpy into a graph that is too small logs one error");
    is_int(ggml_graph_n_nodes(tiny), 0, "the too-small destination is left empty");

    struct ggml_cgraph *dup = ggml_graph_dup(ctx, gf, false);
    ok(dup != NULL, "ggml_graph_dup");
    if (dup) {
        is_int(ggml_graph_size(dup), ggml_graph_size(gf), "the duplicate has the same size");
        is_int(ggml_graph_n_nodes(dup), 5, "the duplicate has the same nodes");
        is_ptr(ggml_graph_node(dup, -1), ch.f, "the duplicate ends with the output");
        is_ptr(ggml_graph_get_grad(dup, ch.c), NULL, "the duplicate has no grads");
    }
    struct ggml_cgraph *dupg = ggml_graph_dup(ctx, gf, true);
    ok(dupg != NULL && ggml_graph_n_nodes(dupg) == 5, "ggml_graph_dup with forced grads");
    if (dupg)
        is_ptr(ggml_graph_get_grad(dupg, ch.c), NULL, "forced grads start empty");
    is_int(tap_log_errors(), 0, "ggml_graph_dup logs no error");

    ggml_graph_clear(gf);
    is_int(ggml_graph_n_nodes(gf), 0, "ggml_graph_clear removes the nodes");
    is_ptr(ggml_graph_get_tensor(gf, "lf_alpha"), NULL, "ggml_graph_clear forgets the leafs");
    ggml_build_forward_expand(gf, ch.f);
    is_int(ggml_graph_n_nodes(gf), 5, "after ggml_graph_clear the chain can be expanded again");
    is_int(tap_log_errors(), 0, "clearing logs no error");

    /* Reset needs grads; without them it must not crash. */
    ggml_graph_reset(gf);
    int errors = tap_log_errors();
    ok(errors <= 1, "ggml_graph_reset without grads logs at most one error (%d)", errors);
    is_int(ggml_graph_n_nodes(gf), 5, "ggml_graph_reset without grads leaves the nodes");
    ggml_graph_reset(NULL);
    is_int(tap_log_errors(), 0, "ggml_graph_reset(NULL) is harmless");
}

/* ------------------------------------------------------ print and dot */

static void test_print_and_dot(void)
{
    struct chain ch = make_chain();
    struct ggml_cgraph *gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, ch.f);

    ggml_graph_print(gf);
    is_int(ggml_graph_n_nodes(gf), 5, "ggml_graph_print leaves the graph as it was");
    is_int(tap_log_errors(), 0, "ggml_graph_print logs no error");

    char dir[] = "/tmp/ggml-test-graph-XXXXXX";
    if (!mkdtemp(dir)) {
        tap_skip(4, "mkdtemp failed");
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/graph.dot", dir);
    ggml_graph_dump_dot(gf, NULL, path);
    is_int(tap_log_errors(), 0, "ggml_graph_dump_dot logs no error");

    FILE *f = fopen(path, "r");
    ok(f != NULL, "ggml_graph_dump_dot wrote the file");
    if (f) {
        const char *names[] = { "lf_alpha", "lf_xray", "nd_bravo", "nd_charlie", "nd_delta", "nd_echo", "nd_foxtrot" };
        const int n_names = (int) (sizeof names / sizeof names[0]);
        int lines_with[7] = { 0 };
        bool digraph = false;
        int edges = 0;
        char line[4096];
        while (fgets(line, sizeof line, f)) {
            if (strstr(line, "digraph"))
                digraph = true;
            if (strstr(line, "->"))
                edges++;
            for (int i = 0; i < n_names; i++)
                if (strstr(line, names[i]))
                    lines_with[i]++;
        }
        fclose(f);
        ok(digraph, "the dot file declares a digraph");
        bool one_each = true;
        for (int i = 0; i < n_names; i++)
            if (lines_with[i] != 1) {
                one_each = false;
                tap_diag("%s appears on %d lines", names[i], lines_with[i]);
            }
        ok(one_each, "each node and leaf has exactly one line naming it");
        is_int(edges, 6, "one edge per source of each node");
    }
    remove(path);
    rmdir(dir);

    /* An unwritable path must not take the process down. */
    ggml_graph_dump_dot(gf, NULL, "/nonexistent-dir-for-ggml-test/graph.dot");
    logged_one_error("ggml_graph_dump_dot to an unwritable path logs one error");
}

/* ------------------------------------------------------ failure paths */

static void test_graph_full(void)
{
    struct ggml_cgraph *g = ggml_new_graph_custom(ctx, 4, false);
    struct ggml_tensor *t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 4);
    for (int i = 0; i < 6; i++)
        t = (i % 2) ? ggml_cont(ctx, t) : ggml_transpose(ctx, t);
    ggml_build_forward_expand(g, t);
    logged_one_error("expanding 6 nodes into a graph of 4 logs one error");
    ok(ggml_graph_n_nodes(g) <= 4, "the full graph holds at most its size (%d)", ggml_graph_n_nodes(g));

    /* Too many leafs overflow too. */
    struct ggml_cgraph *gl = ggml_new_graph_custom(ctx, 2, false);
    struct ggml_tensor *l1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor *l2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor *l3 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_build_forward_expand(gl, ggml_cpy(ctx, l1, l2));
    is_int(tap_log_errors(), 0, "two leafs and one node fit a graph of 2");
    ggml_build_forward_expand(gl, ggml_cpy(ctx, l3, l2));
    logged_one_error("a third leaf in a graph of 2 logs one error");
}

static void test_null_expand(void)
{
    struct ggml_cgraph *g = ggml_new_graph_custom(ctx, 8, false);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_build_forward_expand(g, ggml_dup(ctx, a));
    int before = ggml_graph_n_nodes(g);

    ggml_build_forward_expand(g, NULL);
    is_int(tap_log_errors(), 0, "expanding NULL adds no second message");
    is_int(ggml_graph_n_nodes(g), before, "expanding NULL adds no node");

    /* The usual way NULL arrives: a failed constructor upstream in the chain. */
    struct ggml_tensor *bad = ggml_reshape_1d(ctx, a, 5);
    logged_one_error("the failed reshape logs its one error");
    ggml_build_forward_expand(g, ggml_cont(ctx, ggml_transpose(ctx, bad)));
    is_int(tap_log_errors(), 0, "building on the failure logs nothing more");
    is_int(ggml_graph_n_nodes(g), before, "the failed chain adds no node");
}

/*
 * ggml_build_forward_select: both branches are in the graph, only the
 * selected one (and what it reads) carries GGML_TENSOR_FLAG_COMPUTE; a
 * later expand from the other branch marks it without adding nodes.
 */
static void test_select(void)
{
    struct ggml_tensor *src = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *deep = src;
    struct ggml_tensor *chain[64];
    for (int i = 0; i < 64; i++)
        deep = chain[i] = ggml_cont(ctx, i % 2 ? deep : ggml_transpose(ctx, deep));
    struct ggml_tensor *alt = ggml_cont(ctx, src);
    struct ggml_tensor *branches[2] = { deep, alt };

    struct ggml_cgraph *gf = ggml_new_graph_custom(ctx, 256, false);
    is_ptr(ggml_build_forward_select(gf, branches, 2, 1), alt, "select returns the chosen branch");
    /* 64 conts plus the 32 transposes feeding the even ones, plus alt */
    is_int(ggml_graph_n_nodes(gf), 64 + 32 + 1, "every branch is in the graph");
    ok(ggml_graph_node(gf, -1) == alt, "the selected branch is expanded last");
    ok(alt->flags & GGML_TENSOR_FLAG_COMPUTE, "the selected branch is marked for compute");
    bool none_marked = true;
    for (int i = 0; i < 64; i++)
        if (chain[i]->flags & GGML_TENSOR_FLAG_COMPUTE)
            none_marked = false;
    ok(none_marked, "the unselected branch is not marked for compute");
    ok(src->flags & GGML_TENSOR_FLAG_COMPUTE, "a shared source of the selected branch is marked");

    int before = ggml_graph_n_nodes(gf);
    ggml_build_forward_expand(gf, deep);
    is_int(ggml_graph_n_nodes(gf), before, "expanding a branch already present adds no node");
    bool all_marked = true;
    for (int i = 0; i < 64; i++)
        if (!(chain[i]->flags & GGML_TENSOR_FLAG_COMPUTE))
            all_marked = false;
    ok(all_marked, "expanding the other branch marks all of it");
    is_int(tap_log_errors(), 0, "no error logged");

    struct ggml_cgraph *bad = ggml_new_graph_custom(ctx, 16, false);
    ok(ggml_build_forward_select(bad, branches, 2, 2) == NULL, "select with idx out of range returns NULL");
    logged_one_error("select with idx out of range logs one error");
    ok(ggml_build_forward_select(bad, NULL, 2, 0) == NULL, "select with NULL tensors returns NULL");
    logged_one_error("select with NULL tensors logs one error");
    struct ggml_tensor *with_null[2] = { alt, NULL };
    ok(ggml_build_forward_select(bad, with_null, 2, 0) == NULL, "select with a NULL branch returns NULL");
    is_int(tap_log_errors(), 0, "a NULL branch propagates without a new message");

    struct ggml_tensor *plain = ggml_cont(ctx, src);
    struct ggml_cgraph *g2 = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g2, plain);
    ok(plain->flags & GGML_TENSOR_FLAG_COMPUTE, "ggml_build_forward_expand marks nodes for compute");
}

/*
 * ggml_build_forward_order: a chain added in order is not marked; a later
 * expand from a node using its end marks it, without moving or adding
 * nodes; computing the graph then computes it.  A part that nothing
 * computed reaches stays unmarked and unused.
 */
static void test_order(void)
{
    struct ggml_tensor *x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    for (int i = 0; i < 4; i++)
        ((float *) x->data)[i] = (float) (i + 1);
    struct ggml_tensor *a = ggml_scale(ctx, x, 2.0f);
    struct ggml_tensor *b = ggml_scale(ctx, a, 3.0f);
    struct ggml_tensor *unused = ggml_scale(ctx, x, -1.0f);
    struct ggml_cgraph *g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_order(g, b);
    ggml_build_forward_order(g, unused);
    is_int(ggml_graph_n_nodes(g), 3, "order adds the nodes");
    ok(ggml_graph_node(g, 0) == a && ggml_graph_node(g, 1) == b, "order puts sources first");
    ok(!(a->flags & GGML_TENSOR_FLAG_COMPUTE) && !(b->flags & GGML_TENSOR_FLAG_COMPUTE),
       "order marks nothing for compute");
    struct ggml_tensor *c = ggml_add(ctx, b, x);
    ggml_build_forward_expand(g, c);
    is_int(ggml_graph_n_nodes(g), 4, "the expand adds only its own node");
    ok(ggml_graph_node(g, 0) == a && ggml_graph_node(g, 1) == b && ggml_graph_node(g, 3) == c,
       "... and keeps the order's places");
    ok((a->flags & GGML_TENSOR_FLAG_COMPUTE) && (b->flags & GGML_TENSOR_FLAG_COMPUTE) &&
           !(unused->flags & GGML_TENSOR_FLAG_COMPUTE),
       "the expand marks what it reaches, not the rest");
    memset(unused->data, 0x7f, ggml_nbytes(unused));
    ok(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "the graph computes");
    bool right = true;
    for (int i = 0; i < 4; i++)
        right = right && ((float *) c->data)[i] == (float) (i + 1) * 7.0f;
    ok(right, "c = 6 x + x, through the ordered chain");
    ok(((unsigned char *) unused->data)[0] == 0x7f, "the unmarked node was not computed");
    ggml_build_forward_order(NULL, b);
    logged_one_error("order into a NULL graph logs one error");
}

int main(void)
{
    tap_capture_log();

    struct ggml_init_params params = { 32 * 1024 * 1024, NULL, false };
    ctx = ggml_init(params);
    if (!ok(ctx != NULL, "test context"))
        return tap_done();

    test_new_graph();
    test_overhead();
    test_expand();
    test_auto_names_and_params();
    test_add_node();
    test_copy_and_clear();
    test_print_and_dot();
    test_graph_full();
    test_null_expand();
    test_select();
    test_order();

    ggml_free(ctx);
    return tap_done();
}
