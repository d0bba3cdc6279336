/*
 * test-rpc-server - one RPC server connection (lib/rpc/server.c) over a
 * socket pair, the server in a thread of its own on the CPU backend: a
 * whole session of every command of protocol 5.1.0 with its results
 * checked against values computed here, the tensor cache of
 * SET_TENSOR_HASH, the session again on a server with a token (AUTH, this
 * library's extension, first), and a catalog of malformed requests (wrong
 * or missing tokens among them), each of which must end its connection
 * with a logged reason while the server's next connection works.
 *
 *   test-rpc-server             everything, the server in this process
 *   test-rpc-server HOST:PORT   the session only, against a running
 *                               ggml-rpc-server (tests/check-rpc-server.sh)
 */
#include "config.h"

#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "server.h"
#include "wire.h"
#include "tap.h"

static ggml_backend_t cpu;
static struct rpc_server_config config;
/* HOST:PORT of a server program to test instead of the server in this process; NULL for that one. */
static const char *remote;

/* ------------------------------------------------------ the connection */

struct session {
    int fd;                /* the client's end */
    int server_fd;
    pthread_t thread;
    bool server_result;    /* rpc_server_serve's */
};

static void *serve_thread(void *arg)
{
    struct session *s = arg;
    s->server_result = rpc_server_serve(&config, s->server_fd);
    shutdown(s->server_fd, SHUT_RDWR);
    return NULL;
}

static bool send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        const ssize_t put = send(fd, b, n, MSG_NOSIGNAL);
        if (put <= 0)
            return false;
        b += put;
        n -= (size_t) put;
    }
    return true;
}

static bool recv_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n > 0) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        if (poll(&pfd, 1, 20000) != 1)
            return false;
        const ssize_t got = recv(fd, b, n, 0);
        if (got <= 0)
            return false;
        b += got;
        n -= (size_t) got;
    }
    return true;
}

/*
 * A request: command, payload size, payload, in one send (so that a
 * server that refuses the header cannot close the connection between the
 * header and the payload and fail the send).
 */
static bool request(struct session *s, uint8_t cmd, const void *payload, uint64_t size)
{
    uint8_t *msg = malloc(9 + (size_t) size);
    if (msg == NULL)
        return false;
    msg[0] = cmd;
    rpc_wire_put_u64(msg + 1, size);
    if (size > 0)
        memcpy(msg + 9, payload, (size_t) size);
    const bool sent = send_all(s->fd, msg, 9 + (size_t) size);
    free(msg);
    return sent;
}

/* A reply of exactly want bytes into out. */
static bool answer(struct session *s, void *out, uint64_t want)
{
    uint8_t head[8];
    return recv_all(s->fd, head, 8) && rpc_wire_get_u64(head) == want && (want == 0 || recv_all(s->fd, out, (size_t) want));
}

/* Whether the server closed the connection (end of stream within 20 s, nothing before it). */
static bool closed(struct session *s)
{
    struct pollfd pfd = { s->fd, POLLIN, 0 };
    char byte;
    return poll(&pfd, 1, 20000) == 1 && recv(s->fd, &byte, 1, 0) == 0;
}

/* The token of the server with one. */
#define TOKEN "s3cret-t0ken"

/* AUTH with len bytes of token, answered with the byte 1. */
static bool auth(struct session *s, const char *token, size_t len)
{
    uint8_t out = 0;
    return request(s, RPC_WIRE_AUTH, token, len) && answer(s, &out, 1) && out == 1;
}

static bool hello(struct session *s)
{
    uint8_t caps[RPC_WIRE_CAPS_SIZE] = { 0 }, out[4 + RPC_WIRE_CAPS_SIZE];
    return request(s, RPC_WIRE_HELLO, caps, sizeof caps) && answer(s, out, sizeof out) && out[0] == 5 && out[1] == 1 &&
           out[2] == 0;
}

/* A TCP connection to remote, retried for 10 s while the server starts; -1 on failure. */
static int connect_remote(void)
{
    char host[256];
    const char *colon = strrchr(remote, ':');
    if (colon == NULL || (size_t) (colon - remote) >= sizeof host)
        return -1;
    memcpy(host, remote, (size_t) (colon - remote));
    host[colon - remote] = '\0';
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &found) != 0)
        return -1;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        fd = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
        if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
            usleep(100000);
        }
    }
    freeaddrinfo(found);
    return fd;
}

