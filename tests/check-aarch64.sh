#!/bin/sh
# tests/check-aarch64.sh SRCDIR BUILDDIR - `make check-aarch64`: the
# AArch64 kernel levels, cross-built and run under qemu-user.
#
# Configures SRCDIR for --host=aarch64-linux-gnu in BUILDDIR (once),
# builds it, and runs under qemu: tests/test-kernels on a CPU with the
# dot-product instructions (-cpu max) and on one without (cortex-a53), so
# that both variants of the NEON table are checked against generic; then
# the op tests of the vectorized kernels at GGML_CPU_ISA=neon and generic
# (-cpu max), and test-op-matmul at neon on the CPU without SDOT.
# Prints one TAP line per run (the runs' own TAP in BUILDDIR/check-aarch64/)
# and exits 1 when one fails.  Exits 0 saying "skipped" when the cross
# compiler, qemu or the arm64 hwloc is missing.
#
# Environment: AARCH64_HOST (aarch64-linux-gnu), QEMU_AARCH64 (qemu-aarch64-static,
# else qemu-aarch64), QEMU_LD_PREFIX (the target's root: / when the arm64
# C library is installed as a multiarch package, since the cross package's
# ld.so may not match that libc; else /usr/$AARCH64_HOST), MAKE, and
# CHECK_AARCH64_TIMEOUT (seconds per run, 600).
set -u
srcdir=$1
builddir=$2
host=${AARCH64_HOST:-aarch64-linux-gnu}
make=${MAKE:-make}
per_run=${CHECK_AARCH64_TIMEOUT:-600}
pcdir=/usr/lib/$host/pkgconfig

skip() {
    echo "check-aarch64: skipped: $1"
    exit 0
}

command -v "$host-gcc" > /dev/null 2>&1 || skip "no cross compiler $host-gcc"
qemu=${QEMU_AARCH64:-}
if [ -z "$qemu" ]; then
    for q in qemu-aarch64-static qemu-aarch64; do
        command -v "$q" > /dev/null 2>&1 && { qemu=$q; break; }
    done
fi
[ -n "$qemu" ] && command -v "$qemu" > /dev/null 2>&1 || skip "no qemu-aarch64-static or qemu-aarch64"
[ -f "$pcdir/hwloc.pc" ] || skip "no hwloc for $host ($pcdir/hwloc.pc; install libhwloc-dev:arm64)"
if [ -z "${QEMU_LD_PREFIX:-}" ]; then
    if [ -e /lib/ld-linux-aarch64.so.1 ]; then QEMU_LD_PREFIX=/; else QEMU_LD_PREFIX=/usr/$host; fi
fi
export QEMU_LD_PREFIX

# A source tree configured in place cannot host another build: then the
# build uses a copy of the distributed sources (make distdir, run from the
# calling build's directory, which is the source tree then).
mkdir -p "$builddir" || exit 1
if [ -f "$srcdir/config.status" ]; then
    $make distdir distdir="$builddir/src" > "$builddir/distdir.log" 2>&1 ||
        { tail -n 20 "$builddir/distdir.log"; echo "check-aarch64: make distdir failed"; exit 1; }
    srcdir=$builddir/src
    builddir=$builddir/build
    mkdir -p "$builddir" || exit 1
fi
cd "$builddir" || exit 1
if [ ! -f Makefile ] || [ "$srcdir/configure" -nt config.status ]; then
    echo "check-aarch64: configuring $srcdir for $host in $builddir"
    "$srcdir/configure" -q --host="$host" --without-openblas \
        PKG_CONFIG_LIBDIR="$pcdir:/usr/share/pkgconfig" > configure.log 2>&1 ||
        { cat configure.log; echo "check-aarch64: configure failed"; exit 1; }
fi
kernel_test=tests/test-kernels
op_tests="tests/test-op-matmul tests/test-op-copy tests/test-op-unary"
echo "check-aarch64: building in $builddir"
{ $make -j2 > build.log 2>&1 && $make -j2 $kernel_test $op_tests >> build.log 2>&1; } ||
    { tail -n 40 build.log; echo "check-aarch64: build failed"; exit 1; }
grep -q '^#define HAVE_ISA_NEON 1' config.h || { echo "check-aarch64: the NEON level was not built"; exit 1; }

logs=check-aarch64
mkdir -p "$logs"
n=0
failures=0
# run CPU ISA TEST: one run of TEST under qemu -cpu CPU with GGML_CPU_ISA=ISA.
run() {
    cpu=$1 isa=$2 test=$3
    name=$(basename "$test")
    log=$logs/$name-$cpu-$isa.log
    n=$((n + 1))
    # a libtool wrapper's real program is in .libs; it finds the library in .libs
    prog=$test
    [ -x "tests/.libs/$name" ] && prog=tests/.libs/$name
    GGML_CPU_ISA=$isa LD_LIBRARY_PATH=$PWD/.libs timeout "$per_run" "$qemu" -cpu "$cpu" "$prog" > "$log" 2>&1
    status=$?
    passed=$(grep -c '^ok' "$log")
    skipped=$(grep -c '^ok.*# SKIP' "$log")
    failed=$(grep -c '^not ok' "$log")
    planned=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    if [ "$status" -eq 0 ] && [ "$failed" -eq 0 ] && [ -n "$planned" ] && [ "$planned" -eq "$passed" ]; then
        echo "ok $n - $name (-cpu $cpu, GGML_CPU_ISA=$isa): $passed passed ($skipped skipped)"
    else
        failures=$((failures + 1))
        echo "not ok $n - $name (-cpu $cpu, GGML_CPU_ISA=$isa): exit $status, $passed passed, $failed failed, plan ${planned:-missing} (log: $builddir/$log)"
        grep -E '^(not ok|#)' "$log" | head -n 20 | sed 's/^/# /'
    fi
}

start=$(date +%s)
run max neon $kernel_test
run cortex-a53 neon $kernel_test
for t in $op_tests; do
    for isa in neon generic; do
        run max $isa "$t"
    done
done
run cortex-a53 neon tests/test-op-matmul   # the products without SDOT
echo "1..$n"
echo "# check-aarch64: $((n - failures)) of $n runs passed in $(( $(date +%s) - start )) s (qemu $qemu, root $QEMU_LD_PREFIX)"
[ "$failures" -eq 0 ]
