# tests/test_wheels.py: installs `make wheels`' packages into fresh virtual
# environments and runs them (TAP output).
#
#   python3 tests/test_wheels.py [WHEELHOUSE]
#
# WHEELHOUSE: the argument, else $DYNG_WHEELHOUSE, else wheelhouse/ of the
# build folder.  Skipped, with the reason, when there is none (`make wheels`
# makes it) or when this Python cannot make a venv with pip.  For each
# wheelhouse package: `twine check --strict` and `auditwheel show` (the tag
# in its name is the one auditwheel reports), where the tools are installed
# ($DYNG_WHEEL_TOOLS, default ~/.cache/dyng/wheel-tools, which
# .ci/install-deps makes).  Then, each in its own venv, installed with
# `pip install --no-index --find-links WHEELHOUSE`: dyng alone (CPU, no
# plugin, nothing on stderr), dyng[cu13], dyng[cu12] (each plugin beside
# dyng.so, found with no configuration) and both; in each, the Python
# example through dyng.load(conn), and a check that computes shortest
# paths, MOSP paths and cycle counts on a random graph, before and after a
# batch of changes, in a graph with the backend dyng chose and in one with
# backend=cpu, which must agree.  Without a GPU the chosen backend is the
# CPU, with each plugin listed as unusable and its reason; with
# DYNG_REQUIRE_CUDA=1 (a GPU machine) it must be the plugin's (cuda13 or
# cuda12; with both, the one the driver's major picks).  Last, uninstalling
# each plugin leaves a working dyng.
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile

here = os.path.dirname(os.path.abspath(__file__))
srcdir = os.environ.get("DYNG_SRCDIR") or os.path.dirname(here)
builddir = os.environ.get("DYNG_BUILDDIR") or srcdir
wheelhouse = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                             os.environ.get("DYNG_WHEELHOUSE") or os.path.join(builddir, "wheelhouse"))
require_cuda = os.environ.get("DYNG_REQUIRE_CUDA", "") in ("1", "true", "yes", "on")
example = os.path.join(srcdir, "examples", "python", "example.py")
tools = os.environ.get("DYNG_WHEEL_TOOLS") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dyng", "wheel-tools")

n_test = 0
failures = 0


def skip_all(why):
    print("1..0 # SKIP " + why)
    sys.exit(0)


def ok(cond, name, detail=""):
    global n_test, failures
    n_test += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n_test, name))
    if not cond:
        failures += 1
        for line in str(detail).splitlines()[-40:]:
            print("# " + line)
    sys.stdout.flush()
    return cond


def skip(name, why):
    global n_test
    n_test += 1
    print("ok %d - %s # SKIP %s" % (n_test, name, why))


def summary(line):
    print("# " + line)
    sys.stdout.flush()


if os.environ.get("DYNG_ASAN") == "yes":
    skip_all("a sanitized build (the wheels are built from a plain one)")
wheels = sorted(glob.glob(os.path.join(wheelhouse, "*.whl")))
core = [w for w in wheels if os.path.basename(w).startswith("dyng-")]
if not core:
    skip_all("no dyng wheel in %s (run `make wheels`)" % wheelhouse)
version = os.path.basename(core[0]).split("-")[1]
configure_ac = os.path.join(srcdir, "configure.ac")
if os.path.isfile(configure_ac):
    m = re.search(r"AC_INIT\(\[[^]]*\],\s*\[([^]]+)\]", open(configure_ac).read())
    if m and m.group(1) != version:
        skip_all("the wheelhouse holds dyng %s, the tree is %s (run `make wheels`)" % (version, m.group(1)))
plugins = sorted(int(m.group(1)) for w in wheels
                 for m in [re.match(r"dyng_cu(\d+)-", os.path.basename(w))] if m)
