# cuda/: the CUDA backend, built as the plugin dyng_cuda<MAJOR>.so, a libtool
# module installed next to dyng.so; one plugin per toolkit configure took
# (cuda/cuda.m4).  See cuda/README.md.
#
# How it works: configure lists the toolkits in DYNG_CUDA_TOOLKITS, words of
# MAJOR:RUNTIME:ARCHS:COMPILER:LIBDIR:KIND:ROOT.  `make` wants
# dyng_cuda<MAJOR>.la for each and gets it from a sub-make run with
# DYNG_CUDA_TOOLKIT=<MAJOR>, in which that toolkit's fields, its object
# folder cuda/obj<MAJOR>/ and the compile and link rules below are defined
# (in the top-level make they are empty).  The compiler (KIND nvcc, or clang
# compiling CUDA as a language against ROOT, a CUDA root made from PyPI's
# wheels) runs through libtool, whose -fPIC -DPIC nvcc hands on to the host
# compiler (-forward-unknown-to-host-compiler); $(CXX) links the objects
# with the static CUDA runtime.

# The plugin's sources: .cu files for nvcc, and C files (of engine/) that
# $(CC) compiles for the plugin; then the headers of cuda/ they include.
DYNG_CUDA_SOURCES = cuda/entry.cu cuda/dev_backend.cu cuda/dev_common.cu cuda/dev_graph.cu cuda/dev_sssp.cu \
	cuda/dev_cycles.cu cuda/dev_cycles_snap.cu cuda/dev_cycles_patch.cu cuda/dev_mosp.cu \
	cuda/dev_matrix.cu
DYNG_CUDA_C_SOURCES =
DYNG_CUDA_HEADER_FILES = cuda/backend_cuda.h cuda/dev_graph.cuh cuda/dev_state.cuh cuda/dev_load.cuh \
	cuda/dev_cycles.cuh

# Distributed as data, which automake reads through (so it knows the two
# lists are used); the rules below compile them.
dist_noinst_DATA = $(DYNG_CUDA_SOURCES) $(DYNG_CUDA_C_SOURCES) $(DYNG_CUDA_HEADER_FILES)
EXTRA_DIST += cuda/plugin.map cuda/cuda.m4 cuda/README.md cuda/test_plugin_build.sh cuda/test_ldcg.cu \
	cuda/toolkit-from-wheels.sh cuda/fatbinary-nvfatbin.c

# The plugins configure asked for, as libtool modules.
DYNG_CUDA_PLUGINS = $(foreach t,$(DYNG_CUDA_TOOLKITS),dyng_cuda$(firstword $(subst :, ,$(t))).la)

# --- Per toolkit, in the sub-make -------------------------------------------
DYNG_CUDA_TOOLKIT =
dyng_cuda_fields = $(subst :, ,$(filter $(DYNG_CUDA_TOOLKIT):%,$(DYNG_CUDA_TOOLKITS)))
DYNG_CUDA_MAJOR = $(word 1,$(dyng_cuda_fields))
DYNG_CUDA_RUNTIME = $(word 2,$(dyng_cuda_fields))
DYNG_CUDA_ARCH = $(word 3,$(dyng_cuda_fields))
DYNG_CUDA_COMPILER = $(word 4,$(dyng_cuda_fields))
DYNG_CUDA_LIBDIR = $(word 5,$(dyng_cuda_fields))
DYNG_CUDA_KIND = $(word 6,$(dyng_cuda_fields))
DYNG_CUDA_ROOT = $(word 7,$(dyng_cuda_fields))

# SASS for every arch, PTX for the highest (the last: configure sorts them),
# in nvcc's words (DYNG_CUDA_GENCODE) or clang's (DYNG_CLANG_GPU_ARCH);
# DYNG_CUDA_ARCHS names the same device code for the plugin's description.
dyng_cuda_comma = ,
dyng_cuda_empty =
dyng_cuda_space = $(dyng_cuda_empty) $(dyng_cuda_empty)
dyng_cuda_archs = $(subst $(dyng_cuda_comma),$(dyng_cuda_space),$(DYNG_CUDA_ARCH))
dyng_cuda_ptx = $(lastword $(dyng_cuda_archs))
DYNG_CUDA_GENCODE = \
	$(foreach a,$(dyng_cuda_archs),-gencode arch=compute_$(a)$(dyng_cuda_comma)code=sm_$(a)) \
	-gencode arch=compute_$(dyng_cuda_ptx)$(dyng_cuda_comma)code=compute_$(dyng_cuda_ptx)
