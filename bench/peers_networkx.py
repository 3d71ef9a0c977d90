#!/usr/bin/env python3
"""bench/peers_networkx.py: NetworkX's side of bench/bench_peers.

    peers_networkx.py EDGES.tsv SOURCE TARGET DEL_SRC DEL_DST

EDGES.tsv holds "src<TAB>dst<TAB>weight" lines (a directed graph).  Prints
one JSON object: the times in ms of building the graph, Dijkstra from SOURCE
to all, SOURCE to TARGET, and, after removing the edges DEL_SRC -> DEL_DST,
rebuilding and asking SOURCE to TARGET again; with the answers (nodes
reached, the sum of their distances, the two point-to-point distances).
"""
import json
import sys
import time

import networkx as nx


def load(path, skip=None):
    g = nx.DiGraph()
    with open(path) as f:
        for line in f:
            u, v, w = line.split("\t")
            u, v, w = int(u), int(v), float(w)
            if skip and (u, v) == skip:
                continue
            # Parallel edges: the cheapest, as shortest paths use it.
            if g.has_edge(u, v) and g[u][v]["weight"] <= w:
                continue
            g.add_edge(u, v, weight=w)
    return g


def main():
    path, s, t, du, dv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    out = {}
    t0 = time.perf_counter()
    g = load(path)
    out["load_ms"] = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    d = nx.single_source_dijkstra_path_length(g, s, weight="weight")
    out["sssp_ms"] = (time.perf_counter() - t0) * 1e3
    out["reached"] = len(d)
    out["sum"] = sum(d.values())
    t0 = time.perf_counter()
    out["p2p"] = nx.dijkstra_path_length(g, s, t, weight="weight")
    out["p2p_ms"] = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    g = load(path, skip=(du, dv))
    try:
        out["after"] = nx.dijkstra_path_length(g, s, t, weight="weight")
    except nx.NetworkXNoPath:
        out["after"] = None
    out["update_ms"] = (time.perf_counter() - t0) * 1e3
    print(json.dumps(out))


main()
