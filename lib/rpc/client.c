/*
 * rpc/client.c - the client side of ggml's RPC protocol 5.1.0 (wire.h):
 * devices, buffer types, buffers and backends whose memory and compute
 * are on an RPC server.
 *
 * Objects.  A server (one endpoint string, "host:port") has one
 * connection, one registry "RPC[endpoint]" and the devices the server
 * reported when it was added: device i of the registry is the server's
 * device i, named "RPC<k>" with k counted over the whole process, and its
 * buffer type and backends are named "RPC<i>[endpoint]".  A device's
 * buffer type is made the first time it is asked for (GET_ALIGNMENT and
 * GET_MAX_SIZE are asked then, once).  Servers, registries, devices and
 * buffer types live until the process ends; buffers and backends are
 * freed by their owners.
 *
 * Connection.  One TCP socket per server, shared by all its objects, with
 * TCP_NODELAY and close-on-exec; a mutex is held across each request and
 * its reply, so any thread may use any object.  GGML_RPC_TIMEOUT (seconds,
 * default 60, 0 for none) bounds the connect and each wait for the socket
 * to take or give bytes, the wait for a graph's end included; resolving
 * a host name (getaddrinfo) is not bounded by it.
 *
 * Token.  When GGML_RPC_TOKEN is set (read at each connection; 1 to
 * RPC_WIRE_TOKEN_MAX bytes, another value is an error and the server is
 * not added), the connection starts with AUTH carrying it, this library's
 * extension of the protocol (wire.h), before HELLO; the server must
 * answer with the byte 1.  A server that closes the connection instead
 * refused the token, or takes none (upstream's, or ggml-rpc-server
 * without one).
 *
 * Failures.  A request that cannot be sent, a reply that is late, short,
 * of the wrong size or with an impossible value: one ERROR naming the
 * server and the command, then the socket is closed and the connection is
 * broken for good.  There is no reconnection (the server dropped the
 * connection's buffers with it): every later request to that server fails
 * at once with a logged error, functions without a result leave it at
 * that (get_tensor zeroes the destination), the others return NULL, false
 * or GGML_STATUS_FAILED, and freeing a buffer or backend frees the local
 * side only.  Nothing here aborts on what the network delivers.
 *
 * What is never sent.  The protocol has no error reply: a server that
 * refuses a request closes the connection.  So a tensor is checked as the
 * server will check it (the record's 32-bit shape, rpc_wire_tensor_check,
 * its bytes inside its buffer) before any request carrying it is sent,
 * and a graph is checked for operands without memory on this server;
 * what fails is logged and refused here, and the connection lives on.  A
 * graph that the server's device refuses or fails to compute still ends
 * the connection (GRAPH_COMPUTE has no reply): graph_compute then returns
 * GGML_STATUS_FAILED.
 *
 * The plugin sees only the public headers and ggml-backend-impl.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "plugin-log.h"
#include "rpc-guid.h"
#include "rpc-private.h"

#define TIMEOUT_ENV "GGML_RPC_TIMEOUT"
#define SERVERS_ENV "GGML_RPC_SERVERS"
#define TOKEN_ENV "GGML_RPC_TOKEN"
#define DEFAULT_TIMEOUT_SECONDS 60
#define MAX_TIMEOUT_SECONDS 1000000     /* its milliseconds fit poll's int */
#define MAX_ENV_SERVERS 16              /* ggml-rpc.h's GGML_RPC_MAX_SERVERS */
#define MAX_DEVICES 1024                /* a DEVICE_COUNT beyond this is not believed */
#define MAX_ALIGNMENT ((uint64_t) 1 << 30)
#define HOST_SIZE 256
/* Room for the reason something fails (wire.h's checks use the first RPC_WIRE_WHY_SIZE bytes). */
#define WHY_SIZE 512

/* --------------------------------------------------------------- objects */

struct rpc_server;

struct rpc_device {
    struct ggml_backend_device dev;        /* dev.context points here */
    struct rpc_server *server;
    uint32_t index;                        /* the server's number of the device */
    char name[24];                         /* "RPC<k>" */
    char *buft_name;                       /* "RPC<index>[endpoint]", also its backends' name */
    struct ggml_backend_buffer_type buft;  /* usable once buft_ready */
    atomic_bool buft_ready;
    size_t alignment, max_size;            /* the server's answers, asked once */
    uint8_t *sent_graph;                   /* the GRAPH_COMPUTE payload the server holds for the */
    size_t sent_graph_size;                /*   device, or NULL; under the server's lock */
};

struct rpc_server {
    struct rpc_server *next;               /* the list of servers, under servers_lock */
    char *endpoint;
    char *name;                            /* "RPC[endpoint]": the registry's name, the log prefix */
    pthread_mutex_t lock;                  /* held across a request and its reply */
    int fd;                                /* -1: broken (or not yet connected) */
    int timeout;                           /* seconds; 0: none */
    bool published;                        /* in the list (failures then break it for good) */
    enum ggml_log_level fail_level;        /* of failure messages: ERROR, or WARN while setting up
                                              a server of GGML_RPC_SERVERS */
    struct ggml_backend_reg reg;
    uint32_t n_devices;
    struct rpc_device *devices;
};

/* A buffer's context. */
struct rpc_buffer {
    struct rpc_server *server;
    uint64_t handle;                       /* the server's, never 0 */
    _Atomic uint64_t base;                 /* BUFFER_GET_BASE's answer, 0 until asked */
};

static struct rpc_device *buft_device(ggml_backend_buffer_type_t buft)
{
    return buft->context;
}

static ggml_guid rpc_guid = GGML_RPC_GUID_BYTES;

static pthread_mutex_t servers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpc_server *servers;
static unsigned next_device_number;        /* under servers_lock */

/* Taken to make a buffer type, before a server's lock. */
static pthread_mutex_t buft_lock = PTHREAD_MUTEX_INITIALIZER;

/* --------------------------------------------------------------- logging */

