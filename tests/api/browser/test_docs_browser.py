"""``/docs`` and ``/redoc`` in Chromium with no network beyond loopback: the Swagger UI and ReDoc
scripts and styles come from folio itself (fastapi-offline's copies), so the API reference renders on a machine
without internet access. Every request the page makes to another host is refused and recorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api.browser.test_viewer_browser import ARGS, CHROMIUM
from tests.api.conftest import live_server, make_settings

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# Chromium's resolver answers "not found" for every host but loopback: the network of an offline machine.
OFFLINE_ARGS = [*ARGS, "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost"]
METHODS = {"get", "post", "put", "patch", "delete"}
CSP_REPORTS: list[str] = []


@pytest.fixture(scope="module")
def offline_page() -> Iterator[tuple[Any, list[str]]]:
    """A page whose requests to any host but loopback are aborted; the list collects their URLs, and the console's
    Content-Security-Policy reports (``csp_reports``)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} missing: apt-get install chromium")
    outside: list[str] = []

    def route(r: Any) -> None:
        parts = urlsplit(r.request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOOPBACK:
            outside.append(r.request.url)
            r.abort("internetdisconnected")
        else:
            r.continue_()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=OFFLINE_ARGS)
        context = browser.new_context()
        context.route("**/*", route)
        page = context.new_page()
        page.on("console", lambda m: "Content Security Policy" in m.text and CSP_REPORTS.append(m.text))
        yield page, outside
        browser.close()


def test_swagger_ui_and_redoc_render_offline(offline_page: tuple[Any, list[str]], tmp_path: Path) -> None:
    page, outside = offline_page
    with live_server(make_settings(tmp_path / "data")) as url:
        spec = httpx.get(f"{url}/openapi.json").json()
        operations = sum(1 for item in spec["paths"].values() for m in item if m in METHODS)
        docs = page.goto(f"{url}/docs")
        assert docs is not None and "frame-ancestors 'none'" in docs.headers["content-security-policy"]
        page.wait_for_selector(".opblock", timeout=30_000)
        assert page.locator(".opblock").count() == operations > 10
        assert page.locator(".opblock-post [data-path='/v1/context']").count() == 1
        assert outside == []  # nothing of /docs comes from elsewhere
        page.goto(f"{url}/redoc")
        page.wait_for_selector("[data-section-id^='tag/']", timeout=30_000)
        assert "/v1/context" in (page.text_content("body") or "")
        page.wait_for_timeout(1000)  # the sidebar's "API docs by Redocly" logo is asked for after the render
    # ReDoc's own script is local too, and its logo (at cdn.redoc.ly) is not fetched at all (issue 34, item 6).
    assert outside == [], outside
    # Both pages render under their Content-Security-Policy (issue 44) and break none of it; the one report is the
    # policy keeping ReDoc's logo from its CDN.
    assert [r for r in CSP_REPORTS if "cdn.redoc.ly" not in r] == [], CSP_REPORTS
