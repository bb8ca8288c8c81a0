"""The quality harness's packing of peers to a budget, the mmlb halves, the reference metrics, the peer cache and
the monotonicity count (synthetic inputs and the real cl100k tokenizer; nothing from ../shared)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import eval_quality as E
from benchmarks.quality import folio_runs as F
from benchmarks.quality import metrics as M
from benchmarks.quality import peer_runs as P
from benchmarks.quality import questions as Q
from benchmarks.quality import records as RC
from benchmarks.quality import report as R
from benchmarks.quality.peers import (
    AUTO_KS,
    SEP,
    PeerAsk,
    PeerItem,
    PeerRecordCache,
    pack_parts,
    pack_units,
    peer_packages,
)
from folio.kernel.tokens import get_tokenizer

TOK = get_tokenizer("cl100k_base")


def units(n: int, words: int = 60) -> list[str]:
    return [" ".join(f"unit{i} word{j} value {i * j}." for j in range(words // 4)) for i in range(n)]


@pytest.mark.parametrize("budget", [50, 333, 1000, 2000, 4000])
def test_pack_fills_the_budget_never_exceeds_it_and_cuts_the_last_unit(budget: int) -> None:
    texts = units(64)
    sent, used, n = pack_units(TOK, texts, budget)
    assert used == TOK.count(sent) <= budget
    assert used >= budget - 2  # filled up to the budget (the cut may merge with the separator before it)
    parts = sent.split(SEP)
    assert len(parts) == n
    assert parts[:-1] == texts[: n - 1]  # units in rank order, whole
    assert parts[-1] != texts[n - 1] and texts[n - 1].startswith(parts[-1])  # the last one cut at the budget


def test_pack_sends_everything_when_it_fits_and_counts_the_head() -> None:
    texts = units(3)
    sent, used, n = pack_units(TOK, texts, 10_000)
    assert (sent, n) == (SEP.join(texts), 3) and used == TOK.count(sent)
    head = "What is unit2?" + SEP
    sent, used, n = pack_units(TOK, texts, 120, head)
    assert sent.startswith(head) and used == TOK.count(sent) <= 120 and n >= 1
    assert pack_units(TOK, [], 1000) == ("", 0, 0)


def test_pack_never_exceeds_on_awkward_text() -> None:
    texts = ["\n\n  ", "日本語のテキスト" * 40, "a" * 3000, "x\n\n\n\ny " * 200, "🙂" * 300]
    for budget in range(5, 1200, 37):
        sent, used, _ = pack_units(TOK, texts, budget)
        assert used == TOK.count(sent) <= budget


class FakePeer:
    """A peer whose top-k output has k units; not prefix-consistent unless said so."""

    name = "fake"

    def __init__(self, consistent: bool, words: int = 60) -> None:
        self.prefix_consistent = consistent
        self.words = words
        self.asked: list[int] = []

    def build(self, doc_key: str, pages: Any) -> None:
        pass

    def query(self, doc_key: str, question: str, k: int) -> list[PeerItem]:
        self.asked.append(k)
        return [PeerItem(t, (i + 1,), 1.0) for i, t in enumerate(units(k, self.words))]


def test_a_peer_that_is_not_prefix_consistent_gets_the_smallest_k_that_fills_the_budget() -> None:
    peer = FakePeer(consistent=False)
    per_unit = TOK.count(units(1)[0] + SEP)
    out = peer_packages(peer, PeerAsk("d", "q?"), TOK, [1000, 2000, 100_000])
    for b in (1000, 2000):
        k = out[b]["k"]
        assert k in AUTO_KS and k * per_unit >= b * 0.95
        smaller = [x for x in AUTO_KS if x < k]
        assert not smaller or TOK.count(SEP.join(units(smaller[-1]))) < b
        assert out[b]["tokens"] <= b
    assert out[100_000]["k"] == 64  # nothing fills it: the largest k
    assert out[1000]["item_pages"] == [[p] for p in range(1, len(out[1000]["item_pages"]) + 1)]


def test_a_prefix_consistent_peer_is_asked_once_for_64_units() -> None:
    peer = FakePeer(consistent=True)
    out = peer_packages(peer, PeerAsk("d", "q?"), TOK, [1000, 4000])
    assert peer.asked == [64]
    assert out[4000]["tokens"] > 3900 and len(out[4000]["item_pages"]) > len(out[1000]["item_pages"])


def test_halves_split_sorted_file_names_even_and_odd() -> None:
    qs = [{"id": f"q{i}", "doc": d} for i, d in enumerate(["c.pdf", "a.pdf", "b.pdf", "a.pdf", "d.pdf"])]
    assert Q.halves(qs) == {"q0": "A", "q1": "A", "q2": "B", "q3": "A", "q4": "B"}


def test_monotonicity_counts_questions_whose_covered_gold_pages_shrink() -> None:
    def rec(system: str, qid: str, budget: int, covered: list[int], valid: bool = True) -> dict[str, Any]:
        return {"system": system, "id": qid, "budget": budget, "covered_gold": covered, "gold_valid": valid}

    recs = [
        rec("s", "q1", 1000, [1]), rec("s", "q1", 2000, []), rec("s", "q1", 4000, [1]),  # lost at 2k
        rec("s", "q2", 1000, [1]), rec("s", "q2", 2000, [1, 2]), rec("s", "q2", 4000, [1, 2]),
        rec("s", "q3", 1000, [2]), rec("s", "q3", 2000, [2]), rec("s", "q3", 4000, [3]),  # swapped at 4k
        rec("t", "q1", 1000, [1]), rec("t", "q1", 4000, [1]),
        rec("t", "q4", 1000, [5], valid=False), rec("t", "q4", 4000, [], valid=False),  # no valid gold
    ]  # fmt: skip
    assert R.violations(recs) == {"s": ["q1", "q3"], "t": []}


def test_reference_answer_eligibility_and_specific_pages() -> None:
    pages = ["Revenue was $1,577.00 in 2019.", "Growth 5%", "5 items", "5 more", "5 again", "see page 5"]
    info = M.reference_answer_info("$1577.00", "Float", pages)
    assert not info["eligible"]  # the comma is part of the text, not of the answer
    info = M.reference_answer_info("$1,577.00", "Float", pages)
    assert info == {"eligible": True, "specific": True, "pages": [1]}
    info = M.reference_answer_info("5", "Int", pages)
    assert info["eligible"] and not info["specific"]  # on 6 pages
    assert not M.reference_answer_info("Not answerable", "None", ["not answerable"])["eligible"]
    assert M.reference_answer_info("['Growth', '5 items']", "List", pages)["eligible"]  # items on two pages
    assert M.gold_valid([1, 3], 3) and not M.gold_valid([1418], 20) and not M.gold_valid([], 5)


def test_reference_fields_of_a_record() -> None:
    q = {"gold_pages": [2, 5], "answer": "Blue Ridge", "answer_format": "Str"}
    info = {"gold_valid": True, "ref_eligible": True, "ref_specific": True}
    f = RC.reference_fields(q, info, [[2], [7], [2]], "the blue  ridge parkway")
    assert f["covered_gold"] == [2] and f["coverage_ref"] == 0.5 and f["full_cov_ref"] == 0.0
    assert f["answer_ref"] == 1.0 and f["answer_ref_specific"] == 1.0 and f["pages_touched"] == 2


def test_an_answer_counts_on_a_gold_page_only_when_the_gold_pages_text_holds_it() -> None:
    """``answer_gold``: "6" matched in the text packed from page 7 is answer recall but not evidence from the
    gold page; the same string in page 2's text is both."""
    q = {"gold_pages": [2], "answer": "6", "answer_format": "Int"}
    info = {"gold_valid": True, "ref_eligible": True, "ref_specific": True, "ref_on_gold": False}
    elsewhere = RC.reference_fields(q, info, [[2], [7]], "six ways\n\nroom 6", gold_text="six ways")
    assert elsewhere["answer_ref"] == 1.0 and elsewhere["answer_gold"] == 0.0
    assert elsewhere["answer_on_gold"] == 0.0  # "6" is not in page 2's text layer: no package can do better
    on_gold = RC.reference_fields(q, info, [[2], [7]], "6 ways\n\nroom", gold_text="6 ways")
    assert on_gold["answer_ref"] == 1.0 and on_gold["answer_gold"] == 1.0
    assert RC.reference_fields(q, info, [[2]], "6 ways")["answer_gold"] is None  # no gold text given


