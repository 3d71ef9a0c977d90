# tests/test_docs.py: runs the examples of docs/sql.md and README.md in the
# sqlite3 shell and compares what they print with the output the docs show
# (TAP, one test per example; without a sqlite3 shell the whole test is
# skipped).
#
# The convention the docs follow (also stated at the top of docs/sql.md):
#
#   - A ```sql block is run in a fresh sqlite3 shell on an in-memory
#     database, as one script piped into it: the file's ```sql setup block
#     first (README.md has none), then the block, so the line numbers in
#     the shell's error messages count from the setup's first line.
#     ```sql no-setup runs the block alone; ```sql no-run is not run and
#     needs an HTML comment on the line before it saying why.
#   - The fenced block right after it (only blank lines between), ```text
#     or a bare ```, is what the shell prints, stdout and stderr in order;
#     ```json is one JSON value, compared as JSON.  A ```sql block without
#     one must print nothing.
#   - A ```console block is a shell session: each `$ ` line (with the lines
#     after a trailing backslash) is run by sh, with `sqlite3` the shell
#     under test, and the lines up to the next `$ ` are what it prints.
#     ```console no-run is not run (and, as above, says why).
#   - Every block runs in one scratch folder per file holding dyng.so, so
#     `.load ./dyng` works and files written by one block are there for the
#     next; the GPU plugins are kept out (DYNG_PLUGIN_PATH names an empty
#     folder), so every graph is on the CPU backend.
#   - Masked on both sides before comparing, as they depend on the run, the
#     machine or the build: version numbers (x.y.z), and in every line (or
#     ```json block) that is one JSON object or array the values of the keys
#     `ms` and `*_ms` (not `max_ms`), `last_load`, `last_sync`, `reason`,
#     `backend_reason`, `driver`, `devices`, `plugins`, `discovery`, `flags`,
#     `sanitizers`, `threads` and `interrupt_check` (the keys
#     themselves must match).
#
# Besides the examples: every markdown table of docs/*.md and README.md must
# be in one piece (a header and a delimiter row above its rows, no text
# between them); the SQL of docs/sql.md that removes a graph without dyng,
# taken from the doc, must remove graphs defined every way SQLite reads a
# module name and leave other modules' tables; and every key dyng_config()
# reports, and every backend name dyng_config('backend', …) accepts, must
# be in docs/sql.md.
#
# A failure prints the differences with the doc's file and line:
# `-docs/sql.md:123: shown` for a line the doc shows, `+ got` for what the
# shell printed instead.
#
# Environment (set by `make check`; the defaults suit a run from the build
# folder): DYNG_SRCDIR, DYNG_EXTENSION (dyng.so), SQLITE3_SHELL, DYNG_ASAN
# and CC (a sanitized dyng.so needs the sanitizer runtime preloaded).
# Arguments, when given, name the doc files to check instead of both.
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("DYNG_SRCDIR") or os.path.dirname(HERE)
BUILDDIR = os.environ.get("DYNG_BUILDDIR") or os.getcwd()
EXTENSION = os.environ.get("DYNG_EXTENSION") or os.path.join(BUILDDIR, ".libs", "dyng.so")
DOCS = ["docs/sql.md", "README.md"]
TIMEOUT_S = 120

MASKED_KEYS = {"ms", "last_load", "last_sync", "reason", "backend_reason", "driver", "devices",
               "plugins", "discovery", "flags", "sanitizers", "threads",
               "interrupt_check"}
VERSION = re.compile(r"\b\d+\.\d+\.\d+\b")
FENCE = re.compile(r"^(\s*)(```+)\s*(.*?)\s*$")


class Block:
    """One fenced block of a doc: its language, flags, text and where."""

    def __init__(self, path, line, lang, flags, lines, blank_before, comment_before, heading):
        self.path = path            # the doc, relative to the source folder
        self.line = line            # line of the opening fence, from 1
        self.lang = lang            # "sql", "text", "json", "console", "" ...
        self.flags = flags          # the words after the language
        self.lines = lines          # the content, indentation removed
        self.blank_before = blank_before      # only blank lines since the last block
        self.comment_before = comment_before  # an HTML comment ends the line before
        self.heading = heading      # the nearest heading above it

    def where(self, i=0):
        """file:line of the block's i-th content line."""
        return "%s:%d" % (self.path, self.line + 1 + i)