DYNG_CLANG_GPU_ARCH = $(foreach a,$(dyng_cuda_archs),--cuda-gpu-arch=sm_$(a)) \
	--no-cuda-include-ptx=all --cuda-include-ptx=sm_$(dyng_cuda_ptx)
DYNG_CUDA_ARCHS = $(subst $(dyng_cuda_space),$(dyng_cuda_comma),$(strip \
	$(patsubst %,sm_%,$(dyng_cuda_archs)) compute_$(dyng_cuda_ptx)))

DYNG_CUDA_OBJDIR = cuda/obj$(DYNG_CUDA_MAJOR)
DYNG_CUDA_OBJECTS = $(DYNG_CUDA_SOURCES:%.cu=$(DYNG_CUDA_OBJDIR)/%.lo) \
	$(DYNG_CUDA_C_SOURCES:%.c=$(DYNG_CUDA_OBJDIR)/%.lo)

# The compiler gets its own flags, never $(SAN_CFLAGS): the plugin is not
# sanitized.  DYNG_CUDA_FLAGS is everything but the device code's archs,
# which DYNG_CUDA_DEVICE_CODE adds.
DYNG_NVCC_FLAGS = -std=c++17 -forward-unknown-to-host-compiler --compiler-options=-fvisibility=hidden \
	$(DEFS) -I$(DYNG_CUDA_OBJDIR) -I$(top_srcdir) -I$(top_builddir) $(CPPFLAGS) $(NVCCFLAGS)
# clang against a CUDA root: -isystem puts the root's headers before
# /usr/local/include, where a CUDA 13 toolkit may have put its own (clang
# adds --cuda-path's include folder after it); device code is optimised at
# -O3 whatever CUDA_CLANGFLAGS say for the host, as nvcc does (clang would
# give the device the host's level, and ptxas -O0 without one).
DYNG_CLANG_CUDA_FLAGS = -x cuda --cuda-path=$(DYNG_CUDA_ROOT) -isystem $(DYNG_CUDA_ROOT)/include \
	-Wno-unknown-cuda-version -std=c++17 -fvisibility=hidden \
	$(DEFS) -I$(DYNG_CUDA_OBJDIR) -I$(top_srcdir) -I$(top_builddir) $(CPPFLAGS) \
	$(CUDA_CLANGFLAGS) -Xarch_device -O3
dyng_cuda_clang = $(filter clang,$(DYNG_CUDA_KIND))
DYNG_CUDA_FLAGS = $(if $(dyng_cuda_clang),$(DYNG_CLANG_CUDA_FLAGS),$(DYNG_NVCC_FLAGS))
DYNG_CUDA_DEVICE_CODE = $(if $(dyng_cuda_clang),$(DYNG_CLANG_GPU_ARCH),$(DYNG_CUDA_GENCODE))
DYNG_CUDA_CFLAGS = $(DYNG_STD_CFLAGS) -D_GNU_SOURCE -fvisibility=hidden $(CFLAGS)
# -z nodelete: SQLite unloads an extension when its connection closes; the
# static runtime's threads must keep their code.  -z defs: everything the
# plugin calls is resolved now, by libcudart_static.a or the C library.
DYNG_CUDA_LINK_FLAGS = -module -avoid-version -shared -no-undefined -rpath $(libdir) \
	-Wl,-z,nodelete -Wl,-z,defs -Wl,--version-script=$(srcdir)/cuda/plugin.map
DYNG_CUDA_LIBS = -L$(DYNG_CUDA_LIBDIR) -lcudart_static -lrt -lpthread -ldl

AM_V_NVCC = $(am__v_NVCC_$(V))
am__v_NVCC_ = $(am__v_NVCC_$(AM_DEFAULT_VERBOSITY))
am__v_NVCC_0 = @echo "  $(if $(dyng_cuda_clang),CLANGCU,NVCC   ) " $@;
am__v_NVCC_1 =
AM_V_CUDALD = $(am__v_CUDALD_$(V))
am__v_CUDALD_ = $(am__v_CUDALD_$(AM_DEFAULT_VERBOSITY))
am__v_CUDALD_0 = @echo "  CXXLD   " $@;
am__v_CUDALD_1 =

