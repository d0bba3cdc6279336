/*
 * ggml-rpc-server - serves this library's devices over ggml's RPC protocol
 * (version 5.1.0, that of upstream ggml's rpc-server), so that programs on
 * other machines (with this library's RPC client or upstream's) compute
 * graphs on them.
 *
 *   ggml-rpc-server [--host ADDR] [--port N] [--device NAME]... [--threads N]
 *                   [--cache DIR] [--allow ADDR]... [--max-buffer-mib N]
 *                   [--max-message-mib N] [--max-nodes N] [--timeout S]
 *                   [--connections N] [--token-file FILE] [--numa STRATEGY]
 *                   [--help] [--version]
 *
 * The serving itself is the RPC plugin's (libggml-rpc.so in the plugin
 * directory, through its registry's proc address "ggml_backend_rpc_serve"):
 * this program only parses options and finds the devices.  It listens on
 * 127.0.0.1 unless told otherwise; every other address is logged as a
 * warning.  A token (--token-file, or GGML_RPC_TOKEN) is never taken from
 * the command line, where other users see it.
 *
 * Exit status: 0 after --connections connections; 1 when the plugin, a
 * device or the address is not available; 2 on a bad option or token.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "../lib/rpc/serve.h"
#include "../lib/rpc/wire.h"
#include "tool-util.h"

#define MAX_LISTED 64
#define TOKEN_ENV "GGML_RPC_TOKEN"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: ggml-rpc-server [options]\n"
            "Serves this machine's devices to ggml programs elsewhere over ggml's RPC protocol %d.%d.%d.\n"
            "  --host ADDR         the address to listen on (default 127.0.0.1; another one is logged\n"
            "                      as a warning: the protocol has no encryption, and no client\n"
            "                      authentication but --token-file's)\n"
            "  --port N            the TCP port (default %d)\n"
            "  --device NAME       a device to serve, by name (ggml-backend-info lists them);\n"
            "                      repeatable, numbered in order (default: the CPU)\n"
            "  --threads N         threads of the devices that take a count (default: theirs)\n"
            "  --numa STRATEGY     ggml_numa_init(STRATEGY) before the devices start: disabled,\n"
            "                      distribute, isolate, numactl or mirror (default: not called)\n"
            "  --cache DIR         keep tensors of more than 10 MiB in DIR, so that clients can\n"
            "                      send a hash instead of the data next time (SET_TENSOR_HASH)\n"
            "  --allow ADDR        serve only clients from this numeric address; repeatable\n"
            "  --max-buffer-mib N  the memory one connection may allocate (default 65536)\n"
            "  --max-message-mib N the largest graph message (default 256)\n"
            "  --max-nodes N       the most nodes of one graph (default 65536)\n"
            "  --timeout S         close a connection that waits S seconds for one read or write\n"
            "                      (default 600; 0: never)\n"
            "  --connections N     exit after serving N connections (default: serve without end)\n"
            "  --token-file FILE   serve only clients that send the token of FILE's first line\n"
            "                      (1 to %d bytes; FILE must not be readable by group or others);\n"
            "                      without it, %s gives the token when set\n"
            "  --help, --version\n"
            "Connections are served one after another.  A token is sent in clear, and only this\n"
            "library's clients can send one (upstream's cannot): use a tunnel across networks.\n",
            5, 1, 0, RPC_DEFAULT_PORT, RPC_WIRE_TOKEN_MAX, TOKEN_ENV);
}

/* The value of option argv[*i] (its next argument), or NULL (reported). */
static const char *value_of(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "ggml-rpc-server: %s needs a value\n", argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

static bool number(const char *option, const char *s, long min, long max, long *out)
{
    if (s != NULL && tool_parse_int(s, min, max, out))
        return true;
    fprintf(stderr, "ggml-rpc-server: %s takes a whole number from %ld to %ld\n", option, min, max);
    return false;
}

/* Whether a token (len bytes) is one AUTH can carry; says why not, naming where it came from. */
static bool token_ok(const char *token, size_t len, const char *from)
{
    if (len == 0 || len > RPC_WIRE_TOKEN_MAX) {
        fprintf(stderr, "ggml-rpc-server: the token of %s has %s%zu bytes: 1 to %d are taken\n", from,
                len > RPC_WIRE_TOKEN_MAX ? "more than " : "", len > RPC_WIRE_TOKEN_MAX ? (size_t) RPC_WIRE_TOKEN_MAX : len,
                RPC_WIRE_TOKEN_MAX);
        return false;
    }
    if (memchr(token, '\0', len) != NULL) {
        fprintf(stderr, "ggml-rpc-server: the token of %s holds a NUL byte\n", from);
        return false;
    }
    return true;
}

/*
 * Reads the token of path, its first line without the newline, into
 * token (RPC_WIRE_TOKEN_MAX + 1 bytes, NUL-terminated).  The file must be
 * a regular file that neither group nor others can read.  False after a
 * message.
 */
static bool read_token_file(const char *path, char *token)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        fprintf(stderr, "ggml-rpc-server: cannot open the token file %s: %s\n", path, strerror(errno));
        return false;
    }
    struct stat st;
    const char *refusal = NULL;
    if (fstat(fd, &st) != 0)
        refusal = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        refusal = "not a regular file";
    else if ((st.st_mode & S_IROTH) != 0)
        refusal = "readable by others, and a token must be its owner's secret (chmod 600)";
    else if ((st.st_mode & S_IRGRP) != 0)
        refusal = "readable by its group, and a token must be its owner's secret (chmod 600)";
    /* one byte past the longest token and its newline: enough to tell a first line that is too long */
    char buf[RPC_WIRE_TOKEN_MAX + 2];
    size_t n = 0;
    while (refusal == NULL && n < sizeof buf) {
        const ssize_t got = read(fd, buf + n, sizeof buf - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            refusal = strerror(errno);
        if (got <= 0)
            break;
        n += (size_t) got;
    }
    close(fd);
    if (refusal != NULL) {
        fprintf(stderr, "ggml-rpc-server: the token file %s: %s\n", path, refusal);
        return false;
    }
    const char *newline = memchr(buf, '\n', n);
    const size_t len = newline != NULL ? (size_t) (newline - buf) : n;
    char from[32 + 4096];
    snprintf(from, sizeof from, "the token file %s", path);
    const bool good = token_ok(buf, len, from);
    if (good) {
        memcpy(token, buf, len);
        token[len] = '\0';
    }
    memset(buf, 0, sizeof buf);
    return good;
}

