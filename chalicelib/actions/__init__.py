"""The route table: (service, operation name) -> action function.

Each API family module registers its actions with ``@action``; the table is filled on first use
(importing every family module), not at import time of the app.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from chalicelib.context import RequestContext

Action = Callable[[RequestContext, dict[str, Any]], dict[str, Any]]

_FAMILIES = ("databases", "tables", "table_versions", "partition_reads", "partition_writes",
             "partition_indexes", "statistics", "search", "transactions", "table_objects",
             "user_functions", "connections", "tags", "catalog_settings")
_ROUTES: dict[tuple[str, str], Action] = {}
_loaded = False


def action(service: str, operation: str) -> Callable[[Action], Action]:
    """Register the decorated function as the handler of ``service``'s ``operation``."""

    def register(fn: Action) -> Action:
        _ROUTES[(service, operation)] = fn
        return fn

    return register


def lookup(service: str, operation: str) -> Action | None:
    """The action for an operation, or None when this service does not implement it."""
    global _loaded
    if not _loaded:
        for family in _FAMILIES:
            importlib.import_module(f"{__name__}.{family}")
        _loaded = True
    return _ROUTES.get((service, operation))


def implemented() -> list[tuple[str, str]]:
    """Every (service, operation) served, for docs and tests."""
    lookup("glue", "")
    return sorted(_ROUTES)
