"""_dyng_finder: `import dyng` finds the installed package even from a folder
that holds dyng.so, the SQLite extension.

Python puts the current folder (for `python -c`, `-m` and the prompt) or the
script's folder first on sys.path, and its path finder takes any NAME.so in
a folder of sys.path for the extension module NAME, before it looks at the
next folder.  dyng.so, which users keep beside their databases for the
sqlite3 shell's `.load ./dyng`, is a SQLite extension with no PyInit_dyng;
found first, it makes `import dyng` fail with "dynamic module does not
define module export function (PyInit_dyng)", whatever the installed
package holds.

dyng.pth (installed beside this file) calls install() when Python starts.
It puts DyngFinder just before Python's path finder.  DyngFinder answers
only for the top-level name dyng: it asks the path finder, and when the
answer is a dyng.so that Python could not import (no PyInit_dyng in it),
asks again without that folder, so that the next folder of sys.path, the
installed package's, answers.  Any other answer, and every other name, is
left to Python's own finders.
"""
import os
import sys


def _not_a_python_module(spec):
    """Whether spec is a dyng.so that Python cannot import as the module dyng."""
    origin = spec.origin or ""
    if os.path.basename(origin) != "dyng.so" or spec.submodule_search_locations is not None:
        return False
    try:
        with open(origin, "rb") as f:
            return b"PyInit_dyng" not in f.read()
    except OSError:
        return False


class DyngFinder:
    """A meta path finder for the name dyng (see the module's comment)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "dyng" or path is not None:
            return None
        from importlib.machinery import PathFinder
        entries = list(sys.path)
        while True:
            spec = PathFinder.find_spec(name, entries)
            if spec is None or not _not_a_python_module(spec):
                return spec
            folder = os.path.dirname(spec.origin)
            rest = [e for e in entries if os.path.abspath(e or os.curdir) != folder]
            if len(rest) == len(entries):  # not a folder of sys.path as given
                return spec
            entries = rest

    @classmethod
    def invalidate_caches(cls):
        pass


def install():
    """Put DyngFinder before Python's path finder in sys.meta_path, once."""
    if any(getattr(f, "__name__", "") == "DyngFinder" for f in sys.meta_path):
        return
    names = [getattr(f, "__name__", "") for f in sys.meta_path]
    at = names.index("PathFinder") if "PathFinder" in names else len(sys.meta_path)
    sys.meta_path.insert(at, DyngFinder)
