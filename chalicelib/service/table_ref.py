"""A table named by a request, in one catalog: what service calls about a table take."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TableRef:
    """A table by name, in one catalog: ``catalog_key`` partitions the store, ``catalog_id`` is
    what responses name."""

    catalog_key: str
    catalog_id: str
    database: str
    table: str
