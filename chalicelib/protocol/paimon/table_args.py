"""The table a ``/databases/{database}/tables/{table}/...`` path names, for the handler families
that act on one table (snapshots, tags, partitions, branches)."""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest
from chalicelib.service.table_ref import TableRef


def table_ref(request: PaimonRequest) -> TableRef:
    """The table of the path, in the caller's catalog (the name may carry ``$branch_<name>``);
    the service opens it once the caller may act on it."""
    ctx = request.context
    return TableRef(ctx.catalog_key({}), ctx.catalog_id({}), request.path["database"], request.path["table"])