work = tempfile.mkdtemp(prefix="dyng-wheels-")
r = subprocess.run([sys.executable, "-m", "venv", os.path.join(work, "probe")],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
if r.returncode != 0:
    shutil.rmtree(work, ignore_errors=True)
    skip_all("%s -m venv cannot make a venv with pip here: %s" % (sys.executable, r.stdout.strip()[-200:]))
shutil.rmtree(os.path.join(work, "probe"))
if not os.path.isfile(example):
    skip_all("no %s to run" % example)


def run(cmd, env=None, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, **kw)


# --- The packages themselves ------------------------------------------------------
twine = os.path.join(tools, "bin", "twine")
auditwheel = os.path.join(tools, "bin", "auditwheel")
sdists = glob.glob(os.path.join(wheelhouse, "dyng-*.tar.gz"))
ok(len(sdists) == 1, "the wheelhouse holds the sdist of dyng", os.listdir(wheelhouse))
if os.access(twine, os.X_OK):
    r = run([twine, "check", "--strict"] + wheels + sdists)
    ok(r.returncode == 0, "twine check --strict: %d wheels and the sdist" % len(wheels), r.stdout + r.stderr)
else:
    skip("twine check --strict", "no %s (.ci/install-deps installs it)" % twine)
for w in wheels:
    name = os.path.basename(w)
    if not os.access(auditwheel, os.X_OK):
        skip("auditwheel show %s" % name, "no %s (.ci/install-deps installs it)" % auditwheel)
        continue
    r = run([auditwheel, "show", w])
    tag = re.search(r'consistent with\s+the\s+following\s+platform\s+tag:\s+"([^"]+)"', r.stdout)
    ok(r.returncode == 0 and tag and name.endswith("-%s.whl" % tag.group(1)),
       "auditwheel show %s: the tag is the one auditwheel reports%s" % (name, " (%s)" % tag.group(1) if tag else ""),
       r.stdout + r.stderr)
    summary("%s: %s" % (name, " ".join(r.stdout.split())[:400].split(" This constrains")[0]))

# --- The files in the packages ---------------------------------------------------
def elf_sections(data):
    """The section names of a 64-bit little-endian ELF object (its bytes)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    return [data[strtab + h[0]:data.index(b"\0", strtab + h[0])].decode() for h in headers]


for w in wheels:
    name = os.path.basename(w)
    with zipfile.ZipFile(w) as z:
        names = z.namelist()
        elves = {n: z.read(n) for n in names if z.read(n)[:4] == b"\x7fELF"}
        info = [n for n in names if re.match(r"[^/]+\.dist-info/[^/]+$", n)][0].split("/")[0]
        third_party = z.read(info + "/THIRD_PARTY_LICENSES").decode()
        licences = {n[len(info) + 1:]: z.read(n).decode("utf-8", "replace")
                    for n in names if n.startswith(info + "/licenses/")}
    debug = ["%s (%s)" % (n, ", ".join(s for s in elf_sections(d) if s.startswith(".debug")))
             for n, d in sorted(elves.items()) if any(s.startswith(".debug") for s in elf_sections(d))]
    ok(elves and not debug, "%s: its %d ELF objects are stripped (no .debug_* section)" % (name, len(elves)),
       "with debug information: %s" % debug)
    # What auditwheel bundled: each library with its licence, and named in
    # THIRD_PARTY_LICENSES.
    for lib in sorted(n for n in names if re.match(r"[^/]+\.libs/[^/]+$", n)):
        stem = os.path.basename(lib).split("-")[0]
        texts = [t for n, t in licences.items() if n.startswith("licenses/" + stem)]
        ok(texts and stem in third_party and lib.split("/")[0] + "/" in third_party,
           "%s: bundles %s with its licence text (%s/licenses/) and THIRD_PARTY_LICENSES names it"
           % (name, os.path.basename(lib), info), "licences: %s" % sorted(licences))
    m = re.match(r"dyng_cu(\d+)-", name)
    if m:
        eula = info + "/CUDA-EULA-%s.txt" % m.group(1)
        ok(eula in names and "libcudart_static.a" in third_party,
           "%s: carries the CUDA EULA for its static CUDA runtime, which THIRD_PARTY_LICENSES names" % name,
           names)


def description_of(meta):
    """METADATA's headers (name -> [values]) and its description."""
    head, _, body = meta.partition("\n\n")
    headers = {}
    for line in head.splitlines():
        k, _, v = line.partition(": ")
        headers.setdefault(k, []).append(v)
    return headers, body


if sdists:
    with tarfile.open(sdists[0]) as t:
        sdist_files = set(n.split("/", 1)[1] for n in t.getnames() if "/" in n)
        pkg_info = t.extractfile("dyng-%s/PKG-INFO" % version).read().decode()
    for w in wheels + sdists:
        name = os.path.basename(w)
        if w.endswith(".whl"):
            with zipfile.ZipFile(w) as z:
                meta = z.read([n for n in z.namelist() if n.endswith(".dist-info/METADATA")][0]).decode()
        else:
            meta = pkg_info
        headers, body = description_of(meta)
        urls = headers.get("Project-URL", [])
        # The files the description points at: the sdist must hold them.
        named = sorted(set(re.findall(r"\b((?:docs|examples)/[\w./-]+\.\w+|README\.md|CHANGELOG\.md)", body)))
        missing = [f for f in named if f not in sdist_files]
        ok(urls and all(re.match(r"[^,]{1,32}, https://", u) for u in urls) and not missing
           and "the project's " not in body,
           "%s: METADATA has a Project-URL (%s) and its description names files the sdist holds (%s)"
           % (name, "; ".join(urls) or "none", ", ".join(named) or "none"),
           "missing from the sdist: %s" % missing)

# --- The check run in each venv ---------------------------------------------------
CHECK = r'''
import json, random, sqlite3, sys
import dyng
con = sqlite3.connect(":memory:")
dyng.load(con)
rnd = random.Random(20260)
n, m = 1500, 7000
edges = set()
while len(edges) < m:
    s, d = rnd.randint(1, n), rnd.randint(1, n)
    if s != d:
        edges.add((s, d))
con.execute("CREATE TABLE e(src INTEGER NOT NULL, dst INTEGER NOT NULL, a REAL, b REAL)")
con.executemany("INSERT INTO e VALUES (?,?,?,?)",
                [(s, d, rnd.random() * 10, rnd.random() * 10) for s, d in sorted(edges)])
con.executescript("""
    CREATE VIRTUAL TABLE g USING dyng(edges=e, weights='a,b');
    CREATE VIRTUAL TABLE gc USING dyng(edges=e, weights='a,b', backend=cpu);
""")
def answers(graph):
    out = {}
    for src in (1, 77, 900):
        for w in ("a", "b"):
            out["sssp %d %s" % (src, w)] = con.execute(
                "SELECT node, dist FROM dyng_sssp(?, ?, ?) ORDER BY node", (graph, src, w)).fetchall()
    for src, dst in ((1, 500), (77, 1200)):
        rows = con.execute("SELECT seq, node, agg_costs FROM dyng_mosp(?, ?, ?) ORDER BY seq",
                           (graph, src, dst)).fetchall()
        out["mosp %d %d" % (src, dst)] = rows
    for k in (3, 4, 5):
        out["cycles %d" % k] = con.execute("SELECT dyng_cycle_count(?, ?)", (graph, k)).fetchone()[0]
    for k in (3, 4):
        out["directed cycles %d" % k] = con.execute(
            "SELECT dyng_cycle_count(?, ?, 'directed')", (graph, k)).fetchone()[0]
    return out
report = {"before": [answers("g"), answers("gc")]}
con.execute("DELETE FROM e WHERE rowid % 37 = 0")
con.executemany("INSERT INTO e VALUES (?,?,?,?)",
                [(rnd.randint(1, n), rnd.randint(1, n), rnd.random() * 10, rnd.random() * 10)
                 for _ in range(150)])
con.execute("DELETE FROM e WHERE src = dst")
report["after"] = [answers("g"), answers("gc")]
config = json.loads(con.execute("SELECT dyng_config()").fetchone()[0])
report["config"] = config
report["backends"] = {g["name"]: g.get("backend") for g in config["graphs"]}
report["path"] = dyng.loadable_path()
report["version"] = dyng.__version__
json.dump(report, sys.stdout)
'''
check_py = os.path.join(work, "check.py")
with open(check_py, "w") as f:
    f.write(CHECK)


def venv(label, *requirements):
    d = os.path.join(work, label)
    r = run([sys.executable, "-m", "venv", d])
    if r.returncode != 0:
        ok(False, "%s: python3 -m venv" % label, r.stdout + r.stderr)
        return None
    py = os.path.join(d, "bin", "python")
    r = run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index",
             "--find-links", wheelhouse] + list(requirements))
    if not ok(r.returncode == 0, "%s: pip install --no-index %s" % (label, " ".join(requirements)),
              r.stdout + r.stderr):
        return None
    return py


