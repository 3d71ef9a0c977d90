# tests/test_comment_refs.py: the comments that say where something lives
# still say it right.  A comment of the C sources (/* */ and // in *.c, *.h,
# *.cu, *.cuh of ext/ engine/ cuda/ tests/ bench/ python/) or of sql/*.sql
# (--) that names a source file together with an identifier, as in
#
#   see dyngGraphSync in sync.c          dyng_sssp_update in engine/sssp.h
#   ext/cache.c's nGaveUpAt              `ext/sync.c` dyngKeepBatch
#   ext/capture.c dyngAppendChecks       query_double (bench_util.h)
#   (dyngTreeGet, ext/cache.c)           (cuda/dev_graph.cu, dev_graph_follow)
#   engine/plugin.h: dyng_plugin_entry   ext/sync.c dyngKeepBatch()
#   options.c (dyngGraphRef)             dyng_changes of engine/types.h
#   graph.c's one-at-a-time loop (dyng__apply_loop)
#
# refers to that identifier in that file.  The reference holds when the
# file exists (a path from the source folder or from the referring file's
# folder, or a basename in the referring file's folder or naming exactly
# one project file; one naming several is reported as ambiguous) and the
# identifier is in it as a whole word outside its comments (a.b: every
# part).  A function or macro that some C file declares or defines (at the
# start of a line, `#define`, or a member `(*name)(`) must be declared or
# defined in the file named, not merely used there: "dyngGraphSync in
# graph_vtab.c" fails although graph_vtab.c calls it.  An identifier is a
# name that looks like code: with an underscore, a lowercase letter
# followed by an uppercase one, or `()` after it; plain words are not
# references.  For a .sql file, a name built from a placeholder counts as
# in it (net_log_ins for {{trg_ins}}: the same last part after an
# underscore).  "file.c: ident" on file.c's own head line is its
# description, not a reference.
#
# Besides:
#   - an .sql file's "filled in by FILE" (its placeholders): FILE must name
#     the .sql file outside its comments (capture.c includes
#     "sql/capture.sql.h");
#   - a header's section comments, /* ---- file.c ... ---- */: every
#     function declared below one, up to the next, is declared or defined
#     in file.c; likewise the declarations right after a comment (up to a
#     blank line) that starts "file.c:" or whose first sentence ends with
#     "(file.c).";
#   - every other name of a source file in a comment names one that exists
#     (unambiguously), but for the headers of SQLite, CUDA, Jansson and
#     cmocka, SQL's OLD.c and NEW.c, and files the build makes
#     (sql/*.sql.h, config.h, plugin_build.h).
#
# Each failure is printed as `path:line: 'ident' is not in file` (or why
# the file cannot be found); the test fails when there is one, or when it
# checked fewer than MIN_REFS references to an identifier (the patterns
# matching nothing).  Generated files, tests/fuzz/corpus and build outputs
# (.libs, .deps, build*/, fuzz-build) are not scanned.
#
# TAP, one test.  DYNG_SRCDIR (set by make check; else the folder above
# this script) is the source tree.  Arguments, when given, name the files
# (relative to the source tree) to scan instead of all of them.
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("DYNG_SRCDIR") or os.path.dirname(HERE)
MIN_REFS = 20

SCAN_DIRS = ["ext", "engine", "cuda", "tests", "bench", "python", "sql"]
C_EXTS = (".c", ".h", ".cu", ".cuh")
# Files a reference may name: the sources, and the scripts next to them.
TARGET_EXTS = C_EXTS + (".sql", ".sh", ".py")
SKIP_DIRS = {".libs", ".deps", "corpus", "fuzz-build", "__pycache__", ".git", "autom4te.cache", ".gpu-deps"}
# Made by the build, not in the source tree: references to them are not checked.
GENERATED = re.compile(r"(\.sql\.h|^config\.h|plugin_build\.h)$")

