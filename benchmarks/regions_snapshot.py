"""Parse PDFs and write every region as one JSON line: the before/after check for parser refactors.

    .venv/bin/python benchmarks/regions_snapshot.py OUT.jsonl sample_pdfs/*.pdf
    diff <(...before...) <(...after...)

Each line holds what identifies and places a region (id, kind, text, parents, heading path, level,
seq, tokens, locators with bboxes and line boxes) and its kind-specific payload as the legacy
``meta`` key/value view, so a refactor that changes any of them shows up as a diff. Pages render
into a temporary folder (image pixel sizes are part of the payload); OCR runs when Tesseract is
installed, as in a normal ingest.
"""

from __future__ import annotations

import json
import pathlib
import sys
import tempfile


def snapshot(paths: list[str]) -> list[str]:
    from folio.ingest.pdf.parse import parse_pdf
    from folio.ingest.pipeline import doc_id_from_filename

    lines: list[str] = []
    for path in paths:
        p = pathlib.Path(path)
        with tempfile.TemporaryDirectory() as tmp:
            assets = pathlib.Path(tmp) / "assets"  # a fixed name: asset paths start with it
            parsed = parse_pdf(p.read_bytes(), doc_id=doc_id_from_filename(p.name), filename=p.name, assets_dir=assets)
        for r in parsed.regions:
            row = r.model_dump(mode="json", exclude={"meta", "payload"})
            row["meta"] = dict(r.meta)
            lines.append(json.dumps(row, ensure_ascii=False, sort_keys=True))
        for info in parsed.pages:
            lines.append(json.dumps({"page_info": info.model_dump(mode="json")}, sort_keys=True))
        lines.append(json.dumps({"warnings": parsed.warnings, "issues": [i.model_dump() for i in parsed.issues]}))
    return lines


if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1])
    out.write_text("\n".join(snapshot(sys.argv[2:])) + "\n", encoding="utf-8")
    print(f"{out}: {sum(1 for _ in out.open())} lines")