static void server_log(const struct rpc_server *s, enum ggml_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void server_log(const struct rpc_server *s, enum ggml_log_level level, const char *fmt, ...)
{
    char text[WHY_SIZE + 128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ggml__plugin_log(level, s->name, "%s", text);
}

#define WHY(...) (snprintf(why, WHY_SIZE, __VA_ARGS__), false)

/* ---------------------------------------------------------------- socket */

/* GGML_RPC_TIMEOUT in seconds (a bad value is logged and the default used). */
static int timeout_from_env(void)
{
    const char *env = getenv(TIMEOUT_ENV);
    if (env == NULL || env[0] == '\0')
        return DEFAULT_TIMEOUT_SECONDS;
    char *end;
    errno = 0;
    const long v = strtol(env, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > MAX_TIMEOUT_SECONDS) {
        ggml__plugin_log(GGML_LOG_LEVEL_WARN, "RPC", "%s=%s is not a number of seconds from 0 to %d: using %d",
                         TIMEOUT_ENV, env, MAX_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS);
        return DEFAULT_TIMEOUT_SECONDS;
    }
    return (int) v;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for a non-blocking connect to end; 0 or its errno (ETIMEDOUT after timeout seconds, 0: none). */
static int wait_connected(int fd, int timeout)
{
    const int64_t deadline = now_ms() + (int64_t) timeout * 1000;
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    int n;
    do {
        const int64_t left = deadline - now_ms();
        n = poll(&p, 1, timeout == 0 ? -1 : left > 0 ? (int) left : 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno;
    if (n == 0)
        return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof err;
    return getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ? errno : err;
}

/* Makes a connected socket blocking, with TCP_NODELAY and the timeouts; 0 or an errno. */
static int set_options(int fd, int timeout)
{
    const int flags = fcntl(fd, F_GETFL);
    const int one = 1;
    const struct timeval tv = { .tv_sec = timeout };
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        return errno;
    if (timeout > 0 && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
                        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0))
        return errno;
    return 0;
}

/* A socket connected to ai's address, or -1 with why. */
static int connect_address(const struct addrinfo *ai, int timeout, char *why)
{
    const int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
        (void) WHY("socket: %s", strerror(errno));
        return -1;
    }
    int err = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS || err == EINTR)
        err = wait_connected(fd, timeout);
    if (err == 0)
        err = set_options(fd, timeout);
    if (err != 0) {
        close(fd);
        if (err == ETIMEDOUT)
            (void) WHY("cannot connect: no answer within %d s (%s)", timeout, TIMEOUT_ENV);
        else
            (void) WHY("cannot connect: %s", strerror(err));
        return -1;
    }
    return fd;
}

/* A socket connected to endpoint (each of its addresses tried in turn), or -1 with why. */
static int connect_endpoint(const char *endpoint, int timeout, char *why)
{
    char host[HOST_SIZE], service[8];
    uint16_t port;
    if (!rpc_wire_parse_endpoint(endpoint, host, sizeof host, &port, why))
        return -1;
    snprintf(service, sizeof service, "%u", (unsigned) port);
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    const int err = getaddrinfo(host, service, &hints, &found);
    if (err != 0) {
        (void) WHY("cannot resolve %s: %s", host, gai_strerror(err));
        return -1;
    }
    int fd = -1;
    for (const struct addrinfo *ai = found; ai != NULL && fd < 0; ai = ai->ai_next)
        fd = connect_address(ai, timeout, why);
    freeaddrinfo(found);
    return fd;
}

/* The reason an I/O call failed, as what ("send", "receive") saw it; *closed when the server closed the connection. */
static bool io_failed(const struct rpc_server *s, const char *what, bool *closed, char *why)
{
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return WHY("cannot %s: no progress within %d s (%s)", what, s->timeout, TIMEOUT_ENV);
    if (errno == EPIPE || errno == ECONNRESET) {
        *closed = true;
        return WHY("cannot %s: the server closed the connection (it refused a request, failed one, or ended)", what);
    }
    return WHY("cannot %s: %s", what, strerror(errno));
}

/* Sends the n pieces of iov whole (iov is used up); false with why (and *closed as io_failed sets it). */
static bool send_all(const struct rpc_server *s, struct iovec *iov, int n, bool *closed, char *why)
{
    while (n > 0) {
        if (iov->iov_len == 0) {
            iov++, n--;
            continue;
        }
        struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t) n };
        const ssize_t sent = sendmsg(s->fd, &msg, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent < 0)
            return io_failed(s, "send", closed, why);
        for (size_t left = (size_t) sent; left > 0;) {
            const size_t step = left < iov->iov_len ? left : iov->iov_len;
            iov->iov_base = (uint8_t *) iov->iov_base + step;
            iov->iov_len -= step;
            left -= step;
            if (iov->iov_len == 0)
                iov++, n--;
        }
    }
    return true;
}

/* Receives exactly size bytes; false with why (and *closed when the server closed the connection). */
static bool recv_all(const struct rpc_server *s, void *buf, size_t size, bool *closed, char *why)
{
    uint8_t *p = buf;
    while (size > 0) {
        const ssize_t got = recv(s->fd, p, size, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got == 0) {
            *closed = true;
            return WHY("the server closed the connection (it refused a request, failed one, or ended)");
        }
        if (got < 0)
            return io_failed(s, "receive", closed, why);
        p += got;
        size -= (size_t) got;
    }
    return true;
}

/* ------------------------------------------------------------- requests */

/* One request and what its reply must be. */
struct rpc_call {
    enum rpc_wire_cmd cmd;
    const void *payload;           /* the request's fixed part */
    size_t payload_size;
    const void *data;              /* (SET_TENSOR) the bytes that follow it */
    size_t data_size;
    void *reply;                   /* receives reply_size bytes */
    int64_t reply_size;            /* -1: the command has no reply */
    const char *what;              /* (optional) its name in messages (defaults to the command's) */
    const char *if_closed;         /* (optional) the reason given when the server closes the connection
                                      instead of answering (defaults to saying it closed it) */
};

static const char *call_name(const struct rpc_call *call)
{
    return call->what != NULL ? call->what : rpc_wire_cmd_name(call->cmd);
}

static void forget_sent_graphs(struct rpc_server *s)
{
    for (uint32_t i = 0; i < s->n_devices; i++) {
        free(s->devices[i].sent_graph);
        s->devices[i].sent_graph = NULL;
        s->devices[i].sent_graph_size = 0;
    }
}

/* Breaks the connection (the caller holds the lock and fd is open): one message, the socket closed. */
static void break_locked(struct rpc_server *s, const char *what, const char *reason)
{
    server_log(s, s->fail_level, "%s: %s; connection closed%s", what, reason,
               s->published ? " (no reconnection: later requests to this server fail)" : "");
    close(s->fd);
    s->fd = -1;
    forget_sent_graphs(s);
}

/* Breaks the connection for a reply found malformed after the call returned. */
static void break_connection(struct rpc_server *s, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void break_connection(struct rpc_server *s, const char *what, const char *fmt, ...)
{
    char reason[WHY_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&s->lock);
    if (s->fd >= 0)
        break_locked(s, what, reason);
    pthread_mutex_unlock(&s->lock);
}

/* Whether the connection is usable; an ERROR naming what was not done when it is not (lock held). */
static bool usable_locked(const struct rpc_server *s, const char *what)
{
    if (s->fd < 0)
        server_log(s, GGML_LOG_LEVEL_ERROR, "%s: not done: the connection to the server failed earlier "
                   "(no reconnection)", what);
    return s->fd >= 0;
}

/* Sends the request and reads its reply (the caller holds the lock); false after breaking the connection. */
static bool exchange_locked(struct rpc_server *s, const struct rpc_call *call)
{
    if (!usable_locked(s, call_name(call)))
        return false;
    uint8_t head[9];
    head[0] = (uint8_t) call->cmd;
    rpc_wire_put_u64(head + 1, (uint64_t) call->payload_size + call->data_size);
    struct iovec iov[3] = {
        { head, sizeof head },
        { (void *) call->payload, call->payload_size },
        { (void *) call->data, call->data_size },
    };
    char why[WHY_SIZE];
    bool closed = false;
    bool ok = send_all(s, iov, 3, &closed, why);
    if (ok && call->reply_size >= 0) {
        uint8_t size[8];
        ok = recv_all(s, size, sizeof size, &closed, why);
        if (ok && rpc_wire_get_u64(size) != (uint64_t) call->reply_size)
            ok = WHY("a reply of %" PRIu64 " bytes where %" PRId64 " were expected", rpc_wire_get_u64(size),
                     call->reply_size);
        ok = ok && recv_all(s, call->reply, (size_t) call->reply_size, &closed, why);
    }
    if (!ok && closed && call->if_closed != NULL)
        snprintf(why, sizeof why, "%s", call->if_closed);
    if (!ok)
        break_locked(s, call_name(call), why);
    return ok;
}

/* One request and its reply under the lock. */
static bool call_server(struct rpc_server *s, const struct rpc_call *call)
{
    pthread_mutex_lock(&s->lock);
    const bool ok = exchange_locked(s, call);
    pthread_mutex_unlock(&s->lock);
    return ok;
}

/* A request of the form | device |, with a reply of size bytes. */
static bool ask_device(const struct rpc_device *d, enum rpc_wire_cmd cmd, uint8_t *reply, size_t size)
{
    uint8_t request[4];
    rpc_wire_put_u32(request, d->index);
    const struct rpc_call call = {
        .cmd = cmd, .payload = request, .payload_size = sizeof request, .reply = reply, .reply_size = (int64_t) size,
    };
    return call_server(d->server, &call);
}

static size_t clamp_size(uint64_t v)
{
    return v > SIZE_MAX ? SIZE_MAX : (size_t) v;
}

/* --------------------------------------------------------- tensor records */

static void rpc_buffer_free(ggml_backend_buffer_t buffer);

/* The buffer holding t's data (its view source's when t has none of its own). */
static ggml_backend_buffer_t data_buffer(const struct ggml_tensor *t)
{
    return t->buffer != NULL ? t->buffer : t->view_src != NULL ? t->view_src->buffer : NULL;
}

/* t's buffer when it is a buffer of server s, else NULL. */
static struct rpc_buffer *server_buffer(const struct rpc_server *s, const struct ggml_tensor *t)
{
    ggml_backend_buffer_t b = data_buffer(t);
    if (b == NULL || b->iface.free_buffer != rpc_buffer_free)
        return NULL;
    struct rpc_buffer *rb = b->context;
    return rb->server == s ? rb : NULL;
}

/*
 * The record of t as server s sees it: its buffer's handle and its data
 * address when t's data is in a buffer of s, else 0 and 0.  False, with
 * why, when the record cannot describe t or the server would refuse it.
 * use_count is 0 (the graph sets it).
 */
static bool tensor_record(const struct rpc_server *s, const struct ggml_tensor *t, struct rpc_wire_tensor *rec,
                          char *why)
{
    memset(rec, 0, sizeof *rec);
    rec->id = (uint64_t) (uintptr_t) t;
    rec->type = (uint32_t) t->type;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if ((uint64_t) t->ne[i] > UINT32_MAX || (uint64_t) t->nb[i] > UINT32_MAX)
            return WHY("tensor '%s': dimension %d (%" PRId64 " elements, stride %zu bytes) does not fit the "
                       "protocol's 32 bits", t->name, i, t->ne[i], t->nb[i]);
        rec->ne[i] = (uint32_t) t->ne[i];
        rec->nb[i] = (uint32_t) t->nb[i];
    }
    rec->op = (uint32_t) t->op;
    memcpy(rec->op_params, t->op_params, sizeof rec->op_params);
    rec->flags = t->flags;
    for (int i = 0; i < GGML_MAX_SRC; i++)
        rec->src[i] = (uint64_t) (uintptr_t) t->src[i];
    rec->view_src = (uint64_t) (uintptr_t) t->view_src;
    rec->view_offs = t->view_offs;
    memcpy(rec->name, t->name, strnlen(t->name, GGML_MAX_NAME - 1));   /* the rest stays 0 */
    const struct rpc_buffer *b = server_buffer(s, t);
    if (b != NULL && t->data != NULL) {
        rec->buffer = b->handle;
        rec->data = (uint64_t) (uintptr_t) t->data;
    }
    uint64_t extent;
    if (!rpc_wire_tensor_check(rec, &extent, why))
        return false;
    const uint64_t base = b != NULL ? atomic_load(&b->base) : 0;
    const uint64_t size = b != NULL ? data_buffer(t)->size : 0;
    if (rec->buffer != 0 && base != 0 &&
        !(rpc_wire_range_ok(base, size, rec->data, 0, extent) &&
          rpc_wire_range_ok(base, size, rec->data, 0, ggml_nbytes(t))))
        return WHY("tensor '%s': its bytes are not inside its buffer", t->name);
    return true;
}

