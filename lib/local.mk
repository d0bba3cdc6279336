## lib/local.mk - libggml-backend.la: tensor core (and, later, the backend API).

lib_LTLIBRARIES += libggml-backend.la

ggmlbackendincludedir = $(includedir)/ggml-backend
ggmlbackendinclude_HEADERS = \
	include/ggml.h \
	include/ggml-alloc.h \
	include/ggml-backend.h \
	include/ggml-backend-impl.h \
	include/ggml-cpu.h \
	include/ggml-blas.h

libggml_backend_la_SOURCES = \
	lib/ggml-impl.h \
	lib/fp16-impl.h \
	lib/quants-impl.h \
	lib/log.c \
	lib/util.c \
	lib/types.c \
	lib/fp16.c \
	lib/quants.c \
	lib/hash.c \
	lib/context.c \
	lib/tensor.c \
	lib/accessors.c \
	lib/layout.c \
	lib/op-names.c \
	lib/graph.c \
	lib/backend-private.h \
	lib/handles.c \
	lib/buffer.c \
	lib/backend.c \
	lib/registry.c \
	lib/registry-private.h \
	lib/loader.c \
	lib/blas-client.c \
	lib/alloc.c \
	lib/sched.c \
	lib/cpu/buffer.c \
	lib/cpu/cpu-private.h \
	lib/cpu/threadpool.c \
	lib/cpu/numa.c \
	lib/cpu/numa-plan.c \
	lib/cpu/numa-plan.h \
	lib/cpu/compute.c \
	lib/cpu/features.c \
	lib/cpu/backend.c \
	lib/cpu/ops/copy.c \
	lib/cpu/ops/binary.c \
	lib/cpu/ops/unary.c \
	lib/cpu/ops/reduce.c \
	lib/cpu/ops/matmul.c \
	lib/cpu/ops/rows.c \
	lib/cpu/ops/softmax.c \
	lib/cpu/ops/rope.c \
	lib/cpu/ops/sort.c \
	lib/cpu/ops/attention.c \
	lib/cpu/vec-dot.c \
	lib/cpu/vec-dot.h \
	lib/ops-binary.c \
	lib/ops-unary.c \
	lib/ops-reduce.c \
	lib/ops-matmul.c \
	lib/ops-rows.c \
	lib/ops-rope.c \
	lib/ops-attention.c \
	lib/ops-conv.c \
	lib/cpu/ops/conv.c \
	lib/ops-conv-direct.c \
	lib/cpu/ops/conv-direct.c \
	lib/ops-image.c \
	lib/cpu/ops/image.c \
	lib/ops-seq.c \
	lib/cpu/ops/seq.c \
	lib/ops-recurrent.c \
	lib/cpu/ops/recurrent.c \
	lib/ops-custom.c \
	lib/cpu/ops/custom.c

libggml_backend_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/cpu -I$(top_builddir)/lib -DGGML_BUILD
libggml_backend_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(HWLOC_CFLAGS)
# The plugin directory, compiled into registry.c through a generated
# header so that a new configure (another --prefix) rebuilds it.
lib/backend-dir.h: Makefile
	$(AM_V_GEN)$(MKDIR_P) lib && \
	echo '#define GGML_BACKEND_DIR "$(backenddir)"' > $@.tmp && \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
BUILT_SOURCES = lib/backend-dir.h
CLEANFILES += lib/backend-dir.h
nodist_libggml_backend_la_SOURCES = lib/backend-dir.h
libggml_backend_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(LT_VERSION_INFO) \
	-no-undefined \
	-Wl,--version-script=$(top_srcdir)/lib/libggml-backend.sym
libggml_backend_la_LIBADD = $(HWLOC_LIBS) $(LIBS)
EXTRA_libggml_backend_la_DEPENDENCIES = lib/libggml-backend.sym

EXTRA_DIST += lib/libggml-backend.sym
