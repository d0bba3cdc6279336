## tests/local.mk - TAP tests run by `make check` through tap-driver.sh.

TEST_EXTENSIONS = .sh
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
SH_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_COMPILER = $(SHELL)
# Test programs: the op tests run at every CPU kernel level (see the script).
LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/run-levels.sh

# Where test-blas finds the uninstalled BLAS plugin; empty when it is not
# built, and test-blas then skips what needs it.
if BUILD_BLAS
blas_plugin_dir = $(abs_top_builddir)/lib/blas/.libs
else
blas_plugin_dir =
endif

# Variables the script checks read.
AM_TESTS_ENVIRONMENT = \
	top_srcdir='$(top_srcdir)'; top_builddir='$(top_builddir)'; \
	CC='$(CC) $(SANITIZER_CFLAGS)'; LIBTOOL='$(LIBTOOL)'; \
	PACKAGE_VERSION='$(PACKAGE_VERSION)'; MANDOC='$(MANDOC)'; NM='$(NM)'; \
	CXX_FOR_TESTS='$(CXX_FOR_TESTS)'; SANITIZER_CFLAGS='$(SANITIZER_CFLAGS)'; \
	export CXX_FOR_TESTS SANITIZER_CFLAGS; \
	ASAN_OPTIONS=allocator_may_return_null=1; \
	TEST_PLUGIN_DIR='$(abs_top_builddir)/tests/plugins/.libs'; export TEST_PLUGIN_DIR; \
	BLAS_PLUGIN_DIR='$(blas_plugin_dir)'; export BLAS_PLUGIN_DIR; \
	RPC_SERVER_PROGRAM='$(abs_top_builddir)/tools/ggml-rpc-server'; export RPC_SERVER_PROGRAM; \
	RPC_PLUGIN_DIR='$(abs_top_builddir)/lib/rpc/.libs'; export RPC_PLUGIN_DIR; \
	export top_srcdir top_builddir CC LIBTOOL PACKAGE_VERSION MANDOC NM ASAN_OPTIONS;

tap_test_programs = \
	tests/test-headers \
	tests/test-fp16 \
	tests/test-types \
	tests/test-quants \
	tests/test-quants-small \
	tests/test-quants-q45 \
	tests/test-quants-k \
	tests/test-quants-k23 \
	tests/test-quants-tq \
	tests/test-quants-iq1 \
	tests/test-quants-iq3 \
	tests/test-quants-iq2 \
	tests/test-context \
	tests/test-tensor \
	tests/test-views \
	tests/test-graph \
	tests/test-utils \
	tests/test-buffer \
	tests/test-backend \
	tests/test-meta \
	tests/test-registry \
	tests/test-plugins \
	tests/test-sched \
	tests/test-alloc \
	tests/test-cpu \
	tests/test-numa \
	tests/test-cpu-hwloc \
	tests/test-threads \
	tests/test-kernels \
	tests/test-rpc-wire \
	tests/test-rpc-server \
	tests/test-rpc-client \
	tests/test-op-binary \
	tests/test-op-copy \
	tests/test-op-unary \
	tests/test-op-reduce \
	tests/test-op-matmul \
	tests/test-op-repack \
	tests/test-op-rows \
	tests/test-op-rope \
	tests/test-op-attention \
	tests/test-llama-block \
	tests/test-op-conv \
	tests/test-op-conv-direct \
	tests/test-foreign-nodes \
	tests/test-op-image \
	tests/test-op-seq \
	tests/test-op-recurrent \
	tests/test-op-back \
	tests/test-autodiff \
	tests/test-op-deepseek \
	tests/test-op-custom \
	tests/test-blas \
	tests/test-gguf \
	tests/test-gguf-load \
	tests/test-opt

check_PROGRAMS += $(tap_test_programs)
TESTS += $(tap_test_programs) tests/check-abi.sh tests/check-man.sh tests/check-numa.sh tests/check-declared.sh \
	tests/check-cpp.sh tests/check-blas-kernels.sh

noinst_HEADERS += tests/tap.h tests/op-test.h tests/small-quants-ref.h tests/quant-data.h tests/dense-strides.h
LDADD = libggml-backend.la -lm

EXTRA_DIST += tests/data/smallquants.txt tests/data/q45quants.txt
EXTRA_DIST += tests/check-abi.sh tests/check-man.sh tests/check-declared.sh tests/abi/libggml-backend.symbols tests/run-levels.sh
EXTRA_DIST += tests/check-cpp.sh tests/cpp-wrappers.cc tests/check-blas-kernels.sh

