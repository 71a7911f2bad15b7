"""Commits (guarded by table uuid and base snapshot), the latest snapshot, rollback.

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def commit_table(request: PaimonRequest) -> PaimonResponse:
    """Commit table."""
    raise not_implemented("Commit table")


def load_snapshot(request: PaimonRequest) -> PaimonResponse:
    """Load snapshot."""
    raise not_implemented("Load snapshot")


def rollback_table(request: PaimonRequest) -> PaimonResponse:
    """Rollback table."""
    raise not_implemented("Rollback table")