def test_the_answer_on_gold_ceiling_reads_the_gold_pages_joined() -> None:
    """``ref_on_gold``: a list answer whose items lie on two gold pages is reachable (``answer_gold`` joins the
    text packed from them); one found only off the gold pages is not."""
    q = {"gold_pages": [1, 2], "answer": "['Growth', 'Margin']", "answer_format": "List"}
    pages = ["growth was strong", "margin fell", "growth and margin"]
    info = Q.answer_info(q, pages, pages)
    assert info["ref_eligible"] and info["ref_pages"] == [3] and info["ref_on_gold"]
    assert RC.reference_fields(q, info, [[3]], "growth and margin")["answer_on_gold"] == 1.0
    off = Q.answer_info({**q, "gold_pages": [2]}, pages, pages)
    assert off["ref_eligible"] and not off["ref_on_gold"]


def test_pack_parts_are_the_units_of_the_string_sent() -> None:
    texts = [f"unit {k} " + "word " * 30 for k in range(10)]
    for budget in (40, 100, 333):
        parts, used = pack_parts(TOK, texts, budget, "Q?\n\n")
        sent, used2, n = pack_units(TOK, texts, budget, "Q?\n\n")
        assert sent == "Q?\n\n" + SEP.join(parts) and used == used2 <= budget and n == len(parts)
        assert parts[:-1] == texts[: len(parts) - 1] and texts[len(parts) - 1].startswith(parts[-1])


