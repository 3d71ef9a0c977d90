# tests/test_python.py: loads dyng from Python's sqlite3 module and checks
# dyng_sssp and dyng_path against a Dijkstra written here (TAP output).
# Needs a Python whose sqlite3 allows enable_load_extension (Debian's
# /usr/bin/python3 does); otherwise the test is skipped.
import heapq
import os
import random
import sqlite3
import subprocess
import sys

ext = os.environ.get("DYNG_EXTENSION", "")


def skip_all(why):
    print("1..0 # SKIP " + why)
    sys.exit(0)


if os.environ.get("DYNG_ASAN") == "yes" and "DYNG_PY_PRELOADED" not in os.environ:
    # A sanitized dyng.so can only be loaded into a process that starts with
    # the sanitizer runtime: re-run this script with it preloaded.
    cc = os.environ.get("CC", "cc").split()[0]
    lib = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    env = dict(os.environ, LD_PRELOAD=lib, ASAN_OPTIONS="detect_leaks=0", DYNG_PY_PRELOADED="1")
    sys.exit(subprocess.call([sys.executable] + sys.argv, env=env))

con = sqlite3.connect(":memory:")
if not hasattr(con, "enable_load_extension"):
    skip_all("this Python's sqlite3 cannot load extensions")
con.enable_load_extension(True)
con.load_extension(ext)

tests = []


def test(fn):
    tests.append(fn)
    return fn


def dijkstra(edges, source, directed):
    adj = {}
    for rowid, s, d, w in edges:
        adj.setdefault(s, []).append((d, w))
        if not directed:
            adj.setdefault(d, []).append((s, w))
    dist = {source: 0.0}
    heap = [(0.0, source)]
    while heap:
        du, u = heapq.heappop(heap)
        if du > dist[u]:
            continue
        for v, w in adj.get(u, []):
            if du + w < dist.get(v, float("inf")):
                dist[v] = du + w
                heapq.heappush(heap, (du + w, v))
    return dist


@test
def version_and_config():
    v = con.execute("SELECT dyng_version()").fetchone()[0]
    assert v and v[0].isdigit(), v
    backend = con.execute("SELECT json_extract(dyng_config(), '$.backend.name')").fetchone()[0]
    # The CPU, or a CUDA plugin where a GPU is usable.
    assert backend == "cpu" or backend.startswith("cuda"), backend


@test
def sssp_matches_dijkstra():
    rng = random.Random(11)
    con.execute("CREATE TABLE e(src INTEGER, dst INTEGER, w REAL)")
    rows = [(rng.randrange(40), rng.randrange(40), rng.randrange(1, 20)) for _ in range(150)]
    con.executemany("INSERT INTO e VALUES (?, ?, ?)", rows)
    con.execute("CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w, directed=0)")
    for rnd in range(5):
        edges = con.execute("SELECT rowid, src, dst, w FROM e").fetchall()
        source = edges[rng.randrange(len(edges))][1]
        want = dijkstra(edges, source, directed=False)
        got = {n: d for n, d in con.execute("SELECT node, dist FROM dyng_sssp('g', ?)", (source,))}
        assert got == want, (source, got, want)
        target = edges[rng.randrange(len(edges))][2]
        path = con.execute("SELECT node, agg_cost FROM dyng_path('g', ?, ?)", (source, target)).fetchall()
        if target in want:
            assert path[0][0] == source and path[-1] == (target, want[target]), path
        else:
            assert path == [], path
        con.execute("DELETE FROM e WHERE rowid IN (SELECT rowid FROM e ORDER BY random() LIMIT 10)")
        con.execute("INSERT INTO e VALUES (?, ?, ?)", (rng.randrange(40), rng.randrange(40), 3))


@test
def errors_reach_python_as_exceptions():
    try:
        con.execute("SELECT * FROM dyng_sssp('nope', 1)").fetchall()
    except sqlite3.OperationalError as e:
        assert "no graph named 'nope'" in str(e), e
    else:
        raise AssertionError("no error")
    try:
        con.execute("INSERT INTO e VALUES (1, 2, -1)")
    except sqlite3.IntegrityError as e:
        assert "e.w" in str(e), e
    else:
        raise AssertionError("negative weight accepted")


print("1..%d" % len(tests))
failed = 0
for i, fn in enumerate(tests, 1):
    try:
        fn()
        print("ok %d - %s" % (i, fn.__name__))
    except Exception as e:  # report every failure, keep going
        failed += 1
        print("not ok %d - %s: %r" % (i, fn.__name__, e))
con.close()
sys.exit(1 if failed else 0)