def parse(path):
    """The fenced blocks of a doc, in order, each with its nearest heading."""
    blocks, heading = [], ""
    with open(os.path.join(SRCDIR, path), encoding="utf-8") as f:
        text = f.read().split("\n")
    i, since_block, prev = 0, [], ""
    while i < len(text):
        if text[i].lstrip().startswith("<!--"):
            # An HTML comment (the convention's own note, a no-run reason):
            # nothing in it is a block.
            while "-->" not in text[i] and i + 1 < len(text):
                i += 1
            since_block.append(text[i])
            prev = text[i]
            i += 1
            continue
        m = FENCE.match(text[i])
        if not m:
            if text[i].startswith("#"):
                heading = text[i].lstrip("#").strip()
            since_block.append(text[i])
            if text[i].strip():
                prev = text[i]
            i += 1
            continue
        indent, ticks, info = m.group(1), m.group(2), m.group(3).split()
        start, body = i, []
        i += 1
        while i < len(text) and not (text[i].strip() == ticks and text[i].startswith(indent)):
            body.append(text[i][len(indent):] if text[i].startswith(indent) else text[i].lstrip())
            i += 1
        b = Block(path, start + 1, info[0] if info else "", info[1:], body,
                  all(not s.strip() for s in since_block), prev.rstrip().endswith("-->"), heading)
        blocks.append(b)
        i += 1
        since_block, prev = [], ""
    return blocks