/* The record of t, encoded, for a request of what; false after an ERROR. */
static bool put_tensor(const struct rpc_server *s, const struct ggml_tensor *t, uint8_t *out, const char *what)
{
    struct rpc_wire_tensor rec;
    char why[WHY_SIZE];
    if (!tensor_record(s, t, &rec, why)) {
        server_log(s, GGML_LOG_LEVEL_ERROR, "%s not sent: %s", what, why);
        return false;
    }
    rpc_wire_put_tensor(out, &rec);
    return true;
}

/* ---------------------------------------------------------------- buffers */

#define TENSOR_AND_RANGE (RPC_WIRE_TENSOR_SIZE + 16)   /* | tensor | offset | size | */

static struct rpc_buffer *buffer_ctx(ggml_backend_buffer_t buffer)
{
    return buffer->context;
}

/* FREE_BUFFER, unless the connection is broken (then the server dropped the buffer already). */
static void free_remote_buffer(struct rpc_server *s, uint64_t handle)
{
    uint8_t request[8];
    rpc_wire_put_u64(request, handle);
    const struct rpc_call call = {
        .cmd = RPC_WIRE_FREE_BUFFER, .payload = request, .payload_size = sizeof request, .reply_size = 0,
    };
    pthread_mutex_lock(&s->lock);
    if (s->fd >= 0 && exchange_locked(s, &call))
        forget_sent_graphs(s);   /* as the server does: a stored graph may use the buffer */
    pthread_mutex_unlock(&s->lock);
}

static void rpc_buffer_free(ggml_backend_buffer_t buffer)
{
    struct rpc_buffer *b = buffer_ctx(buffer);
    free_remote_buffer(b->server, b->handle);
    free(b);
}

static void *rpc_buffer_get_base(ggml_backend_buffer_t buffer)
{
    struct rpc_buffer *b = buffer_ctx(buffer);
    uint64_t base = atomic_load(&b->base);
    if (base != 0 || buffer->size == 0)
        return (void *) (uintptr_t) base;
    uint8_t request[8], reply[8];
    rpc_wire_put_u64(request, b->handle);
    const struct rpc_call call = {
        .cmd = RPC_WIRE_BUFFER_GET_BASE, .payload = request, .payload_size = sizeof request,
        .reply = reply, .reply_size = sizeof reply,
    };
    if (!call_server(b->server, &call))
        return NULL;
    base = rpc_wire_get_u64(reply);
    const size_t alignment = buft_device(buffer->buft)->alignment;
    if (base == 0 || base % alignment != 0 || base > UINTPTR_MAX - buffer->size) {
        break_connection(b->server, "BUFFER_GET_BASE", "base %#" PRIx64 " of a buffer of %zu bytes is not aligned "
                         "to %zu or does not fit the address space", base, buffer->size, alignment);
        return NULL;
    }
    atomic_store(&b->base, base);
    return (void *) (uintptr_t) base;
}

/* Whether the server's device must see a tensor placed in its buffer
   (quantized rows that some devices pad), as upstream's client decides. */
static bool needs_server_init(const struct ggml_tensor *t)
{
    return ggml_is_quantized(t->type) && t->ne[0] % 512 != 0 && t->view_src == NULL;
}

static enum ggml_status rpc_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor)
{
    if (!needs_server_init(tensor))
        return GGML_STATUS_SUCCESS;
    struct rpc_server *s = buffer_ctx(buffer)->server;
    uint8_t request[RPC_WIRE_TENSOR_SIZE];
    const struct rpc_call call = {
        .cmd = RPC_WIRE_INIT_TENSOR, .payload = request, .payload_size = sizeof request, .reply_size = 0,
    };
    return put_tensor(s, tensor, request, "INIT_TENSOR") && call_server(s, &call) ? GGML_STATUS_SUCCESS
                                                                                  : GGML_STATUS_FAILED;
}

/* | tensor | offset | size | for a request of what; false after an ERROR. */
static bool put_tensor_range(const struct rpc_server *s, const struct ggml_tensor *t, size_t offset, size_t size,
                             uint8_t *out, const char *what)
{
    rpc_wire_put_u64(out + RPC_WIRE_TENSOR_SIZE, offset);
    rpc_wire_put_u64(out + RPC_WIRE_TENSOR_SIZE + 8, size);
    return put_tensor(s, t, out, what);
}

static void rpc_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, uint8_t value,
                                     size_t offset, size_t size)
{
    struct rpc_server *s = buffer_ctx(buffer)->server;
    uint8_t request[TENSOR_AND_RANGE + 1];
    request[TENSOR_AND_RANGE] = value;
    const struct rpc_call call = {
        .cmd = RPC_WIRE_MEMSET_TENSOR, .payload = request, .payload_size = sizeof request, .reply_size = 0,
    };
    if (put_tensor_range(s, tensor, offset, size, request, "MEMSET_TENSOR"))
        call_server(s, &call);
}

/* What SET_TENSOR_HASH came to. */
enum hash_offer { HASH_TAKEN, HASH_UNKNOWN, HASH_FAILED };

