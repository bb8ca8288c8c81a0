"""Quality of folio's retrieval + assembly against peer pipelines, on both development sets in one run.

    python benchmarks/eval_quality.py            # the manuals set and the wide set under ../shared/eval
    python benchmarks/eval_quality.py --set NAME QUESTIONS.jsonl PDF_DIR [--set ...] \\
        [--budgets 1000 2000 4000] [--data DIR] [--server URL] [--only ...] [--variants ...]

For every question (restricted to its own document) and every system and budget it records:

* ``recall@5`` / ``recall@10``: share of gold pages on the first 5/10 retrieval hits, before assembly.
* ``coverage``: share of gold pages on any packed item's pages, after assembly; ``all_covered``: 1 if all.
* ``answer_exact``: normalised reference answer is a substring of the packed text (only questions with
  ``answer_in_text_layer`` true); ``answer_exact_rare``: the same, only where the answer occurs on 1-3 pages
  of the document's text layer (so ``"2"`` cannot match by accident).
* ``key_recall``: share of the answer's key terms (numbers, identifiers, content words; see
  ``metrics.answer_keys``) found whole-token in the packed text, counting only keys that occur on 1-3 pages
  of the document's text layer (paraphrase words and ubiquitous tokens drop out). Text-layer answers only.
* ``iou`` / ``iog``: best IoU and best intersection-over-gold of any packed locator box with each gold box
  on the same page (folio only; peers return page text without boxes).
* ``tokens``: folio: ``budget.used`` (the whole rendered prompt: system text, citation contract, question,
  block wrappers and citation tags). Peers: ``count(question + "\\n\\n" + context)`` where context is the
  retrieved texts joined by blank lines, token-truncated so the total fits the budget (no system text
  is counted for peers, which favours them). ``over``: prompts above the budget.
* ``natural_tokens`` (peers): the same count with the uncut k=8 output; how often it exceeds each budget.
* ``latency``: per question, retrieval + assembly (folio) or retrieval + post-processing (peers); index
  building is excluded. In ``--server`` mode folio's latency is the HTTP round trip.

Results go to ``benchmarks/results/quality.json.gz`` (every record) and ``quality.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gzip
import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import metrics as M  # noqa: E402
from benchmarks.quality_report import HEADLINE as HEADLINE_VARIANT  # noqa: E402
from benchmarks.quality_report import render_headline, render_markdown, summarize  # noqa: E402

logger = logging.getLogger("eval_quality")

RECALL_K = 10
FOLIO_K = 50

# name -> AssemblyOptions overrides (on top of budget and tokenizer)
FOLIO_VARIANTS: dict[str, dict[str, Any]] = {
    "folio-auto": {"strategy": "auto"},
    # ablation: auto without page units and page windows (sections and sentence windows only)
    "folio-auto-sections": {"strategy": "auto", "page_units": "off", "window_source": "section"},
    "folio-raw": {"strategy": "raw"},
    "folio-window-r1": {"strategy": "window", "window_before": 1, "window_after": 1},
    "folio-window-r2": {"strategy": "window", "window_before": 2, "window_after": 2},
    "folio-window-b1a3": {"strategy": "window", "window_before": 1, "window_after": 3},
    "folio-parent-capped": {"strategy": "parent", "parent_max_tokens": 1024},
}


# --------------------------------------------------------------------------------------------------
# Questions and documents
# --------------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------


def score_record(
    q: dict[str, Any],
    info: dict[str, Any],
    *,
    system: str,
    budget: int,
    ranked_pages: Sequence[Sequence[int]],
    item_pages: Sequence[Sequence[int]],
    packed_text: str,
    locators: Sequence[tuple[int, Sequence[float]]] | None,
    tokens: int,
    latency_s: float,
    extra: dict[str, Any] | None = None,
    text_item_pages: Sequence[Sequence[int]] | None = None,
    gold_text: str | None = None,
) -> dict[str, Any]:
    """One package's record. ``text_item_pages``: the pages of the items that carry text (default: all
    items); REFERENCE.md's coverage counts a gold page only once some of its text is packed. ``gold_text``:
    the packed text of the items (units) on a gold page, where answers are sought for ``answer_gold``."""
    gold = q["gold_pages"]
    cov = M.page_coverage(item_pages, gold)
    ov = M.bbox_overlap(locators, q.get("gold_bboxes") or []) if locators is not None else None
    exact = M.answer_in_text(q["answer"], packed_text, q.get("answer_format")) if info["eligible"] else None
    rec: dict[str, Any] = {
        "system": system,
        "budget": budget,
        "id": q["id"],
        "doc": q["doc"],
        "answer": q["answer"],
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
    rec.update(reference_fields(q, info, item_pages if text_item_pages is None else text_item_pages, packed_text,
                                gold_text))
    if extra:
        rec.update(extra)
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


# --------------------------------------------------------------------------------------------------
# folio: in-process or over REST
# --------------------------------------------------------------------------------------------------


class FolioInProcess:
    """The exact path of ``POST /v1/context`` (``api.service.context.build_context``), with retrieval done once
    per question and reused by every variant and budget (assembly is pure)."""

    def __init__(self, data_dir: str, retriever_options: dict[str, Any] | None = None, *,
                 unscoped: bool = False) -> None:
        from folio.ingest.storage.store import Store

        self.store = Store(data_dir)
        self.unscoped = unscoped
        self._retriever: Any = None
        self.retriever_options = dict(retriever_options or {})

    def ingest(self, path: Path, doc_id: str) -> str:
        """Ingest without the wall-clock budgets (document, page, OCR time): on a loaded machine the OCR budget
        ran out on slide decks and left pages unread, so the store, and every figure, depended on the load."""
        from folio.ingest.parse_supervisor import IngestLimits
        from folio.ingest.pipeline import ingest_path

        t = time.perf_counter()
        unhurried = IngestLimits(timeout_s=None, page_timeout_s=None, ocr_budget_s=None)
        report = ingest_path(self.store, path, doc_id=doc_id, limits=unhurried)
        logger.info(
            "folio ingest %s: %s (%.1fs)", path.name, getattr(report, "status", "?"), time.perf_counter() - t
        )
        return doc_id

    @property
    def retriever(self) -> Any:
        if self._retriever is None:
            from folio.retrieval.search import Retriever

            self._retriever = Retriever(self.store, **self.retriever_options)
        return self._retriever

    def warmup(self, doc_id: str) -> None:
        """Load models and open tables once, so the first question's latency is not a cold start."""
        self.run("warm-up query", doc_id, [1000], {"w": {"strategy": "raw"}})

    def run(
        self, question: str, doc_id: str, budgets: Sequence[int], variants: dict[str, dict[str, Any]]
    ) -> dict[tuple[str, int], tuple[dict[str, Any], float]]:
        from folio.api.service.context import version_filenames
        from folio.assembly import assemble
        from folio.assembly.types import AssemblyOptions

        t0 = time.perf_counter()
        scope = None if self.unscoped else [doc_id]
        hits = self.retriever.search(question, doc_ids=scope, k=FOLIO_K, strategy="hybrid")
        source = self.retriever.source_for(hits)
        t_search = time.perf_counter() - t0
        names = version_filenames(self.store)
        out = {}
        for name, overrides in variants.items():
            for b in budgets:
                opts = AssemblyOptions(budget=b, tokenizer="cl100k_base", **overrides)
                t1 = time.perf_counter()
                pkg = assemble(question, hits, source, opts, filenames=names)
                dt = time.perf_counter() - t1
                d = pkg.model_dump()
                d["_unmerged_window_tokens"] = unmerged_window_tokens(
                    question, hits, source, opts, d, names, assemble
                )
                out[(name, b)] = (d, t_search + dt)
        return out