# The toolkit and device code, for the sources (cuda/backend_cuda.h).  The
# header is only replaced when its text changes (a new Makefile alone
# rebuilds nothing); the stamp records that it was compared.  Beside it,
# compile-flags holds the compiler and its flags (without the archs), for
# cuda/test_plugin_build.sh's checks of what the compiler sees.
$(DYNG_CUDA_OBJDIR)/plugin_build.h: $(DYNG_CUDA_OBJDIR)/plugin_build.stamp
	@:
$(DYNG_CUDA_OBJDIR)/plugin_build.stamp: Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && h=$(@D)/plugin_build.h && { \
	  echo '/* dyng_cuda$(DYNG_CUDA_MAJOR).so: its toolkit and device code (cuda/Makefile.mk). */'; \
	  echo '#define DYNG_CUDA_MAJOR $(DYNG_CUDA_MAJOR)'; \
	  echo '#define DYNG_CUDA_RUNTIME $(DYNG_CUDA_RUNTIME)'; \
	  echo '#define DYNG_CUDA_ARCHS "$(DYNG_CUDA_ARCHS)"'; \
	} > $$h-t && { cmp -s $$h-t $$h && rm -f $$h-t || mv -f $$h-t $$h; } && \
	echo '$(DYNG_CUDA_KIND) $(DYNG_CUDA_COMPILER) $(DYNG_CUDA_FLAGS)' > $(@D)/compile-flags && touch $@

# Objects mirror the sources' paths under cuda/obj<MAJOR>/; the compilers
# write the headers each one read into a .d file beside it.  nvcc has no
# -MP, so the sed adds an empty rule per header (as -MP does): a header
# that goes away then does not stop the build.  libtool's `-shared` makes
# only the PIC object.
$(DYNG_CUDA_OBJDIR)/%.lo: %.cu $(DYNG_CUDA_OBJDIR)/plugin_build.h
	$(AM_V_NVCC)$(MKDIR_P) $(@D) && $(LIBTOOL) $(AM_V_lt) --tag=CXX $(AM_LIBTOOLFLAGS) \
	  $(LIBTOOLFLAGS) --mode=compile $(DYNG_CUDA_COMPILER) $(DYNG_CUDA_FLAGS) $(DYNG_CUDA_DEVICE_CODE) -shared \
	  -MD -MF $(@:.lo=.Td) -MT $@ -c -o $@ $< && \
	{ cat $(@:.lo=.Td) && $(SED) -e 1d -e 's/^ *//' -e 's/ *\\$$//' -e '/^$$/d' -e 's/$$/:/' \
	  $(@:.lo=.Td); } > $(@:.lo=.d) && rm -f $(@:.lo=.Td)
$(DYNG_CUDA_OBJDIR)/%.lo: %.c
	$(AM_V_CC)$(MKDIR_P) $(@D) && $(LIBTOOL) $(AM_V_lt) --tag=CC $(AM_LIBTOOLFLAGS) \
	  $(LIBTOOLFLAGS) --mode=compile $(CC) $(DEFS) -I$(top_srcdir) -I$(top_builddir) \
	  $(CPPFLAGS) $(DYNG_CUDA_CFLAGS) -shared -MD -MP -MF $(@:.lo=.d) -MT $@ -c -o $@ $<
-include $(DYNG_CUDA_OBJECTS:.lo=.d)

dyng_cuda$(DYNG_CUDA_MAJOR).la: $(DYNG_CUDA_OBJECTS) cuda/plugin.map
	$(AM_V_CUDALD)$(LIBTOOL) $(AM_V_lt) --tag=CXX $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) \
	  --mode=link $(CXX) $(CXXFLAGS) $(DYNG_CUDA_LINK_FLAGS) $(LDFLAGS) -o $@ \
	  $(DYNG_CUDA_OBJECTS) $(DYNG_CUDA_LIBS)