/* Offers the data by its hash, for the server to take from its cache. */
static enum hash_offer offer_hash(struct rpc_server *s, const uint8_t *record, const void *data, size_t offset,
                                  size_t size)
{
    uint8_t request[RPC_WIRE_TENSOR_SIZE + 16], found;
    memcpy(request, record, RPC_WIRE_TENSOR_SIZE);
    rpc_wire_put_u64(request + RPC_WIRE_TENSOR_SIZE, offset);
    rpc_wire_put_u64(request + RPC_WIRE_TENSOR_SIZE + 8, rpc_wire_fnv1a(data, size));
    const struct rpc_call call = {
        .cmd = RPC_WIRE_SET_TENSOR_HASH, .payload = request, .payload_size = sizeof request,
        .reply = &found, .reply_size = 1,
    };
    if (!call_server(s, &call))
        return HASH_FAILED;
    if (found > 1) {
        break_connection(s, "SET_TENSOR_HASH", "answer %u is neither 0 nor 1", (unsigned) found);
        return HASH_FAILED;
    }
    return found == 1 ? HASH_TAKEN : HASH_UNKNOWN;
}

static void rpc_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor *tensor, const void *data,
                                  size_t offset, size_t size)
{
    struct rpc_server *s = buffer_ctx(buffer)->server;
    uint8_t request[RPC_WIRE_TENSOR_SIZE + 8];
    if (!put_tensor(s, tensor, request, "SET_TENSOR"))
        return;
    rpc_wire_put_u64(request + RPC_WIRE_TENSOR_SIZE, offset);
    if (size > RPC_WIRE_HASH_MIN_BYTES && offer_hash(s, request, data, offset, size) != HASH_UNKNOWN)
        return;
    const struct rpc_call call = {
        .cmd = RPC_WIRE_SET_TENSOR, .payload = request, .payload_size = sizeof request,
        .data = data, .data_size = size, .reply_size = -1,
    };
    call_server(s, &call);
}

static void rpc_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor, void *data,
                                  size_t offset, size_t size)
{
    struct rpc_server *s = buffer_ctx(buffer)->server;
    uint8_t request[TENSOR_AND_RANGE];
    const struct rpc_call call = {
        .cmd = RPC_WIRE_GET_TENSOR, .payload = request, .payload_size = sizeof request,
        .reply = data, .reply_size = (int64_t) size,
    };
    if (!put_tensor_range(s, tensor, offset, size, request, "GET_TENSOR") || !call_server(s, &call))
        memset(data, 0, size);
}

/* COPY_TENSOR when src is in a buffer of the same server; false lets the library copy through the host. */
static bool rpc_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor *src,
                                  struct ggml_tensor *dst)
{
    struct rpc_server *s = buffer_ctx(buffer)->server;
    struct rpc_wire_tensor rec_src, rec_dst;
    char why[WHY_SIZE];
    if (server_buffer(s, src) == NULL || !tensor_record(s, src, &rec_src, why) ||
        !tensor_record(s, dst, &rec_dst, why))
        return false;
    uint8_t request[2 * RPC_WIRE_TENSOR_SIZE], copied;
    rpc_wire_put_tensor(request, &rec_src);
    rpc_wire_put_tensor(request + RPC_WIRE_TENSOR_SIZE, &rec_dst);
    const struct rpc_call call = {
        .cmd = RPC_WIRE_COPY_TENSOR, .payload = request, .payload_size = sizeof request,
        .reply = &copied, .reply_size = 1,
    };
    if (!call_server(s, &call))
        return false;
    if (copied > 1)
        break_connection(s, "COPY_TENSOR", "answer %u is neither 0 nor 1", (unsigned) copied);
    return copied == 1;
}

static void rpc_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value)
{
    struct rpc_buffer *b = buffer_ctx(buffer);
    uint8_t request[9];
    rpc_wire_put_u64(request, b->handle);
    request[8] = value;
    const struct rpc_call call = {
        .cmd = RPC_WIRE_BUFFER_CLEAR, .payload = request, .payload_size = sizeof request, .reply_size = 0,
    };
    call_server(b->server, &call);
}

static const struct ggml_backend_buffer_i rpc_buffer_iface = {
    .free_buffer   = rpc_buffer_free,           /* FREE_BUFFER (not sent on a broken connection) */
    .get_base      = rpc_buffer_get_base,       /* BUFFER_GET_BASE, asked once: a number, never dereferenced */
    .init_tensor   = rpc_buffer_init_tensor,    /* INIT_TENSOR for quantized rows devices may pad */
    .memset_tensor = rpc_buffer_memset_tensor,  /* MEMSET_TENSOR */
    .set_tensor    = rpc_buffer_set_tensor,     /* SET_TENSOR_HASH for large data, then SET_TENSOR */
    .get_tensor    = rpc_buffer_get_tensor,     /* GET_TENSOR */
    .set_tensor_2d = NULL,                      /* library default: one request a run */
    .get_tensor_2d = NULL,
    .cpy_tensor    = rpc_buffer_cpy_tensor,     /* COPY_TENSOR within one server */
    .clear         = rpc_buffer_clear,          /* BUFFER_CLEAR */
    .reset         = NULL,                      /* no per-tensor state */
};

/* ----------------------------------------------------------- buffer types */

static const char *rpc_buft_get_name(ggml_backend_buffer_type_t buft)
{
    return buft_device(buft)->buft_name;
}

static ggml_backend_buffer_t rpc_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size)
{
    struct rpc_device *d = buft_device(buft);
    uint8_t request[12], reply[16];
    rpc_wire_put_u32(request, d->index);
    rpc_wire_put_u64(request + 4, size);
    const struct rpc_call call = {
        .cmd = RPC_WIRE_ALLOC_BUFFER, .payload = request, .payload_size = sizeof request,
        .reply = reply, .reply_size = sizeof reply,
    };
    if (!call_server(d->server, &call))
        return NULL;
    const uint64_t handle = rpc_wire_get_u64(reply), got = rpc_wire_get_u64(reply + 8);
    if (handle == 0) {
        server_log(d->server, GGML_LOG_LEVEL_ERROR, "ALLOC_BUFFER: the server refused a buffer of %zu bytes on "
                   "device %u", size, (unsigned) d->index);
        return NULL;
    }
    if (got < size || got > SIZE_MAX) {
        break_connection(d->server, "ALLOC_BUFFER", "a buffer of %" PRIu64 " bytes for %zu asked", got, size);
        return NULL;
    }
    struct rpc_buffer *b = malloc(sizeof *b);
    ggml_backend_buffer_t buffer = NULL;
    if (b != NULL) {
        *b = (struct rpc_buffer) { .server = d->server, .handle = handle };
        buffer = ggml_backend_buffer_init(buft, rpc_buffer_iface, b, (size_t) got);
    }
    if (buffer == NULL) {   /* out of memory here: give the server's buffer back */
        free_remote_buffer(d->server, handle);
        free(b);
    }
    return buffer;
}

static size_t rpc_buft_get_alignment(ggml_backend_buffer_type_t buft)
{
    return buft_device(buft)->alignment;
}

static size_t rpc_buft_get_max_size(ggml_backend_buffer_type_t buft)
{
    return buft_device(buft)->max_size;
}

/* Whether the server's device may need more than ggml_nbytes for t, as upstream's client decides:
   padded quantized rows, and ops some devices give scratch memory. */
static bool needs_server_alloc_size(const struct ggml_tensor *t)
{
    return needs_server_init(t) || t->op == GGML_OP_FLASH_ATTN_EXT || t->op == GGML_OP_MUL_MAT_ID;
}

/* GET_ALLOC_SIZE: | device | tensor | its GGML_MAX_SRC sources (zero records for none) |. */
#define ALLOC_SIZE_REQUEST (4 + (1 + GGML_MAX_SRC) * RPC_WIRE_TENSOR_SIZE)

