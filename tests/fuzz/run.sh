#!/bin/sh
# tests/fuzz/run.sh: builds the fuzz harnesses with clang's libFuzzer and
# runs each for a bounded time (make fuzz).
#
#   tests/fuzz/run.sh SRCDIR BUILDDIR [HARNESS...]
#
# FUZZ_SECONDS (default 60) is each harness's time.  The harnesses are
# built from the engine's and the extension's sources compiled with
# -DSQLITE_CORE into each fuzzer, under ASan and UBSan, in
# BUILDDIR/tests/fuzz-build; each starts from its seeds in
# SRCDIR/tests/fuzz/corpus/<harness> and keeps what it finds in the build
# folder.  A crash, leak or sanitizer report fails the run; the input that
# caused it is left as BUILDDIR/tests/fuzz-build/crash-* (add it to the
# regression seeds).  Needs clang and libclang-rt-14-dev (Debian).
set -eu
src=$1; build=$2; shift 2
harnesses=${*:-"fuzz_create fuzz_functions fuzz_batch fuzz_read_edges"}
secs=${FUZZ_SECONDS:-60}
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "run.sh: no clang (apt-get install clang libclang-rt-14-dev)"; exit 1; }
out=$build/tests/fuzz-build
mkdir -p "$out/obj"
flags="-g -O1 -fno-omit-frame-pointer -std=c11 -D_GNU_SOURCE -DSQLITE_CORE -I$src -I$build \
  $(pkg-config --cflags sqlite3 jansson)"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
libs="$(pkg-config --libs sqlite3 jansson) -lz -lm -lpthread -ldl"
objs=""
for f in "$src"/engine/*.c "$src"/ext/*.c; do
  o=$out/obj/$(basename "$(dirname "$f")")_$(basename "$f" .c).o
  "$CLANG" $flags $san -fsanitize=fuzzer-no-link -c "$f" -o "$o"
  objs="$objs $o"
done
status=0
for h in $harnesses; do
  "$CLANG" $flags $san -fsanitize=fuzzer "$src/tests/fuzz/$h.c" $objs $libs -o "$out/$h"
  mkdir -p "$out/corpus-$h"
  if [ -d "$src/tests/fuzz/corpus/$h" ]; then cp -n "$src/tests/fuzz/corpus/$h"/* "$out/corpus-$h"/ 2>/dev/null || true; fi
  echo "== $h: $secs s"
  (cd "$out" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "./$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "corpus-$h" \
    > "$h.log" 2>&1) || { status=1; tail -40 "$out/$h.log"; }
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|Done [0-9]+ runs" "$out/$h.log" || true
done
exit $status
