"""Citation post-check: which ids an answer cites, which were really packed, what is unsupported.

Accepted citation forms: ``[S3]``, ``[S3, T1]``, ``[S3; S5]``, ``[S3][S4]``. A citation may sit
before or after the sentence's final punctuation ("... 5 A [S2]." and "... 5 A. [S2]"); a run of
citations alone after a sentence end belongs to the sentence before it.

Support is lexical: the fraction of the sentence's content words (stopwords and citation ids
removed) that appear in the cited item's text, 0..1. It flags citations that do not overlap their
claim; it is not a faithfulness judge.
"""

from __future__ import annotations

import re

from folio.assembly.package import CitationSupport, ContextPackage, SentenceCheck, VerifyReport
from folio.assembly.words import content_words, coverage_of

_CITE = re.compile(r"\[\s*([A-Za-z]+\d+(?:\s*[,;]\s*[A-Za-z]+\d+)*)\s*\]")
_LEADING = re.compile(r"^(?:\[\s*[A-Za-z]+\d+(?:\s*[,;]\s*[A-Za-z]+\d+)*\s*\][\s.]*)+")
_ID = re.compile(r"[A-Za-z]+\d+")
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
_INSUFFICIENT = re.compile(r"insufficient evidence|not enough (?:evidence|information|context)", re.I)
SUPPORT_MIN = 0.3


def cited_ids(text: str) -> list[str]:
    """Ids in citation brackets, in order of first appearance.

    >>> cited_ids("A [S1]. B [S2, T1][S1]. C [s3; F2].")
    ['S1', 'S2', 'T1', 'S3', 'F2']
    """
    out: list[str] = []
    for m in _CITE.finditer(text):
        for cid in _ID.findall(m.group(1)):
            cid = cid.upper()
            if cid not in out:
                out.append(cid)
    return out


def strip_citations(text: str) -> str:
    """``text`` without its citation brackets (the claim whose words support is measured on).

    >>> strip_citations("Acknowledged within 30 minutes [S1, T2].")
    'Acknowledged within 30 minutes .'
    """
    return _CITE.sub("", text)


def split_sentences(answer: str) -> list[str]:
    parts = [p.strip() for p in _SENT_END.split(answer) if p and p.strip()]
    out: list[str] = []
    for p in parts:
        lead = _LEADING.match(p)
        if out and lead:  # "... monthly. [S2] Next sentence": the citations close the previous one
            out[-1] = f"{out[-1]} {lead.group(0).strip()}"
            p = p[lead.end():].strip()
        if out and not _CITE.sub("", p).strip(" .,;:"):
            if p:
                out[-1] = f"{out[-1]} {p}"
        elif p:
            out.append(p)
    return out


def _factual(sentence: str) -> bool:
    bare = _CITE.sub("", sentence).strip()
    if not bare or bare.endswith("?") or _INSUFFICIENT.search(bare):
        return False
    return len(content_words(bare)) >= 2


def verify_answer(answer: str, package: ContextPackage) -> VerifyReport:
    """Check an answer's citations against ``package`` (see module docstring)."""
    items = {it.citation_id.upper(): it for it in package.items}
    words = {cid: content_words(it.text) for cid, it in items.items()}
    kept: list[str] = []
    invented: list[str] = []
    uncited: list[str] = []
    checks: list[SentenceCheck] = []
    support: list[CitationSupport] = []
    for n, sent in enumerate(split_sentences(answer)):
        ids = cited_ids(sent)
        valid = [c for c in ids if c in items]
        bad = [c for c in ids if c not in items]
        for c in valid:
            if c not in kept:
                kept.append(c)
        for c in bad:
            if c not in invented:
                invented.append(c)
        factual = _factual(sent)
        claim = content_words(_CITE.sub("", sent))
        best: float | None = None
        for c in valid:
            s = round(coverage_of(claim, words[c]), 4)
            support.append(CitationSupport(sentence_index=n, citation_id=c, support=s))
            best = s if best is None else max(best, s)
        if factual and not valid:
            uncited.append(sent)
        checks.append(SentenceCheck(index=n, text=sent, citations=valid, invented=bad, factual=factual,
                                    support=best))
    insufficient = bool(_INSUFFICIENT.search(answer))
    weak = any(c.factual and c.support is not None and c.support < SUPPORT_MIN for c in checks)
    ok = not invented and not uncited and not weak
    return VerifyReport(kept_ids=kept, invented_ids=invented, uncited_sentences=uncited, sentences=checks,
                        support=support, insufficient_evidence=insufficient, ok=ok)
