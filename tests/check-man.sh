#!/bin/sh
# check-man.sh - TAP checks on the manual pages under man/.
#
# Run by "make check" from the build directory with these variables set:
#   top_srcdir, top_builddir  source and build trees
#   CC                        the C compiler
#   LIBTOOL                   path of the libtool script (may be unset)
#   PACKAGE_VERSION           expected version on every .TH line
# CFLAGS and LDFLAGS, when set, are passed on to the compiler; MANDOC and
# NM, when set and not empty, name those tools.
#
# Checks, one TAP line each:
#   a. every exported function has a page man3/<name>.3 (or a .so link);
#   b. "mandoc -T lint -W warning" is clean for every page; .so links resolve;
#   c. each real page has its sections in the fixed order, the right .TH
#      version, and a page file for every name in its NAME line;
#   d. the SYNOPSIS compiles against the headers, and declares every
#      function of the NAME line with the header's own prototype;
#   e. the EXAMPLE compiles with -Wall -Werror, links against the built
#      library, runs, and exits 0;
#   f. each section 1 page (a tool) has NAME, SYNOPSIS, DESCRIPTION,
#      OPTIONS, EXIT STATUS and SEE ALSO in that order, and, when the tool
#      is built (tools/<name>), documents every option its --help lists.
#      Its EXAMPLES are shell commands: not compiled.
#
# Results go to stdout as TAP; the exit status is 0 unless the script
# itself cannot run (the TAP driver judges the results).

LC_ALL=C
export LC_ALL

: "${top_srcdir:=.}"
: "${top_builddir:=.}"
: "${CC:=cc}"
: "${PACKAGE_VERSION:=}"

top_srcdir=$(cd "$top_srcdir" && pwd) || { echo "Bail out! bad top_srcdir"; exit 99; }
top_builddir=$(cd "$top_builddir" && pwd) || { echo "Bail out! bad top_builddir"; exit 99; }

mandir=$top_srcdir/man
symbols=$top_srcdir/tests/abi/libggml-backend.symbols

if [ ! -d "$mandir" ]; then
    echo "Bail out! no man directory at $mandir"
    exit 99
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-man.XXXXXX") || {
    echo "Bail out! mktemp failed"
    exit 99
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 99' HUP INT TERM

# ------------------------------------------------------------------ TAP

n=0
result() {  # result ok|not-ok|skip description [diagnostic-file]
    n=$((n + 1))
    case $1 in
    ok)     echo "ok $n - $2" ;;
    skip)   echo "ok $n - $2 # SKIP $3" ;;
    *)      echo "not ok $n - $2"
            if [ -n "$3" ] && [ -s "$3" ]; then
                head -n 40 "$3" | sed 's/^/# /'
            fi ;;
    esac
}

# -------------------------------------------------------------- helpers

MANDOC=${MANDOC:-mandoc}
bs=$(printf '\b')      # mandoc -T ascii marks bold and underline with backspaces
NM=${NM:-nm}
have_mandoc=no
command -v ${MANDOC%% *} >/dev/null 2>&1 && have_mandoc=yes

have_timeout=no
command -v timeout >/dev/null 2>&1 && have_timeout=yes

# A page is a link when its only non-comment line is ".so target".
is_link() {
    grep -v '^\.\\"' "$1" | grep -v '^[[:space:]]*$' | head -n 1 | grep -q '^\.so[[:space:]]'
}

link_target() {
    grep '^\.so[[:space:]]' "$1" | head -n 1 | sed 's/^\.so[[:space:]]*//; s/[[:space:]]*$//'
}

# Section names of a roff page, one per line, quotes removed.
sections() {
    sed -n 's/^\.SH[[:space:]]*//p' "$1" | sed 's/"//g; s/[[:space:]]*$//'
}

