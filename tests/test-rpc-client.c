/*
 * test-rpc-client - the RPC client (ggml-rpc.h, the plugin libggml-rpc.so)
 * against ggml-rpc-server programs this test starts on loopback TCP:
 *
 *   1. registries of two servers (add_server), GGML_RPC_SERVERS, names;
 *   2. backends, buffer types, device memory;
 *   3. tensor data: round trips of F32, F16 and Q8_0 bytes, offsets,
 *      memset, buffer clear, copies on one server, between servers and
 *      with the host;
 *   4. a graph (matmuls of F32 and Q8_0 weights, add, rms_norm, softmax,
 *      scale) against a double-precision reference, computed again with
 *      new inputs (GRAPH_RECOMPUTE) and with a changed op parameter;
 *   5. the scheduler over two servers and the CPU computing a llama-style
 *      block, against the same block on the CPU alone; views of CPU
 *      inputs inside an RPC split;
 *   6. SET_TENSOR_HASH with a server's --cache (through a counting proxy:
 *      the second upload of the same 12 MiB sends only the hash);
 *   7. ggml_backend_rpc_start_server in a thread of this process;
 *   8. failures: nobody listening, bad endpoints, device indexes, a server
 *      killed while its buffers exist (then a new one works), fake servers
 *      (wrong version, garbage sizes, silence under GGML_RPC_TIMEOUT=1);
 *   9. GGML_RPC_TOKEN against servers started with --token-file: the
 *      right token computes, a wrong or malformed one, a server without
 *      a token, and no token for a server with one are refused.
 *
 * Environment (set by "make check"): RPC_SERVER_PROGRAM, the server
 * program; RPC_PLUGIN_DIR, the directory of the uninstalled plugin (given
 * to this process and the servers as GGML_BACKEND_PATH).  Without them
 * everything is skipped.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"
#include "tap.h"

/* ------------------------------------------------------------- helpers */

static uint64_t rng_state = 0x7e57c11e47ull;

static uint64_t rng_next(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [lo, hi). */
static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double) (rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [lo, hi]. */
static int rng_int(int lo, int hi)
{
    return lo + (int) (rng_next() % (uint64_t) (hi - lo + 1));
}

static void rng_bytes(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t) (rng_next() >> 56);
}

/* sum (got - want)^2 / sum want^2, in double; infinity for NaN. */
static double nmse(const float *got, const double *want, size_t n)
{
    double err = 0.0, norm = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double) got[i] - want[i];
        err += d * d;
        norm += want[i] * want[i];
    }
    if (isnan(err) || norm == 0.0)
        return INFINITY;
    return err / norm;
}

static bool all_bytes(const void *p, size_t n, uint8_t value)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != value)
            return false;
    return true;
}

/* The library's log goes to tap.h's sink under a lock (servers and fake peers run in threads). */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void locked_sink(enum ggml_log_level level, const char *text, void *user_data)
{
    pthread_mutex_lock(&log_lock);
    tap_log_sink(level, text, user_data);
    pthread_mutex_unlock(&log_lock);
}

static int errors_logged(void)
{
    pthread_mutex_lock(&log_lock);
    const int n = tap_log_errors();
    pthread_mutex_unlock(&log_lock);
    return n;
}

/* Whether name is "RPC<digits>". */
static bool is_rpc_device_name(const char *name)
{
    if (name == NULL || strncmp(name, "RPC", 3) != 0 || name[3] == '\0')
        return false;
    for (const char *p = name + 3; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* Little-endian stores and loads for the fake peers. */
static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static bool send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        const ssize_t put = send(fd, b, n, MSG_NOSIGNAL);
        if (put < 0 && errno == EINTR)
            continue;
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
        const ssize_t got = recv(fd, b, n, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        b += got;
        n -= (size_t) got;
    }
    return true;
}

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t) port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return sa;
}