def test_peer_cache_round_trips_and_keys_on_version_bytes_and_budget(tmp_path: Path) -> None:
    cache = PeerRecordCache(tmp_path / "p" / "fake.json.gz", "3")
    key = cache.key("m001", "q?", "abc", 1000, "-")
    cache.put(key, {"tokens": 999})
    cache.save()
    again = PeerRecordCache(tmp_path / "p" / "fake.json.gz", "3")
    assert again.get(key) == {"tokens": 999}
    assert again.get(again.key("m001", "q?", "abd", 1000, "-")) is None
    assert again.get(again.key("m001", "q?", "abc", 2000, "-")) is None
    assert again.get(PeerRecordCache(tmp_path / "p" / "fake.json.gz", "4").key("m001", "q?", "abc", 1000, "-")) is None


def test_missing_default_sets_are_skipped_with_a_stated_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "eval" / "wide" / "pdfs").mkdir(parents=True)
    (tmp_path / "eval" / "wide" / "questions.jsonl").write_text("", encoding="utf-8")
    ap = argparse.ArgumentParser()
    args = argparse.Namespace(set=None, questions=None, sets=None, shared=str(tmp_path))
    assert [n for n, _, _ in E.chosen_sets(ap, args)] == ["wide"]
    out = capsys.readouterr().out
    assert "set mmlb skipped" in out and "set manuals skipped" in out


def test_half_selection_and_report_groups(tmp_path: Path) -> None:
    import json

    qs = [{"id": f"m{i}", "doc": d, "answer": "x"} for i, d in enumerate(["b.pdf", "a.pdf", "c.pdf", "b.pdf"])]
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
    args = argparse.Namespace(only=None, half="B")
    assert [q["id"] for q in Q.set_questions("mmlb", path, args)] == ["m0", "m3"]  # b.pdf is the 2nd name
    args.half = None
    every = Q.set_questions("mmlb", path, args)
    assert [q["_half"] for q in every] == ["B", "A", "A", "B"]
    assert [q["_half"] for q in Q.set_questions("wide", path, args)] == ["", "", "", ""]  # not a halved set
    recs = [{"id": q["id"], "half": q["_half"]} for q in every]
    groups = Q.report_groups("mmlb", recs)
    assert [(g, [r["id"] for r in rs]) for g, rs in groups] == [
        ("mmlb-A", ["m1", "m2"]), ("mmlb-B", ["m0", "m3"]), ("mmlb", ["m0", "m1", "m2", "m3"])
    ]
    assert [g for g, _ in Q.report_groups("mmlb", recs[:1])] == ["mmlb-B"]
    assert [g for g, _ in Q.report_groups("wide", recs)] == ["wide"]


