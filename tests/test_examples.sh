#!/bin/sh
# tests/test_examples.sh: runs examples/quickstart.sql in the sqlite3 shell,
# as the README tells a user to, and checks what it prints (TAP).
# The expected figures follow from the five roads of the example by hand:
# 1->2->3->4 costs 4+1+2 = 7; without 3->4 the route is 1->2->4, 4+6 = 10;
# the road 4->5 added next is one inserted edge, and the graph then has
# nodes 1..5, five edges and one triangle (1, 2, 3).
# Then examples/road_network.sql, whose figures are checked against a
# Dijkstra over examples/roads.gr written here in Python; examples/
# triggers.sql (two connections; figures by hand: 10+10+10 = 30, then
# 1->3->5->4 = 12+1+1 = 14); examples/limits.sql; examples/python/example.py
# and examples/node/example.js (the same routes as the quickstart).
set -u
echo "1..16"
if [ -z "${SQLITE3_SHELL:-}" ] || [ "$SQLITE3_SHELL" = no ] || ! [ -x "$SQLITE3_SHELL" ]; then
  for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "ok $i # SKIP no sqlite3 shell"; done
  skip_shell=1
else
  skip_shell=0
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ "${DYNG_ASAN:-no}" = yes ]; then
  LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so); export LD_PRELOAD
  ASAN_OPTIONS=detect_leaks=0; export ASAN_OPTIONS
fi
cd "$DYNG_BUILDDIR" || exit 1
if [ "$skip_shell" = 0 ]; then
if "$SQLITE3_SHELL" -bail < "$DYNG_SRCDIR/examples/quickstart.sql" > "$out" 2>&1; then
  echo "ok 1 - quickstart.sql runs without error"
else
  echo "not ok 1 - quickstart.sql runs without error"; sed 's/^/# /' "$out"
fi
# Rows of `.mode column` output: "seq node edge cost agg_cost".
if grep -Eq '^4 +4 +0\.0 +7\.0' "$out"; then echo "ok 2 - path 1 -> 4 costs 7"; else echo "not ok 2 - path 1 -> 4 costs 7"; fi
if grep -Eq '^3 +4 +0\.0 +10\.0' "$out"; then echo "ok 3 - after the DELETE the detour costs 10"; else echo "not ok 3 - detour costs 10"; fi
if grep -Eq '^1 +0 *$' "$out"; then echo "ok 4 - dyng_update reports one inserted edge, no reload"; else echo "not ok 4 - dyng_update"; fi
if grep -Eq '^0\.[0-9.]+ +(cpu|cuda[0-9]+) +5 +5 +1 +(cpu|cuda[0-9]+) *$' "$out"; then echo "ok 5 - diagnostics report the backend and the graph size"; else echo "not ok 5 - diagnostics"; sed 's/^/# /' "$out"; fi

# The other examples run in a scratch folder holding dyng.so and examples/.
work=$(mktemp -d)
trap 'rm -f "$out"; rm -rf "$work"' EXIT
ln -s "$DYNG_BUILDDIR/.libs/dyng.so" "$work/dyng.so"
mkdir "$work/examples" && cp "$DYNG_SRCDIR/examples/roads.gr" "$work/examples/"
cd "$work" || exit 1
if "$SQLITE3_SHELL" -bail < "$DYNG_SRCDIR/examples/road_network.sql" > "$out" 2>&1; then
  echo "ok 6 - road_network.sql runs without error"
else
  echo "not ok 6 - road_network.sql runs without error"; sed 's/^/# /' "$out"
