## lib/rpc/local.mk - the RPC plugin, libggml-rpc.la, installed in the
## plugin directory: the only module that speaks ggml's RPC protocol.

backend_LTLIBRARIES += lib/rpc/libggml-rpc.la

lib_rpc_libggml_rpc_la_SOURCES = \
	lib/rpc/plugin.c \
	lib/rpc/client.c \
	lib/rpc/rpc-guid.h \
	lib/rpc/listen.c \
	lib/rpc/server.c \
	lib/rpc/server.h \
	lib/rpc/serve.h \
	lib/rpc/wire.c \
	lib/rpc/wire.h \
	lib/rpc/rpc-private.h \
	lib/plugin-log.h
lib_rpc_libggml_rpc_la_CPPFLAGS = $(AM_CPPFLAGS) -DGGML_BACKEND_DL -I$(top_srcdir)/lib/rpc
lib_rpc_libggml_rpc_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS)
lib_rpc_libggml_rpc_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -no-undefined \
	-export-symbols-regex '^ggml_backend_init$$'
lib_rpc_libggml_rpc_la_LIBADD = libggml-backend.la -lpthread
