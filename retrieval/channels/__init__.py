"""Retrieval channels: each ranked list that fusion combines, registered with all the retriever needs to know.

A channel answers one question, "which stored units of this scope match the query, best first?", in its
own way. Its registration (``ChannelSpec``, added with ``register``: ``channels/base.py``) says how it is opened
(from the store, the shared text retriever and its keyword options of ``Retriever``, with their defaults), which
strategies run it, how the settings turn it on (``from_settings``: its model and status entry), what writes its
table at ingest (``indexer``), its status entry while it is off and whether it reads text (``text``: a page only
text channels found goes to the prompt as text; the api hands ``text_channels()`` to assembly in its options).
The channel itself has a name, the table its query reads, its weight in fusion, a query (``search``), a cache
to forget (``clear``) and a status entry. ``CHANNELS`` holds the registrations in the order their lists are
built: ColPali also rescores the pages the lists before it found, and the page references add the other lists'
candidates on the named pages. The retriever (``retrieval.search``) opens every registered channel and runs a
strategy's in this order, then fuses, applies quotas and reranks; it names none of them.

=============  =======================================  ===========  =========================================
channel        model or method                          table        ingest-side indexer
=============  =======================================  ===========  =========================================
``bm25``       LanceDB's full-text index                ``chunks``   ``ingest.pipeline.ChunkIndexer`` (always)
``dense``      the text encoder (MiniLM)                ``chunks``   ``ingest.pipeline.ChunkIndexer`` (always)
               (and without the document's own name:
               ``channels.scopenames``)
``clip``       an open_clip model (optional)            ``figures``  ``ClipFigureIndexer``
``colpali``    a colpali-engine model (optional)        ``pages``    ``ColPaliPageIndexer``
``pagelex``    BM25 over whole page texts               ``regions``  none: reads the page regions
``statement``  pages headed by a statement's title      ``regions``  none: reads the page regions
``pageref``    the pages the question names             ``regions``  none: reads the page regions
``labelref``   the tables and figures it names          ``regions``  none: reads the regions
=============  =======================================  ===========  =========================================

The lexical channels (``bm25``, ``pagelex``) search the question followed by the line items of the financial
metrics it names (``ChannelQuery.lexical``, ``retrieval.routing.glossary``); ``statement`` adds a list only when
the question names or needs a financial statement, ``pageref`` and ``labelref`` only when it names a page or a
numbered object (``hybrid`` and ``summary`` only).

The text channels' indexer runs in every ingest, before the others (``ingest`` never imports
``retrieval``; the other indexers are handed to it, ``retrieval.visual.indexers_from_settings``).

**A new channel is one new module**, as LanceDB keeps one file per reranker over a base module: a class with
the ``Channel`` members and one ``register(ChannelSpec(...))`` at the bottom of its module, under
``retrieval/channels/`` (its adapter, its opener and its registration together, over ``channels.base``). A
module registers when it is imported: the built-in channels are imported below, in the order their lists are
built (registration order is fusion order, and it breaks ties), so a new built-in channel is one module plus
one line here; a channel from elsewhere (a test's toy channel, ``tests/retrieval/toy_channel.py``) registers by
being imported before the retriever opens, and ``unregister`` takes it out again. ``scopenames`` (the dense
channel's document names) and ``maxsim`` (ColPali's scoring) are helpers of one channel each, not channels.
"""

# The built-in channels, imported to register, in registration order (fusion order: keep it, isort must not sort).
# isort: off
from folio.retrieval.channels import bm25  # noqa: F401
from folio.retrieval.channels import dense  # noqa: F401
from folio.retrieval.channels import clip  # noqa: F401
from folio.retrieval.channels import colpali  # noqa: F401
from folio.retrieval.channels import pagelex  # noqa: F401
from folio.retrieval.channels import statement  # noqa: F401
from folio.retrieval.channels import pageref  # noqa: F401
from folio.retrieval.channels import labelref  # noqa: F401
# isort: on
