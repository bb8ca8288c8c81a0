"""Assembly's inputs: ``AssemblyOptions``, composed from one group of options per concern (``GROUPS``).

Every option has a default and is validated here (``pydantic.ValidationError`` names the field); the REST
request schemas (``api.schemas``) take their defaults and descriptions from these fields, and what assembly
produces is in ``assembly.package``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from folio.kernel.hit import Modality
from folio.kernel.tokens import is_known_tokenizer
from folio.settings import DEFAULT_BUDGET as DEFAULT_BUDGET  # one default budget: REST, CLI, MCP and in-process
from folio.settings import DEFAULT_TOKENIZER

Strategy = Literal["auto", "raw", "window", "parent", "neighbors", "page"]
Order = Literal["relevance", "document", "edges"]
BlockFormat = Literal["compact", "tagged"]

# image_url_template: the one placeholder is replaced literally (never str.format), in a bounded template.
MAX_TEMPLATE_CHARS = 500


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ImageTokens(_Frozen):
    """How many prompt tokens one image costs, per model family.

    - ``tile`` (OpenAI high detail): scale to fit ``max_side`` x ``max_side``, then down so the
      shortest side is at most ``short_side``; tokens = ``base + per_tile * tiles`` with ``tile_px``
      tiles (defaults: GPT-4o's 85 + 170 per 512 px tile).
    - ``area`` (Anthropic): scale down so the long edge is at most ``max_long_edge``; tokens =
      ``ceil(w * h / divisor)`` (defaults 1568 px, 750).
    - ``fixed``: every image costs ``fixed`` tokens (e.g. OpenAI low detail: 85).

    Pixel sizes come from the region (``meta`` ``width_px``/``height_px``), else from its bbox in points
    times the scale it was rendered at (``meta`` ``render_scale``), else times
    ``AssemblyOptions.render_scale`` (see ``assembly.budget.image_pixels``).
    """

    kind: Literal["tile", "area", "fixed"] = "tile"
    base: int = Field(85, ge=0)
    per_tile: int = Field(170, ge=0)
    tile_px: int = Field(512, ge=1)
    max_side: int = Field(2048, ge=1)
    short_side: int = Field(768, ge=1)
    divisor: float = Field(750.0, gt=0)
    max_long_edge: int = Field(1568, ge=1)
    fixed: int = Field(85, ge=0)


class BudgetOptions(_Frozen):
    """The token budget and the tokenizer that counts it.

    ``limit`` is ``budget`` if given, else ``context_window - reserve_output``; with both, the smaller. With
    neither, ``DEFAULT_BUDGET`` (2000, the server's ``FOLIO_DEFAULT_BUDGET`` default too)."""

    budget: int | None = Field(None, ge=1)
    context_window: int | None = Field(None, ge=1)
    reserve_output: int = Field(1024, ge=0)
    tokenizer: str = DEFAULT_TOKENIZER

    @field_validator("tokenizer")
    @classmethod
    def _tokenizer_name(cls, v: str) -> str:
        if is_known_tokenizer(v):
            return v
        raise ValueError(
            f"tokenizer must be 'cl100k_base', 'o200k_base', a registered name or 'hf:<dir>', got {v[:80]!r}"
        )

    @model_validator(mode="after")
    def _room(self) -> Self:
        if self.context_window is not None and self.context_window - self.reserve_output < 1:
            raise ValueError(
                f"context_window ({self.context_window}) minus reserve_output ({self.reserve_output}) "
                "leaves no room for the prompt"
            )
        return self

    @property
    def limit(self) -> int:
        limits = []
        if self.budget is not None:
            limits.append(self.budget)
        if self.context_window is not None:
            limits.append(self.context_window - self.reserve_output)
        return min(limits) if limits else DEFAULT_BUDGET


class ExpansionOptions(_Frozen):
    """How a hit grows into what is sent: the unit itself, a sentence window, its section, the paragraphs
    beside it, its page or a page excerpt."""

    strategy: Strategy = "auto"
    window_before: int = Field(2, ge=0)
    window_after: int = Field(2, ge=0)
    parent_max_tokens: int = Field(1024, ge=1)
    neighbors: int = Field(1, ge=0)
    page_units: Literal["off", "large_sections", "all"] = Field(
        "all",
        description="auto: send a hit as its page's text when the page fits page_max_share of the evidence room "
        "(hits on one page become one item; spans on that page merge into it). 'all': every text and table "
        "hit; 'large_sections': only text hits whose section is too large to send whole; 'off': never. A page "
        "that does not fit falls back to the section, window or table as before.",
    )
    scanned_pages: Literal["text", "image"] = Field(
        "text",
        description="auto: a scanned page that text retrievers found (its text is OCR) goes as that text ('text': "
        "any model reads it, it costs less than the image and its lines can be cited) or as its page image "
        "('image'). A page found by a visual retriever (ColPali, CLIP) goes as an image either way; a scan "
        "without OCR text goes as an image.",
    )
    page_render: Literal["compact", "stored"] = Field(
        "compact",
        description="how a page sent as text reads: 'compact', rebuilt from its regions (a paragraph on one line, "
        "a table one line per row with its cells separated by ' | ', icon glyphs and lone bullets dropped; "
        "assembly.expansion.pagetext), or 'stored', the parser's page text (lines as wrapped in the PDF, a table "
        "one cell per block). The item cites the same page either way.",
    )
    page_max_share: float = Field(0.7, gt=0.0, le=1.0, description="auto: the largest page sent whole as text, "
                                  "as a share of the evidence room (at least 256 tokens)")
    window_share: float | None = Field(
        0.15, gt=0.0, le=1.0,
        description="auto: a sentence window holds the sentences around the hit that fit this share of the "
        "evidence room (at least 96 tokens), instead of window_before/window_after sentences; None: sentence "
        "counts.",
    )
    window_source: Literal["section", "page"] = Field(
        "page",
        description="auto: where a window comes from: 'section', the sentences of the hit's section around it; "
        "'page', the page text around the hit (with whatever sits beside it: table cells, captions, lists).",
    )
    excerpt_growth: int = Field(
        1, ge=1, le=8,
        description="auto, window_source=page: a page excerpt grows to window_share x min(excerpt_growth, hits on "
        "that page) of the room, so a page many hits point at is read deeper.",
    )


class SelectionOptions(_Frozen):
    """Which hits and items are kept before packing: score thresholds, the weak-retrieval guard and caps.

    ``score_threshold`` with ``threshold_mode="relative"`` keeps hits scoring at least
    ``score_threshold * top_score`` (only when the top score is positive; relative thresholds
    must lie in [0, 1]); ``"absolute"`` keeps hits with ``score >= score_threshold``.

    ``modality_slots`` are *maximum* counts of candidate items per modality (``text``, ``table``,
    ``figure``, ``page``) taken in priority order before packing; ``max_items`` caps the item list
    the same way. Both are applied before the budget so that a bigger budget never drops an item
    (see ``assembly.selection``)."""

    max_items: int | None = Field(None, ge=1)
    score_threshold: float | None = None
    min_relevance: float | None = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="weak-retrieval guard: refuse when no hit's dense (semantic) similarity reaches this; "
        "None turns it off. Hits without a dense score (bm25-only retrieval) are not judged.",
    )
    document_focus: Literal["auto", "off"] = Field(
        "auto",
        description="with hits from several documents (an unscoped question over a mixed store): leave out the "
        "documents whose best lexical and semantic scores are below the best document's, or whose match is one "
        "shared word (fate weak_document), and refuse a question that no document supports (assembly.relevance); "
        "off: pack whatever ranks, from any document.",
    )
    threshold_mode: Literal["relative", "absolute"] = "relative"
    modality_slots: dict[Modality, int] | None = None

    @field_validator("modality_slots")
    @classmethod
    def _slots(cls, v: dict[Modality, int] | None) -> dict[Modality, int] | None:
        if v is None:
            return v
        for k, n in v.items():
            if n < 0:
                raise ValueError(f"modality_slots[{k!r}] must be >= 0, got {n}")
        return v

    @model_validator(mode="after")
    def _threshold(self) -> Self:
        if self.score_threshold is not None and self.threshold_mode == "relative":
            if not 0.0 <= self.score_threshold <= 1.0:
                raise ValueError("a relative score_threshold must lie in [0, 1]")
        return self


class OrderingOptions(_Frozen):
    """The order of the candidates (their priority for packing) and of the packed blocks."""

    order: Order = "edges"
    mmr_lambda: float | None = Field(None, ge=0.0, le=1.0)
    sub_questions: tuple[str, ...] = ()


class PackingOptions(_Frozen):
    """How the candidates are fitted into the budget."""

    packing: Literal["monotone", "greedy", "breadth"] = Field(
        "greedy",
        description="greedy: priority order, a candidate that does not fit walks its fallback ladder; breadth: "
        "the candidates' small forms (about excerpt_tokens) interleaved with their growth toward their full "
        "form in one budget-independent plan, the small forms taking about breadth_share of the tokens (a "
        "larger budget never covers fewer pages); "
        "monotone: entry budgets, no fallbacks.",
    )
    nested: bool = Field(
        True,
        description="greedy packing: the pages whose text the package at half the budget carries are carried at "
        "this budget too (their candidates are packed first when plain greedy packing would drop one of them), "
        "so 1k, 2k and 4k packages cover growing sets of pages; off with compress, or when half the budget "
        "leaves under 400 tokens of evidence room.",
    )
    whole_documents: bool = Field(
        True,
        description="greedy packing: when all the page text of a document the hits come from fits the evidence "
        "room, its pages that no hit touches are added after the hits (retriever 'document', in page order), so "
        "room left over goes to the rest of a short document instead of staying unused.",
    )
    breadth_reserve: int = Field(3, ge=0, le=16, description="greedy packing: a candidate goes in whole only while "
                                 "the next breadth_reserve candidates still fit beside it in their small forms (a "
                                 "window each); otherwise it goes in as its largest smaller form that leaves them room "
                                 "(from breadth_min_room tokens of evidence room up)")
    breadth_min_room: int = Field(1500, ge=0, le=1_000_000, description="greedy packing: the evidence room from "
                                  "which breadth_reserve holds room back (below it the candidates go in whole in "
                                  "priority order: a small budget is best spent on the likeliest pages whole)")
    breadth_share: float = Field(0.5, gt=0.0, le=1.0, description="breadth packing: the share of the "
                                 "tokens that go to the small forms of the ranked candidates")
    excerpt_tokens: int = Field(160, ge=32, le=4096, description="breadth packing: the size of a candidate's small "
                                "form (a page excerpt; spans, tables and paragraph groups up to twice this)")
    page_max_tokens: int = Field(1500, ge=64, le=100_000, description="breadth packing: the largest page sent "
                                 "whole as text (larger pages as their best paragraphs up to this)")
    fallbacks: bool = Field(
        True,
        description="greedy packing: a candidate that does not fit the remaining room is replaced by its "
        "next smaller representation (parent -> sentence windows -> triggering sentences; table -> leading "
        "rows "
        "with header; figure image -> caption/in-figure text; page image -> page text -> best paragraph) "
        "before it is excluded. Off in monotone packing.",
    )
    max_image_share: float | None = Field(
        0.5,
        gt=0.0,
        le=1.0,
        description="greedy packing: image parts may use at most this share of the evidence room; an image "
        "over the share is sent as its text representation (with fallbacks on) or excluded. None: no cap.",
    )
    structural_truncation: bool = False


class RenderOptions(_Frozen):
    """How the package is written as a prompt: block format, citation ids, images and their token price."""

    include_images: bool = True
    image_tokens: ImageTokens = ImageTokens()
    render_scale: float = Field(
        1.5,
        gt=0,
        description="pixels per PDF point of a region image whose pixel size and render scale were not "
        "recorded at ingest (folio's ingest renders at 1.5)",
    )
    block_format: BlockFormat = Field(
        "compact",
        description="compact: a block opens with one line '[S1] file.pdf p.12 | Section' and ends with a blank "
        "line; tagged: '<block id=... type=... source=... section=...>' ... '</block>' (about 20 more tokens "
        "per block).",
    )
    citation_style: Literal["typed", "uniform"] = "typed"
    system_prompt: str | None = None
    prompt_format: Literal["openai", "anthropic"] = "openai"
    image_url_template: str = "/v1/regions/{region_id}/image"

    @field_validator("image_url_template")
    @classmethod
    def _template(cls, v: str) -> str:
        if "{region_id}" not in v:
            raise ValueError("image_url_template must contain '{region_id}'")
        if len(v) > MAX_TEMPLATE_CHARS:
            raise ValueError(f"image_url_template is over {MAX_TEMPLATE_CHARS} characters")
        return v


class CompressionOptions(_Frozen):
    """What happens to candidates still left out for budget after packing."""

    compress: Literal["off", "extractive", "llm"] = Field(
        "off",
        description="greedy packing: a candidate still excluded for budget after packing goes in compressed "
        "(its trigger sentences and the sentences sharing most words with the question, plus a 'Key terms:' "
        "line), cited to its region, expansion 'compressed' (assembly.packing.compress). Measured in the README. "
        "'llm': the configured LLM endpoint writes the compressed text (recounted and cut to fit; extractive "
        "when the call fails, with a note in retrieval.notes); needs FOLIO_LLM_BASE_URL and FOLIO_LLM_MODEL.",
    )
    compress_share: float = Field(
        0.0, ge=0.0, le=0.9,
        description="with compress: the share of the evidence room held back from whole items for the "
        "compressed tail (unused room goes back to whole items)",
    )


class AssemblyOptions(
    CompressionOptions,
    RenderOptions,
    PackingOptions,
    OrderingOptions,
    SelectionOptions,
    ExpansionOptions,
    BudgetOptions,
):
    """Everything that shapes one package: the fields of its groups, one per concern (``GROUPS``). Every field
    is an attribute of ``AssemblyOptions`` itself (``AssemblyOptions(budget=2000)``, ``opts.budget``, one flat
    JSON object over REST); a group only says which concern a field belongs to. Every field has a default;
    invalid values raise ``pydantic.ValidationError`` naming the field.
    """

    GROUPS: ClassVar[tuple[type[_Frozen], ...]] = (
        BudgetOptions,
        ExpansionOptions,
        SelectionOptions,
        OrderingOptions,
        PackingOptions,
        RenderOptions,
        CompressionOptions,
    )
    """The groups in the order of the fields (the bases are listed the other way round: pydantic collects
    the fields of the last base first). A new option goes into the group of its concern."""

    # issue 46: text channels (H1)
    _text_retrievers: frozenset[str] = PrivateAttr(
        default=frozenset({"bm25", "dense", "summary", "pageref", "labelref", "pagelex", "statement"})
    )

    @property
    def text_retrievers(self) -> frozenset[str]:
        """The retrievers in a hit's ``sources`` that read text: a page only they found goes as text
        (``expansion.expander.visual_hit``). Not a request option (no field, no JSON): the api hands in
        retrieval's (``with_text_retrievers``); the default is the built-in ones', for callers that build
        options themselves."""
        return self._text_retrievers

    def with_text_retrievers(self, names: Iterable[str]) -> AssemblyOptions:
        """These options with ``names`` as the text retrievers."""
        copy = self.model_copy()
        copy._text_retrievers = frozenset(names)
        return copy
