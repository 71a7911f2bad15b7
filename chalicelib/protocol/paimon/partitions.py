"""Partitions and their statistics (recordCount, fileSizeInBytes, fileCount, lastFileCreationTime).

pypaimon defines two partition calls on the wire: list (paged) and create; dropping partitions is
a commit (``truncate_partitions``), whose statistics delete the partitions it empties.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.paging import make_token, max_results, name_pattern, read_token
from chalicelib.protocol.paimon.table_args import table_ref
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_snapshots as service


def list_partitions(request: PaimonRequest) -> PaimonResponse:
    """ListPartitionsResponse, in partition order (``maxResults``, ``pageToken``,
    ``partitionNamePattern``: a prefix pattern such as ``dt=2024%``)."""
    pattern = name_pattern(request, "partitionNamePattern")
    limit = max_results(request)
    after = read_token(request, pattern.prefix, pattern.exact)
    if after is not None and not isinstance(after, str):
        raise bad_request("pageToken is malformed")
    partitions, last = service.list_partitions(table_ref(request), after, limit, pattern.prefix, pattern.exact)
    return PaimonResponse({"partitions": partitions,
                           "nextPageToken": make_token(request, last, pattern.prefix, pattern.exact)})


def create_partitions(request: PaimonRequest) -> PaimonResponse:
    """CreatePartitionsRequest -> CreatePartitionsResponse (``created``, ``existed``)."""
    specs = request.require("partitionSpecs", list)
    for n, spec in enumerate(specs):
        if not isinstance(spec, dict):
            raise bad_request(f"partitionSpecs[{n}] must be an object mapping partition keys to values")
    ignore = request.optional("ignoreIfExists", bool)
    created, existed = service.create_partitions(table_ref(request), specs, True if ignore is None else ignore)
    return PaimonResponse({"created": created, "existed": existed})
