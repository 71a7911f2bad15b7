"""The deployed functions' IAM policy holds exactly the actions the code calls.

The calls are found in the source the Lambda runs: app.py and every chalicelib module it imports
(at module level or inside a function), read as syntax trees. A DynamoDB call is any of

- a PynamoDB model method on a model class (``DatabaseItem.get``, ``.query``, ``.scan``,
  ``.batch_get``, ``.batch_write``, ``.exists``, ``.count``...) or on an item / a transaction
  (``.save``, ``.update(actions=...)``, ``.delete``, ``.refresh``, ``tx.condition_check``);
- a botocore / PynamoDB connection method named after an operation (``put_item``, ``query``...;
  names the code also defines for itself, such as ``create_table``, count only on a model);
- an operation name sent as a string (``direct.send("TransactWriteItems", ...)``, a paginator);
- an item of a hand-built transaction (``{"Put": ...}``, ``'{"Update":{"TableName":'``).

A transaction needs no action of its own: IAM authorizes each of its items (Put: PutItem,
ConditionCheck: ConditionCheckItem...). The match is deliberately wide for item methods (any
``.save(``), so it may find an action the code does not need, never miss one; the policy must
hold every action found and nothing else.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import botocore.session
import pytest
from botocore import xform_name

from chalicelib.store.dynamo.models import ALL_MODELS
from infra import policy

ROOT = Path(__file__).resolve().parents[2]

# Model methods on the class, and the actions they need (PynamoDB 6.1).
_MODEL_METHODS = {
    "get": "GetItem", "query": "Query", "scan": "Scan", "batch_get": "BatchGetItem",
    "batch_write": "BatchWriteItem", "exists": "DescribeTable", "describe_table": "DescribeTable",
    "create_table": "CreateTable", "delete_table": "DeleteTable", "update_ttl": "UpdateTimeToLive",
    "parallel_scan": "Scan", "rate_limited_scan": "Scan",
}
# On an item (or a TransactWrite / batch): any receiver.
_ITEM_METHODS = {"save": "PutItem", "refresh": "GetItem", "condition_check": "ConditionCheckItem"}
# A transaction's (TransactWriteItems / TransactGetItems) item kinds.
_TRANSACTION_ITEMS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                      "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}
_TRANSACTION_TEXT = re.compile(r'"(Put|Update|Delete|ConditionCheck|Get)":\s*\{\s*"TableName"')
# Operations whose items carry the authorization (see _TRANSACTION_ITEMS); TransactGetItems' Get.
_CARRIERS = {"TransactWriteItems": None, "TransactGetItems": "GetItem"}

_S3_CALLS = {"get_object": "s3:GetObject", "head_object": "s3:GetObject", "put_object": "s3:PutObject",
             "delete_object": "s3:DeleteObject", "delete_objects": "s3:DeleteObject",
             "list_objects_v2": "s3:ListBucket", "list_objects": "s3:ListBucket",
             "copy_object": "s3:PutObject", "upload_file": "s3:PutObject", "download_file": "s3:GetObject"}
_KMS_CALLS = {"decrypt": "kms:Decrypt", "encrypt": "kms:Encrypt", "generate_data_key": "kms:GenerateDataKey",
              "re_encrypt": "kms:ReEncrypt*", "generate_data_key_without_plaintext": "kms:GenerateDataKeyWithoutPlaintext"}


@cache
def _dynamodb_operations() -> dict[str, str]:
    """snake_case method name -> operation, for every operation of botocore's DynamoDB model."""
    model = botocore.session.get_session().get_service_model("dynamodb")
    return {xform_name(name): name for name in model.operation_names}


def _module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")
                base = parts if is_package else parts[:-1]
                base = base[:len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "chalicelib" or name.startswith("chalicelib.")}


# The modules are loaded on first use (every protocol's handler families, cleanup kinds): loaded
# here all at once, in a fresh interpreter, as the function would over its lifetime.
_LOAD_EVERYTHING = """
import json, sys
import app
from chalicelib.protocol import routing, served
from chalicelib.protocol.paimon import routes
from chalicelib.service import cleanup
for table in served.ROUTE_TABLES.values():
    for handler in table.values():
        routing.resolve(handler)
for _method, _path, handler in routes.ROUTE_LIST:
    routing.resolve(handler)
cleanup.known("")
print(json.dumps(sorted(n for n in sys.modules if n == "chalicelib" or n.startswith("chalicelib."))))
"""


