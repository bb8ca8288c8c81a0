"""Row accuracy of tables on financial statement pages: how many statement lines of the text layer come
out as one table row (the label and its figures, in order, in one row), per ``word_tables`` mode.

    .venv/bin/python benchmarks/statement_rows.py --shared ../shared [--modes off,repair,all] [--by-doc] [--headers]
        [--whole]
    .venv/bin/python benchmarks/statement_rows.py --shared ../shared --changed DIR [DIR ...]

Statement pages are those of ``<shared>/eval/finance/pdfs`` with a statement title as a line of its own in
the top 30% of the page (balance sheet; statement of operations, income, earnings, cash flows,
comprehensive income or financial position; spaces inside words ignored: some text layers split
"Incom e"), fewer than three such lines (a table of contents lists them all) and at least 20 figures.
Only those pages are parsed, copied into one PDF per filing, once per mode (``parse_pdf(word_tables=...)``;
"off" is the parser before word tables).

A statement line is a visual text line (words grouped by their vertical centre) that ends in figures
(``2,853``, ``(370)``; ``$``/``%`` signs and dashes skipped), set apart from a label with a letter by at
least one line height, whose figures are not all years (a header); the top and bottom 8% of the page
(running heads and feet) are left out. It comes out right when a row of a table region on its page has the
line's label in its first non-empty cell and exactly the line's figures, in order, in its other non-empty
cells (``$``, ``%`` and spaces ignored). A wrapped label counts once, on its line with the figures. The
truth is read by this script from the text layer, apart from the parser, with the same idea of a statement
line (a label, then figures after a gap): it measures whether the rows keep what the text layer holds
together, not whether the parser's idea of a row is right. The files are read in place; nothing of them is
copied (they are for evaluation only).

``--headers`` reports, per half, the statement pages whose header (the text layer's lines above the first
statement line) holds a unit line and a period line (``ingest.pdf.statement_header``: "(in millions)", "December
28, 2019 December 29, 2018"), and how many of them keep both after the parse: all the line's words in the page's
text (which leaves furniture out) above its first statement line, or in the header row of a table on the page.

``--whole`` parses each whole filing instead (slower: what a stored filing gets, running heads and all).

``--changed`` reports, for folders of other PDFs (manuals, reports, papers), how many pages each mode changes:
where a word table replaces a ``find_tables`` reading (``repair``) or is added (``all``).
"""

from __future__ import annotations

import argparse
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from folio.ingest.pdf.tables.base import WORD_TABLE_MODES, WordTables

TITLE = re.compile(
    r"(?:condensed|consolidated|combined|interim)*(?:balancesheets?|statements?of(?:consolidated)?"
    r"(?:operations|income|earnings|cashflows?|comprehensive(?:income|loss)|financialposition))"
    r"(?:\(unaudited\)|\(continued\))?"
)
FIGURE = re.compile(r"\(?[$€£]?\(?-?\d[\d,]*(?:\.\d+)?\)?%?\)?")
SKIPPED = re.compile(r"[-–—]+|[$€£%]")
YEAR = re.compile(r"(?:19|20)\d\d")
LEADER = re.compile(r"(?:\s?[.…·_]){3,}")
MIN_FIGURES = 20
MARGIN = 0.08  # of the page height: running heads and feet ("Form 10-K   46")


@dataclass(frozen=True)
class Line:
    page: int  # 1-based, in the filing
    label: str  # normalized
    figures: tuple[str, ...]  # normalized


def norm_label(text: str) -> str:
    return " ".join(LEADER.sub(" ", text).lower().split()).strip(" .:")


def norm_figure(text: str) -> str:
    return re.sub(r"[$€£%\s]", "", text)


def _rows(words: Iterable[Sequence[Any]]) -> list[list[Sequence[Any]]]:
    rows: list[tuple[float, list[Sequence[Any]]]] = []
    for w in sorted((w for w in words if str(w[4]).strip()), key=lambda w: ((w[1] + w[3]) / 2, w[0])):
        yc, h = (w[1] + w[3]) / 2, w[3] - w[1]
        if rows and abs(yc - rows[-1][0]) <= 0.4 * h:
            rows[-1][1].append(w)
        else:
            rows.append((yc, [w]))
    return [sorted(ws, key=lambda w: w[0]) for _, ws in rows]


def _label_end(ws: Sequence[Sequence[Any]]) -> float:
    for w in reversed(ws):
        kept = LEADER.sub("", str(w[4])).rstrip(". ")
        if kept:
            return float(w[0]) + (float(w[2]) - float(w[0])) * len(kept) / max(1, len(str(w[4])))
    return float(ws[0][0])


