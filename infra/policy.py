"""The deployed functions' IAM policy: one list of actions for both deploy paths.

The actions are exactly what the code calls (tests/unit/test_iam_policy.py derives them from the
source the Lambda runs and compares):

- DynamoDB: the item-level calls of the store, through PynamoDB and the direct transport. A
  TransactWriteItems is authorized as its Put / Update / Delete / ConditionCheck items; nothing
  scans a table or asks for its description (PynamoDB 6 takes key schemas from the models).
- S3: the warehouse's files and Iceberg metadata (``store/warehouse.py``): GetObject (HeadObject
  too), PutObject, DeleteObject (DeleteObjects too), ListBucket (ListObjectsV2; it is also what
  makes S3 answer a missing key 404 instead of 403, which the warehouse relies on).
- KMS: only Decrypt. Secrets are sealed by ``python -m infra.identities`` with the operator's
  credentials; the functions only open them.
- CloudWatch Logs: the functions' own log groups.

Resources are scoped to this account, region and partition: the catalog's tables by name, the
identities key (by its ARN in the template, by its alias with ``chalice deploy``), S3 on the
warehouse and ``GLUE_ALLOWED_LOCATIONS`` only, with ``aws:ResourceAccount`` = this account (a bucket
of that name in another account is refused).

Two spellings of one document: ``infra.cloudformation`` passes CloudFormation expressions
(``${AWS::Partition}``, ``Fn::GetAtt``); ``chalice deploy`` needs literal ARNs, so for it

    python -m infra.policy --warehouse s3://bucket/prefix [--allowed-locations s3://other/iceberg,...]

writes ``.chalice/policy.json`` and puts PAIMON_WAREHOUSE / GLUE_ALLOWED_LOCATIONS in the prod
stage of ``.chalice/config.json``, so the policy always follows the settings (account and region:
from ``--account`` / ``--region``, else the caller's credentials and AWS region).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parents[1]
CHALICE_DIR = REPO / ".chalice"

DYNAMODB_ACTIONS = ("dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem",
                    "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query",
                    "dynamodb:UpdateItem")
S3_OBJECT_ACTIONS = ("s3:DeleteObject", "s3:GetObject", "s3:PutObject")
S3_BUCKET_ACTIONS = ("s3:ListBucket",)
KMS_ACTIONS = ("kms:Decrypt",)
LOG_ACTIONS = ("logs:CreateLogStream", "logs:PutLogEvents")
# With chalice deploy, Lambda creates the log group on first use; the template creates its own.
CREATE_LOG_GROUP = "logs:CreateLogGroup"

# The environment variables the deployment sets from its warehouse settings.
WAREHOUSE_VARIABLE = "PAIMON_WAREHOUSE"
ALLOWED_VARIABLE = "GLUE_ALLOWED_LOCATIONS"

_S3_SCHEMES = ("s3", "s3a")


class PolicyError(ValueError):
    """A location the policy cannot grant (not S3, no bucket, IAM wildcard characters)."""


@dataclass(frozen=True)
class Location:
    """One S3 location as IAM names it: the bucket ARN and the ARN pattern of its objects."""

    bucket_arn: Any
    objects_arn: Any


def statements(*, tables: Sequence[Any], locations: Sequence[Location], account: Any, kms_key: Any,
               kms_condition: dict[str, Any] | None, log_groups: Sequence[Any],
               log_actions: Sequence[str] = LOG_ACTIONS) -> list[dict[str, Any]]:
    """The policy's statements; every resource is given, spelled literally or as template expressions."""
    result: list[dict[str, Any]] = [
        {"Sid": "CatalogTables", "Effect": "Allow", "Action": list(DYNAMODB_ACTIONS), "Resource": list(tables)},
        *location_statements(locations, account),
        {"Sid": "IdentitySecretsKey", "Effect": "Allow", "Action": list(KMS_ACTIONS), "Resource": kms_key},
        {"Sid": "OwnLogs", "Effect": "Allow", "Action": list(log_actions), "Resource": list(log_groups)},
    ]
    if kms_condition:
        result[-2]["Condition"] = kms_condition
    return result


def location_statements(locations: Sequence[Location], account: Any, sid: str = "Warehouse") -> list[dict[str, Any]]:
    """Objects under the locations, and listing their buckets; only buckets of ``account``."""
    if not locations:
        return []
    in_account = {"StringEquals": {"aws:ResourceAccount": account}}
    return [
        {"Sid": f"{sid}Objects", "Effect": "Allow", "Action": list(S3_OBJECT_ACTIONS),
         "Resource": [location.objects_arn for location in locations], "Condition": in_account},
        # The whole bucket, not only the prefix: S3 answers a read of a missing key 404 only to a
        # caller that may list the bucket (403 otherwise), and the warehouse tells "no such file"
        # from "refused" by that answer.
        {"Sid": f"{sid}Buckets", "Effect": "Allow", "Action": list(S3_BUCKET_ACTIONS),
         "Resource": _unique(location.bucket_arn for location in locations), "Condition": in_account},
    ]


def _unique(values: Any) -> list[Any]:
    """In order, without repeats (values may be template expressions: dicts, not hashable)."""
    result: list[Any] = []
    for value in values:
        if value not in result:
            result.append(value)
    return result


def parse_location(uri: str) -> tuple[str, str]:
    """``s3://bucket/prefix`` as (bucket, prefix without slashes at either end)."""
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in _S3_SCHEMES:
        raise PolicyError(f"{uri!r}: a deployed location must be s3://bucket[/prefix] (the Lambda has no file system to keep)")
    bucket, _, prefix = rest.partition("/")
    if not bucket:
        raise PolicyError(f"{uri!r} names no bucket")
    if any(char in rest for char in "*?$"):
        raise PolicyError(f"{uri!r}: '*', '?' and '$' would be IAM wildcards or variables")
    return bucket, prefix.strip("/")


