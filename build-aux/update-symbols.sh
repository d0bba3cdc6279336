#!/bin/sh
# update-symbols.sh OBJECT... - add the public functions defined in the given
# built objects (lib/.libs/*.o) to tests/abi/libggml-backend.symbols and
# regenerate lib/libggml-backend.sym from it.  A maintainer tool: review the
# diff, since every addition is a new ABI promise.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
list="$top/tests/abi/libggml-backend.symbols"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# Only names an installed header declares: the library also has external
# functions for its own files (ggml_graph_view, ...) that stay unexported.
declared() {
    while read -r name; do
        if grep -qw "$name" "$top"/include/*.h; then echo "$name"; fi
    done
}
{ cat "$list"; nm -g --defined-only "$@" | awk '$2 == "T" { print $3 }' | grep -E '^(ggml|gguf)_' | grep -v '^ggml__' |
    declared; } | LC_ALL=C sort -u > "$tmp"
cp "$tmp" "$list"
{
    echo '/* libggml-backend.sym - every symbol the library exports, one node per release.'
    echo ' * Keep sorted; tests/abi/libggml-backend.symbols holds the same list'
    echo ' * (build-aux/update-symbols.sh regenerates this file from it). */'
    echo 'GGML_BACKEND_0.1 {'
    echo 'global:'
    sed 's/^/    /; s/$/;/' "$list"
    echo 'local:'
    echo '    *;'
    echo '};'
} > "$top/lib/libggml-backend.sym"

# The Debian symbols file is generated from the same list (in a git
# checkout; the release tarball has no debian/).
if [ -f "$top/debian/gen-symbols.sh" ]; then
    sh "$top/debian/gen-symbols.sh" > "$top/debian/libggml-backend0.symbols"
fi
