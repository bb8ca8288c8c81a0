"""Upstream text without the LLM endpoint's key or address, in any spelling (issues 31 and 44).

An OpenAI-compatible endpoint (or a proxy in front of it) may echo what it was sent in an error body, a
reply that is not JSON, an error event in a stream, a header or a malformed status line. Replacing the key
in its exact spelling is not enough: the echo may be upper case, JSON-escaped (``\\u0073k-…``, ``\\/``),
URL-encoded (``%2F``), inside base64 (the key alone, ``user:key``, ``Bearer key``; standard or URL-safe
alphabet), hex, or masked the way APIs print keys (``sk-Secr***Z123``). ``hide_key`` matches every one of
these (case-insensitively) with one pattern built from the key; ``scrub`` also hides the endpoint's
address: every URL, its host in any case with or without its port (a host glued to a word by ``_`` or
``-`` too), its port alone, bearer tokens and every IPv4 address.

    >>> scrub("see HTTP://LocalHost:8799/v1, localhost:8799 or port 8799; key sk-1", "http://127.0.0.1:8799/v1", "sk-1")
    'see the LLM endpoint, the LLM endpoint or port [port]; key [key]'
    >>> hide_key("SK-SECRET-4F1C, c2stc2VjcmV0LTRmMWM=, sk-s***4f1c", "sk-secret-4f1c")
    '[key], [key], [key]'
"""

from __future__ import annotations

import base64
import functools
import re
from urllib.parse import urlsplit

ENDPOINT = "the LLM endpoint"
KEY = "[key]"
ADDRESS = "[address]"
MIN_SHOWN = 4
"""A masked key (``sk-Secr***Z123``) is found when it shows at least this many characters at an end."""
MIN_ENCODED = 6
"""The shortest base64 or hex form looked for (shorter ones would match ordinary words)."""
MASKS = "*.•·…"
"""What a masked key writes between (or after, or before) the characters it shows."""
LONG = 32
"""A key (or its base64, or hex) longer than this is found by its first ``LONG`` characters (in any
spelling), and the rest of its word goes with them."""
ESCAPES = r"\\&%"
"""The first character of every escaped form of a character (``spelled``)."""
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1", "0.0.0.0")
IPV4 = r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d])"


def scrub(text: str, url: str, key: str | None = None) -> str:
    """``text`` without the endpoint's key (``hide_key``) or address (``url``'s, in any spelling)."""
    return _address_pattern(url).sub(_hidden, hide_key(text, key))


def hide_key(text: str, key: str | None) -> str:
    """``text`` with every spelling of ``key`` (see the module's doc) replaced by ``[key]``."""
    return _key_pattern(key).sub(KEY, text) if key else text


def spelled(c: str) -> str:
    """A pattern for one character as an echo may write it: itself, a JSON or Python escape (any number
    of backslashes: a ``repr`` doubles them), URL-encoded (once or twice) or an HTML reference. Case is
    the caller's flag (``re.IGNORECASE``: hex digits and letters alike). The escapes are tried only
    where one starts (``ESCAPES``): most characters fail at the first test."""
    n = ord(c)
    forms = [rf"\\+u{n:04x}", rf"&#(?:0*{n}|x0*{n:x});"]
    if n < 0x100:
        forms += [rf"%(?:25)?{n:02x}", rf"\\+x{n:02x}"]
    if c in "/\\'\"":
        forms.append(r"\\+" + re.escape(c))
    return f"(?:{re.escape(c)}|(?=[{ESCAPES}])(?:{'|'.join(forms)}))"


def _spelled_text(text: str) -> str:
    return "".join(spelled(c) for c in text)