/* A listening socket on 127.0.0.1:port (0: any free port, *port receives it), or -1. */
static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = loopback(*port);
    socklen_t len = sizeof sa;
    if (bind(fd, (struct sockaddr *) &sa, sizeof sa) != 0 || listen(fd, 8) != 0 ||
        getsockname(fd, (struct sockaddr *) &sa, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static bool port_free(int port)
{
    int p = port;
    const int fd = listen_loopback(&p);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* A connection to 127.0.0.1:port, or -1. */
static int connect_loopback(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = loopback(port);
    if (connect(fd, (struct sockaddr *) &sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* ------------------------------------------------------ server programs */

extern char **environ;

static const char *server_program;
static char tmp_dir[] = "/tmp/test-rpc-client.XXXXXX";
static int next_port;

struct server {
    pid_t pid;
    int port;
    char endpoint[32];
    char log[128];
};

/* A port nobody listens on now. */
static int free_port(void)
{
    for (int i = 0; i < 100; i++) {
        const int port = next_port++;
        if (next_port > 65000)
            next_port = 40000;
        if (port_free(port))
            return port;
    }
    return -1;
}

/* Prints the server's output as diagnostics. */
static void server_diag(const struct server *s)
{
    FILE *f = fopen(s->log, "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        tap_diag("server %s: %s", s->endpoint, line);
    }
    if (f != NULL)
        fclose(f);
}

/*
 * The environment of a server: ours without GGML_RPC_SERVERS (a server
 * loads the RPC plugin, whose registry would connect to those servers as
 * a client), GGML_RPC_TIMEOUT and GGML_RPC_TOKEN (which would give the
 * server a token).  Built before fork.
 */
static char **server_environment(void)
{
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + 1, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; env != NULL && i < n; i++)
        if (strncmp(environ[i], "GGML_RPC_SERVERS=", 17) != 0 && strncmp(environ[i], "GGML_RPC_TIMEOUT=", 17) != 0 &&
            strncmp(environ[i], "GGML_RPC_TOKEN=", 15) != 0)
            env[k++] = environ[i];
    return env;
}

/*
 * Starts the server program with "--port P --threads 2" and extra (NULL-
 * terminated) on a free port and waits until it accepts connections; on a
 * port taken meanwhile, another one.  False when it cannot be started.
 */
static bool server_start(struct server *s, const char *const *extra)
{
    memset(s, 0, sizeof *s);
    s->pid = -1;
    for (int attempt = 0; attempt < 10; attempt++) {
        const int port = free_port();
        if (port < 0)
            return false;
        char port_arg[16];
        snprintf(port_arg, sizeof port_arg, "%d", port);
        const char *argv[32] = { server_program, "--port", port_arg, "--threads", "2" };
        int argc = 5;
        for (int i = 0; extra != NULL && extra[i] != NULL && argc < 31; i++)
            argv[argc++] = extra[i];
        argv[argc] = NULL;
        snprintf(s->log, sizeof s->log, "%s/server-%d.log", tmp_dir, port);
        snprintf(s->endpoint, sizeof s->endpoint, "127.0.0.1:%d", port);
        const pid_t parent = getpid();
        char **env = server_environment();
        if (env == NULL)
            return false;
        fflush(stdout);
        const pid_t pid = fork();
        if (pid < 0) {
            free(env);
            return false;
        }
        if (pid == 0) {
#ifdef __linux__
            prctl(PR_SET_PDEATHSIG, SIGKILL);   /* no server outlives a crashed test */
            if (getppid() != parent)
                _exit(127);
#else
            (void) parent;
#endif
            const int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                close(fd);
            }
            execve(server_program, (char *const *) argv, env);
            _exit(127);
        }
        free(env);
        bool exited = false;
        for (int i = 0; i < 600 && !exited; i++) {   /* 60 s at most (sanitizer builds start slowly) */
            int status;
            if (waitpid(pid, &status, WNOHANG) == pid) {
                exited = true;
                break;
            }
            const int fd = connect_loopback(port);
            if (fd >= 0) {
                close(fd);
                s->pid = pid;
                s->port = port;
                return true;
            }
            usleep(100000);
        }
        if (!exited) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            server_diag(s);
            return false;
        }
        server_diag(s);   /* exited: the port was taken, or worse; try another */
    }
    return false;
}

static void server_stop(struct server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = -1;
    }
}

/* ----------------------------------------------------------- fake peers */

enum fake_mode {
    FAKE_OLD_VERSION,      /* HELLO answered with version 4.0.0 */
    FAKE_V3_HELLO,         /* HELLO answered as protocol 3 did: 3 bytes */
    FAKE_HELLO_HUGE,       /* HELLO's reply announces 2^62 bytes */
    FAKE_CLOSE,            /* closes every connection at once */
    FAKE_COUNT_HUGE,       /* DEVICE_COUNT's reply announces 2^62 bytes */
    FAKE_ALLOC_GARBAGE,    /* a sound server but for ALLOC_BUFFER: a reply of 2^60 bytes */
    FAKE_SILENT,           /* reads, never answers */
};

struct fake {
    enum fake_mode mode;
    int listen_fd, port;
    char endpoint[32];
    pthread_t thread;
    atomic_int connections;
    atomic_int conn_fd;
};

/* Answers one request; false to close the connection. */
static bool fake_answer(struct fake *f, int fd, uint8_t cmd)
{
    uint8_t out[8 + 32];
    memset(out, 0, sizeof out);
    uint64_t size = 0;
    switch (cmd) {
    case 14: /* HELLO */
        if (f->mode == FAKE_SILENT)
            return true;
        size = 28;
        out[8] = 5, out[9] = 1, out[10] = 0;
        if (f->mode == FAKE_OLD_VERSION)
            out[8] = 4, out[9] = 0;
        if (f->mode == FAKE_V3_HELLO)
            size = 3, out[8] = 3, out[9] = 0;
        if (f->mode == FAKE_HELLO_HUGE)
            size = (uint64_t) 1 << 62;
        break;
    case 15: /* DEVICE_COUNT */
        size = 4;
        out[8] = 1;
        if (f->mode == FAKE_COUNT_HUGE)
            size = (uint64_t) 1 << 62;
        break;
    case 1: /* GET_ALIGNMENT */
        size = 8;
        put_u64(out + 8, 32);
        break;
    case 2: /* GET_MAX_SIZE */
        size = 8;
        put_u64(out + 8, (uint64_t) 1 << 30);
        break;
    case 11: /* GET_DEVICE_MEMORY */
        size = 16;
        put_u64(out + 8, (uint64_t) 1 << 30);
        put_u64(out + 16, (uint64_t) 1 << 31);
        break;
    case 13: /* GET_ALLOC_SIZE */
        size = 8;
        put_u64(out + 8, (uint64_t) 1 << 20);
        break;
    case 0: /* ALLOC_BUFFER */
        if (f->mode != FAKE_ALLOC_GARBAGE)
            return false;
        size = (uint64_t) 1 << 60;
        break;
    default:
        return false;
    }
    put_u64(out, size);
    const size_t n = size <= 32 ? 8 + (size_t) size : 8 + 16;   /* a huge size: 16 bytes, then the end */
    return send_all(fd, out, n) && size <= 32;
}

static void fake_serve(struct fake *f, int fd)
{
    if (f->mode == FAKE_CLOSE)
        return;
    uint8_t head[9], chunk[4096];
    while (recv_all(fd, head, sizeof head)) {
        uint64_t size = get_u64(head + 1);
        if (size > ((uint64_t) 64 << 20))
            return;
        while (size > 0) {
            const size_t n = size < sizeof chunk ? (size_t) size : sizeof chunk;
            if (!recv_all(fd, chunk, n))
                return;
            size -= n;
        }
        if (!fake_answer(f, fd, head[0]))
            return;
    }
}

/* The next connection on listen_fd, or -1 once the listening socket was shut down. */
static int accept_next(int listen_fd)
{
    while (true) {
        const int fd = accept(listen_fd, NULL, NULL);
        if (fd >= 0 || (errno != EINTR && errno != ECONNABORTED))
            return fd;
    }
}

static void *fake_thread(void *arg)
{
    struct fake *f = arg;
    int fd;
    while ((fd = accept_next(f->listen_fd)) >= 0) {
        atomic_fetch_add(&f->connections, 1);
        atomic_store(&f->conn_fd, fd);
        fake_serve(f, fd);
        atomic_store(&f->conn_fd, -1);
        close(fd);
    }
    return NULL;
}

static bool fake_start(struct fake *f, enum fake_mode mode)
{
    memset(f, 0, sizeof *f);
    f->mode = mode;
    atomic_init(&f->connections, 0);
    atomic_init(&f->conn_fd, -1);
    f->port = 0;
    f->listen_fd = listen_loopback(&f->port);
    if (f->listen_fd < 0)
        return false;
    snprintf(f->endpoint, sizeof f->endpoint, "127.0.0.1:%d", f->port);
    if (pthread_create(&f->thread, NULL, fake_thread, f) != 0) {
        close(f->listen_fd);
        return false;
    }
    return true;
}

static void fake_stop(struct fake *f)
{
    shutdown(f->listen_fd, SHUT_RDWR);
    const int fd = atomic_load(&f->conn_fd);
    if (fd >= 0)
        shutdown(fd, SHUT_RDWR);
    pthread_join(f->thread, NULL);
    close(f->listen_fd);
}

/* A proxy to a server that counts the bytes the client sends. */
struct proxy {
    int listen_fd, port, target_port;
    char endpoint[32];
    pthread_t thread;
    atomic_ullong up_bytes;
    atomic_int fds[2];
};

static void proxy_relay(struct proxy *p, int client, int server)
{
    static uint8_t buf[1 << 16];
    struct pollfd pfd[2] = { { client, POLLIN, 0 }, { server, POLLIN, 0 } };
    while (poll(pfd, 2, -1) >= 0) {
        for (int i = 0; i < 2; i++) {
            if (pfd[i].revents == 0)
                continue;
            const ssize_t n = recv(pfd[i].fd, buf, sizeof buf, 0);
            if (n <= 0)
                return;
            if (i == 0)
                atomic_fetch_add(&p->up_bytes, (unsigned long long) n);
            if (!send_all(pfd[1 - i].fd, buf, (size_t) n))
                return;
        }
    }
}

static void *proxy_thread(void *arg)
{
    struct proxy *p = arg;
    int client;
    while ((client = accept_next(p->listen_fd)) >= 0) {
        const int server = connect_loopback(p->target_port);
        atomic_store(&p->fds[0], client);
        atomic_store(&p->fds[1], server);
        if (server >= 0)
            proxy_relay(p, client, server);
        atomic_store(&p->fds[0], -1);
        atomic_store(&p->fds[1], -1);
        if (server >= 0)
            close(server);
        close(client);
    }
    return NULL;
}

static bool proxy_start(struct proxy *p, int target_port)
{
    memset(p, 0, sizeof *p);
    p->target_port = target_port;
    atomic_init(&p->up_bytes, 0);
    atomic_init(&p->fds[0], -1);
    atomic_init(&p->fds[1], -1);
    p->listen_fd = listen_loopback(&p->port);
    if (p->listen_fd < 0)
        return false;
    snprintf(p->endpoint, sizeof p->endpoint, "127.0.0.1:%d", p->port);
    return pthread_create(&p->thread, NULL, proxy_thread, p) == 0;
}

static void proxy_stop(struct proxy *p)
{
    shutdown(p->listen_fd, SHUT_RDWR);
    for (int i = 0; i < 2; i++) {
        const int fd = atomic_load(&p->fds[i]);
        if (fd >= 0)
            shutdown(fd, SHUT_RDWR);
    }
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
}

/* ---------------------------------------------------------- the servers */

static struct server server_a;      /* one device (the CPU) */
static struct server server_b;      /* two devices (the CPU twice) */
static struct server server_env;    /* named by GGML_RPC_SERVERS */
static ggml_backend_reg_t reg_a, reg_b;
static ggml_backend_t cpu;

static bool add_works(ggml_backend_t be);

/* ---------------------------------------------------- 1. registries */

static void check_devices(ggml_backend_reg_t reg, const char *endpoint, const char *what)
{
    bool names = true, descriptions = true, found = true;
    for (size_t i = 0; i < ggml_backend_reg_dev_count(reg); i++) {
        ggml_backend_dev_t dev = ggml_backend_reg_dev_get(reg, i);
        const char *name = ggml_backend_dev_name(dev), *desc = ggml_backend_dev_description(dev);
        if (!is_rpc_device_name(name)) {
            tap_diag("%s device %zu is named '%s'", what, i, name ? name : "(null)");
            names = false;
        }
        if (desc == NULL || strcmp(desc, endpoint) != 0) {
            tap_diag("%s device %zu is described as '%s'", what, i, desc ? desc : "(null)");
            descriptions = false;
        }
        if (name != NULL && ggml_backend_dev_by_name(name) != dev)
            found = false;
    }
    ok(names, "%s: devices are named RPC<number>", what);
    ok(descriptions, "%s: each device's description is the endpoint", what);
    ok(found, "%s: registered, ggml_backend_dev_by_name finds each device", what);
}

static void test_registries(void)
{
    errors_logged();
    ggml_backend_reg_t env = ggml_backend_rpc_reg();
    ok(env != NULL && strcmp(ggml_backend_reg_name(env), "RPC") == 0, "ggml_backend_rpc_reg: the plugin's registry, \"RPC\"");
    if (env != NULL) {
        is_uint(ggml_backend_reg_dev_count(env), 1, "the RPC registry has the one device of the GGML_RPC_SERVERS server");
        ggml_backend_dev_t dev = ggml_backend_reg_dev_count(env) > 0 ? ggml_backend_reg_dev_get(env, 0) : NULL;
        is_str(dev != NULL ? ggml_backend_dev_description(dev) : NULL, server_env.endpoint,
               "the RPC registry's device is described by its endpoint");
        ok(dev != NULL && is_rpc_device_name(ggml_backend_dev_name(dev)) &&
               ggml_backend_dev_by_name(ggml_backend_dev_name(dev)) == dev,
           "the RPC registry's device is RPC<number>, found by name (the plugin registry is registered)");
        /* the server serves one connection at a time: both paths must share the one connection */
        ggml_backend_reg_t same = ggml_backend_rpc_add_server(server_env.endpoint);
        ok(same != NULL && dev != NULL && ggml_backend_reg_dev_count(same) == 1 &&
               ggml_backend_reg_dev_get(same, 0) == dev,
           "add_server of the GGML_RPC_SERVERS endpoint: the registry of the RPC registry's device");
        ggml_backend_t be = dev != NULL ? ggml_backend_dev_init(dev, NULL) : NULL;
        ok(be != NULL && add_works(be), "a graph computed on the GGML_RPC_SERVERS server's device");
        if (be != NULL)
            ggml_backend_free(be);
    } else {
        tap_skip(5, "no RPC registry");
    }

    reg_a = ggml_backend_rpc_add_server(server_a.endpoint);
    reg_b = ggml_backend_rpc_add_server(server_b.endpoint);
    ok(reg_a != NULL, "add_server(%s): a registry", server_a.endpoint);
    ok(reg_b != NULL, "add_server(%s): a registry", server_b.endpoint);
    is_int(errors_logged(), 0, "no error logged for reachable servers");
    if (reg_a == NULL || reg_b == NULL) {
        reg_a = reg_b = NULL;
        tap_skip(13, "no registry");
        return;
    }
    ok(reg_a != reg_b, "two servers: two registries");
    is_ptr(ggml_backend_rpc_add_server(server_a.endpoint), reg_a, "add_server of the same endpoint: the same registry");
    char name[64];
    snprintf(name, sizeof name, "RPC[%s]", server_a.endpoint);
    is_str(ggml_backend_reg_name(reg_a), name, "the registry's name is RPC[endpoint]");
    is_uint(ggml_backend_reg_dev_count(reg_a), 1, "server A serves one device");
    is_uint(ggml_backend_reg_dev_count(reg_b), 2, "server B serves two devices (--device CPU twice)");

    ggml_backend_register(reg_a);
    ggml_backend_register(reg_b);
    is_ptr(ggml_backend_reg_by_name(name), reg_a, "registered: ggml_backend_reg_by_name finds RPC[endpoint]");
    check_devices(reg_a, server_a.endpoint, "server A");
    check_devices(reg_b, server_b.endpoint, "server B");

    /* every device has its own name */
    const char *names[3] = { ggml_backend_dev_name(ggml_backend_reg_dev_get(reg_a, 0)),
                             ggml_backend_dev_name(ggml_backend_reg_dev_get(reg_b, 0)),
                             ggml_backend_dev_name(ggml_backend_reg_dev_get(reg_b, 1)) };
    ok(names[0] && names[1] && names[2] && strcmp(names[0], names[1]) != 0 && strcmp(names[0], names[2]) != 0 &&
           strcmp(names[1], names[2]) != 0,
       "the three devices of A and B have three names (%s, %s, %s)", names[0], names[1], names[2]);
}

/* ---------------------------------------- 2. backends and buffer types */

static void test_backends(void)
{
    if (reg_a == NULL) {
        tap_skip(16, "no registry of server A");
        return;
    }
    ggml_backend_t be = ggml_backend_rpc_init(server_a.endpoint, 0);
    ggml_backend_t be_b1 = ggml_backend_rpc_init(server_b.endpoint, 1);
    ok(be != NULL && be_b1 != NULL, "ggml_backend_rpc_init of A:0 and B:1");
    if (be == NULL || be_b1 == NULL) {
        tap_skip(15, "no backend");
        if (be != NULL)
            ggml_backend_free(be);
        if (be_b1 != NULL)
            ggml_backend_free(be_b1);
        return;
    }
    ok(ggml_backend_is_rpc(be) && ggml_backend_is_rpc(be_b1), "ggml_backend_is_rpc: true for RPC backends");
    ok(!ggml_backend_is_rpc(cpu), "ggml_backend_is_rpc: false for the CPU backend");
    char want[64];
    snprintf(want, sizeof want, "RPC0[%s]", server_a.endpoint);
    is_str(ggml_backend_name(be), want, "the backend of A:0 is named RPC<device>[endpoint]");
    snprintf(want, sizeof want, "RPC1[%s]", server_b.endpoint);
    is_str(ggml_backend_name(be_b1), want, "the backend of B:1 is named RPC<device>[endpoint]");
    is_ptr(ggml_backend_get_device(be), ggml_backend_reg_dev_get(reg_a, 0), "the backend's device is the registry's");

    ggml_backend_buffer_type_t buft = ggml_backend_rpc_buffer_type(server_a.endpoint, 0);
    ggml_backend_buffer_type_t buft_b1 = ggml_backend_rpc_buffer_type(server_b.endpoint, 1);
    ok(buft != NULL && buft == ggml_backend_get_default_buffer_type(be) &&
           buft == ggml_backend_rpc_buffer_type(server_a.endpoint, 0),
       "ggml_backend_rpc_buffer_type: the backend's default, the same each time");
    ok(buft_b1 != NULL && buft_b1 != buft, "B:1 has a buffer type of its own");
    snprintf(want, sizeof want, "RPC0[%s]", server_a.endpoint);
    is_str(buft ? ggml_backend_buft_name(buft) : NULL, want, "the buffer type is named as the backend");
    const size_t align = buft ? ggml_backend_buft_get_alignment(buft) : 0;
    ok(align > 0 && (align & (align - 1)) == 0, "the buffer type's alignment is a power of two (%zu)", align);
    ok(buft != NULL && !ggml_backend_buft_is_host(buft), "the buffer type is not host memory");
    ok(buft != NULL && ggml_backend_buft_get_max_size(buft) >= align, "the buffer type has a maximum size");

    size_t free_mem = 1, total = 0;
    ggml_backend_rpc_get_device_memory(server_a.endpoint, 0, &free_mem, &total);
    ok(total > 0 && free_mem <= total, "ggml_backend_rpc_get_device_memory: total %zu > 0, free %zu <= total", total,
       free_mem);
    struct ggml_backend_dev_props props;
    memset(&props, 0, sizeof props);
    ggml_backend_dev_get_props(ggml_backend_get_device(be), &props);
    ok(props.name != NULL && strcmp(props.name, ggml_backend_dev_name(ggml_backend_get_device(be))) == 0 &&
           props.description != NULL && strcmp(props.description, server_a.endpoint) == 0,
       "the device's props: its name and the endpoint");
    ok(props.memory_total == total && props.memory_free <= props.memory_total,
       "the device's props: the same total memory as ggml_backend_rpc_get_device_memory");
    errors_logged();
    ok(!ggml_backend_is_rpc(NULL) && errors_logged() == 1, "ggml_backend_is_rpc(NULL): false, one error logged");
    ggml_backend_free(be_b1);
    ggml_backend_free(be);
}

/* ------------------------------------------------------- 3. tensor data */

#define NT 1000
#define NQ (32 * 20)

static bool get_equals(const struct ggml_tensor *t, const void *want, size_t offset, size_t n)
{
    uint8_t *got = malloc(n + 1);
    memset(got, 0xee, n + 1);
    ggml_backend_tensor_get(t, got, offset, n);
    const bool same = memcmp(got, want, n) == 0;
    free(got);
    return same;
}

static void test_tensors(void)
{
    if (reg_a == NULL) {
        tap_skip(21, "no registry of server A");
        return;
    }
    struct ggml_init_params params = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ca = ggml_init(params), *cb = ggml_init(params), *cc = ggml_init(params);
    struct ggml_tensor *f32 = ggml_new_tensor_1d(ca, GGML_TYPE_F32, NT);
    struct ggml_tensor *f16 = ggml_new_tensor_1d(ca, GGML_TYPE_F16, NT);
    struct ggml_tensor *q8 = ggml_new_tensor_2d(ca, GGML_TYPE_Q8_0, 32 * 4, NQ / (32 * 4));
    struct ggml_tensor *dst = ggml_new_tensor_1d(ca, GGML_TYPE_F32, NT);
    struct ggml_tensor *on_b = ggml_new_tensor_1d(cb, GGML_TYPE_F32, NT);
    struct ggml_tensor *on_cpu = ggml_new_tensor_1d(cc, GGML_TYPE_F32, NT);
    ggml_backend_buffer_type_t buft = ggml_backend_rpc_buffer_type(server_a.endpoint, 0);
    ggml_backend_buffer_t buf = buft ? ggml_backend_alloc_ctx_tensors_from_buft(ca, buft) : NULL;
    ggml_backend_buffer_type_t buft_b = ggml_backend_rpc_buffer_type(server_b.endpoint, 0);
    ggml_backend_buffer_t buf_b = buft_b ? ggml_backend_alloc_ctx_tensors_from_buft(cb, buft_b) : NULL;
    ggml_backend_buffer_t buf_c = ggml_backend_alloc_ctx_tensors_from_buft(cc, ggml_backend_cpu_buffer_type());
    ok(buf != NULL && buf_b != NULL && buf_c != NULL, "buffers for the tensors on A, B and the CPU");
    if (buf == NULL || buf_b == NULL || buf_c == NULL) {
        tap_skip(20, "no buffers");
        goto out;
    }
    const size_t align = ggml_backend_buft_get_alignment(buft);
    ok(ggml_backend_buffer_get_type(buf) == buft && !ggml_backend_buffer_is_host(buf) &&
           ggml_backend_buffer_get_size(buf) >= ggml_nbytes(f32) + ggml_nbytes(f16) + ggml_nbytes(q8) + ggml_nbytes(dst),
       "the buffer: its type, not host memory, room for its tensors");
    ok(ggml_backend_buffer_get_base(buf) != NULL && (uintptr_t) ggml_backend_buffer_get_base(buf) % align == 0 &&
           f32->buffer == buf && (uintptr_t) f32->data % align == 0,
       "the buffer has an aligned base address; tensors are placed in it");

    float v32[NT], w32[NT];
    ggml_fp16_t v16[NT];
    for (int i = 0; i < NT; i++) {
        v32[i] = (float) rng_uniform(-100.0, 100.0);
        v16[i] = ggml_fp32_to_fp16((float) rng_uniform(-2.0, 2.0));
    }
    float qsrc[NQ];
    for (int i = 0; i < NQ; i++)
        qsrc[i] = (float) rng_uniform(-1.0, 1.0);
    const size_t q8_bytes = ggml_nbytes(q8);
    uint8_t *vq = malloc(q8_bytes);
    ggml_quantize_chunk(GGML_TYPE_Q8_0, qsrc, vq, 0, q8->ne[1], q8->ne[0], NULL);

    ggml_backend_tensor_set(f32, v32, 0, sizeof v32);
    ggml_backend_tensor_set(f16, v16, 0, sizeof v16);
    ggml_backend_tensor_set(q8, vq, 0, q8_bytes);
    ok(get_equals(f32, v32, 0, sizeof v32), "F32: set then get gives the bytes back");
    ok(get_equals(f16, v16, 0, sizeof v16), "F16: set then get gives the bytes back");
    ok(get_equals(q8, vq, 0, q8_bytes), "Q8_0: set then get gives the bytes back");

    /* part of a tensor, at odd offsets */
    uint8_t patch[37];
    rng_bytes(patch, sizeof patch);
    ggml_backend_tensor_set(f32, patch, 101, sizeof patch);
    memcpy((uint8_t *) v32 + 101, patch, sizeof patch);
    ok(get_equals(f32, v32, 0, sizeof v32), "a set of 37 bytes at offset 101 changes those bytes only");
    ok(get_equals(f32, (const uint8_t *) v32 + 55, 55, 29), "a get of 29 bytes at offset 55");
    ok(get_equals(q8, vq + 34 * 3, 34 * 3, 34 * 2), "a get of two Q8_0 blocks at block 3");
    ok(get_equals(f32, (const uint8_t *) v32 + sizeof v32 - 4, sizeof v32 - 4, 4), "a get of the last value");

    ggml_backend_tensor_memset(f32, 0xa5, 12, 40);
    memset((uint8_t *) v32 + 12, 0xa5, 40);
    ok(get_equals(f32, v32, 0, sizeof v32), "ggml_backend_tensor_memset of 40 bytes at offset 12: those bytes only");

    /* copies: on one server, between servers, with the host */
    ggml_backend_tensor_copy(f32, dst);
    ok(get_equals(dst, v32, 0, sizeof v32), "ggml_backend_tensor_copy on one server: the destination equals the source");
    ggml_backend_tensor_copy(f32, on_b);
    ok(get_equals(on_b, v32, 0, sizeof v32), "ggml_backend_tensor_copy from server A to server B");
    ggml_backend_tensor_copy(on_b, on_cpu);
    ok(memcmp(on_cpu->data, v32, sizeof v32) == 0, "ggml_backend_tensor_copy from server B to a CPU buffer");
    for (int i = 0; i < NT; i++)
        w32[i] = (float) (i * 3 - 7);
    memcpy(on_cpu->data, w32, sizeof w32);
    ggml_backend_tensor_copy(on_cpu, dst);
    ok(get_equals(dst, w32, 0, sizeof w32), "ggml_backend_tensor_copy from a CPU buffer to server A");
    ok(get_equals(f32, v32, 0, sizeof v32), "the copies left the source unchanged");

    ggml_backend_buffer_clear(buf, 0x3c);
    uint8_t *back = malloc(q8_bytes + sizeof v32);
    memset(back, 0, q8_bytes + sizeof v32);
    ggml_backend_tensor_get(f16, back, 0, ggml_nbytes(f16));
    bool cleared = all_bytes(back, ggml_nbytes(f16), 0x3c);
    ggml_backend_tensor_get(q8, back, 0, q8_bytes);
    cleared = cleared && all_bytes(back, q8_bytes, 0x3c);
    ggml_backend_tensor_get(dst, back, 0, ggml_nbytes(dst));
    cleared = cleared && all_bytes(back, ggml_nbytes(dst), 0x3c);
    ok(cleared, "ggml_backend_buffer_clear(0x3c): every tensor of the buffer reads 0x3c");
    ok(get_equals(on_b, v32, 0, sizeof v32), "clearing A's buffer left B's tensor alone");
    free(back);

    /* a buffer allocated directly, and freed while others live on */
    ggml_backend_buffer_t small = ggml_backend_buft_alloc_buffer(buft, 4096);
    ok(small != NULL && ggml_backend_buffer_get_size(small) >= 4096, "ggml_backend_buft_alloc_buffer of 4096 bytes");
    if (small != NULL)
        ggml_backend_buffer_free(small);
    ok(get_equals(on_b, v32, 0, sizeof v32), "after freeing a buffer, the others still read back");
    errors_logged();
    ggml_backend_tensor_get(f32, w32, 0, 0);
    ggml_backend_tensor_set(f32, w32, 0, 0);
    is_int(errors_logged(), 0, "gets and sets of 0 bytes: no error");
    free(vq);
out:
    if (buf != NULL)
        ggml_backend_buffer_free(buf);
    if (buf_b != NULL)
        ggml_backend_buffer_free(buf_b);
    if (buf_c != NULL)
        ggml_backend_buffer_free(buf_c);
    ggml_free(ca);
    ggml_free(cb);
    ggml_free(cc);
}

/* ------------------------------------------------ 4. a graph, checked */

#define GK 64     /* inner dimension */
#define GM 48     /* outputs */
#define GN 5      /* columns */

struct q8_block {
    ggml_fp16_t d;
    int8_t qs[32];
};

struct small_graph {
    struct ggml_context *wctx, *gctx;
    ggml_backend_buffer_t wbuf;
    ggml_gallocr_t galloc;
    struct ggml_cgraph *graph;
    struct ggml_tensor *x, *w1, *w2, *bias, *gain, *y1, *out;
    double w1_ref[GM][GK], w2_ref[GM][GK], bias_ref[GM], gain_ref[GM];
};

/* x with values k / 128, |k| <= 127 and one |k| = 127 a block: Q8_0 holds them exactly. */
static void fill_x(double x[GN][GK])
{
    for (int j = 0; j < GN; j++)
        for (int b = 0; b < GK / 32; b++) {
            for (int i = 0; i < 32; i++)
                x[j][b * 32 + i] = rng_int(-127, 127) / 128.0;
            x[j][b * 32 + rng_int(0, 31)] = (rng_next() & 1 ? 127 : -127) / 128.0;
        }
}

/* out = 3 (or scale) * softmax(rms_norm(W1 x + W2 x + bias) * gain), per column; y1 = W1 x. */
static void small_ref(const struct small_graph *g, double x[GN][GK], double scale, double y1[GN][GM],
                      double out[GN][GM])
{
    for (int j = 0; j < GN; j++) {
        double s[GM], ss = 0.0;
        for (int i = 0; i < GM; i++) {
            double a = 0.0, b = 0.0;
            for (int k = 0; k < GK; k++) {
                a += g->w1_ref[i][k] * x[j][k];
                b += g->w2_ref[i][k] * x[j][k];
            }
            y1[j][i] = a;
            s[i] = a + b + g->bias_ref[i];
            ss += s[i] * s[i];
        }
        const double inv = 1.0 / sqrt(ss / GM + 1e-5);
        double mx = -INFINITY, sum = 0.0;
        for (int i = 0; i < GM; i++) {
            s[i] = s[i] * inv * g->gain_ref[i];
            mx = fmax(mx, s[i]);
        }
        for (int i = 0; i < GM; i++)
            sum += exp(s[i] - mx);
        for (int i = 0; i < GM; i++)
            out[j][i] = scale * exp(s[i] - mx) / sum;
    }
}

static bool small_build(struct small_graph *g, ggml_backend_buffer_type_t buft)
{
    memset(g, 0, sizeof *g);
    struct ggml_init_params wp = { 8 * ggml_tensor_overhead(), NULL, true };
    g->wctx = ggml_init(wp);
    g->w1 = ggml_new_tensor_2d(g->wctx, GGML_TYPE_F32, GK, GM);
    g->w2 = ggml_new_tensor_2d(g->wctx, GGML_TYPE_Q8_0, GK, GM);
    g->bias = ggml_new_tensor_1d(g->wctx, GGML_TYPE_F32, GM);
    g->gain = ggml_new_tensor_1d(g->wctx, GGML_TYPE_F32, GM);
    g->wbuf = ggml_backend_alloc_ctx_tensors_from_buft(g->wctx, buft);
    if (g->wbuf == NULL)
        return false;
    ggml_backend_buffer_set_usage(g->wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    static float w1[GM * GK], bias[GM], gain[GM];
    static struct q8_block w2[GM * GK / 32];
    for (int i = 0; i < GM; i++) {
        for (int k = 0; k < GK; k++) {
            w1[i * GK + k] = (float) rng_uniform(-0.2, 0.2);
            g->w1_ref[i][k] = w1[i * GK + k];
        }
        for (int b = 0; b < GK / 32; b++) {
            const double d = ldexp(1.0, -rng_int(8, 10));   /* exact in F16 */
            struct q8_block *blk = &w2[i * (GK / 32) + b];
            blk->d = ggml_fp32_to_fp16((float) d);
            for (int q = 0; q < 32; q++) {
                blk->qs[q] = (int8_t) rng_int(-127, 127);
                g->w2_ref[i][b * 32 + q] = d * blk->qs[q];
            }
        }
        bias[i] = (float) rng_uniform(-0.5, 0.5);
        gain[i] = (float) rng_uniform(0.5, 1.5);
        g->bias_ref[i] = bias[i];
        g->gain_ref[i] = gain[i];
    }
    ggml_backend_tensor_set(g->w1, w1, 0, sizeof w1);
    ggml_backend_tensor_set(g->w2, w2, 0, sizeof w2);
    ggml_backend_tensor_set(g->bias, bias, 0, sizeof bias);
    ggml_backend_tensor_set(g->gain, gain, 0, sizeof gain);

    struct ggml_init_params gp = { 32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    g->gctx = ggml_init(gp);
    struct ggml_context *ctx = g->gctx;
    g->x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, GK, GN);
    ggml_set_input(g->x);
    g->y1 = ggml_mul_mat(ctx, g->w1, g->x);
    struct ggml_tensor *y2 = ggml_mul_mat(ctx, g->w2, g->x);
    struct ggml_tensor *s = ggml_add(ctx, ggml_add(ctx, g->y1, y2), g->bias);
    struct ggml_tensor *n = ggml_mul(ctx, ggml_rms_norm(ctx, s, 1e-5f), g->gain);
    g->out = ggml_scale(ctx, ggml_soft_max(ctx, n), 3.0f);
    ggml_set_output(g->y1);
    ggml_set_output(g->out);
    g->graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(g->graph, g->out);
    g->galloc = ggml_gallocr_new(buft);
    return g->galloc != NULL && ggml_gallocr_alloc_graph(g->galloc, g->graph);
}

static void small_free(struct small_graph *g)
{
    if (g->galloc != NULL)
        ggml_gallocr_free(g->galloc);
    if (g->wbuf != NULL)
        ggml_backend_buffer_free(g->wbuf);
    if (g->gctx != NULL)
        ggml_free(g->gctx);
    if (g->wctx != NULL)
        ggml_free(g->wctx);
}

/* Sets x, computes on be, compares y1 and out with the reference; reports one line. */
static void small_run(struct small_graph *g, ggml_backend_t be, double scale, const char *what)
{
    static double x[GN][GK], y1_ref[GN][GM], out_ref[GN][GM];
    static float xf[GN * GK], y1[GN * GM], out[GN * GM];
    fill_x(x);
    for (int j = 0; j < GN; j++)
        for (int k = 0; k < GK; k++)
            xf[j * GK + k] = (float) x[j][k];
    small_ref(g, x, scale, y1_ref, out_ref);
    ggml_backend_tensor_set(g->x, xf, 0, sizeof xf);
    memset(y1, 0xff, sizeof y1);
    memset(out, 0xff, sizeof out);
    const enum ggml_status status = ggml_backend_graph_compute(be, g->graph);
    ggml_backend_tensor_get(g->y1, y1, 0, sizeof y1);
    ggml_backend_tensor_get(g->out, out, 0, sizeof out);
    const double e_y1 = nmse(y1, &y1_ref[0][0], GN * GM), e_out = nmse(out, &out_ref[0][0], GN * GM);
    ok(status == GGML_STATUS_SUCCESS && e_y1 <= 1e-10 && e_out <= 1e-10,
       "%s: status %d, nmse of the F32 matmul %.3g, of the output %.3g (bound 1e-10)", what, (int) status, e_y1, e_out);
}

static void test_graph(void)
{
    if (reg_a == NULL) {
        tap_skip(5, "no registry of server A");
        return;
    }
    ggml_backend_t be = ggml_backend_rpc_init(server_a.endpoint, 0);
    struct small_graph g;
    const bool built = be != NULL && small_build(&g, ggml_backend_get_default_buffer_type(be));
    ok(built, "a graph of matmuls (F32, Q8_0), add, rms_norm, softmax, scale, allocated on server A");
    if (!built) {
        tap_skip(4, "no graph");
    } else {
        small_run(&g, be, 3.0, "computed on server A, against the double-precision reference");
        small_run(&g, be, 3.0, "the same graph with new inputs (a recompute)");
        small_run(&g, be, 3.0, "and again with other inputs");
        /* the same graph but for the scale's factor: not the graph computed before */
        float factor = 0.5f;
        if (g.out->op == GGML_OP_SCALE)
            memcpy(g.out->op_params, &factor, sizeof factor);
        small_run(&g, be, 0.5, "the graph with the scale's op_params changed to 0.5 (not a stale recompute)");
    }
    if (be != NULL) {
        small_free(&g);
        ggml_backend_free(be);
    }
}

/* ------------------------------------------ 5. the scheduler, a block */

#define E 64          /* embedding */
#define NH 4          /* heads */
#define NKV 2         /* key/value heads */
#define HD 16         /* head dimension */
#define FF 128        /* feed-forward */
#define T 7           /* tokens */

struct block_weights {
    struct ggml_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down;
};

struct block_inputs {
    struct ggml_tensor *embd, *pos, *mask;
    struct ggml_tensor *rope_q, *rope_k, *softmax, *out;
};

static void block_build(struct ggml_context *ctx, const struct block_weights *w, struct block_inputs *in)
{
    in->embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, E, T);
    in->pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, T);
    in->mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, T, GGML_PAD(T, GGML_KQ_MASK_PAD));
    ggml_set_input(in->embd);
    ggml_set_input(in->pos);
    ggml_set_input(in->mask);
    struct ggml_tensor *x = in->embd;
    struct ggml_tensor *cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), w->attn_norm);
    struct ggml_tensor *q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w->wq, cur), HD, NH, T);
    struct ggml_tensor *k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w->wk, cur), HD, NKV, T);
    struct ggml_tensor *v = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w->wv, cur), HD, NKV, T);
    q = in->rope_q = ggml_rope_ext(ctx, q, in->pos, NULL, HD, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    k = in->rope_k = ggml_rope_ext(ctx, k, in->pos, NULL, HD, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    q = ggml_permute(ctx, q, 0, 2, 1, 3);                                  /* [HD, T, NH] */
    k = ggml_permute(ctx, k, 0, 2, 1, 3);                                  /* [HD, T, NKV] */
    struct ggml_tensor *kq = ggml_mul_mat(ctx, k, q);                      /* [T, T, NH] */
    kq = in->softmax = ggml_soft_max_ext(ctx, kq, in->mask, 1.0f / sqrtf((float) HD), 0.0f);
    struct ggml_tensor *vt = ggml_cont(ctx, ggml_transpose(ctx, ggml_permute(ctx, v, 0, 2, 1, 3)));   /* [T, HD, NKV] */
    struct ggml_tensor *kqv = ggml_mul_mat(ctx, vt, kq);                   /* [HD, T, NH] */
    struct ggml_tensor *o = ggml_reshape_2d(ctx, ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3)), HD * NH, T);
    x = ggml_add(ctx, x, ggml_mul_mat(ctx, w->wo, o));
    cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), w->ffn_norm);
    struct ggml_tensor *h = ggml_swiglu_split(ctx, ggml_mul_mat(ctx, w->w_gate, cur), ggml_mul_mat(ctx, w->w_up, cur));
    in->out = ggml_add(ctx, x, ggml_mul_mat(ctx, w->w_down, h));
    ggml_set_output(in->out);
}

