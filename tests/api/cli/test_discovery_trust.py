"""Issue 44, items 1 and 7: a ``server.json`` in a data directory is input from outside, never a reason to send a
question or a key anywhere.

Before, a file naming any ``http://`` URL and any live pid (pid 1 passes) made ``folio search --data DATA`` send
``POST /v1/search`` with ``X-API-Key`` to that host, and print its reply as local evidence. Now a command forwards
only to a loopback address held by a process of its own user, which proves that it wrote the (user-only) file
and, before the key goes, that it holds the key (``api.cli.discovery``). Malformed files (a pid past 2**32,
deep nesting) and servers that drip their answer are passed over within the deadline, without a traceback.

Nothing here sends a byte off the loopback: the test that names ``192.0.2.2`` runs the installed ``folio``
command in a network namespace of its own (``unshare -n``), where that address is a listener of the test's,
and asserts that nobody ever connected to it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from folio.api.cli import discovery
from folio.kernel.handshake import instance_proof, key_proof, key_tag, sha256_hex
from tests.api.cli.standin import JsonHandler, LoopbackServer

FOLIO = Path(sys.executable).with_name("folio")
SECRET = "s" * 64
KEY = "top-secret"


def _env(**variables: str) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("FOLIO_")} | {"FOLIO_OCR": "false"} | variables


def _announce(data: Path, body: object, mode: int = 0o600) -> None:
    path = data / "server.json"
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    path.chmod(mode)


# ----------------------------------------------------------------------------- off the loopback, in a namespace
LISTENER = r"""
import json, socket, subprocess, sys, threading
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
subprocess.run(["ip", "addr", "add", "192.0.2.2/32", "dev", "lo"], check=True)
seen = []
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("192.0.2.2", 8796))
srv.listen(16)
def serve():
    while True:
        conn, _ = srv.accept()
        seen.append(conn.recv(65536).decode("latin-1"))
        body = json.dumps({"status": "ok", "state": "ready", "instance": "abc", "auth": False}).encode()
        head = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
        conn.sendall(head + body)
        conn.close()
threading.Thread(target=serve, daemon=True).start()
out = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=240)
print(json.dumps({"seen": seen, "code": out.returncode, "stderr": out.stderr, "stdout": out.stdout}))
"""


def _namespaces_work() -> bool:
    if not (shutil.which("unshare") and shutil.which("ip")):
        return False
    return subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _namespaces_work(), reason="needs `unshare -n` and `ip` (root or user namespaces) to give "
                    "192.0.2.2 a listener inside a network namespace of the test's own")
@pytest.mark.parametrize("mode", [0o600, 0o644])
def test_a_planted_server_file_sends_nothing_to_the_host_it_names(tmp_path: Path, mode: int) -> None:
    """The issue's reproducer, through the installed command: the file names a host off the loopback and pid 1."""
    data = tmp_path / "data"
    data.mkdir()
    _announce(data, {"url": "http://192.0.2.2:8796", "pid": 1, "instance": "abc", "secret": SECRET}, mode)
    script = tmp_path / "listener.py"
    script.write_text(LISTENER)
    out = subprocess.run(["unshare", "-n", sys.executable, str(script), str(FOLIO), "search", "merger target",
                          "--data", str(data)], capture_output=True, text=True, timeout=300,
                         env=_env(FOLIO_API_KEY=KEY))
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["seen"] == [], found["seen"]  # no probe, no question, no key
    assert "asking the server" not in found["stderr"] and "Traceback" not in found["stderr"], found["stderr"]
    assert found["code"] == 2 and "no folio store" in found["stderr"].lower(), found  # it ran here, on no store


# ----------------------------------------------------------------------------- the rules, one by one
def test_only_loopback_literals_with_a_port_are_forwarded_to() -> None:
    ok = ["http://127.0.0.1:8000", "http://127.0.0.1:8000/", "http://127.1.2.3:9", "http://[::1]:80",
          "http://localhost:8000"]
    refused = ["http://192.0.2.2:8796", "https://127.0.0.1:8000", "http://127.0.0.1", "http://user@127.0.0.1:80",
               "http://127.0.0.1:80/v1", "http://127.0.0.1:80/?a=1", "http://localhost.example.com:80",
               "http://0.0.0.0:80", "http://127.0.0.1:99999", "http://[::ffff:192.0.2.2]:80", "ftp://127.0.0.1:21",
               "http://evil.example:80#@127.0.0.1:80", 8000, None, "http://127.0.0.1:8000/" + "x" * 200]
    assert all(discovery.loopback_address(u) is not None for u in ok)
    assert [u for u in refused if discovery.loopback_address(u) is not None] == []