def test_a_document_folio_refuses_is_logged_and_its_questions_score_as_misses() -> None:
    class Refusing:
        def ingest(self, path: Path, doc_id: str) -> str:
            if "bad" in path.name:
                raise ValueError("invalid doc_id")
            return doc_id

    ids = F.ingest_all(Refusing(), Path("/nowhere"), ["good.pdf", "bad.pdf"])
    assert ids["bad.pdf"] is None and ids["good.pdf"]
    q = {"id": "m1", "doc": "bad.pdf", "answer": "Blue", "gold_pages": [1], "lang": "en"}
    info = {"eligible": True, "rare_exact": True, "rare_keys": ["blue"], "gold_valid": True, "ref_eligible": True,
            "ref_specific": True}  # fmt: skip
    r = RC.failed_record(q, info, "folio-auto", 1000)
    assert r["coverage_ref"] == 0.0 and r["answer_ref"] == 0.0 and r["tokens"] == 0 and r["ingest_failed"]


def test_peer_answers_are_sought_in_the_context_not_in_the_question() -> None:
    q = {"id": "m1", "doc": "d.pdf", "question": "Is it Blue or Red?", "answer": "Blue", "gold_pages": [1],
         "lang": "en"}  # fmt: skip
    info = {"eligible": True, "rare_exact": False, "rare_keys": [], "gold_valid": True, "ref_eligible": True,
            "ref_specific": False}  # fmt: skip
    pkg = {"text": P.peer_head(q["question"]) + "the sky is red", "tokens": 12, "item_pages": [[1]],
           "ranked_pages": [[1]], "latency_s": 0.0, "natural_tokens": 12, "k": 64}  # fmt: skip
    r = P.peer_record(q, info, "raw-chunks", 1000, pkg)
    assert r["answer_ref"] == 0.0 and r["coverage_ref"] == 1.0


def test_raw_chunks_keep_the_pages_own_text_and_overlap(tmp_path: Path) -> None:
    import numpy as np

    from benchmarks.quality.peers import CachedEncoder, RawChunks

    class Zeros:
        def encode(self, texts: list[str]) -> Any:
            return np.zeros((len(texts), 384), np.float32)

    peer = RawChunks(CachedEncoder(tmp_path, Zeros()), words=3, overlap=1)
    peer.build("d", ["a b\nc d  e f", "", "g"])
    assert [(c.text, c.pages) for c in peer._docs["d"][0]] == [
        ("a b\nc", (1,)), ("c d  e", (1,)), ("e f", (1,)), ("g", (3,))
    ]


def test_folio_coverage_counts_a_gold_page_only_once_some_of_its_text_is_packed() -> None:
    q = {"id": "m1", "doc": "d.pdf", "answer": "Blue", "gold_pages": [2, 3], "lang": "en"}
    info = {"eligible": False, "rare_exact": False, "rare_keys": [], "gold_valid": True, "ref_eligible": True,
            "ref_specific": False}  # fmt: skip
    items = [
        {"pages": [2], "text": "", "image_tokens": 765, "locators": []},  # page 2 sent as an image only
        {"pages": [3], "text": "the blue line", "image_tokens": 0, "locators": []},
    ]
    pkg = {"retrieval": {"hits": []}, "items": items, "budget": {"used": 900, "breakdown": {}}}
    r = RC.folio_record(q, info, ("folio-auto", 1000), (pkg, 0.01))
    assert r["coverage"] == 1.0  # the harness's own coverage: every item's pages
    assert r["coverage_ref"] == 0.5 and r["covered_gold"] == [3] and r["textless_pages"] == [2]
    assert r["answer_ref"] == 1.0 and r["image_items"] == 1


def test_misses_listing_shows_only_misses_unless_asked() -> None:
    base = {"system": "folio-auto", "budget": 4000, "doc_type": "Brochure", "tokens": 3000, "gold_valid": True}
    recs = [
        {**base, "id": "m2", "gold": "12", "packed_pages": [11, 12], "textless_pages": [12], "covered_gold": [],
         "coverage_ref": 0.0, "answer_ref": None, "answer": "11"},
        {**base, "id": "m1", "gold": "3", "packed_pages": [3], "covered_gold": [3], "coverage_ref": 1.0,
         "answer_ref": 1.0, "answer_ref_specific": 1.0, "answer": "Blue"},
    ]  # fmt: skip
    lines = R.misses_lines(recs)
    assert len(lines) == 2 and lines[1].split("\t")[:6] == ["m2", "Brochure", "12", "11,12", "12", ""]
    assert [x.split("\t")[0] for x in R.misses_lines(recs, show_all=True)[1:]] == ["m1", "m2"]
    assert R.misses_lines(recs, show_all=True)[1].split("\t")[6:8] == ["yes", "yes"]
    assert R.misses_lines(recs, answers={"m2": "Eleven"})[1].split("\t")[-1] == "Eleven"


