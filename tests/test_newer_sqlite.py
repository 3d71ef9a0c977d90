# tests/test_newer_sqlite.py: dyng loaded into a second, newer SQLite (the
# one APSW bundles), where interrupts are read with sqlite3_is_interrupted
# (SQLite 3.41 and later) instead of the probe statement the system SQLite
# needs.  Answers are checked against a Dijkstra written here, a planted
# CHECK constraint cannot run dyng_config or dyng_update, the
# system SQLite of the same process is refused a second load, and a graph
# is removed with plain SQL by a connection that never loads dyng.  Skipped
# when APSW, or an APSW with SQLite 3.41 or later, is not importable (.ci/run
# fetches one from PyPI; PYTHONPATH points at it).
import heapq
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ext = os.environ.get("DYNG_EXTENSION", "")


def skip_all(why):
    print("1..0 # SKIP " + why)
    sys.exit(0)


if os.environ.get("DYNG_ASAN") == "yes":
    skip_all("APSW's SQLite is not built with the sanitizers")
try:
    import apsw
except ImportError:
    skip_all("APSW is not installed (pip install apsw, or PYTHONPATH to it)")
if tuple(map(int, apsw.sqlitelibversion().split(".")[:3])) < (3, 41, 0):
    skip_all("APSW's SQLite %s predates sqlite3_is_interrupted" % apsw.sqlitelibversion())

results = []


def check(name, ok, detail=""):
    results.append((name, ok, detail))


def connect():
    c = apsw.Connection(":memory:")
    c.enable_load_extension(True)
    c.load_extension(ext)
    return c


def one(c, sql):
    return c.execute(sql).fetchone()[0]


c = connect()
check("interrupts are read with sqlite3_is_interrupted",
      one(c, "SELECT dyng_config('interrupt_check')") == '"sqlite3_is_interrupted"',
      one(c, "SELECT dyng_config('interrupt_check')"))

# A complete graph on 40 nodes: its 10-cycles take hours to count.
c.execute("CREATE TABLE k(src INTEGER, dst INTEGER);"
          "WITH n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)"
          "  INSERT INTO k SELECT a.i, b.i FROM n a, n b WHERE a.i < b.i;"
          "CREATE VIRTUAL TABLE kg USING dyng(edges=k, directed=0)")
# Level i of this graph offers (2^i, 0) or (0, 2^i): 2^40 Pareto paths.
c.execute("CREATE TABLE f(src INTEGER, dst INTEGER, a REAL, b REAL);"
          "WITH RECURSIVE l(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM l WHERE i < 39)"
          "  INSERT INTO f SELECT 2 * i, 2 * i + 1, 1 << i, 0 FROM l"
          "  UNION ALL SELECT 2 * i, 2 * i + 1, 0, 1 << i FROM l"
          "  UNION ALL SELECT 2 * i + 1, 2 * i + 2, 0, 0 FROM l;"
          "CREATE VIRTUAL TABLE pf USING dyng(edges=f, weights='a,b')")
for what, sql in (("cycle count", "SELECT dyng_cycle_count('kg', 10)"),
                  ("Pareto front", "SELECT count(*) FROM dyng_pareto('pf', 0, 80, 1000000000000)")):
    timer = threading.Timer(0.2, c.interrupt)
    timer.start()
    t0 = time.monotonic()
    try:
        c.execute(sql).fetchall()
        check("a long %s stops when interrupted" % what, False, "it finished")
    except apsw.InterruptError:
        check("a long %s stops when interrupted" % what, True, "%.2f s" % (time.monotonic() - t0))
    timer.join()

one(c, "SELECT dyng_config('max_ms', 30)")
try:
    one(c, "SELECT dyng_cycle_count('kg', 10)")
    check("max_ms stops a long count", False, "it finished")
except apsw.SQLError as e:
    check("max_ms stops a long count", "max_ms budget of 30 ms" in str(e), str(e))
one(c, "SELECT dyng_config('max_ms', 0)")
check("the connection answers afterwards", one(c, "SELECT dyng_cycle_count('kg', 3)") == 9880)

# A table planted with CHECK constraints that call dyng_config(key, value)
# and dyng_update (made here with stand-ins of those names).  When dyng is
# loaded before the schema is read, this SQLite refuses the schema itself;
# when the schema was read first (dyng loaded later, as an application may
# do), SQLite runs the CHECK, and dyng refuses the calls.
planted = os.path.join(os.environ.get("TMPDIR", "/tmp"), "dyng-planted-%d.db" % os.getpid())
if os.path.exists(planted):
    os.remove(planted)
p = apsw.Connection(planted)
p.create_scalar_function("dyng_config", lambda *a: 1)
p.create_scalar_function("dyng_update", lambda *a: 1)
p.execute("CREATE TABLE c(x CHECK (dyng_config('max_ms', 7) IS NOT NULL));"
          "CREATE TABLE u(x CHECK (dyng_update('g') IS NOT NULL))")
p.close()


def victim(load_first):
    v = apsw.Connection(planted)
    v.enable_load_extension(True)
    v.execute("PRAGMA trusted_schema = OFF")
    if load_first:
        v.load_extension(ext)
    else:
        v.execute("SELECT count(*) FROM sqlite_master").fetchall()
        v.load_extension(ext)
    return v


