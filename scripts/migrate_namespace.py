"""Move folio's code into the one ``folio`` namespace (issue 21): the mechanical part, re-runnable.

Driven by ``MAPPING`` (old module -> new module, longest prefix wins). It

1. moves the files of modules whose new home is another folder (``ingest/model.py`` ->
   ``folio/kernel/model.py``), with ``git mv`` so that history follows them;
2. rewrites every reference to an old module name in the repository's tracked text files:
   ``import``/``from`` statements (also ``>>>`` lines in docstrings, and the dotted chains that a bare
   ``import ingest.tokens`` binds), string literals that name a module (``"api.cli:main"``,
   ``getLogger("api.middleware")``, ``monkeypatch.setattr("ingest.store.X", ...)``, mypy's module
   lists), doctest exception lines (``ingest.errors.InvalidRequest: ...``) and ``python -m api.cli``;
3. re-sorts the import blocks of the Python files it changed (``ruff check --select I --fix``): the
   new names sort differently (``folio.api`` < ``folio.assembly`` < ``folio.client`` ...).

Prose (comments, docstrings other than their ``>>>`` examples, Markdown) is left alone: some docstrings are
part of the OpenAPI schema, which must not change. Running the script twice changes nothing the second time,
so after merging a branch that still uses the old names, run it again.

    python scripts/migrate_namespace.py            # apply
    python scripts/migrate_namespace.py --check    # exit 1 if anything is left to migrate
"""

from __future__ import annotations

import argparse
import io
import logging
import re
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
logger = logging.getLogger("migrate_namespace")

# old module -> new module. The four stage folders stay where they are and are mapped into the namespace
# by pyproject.toml ([tool.setuptools.package-dir]); the kernel modules move into folio/kernel/.
MAPPING: dict[str, str] = {
    "ingest.model": "folio.kernel.model",
    "ingest.errors": "folio.kernel.errors",
    "ingest.tokens": "folio.kernel.tokens",
    "ingest.textnorm": "folio.kernel.textnorm",
    "ingest.index": "folio.kernel.index",
    "retrieval.hit": "folio.kernel.hit",
    "retrieval.pageref": "folio.kernel.pageref",
    # issue 32: the store is one package, the PDF reader another
    "ingest.store": "folio.ingest.storage.store",
    "ingest.tables": "folio.ingest.storage.schema",
    "ingest.rows": "folio.ingest.storage.sql",
    "ingest.claims": "folio.ingest.storage.claims",
    "ingest.objstore": "folio.ingest.storage.objstore",
    "ingest.compaction": "folio.ingest.storage.compaction",
    "ingest.maintenance": "folio.ingest.storage.maintenance",
    "ingest.lance_import": "folio.ingest.storage.lance_import",
    "ingest.limits": "folio.ingest.parse_supervisor",
    "ingest.table_rows": "folio.ingest.row_units",
    "ingest.parse": "folio.ingest.pdf.parse",
    "ingest.validate": "folio.ingest.pdf.validate",
    "ingest.furniture": "folio.ingest.pdf.furniture",
    "ingest.page_deadline": "folio.ingest.pdf.page_deadline",
    "ingest.page_lanes": "folio.ingest.pdf.page_lanes",
    "ingest.pdf_text": "folio.ingest.pdf.text",
    "ingest.pdf_tables": "folio.ingest.pdf.tables.ruled",
    "ingest.pdf_tablechars": "folio.ingest.pdf.tables.chars",
    "ingest.pdf_wordtables": "folio.ingest.pdf.tables.words",
    "ingest.pdf_figures": "folio.ingest.pdf.figures",
    "ingest.pdf_headings": "folio.ingest.pdf.headings",
    "ingest.pdf_ocr": "folio.ingest.pdf.ocr",
    "ingest.pdf_regions": "folio.ingest.pdf.regions",
    "ingest.pdf_sentences": "folio.ingest.pdf.sentences",
    "ingest": "folio.ingest",
    "retrieval": "folio.retrieval",
    "assembly": "folio.assembly",
    "api": "folio.api",
}
# where a module's source lives, for the modules that move to another folder (ingest/store.py moved with git mv
# before this table; its old names are answered by folio/_migration.py)
MOVES: dict[str, str] = {
    "ingest/model.py": "folio/kernel/model.py",
    "ingest/errors.py": "folio/kernel/errors.py",
    "ingest/tokens.py": "folio/kernel/tokens.py",
    "ingest/textnorm.py": "folio/kernel/textnorm.py",
    "ingest/index.py": "folio/kernel/index.py",
    "retrieval/hit.py": "folio/kernel/hit.py",
    "retrieval/pageref.py": "folio/kernel/pageref.py",
    "ingest/tables.py": "ingest/storage/schema.py",
    "ingest/rows.py": "ingest/storage/sql.py",
    "ingest/claims.py": "ingest/storage/claims.py",
    "ingest/objstore.py": "ingest/storage/objstore.py",
    "ingest/compaction.py": "ingest/storage/compaction.py",
    "ingest/maintenance.py": "ingest/storage/maintenance.py",
    "ingest/lance_import.py": "ingest/storage/lance_import.py",
    "ingest/limits.py": "ingest/parse_supervisor.py",
    "ingest/table_rows.py": "ingest/row_units.py",
    "ingest/parse.py": "ingest/pdf/parse.py",
    "ingest/validate.py": "ingest/pdf/validate.py",
    "ingest/furniture.py": "ingest/pdf/furniture.py",
    "ingest/page_deadline.py": "ingest/pdf/page_deadline.py",
    "ingest/page_lanes.py": "ingest/pdf/page_lanes.py",
    "ingest/pdf_text.py": "ingest/pdf/text.py",
    "ingest/pdf_tables.py": "ingest/pdf/tables/ruled.py",
    "ingest/pdf_tablechars.py": "ingest/pdf/tables/chars.py",
    "ingest/pdf_wordtables.py": "ingest/pdf/tables/words.py",
    "ingest/pdf_figures.py": "ingest/pdf/figures.py",
    "ingest/pdf_headings.py": "ingest/pdf/headings.py",
    "ingest/pdf_ocr.py": "ingest/pdf/ocr.py",
    "ingest/pdf_regions.py": "ingest/pdf/regions.py",
    "ingest/pdf_sentences.py": "ingest/pdf/sentences.py",
}
TOPS = sorted({m.split(".")[0] for m in MAPPING})
# the table of moved names and its test name the old modules on purpose
SKIP = {"scripts/migrate_namespace.py", "README.md", "folio/_migration.py", "tests/test_migration.py"}
TEXT_SUFFIXES = {".py", ".toml", ".sh", ".yml", ".yaml", ".cfg", ".ini", ".txt"}
TEXT_NAMES = {"Dockerfile", "run"}

