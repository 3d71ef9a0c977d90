"""dyng: live graphs inside SQLite, as a Python package.

The package holds the SQLite extension dyng.so; the packages dyng-cu13 and
dyng-cu12 (the extras dyng[cu13] and dyng[cu12]) put the CUDA backend
plugins beside it, where dyng.so finds them with no configuration.

    import sqlite3, dyng
    con = sqlite3.connect("graph.db")
    dyng.load(con)

__version__ is written in when the wheel is built (python/dyng_wheels.py).
"""
import os

__version__ = "@VERSION@"

__all__ = ["load", "loadable_path", "__version__"]


def loadable_path():
    """The path of dyng.so, for load_extension() or the sqlite3 shell's .load."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "dyng.so")


def load(conn):
    """Load dyng into conn: a sqlite3.Connection, or an apsw.Connection.

    Extension loading is switched on only for the load and off again after
    it, so that no query can load another extension.  A sqlite3 module built
    without extension loading raises RuntimeError saying so.
    """
    path = loadable_path()
    if hasattr(conn, "loadextension"):  # apsw
        conn.enableloadextension(True)
        try:
            conn.loadextension(path)
        finally:
            conn.enableloadextension(False)
        return
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError("this Python's sqlite3 module cannot load extensions "
                           "(it was built without them); use a Python whose sqlite3 has "
                           "enable_load_extension, or apsw")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(path)
    finally:
        conn.enable_load_extension(False)
