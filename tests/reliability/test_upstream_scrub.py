"""The LLM endpoint's key and address never leave an upstream error, in any spelling (issue 44, item 4).

An endpoint (or a proxy before it) echoes what it was sent: upper case, JSON-escaped, URL-encoded, in base64
(``Basic user:key``), masked the way APIs print keys (``sk-Secr***Z123``), its host glued to a word by ``_``,
the key in a ``Content-Encoding`` header or a malformed status line. Each spelling goes through the real
``POST /v1/answer`` (and ``compress: "llm"``) to a stand-in on loopback (``tests/api/llm_standin.py``); the
client's reply and the server log must hold none of them. The addresses in the stand-in's replies are text
only: nothing here connects anywhere but 127.0.0.1.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from fastapi.testclient import TestClient

from folio.api.http.app import create_app
from folio.api.service.redact import hide_key, scrub
from tests.api.conftest import assert_error, make_settings
from tests.api.llm_standin import Reply, StandInLLM
from tests.reliability.helpers import SAMPLE

KEY = "sk-Secr3t/Pa+ss=wOrd-Z123"
Q = "How fast must a priority-one incident be acknowledged?"
DOC = ["support-policy"]
KEY_PARTS = (KEY.lower(), "secr", "z123", "/pa+", "word-")
"""What must not be readable in any reply or log line (lower case, after every escape is undone)."""
HOSTS = ("192.0.2.2", "127.0.0.1", "localhost", "::1")


def _b64(text: str, *, url_safe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if url_safe else base64.b64encode
    return encode(text.encode()).decode()


KEY_SPELLINGS = {
    "upper case": KEY.upper(),
    "lower case": KEY.lower(),
    "JSON string": json.dumps(KEY),
    "JSON \\/": KEY.replace("/", "\\/"),
    "JSON \\u escapes": "".join(f"\\u{ord(c):04x}" for c in KEY),
    "URL-encoded": quote(KEY, safe=""),
    "URL-encoded, lower-case hex": quote(KEY, safe="").lower(),
    "URL-encoded twice": quote(quote(KEY, safe=""), safe=""),
    "every byte URL-encoded": "".join(f"%{ord(c):02X}" for c in KEY),
    "HTML references": "".join(f"&#{ord(c)};" for c in KEY),
    "base64": _b64(KEY),
    "base64, no padding": _b64(KEY).rstrip("="),
    "base64url": _b64(KEY, url_safe=True),
    "Basic user:key": "Basic " + _b64("user:" + KEY),
    "base64 of Bearer key": _b64("Bearer " + KEY),
    "base64url of :key": _b64(":" + KEY, url_safe=True).rstrip("="),
    "base64, upper case": _b64("x-api-key " + KEY).upper(),
    "hex": KEY.encode().hex(),
    "masked (issue)": "sk-Secr***Z123",
    "masked with dots": "sk-S...Z123",
    "masked with an ellipsis": "sk-Secr3t/P…ord-Z123",
    "masked, JSON-escaped ellipsis": "sk-Secr\\u2026Z123",
    "masked, prefix only": "sk-Secr3t/P********",
    "masked, suffix only": "************-Z123",
}


def _decoded(text: str) -> str:
    """``text`` with every escape undone (a ``repr``'s and JSON's backslashes, URL and HTML encoding,
    twice over), in lower case: what a reader of the reply or the log could recover."""
    for _ in range(3):
        text = re.sub(r"\\+u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), text)
        text = re.sub(r"\\+x([0-9a-fA-F]{2})", lambda m: chr(int(m[1], 16)), text)
        text = re.sub(r"\\+([/'\"])", r"\1", text)
        text = html.unescape(unquote(text))
    return text.lower()


def _base64_decoded(text: str) -> str:
    """Whatever any base64 run in ``text`` decodes to (each start offset, both alphabets), lower case."""
    out = []
    for run in re.findall(r"[A-Za-z0-9+/_-]{8,}", text):
        for start in range(4):
            piece = run[start:]
            piece = piece[: len(piece) // 4 * 4]
            for alt in (b"+/", b"-_"):
                try:
                    out.append(base64.b64decode(piece, altchars=alt, validate=False).decode("latin-1"))
                except (binascii.Error, ValueError):
                    pass
    return "\n".join(out).lower()


def leaks(text: str, port: str) -> list[str]:
    """The parts of the key, and the hosts and port, that ``text`` still shows in any spelling."""
    plain = _decoded(text)
    found = [part for part in KEY_PARTS if part in plain or part in _base64_decoded(text)]
    found += [host for host in HOSTS if host in plain]
    if re.search(rf"(?<!\d){port}(?!\d)", plain):
        found.append(port)
    if KEY.encode().hex() in plain:
        found.append("hex")
    return found


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from folio.ingest.pipeline import ingest_path
    from folio.ingest.storage.store import Store

    dst = tmp_path_factory.mktemp("upstream-scrub") / "data"
    ingest_path(Store(dst), SAMPLE, doc_id="support-policy", ocr=False)
    return dst


@pytest.fixture(scope="module")
def llm() -> Iterator[StandInLLM]:
    with StandInLLM() as server:
        yield server


@pytest.fixture(scope="module")
def port(llm: StandInLLM) -> str:
    return llm.url.split(":")[2].split("/")[0]


@pytest.fixture(scope="module")
def ac(data: Path, llm: StandInLLM) -> Iterator[TestClient]:
    settings = make_settings(data, llm_base_url=llm.url, llm_model="stand-in", llm_api_key=KEY)
    with TestClient(create_app(settings)) as c:
        yield c


@pytest.fixture(autouse=True)
def _fresh(llm: StandInLLM) -> None:
    llm.replies.clear()
    llm.requests.clear()


def _answer_error(ac: TestClient, caplog: pytest.LogCaptureFixture) -> tuple[str, str]:
    """The 502's message and what the server logged while answering."""
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        r = ac.post("/v1/answer", json={"query": Q, "doc_ids": DOC, "budget": 800})
    return str(assert_error(r, 502, "llm_upstream_error")["message"]), caplog.text


