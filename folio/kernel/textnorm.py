"""Text as the full-text index sees it: CJK runs split into overlapping character bigrams.

LanceDB's FTS tokenizer splits on whitespace and punctuation, so a Japanese or Chinese sentence,
written without spaces, becomes one giant token that no query matches. Indexing (and querying)
overlapping bigrams of every CJK run is the classic fix (Lucene's CJKBigramFilter does the same):
``採点パラメータ`` → ``採点 点パ パラ ラメ メー ータ``. Latin text passes through unchanged.
"""

from __future__ import annotations

import re

# Han, Hiragana, Katakana (incl. the prolonged sound mark), Hangul, CJK compatibility and half-width Katakana.
_CJK_RUN = re.compile(
    "[\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+"
)


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return run
    return " ".join(run[i : i + 2] for i in range(len(run) - 1))


def fts_text(text: str) -> str:
    """``text`` with every CJK run replaced by its space-separated bigrams.

    >>> fts_text("採点パラメータの設定 (scoring)")
    '採点 点パ パラ ラメ メー ータ タの の設 設定 (scoring)'
    >>> fts_text("plain English stays as it is")
    'plain English stays as it is'
    """
    if not _CJK_RUN.search(text):
        return text
    spaced = _CJK_RUN.sub(lambda m: f" {_bigrams(m.group(0))} ", text)
    return " ".join(spaced.split())
