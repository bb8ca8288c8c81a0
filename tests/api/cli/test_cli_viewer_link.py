"""``folio context`` prints each item's viewer link (issue 45, item 5): the item's ``viewer_url``, with its lines,
on the server's viewer when the package came from one, else relative; a package saved before links has none."""

from __future__ import annotations

from folio.api.cli.query import format_package
from folio.assembly import AssemblyOptions, assemble
from folio.kernel.index import RegionIndex
from tests.assembly.builders import by_kind, hit, make_doc


def _package() -> dict[str, object]:
    regs = make_doc("policy", [("Deadlines", [["The deadline is 15 minutes.", "Escalate after an hour."]])])
    sentence = by_kind(regs, "sentence")[0]
    pkg = assemble("deadline", [hit(sentence, 0.9, 1)], RegionIndex(regs), AssemblyOptions())
    return pkg.model_dump(mode="json")


def test_context_prints_each_items_viewer_link() -> None:
    pkg = _package()
    items = pkg["items"]
    assert isinstance(items, list) and items
    links = [it["viewer_url"] for it in items]
    assert all("&lines=" in u for u in links)
    shown = format_package(pkg, prompt=False).splitlines()
    assert [ln.strip() for ln in shown if ln.strip().startswith("viewer:")] == [f"viewer: {u}" for u in links]
    remote = format_package(pkg, prompt=False, server="http://127.0.0.1:8765")
    assert f"        viewer: http://127.0.0.1:8765{links[0]}" in remote.splitlines()
    old = {**pkg, "items": [{k: v for k, v in it.items() if k != "viewer_url"} for it in items]}
    assert "viewer:" not in format_package(old, prompt=False)
