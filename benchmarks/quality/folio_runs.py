"""folio in the quality evaluation: in-process (the exact path of ``POST /v1/context``, retrieval once per
question) or over REST, each variant at each budget, every question's packages turned into records."""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.quality.questions import doc_id_for
from benchmarks.quality.records import SetRun, failed_record, folio_record

logger = logging.getLogger("eval_quality")

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


class FolioInProcess:
    """The exact path of ``POST /v1/context`` (``api.service.context.build_context``), with retrieval done once
    per question and reused by every variant and budget (assembly is pure)."""

    def __init__(self, data_dir: str, retriever_options: dict[str, Any] | None = None, *,
                 unscoped: bool = False, keep_stored: bool = False) -> None:
        from folio.ingest.storage.store import Store

        self.store = Store(data_dir)
        self.unscoped = unscoped
        self.keep_stored = keep_stored
        self._retriever: Any = None
        self.retriever_options = dict(retriever_options or {})

    def ingest(self, path: Path, doc_id: str) -> str:
        """Ingest without the wall-clock budgets (document, page, OCR time): on a loaded machine the OCR budget
        ran out on slide decks and left pages unread, so the store, and every figure, depended on the load."""
        from folio.ingest.parse_supervisor import IngestLimits
        from folio.ingest.pipeline import ingest_path

        t = time.perf_counter()
        unhurried = IngestLimits(timeout_s=None, page_timeout_s=None, ocr_budget_s=None)
        report = ingest_path(
            self.store, path, doc_id=doc_id, limits=unhurried, reparse_outdated=not self.keep_stored
        )
        logger.info(
            "folio ingest %s: %s (%.1fs)", path.name, getattr(report, "status", "?"), time.perf_counter() - t
        )
        return doc_id

    @property
    def retriever(self) -> Any:
        if self._retriever is None:
            from dataclasses import fields

            from folio.retrieval.search import Retriever, RetrieverConfig

            # the retriever's own options (page_order, glossary, ...) go into its config, the rest to the channels
            own = {f.name for f in fields(RetrieverConfig)}
            config = RetrieverConfig(**{k: v for k, v in self.retriever_options.items() if k in own})
            channels = {k: v for k, v in self.retriever_options.items() if k not in own}
            self._retriever = Retriever(self.store, config=config, **channels)
        return self._retriever

    def warmup(self, doc_id: str) -> None:
        """Load models and open tables once, so the first question's latency is not a cold start."""
        self.run("warm-up query", doc_id, [1000], {"w": {"strategy": "raw"}})

    def run(
        self, question: str, doc_id: str, budgets: Sequence[int], variants: dict[str, dict[str, Any]]
    ) -> dict[tuple[str, int], tuple[dict[str, Any], float]]:
        from folio.api.service.context import version_filenames
        from folio.assembly import assemble
        from folio.assembly.options import AssemblyOptions
        from folio.retrieval.search import SearchQuery

        t0 = time.perf_counter()
        scope = None if self.unscoped else [doc_id]
        hits = self.retriever.search(SearchQuery(question, doc_ids=scope, k=FOLIO_K, strategy="hybrid"))
        source = self.retriever.source_for(hits)
        t_search = time.perf_counter() - t0
        names = version_filenames(self.store)

        def alone(hit: Any, options: AssemblyOptions) -> Any:
            return assemble(question, [hit], source, options, filenames=names)

        out = {}
        for name, overrides in variants.items():
            for b in budgets:
                opts = AssemblyOptions(budget=b, tokenizer="cl100k_base", **overrides)
                t1 = time.perf_counter()
                pkg = assemble(question, hits, source, opts, filenames=names)
                dt = time.perf_counter() - t1
                d = pkg.model_dump()
                d["_unmerged_window_tokens"] = unmerged_window_tokens(hits, opts, d, alone)
                out[(name, b)] = (d, t_search + dt)
        return out


def unmerged_window_tokens(hits: Any, opts: Any, pkg: dict[str, Any], alone: Callable[..., Any]) -> int | None:
    """For a window package: the body tokens its merged window items would cost had every trigger's
    window been sent on its own (each trigger assembled alone, same options, generous budget).
    ``alone(hit, options)``: the package of that one hit with those options (the question's source and file
    names)."""
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
            single = alone(by_id[t], opts.model_copy(update={"budget": 100_000}))
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


def run_folio(run: SetRun, variants: dict[str, dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    """folio on every question (ingest first: identical bytes are a no-op in a reused data dir)."""
    questions, infos, budgets = run.questions, run.infos, run.budgets
    folio: Any = (
        FolioREST(args.server, unscoped=args.unscoped)
        if args.server
        else FolioInProcess(
            str(run.data / "folio"), json.loads(args.retriever_options or "{}"), unscoped=args.unscoped,
            keep_stored=args.keep_stored,
        )
    )
    doc_ids = ingest_all(folio, run.pdf_dir, sorted({q["doc"] for q in questions}))
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
        for cell, result in results.items():
            recs.append(folio_record(q, infos[q["id"]], cell, result, doc_ids[q["doc"]] if args.unscoped else None))
        logger.info("folio %s done", q["id"])
    return recs