static bool open_session(struct session *s)
{
    if (remote != NULL) {
        s->fd = connect_remote();
        s->server_fd = -1;
        return s->fd >= 0;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return false;
    s->fd = sv[0];
    s->server_fd = sv[1];
    s->server_result = false;
    return pthread_create(&s->thread, NULL, serve_thread, s) == 0;
}

/* Ends the session from the client's side; returns the server's result. */
static bool close_session(struct session *s)
{
    if (s->server_fd < 0) {   /* a remote server: it sees the end of the stream */
        close(s->fd);
        return true;
    }
    shutdown(s->fd, SHUT_WR);
    pthread_join(s->thread, NULL);
    close(s->fd);
    close(s->server_fd);
    return s->server_result;
}

/* --------------------------------------------------------- messages */

static uint64_t alloc_buffer(struct session *s, uint64_t size, uint64_t *base)
{
    uint8_t in[12], out[16];
    rpc_wire_put_u32(in, 0);
    rpc_wire_put_u64(in + 4, size);
    if (!request(s, RPC_WIRE_ALLOC_BUFFER, in, sizeof in) || !answer(s, out, sizeof out))
        return 0;
    const uint64_t handle = rpc_wire_get_u64(out);
    uint8_t h[8], b[8];
    rpc_wire_put_u64(h, handle);
    if (handle == 0 || !request(s, RPC_WIRE_BUFFER_GET_BASE, h, 8) || !answer(s, b, 8))
        return 0;
    *base = rpc_wire_get_u64(b);
    return handle;
}

/* A contiguous F32 tensor of n values in buffer at data. */
static struct rpc_wire_tensor f32_tensor(uint64_t id, uint64_t buffer, uint64_t data, uint32_t n)
{
    struct rpc_wire_tensor t;
    memset(&t, 0, sizeof t);
    t.id = id;
    t.type = GGML_TYPE_F32;
    t.buffer = buffer;
    t.data = data;
    t.ne[0] = n, t.ne[1] = t.ne[2] = t.ne[3] = 1;
    t.nb[0] = 4, t.nb[1] = t.nb[2] = t.nb[3] = 4 * n;
    snprintf(t.name, sizeof t.name, "t%llx", (unsigned long long) id);
    return t;
}

static bool set_tensor(struct session *s, const struct rpc_wire_tensor *t, uint64_t offset, const void *data, size_t n)
{
    uint8_t *msg = malloc(RPC_WIRE_TENSOR_SIZE + 8 + n);
    rpc_wire_put_tensor(msg, t);
    rpc_wire_put_u64(msg + RPC_WIRE_TENSOR_SIZE, offset);
    memcpy(msg + RPC_WIRE_TENSOR_SIZE + 8, data, n);
    const bool sent = request(s, RPC_WIRE_SET_TENSOR, msg, RPC_WIRE_TENSOR_SIZE + 8 + n);
    free(msg);
    return sent;
}

/* The request of GET_TENSOR and MEMSET_TENSOR: record, offset, size (and the value). */
static size_t tensor_range(uint8_t *msg, const struct rpc_wire_tensor *t, uint64_t offset, uint64_t size)
{
    rpc_wire_put_tensor(msg, t);
    rpc_wire_put_u64(msg + RPC_WIRE_TENSOR_SIZE, offset);
    rpc_wire_put_u64(msg + RPC_WIRE_TENSOR_SIZE + 8, size);
    return RPC_WIRE_TENSOR_SIZE + 16;
}

static bool get_tensor(struct session *s, const struct rpc_wire_tensor *t, uint64_t offset, void *out, size_t n)
{
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 16];
    return request(s, RPC_WIRE_GET_TENSOR, msg, tensor_range(msg, t, offset, n)) && answer(s, out, n);
}

/* GRAPH_COMPUTE of the tensors t with the given nodes. */
static bool graph_compute(struct session *s, uint32_t device, const uint64_t *nodes, uint32_t n_nodes,
                          const struct rpc_wire_tensor *t, uint32_t n_tensors)
{
    const size_t size = 12 + 8 * (size_t) n_nodes + RPC_WIRE_TENSOR_SIZE * (size_t) n_tensors;
    uint8_t *msg = malloc(size);
    rpc_wire_put_u32(msg, device);
    rpc_wire_put_u32(msg + 4, n_nodes);
    for (uint32_t i = 0; i < n_nodes; i++)
        rpc_wire_put_u64(msg + 8 + 8 * i, nodes[i]);
    rpc_wire_put_u32(msg + 8 + 8 * n_nodes, n_tensors);
    for (uint32_t i = 0; i < n_tensors; i++)
        rpc_wire_put_tensor(msg + 12 + 8 * n_nodes + RPC_WIRE_TENSOR_SIZE * i, &t[i]);
    const bool sent = request(s, RPC_WIRE_GRAPH_COMPUTE, msg, size);
    free(msg);
    return sent;
}

/* ------------------------------------------------------- a whole session */

#define N 64

/* a, b, c = a + b and d, of N floats each, at 256-byte steps of a buffer */
struct add_graph {
    struct rpc_wire_tensor t[3];
    uint64_t node;
};

static struct add_graph add_graph(uint64_t handle, uint64_t base)
{
    struct add_graph g;
    g.t[0] = f32_tensor(0xa, handle, base, N);
    g.t[1] = f32_tensor(0xb, handle, base + 256, N);
    g.t[2] = f32_tensor(0xc, handle, base + 512, N);
    g.t[2].op = GGML_OP_ADD;
    g.t[2].flags = GGML_TENSOR_FLAG_COMPUTE;   /* as ggml_build_forward_expand marks nodes */
    g.t[2].src[0] = 0xa;
    g.t[2].src[1] = 0xb;
    g.node = 0xc;
    return g;
}

