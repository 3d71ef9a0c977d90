# tests/: cmocka unit tests of the engine, SQL-level tests through the real
# extension, the Python binding smoke test, the runnable examples and the
# examples of the docs.  Every test speaks TAP; `make check` runs them all.

TEST_EXTENSIONS = .py .sh
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
PY_LOG_DRIVER = $(LOG_DRIVER)
SH_LOG_DRIVER = $(LOG_DRIVER)
PY_LOG_COMPILER = $(PYTHON_WITH_EXTENSIONS)
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	CMOCKA_MESSAGE_OUTPUT=TAP; export CMOCKA_MESSAGE_OUTPUT; \
	DYNG_EXTENSION='$(abs_top_builddir)/.libs/dyng.so'; export DYNG_EXTENSION; \
	DYNG_DATA_DIR='$(abs_top_srcdir)/../shared/data'; export DYNG_DATA_DIR; \
	DYNG_SRCDIR='$(abs_top_srcdir)'; export DYNG_SRCDIR; \
	DYNG_BUILDDIR='$(abs_top_builddir)'; export DYNG_BUILDDIR; \
	SQLITE3_SHELL='$(SQLITE3_SHELL)'; export SQLITE3_SHELL; \
	DYNG_ASAN='$(enable_asan)'; export DYNG_ASAN; \
	DYNG_TSAN='$(enable_tsan)'; export DYNG_TSAN; \
	CC='$(CC)'; export CC;

if ENABLE_VALGRIND
LOG_COMPILER = $(VALGRIND) --error-exitcode=99 --leak-check=full \
	--suppressions=$(top_srcdir)/tests/valgrind.supp \
	--errors-for-leak-kinds=definite,indirect,possible --show-leak-kinds=definite,indirect,possible -q
endif

EXTRA_DIST += tests/test_python.py tests/test_newer_sqlite.py tests/test_examples.sh tests/test_docs.py \
	tests/test_util.h tests/valgrind.supp

if HAVE_CMOCKA
UNIT_TESTS = tests/test_idmap tests/test_graph tests/test_apply tests/test_sssp tests/test_sssp_dyn tests/test_route tests/test_alloc tests/test_cycles \
	tests/test_mirror tests/test_choice tests/test_loader tests/test_parallel tests/test_mosp tests/test_pareto tests/test_abi
SQL_TESTS = tests/test_sql tests/test_sync_model tests/test_sync_txn tests/test_backends tests/test_gpu tests/test_read_edges \
	tests/test_threads tests/test_oom tests/test_ident tests/test_schema tests/test_same_answer \
	tests/test_edges tests/test_routes
check_PROGRAMS += $(UNIT_TESTS) $(SQL_TESTS) tests/backend_probe
TESTS += $(UNIT_TESTS) $(SQL_TESTS)
endif
TESTS += tests/test_python.py tests/test_newer_sqlite.py tests/test_examples.sh
# The layers: includes and calls only go down (engine/ never reaches ext/).
TESTS += tests/test_layers.sh
EXTRA_DIST += tests/test_layers.sh
# The examples of docs/sql.md and README.md against what they show.
TESTS += tests/test_docs.py
# The comments' references to other files ("dyngGraphSync in sync.c") hold.
TESTS += tests/test_comment_refs.py
EXTRA_DIST += tests/test_comment_refs.py
# configure's summary names each CUDA plugin line, built or not and why.
TESTS += tests/test_configure_summary.sh
EXTRA_DIST += tests/test_configure_summary.sh
# `make wheels`' packages installed into fresh venvs (skipped without them).
TESTS += tests/test_wheels.py
EXTRA_DIST += tests/test_wheels.py

UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -DDYNG_TEST
UNIT_LDADD = engine/libdyngengine.la $(CMOCKA_LIBS) -lm

tests_test_idmap_SOURCES = tests/test_idmap.c tests/test_util.h
tests_test_idmap_CFLAGS = $(UNIT_CFLAGS)
tests_test_idmap_LDADD = $(UNIT_LDADD)

tests_test_graph_SOURCES = tests/test_graph.c tests/engine_internal.h tests/test_util.h
tests_test_graph_CFLAGS = $(UNIT_CFLAGS)
tests_test_graph_LDADD = $(UNIT_LDADD)

# The team path of dyng_graph_apply_tracked against its loop.
tests_test_apply_SOURCES = tests/test_apply.c tests/engine_internal.h tests/test_util.h
tests_test_apply_CFLAGS = $(UNIT_CFLAGS)
tests_test_apply_LDADD = $(UNIT_LDADD)

tests_test_sssp_SOURCES = tests/test_sssp.c tests/test_util.h
tests_test_sssp_CFLAGS = $(UNIT_CFLAGS)
tests_test_sssp_LDADD = $(UNIT_LDADD)