# an old name, or a name already in the namespace whose module moved since (folio.retrieval.hit)
DOTTED = r"(?:folio\.)?(?:" + "|".join(TOPS) + r")(?:\.[A-Za-z_]\w*)*"
STRING_MODULE = re.compile(rf"^({DOTTED})((?::[A-Za-z_]\w*)?)$")
DOCTEST_IMPORT = re.compile(rf"^(\s*(?:>>>|\.\.\.)\s+(?:from|import)\s+)({DOTTED})\b", re.M)
DOCTEST_EXC = re.compile(rf"^(\s*)({DOTTED})(\.[A-Z]\w*:)", re.M)
DASH_M = re.compile(rf"(-m\s+)({DOTTED})\b")
CODE_IMPORT = re.compile(rf"(\b(?:from|import)\s+)((?:{DOTTED}|sys|os)(?:\s*,\s*(?:{DOTTED}|sys|os))*)")
QUOTED = re.compile(rf"""(["'])({DOTTED})((?::[A-Za-z_]\w*)?)\1""")


def old_form(name: str) -> str:
    """``folio.retrieval.hit`` -> ``retrieval.hit``: names of the stage folders, with or without the namespace."""
    parts = name.split(".")
    return name[len("folio.") :] if len(parts) > 1 and parts[0] == "folio" and parts[1] in TOPS else name


def is_candidate(name: str) -> bool:
    return old_form(name).split(".")[0] in TOPS


def is_module(name: str) -> bool:
    """Whether ``name`` is an old module name (a package, a module file, or one that MOVES took away)."""
    name = old_form(name)
    if name in MAPPING:
        return True
    rel = name.replace(".", "/")
    if f"{rel}.py" in MOVES:
        return True
    return (ROOT / f"{rel}.py").is_file() or (ROOT / rel / "__init__.py").is_file()


def new_name(name: str) -> str | None:
    """The new name of module ``name`` (or of an attribute path below one), None if it is not an old name."""
    given, name = name, old_form(name)
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        head = ".".join(parts[:n])
        if head in MAPPING or (n > 1 and is_module(head)):
            for old in sorted(MAPPING, key=len, reverse=True):
                if head == old or head.startswith(old + "."):
                    new = MAPPING[old] + name[len(old) :]
                    return None if new == given else new
    return None


