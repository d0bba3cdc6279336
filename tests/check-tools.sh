#!/bin/sh
# check-tools.sh - TAP checks of the command-line tools, run from the build
# tree: ggml-backend-info, ggml-backend-bench and ggml-backend-gguf.
#
# Variables (set by "make check"): top_builddir; TEST_PLUGIN_DIR, the test
# plugins (tests/plugins: a good one, one with the wrong API version, one
# without ggml_backend_init...); BLAS_PLUGIN_DIR, the BLAS plugin's
# directory, empty when it is not built.  python3, when installed,
# validates the JSON outputs; without it a rougher check is made.

: "${top_builddir:=.}"
info=$top_builddir/tools/ggml-backend-info
bench=$top_builddir/tools/ggml-backend-bench
gguf=$top_builddir/tools/ggml-backend-gguf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-tools.XXXXXX") || { echo "Bail out! mktemp failed"; exit 99; }
trap 'rm -rf "$tmp"' EXIT
unset GGML_BACKEND_PATH

. "${top_srcdir:-.}/tests/tap-sh.sh"

# run PROGRAM ARGS...: stdout to $tmp/out, stderr to $tmp/err, status in $rc
run() {
    "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
}

have_python=no
command -v python3 > /dev/null 2>&1 && have_python=yes

# A JSON document: parsed by python3 when there is one (and the expression
# $2 about it, d, must hold), else its outline is checked.
json_ok() {
    if [ "$have_python" = yes ]; then
        python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if ($2) else 1)" "$1"
    else
        head -c 1 "$1" | grep -q '{' && tail -n 1 "$1" | grep -q '^}$' &&
            [ "$(grep -c '{' "$1")" -eq "$(grep -c '}' "$1")" ]
    fi
}

# ---------------------------------------------------- ggml-backend-info

run "$info"
[ "$rc" -eq 0 ] && sed -n '/^devices:/,$p' "$tmp/out" | grep -q '^  CPU$' &&
    grep -q '^    type: *CPU$' "$tmp/out" && grep -q 'plugin directory' "$tmp/out"
ok "info exits 0, prints the plugin directory and lists the CPU device"

grep -q '^  CPU: 1 device$' "$tmp/out" && grep -q '^    features: ' "$tmp/out"
ok "info lists the CPU registry and its features"

# the kernel level: the best one by default, generic on request, a warning for a bad name
best=$(sed -n 's/^CPU kernels: \([a-z0-9]*\) (built in: .*/\1/p' "$tmp/out")
runnable=$(sed -n 's/^CPU kernels: .*this CPU runs: \([a-z0-9,]*\);.*/\1/p' "$tmp/out")
[ -n "$best" ] && [ "${runnable##*,}" = "$best" ] && grep -q " ISA=$best " "$tmp/out"
ok "info prints the kernel level in use ($best), the best of those this CPU runs ($runnable)"
run env GGML_CPU_ISA=GENERIC "$info"
[ "$rc" -eq 0 ] && grep -q '^CPU kernels: generic ' "$tmp/out" && ! grep -q GGML_CPU_ISA "$tmp/err"
ok "info with GGML_CPU_ISA=GENERIC: the generic level, no warning"
run env GGML_CPU_ISA=nosuch "$info"
[ "$rc" -eq 0 ] && grep -q "^CPU kernels: $best " "$tmp/out" &&
    [ "$(grep -c 'GGML_CPU_ISA=nosuch names no kernel level' "$tmp/err")" -eq 1 ]
ok "info with GGML_CPU_ISA=nosuch: one warning, the best level"

