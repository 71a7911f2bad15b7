"""A page read ahead on a worker thread from a guess, kept only once the guess is confirmed.

A GetPartitions served by an index reads the database and the table (to learn the table's uid
and index definitions) and only then queries the index: two round trips in a row before the one
that matters. When this process has served the same table before, it knows what those reads will
most likely say, so the index Query can start at once, on a worker thread, while the request's
own thread reads the database and the table. The page is used only if what that read returned
leads to exactly the Query the guess ran (same table incarnation, same index, same key ranges,
same rendering); otherwise it is thrown away and the page is read again from the fresh
definitions, as without a guess. A wrong guess thus costs one wasted Query, never a wrong answer.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable, Optional

from chalicelib import metrics
from chalicelib.lazy_pool import LazyPool

Page = tuple[list[str], Any]  # (partition JSON texts, position to resume after or None)

# Enough for the local server's concurrent requests; on Lambda one request runs at a time. When
# every worker is busy a read-ahead waits in the queue, and the request takes it back (below).
_WORKERS = 8
_executor = LazyPool(_WORKERS, "read-ahead")


def _counted(read: Callable[[Any], Page], position: Any) -> tuple[Page, tuple[int, int]]:
    # Items read and DynamoDB requests are counted per thread (chalicelib.metrics): bring this
    # thread's counts back to the request's.
    metrics.reset()
    try:
        return read(position), (metrics.items_read(), metrics.requests())
    finally:
        metrics.reset()


class ReadAhead:
    """``read(position)`` running on a worker thread for a guessed listing."""

    def __init__(self, read: Callable[[Any], Page], position: Any) -> None:
        self.position = position
        self._future: Optional[Future[tuple[Page, tuple[int, int]]]] = _executor().submit(_counted, read, position)

    def _collect(self) -> Optional[Page]:
        """The page read ahead (its items counted for this request), or None when it never
        started (then it never will). Raises what the read raised."""
        future, self._future = self._future, None
        if future is None or future.cancel():
            return None
        page, (items, requests) = future.result()
        metrics.add(items, requests)
        return page

    def abandon(self) -> None:
        """The guess was wrong: drop the page. A read under way is waited for, so no request
        leaves work behind it (and its items are still counted: DynamoDB read them)."""
        try:
            self._collect()
        except Exception:  # noqa: BLE001 - the wrong guess's failure is no failure of this request
            pass

    def page(self, position: Any, read: Callable[[Any], Page]) -> Page:
        """The page after ``position``: the one read ahead when it is for the same position,
        else (or when it never started) ``read(position)`` here."""
        if position == self.position:
            page = self._collect()
            if page is not None:
                return page
        else:
            self.abandon()
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
