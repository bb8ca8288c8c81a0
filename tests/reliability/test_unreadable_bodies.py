"""JSON bodies that ``json.loads`` cannot read although they are JSON-shaped (issue 44, item 6): bytes that are
not UTF-8, and an integer of 5,000 digits (Python refuses to convert more than 4,300). Under 64 KB FastAPI
answered them 400; over it, ``api.http.offloop`` parsed them itself and let the ``ValueError`` through, a 500.
Now every JSON route answers them with the error shape at every size up to its body limit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.api.http.body_limits import limits_for
from folio.api.http.offloop import OFF_LOOP_BYTES
from tests.api.conftest import assert_error, make_settings

JSON_ROUTES = ("/v1/search", "/v1/context", "/v1/verify", "/v1/answer")
BODIES: dict[str, Callable[[int], bytes]] = {  # the body, padded with spaces to a size
    "not_utf8": lambda size: b'{"query": "\xff\xfe"}'.ljust(size),
    "5000_digits": lambda size: (b'{"query": "x", "k": 1' + b"0" * 5000 + b"}").ljust(size),
}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    data: Path = tmp_path_factory.mktemp("unreadable") / "data"  # an empty store: the body is refused first
    with TestClient(create_app(make_settings(data))) as c:
        yield c


def _sizes(path: str, client: TestClient) -> list[int]:
    """Small, just past the off-loop threshold, and the route's whole body limit."""
    limit = limits_for(path, client.app.state.settings.server.max_request_bytes).max_bytes  # type: ignore[attr-defined]
    return [0, OFF_LOOP_BYTES + 1, limit]


@pytest.mark.parametrize("path", JSON_ROUTES)
@pytest.mark.parametrize("kind", sorted(BODIES))
def test_unreadable_json_is_the_same_400_at_every_size(client: TestClient, path: str, kind: str) -> None:
    answers = []
    for size in _sizes(path, client):
        body = BODIES[kind](size)
        assert size == 0 or len(body) == size
        resp = client.post(path, content=body, headers={"content-type": "application/json"})
        err = assert_error(resp, 400, "bad_request")
        answers.append((resp.status_code, err["code"], err["message"]))
    assert len(set(answers)) == 1, answers  # a body's answer does not depend on its size
