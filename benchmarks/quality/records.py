"""One record per question, system and budget: the retrieval, coverage, answer and token figures of one package
(folio's, a peer's, or the empty one of a document folio refused)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.quality import metrics as M
from benchmarks.quality.questions import evidence_kind
from benchmarks.quality.readability import Unit, readability_fields


@dataclass(frozen=True)
class SetRun:
    """One question set as every system runs it: its questions and each one's answer info (by question id), the
    folder of its PDFs, its data folder (folio's store, the peer caches) and the budgets packed to."""

    questions: list[dict[str, Any]]
    infos: dict[str, Any]
    pdf_dir: Path
    data: Path
    budgets: list[int]


@dataclass(frozen=True)
class Packed:
    """What one package holds, as the records score it (folio's, a peer's, or the empty one).

    ``ranked_pages``: the pages of the ranked hits before packing; ``item_pages``: the pages of each packed item;
    ``locators``: (page, bbox) of the packed items (None: the system gives none); ``tokens``: the prompt's tokens;
    ``extra``: fields added to the record as they are. ``text_item_pages``: the pages of the items that carry text
    (default: all items); REFERENCE.md's coverage counts a gold page only once some of its text is packed.
    ``gold_text``: the packed text of the items (units) on a gold page, where answers are sought for
    ``answer_gold``. ``units``: the packed items as (pages, text as read, tokens), for the readability fields."""

    ranked_pages: Sequence[Sequence[int]]
    item_pages: Sequence[Sequence[int]]
    packed_text: str
    locators: Sequence[tuple[int, Sequence[float]]] | None
    tokens: int
    latency_s: float
    extra: dict[str, Any] | None = None
    text_item_pages: Sequence[Sequence[int]] | None = None
    gold_text: str | None = None
    units: Sequence[Unit] | None = None


def score_record(
    q: dict[str, Any], info: dict[str, Any], *, system: str, budget: int, packed: Packed
) -> dict[str, Any]:
    """One package's record: ``system`` at ``budget`` on question ``q`` (``info``: its answer info)."""
    ranked_pages, item_pages, packed_text = packed.ranked_pages, packed.item_pages, packed.packed_text
    locators, tokens, latency_s, units = packed.locators, packed.tokens, packed.latency_s, packed.units
    gold = q["gold_pages"]
    cov = M.page_coverage(item_pages, gold)
    ov = M.bbox_overlap(locators, q.get("gold_bboxes") or []) if locators is not None else None
    exact = M.answer_in_text(q["answer"], packed_text, q.get("answer_format")) if info["eligible"] else None
    rec: dict[str, Any] = {
        "system": system,
        "budget": budget,
        "id": q["id"],
        "doc": q["doc"],  # not the answer: records are committed, the question sets are not (CC BY-NC)
        "set": q.get("_set", ""),
        "evidence_kind": evidence_kind(q),
        "lang": q["lang"],
        "in_text_layer": str(q.get("answer_in_text_layer")),
        "recall@5": M.page_recall_at_k(ranked_pages, gold, 5),
        "recall@10": M.page_recall_at_k(ranked_pages, gold, 10),
        "coverage": cov,
        "all_covered": float(cov == 1.0),
        "answer_exact": None if exact is None else float(exact),
        "answer_exact_rare": float(bool(exact)) if info["rare_exact"] else None,
        "key_recall": M.key_recall(info["rare_keys"], packed_text) if info["rare_keys"] else None,
        "iou": ov[0] if ov else None,
        "iog": ov[1] if ov else None,
        "tokens": tokens,
        "over": float(tokens > budget),
        "latency_s": latency_s,
        "packed_pages": sorted({p for ps in item_pages for p in ps}),
        "items": len(item_pages),
        "doc_type": q.get("doc_type") or "(no doc_type)",
        "half": q.get("_half", ""),
    }
    text_pages = item_pages if packed.text_item_pages is None else packed.text_item_pages
    rec.update(reference_fields(q, info, text_pages, packed_text, packed.gold_text))
    rec.update(readability_fields(q, info, units, rec["covered_gold"], rec["answer_exact_rare"]))
    if packed.extra:
        rec.update(packed.extra)
    return rec


def reference_fields(
    q: dict[str, Any], info: dict[str, Any], item_pages: Sequence[Sequence[int]], packed_text: str,
    gold_text: str | None = None,
) -> dict[str, Any]:
    """REFERENCE.md's metrics for one package: coverage over valid gold pages (a gold page counts once
    any of its text is packed), answer recall where the answer is in the text layer, and its "specific"
    part (answer on at most 3 pages). Beside them, ``answer_gold``: the answer found in the text of the
    packed items on a gold page (``gold_text``), so a short number matched on some other page ("6", "0")
    does not count; None without ``gold_text`` or valid gold pages. ``answer_on_gold``: the question's
    ``info["ref_on_gold"]`` (answer in the gold pages' text layer), the most ``answer_gold`` can reach."""
    valid = info.get("gold_valid", False)
    covered = M.covered_gold(item_pages, q["gold_pages"]) if valid else []
    n_gold = len(set(q["gold_pages"]))
    found = M.answer_in_text_ref(q["answer"], packed_text, q.get("answer_format")) if info.get("ref_eligible") else None
    return {
        "gold_valid": valid,
        "covered_gold": covered,
        "coverage_ref": len(covered) / n_gold if valid else None,
        "full_cov_ref": float(len(covered) == n_gold) if valid else None,
        "answer_ref": None if found is None else float(found),
        "answer_ref_specific": float(bool(found)) if info.get("ref_specific") else None,
        "answer_gold": None if found is None or gold_text is None or not valid else float(
            M.answer_in_text_ref(q["answer"], gold_text, q.get("answer_format"))),
        "answer_on_gold": None if found is None or not valid else float(bool(info.get("ref_on_gold"))),
        "pages_touched": len({p for ps in item_pages for p in ps}),
    }


def _box(b: Any) -> tuple[float, float, float, float]:
    """A locator's bbox as ``(x0, y0, x1, y1)``: the API's ``{x0, y0, x1, y1}`` object (or an older list)."""
    if isinstance(b, dict):
        return float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"])
    return float(b[0]), float(b[1]), float(b[2]), float(b[3])


def folio_record(
    q: dict[str, Any], info: dict[str, Any], cell: tuple[str, int], result: tuple[dict[str, Any], float],
    doc_id: str | None = None,
) -> dict[str, Any]:
    """One question's record for ``cell`` (variant name, budget) from ``result`` (the package as JSON, its latency
    in seconds), as ``FolioInProcess.run`` keys and returns them; with ``doc_id`` (an unscoped run) only the items
    of the question's document count for coverage and answers, and the tokens of the other documents' items are
    ``other_doc_tokens``."""
    (name, budget), (pkg, lat) = cell, result
    hits = sorted(pkg["retrieval"]["hits"], key=lambda h: h["rank"])
    if doc_id is not None:  # region ids start with "<doc_id>@<version>"
        hits = [h for h in hits if h["region_id"].startswith(f"{doc_id}@")]
    items = pkg["items"]
    other = [it for it in items if doc_id is not None and it.get("doc_id") != doc_id]
    items = [it for it in items if doc_id is None or it.get("doc_id") == doc_id]
    locs = [(int(loc["page"]), _box(loc["bbox"])) for it in items for loc in it.get("locators") or []]
    body_tokens = sum(int(it.get("tokens") or 0) for it in items)
    extra = {
        "refused": bool(pkg.get("refused")),
        "strategy_used": pkg.get("strategy"),
        "body_tokens": body_tokens,
        "unmerged_window_tokens": pkg.get("_unmerged_window_tokens"),
        "modalities": sorted({it.get("modality", "?") for it in items}),
        "breakdown": dict(pkg["budget"].get("breakdown") or {}),
        "locator_pages": sorted({p for p, _ in locs}),
        "image_items": sum(1 for it in items if it.get("image_tokens")),
        "textless_pages": sorted({p for it in items if not (it.get("text") or "").strip() for p in it["pages"]}),
        "other_doc_tokens": sum(int(it.get("tokens") or 0) for it in other),
        "other_docs": len({it.get("doc_id") for it in other}),
        "unscoped": doc_id is not None,
    }
    packed = Packed(
        ranked_pages=[h["pages"] for h in hits],
        item_pages=[it["pages"] for it in items],
        packed_text="\n\n".join(it.get("text") or "" for it in items),
        locators=locs,
        tokens=int(pkg["budget"]["used"]),
        latency_s=lat,
        extra=extra,
        text_item_pages=[it["pages"] for it in items if (it.get("text") or "").strip()],
        gold_text="\n\n".join(it.get("text") or "" for it in items if set(it["pages"]) & set(q["gold_pages"])),
        units=[(it["pages"], as_read(it), int(it.get("tokens") or 0)) for it in items],
    )
    return score_record(q, info, system=name, budget=budget, packed=packed)


def as_read(item: dict[str, Any]) -> str:
    """An item's text as a model reads it: its section (in the block tag), then its text."""
    text = str(item.get("text") or "")
    return f"{item['section']}\n{text}" if item.get("section") else text


def failed_record(q: dict[str, Any], info: dict[str, Any], name: str, budget: int) -> dict[str, Any]:
    """The record of a question whose document folio refused to ingest: nothing packed."""
    empty = Packed(ranked_pages=[], item_pages=[], packed_text="", locators=[], tokens=0, latency_s=0.0,
                   extra={"refused": True, "ingest_failed": True}, units=[])
    return score_record(q, info, system=name, budget=budget, packed=empty)
