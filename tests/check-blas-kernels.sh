#!/bin/sh
# check-blas-kernels.sh - TAP: the BLAS plugin's rule for OpenBLAS kernels
# older than the processor (lib/blas/blas.c, blas_kernels_below_processor).
#
# OpenBLAS reads OPENBLAS_CORETYPE when it loads, so each side of the rule
# needs a process of its own: tests/test-blas runs once with the Prescott
# kernels (older than a processor with AVX2 and FMA: the device must say
# so, warn once and take no products by default) and once with the
# Haswell ones (the measured defaults apply).  test-blas checks the
# placements; this script checks that each run passes and that it saw the
# kernels it asked for.  Skipped without the plugin, without OpenBLAS, or
# on a processor without AVX2 and FMA (where Haswell's kernels cannot run).

: "${top_builddir:=.}" "${top_srcdir:=.}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-blas-kernels.XXXXXX") || { echo "Bail out! mktemp failed"; exit 99; }
trap 'rm -rf "$tmp"' EXIT

. "${top_srcdir:-.}/tests/tap-sh.sh"

features=$("$top_builddir/tools/ggml-backend-info" 2>/dev/null | sed -n 's/^ *features: //p' | head -n 1)
library=$(GGML_BACKEND_PATH=${BLAS_PLUGIN_DIR:-} "$top_builddir/tools/ggml-backend-info" 2>/dev/null |
          sed -n '/^  BLAS$/,/registry:/s/^ *description: *//p' | head -n 1)
reason=
if [ -z "${BLAS_PLUGIN_DIR:-}" ]; then
    reason="the BLAS plugin is not built"
elif ! echo "$library" | grep -q '^OpenBLAS'; then
    reason="the BLAS library is not OpenBLAS (${library:-no BLAS device})"
elif ! echo " $features " | grep -q ' AVX2=1 ' || ! echo " $features " | grep -q ' FMA=1 '; then
    reason="this processor lacks AVX2 or FMA"
fi

for core in Prescott Haswell; do
    if [ -n "$reason" ]; then
        skip "test-blas with OPENBLAS_CORETYPE=$core" "$reason"
        continue
    fi
    # one kernel level is enough here (run-levels.sh runs test-blas at every level)
    OPENBLAS_CORETYPE=$core GGML_CPU_ISA=generic "$top_builddir/tests/test-blas" > "$tmp/out" 2> "$tmp/err" &&
        ! grep -q '^not ok' "$tmp/out" &&
        grep -q "^ok .* OPENBLAS_CORETYPE=$core: the description" "$tmp/out"
    ok "test-blas with OPENBLAS_CORETYPE=$core passes and sees those kernels"
done

echo "1..$n"
