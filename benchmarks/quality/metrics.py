"""Metric functions for the quality evaluation (pure Python; no heavy imports).

Conventions shared by every function here:

* pages are 1-based physical pages, as in ``dev_questions.jsonl``;
* bboxes are ``(x0, y0, x1, y1)`` in PDF points with a top-left origin (folio's ``COORD_CONVENTION`` and
  the gold file agree on this);
* text matching is done on :func:`normalize`-d strings: NFKC, casefold, one kind of quote and dash,
  whitespace collapsed to single spaces.
"""

from __future__ import annotations

import ast
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_SQUOTES = re.compile("[\u2018\u2019\u201a\u201b\u2032\u00b4`]")
_DQUOTES = re.compile("[\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d]")
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Normalise text for answer matching.

    >>> normalize("  \u201cSet\u201d  Print\u2014Now\\n")
    '"set" print-now'
    """
    t = unicodedata.normalize("NFKC", text).casefold()
    t = _SQUOTES.sub("'", t)
    t = _DQUOTES.sub('"', t)
    t = _DASHES.sub("-", t)
    return _SPACE.sub(" ", t).strip()


def contains_answer(haystack: str, answer: str) -> bool:
    """Whether the normalised ``answer`` occurs in the normalised ``haystack`` (plain substring)."""
    a = normalize(answer)
    return bool(a) and a in normalize(haystack)


def answer_items(answer: str, answer_format: str | None = None) -> list[str]:
    """The items a context must contain for ``answer``: one, or each element of a list answer.

    >>> answer_items("['Tom', 'Ann B.']", "List")
    ['Tom', 'Ann B.']
    >>> answer_items("2.9 percent")
    ['2.9 percent']
    """
    text = answer.strip()
    if answer_format == "List" or (text.startswith("[") and text.endswith("]")):
        try:
            items = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            items = None
        if isinstance(items, list | tuple) and items:
            return [str(x) for x in items]
    return [text]


def answer_in_text(answer: str, text: str, answer_format: str | None = None) -> bool:
    """Every answer item occurs in ``text``, both normalised with all whitespace removed (so a line break
    or a table cell gap inside the answer does not hide it), as the wide set's ``answer_in_text_layer``
    is computed.

    >>> answer_in_text("['Up to $766,865', 'wiring']", "costs: up to  $766,865 for wiring", "List")
    True
    >>> answer_in_text("2.9 percent", "2.8 percent")
    False
    """
    flat = _SPACE.sub("", normalize(text))
    items = [_SPACE.sub("", normalize(a)) for a in answer_items(answer, answer_format)]
    return bool(items) and all(a and a in flat for a in items)


# --------------------------------------------------------------------------------------------------
# Answer key terms: the distinctive pieces of a short answer (numbers, identifiers, content words)
# --------------------------------------------------------------------------------------------------

_STOP = frozenset(
    """a an and are as at be but by for from has have in into is it its of on or the to was were with
    what which who whom this that these those than then there their they them per each only also not no
    up out all any can may must should would could will does did do done how when where why both
    version default defaults""".split()
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[a-z_\\@$<>][a-z0-9_\\@$<>.\-]*[a-z0-9_>]|[a-z]{3,}")


def answer_keys(answer: str) -> list[str]:
    """Split a short reference answer into key terms that a context must contain to support it.

    Numbers (``4,095``, ``0.77``) and identifier-like or content words of 3+ characters, stopwords
    removed, normalised, de-duplicated in order. CJK prose is not split into words (only numbers and
    Latin identifiers inside it count), so paraphrased Japanese answers are judged by their numbers
    and identifiers. Paraphrase words that the document never uses are harmless when callers
    restrict to keys that occur in the document (see :func:`rare_keys`).

    >>> answer_keys("read.table 4.5 s versus 0.77 s for scan with integer")
    ['read.table', '4.5', 'versus', '0.77', 'scan', 'integer']
    >>> answer_keys("受験者数4,095人、選択肢199個")
    ['4,095', '199']
    """
    text = normalize(answer)
    found: list[tuple[int, str]] = []
    for m in _NUMBER.finditer(text):
        found.append((m.start(), m.group(0)))
    for m in _WORD.finditer(text):
        w = m.group(0).strip(".-")
        if len(w) < 3 or w in _STOP or w.isdigit() or not re.search(r"[a-z]", w):
            continue
        found.append((m.start(), w))
    out: list[str] = []
    for _, k in sorted(found):
        if k not in out:
            out.append(k)
    return out


def key_in_text(key: str, normalized_text: str) -> bool:
    """Whole-token match of a key term in already-normalised text (``12`` does not match ``120``)."""
    # Not inside a longer word or number: "12" matches neither "120" nor "4.12" nor "12,5"; a number may
    # carry a unit glued after it ("0.77s", "12桁").
    after = r"(?![0-9])" if _NUMBER.fullmatch(key) else r"(?![0-9a-z_])"
    pattern = r"(?<![0-9a-z_])(?<![0-9][.,])" + re.escape(key) + after + r"(?![.,][0-9])"
    return re.search(pattern, normalized_text) is not None


def pages_containing(needle_fn: Any, page_texts: Sequence[str]) -> list[int]:
    """1-based pages whose normalised text satisfies ``needle_fn(normalized_page_text)``."""
    return [i + 1 for i, t in enumerate(page_texts) if needle_fn(t)]


def rare_keys(keys: Sequence[str], normalized_pages: Sequence[str], max_pages: int = 3) -> list[str]:
    """Keys that occur on at least one and at most ``max_pages`` pages of the document's text layer.

    A key found nowhere in the text layer is a paraphrase word (cannot be retrieved verbatim); a key
    found on many pages (``2``, ``scan``) matches by accident. Only the keys in between are evidence.
    """
    out = []
    for k in keys:
        n = sum(1 for t in normalized_pages if key_in_text(k, t))
        if 1 <= n <= max_pages:
            out.append(k)
    return out


def key_recall(keys: Sequence[str], text: str) -> float | None:
    """Share of ``keys`` found (whole-token) in ``text``; ``None`` when there are no keys."""
    if not keys:
        return None
    t = normalize(text)
    return sum(1 for k in keys if key_in_text(k, t)) / len(keys)


# --------------------------------------------------------------------------------------------------
# Pages
# --------------------------------------------------------------------------------------------------


def page_recall_at_k(ranked_pages: Sequence[Iterable[int]], gold: Sequence[int], k: int) -> float:
    """Share of gold pages that appear on any of the first ``k`` hits (each hit may span pages).

    >>> page_recall_at_k([[3], [5, 6], [9]], [6, 9], 2)
    0.5
    """
    if not gold:
        return math.nan
    seen: set[int] = set()
    for pages in ranked_pages[:k]:
        seen.update(pages)
    return sum(1 for g in set(gold) if g in seen) / len(set(gold))


def page_coverage(item_pages: Iterable[Iterable[int]], gold: Sequence[int]) -> float:
    """Share of gold pages that appear in any packed item's pages.

    >>> page_coverage([[1, 2], [7]], [2, 5])
    0.5
    """
    if not gold:
        return math.nan
    seen = {p for pages in item_pages for p in pages}
    return sum(1 for g in set(gold) if g in seen) / len(set(gold))


# --------------------------------------------------------------------------------------------------
# Boxes
# --------------------------------------------------------------------------------------------------

Box = Sequence[float]


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _inter(a: Box, b: Box) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes (0 when both are empty).

    >>> iou((0, 0, 2, 2), (1, 0, 3, 2))
    0.3333333333333333
    """
    i = _inter(a, b)
    u = _area(a) + _area(b) - i
    return i / u if u > 0 else 0.0


