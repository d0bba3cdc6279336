/*
 * test-rpc-wire - the RPC protocol's messages (lib/rpc/wire.c): the
 * record layout of protocol 5.1.0 byte by byte, the command numbers and
 * payload sizes, and a catalog of malformed tensors and graphs, each of
 * which the checks must refuse with a reason (and the well-formed
 * neighbours they must accept).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "wire.h"
#include "tap.h"

/* ------------------------------------------------------------ the layout */

static struct rpc_wire_tensor sample_tensor(void)
{
    struct rpc_wire_tensor t;
    memset(&t, 0, sizeof t);
    t.id = 0x1122334455667788ull;
    t.type = GGML_TYPE_F32;
    t.buffer = 0xa1a2a3a4a5a6a7a8ull;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        t.ne[i] = 0x100u + (uint32_t) i;
        t.nb[i] = 0x200u + (uint32_t) i;
    }
    t.op = GGML_OP_ADD;
    for (int i = 0; i < 16; i++)
        t.op_params[i] = -1 - i;
    t.flags = GGML_TENSOR_FLAG_OUTPUT;
    for (int i = 0; i < GGML_MAX_SRC; i++)
        t.src[i] = 0xc000000000000000ull + (uint64_t) i;
    t.view_src = 0xd1d2d3d4d5d6d7d8ull;
    t.view_offs = 0x0102030405060708ull;
    t.data = 0xe1e2e3e4e5e6e7e8ull;
    strcpy(t.name, "sample");
    t.use_count = 7;
    return t;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t) le64((const uint8_t[8]) { p[0], p[1], p[2], p[3], 0, 0, 0, 0 });
}

static void test_layout(void)
{
    const struct rpc_wire_tensor t = sample_tensor();
    uint8_t rec[RPC_WIRE_TENSOR_SIZE + 1];
    memset(rec, 0xee, sizeof rec);
    rpc_wire_put_tensor(rec, &t);
    /* the offsets of upstream's packed struct rpc_tensor, from its field sizes */
    bool at = le64(rec + 0) == t.id && le32(rec + 8) == t.type && le64(rec + 12) == t.buffer;
    for (int i = 0; i < 4; i++)
        at = at && le32(rec + 20 + 4 * i) == t.ne[i] && le32(rec + 36 + 4 * i) == t.nb[i];
    at = at && le32(rec + 52) == t.op;
    for (int i = 0; i < 16; i++)
        at = at && (int32_t) le32(rec + 56 + 4 * i) == t.op_params[i];
    at = at && le32(rec + 120) == (uint32_t) t.flags;
    for (int i = 0; i < 10; i++)
        at = at && le64(rec + 124 + 8 * i) == t.src[i];
    at = at && le64(rec + 204) == t.view_src && le64(rec + 212) == t.view_offs && le64(rec + 220) == t.data &&
         memcmp(rec + 228, "sample", 7) == 0 && le32(rec + 292) == 7;
    ok(at && rec[RPC_WIRE_TENSOR_SIZE] == 0xee, "a tensor record is 296 bytes at protocol 5.1.0's offsets, little-endian");
    struct rpc_wire_tensor back;
    memset(&back, 0x55, sizeof back);
    rpc_wire_get_tensor(&back, rec);
    bool same = back.id == t.id && back.type == t.type && back.buffer == t.buffer && back.op == t.op &&
                back.flags == t.flags && back.view_src == t.view_src && back.view_offs == t.view_offs &&
                back.data == t.data && back.use_count == t.use_count && memcmp(back.name, t.name, GGML_MAX_NAME) == 0;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        same = same && back.ne[i] == t.ne[i] && back.nb[i] == t.nb[i];
    for (int i = 0; i < 16; i++)
        same = same && back.op_params[i] == t.op_params[i];
    for (int i = 0; i < GGML_MAX_SRC; i++)
        same = same && back.src[i] == t.src[i];
    ok(same, "a record decodes to the tensor it encodes, every field");

    ok(RPC_WIRE_HELLO == 14 && RPC_WIRE_ALLOC_BUFFER == 0 && RPC_WIRE_GRAPH_COMPUTE == 10 &&
           RPC_WIRE_MEMSET_TENSOR == 17 && RPC_WIRE_CMD_COUNT == 18,
       "command numbers: ALLOC_BUFFER 0, GRAPH_COMPUTE 10, HELLO 14, MEMSET_TENSOR 17, 18 commands");
    ok(strcmp(rpc_wire_cmd_name(RPC_WIRE_GET_ALLOC_SIZE), "GET_ALLOC_SIZE") == 0 &&
           strcmp(rpc_wire_cmd_name(99), "unknown") == 0,
       "command names, 'unknown' past the last");
}