FILE = r"(?:[A-Za-z0-9_.-]+/)*[A-Za-z_][A-Za-z0-9_-]*\.(?:c|h|cu|cuh|sql)"
IDENT = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
F = r"(?<![\w/.])`?(?P<file>" + FILE + r")`?(?![\w/])"
I = r"(?<![\w#.>-])`?(?P<ident>" + IDENT + r")(?P<call>\(\))?`?(?![\w(])"
I_CALL = r"(?<![\w#.>-])`?(?P<ident>" + IDENT + r")(?P<call>\(\))?`?(?![\w])"
FORMS = [
    # dyngGraphSync in sync.c, dyng_sssp_update() of engine/sssp.h
    re.compile(I_CALL + r"\s+(?:in|of|from)\s+(?:the\s+)?" + F),
    # ext/cache.c's nGaveUpAt
    re.compile(F + r"'s\s+" + I),
    # ext/sync.c dyngKeepBatch, `ext/sync.c` dyngKeepBatch(), file.c: ident
    re.compile(F + r"(?P<colon>:)?\s+" + I),
    # query_double (bench_util.h), dyng_plugin_entry() (cuda/entry.cu)
    re.compile(I_CALL + r"\s*\(\s*" + F + r"\s*[),;]"),
    # (dyngTreeGet, ext/cache.c)
    re.compile(r"\(\s*" + I_CALL + r"\s*[,;]\s*(?:see\s+)?" + F + r"\s*\)"),
    # (cuda/dev_graph.cu, dev_graph_follow)
    re.compile(r"\(\s*" + F + r"\s*[,;:]\s*" + I_CALL + r"\s*\)"),
    # options.c (dyngGraphRef)
    re.compile(F + r"\s*\(\s*" + I_CALL + r"\s*\)"),
    # graph.c's one-at-a-time loop (dyng__apply_loop)
    re.compile(F + r"'s\s+[^()]{1,60}?\(\s*" + I_CALL + r"\s*[),]"),
]
# Files of other projects, and SQL's OLD.c / NEW.c, that comments mention.
EXTERNAL = re.compile(r"^(?:sqlite3\w*\.h|jansson\.h|cmocka\.h|cuda\w*\.h|nvml\.h|(?:OLD|NEW)\.\w+)$")
# The forms above whose identifier may end a list, and the list before it.
LISTED = FORMS[0], FORMS[3]
LIST_BEFORE = re.compile(r"(?<![\w#.>-])(?:" + IDENT + r"(?:\(\))?\s*,\s*)*" + IDENT
                         + r"(?:\(\))?\s*(?:,\s*)?(?:and|or)\s+$|(?<![\w#.>-])(?:" + IDENT
                         + r"(?:\(\))?\s*,\s*)+$")