def test_malformed_server_files_are_passed_over(tmp_path: Path) -> None:
    """Item 7: pid 2**32+1 raised OverflowError and deep nesting RecursionError, each a traceback."""
    for body in [{"url": "http://127.0.0.1:9", "pid": 2**32 + 1, "secret": SECRET},
                 {"url": "http://127.0.0.1:9", "pid": -5, "secret": SECRET},
                 {"url": "http://127.0.0.1:9", "pid": True, "secret": SECRET},
                 "[" * 100_000 + "]" * 100_000, "[1, 2]", "{" * 50, "x" * 10_000_000]:
        _announce(tmp_path, body)
        assert discovery.find_server(str(tmp_path), api_key=KEY) is None


def test_the_installed_command_passes_malformed_files_over_without_a_traceback(tmp_path: Path) -> None:
    """Item 7 through ``folio search``: each file is passed over and the command runs here (on no store: exit 2)."""
    for body in [{"url": "http://127.0.0.1:9", "pid": 2**32 + 1, "instance": "x", "secret": SECRET},
                 "[" * 100_000 + "]" * 100_000]:
        _announce(tmp_path, body)
        out = subprocess.run([str(FOLIO), "search", "q", "--data", str(tmp_path)], capture_output=True, text=True,
                             timeout=120, env=_env())
        assert "Traceback" not in out.stderr and "Error" not in out.stderr, out.stderr
        assert out.returncode == 2 and "no folio store" in out.stderr, out.stderr


def test_a_live_pid_that_does_not_hold_the_port_is_passed_over(tmp_path: Path) -> None:
    with StandIn(auth=False) as server:
        _announce(tmp_path, {"url": server.url, "pid": 1, "instance": "i", "secret": SECRET})
        assert discovery.find_server(str(tmp_path), api_key=None) is None
        _announce(tmp_path, {"url": server.url, "pid": os.getpid(), "instance": "i", "secret": SECRET})
        assert discovery.find_server(str(tmp_path), api_key=None) == discovery.Found(server.url, send_key=False)
        assert server.requests[0].startswith("/v1/health/proof?nonce=")


def test_a_file_others_may_read_or_write_is_passed_over(tmp_path: Path) -> None:
    with StandIn(auth=False) as server:
        for mode in (0o644, 0o620, 0o606):
            _announce(tmp_path, {"url": server.url, "pid": os.getpid(), "secret": SECRET}, mode)
            assert discovery.find_server(str(tmp_path), api_key=None) is None
        assert server.requests == []  # not even probed


def test_a_server_that_cannot_prove_the_files_secret_is_passed_over(tmp_path: Path) -> None:
    """Another program on the port, or the user's own server named by a file it did not write."""
    with StandIn(auth=False, secret="another start's secret") as server:
        _announce(tmp_path, {"url": server.url, "pid": os.getpid(), "secret": SECRET})
        assert discovery.find_server(str(tmp_path), api_key=None) is None


def test_the_key_goes_only_to_a_server_that_proves_it_holds_it(tmp_path: Path) -> None:
    with StandIn(auth=True, keys=[sha256_hex(KEY)]) as server:
        _announce(tmp_path, {"url": server.url, "pid": os.getpid(), "secret": SECRET})
        assert discovery.find_server(str(tmp_path), api_key=KEY) == discovery.Found(server.url, send_key=True)
        assert discovery.find_server(str(tmp_path), api_key="another key") is None  # runs here, key kept
        assert discovery.find_server(str(tmp_path), api_key=None) is None
        assert not any(KEY in r for r in server.requests)  # a tag named it; the key never crossed
    with StandIn(auth=True, keys=[sha256_hex(KEY)], forge_key_proof=True) as server:
        _announce(tmp_path, {"url": server.url, "pid": os.getpid(), "secret": SECRET})
        assert discovery.find_server(str(tmp_path), api_key=KEY) is None


def test_a_server_without_keys_is_never_sent_the_key(tmp_path: Path) -> None:
    """Through the installed command: the stand-in records the request's headers."""
    data = tmp_path / "data"
    data.mkdir()
    with StandIn(auth=False) as server:
        _announce(data, {"url": server.url, "pid": os.getpid(), "secret": SECRET})
        out = subprocess.run([str(FOLIO), "search", "q", "--data", str(data), "--json"], capture_output=True,
                             text=True, timeout=120, env=_env(FOLIO_API_KEY=KEY))
        assert out.returncode == 0, out.stderr
        assert out.stderr.startswith(f"folio: asking the server at {server.url}")
        assert server.posted == [("/v1/search", None)]  # asked, with no X-API-Key


