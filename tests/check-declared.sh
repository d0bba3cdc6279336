#!/bin/sh
# check-declared.sh - every function the public headers declare is defined
# and exported by the built library: a program that takes the address of
# each one links.  A name declared without a definition would compile in a
# user's program and fail at link time; this test fails first.  Emits TAP.
#
# The declarations are read by GCC itself (-aux-info lists every function
# declared in a translation unit with the file that declares it), so no
# parser of C is kept here.  Static inline functions are skipped: they are
# defined in the headers.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
CC=${CC:-cc}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
headers="ggml.h ggml-alloc.h ggml-backend.h ggml-cpu.h ggml-blas.h ggml-rpc.h ggml-backend-impl.h gguf.h"

lib=$(ls "$top_builddir"/.libs/libggml-backend.so 2>/dev/null | head -n 1)
if [ -z "$lib" ]; then
    echo "1..0 # SKIP libggml-backend.so not built"
    exit 0
fi
# -aux-info is GCC's: use gcc for reading when CC is another compiler
writes_aux_info() { # writes_aux_info COMPILER-COMMAND
    rm -f "$tmp/probe"
    echo 'int f(void);' | $1 -x c -aux-info "$tmp/probe" -c -o /dev/null - 2>/dev/null &&
        grep -q 'f (void)' "$tmp/probe"
}
reader=
if writes_aux_info "$CC"; then
    reader=$CC
elif writes_aux_info gcc; then
    reader=gcc
fi
if [ -z "$reader" ]; then
    echo "1..0 # SKIP no compiler here writes -aux-info (GCC does)"
    exit 0
fi

echo "1..3"
for h in $headers; do echo "#include \"$h\""; done > "$tmp/all.c"
if ! $reader -std=c11 -I"$top_srcdir/include" -aux-info "$tmp/aux" -c "$tmp/all.c" -o "$tmp/all.o" 2> "$tmp/err"; then
    echo "not ok 1 - the public headers compile together"
    sed 's/^/# /' "$tmp/err"
    echo "ok 2 # SKIP nothing read"
    echo "ok 3 # SKIP nothing read"
    exit 0
fi
echo "ok 1 - the public headers compile together"

# "/* .../include/ggml.h:123:NC */ extern T *name (args);" -> name
grep -F "$top_srcdir/include/" "$tmp/aux" | grep -v '\*/ static ' |
    sed -n 's/.*[ *]\([A-Za-z_][A-Za-z0-9_]*\) (.*/\1/p' | LC_ALL=C sort -u > "$tmp/names"
count=$(wc -l < "$tmp/names")
if [ "$count" -ge 500 ]; then
    echo "ok 2 - $count functions declared by the public headers"
else
    echo "not ok 2 - $count functions declared by the public headers: too few, the listing is broken"
fi

{
    cat "$tmp/all.c"
    echo "typedef void (*any_function)(void);"
    echo "static volatile any_function declared[] = {"
    sed 's/.*/    (any_function) \&&,/' "$tmp/names"
    echo "};"
    echo "int main(void) { return declared[0] == 0; }"
} > "$tmp/refs.c"
if $CC -std=c11 -Wno-deprecated-declarations -I"$top_srcdir/include" -o "$tmp/refs" "$tmp/refs.c" -L"$top_builddir/.libs" -lggml-backend \
    -Wl,-rpath,"$top_builddir/.libs" 2> "$tmp/link"; then
    echo "ok 3 - every one of them is defined and exported by libggml-backend"
else
    echo "not ok 3 - every one of them is defined and exported by libggml-backend"
    sed -n "s/.*undefined reference to \`\([A-Za-z0-9_]*\)'.*/# declared, not exported: \1/p" "$tmp/link" | sort -u
    grep -v 'undefined reference' "$tmp/link" | head -n 20 | sed 's/^/# /'
fi
