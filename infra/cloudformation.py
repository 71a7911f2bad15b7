"""The DynamoDB tables as a CloudFormation template, generated from the PynamoDB models.

``chalice package --merge-template infra/dynamodb-tables.json out/`` merges the generated file
into the SAM template of the Lambda; a test checks the committed file equals what this module
generates, so the deployed tables can never drift from the models.

Regenerate with ``python -m infra.cloudformation > infra/dynamodb-tables.json``.
"""

from __future__ import annotations

import json
import re

from chalicelib.store import config
from chalicelib.store.models import ALL_MODELS

# The deployed tables use the default prefix whatever GLUE_TABLE_PREFIX the generating shell has.
DEPLOYED_PREFIX = "glue_catalog_"

_TYPES = {"S": "S", "N": "N", "B": "B"}


def _logical_id(table_name: str) -> str:
    return "Table" + "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", table_name) if part)


def deployed_name(model) -> str:
    """The model's table name under the deployed prefix."""
    return DEPLOYED_PREFIX + model.Meta.table_name[len(config.TABLE_PREFIX):]


def _table_resource(model) -> dict:
    keys = [(name, attr) for name, attr in model.get_attributes().items() if attr.is_hash_key or attr.is_range_key]
    keys.sort(key=lambda pair: 0 if pair[1].is_hash_key else 1)
    properties: dict = {
        "TableName": deployed_name(model),
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": attr.attr_name, "AttributeType": _TYPES[attr.attr_type]}
                                 for _, attr in keys],
        "KeySchema": [{"AttributeName": attr.attr_name, "KeyType": "HASH" if attr.is_hash_key else "RANGE"}
                      for _, attr in keys],
        "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
    }
    return {"Type": "AWS::DynamoDB::Table", "DeletionPolicy": "Retain", "Properties": properties}


def template() -> dict:
    """A CloudFormation template fragment with one table per model."""
    return {"Resources": {_logical_id(deployed_name(m)): _table_resource(m) for m in ALL_MODELS}}


if __name__ == "__main__":
    print(json.dumps(template(), indent=2))