def unmerged_window_tokens(
    question: str,
    hits: Any,
    source: Any,
    opts: Any,
    pkg: dict[str, Any],
    names: Any,
    assemble: Callable[..., Any],
) -> int | None:
    """For a window package: the body tokens its merged window items would cost had every trigger's
    window been sent on its own (each trigger assembled alone, same options, generous budget)."""
    if opts.strategy != "window":
        return None
    by_id = {h.region_id: h for h in hits}
    total = 0
    for it in pkg["items"]:
        trig = [t for t in it.get("trigger_ids") or [] if t in by_id]
        if len(trig) <= 1:
            total += it["tokens"]
            continue
        for t in trig:
            single = assemble(
                question, [by_id[t]], source, opts.model_copy(update={"budget": 100_000}), filenames=names
            )
            total += sum(x.tokens for x in single.items) if single.items else 0
    return total


class FolioREST:
    """folio through the REST contract: ``POST /v1/documents``, then ``POST /v1/context`` per variant
    and budget."""

    def __init__(self, url: str, *, unscoped: bool = False) -> None:
        import httpx

        self.unscoped = unscoped
        self.client = httpx.Client(base_url=url.rstrip("/"), timeout=1800)

    def ingest(self, path: Path, doc_id: str) -> str:
        with path.open("rb") as fh:
            r = self.client.post(
                "/v1/documents", files={"file": (path.name, fh, "application/pdf")}, data={"doc_id": doc_id}
            )
        r.raise_for_status()
        return str(r.json()["doc_id"])

    def warmup(self, doc_id: str) -> None:
        self.run("warm-up query", doc_id, [1000], {"w": {"strategy": "raw"}})

    def run(
        self, question: str, doc_id: str, budgets: Sequence[int], variants: dict[str, dict[str, Any]]
    ) -> dict[tuple[str, int], tuple[dict[str, Any], float]]:
        out = {}
        for name, overrides in variants.items():
            for b in budgets:
                body = {
                    "query": question,
                    "budget": b,
                    "doc_ids": None if self.unscoped else [doc_id],
                    "k": FOLIO_K,
                    "tokenizer": "cl100k_base",
                }
                body.update(overrides)
                t = time.perf_counter()
                r = self.client.post("/v1/context", json=body)
                dt = time.perf_counter() - t
                r.raise_for_status()
                d = r.json()
                d["_unmerged_window_tokens"] = None
                out[(name, b)] = (d, dt)
        return out