v = victim(True)
try:
    v.execute("INSERT INTO c VALUES (1)")
    check("dyng loaded first: SQLite refuses the planted schema", False, "the INSERT ran")
except apsw.Error as e:
    check("dyng loaded first: SQLite refuses the planted schema", "unsafe use of dyng_config()" in str(e), str(e))
v.close()
v = victim(False)
for table, func in (("c", "dyng_config"), ("u", "dyng_update")):
    try:
        v.execute("INSERT INTO %s VALUES (1)" % table)
        check("schema read first: dyng refuses %s() from a CHECK" % func, False, "the INSERT ran")
    except apsw.SQLError as e:
        check("schema read first: dyng refuses %s() from a CHECK" % func,
              "unsafe use of %s(): only top-level SQL" % func in str(e), str(e))
check("the setting is unchanged", one(v, "SELECT dyng_config('max_ms')") == "null")
v.close()
os.remove(planted)

# A random graph, against a Dijkstra written here.
rng = random.Random(int(os.environ.get("DYNG_TEST_SEED", "20261129")))
edges = [(rng.randrange(300), rng.randrange(300), rng.randrange(1, 50)) for _ in range(1500)]
c.execute("CREATE TABLE e(src INTEGER, dst INTEGER, w REAL)")
c.executemany("INSERT INTO e VALUES (?, ?, ?)", edges)
c.execute("CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w)")
adj = {}
for a, b, w in edges:
    adj.setdefault(a, []).append((b, w))
dist = {0: 0.0}
heap = [(0.0, 0)]
while heap:
    d, u = heapq.heappop(heap)
    if d > dist[u]:
        continue
    for v, w in adj.get(u, []):
        if d + w < dist.get(v, float("inf")):
            dist[v] = d + w
            heapq.heappush(heap, (d + w, v))
got = [tuple(r) for r in c.execute("SELECT node, dist FROM dyng_sssp('g', 0) ORDER BY node").fetchall()]
check("dyng_sssp gives the Dijkstra's distances", got == sorted(dist.items()),
      "%d / %d rows" % (len(got), len(dist)))

# The system SQLite of this same process cannot load dyng now: dyng calls
# SQLite through the first library's routines.
s = sqlite3.connect(":memory:")
s.enable_load_extension(True)
try:
    s.load_extension(ext)
    check("a second SQLite library is refused", False, "it loaded")
except sqlite3.OperationalError as e:
    check("a second SQLite library is refused", "another SQLite library" in str(e), str(e))

# A graph removed by a connection that never loads dyng, with the plain SQL
# of docs/sql.md ("Removing a graph without dyng"), read from the doc: DROP
# TABLE needs the module on this SQLite too, and the SQL must take the
# graph however its definition spells the module name, and leave another
# module's table named like it.
def doc_removal_sql():
    srcdir = os.environ.get("DYNG_SRCDIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(srcdir, "docs", "sql.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("### Removing a graph without dyng"):]
    block = section[section.index("```sql\n") + len("```sql\n"):]
    return block[:block.index("\n```")]


removal = doc_removal_sql()
for definition, takes in [("CREATE VIRTUAL TABLE net USING dyng(edges=e, weights=w)", True),
                          ("CREATE VIRTUAL TABLE \"net\"\n  using/* dyng */DYNG (edges=e, weights=w)", True),
                          ("CREATE VIRTUAL TABLE net USING fts5(\"USING dyng\")", False)]:
    path = tempfile.mktemp(prefix="dyng-drop-", suffix=".db")
    w = apsw.Connection(path)
    w.enable_load_extension(True)
    w.load_extension(ext)
    w.execute("CREATE TABLE e(src INTEGER NOT NULL, dst INTEGER NOT NULL, w REAL, UNIQUE(src, dst));"
              "INSERT INTO e VALUES (1, 2, 1), (2, 3, 2);" + definition)
    w.close()
    p = apsw.Connection(path)
    if takes:
        try:
            p.execute("DROP TABLE net")
            check("DROP TABLE of a graph needs dyng", False, "it dropped")
        except apsw.SQLError as e:
            check("DROP TABLE of a graph needs dyng", "no such module: dyng" in str(e).lower(), str(e))
    p.execute(removal)
    names = [r[0] for r in p.execute("SELECT name FROM sqlite_master ORDER BY name")]
    if takes:
        p.execute("INSERT INTO e VALUES (3, 4, -1)")
    p.close()
    p = apsw.Connection(path)
    if takes:
        check("plain SQL removes the graph without dyng: %r" % definition,
              names == ["e", "sqlite_autoindex_e_1"] and one(p, "PRAGMA integrity_check") == "ok"
              and one(p, "SELECT count(*) FROM e") == 3, repr(names))
    else:
        check("plain SQL leaves another module's table: %r" % definition,
              [r[0] for r in p.execute("SELECT sql FROM sqlite_master WHERE name = 'net'")] == [definition],
              repr(names))
    p.close()
    os.unlink(path)

print("1..%d" % len(results))
print("# SQLite %s (APSW %s) next to the system's %s" % (apsw.sqlitelibversion(), apsw.apswversion(),
                                                        sqlite3.sqlite_version))
for i, (name, ok, detail) in enumerate(results, 1):
    print("%s %d - %s%s" % ("ok" if ok else "not ok", i, name, " # " + detail if detail else ""))
sys.exit(0 if all(ok for _, ok, _ in results) else 1)