def module_prefix(name: str) -> str | None:
    """The longest prefix of ``name`` with at least two parts that is an old module, else None."""
    parts = name.split(".")
    for n in range(len(parts), 1, -1):
        head = ".".join(parts[:n])
        if is_module(head):
            return head
    return None


def rename_prefix(name: str) -> str:
    head = module_prefix(name)
    if head is None:
        return name
    return (new_name(head) or head) + name[len(head) :]


def move_files() -> list[str]:
    done = []
    for old, new in MOVES.items():
        src, dst = ROOT / old, ROOT / new
        if src.exists() and dst.exists():
            raise SystemExit(f"both {old} and {new} exist: merge {old}'s changes into {new} by hand, delete {old}")
        if src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            if subprocess.run(["git", "mv", old, new], cwd=ROOT, capture_output=True).returncode != 0:
                shutil.move(src, dst)
            done.append(f"{old} -> {new}")
    return done


def rewrite_string(tok: str, docstring: bool) -> str:
    """A string literal token: a whole module name in it, the ``>>>`` examples of a docstring, or the code in
    a string that is not a docstring (``python -c "import api.cli; print('api.cli' in sys.modules)"``)."""
    m = re.match(r"^([rRbBuUfF]*)('''|\"\"\"|'|\")(.*)\2$", tok, re.S)
    if not m:
        return tok
    prefix, quote, body = m.groups()
    sm = STRING_MODULE.match(body)
    if sm and module_prefix(sm.group(1)):
        return f"{prefix}{quote}{rename_prefix(sm.group(1))}{sm.group(2)}{quote}"
    if ">>>" in body:
        body = DOCTEST_IMPORT.sub(lambda d: d.group(1) + (new_name(d.group(2)) or d.group(2)), body)
        body = DOCTEST_EXC.sub(lambda d: d.group(1) + rename_prefix(d.group(2)) + d.group(3), body)
        return f"{prefix}{quote}{body}{quote}"
    if not docstring:
        body = CODE_IMPORT.sub(lambda d: d.group(1) + rename_list(d.group(2)), body)
        body = QUOTED.sub(lambda q: q.group(1) + rename_prefix(q.group(2)) + q.group(3) + q.group(1), body)
        return f"{prefix}{quote}{body}{quote}"
    return tok


def rename_list(names: str) -> str:
    """``sys, api.cli_query, api.cli_keys`` with each old module renamed."""
    return re.sub(
        rf"(?<![\w.]){DOTTED}\b",
        lambda m: (new_name(m.group(0)) or m.group(0)) if "." in m.group(0) else m.group(0),
        names,
    )


def dotted_at(toks: list[tokenize.TokenInfo], i: int) -> tuple[str, int]:
    """The dotted name that starts at token ``i``, and the index after it."""
    parts = [toks[i].string]
    j = i + 1
    while j + 1 < len(toks) and toks[j].string == "." and toks[j + 1].type == tokenize.NAME:
        parts.append(toks[j + 1].string)
        j += 2
    return ".".join(parts), j


def python_edits(src: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """(start, end, replacement) for every token span of ``src`` that names an old module."""
    toks = [
        t for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type not in (tokenize.NL, tokenize.COMMENT)
    ]
    edits: list[tuple[tuple[int, int], tuple[int, int], str]] = []
    bare: set[str] = set()  # modules bound by a bare ``import ingest.tokens``: code says ``ingest.tokens.x``
    stmt_start = True
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.type == tokenize.STRING:
            new = rewrite_string(t.string, docstring=stmt_start)
            if new != t.string:
                edits.append((t.start, t.end, new))
        elif stmt_start and t.type == tokenize.NAME and t.string in ("from", "import"):
            i = import_edits(toks, i, edits, bare)
            stmt_start = False
            continue
        elif (
            t.type == tokenize.NAME
            and (t.string in TOPS or t.string == "folio")
            and bare
            and (i == 0 or toks[i - 1].string != ".")
        ):
            name, j = dotted_at(toks, i)
            hit = next((b for b in sorted(bare, key=len, reverse=True) if name == b or name.startswith(b + ".")), None)
            if hit:
                edits.append((t.start, toks[j - 1].end, (new_name(hit) or hit) + name[len(hit) :]))
                i = j
                continue
        stmt_start = t.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT) or t.string == ";"
        i += 1
    return edits


