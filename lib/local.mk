## lib/local.mk - libggml-backend.la: tensor core, backend API, CPU backend.
##
## Everything is compiled into the convenience library libggml-backend-core.la
## (also linked statically into the tests that check internals, such as
## test-kernels); libggml-backend.la is that library with the exported
## symbols of lib/libggml-backend.sym.  The CPU kernels of each
## instruction-set level are a convenience library of their own, compiled
## with that level's flags only (see lib/cpu/simd/kernels.h).

lib_LTLIBRARIES += libggml-backend.la
noinst_LTLIBRARIES += libggml-backend-core.la

ggmlbackendincludedir = $(includedir)/ggml-backend
ggmlbackendinclude_HEADERS = \
	include/ggml.h \
	include/ggml-alloc.h \
	include/ggml-backend.h \
	include/ggml-backend-impl.h \
	include/ggml-cpu.h \
	include/ggml-blas.h \
	include/ggml-rpc.h \
	include/gguf.h \
	include/ggml-backend-gguf.h \
	include/ggml-opt.h \
	include/ggml-cpp.h

libggml_backend_core_la_SOURCES = \
	lib/ggml-impl.h \
	lib/fp16-impl.h \
	lib/quants-impl.h \
	lib/log.c \
	lib/util.c \
	lib/types.c \
	lib/fp16.c \
	lib/quants.c \
	lib/quants-small.c \
	lib/quants-k.c \
	lib/quants-k23.c \
	lib/quants-tq.c \
	lib/quants-grid8.c \
	lib/quants-iq1.c lib/quants-iq1-grid.h \
	lib/quants-iq3.c \
	lib/quants-iq3-grids.h \
	lib/quants-iq2.c \
	lib/iq2-grids.h \
	lib/hash.c \
	lib/context.c \
	lib/tensor.c \
	lib/accessors.c \
	lib/layout.c \
	lib/op-names.c \
	lib/graph.c \
	lib/backward.c \
	lib/opt.c \
	lib/backend-private.h \
	lib/handles.c \
	lib/buffer.c \
	lib/backend.c \
	lib/registry.c \
	lib/registry-private.h \
	lib/loader.c \
	lib/blas-client.c \
	lib/rpc-client.c \
	lib/rpc/rpc-guid.h \
	lib/alloc.c \
	lib/sched.c \
	lib/meta.c \
	lib/gguf.c \
	lib/gguf-load.c \
	lib/cpu/buffer.c \
	lib/cpu/repack.c \
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
	lib/cpu/traits.c \
	lib/cpu/simd/kernels.h \
	lib/cpu/simd/vmath-template.h \
	lib/cpu/simd/transpose-tiles.h \
	lib/cpu/simd/prefetch-rows.h \
	lib/cpu/simd/packed-rows.h \
	lib/cpu/simd/block-formats.h \
	lib/cpu/simd/table.c \
	lib/cpu/simd/generic/generic.h \
	lib/cpu/simd/generic/lanes.h \
	lib/cpu/simd/generic/convert.c \
	lib/cpu/simd/generic/dot.c \
	lib/cpu/simd/generic/dot-small.c \
	lib/cpu/simd/generic/dot-k.c \
	lib/cpu/simd/generic/dot-k23.c \
	lib/cpu/simd/generic/dot-tq.c \
	lib/cpu/simd/generic/dot-iq1.c \
	lib/cpu/simd/generic/dot-iq3.c \
	lib/cpu/simd/generic/dot-iq2.c \
	lib/cpu/simd/generic/vector.c \
	lib/cpu/simd/generic/rows.c \
	lib/cpu/simd/generic/transpose.c \
	lib/cpu/simd/generic/gemm.c \
	lib/cpu/simd/generic/qgemm.c \
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
	lib/ops-back.c \
	lib/cpu/ops/back.c \
	lib/ops-deepseek.c \
	lib/cpu/ops/deepseek.c \
	lib/ops-custom.c \
	lib/cpu/ops/custom.c

core_cppflags = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/cpu -I$(top_srcdir)/lib/cpu/simd -I$(top_builddir)/lib -DGGML_BUILD
libggml_backend_core_la_CPPFLAGS = $(core_cppflags)
libggml_backend_core_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(HWLOC_CFLAGS)
libggml_backend_core_la_LIBADD = $(HWLOC_LIBS) $(LIBS)