def statement_line(ws: Sequence[Sequence[Any]]) -> tuple[str, tuple[str, ...]] | None:
    """The label and figures of a text line that is a statement line (module docstring), else None."""
    k = len(ws)
    while k and (FIGURE.fullmatch(str(ws[k - 1][4])) or SKIPPED.fullmatch(str(ws[k - 1][4]))):
        k -= 1
    h = max(float(w[3]) - float(w[1]) for w in ws)
    while k < len(ws):
        first = next((w for w in ws[k:] if FIGURE.fullmatch(str(w[4]))), None)
        if first is None or not ws[:k] or float(first[0]) - _label_end(ws[:k]) >= h:
            break
        k = ws.index(first) + 1  # a figure next to the label is part of it ("Note 16")
    label = norm_label(" ".join(str(w[4]) for w in ws[:k]))
    figures = tuple(norm_figure(str(w[4])) for w in ws[k:] if FIGURE.fullmatch(str(w[4])))
    if not figures or not any(ch.isalpha() for ch in label) or all(YEAR.fullmatch(f) for f in figures):
        return None
    return label, figures


def statement_pages(doc: Any) -> list[int]:
    """0-based pages with a statement title line in their top 30% and ``MIN_FIGURES`` figures; a page with
    three or more title lines is a table of contents, not a statement."""
    out = []
    for page in doc:
        titles = []
        for b in page.get_text("dict")["blocks"]:
            for ln in b.get("lines", []):
                text = re.sub(r"\s+", "", "".join(s["text"] for s in ln["spans"]).lower())
                if TITLE.fullmatch(text):
                    titles.append(ln["bbox"][1] < 0.3 * page.rect.height)
        if (
            any(titles)
            and len(titles) < 3
            and sum(1 for w in page.get_text("words") if FIGURE.fullmatch(w[4])) >= MIN_FIGURES
        ):
            out.append(page.number)
    return out


def truth(doc: Any, pages: Sequence[int]) -> list[Line]:
    """The statement lines of ``pages``, running heads and feet (the top and bottom ``MARGIN``) left out."""
    out = []
    for p in pages:
        h = doc[p].rect.height
        for ws in _rows(w for w in doc[p].get_text("words") if MARGIN * h < w[1] and w[3] < (1 - MARGIN) * h):
            got = statement_line(ws)
            if got is not None:
                out.append(Line(p + 1, *got))
    return out


def table_rows(markdown: str) -> list[tuple[str, tuple[str, ...]]]:
    """(normalized first non-empty cell, normalized other non-empty cells) of each row of a table region."""
    from folio.kernel.mdtable import is_rule, split_cells

    rows = []
    for line in markdown.splitlines():
        cells = [c.replace("\\|", "|").strip() for c in split_cells(line)]
        if not line.strip() or is_rule(cells):
            continue
        kept = [c for c in cells if c]
        if kept:
            rest = tuple(f for f in (norm_figure(c) for c in kept[1:]) if f and not SKIPPED.fullmatch(f))
            rows.append((norm_label(kept[0]), rest))
    return rows


def correct(line: Line, rows: Sequence[tuple[str, tuple[str, ...]]]) -> bool:
    return any(line.label in label and figures == line.figures for label, figures in rows)


@dataclass(frozen=True)
class Header:
    """A statement page's header read from the text layer: its unit lines, its period lines, and the label of the
    page's first statement line (where the header ends)."""

    units: tuple[str, ...]
    periods: tuple[str, ...]
    first_label: str


def header_lines(doc: Any, pages: Sequence[int]) -> dict[int, Header]:
    """Per statement page (1-based): its header (``Header``), the visual lines above its first statement line; a
    unit line and a period line are what ``ingest.pdf.statement_header`` calls so ("(in millions)"; "For the years
    ended June 30, 2023 2022 2021")."""
    from folio.ingest.pdf.statement_header import is_period_line, is_unit_line

    out = {}
    for p in pages:
        units, periods, first = [], [], ""
        for ws in _rows(doc[p].get_text("words")):
            got = statement_line(ws)
            if got is not None:
                first = got[0]
                break
            text = " ".join(str(w[4]) for w in ws)
            if is_unit_line(text):
                units.append(text)
            elif is_period_line(text):
                periods.append(text)
        out[p + 1] = Header(tuple(units), tuple(periods), first)
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def kept(line: str, head_text: str, headers: Sequence[str] = ()) -> bool:
    """Whether all the words of a header line are in ``head_text`` (the parsed page's text above its first
    statement line: the parser may put a visual line's words in other lines, "(MILLIONS)" apart from the years
    beside it), or in the header row of one of the page's tables (``headers``: cells joined per column)."""
    words = Counter(_words(line))
    if not words - Counter(_words(head_text)):
        return True
    return any(not words - Counter(_words(h)) for h in headers)


