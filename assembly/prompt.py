"""The rendered prompt: citation contract, context blocks, question, and how it is counted.

Shape (OpenAI chat): a system message with the contract, then one user message whose content is a
list of parts. The default ``block_format="compact"`` opens a block with one line,
``[S1] manual.pdf p.12 | Priority incidents``, and ends it with a blank line; ``"tagged"`` uses the
attribute wrappers below (about 20 more tokens per block)::

    "CONTEXT\\n"
    '<block id="S1" type="text" source="manual.pdf p.12" section="Priority incidents">\\n'
    "...body..."
    "\\n</block>\\n"
    '<block id="F1" type="figure" source="manual.pdf p.14">\\n'   (then caption, then the image part)
    {"type": "image_url", "image_url": {"url": "/v1/regions/<id>/image", "detail": "high"}}
    "\\n</block>\\n"
    "\\nQUESTION\\n<the question>"

Anthropic shape: the contract goes to the top-level ``system`` string and image parts are
``{"type": "image", "source": {"type": "url", "url": ...}}``.

Counting rule (``count_prompt``), exact for this rendering: every text part and the system text are
tokenized separately with the real tokenizer, each image part costs its formula tokens, each message
costs ``MESSAGE_OVERHEAD`` (3) plus its role's tokens, and the reply priming costs ``REPLY_PRIMING``
(3) -- OpenAI's published accounting for chat messages. The Anthropic system string is charged like
a message. Because parts are tokenized separately, a block's cost does not depend on its neighbours,
which is what makes packing exact and order-independent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from folio.assembly.options import AssemblyOptions, BlockFormat
from folio.assembly.package import PromptOut
from folio.kernel.hit import Modality

MESSAGE_OVERHEAD = 3
REPLY_PRIMING = 3

CITATION_CONTRACT = """\
Answer only from the CONTEXT blocks; each starts with its id, e.g. [S1] (T: table, F: figure, P: page).
Cite every factual sentence with the id(s) supporting it, e.g. "The limit is 5 A [S2]." Never invent ids.
No outside knowledge; an image supports only what it shows.
If CONTEXT is insufficient, reply "Insufficient evidence." and ask one clarifying question."""

# The longer contract written for the tagged block format (``block_format="tagged"``).
TAGGED_CONTRACT = """\
You answer questions using ONLY the CONTEXT blocks in the user's message.
- Every block has an id such as [S1] (text), [T1] (table), [F1] (figure) or [P1] (page image).
- Cite each factual sentence with the id of the block that supports it, in square brackets, \
e.g. "The limit is 5 A [S2]." Use only ids that appear in CONTEXT; never invent ids or URLs.
- Do not use prior knowledge or fill gaps from memory. Images support only what they visibly show.
- If the CONTEXT is not enough to answer, reply "Insufficient evidence." and ask one clarifying question."""

REFUSAL_NOTE = (
    "CONTEXT\n(no evidence was found for this question in the documents)\n"
    "There are no context blocks. Do not answer from memory: reply \"Insufficient evidence.\" "
    "and ask one clarifying question.\n"
)
CONTEXT_HEADER = "CONTEXT\n"
BLOCK_CLOSE = "\n</block>\n"
COMPACT_CLOSE = "\n\n"


def _attr(v: str) -> str:
    return v.replace('"', "'").replace("\n", " ").strip()


def pages_label(pages: Sequence[int]) -> str:
    """``[12] -> "p.12"``, ``[12, 13] -> "pp.12-13"``, ``[3, 5] -> "pp.3,5"``."""
    if not pages:
        return ""
    if len(pages) == 1:
        return f"p.{pages[0]}"
    if list(pages) == list(range(pages[0], pages[-1] + 1)):
        return f"pp.{pages[0]}-{pages[-1]}"
    return "pp." + ",".join(str(p) for p in pages)


@dataclass(frozen=True)
class BlockSource:
    """Where a block's text comes from, as its open line names it: the file (empty: not named), the pages and
    the section."""

    filename: str
    pages: Sequence[int]
    section: str | None


def block_open(cid: str, modality: Modality, where: BlockSource, fmt: BlockFormat = "compact") -> str:
    """The line that opens a block: ``[S1] manual.pdf p.12 | Priority incidents`` (compact) or
    ``<block id="S1" type="text" source="manual.pdf p.12" section="Priority incidents">`` (tagged)."""
    filename, pages, section = where.filename, where.pages, where.section
    if fmt == "compact":
        sec = f" | {_attr(section)}" if section else ""
        src = f"{_attr(filename)} " if filename else ""
        return f"[{cid}] {src}{pages_label(pages)}{sec}\n"
    sec = f' section="{_attr(section)}"' if section else ""
    return f'<block id="{cid}" type="{modality}" source="{_attr(filename)} {pages_label(pages)}"{sec}>\n'


def block_close(fmt: BlockFormat = "compact") -> str:
    return COMPACT_CLOSE if fmt == "compact" else BLOCK_CLOSE


def question_part(query: str) -> str:
    return f"\nQUESTION\n{query}"


def system_text(options: AssemblyOptions) -> str:
    if options.system_prompt is not None:
        return options.system_prompt
    return CITATION_CONTRACT if options.block_format == "compact" else TAGGED_CONTRACT


@dataclass(frozen=True)
class Block:
    open: str
    body: str
    image_url: str | None


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def _image(options: AssemblyOptions, url: str) -> dict[str, Any]:
    if options.prompt_format == "anthropic":
        return {"type": "image", "source": {"type": "url", "url": url}}
    part: dict[str, Any] = {"type": "image_url", "image_url": {"url": url}}
    kind = options.image_tokens.kind
    if kind in ("tile", "fixed"):
        part["image_url"]["detail"] = "high" if kind == "tile" else "low"
    return part


def build_prompt(options: AssemblyOptions, query: str, blocks: Sequence[Block], refused: bool) -> PromptOut:
    fmt = options.prompt_format
    content: list[dict[str, Any]] = [_text(REFUSAL_NOTE if refused else CONTEXT_HEADER)]
    for b in blocks:
        content.append(_text(b.open))
        if b.body:
            content.append(_text(b.body))
        if b.image_url is not None:
            content.append(_image(options, b.image_url))
        content.append(_text(block_close(options.block_format)))
    content.append(_text(question_part(query)))
    system = system_text(options)
    user = {"role": "user", "content": content}
    if fmt == "anthropic":
        return PromptOut(format="anthropic", system=system, messages=[user])
    return PromptOut(format="openai", messages=[{"role": "system", "content": system}, user])


def message_overhead(count: Callable[[str], int], roles: Sequence[str]) -> int:
    return sum(MESSAGE_OVERHEAD + count(r) for r in roles) + REPLY_PRIMING


def count_prompt(prompt: PromptOut, count: Callable[[str], int], image_tokens: int) -> int:
    """Token count of a rendered prompt under the rule in the module docstring.

    ``image_tokens`` is the sum of the image parts' formula costs (a URL carries no pixel size).
    An empty prompt (no messages) costs 0.
    """
    if not prompt.messages:
        return 0
    roles = [str(m["role"]) for m in prompt.messages]
    total = 0
    if prompt.system is not None:
        roles.append("system")
        total += count(prompt.system)
    for m in prompt.messages:
        c = m["content"]
        if isinstance(c, str):
            total += count(c)
        else:
            total += sum(count(p["text"]) for p in c if p.get("type") == "text")
    return total + image_tokens + message_overhead(count, roles)