def intersection_over_gold(pred: Box, gold: Box) -> float:
    """Share of the gold box covered by the predicted box (1.0 when a big region contains it).

    >>> intersection_over_gold((0, 0, 10, 10), (1, 1, 3, 3))
    1.0
    """
    g = _area(gold)
    return _inter(pred, gold) / g if g > 0 else 0.0


def bbox_overlap(
    locators: Iterable[tuple[int, Box]], gold_boxes: Sequence[Mapping[str, Any]]
) -> tuple[float, float] | None:
    """Mean over gold boxes of the best (IoU, intersection-over-gold) of any locator on the same page.

    Returns ``None`` when there are no gold boxes. A gold box with no locator on its page scores 0.
    """
    if not gold_boxes:
        return None
    by_page: dict[int, list[Box]] = {}
    for page, box in locators:
        by_page.setdefault(int(page), []).append(box)
    ious, iogs = [], []
    for g in gold_boxes:
        cands = by_page.get(int(g["page"]), [])
        ious.append(max((iou(c, g["bbox"]) for c in cands), default=0.0))
        iogs.append(max((intersection_over_gold(c, g["bbox"]) for c in cands), default=0.0))
    return sum(ious) / len(ious), sum(iogs) / len(iogs)


# --------------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in 0..100), NaN for an empty list.

    >>> percentile([1, 2, 3, 4], 50)
    2.5
    """
    xs = sorted(v for v in values if v is not None and not math.isnan(v))
    if not xs:
        return math.nan
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mean(values: Iterable[float | None]) -> float:
    """Mean of the non-missing values (None/NaN skipped); NaN when nothing is left."""
    xs = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(xs) / len(xs) if xs else math.nan


def truncate_to_tokens(tokenizer: Any, text: str, max_tokens: int) -> str:
    """The longest token prefix of ``text`` with at most ``max_tokens`` tokens (how naive pipelines cut)."""
    if max_tokens <= 0:
        return ""
    ids = tokenizer.encode(text)
    if len(ids) <= max_tokens:
        return text
    return str(tokenizer.decode(ids[:max_tokens]))


# --------------------------------------------------------------------------------------------------
# The reference harness's definitions (../shared/eval/mmlb/REFERENCE.md)
# --------------------------------------------------------------------------------------------------

_WORDS = re.compile(r"\w+")


def _word_line(text: str) -> str:
    """The normalised text's word tokens, space-separated and padded, for whole-word substring tests."""
    return " " + " ".join(_WORDS.findall(normalize(text))) + " "


