"""Unit tests of the quality-evaluation metric functions (pure Python, no models)."""

from __future__ import annotations

import doctest
import math

import pytest

from benchmarks.quality import metrics as M
from folio.kernel.tokens import get_tokenizer


def test_doctests_pass() -> None:
    result = doctest.testmod(M)
    assert result.attempted > 5
    assert result.failed == 0


def test_normalize_unifies_quotes_dashes_space_and_case() -> None:
    assert M.normalize("Set  \u2018Print\u2019 \u2013 \u201cX\u201d\n\tY") == "set 'print' - \"x\" y"
    assert M.normalize("\uff21\uff22") == "ab"  # NFKC folds full-width letters


def test_contains_answer_uses_normalised_substring() -> None:
    assert M.contains_answer("Deadline:  September\n21, 2020.", "september 21, 2020")
    assert not M.contains_answer("September 12, 2020", "September 21, 2020")
    assert not M.contains_answer("anything", "   ")


def test_answer_keys_drop_stopwords_and_keep_identifiers() -> None:
    keys = M.answer_keys('set print "<filename>"; with no parameters output is restored to <STDERR>')
    assert "<filename>" in keys and "<stderr>" in keys and "print" in keys
    assert "with" not in keys and "is" not in keys
    assert M.answer_keys("STATS_outofrange") == ["stats_outofrange"]
    assert M.answer_keys("12桁（2^12-1）；\\AMC@NCBetud")[-1] == "\\amc@ncbetud"


def test_key_in_text_matches_whole_tokens_only() -> None:
    assert M.key_in_text("12", "a 12 b")
    assert not M.key_in_text("12", "a 120 b")
    assert not M.key_in_text("12", "x4.12")
    assert not M.key_in_text("12", "12,5")
    assert M.key_in_text("12", "(12).")
    assert M.key_in_text("0.77", "# 0.77s")  # units glued to numbers
    assert not M.key_in_text("scan", "scans")
    assert M.key_in_text("4,095", "up to 4,095 students")


def test_rare_keys_keep_keys_on_one_to_three_pages() -> None:
    pages = [M.normalize(t) for t in ["alpha 2 beta", "2 gamma", "2", "2 beta", "delta"]]
    assert M.rare_keys(["2", "beta", "delta", "omega"], pages) == ["beta", "delta"]
    assert M.rare_keys(["2"], pages, max_pages=4) == ["2"]


def test_key_recall() -> None:
    assert M.key_recall(["md5", "rc4"], "uses the MD5 digest") == 0.5
    assert M.key_recall([], "x") is None


def test_page_recall_and_coverage() -> None:
    ranked = [[3], [5, 6], [9], [1]]
    assert M.page_recall_at_k(ranked, [6, 9], 2) == 0.5
    assert M.page_recall_at_k(ranked, [6, 9], 3) == 1.0
    assert M.page_recall_at_k(ranked, [6, 6], 2) == 1.0  # duplicates in gold count once
    assert math.isnan(M.page_recall_at_k(ranked, [], 5))
    assert M.page_coverage([[1, 2], [7]], [2, 5]) == 0.5
    assert M.page_coverage([], [2]) == 0.0


def test_box_overlaps() -> None:
    assert M.iou((0, 0, 2, 2), (0, 0, 2, 2)) == 1.0
    assert M.iou((0, 0, 1, 1), (2, 2, 3, 3)) == 0.0
    assert M.iou((0, 0, 0, 0), (0, 0, 0, 0)) == 0.0
    assert M.intersection_over_gold((0, 0, 10, 10), (5, 5, 15, 15)) == pytest.approx(0.25)


def test_bbox_overlap_takes_best_locator_on_the_gold_page() -> None:
    gold = [{"page": 2, "bbox": [0, 0, 10, 10]}, {"page": 3, "bbox": [0, 0, 10, 10]}]
    locs = [(2, (0, 0, 10, 10)), (2, (50, 50, 60, 60)), (1, (0, 0, 10, 10))]
    iou, iog = M.bbox_overlap(locs, gold)  # type: ignore[misc]
    assert iou == pytest.approx(0.5) and iog == pytest.approx(0.5)  # page 3 has no locator: 0
    assert M.bbox_overlap(locs, []) is None


def test_percentile_and_mean() -> None:
    assert M.percentile([5], 99) == 5
    assert M.percentile([1, 2, 3, 4, 5], 100) == 5
    assert math.isnan(M.percentile([], 50))
    assert M.mean([1.0, None, float("nan"), 3.0]) == 2.0


def test_truncate_to_tokens_is_a_prefix_within_the_limit() -> None:
    tok = get_tokenizer("cl100k_base")
    text = "The quick brown fox jumps over the lazy dog. " * 20
    cut = M.truncate_to_tokens(tok, text, 17)
    assert text.startswith(cut)
    assert tok.count(cut) <= 17 and tok.count(cut) >= 15
    assert M.truncate_to_tokens(tok, text, 0) == ""
    assert M.truncate_to_tokens(tok, "short", 100) == "short"