tests_test_sssp_dyn_SOURCES = tests/test_sssp_dyn.c tests/test_util.h
tests_test_sssp_dyn_CFLAGS = $(UNIT_CFLAGS)
tests_test_sssp_dyn_LDADD = $(UNIT_LDADD)
tests_test_route_SOURCES = tests/test_route.c tests/test_util.h
tests_test_route_CFLAGS = $(UNIT_CFLAGS)
tests_test_route_LDADD = $(UNIT_LDADD)

tests_test_cycles_SOURCES = tests/test_cycles.c tests/test_util.h
tests_test_cycles_CFLAGS = $(UNIT_CFLAGS)
tests_test_cycles_LDADD = $(UNIT_LDADD)

# The mirror (engine/mirror.c): apply, the CPU fallback, the tree budget.
tests_test_mirror_SOURCES = tests/test_mirror.c tests/test_util.h
tests_test_mirror_CFLAGS = $(UNIT_CFLAGS)
tests_test_mirror_LDADD = $(UNIT_LDADD)

# engine/loader.c against the graph built edge by edge.
tests_test_loader_SOURCES = tests/test_loader.c tests/engine_internal.h tests/test_util.h
tests_test_loader_CFLAGS = $(UNIT_CFLAGS)
tests_test_loader_LDADD = $(UNIT_LDADD)

# The team, the radix sort against qsort, and the fork guard.
tests_test_parallel_SOURCES = tests/test_parallel.c tests/test_util.h
tests_test_parallel_CFLAGS = $(UNIT_CFLAGS)
tests_test_parallel_LDADD = $(UNIT_LDADD)

# The MOSP ensemble path against a shortest path of the ensemble by hand.
tests_test_mosp_SOURCES = tests/test_mosp.c tests/test_util.h
tests_test_mosp_CFLAGS = $(UNIT_CFLAGS)
tests_test_mosp_LDADD = $(UNIT_LDADD)

# The Pareto front against every simple path of small graphs.
tests_test_pareto_SOURCES = tests/test_pareto.c tests/test_util.h
tests_test_pareto_CFLAGS = $(UNIT_CFLAGS)
tests_test_pareto_LDADD = $(UNIT_LDADD)

# The plugin ABI: the layout table and the pinned error numbers.
tests_test_abi_SOURCES = tests/test_abi.c tests/test_util.h
tests_test_abi_CFLAGS = $(UNIT_CFLAGS)
tests_test_abi_LDADD = $(UNIT_LDADD)

tests_test_alloc_SOURCES = tests/test_alloc.c tests/engine_internal.h tests/test_util.h
tests_test_alloc_CFLAGS = $(UNIT_CFLAGS)
tests_test_alloc_LDADD = $(UNIT_LDADD)

# The backend decision over situations filled by hand (no plugin files).
tests_test_choice_SOURCES = tests/test_choice.c tests/test_util.h
tests_test_choice_CFLAGS = $(UNIT_CFLAGS)
tests_test_choice_LDADD = $(UNIT_LDADD)

# The SQL tests load the real dyng.so into the real SQLite library.
tests_test_sql_SOURCES = tests/test_sql.c tests/sql_util.h tests/test_util.h
tests_test_sql_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_sql_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lpthread -lm
EXTRA_tests_test_sql_DEPENDENCIES = dyng.la

# A graph's identity and lifetime: a second load, ATTACH and DETACH, edited
# schemas; DYNG_IDENT_STEPS sets the length of the random ATTACH/DETACH run.
tests_test_ident_SOURCES = tests/test_ident.c tests/sql_util.h tests/test_util.h
tests_test_ident_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_ident_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_test_ident_DEPENDENCIES = dyng.la

# The edge table's schema changing under a graph, the tables a graph
# accepts, and a graph removed by a program without dyng.
tests_test_schema_SOURCES = tests/test_schema.c tests/sql_util.h tests/ref_small.h tests/test_util.h
tests_test_schema_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_schema_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lm
EXTRA_tests_test_schema_DEPENDENCIES = dyng.la
tests_test_routes_SOURCES = tests/test_routes.c tests/sql_util.h tests/test_util.h
tests_test_routes_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_routes_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lm
EXTRA_tests_test_routes_DEPENDENCIES = dyng.la
tests_test_edges_SOURCES = tests/test_edges.c tests/sql_util.h tests/test_util.h
tests_test_edges_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_edges_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lm
EXTRA_tests_test_edges_DEPENDENCIES = dyng.la