if [ -n "${TEST_PLUGIN_DIR:-}" ] && [ -d "$TEST_PLUGIN_DIR" ]; then
    run env GGML_BACKEND_PATH="$TEST_PLUGIN_DIR" "$info"
    [ "$rc" -eq 0 ] && grep -q "$TEST_PLUGIN_DIR  (GGML_BACKEND_PATH; directory)" "$tmp/out"
    ok "info prints the GGML_BACKEND_PATH entries"
    grep -q 'libggml-badversion.so: rejected: API version' "$tmp/out"
    ok "info says why the plugin of the wrong API version was rejected"
    grep -q 'libggml-noinit.so: rejected: does not export ggml_backend_init' "$tmp/out"
    ok "info says why the plugin without ggml_backend_init was rejected"
    grep -q 'libggml-testdev-hi.so: loaded (registry TESTDEV)' "$tmp/out" &&
        grep -q 'libggml-testdev.so: not used (registry TESTDEV): .*kept' "$tmp/out"
    ok "info tells the plugin loaded from the one outranked by it"
    sed -n '/^devices:/,$p' "$tmp/out" | grep -q '^  TESTDEV0$'
    ok "info lists the device of the test plugin"
    # not regular files: a FIFO named by GGML_BACKEND_PATH and one found in
    # a directory must be refused, never opened (dlopen of a FIFO blocks)
    mkdir "$tmp/fifos" && mkfifo "$tmp/fifo.so" "$tmp/fifos/libggml-fifo.so"
    with_timeout=
    command -v timeout > /dev/null 2>&1 && with_timeout="timeout 60"
    run env GGML_BACKEND_PATH="$tmp/fifo.so:$tmp/fifos" $with_timeout "$info"
    [ "$rc" -eq 0 ] && grep -q "fifo.so: rejected: is a FIFO, not a regular file" "$tmp/out" &&
        grep -q "libggml-fifo.so: rejected: is a FIFO, not a regular file" "$tmp/out"
    ok "info returns and says why FIFOs on the plugin path were rejected"
    mkdir -m 777 "$tmp/open" && cp "$TEST_PLUGIN_DIR/libggml-testdev.so" "$tmp/open/" &&
        chmod 777 "$tmp/open"
    run env GGML_BACKEND_PATH="$tmp/open" "$info"
    [ "$rc" -eq 0 ] && grep -q "libggml-testdev.so: rejected: its directory .* is writable by every user" "$tmp/out"
    ok "info says why a plugin in a directory writable by every user was rejected"
    run env GGML_BACKEND_PATH="$TEST_PLUGIN_DIR" "$info" --json
    [ "$rc" -eq 0 ] && json_ok "$tmp/out" \
        "any(f['status'] == 'rejected' and 'API version' in f['message'] for f in d['plugin_files'])"
    ok "info --json with the test plugins is valid JSON and has the rejection"
else
    for what in "GGML_BACKEND_PATH entries" "wrong API version" "no ggml_backend_init" "outranked plugin" \
        "test plugin device" "FIFOs" "directory writable by every user" "JSON with the test plugins"; do
        skip "info: $what" "test plugins not built"
    done
fi

run "$info" --json
[ "$rc" -eq 0 ] && json_ok "$tmp/out" "any(x['name'] == 'CPU' and x['type'] == 'CPU' for x in d['devices'])" &&
    grep -q '"name": "CPU"' "$tmp/out"
ok "info --json is valid JSON and lists the CPU device ($([ "$have_python" = yes ] && echo python3 || echo outline))"

run "$info" --require CPU --require cpu
[ "$rc" -eq 0 ]
ok "info --require CPU (any case) exits 0"

run "$info" --require NOSUCH
[ "$rc" -eq 2 ] && grep -q "no device named 'NOSUCH'" "$tmp/err"
ok "info --require NOSUCH exits 2 with a message"

run "$info" --bogus
[ "$rc" -eq 2 ] && grep -q "unknown option '--bogus'" "$tmp/err" && [ ! -s "$tmp/out" ]
ok "info: a bad option exits 2 with a message"

run "$info" --require
[ "$rc" -eq 2 ] && grep -q 'missing' "$tmp/err"
ok "info: --require without a name exits 2 with a message"

run "$info" --help
[ "$rc" -eq 0 ] && grep -q '^usage: ggml-backend-info' "$tmp/out"
ok "info --help"

run "$info" --version
[ "$rc" -eq 0 ] && grep -q "^ggml-backend-info ${PACKAGE_VERSION:-}" "$tmp/out"
ok "info --version"

run "$info"
[ "$rc" -eq 0 ] && grep -q '^CPU placement' "$tmp/out" && grep -q '^  strategy: DISABLED$' "$tmp/out" &&
    grep -q '^    thread 0: node 0, not bound$' "$tmp/out"