static size_t rpc_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor *tensor)
{
    struct rpc_device *d = buft_device(buft);
    const size_t nbytes = ggml_nbytes(tensor);
    if (!needs_server_alloc_size(tensor))
        return nbytes;
    uint8_t request[ALLOC_SIZE_REQUEST], reply[8];
    memset(request, 0, sizeof request);
    rpc_wire_put_u32(request, d->index);
    bool ok = put_tensor(d->server, tensor, request + 4, "GET_ALLOC_SIZE");
    for (int i = 0; ok && i < GGML_MAX_SRC; i++)
        if (tensor->src[i] != NULL)
            ok = put_tensor(d->server, tensor->src[i], request + 4 + (size_t) (1 + i) * RPC_WIRE_TENSOR_SIZE,
                            "GET_ALLOC_SIZE");
    const struct rpc_call call = {
        .cmd = RPC_WIRE_GET_ALLOC_SIZE, .payload = request, .payload_size = sizeof request,
        .reply = reply, .reply_size = sizeof reply,
    };
    if (!ok || !call_server(d->server, &call))
        return nbytes;
    const uint64_t size = rpc_wire_get_u64(reply);
    if (size < nbytes || size > SIZE_MAX) {
        break_connection(d->server, "GET_ALLOC_SIZE", "%" PRIu64 " bytes for tensor '%s' of %zu", size,
                         tensor->name, nbytes);
        return nbytes;
    }
    return (size_t) size;
}

static const struct ggml_backend_buffer_type_i rpc_buft_iface = {
    .get_name       = rpc_buft_get_name,        /* "RPC<device>[endpoint]" */
    .alloc_buffer   = rpc_buft_alloc_buffer,    /* ALLOC_BUFFER */
    .get_alignment  = rpc_buft_get_alignment,   /* GET_ALIGNMENT, asked when the type was made */
    .get_max_size   = rpc_buft_get_max_size,    /* GET_MAX_SIZE, likewise */
    .get_alloc_size = rpc_buft_get_alloc_size,  /* GET_ALLOC_SIZE where devices may pad, else ggml_nbytes */
    .is_host        = NULL,                     /* remote memory */
};

/* Asks the device's alignment and largest buffer; false (logged) when the answers cannot be had or believed. */
static bool ask_buft_limits(struct rpc_device *d)
{
    uint8_t alignment[8], max_size[8];
    if (!ask_device(d, RPC_WIRE_GET_ALIGNMENT, alignment, sizeof alignment) ||
        !ask_device(d, RPC_WIRE_GET_MAX_SIZE, max_size, sizeof max_size))
        return false;
    const uint64_t a = rpc_wire_get_u64(alignment), m = rpc_wire_get_u64(max_size);
    if (a == 0 || (a & (a - 1)) != 0 || a > MAX_ALIGNMENT) {
        break_connection(d->server, "GET_ALIGNMENT", "alignment %" PRIu64 " is not a power of two up to %" PRIu64,
                         a, MAX_ALIGNMENT);
        return false;
    }
    if (m == 0) {
        break_connection(d->server, "GET_MAX_SIZE", "a largest buffer of 0 bytes");
        return false;
    }
    d->alignment = (size_t) a;
    d->max_size = clamp_size(m);
    return true;
}

/* The device's buffer type, made on first use; NULL (logged) when the server cannot be asked. */
static ggml_backend_buffer_type_t device_buffer_type(struct rpc_device *d)
{
    if (atomic_load_explicit(&d->buft_ready, memory_order_acquire))
        return &d->buft;
    pthread_mutex_lock(&buft_lock);
    if (!atomic_load_explicit(&d->buft_ready, memory_order_relaxed) && ask_buft_limits(d))
        atomic_store_explicit(&d->buft_ready, true, memory_order_release);
    pthread_mutex_unlock(&buft_lock);
    return atomic_load(&d->buft_ready) ? &d->buft : NULL;
}

/* ------------------------------------------------------------------ graphs */

/*
 * The tensors of a graph message: the nodes first, in order, then their
 * sources and the view sources reached from the tensors listed, each
 * once, with the number of times the nodes use each as a source.  The
 * server computes only the nodes, so the sources of a tensor that is not
 * a node are not followed (they are sent as 0): the scheduler's copies of
 * a split's inputs name the originals, often on another device, as their
 * source.  An open-addressing table (slots hold 1 + a position, 0 when
 * empty) finds a tensor's position.
 */
struct graph_tensors {
    const struct ggml_tensor **list;
    uint32_t *use_count;
    size_t n, cap;
    size_t n_nodes;                        /* the first n_nodes of list */
    size_t *slots;
    size_t n_slots;                        /* a power of two, more than 2 n */
};

static size_t slot_of(const struct graph_tensors *g, const struct ggml_tensor *t)
{
    size_t i = (size_t) (((uint64_t) (uintptr_t) t * 0x9e3779b97f4a7c15ull) >> 16) & (g->n_slots - 1);
    while (g->slots[i] != 0 && g->list[g->slots[i] - 1] != t)
        i = (i + 1) & (g->n_slots - 1);
    return i;
}

/* Position of t, or -1 when it is not listed. */
static int64_t find_tensor(const struct graph_tensors *g, const struct ggml_tensor *t)
{
    const size_t slot = slot_of(g, t);
    return g->slots[slot] != 0 ? (int64_t) g->slots[slot] - 1 : -1;
}

static bool grow_tensors(struct graph_tensors *g)
{
    const size_t cap = g->cap * 2, n_slots = g->n_slots * 2;
    const struct ggml_tensor **list = realloc(g->list, cap * sizeof *list);
    if (list != NULL)
        g->list = list;
    uint32_t *use_count = realloc(g->use_count, cap * sizeof *use_count);
    if (use_count != NULL)
        g->use_count = use_count;
    size_t *slots = calloc(n_slots, sizeof *slots);
    if (list == NULL || use_count == NULL || slots == NULL) {
        free(slots);
        return false;
    }
    free(g->slots);
    g->slots = slots;
    g->n_slots = n_slots;
    g->cap = cap;
    for (size_t k = 0; k < g->n; k++)
        g->slots[slot_of(g, g->list[k])] = k + 1;
    return true;
}

/* Lists t unless listed; false when out of memory. */
static bool add_tensor(struct graph_tensors *g, const struct ggml_tensor *t)
{
    if (find_tensor(g, t) >= 0)
        return true;
    if (g->n == g->cap && !grow_tensors(g))
        return false;
    g->list[g->n] = t;
    g->use_count[g->n] = 0;
    g->slots[slot_of(g, t)] = ++g->n;
    return true;
}

static void free_tensors(struct graph_tensors *g)
{
    free(g->list);
    free(g->use_count);
    free(g->slots);
}

/*
 * Whether view t and its view source are as the server requires of a
 * view: both in the same buffer of server s, t's data at view_offs into
 * its source's.
 */
static bool view_link_ok(const struct rpc_server *s, const struct ggml_tensor *t)
{
    const struct rpc_buffer *b = server_buffer(s, t);
    return b != NULL && b == server_buffer(s, t->view_src) && t->data != NULL && t->view_src->data != NULL &&
           (uintptr_t) t->data - (uintptr_t) t->view_src->data == t->view_offs;
}

/* Whether tensor i of g goes with its view source: a node always (view_link_ok is required of it), another
   tensor when the link is sound, else it is sent as a tensor of its own. */
static bool sends_view_link(const struct rpc_server *s, const struct graph_tensors *g, size_t i)
{
    const struct ggml_tensor *t = g->list[i];
    return t->view_src != NULL && (i < g->n_nodes || view_link_ok(s, t));
}

static bool alloc_tensors(struct graph_tensors *g, size_t n_nodes)
{
    g->cap = n_nodes * 2 + 16;
    g->n_slots = 1;
    while (g->n_slots <= 2 * g->cap)
        g->n_slots *= 2;
    g->list = malloc(g->cap * sizeof *g->list);
    g->use_count = malloc(g->cap * sizeof *g->use_count);
    g->slots = calloc(g->n_slots, sizeof *g->slots);
    return g->list != NULL && g->use_count != NULL && g->slots != NULL;
}

static bool is_layout_op(enum ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
           op == GGML_OP_TRANSPOSE;
}

/*
 * Lists the graph's tensors (false after an ERROR: out of memory, a NULL
 * or repeated node).  Nodes of the layout ops compute nothing and are not
 * sent as nodes: the scheduler leaves in a device's split views of
 * tensors held elsewhere (its readers get copies), which the server would
 * refuse.  A layout node that a sent node reads goes as that node's source.
 */
