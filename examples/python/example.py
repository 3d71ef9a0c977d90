#!/usr/bin/env python3
"""examples/python/example.py: dyng from Python's sqlite3 module.

    python3 examples/python/example.py [path/to/dyng]

With a path, loads that build of dyng; without one, the installed Python
package (`pip install dyng`: dyng.load(con)), else ./dyng.  Some Python
builds leave out enable_load_extension; Debian's /usr/bin/python3 has it.
The graph is the quickstart's five roads.
"""
import json
import sqlite3
import sys

con = sqlite3.connect(":memory:")
if not hasattr(con, "enable_load_extension"):
    sys.exit("this Python's sqlite3 cannot load extensions; try /usr/bin/python3")
try:
    import dyng
except ImportError:
    dyng = None
if len(sys.argv) > 1 or dyng is None:
    con.enable_load_extension(True)
    con.load_extension(sys.argv[1] if len(sys.argv) > 1 else "./dyng")
    con.enable_load_extension(False)  # only dyng, nothing a query could name
else:
    dyng.load(con)  # switches extension loading on for the load only
    print("dyng", dyng.__version__, "from", dyng.loadable_path())

con.executescript("""
    CREATE TABLE roads(src INTEGER NOT NULL, dst INTEGER NOT NULL, length REAL, minutes REAL);
    INSERT INTO roads VALUES (1,2,4,5),(2,3,1,9),(1,3,7,3),(3,4,2,2),(2,4,6,1);
    CREATE VIRTUAL TABLE net USING dyng(edges=roads, weights='length,minutes');
""")


def route(src, dst, weight="length"):
    rows = con.execute("SELECT node, agg_cost FROM dyng_path('net', ?, ?, ?) ORDER BY seq",
                       (src, dst, weight)).fetchall()
    return [n for n, _ in rows], (rows[-1][1] if rows else None)


nodes, cost = route(1, 4)
print("route 1 -> 4 by length:", " ".join(map(str, nodes)), "cost", cost)
nodes, cost = route(1, 4, "minutes")
print("route 1 -> 4 by minutes:", " ".join(map(str, nodes)), "cost", cost)

# Close a road: the next query sees it, through the kept tree.
con.execute("DELETE FROM roads WHERE src = 3 AND dst = 4")
nodes, cost = route(1, 4)
print("after closing 3 -> 4:", " ".join(map(str, nodes)), "cost", cost)

# Reopen it, and apply the change now instead of at the next query.
con.execute("INSERT INTO roads VALUES (3, 4, 2, 2)")
report = json.loads(con.execute("SELECT dyng_update('net')").fetchone()[0])
print("dyng_update: batches applied %d, edges inserted %d" % (report["batches"], report["inserted"]))
config = json.loads(con.execute("SELECT dyng_config()").fetchone()[0])
print("backend:", config["backend"]["name"], "-", config["graphs"][0]["edges"], "edges")
