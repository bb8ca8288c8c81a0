"""The viewer in a real browser (Debian's Chromium via Playwright) against a real uvicorn server.

Upload a PDF through the viewer, ask a question, click a citation chip, and check that the
highlight lands where the region's box maps through the rendered page size. A screenshot goes to
``tests/artifacts/`` (ignored by git).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import live_server, make_settings

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: apt-get install chromium")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _rects(page: Any) -> list[dict[str, float]]:
    # One evaluation, so that a page image's load (which redraws every box) cannot land between the query and the
    # measure and leave detached boxes of zero size.
    rects: list[dict[str, float]] = page.evaluate(
        "() => [...document.querySelectorAll('.hl')].map(e => {"
        " const r = e.getBoundingClientRect(); const p = e.closest('.page');"
        " const i = p.querySelector('img').getBoundingClientRect();"
        " return {x: r.left - i.left, y: r.top - i.top, w: r.width, h: r.height,"
        " iw: i.width, page: +p.dataset.page}; })",
    )
    return rects


def _expected(locators: list[dict[str, Any]], page_width: float, shown: float) -> list[tuple[float, ...]]:
    scale = shown / page_width
    out = []
    for loc in locators:
        boxes = loc.get("line_boxes") or [loc["bbox"]]
        for b in boxes:
            x0, y0, x1, y1 = b["x0"], b["y0"], b["x1"], b["y1"]
            out.append((x0 * scale, y0 * scale, (x1 - x0) * scale, (y1 - y0) * scale))
    return out


def as_locators(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Lines (``ContextItem.lines``, ``supporting_lines``) grouped per page as the viewer draws them."""
    by_page: dict[int, dict[str, Any]] = {}
    for ln in lines:
        by_page.setdefault(ln["page"], {"page": ln["page"], "bbox": ln["bbox"], "line_boxes": []})
        by_page[ln["page"]]["line_boxes"].append(ln["bbox"])
    return list(by_page.values())


def highlight_of(item: dict[str, Any]) -> list[dict[str, Any]]:
    """What a chip highlights: the item's lines, else its locators."""
    return as_locators(item["lines"]) if item.get("lines") else list(item["locators"])


def _assert_match(rects: list[dict[str, float]], expected: list[tuple[float, ...]]) -> None:
    assert len(rects) == len(expected) and rects
    for r, (x, y, w, h) in zip(rects, expected, strict=True):
        assert abs(r["x"] - x) <= 2 and abs(r["y"] - y) <= 2, (r, (x, y, w, h))
        assert abs(r["w"] - max(1, w)) <= 2 and abs(r["h"] - max(1, h)) <= 2, (r, (x, y, w, h))


def _watch_csp(page: Any, seen: list[str]) -> None:
    """Collect the console messages about Content-Security-Policy violations on ``page`` into ``seen``."""
    page.on("console", lambda m: seen.append(m.text) if "Content Security Policy" in m.text else None)


