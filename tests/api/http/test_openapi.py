"""OpenAPI snapshot: the REST contract changes only on purpose.

Regenerate with ``FOLIO_GEN_TEST_DATA=1 pytest tests/api/http/test_openapi.py`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

from folio.api.http.app import create_app
from folio.settings import Settings
from tests.switches import switch

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "openapi.json"


def test_openapi_matches_snapshot(tmp_path: Path) -> None:
    spec = create_app(Settings(data=str(tmp_path))).openapi()
    spec["info"].pop("version", None)
    text = json.dumps(spec, indent=1, sort_keys=True) + "\n"
    if switch("FOLIO_GEN_TEST_DATA") == "1":
        GOLDEN.write_text(text)
    assert GOLDEN.exists(), (
        "no snapshot: run with FOLIO_GEN_TEST_DATA=1 once and commit tests/api/data/openapi.json"
    )
    assert json.loads(GOLDEN.read_text()) == json.loads(text), (
        "OpenAPI changed: regenerate with FOLIO_GEN_TEST_DATA=1"
    )


def test_openapi_documents_the_contract(tmp_path: Path) -> None:
    spec = create_app(Settings(data=str(tmp_path))).openapi()
    paths = spec["paths"]
    for path, method in [
        ("/v1/documents", "post"),
        ("/v1/documents", "get"),
        ("/v1/context", "post"),
        ("/v1/search", "post"),
        ("/v1/verify", "post"),
        ("/v1/regions/{region_id}", "get"),
        ("/v1/jobs/{job_id}", "get"),
        ("/v1/health", "get"),
    ]:
        op = paths[path][method]
        assert op["summary"] and op["tags"], (path, method)
    ctx = spec["components"]["schemas"]["ContextRequest"]["properties"]
    for field in (
        "query",
        "budget",
        "doc_ids",
        "strategy",
        "window_before",
        "order",
        "include_images",
        "k",
        "rerank",
    ):
        assert field in ctx
    err = paths["/v1/documents"]["post"]["responses"]["413"]["content"]["application/json"]["schema"]
    assert err["$ref"].endswith("/ErrorResponse")