static bool sums_are(const float *a, const float *b, const float *c)
{
    for (int i = 0; i < N; i++)
        if ((double) c[i] != (double) a[i] + (double) b[i])   /* exact: small integers */
            return false;
    return true;
}

static void test_session(void)
{
    struct session s;
    if (!open_session(&s)) {
        tap_skip(config.token != NULL ? 19 : 18, "no connection to a server");
        return;
    }
    if (config.token != NULL)
        ok(auth(&s, config.token, strlen(config.token)), "AUTH with the server's token: answered with the byte 1");
    ok(hello(&s), "HELLO: protocol 5.1.0, no transport capabilities");
    uint8_t out[64];
    ok(request(&s, RPC_WIRE_DEVICE_COUNT, NULL, 0) && answer(&s, out, 4) && rpc_wire_get_u32(out) == 1,
       "DEVICE_COUNT: one device");
    uint8_t dev0[4] = { 0 };
    ok(request(&s, RPC_WIRE_GET_ALIGNMENT, dev0, 4) && answer(&s, out, 8) && rpc_wire_get_u64(out) >= 8 &&
           (rpc_wire_get_u64(out) & (rpc_wire_get_u64(out) - 1)) == 0,
       "GET_ALIGNMENT: a power of two");
    const uint64_t alignment = rpc_wire_get_u64(out);
    ok(request(&s, RPC_WIRE_GET_MAX_SIZE, dev0, 4) && answer(&s, out, 8) && rpc_wire_get_u64(out) >= ((uint64_t) 1 << 30),
       "GET_MAX_SIZE: at least 1 GiB");
    ok(request(&s, RPC_WIRE_GET_DEVICE_MEMORY, dev0, 4) && answer(&s, out, 16) && rpc_wire_get_u64(out + 8) > 0 &&
           rpc_wire_get_u64(out) <= rpc_wire_get_u64(out + 8),
       "GET_DEVICE_MEMORY: free <= total, total > 0");
    uint64_t base = 0;
    const uint64_t handle = alloc_buffer(&s, 4096, &base);
    ok(handle != 0 && base != 0 && base % alignment == 0, "ALLOC_BUFFER and BUFFER_GET_BASE: a handle and an aligned base");

    struct add_graph g = add_graph(handle, base);
    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++)
        a[i] = (float) i, b[i] = (float) (1000 - 3 * i);
    ok(set_tensor(&s, &g.t[0], 0, a, sizeof a) && set_tensor(&s, &g.t[1], 0, b, sizeof b) &&
           get_tensor(&s, &g.t[1], 0, c, sizeof c) && memcmp(b, c, sizeof b) == 0,
       "SET_TENSOR then GET_TENSOR: the bytes back");
    ok(get_tensor(&s, &g.t[1], 8, c, 8) && memcmp(c, b + 2, 8) == 0, "GET_TENSOR at an offset");
    const bool computed = graph_compute(&s, 0, &g.node, 1, g.t, 3) && get_tensor(&s, &g.t[2], 0, c, sizeof c);
    if (computed && !sums_are(a, b, c))
        tap_diag("c[0..2] = %g %g %g", (double) c[0], (double) c[1], (double) c[2]);
    ok(computed && sums_are(a, b, c),
       "GRAPH_COMPUTE of c = a + b: every sum");
    for (int i = 0; i < N; i++)
        a[i] = (float) (7 * i - 100);
    uint8_t recompute[4] = { 0 };
    ok(set_tensor(&s, &g.t[0], 0, a, sizeof a) && request(&s, RPC_WIRE_GRAPH_RECOMPUTE, recompute, 4) &&
           get_tensor(&s, &g.t[2], 0, c, sizeof c) && sums_are(a, b, c),
       "GRAPH_RECOMPUTE after new inputs: the new sums");

    struct rpc_wire_tensor d = f32_tensor(0xd, handle, base + 1024, N);
    uint8_t copy[2 * RPC_WIRE_TENSOR_SIZE];
    rpc_wire_put_tensor(copy, &g.t[0]);
    rpc_wire_put_tensor(copy + RPC_WIRE_TENSOR_SIZE, &d);
    ok(request(&s, RPC_WIRE_COPY_TENSOR, copy, sizeof copy) && answer(&s, out, 1) && out[0] == 1 &&
           get_tensor(&s, &d, 0, c, sizeof c) && memcmp(a, c, sizeof a) == 0,
       "COPY_TENSOR a -> d: copied, d equals a");
    uint8_t memset_msg[RPC_WIRE_TENSOR_SIZE + 17];
    tensor_range(memset_msg, &d, 4, 8);
    memset_msg[RPC_WIRE_TENSOR_SIZE + 16] = 0;
    ok(request(&s, RPC_WIRE_MEMSET_TENSOR, memset_msg, sizeof memset_msg) && answer(&s, out, 0) &&
           get_tensor(&s, &d, 0, c, 16) && c[0] == a[0] && c[1] == 0.0f && c[2] == 0.0f && c[3] == a[3],
       "MEMSET_TENSOR of values 1 and 2: zero, their neighbours kept");
    uint8_t init[RPC_WIRE_TENSOR_SIZE];
    rpc_wire_put_tensor(init, &d);
    ok(request(&s, RPC_WIRE_INIT_TENSOR, init, sizeof init) && answer(&s, out, 0), "INIT_TENSOR: an empty reply");
    static uint8_t alloc_size[4 + 11 * RPC_WIRE_TENSOR_SIZE];
    memset(alloc_size, 0, sizeof alloc_size);
    rpc_wire_put_tensor(alloc_size + 4, &d);
    ok(request(&s, RPC_WIRE_GET_ALLOC_SIZE, alloc_size, sizeof alloc_size) && answer(&s, out, 8) &&
           rpc_wire_get_u64(out) >= 4 * N,
       "GET_ALLOC_SIZE: at least the tensor's bytes");
    uint8_t hash_msg[RPC_WIRE_TENSOR_SIZE + 16];
    tensor_range(hash_msg, &d, 0, 0x1234);
    ok(request(&s, RPC_WIRE_SET_TENSOR_HASH, hash_msg, sizeof hash_msg) && answer(&s, out, 1) && out[0] == 0,
       "SET_TENSOR_HASH without a cache: not found");
    uint8_t clear[9];
    rpc_wire_put_u64(clear, handle);
    clear[8] = 0;
    ok(request(&s, RPC_WIRE_BUFFER_CLEAR, clear, 9) && answer(&s, out, 0) && get_tensor(&s, &g.t[0], 0, c, sizeof c) &&
           c[0] == 0.0f && c[N - 1] == 0.0f,
       "BUFFER_CLEAR: the tensors read zero");
    uint8_t h[8];
    rpc_wire_put_u64(h, handle);
    ok(request(&s, RPC_WIRE_FREE_BUFFER, h, 8) && answer(&s, out, 0), "FREE_BUFFER: an empty reply");
    ok(close_session(&s), "the client ends the session: the server says the peer closed it");
}

