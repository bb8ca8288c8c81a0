"""Packing: the candidates, in priority order, fitted into the evidence room.

Packing rule: *skip, don't split*. Every candidate (``candidates``: a unit with its body, citation id,
open line and exact cost) is offered the room in priority order; what does not fit whole may go as a
smaller representation instead of being dropped. The modules, by what they hold:

- ``candidates``: ``Cand``, its citation id and costs, and its smaller forms (a fallback rung, a
  structural truncation, a growth step), with ``drop_repeats`` for a text already in a packed item;
- ``fallback``: the fallback ladder, a unit's smaller representations, largest first;
- ``greedy`` (the default): each candidate if it still fits, else its largest rung that does;
- ``breadth``: one budget-independent plan of small forms and their growth (a larger budget never covers
  fewer pages);
- ``monotone``: entry budgets, so that a larger budget never drops an item;
- ``nesting``: greedy packing that keeps the pages the package at half the budget carries;
- ``leftover``: structural truncation of what was left out, into what is left;
- ``compress``: the compressed tail (``compress="extractive"`` or ``"llm"``), greedy packing only.
"""