def test_records_do_not_carry_the_answers_and_the_report_reads_them_from_the_question_file(tmp_path: Path) -> None:
    """The records are committed (benchmarks/results) and the question sets may not be: no answer string in a
    record; the misses report reads the answers from the question file the run names, when it is there."""
    q = {"id": "m1", "doc": "d.pdf", "answer": "Blue", "gold_pages": [1], "lang": "en"}
    info = {"eligible": False, "rare_exact": False, "rare_keys": [], "gold_valid": True, "ref_eligible": False}
    pkg = {"retrieval": {"hits": []}, "budget": {"used": 9, "breakdown": {}},
           "items": [{"pages": [1], "text": "the sky is blue", "image_tokens": 0, "locators": []}]}
    r = RC.folio_record(q, info, ("folio-auto", 1000), (pkg, 0.01))
    assert "answer" not in r and "Blue" not in json.dumps(r)
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text(json.dumps(q) + "\n", encoding="utf-8")
    assert R.answers_of({"sets": {"mmlb": {"questions": str(qfile)}}}, "mmlb-A") == {"m1": "Blue"}
    assert R.answers_of({"sets": {"mmlb": {"questions": str(tmp_path / "gone.jsonl")}}}, "mmlb") == {}
    cached = {**r, "answer": "Blue"}  # a peer record cached before records dropped the answer
    assert E.without_answer_text(cached) == r
    assert set(E.without_answer_text({"keys": ["blue"], "rare_keys": ["blue"], "eligible": True})) == {"eligible"}


def test_the_headline_states_how_many_answers_the_gold_pages_hold() -> None:
    recs = [{"id": "q1", "answer_on_gold": 1.0}, {"id": "q1", "answer_on_gold": 1.0},
            {"id": "q2", "answer_on_gold": 0.0}, {"id": "q3", "answer_on_gold": None}]
    line = R.answer_reach(recs)
    assert line.startswith("Answers in the gold pages' text layer: 1 of the 2 answerable questions (50.0%)")
    assert R.answer_reach([{"id": "q3", "answer_on_gold": None}]) == ""


def test_an_unscoped_record_reports_the_share_of_tokens_from_its_own_document() -> None:
    """Issue 34: ``--unscoped`` runs count the tokens of the question's own document against all packed ones,
    pooled over the questions; the headline adds that share and the refusals, a scoped headline neither."""
    q = {"id": "m1", "doc": "d.pdf", "answer": "Blue", "gold_pages": [3], "lang": "en"}
    info = {"eligible": False, "rare_exact": False, "rare_keys": [], "gold_valid": True, "ref_eligible": True,
            "ref_specific": False}  # fmt: skip
    items = [{"pages": [3], "text": "the blue line", "image_tokens": 0, "locators": [], "doc_id": "d", "tokens": 300},
             {"pages": [1], "text": "other", "image_tokens": 0, "locators": [], "doc_id": "e", "tokens": 100}]
    pkg = {"retrieval": {"hits": []}, "items": items, "budget": {"used": 500, "breakdown": {}}}
    mixed = RC.folio_record(q, info, ("folio-auto", 1000), (pkg, 0.01), doc_id="d")
    refused = RC.folio_record({**q, "id": "m2"}, info, ("folio-auto", 1000),
                             ({**pkg, "items": [], "refused": True}, 0.01), doc_id="d")
    alone = RC.folio_record({**q, "id": "m3"}, info, ("folio-auto", 1000), ({**pkg, "items": items[:1]}, 0.01),
                            doc_id="d")
    assert (mixed["body_tokens"], mixed["other_doc_tokens"], mixed["coverage_ref"]) == (300, 100, 1.0)
    assert R.own_doc_share([mixed, refused, alone]) == 600 / 700
    row = R.headline_table([mixed, refused, alone], ["folio-auto"], [1000])
    assert "own-document tokens %" in row[0] and row[2].endswith(" 85.7 | 1 |")
    scoped = RC.folio_record(q, info, ("folio-auto", 1000), ({**pkg, "items": items[:1]}, 0.01))
    assert R.own_doc_share([scoped]) is None and "own-document" not in R.headline_table([scoped], ["folio-auto"],
                                                                                        [1000])[0]