/* The weights' bytes, uploaded to both models. */
struct block_data {
    void *bytes[9];
    size_t size[9];
};

static struct ggml_tensor **weight_slot(struct block_weights *w, int i)
{
    struct ggml_tensor **slots[9] = { &w->attn_norm, &w->wq, &w->wk, &w->wv, &w->wo,
                                      &w->ffn_norm, &w->w_gate, &w->w_up, &w->w_down };
    return slots[i];
}

/* Weight i's shape and type. */
static struct ggml_tensor *weight_new(struct ggml_context *ctx, int i)
{
    switch (i) {
    case 0: case 5: return ggml_new_tensor_1d(ctx, GGML_TYPE_F32, E);
    case 1: return ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, E, NH * HD);
    case 2: return ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, E, NKV * HD);
    case 3: return ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, E, NKV * HD);
    case 4: return ggml_new_tensor_2d(ctx, GGML_TYPE_F16, NH * HD, E);
    case 6: return ggml_new_tensor_2d(ctx, GGML_TYPE_F16, E, FF);
    case 7: return ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, E, FF);
    default: return ggml_new_tensor_2d(ctx, GGML_TYPE_F32, FF, E);
    }
}

static void block_data_make(struct block_data *d, struct ggml_context *shapes)
{
    for (int i = 0; i < 9; i++) {
        struct ggml_tensor *t = weight_new(shapes, i);
        const int64_t n = ggml_nelements(t);
        float *values = malloc((size_t) n * sizeof *values);
        const double amp = i == 0 || i == 5 ? 0.0 : sqrt(3.0 / (double) t->ne[0]);
        for (int64_t j = 0; j < n; j++)
            values[j] = (float) (amp == 0.0 ? rng_uniform(0.5, 1.5) : rng_uniform(-amp, amp));
        d->size[i] = ggml_nbytes(t);
        d->bytes[i] = malloc(d->size[i]);
        if (t->type == GGML_TYPE_F32)
            memcpy(d->bytes[i], values, d->size[i]);
        else if (t->type == GGML_TYPE_F16)
            ggml_fp32_to_fp16_row(values, d->bytes[i], n);
        else
            ggml_quantize_chunk(t->type, values, d->bytes[i], 0, t->ne[1], t->ne[0], NULL);
        free(values);
    }
}

