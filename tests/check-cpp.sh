#!/bin/sh
# check-cpp.sh - ggml-cpp.h (the C++ smart pointers) with the C++ compiler
# configure found (CXX_FOR_TESTS; the only use of one): tests/cpp-wrappers.cc
# compiles with -std=c++17 -Wall -Wextra -Werror against the source tree's
# headers, links with the built library, and runs.  Skipped, with the
# reason, when there is no C++ compiler.  Emits TAP.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
CXX=${CXX_FOR_TESTS:-}
if [ -z "$CXX" ]; then
    echo "1..0 # SKIP no C++ compiler found by configure"
    exit 0
fi
lib=$top_builddir/.libs/libggml-backend.so
if [ ! -f "$lib" ]; then
    echo "1..0 # SKIP libggml-backend.so not built"
    exit 0
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
echo "1..2"
# shellcheck disable=SC2086
if $CXX -std=c++17 -Wall -Wextra -Werror ${SANITIZER_CFLAGS:-} -I"$top_srcdir/include" \
    -o "$tmp/cpp-wrappers" "$top_srcdir/tests/cpp-wrappers.cc" \
    -L"$top_builddir/.libs" -Wl,-rpath,"$top_builddir/.libs" -lggml-backend > "$tmp/cc.out" 2>&1; then
    echo "ok 1 - ggml-cpp.h compiles with $CXX -std=c++17 -Wall -Wextra -Werror"
else
    echo "not ok 1 - ggml-cpp.h compiles with $CXX -std=c++17 -Wall -Wextra -Werror"
    sed 's/^/# /' "$tmp/cc.out" | head -n 40
    echo "ok 2 # SKIP not built"
    exit 0
fi
if "$tmp/cpp-wrappers" > "$tmp/run.out" 2>&1; then
    echo "ok 2 - every smart pointer owns, computes and frees"
else
    echo "not ok 2 - every smart pointer owns, computes and frees"
fi
sed 's/^/# /' "$tmp/run.out"
