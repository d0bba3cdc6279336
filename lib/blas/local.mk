## lib/blas/local.mk - the BLAS plugin, libggml-blas.la, installed in the
## plugin directory.  Only this module links the BLAS library.

backend_LTLIBRARIES =
if BUILD_BLAS
backend_LTLIBRARIES += lib/blas/libggml-blas.la
endif

lib_blas_libggml_blas_la_SOURCES = \
	lib/blas/blas.c \
	lib/blas/blas-guid.h \
	lib/plugin-log.h \
	lib/blas/team.c \
	lib/blas/team.h
lib_blas_libggml_blas_la_CPPFLAGS = $(AM_CPPFLAGS) -DGGML_BACKEND_DL $(OPENBLAS_CFLAGS)
lib_blas_libggml_blas_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS)
lib_blas_libggml_blas_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -no-undefined \
	-export-symbols-regex '^ggml_backend_(init|score)$$'
lib_blas_libggml_blas_la_LIBADD = libggml-backend.la $(OPENBLAS_LIBS) -lpthread

