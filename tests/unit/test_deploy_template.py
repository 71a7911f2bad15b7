"""The deployed template (out/sam.json, as `make package` writes it): cfn-lint finds nothing in it,
its tables are protected, and its warehouse parameters become the functions' settings and exactly
the S3 resources their policy grants (evaluated here for concrete parameter values)."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest
from cfnlint.api import ManualArgs, lint

from chalicelib.store.dynamo.models import ALL_MODELS
from infra import policy
from infra.cloudformation import ACCESS_LOG_FORMAT, PARAMETERS, deployed_name, table_ids
from infra.package import sam_template


@cache
def _template_text() -> str:
    return json.dumps(sam_template())


def template() -> dict[str, Any]:
    return json.loads(_template_text())


def test_cfn_lint_finds_nothing() -> None:
    """No error, no warning (W3011: DeletionPolicy without UpdateReplacePolicy), no informational
    finding, in a region of each partition the template names with ${AWS::Partition}."""
    matches = lint(_template_text(), config=ManualArgs(
        regions=["us-east-1", "eu-west-1", "cn-north-1", "us-gov-west-1"], include_checks=["I"]))
    assert [str(match) for match in matches] == []


def test_no_arn_names_a_partition_literally() -> None:
    assert "arn:aws:" not in _template_text()
    assert not re.search(r'"arn:(aws|\*)', _template_text())


def test_every_table_is_protected_as_on_the_chalice_path() -> None:
    resources = template()["Resources"]
    tables = {r["Properties"]["TableName"]: r for r in resources.values()
              if isinstance(r, dict) and r["Type"] == "AWS::DynamoDB::Table"}
    assert set(tables) == {deployed_name(m) for m in ALL_MODELS}
    for table in tables.values():
        assert (table["DeletionPolicy"], table["UpdateReplacePolicy"]) == ("Retain", "Retain")
        assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
        assert table["Properties"]["DeletionProtectionEnabled"] is True


def test_the_api_stage_is_throttled_and_logged() -> None:
    resources = template()["Resources"]
    (api,) = [r for r in resources.values() if isinstance(r, dict) and r["Type"] == "AWS::Serverless::Api"]
    (settings,) = api["Properties"]["MethodSettings"]
    assert settings == {"ResourcePath": "/*", "HttpMethod": "*", "ThrottlingRateLimit": {"Ref": "ThrottlingRateLimit"},
                        "ThrottlingBurstLimit": {"Ref": "ThrottlingBurstLimit"}}
    condition, logged, off = api["Properties"]["AccessLogSetting"]["Fn::If"]
    assert condition == "AccessLogsEnabled" and off == {"Ref": "AWS::NoValue"}
    assert logged["Format"] == ACCESS_LOG_FORMAT and "$context.requestId" in ACCESS_LOG_FORMAT
    assert "${ApiAccessLogs}" in logged["DestinationArn"]["Fn::Sub"]
    groups = [r for r in resources.values() if isinstance(r, dict) and r["Type"] == "AWS::Logs::LogGroup"]
    assert groups and all(g["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionInDays"} for g in groups)
    for function in (r for r in resources.values() if isinstance(r, dict) and r["Type"] == "AWS::Serverless::Function"):
        log_group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert resources[log_group]["Type"] == "AWS::Logs::LogGroup"


# ------------------------------------------------------------------------------ evaluated
class _Stack:
    """Just enough of CloudFormation to evaluate the template's expressions for given parameters:
    Ref, Fn::Sub / Join / Split / Select / If / Equals / Not / And, Fn::ForEach; GetAtt as a marker."""

    def __init__(self, template: dict[str, Any], **parameters: Any) -> None:
        self.values: dict[str, Any] = {name: spec.get("Default") for name, spec in template["Parameters"].items()}
        self.values.update(parameters)
        for name, spec in template["Parameters"].items():
            if spec["Type"] == "CommaDelimitedList" and isinstance(self.values[name], str):
                self.values[name] = self.values[name].split(",")
            for value in self.values[name] if isinstance(self.values[name], list) else [self.values[name]]:
                if "AllowedPattern" in spec:
                    assert re.fullmatch(spec["AllowedPattern"], str(value)), (name, value)
        self.values.update({"AWS::Partition": "aws-us-gov", "AWS::AccountId": "111122223333",
                            "AWS::Region": "us-gov-west-1", "Warehouse": "stack-warehouse-abc123"})
        self.conditions = {name: self.eval(expr) for name, expr in template["Conditions"].items()}
        self.resources: dict[str, Any] = {}
        for name, resource in template["Resources"].items():
            if name.startswith("Fn::ForEach::"):
                identifier, collection, fragment = resource
                for item in self.eval(collection):
                    for key, value in fragment.items():
                        text = json.dumps(value).replace("${" + identifier + "}", item)
                        logical = key.replace("&{" + identifier + "}", re.sub(r"[^A-Za-z0-9]", "", item))
                        self.resources[logical] = json.loads(text)
            else:
                self.resources[name] = resource
        self.resources = {name: r for name, r in self.resources.items()
                          if "Condition" not in r or self.conditions[r["Condition"]]}

    def eval(self, expr: Any) -> Any:
        if isinstance(expr, list):
            return [self.eval(e) for e in expr]
        if not isinstance(expr, dict):
            return expr
        if len(expr) != 1:
            return {k: self.eval(v) for k, v in expr.items()}
        ((name, arg),) = expr.items()
        if name == "Ref":
            return self.values.get(arg, f"<{arg}>")  # a resource's (but the warehouse bucket's): a marker
        if name == "Fn::GetAtt":
            return f"<{arg[0]}.{arg[1]}>"
        if name == "Fn::If":
            return self.eval(arg[1] if self.conditions[arg[0]] else arg[2])
        if name == "Fn::Equals":
            return self.eval(arg[0]) == self.eval(arg[1])
        if name == "Fn::Not":
            return not self.eval(arg[0])
        if name == "Fn::And":
            return all(self.eval(a) for a in arg)
        if name == "Fn::Join":
            return arg[0].join(self.eval(arg[1]))
        if name == "Fn::Split":
            return self.eval(arg[1]).split(arg[0])
        if name == "Fn::Select":
            return self.eval(arg[1])[arg[0]]
        if name == "Fn::Sub":
            text, variables = (arg, {}) if isinstance(arg, str) else (arg[0], self.eval(arg[1]))
            known = {**self.values, **variables}
            return re.sub(r"\$\{([^}]+)\}", lambda m: str(known.get(m.group(1), f"<{m.group(1)}>")), text)
        return {name: self.eval(arg)}

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [self.eval(r) for r in self.resources.values() if r["Type"] == kind]


def _s3_grants(stack: _Stack) -> tuple[set[str], set[str]]:
    """(object ARN patterns, bucket ARNs) granted to the functions, across their policies."""
    documents = [p["PolicyDocument"] for role in stack.of_type("AWS::IAM::Role") for p in role["Properties"]["Policies"]]
    documents += [p["Properties"]["PolicyDocument"] for p in stack.of_type("AWS::IAM::ManagedPolicy")]
    objects, buckets = set(), set()
    for statement in (s for d in documents for s in d["Statement"]):
        if set(statement["Action"]) & set(policy.S3_OBJECT_ACTIONS + policy.S3_BUCKET_ACTIONS):
            assert statement["Condition"] == {"StringEquals": {"aws:ResourceAccount": "111122223333"}}
            (objects if "s3:GetObject" in statement["Action"] else buckets).update(statement["Resource"])
    return objects, buckets


def _settings(stack: _Stack) -> set[tuple[str, str]]:
    return {(f["Properties"]["Environment"]["Variables"]["PAIMON_WAREHOUSE"],
             f["Properties"]["Environment"]["Variables"]["GLUE_ALLOWED_LOCATIONS"])
            for f in stack.of_type("AWS::Serverless::Function")}


def test_by_default_the_stack_makes_its_warehouse_and_grants_only_it() -> None:
    stack = _Stack(template())
    assert len(stack.of_type("AWS::S3::Bucket")) == 1
    assert _settings(stack) == {("s3://stack-warehouse-abc123/warehouse", "")}
    assert _s3_grants(stack) == ({"arn:aws-us-gov:s3:::stack-warehouse-abc123/warehouse/*"},
                                 {"arn:aws-us-gov:s3:::stack-warehouse-abc123"})
    assert stack.of_type("AWS::IAM::ManagedPolicy") == []


@pytest.mark.parametrize("prefix", ["", "catalog/paimon"])
def test_an_existing_bucket_and_allowed_locations_are_granted_as_the_chalice_path_grants_them(prefix: str) -> None:
    allowed = ["s3://other-lake/iceberg", "s3://third-lake"]
    stack = _Stack(template(), WarehouseBucket="my-lake", WarehousePrefix=prefix, AllowedLocations=allowed)
    assert stack.of_type("AWS::S3::Bucket") == []
    warehouse = "s3://my-lake" + (f"/{prefix}" if prefix else "")
    assert _settings(stack) == {(warehouse, ",".join(allowed))}
    chalice = policy.chalice_policy(warehouse=warehouse, allowed=allowed, account="111122223333",
                                    region="us-gov-west-1", partition="aws-us-gov", functions=["f"])
    statements = {s["Sid"]: s for s in chalice["Statement"]}
    expected = (set(statements["WarehouseObjects"]["Resource"]), set(statements["WarehouseBuckets"]["Resource"]))
    assert _s3_grants(stack) == expected
    assert expected[0] >= {"arn:aws-us-gov:s3:::other-lake/iceberg/*", "arn:aws-us-gov:s3:::third-lake/*"}
    assert len(stack.of_type("AWS::IAM::ManagedPolicy")) == len(allowed)


@pytest.mark.parametrize(("name", "value"), [
    ("WarehousePrefix", "/warehouse/"), ("WarehousePrefix", "a//b"), ("WarehousePrefix", "wh/*"),
    ("WarehouseBucket", "My_Bucket"), ("AllowedLocations", "file:///tmp/lake"),
    ("AllowedLocations", "s3://lake/iceberg/"), ("AllowedLocations", "s3://lake/*"),
])
def test_a_setting_the_policy_could_not_follow_is_refused_by_the_parameters(name: str, value: str) -> None:
    assert not re.fullmatch(PARAMETERS[name]["AllowedPattern"], value)


def test_the_functions_may_use_only_the_stack_s_tables_key_and_log_groups() -> None:
    stack = _Stack(template())
    assert {n for n, r in stack.resources.items() if r["Type"] == "AWS::IAM::Role"} == {"DefaultRole",
                                                                                      "CrawlWorkerRole"}
    for name in ("DefaultRole", "CrawlWorkerRole"):
        role = stack.eval(stack.resources[name])
        (document,) = [p["PolicyDocument"] for p in role["Properties"]["Policies"]]
        by_sid = {s["Sid"]: s for s in document["Statement"]}
        assert by_sid["CatalogTables"]["Resource"] == [f"<{table}.Arn>" for table in table_ids()]
        assert by_sid["IdentitySecretsKey"]["Resource"] == "<IdentitiesKey.Arn>"
        functions = [n for n, r in stack.resources.items() if r["Type"] == "AWS::Serverless::Function"
                     and r["Properties"]["Role"]["Fn::GetAtt"][0] == name]
        assert functions
        assert sorted(by_sid["OwnLogs"]["Resource"]) == sorted(f"<{f}Logs.Arn>" for f in functions)
        if name == "CrawlWorkerRole":  # no warehouse: it writes tables through the API, as the crawler's role
            assert not any(s["Sid"].startswith("Warehouse") for s in document["Statement"])


# ------------------------------------------------------------------------------ the crawl worker
def test_the_crawl_worker_is_a_function_of_its_own_package_run_every_minute() -> None:
    stack = _Stack(template(), PyarrowLayerArn="arn:aws:lambda:us-east-1:336392948345:layer:AWSSDKPandas-Python311:20")
    worker = stack.eval(stack.resources["CrawlWorker"])["Properties"]
    api = stack.eval(stack.resources["APIHandler"])["Properties"]
    assert worker["Handler"] == "pipelines.crawl_worker.handler"
    assert worker["CodeUri"] == "./crawl-worker.zip" != api["CodeUri"]  # the API's package stays lean
    assert worker["Layers"] == ["arn:aws:lambda:us-east-1:336392948345:layer:AWSSDKPandas-Python311:20"]
    assert worker["Timeout"] == 900 and worker["Runtime"] == api["Runtime"]
    (event,) = worker["Events"].values()
    assert event == {"Type": "Schedule", "Properties": {"Schedule": "rate(1 minute)"}}
    variables = worker["Environment"]["Variables"]
    assert variables["GLUE_CRAWL_ENDPOINT"] == "https://<RestAPI>.execute-api.us-gov-west-1.<AWS::URLSuffix>/api/"
    spark = {"GLUE_CRAWL_EMR_APPLICATION": "", "GLUE_CRAWL_EMR_ROLE": "", "GLUE_CRAWL_EMR_CODE": "",
             "GLUE_CRAWL_SPARK_FILES": 20000}  # no EMR application: the worker crawls everything itself
    assert {k: variables[k] for k in spark} == spark
    assert {k: v for k, v in variables.items() if k != "GLUE_CRAWL_ENDPOINT" and k not in spark} == \
        api["Environment"]["Variables"]
    default = _Stack(template())
    assert default.eval(default.resources["CrawlWorker"])["Properties"]["Layers"] == "<AWS::NoValue>"


def test_large_crawls_go_to_the_emr_serverless_application_named() -> None:
    assert "CrawlWorkerSparkPolicy" not in _Stack(template()).resources
    stack = _Stack(template(), CrawlSparkApplicationId="00fabc123", CrawlSparkFiles=5000,
                   CrawlSparkJobRoleArn="arn:aws:iam::111122223333:role/CrawlSparkJob",
                   CrawlSparkCode="s3://ops-bucket/crawl-spark")
    variables = stack.eval(stack.resources["CrawlWorker"])["Properties"]["Environment"]["Variables"]
    assert (variables["GLUE_CRAWL_EMR_APPLICATION"], variables["GLUE_CRAWL_EMR_ROLE"], variables["GLUE_CRAWL_EMR_CODE"],
            variables["GLUE_CRAWL_SPARK_FILES"]) == ("00fabc123", "arn:aws:iam::111122223333:role/CrawlSparkJob",
                                                     "s3://ops-bucket/crawl-spark", 5000)
    policy = stack.eval(stack.resources["CrawlWorkerSparkPolicy"])["Properties"]
    assert policy["Roles"] == ["<CrawlWorkerRole>"]
    by_sid = {s["Sid"]: s for s in policy["PolicyDocument"]["Statement"]}
    application = "arn:aws-us-gov:emr-serverless:us-gov-west-1:111122223333:/applications/00fabc123"
    assert by_sid["CrawlSparkJobRuns"]["Resource"] == [application, application + "/jobruns/*"]
    assert by_sid["CrawlSparkPassJobRole"]["Resource"] == ["arn:aws:iam::111122223333:role/CrawlSparkJob"]
    assert by_sid["CrawlSparkPassJobRole"]["Condition"] == {
        "StringEquals": {"iam:PassedToService": "emr-serverless.amazonaws.com"}}
    assert by_sid["CrawlSparkSpecs"]["Resource"] == ["arn:aws-us-gov:s3:::ops-bucket/crawl-spark/crawls/*"]
    assert by_sid["CrawlSparkSealKey"] == {"Sid": "CrawlSparkSealKey", "Effect": "Allow", "Action": ["kms:Encrypt"],
                                           "Resource": ["<IdentitiesKey.Arn>"]}


def test_the_crawl_worker_reads_only_the_crawl_targets() -> None:
    assert [r for r in _Stack(template()).of_type("AWS::IAM::ManagedPolicy")] == []
    stack = _Stack(template(), CrawlTargets=["s3://raw-lake/sales", "s3://other-raw"])
    policies = {n: stack.eval(r) for n, r in stack.resources.items() if n.startswith("CrawlTarget")}
    assert set(policies) == {"CrawlTargets3rawlakesales", "CrawlTargets3otherraw"}
    grants = {}
    for policy_resource in policies.values():
        assert policy_resource["Properties"]["Roles"] == ["<CrawlWorkerRole>"]
        for statement in policy_resource["Properties"]["PolicyDocument"]["Statement"]:
            assert statement["Condition"] == {"StringEquals": {"aws:ResourceAccount": "111122223333"}}
            for resource in statement["Resource"]:
                grants.setdefault(resource, set()).update(statement["Action"])
    assert grants == {"arn:aws-us-gov:s3:::raw-lake/sales/*": {"s3:GetObject"},
                      "arn:aws-us-gov:s3:::raw-lake": {"s3:ListBucket"},
                      "arn:aws-us-gov:s3:::other-raw/*": {"s3:GetObject"},
                      "arn:aws-us-gov:s3:::other-raw": {"s3:ListBucket"}}


def test_the_paimon_catch_all_is_a_declared_greedy_resource() -> None:
    # Unrouted /v1 paths answer 501 (app.py's catch-all), so API Gateway must route them to the function.
    api = next(r for r in template()["Resources"].values() if r["Type"] == "AWS::Serverless::Api")
    paths = api["Properties"]["DefinitionBody"]["paths"]
    for path in ("/v1/{prefix}", "/v1/{prefix}/{proxy+}"):
        assert {"get", "post", "delete"} <= set(paths[path]), path
    for method in ("get", "post", "put", "delete", "patch"):
        declared = {p["name"] for p in paths["/v1/{prefix}/{proxy+}"][method]["parameters"]}
        assert declared == {"prefix", "proxy"}


def test_the_catalog_browser_and_health_are_routed_by_the_api() -> None:
    # GET / (a browser's redirect to /ui), the page, its allow-listed files and the health probe.
    api = next(r for r in template()["Resources"].values() if r["Type"] == "AWS::Serverless::Api")
    paths = api["Properties"]["DefinitionBody"]["paths"]
    assert {"get", "post"} <= set(paths["/"])
    for path in ("/ui", "/ui/{name}", "/health", "/ping"):
        assert "get" in paths[path], path


def test_the_crawl_worker_zip_holds_the_engine_and_the_api_zip_does_not(tmp_path) -> None:
    import ast
    import zipfile
    from pathlib import Path

    from infra.package import REPO, WORKER_MODULES, crawl_worker_zip

    api = tmp_path / "deployment.zip"
    with zipfile.ZipFile(api, "w") as built:
        built.writestr("app.py", "")
        built.writestr("chalicelib/__init__.py", "")
    worker = crawl_worker_zip(api)
    with zipfile.ZipFile(worker) as built:
        names = set(built.namelist())
    assert names == {"app.py", "chalicelib/__init__.py", *WORKER_MODULES}
    with zipfile.ZipFile(api) as built:
        assert not any(n.startswith("pipelines/") for n in built.namelist())
    # Every pipelines module the worker's modules import is in the zip (pyarrow is the layer's).
    for name in WORKER_MODULES:
        tree = ast.parse(Path(REPO / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pipelines"):
                if node.module == "pipelines.runtime":  # Spark only (layout's ship_package), never the crawl's
                    continue
                module = node.module.replace(".", "/")
                assert f"{module}.py" in names or f"{module}/__init__.py" in names, (name, node.module)
