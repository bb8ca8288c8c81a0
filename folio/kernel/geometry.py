"""Geometry: ``BBox``, the one rectangle type of folio's domain, and its operations.

Coordinates are part of the type (``COORD_CONVENTION`` in ``folio.kernel.model``): PDF points, origin at the
top-left of the page as displayed, y downward. The parser works on plain ``(x0, y0, x1, y1)`` tuples and
PyMuPDF rectangles while it reads a page, and turns them into ``BBox`` values when it builds regions; the
client has its own ``folio.models.BBox`` (the same JSON shape) so that it needs none of the server.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict


class BBox(BaseModel):
    """A rectangle on a page in PDF points (1/72 inch), origin at the top-left corner of the page as
    displayed (the CropBox with the page rotation applied), x to the right, y downward, so
    ``x0 <= x1`` and ``y0 <= y1``. Every rectangle folio returns has this one JSON shape,
    ``{"x0", "y0", "x1", "y1"}``; a viewer that renders the page at ``scale`` pixels per point
    draws ``bbox * scale``."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", json_schema_extra={"x-coord-origin": "TOPLEFT", "x-units": "pt"}
    )

    # The convention belongs to the type, not to each value (docling-core's ``CoordOrigin``): PDF
    # space (origin bottom-left) is turned into this at parse time, and nothing else is stored.
    coord_origin: ClassVar[Literal["TOPLEFT"]] = "TOPLEFT"
    units: ClassVar[Literal["pt"]] = "pt"

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        return max(0.0, self.width) * max(0.0, self.height)

    def union(self, other: BBox) -> BBox:
        return BBox(
            x0=min(self.x0, other.x0),
            y0=min(self.y0, other.y0),
            x1=max(self.x1, other.x1),
            y1=max(self.y1, other.y1),
        )

    def intersection_area(self, other: BBox) -> float:
        w = min(self.x1, other.x1) - max(self.x0, other.x0)
        h = min(self.y1, other.y1) - max(self.y0, other.y0)
        return max(0.0, w) * max(0.0, h)

    def as_list(self) -> list[float]:
        return [self.x0, self.y0, self.x1, self.y1]

    @classmethod
    def from_seq(cls, seq: tuple[float, float, float, float] | list[float]) -> BBox:
        x0, y0, x1, y1 = (float(v) for v in seq)
        return cls(x0=x0, y0=y0, x1=x1, y1=y1)