def test_upload_ask_click_chip_highlights_region(
    browser: Any, data_copy: Path, samples: Path, tmp_path: Path
) -> None:
    with live_server(make_settings(data_copy, api_key="viewer-key")) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        violations: list[str] = []
        _watch_csp(page, violations)
        # wait_for_function gets functions, not expressions: Playwright evaluates an expression with
        # eval, which the viewer's Content-Security-Policy (script-src 'self') forbids.
        page.goto(f"{url}/viewer")
        page.wait_for_selector("body[data-ready='1']")
        # The key is typed into the viewer; every request (images too) carries it.
        page.fill("#api-key", "viewer-key")
        page.dispatch_event("#api-key", "change")
        page.wait_for_selector("#doc-select option[value='register']", state="attached")
        # Upload through the viewer: the job's progress shows, then the new document opens.
        page.set_input_files("#upload", str(samples / "support-policy-v1.pdf"))
        page.wait_for_function(
            "() => document.getElementById('upload-status').textContent.includes('created')", timeout=120_000
        )
        assert page.eval_on_selector("#doc-select", "s => s.value") == "support-policy-v1"
        page.wait_for_selector(".page img[src^='blob:']", timeout=30_000)

        page.fill("#question", "How fast must a priority-one incident be acknowledged?")
        page.fill("#budget", "800")
        page.click("#ask-btn")
        page.wait_for_selector("#items li .chip", timeout=60_000)
        used = page.text_content("#budget-line") or ""
        assert "/ 800 tokens" in used
        pkg = page.evaluate("window.folio.pkg")
        assert all(i["doc_id"] == "support-policy-v1" for i in pkg["items"])

        page.click("#items li:first-child .chip")
        page.wait_for_selector(".hl")
        page.wait_for_function("() => [...document.querySelectorAll('.page img')].every(i => !i.src || i.complete)")
        item = pkg["items"][0]
        pages = httpx.get(
            f"{url}/v1/documents/{item['doc_id']}/versions/{item['version_id']}/pages",
            headers={"X-API-Key": "viewer-key"},
        ).json()["data"]
        width = next(p["width"] for p in pages if p["page"] == item["locators"][0]["page"])
        rects = _rects(page)
        # The item's lines (what made it relevant), not its locator: a page item's locator is the whole page.
        assert item["lines"]
        _assert_match(rects, _expected(highlight_of(item), width, rects[0]["iw"]))
        assert all(r["h"] < rects[0]["iw"] / 4 for r in rects)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "viewer-chip.png"))

        # Deep link to a sentence: line boxes, not the paragraph's rectangle.
        hits = httpx.post(
            f"{url}/v1/search",
            json={
                "query": "acknowledgement sent by e-mail",
                "doc_ids": ["register"],
                "kinds": ["sentence"],
                "k": 3,
            },
            headers={"X-API-Key": "viewer-key"},
        ).json()["data"]
        region = httpx.get(
            f"{url}/v1/regions/{hits[0]['region_id']}", headers={"X-API-Key": "viewer-key"}
        ).json()
        # The key lives in this tab's sessionStorage, never in localStorage (readable for ever).
        assert page.evaluate("sessionStorage.getItem('folio.key')") == "viewer-key"
        assert page.evaluate("localStorage.getItem('folio.key')") is None
        deep = browser.new_page(viewport={"width": 1200, "height": 900})
        _watch_csp(deep, violations)
        deep.goto(f"{url}/viewer")  # a new tab has no key: set it, as typing it would
        assert deep.evaluate("sessionStorage.getItem('folio.key')") is None
        deep.evaluate("sessionStorage.setItem('folio.key', 'viewer-key')")
        deep.goto(f"{url}/viewer?region={region['region_id']}")
        deep.wait_for_selector("body[data-ready='1']")
        deep.wait_for_selector(".hl")
        deep.wait_for_function("() => [...document.querySelectorAll('.page img')].every(i => !i.src || i.complete)")
        deep.evaluate("window.dispatchEvent(new Event('resize'))")
        rects = _rects(deep)
        loc = region["locators"][0]
        assert all(r["page"] == loc["page"] for r in rects)
        _assert_match(rects, _expected(region["locators"], loc["page_width"], rects[0]["iw"]))
        deep.screenshot(path=str(ARTIFACTS / "viewer-deep-link.png"))
        # The viewer works under its Content-Security-Policy (api.http.app.VIEWER_CSP) and breaks none of it.
        assert "frame-ancestors 'none'" in httpx.get(f"{url}/viewer").headers["content-security-policy"]
        assert not violations, violations


def test_a_highlight_scrolls_into_view_from_its_topmost_box(browser: Any, data_copy: Path) -> None:
    """Issue 34, item 6: a highlighted table scrolled up under the viewer's toolbar. An item's boxes come strongest
    first; the viewer scrolled to the first, so a table above the strongest line ended up above the pages column.
    Now the column scrolls to the topmost box of the page, and every box of the highlight is in view."""
    with live_server(make_settings(data_copy)) as url:
        doc = next(d for d in httpx.get(f"{url}/v1/documents").json()["data"] if d["pages"] > 1)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"{url}/viewer")
        page.wait_for_selector("body[data-ready='1']")
        line = {"x0": 72, "y0": 620, "x1": 520, "y1": 632}  # the strongest hit: a line low on the page
        table = {"x0": 72, "y0": 240, "x1": 520, "y1": 420}  # a table above it
        locators = [{"page": 2, "bbox": table, "line_boxes": [line, table]}]
        page.evaluate(
            "([d, l]) => showRegion(d.doc_id, d.version_id, d.filename, 'synthetic', l)", [doc, locators]
        )
        page.wait_for_selector(".hl")
        # showRegion settles after its page's image has loaded and the boxes are drawn at the image's size; the
        # measure is one evaluation, so a later image's redraw cannot detach the boxes between query and measure.
        column, boxes = page.evaluate(
            "() => { const edges = e => [e.getBoundingClientRect().top, e.getBoundingClientRect().bottom];"
            " return [edges(document.getElementById('pages')), [...document.querySelectorAll('.hl')].map(edges)]; }"
        )
        assert len(boxes) == 2
        assert all(column[0] <= top and bottom <= column[1] for top, bottom in boxes), (column, boxes)
