"""``compress="llm"``: the compressed bodies written by a compressor callable (``assembly.packing.compress``),
recounted and cut to fit, extractive with a note when the call fails. The API's compressor on a real
HTTP endpoint is tested in ``tests/api/http/test_compress_llm.py``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from folio.assembly import AssemblyOptions, assemble
from folio.kernel.errors import InvalidRequest
from folio.kernel.index import RegionIndex
from tests.assembly.builders import find, hit

from .recount import recount
from .test_compress import _manual
from .test_properties import SETTINGS

Q = "What is the pump pressure limit?"
OPTS = AssemblyOptions(budget=700, strategy="parent", page_units="off", fallbacks=False, compress="llm",
                       compress_share=0.3)


def _case() -> tuple[RegionIndex, list]:  # type: ignore[type-arg]
    regs = _manual()
    return RegionIndex(regs), [hit(find(regs, f"limit in mode {k} "), 1.0 - k / 10, k + 1) for k in range(8)]


def test_llm_compression_sends_the_model_text_cited_and_marked() -> None:
    idx, hits = _case()
    asked: list[tuple[str, str, int]] = []

    def model(question: str, text: str, max_tokens: int) -> str:
        asked.append((question, text, max_tokens))
        return "LLM SUMMARY: the limit is given here."

    pkg = assemble(Q, hits, idx, OPTS, compressor=model)
    comp = [it for it in pkg.items if it.expansion == "compressed"]
    assert comp and all(it.text == "LLM SUMMARY: the limit is given here." for it in comp)
    assert len(asked) >= len(comp) and all(q == Q and m >= 16 for q, _, m in asked)
    assert any("kPa" in t for _, t, _ in asked)  # the whole unit's text went to the model
    for it in comp:
        assert it.fallback_from == "parent_section" and it.locators and it.trigger_ids
        entry = next(m for m in pkg.manifest if m.citation_id == it.citation_id and m.fate == "included")
        assert entry.expansion == "compressed"
    assert pkg.budget.used <= 700 and pkg.budget.used == recount(pkg)
    assert pkg.retrieval.notes == []


def test_an_over_long_reply_is_cut_to_the_room_and_the_budget_holds() -> None:
    idx, hits = _case()
    pkg = assemble(Q, hits, idx, OPTS, compressor=lambda q, t, n: "pressure limit words " * 500)
    comp = [it for it in pkg.items if it.expansion == "compressed"]
    assert comp and all(it.text.endswith(" …") and it.text.startswith("pressure limit") for it in comp)
    assert pkg.budget.used <= 700 and pkg.budget.used == recount(pkg)


def test_a_failing_call_goes_extractive_with_a_note() -> None:
    idx, hits = _case()
    calls = []

    def flaky(question: str, text: str, max_tokens: int) -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("upstream said 500")
        return "LLM SUMMARY."

    pkg = assemble(Q, hits, idx, OPTS, compressor=flaky)
    comp = [it for it in pkg.items if it.expansion == "compressed"]
    (note,) = pkg.retrieval.notes
    (failed,) = [it for it in comp if f"of {it.citation_id} failed" in note]
    assert "kPa" in failed.text  # extractive: the trigger sentence
    assert "upstream said 500" in note and "extractive" in note
    assert sum(it.text == "LLM SUMMARY." for it in comp) == len(comp) - 1 >= 1


def test_after_a_timeout_the_model_is_not_asked_again() -> None:
    idx, hits = _case()
    calls = []

    def slow(question: str, text: str, max_tokens: int) -> str:
        calls.append(1)
        raise TimeoutError("no reply within 15 s")

    pkg = assemble(Q, hits, idx, OPTS, compressor=slow)
    assert len(calls) == 1 and len(pkg.retrieval.notes) == 1 and "not asked again" in pkg.retrieval.notes[0]
    assert sum(it.expansion == "compressed" for it in pkg.items) >= 2  # all extractive


def test_llm_without_a_compressor_is_an_invalid_request() -> None:
    idx, hits = _case()
    with pytest.raises(InvalidRequest, match="FOLIO_LLM_BASE_URL"):
        assemble(Q, hits, idx, OPTS)


@SETTINGS
@given(st.integers(60, 1500), st.sampled_from([0.0, 0.15, 0.3]), st.integers(0, 400),
       st.sampled_from(["auto", "parent", "window"]), st.booleans())
def test_budget_holds_with_llm_compression(budget, share, words, strategy, fallbacks) -> None:  # type: ignore[no-untyped-def]
    idx, hits = _case()
    opts = OPTS.model_copy(update={"budget": budget, "compress_share": share, "strategy": strategy,
                                   "fallbacks": fallbacks})
    pkg = assemble(Q, hits, idx, opts, compressor=lambda q, t, n: "pump limit kPa " * words)
    assert pkg.budget.used <= pkg.budget.limit == budget
    assert pkg.budget.used == recount(pkg)
    carried = [r for it in pkg.items for r in it.region_ids]
    assert len(carried) == len(set(carried))
    assert len({it.citation_id for it in pkg.items}) == len(pkg.items)
