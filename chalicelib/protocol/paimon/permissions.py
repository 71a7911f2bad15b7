"""Permissions (grant/revoke): not modelled until authentication lands.

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def list_permissions(request: PaimonRequest) -> PaimonResponse:
    """List permissions."""
    raise not_implemented("List permissions")


def grant_permission(request: PaimonRequest) -> PaimonResponse:
    """Grant permission."""
    raise not_implemented("Grant permission")


def revoke_permission(request: PaimonRequest) -> PaimonResponse:
    """Revoke permission."""
    raise not_implemented("Revoke permission")