def base64_cores(key: str) -> set[str]:
    """The parts of every base64 text (standard or URL-safe alphabet) that holds ``key`` at any offset
    (``user:key`` and ``Bearer key`` too): for each of the three alignments, the characters that depend on
    the key's bytes alone."""
    raw = key.encode()
    cores = set()
    for shift in range(3):
        coded = base64.b64encode(b"\0" * shift + raw + b"\0\0").decode()
        core = coded[-(-8 * shift // 6) : 8 * (shift + len(raw)) // 6]
        cores |= {core, core.translate(str.maketrans("+/", "-_"))}
    return {c for c in cores if len(c) >= MIN_ENCODED}


def _masked(key: str) -> str:
    """A key shown in part: ``MIN_SHOWN`` to ``LONG`` of its first characters, masks, as many of its last
    (or one end and three or more masks). A run of masks is taken whole (possessive) and only from its
    start (``_after_no_mask``), so a long run costs its length once, not its square."""
    shown = min(len(key) - 1, LONG)
    head = [spelled(c) for c in key[:shown]]
    tail = [spelled(c) for c in key[-shown:]]
    prefix = "".join(head[:MIN_SHOWN]) + functools.reduce(
        lambda inner, c: f"(?:{c}{inner})?", reversed(head[MIN_SHOWN:]), ""
    )
    suffix = functools.reduce(lambda inner, c: f"(?:{inner}{c})?", tail[:-MIN_SHOWN], "")
    suffix += "".join(tail[-MIN_SHOWN:])
    mask = "(?:" + "|".join(spelled(c) for c in MASKS) + ")"
    after_mask = rf"\s?{mask}++\s?{suffix}|{mask}{{3,}}+"
    return rf"{prefix}(?:{after_mask})|(?=[{re.escape(MASKS)}{ESCAPES}]){_after_no_mask()}{mask}{{3,}}+{suffix}"


def _after_no_mask() -> str:
    """Lookbehinds: not right after a mask character in any ``spelled`` form (``*``, ``%2A``, ``\\u002a``,
    ``&#42;``...): each form ends in the character itself, its hex or its decimal and ``;``."""
    ends = set()
    for c in MASKS:
        n = ord(c)
        ends |= {c, f"{n:04x}", f"{n};", f"{n:x};"} | ({f"{n:02x}"} if n < 0x100 else set())
    return "".join(f"(?<!{re.escape(e)})" for e in sorted(ends))


def _whole(form: str) -> str:
    """``form`` in any ``spelled`` form; past ``LONG`` characters, its start and the rest of its word."""
    if len(form) <= LONG:
        return _spelled_text(form)
    return _spelled_text(form[:LONG]) + r"[^\s'\"<>]*+"


@functools.lru_cache(maxsize=16)
def _key_pattern(key: str) -> re.Pattern[str]:
    """The key as it is, its hex, its base64 (with the character it shares with what follows, and the
    padding) and, for a key longer than ``MIN_SHOWN``, masked: any of them in any ``spelled`` form.
    Every alternative starts with a character of ``firsts``, tested first: a text without them is
    passed over at the speed of a plain search."""
    cores = sorted(base64_cores(key))
    edge = rf"(?:[a-z0-9+_-]|{spelled('/')})?(?:{spelled('=')})*+"
    alternatives = [_whole(key), *(_whole(c) + edge for c in cores)]
    forms = [key, *cores]
    if len(key) * 2 >= MIN_ENCODED:
        forms.append(key.encode().hex())
        alternatives.append(_whole(forms[-1]))
    if len(key) > MIN_SHOWN:
        alternatives.append(_masked(key))
    firsts = re.escape("".join({f[0] for f in forms}) + MASKS) + ESCAPES
    return re.compile(f"(?=[{firsts}])(?:{'|'.join(alternatives)})", re.IGNORECASE)


def _hidden(m: re.Match[str]) -> str:
    found = m.groupdict()  # no "port" group when the URL has no port
    if found.get("bearer"):
        return f"Bearer {KEY}"
    if found.get("port"):
        return "[port]"
    return ADDRESS if found.get("ip") else ENDPOINT


@functools.lru_cache(maxsize=16)
def _address_pattern(url: str) -> re.Pattern[str]:
    """Every URL, bearer token and IPv4 address, and ``url``'s host and port in any spelling. A host is
    a word of its own when no letter or digit touches it (``upstream_host``, ``upstream-host`` and
    ``api.host`` all show it)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    names = {host, f"[{host}]"} if ":" in host else {host}
    if host in LOOPBACK_NAMES or host.startswith("127."):
        names.update(LOOPBACK_NAMES)
    hosts = "|".join(_spelled_text(n) for n in sorted(names - {""}, key=len, reverse=True))
    alternatives = [r"(?P<bearer>\bBearer\s+[^\s'\"]+)", r"\b[a-z][a-z0-9+.-]{0,31}://[^\s'\"<>]*[^\s'\"<>.,;:!?)\]}]"]
    if hosts:
        alternatives.append(rf"(?<![a-z0-9])(?:{hosts})(?::\d+)?(?![a-z0-9])")
    alternatives.append(rf"(?P<ip>{IPV4})")
    if parts.port is not None:
        alternatives.append(rf"(?P<port>(?<!\d){parts.port}(?!\d))")
    return re.compile("|".join(alternatives), re.IGNORECASE)
