#!/bin/sh
# check-numa.sh - TAP: results and binding under each NUMA strategy, one
# tests/numa-run process per strategy (a process chooses its strategy once).
#
# 1. This machine: every strategy computes the same bytes (each run also
#    checks them against a double-precision reference).
# 2. This machine: a strict cpumask binds thread t to the t-th PU of the
#    mask, as hwloc reads it back.
# 3. A two-node machine made of this machine's PUs 0 and 1
#    (HWLOC_SYNTHETIC + HWLOC_THISSYSTEM=1, so binding is real): DISTRIBUTE
#    and MIRROR bind thread t to PU t; MIRROR threads read their node's
#    copy of the weights; results equal this machine's.  Skipped when the
#    process may not run on both PUs.
# 4. tests/topologies/two-sockets-two-nodes.xml (not this machine: hwloc
#    cannot bind, which must only be noted): every strategy computes the
#    same bytes; MIRROR's copies are read and refreshed; copies that do
#    not fit (an address-space limit) are one logged error, not a failure.

: "${top_builddir:=.}" "${top_srcdir:=.}"
run=$top_builddir/tests/numa-run
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-numa.XXXXXX") || { echo "Bail out! mktemp failed"; exit 99; }
trap 'rm -rf "$tmp"' EXIT
unset HWLOC_XMLFILE HWLOC_SYNTHETIC HWLOC_THISSYSTEM

. "${top_srcdir:-.}/tests/tap-sh.sh"

# numa ARGS...: runs numa-run; status in $rc, the digest in $digest
numa() {
    "$run" "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    digest=$(sed -n 's/^digest //p' "$tmp/out")
}

strategies="DISABLED DISTRIBUTE ISOLATE NUMACTL MIRROR"

# 1 ------------------------------------------------------------ this machine
numa DISABLED 2
machine=$digest
[ "$rc" -eq 0 ] && [ -n "$machine" ]
ok "this machine, DISABLED, 2 threads: result matches the reference"
for s in DISTRIBUTE ISOLATE NUMACTL MIRROR; do
    numa $s 2
    [ "$rc" -eq 0 ] && [ "$digest" = "$machine" ]
    ok "this machine, $s, 2 threads: same result as DISABLED"
done

# 2 ------------------------------------------------ binding on this machine
numa DISABLED 2 --strict-mask 2
if [ "$rc" -eq 77 ]; then
    skip "this machine: a strict cpumask of 2 PUs binds each thread to its PU" "fewer than 2 PUs allowed, or binding not permitted"
else
    [ "$rc" -eq 0 ] && [ "$digest" = "$machine" ]
    ok "this machine: a strict cpumask of 2 PUs binds each thread to its PU (read back with hwloc)"
fi
numa DISTRIBUTE 3 --strict-mask 1
if [ "$rc" -eq 77 ]; then
    skip "this machine: an explicit cpumask wins over DISTRIBUTE" "binding not permitted here"
else
    [ "$rc" -eq 0 ]
    ok "this machine: an explicit cpumask wins over DISTRIBUTE (3 threads on one PU)"
fi

# 3 ------------------------------------ two nodes from this machine's PUs
if "$run" DISABLED 1 --require-pus 0,1 > /dev/null 2>&1; then
    for s in DISTRIBUTE MIRROR; do
        extra=
        [ $s = MIRROR ] && extra=--mirror-check
        HWLOC_SYNTHETIC="pack:1 numa:2 core:1 pu:1" HWLOC_THISSYSTEM=1 numa $s 2 --expect-bind "0;1" $extra
        what="two synthetic nodes on PUs 0 and 1, $s: thread t bound to PU t, same result${extra:+, copies read and refreshed}"
        if [ "$rc" -eq 77 ]; then
            skip "$what" "binding threads is not permitted here"
            binding=no
            continue
        fi
        [ "$rc" -eq 0 ] && [ "$digest" = "$machine" ]
        ok "$what"
    done
    what="two synthetic nodes on PUs 0 and 1, ISOLATE: both threads on the caller's node, same result"
    if [ "${binding:-yes}" = no ]; then
        skip "$what" "binding threads is not permitted here"
    else
        HWLOC_SYNTHETIC="pack:1 numa:2 core:1 pu:1" HWLOC_THISSYSTEM=1 numa ISOLATE 2
        [ "$rc" -eq 0 ] && [ "$digest" = "$machine" ] && grep -q '^thread 0: \([01]\)$' "$tmp/out" &&
            [ "$(sed -n 's/^thread 0: //p' "$tmp/out")" = "$(sed -n 's/^thread 1: //p' "$tmp/out")" ]
        ok "$what"
    fi
else
    for s in DISTRIBUTE MIRROR ISOLATE; do
        skip "two synthetic nodes on PUs 0 and 1, $s" "the process may not run on PUs 0 and 1"
    done
fi

# 4 ----------------------------------------------- a topology from a file
xml=$top_srcdir/tests/topologies/two-sockets-two-nodes.xml
first=
for s in $strategies; do
    HWLOC_XMLFILE=$xml numa $s 4
    [ -z "$first" ] && first=$digest
    [ "$rc" -eq 0 ] && [ -n "$digest" ] && [ "$digest" = "$first" ]
    ok "$(basename "$xml"), $s, 4 threads: result matches the reference and DISABLED's"
done
HWLOC_XMLFILE=$xml numa MIRROR 4 --mirror-check
[ "$rc" -eq 0 ] && [ "$digest" = "$first" ] && grep -q '^mirror: ' "$tmp/out"
ok "$(basename "$xml"), MIRROR: threads on nodes 1-3 read their copies; setting WEIGHTS again refreshes them"
HWLOC_XMLFILE=$xml numa MIRROR 4 --copy-oom
what="$(basename "$xml"), MIRROR: copies that do not fit are one logged error; the buffer keeps working"
if [ "$rc" -eq 77 ]; then
    skip "$what" "$(tail -n 1 "$tmp/err")"
else
    [ "$rc" -eq 0 ] && grep -q '^copy-oom: 1 error(s) logged: .*out of memory for the copy' "$tmp/out"
    ok "$what"
fi
HWLOC_XMLFILE=$xml numa DISTRIBUTE 4
[ "$rc" -eq 0 ] && ! grep -qi 'error' "$tmp/err"
ok "$(basename "$xml"): binding that hwloc cannot apply is a note, not an error"

echo "1..$n"