def mask_json(value):
    """value with the run-dependent entries replaced by "…"."""
    if isinstance(value, dict):
        return {k: ("…" if k in MASKED_KEYS or (k.endswith("_ms") and k != "max_ms") else mask_json(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [mask_json(v) for v in value]
    return value


def mask_line(line):
    """A line of output as compared: a JSON object or array masked, then versions."""
    s = line.rstrip()
    if s[:1] in "{[":
        try:
            s = json.dumps(mask_json(json.loads(s)), ensure_ascii=False, separators=(",", ":"))
        except ValueError:
            pass
    return VERSION.sub("<version>", s)


def mask_json_text(lines):
    """A whole ```json block (or the output it shows) as indented, masked lines."""
    try:
        value = json.loads("\n".join(lines))
    except ValueError as e:
        return ["(not one JSON value: %s)" % e] + [l.rstrip() for l in lines]
    s = json.dumps(mask_json(value), ensure_ascii=False, indent=4)
    return VERSION.sub("<version>", s).split("\n")


def json_where(block, want, i):
    """file:line of the i-th line of a ```json block as reformatted: the doc's
    line that reads the same, else the block's first line."""
    key = want[i].strip().rstrip(",") if i < len(want) else ""
    if key:
        for k, line in enumerate(block.lines):
            if mask_line(line.strip().rstrip(",")) == key:
                return block.where(k)
    return "%s (in the JSON from here)" % block.where()


def trim(lines):
    """lines without the trailing empty ones (a block's end and the shell's may differ)."""
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def diff(shown_where, shown, got):
    """Diagnostics (without the leading '# ') for shown != got, or [] when equal.
    shown_where(i) gives the doc's file:line of shown[i]."""
    if shown == got:
        return []
    out = []
    sm = difflib.SequenceMatcher(a=shown, b=got, autojunk=False)
    for op, a1, a2, b1, b2 in sm.get_opcodes():
        if op == "equal":
            continue
        for k in range(a1, a2):
            out.append("-%s: %s" % (shown_where(k), shown[k]))
        if a1 == a2:
            out.append("-%s: (nothing shown here)" % shown_where(a1))
        for k in range(b1, b2):
            out.append("+ %s" % got[k])
    return out


class Runner:
    """Runs one doc's blocks in its scratch folder."""

    def __init__(self, shell, scratch):
        self.scratch = scratch
        os.symlink(EXTENSION, os.path.join(scratch, "dyng.so"))
        os.mkdir(os.path.join(scratch, "no-plugins"))
        bindir = os.path.join(scratch, ".bin")
        os.mkdir(bindir)
        os.symlink(shell, os.path.join(bindir, "sqlite3"))
        self.shell = shell
        env = dict(os.environ)
        for k in ("DYNG_CPU_ONLY", "DYNG_REQUIRE_CUDA", "SQLITE_HISTORY"):
            env.pop(k, None)
        env["DYNG_PLUGIN_PATH"] = os.path.join(scratch, "no-plugins")
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env["HOME"] = scratch  # no ~/.sqliterc
        if os.environ.get("DYNG_ASAN") == "yes":
            cc = os.environ.get("CC", "cc").split()[0]
            lib = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True,
                                 text=True).stdout.strip()
            env["LD_PRELOAD"] = lib
            env["ASAN_OPTIONS"] = "detect_leaks=0"
        self.env = env

    def run(self, argv, stdin=None, shell=False):
        """stdout and stderr of a command, interleaved, as lines."""
        try:
            p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               cwd=self.scratch, env=self.env, shell=shell, timeout=TIMEOUT_S,
                               text=True, errors="replace")
            out = p.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout or ""
            if isinstance(out, bytes):
                out = out.decode(errors="replace")
            out += "\n(timed out after %d s)" % TIMEOUT_S
        return out.split("\n")

    def sql(self, script):
        return self.run([self.shell], stdin=script)

    def console(self, block):
        """The block's session as run: each command line, then what it printed."""
        got, cmd = [], None
        for line in block.lines + ["$ "]:
            if cmd is not None and cmd[-1].endswith("\\"):
                cmd.append(line)
                continue
            if line.startswith("$ "):
                if cmd:
                    got += cmd + trim(self.run("\n".join(cmd)[2:], shell=True))
                cmd = [line]
        return got


# ---- the plain-SQL removal of a graph (docs/sql.md) ----------------------

REMOVAL_HEADING = "Removing a graph without dyng"

# Definitions of the graph `net` as SQLite stores them: the text from the
# table's name on, as it was written.  The removal must take every one.
REMOVAL_TAKES = [
    "CREATE VIRTUAL TABLE net USING dyng(edges=roads, weights=length)",
    "CREATE VIRTUAL TABLE net USING  dyng(edges=roads, weights=length)",
    "CREATE VIRTUAL TABLE net\n\tUSING\tdyng\n  (edges=roads, weights=length)",
    "CREATE VIRTUAL TABLE net using DYNG(edges=roads, weights=length)",
    "CREATE VIRTUAL TABLE NET UsInG dYnG (edges=roads)",
    "CREATE VIRTUAL TABLE \"net\" USING \"dyng\"(edges=roads, weights=length)",
    "CREATE VIRTUAL TABLE [net]/* the graph */USING/**/[Dyng] (edges=roads)",
    "CREATE VIRTUAL TABLE main.`net` -- the graph\nUSING -- its module\n'dyng'(edges=roads)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS net USING `dyng` (edges=roads)",
]

# Virtual tables named `net` of other modules, some of them planted in the
# schema (the module does not exist): the removal must leave every one.
REMOVAL_LEAVES = [
    ("create", "CREATE VIRTUAL TABLE net USING fts5(\"USING dyng\")"),
    ("create", "CREATE VIRTUAL TABLE net /* USING dyng */ USING fts5(a)"),
    ("plant", "CREATE VIRTUAL TABLE net USING dyngx(edges=roads)"),
    ("plant", "CREATE VIRTUAL TABLE net USING  dyng_old (edges=roads)"),
    ("plant", "CREATE VIRTUAL TABLE net USING \"dyng\"\"\"(edges=roads)"),
    ("plant", "CREATE VIRTUAL TABLE net USING 'dyng-v0'(edges=roads)"),
]


def sql_quote(s):
    return "'" + s.replace("'", "''") + "'"


def check_removal(doc_blocks, runner):
    """Runs the removal SQL of docs/sql.md, as the doc shows it, without dyng
    on databases holding each definition above; diagnostics or []."""
    blocks = [b for b in doc_blocks if b.lang == "sql" and b.heading == REMOVAL_HEADING]
    if not blocks:
        return ["docs/sql.md: no ```sql block under '%s'" % REMOVAL_HEADING]
    removal = "\n".join(blocks[0].lines) + "\n"
    r = runner()
    problems = []
    for i, (how, definition) in enumerate([("take", d) for d in REMOVAL_TAKES] + REMOVAL_LEAVES):
        path = os.path.join(r.scratch, "removal-%d.db" % i)
        setup = ("CREATE TABLE roads(src INTEGER NOT NULL, dst INTEGER NOT NULL, length REAL);\n"
                 "INSERT INTO roads VALUES (1, 2, 4), (2, 3, 1), (1, 3, 7);\n")
        if how == "take":
            setup = ".load ./dyng\n" + setup + definition + ";\n"
        elif how == "create":
            setup += definition + ";\n"
        else:
            setup += ("PRAGMA writable_schema = ON;\n"
                      "INSERT INTO sqlite_master VALUES ('table', 'net', 'net', 0, %s);\n"
                      "PRAGMA writable_schema = RESET;\n" % sql_quote(definition))
        got = trim(r.run(["sqlite3", path], stdin=setup + "SELECT 'made', count(*) FROM sqlite_master;\n"))
        if how == "create" and any("no such module" in l for l in got):
            # A shell without that module: the definition planted instead.
            os.unlink(path)
            setup = ("CREATE TABLE roads(src INTEGER NOT NULL, dst INTEGER NOT NULL, length REAL);\n"
                     "PRAGMA writable_schema = ON;\n"
                     "INSERT INTO sqlite_master VALUES ('table', 'net', 'net', 0, %s);\n"
                     "PRAGMA writable_schema = RESET;\n" % sql_quote(definition))
            got = trim(r.run(["sqlite3", path], stdin=setup + "SELECT 'made', count(*) FROM sqlite_master;\n"))
        if len(got) != 1 or not got[0].startswith("made|"):
            problems.append("%r: could not make the database: %s" % (definition, " / ".join(got)))
            continue
        got = trim(r.run(["sqlite3", path], stdin=removal))
        if got:
            problems.append("%r: the removal printed %s" % (definition, " / ".join(got)))
        if how == "take":
            want = ["names|0", "ok", "rows|3", "free|CREATE TABLE net(x)"]
            check = ("SELECT 'names', count(*) FROM sqlite_master WHERE name LIKE 'net%';\n"
                     "PRAGMA integrity_check;\n"
                     "INSERT INTO roads VALUES (3, 4, -1);\n"
                     "SELECT 'rows', count(*) - 1 FROM roads;\n"
                     "CREATE TABLE net(x);\n"
                     "SELECT 'free', sql FROM sqlite_master WHERE name LIKE 'net%';\n")
            what = "the graph, its log and triggers gone, the name free, the rows kept"
        else:
            want = ["kept|" + definition.split("\n")[0]]
            check = "SELECT 'kept', sql FROM sqlite_master WHERE name = 'net' COLLATE NOCASE;\n"
            what = "the other virtual table kept"
        got = trim(r.run(["sqlite3", path], stdin=check))
        if got != want:
            problems.append("%r: expected %s (%s), got %s" % (definition, " / ".join(want), what,
                                                               " / ".join(got)))
    if problems:
        problems.insert(0, "the SQL at %s:" % blocks[0].where())
    return problems


# ---- dyng_config (docs/sql.md) ---------------------------------------------

CONFIG_HEADING = "dyng_config"

# Values dyng_config('backend', …) might take; each one it accepts must be
# named in the doc's `backend` item.
BACKEND_CANDIDATES = ["auto", "cpu", "cuda", "gpu", "tpu", "cuda13", "none", "host", "device"]


def section_lines(path, heading):
    """The lines of a doc's section `## heading`, up to the next `## `."""
    with open(os.path.join(SRCDIR, path), encoding="utf-8") as f:
        text = f.read().split("\n")
    out, inside = [], False
    for line in text:
        if line.startswith("## "):
            inside = line[3:].strip() == heading
            continue
        if inside:
            out.append(line)
    return out


def key_tables(lines):
    """The keys named in the first cells of the section's `| key | type |
    meaning |` tables, one set per table."""
    tables, cur = [], None
    for line in lines:
        if re.match(r"^\|\s*key\s*\|\s*type\s*\|", line):
            cur = set()
            tables.append(cur)
        elif cur is not None and line.startswith("|"):
            cur.update(re.findall(r"`([^`]+)`", line.split("|")[1]))
        elif not line.startswith("|"):
            cur = None
    return tables


def json_keys(value, prefix=""):
    """The keys of a JSON object, those of the objects in it as
    `outer.inner` (the doc lists those instead of the outer key)."""
    out = []
    for k, v in value.items():
        if isinstance(v, dict) and v and not prefix:
            out += json_keys(v, k + ".")
        else:
            out.append(prefix + k)
    return out


def check_config(runner):
    """Every key dyng_config() reports (top level, the objects in it, and a
    graph's) is in the doc's key tables, and every value dyng_config accepts
    for `backend` is named in its item.  Diagnostics or []."""
    lines = section_lines("docs/sql.md", CONFIG_HEADING)
    tables = key_tables(lines)
    if len(tables) < 2:
        return ["docs/sql.md: the %s section has %d key tables, expected 2 (connection, graph)"
                % (CONFIG_HEADING, len(tables))]
    r = runner()
    problems = []
    # DYNG_CPU_ONLY with a value that is not a boolean: what a run reports then.
    script = (".load ./dyng\nCREATE TABLE e(src INTEGER, dst INTEGER, w REAL);\n"
              "INSERT INTO e VALUES (1, 2, 3);\n"
              "CREATE VIRTUAL TABLE g USING dyng(edges=e, weights=w);\n"
              "SELECT count(*) FROM dyng_sssp('g', 1);\nSELECT dyng_cycle_count('g', 3);\n"
              "SELECT dyng_config();\n")
    for env in ([], ["DYNG_CPU_ONLY=maybe"]):
        got = trim(r.run(["env"] + env + ["sqlite3"], stdin=script))
        try:
            config = json.loads(got[-1])
        except (ValueError, IndexError):
            problems.append("dyng_config() with %s printed %s" % (env or "no setting", " / ".join(got)))
            continue
        for key in json_keys(config):
            if key not in tables[0]:
                problems.append("docs/sql.md (%s): dyng_config() reports `%s`%s; its key table does not "
                                "list it" % (CONFIG_HEADING, key, " with " + env[0] if env else ""))
        for graph in config.get("graphs", []):
            for key in graph:
                if key not in tables[1]:
                    problems.append("docs/sql.md (%s): a graph's entry has `%s`; the per-graph table "
                                    "does not list it" % (CONFIG_HEADING, key))
    item, inside = [], False
    for line in lines:
        if line.startswith("- "):
            inside = line.startswith("- `backend`")
        elif not line.startswith(" "):
            inside = False
        if inside:
            item.append(line)
    named = set(v.lower() for v in re.findall(r"'([A-Za-z0-9_]+)'", " ".join(item)))
    for value in BACKEND_CANDIDATES:
        got = trim(r.run(["sqlite3"], stdin=".load ./dyng\nSELECT dyng_config('backend', '%s') ->> '$';\n"
                                            % value))
        accepted = not any("error" in l.lower() for l in got)
        if accepted and value not in named:
            problems.append("docs/sql.md (%s): dyng_config('backend', '%s') is accepted; the `backend` "
                            "item names only %s" % (CONFIG_HEADING, value, ", ".join(sorted(named))))
        if not accepted and value in named:
            problems.append("docs/sql.md (%s): the `backend` item names '%s', which dyng_config refuses: %s"
                            % (CONFIG_HEADING, value, " / ".join(got)))
    return problems


# ---- tables ----------------------------------------------------------------

TABLE_DELIMITER = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")


def check_tables(path):
    """Every markdown table of a doc in one piece: each run of lines that
    start with '|' begins with a header row and a delimiter row (else it
    renders as text), and no line of text sits between the rows of what
    reads as one table.  Diagnostics or []."""
    with open(os.path.join(SRCDIR, path), encoding="utf-8") as f:
        text = f.read().split("\n")
    problems, fence, in_comment, run = [], None, False, []
    prev_table_end = None  # line of the last row of the previous table run
    gap = []               # the lines since then

    def end_run():
        if len(run) < 2 or not TABLE_DELIMITER.match(run[1][1].strip()):
            problems.append("%s:%d: %d line(s) starting with '|' without a header and a '| --- |' "
                            "row above them: they render as text, not as a table%s"
                            % (path, run[0][0], len(run),
                               " (the table at line %d is split by the text at line %d)"
                               % (prev_table_end, gap[0][0]) if prev_table_end and gap else ""))

    for n, line in enumerate(text + [""], 1):
        m = FENCE.match(line)
        if fence is None and not in_comment and m:
            fence = m.group(2)
        elif fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        if in_comment or line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if line.startswith("|"):
            run.append((n, line))
            continue
        if run:
            end_run()
            prev_table_end, gap, run = run[-1][0], [], []
        if line.strip():
            gap.append((n, line))
        elif gap:
            # A blank line after text: what follows is no longer the table's.
            prev_table_end, gap = None, []
    return problems


def main():
    shell = os.environ.get("SQLITE3_SHELL") or shutil.which("sqlite3") or ""
    if shell == "no" or not (os.path.isfile(shell) and os.access(shell, os.X_OK)):
        print("1..0 # SKIP no sqlite3 shell")
        return 0
    docs = sys.argv[1:] or DOCS
    parsed = [(d, parse(d)) for d in docs]
    checks = []  # (name, function returning diagnostics or [])
    states = []  # each doc's runner, made when first needed
    for doc, blocks in parsed:
        setup = [b for b in blocks if b.lang == "sql" and "setup" in b.flags]
        state = {}
        states.append(state)

        def runner(state=state):
            if "r" not in state:
                state["r"] = Runner(shell, tempfile.mkdtemp(prefix="dyng-docs."))
            return state["r"]

        if len(setup) > 1:
            checks.append(("%s: one ```sql setup block" % doc,
                           lambda s=setup: ["second setup block at %s" % s[1].where(-1)]))
        for n, b in enumerate(blocks):
            if b.lang not in ("sql", "console"):
                continue
            name = "%s:%d %s" % (b.path, b.line, b.heading)
            unknown = [f for f in b.flags if f not in ("setup", "no-setup", "no-run")]
            if unknown or (b.lang == "console" and set(b.flags) - {"no-run"}):
                checks.append((name, lambda b=b: ["%s: unknown flags %s" % (b.where(-1), " ".join(b.flags))]))
                continue
            if "no-run" in b.flags:
                if not b.comment_before:
                    checks.append((name, lambda b=b: [
                        "%s: a no-run block needs an HTML comment on the line before it saying why"
                        % b.where(-1)]))
                continue
            nxt = blocks[n + 1] if n + 1 < len(blocks) else None
            shown = nxt if nxt is not None and nxt.blank_before and nxt.lang in ("", "text", "json") else None
            if b.lang == "console":
                def check(b=b, runner=runner):
                    got = [mask_line(l) for l in runner().console(b)]
                    want = [mask_line(l) for l in trim(b.lines)]
                    return diff(b.where, want, got)
            else:
                def check(b=b, shown=shown, runner=runner, setup=setup):
                    pre = [] if ("setup" in b.flags or "no-setup" in b.flags or not setup) else setup[0].lines
                    got = trim(runner().sql("\n".join(pre + b.lines) + "\n"))
                    if shown is None:
                        return diff(lambda i: "%s (no output shown after the block)" % b.where(len(b.lines)),
                                    [], [mask_line(l) for l in got])
                    if shown.lang == "json":
                        want = mask_json_text(shown.lines)
                        return diff(lambda i: json_where(shown, want, i), want, mask_json_text(got))
                    return diff(shown.where, [mask_line(l) for l in trim(shown.lines)],
                                [mask_line(l) for l in got])
            checks.append((name, check))
        checks.append(("%s: every table in one piece" % doc, lambda doc=doc: check_tables(doc)))
        if doc == "docs/sql.md":
            checks.append(("%s: %s, for every way SQLite reads the module name" % (doc, REMOVAL_HEADING),
                           lambda blocks=blocks, runner=runner: check_removal(blocks, runner)))
            checks.append(("%s: every key and backend value of dyng_config documented" % doc,
                           lambda runner=runner: check_config(runner)))
    for doc in sorted(os.listdir(os.path.join(SRCDIR, "docs"))):
        if doc.endswith(".md") and "docs/" + doc not in docs and not sys.argv[1:]:
            checks.append(("docs/%s: every table in one piece" % doc,
                           lambda doc=doc: check_tables("docs/" + doc)))
    print("1..%d" % len(checks))
    failed = 0
    for i, (name, check) in enumerate(checks, 1):
        problems = check()
        if problems:
            failed += 1
            print("not ok %d - %s" % (i, name))
            for p in problems:
                print("# " + p)
        else:
            print("ok %d - %s" % (i, name))
    for state in states:
        if "r" in state:
            shutil.rmtree(state["r"].scratch, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
