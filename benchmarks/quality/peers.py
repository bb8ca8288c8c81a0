"""Peer retrieval pipelines for the quality evaluation, all on the same embedder and tokenizer as folio.

Every peer reads the same document text: PyMuPDF ``page.get_text()`` per page, one document per page
with its 1-based page number in the metadata, so every chunk a peer returns carries exactly one page.
Every peer embeds with folio's MiniLM (``ingest.embed.default_text_encoder``) through
:class:`CachedEncoder`, which keeps vectors on disk keyed by ``sha1(text)`` so reruns do not re-embed.

A peer is built once per document (queries are restricted to their document, as folio's are) and
answers ``query(doc_key, question, k)`` with its natural output: the texts it would concatenate into
the prompt, in its own order, each with its page.

Peers:

* ``raw-chunks``: fixed 250-word chunks (25-word overlap, within a page, the page's own spacing), cosine top-k.
* ``bm25-pages``: whole pages scored as ``rank_bm25.BM25Okapi`` does (k1=1.5, b=0.75), written here in numpy.
* ``li-sentence-window``: LlamaIndex ``SentenceWindowNodeParser`` (window_size=3) + ``VectorStoreIndex``
  + ``MetadataReplacementPostProcessor``.
* ``li-auto-merging``: LlamaIndex ``HierarchicalNodeParser`` ([1024, 512, 128] tokens) +
  ``AutoMergingRetriever``.
* ``lc-parent-document``: LangChain ``ParentDocumentRetriever`` (children 400 chars, parents 2000 chars,
  ``InMemoryStore``, ``InMemoryVectorStore``; 3k children searched so that k parents come back).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from folio.retrieval.channels.pagewords import page_tokens

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PeerItem:
    """One unit a peer would put in the prompt."""

    text: str
    pages: tuple[int, ...]
    score: float


class Peer(Protocol):
    name: str
    # False where the top-k output is not a prefix of the top-(k+1) output (auto-merging): such a peer
    # is asked for each k in ``AUTO_KS`` until its output fills the budget (see ``peer_packages``).
    prefix_consistent: bool

    def build(self, doc_key: str, pages: Sequence[str]) -> None: ...

    def query(self, doc_key: str, question: str, k: int) -> list[PeerItem]: ...


# --------------------------------------------------------------------------------------------------
# Shared embedder with an on-disk cache
# --------------------------------------------------------------------------------------------------


class CachedEncoder:
    """MiniLM vectors cached on disk in ``.npz`` shards keyed by ``sha1(text)``.

    Call :meth:`flush` after a batch of new texts; shards are append-only, so concurrent readers
    never see a half-written cache (each shard is written to a temp name and renamed).
    """

    def __init__(self, cache_dir: str | os.PathLike[str], encoder: Any | None = None) -> None:
        self.dir = Path(cache_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._encoder = encoder
        self._vecs: dict[str, np.ndarray] = {}
        self._pending: dict[str, np.ndarray] = {}
        for shard in sorted(self.dir.glob("emb-*.npz")):
            with np.load(shard) as z:
                for key, vec in zip(z["keys"], z["vecs"], strict=True):
                    self._vecs[str(key)] = vec
        self.name = "all-MiniLM-L6-v2"
        self.dim = 384
        self.encoded = 0

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from folio.ingest.embed import default_text_encoder

            self._encoder = default_text_encoder()
        return self._encoder

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()

    def encode(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self._vecs}.items())
        if missing:
            vecs = self.encoder.encode([t for _, t in missing])
            self.encoded += len(missing)
            for (k, _t), v in zip(missing, vecs, strict=True):
                self._vecs[k] = v
                self._pending[k] = v
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            out[i] = self._vecs[k]
        return out

    def flush(self) -> None:
        if not self._pending:
            return
        keys = np.array(list(self._pending))
        vecs = np.stack(list(self._pending.values())).astype(np.float32)
        name = hashlib.sha1("".join(keys.tolist()).encode()).hexdigest()[:16]
        tmp = self.dir / f"tmp-{name}.npz"
        np.savez(tmp, keys=keys, vecs=vecs)
        os.replace(tmp, self.dir / f"emb-{name}.npz")
        self._pending.clear()


def llama_embedding(enc: CachedEncoder) -> Any:
    """``enc`` as a LlamaIndex ``BaseEmbedding`` (sync and async paths both go through the cache)."""
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from pydantic import PrivateAttr

    class _MiniLM(BaseEmbedding):
        _enc: Any = PrivateAttr()

        def __init__(self, e: CachedEncoder) -> None:
            super().__init__(model_name=e.name, embed_batch_size=512)
            self._enc = e

        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in self._enc.encode([query])[0]]

        def _get_text_embedding(self, text: str) -> list[float]:
            return [float(x) for x in self._enc.encode([text])[0]]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in row] for row in self._enc.encode(texts)]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        async def _aget_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embedding(text)

    return _MiniLM(enc)


def langchain_embeddings(enc: CachedEncoder) -> Any:
    """``enc`` as a LangChain ``Embeddings``."""
    from langchain_core.embeddings import Embeddings

    class _MiniLM(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in row] for row in enc.encode(texts)]

        def embed_query(self, text: str) -> list[float]:
            return [float(x) for x in enc.encode([text])[0]]

    return _MiniLM()


def configure_llama_index(tokenizer: Any) -> None:
    """No LLM, folio's tokenizer for chunk sizes, nothing that could reach the network."""
    from llama_index.core import Settings

    Settings.llm = None  # LlamaIndex substitutes its MockLLM
    Settings.tokenizer = tokenizer.encode


