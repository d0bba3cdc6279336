#!/bin/sh
# check-fuzz-gguf.sh - TAP: tests/fuzz-gguf, the GGUF reader's fuzz target,
# on its seed corpus (written by the library's writer) and on a bounded
# number of mutations of it (FUZZ_GGUF_MUTATIONS, 200000 by default) from a
# fixed seed (FUZZ_SEED), so that `make check` reads the same files every
# time; a misbehaving input is printed in hex on stderr.
: "${top_builddir:=.}"
exec "$top_builddir/tests/fuzz-gguf" --tap --mutations "${FUZZ_GGUF_MUTATIONS:-200000}" --seed "${FUZZ_SEED:-13}"