fi
# The route's length, the detour's once its first street is closed both
# ways, and the length once it reopens, from a Dijkstra over the file.
want=$(python3 - "$work/examples/roads.gr" <<'PY'
import heapq, sys
arcs = [tuple(map(int, l.split()[1:])) for l in open(sys.argv[1]) if l.startswith('a ')]
def dist(arcs, s, t):
    adj = {}
    for u, v, w in arcs: adj.setdefault(u, []).append((v, w))
    d = {s: 0}; h = [(0, s)]; par = {}
    while h:
        du, u = heapq.heappop(h)
        if du > d[u]: continue
        for v, w in adj.get(u, []):
            if du + w < d.get(v, float('inf')): d[v] = du + w; par[v] = u; heapq.heappush(h, (du + w, v))
    path = [t]
    while path[-1] != s: path.append(par[path[-1]])
    return d[t], path[::-1]
d1, p = dist(arcs, 1, 36)
a, b = p[0], p[1]
d2, _ = dist([x for x in arcs if (x[0], x[1]) not in ((a, b), (b, a))], 1, 36)
print("%.1f %.1f" % (d1, d2))
PY
)
before=${want% *}; detour=${want#* }
if [ -n "$want" ] && grep -Eq "^[0-9]+ +36 +0\.0 +$before *$" "$out"; then
  echo "ok 7 - the route's length is Dijkstra's ($before)"
else
  echo "not ok 7 - the route's length ($before)"; sed 's/^/# /' "$out"
fi
if grep -Eq "^[0-9]+ +36 +0\.0 +$detour *$" "$out" && grep -Eq "^2 *$" "$out"; then
  echo "ok 8 - closing the first street (both ways) gives Dijkstra's detour ($detour)"
else
  echo "not ok 8 - the detour ($detour)"; sed 's/^/# /' "$out"
fi
if [ "$(tail -1 "$out" | tr -d ' ')" = "$before" ]; then
  echo "ok 9 - reopened, the route is as long as before"
else
  echo "not ok 9 - reopened"; tail -3 "$out" | sed 's/^/# /'
fi
if "$SQLITE3_SHELL" -bail < "$DYNG_SRCDIR/examples/triggers.sql" > "$out" 2>&1 &&
   [ "$(grep -E '^(30|14)\.0$' "$out" | tr '\n' ' ')" = "30.0 14.0 14.0 " ] &&
   grep -q '^1 -> 3 -> 5 -> 4$' "$out"; then
  echo "ok 10 - triggers.sql: a writer without dyng, the graph follows, a rollback changes nothing"
else
  echo "not ok 10 - triggers.sql"; sed 's/^/# /' "$out"
fi
# examples/limits.sql fails two statements on purpose (the shell then
# exits with 1): each error names its budget, and the graph answers again
# once the budget is lifted (300,000 junctions; the shortcut costs 1).
"$SQLITE3_SHELL" < "$DYNG_SRCDIR/examples/limits.sql" > "$out" 2>&1
if grep -q "dyng_sssp: stopped after .* over this connection's max_ms budget of 1 ms" "$out" &&
   grep -q "graph 'net' needs .* MiB or more, over this connection's max_graph_mb budget of 1.0 MiB" "$out"; then
  echo "ok 11 - limits.sql: max_ms and max_graph_mb stop a query with errors naming them"
else
  echo "not ok 11 - limits.sql: the budgets' errors"; sed 's/^/# /' "$out"
fi
if [ "$(grep -cE '^Runtime error' "$out")" = 2 ] && grep -qx 300000 "$out" && [ "$(tail -1 "$out")" = 1.0 ]; then
  echo "ok 12 - limits.sql: lifted, the budgets leave correct answers"
else
  echo "not ok 12 - limits.sql: the answers"; sed 's/^/# /' "$out"
fi
fi
# A binding's example (tests N and N+1): runs `$2 $3 path/to/dyng` and
# checks the routes the quickstart's roads give (7 by length, 5 by minutes,
# 10 after the closure), and that dyng_update reports the one road reopened
# after them as one batch of one inserted edge.  $1: the first test number;
# $4: its name.
binding_example() {
  cd "$DYNG_BUILDDIR" || exit 1
  if "$2" "$3" "$DYNG_BUILDDIR/.libs/dyng" > "$out" 2>&1; then
    echo "ok $1 - $4 runs"
  else
    echo "not ok $1 - $4 runs"; sed 's/^/# /' "$out"
  fi
  if grep -q '^route 1 -> 4 by length: 1 2 3 4 cost 7.0$' "$out" && grep -q '^route 1 -> 4 by minutes: 1 3 4 cost 5.0$' "$out" &&
     grep -q '^after closing 3 -> 4: 1 2 4 cost 10.0$' "$out" &&
     grep -q '^dyng_update: batches applied 1, edges inserted 1$' "$out"; then
    echo "ok $(($1 + 1)) - $4's routes (7 by length, 5 by minutes, 10 after the closure) and dyng_update's report"
  else
    echo "not ok $(($1 + 1)) - $4's routes"; sed 's/^/# /' "$out"
  fi
}

# examples/python/example.py, with a Python that can load extensions.
py=${PYTHON_WITH_EXTENSIONS:-/usr/bin/python3}
if [ "${DYNG_ASAN:-no}" = yes ] || ! "$py" -c 'import sqlite3; sqlite3.connect(":memory:").enable_load_extension' 2>/dev/null; then
  echo "ok 13 # SKIP no Python that can load extensions here (or a sanitized build)"
  echo "ok 14 # SKIP no Python that can load extensions here (or a sanitized build)"
else
  binding_example 13 "$py" "$DYNG_SRCDIR/examples/python/example.py" "examples/python/example.py"
fi
# examples/node/example.js, with a Node.js that has the sqlite3 package:
# $DYNG_NODE, the system's, or the one .ci/node-debian.sh unpacked.
node=""
for n in "${DYNG_NODE:-}" node "${XDG_CACHE_HOME:-$HOME/.cache}/dyng/node-debian/node"; do
  if [ -n "$n" ] && "$n" -e 'require("sqlite3")' >/dev/null 2>&1; then node=$n; break; fi
done
if [ "${DYNG_ASAN:-no}" = yes ] || [ -z "$node" ]; then
  echo "ok 15 # SKIP no Node.js with the sqlite3 package here (or a sanitized build)"
  echo "ok 16 # SKIP no Node.js with the sqlite3 package here (or a sanitized build)"
else
  binding_example 15 "$node" "$DYNG_SRCDIR/examples/node/example.js" "examples/node/example.js (Node.js $("$node" --version))"
fi