ok "info prints the CPU placement (no ggml_numa_init: DISABLED, threads not bound)"

HWLOC_XMLFILE=$top_srcdir/tests/topologies/two-sockets-two-nodes.xml run "$info" --numa DISTRIBUTE
[ "$rc" -eq 0 ] && grep -q '^  topology: 2 packages, 4 NUMA nodes, 16 cores, 32 PUs' "$tmp/out" &&
    grep -q '^  strategy: DISTRIBUTE$' "$tmp/out" && grep -q '^    thread 1: node 1, PUs 8-9$' "$tmp/out" &&
    grep -q '^    weights: interleaved over the nodes$' "$tmp/out"
ok "info --numa DISTRIBUTE on a 4-node topology file prints its threads and buffer plans"

run "$info" --numa=mirror --json
[ "$rc" -eq 0 ] && json_ok "$tmp/out" "'strategy: ' in d['cpu_placement'] and 'thread 0: ' in d['cpu_placement']"
ok "info --json carries the CPU placement"

run "$info" --numa sideways
[ "$rc" -eq 2 ] && grep -q "unknown NUMA strategy 'sideways'" "$tmp/err" && [ ! -s "$tmp/out" ]
ok "info --numa with an unknown strategy exits 2 with a message"

# --------------------------------------------------- ggml-backend-bench

tiny="--op mul_mat --shape 64x64x64 --reps 1"

run "$bench" $tiny --device CPU
[ "$rc" -eq 0 ] && grep -q '^mul_mat 64x64x64  *F32  *CPU  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*$' "$tmp/out" &&
    grep -q '^mul_mat 64x64x64  *Q4_0  *CPU ' "$tmp/out" && grep -q 'total [0-9.]* s$' "$tmp/out"
ok "bench $tiny prints a row per type for the CPU (median, spread, rates) and the total time"

head -n 1 "$tmp/out" | grep -q '^ggml-backend-bench [0-9.]*, libggml-backend [0-9.]* (commit [^)]*); .*, CPU kernels [a-z0-9]*; [0-9]* threads*, median of 1$'
ok "bench's first line names the version, the commit, the processor, the kernel level, threads and repetitions"

[ ! -s "$tmp/err" ]
ok "bench prints no progress when stderr is not a terminal"

run "$bench" $tiny --device CPU --csv
[ "$rc" -eq 0 ] && [ "$(head -n 1 "$tmp/out")" = "workload,type,device,ms,gflops,gbps,weight_gbps,vs_sgemm,vs_stream,vs_read,ms_min,ms_max" ] &&
    [ "$(grep -c '^mul_mat 64x64x64,[A-Z0-9_]*,CPU,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,,,,[0-9.]*,[0-9.]*$' "$tmp/out")" -eq 3 ] &&
    [ "$(wc -l < "$tmp/out")" -eq 4 ]
ok "bench --csv prints the header and one row per type"

run "$bench" $tiny --device CPU --type q4_0 --json
[ "$rc" -eq 0 ] && json_ok "$tmp/out" \
    "len(d['results']) == 1 and d['results'][0]['device'] == 'CPU' and d['results'][0]['ms'] > 0 and d['results'][0]['weight_gbps'] > 0"
ok "bench --json is valid JSON with one result"

run "$bench" $tiny --device CPU --type q4_0 --reps 5 --json
[ "$rc" -eq 0 ] && json_ok "$tmp/out" \
    "d['results'][0]['ms_min'] <= d['results'][0]['ms'] <= d['results'][0]['ms_max'] and d['cpu_kernels'] != '' and d['cpu'] != '' and d['commit'] != ''"
ok "bench --json: the median between the fastest and the slowest; processor, kernel level and commit named"

run "$bench" $tiny --device CPU --type f32,q8_0 --markdown
[ "$rc" -eq 0 ] && grep -q '^| workload | type | device | ms | min ms | max ms | GFLOP/s |' "$tmp/out" &&
    grep -q '^|---|---|---|--:|' "$tmp/out" &&
    [ "$(grep -c '^| mul_mat 64x64x64 | \(F32\|Q8_0\) | CPU | [0-9.]* | [0-9.]* | [0-9.]* | [0-9.]* |' "$tmp/out")" -eq 2 ] &&
    grep -q '^- ms: the median' "$tmp/out"
