"""Pages of results within a response's byte budget: plain positions in, plain positions out
(the protocol turns a position into its NextToken)."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")

# A Lambda response is capped at 6 MB; stop filling a page well before that.
MAX_PAGE_BYTES = 4_500_000


def take_page(items: Iterable[T], limit: int, render: Callable[[T], Any],
              position: Callable[[T], Any], sized: bool = False) -> tuple[list[Any], Any]:
    """Render up to ``limit`` items (``render`` returns None to skip one) within the byte budget.

    With ``sized``, ``render`` returns (object, its JSON size) so nothing is serialized twice.
    Returns the page and the position to resume after, or None when the items ran out.
    """
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
    return page, None
