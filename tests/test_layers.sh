#!/bin/sh
# tests/test_layers.sh: the layers of the source tree, checked.
#
#   engine/  includes nothing of ext/ and no sqlite3*.h;
#   cuda/    includes nothing of ext/, and of engine/ only the plugin ABI
#            headers (types.h, errcode.h, backend.h, plugin.h);
#   objects  (nm of the built ext/ and engine/ objects): no engine/ object
#            refers to a symbol an ext/ object defines, and the files of
#            ext/, and those of engine/, call each other in no loop.
#
# Each violation is printed on its own line: `file:line: includes X (rule)`
# or `from -> to (symbol)`.  Before that, the checkers run on a small tree
# with planted violations (an engine/ file including ext/, a cuda/ file
# including engine/graph.h, two ext/ objects calling each other, an engine/
# object calling ext/) and bail out when they miss one.
#
# TAP: one result, so that the test can be an expected failure as a whole.
# DYNG_SRCDIR and DYNG_BUILDDIR (set by make check) name the trees.

srcdir=${DYNG_SRCDIR:-.}
builddir=${DYNG_BUILDDIR:-.}
NM=${NM:-nm}
CC=${CC:-cc}

# The include violations under root $1, one per line.
check_includes() {
  root=$1
  for f in "$root"/engine/*.c "$root"/engine/*.h; do
    test -f "$f" || continue
    rel=engine/${f##*/}
    grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | while IFS= read -r line; do
      n=${line%%:*}
      inc=$(printf '%s\n' "${line#*:}" | sed 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*//')
      case $inc in
      \"ext/*) echo "$rel:$n: includes $inc (engine/ must not include ext/)" ;;
      \<sqlite3* | \"sqlite3*) echo "$rel:$n: includes $inc (engine/ must not use SQLite)" ;;
      esac
    done
  done
  for f in "$root"/cuda/*; do
    test -f "$f" || continue
    case $f in *.c | *.h | *.cu | *.cuh | *.cpp | *.hpp) ;; *) continue ;; esac
    rel=cuda/${f##*/}
    grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | while IFS= read -r line; do
      n=${line%%:*}
      inc=$(printf '%s\n' "${line#*:}" | sed 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*//')
      case $inc in
      \"ext/*) echo "$rel:$n: includes $inc (cuda/ must not include ext/)" ;;
      \"engine/types.h\"* | \"engine/errcode.h\"* | \"engine/backend.h\"* | \"engine/plugin.h\"*) ;;
      \"engine/*) echo "$rel:$n: includes $inc (cuda/ includes of engine/ only types.h, errcode.h, backend.h, plugin.h)" ;;
      esac
    done
  done
}

