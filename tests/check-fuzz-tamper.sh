#!/bin/sh
# check-fuzz-tamper.sh - TAP: tests/fuzz-graph --tamper 100 for a bounded
# time (TAMPER_SECONDS, 10 by default) from a fixed seed (TAMPER_SEED):
# random graphs whose nodes were changed after construction (a source
# dropped or swapped, an op parameter, the op, a type or shape), as an RPC
# client may send them.  The CPU backend must refuse such a node or compute
# it inside its operands' memory; a finding prints its replay command.

: "${top_builddir:=.}"
exec "$top_builddir/tests/fuzz-graph" --tap --tamper 100 --seconds "${TAMPER_SECONDS:-10}" \
    --seed "${TAMPER_SEED:-29}"
