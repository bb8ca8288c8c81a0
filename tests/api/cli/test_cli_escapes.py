"""What the CLI prints from outside is shown, never obeyed (issue 44, item 8): a server's error message and a file
name on the command line reached the terminal raw, with their escape sequences (ESC ] 0 ; retitles the window,
ESC [ 2 J clears the screen) and newlines (a forged second line). Every line the CLI writes to stderr now goes
through ``api.cli.common.say``, which escapes them; the tests run the installed ``folio`` against a stand-in
server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

FOLIO = Path(sys.executable).with_name("folio")
CLI = Path(__file__).resolve().parents[3] / "api" / "cli"
HOSTILE = "\x1b]0;owned\x07\x1b[2Jcleared\r\nfolio: all good"  # retitle, clear, then a forged line
SHOWN = "\\u001b]0;owned\\u0007\\u001b[2Jcleared\\u000d\\u000afolio: all good"  # what the terminal gets instead
REASON, REASON_SHOWN = "Bad \x1b[2Jgateway", "Bad \\u001b[2Jgateway"  # a status line's reason (no line breaks)


def _folio(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert FOLIO.is_file(), f"{FOLIO} is missing: scripts/setup.sh installs the folio command"
    env = {k: v for k, v in os.environ.items() if k not in ("FOLIO_URL", "FOLIO_API_KEY")}
    return subprocess.run([str(FOLIO), *args], capture_output=True, text=True, cwd=cwd, timeout=120, env=env)


def _assert_shown_not_obeyed(out: subprocess.CompletedProcess[str], line: str) -> None:
    """stderr is exactly ``line``, one line, with no character a terminal would obey."""
    assert "\x1b" not in out.stderr and "\x07" not in out.stderr and "\r" not in out.stderr, repr(out.stderr)
    assert out.stderr.splitlines() == [line], out.stderr
    assert "Traceback" not in out.stderr


def test_no_such_file_shows_the_name_escaped(tmp_path: Path) -> None:
    name = tmp_path / f"report{HOSTILE}.pdf"
    out = _folio("ingest", str(name), "--data", str(tmp_path / "data"), cwd=tmp_path)
    assert out.returncode == 2
    _assert_shown_not_obeyed(out, f"folio: no such file: {tmp_path}/report{SHOWN}.pdf")


class _StandIn(BaseHTTPRequestHandler):
    """A server that answers every POST as ``server.reply`` says: (status, reason, body)."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("content-length", "0")))
        status, reason, body = self.server.reply  # type: ignore[attr-defined]
        self.send_response(status, reason)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def stand_in() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def _error(message: str) -> bytes:
    return json.dumps({"error": {"code": "internal_error", "message": message, "request_id": "r1"}}).encode()


@pytest.mark.parametrize(
    ("reply", "code", "says"),
    [
        ((500, None, _error(HOSTILE)), 1, f"500 {SHOWN}"),  # folio's error shape: its message
        ((422, None, _error(HOSTILE)), 2, SHOWN),  # an option the server refuses: a usage error
        ((502, REASON, b"<html>"), 1, f"502 {REASON_SHOWN}"),  # no error shape: the status line's reason
    ],
)
def test_a_servers_error_message_is_escaped(
    stand_in: ThreadingHTTPServer, tmp_path: Path, reply: tuple[int, str | None, bytes], code: int, says: str
) -> None:
    stand_in.reply = reply  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{stand_in.server_address[1]}"
    out = _folio("search", "merger target", "--server", url, cwd=tmp_path)
    assert out.returncode == code, out.stderr
    _assert_shown_not_obeyed(out, f"folio: {url}: {says}")


def test_ask_escapes_the_servers_error_too(stand_in: ThreadingHTTPServer, tmp_path: Path) -> None:
    stand_in.reply = (500, None, _error(HOSTILE))  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{stand_in.server_address[1]}"
    out = _folio("ask", "merger target", "--server", url, cwd=tmp_path)
    assert out.returncode == 1
    assert "\x1b" not in out.stderr and "\x07" not in out.stderr and SHOWN in out.stderr, repr(out.stderr)
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_servers_notes_and_hits_are_escaped_on_stdout(stand_in: ThreadingHTTPServer, tmp_path: Path) -> None:
    hit = {
        "rank": 1,
        "score": 1.0,
        "filename": f"a{HOSTILE}.pdf",
        "doc_id": "a",
        "pages": [1],
        "kind": "paragraph",
        "region_id": "a@v:r1",
        "text": HOSTILE,
    }
    stand_in.reply = (200, None, json.dumps({"data": [hit], "count": 1, "notes": [HOSTILE]}).encode())  # type: ignore[attr-defined]
    out = _folio("search", "merger target", "--server", f"http://127.0.0.1:{stand_in.server_address[1]}", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "\r" not in out.stdout, repr(out.stdout)
    assert out.stdout.startswith("note: \\u001b]0;owned\\u0007\\u001b[2Jcleared\\u000d\n"), repr(out.stdout)


def test_every_stderr_line_of_the_cli_goes_through_say() -> None:
    """One place escapes: no module of the CLI writes to stderr itself but ``common`` (``say`` and the progress
    bar, whose label it escapes)."""
    writers = {p.name for p in CLI.glob("*.py") if "sys.stderr" in p.read_text(encoding="utf-8")}
    assert writers <= {"common.py"}, writers
    common = (CLI / "common.py").read_text(encoding="utf-8")
    assert common.count("file=sys.stderr") == 1  # say's print
