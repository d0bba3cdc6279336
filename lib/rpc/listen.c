/*
 * rpc/listen.c - the RPC server's TCP side (contract: serve.h): one
 * listening socket, connections accepted and served one at a time, so that
 * a device's graphs never run concurrently.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "plugin-log.h"
#include "serve.h"
#include "server.h"
#include "rpc-private.h"

#define rpc_log ggml__plugin_log

/* Whether a numeric address is a loopback one. */
static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *) (const void *) sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *) (const void *) sa)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(a);
    }
    return false;
}

/* The listening socket on host:port, or -1 (logged). */
static int listen_on(const char *host, uint16_t port)
{
    char service[8];
    snprintf(service, sizeof service, "%u", (unsigned) port);
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    const int err = getaddrinfo(host, service, &hints, &found);
    if (err != 0) {
        rpc_log(GGML_LOG_LEVEL_ERROR, "rpc_serve", "cannot resolve %s: %s", host, gai_strerror(err));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = found; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        const int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
            rpc_log(GGML_LOG_LEVEL_ERROR, "rpc_serve", "cannot listen on %s port %u: %s", host, (unsigned) port,
                    strerror(errno));
            close(fd);
            fd = -1;
            continue;
        }
        if (!is_loopback(ai->ai_addr))
            rpc_log(GGML_LOG_LEVEL_WARN, "rpc_serve",
                    "listening on %s, which is not a loopback address: any host that reaches it can use the "
                    "devices, and the protocol is not encrypted (allow only known clients, or use a tunnel)",
                    host);
    }
    freeaddrinfo(found);
    return fd;
}

/* The client's numeric address. */
static void peer_name(const struct sockaddr_storage *ss, socklen_t len, char *out, size_t size)
{
    if (getnameinfo((const struct sockaddr *) ss, len, out, (socklen_t) size, NULL, 0, NI_NUMERICHOST) != 0)
        snprintf(out, size, "(unknown)");
}

static bool allowed(const struct rpc_serve_options *o, const char *address)
{
    if (o->n_allow == 0)
        return true;
    /* an IPv4 client on a dual-stack socket appears as ::ffff:a.b.c.d */
    const char *v4 = strncmp(address, "::ffff:", 7) == 0 ? address + 7 : address;
    for (size_t i = 0; i < o->n_allow; i++)
        if (strcmp(o->allow[i], address) == 0 || strcmp(o->allow[i], v4) == 0)
            return true;
    return false;
}

static void set_timeouts(int fd, int seconds)
{
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (seconds <= 0)
        return;
    struct timeval tv = { seconds, 0 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool ggml__rpc_serve(const struct rpc_serve_options *o)
{
    const char *host = o->host != NULL ? o->host : "127.0.0.1";
    ggml_backend_dev_t cpu_dev = NULL;
    ggml_backend_dev_t *devices = o->devices;
    size_t n_devices = o->n_devices;
    if (n_devices == 0) {
        cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
        devices = &cpu_dev;
        n_devices = cpu_dev != NULL ? 1 : 0;
    }
    if (n_devices == 0 || n_devices > UINT32_MAX) {
        rpc_log(GGML_LOG_LEVEL_ERROR, "rpc_serve", "no device to serve");
        return false;
    }
    if (o->token != NULL && (o->token[0] == '\0' || strlen(o->token) > RPC_WIRE_TOKEN_MAX)) {
        rpc_log(GGML_LOG_LEVEL_ERROR, "rpc_serve", "a token has 1 to %d bytes, not %zu", RPC_WIRE_TOKEN_MAX,
                strlen(o->token));
        return false;
    }
    ggml_backend_t *backends = calloc(n_devices, sizeof *backends);
    bool ok = backends != NULL;
    for (size_t i = 0; ok && i < n_devices; i++) {
        backends[i] = ggml_backend_dev_init(devices[i], NULL);
        if (backends[i] == NULL) {
            rpc_log(GGML_LOG_LEVEL_ERROR, "rpc_serve", "device %s cannot be started", ggml_backend_dev_name(devices[i]));
            ok = false;
            break;
        }
        ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(devices[i]);
        void (*set_n_threads)(ggml_backend_t, int) =
            reg != NULL && o->n_threads > 0
                ? (void (*)(ggml_backend_t, int)) ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads")
                : NULL;
        if (set_n_threads != NULL)
            set_n_threads(backends[i], (int) o->n_threads);
    }
    const int listener = ok ? listen_on(host, o->port) : -1;
    ok = ok && listener >= 0;
    struct rpc_server_config config = {
        backends,
        (uint32_t) n_devices,
        o->max_buffer_bytes != 0 ? o->max_buffer_bytes : RPC_SERVER_DEFAULT_MAX_BUFFER_BYTES,
        o->max_message_bytes != 0 ? o->max_message_bytes : RPC_SERVER_DEFAULT_MAX_MESSAGE_BYTES,
        o->max_nodes != 0 ? o->max_nodes : RPC_SERVER_DEFAULT_MAX_NODES,
        o->cache_dir,
        o->token,
    };
    if (ok)
        rpc_log(GGML_LOG_LEVEL_INFO, "rpc_serve", "serving %zu device%s on %s port %u (protocol %d.%d.%d%s)", n_devices,
                n_devices == 1 ? "" : "s", host, (unsigned) o->port, RPC_WIRE_MAJOR, RPC_WIRE_MINOR, RPC_WIRE_PATCH,
                o->token != NULL ? ", clients must send the token" : "");
    for (int served = 0; ok && (o->max_connections <= 0 || served < o->max_connections);) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        const int fd = accept4(listener, (struct sockaddr *) &ss, &len, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EINTR && errno != ECONNABORTED)
                rpc_log(GGML_LOG_LEVEL_WARN, "rpc_serve", "accept: %s", strerror(errno));
            continue;
        }
        char address[64];
        peer_name(&ss, len, address, sizeof address);
        if (!allowed(o, address)) {
            rpc_log(GGML_LOG_LEVEL_WARN, "rpc_serve", "a connection from %s, which is not allowed: closed", address);
        } else {
            rpc_log(GGML_LOG_LEVEL_INFO, "rpc_serve", "serving %s", address);
            set_timeouts(fd, o->io_timeout_seconds);
            rpc_server_serve(&config, fd);
            rpc_log(GGML_LOG_LEVEL_INFO, "rpc_serve", "%s is done", address);
            served++;
        }
        close(fd);
    }
    if (listener >= 0)
        close(listener);
    for (size_t i = 0; backends != NULL && i < n_devices; i++)
        if (backends[i] != NULL)
            ggml_backend_free(backends[i]);
    free(backends);
    return ok;
}

void ggml__rpc_start_server(const char *endpoint, const char *cache_dir, size_t n_threads, size_t n_devices,
                            ggml_backend_dev_t *devices)
{
    char host[256], why[RPC_WIRE_WHY_SIZE];
    uint16_t port = 0;
    if (!rpc_wire_parse_endpoint(endpoint, host, sizeof host, &port, why)) {
        rpc_log(GGML_LOG_LEVEL_ERROR, "ggml_backend_rpc_start_server", "%s", why);
        return;
    }
    struct rpc_serve_options o;
    memset(&o, 0, sizeof o);
    o.host = host;
    o.port = port;
    o.devices = devices;
    o.n_devices = n_devices;
    o.n_threads = n_threads;
    o.cache_dir = cache_dir;
    ggml__rpc_serve(&o);
}
