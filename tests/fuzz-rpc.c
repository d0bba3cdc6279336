/*
 * fuzz-rpc.c - a fuzz target for the RPC server's message parser and
 * request handling (lib/rpc/server.c, lib/rpc/wire.c).
 *
 * One input is the byte stream a client sends on one connection: it is
 * written into a socket pair whose other end rpc_server_serve serves on
 * the CPU backend (a thread drains the replies), and then the stream is
 * closed.  An input whose first byte is AUTH's is served with a token
 * (FUZZ_TOKEN) in the configuration, any other without one, so that both
 * the token's check and the refusal of AUTH are fuzzed.  What an input
 * must show: the server returns (memory errors and
 * leaks are for the sanitizers to find; a hang is stopped by an alarm),
 * the library logs no ERROR (every request is checked before it reaches
 * the library), and the server logs at most one reason for ending the
 * connection.
 *
 * Built two ways:
 *   - with -DFUZZ_RPC_LIBFUZZER and -fsanitize=fuzzer (configure
 *     --enable-libfuzzer, clang): LLVMFuzzerTestOneInput for libFuzzer;
 *     tests/fuzz-rpc --write-corpus DIR (the plain build) writes the seeds;
 *   - plain: a driver whose seeds are whole sessions written here (HELLO,
 *     buffers, tensors set, read, copied and cleared, graphs computed and
 *     recomputed, buffers freed; AUTH then a session, AUTH after HELLO),
 *     replayed, then mutated (bytes flipped,
 *     set to edge values, inserted, deleted, streams cut) a bounded number
 *     of times from a fixed seed:
 *
 *       fuzz-rpc [--tap] [--mutations N] [--seed S] [FILE...]
 *       fuzz-rpc --write-corpus DIR
 *
 *     FILEs are replayed too.  With --tap it prints TAP; the exit status
 *     is 0 when every input behaved.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "server.h"
#include "wire.h"

/* The token of the server that inputs starting with AUTH meet. */
#define FUZZ_TOKEN "fuzz-token"

static ggml_backend_t cpu;
static struct rpc_server_config config, token_config;
/* Per input: warnings that end the connection, and ERROR messages (the library's own complaints). */
static int closings, errors;
static char last_text[256], first_error[256];

static void count_messages(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR && errors++ == 0)
        snprintf(first_error, sizeof first_error, "%s", text);
    if (level == GGML_LOG_LEVEL_WARN && strstr(text, "closing the connection") != NULL)
        closings++;
    if (level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR)
        snprintf(last_text, sizeof last_text, "%s", text);
}

static void setup(void)
{
    if (cpu != NULL)
        return;
    cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 1);
    config.backends = &cpu;
    config.n_backends = 1;
    config.max_buffer_bytes = 64u << 20;    /* a fuzzed size must not exhaust the machine */
    config.max_message_bytes = 1u << 20;
    config.max_nodes = 256;
    config.cache_dir = NULL;
    config.token = NULL;
    token_config = config;
    token_config.token = FUZZ_TOKEN;
    ggml_log_set(count_messages, NULL);
}

struct pipe_ends {
    int client, server;
    const struct rpc_server_config *config;
};

static void *serve(void *arg)
{
    struct pipe_ends *p = arg;
    rpc_server_serve(p->config, p->server);
    shutdown(p->server, SHUT_RDWR);
    return NULL;
}

static void *drain(void *arg)
{
    const struct pipe_ends *p = arg;
    char sink[4096];
    while (read(p->client, sink, sizeof sink) > 0)
        ;
    return NULL;
}

/* Runs one input; false when it misbehaved (an ERROR logged, or more than one closing). */
static bool fuzz_one(const uint8_t *data, size_t size)
{
    setup();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return true;   /* the machine, not the input */
    struct pipe_ends p = { sv[0], sv[1], size > 0 && data[0] == RPC_WIRE_AUTH ? &token_config : &config };
    pthread_t server, reader;
    closings = errors = 0;
    pthread_create(&server, NULL, serve, &p);
    pthread_create(&reader, NULL, drain, &p);
    for (size_t done = 0; done < size;) {
        const ssize_t put = send(p.client, data + done, size - done, MSG_NOSIGNAL);
        if (put <= 0)
            break;   /* the server closed the connection */
        done += (size_t) put;
    }
    shutdown(p.client, SHUT_WR);
    pthread_join(server, NULL);
    pthread_join(reader, NULL);
    close(sv[0]);
    close(sv[1]);
    return closings <= 1 && errors == 0;
}

