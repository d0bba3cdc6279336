#!/bin/sh
# gen-symbols.sh - writes debian/libggml-backend0.symbols (on stdout) from
# the ABI test's stored list, tests/abi/libggml-backend.symbols, the single
# list of exported names.  Each symbol is tagged with the version node that
# lib/libggml-backend.sym puts it in; node GGML_BACKEND_X.Y is release X.Y.0,
# the first version providing it.  debian/rules checks the committed file
# against this output; after an ABI change run
#   sh debian/gen-symbols.sh > debian/libggml-backend0.symbols
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
stored=$top/tests/abi/libggml-backend.symbols
script=$top/lib/libggml-backend.sym

echo "libggml-backend.so.0 libggml-backend0 #MINVER#"
echo "* Build-Depends-Package: libggml-backend-dev"
LC_ALL=C awk '
    # The version script: "NODE {" opens a node, "ggml_name;" lists a symbol.
    FNR == NR {
        if ($0 ~ /^[A-Za-z0-9_.]+[ \t]*\{/) { node = $1; sub(/\{.*/, "", node); nodes[++n] = node }
        else if ($0 ~ /^[ \t]*gg(ml|uf)_[A-Za-z0-9_]*;[ \t]*$/) { s = $1; sub(/;$/, "", s); of[s] = node }
        next
    }
    # The stored list: one name a line.
    NF {
        if (!($1 in of)) { print "gen-symbols.sh: " $1 " is not in lib/libggml-backend.sym" > "/dev/stderr"; bad = 1; next }
        lines[++m] = $1 "@" of[$1] " " version(of[$1])
    }
    function version(node,  v) { v = node; sub(/^GGML_BACKEND_/, "", v); return v ".0" }
    END {
        if (bad || n == 0) exit 1
        for (i = 1; i <= n; i++) lines[++m] = nodes[i] "@" nodes[i] " " version(nodes[i])
        for (i = 1; i <= m; i++) print " " lines[i] | "LC_ALL=C sort"
    }
' "$script" "$stored"