/* Where the scheduler's model keeps weight i: 0 server A, 1 server B, 2 the CPU. */
static int weight_home(int i)
{
    static const int home[9] = { 2, 0, 0, 0, 1, 2, 1, 1, 0 };
    return home[i];
}

/* Block inputs: embeddings, positions 0..T-1, a causal mask. */
static void block_set_inputs(const struct block_inputs *in, const float *embd)
{
    int32_t pos[T];
    ggml_fp16_t mask[T * GGML_PAD(T, GGML_KQ_MASK_PAD)];
    for (int t = 0; t < T; t++)
        pos[t] = t;
    for (int r = 0; r < GGML_PAD(T, GGML_KQ_MASK_PAD); r++)
        for (int j = 0; j < T; j++)
            mask[r * T + j] = ggml_fp32_to_fp16(j <= r ? 0.0f : -INFINITY);
    ggml_backend_tensor_set(in->embd, embd, 0, sizeof(float) * E * T);
    ggml_backend_tensor_set(in->pos, pos, 0, sizeof pos);
    ggml_backend_tensor_set(in->mask, mask, 0, sizeof mask);
}

/* The block on the CPU alone, into out (E * T values); false on failure. */
static bool block_on_cpu(const struct block_data *d, const float *embd, float *out)
{
    struct ggml_init_params p = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *wctx = ggml_init(p);
    struct block_weights w;
    for (int i = 0; i < 9; i++)
        *weight_slot(&w, i) = weight_new(wctx, i);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(wctx, cpu);
    bool good = wbuf != NULL;
    for (int i = 0; good && i < 9; i++)
        ggml_backend_tensor_set(*weight_slot(&w, i), d->bytes[i], 0, d->size[i]);
    struct ggml_init_params gp = { 128 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *gctx = ggml_init(gp);
    struct block_inputs in;
    block_build(gctx, &w, &in);
    struct ggml_cgraph *graph = ggml_new_graph(gctx);
    ggml_build_forward_expand(graph, in.out);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(cpu));
    good = good && galloc != NULL && ggml_gallocr_alloc_graph(galloc, graph);
    if (good) {
        block_set_inputs(&in, embd);
        good = ggml_backend_graph_compute(cpu, graph) == GGML_STATUS_SUCCESS;
        ggml_backend_tensor_get(in.out, out, 0, sizeof(float) * E * T);
    }
    if (galloc != NULL)
        ggml_gallocr_free(galloc);
    if (wbuf != NULL)
        ggml_backend_buffer_free(wbuf);
    ggml_free(gctx);
    ggml_free(wctx);
    return good;
}