#ifdef FUZZ_RPC_LIBFUZZER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_one(data, size))
        abort();
    return 0;
}

#else

/* ------------------------------------------------------------- seeds */

struct stream {
    uint8_t *bytes;
    size_t n, cap;
};

static void put(struct stream *s, const void *p, size_t n)
{
    if (s->n + n > s->cap) {
        s->cap = (s->n + n) * 2;
        s->bytes = realloc(s->bytes, s->cap);
    }
    memcpy(s->bytes + s->n, p, n);
    s->n += n;
}

static void request(struct stream *s, uint8_t cmd, const void *payload, uint64_t size)
{
    uint8_t head[9];
    head[0] = cmd;
    rpc_wire_put_u64(head + 1, size);
    put(s, head, 9);
    if (size > 0)
        put(s, payload, (size_t) size);
}

static struct rpc_wire_tensor f32(uint64_t id, uint64_t handle, uint64_t offset, uint32_t n)
{
    struct rpc_wire_tensor t;
    memset(&t, 0, sizeof t);
    t.id = id;
    t.type = GGML_TYPE_F32;
    t.buffer = handle;
    t.data = (handle << 40) + offset;   /* server.h: handle h has base h << 40 */
    t.ne[0] = n, t.ne[1] = t.ne[2] = t.ne[3] = 1;
    t.nb[0] = 4, t.nb[1] = t.nb[2] = t.nb[3] = 4 * n;
    snprintf(t.name, sizeof t.name, "t%u", (unsigned) id);
    return t;
}

static void auth(struct stream *s, const char *token)
{
    request(s, RPC_WIRE_AUTH, token, strlen(token));
}

static void hello(struct stream *s)
{
    uint8_t caps[RPC_WIRE_CAPS_SIZE] = { 0 };
    request(s, RPC_WIRE_HELLO, caps, sizeof caps);
}

static void alloc(struct stream *s, uint64_t size, uint64_t *handle)
{
    static uint64_t next = 1;
    uint8_t in[12];
    rpc_wire_put_u32(in, 0);
    rpc_wire_put_u64(in + 4, size);
    request(s, RPC_WIRE_ALLOC_BUFFER, in, 12);
    uint8_t h[8];
    *handle = next;   /* handles count up from 1 on every connection: the seeds use handle 1 */
    rpc_wire_put_u64(h, 1);
    request(s, RPC_WIRE_BUFFER_GET_BASE, h, 8);
    *handle = 1;
}

static void set_tensor(struct stream *s, const struct rpc_wire_tensor *t, const float *v, size_t n)
{
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 8 + 256];
    rpc_wire_put_tensor(msg, t);
    rpc_wire_put_u64(msg + RPC_WIRE_TENSOR_SIZE, 0);
    memcpy(msg + RPC_WIRE_TENSOR_SIZE + 8, v, n * sizeof *v);
    request(s, RPC_WIRE_SET_TENSOR, msg, RPC_WIRE_TENSOR_SIZE + 8 + n * sizeof *v);
}

static void tensor_range(struct stream *s, uint8_t cmd, const struct rpc_wire_tensor *t, uint64_t size, int extra)
{
    uint8_t msg[RPC_WIRE_TENSOR_SIZE + 17] = { 0 };
    rpc_wire_put_tensor(msg, t);
    rpc_wire_put_u64(msg + RPC_WIRE_TENSOR_SIZE + 8, size);
    request(s, cmd, msg, RPC_WIRE_TENSOR_SIZE + 16 + (size_t) extra);
}