# --------------------------------------------------------------------------------------------------
# Page text
# --------------------------------------------------------------------------------------------------


def page_texts(pdf_path: str | os.PathLike[str]) -> list[str]:
    """PyMuPDF text layer of every page (empty strings for image-only pages)."""
    import pymupdf

    with pymupdf.open(pdf_path) as doc:
        return [page.get_text() for page in doc]


# --------------------------------------------------------------------------------------------------
# Peers
# --------------------------------------------------------------------------------------------------


class RawChunks:
    """Fixed 250-word chunks with a 25-word overlap, each within one page, sent as the page's own text from
    the chunk's first word to its last (line breaks kept); cosine top-k with MiniLM."""

    name = "raw-chunks"
    prefix_consistent = True
    version = "2"  # 1: words joined by single spaces

    def __init__(self, enc: CachedEncoder, words: int = 250, overlap: int = 25) -> None:
        self.enc, self.words, self.overlap = enc, words, overlap
        self._docs: dict[str, tuple[list[PeerItem], np.ndarray]] = {}

    def build(self, doc_key: str, pages: Sequence[str]) -> None:
        chunks: list[PeerItem] = []
        step = self.words - self.overlap
        for pno, text in enumerate(pages, start=1):
            spans = [m.span() for m in re.finditer(r"\S+", text)]
            for start in range(0, max(len(spans) - self.overlap, 1), step):
                part = spans[start : start + self.words]
                if part:
                    chunks.append(PeerItem(text[part[0][0] : part[-1][1]], (pno,), 0.0))
        vecs = self.enc.encode([c.text for c in chunks]) if chunks else np.zeros((0, 384), np.float32)
        self.enc.flush()
        self._docs[doc_key] = (chunks, vecs)

    def query(self, doc_key: str, question: str, k: int) -> list[PeerItem]:
        chunks, vecs = self._docs[doc_key]
        if not chunks:
            return []
        scores = vecs @ self.enc.encode([question])[0]
        order = np.argsort(-scores, kind="stable")[:k]
        return [PeerItem(chunks[i].text, chunks[i].pages, float(scores[i])) for i in order]


# The page peer tokenizes as folio's whole-page lexical channel does (lower-cased words, CJK runs as
# character bigrams), so the two rankings differ only in what they rank and how they score.
bm25_tokens = page_tokens


