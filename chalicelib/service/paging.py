"""Pages of results within a response's byte budget and a request's work budget: plain
positions in, plain positions out (the protocol turns a position into its NextToken)."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

from chalicelib import clock, work_budget

T = TypeVar("T")

# A Lambda response is capped at 6 MB; stop filling a page well before that.
MAX_PAGE_BYTES = 4_500_000


def work_deadline() -> float:
    """The monotonic time at which a listing starting now must stop examining items. A listing
    that has examined items for the work budget (chalicelib.work_budget) returns the page it has
    (perhaps empty) with a position to resume after the last item it examined, as Glue does on
    long scans: API Gateway cuts an integration at 29 s and boto3 stops reading at 60 s (then
    retries, from scratch). Clients' paginators follow the NextToken and see the same items."""
    return clock.monotonic() + work_budget.seconds()


def out_of_time(deadline: float) -> bool:
    """Whether a listing's work budget (``deadline``, from :func:`work_deadline`) is spent."""
    return clock.monotonic() >= deadline


def take_page(items: Iterable[T], limit: int, render: Callable[[T], Any],
              position: Callable[[T], Any], sized: bool = False,
              deadline: Optional[float] = None) -> tuple[list[Any], Any]:
    """Render up to ``limit`` items (``render`` returns None to skip one) within the byte budget
    and the work budget (``deadline``, monotonic; default: the work budget from now).

    With ``sized``, ``render`` returns (object, its JSON size) so nothing is serialized twice.
    Returns the page and the position to resume after, or None when the items ran out. Once the
    work budget is spent, the page so far (perhaps empty) and the position of the last item
    examined, rendered or skipped: at least one item is examined per call, so paging ends.
    """
    if deadline is None:
        deadline = work_deadline()
    page: list[Any] = []
    size = 0
    iterator: Iterator[T] = iter(items)
    last = None
    for item in iterator:
        rendered = render(item)
        if rendered is not None:
            if sized:
                rendered, item_size = rendered
                size += item_size
            else:
                size += len(json.dumps(rendered, separators=(",", ":"), default=str))
            if page and size > MAX_PAGE_BYTES:
                return page, last
            page.append(rendered)
        last = position(item)
        if len(page) >= limit:
            # Only hand out a token when something follows, so clients see a clean last page.
            return page, (last if next(iterator, None) is not None else None)
        if clock.monotonic() >= deadline:
            return page, last
    return page, None
