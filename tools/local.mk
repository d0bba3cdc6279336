## tools/local.mk - the command-line tools, installed in bindir.
##
## ggml-backend-info   the plugin search path, plugins, registries, devices
## ggml-backend-bench  the benchmark: a transformer block and matrix
##                     products on every device through the scheduler
## ggml-backend-gguf   what a GGUF model file holds, and whether it is sound
## ggml-rpc-server     this machine's devices served over ggml's RPC protocol
##                     (the serving is the RPC plugin's)

bin_PROGRAMS = tools/ggml-backend-info tools/ggml-backend-bench tools/ggml-backend-gguf tools/ggml-rpc-server
noinst_HEADERS += tools/tool-util.h

tools_cppflags = $(AM_CPPFLAGS) -DGGML_BACKEND_TOOL_DIR='"$(backenddir)"'

tools_ggml_backend_info_SOURCES = tools/ggml-backend-info.c tools/tool-util.c
tools_ggml_backend_info_CPPFLAGS = $(tools_cppflags)
tools_ggml_backend_info_LDADD = libggml-backend.la

# The bench's cblas_sgemm reference goes through the BLAS device (the
# plugin, found at run time): no tool links a BLAS library.
tools_ggml_backend_bench_SOURCES = tools/ggml-backend-bench.c tools/tool-util.c
tools_ggml_backend_bench_CPPFLAGS = $(tools_cppflags)
tools_ggml_backend_bench_LDADD = libggml-backend.la -lm -lpthread

tools_ggml_backend_gguf_SOURCES = tools/ggml-backend-gguf.c tools/tool-util.c
tools_ggml_backend_gguf_CPPFLAGS = $(tools_cppflags)
tools_ggml_backend_gguf_LDADD = libggml-backend.la

tools_ggml_rpc_server_SOURCES = tools/ggml-rpc-server.c tools/tool-util.c
tools_ggml_rpc_server_CPPFLAGS = $(tools_cppflags)
tools_ggml_rpc_server_LDADD = libggml-backend.la

TESTS += tests/check-tools.sh tests/check-rpc-server.sh
EXTRA_DIST += tests/check-tools.sh tests/check-rpc-server.sh
