#!/bin/sh
# check-examples.sh - every example program runs and exits 0.  Emits TAP.
# EXAMPLE_BACKEND_PATH, when set, becomes GGML_BACKEND_PATH: the plugins
# the examples load (examples/plugin/consumer needs libggml-example.so).
set -u
: "${top_builddir:?}"
if [ -n "${EXAMPLE_BACKEND_PATH:-}" ]; then
    GGML_BACKEND_PATH=$EXAMPLE_BACKEND_PATH
    export GGML_BACKEND_PATH
fi
n=0
for example in ${EXAMPLE_PROGRAMS:-}; do
    n=$((n + 1))
    out=$("$top_builddir/$example" 2>&1)
    status=$?
    if [ "$status" -eq 0 ]; then
        echo "ok $n - $example runs"
    else
        echo "not ok $n - $example exited with status $status"
        printf '%s\n' "$out" | sed 's/^/# /'
    fi
done
echo "1..$n"