# Fourth argument of the .TH line (the source/version field).
th_field4() {
    awk '/^\.TH[[:space:]]/ {
        line = substr($0, 4); n = 0; arg = ""; inq = 0; have = 0
        for (i = 1; i <= length(line); i++) {
            c = substr(line, i, 1)
            if (c == "\"") { inq = !inq; have = 1; continue }
            if (!inq && (c == " " || c == "\t")) {
                if (have) { args[++n] = arg; arg = ""; have = 0 }
                continue
            }
            arg = arg c; have = 1
        }
        if (have) args[++n] = arg
        print args[4]
        exit
    }' "$1"
}

# Names listed in the NAME section (before "\-").
name_list() {
    awk '/^\.SH/ { insec = ($0 ~ /^\.SH[[:space:]]+"?NAME"?[[:space:]]*$/); next }
         insec && !/^\./ { line = line " " $0 }
         END { print line }' "$1" |
        sed 's/[[:space:]]*\\-.*//' | tr ',' '\n' |
        sed 's/^[[:space:]]*//; s/[[:space:]]*$//; s/\\f[BIRP]//g' | grep -v '^$'
}

# Render a page as plain text, wide enough that nothing is wrapped.
render() {
    (cd "$mandir" && $MANDOC -T ascii -O width=500 "$1") | sed "s/.$bs//g"
}

# Lines of the rendered section $2 (up to the next section heading).
rendered_section() {
    awk -v want="$2" '/^[A-Z]/ { insec = ($0 == want); next } insec { print }' "$1"
}

# Code blocks (.EX ... .EE) of the EXAMPLE section, rendered as text.
example_code() {
    awk '/^\.SH/ { insec = ($0 ~ /^\.SH[[:space:]]+"?EXAMPLES?"?[[:space:]]*$/); next }
         insec && /^\.EX/ { inex = 1; next }
         insec && /^\.EE/ { inex = 0; next }
         insec && inex { print }' "$1" > "$tmp/ex.body"
    {
        printf '.TH X 3 2000-01-01 src\n.SH CODE\n.EX\n'
        cat "$tmp/ex.body"
        printf '.EE\n'
    } > "$tmp/ex.man"
    $MANDOC -T ascii -O width=500 "$tmp/ex.man" | sed "s/.$bs//g" |
        awk '/^CODE$/ { on = 1; next } on && /^[^ ]/ { exit } on { print }' |
        sed 's/^       //'
}

run_limited() {
    if [ "$have_timeout" = yes ]; then
        timeout 20 "$@"
    else
        "$@"
    fi
}

cflags="-std=c11 -Wall -Werror -I$top_srcdir/include"
if [ "$top_builddir" != "$top_srcdir" ] && [ -d "$top_builddir/include" ]; then
    cflags="$cflags -I$top_builddir/include"
fi

# ------------------------------------------------------------ the pages

pages=
for sec in 1 3 7; do
    for f in "$mandir"/man$sec/*.$sec; do
        [ -f "$f" ] || continue
        pages="$pages man$sec/${f##*/}"
    done
done

real_pages=
link_pages=
for p in $pages; do
    if is_link "$mandir/$p"; then
        link_pages="$link_pages $p"
    else
        real_pages="$real_pages $p"
    fi
done

# ---------------------------------------------- a. function coverage

