"""Rerankers: reorder the small units that retrieval found, before any expansion (score-then-expand).

A reranker improves order, never recall: it only sees the candidates it is given. The LLM reranker
asks an OpenAI-compatible chat endpoint for the candidate ids ranked as JSON. Models answer in many
shapes, so the reply parser accepts a JSON object or list, inside code fences or surrounded by
prose; unknown ids are dropped, missing ids keep their original order after the ranked ones, and a
reply without usable JSON (or a failed call) leaves the original order. Every such case is recorded
in ``RerankResult.notes``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from folio.kernel.errors import ModelUnavailable
from folio.kernel.hit import Hit, Source

logger = logging.getLogger(__name__)


class Completer(Protocol):
    """What retrieval asks of a chat model (the LLM reranker, LLM section summaries): a reply's text.
    The client itself, with its deadlines and bounds, belongs to the application (``folio.api.service.llm
    .ChatClient``), which hands it in; retrieval never opens one."""

    model: str

    def complete(
        self, messages: Sequence[dict[str, Any]], *, max_tokens: int = 512, temperature: float = 0.0,
        timeout: float | None = None,
    ) -> str: ...


@dataclass(frozen=True)
class RerankResult:
    hits: list[Hit]
    applied: bool
    notes: tuple[str, ...] = field(default=())


class Reranker(Protocol):
    name: str

    def rerank(self, query: str, hits: Sequence[Hit], texts: Mapping[str, str]) -> RerankResult: ...


SYSTEM_PROMPT = (
    "You rank search results. Given a query and numbered candidates, order the candidate ids by "
    "how directly and completely each helps answer the query. "
    'Reply with JSON only: {"ranked_ids": ["c3", "c1", ...]}'
)

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_ranked_ids(reply: str) -> list[str] | None:
    """Ids from a model reply, or None when it holds no usable JSON.

    >>> parse_ranked_ids('Sure! ```json\\n{"ranked_ids": ["c2", "c1"]}\\n```')
    ['c2', 'c1']
    >>> parse_ranked_ids('[3, 1]')
    ['c3', 'c1']
    """
    candidates = [m.group(1) for m in _FENCE.finditer(reply)] + [reply]
    for text in candidates:
        value = _first_json(text)
        if value is None:
            continue
        if isinstance(value, dict):
            value = next(
                (value[k] for k in ("ranked_ids", "ranked_candidate_ids", "ids", "ranking") if k in value),
                None,
            )
        if isinstance(value, list) and all(
            isinstance(v, (str, int)) and not isinstance(v, bool) for v in value
        ):
            return [f"c{v}" if isinstance(v, int) or str(v).isdigit() else str(v).strip() for v in value]
    return None


def _first_json(text: str) -> Any:
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "[{":
            try:
                value, _ = decoder.raw_decode(text[i:])
            except ValueError:
                continue
            return value
    return None


class LLMReranker:
    """Listwise reranking by a chat model; ``max_candidates`` bounds the prompt."""

    name = "llm"

    def __init__(self, client: Completer, *, max_candidates: int = 30, max_chars: int = 600) -> None:
        self.client = client
        self.max_candidates = max_candidates
        self.max_chars = max_chars

    def rerank(self, query: str, hits: Sequence[Hit], texts: Mapping[str, str]) -> RerankResult:
        head = list(hits[: self.max_candidates])
        tail = list(hits[self.max_candidates :])
        ids = {f"c{i + 1}": h for i, h in enumerate(head)}
        payload = {
            "query": query,
            "candidates": [
                {
                    "id": cid,
                    "kind": h.kind,
                    "pages": list(h.pages),
                    "text": (texts.get(h.region_id) or "")[: self.max_chars],
                }
                for cid, h in ids.items()
            ],
        }
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": json.dumps(payload, ensure_ascii=False)},
        ]
        try:
            reply = self.client.complete(messages)
        except ModelUnavailable as exc:
            logger.warning("rerank skipped: %s", exc)
            return RerankResult(list(hits), False, (f"reranker call failed, original order kept: {exc}",))
        ranked = parse_ranked_ids(reply)
        if ranked is None:
            return RerankResult(
                list(hits),
                False,
                (f"reranker reply had no JSON id list, original order kept: {reply[:200]!r}",),
            )
        notes: list[str] = []
        order: list[str] = []
        unknown = [r for r in ranked if r not in ids]
        if unknown:
            notes.append(f"ignored unknown ids: {', '.join(unknown[:10])}")
        for r in ranked:
            if r in ids and r not in order:
                order.append(r)
        if not order:
            return RerankResult(
                list(hits), False, (*notes, "reranker named no known id, original order kept")
            )
        missing = [cid for cid in ids if cid not in order]
        if missing:
            notes.append(
                f"{len(missing)} ids missing from the reply kept their original order after the ranked ones"
            )
        # Scores stay on the fused scale and stay monotone: the i-th hit after reranking takes the
        # i-th best fused score; each hit's own fused rank is still in its sources.
        scores = sorted((h.score for h in head), reverse=True)
        out: list[Hit] = []
        for cid in order + missing:
            h = ids[cid]
            new_rank = len(out) + 1
            src = Source(retriever=f"rerank:{self.name}", rank=new_rank, score=float(len(ids) - new_rank + 1))
            out.append(
                h.model_copy(
                    update={"rank": new_rank, "score": scores[new_rank - 1], "sources": (*h.sources, src)}
                )
            )
        for h in tail:
            out.append(h.model_copy(update={"rank": len(out) + 1}))
        return RerankResult(out, True, tuple(notes))