static bool collect_tensors(const struct rpc_server *s, struct ggml_cgraph *graph, struct graph_tensors *g)
{
    const int n_graph_nodes = ggml_graph_n_nodes(graph);
    bool ok = alloc_tensors(g, (size_t) n_graph_nodes);
    for (int i = 0; ok && i < n_graph_nodes; i++) {
        const struct ggml_tensor *node = ggml_graph_node(graph, i);
        if (node == NULL || find_tensor(g, node) >= 0) {
            server_log(s, GGML_LOG_LEVEL_ERROR, "graph_compute: node %d is %s", i,
                       node == NULL ? "NULL" : "listed twice");
            return false;
        }
        if (!is_layout_op(node->op))
            ok = add_tensor(g, node);
    }
    g->n_nodes = g->n;
    for (size_t i = 0; ok && i < g->n; i++) {
        const struct ggml_tensor *t = g->list[i];
        for (int k = 0; ok && k < GGML_MAX_SRC && i < g->n_nodes; k++)
            ok = t->src[k] == NULL || add_tensor(g, t->src[k]);
        ok = ok && (!sends_view_link(s, g, i) || add_tensor(g, t->view_src));
    }
    for (size_t i = 0; ok && i < g->n_nodes; i++)
        for (int k = 0; k < GGML_MAX_SRC; k++)
            if (g->list[i]->src[k] != NULL)
                g->use_count[find_tensor(g, g->list[i]->src[k])]++;
    if (!ok)
        server_log(s, GGML_LOG_LEVEL_ERROR, "graph_compute: out of memory for a graph of %zu nodes", g->n_nodes);
    return ok;
}

/* Whether t has memory on server s (or needs none). */
static bool has_server_memory(const struct rpc_server *s, const struct ggml_tensor *t)
{
    return (server_buffer(s, t) != NULL && t->data != NULL) || ggml_nelements(t) == 0;
}

/* What the server requires of a node: a view's link sound; memory for a computing node and its sources. */
static bool node_sendable(const struct rpc_server *s, const struct ggml_tensor *node, char *why)
{
    if (node->view_src != NULL && !view_link_ok(s, node))
        return WHY("view '%s' (%s) and its source '%s' are not in one buffer of this server at its offset",
                   node->name, ggml_op_desc(node), node->view_src->name);
    if (is_layout_op(node->op))
        return true;
    if (!has_server_memory(s, node))
        return WHY("node '%s' (%s) has no memory on this server", node->name, ggml_op_desc(node));
    for (int k = 0; k < GGML_MAX_SRC; k++)
        if (node->src[k] != NULL && !has_server_memory(s, node->src[k]))
            return WHY("node '%s' (%s): source '%s' has no memory on this server", node->name, ggml_op_desc(node),
                       node->src[k]->name);
    return true;
}

/* Encodes the record of tensor i of g at out; false after an ERROR naming it. */
static bool put_graph_tensor(const struct rpc_server *s, const struct graph_tensors *g, size_t i, uint8_t *out)
{
    const struct ggml_tensor *t = g->list[i];
    struct rpc_wire_tensor rec;
    char why[WHY_SIZE];
    if (!tensor_record(s, t, &rec, why) || (i < g->n_nodes && !node_sendable(s, t, why))) {
        server_log(s, GGML_LOG_LEVEL_ERROR, "graph_compute: the graph cannot be sent: %s", why);
        return false;
    }
    if (i >= g->n_nodes)
        memset(rec.src, 0, sizeof rec.src);
    if (!sends_view_link(s, g, i))
        rec.view_src = rec.view_offs = 0;
    rec.use_count = (int32_t) g->use_count[i];
    rpc_wire_put_tensor(out, &rec);
    return true;
}

/*
 * The GRAPH_COMPUTE payload of graph for device d:
 *   | device | n_nodes | node ids (8 bytes each) | n_tensors | records |
 * in a new allocation (*size bytes), or NULL after an ERROR.
 */
static uint8_t *encode_graph(const struct rpc_device *d, struct ggml_cgraph *graph, size_t *size)
{
    struct graph_tensors g = { 0 };
    uint8_t *out = NULL;
    const bool collected = collect_tensors(d->server, graph, &g);
    const size_t n_nodes = g.n_nodes;
    if (collected) {
        *size = 8 + 8 * n_nodes + 4 + RPC_WIRE_TENSOR_SIZE * g.n;
        out = g.n <= UINT32_MAX ? malloc(*size) : NULL;
        if (out == NULL)
            server_log(d->server, GGML_LOG_LEVEL_ERROR, "graph_compute: no memory for a message of %zu tensors",
                       g.n);
    }
    bool ok = out != NULL;
    if (ok) {
        rpc_wire_put_u32(out, d->index);
        rpc_wire_put_u32(out + 4, (uint32_t) n_nodes);
        for (size_t i = 0; i < n_nodes; i++)
            rpc_wire_put_u64(out + 8 + 8 * i, (uint64_t) (uintptr_t) g.list[i]);
        rpc_wire_put_u32(out + 8 + 8 * n_nodes, (uint32_t) g.n);
    }
    uint8_t *records = ok ? out + 12 + 8 * n_nodes : NULL;
    for (size_t i = 0; ok && i < g.n; i++)
        ok = put_graph_tensor(d->server, &g, i, records + i * RPC_WIRE_TENSOR_SIZE);
    free_tensors(&g);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

/*
 * Sends a graph payload (taken over), or GRAPH_RECOMPUTE when the server
 * holds the same one for the device, then waits for the server to finish
 * it with one DEVICE_COUNT (requests are served in order, and a failed
 * graph closes the connection first).
 */
static bool run_graph(struct rpc_device *d, uint8_t *payload, size_t size)
{
    struct rpc_server *s = d->server;
    uint8_t device[4], count[4];
    rpc_wire_put_u32(device, d->index);
    pthread_mutex_lock(&s->lock);
    const bool same = d->sent_graph != NULL && d->sent_graph_size == size && memcmp(d->sent_graph, payload, size) == 0;
    const struct rpc_call compute = {
        .cmd = same ? RPC_WIRE_GRAPH_RECOMPUTE : RPC_WIRE_GRAPH_COMPUTE,
        .payload = same ? device : payload, .payload_size = same ? sizeof device : size, .reply_size = -1,
    };
    const struct rpc_call confirm = {
        .cmd = RPC_WIRE_DEVICE_COUNT, .reply = count, .reply_size = sizeof count,
        .what = same ? "GRAPH_RECOMPUTE (waiting for its end)" : "GRAPH_COMPUTE (waiting for its end)",
    };
    bool ok = exchange_locked(s, &compute) && exchange_locked(s, &confirm);
    if (ok && rpc_wire_get_u32(count) != s->n_devices) {
        break_locked(s, confirm.what, "the server's device count changed");
        ok = false;
    }
    if (ok && !same) {
        free(d->sent_graph);
        d->sent_graph = payload;
        d->sent_graph_size = size;
        payload = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    free(payload);
    return ok;
}

/* ---------------------------------------------------------------- backend */

static struct rpc_device *backend_device(ggml_backend_t backend)
{
    return backend->context;
}

static const char *rpc_backend_get_name(ggml_backend_t backend)
{
    return backend_device(backend)->buft_name;
}

static void rpc_backend_free(ggml_backend_t backend)
{
    free(backend);
}

static enum ggml_status rpc_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph *graph)
{
    struct rpc_device *d = backend_device(backend);
    size_t size = 0;
    uint8_t *payload = encode_graph(d, graph, &size);
    if (payload != NULL && rpc_wire_get_u32(payload + 4) == 0) {   /* nothing computes: nothing to send */
        free(payload);
        return GGML_STATUS_SUCCESS;
    }
    return payload != NULL && run_graph(d, payload, size) ? GGML_STATUS_SUCCESS : GGML_STATUS_FAILED;
}

static const struct ggml_backend_i rpc_backend_iface = {
    .get_name            = rpc_backend_get_name,       /* "RPC<device>[endpoint]" */
    .free                = rpc_backend_free,           /* local only: the server keeps no backend state */
    .set_tensor_async    = NULL,                       /* synchronous: library default */
    .get_tensor_async    = NULL,
    .set_tensor_2d_async = NULL,
    .get_tensor_2d_async = NULL,
    .cpy_tensor_async    = NULL,
    .synchronize         = NULL,                       /* nothing pending: graph_compute waits for the end */
    .graph_plan_create   = NULL,                       /* no plans */
    .graph_plan_free     = NULL,
    .graph_plan_update   = NULL,
    .graph_plan_compute  = NULL,
    .graph_compute       = rpc_backend_graph_compute,  /* GRAPH_COMPUTE or GRAPH_RECOMPUTE, then a round trip */
    .event_record        = NULL,                       /* no events */
    .event_wait          = NULL,
    .graph_optimize      = NULL,                       /* node order kept */
};

/* ----------------------------------------------------------------- device */

static struct rpc_device *device_ctx(ggml_backend_dev_t dev)
{
    return dev->context;
}

static const char *rpc_dev_get_name(ggml_backend_dev_t dev)
{
    return device_ctx(dev)->name;
}

static const char *rpc_dev_get_description(ggml_backend_dev_t dev)
{
    return device_ctx(dev)->server->endpoint;
}

static void rpc_dev_get_memory(ggml_backend_dev_t dev, size_t *free_bytes, size_t *total_bytes)
{
    uint8_t reply[16];
    const bool ok = ask_device(device_ctx(dev), RPC_WIRE_GET_DEVICE_MEMORY, reply, sizeof reply);
    *free_bytes = ok ? clamp_size(rpc_wire_get_u64(reply)) : 0;
    *total_bytes = ok ? clamp_size(rpc_wire_get_u64(reply + 8)) : 0;
}

static enum ggml_backend_dev_type rpc_dev_get_type(ggml_backend_dev_t dev)
{
    return GGML_BACKEND_DEVICE_TYPE_GPU;   /* as upstream: the protocol does not say */
}

static void rpc_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props *props)
{
    props->name = rpc_dev_get_name(dev);
    props->description = rpc_dev_get_description(dev);
    rpc_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->type = rpc_dev_get_type(dev);
    props->device_id = NULL;
    props->caps = (struct ggml_backend_dev_caps) {
        .async = false,
        .host_buffer = false,
        .buffer_from_host_ptr = false,
        .events = false,
        .mmap_support = true,   /* tensors are set from any host memory, mapped files included */
    };
}