static void test_sched(void)
{
    if (reg_a == NULL || reg_b == NULL) {
        tap_skip(8, "no registries");
        return;
    }
    ggml_backend_t be_a = ggml_backend_rpc_init(server_a.endpoint, 0);
    ggml_backend_t be_b = ggml_backend_rpc_init(server_b.endpoint, 1);
    if (be_a == NULL || be_b == NULL) {
        ok(false, "backends for the scheduler (A:0, B:1)");
        tap_skip(7, "no backends");
        if (be_a != NULL)
            ggml_backend_free(be_a);
        if (be_b != NULL)
            ggml_backend_free(be_b);
        return;
    }
    ggml_backend_t backends[3] = { be_a, be_b, cpu };
    ggml_backend_buffer_type_t bufts[3] = { ggml_backend_get_default_buffer_type(be_a),
                                            ggml_backend_get_default_buffer_type(be_b),
                                            ggml_backend_cpu_buffer_type() };

    struct ggml_init_params p = { 32 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *shapes = ggml_init(p);
    struct block_data data;
    block_data_make(&data, shapes);
    ggml_free(shapes);

    /* the weights on their three homes */
    struct ggml_context *wctx[3];
    ggml_backend_buffer_t wbuf[3];
    struct block_weights w;
    for (int h = 0; h < 3; h++)
        wctx[h] = ggml_init(p);
    for (int i = 0; i < 9; i++)
        *weight_slot(&w, i) = weight_new(wctx[weight_home(i)], i);
    bool good = true;
    for (int h = 0; h < 3; h++) {
        wbuf[h] = ggml_backend_alloc_ctx_tensors_from_buft(wctx[h], bufts[h]);
        good = good && wbuf[h] != NULL;
        if (wbuf[h] != NULL)
            ggml_backend_buffer_set_usage(wbuf[h], GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    }
    for (int i = 0; good && i < 9; i++)
        ggml_backend_tensor_set(*weight_slot(&w, i), data.bytes[i], 0, data.size[i]);
    ok(good, "the block's weights in buffers of server A, server B and the CPU");

    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, bufts, 3, 2048, false, false);
    ok(sched != NULL, "ggml_backend_sched_new with [%s, %s, CPU]", ggml_backend_name(be_a), ggml_backend_name(be_b));
    struct ggml_init_params gp = { 128 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *gctx = ggml_init(gp);
    struct block_inputs in;
    block_build(gctx, &w, &in);
    struct ggml_cgraph *graph = ggml_new_graph(gctx);
    ggml_build_forward_expand(graph, in.out);

    static float embd[E * T], got[E * T], want[E * T];
    static double want_d[E * T];
    for (int step = 0; step < 2; step++) {
        for (int i = 0; i < E * T; i++)
            embd[i] = (float) rng_uniform(-1.0, 1.0);
        enum ggml_status status = GGML_STATUS_FAILED;
        bool allocated = false;
        if (good && sched != NULL) {
            ggml_backend_sched_reset(sched);
            ggml_backend_sched_set_tensor_backend(sched, in.rope_q, cpu);
            ggml_backend_sched_set_tensor_backend(sched, in.rope_k, cpu);
            ggml_backend_sched_set_tensor_backend(sched, in.softmax, be_b);
            allocated = ggml_backend_sched_alloc_graph(sched, graph);
            if (allocated) {
                block_set_inputs(&in, embd);
                memset(got, 0xff, sizeof got);
                status = ggml_backend_sched_graph_compute(sched, graph);
                ggml_backend_tensor_get(in.out, got, 0, sizeof got);
            }
        }
        const bool reference = block_on_cpu(&data, embd, want);
        for (int i = 0; i < E * T; i++)
            want_d[i] = want[i];
        const double e = nmse(got, want_d, E * T);
        ok(allocated && status == GGML_STATUS_SUCCESS && reference && e <= 1e-6,
           "step %d: the scheduler's block equals the CPU's: status %d, nmse %.3g (bound 1e-6)", step, (int) status, e);
        if (step == 0 && allocated) {
            int count[3] = { 0, 0, 0 };
            for (int n = 0; n < ggml_graph_n_nodes(graph); n++) {
                ggml_backend_t b = ggml_backend_sched_get_tensor_backend(sched, ggml_graph_node(graph, n));
                for (int k = 0; k < 3; k++)
                    count[k] += b == backends[k];
            }
            ok(count[0] > 0 && count[1] > 0 && count[2] > 0, "nodes ran on all three backends (A %d, B %d, CPU %d)",
               count[0], count[1], count[2]);
            ok(ggml_backend_sched_get_tensor_backend(sched, in.softmax) == be_b &&
                   ggml_backend_sched_get_tensor_backend(sched, in.rope_q) == cpu,
               "the pinned nodes ran where they were pinned");
            ok(ggml_backend_sched_get_n_splits(sched) >= 3, "the graph was cut into %d splits (at least 3)",
               ggml_backend_sched_get_n_splits(sched));
        } else if (step == 0) {
            tap_skip(3, "not allocated");
        }
    }
    double norm = 0.0;
    for (int i = 0; i < E * T; i++)
        norm += want_d[i] * want_d[i];
    ok(norm > 1.0 && isfinite(norm), "the CPU's block output is not trivial (sum of squares %.3g)", norm);

    if (sched != NULL)
        ggml_backend_sched_free(sched);
    ggml_free(gctx);
    for (int h = 0; h < 3; h++) {
        if (wbuf[h] != NULL)
            ggml_backend_buffer_free(wbuf[h]);
        ggml_free(wctx[h]);
    }
    for (int i = 0; i < 9; i++)
        free(data.bytes[i]);
    ggml_backend_free(be_a);
    ggml_backend_free(be_b);
}

/*
 * Views of CPU inputs read by nodes on the RPC backend: the view nodes
 * (RESHAPE, VIEW) lie between RPC nodes, so the RPC split holds them,
 * though their data is in host memory (the scheduler copies them for
 * their readers).  Small integers: every result is exact.
 */
static void test_sched_views(void)
{
    ggml_backend_t be = reg_a != NULL ? ggml_backend_rpc_init(server_a.endpoint, 0) : NULL;
    if (be == NULL) {
        tap_skip(2, "no backend on server A");
        return;
    }
    enum { K = 32, N = 4, ZSTRIDE = 40, ZOFF = 8 };
    struct ggml_init_params p = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *wctx = ggml_init(p);
    struct ggml_tensor *w = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, K, K);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(wctx, be);
    struct ggml_init_params gp = { 32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(gp);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor *y = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, K * N);
    struct ggml_tensor *z = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ZOFF + ZSTRIDE * N);
    ggml_set_input(x);
    ggml_set_input(y);
    ggml_set_input(z);
    struct ggml_tensor *mm = ggml_mul_mat(ctx, w, x);
    struct ggml_tensor *zv = ggml_view_2d(ctx, z, K, N, ZSTRIDE * sizeof(float), ZOFF * sizeof(float));
    struct ggml_tensor *out = ggml_add(ctx, ggml_add(ctx, mm, ggml_reshape_2d(ctx, y, K, N)), zv);
    ggml_set_output(out);
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, out);

    ggml_backend_t backends[2] = { be, cpu };
    ggml_backend_sched_t sched = wbuf != NULL ? ggml_backend_sched_new(backends, NULL, 2, 256, false, false) : NULL;
    enum ggml_status status = GGML_STATUS_FAILED;
    static float wv[K * K], xv[K * N], yv[K * N], zv_data[ZOFF + ZSTRIDE * N], got[K * N];
    bool placed = false;
    if (sched != NULL) {
        ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        for (int i = 0; i < K * K; i++)
            wv[i] = (float) rng_int(-3, 3);
        for (int i = 0; i < K * N; i++)
            xv[i] = (float) rng_int(-5, 5), yv[i] = (float) rng_int(-100, 100);
        for (int i = 0; i < ZOFF + ZSTRIDE * N; i++)
            zv_data[i] = (float) rng_int(1000, 2000);
        ggml_backend_tensor_set(w, wv, 0, sizeof wv);
        if (ggml_backend_sched_alloc_graph(sched, graph)) {
            placed = ggml_backend_sched_get_tensor_backend(sched, mm) == be &&
                     ggml_backend_sched_get_tensor_backend(sched, out) == be;
            ggml_backend_tensor_set(x, xv, 0, sizeof xv);
            ggml_backend_tensor_set(y, yv, 0, sizeof yv);
            ggml_backend_tensor_set(z, zv_data, 0, sizeof zv_data);
            memset(got, 0xff, sizeof got);
            status = ggml_backend_sched_graph_compute(sched, graph);
            ggml_backend_tensor_get(out, got, 0, sizeof got);
        }
    }
    int wrong = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < K; i++) {
            double r = (double) yv[j * K + i] + (double) zv_data[ZOFF + j * ZSTRIDE + i];
            for (int k = 0; k < K; k++)
                r += (double) wv[i * K + k] * (double) xv[j * K + k];
            wrong += (double) got[j * K + i] != r;
        }
    ok(placed, "[RPC, CPU]: the matmul and the adds run on the RPC backend");
    ok(status == GGML_STATUS_SUCCESS && wrong == 0,
       "[RPC, CPU]: RESHAPE and VIEW nodes of CPU inputs inside the RPC split: status %d, %d of %d sums wrong",
       (int) status, wrong, K * N);
    if (sched != NULL)
        ggml_backend_sched_free(sched);
    if (wbuf != NULL)
        ggml_backend_buffer_free(wbuf);
    ggml_free(ctx);
    ggml_free(wctx);
    ggml_backend_free(be);
}