def literal_location(uri: str, partition: str) -> Location:
    """The Location of an s3:// URI in literal ARNs."""
    bucket, prefix = parse_location(uri)
    bucket_arn = f"arn:{partition}:s3:::{bucket}"
    return Location(bucket_arn, f"{bucket_arn}/{prefix}/*" if prefix else f"{bucket_arn}/*")


def split_locations(value: str) -> list[str]:
    """GLUE_ALLOWED_LOCATIONS' comma-separated list, without blanks."""
    return [part.strip() for part in value.split(",") if part.strip()]


def function_names(stage: str = "prod") -> list[str]:
    """The Lambda functions chalice deploys for ``stage`` (their log groups are /aws/lambda/<name>)."""
    from chalice.cli.factory import CLIFactory
    from chalice.deploy import models
    from chalice.deploy.appgraph import ApplicationGraphBuilder

    config = CLIFactory(project_dir=str(REPO)).create_config_obj(stage)
    application = ApplicationGraphBuilder().build(config, stage)
    found: list[str] = []

    def walk(resource: Any) -> None:
        if isinstance(resource, models.LambdaFunction):
            found.append(resource.function_name)
        for child in resource.dependencies():
            walk(child)

    walk(application)
    return sorted(set(found))


def chalice_policy(*, warehouse: str, allowed: Sequence[str], account: str, region: str, partition: str,
                   functions: Sequence[str]) -> dict[str, Any]:
    """The policy document for ``chalice deploy`` (literal ARNs of this account and region)."""
    from infra.cloudformation import DEPLOYED_PREFIX, IDENTITIES_KEY_ALIAS, deployed_name
    from chalicelib.store.dynamo.models import ALL_MODELS

    assert all(deployed_name(model).startswith(DEPLOYED_PREFIX) for model in ALL_MODELS)
    base = f"{partition}:{{service}}:{region}:{account}"
    tables = [f"arn:{base.format(service='dynamodb')}:table/{deployed_name(model)}" for model in ALL_MODELS]
    logs = f"arn:{base.format(service='logs')}:log-group:/aws/lambda/"
    log_groups = [arn for name in functions for arn in (f"{logs}{name}", f"{logs}{name}:*")]
    return {"Version": "2012-10-17", "Statement": statements(
        tables=tables,
        locations=[literal_location(uri, partition) for uri in [warehouse, *allowed]],
        account=account,
        kms_key=f"arn:{base.format(service='kms')}:key/*",
        kms_condition={"ForAnyValue:StringEquals": {"kms:ResourceAliases": IDENTITIES_KEY_ALIAS}},
        log_groups=log_groups,
        log_actions=(CREATE_LOG_GROUP, *LOG_ACTIONS))}


def _caller_account() -> str:
    import boto3

    return str(boto3.client("sts").get_caller_identity()["Account"])


def main(argv: Sequence[str] | None = None) -> int:
    """Write .chalice/policy.json and the prod stage's warehouse settings."""
    parser = argparse.ArgumentParser(prog="python -m infra.policy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--warehouse", required=True, help="PAIMON_WAREHOUSE: s3://bucket/prefix")
    parser.add_argument("--allowed-locations", default="",
                        help="GLUE_ALLOWED_LOCATIONS: comma-separated s3://bucket/prefix (default: none)")
    parser.add_argument("--account", help="the deployment's account id (default: the caller's, from STS)")
    parser.add_argument("--region", help="the deployment's region (default: AWS_REGION / AWS_DEFAULT_REGION / the profile's)")
    parser.add_argument("--stage", default="prod", help="the chalice stage whose environment gets the settings")
    parser.add_argument("--print", dest="print_only", action="store_true", help="print the policy, write nothing")
    args = parser.parse_args(argv)

    import botocore.session

    session = botocore.session.get_session()
    region = args.region or os.environ.get("AWS_REGION") or session.get_config_variable("region")
    if not region:
        parser.error("no region: pass --region or set AWS_REGION")
    allowed = split_locations(args.allowed_locations)
    try:
        for uri in [args.warehouse, *allowed]:
            parse_location(uri)
        account = args.account or _caller_account()
        document = chalice_policy(warehouse=args.warehouse, allowed=allowed, account=account, region=region,
                                  partition=session.get_partition_for_region(region),
                                  functions=function_names(args.stage))
    except PolicyError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    text = json.dumps(document, indent=2) + "\n"
    if args.print_only:
        print(text, end="")
        return 0
    config_path = CHALICE_DIR / "config.json"
    config = json.loads(config_path.read_text())
    variables = config["stages"].setdefault(args.stage, {}).setdefault("environment_variables", {})
    variables[WAREHOUSE_VARIABLE] = args.warehouse.rstrip("/")
    variables[ALLOWED_VARIABLE] = ",".join(allowed)
    (CHALICE_DIR / config.get("iam_policy_file", "policy.json")).write_text(text)
    config_path.write_text(json.dumps(config, indent=2) + "\n")
    print(f"wrote .chalice/{config.get('iam_policy_file', 'policy.json')} (account {account}, {region}) and "
          f"the {args.stage} stage's {WAREHOUSE_VARIABLE}={variables[WAREHOUSE_VARIABLE]} "
          f"{ALLOWED_VARIABLE}={variables[ALLOWED_VARIABLE]!r} in .chalice/config.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
