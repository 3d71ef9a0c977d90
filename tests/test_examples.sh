#!/bin/sh
# tests/test_examples.sh: runs examples/quickstart.sql in the sqlite3 shell,
# as the README tells a user to, and checks what it prints (TAP).
# The expected figures follow from the five roads of the example by hand:
# 1->2->3->4 costs 4+1+2 = 7; without 3->4 the route is 1->2->4, 4+6 = 10;
# the road 4->5 added next is one inserted edge, and the graph then has
# nodes 1..5 and five edges.
set -u
echo "1..5"
if [ -z "${SQLITE3_SHELL:-}" ] || [ "$SQLITE3_SHELL" = no ] || ! [ -x "$SQLITE3_SHELL" ]; then
  for i in 1 2 3 4 5; do echo "ok $i # SKIP no sqlite3 shell"; done
  exit 0
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ "${DYNG_ASAN:-no}" = yes ]; then
  LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so); export LD_PRELOAD
  ASAN_OPTIONS=detect_leaks=0; export ASAN_OPTIONS
fi
cd "$DYNG_BUILDDIR" || exit 1
if "$SQLITE3_SHELL" -bail < "$DYNG_SRCDIR/examples/quickstart.sql" > "$out" 2>&1; then
  echo "ok 1 - quickstart.sql runs without error"
else
  echo "not ok 1 - quickstart.sql runs without error"; sed 's/^/# /' "$out"
fi
# Rows of `.mode column` output: "seq node edge cost agg_cost".
if grep -Eq '^4 +4 +0\.0 +7\.0' "$out"; then echo "ok 2 - path 1 -> 4 costs 7"; else echo "not ok 2 - path 1 -> 4 costs 7"; fi
if grep -Eq '^3 +4 +0\.0 +10\.0' "$out"; then echo "ok 3 - after the DELETE the detour costs 10"; else echo "not ok 3 - detour costs 10"; fi
if grep -Eq '^1 +0 *$' "$out"; then echo "ok 4 - dyng_update reports one inserted edge, no reload"; else echo "not ok 4 - dyng_update"; fi
if grep -Eq '^0\.[0-9.]+ +(cpu|cuda[0-9]+) +5 +5' "$out"; then echo "ok 5 - diagnostics report the backend and the graph size"; else echo "not ok 5 - diagnostics"; sed 's/^/# /' "$out"; fi