def _box(b: Any) -> tuple[float, float, float, float]:
    """A locator's bbox as ``(x0, y0, x1, y1)``: the API's ``{x0, y0, x1, y1}`` object (or an older list)."""
    if isinstance(b, dict):
        return float(b["x0"]), float(b["y0"]), float(b["x1"]), float(b["y1"])
    return float(b[0]), float(b[1]), float(b[2]), float(b[3])


def folio_record(
    q: dict[str, Any], info: dict[str, Any], name: str, budget: int, pkg: dict[str, Any], lat: float,
    doc_id: str | None = None,
) -> dict[str, Any]:
    """One question's record; with ``doc_id`` (an unscoped run) only the items of the question's document
    count for coverage and answers, and the tokens of the other documents' items are ``other_doc_tokens``."""
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
    return score_record(
        q,
        info,
        system=name,
        budget=budget,
        ranked_pages=[h["pages"] for h in hits],
        item_pages=[it["pages"] for it in items],
        packed_text="\n\n".join(it.get("text") or "" for it in items),
        locators=locs,
        tokens=int(pkg["budget"]["used"]),
        latency_s=lat,
        extra=extra,
        text_item_pages=[it["pages"] for it in items if (it.get("text") or "").strip()],
        gold_text="\n\n".join(it.get("text") or "" for it in items if set(it["pages"]) & set(q["gold_pages"])),
    )


# --------------------------------------------------------------------------------------------------
# Peers
# --------------------------------------------------------------------------------------------------


PEER_HARNESS_VERSION = "5"  # part of every peer-cache key: bump when packing or peers change
# Whether the question is part of the string a peer sends (and of its token count). REFERENCE.md counts
# "the exact string sent": with the question in it, its mean tokens are reproduced (the 119 mmlb questions
# whose peers find no text still send ~20 tokens); without it they come out 8-15 tokens low.
PEER_HEAD_QUESTION = True


def peer_head(question: str) -> str:
    return question + "\n\n" if PEER_HEAD_QUESTION else ""