# test-numa checks the placement plans directly: lib/cpu/numa-plan.c is
# compiled into it (the library does not export it).
tests_test_numa_SOURCES = tests/test-numa.c lib/cpu/numa-plan.c lib/cpu/numa-plan.h
tests_test_numa_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/cpu
tests_test_numa_CFLAGS = $(AM_CFLAGS) $(HWLOC_CFLAGS)
tests_test_numa_LDADD = libggml-backend.la $(HWLOC_LIBS) -lm
# test-rpc-wire checks the RPC messages: lib/rpc/wire.c is compiled into
# it (the RPC plugin's own code, not exported by any library).
tests_test_rpc_wire_SOURCES = tests/test-rpc-wire.c lib/rpc/wire.c lib/rpc/wire.h
tests_test_rpc_wire_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/rpc
tests_test_rpc_wire_LDADD = libggml-backend.la
# test-rpc-server runs one server connection (lib/rpc/server.c) in a thread.
tests_test_rpc_server_SOURCES = tests/test-rpc-server.c lib/rpc/server.c lib/rpc/server.h lib/rpc/wire.c \
	lib/rpc/wire.h lib/plugin-log.h
tests_test_rpc_server_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/rpc
tests_test_rpc_server_LDADD = libggml-backend.la -lm
# test-rpc-client starts ggml-rpc-server programs (RPC_SERVER_PROGRAM) and
# talks to them through the uninstalled RPC plugin (RPC_PLUGIN_DIR); its
# fake servers and proxy are threads.
tests_test_rpc_client_LDADD = libggml-backend.la -lpthread -lm
# test-kernels builds the kernel table of every level: it links the
# library's internals (the convenience library behind libggml-backend.la).
tests_test_kernels_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/cpu
tests_test_kernels_LDADD = libggml-backend-core.la -lm
# test-quants-k decodes q8_K (no public decoder) with the internal one.
tests_test_quants_k_LDADD = libggml-backend-core.la -lm
EXTRA_DIST += tests/data/kquants.txt
# test-quants-k23 likewise (q8_K activations for its dot products).
tests_test_quants_k23_LDADD = libggml-backend-core.la -lm
EXTRA_DIST += tests/data/k23quants.txt
# test-quants-tq decodes q8_K (no public decoder) with the internal one.
tests_test_quants_tq_LDADD = libggml-backend-core.la -lm
EXTRA_DIST += tests/data/tqquants.txt
# test-quants-iq1 likewise (q8_K activations of its dot products).
tests_test_quants_iq1_LDADD = libggml-backend-core.la -lm
EXTRA_DIST += tests/data/iq1quants.txt
# test-quants-iq3 likewise (q8_K activations for its dot products).
tests_test_quants_iq3_LDADD = libggml-backend-core.la -lm
EXTRA_DIST += tests/data/iq3quants.txt
# test-quants-iq2 decodes q8_K (no public decoder) with the internal one.
tests_test_quants_iq2_LDADD = libggml-backend-core.la -lm
EXTRA_DIST += tests/data/iq2quants.txt
# test-cpu-hwloc defines hwloc's system calls to count the library's.
tests_test_cpu_hwloc_CFLAGS = $(AM_CFLAGS) $(HWLOC_CFLAGS)
tests_test_cpu_hwloc_LDADD = libggml-backend.la -lm
# numa-run: one computation under one NUMA strategy, for check-numa.sh.
check_PROGRAMS += tests/numa-run
tests_numa_run_CFLAGS = $(AM_CFLAGS) $(HWLOC_CFLAGS)
tests_numa_run_LDADD = libggml-backend.la $(HWLOC_LIBS) -lm
EXTRA_DIST += \
	tests/tap-sh.sh \
	tests/check-numa.sh \
	tests/topologies/README \
	tests/topologies/one-node.xml \
	tests/topologies/two-sockets-two-nodes.xml \
	tests/topologies/eight-nodes-interleaved.xml \
	tests/topologies/hybrid.xml \
	tests/topologies/restricted.xml

# fuzz-graph: random graphs of the public op constructors (see its header
# comment); check-fuzz.sh runs it for a bounded time, check-fuzz-tamper.sh
# on graphs tampered with after construction.
check_PROGRAMS += tests/fuzz-graph
TESTS += tests/check-fuzz.sh tests/check-fuzz-tamper.sh
EXTRA_DIST += tests/check-fuzz.sh tests/check-fuzz-tamper.sh