/* --------------------------------------------------------- the cache */

static void test_cache(void)
{
    char dir[] = "/tmp/test-rpc-cache.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        tap_skip(3, "no temporary directory");
        return;
    }
    config.cache_dir = dir;
    struct session s;
    const size_t n = (10u << 20) + 4096;   /* past the 10 MiB the cache keeps */
    uint8_t *data = malloc(n), *back = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t) (i * 131 + (i >> 12));
    uint64_t base = 0, handle = 0;
    bool good = open_session(&s) && hello(&s) && (handle = alloc_buffer(&s, 2 * n + 4096, &base)) != 0;
    struct rpc_wire_tensor first = f32_tensor(0x1, handle, base, (uint32_t) (n / 4));
    struct rpc_wire_tensor second = f32_tensor(0x2, handle, base + n + 1024 - (n + 1024) % 64, (uint32_t) (n / 4));
    good = good && set_tensor(&s, &first, 0, data, n);
    char path[256];
    snprintf(path, sizeof path, "%s/%016llx", dir, (unsigned long long) rpc_wire_fnv1a(data, n));
    struct stat st;
    good = good && get_tensor(&s, &first, 0, back, 16);   /* a round trip: the SET_TENSOR is done */
    ok(good && stat(path, &st) == 0 && (size_t) st.st_size == n, "SET_TENSOR of 10 MiB + 4 KiB: the cache holds it under its FNV-1a hash");
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 16], found = 0;
    rpc_wire_put_tensor(msg, &second);
    rpc_wire_put_u64(msg + RPC_WIRE_TENSOR_SIZE, 0);
    rpc_wire_put_u64(msg + RPC_WIRE_TENSOR_SIZE + 8, rpc_wire_fnv1a(data, n));
    ok(good && request(&s, RPC_WIRE_SET_TENSOR_HASH, msg, sizeof msg) && answer(&s, &found, 1) && found == 1 &&
           get_tensor(&s, &second, 0, back, n) && memcmp(back, data, n) == 0,
       "SET_TENSOR_HASH of that hash: found, and the second tensor holds the data");
    rpc_wire_put_u64(msg + RPC_WIRE_TENSOR_SIZE + 8, 0x0123456789abcdefull);
    ok(good && request(&s, RPC_WIRE_SET_TENSOR_HASH, msg, sizeof msg) && answer(&s, &found, 1) && found == 0,
       "SET_TENSOR_HASH of an unknown hash: not found");
    close_session(&s);
    unlink(path);
    rmdir(dir);
    config.cache_dir = NULL;
    free(data);
    free(back);
}

/* An empty buffer (which may have no base address) holds an empty
   tensor: it reads back no bytes and the connection lives on. */
static void test_empty_buffer(void)
{
    struct session s;
    uint64_t base = 1, handle = 0;
    bool good = open_session(&s) && hello(&s) && (handle = alloc_buffer(&s, 0, &base)) != 0;
    struct rpc_wire_tensor empty = f32_tensor(0x3, handle, base, 0);
    uint8_t back[4];
    ok(good && get_tensor(&s, &empty, 0, back, 0) && get_tensor(&s, &empty, 0, back, 0),
       "an empty tensor of an empty buffer reads back 0 bytes, twice");
    close_session(&s);
}

