"""Relevance across documents (issue 23, item 1): on a mixed hit list, weak documents are left out and a
question that no document supports is refused; a list from one document is judged as before."""

from __future__ import annotations

from folio.assembly import AssemblyOptions, assemble
from folio.assembly.relevance import DOC_DENSE_MARGIN, DOC_LEX_SHARE, OFF_TOPIC_DENSE, focus
from folio.kernel.hit import Hit, Source
from folio.kernel.index import RegionIndex
from folio.kernel.model import Region
from tests.assembly.builders import find, make_doc

V1, V2, V3 = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"
Q = "How fast must a priority-one incident be acknowledged?"


def _docs() -> tuple[list[Region], list[Region], list[Region]]:
    policy = make_doc("policy", [("Response", [["A priority-one incident must be acknowledged within 30 minutes.",
                                                "Updates follow every hour."]])], version_id=V1)
    ops = make_doc("ops", [("Rota", [["The on-call rota is published every Friday.",
                                      "Priority-one escalations go to the duty manager."]])], version_id=V2)
    rdata = make_doc("rdata", [("Import", [["read.csv reads a comma-separated file into a data frame.",
                                            "Use sep to set another separator."]])], version_id=V3)
    return policy, ops, rdata


def _hit(r: Region, rank: int, *, bm25: float | None, dense: float | None, extra: tuple[Source, ...] = ()) -> Hit:
    sources = tuple(s for s in (Source(retriever="bm25", rank=rank, score=bm25) if bm25 is not None else None,
                                Source(retriever="dense", rank=rank, score=dense) if dense is not None else None)
                    if s is not None) + extra
    return Hit(region_id=r.region_id, doc_id=r.doc_id, version_id=r.version_id, kind=r.kind, modality="text",
               pages=tuple(r.pages), score=1.0 / (60 + rank), rank=rank, sources=sources)


def _mixed(rdata_bm25: float, rdata_dense: float) -> tuple[list[Hit], RegionIndex]:
    policy, ops, rdata = _docs()
    hits = [_hit(find(policy, "acknowledged within"), 1, bm25=12.0, dense=0.71),
            _hit(find(rdata, "read.csv"), 2, bm25=rdata_bm25, dense=rdata_dense),
            _hit(find(ops, "escalations"), 3, bm25=9.0, dense=0.52)]
    return hits, RegionIndex(policy + ops + rdata)


def test_a_weak_document_is_left_out_with_its_reason() -> None:
    hits, idx = _mixed(rdata_bm25=2.0, rdata_dense=0.18)
    pkg = assemble(Q, hits, idx, AssemblyOptions(budget=1000))
    assert {it.doc_id for it in pkg.items} == {"policy", "ops"}  # ops: 9.0 >= 0.7 x 12.0 lexically
    fate = {m.region_id: (m.fate, m.reason) for m in pkg.manifest}
    f, why = fate[hits[1].region_id]
    assert f == "weak_document" and "weaker document" in why
    assert [e.reason for e in pkg.excluded if e.region_id == hits[1].region_id] == ["weak_document"]
    off = assemble(Q, hits, idx, AssemblyOptions(budget=1000, document_focus="off"))
    assert {it.doc_id for it in off.items} == {"policy", "ops", "rdata"}
    assert pkg.budget.used < off.budget.used


def test_either_score_keeps_a_document() -> None:
    lexical, _ = _mixed(rdata_bm25=DOC_LEX_SHARE * 12.0, rdata_dense=0.1)
    semantic, idx = _mixed(rdata_bm25=0.5, rdata_dense=0.71 - DOC_DENSE_MARGIN + 0.01)
    for hits in (lexical, semantic):
        assert "rdata" not in focus(Q, hits, idx).weak_docs
    assert "rdata" in focus(Q, _mixed(rdata_bm25=0.5, rdata_dense=0.5)[0], idx).weak_docs


def test_the_first_ranked_document_and_unjudged_ones_stay() -> None:
    policy, ops, rdata = _docs()
    idx = RegionIndex(policy + ops + rdata)
    hits = [_hit(find(rdata, "read.csv"), 1, bm25=1.0, dense=0.3),  # ranked first by fusion, weak scores
            _hit(find(policy, "acknowledged within"), 2, bm25=12.0, dense=0.71),
            _hit(find(ops, "rota"), 3, bm25=None, dense=None)]  # image-only evidence: nothing to judge
    assert focus(Q, hits, idx).weak_docs == {}


