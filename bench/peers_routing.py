#!/usr/bin/env python3
# bench/peers_routing.py: dyng's routes beside RoutingKit's CCH
# (pyroutingkit) and NetworKit, in one process, on the same grid.
#
#   python3 bench/peers_routing.py GRID.db --cols C [--extension ./dyng.so] [--pairs 20]
#
# GRID.db is a bench/gen_graph grid (edges(src, dst, length, ...), node
# r*C + c); the peers need `pip install pyroutingkit networkit numpy` and
# are skipped, with the reason, when missing (dyng alone then runs).  The
# same random pairs, near pairs (five columns apart), 1,000 weight edits
# and 20 x 20 matrix go to every system; CCH gets integer weights
# (length x 1000, rounded), the grid's coordinates for its node order, and
# its preprocessing (build_topology, customize_weights) is timed apart;
# after the edits it customizes again before its query, as it must.
# Medians, milliseconds; each system's distances are checked against
# dyng's (CCH's to within its rounding).
import argparse
import random
import sqlite3
import statistics
import sys
import time


def ms(t0):
    return (time.perf_counter() - t0) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--cols", type=int, required=True)
    ap.add_argument("--extension", default="./dyng.so")
    ap.add_argument("--pairs", type=int, default=20)
    a = ap.parse_args()
    con = sqlite3.connect(":memory:")
    con.execute("ATTACH ? AS src", (a.db,))
    con.execute("CREATE TABLE edges AS SELECT rowid AS id, src, dst, length FROM src.edges")
    con.execute("DETACH src")
    con.enable_load_extension(True)
    con.load_extension(a.extension)
    con.execute("CREATE VIRTUAL TABLE g USING dyng(edges=edges, weights='length', directed=0)")
    con.execute("SELECT dyng_config('cache_mb', 0)")
    rows = con.execute("SELECT src, dst, length FROM edges ORDER BY rowid").fetchall()
    n = 1 + max(max(s, d) for s, d, _ in rows)
    rng = random.Random(7)
    pairs = [(rng.randrange(n), rng.randrange(n)) for _ in range(a.pairs)]
    near = []
    for _ in range(a.pairs):
        s = rng.randrange(n)
        near.append((s, s + 5 if s % a.cols + 5 < a.cols else s - 5))
    res = {}

    def dyng_route(s, t):
        r = con.execute("SELECT max(agg_cost) FROM dyng_path('g', ?, ?)", (s, t)).fetchone()[0]
        return float("inf") if r is None else r

    def timed(f, ps):
        out, ts = [], []
        for s, t in ps:
            t0 = time.perf_counter()
            out.append(f(s, t))
            ts.append(ms(t0))
        return out, statistics.median(ts)

    t0 = time.perf_counter()
    con.execute("SELECT count(*) FROM dyng_sssp('g', 0)").fetchone()
    res["dyng whole tree"] = ms(t0)
    dist, res["dyng route"] = timed(dyng_route, pairs)
    _, res["dyng near route"] = timed(dyng_route, near)
    edits = [(rng.randrange(len(rows)) + 1, 1 + rng.random() * 9) for _ in range(1000)]
    with con:
        con.executemany("UPDATE edges SET length = ? WHERE id = ?", [(w, i) for i, w in edits])
    t0 = time.perf_counter()
    after = dyng_route(*pairs[0])
    res["dyng route after 1,000 edits"] = ms(t0)
    srcs, dsts = [p[0] for p in pairs], [p[1] for p in pairs]
    t0 = time.perf_counter()
    con.execute("SELECT count(*) FROM dyng_matrix('g', ?, ?)", (str(srcs), str(dsts))).fetchone()
    res["dyng 20 x 20 matrix"] = ms(t0)
    rows2 = con.execute("SELECT src, dst, length FROM edges ORDER BY rowid").fetchall()

    try:
        import numpy as np
        from pyroutingkit import CCH
    except ImportError as e:
        print(f"# RoutingKit skipped: {e}", file=sys.stderr)
    else:
        tail = np.array([r[0] for r in rows] + [r[1] for r in rows], dtype=np.uint32)
        head = np.array([r[1] for r in rows] + [r[0] for r in rows], dtype=np.uint32)
        lat = np.array([v // a.cols for v in range(n)], dtype=np.float32)
        lon = np.array([v % a.cols for v in range(n)], dtype=np.float32)

        def weights(rs):
            w = [int(round(r[2] * 1000)) for r in rs]
            return np.array(w + w, dtype=np.uint32)

        cch = CCH()
        t0 = time.perf_counter()
        cch.build_topology(tail, head, lat, lon, node_count=n)
        res["CCH build (once)"] = ms(t0)
        t0 = time.perf_counter()
        cch.customize_weights(weights(rows))
        res["CCH customization"] = ms(t0)
        got, res["CCH route"] = timed(lambda s, t: cch.query(s, t)[0] / 1000.0, pairs)
        for x, y in zip(got, dist):
            if abs(x - y) > 1e-3 * max(1.0, y) + 0.001 * 200:
                sys.exit(f"CCH {x} where dyng has {y}")
        _, res["CCH near route"] = timed(lambda s, t: cch.query(s, t)[0], near)
        t0 = time.perf_counter()
        cch.customize_weights(weights(rows2))
        cch.query(*pairs[0])
        res["CCH route after 1,000 edits (customize + query)"] = ms(t0)
        t0 = time.perf_counter()
        cch.distances_many_to_many(np.array(srcs, dtype=np.uint32), np.array(dsts, dtype=np.uint32))
        res["CCH 20 x 20 matrix"] = ms(t0)

    try:
        import networkit as nk
    except ImportError as e:
        print(f"# NetworKit skipped: {e}", file=sys.stderr)
    else:
        G = nk.Graph(n, weighted=True, directed=False)
        for s, d, w in rows:
            G.addEdge(s, d, w)

        def bidij(s, t):
            b = nk.distance.BidirectionalDijkstra(G, s, t)
            b.run()
            return b.getDistance()

        got, res["NetworKit route (bidirectional)"] = timed(bidij, pairs)
        for x, y in zip(got, dist):
            if abs(x - y) > 1e-9 * max(1.0, y) and not (x > 1e300 and y == float("inf")):
                sys.exit(f"NetworKit {x} where dyng has {y}")

    print(f"{a.db}: {n} nodes, {len(rows)} edges, {a.pairs} pairs\n")
    print("| figure | median ms |\n| --- | ---: |")
    for k, v in res.items():
        print(f"| {k} | {v:.3f} |")
    for k, v in res.items():
        print(f"BENCH db={a.db} metric={k.replace(' ', '_')} unit=ms median={v:.6g}")


if __name__ == "__main__":
    main()
