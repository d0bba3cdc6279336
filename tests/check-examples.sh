#!/bin/sh
# check-examples.sh - every example program runs and exits 0.  Emits TAP.
set -u
: "${top_builddir:?}"
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
