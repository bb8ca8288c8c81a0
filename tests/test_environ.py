"""``os.environ`` is read in the settings module only (issue 21: one typed configuration tree, read once).

Today's other readers are listed in ``ALLOWED`` with how many uses each has; the list may only shrink. A new
``os.environ`` / ``os.getenv`` anywhere else fails here: put the variable into ``folio.api.settings`` and pass
the value down as an argument instead.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ingest", "retrieval", "assembly", "api", "folio")
SETTINGS = {"api/settings.py"}  # the settings tree: reading the environment is its job
# Today's offenders (file: uses), to move into the settings tree; each count may only go down.
ALLOWED = {
    "api/cluster.py": 2,  # FOLIO_RAY_CPUS_PER_DOC, FOLIO_RAY_GPUS_PER_DOC
    "api/cluster_local.py": 6,  # the local Ray demo sets and forwards the loopback/S3 variables
    "api/cli_common.py": 1,  # FOLIO_URL: the server folio context/search/ask ask by default, as the client's
    "folio/client.py": 2,  # FOLIO_API_KEY, FOLIO_URL: the client has no server settings to read
    "folio/kernel/tokens.py": 2,  # TIKTOKEN_CACHE_DIR, for tiktoken
    "ingest/embed.py": 4,  # FOLIO_MODEL_CACHE, FOLIO_EMBED_BACKEND, FOLIO_QUERY_BACKEND, FOLIO_EMBED_THREADS
    "ingest/limits.py": 1,  # IngestLimits.from_env: FOLIO_INGEST_* budgets
    "ingest/objstore.py": 1,  # storage_options_from_env: AWS_* and FOLIO_STORAGE_OPTIONS
    "ingest/pdf_ocr.py": 1,  # Tesseract's environment (OMP_THREAD_LIMIT on top of ours)
    "ingest/pdf_tables.py": 1,  # FOLIO_TABLES_BASELINE, a benchmark switch
    "ingest/store.py": 3,  # FOLIO_DATA, XDG_DATA_HOME: default_data_dir
    "ingest/torchfix.py": 2,  # HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE set before transformers loads
}


def environ_uses(tree: ast.AST) -> int:
    """``os.environ``, ``os.getenv`` and ``from os import environ/getenv`` in one module."""
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            n += node.attr in ("environ", "getenv", "environb", "getenvb")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            n += sum(a.name in ("environ", "getenv", "environb", "getenvb") for a in node.names)
    return n


def uses_by_file() -> Counter[str]:
    out: Counter[str] = Counter()
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in SETTINGS:
                n = environ_uses(ast.parse(path.read_text(encoding="utf-8")))
                if n:
                    out[rel] = n
    return out


def test_environ_is_read_only_by_the_settings() -> None:
    found = uses_by_file()
    grown = {f: n for f, n in found.items() if n > ALLOWED.get(f, 0)}
    assert not grown, f"os.environ read outside the settings module (move it into folio.api.settings): {grown}"


def test_the_allow_list_only_shrinks() -> None:
    found = uses_by_file()
    stale = {f: (n, found.get(f, 0)) for f, n in ALLOWED.items() if found.get(f, 0) < n}
    assert not stale, f"fewer os.environ uses than ALLOWED says (allowed, found): lower the counts: {stale}"


def test_the_scan_sees_every_form() -> None:
    src = "import os\nfrom os import getenv\na = os.environ['X']\nb = os.getenv('Y')\nc = getenv('Z')\n"
    assert environ_uses(ast.parse(src)) == 3  # os.environ, os.getenv, and the from-import of getenv