ok "bench --markdown prints a Markdown table, one row per type, and the legend as a list"

# the roofline picture: well-formed XML (python3's parser or xmllint when
# there is one), every workload named, both ceilings drawn
svg_ok() {
    if [ "$have_python" = yes ]; then
        python3 -c "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); sys.exit(0 if r.tag.endswith('svg') else 1)" "$1"
    elif command -v xmllint > /dev/null 2>&1; then
        xmllint --noout "$1"
    else
        head -n 1 "$1" | grep -q '^<?xml ' && tail -n 1 "$1" | grep -q '^</svg>$'
    fi
}
run "$bench" $tiny --device CPU --type f32,q4_0 --svg "$tmp/roof.svg"
[ "$rc" -eq 0 ] && svg_ok "$tmp/roof.svg" && grep -q 'mul_mat 64x64x64 F32 CPU' "$tmp/roof.svg" &&
    grep -q 'mul_mat 64x64x64 Q4_0 CPU' "$tmp/roof.svg" && grep -q '>STREAM [0-9.]* GB/s<' "$tmp/roof.svg" &&
    [ "$(grep -c '<circle ' "$tmp/roof.svg")" -eq 2 ]
ok "bench --svg draws a well-formed roofline: a point per workload, named, under the STREAM ceiling"

run "$bench" --op mul_mat,dispatch --shape 64x64x64 --reps 1 --type f32 --device CPU --svg "$tmp/roof2.svg"
[ "$rc" -eq 0 ] && svg_ok "$tmp/roof2.svg" && grep -q 'dispatch 4000 nodes F32 CPU (no FLOP: not plotted)' "$tmp/roof2.svg"
ok "bench --svg lists the rows without floating-point work apart"

run "$bench" $tiny --device CPU --type f32 --svg "$tmp/no/such/dir/roof.svg"
[ "$rc" -eq 1 ] && grep -q '^ggml-backend-bench: --svg .*roof.svg: ' "$tmp/err"
ok "bench --svg into a directory that does not exist exits 1 with a message"

# each row reaches a pipe or file as soon as it is measured: the first row
# is there while the bench still works on a long second shape
"$bench" --op mul_mat --type f32 --shape 64x64x64 --shape 4096x4096x512 --reps 20 --device CPU > "$tmp/stream" 2>&1 &
pid=$!
seen=no
for _ in $(seq 1 600); do
    if grep -q '^mul_mat 64x64x64 ' "$tmp/stream"; then
        kill -0 "$pid" 2>/dev/null && seen=yes
        break
    fi
    sleep 0.05
done
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ "$seen" = yes ]
ok "bench writes each row when it is measured, also to a file or pipe"

run "$bench" $tiny --device CPU,CPU_REPACK --type q4_0,q8_0 --reps 3 --interleave --csv
[ "$rc" -eq 0 ] && [ "$(grep -c '^mul_mat 64x64x64,Q[48]_0,CPU,[0-9.]*,' "$tmp/out")" -eq 2 ] &&
    [ "$(grep -c '^mul_mat 64x64x64,Q[48]_0,CPU_REPACK,[0-9.]*,' "$tmp/out")" -eq 2 ] &&
    [ "$(wc -l < "$tmp/out")" -eq 5 ] && [ ! -s "$tmp/err" ]
ok "bench --interleave times both configurations of each type, a row each"

run "$bench" $tiny --device CPU --type q4_0 --compare-stream --csv
[ "$rc" -eq 0 ] && [ "$(grep -c '^mul_mat 64x64x64,Q4_0,CPU,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,,[0-9.]*[1-9][0-9.]*,[0-9.]*[1-9][0-9.]*,[0-9.]*,[0-9.]*$' "$tmp/out")" -eq 1 ]
ok "bench --compare-stream --csv gives both bandwidth ratios, above 0"