/* ------------------------------------------------------------- the sizes */

static void test_sizes(void)
{
    static const struct { unsigned cmd; uint64_t size; } exact[] = {
        { RPC_WIRE_ALLOC_BUFFER, 12 },    { RPC_WIRE_GET_ALIGNMENT, 4 },  { RPC_WIRE_GET_MAX_SIZE, 4 },
        { RPC_WIRE_BUFFER_GET_BASE, 8 },  { RPC_WIRE_FREE_BUFFER, 8 },    { RPC_WIRE_BUFFER_CLEAR, 9 },
        { RPC_WIRE_SET_TENSOR_HASH, 312 }, { RPC_WIRE_GET_TENSOR, 312 },  { RPC_WIRE_COPY_TENSOR, 592 },
        { RPC_WIRE_GET_DEVICE_MEMORY, 4 }, { RPC_WIRE_INIT_TENSOR, 296 }, { RPC_WIRE_GET_ALLOC_SIZE, 3260 },
        { RPC_WIRE_HELLO, 24 },           { RPC_WIRE_DEVICE_COUNT, 0 },  { RPC_WIRE_GRAPH_RECOMPUTE, 4 },
        { RPC_WIRE_MEMSET_TENSOR, 313 },
    };
    bool all = true;
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        const bool good = rpc_wire_request_size_ok(exact[i].cmd, exact[i].size) &&
                          !rpc_wire_request_size_ok(exact[i].cmd, exact[i].size + 1) &&
                          (exact[i].size == 0 || !rpc_wire_request_size_ok(exact[i].cmd, exact[i].size - 1));
        if (!good)
            tap_diag("%s: %llu bytes", rpc_wire_cmd_name(exact[i].cmd), (unsigned long long) exact[i].size);
        all = all && good;
    }
    ok(all, "fixed-size requests: exactly their size, one byte more or less refused");
    ok(rpc_wire_request_size_ok(RPC_WIRE_SET_TENSOR, 304) && rpc_wire_request_size_ok(RPC_WIRE_SET_TENSOR, 304 + 4096) &&
           !rpc_wire_request_size_ok(RPC_WIRE_SET_TENSOR, 303),
       "SET_TENSOR: a record and an offset at least, then the data");
    ok(rpc_wire_request_size_ok(RPC_WIRE_GRAPH_COMPUTE, 12) && !rpc_wire_request_size_ok(RPC_WIRE_GRAPH_COMPUTE, 11),
       "GRAPH_COMPUTE: the three counts at least");
    ok(!rpc_wire_request_size_ok(RPC_WIRE_CMD_COUNT, 0) && !rpc_wire_request_size_ok(255, 12),
       "unknown commands have no valid size");
    ok(rpc_wire_reply_size(RPC_WIRE_ALLOC_BUFFER) == 16 && rpc_wire_reply_size(RPC_WIRE_HELLO) == 28 &&
           rpc_wire_reply_size(RPC_WIRE_SET_TENSOR) == -1 && rpc_wire_reply_size(RPC_WIRE_GRAPH_COMPUTE) == -1 &&
           rpc_wire_reply_size(RPC_WIRE_GRAPH_RECOMPUTE) == -1 && rpc_wire_reply_size(RPC_WIRE_GET_TENSOR) == -2 &&
           rpc_wire_reply_size(RPC_WIRE_FREE_BUFFER) == 0 && rpc_wire_reply_size(RPC_WIRE_DEVICE_COUNT) == 4,
       "reply sizes: ALLOC_BUFFER 16, HELLO 28, none for SET_TENSOR and the graphs, GET_TENSOR as asked");
    ok(rpc_wire_fnv1a("", 0) == 0xcbf29ce484222325ull && rpc_wire_fnv1a("a", 1) == 0xaf63dc4c8601ec8cull,
       "FNV-1a 64 of \"\" and \"a\" (the published test values)");
    ok(strcmp(rpc_wire_cmd_name(RPC_WIRE_AUTH), "AUTH") == 0 && RPC_WIRE_AUTH >= RPC_WIRE_CMD_COUNT &&
           rpc_wire_request_size_ok(RPC_WIRE_AUTH, 1) && rpc_wire_request_size_ok(RPC_WIRE_AUTH, RPC_WIRE_TOKEN_MAX) &&
           !rpc_wire_request_size_ok(RPC_WIRE_AUTH, 0) &&
           !rpc_wire_request_size_ok(RPC_WIRE_AUTH, RPC_WIRE_TOKEN_MAX + 1) && rpc_wire_reply_size(RPC_WIRE_AUTH) == 1,
       "AUTH (the extension): outside upstream's numbers, a token of 1 to %d bytes, a 1-byte reply",
       RPC_WIRE_TOKEN_MAX);
}

