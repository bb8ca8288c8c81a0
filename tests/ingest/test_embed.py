"""The embedding backends: ONNX fp32 reproduces torch fp32, int8 stays close and ranks the same;
the process keeps one encoder per backend; queries always go through an fp32 backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from folio.ingest.embed import MiniLM, text_encoder
from folio.settings import EmbeddingSettings

TEXTS = [
    "Install the package with pip and run the tests.",
    "The FAA must receive comments on this proposed AD by September 21, 2020.",
    "Colour management converts between device colour spaces through ICC profiles.",
    "gnuplot plots functions and data in two and three dimensions.",
    "A P1 incident must be acknowledged within 30 minutes.",
    "Tables are read with read.table, CSV files with read.csv.",
    "Beamer frames hold the content of one slide.",
    "Why3 discharges verification conditions with external provers.",
    "Die Kernel-Entwicklung wird von Linus Torvalds koordiniert.",
    "x",
    "",
    "Reportlab draws text and graphics on a PDF canvas; platypus lays out flowables in frames and "
    "templates, splitting paragraphs and tables across pages. " * 6,
]
QUERIES = ["how do I read a CSV file", "when are comments due", "who coordinates kernel development"]


@pytest.fixture(scope="module")
def vectors() -> dict[str, np.ndarray]:
    return {b: text_encoder(b).encode(TEXTS + QUERIES) for b in ("torch", "onnx", "onnx-int8")}


def test_onnx_fp32_reproduces_torch(vectors: dict[str, np.ndarray]) -> None:
    cos = (vectors["torch"] * vectors["onnx"]).sum(1)
    assert cos.min() > 0.9999


def test_int8_is_close_to_fp32_and_ranks_the_same(vectors: dict[str, np.ndarray]) -> None:
    ref, q8 = vectors["torch"], vectors["onnx-int8"]
    cos = (ref * q8).sum(1)
    assert cos.mean() >= 0.98 and cos.min() >= 0.95
    assert np.allclose(np.linalg.norm(q8, axis=1), 1.0, atol=1e-4)
    docs_fp32, docs_int8 = ref[: len(TEXTS)], q8[: len(TEXTS)]
    queries = ref[len(TEXTS) :]  # queries are always encoded in fp32 (MiniLM.encode_queries)
    for q in queries:
        assert np.argsort(-(docs_fp32 @ q))[:3].tolist() == np.argsort(-(docs_int8 @ q))[:3].tolist()


def test_one_encoder_per_backend_per_process() -> None:
    assert text_encoder("onnx-int8") is text_encoder("onnx-int8")
    assert text_encoder("torch") is text_encoder("torch")


def test_backends_are_chosen_by_the_settings_handed_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOLIO_EMBED_BACKEND", "torch")
    assert MiniLM(settings=EmbeddingSettings()).document_backend == "torch"
    assert MiniLM().document_backend == "onnx-int8"  # none handed in: the defaults, not the environment
    monkeypatch.delenv("FOLIO_EMBED_BACKEND")
    assert MiniLM(settings=EmbeddingSettings()).document_backend == "onnx-int8"
    assert MiniLM().query_backend == "onnx"
    with pytest.raises(ValueError):
        MiniLM(query_backend="onnx-int8")  # stored fp32 vectors need fp32 queries
    with pytest.raises(ValueError):
        MiniLM(document_backend="tpu")


def test_query_vectors_are_fp32(vectors: dict[str, np.ndarray]) -> None:
    q = MiniLM().encode_queries(QUERIES)
    assert (q * vectors["torch"][len(TEXTS) :]).sum(1).min() > 0.9999


def test_query_tokenizer_gives_what_transformers_gives() -> None:
    """The ONNX encoders tokenize with ``tokenizers`` alone (no transformers, no torch on the query path);
    the ids, masks and type ids must be those of transformers' AutoTokenizer, which wrote every stored vector."""
    from transformers import AutoTokenizer

    from folio.ingest.embed import fast_tokenizer, minilm_path

    reference = AutoTokenizer.from_pretrained(minilm_path())
    fast = fast_tokenizer(minilm_path(), 256)
    odd = ["naïve café — résumé", "中文 テキスト 한국어", "tab\there\nnewline", "ﬁ ß ÀÉÎ", "word " * 400, " "]
    for batch in (TEXTS[:4], [t or " " for t in TEXTS], QUERIES, odd):
        want = reference(batch, padding=True, truncation=True, max_length=256, return_tensors="np")
        got = fast.encode_batch(batch)
        assert np.array_equal(want["input_ids"], np.array([e.ids for e in got]))
        assert np.array_equal(want["attention_mask"], np.array([e.attention_mask for e in got]))
        assert np.array_equal(want["token_type_ids"], np.array([e.type_ids for e in got]))


def test_quantizing_shows_no_advice_that_does_not_apply(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 34, item 6: ``folio demo`` printed ONNX Runtime's "consider pre-processing before quantization" on a
    machine's first run (the int8 graph is built then); folio quantizes the graph it measured, on purpose."""
    import logging

    from folio.ingest.embed import _quantize, onnx_model_file

    with caplog.at_level(logging.INFO):
        _quantize(onnx_model_file(quantized=False), tmp_path / "int8.onnx")
    assert (tmp_path / "int8.onnx").stat().st_size > 1_000_000
    assert not [r.getMessage() for r in caplog.records if "pre-processing" in r.getMessage()]


@pytest.mark.parametrize("quantized", [False, True])
def test_the_mapped_weights_give_the_same_vectors_to_the_bit(tmp_path: Path, quantized: bool) -> None:
    """Issue 34, item 2: a session opens on the model with its weights in a file of their own, which ONNX Runtime
    maps instead of copying (half the CPU time of a cold ``folio context``'s query encoder). The graph and the
    weights are those of the exported model, so every vector is the same, to the bit: stored ones and new ones."""
    import shutil

    import onnxruntime as ort

    from folio.ingest.embed import MAX_LENGTH, fast_tokenizer, mapped_model_file, minilm_path, onnx_model_file

    exported = tmp_path / "minilm.onnx"
    shutil.copy(onnx_model_file(quantized=quantized), exported)
    mapped = mapped_model_file(exported)
    assert mapped.name == "minilm.mapped.onnx" and (tmp_path / "minilm.mapped.data").stat().st_size > 1_000_000
    assert mapped.stat().st_size < 1_000_000 and mapped_model_file(exported) == mapped  # written once
    assert sorted(p.name for p in tmp_path.iterdir()) == ["minilm.mapped.data", "minilm.mapped.onnx", "minilm.onnx"]
    tokens = fast_tokenizer(minilm_path(), MAX_LENGTH)
    for batch in ([t or " " for t in TEXTS], QUERIES[:1]):
        encoded = tokens.encode_batch(batch)
        feed = {
            "input_ids": np.array([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encoded], dtype=np.int64),
        }
        want, got = (ort.InferenceSession(str(f), providers=["CPUExecutionProvider"]).run(None, feed)[0]
                     for f in (exported, mapped))
        assert want.tobytes() == got.tobytes()
