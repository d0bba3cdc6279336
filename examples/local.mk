## examples/local.mk - small programs people copy from; built and run by `make check`.

example_programs = examples/print-graph
check_PROGRAMS += $(example_programs)
TESTS += tests/check-examples.sh
AM_TESTS_ENVIRONMENT += EXAMPLE_PROGRAMS='$(example_programs)'; export EXAMPLE_PROGRAMS;
EXTRA_DIST += tests/check-examples.sh

# Benchmarks: built by `make check`, run by hand (they take seconds).
check_PROGRAMS += examples/bench-mulmat

# The BLAS device against cblas_sgemm and the CPU backend; needs the plugin
# (GGML_BACKEND_PATH=$PWD/lib/blas/.libs) and links the BLAS library itself.
if BUILD_BLAS
check_PROGRAMS += examples/bench-blas
examples_bench_blas_CPPFLAGS = $(AM_CPPFLAGS) $(OPENBLAS_CFLAGS)
examples_bench_blas_LDADD = libggml-backend.la $(OPENBLAS_LIBS) -lm
endif