/* ------------------------------------------------------------ endpoints */

static bool endpoint_is(const char *endpoint, const char *host, uint16_t port)
{
    char got[64], why[RPC_WIRE_WHY_SIZE];
    uint16_t got_port = 0;
    return rpc_wire_parse_endpoint(endpoint, got, sizeof got, &got_port, why) && strcmp(got, host) == 0 &&
           got_port == port;
}

static bool endpoint_refused(const char *endpoint)
{
    char got[8], why[RPC_WIRE_WHY_SIZE] = "";
    uint16_t port = 0;
    return !rpc_wire_parse_endpoint(endpoint, got, sizeof got, &port, why) && why[0] != '\0';
}

static void test_endpoints(void)
{
    ok(endpoint_is("127.0.0.1:50052", "127.0.0.1", 50052) && endpoint_is("gpu:1", "gpu", 1) &&
           endpoint_is("[::1]:65535", "::1", 65535),
       "endpoints: an IPv4 address, a name, an IPv6 address in brackets");
    const char *const bad[] = { NULL, "", "nocolon", ":50052", "host:", "host:0", "host:65536", "host:5x", "[::1",
                                "[::1:5", "::1:50052", "[]:5", "a-name-too-long-for-8:5" };
    bool all = true;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!endpoint_refused(bad[i])) {
            all = false;
            tap_diag("accepted: %s", bad[i] != NULL ? bad[i] : "(null)");
        }
    ok(all, "endpoints: NULL, empty, no port, port 0, 65536 or not a number, unclosed or empty brackets, "
            "a bare IPv6 address, a host longer than the room for it: refused with a reason");
}

/* ------------------------------------------------------- tensor checks */

/* A valid 8 x 4 F32 tensor in buffer 0x10 at 0x1000. */
static struct rpc_wire_tensor good_tensor(uint64_t id)
{
    struct rpc_wire_tensor t;
    memset(&t, 0, sizeof t);
    t.id = id;
    t.type = GGML_TYPE_F32;
    t.buffer = 0x10;
    t.ne[0] = 8, t.ne[1] = 4, t.ne[2] = 1, t.ne[3] = 1;
    t.nb[0] = 4, t.nb[1] = 32, t.nb[2] = 128, t.nb[3] = 128;
    t.data = 0x1000;
    strcpy(t.name, "t");
    return t;
}