/* ------------------------------------------------- 6. SET_TENSOR_HASH */

#define BIG_VALUES (3u << 20)                  /* 12 MiB of F32 */
#define BIG_BYTES ((size_t) BIG_VALUES * 4)

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

static void test_hash(void)
{
    char cache[128];
    snprintf(cache, sizeof cache, "%s/cache.XXXXXX", tmp_dir);
    struct server c;
    const char *extra[] = { "--cache", cache, NULL };
    const bool made = mkdtemp(cache) != NULL;
    const bool started = made && server_start(&c, extra);
    struct proxy px;
    const bool proxied = started && proxy_start(&px, c.port);
    ok(proxied, "a server with --cache %s, behind a counting proxy", cache);
    if (!proxied) {
        tap_skip(7, "no cache server");
        if (started)
            server_stop(&c);
        return;
    }
    ggml_backend_buffer_type_t buft = ggml_backend_rpc_buffer_type(px.endpoint, 0);
    struct ggml_init_params p = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(p);
    struct ggml_tensor *t1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, BIG_VALUES);
    struct ggml_tensor *t2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, BIG_VALUES);
    ggml_backend_buffer_t buf = buft ? ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft) : NULL;
    ok(buf != NULL, "a buffer of two 12 MiB tensors on the cache server");
    if (buf == NULL) {
        tap_skip(6, "no buffer");
    } else {
        uint8_t *data = malloc(BIG_BYTES), *other = malloc(BIG_BYTES);
        rng_bytes(data, BIG_BYTES);
        rng_bytes(other, BIG_BYTES);
        const unsigned long long up0 = atomic_load(&px.up_bytes);
        ggml_backend_tensor_set(t1, data, 0, BIG_BYTES);
        const bool back1 = get_equals(t1, data, 0, BIG_BYTES);
        const unsigned long long up1 = atomic_load(&px.up_bytes);
        ok(back1 && up1 - up0 >= BIG_BYTES, "the first 12 MiB tensor reads back; its bytes went to the server (%llu sent)",
           up1 - up0);
        ggml_backend_tensor_set(t2, data, 0, BIG_BYTES);
        const bool back2 = get_equals(t2, data, 0, BIG_BYTES);
        const unsigned long long up2 = atomic_load(&px.up_bytes);
        ok(back2 && up2 - up1 < ((unsigned long long) 1 << 20),
           "the same bytes into a second tensor read back, and only the hash went (%llu bytes sent)", up2 - up1);
        ok(get_equals(t1, data, 0, BIG_BYTES), "the first tensor still holds its bytes");
        char path[256];
        snprintf(path, sizeof path, "%s/%016llx", cache, (unsigned long long) fnv1a(data, BIG_BYTES));
        struct stat st;
        ok(stat(path, &st) == 0 && (size_t) st.st_size == BIG_BYTES, "the cache holds a file of 12 MiB named by the "
           "data's FNV-1a hash");
        ggml_backend_tensor_set(t2, other, 0, BIG_BYTES);
        const bool back3 = get_equals(t2, other, 0, BIG_BYTES);
        const unsigned long long up3 = atomic_load(&px.up_bytes);
        ok(back3 && up3 - up2 >= BIG_BYTES, "other bytes (a hash the cache lacks) are sent and read back");
        uint8_t part[64];
        rng_bytes(part, sizeof part);
        ggml_backend_tensor_set(t2, part, BIG_BYTES / 2, sizeof part);
        memcpy(other + BIG_BYTES / 2, part, sizeof part);
        ok(get_equals(t2, other, 0, BIG_BYTES), "a small set into the middle of the big tensor");
        free(data);
        free(other);
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);
    proxy_stop(&px);
    server_stop(&c);
    remove_dir(cache);
}