FILLED = re.compile(r"filled\s+(?:in\s+)?by\s+" + F)
SECTION = re.compile(r"^/\*\s*-{3,}\s+(?P<file>" + FILE + r")\b.*-{3,}\s*\*/\s*$")
# A function declared at the start of a line of a header: `type name(`.
# Where a function is declared or defined, a macro defined.
DECLARED = re.compile(r"^(?:[A-Za-z_]\w*[ \t*]+)+\**(?P<name>[A-Za-z_]\w*)\s*\(", re.M)
DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)
POINTER = re.compile(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(")  # a member (*name)(...)
KEYWORDS = {"if", "while", "for", "return", "switch", "sizeof", "else", "case", "do"}
DECL = re.compile(r"^(?!static\b|typedef\b|#)[A-Za-z_][\w \t*]*?\b(?P<name>[A-Za-z_]\w*)\s*\(", re.M)


def looks_like_code(ident, call):
    """A name, not a word: an underscore, a camel hump, or () after it."""
    if call:
        return True
    return "_" in ident or re.search(r"[a-z][A-Z]", ident) is not None


def split_c(text):
    """Comments and the rest of C source text: ([(line, comment text)], code)."""
    comments, code = [], []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            comments.append((line, text[i + 2:j - 2], False))
            line += text.count("\n", i, j)
            code.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((line, text[i + 2:j], True))
            code.append(" ")
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            code.append(text[i:j])
            line += text.count("\n", i, j)
            i = j
        else:
            j = i
            while j < n and text[j] not in "/\"'":
                j += 1
            j = max(j, i + 1)
            code.append(text[i:j])
            line += text.count("\n", i, j)
            i = j
    return merge_line_comments(comments), "".join(code)


def split_sql(text):
    """Comments (--) and the rest of SQL text, as split_c."""
    comments, code = [], []
    for n, raw in enumerate(text.split("\n"), 1):
        # Quotes in SQL comments are prose; in code they enclose literals.
        k, quote = 0, None
        while k < len(raw):
            ch = raw[k]
            if quote:
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif raw.startswith("--", k):
                comments.append((n, raw[k + 2:], True))
                break
            k += 1
        code.append(raw[:k])
    return merge_line_comments(comments), "\n".join(code)


def merge_line_comments(comments):
    """Comments to the end of the line (// or --) on consecutive lines
    joined into one; comments are (line, text, to end of line)."""
    out = []
    for line, body, eol in comments:
        if eol and out and out[-1][2] and out[-1][0] + out[-1][1].count("\n") + 1 == line:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + body, True)
        else:
            out.append((line, body, eol))
    return [(line, body) for line, body, _ in out]


def flatten(body):
    """A comment's text with each line's leading * or ** gone, and where
    each line starts in it."""
    starts, parts, pos = [], [], 0
    for k, raw in enumerate(body.split("\n")):
        s = re.sub(r"^\s*\*+(?!/)", "", raw) if k else raw
        starts.append(pos)
        parts.append(s)
        pos += len(s) + 1
    return " ".join(parts), starts


def line_of(starts, first, offset):
    k = 0
    while k + 1 < len(starts) and starts[k + 1] <= offset:
        k += 1
    return first + k


def project_files():
    """Every file a reference may name, relative to SRCDIR."""
    found = []
    for top in SCAN_DIRS:
        root = os.path.join(SRCDIR, top)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build"))
            for name in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, name), SRCDIR).replace(os.sep, "/")
                if name.endswith(TARGET_EXTS) and not GENERATED.search(name):
                    found.append(rel)
    return found


