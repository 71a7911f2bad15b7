"""Partitions and their statistics (recordCount, fileSizeInBytes, fileCount, lastFileCreationTime).

Every handler answers 501 (pypaimon: NotImplementedException) until its family is implemented.
"""

from __future__ import annotations

from chalicelib.protocol.paimon.wire import PaimonRequest, PaimonResponse, not_implemented


def list_partitions(request: PaimonRequest) -> PaimonResponse:
    """List partitions."""
    raise not_implemented("List partitions")


def create_partitions(request: PaimonRequest) -> PaimonResponse:
    """Create partitions."""
    raise not_implemented("Create partitions")