# The model-based random test of the sync; DYNG_SYNC_STEPS sets its length.
tests_test_sync_model_SOURCES = tests/test_sync_model.c tests/sql_util.h tests/test_util.h
tests_test_sync_model_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_sync_model_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lm
EXTRA_tests_test_sync_model_DEPENDENCIES = dyng.la

# REPLACE, upserts and rollbacks, and graphs queried inside write transactions.
tests_test_sync_txn_SOURCES = tests/test_sync_txn.c tests/sql_util.h tests/test_util.h
tests_test_sync_txn_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_sync_txn_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lm
EXTRA_tests_test_sync_txn_DEPENDENCIES = dyng.la

# dyng_read_edges on files of every format written by the test.
tests_test_read_edges_SOURCES = tests/test_read_edges.c tests/sql_util.h tests/test_util.h
tests_test_read_edges_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_read_edges_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lm
EXTRA_tests_test_read_edges_DEPENDENCIES = dyng.la

# One answer per table: kept, fresh and reloaded graphs, any thread count.
tests_test_same_answer_SOURCES = tests/test_same_answer.c tests/sql_util.h tests/test_util.h
tests_test_same_answer_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_same_answer_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lm
EXTRA_tests_test_same_answer_DEPENDENCIES = dyng.la

# Many connections on many threads, and fork(); DYNG_THREADS and
# DYNG_THREAD_STEPS set its size.
tests_test_threads_SOURCES = tests/test_threads.c tests/ref_small.h tests/test_util.h
tests_test_threads_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_threads_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lpthread -lm
EXTRA_tests_test_threads_DEPENDENCIES = dyng.la

# Allocation failures of SQLite and of the engine, one at a time: dyng's
# sources are linked in, so that the engine's seam can be reached.
# DYNG_OOM_RUNS caps the runs per allocator (0: every allocation).
tests_test_oom_SOURCES = tests/test_oom.c tests/ref_small.h tests/test_util.h $(dyng_la_SOURCES)
nodist_tests_test_oom_SOURCES = $(nodist_dyng_la_SOURCES)
tests_test_oom_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS)
tests_test_oom_LDADD = engine/libdyngengine.la $(SQLITE_LIBS) $(JANSSON_LIBS) $(ZLIB_LIBS) \
	$(CMOCKA_LIBS) -ldl -lpthread -lm

# CUDA against the CPU through SQL; every case skips without a usable GPU.
tests_test_gpu_SOURCES = tests/test_gpu.c tests/sql_util.h tests/test_util.h
tests_test_gpu_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(SQLITE_CFLAGS)
tests_test_gpu_LDADD = $(SQLITE_LIBS) $(CMOCKA_LIBS) -lm
EXTRA_tests_test_gpu_DEPENDENCIES = dyng.la

# Backend discovery: a probe process per scenario, with a fake driver, a
# fake NVML and fake plugins (modules that compute on the CPU).
tests_test_backends_SOURCES = tests/test_backends.c tests/test_util.h
tests_test_backends_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS)
tests_test_backends_LDADD = $(JANSSON_LIBS) $(CMOCKA_LIBS)
EXTRA_tests_test_backends_DEPENDENCIES = dyng.la tests/backend_probe $(FAKE_MODULES)

tests_backend_probe_SOURCES = tests/backend_probe.c
tests_backend_probe_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_backend_probe_LDADD = $(SQLITE_LIBS)

FAKE_MODULES = tests/fakes/libfakecuda.la tests/fakes/libfakenvml.la \
	tests/fakes/fakeplugin11.la tests/fakes/fakeplugin12.la tests/fakes/fakeplugin13.la \
	tests/fakes/fakeplugin14.la tests/fakes/fakeplugin_abi.la tests/fakes/fakeplugin_version.la \
	tests/fakes/fakeplugin_noentry.la
check_LTLIBRARIES = $(FAKE_MODULES)
FAKE_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
FAKE_PLUGIN_SOURCES = tests/fakes/fake_plugin.c
FAKE_PLUGIN_LIBADD = engine/libdyngengine.la -lm

