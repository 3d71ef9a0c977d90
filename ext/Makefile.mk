# ext/: the SQLite face of dyng, built as the loadable module dyng.so.
lib_LTLIBRARIES += dyng.la
dyng_la_SOURCES = \
	ext/dyng.c ext/dyng_ext.h \
	ext/util.c \
	ext/error.c \
	ext/update.c \
	ext/graph_vtab.c \
	ext/edge_table.c \
	ext/options.c \
	ext/capture.c \
	ext/sync.c \
	ext/cache.c \
	ext/cycles.c \
	ext/sssp_vtab.c \
	ext/matrix.c \
	ext/config.c \
	ext/backends.c \
	ext/read_edges.c \
	ext/watch.c
nodist_dyng_la_SOURCES = sql/capture.sql.h sql/replace.sql.h
dyng_la_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS) -fvisibility=hidden
# -z nodelete: SQLite unloads an extension when the connection that loaded
# it closes, and the engine's idle threads (engine/parallel.c) would then
# run unmapped code.  dyng.so stays once loaded.
dyng_la_LDFLAGS = $(AM_LDFLAGS) -module -avoid-version -shared -no-undefined \
	-Wl,-z,nodelete -export-symbols-regex '^sqlite3_dyng_init$$'
dyng_la_LIBADD = engine/libdyngengine.la $(JANSSON_LIBS) $(ZLIB_LIBS) -lm

# `.load ./dyng` in the build folder finds the module next to the sources'
# build, not only in .libs/.
all-local: dyng.so
dyng.so: dyng.la
	$(AM_V_GEN)rm -f $@ && cp .libs/dyng.so $@
CLEANFILES += dyng.so

# dyng.so is a module, not a library: no .la file is installed.  With
# ./configure --prefix=/usr it lands in /usr/lib, one of the folders
# dlopen() searches, so `.load dyng` finds it by name (docs/sql.md).
install-exec-hook:
	rm -f $(DESTDIR)$(libdir)/dyng.la
uninstall-hook:
	rm -f $(DESTDIR)$(libdir)/dyng.so