/* params are not used. */
static ggml_backend_t rpc_dev_init_backend(ggml_backend_dev_t dev, const char *params)
{
    struct rpc_device *d = device_ctx(dev);
    pthread_mutex_lock(&d->server->lock);
    const bool usable = usable_locked(d->server, "creating a backend");
    pthread_mutex_unlock(&d->server->lock);
    ggml_backend_t backend = usable ? malloc(sizeof *backend) : NULL;
    if (backend == NULL)
        return NULL;   /* the library reports the failure */
    *backend = (struct ggml_backend) {
        .guid = &rpc_guid,
        .iface = rpc_backend_iface,
        .device = dev,
        .context = d,
    };
    return backend;
}

static ggml_backend_buffer_type_t rpc_dev_get_buffer_type(ggml_backend_dev_t dev)
{
    return device_buffer_type(device_ctx(dev));
}

/* Whether the node and its sources can travel (see the header comment); the server's device decides the rest. */
static bool rpc_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor *op)
{
    const struct rpc_server *s = device_ctx(dev)->server;
    struct rpc_wire_tensor rec;
    char why[WHY_SIZE];
    bool ok = tensor_record(s, op, &rec, why);
    for (int k = 0; ok && k < GGML_MAX_SRC; k++)
        ok = op->src[k] == NULL || tensor_record(s, op->src[k], &rec, why);
    return ok;
}

static bool rpc_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft)
{
    return buft != NULL && buft->iface.alloc_buffer == rpc_buft_alloc_buffer && buft->device == dev;
}

static const struct ggml_backend_device_i rpc_device_iface = {
    .get_name             = rpc_dev_get_name,          /* "RPC<k>", k counted over the process */
    .get_description      = rpc_dev_get_description,   /* the endpoint */
    .get_memory           = rpc_dev_get_memory,        /* GET_DEVICE_MEMORY */
    .get_type             = rpc_dev_get_type,          /* GPU */
    .get_props            = rpc_dev_get_props,
    .init_backend         = rpc_dev_init_backend,      /* params unused */
    .get_buffer_type      = rpc_dev_get_buffer_type,   /* made on first use */
    .get_host_buffer_type = NULL,                      /* none */
    .buffer_from_host_ptr = NULL,                      /* memory is remote */
    .supports_op          = rpc_dev_supports_op,       /* what can travel */
    .supports_buft        = rpc_dev_supports_buft,     /* its own buffer type only */
    .offload_op           = NULL,                      /* library default: false */
    .event_new            = NULL,                      /* no events */
    .event_free           = NULL,
    .event_synchronize    = NULL,
};

/* ---------------------------------------------------------------- servers */

static const char *rpc_server_reg_get_name(ggml_backend_reg_t reg)
{
    return ((const struct rpc_server *) reg->context)->name;
}

static size_t rpc_server_reg_get_device_count(ggml_backend_reg_t reg)
{
    return ((const struct rpc_server *) reg->context)->n_devices;
}

static ggml_backend_dev_t rpc_server_reg_get_device(ggml_backend_reg_t reg, size_t index)
{
    struct rpc_server *s = reg->context;
    return index < s->n_devices ? &s->devices[index].dev : NULL;
}

static const struct ggml_backend_reg_i rpc_server_reg_iface = {
    .get_name         = rpc_server_reg_get_name,          /* "RPC[endpoint]" */
    .get_device_count = rpc_server_reg_get_device_count,  /* the server's DEVICE_COUNT when it was added */
    .get_device       = rpc_server_reg_get_device,        /* the server's device of that number */
    .get_proc_address = ggml__rpc_reg_proc_address,      /* those of the plugin's registry */
};

/* AUTH with the token (len bytes): the server must answer with the byte 1. */
static bool authenticate(struct rpc_server *s, const char *token, size_t len)
{
    uint8_t accepted = 0;
    const struct rpc_call call = {
        .cmd = RPC_WIRE_AUTH, .payload = token, .payload_size = len, .reply = &accepted, .reply_size = 1,
        .if_closed = "the server refused the token (or does not take one) of " TOKEN_ENV,
    };
    if (!call_server(s, &call))
        return false;
    if (accepted != 1) {
        break_connection(s, "AUTH", "the server answered %u, not 1", (unsigned) accepted);
        return false;
    }
    return true;
}

/* HELLO: the server's version must be 5.x with x at most 1. */
static bool hello(struct rpc_server *s, bool token_sent)
{
    uint8_t caps[RPC_WIRE_CAPS_SIZE] = { 0 }, reply[4 + RPC_WIRE_CAPS_SIZE];   /* plain TCP */
    const struct rpc_call call = {
        .cmd = RPC_WIRE_HELLO, .payload = caps, .payload_size = sizeof caps, .reply = reply, .reply_size = sizeof reply,
        .if_closed = token_sent ? NULL
                                : "the server closed the connection (it may not serve this client's address, "
                                  "speak another protocol version, or require a token: " TOKEN_ENV ")",
    };
    if (!call_server(s, &call))
        return false;
    if (reply[0] != RPC_WIRE_MAJOR || reply[1] > RPC_WIRE_MINOR) {
        break_connection(s, "HELLO", "the server speaks protocol %u.%u.%u, this client %d.%d.%d",
                         (unsigned) reply[0], (unsigned) reply[1], (unsigned) reply[2], RPC_WIRE_MAJOR, RPC_WIRE_MINOR,
                         RPC_WIRE_PATCH);
        return false;
    }
    return true;
}