# Functions among the exported symbols: from the library's dynamic symbol
# table when it is built (T, W and i entries), else every listed symbol
# that a public header declares as a function, else every listed symbol.
lib_so=$top_builddir/.libs/libggml-backend.so
if [ -f "$symbols" ]; then
    if [ -f "$lib_so" ] && command -v ${NM%% *} >/dev/null 2>&1; then
        $NM -D --defined-only "$lib_so" | awk '$2 ~ /^[TWi]$/ { print $3 }' |
            sed 's/@.*//' | sort -u > "$tmp/funcs.lib"
        grep -v '^[[:space:]]*#' "$symbols" | grep -v '^[[:space:]]*$' | sort -u |
            comm -12 - "$tmp/funcs.lib" > "$tmp/funcs"
    elif ls "$top_srcdir"/include/*.h >/dev/null 2>&1; then
        : > "$tmp/funcs"
        for s in $(grep -v '^[[:space:]]*#' "$symbols"); do
            if cat "$top_srcdir"/include/*.h | tr '\n' ' ' |
                grep -q "[^A-Za-z0-9_]$s[[:space:]]*("; then
                echo "$s" >> "$tmp/funcs"
            fi
        done
    else
        grep -v '^[[:space:]]*#' "$symbols" | grep -v '^[[:space:]]*$' > "$tmp/funcs"
    fi
    : > "$tmp/missing"
    total=0
    while read -r s; do
        total=$((total + 1))
        [ -f "$mandir/man3/$s.3" ] || echo "no page man3/$s.3" >> "$tmp/missing"
    done < "$tmp/funcs"
    if [ -s "$tmp/missing" ]; then
        echo "$(wc -l < "$tmp/missing") of $total functions have no page" >> "$tmp/missing"
        result not-ok "every exported function has a man page" "$tmp/missing"
    else
        result ok "every exported function has a man page ($total functions)"
    fi
else
    result skip "every exported function has a man page" "no symbol list $symbols"
fi

# ---------------------------------------------------- b. lint, links

for p in $link_pages; do
    target=$(link_target "$mandir/$p")
    lines=$(grep -c . "$mandir/$p")
    if [ -z "$target" ] || [ ! -f "$mandir/$target" ]; then
        echo "$p: .so target '$target' does not exist" > "$tmp/diag"
        result not-ok "link $p resolves" "$tmp/diag"
    elif is_link "$mandir/$target"; then
        echo "$p: .so target $target is itself a link" > "$tmp/diag"
        result not-ok "link $p resolves" "$tmp/diag"
    elif [ "$lines" -ne 1 ]; then
        echo "$p: a link file holds exactly one .so line ($lines lines)" > "$tmp/diag"
        result not-ok "link $p resolves" "$tmp/diag"
    else
        result ok "link $p resolves to $target"
    fi
done

for p in $real_pages; do
    if [ "$have_mandoc" = no ]; then
        result skip "mandoc lint $p" "mandoc not installed"
        continue
    fi
    if (cd "$mandir" && $MANDOC -T lint -W warning "$p") > "$tmp/diag" 2>&1 &&
        [ ! -s "$tmp/diag" ]; then
        result ok "mandoc lint $p"
    else
        result not-ok "mandoc lint $p" "$tmp/diag"
    fi
done

# ------------------------------------------ c. sections and version

man3_order="NAME
LIBRARY
SYNOPSIS
DESCRIPTION
RETURN VALUE
ERRORS
EXAMPLE
HISTORY
SEE ALSO"

for p in $real_pages; do
    f=$mandir/$p
    : > "$tmp/diag"
    sections "$f" > "$tmp/sections"
    case $p in
    man3/*)
        printf '%s\n' "$man3_order" > "$tmp/want"
        if ! cmp -s "$tmp/sections" "$tmp/want"; then
            echo "sections differ from the fixed order (- expected, + found):" >> "$tmp/diag"
            diff -u "$tmp/want" "$tmp/sections" | sed -n '3,$p' >> "$tmp/diag"
        fi ;;
    *)
        if [ "$(head -n 1 "$tmp/sections")" != NAME ]; then
            echo "the first section is not NAME" >> "$tmp/diag"
        fi
        if grep -q '^SEE ALSO$' "$tmp/sections" &&
            [ "$(tail -n 1 "$tmp/sections")" != "SEE ALSO" ]; then
            echo "SEE ALSO is not the last section" >> "$tmp/diag"
        fi ;;
    esac
    if ! grep -q '^\.TH[[:space:]]' "$f"; then
        echo "no .TH line" >> "$tmp/diag"
    else
        v=$(th_field4 "$f")
        if [ "$v" != "libggml-backend $PACKAGE_VERSION" ]; then
            echo ".TH names \"$v\", expected \"libggml-backend $PACKAGE_VERSION\"" >> "$tmp/diag"
        fi
    fi
    sec=${p%%/*}; sec=${sec#man}
    name_list "$f" > "$tmp/names"
    if [ ! -s "$tmp/names" ]; then
        echo "the NAME section lists no names" >> "$tmp/diag"
    fi
    while read -r nm_; do
        [ -f "$mandir/man$sec/$nm_.$sec" ] ||
            echo "NAME lists $nm_ but man$sec/$nm_.$sec does not exist" >> "$tmp/diag"
    done < "$tmp/names"
    if [ -s "$tmp/diag" ]; then
        result not-ok "sections and version of $p" "$tmp/diag"
    else
        result ok "sections and version of $p"
    fi
done

# ------------------------------------------------------ d. SYNOPSIS

# Does the compiler report a redundant redeclaration?  When it does, every
# function named in NAME must draw that warning: proof that the header
# declares it and that the page's prototype is the same declaration.
redecl=no
printf '#include <stdio.h>\nint puts(const char *s);\n' > "$tmp/probe.c"
if $CC -std=c11 -Wredundant-decls -fsyntax-only "$tmp/probe.c" 2>&1 |
    grep -q 'redundant redeclaration'; then
    redecl=yes
fi

for p in $real_pages; do
    case $p in man3/*) ;; *) continue ;; esac
    if [ "$have_mandoc" = no ]; then
        result skip "SYNOPSIS of $p compiles" "mandoc not installed"
        continue
    fi
    if [ ! -f "$top_srcdir/include/ggml.h" ]; then
        result skip "SYNOPSIS of $p compiles" "public headers not found"
        continue
    fi
    render "$p" > "$tmp/page.txt"
    rendered_section "$tmp/page.txt" SYNOPSIS | sed 's/^       //' > "$tmp/synopsis.c"
    : > "$tmp/diag"
    if ! $CC $cflags -Wredundant-decls -Wno-error=redundant-decls -fsyntax-only \
        "$tmp/synopsis.c" > "$tmp/cc.out" 2>&1; then
        echo "compile failed:" >> "$tmp/diag"
        # again without the redeclaration notes, which only add noise here
        $CC $cflags -fsyntax-only "$tmp/synopsis.c" >> "$tmp/diag" 2>&1
    elif [ "$redecl" = yes ]; then
        name_list "$mandir/$p" > "$tmp/names"
        while read -r nm_; do
            grep -q "redundant redeclaration of '$nm_'" "$tmp/cc.out" ||
                echo "$nm_: not declared in SYNOPSIS, or not declared by the headers" >> "$tmp/diag"
        done < "$tmp/names"
    fi
    if [ -s "$tmp/diag" ]; then
        result not-ok "SYNOPSIS of $p compiles" "$tmp/diag"
    else
        result ok "SYNOPSIS of $p compiles"
    fi
done

# ------------------------------------------------------- e. EXAMPLE

link_mode=none
if [ -n "${LIBTOOL:-}" ] && [ -x "$LIBTOOL" ] && [ -f "$top_builddir/libggml-backend.la" ]; then
    link_mode=libtool
elif [ -f "$lib_so" ]; then
    link_mode=direct
fi

i=0
for p in $real_pages; do
    # every man3 page has an EXAMPLE; other sections only when they say so
    case $p in
    man3/*) ;;
    man1/*) continue ;;
    *) sections "$mandir/$p" | grep -q '^EXAMPLES\{0,1\}$' || continue ;;
    esac
    if [ "$have_mandoc" = no ]; then
        result skip "EXAMPLE of $p builds and runs" "mandoc not installed"
        continue
    fi
    if [ "$link_mode" = none ]; then
        result skip "EXAMPLE of $p builds and runs" "library not built"
        continue
    fi
    i=$((i + 1))
    src=$tmp/ex$i.c
    exe=$tmp/ex$i
    example_code "$mandir/$p" > "$src"
    : > "$tmp/diag"
    if ! grep -q 'main' "$src"; then
        echo "no program found in the EXAMPLE section" >> "$tmp/diag"
    elif [ "$link_mode" = libtool ]; then
        if ! $LIBTOOL --quiet --mode=link $CC $cflags ${CFLAGS:-} ${LDFLAGS:-} \
            -o "$exe" "$src" "$top_builddir/libggml-backend.la" -lm > "$tmp/cc.out" 2>&1; then
            echo "build failed:" >> "$tmp/diag"
            cat "$tmp/cc.out" >> "$tmp/diag"
        fi
    else
        if ! $CC $cflags ${CFLAGS:-} ${LDFLAGS:-} -o "$exe" "$src" \
            -L"$top_builddir/.libs" -lggml-backend -lm > "$tmp/cc.out" 2>&1; then
            echo "build failed:" >> "$tmp/diag"
            cat "$tmp/cc.out" >> "$tmp/diag"
        fi
    fi
    if [ ! -s "$tmp/diag" ]; then
        (cd "$tmp" &&
            LD_LIBRARY_PATH=$top_builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
            run_limited "$exe") > "$tmp/run.out" 2>&1 < /dev/null
        rc=$?
        if [ $rc -ne 0 ]; then
            echo "the program exited with status $rc; its output:" >> "$tmp/diag"
            cat "$tmp/run.out" >> "$tmp/diag"
        fi
    fi
    if [ -s "$tmp/diag" ]; then
        result not-ok "EXAMPLE of $p builds and runs" "$tmp/diag"
    else
        result ok "EXAMPLE of $p builds and runs"
    fi
    rm -f "$exe" "$src"
done

# ------------------------------------------------------- f. the tools

man1_order="NAME
SYNOPSIS
DESCRIPTION
OPTIONS
EXIT STATUS
SEE ALSO"

for p in $real_pages; do
    case $p in man1/*) ;; *) continue ;; esac
    f=$mandir/$p
    : > "$tmp/diag"
    sections "$f" | grep -x -F "$man1_order" > "$tmp/sections"
    printf '%s\n' "$man1_order" > "$tmp/want"
    if ! cmp -s "$tmp/sections" "$tmp/want"; then
        echo "required sections missing or out of order (- expected, + found):" >> "$tmp/diag"
        diff -u "$tmp/want" "$tmp/sections" | sed -n '3,$p' >> "$tmp/diag"
    fi
    if [ -s "$tmp/diag" ]; then
        result not-ok "sections of tool page $p" "$tmp/diag"
    else
        result ok "sections of tool page $p"
    fi

    tool=${p#man1/}
    tool=$top_builddir/tools/${tool%.1}
    if [ ! -x "$tool" ]; then
        result skip "$p documents every option of --help" "${tool#$top_builddir/} not built"
        continue
    fi
    if [ "$have_mandoc" = no ]; then
        result skip "$p documents every option of --help" "mandoc not installed"
        continue
    fi
    : > "$tmp/diag"
    render "$p" > "$tmp/page.txt"
    rendered_section "$tmp/page.txt" OPTIONS > "$tmp/options.txt"
    if ! run_limited "$tool" --help > "$tmp/help.txt" 2>&1; then
        echo "${tool#$top_builddir/} --help failed:" >> "$tmp/diag"
        cat "$tmp/help.txt" >> "$tmp/diag"
    fi
    for opt in $(grep -o -e '--[a-z][a-z-]*' "$tmp/help.txt" | sort -u); do
        grep -q -e "^ *$opt\([ =,]\|\$\)" "$tmp/options.txt" ||
            echo "option $opt of --help is not described in OPTIONS" >> "$tmp/diag"
    done
    if [ -s "$tmp/diag" ]; then
        result not-ok "$p documents every option of --help" "$tmp/diag"
    else
        result ok "$p documents every option of --help"
    fi
done

echo "1..$n"
exit 0