class BM25Pages:
    """Okapi BM25 over whole pages as ``rank_bm25.BM25Okapi`` scores them (k1=1.5, b=0.75, idf
    ``log(N - n + 0.5) - log(n + 0.5)``, a negative idf replaced by 0.25 x the mean idf, query terms
    counted with repeats), written here in numpy; like ``BM25Okapi.get_top_n`` it ranks every page that has
    text (highest score first, ties in reverse page order), so zero-score pages fill what is left."""

    name = "bm25-pages"
    prefix_consistent = True
    version = "2"  # 1: Lucene idf and only pages with a positive score

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._docs: dict[str, tuple[list[str], list[Counter[str]], np.ndarray, dict[str, float]]] = {}

    def build(self, doc_key: str, pages: Sequence[str]) -> None:
        tfs = [Counter(bm25_tokens(t)) for t in pages]
        lens = np.array([sum(c.values()) for c in tfs], dtype=np.float64)
        df: Counter[str] = Counter()
        for c in tfs:
            df.update(c.keys())
        n = len(pages)
        idf = {t: math.log(n - d + 0.5) - math.log(d + 0.5) for t, d in df.items()}
        floor = self.epsilon * (sum(idf.values()) / len(idf)) if idf else 0.0
        idf = {t: v if v >= 0 else floor for t, v in idf.items()}
        self._docs[doc_key] = (list(pages), tfs, lens, idf)

    def query(self, doc_key: str, question: str, k: int) -> list[PeerItem]:
        pages, tfs, lens, idf = self._docs[doc_key]
        avg = float(lens.mean()) if len(lens) and lens.mean() > 0 else 1.0
        scores = np.zeros(len(pages))
        for term in bm25_tokens(question):
            if term not in idf:
                continue
            tf = np.array([c.get(term, 0) for c in tfs], dtype=np.float64)
            scores += idf[term] * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * lens / avg))
        order = [i for i in np.argsort(scores)[::-1] if pages[i].strip()][:k]
        return [PeerItem(pages[i], (int(i) + 1,), float(scores[i])) for i in order]


def _llama_documents(pages: Sequence[str]) -> list[Any]:
    from llama_index.core import Document

    docs = []
    for pno, text in enumerate(pages, start=1):
        if not text.strip():
            continue
        d = Document(text=text, metadata={"page": pno})
        # Keep the page number out of what is embedded and what the LLM would see.
        d.excluded_embed_metadata_keys = ["page"]
        d.excluded_llm_metadata_keys = ["page"]
        docs.append(d)
    return docs


def _node_item(nws: Any, text: str) -> PeerItem:
    return PeerItem(text, (int(nws.node.metadata["page"]),), float(nws.score or 0.0))


class LlamaSentenceWindow:
    """LlamaIndex sentence-window retrieval: embed sentences, send the ±window_size sentence window."""

    name = "li-sentence-window"
    prefix_consistent = True

    def __init__(self, enc: CachedEncoder, window_size: int = 3) -> None:
        self.embed = llama_embedding(enc)
        self.enc = enc
        self.window_size = window_size
        self._idx: dict[str, Any] = {}

    def build(self, doc_key: str, pages: Sequence[str]) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.node_parser import SentenceWindowNodeParser

        parser = SentenceWindowNodeParser.from_defaults(
            window_size=self.window_size,
            window_metadata_key="window",
            original_text_metadata_key="original_text",
        )
        nodes = parser.get_nodes_from_documents(_llama_documents(pages))
        self._idx[doc_key] = (
            VectorStoreIndex(nodes, embed_model=self.embed, show_progress=False) if nodes else None
        )
        self.enc.flush()

    def query(self, doc_key: str, question: str, k: int) -> list[PeerItem]:
        from llama_index.core.postprocessor import MetadataReplacementPostProcessor

        index = self._idx[doc_key]
        if index is None:
            return []
        nodes = index.as_retriever(similarity_top_k=k).retrieve(question)
        nodes = MetadataReplacementPostProcessor(target_metadata_key="window").postprocess_nodes(nodes)
        return [_node_item(n, n.node.get_content()) for n in nodes]


class LlamaAutoMerging:
    """LlamaIndex hierarchical chunks ([1024, 512, 128] tokens), leaves embedded, AutoMergingRetriever."""

    name = "li-auto-merging"
    prefix_consistent = False

    def __init__(self, enc: CachedEncoder, chunk_sizes: Sequence[int] = (1024, 512, 128)) -> None:
        self.embed = llama_embedding(enc)
        self.enc = enc
        self.chunk_sizes = list(chunk_sizes)
        self._idx: dict[str, Any] = {}

    def build(self, doc_key: str, pages: Sequence[str]) -> None:
        from llama_index.core import StorageContext, VectorStoreIndex
        from llama_index.core.node_parser import HierarchicalNodeParser, get_leaf_nodes

        parser = HierarchicalNodeParser.from_defaults(chunk_sizes=self.chunk_sizes)
        nodes = parser.get_nodes_from_documents(_llama_documents(pages))
        if not nodes:
            self._idx[doc_key] = None
            return
        storage = StorageContext.from_defaults()
        storage.docstore.add_documents(nodes)
        index = VectorStoreIndex(
            get_leaf_nodes(nodes), storage_context=storage, embed_model=self.embed, show_progress=False
        )
        self._idx[doc_key] = (index, storage)
        self.enc.flush()

    def query(self, doc_key: str, question: str, k: int) -> list[PeerItem]:
        from llama_index.core.retrievers import AutoMergingRetriever

        entry = self._idx[doc_key]
        if entry is None:
            return []
        index, storage = entry
        retriever = AutoMergingRetriever(index.as_retriever(similarity_top_k=k), storage, verbose=False)
        return [_node_item(n, n.node.get_content()) for n in retriever.retrieve(question)]


