#!/bin/sh
# check-fuzz-rpc.sh - TAP: tests/fuzz-rpc, the RPC server's fuzz target,
# on its seed sessions and on a bounded number of mutations of them
# (FUZZ_RPC_MUTATIONS, 20000 by default) from a fixed seed (FUZZ_SEED), so
# that `make check` sends the same streams every time; a misbehaving input
# is printed in hex on stderr.
: "${top_builddir:=.}"
exec "$top_builddir/tests/fuzz-rpc" --tap --mutations "${FUZZ_RPC_MUTATIONS:-20000}" --seed "${FUZZ_SEED:-13}"
