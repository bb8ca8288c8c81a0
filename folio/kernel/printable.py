"""Text from outside that folio shows but must never have obeyed: file names, and what the CLI prints.

A file name comes from the uploader (a multipart header, a name on disk) and is shown in listings, reports,
citations and the viewer. Characters that a terminal or a text layout obeys rather than shows (C0 and C1
controls such as ESC, which starts an escape sequence; bidi overrides and isolates, which reorder what
follows; other invisible format characters; line separators; lone surrogates) make a name that clears a
screen, retitles a window or reads ``pdf.png`` while it is ``gnp.pdf``. ``display_name`` is what folio
stores for a name; ``terminal_safe`` escapes such characters in any text the CLI prints (a store written
before names were cleaned, page text, a model's reply, a server's).

Zero-width joiners and non-joiners (U+200C, U+200D) are kept: Persian, Indic scripts and emoji need them.
"""

from __future__ import annotations

import unicodedata

_JOINERS = frozenset("\u200c\u200d")
_OBEYED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _obeyed(ch: str) -> bool:
    return unicodedata.category(ch) in _OBEYED and ch not in _JOINERS


def display_name(name: str) -> str:
    """``name`` with every character a terminal or text layout would obey replaced by ``?``.

    >>> display_name("report\\x1b[2J\\u202egnp.pdf")
    'report?[2J?gnp.pdf'
    >>> display_name("отчёт 報告.pdf")
    'отчёт 報告.pdf'
    """
    if name.isprintable():  # the usual name: nothing to replace (every such character is unprintable)
        return name
    return "".join("?" if _obeyed(ch) else ch for ch in name)


def terminal_safe(text: str, *, keep: str = "\n\t") -> str:
    """``text`` for a terminal: such characters (but those in ``keep``: newline and tab) written as JSON escapes
    (``\\u001b``, ``\\u202e``), so that JSON text stays valid JSON of the same value. ``keep="\\t"`` keeps a
    message on one line (a newline in it becomes ``\\u000a``).

    >>> print(terminal_safe("a\\x1b[31mred\\u202e b"))
    a\\u001b[31mred\\u202e b
    >>> print(terminal_safe("one\\nline", keep="\\t"))
    one\\u000aline
    """
    if text.isprintable():
        return text
    return "".join(_escape(ch) if ch not in keep and _obeyed(ch) else ch for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # an astral character: its UTF-16 surrogate pair, as JSON writes it
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