/* One of the seed sessions (which = 0, 1, 2, ...); false past the last. */
static bool seed(int which, struct stream *s)
{
    s->n = 0;
    uint64_t h;
    const float v[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    struct rpc_wire_tensor a = f32(0xa, 1, 0, 16), b = f32(0xb, 1, 256, 16), c = f32(0xc, 1, 512, 16);
    c.op = (uint32_t) (which == 1 ? GGML_OP_MUL : GGML_OP_ADD);
    c.flags = GGML_TENSOR_FLAG_COMPUTE;
    c.src[0] = 0xa, c.src[1] = 0xb;
    if (which == 4)
        auth(s, FUZZ_TOKEN);   /* served with the token */
    hello(s);
    switch (which) {
    case 0:   /* buffers and tensors */
        request(s, RPC_WIRE_DEVICE_COUNT, NULL, 0);
        alloc(s, 4096, &h);
        set_tensor(s, &a, v, 16);
        tensor_range(s, RPC_WIRE_GET_TENSOR, &a, 64, 0);
        tensor_range(s, RPC_WIRE_MEMSET_TENSOR, &a, 8, 1);
        {
            uint8_t two[2 * RPC_WIRE_TENSOR_SIZE];
            rpc_wire_put_tensor(two, &a);
            rpc_wire_put_tensor(two + RPC_WIRE_TENSOR_SIZE, &b);
            request(s, RPC_WIRE_COPY_TENSOR, two, sizeof two);
            request(s, RPC_WIRE_INIT_TENSOR, two, RPC_WIRE_TENSOR_SIZE);
        }
        {
            uint8_t hc[9];
            rpc_wire_put_u64(hc, 1);
            hc[8] = 7;
            request(s, RPC_WIRE_BUFFER_CLEAR, hc, 9);
            request(s, RPC_WIRE_FREE_BUFFER, hc, 8);
        }
        return true;
    case 1:
    case 2: { /* a graph, computed and recomputed */
        alloc(s, 4096, &h);
        set_tensor(s, &a, v, 16);
        set_tensor(s, &b, v, 16);
        uint8_t g[12 + 8 + 3 * RPC_WIRE_TENSOR_SIZE];
        rpc_wire_put_u32(g, 0);
        rpc_wire_put_u32(g + 4, 1);
        rpc_wire_put_u64(g + 8, 0xc);
        rpc_wire_put_u32(g + 16, 3);
        rpc_wire_put_tensor(g + 20, &a);
        rpc_wire_put_tensor(g + 20 + RPC_WIRE_TENSOR_SIZE, &b);
        rpc_wire_put_tensor(g + 20 + 2 * RPC_WIRE_TENSOR_SIZE, &c);
        request(s, RPC_WIRE_GRAPH_COMPUTE, g, sizeof g);
        uint8_t dev[4] = { 0 };
        request(s, RPC_WIRE_GRAPH_RECOMPUTE, dev, 4);
        tensor_range(s, RPC_WIRE_GET_TENSOR, &c, 64, 0);
        return true;
    }
    case 3: { /* the device queries and GET_ALLOC_SIZE */
        uint8_t dev[4] = { 0 };
        request(s, RPC_WIRE_GET_ALIGNMENT, dev, 4);
        request(s, RPC_WIRE_GET_MAX_SIZE, dev, 4);
        request(s, RPC_WIRE_GET_DEVICE_MEMORY, dev, 4);
        alloc(s, 1024, &h);
        static uint8_t m[4 + 11 * RPC_WIRE_TENSOR_SIZE];
        memset(m, 0, sizeof m);
        rpc_wire_put_tensor(m + 4, &c);
        rpc_wire_put_tensor(m + 4 + RPC_WIRE_TENSOR_SIZE, &a);
        request(s, RPC_WIRE_GET_ALLOC_SIZE, m, sizeof m);
        tensor_range(s, RPC_WIRE_SET_TENSOR_HASH, &a, 0x1234, 0);
        return true;
    }
    case 4:   /* after AUTH with the token, a short session */
        request(s, RPC_WIRE_DEVICE_COUNT, NULL, 0);
        alloc(s, 4096, &h);
        set_tensor(s, &a, v, 16);
        tensor_range(s, RPC_WIRE_GET_TENSOR, &a, 64, 0);
        return true;
    case 5:   /* AUTH after HELLO, on a server without a token: refused */
        request(s, RPC_WIRE_DEVICE_COUNT, NULL, 0);
        auth(s, FUZZ_TOKEN);
        return true;
    default:
        return false;
    }
}

/* ------------------------------------------------------------ mutations */

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void mutate(struct stream *s)
{
    const int edits = 1 + (int) (rng() % 4);
    for (int e = 0; e < edits && s->n > 0; e++) {
        const size_t at = (size_t) (rng() % s->n);
        static const uint8_t edge[] = { 0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 0x10, 0x0e };
        switch (rng() % 6) {
        case 0: s->bytes[at] ^= (uint8_t) (1u << (rng() % 8)); break;
        case 1: s->bytes[at] = edge[rng() % sizeof edge]; break;
        case 2: s->bytes[at] = (uint8_t) rng(); break;
        case 3: { /* a field of 8 bytes set to an edge value */
            const uint64_t values[] = { 0, 1, UINT64_MAX, 1ull << 40, (1ull << 40) + 4096, 0x7fffffffffffffffull };
            if (at + 8 <= s->n)
                rpc_wire_put_u64(s->bytes + at, values[rng() % 6]);
            break;
        }
        case 4: s->n = at; break;   /* the stream cut */
        default: /* a byte inserted */
            put(s, "", 1);
            memmove(s->bytes + at + 1, s->bytes + at, s->n - at - 1);
            s->bytes[at] = (uint8_t) rng();
            break;
        }
    }
}

static bool read_file(const char *path, struct stream *s)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    s->n = 0;
    uint8_t buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        put(s, buf, got);
    fclose(f);
    return true;
}

