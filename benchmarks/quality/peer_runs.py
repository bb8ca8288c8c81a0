"""The peers in the quality evaluation: every peer on every question, packed to each budget, through the peer
cache (``<data>/peer-records``), and each package turned into a record."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.quality.questions import file_sha
from benchmarks.quality.readability import Unit
from benchmarks.quality.records import Packed, SetRun, score_record

logger = logging.getLogger("eval_quality")

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
    packed = Packed(
        ranked_pages=pkg["ranked_pages"],
        item_pages=pkg["item_pages"],
        packed_text=context,
        locators=None,
        tokens=int(pkg["tokens"]),
        latency_s=float(pkg["latency_s"]),
        extra={"natural_tokens": natural, "natural_over": float(natural > budget), "peer_k": pkg["k"]},
        gold_text=None if "units" not in pkg else "\n\n".join(
            str(text) for pages, text in pkg["units"] if set(pages) & set(q["gold_pages"])),
        units=peer_units(pkg),
    )
    return score_record(q, info, system=name, budget=budget, packed=packed)


def peer_units(pkg: dict[str, Any]) -> list[Unit] | None:
    """The package's units as (pages, text, tokens) for the readability fields (tokens from ``unit_tokens``, where
    :func:`with_unit_tokens` put them); None for a package cached before units were kept."""
    if "units" not in pkg:
        return None
    tokens = pkg.get("unit_tokens") or [None] * len(pkg["units"])
    return [(pages, str(text), n) for (pages, text), n in zip(pkg["units"], tokens, strict=True)]


def with_unit_tokens(pkg: dict[str, Any], contents: Sequence[int], tok: Any) -> dict[str, Any]:
    """The package with ``unit_tokens``: the tokens of each unit on a contents page, None for the others (the
    readability fields count only those). A copy: the cached package stays as it was."""
    if "units" not in pkg:
        return pkg
    cp = set(contents)
    return {**pkg, "unit_tokens": [int(tok.count(t)) if cp & set(p) else None for p, t in pkg["units"]]}


def run_peers(
    run: SetRun, pages: dict[str, list[str]], tok: Any, names: Sequence[str] | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Every peer (``names``; None: all) on every question, packed to each budget; packages come from the peer
    cache (``<data>/peer-records``) when the question, document bytes, budget and harness version match.
    ``pages``: each document's page texts."""
    from benchmarks.quality.peers import CachedEncoder, PeerAsk, PeerRecordCache, make_peers, peer_packages

    questions, infos, budgets, pdf_dir, data = run.questions, run.infos, run.budgets, run.pdf_dir, run.data

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
                ask = PeerAsk(shas[q["doc"]], q["question"], peer_head(q["question"]))
                fresh = peer_packages(peer, ask, tok, budgets)
                for b in budgets:
                    cache.put(keys[b], fresh[b])
                    pkgs[b] = fresh[b]
                fresh_n += 1
                if fresh_n % 20 == 0:
                    cache.save()
                    enc.flush()
            contents = infos[q["id"]].get("contents_pages") or []
            for b in budgets:
                pkg = with_unit_tokens(pkgs[b], contents, tok)  # type: ignore[arg-type]
                recs.append(peer_record(q, infos[q["id"]], peer.name, b, pkg))
        cache.save()
        enc.flush()
        logger.info("peer %s: %d questions run, %d from the cache (%.1fs)", peer.name, fresh_n,
                    len(questions) - fresh_n, time.perf_counter() - t0)
    return recs, [p.name for p in peers]
