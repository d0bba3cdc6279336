## examples/local.mk - small programs people copy from; built and run by `make check`.

example_programs = examples/print-graph examples/plugin/consumer
check_PROGRAMS += $(example_programs)
TESTS += tests/check-examples.sh
AM_TESTS_ENVIRONMENT += EXAMPLE_PROGRAMS='$(example_programs)'; export EXAMPLE_PROGRAMS; \
	EXAMPLE_BACKEND_PATH='$(abs_top_builddir)/examples/plugin/.libs/libggml-example.so'; \
	export EXAMPLE_BACKEND_PATH;
EXTRA_DIST += tests/check-examples.sh

# Benchmarks: built by `make check`, run by hand (they take seconds).
check_PROGRAMS += examples/bench-mulmat

# The example backend plugin and its consumer (examples/plugin), made to be
# built out of the tree with pkg-config only (examples/plugin/Makefile).
# Installed as documentation, from where `make installcheck` builds them
# against the installed library (tests/installcheck-plugin.sh).  `make
# check` builds the plugin as a module in the tree and runs the consumer
# with GGML_BACKEND_PATH naming it (tests/check-examples.sh).
exampleplugindir = $(docdir)/examples/plugin
dist_exampleplugin_DATA = \
	examples/plugin/README \
	examples/plugin/Makefile \
	examples/plugin/example-backend.c \
	examples/plugin/consumer.c

check_LTLIBRARIES += examples/plugin/libggml-example.la
examples_plugin_libggml_example_la_SOURCES = examples/plugin/example-backend.c
examples_plugin_libggml_example_la_CPPFLAGS = $(test_plugin_cppflags)
examples_plugin_libggml_example_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS)
examples_plugin_libggml_example_la_LDFLAGS = $(test_plugin_ldflags)
examples_plugin_libggml_example_la_LIBADD = libggml-backend.la

examples_plugin_consumer_LDADD = libggml-backend.la -lm

# The BLAS device against cblas_sgemm and the CPU backend; needs the plugin
# (GGML_BACKEND_PATH=$PWD/lib/blas/.libs) and links the BLAS library itself.
if BUILD_BLAS
check_PROGRAMS += examples/bench-blas
examples_bench_blas_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
examples_bench_blas_LDADD = libggml-backend.la $(OPENBLAS_LIBS) -lm
endif
