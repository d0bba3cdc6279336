## tests/plugins/local.mk - backend plugins used by the tests, never installed.
##
## libggml-testdev:     a working backend with its own non-host buffer type
## libggml-testdev-hi:  the same registry name with a higher score
## libggml-badversion:  a registry with the wrong api_version
## libggml-noinit:      a module without ggml_backend_init
## libggml-nullinit:    ggml_backend_init returns NULL

test_plugin_ldflags = -module -avoid-version -rpath /nowhere -no-undefined $(AM_LDFLAGS)
test_plugin_cppflags = $(AM_CPPFLAGS) -DGGML_BACKEND_DL

check_LTLIBRARIES += \
	tests/plugins/libggml-testdev.la \
	tests/plugins/libggml-testdev-hi.la \
	tests/plugins/libggml-badversion.la \
	tests/plugins/libggml-noinit.la \
	tests/plugins/libggml-nullinit.la

tests_plugins_libggml_testdev_la_SOURCES = tests/plugins/testdev.c
tests_plugins_libggml_testdev_la_CPPFLAGS = $(test_plugin_cppflags)
tests_plugins_libggml_testdev_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_libggml_testdev_la_LIBADD = libggml-backend.la

tests_plugins_libggml_testdev_hi_la_SOURCES = tests/plugins/testdev.c
tests_plugins_libggml_testdev_hi_la_CPPFLAGS = $(test_plugin_cppflags) -DTESTDEV_SCORE=20
tests_plugins_libggml_testdev_hi_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_libggml_testdev_hi_la_LIBADD = libggml-backend.la

tests_plugins_libggml_badversion_la_SOURCES = tests/plugins/badversion.c
tests_plugins_libggml_badversion_la_CPPFLAGS = $(test_plugin_cppflags)
tests_plugins_libggml_badversion_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_libggml_badversion_la_LIBADD = libggml-backend.la

tests_plugins_libggml_noinit_la_SOURCES = tests/plugins/noinit.c
tests_plugins_libggml_noinit_la_CPPFLAGS = $(test_plugin_cppflags)
tests_plugins_libggml_noinit_la_LDFLAGS = $(test_plugin_ldflags)

tests_plugins_libggml_nullinit_la_SOURCES = tests/plugins/nullinit.c
tests_plugins_libggml_nullinit_la_CPPFLAGS = $(test_plugin_cppflags)
tests_plugins_libggml_nullinit_la_LDFLAGS = $(test_plugin_ldflags)
tests_plugins_libggml_nullinit_la_LIBADD = libggml-backend.la
