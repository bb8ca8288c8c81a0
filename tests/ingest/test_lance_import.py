"""LanceDB imported without building its REST client (``folio.ingest.storage.lance_import``): issue 34, item 2. The
client's API classes load on first use, its models build their validators on first use, and both still work;
``@override`` marks LanceDB's methods without checking them, as on Python 3.12."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
import folio.ingest.storage.lance_import
from lance_namespace_urllib3_client.models import ListTablesResponse
from pydantic import BaseModel
from pydantic._internal._config import config_defaults
before = {
    "apis_loaded": sorted(m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.api")),
    "model_built": ListTablesResponse.__pydantic_complete__,
    "default_restored": config_defaults["defer_build"] is False,
}
class Later(BaseModel):
    x: int
made = ListTablesResponse(tables=["a"])  # a deferred model builds when first used, and validates
from lance_namespace_urllib3_client import TableApi  # the package's own names: its __init__ runs now
import lancedb.db, overrides
checks = sys.version_info >= (3, 12) or overrides.override.__module__ == "overrides.overrides"
print(json.dumps({**before, "later_built": Later.__pydantic_complete__, "tables": made.tables,
                  "table_api": TableApi.__name__, "marked": lancedb.db.LanceDBConnection.open_table.__override__,
                  "override_checks_again": checks}))
"""


def test_lancedb_imports_without_building_its_rest_client() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found == {
        "apis_loaded": [],
        "model_built": False,
        "default_restored": True,
        "later_built": True,
        "tables": ["a"],
        "table_api": "TableApi",
        "marked": True,  # LanceDB's methods carry @override's mark (EnforceOverrides reads it), unchecked
        "override_checks_again": True,  # the package's own decorator is back once LanceDB is imported
    }


def test_the_store_works_through_it(tmp_path: Path) -> None:
    """A store opens, takes a version and finds it again through the LanceDB imported here."""
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.lance_import import import_lancedb
    from folio.ingest.storage.store import Store

    assert import_lancedb() is sys.modules["lancedb"]
    store = Store(tmp_path / "data")
    report = ingest_path(store, ROOT / "sample_pdfs" / "support-policy-v1.pdf", ocr=False)
    assert [v.version_id for v in store.list_versions()] == [report.version_id]