def _head_text(page_text: str, first_label: str) -> str:
    """The part of a parsed page's text (furniture left out) before its first statement line's label."""
    text = " ".join(_words(page_text))
    at = text.find(" ".join(_words(first_label))) if first_label else -1
    return text[:at] if at > 0 else text


def _header_counts(heads: dict[int, Header], parsed: Any, pages: Sequence[int]) -> dict[str, int]:
    """Statement pages with a unit line and a period line in their header, those whose parsed text keeps both, and
    those that keep both in their text or a table's header row."""
    texts: dict[int, str] = {}
    headers: dict[int, list[str]] = {}
    for r in parsed.regions:
        page = pages[r.first_page - 1] + 1  # the filing's page (1-based)
        if page not in heads:
            continue
        if r.kind == "page":
            texts[page] = r.text
        elif r.kind == "table":
            headers.setdefault(page, []).append(r.text.split("\n", 1)[0])
    both = {p: h for p, h in heads.items() if h.units and h.periods}
    head = {p: _head_text(texts.get(p, ""), h.first_label) for p, h in both.items()}
    in_text = [p for p, h in both.items() if all(any(kept(ln, head[p]) for ln in g) for g in (h.units, h.periods))]
    ok = [
        p
        for p, h in both.items()
        if all(any(kept(ln, head[p], headers.get(p, [])) for ln in g) for g in (h.units, h.periods))
    ]
    return {"headed": len(both), "text_kept": len(in_text), "headers_kept": len(ok)}


def measure(pdf: Path, modes: Sequence[WordTables], *, whole: bool = False) -> dict[str, dict[str, Any]]:
    """Per mode: statement pages, statement lines, lines that come out right, pages with a table, parse seconds,
    pages whose header has a unit and a period line and pages whose parse keeps both. The statement pages are
    parsed as a PDF of their own, or (``whole``) within the whole filing, whose other pages' running heads and
    repeated lines weigh on what is furniture."""
    import pymupdf

    from folio.ingest.pdf.parse import parse_pdf

    doc = pymupdf.open(pdf)
    pages = statement_pages(doc)
    lines = truth(doc, pages)
    heads = header_lines(doc, pages)
    sub = pymupdf.open()
    for p in pages:
        sub.insert_pdf(doc, from_page=p, to_page=p)
    data = pdf.read_bytes() if whole else sub.tobytes() if pages else b""
    parsed_pages = list(range(doc.page_count)) if whole else pages  # the filing's page of each parsed page
    out: dict[str, dict[str, Any]] = {}
    for mode in modes:
        if not pages:
            out[mode] = {"pages": 0, "lines": 0, "correct": 0, "tabled": 0, "seconds": 0.0, "headed": 0}
            out[mode].update(text_kept=0, headers_kept=0)
            continue
        started = time.perf_counter()
        parsed = parse_pdf(data, doc_id="statements", filename=pdf.name, assets_dir=None, ocr=False, word_tables=mode)
        seconds = time.perf_counter() - started
        rows: dict[int, list[tuple[str, tuple[str, ...]]]] = {}
        for r in parsed.regions:
            page = parsed_pages[r.first_page - 1]
            if r.kind == "table" and page in pages:
                rows.setdefault(page + 1, []).extend(table_rows(r.text))
        ok = sum(1 for ln in lines if correct(ln, rows.get(ln.page, [])))
        out[mode] = {"pages": len(pages), "lines": len(lines), "correct": ok, "tabled": len(rows), "seconds": seconds}
        out[mode].update(_header_counts(heads, parsed, parsed_pages))
    return out


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}" if b else "-"


def changed_pages(pdf: Path) -> dict[str, int]:
    """Pages of ``pdf`` whose tables each mode changes against "off", read as the readers of ``tables.merged`` read
    them (``find_page_tables`` where the page has drawings, then ``merge_tables``), and pages with a word
    table at all. No full parse: the first pass's table step alone."""
    import pymupdf

    from folio.ingest.pdf.parse import text_flags
    from folio.ingest.pdf.tables.merged import merge_tables
    from folio.ingest.pdf.tables.ruled import find_page_tables
    from folio.ingest.pdf.tables.words import find_word_tables
    from folio.ingest.pdf.text import extract_blocks

    out = {"pages": 0, "word tables": 0, "repair": 0, "all": 0}
    for page in pymupdf.open(pdf):
        out["pages"] += 1
        blocks = extract_blocks(page.get_textpage(flags=text_flags()), page)
        words = find_word_tables(blocks)
        if not words:
            continue
        out["word tables"] += 1
        drawings = page.get_cdrawings()
        found = find_page_tables(page, drawings, [w for b in blocks for ln in b.lines for w in ln.words])
        found = found if drawings else []
        for mode in ("repair", "all"):
            got = merge_tables(found, words, mode)
            out[mode] += any(all(t is not f for f in found) for t in got)
    return out


