"""Tags: create (a snapshot, the latest by default), get, list (paged, name prefix), delete."""

from __future__ import annotations

from chalicelib.domain.paimon import names
from chalicelib.protocol.paimon.paging import make_token, max_results, read_token
from chalicelib.protocol.paimon.table_args import table_ref
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, bad_request
from chalicelib.service import paimon_snapshots as service


def list_tags(request: PaimonRequest) -> PaimonResponse:
    """ListTagsResponse, in name order, paged (``maxResults``, ``pageToken``, ``tagNamePrefix``)."""
    prefix = request.query.get("tagNamePrefix") or None
    limit = max_results(request)
    after = read_token(request, prefix)
    if after is not None and not isinstance(after, str):
        raise bad_request("pageToken is malformed")
    names, last = service.list_tags(table_ref(request), after, limit, prefix)
    return PaimonResponse({"tags": names, "nextPageToken": make_token(request, last, prefix)})


def create_tag(request: PaimonRequest) -> PaimonResponse:
    """CreateTagRequest: ``tagName``, ``snapshotId`` (latest if absent), ``timeRetained``."""
    name = request.require("tagName")
    if not name.strip() or "/" in name:
        raise bad_request("tagName must be non-blank and contain no '/'")
    names.new("tag", name, "tagName")
    snapshot_id = request.optional("snapshotId", int)
    retained = request.optional("timeRetained")
    service.create_tag(table_ref(request), name, snapshot_id, retained)
    return PaimonResponse()


def get_tag(request: PaimonRequest) -> PaimonResponse:
    """GetTagResponse: the tag's name, snapshot, creation time (ms) and retention."""
    return PaimonResponse(service.get_tag(table_ref(request), request.path["tag"]))


def delete_tag(request: PaimonRequest) -> PaimonResponse:
    """Delete a tag (its file too)."""
    service.delete_tag(table_ref(request), request.path["tag"])
    return PaimonResponse()
