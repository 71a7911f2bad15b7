"""TransactionId / QueryAsOfTime on Glue actions (governed tables).

Every Glue action whose request carries a TransactionId has it checked first: it must be one of
the caller's transactions and still usable (ACTIVE; READ_AND_WRITE for writes), with the same
exceptions Lake Formation uses. TransactionId and QueryAsOfTime exclude each other. Table
metadata itself is not versioned per transaction: a write with a TransactionId is applied at
once, and reads return the current definition — except GetTable / GetTables with QueryAsOfTime,
which return the table version that was current then (see ``table_as_of``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from chalicelib.context import RequestContext
from chalicelib.errors import EntityNotFoundException, InvalidInputException
from chalicelib.store import catalog
from chalicelib.store.models import TableItem

_WRITE_PREFIXES = ("Create", "Update", "Delete", "BatchCreate", "BatchUpdate", "BatchDelete")


def checking_transaction(operation: str, handler: Callable) -> Callable:
    """Wrap a Glue action so a TransactionId in its request is validated before it runs."""
    write = operation.startswith(_WRITE_PREFIXES)

    def run(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
        transaction_id = params.get("TransactionId")
        if transaction_id and params.get("QueryAsOfTime") is not None:
            raise InvalidInputException("TransactionId and QueryAsOfTime cannot both be specified")
        if transaction_id:
            from chalicelib.actions.transactions import load_transaction, require_active
            require_active(load_transaction(ctx, transaction_id), write=write)
        return handler(ctx, params)

    run.__doc__, run.__name__ = handler.__doc__, handler.__name__
    return run


def table_as_of(item: TableItem, when: Optional[float]) -> Optional[tuple[dict[str, Any], int]]:
    """(Table document, version) current at ``when`` (None: now): the newest version whose
    UpdateTime is not after it; None if the table did not exist yet (or that version was
    dropped with SkipArchive / DeleteTableVersion)."""
    doc = catalog.load(item)
    if when is None or doc.get("UpdateTime", 0) <= when:
        return doc, item.version
    for archived in catalog.query_archived_versions(item.uid, item.version, 100):
        old = catalog.load(archived)
        if old.get("UpdateTime", 0) <= when:
            return old, archived.version
    return None


def require_table_as_of(item: TableItem, when: Optional[float]) -> tuple[dict[str, Any], int]:
    """Like table_as_of, EntityNotFoundException when there is no such version."""
    found = table_as_of(item, when)
    if found is None:
        raise EntityNotFoundException(f"Table {item.name} did not exist at the requested QueryAsOfTime.")
    return found