run "$bench" --op block,block-fa --type q4_0 --reps 1 --threads 2 --device cpu
[ "$rc" -eq 0 ] && grep -q '^block T=[0-9]*  *Q4_0  *CPU  *[0-9.]' "$tmp/out" &&
    grep -q '^block-fa T=[0-9]*  *Q4_0  *CPU  *[0-9.]' "$tmp/out"
ok "bench runs the transformer block with and without flash attention"

run "$bench" --op moe --type q8_0 --tokens 3 --reps 1 --threads 2 --device cpu
[ "$rc" -eq 0 ] && grep -q '^moe T=3  *Q8_0  *CPU  *[0-9.]' "$tmp/out"
ok "bench runs the mixture-of-experts feed-forward network"

run "$bench" --op dispatch --reps 1 --threads 2 --device CPU
[ "$rc" -eq 0 ] && grep -q '^dispatch 4000 nodes  *F32  *CPU  *[0-9.]* ' "$tmp/out" &&
    [ "$(grep -c '^dispatch [0-9]' "$tmp/out")" -eq 1 ] &&
    grep -q '^dispatch 4000 nodes  *F32  *CPU  *[0-9.]*  *[0-9.]*  *-  *[0-9.]*  *-$' "$tmp/out" &&
    grep -q '^dispatch on CPU: [0-9.]* us per node$' "$tmp/out" && grep -q 'total [0-9.]* s$' "$tmp/out"
ok "bench --op dispatch prints one row and the time per node, with no weights' GB/s"

# any type the CPU multiplies, by ggml_type_name's name in any case; the
# weights' GB/s are their bytes (1024 x 512 x 144 / 256 for Q4_K) over the time
run "$bench" --op mul_mat --shape 1024x512x1 --reps 1 --device CPU --type q4_K,Q6_K,q8_0 --csv
[ "$rc" -eq 0 ] && [ "$(grep -c '^mul_mat 1024x512x1,\(Q8_0\|Q4_K\|Q6_K\),CPU,' "$tmp/out")" -eq 3 ] &&
    awk -F, '$2 == "Q4_K" { r = $7 / (1024 * 512 * 144 / 256 / 1e9 / ($4 / 1e3)); q = 1 }
             END { exit !(q && r > 0.98 && r < 1.02) }' "$tmp/out"
ok "bench --type takes the K-quants and Q8_0; weight_gbps is the weights' bytes over the time"

run "$bench" --op mul_mat --type iq2_xxs --device CPU
[ "$rc" -eq 2 ] && grep -q "iq2_xxs" "$tmp/err" && [ ! -s "$tmp/out" ]
ok "bench --type with a type ggml_quantize_chunk needs importance weights for exits 2"

run "$bench" --op dispatch --reps 1 --device CPU --csv
[ "$rc" -eq 0 ] && [ "$(grep -c '^dispatch 4000 nodes,F32,CPU,[0-9.]*,' "$tmp/out")" -eq 1 ] &&
    [ "$(wc -l < "$tmp/out")" -eq 2 ]
ok "bench --op dispatch --csv prints one row"

run "$bench" --op ops --device CPU --reps 1 --csv
ops_ok=true
for op in ADD MUL SCALE RMS_NORM NORM SOFT_MAX ROPE SILU GELU SWIGLU CPY CONT GET_ROWS SUM_ROWS ARGSORT CONCAT \
    MUL_MAT FLASH_ATTN; do
    grep -q "^$op [^,]*,F32,CPU,[0-9.]*," "$tmp/out" || { ops_ok=false; echo "# no row for $op"; }
done
[ "$rc" -eq 0 ] && $ops_ok && [ "$(wc -l < "$tmp/out")" -eq 19 ]
ok "bench --op ops times one node of each kind on the CPU, a row each"
if [ -n "${BLAS_PLUGIN_DIR:-}" ]; then
    run env GGML_BACKEND_PATH="$BLAS_PLUGIN_DIR" "$bench" --op ops --device BLAS --reps 1 --csv
    [ "$rc" -eq 0 ] && ! grep -v '^workload,' "$tmp/out" | grep -v '^MUL_MAT [^,]*,F32,BLAS+CPU,' | grep -q .
    ok "bench --op ops on the BLAS device: rows only for the nodes it supports (products)"
