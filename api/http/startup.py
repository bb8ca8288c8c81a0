"""A server's start-up, liveness apart from readiness (``GET /v1/health`` and ``GET /v1/ready``).

``folio serve`` opens its port at once and loads the store, the models and the query worker processes in the
background: ``/v1/health`` answers from the first moment with ``state`` (``starting``, then ``ready``; ``stopping``
on the way out; ``failed`` when loading failed and the server is leaving), and ``/v1/ready`` is a 503 until a
query will be fast, then a 200. Ready means: the service is open, its models are loaded and have answered one
warm-up query, and every query worker process has done the same (``api.http.app``'s lifespan,
``api.http.query_worker.init``). Routes that need the service answer 503 ``not_ready`` with ``Retry-After`` until
then. A container platform checks liveness with the one and readiness with the other; the command line says
"ready" on stdout when the state turns ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from folio.api.errors import NotReady

if TYPE_CHECKING:
    from folio.api.application import Folio

T = TypeVar("T")
State = Literal["starting", "ready", "stopping", "failed"]
RETRY_AFTER_S = 2


class Startup:
    """The state of one start of the app (``app.state.startup``), ``instance``: a random id for this start, which
    ``/v1/health`` reports and the server file (``api.cli.discovery``) names, and ``secret``: 256 random bits that
    only the server file (readable by its user alone) holds, and that ``/v1/health/proof`` proves without sending,
    so that a command asks this very server and not whatever a copied file or a later program on the port says."""

    def __init__(self) -> None:
        self.state: State = "starting"
        self.instance = secrets.token_hex(8)
        self.secret = secrets.token_hex(32)
        self._began = time.monotonic()
        self.ready_after_s: float | None = None
        self.error: str | None = None

    def ready(self) -> None:
        self.ready_after_s = round(time.monotonic() - self._began, 2)
        self.state = "ready"

    def failed(self, error: BaseException) -> None:
        self.error = f"{type(error).__name__}: {error}"
        self.state = "failed"

    def stopping(self) -> None:
        self.state = "stopping"

    def not_ready(self) -> NotReady:
        """The 503 a route answers while the service is not (or no longer) ready."""
        if self.state == "starting":
            waited = time.monotonic() - self._began
            return NotReady(
                f"folio is starting: loading the store and models ({waited:.0f} s so far); "
                f"GET /v1/ready answers 200 when queries are fast",
                retry_after=RETRY_AFTER_S,
            )
        if self.state == "failed":
            return NotReady(f"folio failed to start ({self.error}) and is stopping", retry_after=RETRY_AFTER_S)
        return NotReady("folio is stopping", retry_after=RETRY_AFTER_S)


def service(app_state: Any) -> Folio:
    """The app's ``Folio`` once it is ready; ``NotReady`` (503) before."""
    folio: Folio | None = getattr(app_state, "folio", None)
    startup: Startup = app_state.startup
    if folio is None:
        raise startup.not_ready()
    return folio


@dataclass(frozen=True)
class Hooks:
    """How an app starts (``create_app(hooks=...)``). By default it loads everything before it starts (tests,
    an app embedded elsewhere); ``folio serve`` loads in the ``background`` and is told when the app turns
    ready (``on_ready``: the "ready" line, the server file), when loading failed (``on_failed``: stop the
    server) and when it stops (``on_stop``: remove the server file)."""

    background: bool = False
    on_ready: Callable[[Startup], None] | None = None
    on_failed: Callable[[], None] | None = None
    on_stop: Callable[[], None] | None = None


async def in_daemon_thread(fn: Callable[[], T]) -> T:
    """``fn()`` on a daemon thread of its own. Loading the service takes seconds of imports and model
    loads that cannot be interrupted; on the loop's executor (non-daemon threads) a server stopped meanwhile
    would wait for them before it could exit. A daemon thread is abandoned at exit instead."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)  # type: ignore[arg-type]  # result is a T when error is None

    def run() -> None:
        try:
            result, error = fn(), None
        except BaseException as e:  # handed to the awaiting coroutine, which decides
            result, error = None, e
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits any more
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="folio-startup", daemon=True).start()
    return await done