tests_fakes_libfakecuda_la_SOURCES = tests/fakes/fake_cuda.c tests/fakes/fake_devices.h
tests_fakes_libfakecuda_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_libfakenvml_la_SOURCES = tests/fakes/fake_nvml.c tests/fakes/fake_devices.h
tests_fakes_libfakenvml_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_fakeplugin11_la_SOURCES = $(FAKE_PLUGIN_SOURCES)
tests_fakes_fakeplugin11_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -DFAKE_MAJOR=11
tests_fakes_fakeplugin11_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_fakeplugin11_la_LIBADD = $(FAKE_PLUGIN_LIBADD)
tests_fakes_fakeplugin12_la_SOURCES = $(FAKE_PLUGIN_SOURCES)
tests_fakes_fakeplugin12_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -DFAKE_MAJOR=12
tests_fakes_fakeplugin12_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_fakeplugin12_la_LIBADD = $(FAKE_PLUGIN_LIBADD)
tests_fakes_fakeplugin13_la_SOURCES = $(FAKE_PLUGIN_SOURCES)
tests_fakes_fakeplugin13_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -DFAKE_MAJOR=13
tests_fakes_fakeplugin13_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_fakeplugin13_la_LIBADD = $(FAKE_PLUGIN_LIBADD)
tests_fakes_fakeplugin14_la_SOURCES = $(FAKE_PLUGIN_SOURCES)
tests_fakes_fakeplugin14_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -DFAKE_MAJOR=14
tests_fakes_fakeplugin14_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_fakeplugin14_la_LIBADD = $(FAKE_PLUGIN_LIBADD)
tests_fakes_fakeplugin_abi_la_SOURCES = $(FAKE_PLUGIN_SOURCES)
tests_fakes_fakeplugin_abi_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -DFAKE_MAJOR=13 -DFAKE_ABI=999
tests_fakes_fakeplugin_abi_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_fakeplugin_abi_la_LIBADD = $(FAKE_PLUGIN_LIBADD)
tests_fakes_fakeplugin_version_la_SOURCES = $(FAKE_PLUGIN_SOURCES)
tests_fakes_fakeplugin_version_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -DFAKE_MAJOR=15 \
	-DFAKE_VERSION='"0.0.0-other"'
tests_fakes_fakeplugin_version_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_fakeplugin_version_la_LIBADD = $(FAKE_PLUGIN_LIBADD)
tests_fakes_fakeplugin_noentry_la_SOURCES = $(FAKE_PLUGIN_SOURCES)
tests_fakes_fakeplugin_noentry_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden -DFAKE_MAJOR=16 -DFAKE_NO_ENTRY
tests_fakes_fakeplugin_noentry_la_LDFLAGS = $(FAKE_LDFLAGS)
tests_fakes_fakeplugin_noentry_la_LIBADD = $(FAKE_PLUGIN_LIBADD)

# On a GPU machine: the GPU tests with CUDA required (a fallback to the CPU
# fails them), the SQL suites with every graph on CUDA, then test_gpu under
# compute-sanitizer's memcheck and racecheck.
# GPU_SANITIZERS picks compute-sanitizer's tools (e.g. `make check-gpu
# GPU_SUITE= GPU_SANITIZERS=racecheck` runs racecheck alone); GPU_SUITE
# empty leaves out the test programs' plain run.
GPU_SANITIZERS = memcheck racecheck
GPU_SUITE = tests/test_gpu tests/test_sql tests/test_sync_model tests/test_same_answer tests/test_backends \
	tests/test_routes
check-gpu: all $(check_PROGRAMS) $(check_LTLIBRARIES)
	@if test -n "$(GPU_SUITE)"; then \
	  DYNG_REQUIRE_CUDA=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS='$(GPU_SUITE)' || exit 1; \
	fi
	@cs=`command -v compute-sanitizer || ls $(dir $(NVCC))compute-sanitizer /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1`; \
	if test -z "$$cs"; then echo "check-gpu: no compute-sanitizer, skipped"; exit 0; fi; \
	for tool in $(GPU_SANITIZERS); do \
	  echo "check-gpu: compute-sanitizer --tool $$tool tests/test_gpu"; \
	  DYNG_REQUIRE_CUDA=1 DYNG_EXTENSION='$(abs_top_builddir)/.libs/dyng.so' \
	  DYNG_BUILDDIR='$(abs_top_builddir)' DYNG_TEST_QUICK=1 \
	  $$cs --tool $$tool --error-exitcode 1 tests/test_gpu$(EXEEXT) || exit 1; \
	done
.PHONY: check-gpu

# The C tests only, for builds whose sanitizer the Python and sqlite3-shell
# tests cannot load (ThreadSanitizer: configure CC=clang --enable-tsan;
# .ci/run shows how its OpenMP runtime is made visible to it).
check-c: all $(check_PROGRAMS) $(check_LTLIBRARIES)
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(UNIT_TESTS) $(SQL_TESTS)'
.PHONY: check-c

# Fuzzing with clang's libFuzzer (tests/fuzz/run.sh): each harness runs
# FUZZ_SECONDS (default 60); not part of make check.
FUZZ_SECONDS = 60
fuzz: all
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(SHELL) $(top_srcdir)/tests/fuzz/run.sh '$(abs_top_srcdir)' '$(abs_top_builddir)'
.PHONY: fuzz
EXTRA_DIST += tests/fuzz