# Kernel levels (configure builds those the compiler accepts).
if ISA_SSE2
noinst_LTLIBRARIES += lib/cpu/simd/libisa-sse2.la
lib_cpu_simd_libisa_sse2_la_SOURCES = \
	lib/cpu/simd/sse2/sse2.h \
	lib/cpu/simd/sse2/vmath.h \
	lib/cpu/simd/sse2/dot.c \
	lib/cpu/simd/sse2/elementwise.c \
	lib/cpu/simd/sse2/rows.c
lib_cpu_simd_libisa_sse2_la_CPPFLAGS = $(core_cppflags)
lib_cpu_simd_libisa_sse2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(ISA_SSE2_CFLAGS)
libggml_backend_core_la_LIBADD += lib/cpu/simd/libisa-sse2.la
endif
if ISA_AVX2
noinst_LTLIBRARIES += lib/cpu/simd/libisa-avx2.la
lib_cpu_simd_libisa_avx2_la_SOURCES = \
	lib/cpu/simd/avx2/avx2.h \
	lib/cpu/simd/avx2/intsum.h \
	lib/cpu/simd/avx2/k-blocks.h \
	lib/cpu/simd/avx2/words8x8.h \
	lib/cpu/simd/avx2/q4tile.h \
	lib/cpu/simd/avx2/q8tile.h \
	lib/cpu/simd/avx2/qrows.h \
	lib/cpu/simd/avx2/dot.c \
	lib/cpu/simd/avx2/gemm.c \
	lib/cpu/simd/avx2/qgemm.c \
	lib/cpu/simd/avx2/dot-small.c \
	lib/cpu/simd/avx2/dot-k.c \
	lib/cpu/simd/avx2/dot-k23.c \
	lib/cpu/simd/avx2/dot-tq.c \
	lib/cpu/simd/avx2/dot-iq3.c \
	lib/cpu/simd/avx2/dot-iq1.c \
	lib/cpu/simd/avx2/dot-iq2.c \
	lib/cpu/simd/avx2/lattice.h \
	lib/cpu/simd/avx2/convert.c \
	lib/cpu/simd/avx2/vector.c \
	lib/cpu/simd/avx2/vmath.h \
	lib/cpu/simd/avx2/elementwise.c \
	lib/cpu/simd/avx2/rows.c \
	lib/cpu/simd/avx2/transpose.c
lib_cpu_simd_libisa_avx2_la_CPPFLAGS = $(core_cppflags)
lib_cpu_simd_libisa_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(ISA_AVX2_CFLAGS)
libggml_backend_core_la_LIBADD += lib/cpu/simd/libisa-avx2.la
endif
if ISA_AVX2_VNNI
noinst_LTLIBRARIES += lib/cpu/simd/libisa-avx2-vnni.la
lib_cpu_simd_libisa_avx2_vnni_la_SOURCES = \
	lib/cpu/simd/avx2/avx2.h \
	lib/cpu/simd/avx2/vmath.h \
	lib/cpu/simd/avx2/q4tile.h \
	lib/cpu/simd/avx2/q8tile.h \
	lib/cpu/simd/avx2/qrows.h \
	lib/cpu/simd/avx2/qgemm-vnni.c \
	lib/cpu/simd/avx2/dot-vnni.c
lib_cpu_simd_libisa_avx2_vnni_la_CPPFLAGS = $(core_cppflags)
lib_cpu_simd_libisa_avx2_vnni_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(ISA_AVX2_VNNI_CFLAGS)
libggml_backend_core_la_LIBADD += lib/cpu/simd/libisa-avx2-vnni.la
endif
if ISA_AVX512
noinst_LTLIBRARIES += lib/cpu/simd/libisa-avx512.la
lib_cpu_simd_libisa_avx512_la_SOURCES = \
	lib/cpu/simd/avx512/avx512.h \
	lib/cpu/simd/avx512/intrin.h \
	lib/cpu/simd/avx512/tile32x12.h \
	lib/cpu/simd/avx512/qdot.h \
	lib/cpu/simd/avx512/convert.c \
	lib/cpu/simd/avx512/dot.c \
	lib/cpu/simd/avx512/vector.c \
	lib/cpu/simd/avx512/vmath.h \
	lib/cpu/simd/avx512/elementwise.c \
	lib/cpu/simd/avx512/gemm.c \
	lib/cpu/simd/avx512/rows.c \
	lib/cpu/simd/avx512/transpose.c
