"""Create the DynamoDB tables (local runs and tests; on AWS, infra/ defines them)."""

from __future__ import annotations

from chalicelib.store.dynamo.models import ALL_MODELS


def create_tables(wait: bool = True) -> None:
    """Create every model's table if it does not exist yet (idempotent)."""
    for model in ALL_MODELS:
        if not model.exists():
            model.create_table(wait=wait)
