"""An independent recount of a package's rendered prompt with the raw tokenizer (no assembly cache).

Rule (assembly.prompt): each text part / system string tokenized on its own; 3 tokens + role tokens
per message (the Anthropic system string counts as a "system" message); 3 for reply priming; image
parts cost the items' formula tokens.
"""

from __future__ import annotations

from folio.assembly import ContextPackage
from folio.kernel.tokens import get_tokenizer


def recount(pkg: ContextPackage) -> int:
    tok = get_tokenizer(pkg.budget.tokenizer)
    msgs = pkg.prompt.messages
    if not msgs:
        return 0
    total = 3
    if pkg.prompt.system is not None:
        total += 3 + len(tok.encode("system")) + len(tok.encode(pkg.prompt.system))
    for m in msgs:
        total += 3 + len(tok.encode(m["role"]))
        c = m["content"]
        if isinstance(c, str):
            total += len(tok.encode(c))
        else:
            total += sum(len(tok.encode(p["text"])) for p in c if p["type"] == "text")
    n_images = sum(1 for m in msgs if not isinstance(m["content"], str)
                   for p in m["content"] if p["type"] in ("image_url", "image"))
    assert n_images == sum(1 for i in pkg.items if i.image_url)
    return total + sum(i.image_tokens for i in pkg.items)
