"""Branches.

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def list_branches(request: PaimonRequest) -> PaimonResponse:
    """List branches."""
    raise not_implemented("List branches")


def create_branch(request: PaimonRequest) -> PaimonResponse:
    """Create branch."""
    raise not_implemented("Create branch")


def drop_branch(request: PaimonRequest) -> PaimonResponse:
    """Drop branch."""
    raise not_implemented("Drop branch")


def rename_branch(request: PaimonRequest) -> PaimonResponse:
    """Rename branch."""
    raise not_implemented("Rename branch")


def fast_forward_branch(request: PaimonRequest) -> PaimonResponse:
    """Fast forward branch."""
    raise not_implemented("Fast forward branch")
