"""Hypothesis strategies: small corpora of document versions, hits on them, and options."""

from __future__ import annotations

from hypothesis import strategies as st

from folio.assembly import AssemblyOptions, ImageTokens
from folio.kernel.hit import Hit
from folio.kernel.model import Region
from tests.assembly.builders import hit, make_doc

WORDS = ("pump valve pressure limit deadline incident outage manager invoice refund table figure page "
         "power mass model board wiring exception maintenance response target minutes bar volts").split()

sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=14).map(
    lambda ws: " ".join(ws).capitalize() + ".")
paragraph = st.lists(sentence, min_size=1, max_size=5)
table = st.tuples(st.just("table"), st.just(["Name", "Value"]),
                  st.lists(st.tuples(st.sampled_from(WORDS), st.integers(0, 999).map(str)).map(list),
                           min_size=1, max_size=8))
figure = st.tuples(st.just("figure"), sentence.map(lambda s: "Figure: " + s))
block = st.one_of(paragraph, paragraph, paragraph, table, figure)
section = st.tuples(st.sampled_from(WORDS).map(str.title), st.lists(block, min_size=1, max_size=4))


@st.composite
def corpora(draw: st.DrawFn) -> list[Region]:
    """One to three document versions (sometimes two versions of one document, same text)."""
    n = draw(st.integers(1, 3))
    regions: list[Region] = []
    for k in range(n):
        secs = draw(st.lists(section, min_size=1, max_size=4))
        regions += make_doc(f"doc{k}", secs, version_id=f"{k:016x}")
        if draw(st.booleans()) and k == 0:
            regions += make_doc("doc0", secs, version_id="f" * 16)  # a second version, identical text
    return regions


@st.composite
def hits_on(draw: st.DrawFn, regions: list[Region]) -> list[Hit]:
    pool = [r for r in regions if r.kind in ("sentence", "table", "figure", "page", "paragraph")]
    chosen = draw(st.lists(st.sampled_from(pool), min_size=0, max_size=12))
    scores = draw(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=len(chosen), max_size=len(chosen)))
    # text-only retrievers make auto send pages as text; visual ones (and unknown "fused") as images
    names = draw(st.lists(st.sampled_from(["fused", "bm25", "dense", "colpali", "clip"]),
                          min_size=len(chosen), max_size=len(chosen)))
    return [hit(r, s, i + 1, retriever=n)
            for i, (r, s, n) in enumerate(zip(chosen, scores, names, strict=True))]


options = st.builds(
    AssemblyOptions,
    strategy=st.sampled_from(["auto", "raw", "window", "parent", "neighbors", "page"]),
    window_before=st.integers(0, 3),
    window_after=st.integers(0, 3),
    parent_max_tokens=st.integers(20, 400),
    neighbors=st.integers(0, 2),
    include_images=st.booleans(),
    image_tokens=st.sampled_from([ImageTokens(), ImageTokens(kind="area"), ImageTokens(kind="fixed", fixed=50)]),
    structural_truncation=st.booleans(),
    order=st.sampled_from(["relevance", "document", "edges"]),
    prompt_format=st.sampled_from(["openai", "anthropic"]),
    mmr_lambda=st.one_of(st.none(), st.floats(0, 1)),
    fallbacks=st.booleans(),
    min_relevance=st.none(),  # the weak-retrieval guard has its own example; dense scores here are random
    document_focus=st.sampled_from(["auto", "off"]),  # with random scores it leaves documents out, or refuses
    max_image_share=st.sampled_from([None, 0.5, 0.2, 1.0]),
    packing=st.sampled_from(["greedy", "greedy", "monotone", "breadth"]),
    breadth_share=st.sampled_from([0.3, 0.5, 1.0]),
    breadth_reserve=st.sampled_from([0, 0, 2, 3]),
    breadth_min_room=st.sampled_from([0, 0, 1500]),
    excerpt_tokens=st.integers(32, 200),
)
budgets = st.integers(1, 3000)