class LangChainParentDocument:
    """LangChain ParentDocumentRetriever: 400-char children embedded, 2000-char parents returned."""

    name = "lc-parent-document"
    prefix_consistent = True

    def __init__(self, enc: CachedEncoder, child_chars: int = 400, parent_chars: int = 2000) -> None:
        self.embeddings = langchain_embeddings(enc)
        self.enc = enc
        self.child_chars, self.parent_chars = child_chars, parent_chars
        self._ret: dict[str, Any] = {}

    def build(self, doc_key: str, pages: Sequence[str]) -> None:
        from langchain_classic.retrievers import ParentDocumentRetriever
        from langchain_core.documents import Document
        from langchain_core.stores import InMemoryStore
        from langchain_core.vectorstores import InMemoryVectorStore
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        retriever = ParentDocumentRetriever(
            vectorstore=InMemoryVectorStore(self.embeddings),
            docstore=InMemoryStore(),
            child_splitter=RecursiveCharacterTextSplitter(chunk_size=self.child_chars, chunk_overlap=40),
            parent_splitter=RecursiveCharacterTextSplitter(chunk_size=self.parent_chars, chunk_overlap=200),
        )
        docs = [
            Document(page_content=t, metadata={"page": p}) for p, t in enumerate(pages, start=1) if t.strip()
        ]
        if docs:
            retriever.add_documents(docs)
        self._ret[doc_key] = retriever if docs else None
        self.enc.flush()

    def query(self, doc_key: str, question: str, k: int) -> list[PeerItem]:
        retriever = self._ret[doc_key]
        if retriever is None:
            return []
        # Parents come back in the order of their best child; search enough children for k parents.
        retriever.search_kwargs = {"k": 3 * k}
        parents = retriever.invoke(question)[:k]
        return [PeerItem(d.page_content, (int(d.metadata["page"]),), 0.0) for d in parents]


def make_peers(enc: CachedEncoder, tokenizer: Any, names: Sequence[str] | None = None) -> list[Peer]:
    configure_llama_index(tokenizer)
    factories: dict[str, Any] = {
        "raw-chunks": lambda: RawChunks(enc),
        "bm25-pages": lambda: BM25Pages(),
        "li-sentence-window": lambda: LlamaSentenceWindow(enc),
        "li-auto-merging": lambda: LlamaAutoMerging(enc),
        "lc-parent-document": lambda: LangChainParentDocument(enc),
    }
    chosen = list(names) if names else list(factories)
    return [factories[n]() for n in chosen]


# --------------------------------------------------------------------------------------------------
# Packing a peer's output into a budget, as the final check does
# --------------------------------------------------------------------------------------------------

PEER_MAX_K = 64  # the most units a peer is asked for
AUTO_KS = (8, 12, 16, 24, 32, 48, 64)  # k tried in turn for a peer whose output is not prefix-consistent
NATURAL_K = 8  # "natural" output: what the peer returns at k=8 (the old harness's k), uncut
RECALL_K = 10
SEP = "\n\n"  # units are joined by a blank line, with no citation headers


def pack_units(tok: Any, texts: Sequence[str], budget: int, head: str = "") -> tuple[str, int, int]:
    """Units in rank order until ``budget`` is spent: ``(string sent, its tokens, units with text in it)``.

    The string sent is ``head`` (the question and a blank line) followed by the units joined by a blank
    line (no citation headers). A unit goes in whole while the exact string sent stays within the budget;
    the first that does not fit is cut to the tokens left (a token prefix, as naive pipelines cut) and ends
    the package. Tokens are counted over the exact string sent, which never exceeds ``budget`` (trimmed if
    a cut would). A unit counts as packed once any of its text is in the string.
    """
    parts, used = pack_parts(tok, texts, budget, head)
    return head + SEP.join(parts), used, len(parts)


