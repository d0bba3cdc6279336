#!/bin/sh
# installcheck-plugin.sh - run by "make installcheck", after "make install":
# builds the example backend plugin and its consumer from the installed
# copy of examples/plugin, with the installed pkg-config file and nothing
# else, installs the plugin in the installed plugin directory, runs the
# consumer, which must find the plugin there through ggml_backend_load_all,
# and removes everything it made, the installed plugin included.
#
# Environment (set by the installcheck-local rule of Makefile.am):
#   libdir, backenddir, docdir   the configured directories
#   DESTDIR                      the staging directory of "make install", if any
#   CC, PKG_CONFIG, MAKE         the tools
#   SANITIZER_CFLAGS             the library's sanitizer flags, if any
#
# With DESTDIR, the plugin directory compiled into the installed library
# (backenddir) does not hold the plugin, which is under DESTDIR: the
# consumer then finds it through GGML_BACKEND_PATH, and pkg-config reads
# the staged .pc file with PKG_CONFIG_SYSROOT_DIR=DESTDIR.
set -u
: "${libdir:?}" "${backenddir:?}" "${docdir:?}"
DESTDIR=${DESTDIR:-}
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
MAKE=${MAKE:-make}
SANITIZER_CFLAGS=${SANITIZER_CFLAGS:-}
plugin=libggml-example.so

say() { echo "installcheck: $*"; }
fail() { echo "installcheck: FAILED: $*" >&2; exit 1; }

src=$DESTDIR$docdir/examples/plugin
for f in Makefile README example-backend.c consumer.c; do
    [ -f "$src/$f" ] || fail "$src/$f is not installed"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ggml-installcheck.XXXXXX") || fail "mktemp failed"
we_installed=no
cleanup() {
    if [ "$we_installed" = yes ]; then
        rm -f "$DESTDIR$backenddir/$plugin"
        say "removed $DESTDIR$backenddir/$plugin"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

# The sources, as a user copies them out of the documentation.
cp "$src"/Makefile "$src"/README "$src"/example-backend.c "$src"/consumer.c "$tmp"/ || fail "cannot copy $src"
chmod u+w "$tmp"/*

# pkg-config must read the installed file, and only that one.
PKG_CONFIG_PATH=$DESTDIR$libdir/pkgconfig
export PKG_CONFIG_PATH
unset PKG_CONFIG_SYSROOT_DIR
pcdir=$($PKG_CONFIG --variable=pcfiledir ggml-backend) || fail "pkg-config cannot find ggml-backend in $PKG_CONFIG_PATH"
[ "$pcdir" = "$PKG_CONFIG_PATH" ] || fail "pkg-config reads ggml-backend.pc in $pcdir, not in $PKG_CONFIG_PATH"
pc_backenddir=$($PKG_CONFIG --variable=backenddir ggml-backend)
[ "$pc_backenddir" = "$backenddir" ] ||
    fail "the installed .pc gives backenddir=$pc_backenddir, configure gave $backenddir"
[ -d "$DESTDIR$backenddir" ] || fail "the plugin directory $DESTDIR$backenddir was not installed"
[ ! -e "$DESTDIR$backenddir/$plugin" ] ||
    fail "$DESTDIR$backenddir/$plugin exists already; remove it and run again"

make_vars="CC=$CC PKG_CONFIG=$PKG_CONFIG"
if [ -n "$DESTDIR" ]; then
    # the .pc file names the final paths: look them up under DESTDIR
    PKG_CONFIG_SYSROOT_DIR=$DESTDIR
    export PKG_CONFIG_SYSROOT_DIR
    # some pkg-config implementations put the sysroot in front of every
    # variable too: name the final plugin directory, install under DESTDIR
    install_vars="DESTDIR=$DESTDIR BACKENDDIR=$backenddir"
else
    install_vars=
fi

say "building the example plugin and consumer in $tmp with $PKG_CONFIG (PKG_CONFIG_PATH=$PKG_CONFIG_PATH${DESTDIR:+, PKG_CONFIG_SYSROOT_DIR=$DESTDIR})"
$MAKE -C "$tmp" $make_vars \
    CFLAGS="-O2 -g -Wall -Wextra -Werror $SANITIZER_CFLAGS" LDFLAGS="$SANITIZER_CFLAGS" all ||
    fail "the example does not build against the installed library"

LD_LIBRARY_PATH=$DESTDIR$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
if [ -n "$DESTDIR" ]; then
    GGML_BACKEND_PATH=$DESTDIR$backenddir
    export GGML_BACKEND_PATH
    say "DESTDIR is set: the library searches $backenddir, which lacks the staged plugin;"
    say "the consumer finds it through GGML_BACKEND_PATH=$GGML_BACKEND_PATH instead"
else
    unset GGML_BACKEND_PATH
fi

# Not installed yet: the consumer must not find the device (from the
# working directory, say, where the plugin was built).
(cd "$tmp" && ./consumer) > "$tmp/before.log" 2>&1 &&
    { cat "$tmp/before.log"; fail "the consumer found EXAMPLE0 before the plugin was installed"; }

$MAKE -C "$tmp" $make_vars $install_vars install || fail "make install of the plugin failed"
we_installed=yes
[ -f "$DESTDIR$backenddir/$plugin" ] || fail "the plugin is not in $DESTDIR$backenddir"

say "running the consumer: ggml_backend_load_all must find $DESTDIR$backenddir/$plugin"
(cd "$tmp" && ./consumer) || fail "the consumer failed"
say "the example plugin builds, installs and runs with the installed library"
