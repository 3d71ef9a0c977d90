# bench/: benchmark drivers and graph generators (not run by make check).
# `make` builds them; `make bench` generates the benchmark graphs (once)
# and runs the driver on the two large ones, then bench_sync on the grid,
# bench_dyn on both (on the grid also with local inserts) and
# bench_analyses (cycle counts on RMAT 16 and the grid, MOSP on the grid).
# See bench/README.md.

noinst_PROGRAMS += bench/gen_graph bench/bench_graph bench/bench_sync bench/bench_dyn \
	bench/bench_analyses bench/bench_gpu bench/bench_gpu_cycles bench/bench_read bench/bench_peers \
	bench/cycle_work bench/bench_routing bench/bench_busy

bench_gen_graph_SOURCES = bench/gen_graph.c
bench_gen_graph_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_gen_graph_LDADD = $(SQLITE_LIBS)

bench_bench_graph_SOURCES = bench/bench_graph.c bench/bench_util.c bench/bench_util.h
bench_bench_graph_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_graph_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_bench_sync_SOURCES = bench/bench_sync.c bench/bench_util.c bench/bench_util.h
bench_bench_sync_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_sync_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_bench_dyn_SOURCES = bench/bench_dyn.c bench/bench_util.c bench/bench_util.h
bench_bench_dyn_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_dyn_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_bench_analyses_SOURCES = bench/bench_analyses.c bench/bench_util.c bench/bench_util.h
bench_bench_analyses_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_analyses_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_bench_gpu_SOURCES = bench/bench_gpu.c bench/bench_util.c bench/bench_util.h
bench_bench_gpu_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_gpu_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_bench_gpu_cycles_SOURCES = bench/bench_gpu_cycles.c bench/bench_util.c bench/bench_util.h
bench_bench_gpu_cycles_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_gpu_cycles_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_bench_routing_SOURCES = bench/bench_routing.c bench/bench_util.c bench/bench_util.h
bench_bench_routing_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_routing_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm
bench_bench_busy_SOURCES = bench/bench_busy.c bench/bench_util.c bench/bench_util.h
bench_bench_busy_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_busy_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_cycle_work_SOURCES = bench/cycle_work.c bench/bench_util.c bench/bench_util.h
bench_cycle_work_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_cycle_work_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_bench_read_SOURCES = bench/bench_read.c bench/bench_util.c bench/bench_util.h
bench_bench_read_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_read_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) -lm

bench_bench_peers_SOURCES = bench/bench_peers.c bench/bench_util.c bench/bench_util.h
bench_bench_peers_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(IGRAPH_CFLAGS)
bench_bench_peers_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) $(IGRAPH_LIBS) -lm

EXTRA_DIST += bench/README.md bench/peers_networkx.py bench/peers_routing.py bench/plot.sh bench/results/bench.csv

BENCH_RUNS = 5
BENCH_NSOURCES = 4
BENCH_DBS = bench/grid1000.db bench/rmat20.db
BENCH_DRIVER = bench/bench_graph$(EXEEXT) --runs $(BENCH_RUNS) --sources $(BENCH_NSOURCES) \
	--extension $(abs_top_builddir)/.libs/dyng.so
BENCH_SYNC = bench/bench_sync$(EXEEXT) --runs $(BENCH_RUNS) \
	--extension $(abs_top_builddir)/.libs/dyng.so
BENCH_DYN = bench/bench_dyn$(EXEEXT) --runs $(BENCH_RUNS)
BENCH_ANALYSES = bench/bench_analyses$(EXEEXT)

# Generated only when missing (order-only on the generator), into a temporary
# name first so that an interrupted run leaves nothing half-written.
bench/grid1000.db: | bench/gen_graph$(EXEEXT)
	$(AM_V_GEN)rm -f $@.tmp && bench/gen_graph$(EXEEXT) grid 1000 1000 $@.tmp && mv $@.tmp $@
bench/rmat20.db: | bench/gen_graph$(EXEEXT)
	$(AM_V_GEN)rm -f $@.tmp && bench/gen_graph$(EXEEXT) rmat 20 $@.tmp && mv $@.tmp $@
bench/rmat16.db: | bench/gen_graph$(EXEEXT)
	$(AM_V_GEN)rm -f $@.tmp && bench/gen_graph$(EXEEXT) rmat 16 $@.tmp && mv $@.tmp $@

bench: bench/bench_graph$(EXEEXT) bench/bench_sync$(EXEEXT) bench/bench_dyn$(EXEEXT) \
		bench/bench_analyses$(EXEEXT) dyng.la $(BENCH_DBS) bench/rmat16.db
	$(BENCH_DRIVER) bench/grid1000.db
	$(BENCH_DRIVER) bench/rmat20.db
	$(BENCH_SYNC) bench/grid1000.db
	$(BENCH_DYN) bench/grid1000.db
	$(BENCH_DYN) bench/grid1000.db --inserts local
	$(BENCH_DYN) bench/rmat20.db
	$(BENCH_ANALYSES) cycles bench/rmat16.db --runs $(BENCH_RUNS)
	$(BENCH_ANALYSES) cycles bench/grid1000.db --counts 3,4 --runs $(BENCH_RUNS)
	$(BENCH_ANALYSES) mosp bench/grid1000.db --runs $(BENCH_RUNS)
.PHONY: bench

CLEANFILES += $(BENCH_DBS) bench/rmat16.db bench/grid1000.db.tmp bench/rmat20.db.tmp \
	bench/rmat16.db.tmp
