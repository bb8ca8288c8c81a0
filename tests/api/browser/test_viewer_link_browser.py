"""A citation link shows its lines (issue 45, item 5), in Chromium against a real uvicorn server (as
``test_viewer_browser.py``): opening a page item's ``viewer_url`` highlights the item's lines, a few line-sized
boxes inside a faint outline of the page, scrolled into view, and not one box the size of the page. A link's
``lines`` are anyone's text: too many, signed, fractional, NaN, off the page, on another page or script text are
ignored, and the region is highlighted as without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.api.browser.test_viewer_browser import (  # noqa: F401
    ARTIFACTS,
    _rects,
    _watch_csp,
    as_locators,
    browser,
)
from tests.api.conftest import live_server, make_settings
from tests.api.http.test_viewer_link import link_boxes

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BODY = {"query": "How fast must a priority-one incident be acknowledged?", "doc_ids": ["support-policy"], "budget": 800}
SETTLED = "() => [...document.querySelectorAll('.page img')].every(i => !i.src || i.complete)"


def _open(page: Any, url: str) -> list[dict[str, float]]:
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_selector(".hl")
    page.wait_for_function(SETTLED)
    page.evaluate("() => window.dispatchEvent(new Event('resize'))")  # redraw at the image's final size
    return _rects(page)


def _near(r: dict[str, float], box: tuple[float, ...], tol: float) -> bool:
    x, y, w, h = box
    return abs(r["x"] - x) <= tol and abs(r["y"] - y) <= tol and abs(r["w"] - w) <= tol and abs(r["h"] - h) <= tol


def test_a_page_items_viewer_url_highlights_its_lines_not_the_page(browser: Any, data_copy: Path) -> None:  # noqa: F811
    with live_server(make_settings(data_copy)) as url:
        item = httpx.post(f"{url}/v1/context", json=BODY, timeout=120).json()["items"][0]
        assert item["modality"] == "page" and 1 <= len(item["lines"]) <= 24
        pages = httpx.get(f"{url}/v1/documents/{item['doc_id']}/versions/{item['version_id']}/pages").json()
        width = next(p["width"] for p in pages["data"] if p["page"] == item["pages"][0])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        violations: list[str] = []
        _watch_csp(page, violations)
        rects = _open(page, f"{url}{item['viewer_url']}")
        iw = rects[0]["iw"]
        scale = iw / width
        # One box per line of the item, where the link's whole-point boxes map, within a point of the line itself.
        _, boxes = link_boxes(item["viewer_url"])
        assert len(rects) == len(item["lines"]) == len(boxes)
        for r, (pg, x0, y0, x1, y1), ln in zip(rects, boxes, item["lines"], strict=True):
            assert r["page"] == pg == ln["page"]
            assert _near(r, (x0 * scale, y0 * scale, (x1 - x0) * scale, (y1 - y0) * scale), 1.5), (r, (x0, y0, x1, y1))
            b = ln["bbox"]
            line = (b["x0"] * scale, b["y0"] * scale, (b["x1"] - b["x0"]) * scale, (b["y1"] - b["y0"]) * scale)
            assert _near(r, line, 2 * scale + 1.5), (r, b)
            assert r["h"] < iw / 4 and r["h"] * r["w"] < iw * iw / 10  # a line, not the page
        # The page stays outlined, faintly: one dashed box where the item's locator is, not a highlight.
        outline = page.evaluate(
            "() => [...document.querySelectorAll('.region-outline')].map(e => {"
            " const r = e.getBoundingClientRect(), i = e.closest('.page').querySelector('img').getBoundingClientRect();"
            " return {x: r.left - i.left, y: r.top - i.top, w: r.width, h: r.height, iw: i.width,"
            " bg: getComputedStyle(e).backgroundColor}; })"
        )
        loc = item["locators"][0]["bbox"]
        assert len(outline) == 1 and outline[0]["bg"] == "rgba(0, 0, 0, 0)"
        assert _near(
            outline[0],
            (loc["x0"] * scale, loc["y0"] * scale, (loc["x1"] - loc["x0"]) * scale, (loc["y1"] - loc["y0"]) * scale),
            2,
        )
        # Scrolled to the lines: the first is inside the pages column.
        column, first = page.evaluate(
            "() => { const e = x => [x.getBoundingClientRect().top, x.getBoundingClientRect().bottom];"
            " return [e(document.getElementById('pages')), e(document.querySelector('.hl'))]; }"
        )
        assert column[0] <= first[0] and first[1] <= column[1], (column, first)
        n = len(item["lines"])
        assert (page.text_content("#status") or "").endswith(f"· {n} line{'s' if n > 1 else ''}")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "viewer-link-lines.png"))
        assert not violations, violations


def _page_region(url: str) -> dict[str, Any]:
    item = httpx.post(f"{url}/v1/context", json=BODY, timeout=120).json()["items"][0]
    region: dict[str, Any] = httpx.get(f"{url}/v1/regions/{item['region_id']}").json()
    assert region["kind"] == "page"
    return region


HOSTILE = {
    "too many": ";".join(["1:72,100,300,112"] * 25),
    "too long": "1:72,100,300,112;" + " " * 800,
    "NaN": "1:NaN,100,300,112",
    "negative": "1:-5,100,300,112",
    "fraction": "1:72.5,100,300,112",
    "exponent": "1:7e1,100,300,112",
    "huge": "1:72,100,99999,112",
    "beyond the page": "1:72,100,300,2000",
    "reversed": "1:300,100,72,112",
    "another page": "2:72,100,300,112",
    "script": "1:72,100,300,112<img src=x onerror=alert(1)>",
    "markup alone": "<script>alert(1)</script>",
    "empty": "",
}


def test_hostile_lines_are_ignored(browser: Any, data_copy: Path) -> None:  # noqa: F811
    with live_server(make_settings(data_copy)) as url:
        region = _page_region(url)
        locs = region["locators"]
        assert [loc["page"] for loc in locs] == [1]
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        violations: list[str] = []
        _watch_csp(page, violations)
        base = f"{url}/viewer?region={quote(region['region_id'], safe='@:')}"
        page.goto(base)
        page.wait_for_selector("body[data-ready='1']")
        # The parser, case by case: nothing hostile gets through; a valid box in the same spec does.
        for name, spec in HOSTILE.items():
            assert page.evaluate("([s, l]) => linkLines(s, l)", [spec, locs]) == [], name
        mixed = "1:72,100,300,112;1:NaN,1,2,3;9:1,2,3,4;1:0,0,99999,5;junk"
        assert page.evaluate("([s, l]) => linkLines(s, l)", [mixed, locs]) == [
            {"page": 1, "bbox": {"x0": 72, "y0": 100, "x1": 300, "y1": 112}}
        ]
        # Slack of 2 points past the page's edge is clipped to the page.
        w, h = locs[0]["page_width"], locs[0]["page_height"]
        edge = f"1:0,{int(h) - 10},{int(w) + 1},{int(h) + 1}"
        clipped = page.evaluate("([s, l]) => linkLines(s, l)", [edge, locs])
        assert clipped == [{"page": 1, "bbox": {"x0": 0, "y0": int(h) - 10, "x1": w, "y1": h}}]
        # Through the link: the region is highlighted as without lines (its box), the status says so, no script ran.
        box = locs[0]["bbox"]
        for name in ("too many", "script", "NaN"):
            rects = _open(page, f"{base}&lines={quote(HOSTILE[name], safe=':,;')}")
            scale = rects[0]["iw"] / w
            assert len(rects) == 1, name
            expected = (
                box["x0"] * scale,
                box["y0"] * scale,
                (box["x1"] - box["x0"]) * scale,
                (box["y1"] - box["y0"]) * scale,
            )
            assert _near(rects[0], expected, 2), (name, rects[0], expected)
            assert "the link's lines were not usable" in (page.text_content("#status") or ""), name
            assert page.query_selector("img[src='x']") is None and not page.query_selector_all(".region-outline")
        rects = _open(page, f"{base}&lines={quote(mixed, safe=':,;')}")
        assert len(rects) == 1 and rects[0]["h"] == pytest.approx(12 * rects[0]["iw"] / w, abs=1.5)
        assert not dialogs and not violations, (dialogs, violations)
