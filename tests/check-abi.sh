#!/bin/sh
# check-abi.sh - the exported symbols of the built library are exactly the
# stored list, the version script names the same list, and the man page list
# in man/local.mk is current.  Emits TAP.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
NM=${NM:-nm}
stored="$top_srcdir/tests/abi/libggml-backend.symbols"
script="$top_srcdir/lib/libggml-backend.sym"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
n=0
result() { # result STATUS DESCRIPTION [DIAGNOSTIC-FILE]
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        [ -n "${3:-}" ] && sed 's/^/# /' "$3"
    fi
}

lib=$(ls "$top_builddir"/.libs/libggml-backend.so.[0-9]* 2>/dev/null | head -n 1)
if [ -z "$lib" ]; then
    echo "1..0 # SKIP libggml-backend.so not built"
    exit 0
fi

# Defined, exported code and data symbols (the version node tag is not one).
$NM -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWi]$/ && $3 !~ /^GGML_BACKEND_/ { print $3 }' \
    | sed 's/@.*//' | LC_ALL=C sort -u > "$tmp/exported"
LC_ALL=C sort -u "$stored" > "$tmp/stored"
diff -u "$tmp/stored" "$tmp/exported" > "$tmp/diff1"
result $? "exported symbols equal tests/abi/libggml-backend.symbols" "$tmp/diff1"

sed -n 's/^[[:space:]]*\(gg[mu][lf]_[A-Za-z0-9_]*\);$/\1/p' "$script" | LC_ALL=C sort -u > "$tmp/script"
diff -u "$tmp/stored" "$tmp/script" > "$tmp/diff2"
result $? "lib/libggml-backend.sym names the same symbols" "$tmp/diff2"

LC_ALL=C sort -c "$stored" 2> "$tmp/sorted"
result $? "the stored symbol list is sorted" "$tmp/sorted"

soname=$(objdump -p "$lib" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = "libggml-backend.so.0" ]
echo "soname: $soname" > "$tmp/soname"
result $? "soname is libggml-backend.so.0" "$tmp/soname"

if [ -w "$tmp" ] && command -v sh >/dev/null; then
    cp -R "$top_srcdir/build-aux" "$tmp/build-aux" 2>/dev/null
    mkdir -p "$tmp/man"
    cp -R "$top_srcdir/man/." "$tmp/man/" 2>/dev/null
    sh "$tmp/build-aux/gen-man-list.sh" 2> "$tmp/gen.err"
    diff -u "$top_srcdir/man/local.mk" "$tmp/man/local.mk" > "$tmp/diff3" 2>&1
    result $? "man/local.mk lists every page (run build-aux/gen-man-list.sh)" "$tmp/diff3"
fi

echo "1..$n"