fi

# the sgemm reference is the BLAS device's product: found through the plugin
if [ -n "${BLAS_PLUGIN_DIR:-}" ]; then
    run env GGML_BACKEND_PATH="$BLAS_PLUGIN_DIR" "$bench" $tiny --device CPU --type f32 --compare-blas
    [ "$rc" -eq 0 ] && grep -q '^mul_mat 64x64x64  *F32  *CPU  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*$' "$tmp/out" &&
        grep -q '^vs sgemm: median cblas_sgemm time' "$tmp/out"
    ok "bench --compare-blas reports the ratio against cblas_sgemm, through the BLAS plugin"
    real=$(dirname "$bench")/.libs/$(basename "$bench")
    [ -x "$real" ] || real=$bench
    deps=$(ldd "$real" 2>/dev/null)
    printf '%s\n' "$deps" | grep -q 'libggml-backend' && ! printf '%s\n' "$deps" | grep -qi 'blas'
    ok "the bench links no BLAS library itself"
else
    run "$bench" $tiny --device CPU --type f32 --compare-blas
    [ "$rc" -eq 0 ] && grep -q 'unavailable' "$tmp/out"
    ok "bench --compare-blas says the comparison is unavailable without BLAS"
fi

run "$bench" $tiny --device CPU --type f32 --compare-stream
[ "$rc" -eq 0 ] && grep -q 'STREAM triad.s [0-9.]* GB/s' "$tmp/out" &&
    grep -q '^mul_mat 64x64x64  *F32  *CPU  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*$' "$tmp/out"
ok "bench --compare-stream reports the ratios against the STREAM triad and reading as many bytes"

if [ -n "${BLAS_PLUGIN_DIR:-}" ]; then
    run env GGML_BACKEND_PATH="$BLAS_PLUGIN_DIR" "$bench" $tiny --type f32
    [ "$rc" -eq 0 ] && grep -q '^mul_mat 64x64x64  *F32  *BLAS+CPU  *[0-9.]' "$tmp/out" &&
        grep -q '^mul_mat 64x64x64  *F32  *CPU  *[0-9.]' "$tmp/out"
    ok "bench runs BLAS+CPU through the scheduler, then the CPU alone"
else
    skip "bench runs BLAS+CPU" "the BLAS plugin is not built"
fi

for bad in "--op nosuch" "--type q9_9" "--shape 0x1x1" "--shape 64x64" "--threads 0" "--reps x" "--bogus" "--op"; do
    run "$bench" $bad
    [ "$rc" -eq 2 ] && grep -q "^ggml-backend-bench: " "$tmp/err" && [ ! -s "$tmp/out" ]
    ok "bench $bad exits 2 with a message"
done

run "$bench" $tiny --device NOSUCH
[ "$rc" -eq 2 ] && grep -q 'no device matches --device NOSUCH' "$tmp/err"
ok "bench --device NOSUCH exits 2 with a message"

run "$bench" $tiny --device CPU --numa mirror
[ "$rc" -eq 0 ] && tail -n 1 "$tmp/out" | grep -q '; NUMA mirror'
ok "bench --numa mirror runs and says the strategy on its last line"

run "$bench" $tiny --numa nowhere
[ "$rc" -eq 2 ] && grep -q "unknown NUMA strategy" "$tmp/err"
ok "bench --numa with an unknown strategy exits 2 with a message"

run "$bench" --help
[ "$rc" -eq 0 ] && grep -q '^usage: ggml-backend-bench' "$tmp/out"
ok "bench --help"

run "$bench" --version
[ "$rc" -eq 0 ] && grep -q "^ggml-backend-bench ${PACKAGE_VERSION:-}" "$tmp/out"
ok "bench --version"

# ---------------------------------------------------- ggml-backend-gguf

