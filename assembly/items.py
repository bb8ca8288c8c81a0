"""The package's items: a ``ContextItem`` for each packed candidate, and what the budget was spent on.

An item records what its candidate was sent as (``expansion``: the unit's expansions, or the fallback
rung; ``:truncated`` when cut), the hits it carries (``trigger_ids``), its exact cost and, for an image,
what the image shows as text (``alt_text``); its ``lines`` are the line boxes of the hits it carries
(``assembly.lines``), and its ``viewer_url`` opens the viewer with those lines highlighted. ``breakdown``
splits the tokens used into system text, question, wrappers, text, images and message overhead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from folio.assembly.lines import PackedItem, Sent, item_lines, viewer_url
from folio.assembly.package import Breakdown, ContextItem, LineOut
from folio.assembly.packing.candidates import Cand, section_of
from folio.assembly.render import locators_of
from folio.assembly.room import Frame
from folio.assembly.words import content_words
from folio.kernel.hit import Hit
from folio.kernel.index import RegionSource
from folio.kernel.model import Region


def context_item(c: Cand, names: Mapping[str, str], shits: Sequence[Hit], lines: list[LineOut]) -> ContextItem:
    """The item of packed candidate ``c`` (``shits``: the hits in priority order, ``names``: file names)."""
    u, b = c.unit, c.body
    pages = [p for p in b.pages if p]
    expansion = "+".join(sorted(u.expansions)) if not (u.kind == "span" and u.full) else "parent_section"
    if c.rung is not None:
        expansion = c.rung
    if c.status == "truncated":
        expansion += ":truncated"
    item: ContextItem = ContextItem(
        citation_id=c.cid,
        region_id=b.context_id,
        region_ids=[r.region_id for r in b.regions],
        doc_id=u.doc_id,
        version_id=u.version_id,
        filename=names.get(u.version_id, u.doc_id),
        modality=u.modality,
        expansion=expansion,
        trigger_ids=[shits[i].region_id for i in sorted(u.triggers)],
        pages=pages,
        locators=locators_of(b.regions),
        text=b.text,
        tokens=c.cost,
        status="truncated" if c.status == "truncated" else "included",
        image_url=c.image_url,
        image_tokens=c.image_tokens,
        alt_text=_alt_text(c),
        score=u.score,
        section=section_of(u, b),
        fallback_from=c.fallback_from,
        lines=lines,
        viewer_url=viewer_url(b.context_id, lines),
    )
    return item


def lines_of(c: Cand, regions: Mapping[int, Region], source: RegionSource, query: str) -> list[LineOut]:
    """``ContextItem.lines``: the line boxes of the hits the item carries (``assembly.lines``; ``regions``: the
    hits' regions by index)."""
    triggers = [regions[i] for i in sorted(c.unit.triggers)
                if i in regions and (c.carried is None or i in c.carried)]
    b = c.body
    sent = Sent.of(b.text or (_alt_text(c) or ""), image=c.image_url is not None)
    item = PackedItem([r.region_id for r in b.regions], [p for p in b.pages if p], sent)
    return item_lines(triggers, item, content_words(query), source)


def _alt_text(c: Cand) -> str | None:
    """What an item's image shows, as text (``ContextItem.alt_text``): the text of the page or figure
    whose pixels are sent; None when no image is sent or the region has no text."""
    if c.image_url is None or not c.unit.regions:
        return None
    return c.unit.regions[0].text.strip() or None


def breakdown(packed: Sequence[Cand], frame: Frame, used: int) -> Breakdown:
    """How the ``used`` tokens of a package of ``packed`` split (none when nothing was sent)."""
    if used == 0:
        return Breakdown()
    text = sum(c.text_tokens for c in packed)
    wrappers = sum(c.wrapper_tokens for c in packed)
    images = sum(c.image_tokens for c in packed)
    sys_t, q_t, overhead = frame.sys_tokens, frame.q_tokens, frame.overhead
    head = used - (sys_t + q_t + overhead + text + wrappers + images)  # context header or refusal note
    return Breakdown(system=sys_t, question=q_t, wrappers=wrappers + head, text=text, images=images,
                     overhead=overhead)