static bool refused(const struct rpc_wire_tensor *t, const char *expect_in_why)
{
    char why[RPC_WIRE_WHY_SIZE] = "";
    uint64_t extent;
    const bool accepted = rpc_wire_tensor_check(t, &extent, why);
    if (accepted || strstr(why, expect_in_why) == NULL)
        tap_diag("accepted %d, why '%s'", accepted, why);
    return !accepted && strstr(why, expect_in_why) != NULL;
}

static void test_tensor_checks(void)
{
    char why[RPC_WIRE_WHY_SIZE];
    uint64_t extent = 0;
    struct rpc_wire_tensor t = good_tensor(1);
    ok(rpc_wire_tensor_check(&t, &extent, why) && extent == 128, "a valid 8 x 4 F32 tensor: extent 128 bytes");

    t.type = GGML_TYPE_COUNT;
    ok(refused(&t, "not a ggml type"), "malformed: type GGML_TYPE_COUNT");
    t = good_tensor(1), t.type = 0xffffffffu;
    ok(refused(&t, "not a ggml type"), "malformed: type 2^32 - 1");
    t = good_tensor(1), t.type = 4;   /* Q4_2, removed from ggml: no block size */
    ok(refused(&t, "no block size"), "malformed: a removed type (4, Q4_2)");
    t = good_tensor(1), t.type = GGML_TYPE_Q4_0, t.ne[0] = 48, t.nb[0] = 18;
    ok(refused(&t, "multiple"), "malformed: Q4_0 rows of 48 values (not whole blocks)");
    t = good_tensor(1), t.type = GGML_TYPE_Q4_0, t.ne[0] = 64, t.nb[0] = 18, t.nb[1] = 36;
    ok(rpc_wire_tensor_check(&t, &extent, why) && extent == 3 * 36 + 18 + 18, "Q4_0 rows of two blocks: the extent counts blocks");
    /* I8, 2^63 - 2^31 elements (ggml counts them) at strides of 2^32 - 1: the extent passes 2^64 */
    t = good_tensor(1), t.type = GGML_TYPE_I8, t.ne[0] = 1, t.nb[0] = 1;
    t.ne[1] = 0xffffffffu, t.nb[1] = 0xffffffffu, t.ne[2] = 0x80000000u, t.nb[2] = 0xffffffffu, t.ne[3] = 1;
    ok(refused(&t, "overflows"), "malformed: strides whose extent overflows 64 bits");
    t = good_tensor(1), t.ne[2] = 0;
    ok(rpc_wire_tensor_check(&t, &extent, why) && extent == 0, "an empty tensor: extent 0");
    /* found by fuzz-rpc-libfuzzer: F32 data one byte off its alignment reached the kernels */
    t = good_tensor(1), t.data = 0x1001;
    ok(refused(&t, "not aligned to 4 bytes"), "malformed: F32 data at an odd address");
    t = good_tensor(1), t.nb[1] = 34;
    ok(refused(&t, "stride 1 of 34 bytes"), "malformed: F32 rows 34 bytes apart");
    t = good_tensor(1), t.type = GGML_TYPE_Q4_0, t.ne[0] = 64, t.nb[0] = 18, t.nb[1] = 36, t.data = 0x1002;
    ok(rpc_wire_tensor_check(&t, &extent, why), "Q4_0 blocks (18 bytes, half-precision scales) at an even address");
    t.data = 0x1003;
    ok(refused(&t, "not aligned to 2 bytes"), "malformed: Q4_0 blocks at an odd address");
    t = good_tensor(1), t.ne[1] = 1, t.nb[1] = 3, t.nb[2] = 5, t.nb[3] = 7;
    ok(rpc_wire_tensor_check(&t, &extent, why), "strides of extents of 1 are not used, so not checked");

    /* found by fuzz-rpc: ggml refuses the shape (with the empty extent counted as 1) though it is empty */
    t = good_tensor(1), t.ne[0] = 20090896, t.ne[1] = 6344704, t.ne[2] = 0, t.ne[3] = 4294836225u;
    ok(refused(&t, "more than ggml counts"), "malformed: an empty shape of 20090896 x 6344704 x 0 x 4294836225");
    t = good_tensor(1), t.ne[0] = 0xffffffffu, t.ne[1] = 0xffffffffu, t.ne[2] = 0xffffffffu, t.ne[3] = 1;
    t.nb[1] = t.nb[2] = t.nb[3] = 0;
    ok(refused(&t, "more than ggml counts"), "malformed: 2^96 elements with strides of 0");
    t = good_tensor(1);
    memset(t.name, 'x', sizeof t.name);
    ok(refused(&t, "NUL"), "malformed: a name of 64 bytes without a NUL");
    t = good_tensor(1), t.op = GGML_OP_COUNT;
    ok(refused(&t, "not a ggml op"), "malformed: op GGML_OP_COUNT");
    t = good_tensor(1), t.op = 0x80000000u;
    ok(refused(&t, "not a ggml op"), "malformed: op 2^31");
    static const enum ggml_op custom[] = { GGML_OP_MAP_CUSTOM1, GGML_OP_MAP_CUSTOM2, GGML_OP_MAP_CUSTOM3, GGML_OP_CUSTOM };
    for (size_t i = 0; i < 4; i++) {
        t = good_tensor(1), t.op = custom[i];
        ok(refused(&t, "custom ops"), "malformed: %s (function pointers in op_params)", ggml_op_name(custom[i]));
    }
    t = good_tensor(1), t.flags = 32;
    ok(refused(&t, "undefined bits"), "malformed: flag bit 32");
    t = good_tensor(1), t.flags = -1;
    ok(refused(&t, "undefined bits"), "malformed: every flag bit");
    t = good_tensor(1), t.buffer = 0;
    ok(refused(&t, "without a buffer"), "malformed: data without a buffer");
    t = good_tensor(1), t.buffer = 0, t.data = 0;
    ok(rpc_wire_tensor_check(&t, &extent, why), "a tensor without a buffer or data (graph metadata)");
    t = good_tensor(1), t.flags = GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_PARAM |
                                  GGML_TENSOR_FLAG_LOSS | GGML_TENSOR_FLAG_COMPUTE;
    ok(rpc_wire_tensor_check(&t, &extent, why), "every defined flag accepted");

    /* data ranges */
    ok(rpc_wire_range_ok(0x1000, 0x100, 0x1000, 0, 0x100), "range: the whole buffer");
    ok(rpc_wire_range_ok(0x1000, 0x100, 0x1080, 0x80, 0), "range: empty at the end");
    ok(!rpc_wire_range_ok(0x1000, 0x100, 0xfff, 0, 1), "malformed range: one byte below the base");
    ok(!rpc_wire_range_ok(0x1000, 0x100, 0x1000, 0x80, 0x81), "malformed range: one byte past the end");
    ok(!rpc_wire_range_ok(0x1000, 0x100, 0x1000, UINT64_MAX, 2), "malformed range: an offset that wraps around");
    ok(!rpc_wire_range_ok(0x1000, 0x100, 0x1010, 0, UINT64_MAX), "malformed range: a size that wraps around");
    ok(!rpc_wire_range_ok(UINT64_MAX - 4, 0x100, UINT64_MAX - 4, 0, 1), "malformed range: a buffer past the address space");
    ok(!rpc_wire_range_ok(0x1000, 0x100, 0x1101, 0, 0), "malformed range: an empty range past the end");
}