# --- The top-level make -------------------------------------------------------
# Each plugin comes from its sub-make, asked every time (it knows what is
# out of date); a copy beside dyng.so lets `.load ./dyng` find it.
dyng_cuda%.la: dyng-cuda-always
	@case ' $(DYNG_CUDA_PLUGINS) ' in *' $@ '*) ;; \
	  *) echo "$@: configure took no CUDA $* toolkit" >&2; exit 1;; esac
	$(AM_V_at)$(MAKE) $(AM_MAKEFLAGS) DYNG_CUDA_TOOLKIT=$* $@
dyng_cuda%.so: dyng_cuda%.la
	$(AM_V_GEN)rm -f $@ && cp .libs/$@ $@
.PHONY: dyng-cuda-always
dyng-cuda-always:
all-local: $(DYNG_CUDA_PLUGINS) $(DYNG_CUDA_PLUGINS:.la=.so)

# Installed like dyng.so: the module without its .la file.
install-exec-local:
	@$(NORMAL_INSTALL)
	@list='$(DYNG_CUDA_PLUGINS)'; test -z "$$list" || $(MKDIR_P) '$(DESTDIR)$(libdir)'; \
	for la in $$list; do \
	  echo " $(LIBTOOL) --mode=install $(INSTALL) $$la '$(DESTDIR)$(libdir)'"; \
	  $(LIBTOOL) $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) --mode=install $(INSTALL) $$la \
	    '$(DESTDIR)$(libdir)' || exit 1; \
	  rm -f '$(DESTDIR)$(libdir)'/$$la; \
	done
uninstall-local:
	@$(NORMAL_UNINSTALL)
	rm -f '$(DESTDIR)$(docdir)'/CUDA-EULA-[0-9]*.txt
	@for la in $(DYNG_CUDA_PLUGINS); do \
	  echo " rm -f '$(DESTDIR)$(libdir)/$${la%.la}.so'"; \
	  rm -f '$(DESTDIR)$(libdir)'/$${la%.la}.so; \
	done
clean-local:
	-rm -rf cuda/obj[0-9]* .libs/dyng_cuda[0-9]* dyng_cuda[0-9]*.la dyng_cuda[0-9]*.so \
	  cuda/plugins.txt CUDA-EULA-[0-9]*.txt

# The plugin carries the CUDA runtime, so the licence of each toolkit a
# plugin was built with travels with it: copied from the toolkit's ROOT
# (EULA.txt, which cuda/toolkit-from-wheels.sh also writes, else the
# runtime package's licence file, else Debian's copyright file) as
# CUDA-EULA-<MAJOR>.txt, installed beside dyng's LICENSE and put in the
# tarball.  Not kept in git.
dyng-cuda-eula:
	@for t in $(DYNG_CUDA_TOOLKITS); do \
	  major=$${t%%:*}; root=`echo "$$t" | cut -d: -f7`; \
	  for f in "$$root/EULA.txt" $$root/dist-info/nvidia_cuda_runtime*/licenses/License.txt \
	           "$$root/share/doc/nvidia-cuda-toolkit/copyright"; do \
	    if test -f "$$f"; then cp "$$f" CUDA-EULA-$$major.txt; break; fi; \
	  done; \
	  test -f CUDA-EULA-$$major.txt || echo "warning: no licence file found in the CUDA $$major toolkit ($$root)"; \
	done
.PHONY: dyng-cuda-eula
all-local: dyng-cuda-eula
install-data-local:
	@list=`ls CUDA-EULA-[0-9]*.txt 2>/dev/null`; test -z "$$list" || { \
	  $(MKDIR_P) '$(DESTDIR)$(docdir)' && $(INSTALL_DATA) $$list '$(DESTDIR)$(docdir)'; }
dist-hook:
	@for f in CUDA-EULA-[0-9]*.txt; do test -f "$$f" && cp "$$f" $(distdir)/ || true; done

# --- make check ----------------------------------------------------------------
# cuda/test_plugin_build.sh checks every plugin built here (no GPU needed);
# cuda/plugins.txt tells it the toolkits, one line of the seven fields each.
if DYNG_CUDA
check_PROGRAMS += cuda/plugin_info
TESTS += cuda/test_plugin_build.sh
check_DATA = cuda/plugins.txt
endif
cuda_plugin_info_SOURCES = cuda/plugin_info.c
cuda/plugins.txt: Makefile
	$(AM_V_GEN)$(MKDIR_P) cuda && \
	for t in $(DYNG_CUDA_TOOLKITS); do echo "$$t"; done | tr : ' ' > $@
