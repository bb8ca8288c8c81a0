"""A query worker process (``FOLIO_QUERY_PROCESSES``): its own ``Folio`` (store, retriever, tokenizers),
opened once when the process starts, and one entry point, ``call``.

One server process runs Python under one lock, so about 11 ms of Python per context request is its
ceiling however many query threads it has, and ``/v1/health`` waits for the event loop's turn
behind them. Worker processes run that Python on every core while the server process only parses
requests, checks keys and passes JSON along. They open the same store read-only and see each new
version on their next query (LanceDB reads with ``read_consistency_interval=0``); ingest jobs and
keys stay in the server process.

Errors cross back pickled: folio's own errors as themselves (so the API answers them as usual),
anything else as a ``RuntimeError`` with its text (a 500)."""

from __future__ import annotations

import gc
import logging
import os
import pickle
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from folio.api.application import Folio
    from folio.api.http.query_ops import Collections
    from folio.settings import Settings

log = logging.getLogger(__name__)

_FOLIO: Folio | None = None


def init(settings: Settings, parent: int) -> None:
    """The process pool's initializer: first watch the server process (``parent``), then load. What it loads
    lives as long as the process, so it leaves the garbage collector's scans (``gc.freeze``): a full
    collection over the models and store handles took about 175 ms, and it would land on whichever query
    was running."""
    global _FOLIO
    exit_with_parent(parent)
    # function-level: the store and models load after the watcher runs, so a worker whose server is stopped
    # while it loads (seconds of imports) leaves at once instead of after loading
    from folio.api.application import Folio

    _FOLIO = Folio.open(settings).warm()
    gc.collect()
    gc.freeze()


PARENT_CHECK_S = 0.5


def exit_with_parent(parent: int) -> None:
    """Leave when the server process ``parent`` is gone. A server stopped with SIGTERM (or killed, or crashed)
    left its workers running with PID 1 as their parent, each holding its models and store handle (the
    process pool's shutdown never reached them); a watcher thread ends the worker instead. ``parent`` comes
    from the server: a worker that starts after its server died has another parent from its first moment."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        log.info("query worker %d: the server process %d is gone; exiting", os.getpid(), parent)
        os._exit(0)

    threading.Thread(target=watch, name="folio-parent-watch", daemon=True).start()


def ready() -> int:
    """This worker's process id, once its initializer has run: the server asks every worker at startup,
    so that they start (and load their models) at once, and to know when all of them are ready."""
    if _FOLIO is None:
        raise RuntimeError("query worker not initialised")
    return os.getpid()


def call(op: str, req_json: str | bytes, collections: Collections) -> str:
    """Run query ``op`` (``api.http.query_ops.OPS``) on a request as JSON: one the server validated, or a
    large body it passed on unparsed (``api.http.offloop.ForwardedJSON``), which is validated here and,
    when its model refuses it, answered with the 422 the server would give (``InvalidBody``)."""
    if _FOLIO is None:
        raise RuntimeError("query worker not initialised")
    from pydantic import ValidationError

    from folio.api.errors import InvalidBody  # function-level: with the service (init), after the watcher
    from folio.api.http.query_ops import OPS  # function-level: as above

    model, fn = OPS[op]
    try:
        req = model.model_validate_json(req_json)
    except ValidationError as e:
        raise InvalidBody.of([{**err, "loc": ("body", *err["loc"])} for err in e.errors()], model) from None
    try:
        return fn(req, _FOLIO, collections)
    except Exception as e:
        raise portable(e) from None


def portable(e: Exception) -> Exception:
    """``e`` if it survives pickling (folio's errors do), else a ``RuntimeError`` with its text."""
    try:
        back = pickle.loads(pickle.dumps(e))
    except Exception:
        back = None
    if isinstance(back, type(e)) and str(back) == str(e):
        return e
    log.exception("query worker error")
    return RuntimeError(f"{type(e).__name__}: {e}")
