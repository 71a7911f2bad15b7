"""How much a reader wants of a key-range read: the service says how many items it means to
return, the store sizes DynamoDB's pages from it."""

from __future__ import annotations

from typing import Optional


class Demand:
    """How many items a reader of :func:`query_key_range` means to *return*, and how many it
    has kept so far (it calls :meth:`keep` for each item it keeps after its own filtering).
    Each DynamoDB page is sized from what is still wanted and the share of items read so far
    that were kept: a reader that keeps every item gets pages of just what it needs (DynamoDB
    reads, and charges, a whole page even if the reader stops half-way); one that keeps none
    gets DynamoDB's full 1 MB pages, since each Query has a fixed cost and small pages would
    multiply it (a scan of 100k items in pages of 100 items took 1,000 Queries)."""

    __slots__ = ("wanted", "kept")

    def __init__(self, wanted: int) -> None:
        self.wanted = wanted
        self.kept = 0

    def keep(self) -> None:
        """The reader kept one more item."""
        self.kept += 1

    def next_page(self, read: int, kept_before: int = 0) -> Optional[int]:
        """The Limit of the next DynamoDB page of a Query that has read ``read`` items so far,
        begun when the reader had kept ``kept_before`` (None: no Limit, 1 MB pages)."""
        need = max(self.wanted - self.kept, 1)
        kept = self.kept - kept_before
        if read == 0:
            return need
        if kept <= 0:
            return None
        # Expected items to read for the rest, at the share kept so far, with a margin so that
        # one more page is rarely needed just for the last few.
        return max(need, -(-need * read * 5 // (kept * 4)))
