"""The deployed stack as a SAM template: chalice's template of the functions and the API, finished
here with what chalice knows nothing of.

- The DynamoDB tables, generated from the PynamoDB models: point-in-time recovery and deletion
  protection on, retained when the stack is deleted or a table replaced (``infra/local/tables.py``
  protects the tables it creates for ``chalice deploy`` the same way).
- The KMS key that envelope-encrypts the identities' secret access keys, under the alias
  ``alias/glue-catalog-identities`` (the prod stage's GLUE_AUTH_KMS_KEY_ID), retained too.
- The Paimon warehouse (PAIMON_WAREHOUSE, required on Lambda): parameters ``WarehouseBucket``
  (empty: the stack creates a private bucket, retained) and ``WarehousePrefix``; and
  ``AllowedLocations``, the GLUE_ALLOWED_LOCATIONS beyond it (Iceberg metadata, external Paimon
  tables), each granted by a policy of its own (``Fn::ForEach``: the AWS::LanguageExtensions
  transform).
- Each function's role gets the policy of ``infra.policy`` (the same actions as ``chalice
  deploy``'s), its resources named exactly: the tables' and the key's ARNs, the warehouse's bucket
  and prefix in this account, the function's own log group.
- Each function logs to a log group of the stack with a retention (``LogRetentionInDays``); the
  API stage is throttled (``ThrottlingRateLimit`` / ``ThrottlingBurstLimit``) and writes access
  logs (``AccessLogs``; API Gateway needs the region's CloudWatch Logs role for that, see README).

- The crawl worker (``CrawlWorker``, ``pipelines.crawl_worker.handler``): a function of its own,
  NOT in the API's package (its zip, ``crawl-worker.zip``, is the API's plus ``pipelines/``;
  pyarrow comes from the layer ``PyarrowLayerArn`` the operator names, e.g. AWS SDK for pandas'
  layer), invoked every minute by an EventBridge rule (fires due schedules, crawls queued runs),
  with a role of its own: the tables, the identities' key (Decrypt, and GenerateDataKey to seal
  the key it issues itself for a crawler's role under SigV4), its log group, and reading (only) the
  ``CrawlTargets`` locations; it writes tables through the API (``GLUE_CRAWL_ENDPOINT``) as the
  crawler's role. With ``CrawlSparkApplicationId``, ``CrawlSparkJobRoleArn`` and ``CrawlSparkCode``
  it hands crawls of at least ``CrawlSparkFiles`` files to that EMR Serverless application (a
  policy of its own, ``CrawlWorkerSparkPolicy``; untried on AWS).

``finish(template)`` takes the template ``chalice package --stage prod`` writes and answers the
deployed one; ``infra/package.py`` (``make package``) writes it to out/sam.json, and
tests/unit/test_deploy_template.py runs cfn-lint on it.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from chalicelib.store.dynamo import config
from chalicelib.store.dynamo.models import ALL_MODELS
from infra.policy import ALLOWED_VARIABLE, WAREHOUSE_VARIABLE, Location, location_statements, statements

# The deployed tables use the default prefix whatever GLUE_TABLE_PREFIX the generating shell has.
DEPLOYED_PREFIX = "glue_catalog_"

_TYPES = {"S": "S", "N": "N", "B": "B"}

# The KMS key wrapping the data keys of the identities' secrets (see chalicelib/store/secret_box.py).
IDENTITIES_KEY_ALIAS = "alias/glue-catalog-identities"

TRANSFORMS = ["AWS::LanguageExtensions", "AWS::Serverless-2016-10-31"]
# What CloudWatch Logs accepts as a retention.
_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
                   3288, 3653]
_BUCKET = "[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
_SEGMENT = "[A-Za-z0-9_.=+-]+"

PARAMETERS: dict[str, Any] = {
    "WarehouseBucket": {
        "Type": "String", "Default": "", "AllowedPattern": f"^({_BUCKET})?$",
        "Description": "S3 bucket of this account for the Paimon warehouse (PAIMON_WAREHOUSE); "
                       "empty: the stack creates one (kept when the stack is deleted)"},
    "WarehousePrefix": {
        "Type": "String", "Default": "warehouse", "AllowedPattern": f"^({_SEGMENT}(/{_SEGMENT})*)?$",
        "Description": "Key prefix of the warehouse in that bucket, no slash at either end (empty: the bucket's root)"},
    "AllowedLocations": {
        "Type": "CommaDelimitedList", "Default": "",
        "AllowedPattern": f"^(s3a?://{_BUCKET}(/{_SEGMENT})*)?$",
        "Description": "GLUE_ALLOWED_LOCATIONS: comma-separated s3://bucket/prefix of this account besides the "
                       "warehouse where the catalog may write, read and delete files (Iceberg metadata, external "
                       "Paimon tables); empty: only the warehouse"},
    "ThrottlingRateLimit": {
        "Type": "Number", "Default": 500, "MinValue": 1,
        "Description": "API stage: steady requests per second across all clients"},
    "ThrottlingBurstLimit": {
        "Type": "Number", "Default": 1000, "MinValue": 1,
        "Description": "API stage: burst of requests above the steady rate"},
    "AccessLogs": {
        "Type": "String", "Default": "enabled", "AllowedValues": ["enabled", "disabled"],
        "Description": "API access logs to CloudWatch Logs (needs the region's API Gateway CloudWatch Logs role)"},
    "PyarrowLayerArn": {
        "Type": "String", "Default": "", "AllowedPattern": r"^(arn:[a-z-]+:lambda:[a-z0-9-]+:\d{12}:layer:[A-Za-z0-9_-]+:\d+)?$",
        "Description": "The crawl worker: ARN (with version) of a Lambda layer that provides pyarrow for python3.11 "
                       "x86_64 (e.g. AWS SDK for pandas' layer); empty: no layer, and every crawl ends FAILED "
                       "saying the crawl engine cannot be loaded"},
    "CrawlTargets": {
        "Type": "CommaDelimitedList", "Default": "",
        "AllowedPattern": f"^(s3a?://{_BUCKET}(/{_SEGMENT})*)?$",
        "Description": "The crawl worker: comma-separated s3://bucket/prefix of this account that crawlers may "
                       "read (their S3 targets); empty: none"},
    "CrawlSparkApplicationId": {
        "Type": "String", "Default": "", "AllowedPattern": "^([0-9a-z]{1,64})?$",
        "Description": "The crawl worker: an EMR Serverless Spark application of this account and region that "
                       "crawls with at least CrawlSparkFiles files to classify go to (untried on AWS); empty: the "
                       "worker crawls everything itself"},
    "CrawlSparkJobRoleArn": {
        "Type": "String", "Default": "", "AllowedPattern": r"^(arn:[a-z-]+:iam::\d{12}:role/[\w+=,.@/-]+)?$",
        "Description": "The crawl worker: the job runtime role of those job runs (reads the crawl targets and "
                       "CrawlSparkCode, writes its crawls/ results, kms:Decrypt on the identities' key)"},
    "CrawlSparkCode": {
        "Type": "String", "Default": "", "AllowedPattern": f"^(s3://{_BUCKET}(/{_SEGMENT})*)?$",
        "Description": "The crawl worker: s3://bucket/prefix holding spark_driver.py and pipelines.zip (out/crawl-spark "
                       "of make package); the worker writes each Spark crawl's spec and result under its crawls/"},
    "CrawlSparkFiles": {
        "Type": "Number", "Default": 20000, "MinValue": 0,
        "Description": "The crawl worker: files to classify from which a crawl goes to Spark (0: never)"},
    "LogRetentionInDays": {
        "Type": "Number", "Default": 90, "AllowedValues": _RETENTION_DAYS,
        "Description": "Retention of the functions' logs and the API's access logs"},
}

CONDITIONS: dict[str, Any] = {
    "CreateWarehouseBucket": {"Fn::Equals": [{"Ref": "WarehouseBucket"}, ""]},
    "HasWarehousePrefix": {"Fn::Not": [{"Fn::Equals": [{"Ref": "WarehousePrefix"}, ""]}]},
    "HasAllowedLocations": {"Fn::Not": [{"Fn::Equals": [{"Fn::Join": [",", {"Ref": "AllowedLocations"}]}, ""]}]},
    "AccessLogsEnabled": {"Fn::Equals": [{"Ref": "AccessLogs"}, "enabled"]},
    "HasPyarrowLayer": {"Fn::Not": [{"Fn::Equals": [{"Ref": "PyarrowLayerArn"}, ""]}]},
    "HasCrawlTargets": {"Fn::Not": [{"Fn::Equals": [{"Fn::Join": [",", {"Ref": "CrawlTargets"}]}, ""]}]},
    "HasCrawlSpark": {"Fn::And": [{"Fn::Not": [{"Fn::Equals": [{"Ref": name}, ""]}]}
                                  for name in ("CrawlSparkApplicationId", "CrawlSparkJobRoleArn", "CrawlSparkCode")]},
}

# The crawl worker: its zip (infra/package.py builds it next to deployment.zip), its handler.
CRAWL_WORKER = "CrawlWorker"
CRAWL_WORKER_CODE_URI = "./crawl-worker.zip"
CRAWL_WORKER_HANDLER = "pipelines.crawl_worker.handler"
# What the worker does to a crawl target: read it, list its bucket.
CRAWL_READ_ACTIONS = ("s3:GetObject",)
# The worker seals the key it issues itself for a crawler's role (pipelines.crawl_worker.internal_key).
CRAWL_WORKER_KMS_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")

# One access log line per request (JSON); the Glue operation travels in a header API Gateway does
# not log, the Lake Formation and Paimon ones in the path.
ACCESS_LOG_FORMAT = json.dumps({
    "requestId": "$context.requestId", "ip": "$context.identity.sourceIp", "time": "$context.requestTime",
    "method": "$context.httpMethod", "path": "$context.path", "status": "$context.status",
    "protocol": "$context.protocol", "bytes": "$context.responseLength", "latency": "$context.responseLatency",
    "integrationLatency": "$context.integrationLatency", "integrationStatus": "$context.integration.status",
    "error": "$context.error.message", "userAgent": "$context.identity.userAgent",
}, separators=(",", ":"))

_PARTITION_S3 = "arn:${AWS::Partition}:s3:::"
_RETAIN = {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}


def _logical_id(table_name: str) -> str:
    return "Table" + "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", table_name) if part)


def deployed_name(model) -> str:
    """The model's table name under the deployed prefix."""
    return DEPLOYED_PREFIX + model.Meta.table_name[len(config.TABLE_PREFIX):]


