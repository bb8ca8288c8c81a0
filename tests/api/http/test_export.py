"""``GET /v1/documents/{doc_id}/export`` (issue 48, item 4): a document version out as Markdown or JSON,
checked against the regions the store holds for the sample PDFs (not against the exporter's own ordering)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.ingest.storage.store import Store
from folio.kernel.model import FigurePayload, Region
from tests.api.conftest import assert_error, make_settings

MARKER = re.compile(r"^<!-- page (\d+) -->$", re.M)


def stored(data: Path, doc_id: str, version_id: str | None = None) -> tuple[int, list[Region]]:
    """The version's page count and every region the store holds for it."""
    store = Store(data)
    v = store.get_version(doc_id, version_id)
    return v.pages, list(store.region_index(doc_id, v.version_id).regions())


def page_spans(md: str, pages: int) -> dict[int, tuple[int, int]]:
    """Where each page's part of the Markdown starts and ends: one marker per page, in page order."""
    found = [(int(m[1]), m.start()) for m in MARKER.finditer(md)]
    assert [p for p, _ in found] == list(range(1, pages + 1)), found
    ends = [start for _, start in found[1:]] + [len(md)]
    return {p: (start, end) for (p, start), end in zip(found, ends, strict=True)}


@pytest.mark.parametrize("doc_id", ["support-policy", "register"])
def test_markdown_holds_every_region_in_order_on_its_page(client: TestClient, api_master: Path, doc_id: str) -> None:
    resp = client.get(f"/v1/documents/{doc_id}/export")  # default: markdown, the latest version
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "text/markdown; charset=utf-8"
    md = resp.text
    pages, regions = stored(api_master, doc_id)
    spans = page_spans(md, pages)

    # paragraphs: each one's text, in the order of the parse (page, then reading order), inside its page's part
    paragraphs = sorted((r for r in regions if r.kind == "paragraph"), key=lambda r: (r.first_page, r.seq))
    assert paragraphs
    at = 0
    for p in paragraphs:
        found = md.find(p.text.strip(), at)
        assert found >= 0, (p.region_id, p.text[:80])
        start, end = spans[p.first_page]
        assert start <= found < end, p.region_id
        at = found
    # headings: each section's title at its level
    for s in (r for r in regions if r.kind == "section"):
        line = "#" * min(max(s.level, 1), 6) + " " + " ".join(s.heading_path[-1].split())
        assert re.search(f"^{re.escape(line)}$", md, re.M), line
    # tables: the stored Markdown table, every row
    for t in (r for r in regions if r.kind == "table"):
        for row in t.text.strip().splitlines():
            assert row in md, (t.region_id, row)
    # nothing but those: every block is a marker, a heading, a table, a figure or a stored paragraph (no page
    # text repeated, no running header or footer that ingest kept out of the regions)
    texts = {p.text.strip() for p in paragraphs} | {t.text.strip() for t in regions if t.kind == "table"}
    for block in md.strip().split("\n\n"):
        assert MARKER.fullmatch(block) or block.startswith(("#", "![", "*")) or block in texts, block[:80]


def test_markdown_figures_link_images_that_resolve(client: TestClient, api_master: Path) -> None:
    figures = [
        r for doc in ("support-policy", "register") for r in stored(api_master, doc)[1] if r.kind == "figure"
    ]
    if not figures:
        pytest.skip("the sample documents hold no figure")
    for f in figures:
        md = client.get(f"/v1/documents/{f.doc_id}/export").text
        link = f"/v1/regions/{f.region_id}/image"
        assert f"]({link})" in md
        caption = f.payload.caption if isinstance(f.payload, FigurePayload) else ""
        if caption:
            assert f"*{' '.join(caption.split())}*" in md
        image = client.get(link)
        assert image.status_code == 200 and image.content.startswith(b"\x89PNG")


def test_json_lists_the_regions_with_locators_in_the_markdown_order(client: TestClient, api_master: Path) -> None:
    resp = client.get("/v1/documents/register/export", params={"format": "json"})
    assert resp.status_code == 200, resp.text
    body = resp.json()
    pages, regions = stored(api_master, "register")
    assert (body["doc_id"], body["pages"], body["filename"]) == ("register", pages, "federal-register-excerpt.pdf")
    assert body["count"] == len(body["data"]) > 0
    exported = {r.region_id: r for r in regions if r.kind in ("section", "paragraph", "table", "figure")}
    assert {d["region_id"] for d in body["data"]} == set(exported)  # no sentences, no pages, nothing left out
    for d in body["data"]:
        r = exported[d["region_id"]]
        assert (d["kind"], d["text"], d["heading_path"], d["version_id"]) == (
            r.kind, r.text, list(r.heading_path), body["version_id"]
        )
        assert [(loc["page"], loc["bbox"]) for loc in d["locators"]] == [
            (loc.page, loc.bbox.model_dump()) for loc in r.locators
        ]
    # the same reading order as the Markdown: its paragraphs come in the order of the JSON's
    md = client.get("/v1/documents/register/export").text
    at = 0
    for d in (d for d in body["data"] if d["kind"] == "paragraph"):
        found = md.find(d["text"].strip(), at)
        assert found >= at, d["region_id"]
        at = found


def test_an_older_version_by_its_id(client: TestClient) -> None:
    versions = client.get("/v1/documents/support-policy").json()["versions"]
    old = next(v for v in versions if not v["latest"])
    body = client.get(
        "/v1/documents/support-policy/export", params={"format": "json", "version_id": old["version_id"]}
    ).json()
    assert (body["version_id"], body["filename"]) == (old["version_id"], "support-policy-v1.pdf")
    latest = client.get("/v1/documents/support-policy/export").text
    older = client.get("/v1/documents/support-policy/export", params={"version_id": old["version_id"]}).text
    assert older != latest


def test_errors(client: TestClient) -> None:
    assert_error(client.get("/v1/documents/no-such-doc/export"), 404, "document_not_found")
    assert_error(
        client.get("/v1/documents/support-policy/export", params={"version_id": "0000000000000000"}),
        404,
        "version_not_found",
    )
    err = assert_error(client.get("/v1/documents/register/export", params={"format": "docx"}), 422,
                       "validation_error")
    assert "'markdown'" in str(err) and "'json'" in str(err)


def test_a_document_of_another_collection_is_not_found(data_copy: Path, tmp_path: Path) -> None:
    from folio.api.keys import add_key

    _, other = add_key(tmp_path / "keys.json", ["elsewhere"], "read")
    _, mine = add_key(tmp_path / "keys.json", ["default"], "read")
    with TestClient(create_app(make_settings(data_copy, keys_file=str(tmp_path / "keys.json")))) as c:
        assert c.get("/v1/documents/register/export", headers={"X-API-Key": mine}).status_code == 200
        hidden = c.get("/v1/documents/register/export", headers={"X-API-Key": other})
        unknown = c.get("/v1/documents/no-such-doc/export", headers={"X-API-Key": other})
        assert_error(hidden, 404, "document_not_found")
        assert hidden.json()["error"]["message"].replace("register", "X") == (
            unknown.json()["error"]["message"].replace("no-such-doc", "X")
        )
        assert_error(c.get("/v1/documents/register/export"), 401)


def test_too_large_to_export_is_a_413_not_a_cut_file(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    from folio.api.service import export

    monkeypatch.setattr(export, "MAX_EXPORT_CHARS", 100)
    for fmt in ("markdown", "json"):
        err = assert_error(client.get("/v1/documents/register/export", params={"format": fmt}), 413, "limit_exceeded")
        assert "too large to export" in str(err["message"])
