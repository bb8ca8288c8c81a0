#!/usr/bin/env bash
# Set up folio on a fresh machine: system packages (Tesseract OCR, Chromium for the browser test),
# then a virtual environment in .venv with folio and its dev tools. Idempotent; safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v tesseract >/dev/null 2>&1 || need_apt+=(tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-jpn)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if ((${#need_apt[@]})); then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "setup: installing ${need_apt[*]}" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
    else
        echo "setup: warning: missing ${need_apt[*]} (OCR of scans / browser test need them)" >&2
    fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# The distribution was named "folio" before issue 48 (now folio-context; the registry's folio is another project):
# an older setup of this clone left that editable install, whose files (the folio script) a later pip uninstall
# would take away. Remove it, and only it: a "folio" installed from elsewhere is left alone.
if .venv/bin/python -m pip show folio 2>/dev/null | grep -xF "Editable project location: $PWD" >/dev/null; then  # not -q: with pipefail, grep leaving early fails pip show
    .venv/bin/python -m pip uninstall -q -y folio
fi
# torch==2.13.0 resolves to the CPU wheel on these machines; docs/install.md says how to use another build.
# A large wheel (torch, PyMuPDF) can stall on a flaky registry connection: resume it and retry rather than fail.
.venv/bin/python -m pip install -q --retries 10 --resume-retries 20 -e ".[server,dev${FOLIO_EXTRAS:+,$FOLIO_EXTRAS}]"
echo "setup: ok ($(.venv/bin/python -c 'import torch, lancedb, pymupdf; print("torch", torch.__version__, "lancedb", lancedb.__version__, "pymupdf", pymupdf.VersionBind)'))" >&2