lib_cpu_simd_libisa_avx512_la_CPPFLAGS = $(core_cppflags)
lib_cpu_simd_libisa_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(ISA_AVX512_CFLAGS)
libggml_backend_core_la_LIBADD += lib/cpu/simd/libisa-avx512.la
endif
if ISA_AVX512_VNNI
noinst_LTLIBRARIES += lib/cpu/simd/libisa-avx512-vnni.la
lib_cpu_simd_libisa_avx512_vnni_la_SOURCES = \
	lib/cpu/simd/avx2/intsum.h \
	lib/cpu/simd/avx2/k-blocks.h \
	lib/cpu/simd/avx2/words8x8.h \
	lib/cpu/simd/avx512/avx512.h \
	lib/cpu/simd/avx512/intrin.h \
	lib/cpu/simd/avx512/tile32x12.h \
	lib/cpu/simd/avx512/qdot.h \
	lib/cpu/simd/avx512/dot-vnni.c \
	lib/cpu/simd/avx512/gemm-bf16.c \
	lib/cpu/simd/avx512/qgemm-vnni.c \
	lib/cpu/simd/avx512/qgemm-k-vnni.c \
	lib/cpu/simd/avx512/dot-k-vnni.c
lib_cpu_simd_libisa_avx512_vnni_la_CPPFLAGS = $(core_cppflags)
lib_cpu_simd_libisa_avx512_vnni_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(ISA_AVX512_VNNI_CFLAGS)
libggml_backend_core_la_LIBADD += lib/cpu/simd/libisa-avx512-vnni.la
endif
if ISA_NEON
noinst_LTLIBRARIES += lib/cpu/simd/libisa-neon.la
lib_cpu_simd_libisa_neon_la_SOURCES = \
	lib/cpu/simd/neon/neon.h \
	lib/cpu/simd/neon/quant-dot.h \
	lib/cpu/simd/neon/dot.c \
	lib/cpu/simd/neon/convert.c \
	lib/cpu/simd/neon/gemm.c
lib_cpu_simd_libisa_neon_la_CPPFLAGS = $(core_cppflags)
lib_cpu_simd_libisa_neon_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(ISA_NEON_CFLAGS)
libggml_backend_core_la_LIBADD += lib/cpu/simd/libisa-neon.la
endif
if ISA_NEON_DOTPROD
noinst_LTLIBRARIES += lib/cpu/simd/libisa-neon-dotprod.la
lib_cpu_simd_libisa_neon_dotprod_la_SOURCES = \
	lib/cpu/simd/neon/neon.h \
	lib/cpu/simd/neon/quant-dot.h \
	lib/cpu/simd/neon/dot-dotprod.c \
	lib/cpu/simd/neon/qgemm-dotprod.c
lib_cpu_simd_libisa_neon_dotprod_la_CPPFLAGS = $(core_cppflags)
lib_cpu_simd_libisa_neon_dotprod_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(ISA_NEON_DOTPROD_CFLAGS)
libggml_backend_core_la_LIBADD += lib/cpu/simd/libisa-neon-dotprod.la
endif

# The plugin directory, compiled into registry.c through a generated
# header so that a new configure (another --prefix) rebuilds it.
lib/backend-dir.h: Makefile
	$(AM_V_GEN)$(MKDIR_P) lib && \
	echo '#define GGML_BACKEND_DIR "$(backenddir)"' > $@.tmp && \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
BUILT_SOURCES = lib/backend-dir.h
CLEANFILES += lib/backend-dir.h
nodist_libggml_backend_core_la_SOURCES = lib/backend-dir.h
libggml_backend_la_LDFLAGS = $(AM_LDFLAGS) -version-info $(LT_VERSION_INFO) \
	-no-undefined \
	-Wl,--version-script=$(top_srcdir)/lib/libggml-backend.sym
libggml_backend_la_SOURCES =
# (no sources of its own: linked by the C compiler, as its parts are C)
nodist_EXTRA_libggml_backend_la_SOURCES = lib/link-as-c.c
libggml_backend_la_LIBADD = libggml-backend-core.la $(HWLOC_LIBS) $(LIBS)
EXTRA_libggml_backend_la_DEPENDENCIES = lib/libggml-backend.sym

EXTRA_DIST += lib/libggml-backend.sym