int main(int argc, char **argv)
{
    struct rpc_serve_options o;
    memset(&o, 0, sizeof o);
    o.port = RPC_DEFAULT_PORT;
    o.io_timeout_seconds = 600;
    const char *device_names[MAX_LISTED], *allow[MAX_LISTED], *token_file = NULL;
    enum ggml_numa_strategy numa = GGML_NUMA_STRATEGY_COUNT;   /* COUNT: ggml_numa_init not called */
    static char token[RPC_WIRE_TOKEN_MAX + 1];
    size_t n_names = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        long n = 0;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("ggml-rpc-server %s (RPC protocol 5.1.0)\n", PACKAGE_VERSION);
            return 0;
        } else if (strcmp(a, "--host") == 0) {
            if ((o.host = value_of(argc, argv, &i)) == NULL)
                return 2;
        } else if (strcmp(a, "--port") == 0) {
            if (!number(a, value_of(argc, argv, &i), 1, 65535, &n))
                return 2;
            o.port = (uint16_t) n;
        } else if (strcmp(a, "--device") == 0 || strcmp(a, "--allow") == 0) {
            const bool is_device = a[2] == 'd';
            if ((v = value_of(argc, argv, &i)) == NULL)
                return 2;
            if ((is_device ? n_names : o.n_allow) >= MAX_LISTED) {
                fprintf(stderr, "ggml-rpc-server: at most %d of %s\n", MAX_LISTED, a);
                return 2;
            }
            if (is_device)
                device_names[n_names++] = v;
            else
                allow[o.n_allow++] = v;
        } else if (strcmp(a, "--threads") == 0) {
            if (!number(a, value_of(argc, argv, &i), 1, GGML_MAX_N_THREADS, &n))
                return 2;
            o.n_threads = (size_t) n;
        } else if (strcmp(a, "--cache") == 0) {
            if ((o.cache_dir = value_of(argc, argv, &i)) == NULL)
                return 2;
        } else if (strcmp(a, "--max-buffer-mib") == 0) {
            if (!number(a, value_of(argc, argv, &i), 1, 1L << 30, &n))
                return 2;
            o.max_buffer_bytes = (uint64_t) n << 20;
        } else if (strcmp(a, "--max-message-mib") == 0) {
            if (!number(a, value_of(argc, argv, &i), 1, 1L << 20, &n))
                return 2;
            o.max_message_bytes = (uint64_t) n << 20;
        } else if (strcmp(a, "--max-nodes") == 0) {
            if (!number(a, value_of(argc, argv, &i), 1, 1L << 24, &n))
                return 2;
            o.max_nodes = (uint32_t) n;
        } else if (strcmp(a, "--timeout") == 0) {
            if (!number(a, value_of(argc, argv, &i), 0, 86400, &n))
                return 2;
            o.io_timeout_seconds = (int) n;
        } else if (strcmp(a, "--connections") == 0) {
            if (!number(a, value_of(argc, argv, &i), 1, 1L << 30, &n))
                return 2;
            o.max_connections = (int) n;
        } else if (strcmp(a, "--numa") == 0) {
            if ((v = value_of(argc, argv, &i)) == NULL)
                return 2;
            if (!tool_parse_numa(v, &numa)) {
                fprintf(stderr, "ggml-rpc-server: unknown NUMA strategy '%s' (disabled, distribute, isolate, "
                                "numactl, mirror)\n", v);
                return 2;
            }
        } else if (strcmp(a, "--token-file") == 0) {
            if ((token_file = value_of(argc, argv, &i)) == NULL)
                return 2;
        } else {
            fprintf(stderr, "ggml-rpc-server: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    o.allow = allow;
    const char *env_token = getenv(TOKEN_ENV);
    if (token_file != NULL) {
        if (!read_token_file(token_file, token))
            return 2;
        o.token = token;
    } else if (env_token != NULL) {
        if (!token_ok(env_token, strlen(env_token), TOKEN_ENV))
            return 2;
        o.token = env_token;
    }

    /* Served devices are this machine's: the RPC registry must not connect,
       as a client, to the servers a GGML_RPC_SERVERS meant for clients names. */
    unsetenv("GGML_RPC_SERVERS");
    if (numa != GGML_NUMA_STRATEGY_COUNT)
        ggml_numa_init(numa);   /* before any device makes a pool or a buffer */
    ggml_backend_load_all();
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("RPC");
    rpc_serve_fn serve = reg != NULL ? (rpc_serve_fn) ggml_backend_reg_get_proc_address(reg, RPC_SERVE_PROC) : NULL;
    if (serve == NULL) {
        fprintf(stderr, "ggml-rpc-server: the RPC plugin (libggml-rpc.so) is not in the plugin path "
                        "(ggml-backend-info shows where plugins are looked for)\n");
        return 1;
    }
    ggml_backend_dev_t devices[MAX_LISTED];
    for (size_t i = 0; i < n_names; i++) {
        devices[i] = ggml_backend_dev_by_name(device_names[i]);
        if (devices[i] == NULL) {
            fprintf(stderr, "ggml-rpc-server: no device named '%s' (ggml-backend-info lists them)\n", device_names[i]);
            return 1;
        }
    }
    o.devices = devices;
    o.n_devices = n_names;
    return serve(&o) ? 0 : 1;
}
