"""Relative links in the README and the Markdown docs resolve: to a file of the repository, and to a heading of
it when the link names one (``file.md#section``, GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "benchmarks" / "results").glob("*.md")])
# Linked before they land: docs/architecture.md and LICENSE come with the namespace work (issue 21). Remove an
# entry once its file exists.
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]\n]*\]\(([^)\s]+)\)")
REFERENCE = re.compile(r"^\s*\[[^\]\n]+\]:\s+(\S+)", re.M)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The text without fenced code blocks (whose '#' lines are not headings and whose brackets are not links)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (``\\w``, '-' and spaces kept), spaces to '-'.

    >>> slug("Answers: `POST /v1/answer` and `folio ask`")
    'answers-post-v1answer-and-folio-ask'
    """
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(prose(path.read_text(encoding="utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    text = INLINE_CODE.sub("", prose(path.read_text(encoding="utf-8")))
    return LINK.findall(text) + IMAGE.findall(text) + REFERENCE.findall(text)


def broken(path: Path) -> list[str]:
    out = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        rel = dest.relative_to(ROOT).as_posix() if dest.is_relative_to(ROOT) else str(dest)
        if not dest.exists():
            out.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            out.append(f"{target}: no heading #{anchor} in {rel}")
    return out


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    assert not broken(page), f"{page.relative_to(ROOT)}: {broken(page)}"


def test_the_checker_finds_a_broken_link_and_a_missing_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## A section: `x`\n", encoding="utf-8")
    page.write_text(
        "# Page\n\n[ok](other.md#a-section-x) [self](#page) [web](https://example.com/x)\n"
        "[gone](missing.md) [bad anchor](other.md#nope) `[not a link](code.md)`\n"
        "```\n[also code](code.md)\n# not a heading\n```\n",
        encoding="utf-8",
    )
    assert broken(page) == [
        "missing.md: no such file",
        "other.md#nope: no heading #nope in " + str(tmp_path / "other.md"),
    ]