/* ------------------------------------------------- malformed requests */

/*
 * A malformed request: sent after HELLO (unless raw) and a buffer of 4096
 * bytes (handle, base), to a server with config.token (the catalog's
 * token cases set it); the server must close the connection without a
 * reply, say the server ended it, and log a warning that contains expect.
 */
typedef bool (*send_fn)(struct session *s, uint64_t handle, uint64_t base);

static void refused(const char *what, send_fn send_bad, const char *expect, bool raw)
{
    struct session s;
    uint64_t base = 0, handle = 0;
    tap_capture_log();
    bool good = open_session(&s) && (raw || (hello(&s) && (handle = alloc_buffer(&s, 4096, &base)) != 0));
    good = good && send_bad(&s, handle, base);
    const bool was_closed = good && closed(&s);
    const bool server_ended = !close_session(&s);
    const char *log = tap_last_log();
    const bool said = log != NULL && strstr(log, expect) != NULL;
    if (!said)
        tap_diag("last log: %s", log != NULL ? log : "(none)");
    ok(good && was_closed && server_ended && said, "malformed: %s: the connection is closed, the reason logged", what);
}

static bool bad_first(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, RPC_WIRE_DEVICE_COUNT, NULL, 0);
}

static bool bad_hello_size(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t caps[23] = { 0 };
    (void) h, (void) b;
    return request(s, RPC_WIRE_HELLO, caps, sizeof caps);
}

static bool bad_hello_again(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t caps[RPC_WIRE_CAPS_SIZE] = { 0 };
    (void) h, (void) b;
    return request(s, RPC_WIRE_HELLO, caps, sizeof caps);   /* the second one */
}

static bool bad_command(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, RPC_WIRE_CMD_COUNT, NULL, 0);
}

static bool bad_command_255(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, 255, NULL, 0);
}

static bool bad_alloc_size(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t in[11] = { 0 };
    (void) h, (void) b;
    return request(s, RPC_WIRE_ALLOC_BUFFER, in, sizeof in);
}

static bool bad_device(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t in[4];
    (void) h, (void) b;
    rpc_wire_put_u32(in, 1);
    return request(s, RPC_WIRE_GET_ALIGNMENT, in, 4);
}

static bool bad_device_memory(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t in[4];
    (void) h, (void) b;
    rpc_wire_put_u32(in, 0xffffffffu);
    return request(s, RPC_WIRE_GET_DEVICE_MEMORY, in, 4);
}

static bool bad_base_handle(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t in[8];
    (void) b;
    rpc_wire_put_u64(in, h + 1);
    return request(s, RPC_WIRE_BUFFER_GET_BASE, in, 8);
}

static bool bad_double_free(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t in[8];
    (void) b;
    rpc_wire_put_u64(in, h);
    return request(s, RPC_WIRE_FREE_BUFFER, in, 8) && answer(s, NULL, 0) && request(s, RPC_WIRE_FREE_BUFFER, in, 8);
}

static bool bad_clear_handle(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t in[9] = { 0 };
    (void) h, (void) b;
    rpc_wire_put_u64(in, 0xdeadbeefull);
    return request(s, RPC_WIRE_BUFFER_CLEAR, in, 9);
}

static bool bad_set_buffer(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor t = f32_tensor(1, h + 7, b, 4);
    const float v[4] = { 0 };
    return set_tensor(s, &t, 0, v, sizeof v);
}

static bool bad_set_below(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor t = f32_tensor(1, h, b - 16, 4);
    const float v[4] = { 0 };
    return set_tensor(s, &t, 0, v, sizeof v);
}

static bool bad_set_past_end(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor t = f32_tensor(1, h, b + 4096 - 8, 4);
    const float v[4] = { 0 };
    return set_tensor(s, &t, 0, v, sizeof v);
}

static bool bad_set_past_tensor(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor t = f32_tensor(1, h, b, 4);
    const float v[8] = { 0 };
    return set_tensor(s, &t, 0, v, sizeof v);   /* 32 bytes into a tensor of 16 */
}

static bool bad_set_offset(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor t = f32_tensor(1, h, b, 4);
    const float v[1] = { 0 };
    return set_tensor(s, &t, UINT64_MAX - 1, v, sizeof v);
}

static bool bad_set_truncated(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor t = f32_tensor(1, h, b, 64);
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 8 + 100];
    memset(msg, 0, sizeof msg);
    rpc_wire_put_tensor(msg, &t);
    uint8_t head[9];
    head[0] = RPC_WIRE_SET_TENSOR;
    rpc_wire_put_u64(head + 1, RPC_WIRE_TENSOR_SIZE + 8 + 256);   /* announces 256 bytes, sends 100 */
    const bool sent = send_all(s->fd, head, 9) && send_all(s->fd, msg, sizeof msg);
    shutdown(s->fd, SHUT_WR);
    return sent;
}