# fuzz-gguf: the GGUF reader's fuzz target (see its header comment), its
# seeds and a bounded number of mutations run by check-fuzz-gguf.sh.
check_PROGRAMS += tests/fuzz-gguf
TESTS += tests/check-fuzz-gguf.sh
EXTRA_DIST += tests/check-fuzz-gguf.sh

# fuzz-rpc: the RPC server's fuzz target (see its header comment), its
# seed sessions and a bounded number of mutations run by check-fuzz-rpc.sh.
check_PROGRAMS += tests/fuzz-rpc
tests_fuzz_rpc_SOURCES = tests/fuzz-rpc.c lib/rpc/server.c lib/rpc/server.h lib/rpc/wire.c lib/rpc/wire.h \
	lib/plugin-log.h
tests_fuzz_rpc_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/rpc
tests_fuzz_rpc_LDADD = libggml-backend.la -lm
TESTS += tests/check-fuzz-rpc.sh
EXTRA_DIST += tests/check-fuzz-rpc.sh

# The libFuzzer builds of the same graph builder and GGUF target (configure
# --enable-libfuzzer, clang only): run them as tests/fuzz-graph-libfuzzer
# -max_total_time=60, tests/fuzz-gguf-libfuzzer CORPUS_DIR (seeds from
# tests/fuzz-gguf --write-corpus CORPUS_DIR), tests/fuzz-rpc-libfuzzer
# CORPUS_DIR (seeds from tests/fuzz-rpc --write-corpus CORPUS_DIR).
if BUILD_LIBFUZZER
check_PROGRAMS += tests/fuzz-gguf-libfuzzer
tests_fuzz_gguf_libfuzzer_SOURCES = tests/fuzz-gguf.c
tests_fuzz_gguf_libfuzzer_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_GGUF_LIBFUZZER
tests_fuzz_gguf_libfuzzer_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_gguf_libfuzzer_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
check_PROGRAMS += tests/fuzz-graph-libfuzzer
tests_fuzz_graph_libfuzzer_SOURCES = tests/fuzz-graph.c
tests_fuzz_graph_libfuzzer_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_GRAPH_LIBFUZZER
tests_fuzz_graph_libfuzzer_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_graph_libfuzzer_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
check_PROGRAMS += tests/fuzz-rpc-libfuzzer
tests_fuzz_rpc_libfuzzer_SOURCES = $(tests_fuzz_rpc_SOURCES)
tests_fuzz_rpc_libfuzzer_CPPFLAGS = $(tests_fuzz_rpc_CPPFLAGS) -DFUZZ_RPC_LIBFUZZER
tests_fuzz_rpc_libfuzzer_CFLAGS = $(AM_CFLAGS) -fsanitize=fuzzer
tests_fuzz_rpc_libfuzzer_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_rpc_libfuzzer_LDADD = $(tests_fuzz_rpc_LDADD)
endif

include tests/plugins/local.mk

# test-fault: allocation failures injected at every allocation of a
# realistic program.  Its allocator replaces malloc and friends for the
# whole process, so the program exports them (-Wl,--export-dynamic).
check_PROGRAMS += tests/test-fault
TESTS += tests/test-fault
tests_test_fault_SOURCES = tests/test-fault.c tests/fault-alloc.c tests/fault-alloc.h
tests_test_fault_LDFLAGS = -Wl,--export-dynamic

# test-quant-tables-fault: the lattice quantizers' tables when memory runs
# out while they are built (the same replaced allocator as test-fault).
check_PROGRAMS += tests/test-quant-tables-fault
TESTS += tests/test-quant-tables-fault
tests_test_quant_tables_fault_SOURCES = tests/test-quant-tables-fault.c tests/fault-alloc.c tests/fault-alloc.h
tests_test_quant_tables_fault_LDFLAGS = -Wl,--export-dynamic

# test-repack-fault: partial writes and reads of a CPU_REPACK tensor when
# memory runs out (the same replaced allocator as test-fault).
check_PROGRAMS += tests/test-repack-fault
TESTS += tests/test-repack-fault
tests_test_repack_fault_SOURCES = tests/test-repack-fault.c tests/fault-alloc.c tests/fault-alloc.h
tests_test_repack_fault_LDFLAGS = -Wl,--export-dynamic

# test-opt-fault: a short training run (lib/opt.c) when memory runs out
# (the same replaced allocator as test-fault).
check_PROGRAMS += tests/test-opt-fault
TESTS += tests/test-opt-fault
tests_test_opt_fault_SOURCES = tests/test-opt-fault.c tests/fault-alloc.c tests/fault-alloc.h
tests_test_opt_fault_LDFLAGS = -Wl,--export-dynamic
