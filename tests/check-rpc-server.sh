#!/bin/sh
# check-rpc-server.sh - TAP checks of ggml-rpc-server on loopback TCP,
# run from the build tree with the uninstalled RPC plugin: the session of
# tests/test-rpc-server against the program, the allowlist, the warning
# for a non-loopback address, the exit after --connections, the errors
# for a missing plugin, device or NUMA strategy, and the refusal of token
# files that others can read, are missing or hold no token.  The session
# runs on a server started with --numa distribute.
#
# Variables (set by "make check"): top_builddir, top_srcdir.

: "${top_builddir:=.}"
server=$top_builddir/tools/ggml-rpc-server
client=$top_builddir/tests/test-rpc-server
plugins=$(cd "$top_builddir/lib/rpc/.libs" 2>/dev/null && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-rpc-server.XXXXXX") || { echo "Bail out! mktemp failed"; exit 99; }
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "${top_srcdir:-.}/tests/tap-sh.sh"

# A port of its own for each run (several test runs may share the machine).
port=$((20000 + $$ % 20000))

# start ARGS...: the server in the background on $port, its output in $tmp/server.*
start() {
    GGML_BACKEND_PATH=$plugins "$server" --port "$port" "$@" > "$tmp/server.out" 2> "$tmp/server.err" &
    pid=$!
}

# finish: waits for the server; its exit status in $rc
finish() {
    wait "$pid"
    rc=$?
    pid=
}

echo "1..9"

start --connections 1 --threads 2 --numa distribute
"$client" "127.0.0.1:$port" > "$tmp/out" 2> "$tmp/err"
client_rc=$?
finish
[ "$client_rc" -eq 0 ] && ! grep -q '^not ok' "$tmp/out" && grep -q '^1\.\.18$' "$tmp/out"
ok "the whole session of test-rpc-server against ggml-rpc-server --numa distribute on 127.0.0.1:$port"
[ "$rc" -eq 0 ] && grep -q 'serving 1 device on 127.0.0.1' "$tmp/server.err"
ok "the server says what it serves, and exits 0 after --connections 1"

port=$((port + 1))
start --connections 1 --allow 10.11.12.13
"$client" "127.0.0.1:$port" > "$tmp/out" 2> "$tmp/err"
client_rc=$?
kill "$pid" 2>/dev/null
finish
[ "$client_rc" -ne 0 ] && grep -q 'not allowed' "$tmp/server.err"
ok "a client not on the --allow list is disconnected, and the server says so"

port=$((port + 1))
start --host 0.0.0.0 --connections 1
"$client" "127.0.0.1:$port" > "$tmp/out" 2> "$tmp/err"
finish
grep -q 'not a loopback address' "$tmp/server.err"
ok "listening on 0.0.0.0 is logged as a warning"

# (only when no RPC plugin is installed in the plugin directory, which the loader always searches)
plugin_dir=$("$top_builddir/tools/ggml-backend-info" 2>/dev/null | sed -n 's/^ *\(.*\)  (plugin directory.*/\1/p')
if [ -n "$plugin_dir" ] && [ -e "$plugin_dir/libggml-rpc.so" ]; then
    skip "without the plugin: exit 1 and a message that says so" "an RPC plugin is installed in $plugin_dir"
else
    GGML_BACKEND_PATH=$tmp "$server" --port "$port" --connections 1 > "$tmp/out" 2> "$tmp/err" &
    pid=$!
    sleep 5 && kill "$pid" 2>/dev/null &
    finish
    [ "$rc" -eq 1 ] && grep -q 'RPC plugin' "$tmp/err"
    ok "without the plugin: exit 1 and a message that says so"
fi

GGML_BACKEND_PATH=$plugins "$server" --port "$port" --device NoSuchDevice > "$tmp/out" 2> "$tmp/err"
[ $? -eq 1 ] && grep -q "no device named 'NoSuchDevice'" "$tmp/err" &&
    "$server" --port 0 > "$tmp/out" 2> "$tmp/err"; [ $? -eq 2 ]
ok "an unknown device: exit 1; port 0: exit 2"

"$server" --port "$port" --numa sideways > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "unknown NUMA strategy 'sideways'" "$tmp/err"
ok "an unknown --numa strategy: exit 2, with a message"

# a token file must be its owner's secret, and exist (checked before the plugin
# is looked for: without one in the path, a token that passed would give exit 1)
printf 'a-token\n' > "$tmp/token"
chmod 640 "$tmp/token"
GGML_BACKEND_PATH=$tmp "$server" --port "$port" --token-file "$tmp/token" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q 'readable by its group' "$tmp/err" &&
    GGML_BACKEND_PATH=$tmp "$server" --port "$port" --token-file "$tmp/no-such-file" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q 'cannot open the token file' "$tmp/err"
ok "--token-file of a group-readable file: exit 2; of a missing file: exit 2; each with a message"

: > "$tmp/empty"
chmod 600 "$tmp/empty"
GGML_BACKEND_PATH=$tmp "$server" --port "$port" --token-file "$tmp/empty" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q 'has 0 bytes' "$tmp/err" &&
    GGML_RPC_TOKEN= GGML_BACKEND_PATH=$tmp "$server" --port "$port" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q 'GGML_RPC_TOKEN has 0 bytes' "$tmp/err"
ok "an empty token file, and an empty GGML_RPC_TOKEN: exit 2, with a message"
