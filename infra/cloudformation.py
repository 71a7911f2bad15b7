"""The deployed resources besides the Lambda and API Gateway, as a CloudFormation template: the
DynamoDB tables (generated from the PynamoDB models) and the KMS key that envelope-encrypts the
identities' secret access keys.

``chalice package --stage prod --merge-template infra/dynamodb-tables.json out/`` merges the
generated file into the SAM template of the Lambda; a test checks the committed file equals what
this module generates, so the deployed tables can never drift from the models.

The key is reached by its alias, ``alias/glue-catalog-identities``: the prod stage's
GLUE_AUTH_KMS_KEY_ID names it and ``.chalice/policy.json`` lets the function use only a key that
carries it (kms:ResourceAliases), so the same policy works for ``chalice deploy`` with a key you
created and aliased yourself.

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

# The KMS key wrapping the data keys of the identities' secrets (see chalicelib/store/secret_box.py).
IDENTITIES_KEY_ALIAS = "alias/glue-catalog-identities"


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


def _identities_key() -> dict:
    """The KMS key + alias. Retained with the stack deleted, like the tables: without the key,
    every stored secret access key is unreadable. The key policy gives the account itself the
    key (so IAM policies, the function's and an operator's, decide who may use it)."""
    key = {
        "Type": "AWS::KMS::Key",
        "DeletionPolicy": "Retain",
        "UpdateReplacePolicy": "Retain",
        "Properties": {
            "Description": "glue-catalog: envelope encryption of the identities' secret access keys",
            "EnableKeyRotation": True,
            "KeyPolicy": {
                "Version": "2012-10-17",
                "Statement": [{
                    "Sid": "TheAccountAdministersAndGrantsTheKey",
                    "Effect": "Allow",
                    "Principal": {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}},
                    "Action": "kms:*",
                    "Resource": "*",
                }],
            },
        },
    }
    alias = {"Type": "AWS::KMS::Alias",
             "Properties": {"AliasName": IDENTITIES_KEY_ALIAS, "TargetKeyId": {"Ref": "IdentitiesKey"}}}
    return {"IdentitiesKey": key, "IdentitiesKeyAlias": alias}


def template() -> dict:
    """A CloudFormation template fragment: one table per model, and the identities' KMS key."""
    resources = {_logical_id(deployed_name(m)): _table_resource(m) for m in ALL_MODELS}
    resources.update(_identities_key())
    return {"Resources": resources}


if __name__ == "__main__":
    print(json.dumps(template(), indent=2))