/* ------------------------------------- 7. a server in this process */

static char inproc_endpoint[32];

static void *inproc_thread(void *arg)
{
    (void) arg;
    ggml_backend_rpc_start_server(inproc_endpoint, NULL, 1, 0, NULL);
    return NULL;
}

/* c = a + b of n small integers on backend be; true when every sum is exact. */
static bool add_works(ggml_backend_t be)
{
    enum { n = 256 };
    struct ggml_init_params p = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(p);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    struct ggml_tensor *b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    struct ggml_tensor *c = ggml_add(ctx, a, b);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    bool good = buf != NULL;
    if (good) {
        float av[n], bv[n], cv[n];
        for (int i = 0; i < n; i++)
            av[i] = (float) i, bv[i] = (float) (1000 - 3 * i), cv[i] = -1.0f;
        ggml_backend_tensor_set(a, av, 0, sizeof av);
        ggml_backend_tensor_set(b, bv, 0, sizeof bv);
        good = ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS;
        ggml_backend_tensor_get(c, cv, 0, sizeof cv);
        for (int i = 0; i < n; i++)
            good = good && (double) cv[i] == (double) av[i] + (double) bv[i];
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);
    return good;
}

static void test_start_server(void)
{
    errors_logged();
    ggml_backend_rpc_start_server("nocolon", NULL, 1, 0, NULL);
    ok(errors_logged() >= 1, "ggml_backend_rpc_start_server(\"nocolon\") returns, with an error logged");
    ggml_backend_rpc_start_server("127.0.0.1:1", NULL, 1, 2, NULL);
    ok(errors_logged() >= 1, "ggml_backend_rpc_start_server with 2 devices but no array returns, logged");

    const int port = free_port();
    snprintf(inproc_endpoint, sizeof inproc_endpoint, "127.0.0.1:%d", port);
    pthread_t thread;
    bool up = port > 0 && pthread_create(&thread, NULL, inproc_thread, NULL) == 0;
    if (up)
        pthread_detach(thread);   /* serves until the process ends */
    int fd = -1;
    for (int i = 0; up && i < 300 && fd < 0; i++) {
        fd = connect_loopback(port);
        if (fd < 0)
            usleep(100000);
    }
    if (fd >= 0)
        close(fd);
    ok(up && fd >= 0, "ggml_backend_rpc_start_server(%s) in a thread accepts connections", inproc_endpoint);
    ggml_backend_reg_t reg = up && fd >= 0 ? ggml_backend_rpc_add_server(inproc_endpoint) : NULL;
    ok(reg != NULL && ggml_backend_reg_dev_count(reg) == 1, "its registry has one device (the CPU)");
    ggml_backend_t be = reg != NULL ? ggml_backend_rpc_init(inproc_endpoint, 0) : NULL;
    ok(be != NULL && add_works(be), "a graph computed on the server of this process");
    if (be != NULL)
        ggml_backend_free(be);
}

/* ------------------------------------------------------- 8. failures */

static void test_bad_endpoints(void)
{
    const int port = free_port();
    char dead[32];
    snprintf(dead, sizeof dead, "127.0.0.1:%d", port);
    errors_logged();
    ok(ggml_backend_rpc_add_server(dead) == NULL, "add_server(%s), where nobody listens: NULL", dead);
    logged_one_error("... with one error logged");

    static const char *const bad[] = { "", "nocolon", "host:0", "[::1", "127.0.0.1:65536", "127.0.0.1:",
                                       ":50052", "127.0.0.1:12ab", "[::1]" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ggml_backend_reg_t reg = ggml_backend_rpc_add_server(bad[i]);
        const int n = errors_logged();
        ok(reg == NULL && n == 1, "add_server(\"%s\"): NULL, one error logged (%d)", bad[i], n);
    }
    ok(ggml_backend_rpc_add_server(NULL) == NULL && errors_logged() == 1, "add_server(NULL): NULL, one error");

    size_t free_mem = 77, total = 77;
    ggml_backend_rpc_get_device_memory(dead, 0, &free_mem, &total);
    ok(free_mem == 0 && total == 0 && errors_logged() >= 1,
       "ggml_backend_rpc_get_device_memory of a dead endpoint: 0 and 0, logged");
    ok(ggml_backend_rpc_init(dead, 0) == NULL && errors_logged() >= 1, "ggml_backend_rpc_init of a dead endpoint: NULL");
    ok(ggml_backend_rpc_buffer_type(dead, 0) == NULL && errors_logged() >= 1,
       "ggml_backend_rpc_buffer_type of a dead endpoint: NULL");

    if (reg_a != NULL) {
        ok(ggml_backend_rpc_init(server_a.endpoint, 1) == NULL && errors_logged() == 1,
           "ggml_backend_rpc_init of device 1 of a server of 1: NULL, one error");
        ok(ggml_backend_rpc_init(server_b.endpoint, 2) == NULL && errors_logged() == 1,
           "ggml_backend_rpc_init of device 2 of a server of 2: NULL, one error");
        ok(ggml_backend_rpc_buffer_type(server_a.endpoint, 7) == NULL && errors_logged() == 1,
           "ggml_backend_rpc_buffer_type of device 7: NULL, one error");
        free_mem = total = 77;
        ggml_backend_rpc_get_device_memory(server_a.endpoint, 3, &free_mem, &total);
        ok(free_mem == 0 && total == 0 && errors_logged() == 1, "get_device_memory of device 3: 0 and 0, one error");
    } else {
        tap_skip(4, "no registry of server A");
    }
}

static void test_killed_server(void)
{
    struct server d, e;
    if (!server_start(&d, NULL)) {
        ok(false, "a server to kill starts");
        tap_skip(10, "no server");
        return;
    }
    ggml_backend_t be = ggml_backend_rpc_add_server(d.endpoint) != NULL ? ggml_backend_rpc_init(d.endpoint, 0) : NULL;
    struct small_graph g;
    const bool built = be != NULL && small_build(&g, ggml_backend_get_default_buffer_type(be));
    ok(built, "a graph and its buffers on server %s", d.endpoint);
    if (!built) {
        tap_skip(10, "no graph");
        if (be != NULL) {
            small_free(&g);
            ggml_backend_free(be);
        }
        server_stop(&d);
        return;
    }
    small_run(&g, be, 3.0, "computed on it before it dies");

    kill(d.pid, SIGKILL);
    waitpid(d.pid, NULL, 0);
    d.pid = -1;
    errors_logged();
    const enum ggml_status status = ggml_backend_graph_compute(be, g.graph);
    ok(status != GGML_STATUS_SUCCESS, "the server killed: ggml_backend_graph_compute fails (status %d)", (int) status);
    ok(errors_logged() >= 1, "... with an error logged");
    float y[GN * GM];
    memset(y, 0x7f, sizeof y);
    ggml_backend_tensor_get(g.y1, y, 0, sizeof y);
    ok(all_bytes(y, sizeof y, 0), "ggml_backend_tensor_get after the death returns zeroed data");
    ggml_backend_tensor_set(g.x, y, 0, sizeof(float) * GN * GK);
    ggml_backend_buffer_clear(g.wbuf, 0);
    const enum ggml_status again = ggml_backend_graph_compute(be, g.graph);
    ok(again != GGML_STATUS_SUCCESS, "a set, a clear, and a second compute: still a failure (status %d)", (int) again);
    size_t free_mem = 77, total = 77;
    ggml_backend_dev_memory(ggml_backend_get_device(be), &free_mem, &total);
    ok(free_mem == 0 && total == 0, "the dead server's device memory: 0 and 0");
    ggml_backend_buffer_t fresh = ggml_backend_buft_alloc_buffer(ggml_backend_get_default_buffer_type(be), 4096);
    ok(fresh == NULL, "a new buffer on the dead server: NULL");
    if (fresh != NULL)
        ggml_backend_buffer_free(fresh);
    small_free(&g);
    ggml_backend_free(be);
    errors_logged();

    const bool started = server_start(&e, NULL);
    ggml_backend_reg_t reg = started ? ggml_backend_rpc_add_server(e.endpoint) : NULL;
    ok(reg != NULL && ggml_backend_reg_dev_count(reg) == 1, "after that, a new server %s: a registry of one device",
       e.endpoint);
    be = reg != NULL ? ggml_backend_rpc_init(e.endpoint, 0) : NULL;
    const bool built2 = be != NULL && small_build(&g, ggml_backend_get_default_buffer_type(be));
    if (built2) {
        small_run(&g, be, 3.0, "the new server computes the graph right");
        small_free(&g);
    } else {
        ok(false, "the new server computes the graph right (no graph)");
        if (be != NULL)
            small_free(&g);
    }
    if (be != NULL)
        ggml_backend_free(be);
    if (started)
        server_stop(&e);
}