def expected_backend(majors, config):
    """The plugin a GPU machine must use: the driver's major, else the newest older one."""
    driver = (config.get("driver") or {}).get("cuda_version") or 0
    driver_major = driver // 1000 if driver > 100 else driver
    fits = [m for m in majors if m <= driver_major] if driver_major else []
    return "cuda%d" % max(fits or majors)


def exercise(label, py, majors):
    """The example and the check in venv py, whose plugins are `majors`."""
    env = dict(os.environ)
    env.pop("DYNG_PLUGIN_PATH", None)
    env.pop("PYTHONPATH", None)
    if not majors:
        env.pop("DYNG_REQUIRE_CUDA", None)  # no plugin: a graph could not run at all
    r = run([py, example], env=env, cwd=work)
    good = (r.returncode == 0 and "route 1 -> 4 by length: 1 2 3 4 cost 7.0" in r.stdout
            and "after closing 3 -> 4: 1 2 4 cost 10.0" in r.stdout
            and "dyng_update: batches applied 1, edges inserted 1" in r.stdout
            and "dyng %s from " % version in r.stdout)
    ok(good, "%s: examples/python/example.py through dyng.load(conn)" % label, r.stdout + r.stderr)
    if not majors:
        ok(r.stderr == "", "%s: silent (nothing on stderr)" % label, r.stderr)
    r = run([py, check_py], env=env, cwd=work)
    if not ok(r.returncode == 0, "%s: the check runs" % label, r.stdout + r.stderr):
        return
    rep = json.loads(r.stdout)
    cfg = rep["config"]
    pkg = os.path.dirname(rep["path"])
    ok(rep["version"] == version and rep["path"].endswith("/site-packages/dyng/dyng.so")
       and rep["path"].startswith(os.path.dirname(os.path.dirname(py))),
       "%s: dyng.__version__ %s, dyng.loadable_path() in the venv" % (label, version), rep["path"])
    found = sorted((p["cuda_major"], os.path.dirname(p["path"])) for p in cfg["plugins"])
    ok(found == sorted((m, pkg) for m in majors),
       "%s: dyng_config() lists the plugins %s beside dyng.so" % (label, majors or "none"), cfg["plugins"])
    backend = rep["backends"].get("g")
    if require_cuda and majors:
        want = expected_backend(majors, cfg)
        ok(backend == want, "%s: DYNG_REQUIRE_CUDA=1: the graph runs on %s" % (label, want),
           json.dumps(cfg, indent=1))
    elif majors:
        ok(backend == "cpu" and cfg["backend"]["name"] == "cpu" and cfg["backend"].get("reason")
           and all(p["state"] == "unusable" and p.get("reason") for p in cfg["plugins"]),
           "%s: no GPU here: the CPU, with each plugin's reason in dyng_config()" % label,
           json.dumps(cfg, indent=1))
    else:
        ok(backend == "cpu" and cfg["backend"]["name"] == "cpu",
           "%s: no plugin: the CPU" % label, json.dumps(cfg["backend"]))
    for when in ("before", "after"):
        chosen, cpu = rep[when]
        diff = [k for k in cpu if chosen.get(k) != cpu[k]]
        ok(not diff and rep["backends"].get("gc") == "cpu",
           "%s: %s a batch, %s equals backend=cpu: SSSP (6 trees), MOSP (2 paths), cycle counts (5)"
           % (label, when, backend), "differ: %s" % diff)
    reasons = "; ".join("cuda%d %s%s" % (p["cuda_major"], p["state"],
                                         ": " + p["reason"] if p.get("reason") else "")
                        for p in cfg["plugins"])
    summary("%s: graph on %s%s" % (label, backend, " (plugins: %s)" % reasons if reasons else ""))