# ----------------------------------------------------------------------------- deadlines (item 7)
def test_a_server_that_drips_its_health_is_given_up_on_in_about_a_second(tmp_path: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def drip() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        for b in b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"state": "ready"' + b" " * 200 + b"}":
            if stop.is_set():
                break
            with_suppressed(conn.sendall, bytes([b]))
            time.sleep(0.5)
        conn.close()

    threading.Thread(target=drip, daemon=True).start()
    data = tmp_path / "data"
    data.mkdir()
    _announce(data, {"url": f"http://127.0.0.1:{port}", "pid": os.getpid(), "secret": SECRET})
    began = time.monotonic()
    out = subprocess.run([str(FOLIO), "search", "q", "--data", str(data)], capture_output=True, text=True,
                         timeout=200, env=_env())
    stop.set()
    listener.close()
    # the probe gave up after its 1 s deadline; before, it read the 270 bytes at one per 0.5 s (135 s). What is
    # left of the time is the command running here (on no store: about 2 s)
    assert "Traceback" not in out.stderr and "asking the server" not in out.stderr, out.stderr
    assert out.returncode == 2 and time.monotonic() - began < 30


def test_a_server_that_takes_the_post_and_never_answers_is_given_up_on(tmp_path: Path) -> None:
    """``REMOTE_TIMEOUT_S`` is a deadline for the whole exchange; here it is set to 2 s (it is 120 s)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    held: list[socket.socket] = []

    def hold() -> None:
        conn, _ = listener.accept()
        held.append(conn)
        conn.recv(65536)
        while True:  # a byte of headers every 0.5 s, never a whole answer
            time.sleep(0.5)
            if with_suppressed(conn.sendall, b"X") is None:
                return

    threading.Thread(target=hold, daemon=True).start()
    code = ("import sys\nimport folio.api.cli.query as q\nq.REMOTE_TIMEOUT_S = 2.0\nfrom folio.api.cli import main\n"
            f"sys.exit(main(['search', 'q', '--server', 'http://127.0.0.1:{port}']))")
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_env())
    took = time.monotonic() - began
    listener.close()
    for conn in held:
        conn.close()
    assert out.returncode == 1, out.stderr
    assert "no answer from the server" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert took < 20, took


def with_suppressed(call: Any, *args: Any) -> object:
    try:
        call(*args)
    except OSError:
        return None
    return True


# ----------------------------------------------------------------------------- a stand-in for folio serve
class StandIn(LoopbackServer):
    """Answers ``/v1/health/proof`` as ``folio serve`` does, with a given secret and keys (sha256 hex), or with a
    forged key proof; records what it was asked and the key each POST carried."""

    def __init__(self, *, auth: bool, secret: str = SECRET, keys: list[str] | None = None,
                 forge_key_proof: bool = False) -> None:
        self.requests: list[str] = []
        self.posted: list[tuple[str, str | None]] = []
        stand_in = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                stand_in.requests.append(self.path)
                query = parse_qs(urlsplit(self.path).query)
                nonce, tag = query.get("nonce", [""])[0], query.get("key_tag", [None])[0]
                proved = None
                for digest in keys or []:
                    if tag == key_tag(digest, nonce):
                        proved = key_proof(digest, nonce)
                if forge_key_proof:
                    proved = "0" * 64
                self.answer({"state": "ready", "auth": auth, "instance_proof": instance_proof(secret, nonce),
                              "key_proof": proved})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                stand_in.posted.append((self.path, self.headers.get("X-API-Key")))
                self.answer({"data": [], "count": 0, "notes": []})

        super().__init__(Handler)


# ----------------------------------------------------------------------------- the server's side
def test_the_servers_proofs_are_the_ones_the_command_checks(data_copy: Path) -> None:
    """``GET /v1/health/proof`` on the real app: the instance proof under this start's secret, a key proof only for
    a tag made from a key the server holds (the keys file's or the legacy key), open without a key, and bounded."""
    from fastapi.testclient import TestClient

    from folio.api.cli.discovery import PROOF_PATH
    from folio.api.http.app import create_app
    from folio.api.keys import add_key
    from tests.api.conftest import make_settings

    keys_file = data_copy.parent / "keys.json"
    _, secret = add_key(keys_file, ["*"], "read")
    nonce = "ab" * 32
    with TestClient(create_app(make_settings(data_copy, keys_file=str(keys_file), api_key=KEY))) as client:
        start_secret = client.app.state.startup.secret  # type: ignore[attr-defined]
        for key in (secret, KEY):
            got = client.get(PROOF_PATH, params={"nonce": nonce, "key_tag": key_tag(sha256_hex(key), nonce)}).json()
            assert got["auth"] is True and got["instance_proof"] == instance_proof(start_secret, nonce)
            assert got["key_proof"] == key_proof(sha256_hex(key), nonce)
        wrong = client.get(PROOF_PATH, params={"nonce": nonce, "key_tag": key_tag(sha256_hex("guess"), nonce)})
        assert wrong.status_code == 200 and wrong.json()["key_proof"] is None
        assert client.get(PROOF_PATH, params={"nonce": "xyz"}).status_code == 422
