# tap-sh.sh - TAP helpers for the shell checks, sourced with
#   . "$top_srcdir/tests/tap-sh.sh"
# after setting tmp to the check's scratch directory.  A check runs a
# command, sending what it prints to "$tmp/out" and "$tmp/err", tests the
# outcome, and calls ok right after the test.

n=0

# ok DESCRIPTION: passes when the last command succeeded; a failure shows
# the start of "$tmp/out" and "$tmp/err".
ok() {
    status=$?
    n=$((n + 1))
    if [ "$status" -eq 0 ]; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1"
        for f in "$tmp/out" "$tmp/err"; do
            [ -s "$f" ] && head -n 20 "$f" | sed "s|^|# ${f##*/}: |"
        done
    fi
}

# skip DESCRIPTION REASON
skip() {
    n=$((n + 1))
    echo "ok $n - $1 # SKIP $2"
}
