"""Snapshots by version and as a list, consumers and their reset: the Java RESTCatalog's
history calls (``service.paimon_history``)."""

from __future__ import annotations

from chalicelib.protocol.paimon.paging import make_token, max_results, read_token
from chalicelib.protocol.paimon.table_args import table_ref
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_history as service


def get_snapshot(request: PaimonRequest) -> PaimonResponse:
    """GetVersionSnapshotResponse ``{snapshot}``: ``EARLIEST``, ``LATEST``, a snapshot id or a
    tag name (404 SNAPSHOT when there is none)."""
    return PaimonResponse({"snapshot": service.snapshot_at(table_ref(request), request.path["version"])})


def list_snapshots(request: PaimonRequest) -> PaimonResponse:
    """ListSnapshotsResponse ``{snapshots, nextPageToken}``, newest first, paged."""
    before = read_token(request)
    if before is not None and (not isinstance(before, int) or isinstance(before, bool)):
        raise bad_request("pageToken is malformed")
    found, last = service.list_snapshots(table_ref(request), before, max_results(request))
    return PaimonResponse({"snapshots": found, "nextPageToken": make_token(request, last)})


def list_consumers(request: PaimonRequest) -> PaimonResponse:
    """ListConsumersResponse ``{consumers: [{consumerId, nextSnapshot}], nextPageToken}`` (ConsumerInfo), paged."""
    after = read_token(request)
    if after is not None and not isinstance(after, str):
        raise bad_request("pageToken is malformed")
    found, last = service.list_consumers(table_ref(request), after, max_results(request))
    return PaimonResponse({"consumers": [{"consumerId": c, "nextSnapshot": n} for c, n in found],
                           "nextPageToken": make_token(request, last)})


def reset_consumer(request: PaimonRequest) -> PaimonResponse:
    """ResetConsumerRequest ``{consumerId, nextSnapshotId}`` (RESTApi.resetConsumer: POST
    ``.../consumers/reset``); a null nextSnapshotId removes the consumer."""
    consumer = request.require("consumerId")
    next_snapshot = request.optional("nextSnapshotId", int)
    service.reset_consumer(table_ref(request), consumer, next_snapshot)
    return PaimonResponse()