def print_changed(dirs: Sequence[str]) -> None:
    """A line per folder of PDFs: pages, pages with a word table, pages each mode changes."""
    print("| folder | PDFs | pages | pages with a word table | changed by repair | changed by all |")
    print("|---|---|---|---|---|---|")
    for d in dirs:
        pdfs = sorted(Path(d).glob("*.pdf"))
        counts = [changed_pages(p) for p in pdfs]
        total = {k: sum(c[k] for c in counts) for k in ("pages", "word tables", "repair", "all")}
        print(f"| {d} | {len(pdfs)} | {total['pages']} | {total['word tables']} | {total['repair']} | {total['all']} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", required=True, help="the shared folder holding eval/finance/pdfs")
    ap.add_argument("--modes", default="off,repair,all", help="word_tables modes to measure, comma-separated")
    ap.add_argument("--by-doc", action="store_true", help="a line per filing as well")
    ap.add_argument("--headers", action="store_true", help="also: statement pages that keep their unit and periods")
    ap.add_argument("--whole", action="store_true", help="parse whole filings, not their statement pages alone")
    ap.add_argument("--changed", nargs="+", metavar="DIR", help="instead: pages each mode changes in these folders")
    a = ap.parse_args(argv)
    if a.changed:
        print_changed(a.changed)
        return 0
    asked = [m.strip() for m in a.modes.split(",") if m.strip()]
    if not asked or set(asked) - set(WORD_TABLE_MODES):
        ap.error(f"--modes: one or more of {', '.join(WORD_TABLE_MODES)}")
    modes = [m for name in asked for m in WORD_TABLE_MODES if m == name]
    pdfs = sorted((Path(a.shared) / "eval" / "finance" / "pdfs").glob("*.pdf"))
    if not pdfs:
        ap.error(f"no PDFs under {a.shared}/eval/finance/pdfs")
    by_pdf = {p.name: measure(p, modes, whole=a.whole) for p in pdfs}
    results = {m: {name: r[m] for name, r in by_pdf.items()} for m in modes}
    if a.by_doc:
        print("| filing | pages | lines | " + " | ".join(f"{m} right" for m in modes) + " |")
        print("|---|---|---|" + "---|" * len(modes))
        for p in pdfs:
            first = results[modes[0]][p.name]
            print(
                f"| {p.name} | {first['pages']} | {first['lines']} | "
                + " | ".join(str(results[m][p.name]["correct"]) for m in modes)
                + " |"
            )
        print()
    print("| word_tables | half | statement pages | pages with a table | statement lines | right rows | % | parse s |")
    print("|---|---|---|---|---|---|---|---|")
    for m in modes:
        for half, names in (("A", pdfs[0::2]), ("B", pdfs[1::2]), ("all", pdfs)):
            rs = [results[m][p.name] for p in names]
            n, ok = sum(r["lines"] for r in rs), sum(r["correct"] for r in rs)
            print(
                f"| {m} | {half} | {sum(r['pages'] for r in rs)} | {sum(r['tabled'] for r in rs)} | {n} | {ok} | "
                f"{_pct(ok, n)} | {sum(r['seconds'] for r in rs):.1f} |"
            )
    if a.headers:
        print_headers(results, pdfs, modes, by_doc=a.by_doc)
    return 0


def print_headers(
    results: dict[WordTables, dict[str, dict[str, Any]]],
    pdfs: Sequence[Path],
    modes: Sequence[WordTables],
    *,
    by_doc: bool,
) -> None:
    """Per mode and half: statement pages whose header (text layer) has a unit line and a period line, those whose
    parsed page text (furniture left out) keeps both, and those that keep both in the text or a table's header row."""
    print()
    if by_doc:
        print("| filing | word_tables | pages with unit and period lines | both in page text | in text or table head |")
        print("|---|---|---|---|---|")
        for p in pdfs:
            for m in modes:
                r = results[m][p.name]
                print(f"| {p.name} | {m} | {r['headed']} | {r['text_kept']} | {r['headers_kept']} |")
        print()
    print(
        "| word_tables | half | pages with unit and period lines | both in page text | % | in text or table head | % |"
    )
    print("|---|---|---|---|---|---|---|")
    for m in modes:
        for half, names in (("A", pdfs[0::2]), ("B", pdfs[1::2]), ("all", pdfs)):
            rs = [results[m][p.name] for p in names]
            n, text, ok = (sum(r[k] for r in rs) for k in ("headed", "text_kept", "headers_kept"))
            print(f"| {m} | {half} | {n} | {text} | {_pct(text, n)} | {ok} | {_pct(ok, n)} |")


if __name__ == "__main__":
    raise SystemExit(main())
