# engine/: pure C, no SQLite.  Built once as a convenience library that
# dyng.la and the unit tests link.
noinst_LTLIBRARIES += engine/libdyngengine.la
engine_libdyngengine_la_SOURCES = \
	engine/alloc.c engine/alloc.h \
	engine/error.c engine/error.h engine/errcode.h \
	engine/idmap.c engine/idmap.h \
	engine/graph.c engine/graph.h \
	engine/graph_apply.c engine/graph_internal.h \
	engine/loader.c engine/loader.h \
	engine/sssp.c engine/sssp.h engine/sssp_dyn.c engine/sssp_par.c engine/sssp_tie.h engine/radix_heap.h \
	engine/mosp.c engine/mosp.h engine/pareto.c engine/pareto.h \
	engine/cycles.c engine/cycles.h \
	engine/parallel.c engine/parallel.h \
	engine/mirror.c engine/mirror.h \
	engine/route.c engine/route.h \
	engine/backend_cpu.c engine/backend.h engine/plugin.h \
	engine/choice.c engine/choice.h \
	engine/types.h
engine_libdyngengine_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
engine_libdyngengine_la_LIBADD = -lm