@pytest.mark.parametrize("spelling", list(KEY_SPELLINGS.values()), ids=list(KEY_SPELLINGS))
def test_no_spelling_of_the_key_reaches_the_client_or_the_log(
    ac: TestClient, llm: StandInLLM, port: str, caplog: pytest.LogCaptureFixture, spelling: str
) -> None:
    llm.replies.append(Reply(status=401, raw='{"error": {"message": "Incorrect API key provided: ' + spelling + '"}}'))
    message, log = _answer_error(ac, caplog)
    assert llm.requests[-1]["auth"] == f"Bearer {KEY}"  # the key was sent, and echoed
    assert "[key]" in message, message  # found (not merely cut off after 400 characters)
    assert "[key]" in log, log  # the failure is logged, without the key
    assert not leaks(message, port), (leaks(message, port), message)
    assert not leaks(log, port), (leaks(log, port), log)


@pytest.mark.parametrize(
    "echo",
    [
        "upstream_192.0.2.2 refused the connection",
        "upstream-192.0.2.2:8796 refused the connection",
        "UPSTREAM_127.0.0.1:{port}_v1 refused",
        "upstream_localhost:{port} refused",
        "gw_[::1]:{port}_x refused",
        "retry http:\\/\\/127.0.0.1:{port}\\/v1",
        "retry 127%2E0%2E0%2E1%3A{port}",
    ],
)
def test_no_spelling_of_a_host_reaches_the_client_or_the_log(
    ac: TestClient, llm: StandInLLM, port: str, caplog: pytest.LogCaptureFixture, echo: str
) -> None:
    llm.replies.append(Reply(status=503, raw='{"error": "' + echo.format(port=port) + '"}'))
    message, log = _answer_error(ac, caplog)
    assert "the LLM endpoint answered HTTP 503" in message, message
    assert not leaks(message, port), (leaks(message, port), message)
    assert not leaks(log, port), (leaks(log, port), log)


@pytest.mark.parametrize("header", [KEY, f"Bearer {KEY}", "gzip, " + quote(KEY, safe="")])
def test_a_key_echoed_in_content_encoding_is_hidden(
    ac: TestClient, llm: StandInLLM, port: str, caplog: pytest.LogCaptureFixture, header: str
) -> None:
    """The header was lower-cased (and cut at 40 characters) before it was scrubbed: the key went out."""
    llm.replies.append(Reply(encoded=b"{}", encoding=header))
    message, log = _answer_error(ac, caplog)
    assert "Content-Encoding" in message and "[key]" in message, message
    assert not leaks(message, port) and not leaks(log, port), (message, log)


