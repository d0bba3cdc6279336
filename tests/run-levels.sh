#!/bin/sh
# run-levels.sh PROGRAM [ARGS...] - the LOG_COMPILER of the test programs.
#
# The op tests (test-op-*, test-llama-block, test-blas) run once per CPU
# kernel level this machine runs (GGML_CPU_ISA=generic, avx2, ...), as one
# TAP stream: test numbers continue from level to level and every
# description starts with the level.  A level whose run exits with an
# error without a failed test in its output adds a failed test saying so.
# Other programs, and any program when GGML_CPU_ISA is set already, run
# once, unchanged.
#
# The levels come from ggml-backend-info of the build tree (the CPU
# registry's ISA_RUNNABLE feature).
prog=$1
case ${prog##*/} in
    test-op-*|test-llama-block|test-blas) ;;
    *) exec "$@" ;;
esac
[ -z "${GGML_CPU_ISA:-}" ] || exec "$@"

info=${top_builddir:-.}/tools/ggml-backend-info
levels=$("$info" 2>/dev/null | sed -n 's/.* ISA_RUNNABLE=\([^ ]*\).*/\1/p' | head -n 1 | tr ',' ' ')
[ -n "$levels" ] || levels=generic

out=${TMPDIR:-/tmp}/run-levels.$$
trap 'rm -f "$out"' EXIT
total=0
status=0
for level in $levels; do
    GGML_CPU_ISA=$level "$@" > "$out" 2>&1
    rc=$?
    awk -v offset="$total" -v level="$level" '
        /^(not )?ok [0-9]+/ {
            neg = ($1 == "not")
            num = $(neg ? 3 : 2) + offset
            rest = $0
            sub(/^(not )?ok [0-9]+ ?(- )?/, "", rest)
            printf "%sok %d - %s: %s\n", neg ? "not " : "", num, level, rest
            next
        }
        /^1\.\.[0-9]+/ { next }
        { print }' "$out"
    count=$(grep -c -E '^(not )?ok [0-9]+' "$out")
    total=$((total + count))
    if [ "$rc" -ne 0 ]; then
        status=$rc
        if ! grep -q -E '^not ok [0-9]+' "$out"; then
            total=$((total + 1))
            echo "not ok $total - $level: ${prog##*/} exited with status $rc"
        fi
    fi
done
echo "1..$total"
exit "$status"
