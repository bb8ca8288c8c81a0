"""Breadth packing (``packing="breadth"``): breadth and depth in one budget-independent plan.

Each candidate has a small form (``_small_form``: its full form when that is small, else the largest
rung of its ladder within about ``excerpt_tokens``), then larger forms up to its full form, each at
most ``2 * excerpt_tokens`` larger than the one before (``_levels``). ``BreadthPlan`` interleaves the
small forms, in priority order, with the growth steps of the candidates already in (the strongest
first), so that the small forms take about ``breadth_share`` of the tokens. The package is the longest
prefix of that plan that fits the room (and the image cap); what is left grows the next candidate in
line as far as it fits. No growth step covers a page outside its candidate's small form.

The pages a package covers are therefore those of a prefix of one fixed plan, and the prefix only
grows with the budget: a larger budget never covers fewer pages (property-tested). Expansion caps do
not follow the room in this mode (``assembly.room``), so the candidates are the same at every budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from folio.assembly.packing.candidates import Cand, Fitting, drop_repeats, fallback, grow, truncate_table


def pack_breadth(packable: Sequence[Cand], room: int, fit: Fitting) -> int:
    """Breadth and depth in one budget-independent plan (``packing="breadth"``; see the module docstring).
    Returns the slack."""
    if room <= 0:
        return room
    o = fit.o
    forms = [(c, replace(c), f) for c in packable if (f := _small_form(c, fit)) is not None]
    img_cap = room if o.max_image_share is None else int(o.max_image_share * room)
    left, img_used = room, 0
    now: dict[int, Cand] = {}  # what each candidate in the package is sent as
    plan = BreadthPlan([f.cost for _, _, f in forms], o.breadth_share)
    levels: dict[int, list[Cand]] = {}
    while (step := plan.next()) is not None:
        k, growth = step
        c, full, f = forms[k]
        if growth:
            form = levels[k].pop(0)
        else:
            form = f
            levels[k] = _levels(c, full, f, 2 * o.excerpt_tokens, fit)
        extra = form.cost - (now[k].cost if k in now else 0)
        if extra > left or img_used - (now[k].image_tokens if k in now else 0) + form.image_tokens > img_cap:
            if plan.growing:  # what is left grows the next candidate in line as far as it fits
                j = plan.growing[0]
                g = grow(forms[j][1], now[j].cost + left, fit)
                if g is not None and g.cost > now[j].cost and _same_pages(g, forms[j][2]) \
                        and not now[j].image_tokens:
                    left -= g.cost - now[j].cost
                    now[j] = g
            break
        left -= extra
        img_used += form.image_tokens - (now[k].image_tokens if k in now else 0)
        now[k] = form
        plan.grown(k, form.cost - f.cost, bool(levels[k]))
    sent: list[tuple[Cand, str]] = []
    for k, (c, _, _) in enumerate(forms):
        if k in now:
            _adopt(c, now[k])
            if not c.image_tokens:
                drop_repeats(c, sent, 0, keep_pages=True)
    return left


class BreadthPlan:
    """The order of ``breadth`` packing, one step at a time: ``(candidate, grow)``. The next candidate's
    small form comes while the small forms hold at most ``share`` of the tokens so far; otherwise the
    strongest candidate already in that can still grow takes its next growth step. The caller reports
    each step's size (``grown``), so the order depends on the candidates alone, never on the budget.

    >>> p = BreadthPlan([100, 100, 100], 0.5)
    >>> steps = []
    >>> while (s := p.next()) is not None:
    ...     steps.append(s)
    ...     p.grown(s[0], 300 if s[1] else 0, not s[1] and s[0] != 1)
    >>> steps
    [(0, False), (0, True), (1, False), (2, False), (2, True)]
    """

    def __init__(self, small: Sequence[int], share: float) -> None:
        self.small, self.share = list(small), share
        self.breadth = self.depth = 0
        self.nxt = 0
        self.growing: list[int] = []  # candidates in that can still grow, strongest first
        self._last: tuple[int, bool] | None = None
        self._size: dict[int, int] = {}

    def next(self) -> tuple[int, bool] | None:
        if self.nxt < len(self.small) and (not self.growing or self.breadth * (1 - self.share)
                                          <= self.depth * self.share):
            self._last = (self.nxt, False)
            self.nxt += 1
        elif self.growing:
            self._last = (self.growing[0], True)
        else:
            self._last = None
        return self._last

    def grown(self, k: int, size: int, more: bool) -> None:
        """Step ``k`` was taken: the candidate is now ``size`` tokens over its small form, and ``more``
        says whether it can grow further."""
        assert self._last is not None and self._last[0] == k
        if self._last[1]:
            self.depth += size - self._size.get(k, 0)
        else:
            self.breadth += self.small[k]
        self._size[k] = size
        if more and k not in self.growing:
            self.growing.append(k)
            self.growing.sort()
        elif not more and k in self.growing:
            self.growing.remove(k)


def _levels(c: Cand, full: Cand, f: Cand, step: int, fit: Fitting) -> list[Cand]:
    """The forms of a candidate above its small form ``f``, each at most ``step`` tokens larger than the one
    before, ending with its full form; forms that would cover another page are left out."""
    if f is c or not _same_pages(full, f):
        return []
    out: list[Cand] = []
    size = f.cost
    while full.cost - size > step:
        g = grow(full, size + step, fit)
        if g is None or g.cost <= size or not _same_pages(g, f):
            break
        out.append(g)
        size = g.cost
    out.append(full)
    return out


def _same_pages(big: Cand, small: Cand) -> bool:
    return set(big.body.pages) <= set(small.body.pages)


def _small_form(c: Cand, fit: Fitting) -> Cand | None:
    """``c`` itself when its text fits ``excerpt_tokens`` (and it has no image), else a copy at the largest
    rung of its ladder within twice that (a page excerpt within once), or None when no rung fits. A table
    within twice that is its own small form (it has no smaller rung worth sending: ``truncate_table``
    only cuts a table that does not fit)."""
    excerpt = fit.o.excerpt_tokens
    if not c.image_tokens and c.text_tokens <= excerpt:
        return c
    g = replace(c)
    slack = 2 * excerpt + c.wrapper_tokens
    if c.unit.kind == "table":
        return c if not c.image_tokens and c.cost <= slack else truncate_table(g, slack, fit.count, fit.close_tokens,
                                                                                fit.ex.query_words)
    return g if fallback(g, slack, fit) else None


def _adopt(c: Cand, form: Cand) -> None:
    """Give ``c`` the representation ``form`` holds (``c`` itself: its full form) and include it."""
    if form is not c:
        for name in ("status", "body", "open", "image_url", "image_tokens", "cost", "text_tokens", "wrapper_tokens",
                     "fallback_from", "rung", "carried", "full_cost"):
            setattr(c, name, getattr(form, name))
    if c.status == "excluded_budget":  # the full form (a copy made before packing) or ``c`` itself
        c.status = "included"