def test_a_key_echoed_in_a_malformed_status_line_stays_out_of_the_log(
    ac: TestClient, llm: StandInLLM, port: str, caplog: pytest.LogCaptureFixture
) -> None:
    """httpx's error quotes the status line it could not parse; the server log names the endpoint's URL
    (docs/security.md) and never the key."""
    llm.replies.append(Reply(head=f"HTTP/1.1 4O1 bad key {KEY.upper()} / {_b64('user:' + KEY)}\r\n\r\n".encode()))
    message, log = _answer_error(ac, caplog)
    assert "cannot reach the LLM endpoint" in message and not leaks(message, port), message
    assert "illegal status line" in log and "[key]" in log, log
    assert [part for part in KEY_PARTS if part in _decoded(log) or part in _base64_decoded(log)] == [], log


def test_a_stream_error_event_shows_no_spelling_of_the_key(ac: TestClient, llm: StandInLLM, port: str) -> None:
    echo = f"bad key {KEY.upper()} ({KEY_SPELLINGS['Basic user:key']}) from upstream_127.0.0.1:{port}"
    llm.replies.append(Reply(raw_stream="data: " + json.dumps({"error": {"message": echo}}) + "\n\n"))
    with ac.stream("POST", "/v1/answer", json={"query": Q, "doc_ids": DOC, "stream": True}) as s:
        s.read()
    last = s.text.strip().split("\n\n")[-1]
    assert last.startswith("event: error") and "[key]" in last, last
    assert not leaks(last, port), (leaks(last, port), last)


def test_llm_compression_notes_show_no_spelling_of_the_key(
    ac: TestClient, llm: StandInLLM, port: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``compress: "llm"`` (and the reranker) note why they fell back: the upstream's text, scrubbed."""
    echo = f"key {quote(KEY, safe='')} / {KEY_SPELLINGS['masked (issue)']} refused by upstream_192.0.2.2"
    llm.replies.extend(Reply(status=401, raw=json.dumps({"error": echo})) for _ in range(20))
    with caplog.at_level(logging.WARNING):
        r = ac.post(  # at this budget a span ranked below the page is left to compression (test_answer_limits)
            "/v1/context", json={"query": Q, "doc_ids": DOC, "compress": "llm", "budget": 280, "compress_share": 0.3,
                                 "page_render": "stored"}  # compact, the page leaves no tail to compress
        )
    assert r.status_code == 200, r.text
    notes = json.dumps(r.json()["retrieval"])
    assert "LLM compression" in notes and "[key]" in notes, notes
    assert not leaks(r.text, port) and not leaks(caplog.text, port), (notes, caplog.text)


# ------------------------------------------------------------------------------------------ the scrubber alone
def test_a_url_without_a_port_is_scrubbed_not_an_error() -> None:
    """The pattern has no port group then: looking it up raised IndexError (a 500 for the client)."""
    assert scrub("see LLM.internal.example and llm.internal.example_v2", "https://llm.internal.example/v1") == (
        "see the LLM endpoint and the LLM endpoint_v2"
    )


def test_ordinary_text_is_left_alone() -> None:
    text = "model 'stand-in' is overloaded; try again in 2 s (request 7f3a, 512 tokens, sk-other***9999)"
    assert hide_key(text, KEY) == text
    assert scrub(text, "http://127.0.0.1:8799/v1", KEY) == text


@pytest.mark.parametrize(
    "text",
    ["a-" * 32_000, "*" * 64_000, "%2a" * 21_000, "sk-Secr" * 9_000, "\\\\u00" * 10_000, "c2stU2Vjcj" + "=" * 64_000],
    ids=["scheme-like", "stars", "encoded stars", "key prefixes", "backslashes", "padding"],
)
def test_scrubbing_64_kib_of_hostile_text_is_fast(text: str) -> None:
    """The URL pattern's scheme (``[a-z][a-z0-9+.-]*://``) took quadratic time on ``a-a-a-...``; mask
    runs are taken whole, once. 64 KiB is the most of an error body kept (``MAX_ERROR_READ``)."""
    scrub("warm", "http://127.0.0.1:8799/v1", KEY)  # the patterns are compiled once per key and URL
    start = time.perf_counter()
    scrub(text, "http://127.0.0.1:8799/v1", KEY)
    assert time.perf_counter() - start < 3.0


def test_every_spelling_in_the_table_shows_the_key_before_scrubbing() -> None:
    """The oracle (``leaks``) reads each spelling: a spelling it could not read would prove nothing."""
    for name, spelling in KEY_SPELLINGS.items():
        assert leaks(f"x {spelling} y", "1"), name