static bool bad_get_past_tensor(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor t = f32_tensor(1, h, b, 4);
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 16];
    return request(s, RPC_WIRE_GET_TENSOR, msg, tensor_range(msg, &t, 8, 9));
}

static bool bad_get_type(struct session *s, uint64_t h, uint64_t b)
{
    struct rpc_wire_tensor t = f32_tensor(1, h, b, 4);
    t.type = 99;
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 16];
    return request(s, RPC_WIRE_GET_TENSOR, msg, tensor_range(msg, &t, 0, 4));
}

static bool bad_get_no_buffer(struct session *s, uint64_t h, uint64_t b)
{
    struct rpc_wire_tensor t = f32_tensor(1, 0, 0, 4);
    (void) h, (void) b;
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 16];
    return request(s, RPC_WIRE_GET_TENSOR, msg, tensor_range(msg, &t, 0, 4));
}

static bool bad_get_block_stride(struct session *s, uint64_t h, uint64_t b)
{
    /* two Q4_0 blocks with a stride of two blocks: the last block ends inside the buffer, ggml_nbytes past it */
    struct rpc_wire_tensor t = f32_tensor(1, h, b + 4096 - 18 - 36, 64);
    t.type = GGML_TYPE_Q4_0;
    t.nb[0] = 36, t.nb[1] = t.nb[2] = t.nb[3] = 72;
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 16];
    return request(s, RPC_WIRE_GET_TENSOR, msg, tensor_range(msg, &t, 0, 72));
}

static bool bad_copy_dst(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor src = f32_tensor(1, h, b, 64), dst = f32_tensor(2, h, b + 4096 - 128, 64);
    uint8_t msg[2 * RPC_WIRE_TENSOR_SIZE];
    rpc_wire_put_tensor(msg, &src);
    rpc_wire_put_tensor(msg + RPC_WIRE_TENSOR_SIZE, &dst);
    return request(s, RPC_WIRE_COPY_TENSOR, msg, sizeof msg);
}

static bool bad_memset_past(struct session *s, uint64_t h, uint64_t b)
{
    const struct rpc_wire_tensor t = f32_tensor(1, h, b, 4);
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 17] = { 0 };
    tensor_range(msg, &t, 0, 17);
    return request(s, RPC_WIRE_MEMSET_TENSOR, msg, sizeof msg);
}

static bool bad_alloc_size_src(struct session *s, uint64_t h, uint64_t b)
{
    static uint8_t msg[4 + 11 * RPC_WIRE_TENSOR_SIZE];
    memset(msg, 0, sizeof msg);
    struct rpc_wire_tensor t = f32_tensor(1, h, b, 4), src = f32_tensor(2, h, b + 4092, 4);
    rpc_wire_put_tensor(msg + 4, &t);
    rpc_wire_put_tensor(msg + 4 + RPC_WIRE_TENSOR_SIZE, &src);
    return request(s, RPC_WIRE_GET_ALLOC_SIZE, msg, sizeof msg);
}

static bool bad_recompute_first(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t in[4] = { 0 };
    (void) h, (void) b;
    return request(s, RPC_WIRE_GRAPH_RECOMPUTE, in, 4);
}

static bool bad_graph_cycle(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    g.t[0].src[0] = 0xc;
    return graph_compute(s, 0, &g.node, 1, g.t, 3);
}

static bool bad_graph_no_memory(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    g.t[1].buffer = 0, g.t[1].data = 0;   /* b has elements but no buffer */
    return graph_compute(s, 0, &g.node, 1, g.t, 3);
}

static bool bad_graph_missing(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    return graph_compute(s, 0, &g.node, 1, g.t + 1, 2);   /* a is not sent */
}

static bool bad_graph_custom(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    g.t[2].op = GGML_OP_MAP_CUSTOM2;
    return graph_compute(s, 0, &g.node, 1, g.t, 3);
}

static bool bad_graph_device(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    return graph_compute(s, 5, &g.node, 1, g.t, 3);
}

static bool bad_graph_outside(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    g.t[2].data = b + 4096 - 8;   /* the output runs past the buffer */
    return graph_compute(s, 0, &g.node, 1, g.t, 3);
}

static bool bad_graph_view(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    g.t[1].view_src = 0xa;   /* b claims to view a at offset 0, but lies 256 bytes further */
    return graph_compute(s, 0, &g.node, 1, g.t, 3);
}

static bool bad_graph_shape(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    g.t[1].ne[0] = 3, g.t[1].nb[1] = g.t[1].nb[2] = g.t[1].nb[3] = 12;   /* a + b of 64 and 3 values */
    return graph_compute(s, 0, &g.node, 1, g.t, 3);
}

static bool bad_graph_big(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t head[9];
    (void) h, (void) b;
    head[0] = RPC_WIRE_GRAPH_COMPUTE;
    rpc_wire_put_u64(head + 1, (uint64_t) 1 << 40);   /* a terabyte announced */
    return send_all(s->fd, head, 9);
}