# The objects of build tree $1 whose source is still in source tree $2
# (an object left from a removed file is not part of the library):
# libtool's PIC objects, else the plain ones.
list_objects() {
  root=$1
  src=$2
  for pat in "ext/.libs/dyng_la-*.o" "engine/.libs/libdyngengine_la-*.o"; do
    set -- $root/$pat
    if test ! -f "$1"; then
      set -- $root/$(echo "$pat" | sed 's|\.libs/||')
    fi
    for o in "$@"; do
      base=${o##*/}
      base=${base#*-}
      test -f "$o" && test -f "$src/${pat%%/*}/${base%.o}.c" && echo "$o"
    done
  done
}

# The call violations among the objects listed on stdin, one per line.
check_calls() {
  while IFS= read -r o; do
    dir=$(basename "$(dirname "$(dirname "$o")")")
    case $o in */.libs/*) ;; *) dir=$(basename "$(dirname "$o")") ;; esac
    base=${o##*/}
    base=${base#*-}
    file=$dir/${base%.o}
    # sqlite3_api, SQLite's table of API functions, which dyng.c defines
    # and every ext/ file reads (SQLITE_EXTENSION_INIT3), is no call.
    $NM "$o" | awk -v f="$file" '
      $NF == "sqlite3_api" { next }
      NF == 3 && $2 ~ /^[TDBRVWG]$/ { print "D", f, $3 }
      NF == 2 && $1 == "U" { print "U", f, $2 }'
  done | awk '
    $1 == "D" { owner[$3] = $2; next }
    { use[++nu] = $2 " " $3 }
    END {
      for (i = 1; i <= nu; i++) {
        split(use[i], p, " ")
        from = p[1]; sym = p[2]
        if (!(sym in owner) || owner[sym] == from) continue
        to = owner[sym]
        if ((from, to) in edge) continue
        edge[from, to] = sym
        node[from] = 1; node[to] = 1
      }
      # Reachability over the few files (Floyd-Warshall).
      for (e in edge) { split(e, q, SUBSEP); reach[q[1], q[2]] = 1 }
      for (k in node) for (a in node) if ((a, k) in reach) for (b in node)
        if ((k, b) in reach) reach[a, b] = 1
      for (e in edge) {
        split(e, q, SUBSEP); from = q[1]; to = q[2]
        fd = substr(from, 1, index(from, "/")); td = substr(to, 1, index(to, "/"))
        if (fd == "engine/" && td == "ext/")
          print from " -> " to " (" edge[e] "): engine/ must not call ext/"
        else if (fd == td && ((to, from) in reach))
          print from " -> " to " (" edge[e] "): part of a call loop in " fd
      }
    }' | sort
}

# The planted tree: every checker must find each planted violation.
self_test() {
  t=$(mktemp -d "${TMPDIR:-/tmp}/dyng_layers.XXXXXX") || return 1
  mkdir -p "$t/engine/.libs" "$t/ext/.libs" "$t/cuda"
  printf '#include "engine/graph.h"\n#include "ext/dyng_ext.h"\n#include <sqlite3.h>\n' > "$t/engine/bad.c"
  printf '#include "engine/types.h"\n#include "engine/graph.h"\n#include "ext/x.h"\n' > "$t/cuda/bad.cu"
  printf 'int b(void);\nint a(void) { return b(); }\n' > "$t/a.c"
  printf 'int a(void);\nint b(void) { return a(); }\n' > "$t/b.c"
  printf 'int a(void);\nint e(void) { return a(); }\n' > "$t/e.c"
  ok=1
  $CC -c -o "$t/ext/.libs/dyng_la-a.o" "$t/a.c" && $CC -c -o "$t/ext/.libs/dyng_la-b.o" "$t/b.c" &&
    $CC -c -o "$t/engine/.libs/libdyngengine_la-e.o" "$t/e.c" || ok=0
  inc=$(check_includes "$t")
  printf '\n' > "$t/ext/a.c"; printf '\n' > "$t/ext/b.c"; printf '\n' > "$t/engine/e.c"
  calls=$(list_objects "$t" "$t" | check_calls)
  for want in 'engine/bad.c:2: includes "ext/dyng_ext.h"' 'engine/bad.c:3: includes <sqlite3.h>' \
              'cuda/bad.cu:2: includes "engine/graph.h"' 'cuda/bad.cu:3: includes "ext/x.h"'; do
    case $inc in *"$want"*) ;; *) echo "# self-test: missed $want"; ok=0 ;; esac
  done
  case $inc in *'engine/bad.c:1'* | *'cuda/bad.cu:1'*) echo "# self-test: flagged an allowed include"; ok=0 ;; esac
  for want in 'ext/a -> ext/b (b): part of a call loop' 'ext/b -> ext/a (a): part of a call loop' \
              'engine/e -> ext/a (a): engine/ must not call ext/'; do
    case $calls in *"$want"*) ;; *) echo "# self-test: missed $want"; ok=0 ;; esac
  done
  rm -rf "$t"
  test $ok = 1
}

echo "1..1"
if ! self_test; then
  echo "Bail out! the layer checker misses planted violations"
  exit 1
fi
objects=$(list_objects "$builddir" "$srcdir")
if test -z "$objects"; then
  echo "Bail out! no built objects under $builddir/ext and $builddir/engine (build first)"
  exit 1
fi
inc=$(check_includes "$srcdir")
calls=$(printf '%s\n' "$objects" | check_calls)
n=0
if test -n "$inc"; then
  echo "# include violations:"
  printf '%s\n' "$inc" | sed 's/^/#   /'
  n=$((n + $(printf '%s\n' "$inc" | wc -l)))
fi
if test -n "$calls"; then
  echo "# call violations (file -> file, from nm of the objects):"
  printf '%s\n' "$calls" | sed 's/^/#   /'
  n=$((n + $(printf '%s\n' "$calls" | wc -l)))
fi
if test $n = 0; then
  echo "ok 1 - the layers hold: includes and calls only go down"
else
  echo "not ok 1 - $n layer violations (listed above)"
fi
exit 0
