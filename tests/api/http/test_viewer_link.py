"""Citation links that show their lines (issue 45, item 5). ``viewer_url``, on every packed ``ContextItem`` and
on every citation of ``POST /v1/answer``, is ``/viewer?region=ID&lines=PAGE:x0,y0,x1,y1;...``: the item's
``lines`` in whole PDF points, rounded outward, at most 24 (``assembly.lines.viewer_url``). The viewer's reading
of hostile ``lines`` is tested in Chromium (``tests/api/browser/test_viewer_link_browser.py``)."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from fastapi.testclient import TestClient

from folio.assembly.lines import viewer_url
from folio.assembly.package import LineOut
from folio.kernel.geometry import BBox
from tests.api.conftest import assert_error
from tests.api.llm_standin import Reply, StandInLLM

Q = "How fast must a priority-one incident be acknowledged?"
BODY = {"query": Q, "doc_ids": ["support-policy"], "budget": 800}


def link_boxes(url: str) -> tuple[str, list[tuple[int, int, int, int, int]]]:
    """A viewer link's region id and its boxes ``(page, x0, y0, x1, y1)``."""
    parts = urlsplit(url)
    assert parts.path == "/viewer" and not parts.scheme and not parts.netloc
    q = parse_qs(parts.query)
    assert set(q) <= {"region", "lines"}
    boxes = []
    for spec in q.get("lines", [""])[0].split(";") if "lines" in q else []:
        page, rest = spec.split(":")
        x0, y0, x1, y1 = (int(v) for v in rest.split(","))
        boxes.append((int(page), x0, y0, x1, y1))
    return q["region"][0], boxes


def assert_covers(boxes: list[tuple[int, ...]], lines: list[dict[str, Any]]) -> None:
    """Each box is its line rounded outward to whole points: it holds the line and is at most 1 pt larger."""
    assert len(boxes) == len(lines) > 0
    for (page, x0, y0, x1, y1), ln in zip(boxes, lines, strict=True):
        b = ln["bbox"]
        assert page == ln["page"]
        assert x0 <= b["x0"] < x0 + 1 or (x0 == 0 and b["x0"] < 0), (x0, b)
        assert y0 <= b["y0"] < y0 + 1 or (y0 == 0 and b["y0"] < 0), (y0, b)
        assert x1 - 1 < b["x1"] <= x1 and y1 - 1 < b["y1"] <= y1, ((x1, y1), b)


def _line(page: int, x0: float, y0: float, x1: float, y1: float) -> LineOut:
    return LineOut(page=page, bbox=BBox(x0=x0, y0=y0, x1=x1, y1=y1), region_id="d@v:p1:s1")


def test_viewer_url_rounds_outward_caps_at_24_and_drops_what_is_not_a_number() -> None:
    lines = [_line(3, 72.4, -0.6, 300.2, 11.0), _line(4, math.nan, 1, 2, 3), _line(4, 10, 20, math.inf, 30)]
    lines += [_line(5, 10, 20 + k, 200, 30 + k) for k in range(30)]
    url = viewer_url("doc@v1:p3:page3", lines)
    assert url.startswith("/viewer?region=doc@v1:p3:page3&lines=3:72,0,301,11;5:10,20,200,30;")
    region, boxes = link_boxes(url)
    assert region == "doc@v1:p3:page3"
    assert len(boxes) == 22  # the first 24 lines, less the two with a NaN or an infinity
    assert viewer_url("doc@v1:p3:page3", []) == "/viewer?region=doc@v1:p3:page3"
    # A region id is quoted: it cannot add a parameter or leave the viewer.
    assert viewer_url("a&lines=1:0,0,9,9#x", []) == "/viewer?region=a%26lines%3D1:0%2C0%2C9%2C9%23x"


def test_a_page_items_viewer_url_carries_its_lines(ac: TestClient) -> None:
    pkg = ac.post("/v1/context", json=BODY).json()
    item = pkg["items"][0]
    assert item["modality"] == "page" and item["lines"]
    region, boxes = link_boxes(item["viewer_url"])
    assert region == item["region_id"]
    assert_covers(boxes, item["lines"])
    page_box = item["locators"][0]["bbox"]
    assert all(y1 - y0 < (page_box["y1"] - page_box["y0"]) / 4 for _, _, y0, _, y1 in boxes)  # lines, not the page
    for it in pkg["items"]:  # every item has its link; one without lines links to its region alone
        assert it["viewer_url"] == viewer_url(it["region_id"], [LineOut.model_validate(x) for x in it["lines"]])
        assert it["viewer_url"].startswith(f"/viewer?region={quote(it['region_id'], safe='@:')}")


def test_an_answers_citation_links_to_its_items_lines(ac: TestClient, llm: StandInLLM) -> None:
    llm.replies.clear()
    pkg = ac.post("/v1/context", json=BODY).json()
    item = pkg["items"][0]
    s1 = item["citation_id"]
    llm.replies.append(Reply(f"A priority-one incident is acknowledged within 30 minutes [{s1}]."))
    body = ac.post("/v1/answer", json=BODY).json()
    (cit,) = body["citations"]
    assert cit["viewer_url"] == item["viewer_url"]
    region, boxes = link_boxes(cit["viewer_url"])
    assert region == item["region_id"]
    assert_covers(boxes, item["lines"])


def test_a_package_sent_back_may_lack_a_link_but_not_carry_a_foreign_one(ac: TestClient) -> None:
    """``/v1/verify`` takes a package saved before links existed; a link that is not the viewer's is a 422."""
    pkg = ac.post("/v1/context", json=BODY).json()
    s1 = pkg["items"][0]["citation_id"]
    answer = f"A priority-one incident is acknowledged within 30 minutes [{s1}]."
    old = {**pkg, "items": [{k: v for k, v in it.items() if k != "viewer_url"} for it in pkg["items"]]}
    r = ac.post("/v1/verify", json={"answer": answer, "package": old})
    assert r.status_code == 200, r.text
    for bad in ("javascript:alert(1)", "https://example.invalid/viewer?region=x", "/viewer?region=" + "x" * 3000):
        items = [{**pkg["items"][0], "viewer_url": bad}, *pkg["items"][1:]]
        assert_error(ac.post("/v1/verify", json={"answer": answer, "package": {**pkg, "items": items}}), 422)
