"""The question sets of the quality evaluation: where they are, which questions a run takes (``--only``,
``--half``), what each question's answer metrics may count (``answer_info``), and the halves a set is reported in."""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality import metrics as M


def load_questions(path: str, only: Sequence[str] | None) -> list[dict[str, Any]]:
    qs = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    if only:
        qs = [q for q in qs if any(o == q["id"] or o in q["doc"] for o in only)]
    return qs


def doc_id_for(filename: str) -> str:
    from folio.ingest.pipeline import doc_id_from_filename

    return doc_id_from_filename(filename)


_SOURCE_KIND = {"Pure-text": "text", "Table": "table", "Chart": "chart", "Figure": "figure", "Layout": "layout"}


def evidence_kind(q: dict[str, Any]) -> str:
    """The question's main evidence kind: the dev set's ``evidence_kind``, or the first of the wide set's
    ``evidence_sources`` (``none`` for an unanswerable question)."""
    if "evidence_kind" in q:
        return str(q["evidence_kind"])
    sources = q.get("evidence_sources") or []
    return _SOURCE_KIND.get(sources[0], sources[0].lower()) if sources else "none"


def file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def answer_info(q: dict[str, Any], norm_pages: Sequence[str], pages: Sequence[str] | None = None) -> dict[str, Any]:
    """Eligibility of a question for the answer metrics, from the document's text layer: the harness's own
    (``eligible``, ``rare_exact``, ``rare_keys``) and REFERENCE.md's (``ref_eligible``, ``ref_specific``,
    ``gold_valid``); ``ref_on_gold``: the answer is in the gold pages' text layer (joined, as ``answer_gold``
    joins the text packed from them), the most ``answer_gold`` can reach."""
    in_layer = q.get("answer_in_text_layer") is True
    exact_pages = [i + 1 for i, t in enumerate(norm_pages) if M.answer_in_text(q["answer"], t, q.get("answer_format"))]
    keys = M.answer_keys(q["answer"])
    rare = M.rare_keys(keys, norm_pages)
    texts = pages if pages is not None else norm_pages
    ref = M.reference_answer_info(q["answer"], q.get("answer_format"), texts)
    valid = M.gold_valid(q["gold_pages"], len(norm_pages))
    return {
        "eligible": in_layer,
        "exact_pages": exact_pages,
        "rare_exact": in_layer and 1 <= len(exact_pages) <= 3,
        "keys": keys,
        "rare_keys": rare if in_layer else [],
        "ref_eligible": ref["eligible"],
        "ref_specific": ref["specific"],
        "ref_pages": ref["pages"],
        "ref_on_gold": valid and ref["eligible"] and M.answer_in_text_ref(
            q["answer"], "\n".join(texts[g - 1] for g in q["gold_pages"]), q.get("answer_format")),
        "gold_valid": valid,
    }


def halves(questions: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Question id -> half ``"A"`` or ``"B"``: the distinct file names sorted, even positions (0, 2, ...)
    are half A, odd positions half B (``../shared/eval/mmlb/README.md``)."""
    docs = sorted({q["doc"] for q in questions})
    half = {d: "AB"[i % 2] for i, d in enumerate(docs)}
    return {q["id"]: half[q["doc"]] for q in questions}


def default_sets(shared: Path) -> list[tuple[str, Path, Path]]:
    """(name, questions, pdf dir) of the development sets under ``shared`` (``../shared`` by default)."""
    ev = shared / "eval"
    return [
        ("mmlb", ev / "mmlb" / "questions.jsonl", ev / "mmlb" / "pdfs"),
        ("finance", ev / "finance" / "questions.jsonl", ev / "finance" / "pdfs"),
        ("wide", ev / "wide" / "questions.jsonl", ev / "wide" / "pdfs"),
        ("manuals", ev / "dev_questions.jsonl", shared / "corpus"),
    ]


HALVED_SETS = {"mmlb", "finance"}  # sets reported as two halves by document (and whole)


def set_questions(name: str, qpath: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The set's questions after --only and --half, each tagged with its half (halved sets only)."""
    every = load_questions(str(qpath), None)
    half = halves(every) if name in HALVED_SETS else {}
    keep = {q["id"] for q in load_questions(str(qpath), args.only)}
    out = []
    for q in every:
        q["_half"] = half.get(q["id"], "")
        if q["id"] in keep and (not args.half or not half or q["_half"] == args.half):
            out.append(q)
    return out


def report_groups(name: str, recs: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(group name, records): a halved set as half A, half B and whole; any other set whole."""
    if name not in HALVED_SETS:
        return [(name, recs)]
    groups = [(f"{name}-{h}", [r for r in recs if r.get("half") == h]) for h in "AB"]
    groups = [g for g in groups if g[1]]
    return groups if len(groups) == 1 else [*groups, (name, recs)]  # one half (--half): no "whole" line