def import_edits(toks: list[tokenize.TokenInfo], i: int, edits: list, bare: set[str]) -> int:
    """Edits for the import statement at token ``i``; returns the index after it."""
    if toks[i].string == "from":
        if toks[i + 1].type != tokenize.NAME:  # a relative import
            return skip_statement(toks, i + 1)
        name, k = dotted_at(toks, i + 1)
        new = from_target(toks, k, name) if is_candidate(name) else None
        if new:
            edits.append((toks[i + 1].start, toks[k - 1].end, new))
        return skip_statement(toks, k)
    j = i + 1
    while j < len(toks) and toks[j].type not in (tokenize.NEWLINE, tokenize.ENDMARKER) and toks[j].string != ";":
        if toks[j].type == tokenize.NAME and (j == i + 1 or toks[j - 1].string == ","):
            name, k = dotted_at(toks, j)
            new = new_name(name) if is_candidate(name) and "." in name else None
            if new:
                edits.append((toks[j].start, toks[k - 1].end, new))
                if k >= len(toks) or toks[k].string != "as":
                    bare.add(name)
            j = k
            continue
        j += 1
    return j


def from_target(toks: list[tokenize.TokenInfo], k: int, module: str) -> str | None:
    """The new module of ``from module import a, b``. ``from ingest import errors`` becomes
    ``from folio.kernel import errors`` (the package its modules moved to); refuse a mix of homes."""
    homes = set()
    for t in toks[k : skip_statement(toks, k)]:
        if t.type == tokenize.NAME and t.string not in ("import", "as"):
            sub = old_form(f"{module}.{t.string}")
            if sub in MAPPING:
                homes.add(MAPPING[sub].rsplit(".", 1)[0])
    base = new_name(module) or module
    if not homes or homes == {base}:
        return None if base == module else base
    if len(homes) == 1 and not any(
        t.type == tokenize.NAME and t.string not in ("import", "as") and old_form(f"{module}.{t.string}") not in MAPPING
        for t in toks[k : skip_statement(toks, k)]
    ):
        return homes.pop()
    raise SystemExit(f"line {toks[k].start[0]}: 'from {module} import ...' mixes moved and staying names: split it")


def skip_statement(toks: list[tokenize.TokenInfo], j: int) -> int:
    while j < len(toks) and toks[j].type not in (tokenize.NEWLINE, tokenize.ENDMARKER) and toks[j].string != ";":
        j += 1
    return j


def apply_edits(src: str, edits: list[tuple[tuple[int, int], tuple[int, int], str]]) -> str:
    lines = src.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    out, pos = [], 0
    for start, end, new in sorted(edits):
        a, b = offsets[start[0] - 1] + start[1], offsets[end[0] - 1] + end[1]
        out.append(src[pos:a])
        out.append(new)
        pos = b
    out.append(src[pos:])
    return "".join(out)


def rewrite_text(src: str) -> str:
    """A non-Python file: quoted module names (pyproject's entry point and mypy lists) and ``-m module``."""
    src = QUOTED.sub(lambda m: m.group(1) + rename_prefix(m.group(2)) + m.group(3) + m.group(1), src)
    return DASH_M.sub(lambda m: m.group(1) + rename_prefix(m.group(2)), src)


def tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = []
    for rel in out.decode().split("\0"):
        p = ROOT / rel
        if rel and rel not in SKIP and not p.is_symlink() and p.is_file():
            if p.suffix in TEXT_SUFFIXES or p.name in TEXT_NAMES:
                files.append(p)
    return files


def migrate(check: bool) -> int:
    moved = [] if check else move_files()
    changed = []
    for path in tracked_files():
        src = path.read_text(encoding="utf-8")
        new = apply_edits(src, python_edits(src)) if path.suffix == ".py" else rewrite_text(src)
        if new != src:
            changed.append(path)
            if not check:
                path.write_text(new, encoding="utf-8")
    py = [str(p.relative_to(ROOT)) for p in changed if p.suffix == ".py"]
    if py and not check:
        ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff") or "ruff"
        subprocess.run([ruff, "check", "--no-cache", "--quiet", "--select", "I", "--fix", *py], cwd=ROOT, check=False)
    for line in moved:
        logger.info("moved %s", line)
    for p in changed:
        logger.info("%s %s", "would rewrite" if check else "rewrote", p.relative_to(ROOT))
    return 1 if check and (changed or any((ROOT / old).exists() for old in MOVES)) else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything is left to migrate")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    sys.exit(migrate(args.check))


if __name__ == "__main__":
    main()
