"""The viewer's streamed answer in Chromium (as ``test_viewer_browser.py``), against a real uvicorn
server whose LLM is the loopback stand-in (``tests/api/llm_standin.py``): the answer appears while
it streams, each cited id is a chip that highlights its region, an invented id is marked, and the
evidence panel shows the package as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.browser.test_viewer_browser import (  # noqa: F401
    ARTIFACTS,
    _assert_match,
    _expected,
    _rects,
    as_locators,
    browser,
)
from tests.api.conftest import live_server, make_settings
from tests.api.llm_standin import Reply, StandInLLM

pytestmark = [pytest.mark.browser, pytest.mark.slow]

Q = "How fast must a priority-one incident be acknowledged?"


def test_streamed_answer_with_citation_chips(browser: Any, data_copy: Path) -> None:  # noqa: F811
    with StandInLLM() as llm:
        settings = make_settings(data_copy, llm_base_url=llm.url, llm_model="stand-in")
        with live_server(settings) as url:
            body = {"query": Q, "budget": 800, "doc_ids": ["support-policy"]}
            pkg = httpx.post(f"{url}/v1/context", json=body, timeout=120).json()
            item = pkg["items"][0]
            s1 = item["citation_id"]
            llm.replies.append(Reply(f"A priority-one incident is acknowledged within 30 minutes [{s1}]. "
                                     "On public holidays it takes eight hours [S9].", chunk_delay=0.15))

            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            # Functions, not expressions: Playwright evaluates an expression with eval, which the
            # viewer's Content-Security-Policy (script-src 'self') forbids.
            page.goto(f"{url}/viewer")
            page.wait_for_selector("body[data-ready='1']")
            page.wait_for_function("() => document.getElementById('ask-btn').textContent === 'Ask'")
            page.select_option("#doc-select", "support-policy")
            page.wait_for_selector(".page img[src^='blob:']", timeout=30_000)
            page.fill("#question", Q)
            page.fill("#budget", "800")
            page.click("#ask-btn")
            # Streaming: text shows before the final event has arrived.
            page.wait_for_function(
                "() => { const a = document.getElementById('answer');"
                " return a.textContent.includes('priority') && !a.dataset.done; }",
                timeout=60_000,
            )
            page.wait_for_selector("#answer[data-done='1']", timeout=60_000)
            assert llm.requests[-1]["body"]["stream"] is True

            text = page.text_content("#answer") or ""
            assert text.startswith("A priority-one incident is acknowledged within 30 minutes")
            assert page.get_attribute(f"#answer .chip.cite[data-cite='{s1}']", "title")
            invented = page.query_selector_all("#answer .chip.invented")
            assert [e.get_attribute("data-cite") for e in invented] == ["S9"]
            meta = page.text_content("#answer-meta") or ""
            assert "invented: S9" in meta and "(folio)" in meta and "(endpoint)" in meta
            # The evidence panel is the package, rendered as for /v1/context.
            assert "/ 800 tokens" in (page.text_content("#budget-line") or "")
            shown = page.eval_on_selector_all("#items li", "els => els.map(e => e.dataset.citation)")
            assert shown == [it["citation_id"] for it in pkg["items"]]

            page.click(f"#answer .chip.cite[data-cite='{s1}']")
            page.wait_for_selector(".hl")
            page.wait_for_function("() => [...document.querySelectorAll('.page img')].every(i => !i.src || i.complete)")
            assert page.get_attribute("#items li.active", "data-citation") == s1
            pages = httpx.get(f"{url}/v1/documents/{item['doc_id']}/versions/{item['version_id']}/pages").json()
            width = next(p["width"] for p in pages["data"] if p["page"] == item["locators"][0]["page"])
            rects = _rects(page)
            # The chip of sentence 1 highlights the lines of its item that support that sentence.
            done = page.evaluate("window.folio.answer")
            support = next(x for x in done["supporting_lines"] if x["sentence_index"] == 0 and x["citation_id"] == s1)
            assert support["lines"] and len(support["lines"]) < len(item["lines"]) + 12
            _assert_match(rects, _expected(as_locators(support["lines"]), width, rects[0]["iw"]))
            region = httpx.get(f"{url}/v1/regions/{support['lines'][0]['region_id']}").json()
            assert "acknowledge a priority-one incident within 30 minutes" in region["text"]
            chip = f"#answer .chip.cite.supported[data-cite='{s1}'][data-sentence='0']"
            assert "supporting line" in (page.get_attribute(chip, "title") or "")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "viewer-answer.png"))