def pack_parts(tok: Any, texts: Sequence[str], budget: int, head: str = "") -> tuple[list[str], int]:
    """``pack_units``' units as sent, one string per packed unit in rank order (the last one perhaps cut),
    and the tokens of the whole string sent."""
    from benchmarks.quality.metrics import truncate_to_tokens

    parts: list[str] = []
    for t in texts:
        if int(tok.count(head + SEP.join([*parts, t]))) <= budget:
            parts.append(t)
            continue
        left = budget - int(tok.count(head + "".join(p + SEP for p in parts)))
        cut = truncate_to_tokens(tok, t, left)
        if cut:
            parts.append(cut)
        break
    sent = head + SEP.join(parts)
    while parts and int(tok.count(sent)) > budget:  # decode/encode at a cut can add a token
        last = parts.pop()
        shorter = truncate_to_tokens(tok, last, int(tok.count(last)) - 1)
        if shorter:
            parts.append(shorter)
        sent = head + SEP.join(parts)
    return parts, int(tok.count(sent))


def _fills(tok: Any, items: Sequence[PeerItem], budget: int, head: str) -> bool:
    return int(tok.count(head + SEP.join(it.text for it in items))) >= budget


@dataclass(frozen=True)
class PeerAsk:
    """One question put to a peer: the document it is asked of (its key, the bytes' hash), the question, and
    ``head``, what the string sent starts with (``peer_runs.peer_head``: the question, or nothing)."""

    doc_key: str
    question: str
    head: str = ""


def peer_packages(peer: Peer, ask: PeerAsk, tok: Any, budgets: Sequence[int]) -> dict[int, dict[str, Any]]:
    """What ``peer`` sends for ``ask`` at each budget (see :func:`pack_units`).

    A prefix-consistent peer's top-64 output is packed at every budget. Any other peer is asked for the
    smallest k in :data:`AUTO_KS` whose output fills the budget (k=64 when none does)."""
    import time

    doc_key, question, head = ask.doc_key, ask.question, ask.head

    outputs: dict[int, list[PeerItem]] = {}

    def output(k: int) -> list[PeerItem]:
        if k not in outputs:
            outputs[k] = peer.query(doc_key, question, k)
        return outputs[k]

    t = time.perf_counter()
    top = output(PEER_MAX_K)
    lat = time.perf_counter() - t
    consistent = getattr(peer, "prefix_consistent", True)
    natural_items = top[:NATURAL_K] if consistent else output(NATURAL_K)
    natural = int(tok.count(head + SEP.join(it.text for it in natural_items)))
    ranked = top[:RECALL_K] if consistent else output(RECALL_K)
    out: dict[int, dict[str, Any]] = {}
    for b in budgets:
        k = PEER_MAX_K
        if not consistent:
            k = next((k for k in AUTO_KS if _fills(tok, output(k), b, head)), PEER_MAX_K)
        items = output(k)[:k]
        parts, used = pack_parts(tok, [it.text for it in items], b, head)
        units = [[list(it.pages), part] for it, part in zip(items, parts, strict=False) if part]
        out[b] = {
            "text": head + SEP.join(parts),
            "tokens": used,
            "item_pages": [pages for pages, _ in units],
            "units": units,
            "k": k,
            "natural_tokens": natural,
            "ranked_pages": [list(it.pages) for it in ranked],
            "latency_s": lat,
            "question_tokens": int(tok.count(question + SEP)),
        }
    return out


class PeerRecordCache:
    """Peer packages on disk, one gzip JSON file per peer, keyed by question, document bytes, budget and
    harness version (peers do not change between folio runs, so a rerun reuses them)."""

    def __init__(self, path: str | os.PathLike[str], version: str) -> None:
        import gzip
        import json

        self.path = Path(path)
        self.version = version
        self.entries: dict[str, dict[str, Any]] = {}
        self.dirty = False
        if self.path.exists():
            try:
                self.entries = json.loads(gzip.decompress(self.path.read_bytes()))
            except (OSError, ValueError, EOFError):
                logger.warning("peer cache %s unreadable; starting empty", self.path)

    def key(self, qid: str, question: str, file_sha: str, budget: int, head_mode: str) -> str:
        qh = hashlib.sha1(question.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        return f"{self.version}|{qid}|{qh}|{file_sha}|{budget}|{head_mode}"

    def get(self, key: str) -> dict[str, Any] | None:
        return self.entries.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        self.entries[key] = value
        self.dirty = True

    def save(self) -> None:
        import gzip
        import json

        if not self.dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_bytes(gzip.compress(json.dumps(self.entries).encode("utf-8"), mtime=0))
        os.replace(tmp, self.path)
        self.dirty = False