static bool bad_graph_truncated(struct session *s, uint64_t h, uint64_t b)
{
    struct add_graph g = add_graph(h, b);
    uint8_t msg[12 + 8 + 3 * RPC_WIRE_TENSOR_SIZE];
    rpc_wire_put_u32(msg, 0);
    rpc_wire_put_u32(msg + 4, 1);
    rpc_wire_put_u64(msg + 8, g.node);
    rpc_wire_put_u32(msg + 16, 4);   /* four tensors announced, three sent */
    for (int i = 0; i < 3; i++)
        rpc_wire_put_tensor(msg + 20 + RPC_WIRE_TENSOR_SIZE * i, &g.t[i]);
    return request(s, RPC_WIRE_GRAPH_COMPUTE, msg, sizeof msg);
}

static bool bad_token_hello_first(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t caps[RPC_WIRE_CAPS_SIZE] = { 0 };
    (void) h, (void) b;
    return request(s, RPC_WIRE_HELLO, caps, sizeof caps);
}

static bool bad_token_command_first(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, RPC_WIRE_DEVICE_COUNT, NULL, 0);
}

static bool bad_token_wrong(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, RPC_WIRE_AUTH, "s3cret-t0keN", 12);   /* the last byte differs */
}

static bool bad_token_longer(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, RPC_WIRE_AUTH, TOKEN "x", sizeof TOKEN);   /* the token and one byte more */
}

static bool bad_token_shorter(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, RPC_WIRE_AUTH, TOKEN, sizeof TOKEN - 2);   /* the token but its last byte */
}

static bool bad_token_empty(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, RPC_WIRE_AUTH, NULL, 0);
}

static bool bad_token_too_long(struct session *s, uint64_t h, uint64_t b)
{
    char token[RPC_WIRE_TOKEN_MAX + 1];
    (void) h, (void) b;
    memset(token, 'a', sizeof token);
    return request(s, RPC_WIRE_AUTH, token, sizeof token);
}

static bool bad_token_cut(struct session *s, uint64_t h, uint64_t b)
{
    uint8_t head[9];
    (void) h, (void) b;
    head[0] = RPC_WIRE_AUTH;
    rpc_wire_put_u64(head + 1, sizeof TOKEN - 1);   /* announces the whole token, sends 4 bytes */
    const bool sent = send_all(s->fd, head, 9) && send_all(s->fd, TOKEN, 4);
    shutdown(s->fd, SHUT_WR);
    return sent;
}

static bool bad_token_twice(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return auth(s, TOKEN, sizeof TOKEN - 1) && request(s, RPC_WIRE_AUTH, TOKEN, sizeof TOKEN - 1);
}

static bool bad_token_after_hello(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return auth(s, TOKEN, sizeof TOKEN - 1) && hello(s) && request(s, RPC_WIRE_AUTH, TOKEN, sizeof TOKEN - 1);
}

static bool bad_auth_untokened(struct session *s, uint64_t h, uint64_t b)
{
    (void) h, (void) b;
    return request(s, RPC_WIRE_AUTH, TOKEN, sizeof TOKEN - 1);
}