/* DEVICE_COUNT, believed from 1 to MAX_DEVICES. */
static bool device_count(struct rpc_server *s, uint32_t *count)
{
    uint8_t reply[4];
    const struct rpc_call call = { .cmd = RPC_WIRE_DEVICE_COUNT, .reply = reply, .reply_size = sizeof reply };
    if (!call_server(s, &call))
        return false;
    *count = rpc_wire_get_u32(reply);
    if (*count == 0 || *count > MAX_DEVICES) {
        break_connection(s, "DEVICE_COUNT", "%u devices (1 to %d expected)", (unsigned) *count, MAX_DEVICES);
        return false;
    }
    return true;
}

static char *format_name(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *format_name(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = NULL;
    if (vasprintf(&out, fmt, ap) < 0)
        out = NULL;
    va_end(ap);
    return out;
}

static void free_server(struct rpc_server *s)
{
    if (s->fd >= 0)
        close(s->fd);
    for (uint32_t i = 0; s->devices != NULL && i < s->n_devices; i++)
        free(s->devices[i].buft_name);
    free(s->devices);
    pthread_mutex_destroy(&s->lock);
    free(s->name);
    free(s->endpoint);
    free(s);
}

/* Gives s its devices, numbered from *next (under servers_lock); false when out of memory. */
static bool make_devices(struct rpc_server *s, uint32_t count, unsigned *next)
{
    s->devices = calloc(count, sizeof *s->devices);
    if (s->devices == NULL)
        return false;
    s->n_devices = count;
    for (uint32_t i = 0; i < count; i++) {
        struct rpc_device *d = &s->devices[i];
        d->dev = (struct ggml_backend_device) { .iface = rpc_device_iface, .reg = &s->reg, .context = d };
        d->server = s;
        d->index = i;
        snprintf(d->name, sizeof d->name, "RPC%u", *next + i);
        d->buft = (struct ggml_backend_buffer_type) { .iface = rpc_buft_iface, .device = &d->dev, .context = d };
        atomic_init(&d->buft_ready, false);
        if ((d->buft_name = format_name("RPC%u[%s]", (unsigned) i, s->endpoint)) == NULL)
            return false;
    }
    *next += count;
    return true;
}

/* Connects to endpoint and learns its devices; NULL after one message at level. */
static struct rpc_server *connect_server(const char *endpoint, enum ggml_log_level level)
{
    struct rpc_server *s = calloc(1, sizeof *s);
    if (s == NULL || (s->endpoint = strdup(endpoint)) == NULL ||
        (s->name = format_name("%s[%s]", GGML_RPC_NAME, endpoint)) == NULL) {
        ggml__plugin_log(GGML_LOG_LEVEL_ERROR, GGML_RPC_NAME, "out of memory for server %s", endpoint);
        if (s != NULL)
            free(s->endpoint);
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->fd = -1;
    s->fail_level = level;
    s->timeout = timeout_from_env();
    s->reg = (struct ggml_backend_reg) {
        .api_version = GGML_BACKEND_API_VERSION, .iface = rpc_server_reg_iface, .context = s,
    };
    const char *env = getenv(TOKEN_ENV);
    char token[RPC_WIRE_TOKEN_MAX];
    const size_t token_len = env != NULL ? strlen(env) : 0;
    if (env != NULL && (token_len == 0 || token_len > RPC_WIRE_TOKEN_MAX)) {
        server_log(s, GGML_LOG_LEVEL_ERROR, "%s has %zu bytes, and a token has 1 to %d: server not added", TOKEN_ENV,
                   token_len, RPC_WIRE_TOKEN_MAX);
        free_server(s);
        return NULL;
    }
    if (env != NULL)
        memcpy(token, env, token_len);
    char why[WHY_SIZE];
    s->fd = connect_endpoint(endpoint, s->timeout, why);
    if (s->fd < 0)
        server_log(s, level, "%s", why);
    uint32_t count = 0;
    bool ok = s->fd >= 0 && (env == NULL || authenticate(s, token, token_len)) && hello(s, env != NULL) &&
              device_count(s, &count);
    if (ok && !make_devices(s, count, &next_device_number)) {
        server_log(s, GGML_LOG_LEVEL_ERROR, "out of memory for %u devices", (unsigned) count);
        ok = false;
    }
    if (!ok) {
        free_server(s);
        return NULL;
    }
    s->fail_level = GGML_LOG_LEVEL_ERROR;
    s->published = true;
    return s;
}

/* The registry of endpoint's server, connecting the first time; NULL after one message at level. */
static ggml_backend_reg_t add_server(const char *endpoint, enum ggml_log_level level)
{
    if (endpoint == NULL || endpoint[0] == '\0') {
        ggml__plugin_log(GGML_LOG_LEVEL_ERROR, "ggml_backend_rpc_add_server", "endpoint is NULL or empty");
        return NULL;
    }
    pthread_mutex_lock(&servers_lock);
    struct rpc_server *s = servers;
    while (s != NULL && strcmp(s->endpoint, endpoint) != 0)
        s = s->next;
    if (s == NULL && (s = connect_server(endpoint, level)) != NULL) {
        s->next = servers;
        servers = s;
    }
    pthread_mutex_unlock(&servers_lock);
    return s != NULL ? &s->reg : NULL;
}

ggml_backend_reg_t ggml__rpc_add_server(const char *endpoint)
{
    return add_server(endpoint, GGML_LOG_LEVEL_ERROR);
}

/* ---------------------------------------------- the servers of GGML_RPC_SERVERS */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static ggml_backend_dev_t *env_devices;
static size_t n_env_devices;

/* Appends the devices of reg (when it is not listed yet); false when out of memory. */
static bool add_env_devices(ggml_backend_reg_t reg)
{
    const size_t n = reg->iface.get_device_count(reg);
    for (size_t i = 0; i < n_env_devices; i++)
        if (env_devices[i]->reg == reg)
            return true;
    ggml_backend_dev_t *grown = realloc(env_devices, (n_env_devices + n) * sizeof *grown);
    if (grown == NULL)
        return false;
    env_devices = grown;
    for (size_t i = 0; i < n; i++)
        env_devices[n_env_devices++] = reg->iface.get_device(reg, i);
    return true;
}

/* Adds each server named in GGML_RPC_SERVERS (once per process); one that cannot be used is skipped, with a WARN. */
static void enumerate_env_servers(void)
{
    const char *env = secure_getenv(SERVERS_ENV);
    char *list = env != NULL ? strdup(env) : NULL;
    int n_named = 0;
    char *save = NULL;
    for (char *ep = list != NULL ? strtok_r(list, ",", &save) : NULL; ep != NULL; ep = strtok_r(NULL, ",", &save)) {
        ep += strspn(ep, " \t");
        for (size_t len = strlen(ep); len > 0 && (ep[len - 1] == ' ' || ep[len - 1] == '\t'); len--)
            ep[len - 1] = '\0';
        if (ep[0] == '\0')
            continue;
        if (++n_named > MAX_ENV_SERVERS) {
            ggml__plugin_log(GGML_LOG_LEVEL_WARN, GGML_RPC_NAME, "%s names more than %d servers: %s and the rest "
                             "are not used", SERVERS_ENV, MAX_ENV_SERVERS, ep);
            break;
        }
        ggml_backend_reg_t reg = add_server(ep, GGML_LOG_LEVEL_WARN);
        if (reg == NULL)
            ggml__plugin_log(GGML_LOG_LEVEL_WARN, GGML_RPC_NAME, "%s: server %s skipped", SERVERS_ENV, ep);
        else if (!add_env_devices(reg))
            ggml__plugin_log(GGML_LOG_LEVEL_WARN, GGML_RPC_NAME, "%s: out of memory: server %s skipped", SERVERS_ENV,
                             ep);
    }
    free(list);
}

size_t ggml__rpc_env_device_count(void)
{
    pthread_once(&env_once, enumerate_env_servers);
    return n_env_devices;
}

ggml_backend_dev_t ggml__rpc_env_device(size_t index)
{
    pthread_once(&env_once, enumerate_env_servers);
    return index < n_env_devices ? env_devices[index] : NULL;
}