def answer_in_text_ref(answer: str, text: str, answer_format: str | None = None) -> bool:
    """Every answer item occurs in ``text`` as a run of whole words (both normalised, split on non-word
    characters: ``"5"`` does not match ``"15"`` but matches ``"5%"``; punctuation and line breaks do not
    matter). On mmlb this makes 93 questions eligible, as REFERENCE.md counts.

    >>> answer_in_text_ref("4. The final prediction.", "4. The final  prediction result")
    True
    >>> answer_in_text_ref("5", "15 of 150")
    False
    >>> answer_in_text_ref("['12', 'b']", "12 a")
    False
    """
    flat = _word_line(text)
    items = [_word_line(a) for a in answer_items(answer, answer_format)]
    return bool(items) and all(a.strip() and a in flat for a in items)


def reference_answer_info(
    answer: str, answer_format: str | None, page_texts: Sequence[str], max_pages: int = 3
) -> dict[str, Any]:
    """Eligibility for the reference answer metrics: ``eligible`` when the question is answerable and its
    answer occurs in the document's text layer (all pages joined); ``specific`` when it occurs on 1 to
    ``max_pages`` pages. On mmlb this gives 93 and 47 questions (REFERENCE.md: 93 and 40)."""
    if answer.strip().casefold() == "not answerable":
        return {"eligible": False, "specific": False, "pages": []}
    pages = [i + 1 for i, t in enumerate(page_texts) if answer_in_text_ref(answer, t, answer_format)]
    eligible = bool(pages) or answer_in_text_ref(answer, "\n".join(page_texts), answer_format)
    return {"eligible": eligible, "specific": 1 <= len(pages) <= max_pages, "pages": pages}


def gold_valid(gold: Sequence[int], n_pages: int) -> bool:
    """Gold pages that can be scored: at least one, each a page of the document."""
    return bool(gold) and all(1 <= int(p) <= n_pages for p in gold)


def covered_gold(item_pages: Iterable[Iterable[int]], gold: Sequence[int]) -> list[int]:
    """The gold pages that any packed item touches (sorted, each once)."""
    seen = {p for pages in item_pages for p in pages}
    return sorted({int(g) for g in gold if g in seen})


def monotonicity_violations(
    covered: Mapping[tuple[str, str, int], Sequence[int]],
) -> dict[str, list[str]]:
    """Per system, the questions whose covered gold pages at a larger budget are not a superset of those
    at a smaller budget. ``covered`` maps ``(system, question id, budget)`` to the covered gold pages.

    >>> monotonicity_violations({("s", "q1", 1000): [3], ("s", "q1", 2000): [], ("s", "q2", 1000): [1],
    ...                          ("s", "q2", 2000): [1, 2]})
    {'s': ['q1']}
    """
    by: dict[tuple[str, str], list[tuple[int, set[int]]]] = {}
    for (system, qid, budget), pages in covered.items():
        by.setdefault((system, qid), []).append((budget, set(pages)))
    out: dict[str, list[str]] = {}
    for (system, qid), rows in sorted(by.items()):
        rows.sort(key=lambda r: r[0])
        bad = any(not rows[i][1] <= rows[j][1] for i in range(len(rows)) for j in range(i + 1, len(rows)))
        out.setdefault(system, [])
        if bad:
            out[system].append(qid)
    return out
