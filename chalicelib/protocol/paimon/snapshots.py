"""Commits (guarded by table uuid and base snapshot), the latest snapshot, rollback."""

from __future__ import annotations

from typing import Any

from chalicelib.domain.paimon import names
from chalicelib.protocol.paimon.table_args import table_ref
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_snapshots as service


def commit_table(request: PaimonRequest) -> PaimonResponse:
    """CommitTableRequest -> CommitTableResponse: ``success`` false when the base snapshot is
    stale (pypaimon then re-reads the latest and retries), 404 for a table that is gone."""
    table_id = request.optional("tableId")
    base = request.optional("baseSnapshotUuid")
    snapshot = request.require("snapshot", dict)
    statistics = request.optional("statistics", list)
    table = table_ref(request)
    return PaimonResponse({"success": service.commit(table, table_id, base, snapshot, statistics)})


def load_snapshot(request: PaimonRequest) -> PaimonResponse:
    """GetTableSnapshotResponse: the latest snapshot with the table totals (404 SNAPSHOT before
    the first commit, which pypaimon reads as "no snapshot")."""
    return PaimonResponse({"snapshot": service.latest(table_ref(request))})


def rollback_table(request: PaimonRequest) -> PaimonResponse:
    """RollbackTableRequest: ``instant`` is {"type": "snapshot", "snapshotId": n} or
    {"type": "tag", "tagName": name}; ``fromSnapshot`` (optional) must be the latest id."""
    instant = request.require("instant", dict)
    from_snapshot = request.optional("fromSnapshot", int)
    kind = instant.get("type")
    snapshot_id: Any = None
    tag: Any = None
    if kind == "snapshot":
        snapshot_id = instant.get("snapshotId")
        if not isinstance(snapshot_id, int) or isinstance(snapshot_id, bool):
            raise bad_request("instant.snapshotId must be an integer")
    elif kind == "tag":
        tag = instant.get("tagName")
        if not isinstance(tag, str) or not tag:
            raise bad_request("instant.tagName must be a non-empty string")
        names.existing("tag", tag)
    else:
        raise bad_request(f"instant.type must be 'snapshot' or 'tag', not {kind!r}")
    service.rollback(table_ref(request), snapshot_id, tag, from_snapshot)
    return PaimonResponse()