@cache
def reachable() -> dict[str, Path]:
    """The modules the deployed function can run: what app.py loads, and what those modules
    import (inside functions too), transitively."""
    loaded = json.loads(subprocess.run([sys.executable, "-c", _LOAD_EVERYTHING], cwd=ROOT, check=True,
                                       capture_output=True, text=True).stdout)
    seen: dict[str, Path] = {"app": ROOT / "app.py"}
    for module in loaded:
        file = _module_file(module)
        if file is not None:
            seen[module] = file
    todo = list(seen)
    while todo:
        module = todo.pop()
        path = seen[module]
        tree = ast.parse(path.read_text(), str(path))
        for name in _imports(tree, module, path.name == "__init__.py"):
            # A package's modules run its __init__ too.
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                candidate = ".".join(parts[:i])
                file = _module_file(candidate)
                if file is not None and candidate not in seen:
                    seen[candidate] = file
                    todo.append(candidate)
    return seen


def _defined_names(paths: list[Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
    return names


def _model_receiver(node: ast.expr, models: set[str]) -> bool:
    return isinstance(node, ast.Name) and (node.id in models or node.id in ("model", "cls"))


def dynamodb_actions(paths: list[Path], root: Path = ROOT) -> dict[str, set[str]]:
    """IAM action (without ``dynamodb:``) -> where the code needs it (file:line)."""
    models = {model.__name__ for model in ALL_MODELS} | {"StoreModel", "Model"}
    operations = _dynamodb_operations()
    own = _defined_names(paths)
    found: dict[str, set[str]] = {}

    def need(action: str | None, path: Path, node: ast.AST) -> None:
        if action:
            found.setdefault(action, set()).add(f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}")

    def operation(name: str, path: Path, node: ast.AST) -> None:
        need(_CARRIERS[name] if name in _CARRIERS else name, path, node)

    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute):
                    attr = func.attr
                    if attr in _MODEL_METHODS and _model_receiver(func.value, models):
                        need(_MODEL_METHODS[attr], path, node)
                    elif attr == "count" and _model_receiver(func.value, models):
                        # Model.count(hash_key) queries; without one PynamoDB asks DescribeTable (or scans).
                        need("Query" if node.args else "DescribeTable", path, node)
                    if attr in _ITEM_METHODS:
                        need(_ITEM_METHODS[attr], path, node)
                    elif attr == "update" and any(k.arg == "actions" for k in node.keywords):
                        need("UpdateItem", path, node)
                    elif attr == "delete" and (not node.args or (isinstance(func.value, ast.Name) and func.value.id == "tx")):
                        need("DeleteItem", path, node)
                    if attr in operations and (attr not in own or _model_receiver(func.value, models)):
                        operation(operations[attr], path, node)
                    # An operation named by a string: sent directly, through botocore, or paginated
                    # (not a catalog action named to the permission checks: access.require("CreateTable")).
                    checks = isinstance(func.value, ast.Name) and func.value.id == "access"
                    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                            and not checks:
                        name = node.args[0].value
                        if name in operations.values():
                            operation(name, path, node)
                        elif attr == "get_paginator" and name in operations:
                            operation(operations[name], path, node)
            elif isinstance(node, ast.Dict):
                for key in node.keys:
                    if isinstance(key, ast.Constant) and key.value in _TRANSACTION_ITEMS:
                        need(_TRANSACTION_ITEMS[key.value], path, node)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                for kind in _TRANSACTION_TEXT.findall(node.value):
                    need(_TRANSACTION_ITEMS[kind], path, node)
    return found


def client_calls(paths: list[Path], calls: dict[str, str]) -> dict[str, set[str]]:
    """IAM action -> where (file:line), for client methods (or paginators) named in ``calls``."""
    found: dict[str, set[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name = node.func.attr
                if name == "get_paginator" and node.args and isinstance(node.args[0], ast.Constant):
                    name = node.args[0].value
                if name in calls:
                    found.setdefault(calls[name], set()).add(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def _lambda_paths() -> list[Path]:
    return sorted(reachable().values())


def test_the_scan_covers_the_store_and_not_the_admin_tools() -> None:
    modules = reachable()
    assert {"chalicelib.store.dynamo.dynamo_http", "chalicelib.store.warehouse", "chalicelib.store.secret_box",
            "chalicelib.store.paimon", "chalicelib.store.transactions"} <= set(modules)
    # Only the admin tools create tables (and ask whether they exist): not the function.
    assert "chalicelib.store.bootstrap" not in modules
    bootstrap = dynamodb_actions([ROOT / "chalicelib" / "store" / "bootstrap.py"])
    assert set(bootstrap) == {"DescribeTable", "CreateTable"}, "the scan must see Model.exists / create_table"


def test_the_scan_sees_every_way_of_calling_dynamodb(tmp_path: Path) -> None:
    source = tmp_path / "calls.py"
    source.write_text('''
def f(client, direct, tx, item):
    DatabaseItem.scan()
    TableItem.count()
    client.batch_write_item(RequestItems={})
    client.get_paginator("describe_continuous_backups")
    direct.send("UpdateTimeToLive", b"")
    tx.condition_check(DatabaseItem, "c", "d")
    tx.delete(item)
    item.update(actions=[])
    return [{"Put": {}}, \'{"Update":{"TableName":"t"}}\']
''')
    assert set(dynamodb_actions([source], root=tmp_path)) == {
        "Scan", "DescribeTable", "BatchWriteItem", "DescribeContinuousBackups", "UpdateTimeToLive",
        "ConditionCheckItem", "DeleteItem", "UpdateItem", "PutItem"}


def test_the_policy_grants_exactly_the_dynamodb_actions_the_code_calls() -> None:
    used = dynamodb_actions(_lambda_paths())
    granted = {action.removeprefix("dynamodb:") for action in policy.DYNAMODB_ACTIONS}
    assert set(used) - granted == set(), {a: sorted(used[a])[:3] for a in set(used) - granted}
    assert granted - set(used) == set(), "granted but never called"
    # What the issue asked about: nothing scans a table or describes one.
    assert "Scan" not in used and "DescribeTable" not in used


def test_no_model_has_a_secondary_index() -> None:
    """The policy names tables only: a Query on an index would need table/NAME/index/* too."""
    for model in ALL_MODELS:
        schema = model._get_schema()
        assert not schema["global_secondary_indexes"] and not schema["local_secondary_indexes"], model.__name__


def test_the_policy_grants_exactly_the_s3_actions_the_warehouse_calls() -> None:
    used = client_calls(_lambda_paths(), _S3_CALLS)
    assert set(used) == set(policy.S3_OBJECT_ACTIONS) | set(policy.S3_BUCKET_ACTIONS), used


def test_the_function_only_opens_secrets_with_kms() -> None:
    """Decrypt is granted; the KMS calls that seal (GenerateDataKey, or Encrypt) are made only by
    secret_box.seal, which only identities.create_key and migrate_keys call, which no module of the
    function calls (keys are issued and re-sealed by `python -m infra.identities` with the
    operator's credentials)."""
    paths = _lambda_paths()
    used = client_calls(paths, _KMS_CALLS)
    assert set(policy.KMS_ACTIONS) == {"kms:Decrypt"} and "kms:Decrypt" in used
    sealing = {action: where for action, where in used.items() if action not in policy.KMS_ACTIONS}
    secret_box = ROOT / "chalicelib" / "store" / "secret_box.py"
    seal_lines = _function_lines(secret_box, "seal")
    for action, where in sealing.items():
        for place in where:
            file, line = place.rsplit(":", 1)
            assert file == "chalicelib/store/secret_box.py" and int(line) in seal_lines, (action, place)
    assert _callers(paths, "seal") <= {"chalicelib/store/identities.py:create_key",
                                       "chalicelib/store/identities.py:migrate_keys"}
    assert _callers(paths, "create_key") == set() and _callers(paths, "migrate_keys") == set()


def _function_lines(path: Path, name: str) -> range:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return range(node.lineno, (node.end_lineno or node.lineno) + 1)
    raise AssertionError(f"{path}: no function {name}")


def _calls(node: ast.AST, name: str) -> bool:
    func = getattr(node, "func", None) if isinstance(node, ast.Call) else None
    return (getattr(func, "attr", None) or getattr(func, "id", None)) == name


def _callers(paths: list[Path], name: str) -> set[str]:
    """file:function of every call of ``name`` (as ``name(`` or ``x.name(``); file:<module> outside functions."""
    found = set()
    for path in paths:
        tree, where = ast.parse(path.read_text()), path.relative_to(ROOT)
        inside: set[int] = set()
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if _calls(node, name):
                        found.add(f"{where}:{function.name}")
                        inside.add(id(node))
        found.update(f"{where}:<module>" for node in ast.walk(tree) if _calls(node, name) and id(node) not in inside)
    return found


# ------------------------------------------------------------------------------ both paths
def _chalice_policy(region: str = "eu-west-1", partition: str = "aws", allowed: tuple[str, ...] = ()) -> dict:
    return policy.chalice_policy(warehouse="s3://lake/warehouse", allowed=list(allowed), account="111122223333",
                                 region=region, partition=partition, functions=policy.function_names())


def _actions(document: dict) -> dict[str, set[str]]:
    by_service: dict[str, set[str]] = {}
    for statement in document["Statement"]:
        assert statement["Effect"] == "Allow"
        for action in statement["Action"]:
            by_service.setdefault(action.split(":")[0], set()).add(action)
    return by_service


def test_both_deploy_paths_grant_the_same_actions() -> None:
    from infra.package import sam_template

    resources = sam_template()["Resources"]
    roles = {n: r for n, r in resources.items() if isinstance(r, dict) and r["Type"] == "AWS::IAM::Role"}
    assert roles
    chalice = _actions(_chalice_policy())
    for name, role in roles.items():
        (document,) = [p["PolicyDocument"] for p in role["Properties"]["Policies"]]
        deployed = _actions(document)
        expected = {**chalice, "logs": chalice["logs"] - {policy.CREATE_LOG_GROUP}}
        if name == "CrawlWorkerRole":
            # The crawl worker: the same store; no warehouse (it writes through the API), its
            # crawl targets read by policies of their own (test_deploy_template.py).
            expected.pop("s3")
            # It seals the key it issues itself for the crawler's role (pipelines.crawl_worker.internal_key).
            expected["kms"] = expected["kms"] | {"kms:GenerateDataKey"}
        assert deployed == expected, name
    # Each AllowedLocations entry: the warehouse's S3 actions, on that entry only.
    (per_location,) = resources["Fn::ForEach::AllowedLocationPolicies"][2].values()
    assert _actions(per_location["Properties"]["PolicyDocument"]) == {"s3": chalice["s3"]}
    assert chalice["dynamodb"] == set(policy.DYNAMODB_ACTIONS)
    assert chalice["s3"] == set(policy.S3_OBJECT_ACTIONS) | set(policy.S3_BUCKET_ACTIONS)
    assert chalice["kms"] == set(policy.KMS_ACTIONS)


def test_the_chalice_policy_names_this_account_region_and_partition() -> None:
    document = _chalice_policy(region="cn-north-1", partition="aws-cn", allowed=("s3://other/iceberg/",))
    text = json.dumps(document)
    assert "arn:aws:" not in text and '"*"' not in text and ":*:" not in text
    by_sid = {s["Sid"]: s for s in document["Statement"]}
    tables = by_sid["CatalogTables"]["Resource"]
    assert len(tables) == len(ALL_MODELS)
    assert all(arn.startswith("arn:aws-cn:dynamodb:cn-north-1:111122223333:table/glue_catalog_") for arn in tables)
    assert by_sid["WarehouseObjects"]["Resource"] == ["arn:aws-cn:s3:::lake/warehouse/*",
                                                      "arn:aws-cn:s3:::other/iceberg/*"]
    assert by_sid["WarehouseBuckets"]["Resource"] == ["arn:aws-cn:s3:::lake", "arn:aws-cn:s3:::other"]
    for sid in ("WarehouseObjects", "WarehouseBuckets"):
        assert by_sid[sid]["Condition"] == {"StringEquals": {"aws:ResourceAccount": "111122223333"}}
    assert by_sid["IdentitySecretsKey"]["Resource"] == "arn:aws-cn:kms:cn-north-1:111122223333:key/*"
    assert by_sid["IdentitySecretsKey"]["Condition"] == {
        "ForAnyValue:StringEquals": {"kms:ResourceAliases": "alias/glue-catalog-identities"}}
    groups = by_sid["OwnLogs"]["Resource"]
    assert "arn:aws-cn:logs:cn-north-1:111122223333:log-group:/aws/lambda/glue-catalog-prod:*" in groups
    assert all(":log-group:/aws/lambda/glue-catalog-prod" in arn for arn in groups)


@pytest.mark.parametrize("uri", ["file:///tmp/x", "s3:///prefix", "s3://b/*", "gs://b/p", "s3://b/${aws:username}"])
def test_a_location_iam_cannot_grant_exactly_is_refused(uri: str) -> None:
    with pytest.raises(policy.PolicyError):
        policy.parse_location(uri)


def test_the_command_writes_the_policy_and_the_stage_settings(tmp_path, monkeypatch, capsys) -> None:
    chalice = tmp_path / ".chalice"
    chalice.mkdir()
    config = json.loads((ROOT / ".chalice" / "config.json").read_text())
    (chalice / "config.json").write_text(json.dumps(config))
    monkeypatch.setattr(policy, "CHALICE_DIR", chalice)
    monkeypatch.setattr(policy, "function_names", lambda stage: ["glue-catalog-prod"])
    assert policy.main(["--warehouse", "s3://lake/warehouse/", "--allowed-locations", "s3://a/x, s3://b",
                        "--account", "111122223333", "--region", "us-gov-west-1"]) == 0
    written = json.loads((chalice / "config.json").read_text())
    assert written["stages"]["prod"]["environment_variables"] == {
        **config["stages"]["prod"]["environment_variables"],
        "PAIMON_WAREHOUSE": "s3://lake/warehouse", "GLUE_ALLOWED_LOCATIONS": "s3://a/x,s3://b"}
    document = json.loads((chalice / "policy.json").read_text())
    assert "arn:aws-us-gov:s3:::b/*" in json.dumps(document)
    assert policy.main(["--warehouse", "file:///tmp/w", "--account", "1", "--region", "us-east-1"]) == 2
    assert "s3://bucket" in capsys.readouterr().err