def shadowed(label, py):
    """import dyng from a folder that holds a dyng.so, as a user has who keeps
    one there for the sqlite3 shell's `.load ./dyng`: Python puts that folder
    first on sys.path, and takes a dyng.so for an extension module."""
    folder = os.path.join(work, "with-dyng.so")
    os.makedirs(folder, exist_ok=True)
    built = os.path.join(builddir, ".libs", "dyng.so")
    r = run([py, "-c", "import dyng; print(dyng.loadable_path())"], cwd=work)
    shutil.copyfile(built if os.path.isfile(built) else r.stdout.strip(), os.path.join(folder, "dyng.so"))
    code = ("import sqlite3, dyng; con = sqlite3.connect(':memory:'); dyng.load(con); "
            "print(dyng.loadable_path()); print(con.execute('SELECT dyng_version()').fetchone()[0])")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    r = run([py, "-c", code], env=env, cwd=folder)
    out = r.stdout.split()
    ok(r.returncode == 0 and len(out) == 2 and out[0].startswith(os.path.dirname(os.path.dirname(py)))
       and out[1] == version,
       "%s: import dyng and dyng.load(conn) from a folder holding a dyng.so" % label, r.stdout + r.stderr)


py = venv("core", "dyng")
if py:
    exercise("dyng", py, [])
    shadowed("dyng", py)
for major in plugins:
    py = venv("cu%d" % major, "dyng[cu%d]" % major)
    if py:
        exercise("dyng[cu%d]" % major, py, [major])
if len(plugins) > 1:
    label = "dyng[%s]" % ",".join("cu%d" % m for m in plugins)
    py = venv("all", label)
    if py:
        exercise(label, py, plugins)
        left = list(plugins)
        for major in plugins:
            r = run([py, "-m", "pip", "uninstall", "-y", "-q", "dyng-cu%d" % major])
            left.remove(major)
            if ok(r.returncode == 0, "pip uninstall dyng-cu%d" % major, r.stdout + r.stderr):
                exercise("after uninstalling dyng-cu%d" % major, py, left)
elif not plugins:
    summary("no plugin wheels in %s: only dyng was installed" % wheelhouse)
if require_cuda and not plugins:
    ok(False, "DYNG_REQUIRE_CUDA=1 but the wheelhouse holds no plugin wheel")

shutil.rmtree(work, ignore_errors=True)
summary("%d checks, %d failed; wheelhouse %s (dyng %s, plugins: %s)%s"
        % (n_test, failures, wheelhouse, version, ", ".join("cu%d" % m for m in plugins) or "none",
           ", DYNG_REQUIRE_CUDA=1" if require_cuda else ""))
print("1..%d" % n_test)