static void hex_dump(const struct stream *s)
{
    for (size_t i = 0; i < s->n && i < 4096; i++)
        fprintf(stderr, "%02x%s", s->bytes[i], i % 32 == 31 ? "\n" : "");
    fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
    bool tap = false;
    long mutations = 20000;
    uint64_t seed_value = 1;
    int first_file = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tap") == 0) {
            tap = true;
        } else if (strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
            mutations = atol(argv[++i]);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed_value = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--write-corpus") == 0 && i + 1 < argc) {
            struct stream s = { NULL, 0, 0 };
            for (int w = 0; seed(w, &s); w++) {
                char path[4096];
                snprintf(path, sizeof path, "%s/seed-%d", argv[i + 1], w);
                FILE *f = fopen(path, "wb");
                if (f == NULL || fwrite(s.bytes, 1, s.n, f) != s.n) {
                    fprintf(stderr, "fuzz-rpc: cannot write %s\n", path);
                    return 1;
                }
                fclose(f);
            }
            free(s.bytes);
            return 0;
        } else {
            first_file = i;
            break;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    alarm((unsigned) (600 + mutations / 50));   /* a hang is a finding too */
    struct stream s = { NULL, 0, 0 }, base = { NULL, 0, 0 };
    int bad_seeds = 0, bad_files = 0;
    long bad_mutations = 0;
    int n_seeds = 0;
    for (; seed(n_seeds, &s); n_seeds++)
        if (!fuzz_one(s.bytes, s.n)) {
            bad_seeds++;
            fprintf(stderr, "fuzz-rpc: seed %d misbehaved\n", n_seeds);
        }
    for (int i = first_file; i < argc; i++)
        if (!read_file(argv[i], &s) || !fuzz_one(s.bytes, s.n)) {
            bad_files++;
            fprintf(stderr, "fuzz-rpc: %s misbehaved (%d errors, the first: %s%d closings, the last: %s) or cannot be read\n",
                    argv[i], errors, errors > 0 ? first_error : "-; ", closings, last_text);
        }
    rng_state = seed_value * 0x9e3779b97f4a7c15ull + 1;
    for (long m = 0; m < mutations; m++) {
        seed((int) (rng() % (uint64_t) n_seeds), &base);
        s.n = 0;
        put(&s, base.bytes, base.n);
        mutate(&s);
        if (!fuzz_one(s.bytes, s.n)) {
            if (bad_mutations++ < 3) {
                fprintf(stderr, "fuzz-rpc: mutation %ld misbehaved (%d errors, the first: %s%d closings, the last: %s); its "
                        "bytes:\n", m, errors, errors > 0 ? first_error : "-; ", closings, last_text);
                hex_dump(&s);
            }
        }
    }
    if (tap) {
        printf("1..3\n");
        printf("%sok 1 - %d seed sessions served, no error logged\n", bad_seeds ? "not " : "", n_seeds);
        printf("%sok 2 - %d input files replayed\n", bad_files ? "not " : "", argc - first_file);
        printf("%sok 3 - %ld mutations from seed %llu: the server returned, no error logged, at most one closing each\n",
               bad_mutations ? "not " : "", mutations, (unsigned long long) seed_value);
    }
    free(s.bytes);
    free(base.bytes);
    ggml_backend_free(cpu);
    return bad_seeds + bad_files + bad_mutations > 0 ? 1 : 0;
}

#endif
