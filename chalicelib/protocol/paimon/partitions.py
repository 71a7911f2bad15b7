"""Partitions and their statistics (recordCount, fileSizeInBytes, fileCount, lastFileCreationTime).

pypaimon 2.1.0 sends list (paged) and create; dropping partitions there is a commit
(``truncate_partitions``), whose statistics delete the partitions it empties. The Java client
(paimon-api RESTApi) also sends create with ``partitionStatistics`` / ``replaceStatistics``,
``partitions/drop``, ``partitions/mark``, ``partitions/list-by-names`` and
``partitions/list-by-filter`` (POST; its body carries the filter, name pattern and paging).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from chalicelib import page_tokens
from chalicelib.domain.paimon.predicates import PredicateError
from chalicelib.errors import ServiceError
from chalicelib.protocol.paimon.paging import DEFAULT_MAX_RESULTS, make_token, max_results, name_pattern, read_token
from chalicelib.protocol.paimon.table_args import table_ref
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_partitions
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


def _specs(request: PaimonRequest, member: str, required: bool = True) -> list[Any]:
    specs = request.require(member, list) if required else (request.optional(member, list) or [])
    for n, spec in enumerate(specs):
        if not isinstance(spec, dict):
            raise bad_request(f"{member}[{n}] must be an object mapping partition keys to values")
    return specs


def create_partitions(request: PaimonRequest) -> PaimonResponse:
    """CreatePartitionsRequest (``partitionSpecs``, ``ignoreIfExists``, and the statistics
    ``partitionStatistics`` with ``replaceStatistics``) -> CreatePartitionsResponse (``created``,
    ``existed``)."""
    specs = _specs(request, "partitionSpecs")
    ignore = request.optional("ignoreIfExists", bool)
    statistics = request.optional("partitionStatistics", list)
    replace_statistics = request.optional("replaceStatistics", bool)
    made = paimon_partitions.create(table_ref(request), specs, True if ignore is None else ignore, statistics,
                                    replace_statistics)
    return PaimonResponse({"created": made.created, "existed": made.existed})


def drop_partitions(request: PaimonRequest) -> PaimonResponse:
    """DropPartitionsRequest (``partitionSpecs``, ``ignoreIfNotExists``, default true) ->
    DropPartitionsResponse (``dropped``, ``missing``); the data files stay."""
    specs = _specs(request, "partitionSpecs")
    ignore = request.optional("ignoreIfNotExists", bool)
    dropped, missing = paimon_partitions.drop(table_ref(request), specs, True if ignore is None else ignore)
    return PaimonResponse({"dropped": dropped, "missing": missing})


def mark_done_partitions(request: PaimonRequest) -> PaimonResponse:
    """MarkDonePartitionsRequest (``specs``) -> an empty 200."""
    paimon_partitions.mark_done(table_ref(request), _specs(request, "specs", required=False))
    return PaimonResponse(None)


def list_partitions_by_names(request: PaimonRequest) -> PaimonResponse:
    """ListPartitionsByNamesRequest (``specs``) -> ListPartitionsResponse of those that exist."""
    partitions = paimon_partitions.list_by_names(table_ref(request), _specs(request, "specs", required=False))
    return PaimonResponse({"partitions": partitions, "nextPageToken": None})


def _body_max_results(request: PaimonRequest) -> int:
    value = request.optional("maxResults", int)
    if value is None or value <= 0:
        return DEFAULT_MAX_RESULTS
    return min(value, DEFAULT_MAX_RESULTS)


def _scope(request: PaimonRequest, scope: tuple[Any, ...]) -> str:
    context = request.context
    return page_tokens.request_scope("paimon", request.route, context.region, context.account_id, *scope)


def list_partitions_by_filter(request: PaimonRequest) -> PaimonResponse:
    """ListPartitionsByFilterRequest (``filter``: Paimon's predicate JSON as a string,
    ``partitionNamePattern``, ``maxResults``, ``pageToken``) -> ListPartitionsResponse. The page
    may be a superset and may be empty with a token (the work budget): Paimon's clients
    re-evaluate and follow the token."""
    filter_text = request.body.get("filter")
    if not isinstance(filter_text, str) or not filter_text.strip():
        raise bad_request("filter is required: the JSON of a Paimon predicate over the partition columns")
    pattern_text = request.optional("partitionNamePattern", str)
    pattern = name_pattern(replace(request, query={"partitionNamePattern": pattern_text or ""}),
                           "partitionNamePattern")
    token = request.optional("pageToken", str)
    limit = _body_max_results(request)

    def matches(name: str) -> bool:
        return name == pattern.exact if pattern.exact is not None else name.startswith(pattern.prefix)

    def read_position(scope: tuple) -> Optional[Any]:
        if token is None or not token.strip():
            return None
        try:
            position = page_tokens.decode_token(_scope(request, scope), token)
        except (ServiceError, ValueError):
            raise bad_request("Invalid pageToken: it was not issued for this listing (a token is bound to the "
                              "path, catalog, filter and name pattern that produced it)") from None
        if not (isinstance(position, list) and len(position) == 2 and isinstance(position[0], int)
                and isinstance(position[1], str)):
            raise bad_request("pageToken is malformed")
        return position

    try:
        page = paimon_partitions.list_by_filter(table_ref(request), filter_text, limit, matches, read_position,
                                                [pattern.prefix, pattern.exact])
    except PredicateError as error:
        raise bad_request(f"filter: {error}") from None
    token_out = None if page.position is None else page_tokens.encode_token(_scope(request, page.scope),
                                                                            page.position)
    return PaimonResponse({"partitions": page.partitions, "nextPageToken": token_out})
