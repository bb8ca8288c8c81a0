"""Line boxes over REST (issue 23, "citations point at whole pages"): a page item of ``/v1/context``
carries its trigger's lines; ``GET /v1/regions/{id}/image?highlight=...`` paints them (and only them) on
the page render, with every field bounded; ``POST /v1/answer`` (the loopback stand-in LLM) returns the lines
supporting each cited sentence, and ``folio ask`` prints line boxes instead of the page box."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pymupdf
import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import assert_error
from tests.api.llm_standin import Reply, StandInLLM

Q = "How fast must a priority-one incident be acknowledged?"
BODY = {"query": Q, "doc_ids": ["support-policy"], "budget": 800}


def _first_item(ac: TestClient) -> dict[str, Any]:
    pkg = ac.post("/v1/context", json=BODY).json()
    item: dict[str, Any] = pkg["items"][0]
    return item


def _pixels(png: bytes) -> Any:
    pix = pymupdf.Pixmap(png)
    if pix.alpha:
        pix = pymupdf.Pixmap(pix, 0)
    return np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.h, pix.w, pix.n)


def _spec(lines: list[dict[str, Any]]) -> str:
    return ";".join(",".join(f"{ln['bbox'][k]:.2f}" for k in ("x0", "y0", "x1", "y1")) for ln in lines)


def test_page_item_carries_the_acknowledge_sentence_lines(ac: TestClient) -> None:
    item = _first_item(ac)
    assert item["modality"] == "page" and item["expansion"].startswith("page_")
    page_box = item["locators"][0]["bbox"]
    assert item["lines"] and len(item["lines"]) <= 24
    for ln in item["lines"]:
        b = ln["bbox"]
        assert ln["page"] in item["pages"]
        assert page_box["x0"] <= b["x0"] <= b["x1"] <= page_box["x1"]
        assert page_box["y0"] <= b["y0"] <= b["y1"] <= page_box["y1"]
        assert (b["y1"] - b["y0"]) < (page_box["y1"] - page_box["y0"]) / 4  # a line or a table, not the page
    first = item["lines"][0]
    assert first["bbox"]["y1"] - first["bbox"]["y0"] < 30  # one line of text
    regions = [ac.get(f"/v1/regions/{rid}").json() for rid in dict.fromkeys(ln["region_id"] for ln in item["lines"])]
    assert set(item["trigger_ids"]) >= {r["region_id"] for r in regions}  # the item's own hits
    assert regions[0]["kind"] == "sentence"
    assert any("acknowledge a priority-one incident within 30 minutes" in r["text"] for r in regions)


def test_region_image_paints_only_inside_the_requested_boxes(ac: TestClient) -> None:
    item = _first_item(ac)
    rid = item["region_id"]
    plain = ac.get(f"/v1/regions/{rid}/image")
    lit = ac.get(f"/v1/regions/{rid}/image", params={"highlight": _spec(item["lines"])})
    assert plain.status_code == lit.status_code == 200 and lit.headers["content-type"] == "image/png"
    a, b = _pixels(plain.content), _pixels(lit.content)
    assert a.shape == b.shape
    width_pt = item["locators"][0]["bbox"]["x1"]  # the page item's locator is the whole page
    scale = a.shape[1] / width_pt
    changed = np.argwhere((a != b).any(axis=2))
    assert len(changed) > 100
    inside = np.zeros(len(changed), dtype=bool)
    for ln in item["lines"]:
        x0, y0, x1, y1 = (ln["bbox"][k] * scale for k in ("x0", "y0", "x1", "y1"))
        inside |= ((changed[:, 1] >= x0 - 1) & (changed[:, 1] <= x1 + 1)
                   & (changed[:, 0] >= y0 - 1) & (changed[:, 0] <= y1 + 1))
    assert inside.all()
    # 'lines' on a sentence region: its own line boxes, on its page.
    sid = item["lines"][0]["region_id"]
    own = ac.get(f"/v1/regions/{sid}/image", params={"highlight": "lines"})
    assert own.status_code == 200 and (_pixels(own.content) != a).any()


@pytest.mark.parametrize("params, what", [
    ({"highlight": "everything"}, "four numbers"),
    ({"highlight": "1,2,3"}, "four numbers"),
    ({"highlight": "1,2,3,nan"}, "four numbers"),
    ({"highlight": "1e999,2,3,4"}, "four numbers"),
    ({"highlight": "50,50,10,10"}, "x0 <= x1"),
    ({"highlight": "0,0,5000,10"}, "outside the page"),
    ({"highlight": ";".join(["1,1,2,2"] * 65)}, "at most 64"),
    ({"highlight": ";"}, "'lines' or boxes"),
    ({"highlight": "1" * 4001}, None),
    ({"highlight": "lines", "page": 9}, "not a page of"),
    ({"highlight": "lines", "page": 0}, None),
])
def test_highlight_fields_are_bounded(ac: TestClient, params: dict[str, Any], what: str | None) -> None:
    rid = _first_item(ac)["region_id"]
    err = assert_error(ac.get(f"/v1/regions/{rid}/image", params=params), 422)
    if what is not None:
        assert what in str(err["message"])
    assert "Traceback" not in str(err)


def test_answer_returns_the_lines_supporting_each_cited_sentence(ac: TestClient, llm: StandInLLM) -> None:
    item = _first_item(ac)
    cid = item["citation_id"]
    llm.replies.append(Reply(f"The on-call engineer acknowledges a priority-one incident within 30 minutes "
                             f"[{cid}]. Penguins cannot fly [{cid}]."))
    out = ac.post("/v1/answer", json=BODY).json()
    sup = out["supporting_lines"]
    assert [(s["sentence_index"], s["citation_id"]) for s in sup] == [(0, cid), (1, cid)]
    first, second = sup
    assert first["lines"] and first["support"] >= 0.6
    region = ac.get(f"/v1/regions/{first['lines'][0]['region_id']}").json()
    assert "acknowledge a priority-one incident within 30 minutes" in region["text"]
    assert all(ln["page"] in item["pages"] for ln in first["lines"])
    assert second["lines"] == []  # nothing on the page shares two of its words
    cited = next(c for c in out["citations"] if c["citation_id"] == cid)
    assert cited["lines"] == item["lines"]
    # Streaming: the done event carries them too.
    llm.replies.append(Reply(f"It is acknowledged within 30 minutes by the on-call engineer [{cid}]."))
    streamed = ac.post("/v1/answer", json={**BODY, "stream": True})
    assert '"supporting_lines": [{"sentence_index": 0' in streamed.text


def test_folio_ask_prints_line_boxes_not_the_page_box(answer_data: Path, llm: StandInLLM,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], ac: TestClient) -> None:
    from folio.api.cli import main

    item = _first_item(ac)
    cid = item["citation_id"]
    monkeypatch.setenv("FOLIO_LLM_BASE_URL", llm.url)
    monkeypatch.setenv("FOLIO_LLM_MODEL", "stand-in")
    llm.replies.append(Reply(f"A priority-one incident is acknowledged within 30 minutes [{cid}]."))
    assert main(["ask", Q, "--doc", "support-policy", "--budget", "800", "--data", str(answer_data)]) == 0
    out = capsys.readouterr().out
    b = item["lines"][0]["bbox"]
    first = f"[{b['x0']:.0f}, {b['y0']:.0f}, {b['x1']:.0f}, {b['y1']:.0f}]"
    assert f"[{cid}] support-policy-v2.pdf p.1 lines p.1 {first}" in out
    assert "bbox [0, 0, 612, 792]" not in out and "bbox [0, 0, 595, 842]" not in out
    assert f"supporting lines:\n  sentence 1 [{cid}] support" in out and f"p.1 {first}" in out