class Tree:
    def __init__(self):
        self.files = project_files()
        self.by_base = {}
        for rel in self.files:
            self.by_base.setdefault(os.path.basename(rel), []).append(rel)
        self.cache = {}
        self.decls = {}
        self.home = None
        self.n_names = 0    # file names in comments that name a project file

    def resolve(self, name, referrer):
        """(path, None) or (None, why)."""
        if GENERATED.search(os.path.basename(name)):
            return None, None
        if "/" in name:
            for cand in (name, os.path.normpath(os.path.join(os.path.dirname(referrer), name))):
                if cand in self.files:
                    return cand, None
            return None, "no such file %s" % name
        near = os.path.join(os.path.dirname(referrer), name).replace(os.sep, "/")
        if near in self.files:
            return near, None
        hits = self.by_base.get(name, [])
        if len(hits) == 1:
            return hits[0], None
        if not hits:
            return None, "no file %s in the project" % name
        return None, "%s is ambiguous (%s)" % (name, ", ".join(hits))

    def split(self, rel):
        if rel not in self.cache:
            with open(os.path.join(SRCDIR, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
            if rel.endswith(".sql"):
                self.cache[rel] = split_sql(text)
            elif rel.endswith(C_EXTS):
                self.cache[rel] = split_c(text)
            else:
                self.cache[rel] = ([], text)
        return self.cache[rel]

    def declared(self, rel):
        """The functions rel declares or defines and the macros it defines."""
        if rel not in self.decls:
            code = self.split(rel)[1] if rel.endswith(C_EXTS) else ""
            names = {m.group("name") for m in DECLARED.finditer(code)} - KEYWORDS
            names |= set(DEFINE.findall(code)) | set(POINTER.findall(code))
            self.decls[rel] = names
        return self.decls[rel]

    def homes(self, ident):
        """The C files that declare or define ident (a function or macro)."""
        if self.home is None:
            self.home = {}
            for rel in self.files:
                for name in self.declared(rel):
                    self.home.setdefault(name, []).append(rel)
        return self.home.get(ident, [])

    def has(self, rel, ident):
        """Whether ident is in rel outside its comments; a function or macro
        that some file declares must be declared in rel (or the reason)."""
        homes = self.homes(ident)
        if homes:
            return rel in homes or "it is in " + ", ".join(homes)
        code = self.split(rel)[1]
        for part in ident.split("."):
            if re.search(r"(?<![\w])" + re.escape(part) + r"(?![\w])", code):
                continue
            if rel.endswith(".sql"):
                tail = part.rsplit("_", 1)[-1]
                keys = re.findall(r"\{\{(\w+)\}\}", code)
                if "_" in part and any(k.rsplit("_", 1)[-1] == tail for k in keys):
                    continue
            return False
        return True


def scanned_files(tree, args):
    if args:
        return args
    return [f for f in tree.files
            if (f.endswith(C_EXTS) and not f.startswith("sql/"))
            or (f.startswith("sql/") and f.endswith(".sql"))]


def check_ref(tree, rel, m, name, ident, call, line, seen, used, problems):
    """One reference, of a form's match m: 1 when it was checked."""
    if not looks_like_code(ident, call) or re.search(FILE + "$", ident):
        return 0
    used.add(m.start("file"))
    if (line, ident, name) in seen:
        return 0
    seen.add((line, ident, name))
    target, why = tree.resolve(name, rel)
    if target == rel and "colon" in m.groupdict() and m.group("colon"):
        return 0  # "file.c: what it does", its head line
    if why:
        problems.append("%s:%d: '%s': %s" % (rel, line, ident, why))
        return 0
    if not target:
        return 0
    found = tree.has(target, ident)
    if found is not True:
        problems.append("%s:%d: '%s' is not in %s%s"
                        % (rel, line, ident, name, " (%s)" % found if found else ""))
    return 1


def check_file(tree, rel, problems):
    """Checks rel's references; returns how many it checked: (in the
    text of comments, declarations under a comment naming their file)."""
    comments, code = tree.split(rel)
    checked = 0
    seen = set()
    for first, body in comments:
        text, starts = flatten(body)
        used = set()    # where the file names the forms matched are
        for form in FORMS:
            for m in form.finditer(text):
                name = m.group("file")
                idents = [(m.group("ident"), m.group("call"), m.start("ident"))]
                if form in LISTED:
                    # "a, b and c in file.c", "a, b, c (file.c)": each of them
                    before = LIST_BEFORE.search(text, 0, m.start("ident"))
                    if before:
                        idents += [(x.group(1), x.group(2), x.start(1))
                                   for x in re.finditer(r"(" + IDENT + r")(\(\))?", before.group(0))
                                   if x.group(1) not in ("and", "or")]
                        idents = [(i, c, o if o >= m.start("ident") else o + before.start())
                                  for i, c, o in idents]
                for ident, call, offset in idents:
                    checked += check_ref(tree, rel, m, name, ident, call, line_of(starts, first, offset),
                                         seen, used, problems)
        for m in re.finditer(F, text):
            name = m.group("file")
            if EXTERNAL.match(name) or m.start("file") in used:
                continue
            target, why = tree.resolve(name, rel)
            if why:
                problems.append("%s:%d: %s" % (rel, line_of(starts, first, m.start("file")), why))
            elif target:
                tree.n_names += 1
        if rel.endswith(".sql"):
            for m in FILLED.finditer(text):
                line = line_of(starts, first, m.start("file"))
                target, why = tree.resolve(m.group("file"), rel)
                if why:
                    problems.append("%s:%d: %s" % (rel, line, why))
                    continue
                checked += 1
                me = os.path.basename(rel)
                if not re.search(r"(?<![\w])" + re.escape(me) + r"(?![\w])", tree.split(target)[1]):
                    problems.append("%s:%d: '%s' is not in %s (it does not fill %s)"
                                    % (rel, line, me, m.group("file"), me))
    if rel.endswith((".h", ".cuh")):
        return checked, check_sections(tree, rel, problems)
    return checked, 0


def check_sections(tree, rel, problems):
    """A header's /* ---- file.c ---- */ sections: their declarations are
    file.c's definitions."""
    with open(os.path.join(SRCDIR, rel), encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    checked, target, name = 0, None, None
    code_lines = tree.split(rel)[1].split("\n")
    for n, raw in enumerate(lines, 1):
        m = SECTION.match(raw)
        if m:
            name = m.group("file")
            target, why = tree.resolve(name, rel)
            if why:
                problems.append("%s:%d: section %s: %s" % (rel, n, name, why))
            continue
        if not target or n > len(code_lines):
            continue
        d = DECL.match(code_lines[n - 1])
        if not d or d.group("name") in ("if", "while", "for", "return", "switch", "sizeof"):
            continue
        fn = d.group("name")
        checked += 1
        defined = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b" + re.escape(fn) + r"\s*\(", re.M)
        if not defined.search(tree.split(target)[1]):
            problems.append("%s:%d: '%s' is not in %s (declared in its section)" % (rel, n, fn, name))
    # A comment that says where what follows lives: "file.c: ..." or a
    # first sentence ending in "(file.c)."; what follows is the declarations
    # after it, up to a blank line or the next comment.
    for first, body in tree.split(rel)[0]:
        text = flatten(body)[0].strip()
        m = re.match(r"(?P<file>" + FILE + r"):\s", text) or \
            re.match(r"[^.]*?\((?P<file>" + FILE + r")\)(?:\.\s|\.?$)", text)
        if not m:
            continue
        name = m.group("file")
        target, why = tree.resolve(name, rel)
        if target == rel or not (target or why):
            continue
        n = first + body.count("\n")
        if why:
            problems.append("%s:%d: %s" % (rel, first, why))
            continue
        while n < len(lines) and lines[n].strip() and not lines[n].lstrip().startswith(("/*", "//", "#")):
            d = DECL.match(code_lines[n])
            n += 1
            if not d or d.group("name") in KEYWORDS:
                continue
            checked += 1
            if d.group("name") not in tree.declared(target):
                problems.append("%s:%d: '%s' is not in %s (declared below its comment)"
                                % (rel, n, d.group("name"), name))
    return checked


def main(args):
    tree = Tree()
    problems, checked, decls = [], 0, 0
    files = scanned_files(tree, args)
    for rel in files:
        if not os.path.exists(os.path.join(SRCDIR, rel)):
            problems.append("%s: no such file" % rel)
            continue
        n_refs, n_decls = check_file(tree, rel, problems)
        checked += n_refs
        decls += n_decls
    print("1..1")
    for p in problems:
        print(p)
    if not args and checked < MIN_REFS:
        problems.append("only %d references in comments checked (at least %d expected)"
                        % (checked, MIN_REFS))
        print(problems[-1])
    if problems:
        print("not ok 1 - references of comments: %d of %d + %d checked in %d files do not hold"
              % (len(problems), checked, decls, len(files)))
        return 1
    print("ok 1 - references of comments: %d to an identifier in a file, %d declarations under a"
          " comment naming their file, %d file names, checked in %d files"
          % (checked, decls, tree.n_names, len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