static void test_malformed(void)
{
    /* cases[] to a server without a token, token_cases[] to one with TOKEN */
    static const struct malformed {
        const char *what;
        send_fn send_bad;
        const char *expect;
        bool raw;
    } cases[] = {
        { "a first request other than HELLO", bad_first, "not HELLO", true },
        { "HELLO with 23 bytes of capabilities", bad_hello_size, "not HELLO", true },
        { "a second HELLO", bad_hello_again, "HELLO after", false },
        { "command 18 (past the last)", bad_command, "payload", false },
        { "command 255", bad_command_255, "payload", false },
        { "ALLOC_BUFFER of 11 bytes", bad_alloc_size, "ALLOC_BUFFER with a payload of 11", false },
        { "GET_ALIGNMENT of device 1 of 1", bad_device, "device 1 of 1", false },
        { "GET_DEVICE_MEMORY of device 2^32 - 1", bad_device_memory, "device 4294967295", false },
        { "BUFFER_GET_BASE of a handle never given", bad_base_handle, "not one of this connection's", false },
        { "FREE_BUFFER twice", bad_double_free, "not one of this connection's", false },
        { "BUFFER_CLEAR of a made-up handle", bad_clear_handle, "not one of this connection's", false },
        { "SET_TENSOR into an unknown buffer", bad_set_buffer, "not one of this connection's", false },
        { "SET_TENSOR below the buffer's base", bad_set_below, "not inside its buffer", false },
        { "SET_TENSOR of a tensor past the buffer's end", bad_set_past_end, "not inside its buffer", false },
        { "SET_TENSOR of more bytes than the tensor has", bad_set_past_tensor, "pass the tensor", false },
        { "SET_TENSOR at offset 2^64 - 2", bad_set_offset, "pass the tensor", false },
        { "SET_TENSOR cut short", bad_set_truncated, "inside SET_TENSOR's data", false },
        { "GET_TENSOR past the tensor", bad_get_past_tensor, "pass the tensor", false },
        { "GET_TENSOR of type 99", bad_get_type, "not a ggml type", false },
        { "GET_TENSOR of a tensor without a buffer", bad_get_no_buffer, "has no buffer", false },
        { "GET_TENSOR of Q4_0 blocks whose stride runs past the buffer", bad_get_block_stride,
          "not inside its buffer", false },
        { "COPY_TENSOR into a tensor past the buffer", bad_copy_dst, "not inside its buffer", false },
        { "MEMSET_TENSOR past the tensor", bad_memset_past, "pass the tensor", false },
        { "GET_ALLOC_SIZE with a source past the buffer", bad_alloc_size_src, "not inside its buffer", false },
        { "GRAPH_RECOMPUTE before any graph", bad_recompute_first, "without a graph", false },
        { "GRAPH_COMPUTE with a cycle", bad_graph_cycle, "depends on itself", false },
        { "GRAPH_COMPUTE without a source tensor", bad_graph_missing, "lacks", false },
        { "GRAPH_COMPUTE of a source without memory", bad_graph_no_memory, "has elements but no buffer", false },
        { "GRAPH_COMPUTE of a custom op", bad_graph_custom, "custom ops", false },
        { "GRAPH_COMPUTE on device 5", bad_graph_device, "device 5 of 1", false },
        { "GRAPH_COMPUTE writing past the buffer", bad_graph_outside, "not inside its buffer", false },
        { "GRAPH_COMPUTE with a false view", bad_graph_view, "a view whose data", false },
        { "GRAPH_COMPUTE of ADD with mismatched shapes", bad_graph_shape, "not supported", false },
        { "GRAPH_COMPUTE announcing 1 TiB", bad_graph_big, "passes the limit", false },
        { "GRAPH_COMPUTE with fewer tensors than counted", bad_graph_truncated, "take", false },
        { "AUTH to a server without a token", bad_auth_untokened, "takes no token", true },
        { "AUTH after HELLO, without a token", bad_auth_untokened, "AUTH after HELLO", false },
    }, token_cases[] = {
        { "a token server: HELLO first", bad_token_hello_first, "not AUTH with this server's token", true },
        { "a token server: DEVICE_COUNT first", bad_token_command_first, "not AUTH with this server's token", true },
        { "a token server: a wrong token", bad_token_wrong, "wrong token", true },
        { "a token server: the token and one byte more", bad_token_longer, "wrong token", true },
        { "a token server: the token but its last byte", bad_token_shorter, "wrong token", true },
        { "a token server: an empty token", bad_token_empty, "token of 0 bytes", true },
        { "a token server: a token of 257 bytes", bad_token_too_long, "token of 257 bytes", true },
        { "a token server: the stream ends inside the token", bad_token_cut, "inside AUTH's token", true },
        { "a token server: AUTH twice", bad_token_twice, "AUTH twice", true },
        { "a token server: AUTH again after HELLO", bad_token_after_hello, "AUTH after HELLO", true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        refused(cases[i].what, cases[i].send_bad, cases[i].expect, cases[i].raw);
    config.token = TOKEN;
    for (size_t i = 0; i < sizeof token_cases / sizeof token_cases[0]; i++)
        refused(token_cases[i].what, token_cases[i].send_bad, token_cases[i].expect, token_cases[i].raw);
    config.token = NULL;

    /* a buffer past the connection's limit is answered with handle 0, and the connection goes on */
    struct session s;
    const uint64_t saved = config.max_buffer_bytes;
    config.max_buffer_bytes = 1 << 20;
    uint8_t in[12], out[16];
    rpc_wire_put_u32(in, 0);
    rpc_wire_put_u64(in + 4, 2 << 20);
    bool good = open_session(&s) && hello(&s) && request(&s, RPC_WIRE_ALLOC_BUFFER, in, 12) && answer(&s, out, 16) &&
                rpc_wire_get_u64(out) == 0;
    uint64_t base;
    good = good && alloc_buffer(&s, 4096, &base) != 0;
    ok(close_session(&s) && good, "ALLOC_BUFFER past the connection's limit: handle 0, and the connection goes on");
    config.max_buffer_bytes = saved;
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        remote = argv[1];
        test_session();
        return tap_done();
    }
    cpu = ggml_backend_cpu_init();
    if (cpu == NULL) {
        printf("1..0 # SKIP no CPU backend\n");
        return 0;
    }
    ggml_backend_cpu_set_n_threads(cpu, 2);
    config.backends = &cpu;
    config.n_backends = 1;
    config.max_buffer_bytes = RPC_SERVER_DEFAULT_MAX_BUFFER_BYTES;
    config.max_message_bytes = RPC_SERVER_DEFAULT_MAX_MESSAGE_BYTES;
    config.max_nodes = RPC_SERVER_DEFAULT_MAX_NODES;
    test_session();
    config.token = TOKEN;   /* the whole session again, AUTH first */
    test_session();
    config.token = NULL;
    test_cache();
    test_empty_buffer();
    test_malformed();
    ok(true, "the server survived every malformed request (this line runs after them)");
    ggml_backend_free(cpu);
    return tap_done();
}
