# python/: the Python packages.  `make wheels` writes into wheelhouse/ the
# wheels dyng (dyng.so and the module python/dyng/), dyng-cu<MAJOR> for each
# CUDA plugin configure took, and the sdist of dyng (python/dyng_wheels.py
# says how).  A CUDA line that was not configured gets no wheel, and the
# command says so; `make wheels DYNG_WHEELS_REQUIRE="13 12"` fails instead.
# tests/test_wheels.py installs them into fresh virtual environments.

WHEELHOUSE = wheelhouse
DYNG_WHEELS_REQUIRE =
DYNG_WHEEL_PLUGINS = $(foreach t,$(DYNG_CUDA_TOOLKITS),$(firstword $(subst :, ,$(t))))

EXTRA_DIST += pyproject.toml python/dyng_wheels.py python/dyng/__init__.py python/README.md \
	python/_dyng_finder.py python/dyng.pth

wheels: dyng.so $(DYNG_CUDA_PLUGINS:.la=.so) dyng-cuda-eula
	@for m in 13 12; do case ' $(DYNG_WHEEL_PLUGINS) ' in *" $$m "*) ;; \
	  *) echo "make wheels: no dyng-cu$$m wheel: configure took no CUDA $$m toolkit (cuda/README.md)";; \
	  esac; done
	@for m in $(DYNG_WHEELS_REQUIRE); do case ' $(DYNG_WHEEL_PLUGINS) ' in *" $$m "*) ;; \
	  *) echo "make wheels: DYNG_WHEELS_REQUIRE names CUDA $$m, which configure did not take" >&2; exit 1;; \
	  esac; done
	$(AM_V_at)rm -rf $(distdir) && $(MAKE) $(AM_MAKEFLAGS) distdir >/dev/null
	STRIP='$(STRIP)' $(PYTHON_WITH_EXTENSIONS) $(srcdir)/python/dyng_wheels.py $(WHEELHOUSE) --srcdir $(srcdir) \
	  --builddir . --plugins "$(DYNG_WHEEL_PLUGINS)" --distdir $(distdir) || { rm -rf $(distdir); exit 1; }
	$(AM_V_at)rm -rf $(distdir)
.PHONY: wheels

clean-local: clean-wheels
clean-wheels:
	-rm -rf $(WHEELHOUSE) build-wheel
.PHONY: clean-wheels
