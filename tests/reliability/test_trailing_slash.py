"""A trailing slash never rebuilds a refused id (issue 44, item 2).

Starlette answered an unknown path that ends in ``/`` with a 307 to the same path without it, written from the
*decoded* path: ``DELETE /v1/documents/victim1/versions/%2E%2E/`` got ``Location: .../versions/..``, which a
client that follows redirects (``curl -L``, httpx, Node's ``fetch``) resolves to ``/v1/documents/victim1/``, and
the next 307 sent the ``DELETE`` to the whole document. ``%2F`` rebuilt other routes the same way. The app now
redirects no slashes: such a path is a 404 like any unknown one, for every method.

Driven through a real server (uvicorn on 127.0.0.1) with two clients that follow redirects: httpx and curl -L.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from benchmarks.odd_pdfs import valid_pdf
from tests.api.conftest import assert_error, live_server, make_settings

# Each of these, followed as a browser or curl -L would, ended at DELETE /v1/documents/victim1 (or a version of it).
HOSTILE = [
    "/v1/documents/victim1/versions/%2E%2E/",
    "/v1/documents/victim1/versions/%2e%2e%2f",
    "/v1/documents/victim1/versions/..%2F",
    "/v1/documents/x%2F..%2F..%2Fdocuments%2Fvictim1/",
    "/v1/documents/victim1%2F/",
    "/v1/documents/victim1/",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("slash") / "data"
    with live_server(make_settings(data)) as url:
        for pages in (1, 2):  # two versions of victim1
            resp = httpx.post(
                f"{url}/v1/documents",
                files={"file": ("victim1.pdf", valid_pdf(pages), "application/pdf")},
                data={"doc_id": "victim1"},
                timeout=120,
            )
            assert resp.status_code == 200, resp.text
        yield url


def _versions(url: str) -> int:
    resp = httpx.get(f"{url}/v1/documents/victim1", timeout=30)
    assert resp.status_code == 200, resp.text
    return len(resp.json()["versions"])


@pytest.mark.parametrize("path", HOSTILE)
def test_a_redirect_following_client_cannot_delete_through_a_trailing_slash(server: str, path: str) -> None:
    with httpx.Client(follow_redirects=True, timeout=30) as c:
        resp = c.delete(f"{server}{path}")
    assert not resp.history, [(r.status_code, r.headers.get("location")) for r in resp.history]
    assert_error(resp, 404)
    assert _versions(server) == 2


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_follows_no_redirect_to_the_document(server: str) -> None:
    for path in HOSTILE:
        out = subprocess.run(
            ["curl", "-sL", "-X", "DELETE", "-o", "/dev/null", "-w", "%{http_code} %{num_redirects}",
             f"{server}{path}"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert out.stdout == "404 0", (path, out.stdout)
    assert _versions(server) == 2


def test_reads_are_not_redirected_either(server: str) -> None:
    """No redirect rebuilds an id for a read: a GET of such a path is a 404, not a 307 to another resource."""
    for path in ("/v1/documents/victim1/", "/v1/documents/victim1/versions/%2E%2E/", "/v1/documents/"):
        resp = httpx.get(f"{server}{path}", timeout=30)
        assert "location" not in resp.headers, path
        assert_error(resp, 404)
