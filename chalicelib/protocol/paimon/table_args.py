"""The table a ``/databases/{database}/tables/{table}/...`` path names, for the handler families
that act on one table (snapshots, tags, partitions)."""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest
from chalicelib.service import paimon_snapshots
from chalicelib.service.table_ref import TableRef


def table_ref(request: PaimonRequest) -> TableRef:
    """The table of the path, in the caller's catalog (the name may carry ``$branch_<name>``)."""
    ctx = request.context
    return TableRef(ctx.catalog_key({}), ctx.catalog_id({}), request.path["database"], request.path["table"])


def table_of(request: PaimonRequest) -> paimon_snapshots.TableBranch:
    """The Paimon table (and branch: ``t$branch_b``) the path names; 404 otherwise."""
    return paimon_snapshots.open_table(table_ref(request))