/* ------------------------------------------------------------- graphs */

/* Builds a GRAPH_COMPUTE payload of the n_tensors records t and the node ids; returns its size. */
static size_t build_graph(uint8_t *msg, uint32_t device, const uint64_t *nodes, uint32_t n_nodes,
                          const struct rpc_wire_tensor *t, uint32_t n_tensors)
{
    rpc_wire_put_u32(msg, device);
    rpc_wire_put_u32(msg + 4, n_nodes);
    for (uint32_t i = 0; i < n_nodes; i++)
        rpc_wire_put_u64(msg + 8 + 8 * i, nodes[i]);
    rpc_wire_put_u32(msg + 8 + 8 * n_nodes, n_tensors);
    for (uint32_t i = 0; i < n_tensors; i++)
        rpc_wire_put_tensor(msg + 12 + 8 * n_nodes + RPC_WIRE_TENSOR_SIZE * i, &t[i]);
    return 12 + 8 * (size_t) n_nodes + RPC_WIRE_TENSOR_SIZE * (size_t) n_tensors;
}

/* Parses and checks; true when both accept.  why receives the reason otherwise. */
static bool graph_accepted(const uint8_t *msg, size_t len, char *why)
{
    struct rpc_wire_graph g;
    struct rpc_wire_index index;
    if (!rpc_wire_graph_parse(msg, len, 64, &g, why))
        return false;
    if (!rpc_wire_graph_check(&g, &index, why))
        return index.entries == NULL && false;
    rpc_wire_index_free(&index);
    return true;
}