def test_an_off_topic_question_over_a_mixed_store_is_refused() -> None:
    policy, ops, rdata = _docs()
    idx = RegionIndex(policy + ops + rdata)
    q = "What is the capital of France?"
    hits = [_hit(find(rdata, "read.csv"), 1, bm25=3.1, dense=0.24),
            _hit(find(policy, "Updates follow"), 2, bm25=2.5, dense=0.21),
            _hit(find(ops, "rota"), 3, bm25=2.2, dense=0.2)]
    pkg = assemble(q, hits, idx, AssemblyOptions(budget=1000))
    assert pkg.refused and not pkg.items
    assert pkg.refusal_reason is not None and pkg.refusal_reason.startswith("off-topic")
    assert {m.fate for m in pkg.manifest} == {"below_threshold"}
    assert not assemble(q, hits, idx, AssemblyOptions(budget=1000, document_focus="off")).refused
    # the same weak hits from one document (a scoped question) are judged by min_relevance alone
    one = [_hit(find(policy, "acknowledged within"), 1, bm25=3.0, dense=0.3),
           _hit(find(policy, "Updates follow"), 2, bm25=2.0, dense=0.25)]
    assert not assemble(q, one, idx, AssemblyOptions(budget=1000)).refused


def test_words_on_one_page_or_a_strong_hit_keep_a_question() -> None:
    policy, ops, rdata = _docs()
    idx = RegionIndex(policy + ops + rdata)
    weak = OFF_TOPIC_DENSE - 0.1
    hits = [_hit(find(rdata, "read.csv"), 1, bm25=3.0, dense=weak),
            _hit(find(policy, "Updates follow"), 2, bm25=2.0, dense=weak - 0.05)]
    assert focus("Which separator does read.csv use for a data frame?", hits, idx).off_topic == ""  # words on p.1
    assert focus("Which duck quacks loudest?", hits, idx).off_topic.startswith("off-topic")
    strong = [hits[0].model_copy(update={"sources": (Source(retriever="dense", rank=1, score=OFF_TOPIC_DENSE),)}),
              hits[1]]
    assert focus("Which duck quacks loudest?", strong, idx).off_topic == ""


def test_a_page_or_label_reference_is_never_off_topic() -> None:
    policy, ops, rdata = _docs()
    idx = RegionIndex(policy + ops + rdata)
    ref = (Source(retriever="pageref", rank=1, score=1.0),)
    hits = [_hit(find(rdata, "read.csv"), 1, bm25=1.0, dense=0.1, extra=ref),
            _hit(find(policy, "Updates follow"), 2, bm25=9.0, dense=0.2)]
    judged = focus("What is on page 1 of the duck manual?", hits, idx)
    assert judged.off_topic == "" and "rdata" not in judged.weak_docs


def test_a_weak_document_is_not_sent_whole() -> None:
    """``whole_documents`` adds the unhit pages of a short document the hits come from; not of one left out."""
    policy, ops, _ = _docs()
    filler = [[f"Row {k} of the separator table lists option {k}." for k in range(8)] for _ in range(8)]
    rdata = make_doc("rdata", [("Import", [["read.csv reads a comma-separated file into a data frame."], *filler])],
                     version_id=V3)
    assert max(p for r in rdata for p in r.pages) >= 2  # page 2 has no hit
    idx = RegionIndex(policy + ops + rdata)
    hits = [_hit(find(policy, "acknowledged within"), 1, bm25=12.0, dense=0.71),
            _hit(find(rdata, "read.csv"), 2, bm25=2.0, dense=0.18)]

    def added(pkg) -> set[str]:  # type: ignore[no-untyped-def]
        return {h.region_id.split("@")[0] for h in pkg.retrieval.hits if h.retriever == "document"}

    off = assemble(Q, hits, idx, AssemblyOptions(budget=4000, document_focus="off"))
    assert "rdata" in added(off)  # without focus the short document goes whole
    on = assemble(Q, hits, idx, AssemblyOptions(budget=4000))
    assert "rdata" not in added(on) and {it.doc_id for it in on.items} == {"policy"}
