"""Exact token counting with a cache, and per-model image-token formulas.

Counting is exact (the real tokenizer on the exact string that is sent), and cached by string:
region texts and rendered spans recur across queries, so a warm process rarely tokenizes. The
cache is bounded and per tokenizer name.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable

from folio.assembly.options import ImageTokens
from folio.kernel.model import Region
from folio.kernel.tokens import Tokenizer, get_tokenizer

_CACHE_SIZE = 200_000


class TokenCounter:
    """``count(text)`` with an LRU cache in front of the real tokenizer."""

    def __init__(self, tokenizer: Tokenizer, max_entries: int = _CACHE_SIZE) -> None:
        self.tokenizer = tokenizer
        self.name = tokenizer.name
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:
            n = self._cache.get(text)
            if n is not None:
                self._cache.move_to_end(text)
                return n
        n = self.tokenizer.count(text)
        with self._lock:
            self._cache[text] = n
            if len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return n

    def memo(self) -> Callable[[str], int]:
        """``count`` behind a private dict, for the span of one call: one assembly counts the same page,
        paragraph and opener texts many times, and a dict lookup is far cheaper than the shared cache's
        lock and LRU bookkeeping. The dict dies with the function, so it needs no bound."""
        seen: dict[str, int] = {}
        shared = self.count

        def count(text: str) -> int:
            n = seen.get(text)
            if n is None:
                n = seen[text] = shared(text)
            return n

        return count



_counters: dict[str, TokenCounter] = {}
_counters_lock = threading.Lock()


def get_counter(name: str) -> TokenCounter:
    """One shared, cached counter per tokenizer name."""
    with _counters_lock:
        c = _counters.get(name)
        if c is None:
            c = TokenCounter(get_tokenizer(name))
            _counters[name] = c
        return c


def image_pixels(region: Region, default_scale: float) -> tuple[int, int]:
    """Pixel size of the image the model receives for ``region``.

    In order of preference: the pixel size ingest recorded (``region.image.width_px``/``height_px``,
    parser v4); else the first locator's bbox (a page region's bbox is the page) in points times the
    scale it was rendered at (``region.image.scale``); else times ``default_scale``
    (``AssemblyOptions.render_scale``, for rows that recorded neither).

    >>> from folio.kernel.model import BBox, ImageRef, Locator, PagePayload
    >>> loc = Locator(page=1, bbox=BBox(x0=0, y0=0, x1=612, y1=792), page_width=612, page_height=792)
    >>> page = Region(region_id="d@v:p1:page1", doc_id="d", version_id="v", kind="page", text="",
    ...               locators=(loc,), payload=PagePayload(image=ImageRef(scale=1.5)))
    >>> image_pixels(page, 2.0)
    (918, 1188)
    >>> image_pixels(page.model_copy(update={"payload": PagePayload(image=ImageRef(width_px=800, height_px=600))}), 2.0)
    (800, 600)
    >>> image_pixels(page.model_copy(update={"payload": PagePayload()}), 2.0)
    (1224, 1584)
    """
    img = region.image
    if img is not None and img.width_px and img.height_px:
        return img.width_px, img.height_px
    if not region.locators:
        return 1, 1
    scale = img.scale if img is not None and img.scale else default_scale
    bb = region.locators[0].bbox
    return max(1, round(bb.width * scale)), max(1, round(bb.height * scale))


def image_token_cost(width: int, height: int, cfg: ImageTokens) -> int:
    """Tokens one image of ``width`` x ``height`` pixels costs under ``cfg``.

    >>> image_token_cost(1024, 1024, ImageTokens())  # 768x768 -> 2x2 tiles
    765
    >>> image_token_cost(2048, 4096, ImageTokens())  # 1024x2048 -> 768x1536 -> 2x3 tiles
    1105
    >>> image_token_cost(1000, 1000, ImageTokens(kind="area"))
    1334
    >>> image_token_cost(10, 10, ImageTokens(kind="fixed", fixed=85))
    85
    """
    w, h = float(max(1, width)), float(max(1, height))
    if cfg.kind == "fixed":
        return cfg.fixed
    if cfg.kind == "area":
        long_edge = max(w, h)
        if long_edge > cfg.max_long_edge:
            s = cfg.max_long_edge / long_edge
            w, h = w * s, h * s
        return max(1, math.ceil(w * h / cfg.divisor))
    # tile: fit in max_side square, then shortest side down to short_side (never upscaled)
    if max(w, h) > cfg.max_side:
        s = cfg.max_side / max(w, h)
        w, h = w * s, h * s
    if min(w, h) > cfg.short_side:
        s = cfg.short_side / min(w, h)
        w, h = w * s, h * s
    tiles = math.ceil(round(w, 6) / cfg.tile_px) * math.ceil(round(h, 6) / cfg.tile_px)
    return cfg.base + cfg.per_tile * tiles


def describe_formula(cfg: ImageTokens) -> str:
    if cfg.kind == "fixed":
        return f"fixed {cfg.fixed} per image"
    if cfg.kind == "area":
        return f"ceil(w*h/{cfg.divisor:g}) after long edge <= {cfg.max_long_edge}px"
    return (
        f"{cfg.base} + {cfg.per_tile} per {cfg.tile_px}px tile after fit {cfg.max_side}px "
        f"and shortest side <= {cfg.short_side}px"
    )