static bool graph_refused(const uint8_t *msg, size_t len, const char *expect_in_why)
{
    char why[RPC_WIRE_WHY_SIZE] = "";
    const bool accepted = graph_accepted(msg, len, why);
    if (accepted || strstr(why, expect_in_why) == NULL)
        tap_diag("accepted %d, why '%s'", accepted, why);
    return !accepted && strstr(why, expect_in_why) != NULL;
}

/* a = input, b = input, c = a + b, d = view of c; nodes c and d */
static uint32_t block_graph(struct rpc_wire_tensor *t, uint64_t *nodes)
{
    t[0] = good_tensor(0xa0);
    t[1] = good_tensor(0xb0);
    t[2] = good_tensor(0xc0), t[2].op = GGML_OP_ADD, t[2].src[0] = 0xa0, t[2].src[1] = 0xb0;
    t[3] = good_tensor(0xd0), t[3].op = GGML_OP_VIEW, t[3].src[0] = 0xc0, t[3].view_src = 0xc0;
    nodes[0] = 0xc0, nodes[1] = 0xd0;
    return 4;
}

static void test_graphs(void)
{
    static uint8_t msg[1 << 15];
    struct rpc_wire_tensor t[8];
    uint64_t nodes[4];
    char why[RPC_WIRE_WHY_SIZE] = "";
    uint32_t n = block_graph(t, nodes);
    size_t len = build_graph(msg, 0, nodes, 2, t, n);

    struct rpc_wire_graph g;
    struct rpc_wire_index index;
    bool good = rpc_wire_graph_parse(msg, len, 64, &g, why) && g.device == 0 && g.n_nodes == 2 && g.n_tensors == 4 &&
                rpc_wire_graph_check(&g, &index, why);
    ok(good && rpc_wire_index_find(&index, 0xc0) == 2 && rpc_wire_index_find(&index, 0xd0) == 3 &&
           rpc_wire_index_find(&index, 0xa0) == 0 && rpc_wire_index_find(&index, 0x99) == -1,
       "a valid graph parses and checks; its index finds every tensor, and not a missing one (%s)", why);
    if (good)
        rpc_wire_index_free(&index);

    ok(graph_refused(msg, 7, "cannot hold"), "malformed graph: 7 bytes");
    ok(graph_refused(msg, 8 + 8, "cannot hold"), "malformed graph: truncated in the node ids");
    ok(graph_refused(msg, len - 1, "take"), "malformed graph: one byte short");
    ok(graph_refused(msg, len + 1, "take"), "malformed graph: one byte too many");
    rpc_wire_put_u32(msg + 4, 0);
    ok(graph_refused(msg, len, "nodes"), "malformed graph: no nodes");
    rpc_wire_put_u32(msg + 4, 65);
    ok(graph_refused(msg, len, "nodes"), "malformed graph: more nodes than the limit");
    rpc_wire_put_u32(msg + 4, 0xffffffffu);
    ok(graph_refused(msg, len, "nodes"), "malformed graph: 2^32 - 1 nodes");
    len = build_graph(msg, 0, nodes, 2, t, n);
    rpc_wire_put_u32(msg + 8 + 16, 0xffffffffu);
    ok(graph_refused(msg, len, "tensors"), "malformed graph: 2^32 - 1 tensors");
    rpc_wire_put_u32(msg + 8 + 16, 0);
    ok(graph_refused(msg, len, "tensors"), "malformed graph: no tensors");

    n = block_graph(t, nodes), t[1].id = 0xa0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "two tensors have id"), "malformed graph: two tensors with one id");
    n = block_graph(t, nodes), t[0].id = 0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "id 0"), "malformed graph: a tensor with id 0");
    n = block_graph(t, nodes), nodes[1] = 0xe0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "not among the tensors"), "malformed graph: a node id without a tensor");
    n = block_graph(t, nodes), nodes[1] = 0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "not among the tensors"), "malformed graph: node id 0");
    n = block_graph(t, nodes), nodes[1] = 0xc0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "twice"), "malformed graph: a node listed twice");
    n = block_graph(t, nodes), t[2].src[1] = 0xbb;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "lacks"), "malformed graph: a source missing from the message");
    n = block_graph(t, nodes), t[2].src[9] = 0xbb;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "lacks"), "malformed graph: the tenth source missing");
    n = block_graph(t, nodes), t[3].view_src = 0xbb;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "view source"), "malformed graph: a view source missing");
    n = block_graph(t, nodes), t[2].src[0] = 0xc0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "depends on itself"), "malformed graph: a node its own source");
    n = block_graph(t, nodes), t[0].src[0] = 0xd0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "depends on itself"), "malformed graph: a cycle through three tensors and a view");
    n = block_graph(t, nodes), t[0].view_src = 0xa0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "depends on itself"), "malformed graph: a tensor its own view source");
    n = block_graph(t, nodes), t[2].op = GGML_OP_CUSTOM;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "custom ops"), "malformed graph: a custom op node");
    n = block_graph(t, nodes), t[0].type = 99;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_refused(msg, len, "not a ggml type"), "malformed graph: a leaf of no type");

    /* a long chain (deeper than any recursion should go) is fine, and a cycle at its end is found */
    static struct rpc_wire_tensor chain[60];
    for (uint32_t i = 0; i < 60; i++) {
        chain[i] = good_tensor(0x1000 + i);
        chain[i].src[0] = i > 0 ? 0x1000 + i - 1 : 0;
    }
    const uint64_t last = 0x1000 + 59;
    len = build_graph(msg, 0, &last, 1, chain, 60);
    ok(graph_accepted(msg, len, why), "a chain of 60 tensors is accepted (%s)", why);
    chain[0].src[0] = last;
    len = build_graph(msg, 0, &last, 1, chain, 60);
    ok(graph_refused(msg, len, "depends on itself"), "malformed graph: a chain of 60 closed into a cycle");
    /* shared sources (a diamond) are not cycles */
    n = block_graph(t, nodes), t[3].src[1] = 0xa0, t[3].src[2] = 0xb0;
    len = build_graph(msg, 0, nodes, 2, t, n);
    ok(graph_accepted(msg, len, why), "a diamond of shared sources is accepted (%s)", why);
}

int main(void)
{
    test_layout();
    test_sizes();
    test_endpoints();
    test_tensor_checks();
    test_graphs();
    return tap_done();
}