def peer_record(q: dict[str, Any], info: dict[str, Any], name: str, budget: int, pkg: dict[str, Any]) -> dict[str, Any]:
    natural = int(pkg["natural_tokens"])
    head = peer_head(q["question"])
    text = str(pkg["text"])
    context = text[len(head) :] if head and text.startswith(head) else text  # answers are sought in the context
    return score_record(
        q,
        info,
        system=name,
        budget=budget,
        ranked_pages=pkg["ranked_pages"],
        item_pages=pkg["item_pages"],
        packed_text=context,
        locators=None,
        tokens=int(pkg["tokens"]),
        latency_s=float(pkg["latency_s"]),
        extra={"natural_tokens": natural, "natural_over": float(natural > budget), "peer_k": pkg["k"]},
        gold_text=None if "units" not in pkg else "\n\n".join(
            str(text) for pages, text in pkg["units"] if set(pages) & set(q["gold_pages"])),
    )


def run_peers(
    questions: list[dict[str, Any]],
    pdf_dir: Path,
    data: Path,
    pages: dict[str, list[str]],
    infos: dict[str, Any],
    budgets: list[int],
    tok: Any,
    names: Sequence[str] | None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Every peer on every question, packed to each budget; packages come from the peer cache
    (``<data>/peer-records``) when the question, document bytes, budget and harness version match."""
    from benchmarks.peers import CachedEncoder, PeerRecordCache, make_peers, peer_packages

    enc = CachedEncoder(data / "peer-cache")
    peers = make_peers(enc, tok, names)
    shas = {d: file_sha(pdf_dir / d) for d in sorted({q["doc"] for q in questions})}
    mode = "q" if PEER_HEAD_QUESTION else "-"
    recs: list[dict[str, Any]] = []
    for peer in peers:
        own = str(getattr(peer, "version", "") or "")
        version = PEER_HARNESS_VERSION + (f".{own}" if own else "")
        cache = PeerRecordCache(data / "peer-records" / f"{peer.name}.json.gz", version)
        built: set[str] = set()
        fresh_n, t0 = 0, time.perf_counter()
        for q in questions:
            keys = {b: cache.key(q["id"], q["question"], shas[q["doc"]], b, mode) for b in budgets}
            pkgs = {b: cache.get(k) for b, k in keys.items()}
            if any(v is None for v in pkgs.values()):
                if q["doc"] not in built:
                    t = time.perf_counter()
                    peer.build(shas[q["doc"]], pages[q["doc"]])
                    built.add(q["doc"])
                    logger.info("peer %s built %s in %.1fs (%d new embeddings so far)", peer.name, q["doc"],
                                time.perf_counter() - t, enc.encoded)
                fresh = peer_packages(peer, shas[q["doc"]], q["question"], tok, budgets, peer_head(q["question"]))
                for b in budgets:
                    cache.put(keys[b], fresh[b])
                    pkgs[b] = fresh[b]
                fresh_n += 1
                if fresh_n % 20 == 0:
                    cache.save()
                    enc.flush()
            for b in budgets:
                recs.append(peer_record(q, infos[q["id"]], peer.name, b, pkgs[b]))  # type: ignore[arg-type]
        cache.save()
        enc.flush()
        logger.info("peer %s: %d questions run, %d from the cache (%.1fs)", peer.name, fresh_n,
                    len(questions) - fresh_n, time.perf_counter() - t0)
    return recs, [p.name for p in peers]


# --------------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------------


SHARED = Path(os.environ.get("FOLIO_SHARED") or ROOT.parent / "shared")


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


def ingest_all(folio: Any, pdf_dir: Path, docs: Sequence[str]) -> dict[str, str | None]:
    """File name -> doc id, or None for a document folio refused (logged; its questions score as misses)."""
    out: dict[str, str | None] = {}
    for d in docs:
        try:
            out[d] = folio.ingest(pdf_dir / d, doc_id_for(d))
        except Exception as exc:  # any refusal: the run goes on, the document's questions get empty packages
            logger.warning("folio refused %s: %s", d, repr(exc)[:300])
            out[d] = None
    return out


def failed_record(q: dict[str, Any], info: dict[str, Any], name: str, budget: int) -> dict[str, Any]:
    """The record of a question whose document folio refused to ingest: nothing packed."""
    return score_record(
        q, info, system=name, budget=budget, ranked_pages=[], item_pages=[], packed_text="", locators=[],
        tokens=0, latency_s=0.0, extra={"refused": True, "ingest_failed": True},
    )  # fmt: skip


def run_folio(
    questions: list[dict[str, Any]],
    pdf_dir: Path,
    data: Path,
    budgets: list[int],
    variants: dict[str, dict[str, Any]],
    args: argparse.Namespace,
    infos: dict[str, Any],
) -> list[dict[str, Any]]:
    """folio on every question (ingest first: identical bytes are a no-op in a reused data dir)."""
    folio: Any = (
        FolioREST(args.server, unscoped=args.unscoped)
        if args.server
        else FolioInProcess(str(data / "folio"), json.loads(args.retriever_options or "{}"), unscoped=args.unscoped)
    )
    doc_ids = ingest_all(folio, pdf_dir, sorted({q["doc"] for q in questions}))
    recs: list[dict[str, Any]] = []
    ok = [q for q in questions if doc_ids[q["doc"]]]
    if ok:
        folio.warmup(doc_ids[ok[0]["doc"]])
    for q in questions:
        if not doc_ids[q["doc"]]:  # refused at ingest: every package is empty (counts as a miss)
            for vname in variants:
                recs.extend(failed_record(q, infos[q["id"]], vname, b) for b in budgets)
            continue
        results = folio.run(q["question"], doc_ids[q["doc"]], budgets, variants)
        for (vname, b), (pkg, lat) in results.items():
            recs.append(folio_record(q, infos[q["id"]], vname, b, pkg, lat,
                                     doc_ids[q["doc"]] if args.unscoped else None))
        logger.info("folio %s done", q["id"])
    return recs


def run_set(
    name: str,
    questions: list[dict[str, Any]],
    pdf_dir: Path,
    data: Path,
    budgets: list[int],
    variants: dict[str, dict[str, Any]],
    args: argparse.Namespace,
    tok: Any,
) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """Every system on one question set: (records, peer names, answer info per question)."""
    from benchmarks.peers import page_texts

    for q in questions:
        q["_set"] = name
    docs = sorted({q["doc"] for q in questions})
    data.mkdir(parents=True, exist_ok=True)
    pages = {d: page_texts(pdf_dir / d) for d in docs}
    norm_pages = {d: [M.normalize(t) for t in ps] for d, ps in pages.items()}
    infos = {q["id"]: answer_info(q, norm_pages[q["doc"]], pages[q["doc"]]) for q in questions}
    recs: list[dict[str, Any]] = []
    if not args.no_folio:
        recs.extend(run_folio(questions, pdf_dir, data, budgets, variants, args, infos))
    peer_names: list[str] = []
    if not args.no_peers:
        peer_recs, peer_names = run_peers(questions, pdf_dir, data, pages, infos, budgets, tok, args.peers)
        recs.extend(peer_recs)
    gold = {q["id"]: ",".join(str(p) for p in q["gold_pages"]) for q in questions}
    for r in recs:
        r["gold"] = gold[r["id"]]
    return recs, peer_names, infos


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument(
        "--set",
        nargs=3,
        action="append",
        metavar=("NAME", "QUESTIONS", "PDFS"),
        help="a question set (repeatable); default: mmlb, finance, wide and the manuals under ../shared/eval",
    )
    ap.add_argument("--sets", nargs="+", default=None, help="only these default sets (mmlb finance wide manuals)")
    ap.add_argument(
        "--shared", default=str(SHARED), help="folder with eval/ and corpus/ (default: ../shared or $FOLIO_SHARED)"
    )
    ap.add_argument("--half", choices=["A", "B"], default=None, help="only this half of a halved set (mmlb, finance)")
    ap.add_argument("--questions", default=None, help="one question set (with --pdfs), named 'dev'")
    ap.add_argument("--pdfs", default=None)
    ap.add_argument("--budgets", type=int, nargs="+", default=[1000, 2000, 4000])
    ap.add_argument(
        "--data", default=str(ROOT / "data" / "eval-quality"),
        help="folio stores and peer caches: <data>/<set>/folio, <data>/<set>/peer-cache, <data>/<set>/peer-records",
    )
    ap.add_argument("--server", default=None, help="run folio through this REST server instead of in-process")
    ap.add_argument(
        "--unscoped", action="store_true",
        help="folio searches every document of the set's store (a mixed store), not only the question's; "
        "folio only (use with --no-peers)",
    )
    ap.add_argument("--only", nargs="*", default=None, help="question ids or document-name substrings")
    ap.add_argument("--peers", nargs="*", default=None, help="peer names (default: all)")
    ap.add_argument("--no-peers", action="store_true", help="folio only (peer figures are cached anyway)")
    ap.add_argument("--no-folio", action="store_true")
    ap.add_argument(
        "--variants", nargs="*", default=None,
        help=f"folio variants, or 'all' (default: {HEADLINE_VARIANT}; all: {list(FOLIO_VARIANTS)})",
    )
    ap.add_argument(
        "--extra-variants",
        default=None,
        help='JSON {"name": {AssemblyOptions overrides}} to evaluate beside the built-in folio variants',
    )
    ap.add_argument(
        "--retriever-options", default=None, help='JSON Retriever keyword arguments, e.g. {"page_order": false}'
    )
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    return ap, ap.parse_args(argv)


def chosen_sets(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[str, Path, Path]]:
    """The sets to run; a default set missing on disk is skipped with a stated line."""
    if args.set:
        return [(n, Path(q), Path(p)) for n, q, p in args.set]
    if args.questions:
        if not args.pdfs:
            ap.error("--questions needs --pdfs")
        return [("dev", Path(args.questions), Path(args.pdfs))]
    sets = []
    for n, q, p in default_sets(Path(args.shared)):
        if args.sets and n not in args.sets:
            continue
        if not q.exists() or not p.is_dir():
            logger.warning("set %s skipped: %s or %s not found", n, q, p)
            print(f"set {n} skipped: {q} or {p} not found")
            continue
        sets.append((n, q, p))
    if not sets:
        ap.error(f"no question sets under {Path(args.shared) / 'eval'}; pass --set NAME QUESTIONS PDFS")
    return sets


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


def main(argv: Sequence[str] | None = None) -> int:
    ap, args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    for noisy in ("httpx", "llama_index", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    from folio.kernel.tokens import get_tokenizer

    sets = chosen_sets(ap, args)
    tok = get_tokenizer("cl100k_base")
    budgets = list(args.budgets)
    if args.variants and "all" in args.variants:
        variants = dict(FOLIO_VARIANTS)
    else:
        wanted = args.variants or [HEADLINE_VARIANT]
        variants = {k: v for k, v in FOLIO_VARIANTS.items() if k in wanted}
    if args.extra_variants:
        variants.update(json.loads(args.extra_variants))
    command = "python benchmarks/eval_quality.py " + " ".join(sys.argv[1:] if argv is None else argv)
    payload: dict[str, Any] = {
        "command": command,
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "budgets": budgets,
        "peer_harness_version": PEER_HARNESS_VERSION,
        "sets": {},
    }
    md_parts, headline_parts = [], []
    data_root = Path(args.data)
    for name, qpath, pdf_dir in sets:
        questions = set_questions(name, qpath, args)
        if not questions:
            continue
        data = data_root if args.questions else data_root / name
        recs, peer_names, infos = run_set(name, questions, pdf_dir, data, budgets, variants, args, tok)
        systems = ([] if args.no_folio else list(variants)) + peer_names
        summary = summarize(recs, systems, budgets)
        groups = report_groups(name, recs)
        payload["sets"][name] = {
            "questions": str(qpath),
            "systems": systems,
            "peers": peer_names,
            "answer_info": infos,
            "summary": summary,
            "groups": {g: summarize(rs, systems, budgets) for g, rs in groups},
            "records": recs,
        }
        headline_parts.append(render_headline(groups, systems, budgets, qpath.parent / "REFERENCE.md"))
        md = render_markdown(summary, recs, systems, peer_names, budgets, command, len(questions), name, FOLIO_K)
        skipped = len(load_questions(str(qpath), None)) - len(questions)
        if skipped:
            md += f"\nNot evaluated in this run (filtered by --only/--half): {skipped} questions.\n"
        md_parts.append(md)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(payload, separators=(",", ":"), default=str).encode("utf-8")
    (out / "quality.json.gz").write_bytes(gzip.compress(raw, mtime=0))
    head = f"# folio quality evaluation\n\n```\n{command}\n```\n\n" + "\n".join(headline_parts)
    md = head + "\n# Details\n\n" + "\n".join(md_parts)
    (out / "quality.md").write_text(md, encoding="utf-8")
    print(head)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