static void test_fakes(void)
{
    static const struct {
        enum fake_mode mode;
        const char *what;
    } cases[] = {
        { FAKE_OLD_VERSION, "a server that answers HELLO with version 4.0.0" },
        { FAKE_V3_HELLO, "a server that answers HELLO with 3 bytes (protocol 3)" },
        { FAKE_HELLO_HUGE, "a server whose HELLO reply announces 2^62 bytes" },
        { FAKE_CLOSE, "a server that closes every connection" },
        { FAKE_COUNT_HUGE, "a server whose DEVICE_COUNT reply announces 2^62 bytes" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fake f;
        if (!fake_start(&f, cases[i].mode)) {
            ok(false, "%s: started", cases[i].what);
            continue;
        }
        errors_logged();
        ggml_backend_reg_t reg = ggml_backend_rpc_add_server(f.endpoint);
        const int n = errors_logged();
        ok(reg == NULL && n >= 1 && atomic_load(&f.connections) >= 1,
           "%s: add_server NULL, an error logged (%d), the peer was reached", cases[i].what, n);
        fake_stop(&f);
    }

    /* sound until ALLOC_BUFFER, which gets a reply of 2^60 bytes */
    struct fake f;
    if (!fake_start(&f, FAKE_ALLOC_GARBAGE)) {
        ok(false, "a fake server started");
        tap_skip(2, "no fake server");
        return;
    }
    ggml_backend_reg_t reg = ggml_backend_rpc_add_server(f.endpoint);
    ggml_backend_dev_t dev = reg != NULL && ggml_backend_reg_dev_count(reg) == 1 ? ggml_backend_reg_dev_get(reg, 0) : NULL;
    ok(dev != NULL, "a fake server sound but for ALLOC_BUFFER: a registry of one device");
    errors_logged();
    ggml_backend_buffer_t buf = dev != NULL ? ggml_backend_buft_alloc_buffer(ggml_backend_dev_buffer_type(dev), 4096) : NULL;
    const int n = errors_logged();
    ok(dev != NULL && buf == NULL && n >= 1, "its ALLOC_BUFFER reply of 2^60 bytes: no buffer, an error logged (%d)", n);
    size_t free_mem = 77, total = 77;
    if (dev != NULL)
        ggml_backend_dev_memory(dev, &free_mem, &total);
    ok(dev != NULL && free_mem == 0 && total == 0, "the connection is broken: device memory 0 and 0");
    if (buf != NULL)
        ggml_backend_buffer_free(buf);
    fake_stop(&f);
}

static void test_timeout(void)
{
    struct fake f;
    if (!fake_start(&f, FAKE_SILENT)) {
        ok(false, "a silent fake server started");
        return;
    }
    setenv("GGML_RPC_TIMEOUT", "1", 1);
    errors_logged();
    ggml_backend_reg_t reg = ggml_backend_rpc_add_server(f.endpoint);
    const int n = errors_logged();
    ok(reg == NULL && n >= 1 && atomic_load(&f.connections) >= 1,
       "a server that never answers, GGML_RPC_TIMEOUT=1: add_server gives up with NULL, an error logged (%d)", n);
    fake_stop(&f);
    unsetenv("GGML_RPC_TIMEOUT");
}

/* ---------------------------------------------------------- 9. tokens */

#define TOKEN "a-token-for-test-rpc-client"

/* The last message logged contains text. */
static bool last_log_has(const char *text)
{
    pthread_mutex_lock(&log_lock);
    const bool has = strstr(tap_last_log(), text) != NULL;
    if (!has)
        tap_diag("last log: %s", tap_last_log());
    pthread_mutex_unlock(&log_lock);
    return has;
}

/* add_server(endpoint) with GGML_RPC_TOKEN set to token: true when it gives NULL with exactly one error. */
static bool refused_with(const char *endpoint, const char *token)
{
    setenv("GGML_RPC_TOKEN", token, 1);
    errors_logged();
    ggml_backend_reg_t reg = ggml_backend_rpc_add_server(endpoint);
    const int n = errors_logged();
    if (reg != NULL || n != 1)
        tap_diag("add_server(%s): %s, %d errors", endpoint, reg != NULL ? "a registry" : "NULL", n);
    return reg == NULL && n == 1;
}

static void test_token(void)
{
    /* the client caches a registry by endpoint: each case that may succeed has a server of its own */
    char path[sizeof tmp_dir + 16];
    snprintf(path, sizeof path, "%s/token", tmp_dir);
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    const bool written = fd >= 0 && fchmod(fd, 0600) == 0 && write(fd, TOKEN "\n", sizeof TOKEN) == sizeof TOKEN;
    if (fd >= 0)
        close(fd);
    const char *const with_token[] = { "--token-file", path, NULL };
    struct server right, wrong, plain;
    const bool started = written && server_start(&right, with_token) && server_start(&wrong, with_token) &&
                         server_start(&plain, NULL);
    ok(started, "servers %s and %s with --token-file (mode 0600), %s without", right.endpoint, wrong.endpoint,
       plain.endpoint);
    if (!started) {
        tap_skip(9, "no servers");
    } else {
        setenv("GGML_RPC_TOKEN", TOKEN, 1);
        errors_logged();
        ggml_backend_reg_t reg = ggml_backend_rpc_add_server(right.endpoint);
        ok(reg != NULL && ggml_backend_reg_dev_count(reg) == 1 && errors_logged() == 0,
           "GGML_RPC_TOKEN with the server's token: add_server gives a registry of one device, no error");
        ggml_backend_t be = reg != NULL ? ggml_backend_rpc_init(right.endpoint, 0) : NULL;
        ok(be != NULL && add_works(be), "... and a graph computes on it");
        if (be != NULL)
            ggml_backend_free(be);

        ok(refused_with(wrong.endpoint, TOKEN "-not"), "a wrong token: add_server NULL, one error");
        ok(last_log_has("the server refused the token (or does not take one)"), "... which says the server refused "
           "the token");
        ok(refused_with(wrong.endpoint, "") && last_log_has("GGML_RPC_TOKEN has 0 bytes"),
           "an empty GGML_RPC_TOKEN: add_server NULL, one error that says so");
        char long_token[258];
        memset(long_token, 'k', sizeof long_token - 1);
        long_token[sizeof long_token - 1] = '\0';
        ok(refused_with(wrong.endpoint, long_token) && last_log_has("GGML_RPC_TOKEN has 257 bytes"),
           "a GGML_RPC_TOKEN of 257 bytes: add_server NULL, one error that says so");
        ok(refused_with(plain.endpoint, TOKEN), "a token for a server without one: add_server NULL, one error");
        ok(last_log_has("the server refused the token (or does not take one)"), "... which says the server refused "
           "the token or takes none");
        unsetenv("GGML_RPC_TOKEN");
        errors_logged();
        reg = ggml_backend_rpc_add_server(wrong.endpoint);
        const int n = errors_logged();
        ok(reg == NULL && n == 1 && last_log_has("require a token"),
           "no GGML_RPC_TOKEN for a server with a token: add_server NULL, one error that names the token (%d)", n);
    }
    unsetenv("GGML_RPC_TOKEN");
    server_stop(&right);
    server_stop(&wrong);
    server_stop(&plain);
}

/* ------------------------------------------------------------- main */

int main(void)
{
    server_program = getenv("RPC_SERVER_PROGRAM");
    const char *plugin_dir = getenv("RPC_PLUGIN_DIR");
    if (server_program == NULL || server_program[0] == '\0' || plugin_dir == NULL || plugin_dir[0] == '\0') {
        printf("1..0 # SKIP RPC_SERVER_PROGRAM and RPC_PLUGIN_DIR are not set\n");
        return 0;
    }
    if (mkdtemp(tmp_dir) == NULL) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 99;
    }
    setenv("GGML_BACKEND_PATH", plugin_dir, 1);   /* for this process and the servers */
    ggml_log_set(locked_sink, NULL);
    /* a block of ports of our own (check-rpc-server.sh takes 20000..39999) */
    next_port = 40000 + (int) (getpid() % 4000) * 5;

    cpu = ggml_backend_cpu_init();
    if (cpu != NULL)
        ggml_backend_cpu_set_n_threads(cpu, 2);
    static const char *const two_devices[] = { "--device", "CPU", "--device", "CPU", NULL };
    const bool servers = cpu != NULL && server_start(&server_a, NULL) && server_start(&server_b, two_devices) &&
                         server_start(&server_env, NULL);
    ok(servers, "a CPU backend and three servers (%s, %s with two devices, %s)", server_a.endpoint, server_b.endpoint,
       server_env.endpoint);
    if (servers) {
        setenv("GGML_RPC_SERVERS", server_env.endpoint, 1);
        test_registries();
        test_backends();
        test_tensors();
        test_graph();
        test_sched();
        test_sched_views();
        test_hash();
        test_start_server();
        test_bad_endpoints();
        test_killed_server();
        test_fakes();
        test_timeout();
        test_token();
    }
    server_stop(&server_a);
    server_stop(&server_b);
    server_stop(&server_env);
    if (cpu != NULL)
        ggml_backend_free(cpu);
    if (tap_failed)
        tap_diag("the servers' output is kept in %s", tmp_dir);
    else
        remove_dir(tmp_dir);
    return tap_done();
}
