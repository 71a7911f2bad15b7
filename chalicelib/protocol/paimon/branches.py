"""Branches: list, create (empty or from a tag), rename, drop, fast-forward."""

from __future__ import annotations

from chalicelib.domain.paimon import names
from chalicelib.protocol.paimon.table_args import table_ref
from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse
from chalicelib.service import paimon_snapshots as service


def list_branches(request: PaimonRequest) -> PaimonResponse:
    """ListBranchesResponse (not paged in Paimon's protocol)."""
    return PaimonResponse({"branches": service.list_branches(table_ref(request))})


def create_branch(request: PaimonRequest) -> PaimonResponse:
    """CreateBranchRequest: ``branch``, ``fromTag`` (optional)."""
    name = names.new("branch", request.require("branch"), "branch")
    from_tag = request.optional("fromTag")
    if from_tag is not None:
        names.existing("tag", from_tag)
    service.create_branch(table_ref(request), name, from_tag)
    return PaimonResponse()


def drop_branch(request: PaimonRequest) -> PaimonResponse:
    """Drop a branch (its items, then its directory)."""
    service.drop_branch(table_ref(request), request.path["branch"])
    return PaimonResponse()


def rename_branch(request: PaimonRequest) -> PaimonResponse:
    """RenameBranchRequest: ``toBranch``."""
    service.rename_branch(table_ref(request), request.path["branch"],
                          names.new("branch", request.require("toBranch"), "toBranch"))
    return PaimonResponse()


def fast_forward_branch(request: PaimonRequest) -> PaimonResponse:
    """Main takes the branch's snapshots, schemas and partition statistics."""
    service.fast_forward(table_ref(request), request.path["branch"])
    return PaimonResponse()