# le VALUE BYTES: VALUE as BYTES little-endian bytes (octal escapes of printf)
le() {
    v=$1 i=0
    while [ "$i" -lt "$2" ]; do
        printf "\\$(printf '%03o' $((v & 255)))"
        v=$((v >> 8)) i=$((i + 1))
    done
}
gstr() { le "${#1}" 8; printf '%s' "$1"; }
# a GGUF file written here from the format: version 3, one F32 tensor "w"
# [4, 2] of zeros, "general.name" = "tiny" and "tok", an array of 10 strings
{
    printf 'GGUF'; le 3 4; le 1 8; le 2 8
    gstr general.name; le 8 4; gstr tiny
    gstr tok; le 9 4; le 8 4; le 10 8
    for t in a b c d e f g h i j; do gstr "$t"; done
    gstr w; le 2 4; le 4 8; le 2 8; le 0 4; le 0 8
} > "$tmp/tiny.gguf"
size=$(wc -c < "$tmp/tiny.gguf")
pad=$(( (32 - size % 32) % 32 + 32 ))   # to the alignment, then 32 bytes of data
head -c "$pad" /dev/zero >> "$tmp/tiny.gguf"
head -c 150 "$tmp/tiny.gguf" > "$tmp/cut.gguf"
head -c $((size + pad - 1)) "$tmp/tiny.gguf" > "$tmp/short.gguf"

run "$gguf" "$tmp/tiny.gguf"
[ "$rc" -eq 0 ] && grep -q 'GGUF version 3, alignment 32' "$tmp/out" &&
    grep -q '^  general.name  *str "tiny"$' "$tmp/out" &&
    grep -q '^  tok  *str\[10\] \["a", "b", "c", "d", "e", "f", "g", "h", \.\.\. (2 more)\]$' "$tmp/out" &&
    grep -q '^  w  *f32  *\[4, 2\] 32 bytes at 0$' "$tmp/out" &&
    grep -q '^total: 1 tensors, 8 elements, 32 bytes' "$tmp/out"
ok "gguf prints the version, the metadata (a long array abbreviated) and the tensor table"

run "$gguf" --all "$tmp/tiny.gguf"
[ "$rc" -eq 0 ] && grep -q '"i", "j"\]$' "$tmp/out"
ok "gguf --all prints every element"

run "$gguf" --json "$tmp/tiny.gguf" "$tmp/tiny.gguf"
[ "$rc" -eq 0 ] && json_ok "$tmp/out" 'len(d) == 2 and d[0]["valid"] and d[0]["version"] == 3 and
    d[0]["tensors"][0]["shape"] == [4, 2] and d[0]["tensors"][0]["type"] == "f32" and
    d[0]["metadata"][1]["n"] == 10 and d[0]["metadata"][0]["value"] == "tiny" and d[0]["total_bytes"] == 32'
ok "gguf --json: an array of one object per file"

run "$gguf" --check "$tmp/tiny.gguf" "$tmp/cut.gguf"
[ "$rc" -eq 1 ] && grep -q 'tiny.gguf: ok$' "$tmp/out" && grep -q 'cut.gguf: not a sound GGUF file$' "$tmp/out" &&
    grep -q 'at offset' "$tmp/err"
ok "gguf --check: a truncated file exits 1, the reason on stderr"

run "$gguf" "$tmp/short.gguf"
[ "$rc" -eq 1 ] && grep -q "data ends past the file" "$tmp/err"
ok "gguf: a file one byte short of its data exits 1"

run "$gguf" --json "$tmp/cut.gguf"
[ "$rc" -eq 1 ] && json_ok "$tmp/out" 'd[0]["valid"] == False'
ok "gguf --json marks an unsound file"

for bad in "" "--bogus"; do
    run "$gguf" $bad
    [ "$rc" -eq 2 ] && grep -q "^ggml-backend-gguf: " "$tmp/err" && [ ! -s "$tmp/out" ]
    ok "gguf ${bad:-without a file} exits 2 with a message"
done

run "$gguf" --help
[ "$rc" -eq 0 ] && grep -q '^usage: ggml-backend-gguf' "$tmp/out"
ok "gguf --help"

run "$gguf" --version
[ "$rc" -eq 0 ] && grep -q "^ggml-backend-gguf ${PACKAGE_VERSION:-}" "$tmp/out"
ok "gguf --version"

echo "1..$n"
