## tools/local.mk - the command-line tools, installed in bindir.
##
## ggml-backend-info   the plugin search path, plugins, registries, devices

bin_PROGRAMS = tools/ggml-backend-info
noinst_HEADERS += tools/tool-util.h

tools_cppflags = $(AM_CPPFLAGS) -DGGML_BACKEND_TOOL_DIR='"$(backenddir)"'

tools_ggml_backend_info_SOURCES = tools/ggml-backend-info.c tools/tool-util.c
tools_ggml_backend_info_CPPFLAGS = $(tools_cppflags)
tools_ggml_backend_info_LDADD = libggml-backend.la
