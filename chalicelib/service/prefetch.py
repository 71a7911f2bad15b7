"""A page read ahead under a guess, kept only once the guess is confirmed.

A GetPartitions served by an index reads the database and the table (to learn the table's uid
and index definitions) and only then queries the index: two round trips in a row before the one
that matters. When this process has served the same table before, it knows what those reads will
most likely say, so the index Query can start at once, on the request's own thread, while a
worker reads the database and the table afresh. The page is used only if what that read returned
leads to exactly the Query the guess ran (same table incarnation, same index, same key ranges,
same rendering); otherwise it is thrown away and the page is read again from the fresh
definitions, as without a guess. A wrong guess thus costs one wasted Query, never a wrong answer.

The Query is the request's own and the table read the worker's, not the other way round: the
Query is the longer of the two round trips, and a worker thread starts only once the request's
thread lets go of the interpreter, which in the other order held the Query back by about half a
millisecond of each call.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any, Callable, Generic, Optional, TypeVar

from chalicelib import metrics
from chalicelib.lazy_pool import LazyPool

log = logging.getLogger(__name__)

Page = tuple[list[str], Any]  # (partition JSON texts, position to resume after or None)
T = TypeVar("T")

# Enough for the local server's concurrent requests; on Lambda one request runs at a time. When
# every worker is busy a table read waits in the queue, and the request takes it back (below).
_WORKERS = 8
_executor = LazyPool(_WORKERS, "read-ahead")


def _counted(call: Callable[[], T]) -> tuple[T, tuple[int, int]]:
    # Items read and DynamoDB requests are counted per thread (chalicelib.metrics): bring this
    # thread's counts back to the request's.
    metrics.reset()
    try:
        return call(), (metrics.items_read(), metrics.requests())
    finally:
        metrics.reset()


class Background(Generic[T]):
    """``call()`` running on a worker thread while the request goes on."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._call = call
        self._future: Future[tuple[T, tuple[int, int]]] = _executor().submit(_counted, call)

    def result(self) -> T:
        """What ``call()`` returned (its reads counted for this request), or what it raised.
        Run here if no worker has started it yet."""
        if self._future.cancel():
            return self._call()
        value, (items, requests) = self._future.result()
        metrics.add(items, requests)
        return value


class ReadAhead:
    """``read(position)`` for a guessed listing, read at once on the request's thread."""

    def __init__(self, read: Callable[[Any], Page], position: Any) -> None:
        self.position = position
        self._page: Optional[Page]
        try:
            self._page = read(position)
        except Exception:  # noqa: BLE001 - a guess must never fail the request: read again if confirmed
            log.debug("read-ahead under a guess failed; the page is read again if needed", exc_info=True)
            self._page = None

    def page(self, position: Any, read: Callable[[Any], Page]) -> Page:
        """The page after ``position``: the one read ahead when it is for the same position,
        else (or when the read ahead failed) ``read(position)`` here."""
        page, self._page = self._page, None
        if page is not None and position == self.position:
            return page
        return read(position)


class ConfirmedListing:
    """A listing whose first page was read ahead under a guess that the fresh read confirmed:
    the same ``scope`` and ``page`` as ``listing``, the page taken from ``ahead`` when it fits."""

    def __init__(self, listing: Any, ahead: ReadAhead) -> None:
        self.listing = listing
        self.scope = listing.scope
        self._ahead = ahead

    def page(self, position: Any) -> Page:
        """As ``listing.page``."""
        return self._ahead.page(position, self.listing.page)