def table_ids() -> list[str]:
    """The tables' logical ids, in model order."""
    return [_logical_id(deployed_name(m)) for m in ALL_MODELS]


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
        "DeletionProtectionEnabled": True,
    }
    return {"Type": "AWS::DynamoDB::Table", **_RETAIN, "Properties": properties}


def _identities_key() -> dict:
    """The KMS key + alias. Retained with the stack deleted, like the tables: without the key,
    every stored secret access key is unreadable. The key policy gives the account itself the
    key (so IAM policies, the function's and an operator's, decide who may use it)."""
    key = {
        "Type": "AWS::KMS::Key",
        **_RETAIN,
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


# ------------------------------------------------------------------------------ the warehouse
WAREHOUSE_BUCKET: dict[str, Any] = {"Fn::If": ["CreateWarehouseBucket", {"Ref": "Warehouse"},
                                               {"Ref": "WarehouseBucket"}]}


def _under_warehouse(with_prefix: str, without: str) -> dict[str, Any]:
    """``Fn::Sub`` of one of two strings naming ${Bucket} (the warehouse's), by whether there is a prefix."""
    return {"Fn::If": ["HasWarehousePrefix",
                       {"Fn::Sub": [with_prefix, {"Bucket": WAREHOUSE_BUCKET}]},
                       {"Fn::Sub": [without, {"Bucket": WAREHOUSE_BUCKET}]}]}


WAREHOUSE_URI = _under_warehouse("s3://${Bucket}/${WarehousePrefix}", "s3://${Bucket}")
WAREHOUSE_LOCATION = Location(
    bucket_arn={"Fn::Sub": [_PARTITION_S3 + "${Bucket}", {"Bucket": WAREHOUSE_BUCKET}]},
    objects_arn=_under_warehouse(_PARTITION_S3 + "${Bucket}/${WarehousePrefix}/*", _PARTITION_S3 + "${Bucket}/*"))
ACCOUNT = {"Ref": "AWS::AccountId"}


def _warehouse_bucket() -> dict[str, Any]:
    """The bucket the stack creates when WarehouseBucket is empty: private, TLS only, retained."""
    bucket = {
        "Type": "AWS::S3::Bucket", "Condition": "CreateWarehouseBucket", **_RETAIN,
        "Properties": {
            "PublicAccessBlockConfiguration": {"BlockPublicAcls": True, "BlockPublicPolicy": True,
                                               "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
            "OwnershipControls": {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]},
            "BucketEncryption": {"ServerSideEncryptionConfiguration": [
                {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]},
        },
    }
    tls_only = {
        "Type": "AWS::S3::BucketPolicy", "Condition": "CreateWarehouseBucket",
        "Properties": {"Bucket": {"Ref": "Warehouse"}, "PolicyDocument": {"Version": "2012-10-17", "Statement": [{
            "Sid": "TlsOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
            "Resource": [{"Fn::GetAtt": ["Warehouse", "Arn"]}, {"Fn::Sub": "${Warehouse.Arn}/*"}],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}},
    }
    return {"Warehouse": bucket, "WarehouseTlsOnly": tls_only}


def _location_arns() -> Location:
    """The ARNs of one ``s3://bucket/prefix`` entry of a list parameter (``${Location}``, in a
    Fn::ForEach). The "://" appended keeps Fn::Select in range for the empty default (where the
    condition drops the resource)."""
    path = {"Fn::Select": [1, {"Fn::Split": ["://", "${Location}://"]}]}
    return Location(
        bucket_arn={"Fn::Sub": [_PARTITION_S3 + "${Bucket}", {"Bucket": {"Fn::Select": [0, {"Fn::Split": ["/", path]}]}}]},
        objects_arn={"Fn::Sub": [_PARTITION_S3 + "${Path}/*", {"Path": path}]})


def _crawl_target_policies() -> dict[str, Any]:
    """One read-only IAM policy per CrawlTargets entry, on the crawl worker's role only."""
    location = _location_arns()
    in_account = {"StringEquals": {"aws:ResourceAccount": ACCOUNT}}
    policy = {
        "Type": "AWS::IAM::ManagedPolicy", "Condition": "HasCrawlTargets",
        "Properties": {
            "Description": "glue-catalog: the crawl worker reads crawl target ${Location}",
            "Roles": [{"Ref": f"{CRAWL_WORKER}Role"}],
            "PolicyDocument": {"Version": "2012-10-17", "Statement": [
                {"Sid": "CrawlTargetObjects", "Effect": "Allow", "Action": list(CRAWL_READ_ACTIONS),
                 "Resource": [location.objects_arn], "Condition": in_account},
                {"Sid": "CrawlTargetBuckets", "Effect": "Allow", "Action": ["s3:ListBucket"],
                 "Resource": [location.bucket_arn], "Condition": in_account}]},
        },
    }
    return {"Fn::ForEach::CrawlTargetPolicies": ["Location", {"Ref": "CrawlTargets"},
                                                 {"CrawlTarget&{Location}": policy}]}


def _crawl_worker(api: dict[str, Any], role: dict[str, Any]) -> dict[str, Any]:
    """The crawl worker's function, role and log group, after the API function ``api`` (its
    runtime and settings) and chalice's role ``role`` (its trust policy)."""
    group = f"{CRAWL_WORKER}Logs"
    worker_role = copy.deepcopy(role)
    worker_role["Properties"]["Policies"] = [{
        "PolicyName": f"{CRAWL_WORKER}RolePolicy",
        "PolicyDocument": {"Version": "2012-10-17", "Statement": statements(
            tables=[{"Fn::GetAtt": [table, "Arn"]} for table in table_ids()], locations=[], account=ACCOUNT,
            kms_key={"Fn::GetAtt": ["IdentitiesKey", "Arn"]}, kms_condition=None,
            log_groups=[{"Fn::GetAtt": [group, "Arn"]}])}}]
    for statement in worker_role["Properties"]["Policies"][0]["PolicyDocument"]["Statement"]:
        if statement["Sid"] == "IdentitySecretsKey":
            statement["Action"] = list(CRAWL_WORKER_KMS_ACTIONS)
    variables = copy.deepcopy(api["Properties"].get("Environment", {}).get("Variables", {}))
    variables["GLUE_CRAWL_ENDPOINT"] = {
        "Fn::Sub": "https://${RestAPI}.execute-api.${AWS::Region}.${AWS::URLSuffix}/api/"}
    function = {"Type": "AWS::Serverless::Function", "Properties": {
        "Runtime": api["Properties"]["Runtime"], "Architectures": api["Properties"].get("Architectures", ["x86_64"]),
        "Handler": CRAWL_WORKER_HANDLER, "CodeUri": CRAWL_WORKER_CODE_URI,
        # Lambda's limit: a crawl cut off there is taken over by a later invocation (three at most).
        "Timeout": 900, "MemorySize": 3008,
        "Role": {"Fn::GetAtt": [f"{CRAWL_WORKER}Role", "Arn"]},
        "Layers": {"Fn::If": ["HasPyarrowLayer", [{"Ref": "PyarrowLayerArn"}], {"Ref": "AWS::NoValue"}]},
        "LoggingConfig": {"LogGroup": {"Ref": group}},
        "Environment": {"Variables": variables},
        "Events": {f"{CRAWL_WORKER}EveryMinute": {"Type": "Schedule", "Properties": {"Schedule": "rate(1 minute)"}}},
    }}
    variables.update({"GLUE_CRAWL_EMR_APPLICATION": {"Ref": "CrawlSparkApplicationId"},
                      "GLUE_CRAWL_EMR_ROLE": {"Ref": "CrawlSparkJobRoleArn"},
                      "GLUE_CRAWL_EMR_CODE": {"Ref": "CrawlSparkCode"},
                      "GLUE_CRAWL_SPARK_FILES": {"Ref": "CrawlSparkFiles"}})
    return {CRAWL_WORKER: function, f"{CRAWL_WORKER}Role": worker_role, group: _log_group(),
            f"{CRAWL_WORKER}SparkPolicy": _crawl_spark_policy(), **_crawl_target_policies()}


def _crawl_spark_policy() -> dict[str, Any]:
    """What the worker needs to hand a large crawl to EMR Serverless (only with HasCrawlSpark):
    start, watch and cancel job runs of that application, pass its job role to EMR Serverless,
    write and remove each crawl's spec and result under ``CrawlSparkCode/crawls/``, and seal the
    crawl's key secret with the identities' key (kms:Encrypt)."""
    code = {"Fn::Select": [1, {"Fn::Split": ["://", {"Fn::Sub": "${CrawlSparkCode}://"}]}]}
    application = "arn:${AWS::Partition}:emr-serverless:${AWS::Region}:${AWS::AccountId}:/applications/" \
                  "${CrawlSparkApplicationId}"
    return {"Type": "AWS::IAM::Policy", "Condition": "HasCrawlSpark", "Properties": {
        "PolicyName": f"{CRAWL_WORKER}SparkPolicy",
        "Roles": [{"Ref": f"{CRAWL_WORKER}Role"}],
        "PolicyDocument": {"Version": "2012-10-17", "Statement": [
            {"Sid": "CrawlSparkJobRuns", "Effect": "Allow",
             "Action": ["emr-serverless:StartJobRun", "emr-serverless:GetJobRun", "emr-serverless:CancelJobRun",
                        "emr-serverless:TagResource"],
             "Resource": [{"Fn::Sub": application}, {"Fn::Sub": application + "/jobruns/*"}]},
            {"Sid": "CrawlSparkPassJobRole", "Effect": "Allow", "Action": ["iam:PassRole"],
             "Resource": [{"Ref": "CrawlSparkJobRoleArn"}],
             "Condition": {"StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}}},
            {"Sid": "CrawlSparkSpecs", "Effect": "Allow",
             "Action": ["s3:PutObject", "s3:GetObject", "s3:DeleteObject"],
             "Resource": [{"Fn::Sub": [_PARTITION_S3 + "${Path}/crawls/*", {"Path": code}]}],
             "Condition": {"StringEquals": {"aws:ResourceAccount": ACCOUNT}}},
            {"Sid": "CrawlSparkSealKey", "Effect": "Allow", "Action": ["kms:Encrypt"],
             "Resource": [{"Fn::GetAtt": ["IdentitiesKey", "Arn"]}]}]},
    }}


def _allowed_location_policies(roles: list[str]) -> dict[str, Any]:
    """One IAM policy per AllowedLocations entry (s3://bucket/prefix), on every function's role.

    CloudFormation cannot map a list onto ARNs, so Fn::ForEach (AWS::LanguageExtensions) makes a
    resource per entry; "&{Location}" is the entry without its non-alphanumeric characters. The
    "://" appended keeps Fn::Select in range for the empty default (where the condition drops it)."""
    location = _location_arns()
    policy = {
        # Managed, so that CloudFormation names it (an inline policy's name would have to be made
        # from the entry); a role holds 10 managed policies unless the account's IAM quota is raised.
        "Type": "AWS::IAM::ManagedPolicy", "Condition": "HasAllowedLocations",
        "Properties": {
            "Description": "glue-catalog: GLUE_ALLOWED_LOCATIONS entry ${Location}",
            "Roles": [{"Ref": role} for role in roles],
            "PolicyDocument": {"Version": "2012-10-17",
                               "Statement": location_statements([location], ACCOUNT, sid="AllowedLocation")},
        },
    }
    return {"Fn::ForEach::AllowedLocationPolicies": ["Location", {"Ref": "AllowedLocations"},
                                                     {"AllowedLocation&{Location}": policy}]}


def _role_policy(log_groups: list[str]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": statements(
        tables=[{"Fn::GetAtt": [table, "Arn"]} for table in table_ids()],
        locations=[WAREHOUSE_LOCATION],
        account=ACCOUNT,
        kms_key={"Fn::GetAtt": ["IdentitiesKey", "Arn"]},
        kms_condition=None,
        log_groups=[{"Fn::GetAtt": [group, "Arn"]} for group in log_groups])}


def _log_group(condition: str | None = None) -> dict[str, Any]:
    # Deleted with the stack (what they hold expires after LogRetentionInDays anyway).
    group: dict[str, Any] = {"Type": "AWS::Logs::LogGroup", "DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete",
                             "Properties": {"RetentionInDays": {"Ref": "LogRetentionInDays"}}}
    if condition:
        group["Condition"] = condition
    return group


def resources() -> dict[str, Any]:
    """The resources that do not depend on chalice's: tables, key, warehouse bucket."""
    result = {_logical_id(deployed_name(m)): _table_resource(m) for m in ALL_MODELS}
    result.update(_identities_key())
    result.update(_warehouse_bucket())
    return result


def _declare_greedy_parameters(swagger: dict[str, Any]) -> None:
    """Declare each greedy path parameter (``{proxy+}``, the Paimon catch-all of app.py) on its
    methods: chalice's swagger declares only ``{name}`` parameters, and API Gateway's import wants
    every path parameter declared."""
    for path, operations in (swagger.get("paths") or {}).items():
        last = path.rsplit("/", 1)[-1]
        if not (last.startswith("{") and last.endswith("+}")):
            continue
        name = last[1:-2]
        for method, operation in operations.items():
            if method.startswith("x-") or not isinstance(operation, dict):
                continue
            parameters = operation.setdefault("parameters", [])
            if not any(p.get("name") == name for p in parameters):
                parameters.append({"name": name, "in": "path", "required": True, "type": "string"})


def finish(chalice_template: dict[str, Any]) -> dict[str, Any]:
    """The deployed template: chalice's (``chalice package --stage prod``) with the parameters,
    tables, key, warehouse, policies, log groups and stage settings of this module."""
    template = copy.deepcopy(chalice_template)
    template["Transform"] = list(TRANSFORMS)
    template["Description"] = ("glue-catalog: AWS Glue Data Catalog, Lake Formation and Paimon REST catalog "
                               "on API Gateway, Lambda and DynamoDB")
    template["Parameters"] = copy.deepcopy(PARAMETERS)
    template["Conditions"] = copy.deepcopy(CONDITIONS)
    existing = template["Resources"]
    added = resources()
    clash = set(added) & set(existing)
    assert not clash, f"chalice's template already has {sorted(clash)}"
    existing.update(added)

    functions = [name for name, r in existing.items() if r["Type"] == "AWS::Serverless::Function"]
    log_groups: dict[str, list[str]] = {}  # role -> its functions' log groups (chalice may share a role)
    for function in functions:
        properties = existing[function]["Properties"]
        log_group = f"{function}Logs"
        existing[log_group] = _log_group()
        log_groups.setdefault(properties["Role"]["Fn::GetAtt"][0], []).append(log_group)
        properties["LoggingConfig"] = {"LogGroup": {"Ref": log_group}}
        variables = properties.setdefault("Environment", {}).setdefault("Variables", {})
        variables[WAREHOUSE_VARIABLE] = WAREHOUSE_URI
        variables[ALLOWED_VARIABLE] = {"Fn::Join": [",", {"Ref": "AllowedLocations"}]}
    for role, groups in log_groups.items():
        policies = existing[role]["Properties"]["Policies"]
        assert len(policies) == 1, f"{role}: expected chalice's one policy"
        policies[0]["PolicyDocument"] = _role_policy(groups)
    apis = [r for r in existing.values() if r["Type"] == "AWS::Serverless::Api"]
    assert len(apis) == 1, "expected chalice's one REST API"
    _declare_greedy_parameters(apis[0]["Properties"].get("DefinitionBody") or {})
    existing.update(_allowed_location_policies(list(log_groups)))
    api_function = existing["APIHandler"]
    existing.update(_crawl_worker(api_function, existing[api_function["Properties"]["Role"]["Fn::GetAtt"][0]]))
    existing["ApiAccessLogs"] = _log_group("AccessLogsEnabled")
    apis[0]["Properties"].update({
        "MethodSettings": [{"ResourcePath": "/*", "HttpMethod": "*",
                            "ThrottlingRateLimit": {"Ref": "ThrottlingRateLimit"},
                            "ThrottlingBurstLimit": {"Ref": "ThrottlingBurstLimit"}}],
        "AccessLogSetting": {"Fn::If": ["AccessLogsEnabled",
                                        {"DestinationArn": {"Fn::Sub": "arn:${AWS::Partition}:logs:${AWS::Region}:"
                                                                      "${AWS::AccountId}:log-group:${ApiAccessLogs}"},
                                         "Format": ACCESS_LOG_FORMAT},
                                        {"Ref": "AWS::NoValue"}]},
    })
    template.setdefault("Outputs", {})["WarehouseURI"] = {
        "Description": "PAIMON_WAREHOUSE of the functions", "Value": WAREHOUSE_URI}
    return template
