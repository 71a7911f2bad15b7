"""The deployed configuration: API Gateway passes every request through (authorization NONE) and
the Lambda verifies SigV4 itself (GLUE_AUTH=sigv4 in the prod stage), with a KMS key for the
identities' secrets that the function's policy lets it use and the package keeps botocore's
model for. API Gateway's own IAM auth cannot serve this catalog: it only accepts signatures
made for execute-api, while Glue and Lake Formation clients sign for glue / lakeformation."""

from __future__ import annotations

import json
import pathlib

from chalice.config import Config
from chalice.deploy.swagger import SwaggerGenerator

from app import app
from infra import policy
from infra.cloudformation import IDENTITIES_KEY_ALIAS, resources
from infra.package import KEEP_SERVICES, STAGE

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = json.loads((ROOT / ".chalice" / "config.json").read_text())


def stage(name: str) -> Config:
    return Config(chalice_stage=name, config_from_disk=CONFIG, user_provided_params={},
                  default_params={"project_dir": str(ROOT)})


def test_the_package_builds_the_prod_stage_with_signatures_verified() -> None:
    assert STAGE == "prod"
    env = stage(STAGE).environment_variables
    assert env["GLUE_AUTH"] == "sigv4"
    assert env["GLUE_AUTH_KMS_KEY_ID"] == IDENTITIES_KEY_ALIAS


def test_the_dev_stage_sets_no_deployed_settings() -> None:
    """The local server and chalice's test client read the dev stage: no KMS key, no forced mode."""
    env = stage("dev").environment_variables
    assert "GLUE_AUTH" not in env and "GLUE_AUTH_KMS_KEY_ID" not in env


def test_api_gateway_passes_requests_through_to_the_function() -> None:
    """No route has an authorizer, so every method's authorization is NONE: API Gateway forwards
    the client's Authorization header (it does so only for such methods) and the Lambda checks it."""
    assert all(entry.authorizer is None for methods in app.routes.values() for entry in methods.values())
    swagger = SwaggerGenerator("us-east-1", {"api_handler_arn": "arn:aws:lambda:us-east-1:123456789012:function:f"}).generate_swagger(app)
    assert "securityDefinitions" not in swagger
    for path, methods in swagger["paths"].items():
        for verb, method in methods.items():
            assert "security" not in method, (path, verb)


def test_the_function_may_use_only_the_aliased_kms_key() -> None:
    """chalice deploy's policy (python -m infra.policy): Decrypt, on a key carrying the alias."""
    document = policy.chalice_policy(warehouse="s3://lake/w", allowed=[], account="111122223333",
                                     region="us-east-1", partition="aws", functions=["glue-catalog-prod"])
    kms = [s for s in document["Statement"] if any(a.startswith("kms:") for a in s["Action"])]
    assert len(kms) == 1
    # Only opening secrets: keys are sealed by `python -m infra.identities` with the operator's credentials.
    assert kms[0]["Action"] == ["kms:Decrypt"]
    assert kms[0]["Condition"] == {"ForAnyValue:StringEquals": {"kms:ResourceAliases": IDENTITIES_KEY_ALIAS}}


def test_the_template_creates_the_key_under_that_alias() -> None:
    key, alias = resources()["IdentitiesKey"], resources()["IdentitiesKeyAlias"]
    assert key["Type"] == "AWS::KMS::Key" and key["DeletionPolicy"] == "Retain"
    assert key["Properties"]["EnableKeyRotation"] is True
    assert alias["Properties"] == {"AliasName": IDENTITIES_KEY_ALIAS, "TargetKeyId": {"Ref": "IdentitiesKey"}}


def test_the_package_keeps_the_kms_model() -> None:
    assert "kms" in KEEP_SERVICES
