# sql/: SQL the extension installs, embedded into dyng.so as C strings.
# Each .sql file becomes a header of string-literal lines (comment lines
# dropped) that ext/ includes.
SQL_TEMPLATES = sql/capture.sql sql/replace.sql
EXTRA_DIST += $(SQL_TEMPLATES)
BUILT_SOURCES += sql/capture.sql.h sql/replace.sql.h
CLEANFILES += sql/capture.sql.h sql/replace.sql.h

SQL_TO_C = $(SED) -e '/^[ 	]*--/d' -e '/^[ 	]*$$/d' \
	-e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'
sql/capture.sql.h: $(srcdir)/sql/capture.sql
	$(AM_V_GEN)$(MKDIR_P) sql && $(SQL_TO_C) $(srcdir)/sql/capture.sql > $@.tmp && mv $@.tmp $@
sql/replace.sql.h: $(srcdir)/sql/replace.sql
	$(AM_V_GEN)$(MKDIR_P) sql && $(SQL_TO_C) $(srcdir)/sql/replace.sql > $@.tmp && mv $@.tmp $@
