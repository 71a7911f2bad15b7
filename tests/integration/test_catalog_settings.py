"""Catalog settings through boto3: encryption settings, resource policies, catalog import status."""

from __future__ import annotations

import datetime
import json

import pytest

from infra.local.stack import REGION
from tests.integration.conftest import random_account, table_input

POLICY = json.dumps({"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:root"},
    "Action": "glue:GetDatabase", "Resource": "arn:aws:glue:us-east-1:123456789012:catalog"}]})
OTHER_POLICY = json.dumps({"Version": "2012-10-17", "Statement": []})



# ------------------------------------------------------------------------------------ encryption
def test_encryption_settings_default_then_round_trip(fresh_glue, account):
    assert fresh_glue.get_data_catalog_encryption_settings()["DataCatalogEncryptionSettings"] == {
        "EncryptionAtRest": {"CatalogEncryptionMode": "DISABLED"},
        "ConnectionPasswordEncryption": {"ReturnConnectionPasswordEncrypted": False}}
    settings = {
        "EncryptionAtRest": {"CatalogEncryptionMode": "SSE-KMS", "SseAwsKmsKeyId": "alias/catalog"},
        "ConnectionPasswordEncryption": {"ReturnConnectionPasswordEncrypted": True,
                                         "AwsKmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/k1"}}
    fresh_glue.put_data_catalog_encryption_settings(DataCatalogEncryptionSettings=settings)
    assert fresh_glue.get_data_catalog_encryption_settings()["DataCatalogEncryptionSettings"] == settings
    # A put replaces the whole configuration: what it leaves out is back to the default.
    fresh_glue.put_data_catalog_encryption_settings(DataCatalogEncryptionSettings={
        "EncryptionAtRest": {"CatalogEncryptionMode": "DISABLED"}})
    assert fresh_glue.get_data_catalog_encryption_settings(CatalogId=account)[
        "DataCatalogEncryptionSettings"] == {
        "EncryptionAtRest": {"CatalogEncryptionMode": "DISABLED"},
        "ConnectionPasswordEncryption": {"ReturnConnectionPasswordEncrypted": False}}


def test_encryption_settings_are_per_catalog(fresh_glue, make_client):
    fresh_glue.put_data_catalog_encryption_settings(DataCatalogEncryptionSettings={
        "EncryptionAtRest": {"CatalogEncryptionMode": "SSE-KMS"}})
    other = make_client("glue", account=random_account())
    mode = other.get_data_catalog_encryption_settings()["DataCatalogEncryptionSettings"]["EncryptionAtRest"]
    assert mode == {"CatalogEncryptionMode": "DISABLED"}


def test_encryption_settings_validation(fresh_glue):
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="CatalogEncryptionServiceRole is required"):
        fresh_glue.put_data_catalog_encryption_settings(DataCatalogEncryptionSettings={
            "EncryptionAtRest": {"CatalogEncryptionMode": "SSE-KMS-WITH-SERVICE-ROLE"}})
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="enum"):
        fresh_glue.put_data_catalog_encryption_settings(DataCatalogEncryptionSettings={
            "EncryptionAtRest": {"CatalogEncryptionMode": "ROT13"}})
    with pytest.raises(fresh_glue.exceptions.AccessDeniedException):
        fresh_glue.get_data_catalog_encryption_settings(CatalogId="000000000000")
    role = "arn:aws:iam::123456789012:role/glue-encrypt"
    settings = {"EncryptionAtRest": {"CatalogEncryptionMode": "SSE-KMS-WITH-SERVICE-ROLE",
                                     "SseAwsKmsKeyId": "k", "CatalogEncryptionServiceRole": role}}
    fresh_glue.put_data_catalog_encryption_settings(DataCatalogEncryptionSettings=settings)
    got = fresh_glue.get_data_catalog_encryption_settings()["DataCatalogEncryptionSettings"]
    assert got["EncryptionAtRest"] == settings["EncryptionAtRest"]


# ---------------------------------------------------------------------------------- import status
def test_catalog_import_status_is_completed_and_stable(fresh_glue):
    first = fresh_glue.get_catalog_import_status()["ImportStatus"]
    assert first["ImportCompleted"] is True
    assert first["ImportedBy"] == "StatusSetByDefault"
    assert isinstance(first["ImportTime"], datetime.datetime)
    assert fresh_glue.get_catalog_import_status()["ImportStatus"] == first


# ------------------------------------------------------------------------------ resource policies
def test_catalog_policy_round_trip(fresh_glue):
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_resource_policy()
    put = fresh_glue.put_resource_policy(PolicyInJson=POLICY)
    got = fresh_glue.get_resource_policy()
    assert got["PolicyInJson"] == POLICY
    assert got["PolicyHash"] == put["PolicyHash"]
    assert got["CreateTime"] == got["UpdateTime"]
    updated = fresh_glue.put_resource_policy(PolicyInJson=OTHER_POLICY, PolicyHashCondition=put["PolicyHash"])
    assert updated["PolicyHash"] != put["PolicyHash"]
    again = fresh_glue.get_resource_policy()
    assert again["PolicyInJson"] == OTHER_POLICY
    assert again["CreateTime"] == got["CreateTime"]
    assert again["UpdateTime"] >= got["UpdateTime"]
    fresh_glue.delete_resource_policy(PolicyHashCondition=updated["PolicyHash"])
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_resource_policy()
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.delete_resource_policy()


def test_policy_exists_condition(fresh_glue):
    with pytest.raises(fresh_glue.exceptions.ConditionCheckFailureException, match="MUST_EXIST"):
        fresh_glue.put_resource_policy(PolicyInJson=POLICY, PolicyExistsCondition="MUST_EXIST")
    fresh_glue.put_resource_policy(PolicyInJson=POLICY, PolicyExistsCondition="NOT_EXIST")
    with pytest.raises(fresh_glue.exceptions.ConditionCheckFailureException, match="NOT_EXIST"):
        fresh_glue.put_resource_policy(PolicyInJson=OTHER_POLICY, PolicyExistsCondition="NOT_EXIST")
    assert fresh_glue.get_resource_policy()["PolicyInJson"] == POLICY
    fresh_glue.put_resource_policy(PolicyInJson=OTHER_POLICY, PolicyExistsCondition="MUST_EXIST")
    fresh_glue.put_resource_policy(PolicyInJson=POLICY, PolicyExistsCondition="NONE")
    assert fresh_glue.get_resource_policy()["PolicyInJson"] == POLICY


def test_policy_hash_condition(fresh_glue):
    with pytest.raises(fresh_glue.exceptions.ConditionCheckFailureException, match="no resource policy"):
        fresh_glue.put_resource_policy(PolicyInJson=POLICY, PolicyHashCondition="nothing-yet")
    first = fresh_glue.put_resource_policy(PolicyInJson=POLICY)["PolicyHash"]
    second = fresh_glue.put_resource_policy(PolicyInJson=OTHER_POLICY, PolicyHashCondition=first)["PolicyHash"]
    # A writer still holding the first hash lost the race: refused, the policy unchanged.
    with pytest.raises(fresh_glue.exceptions.ConditionCheckFailureException, match="does not match"):
        fresh_glue.put_resource_policy(PolicyInJson=POLICY, PolicyHashCondition=first)
    with pytest.raises(fresh_glue.exceptions.ConditionCheckFailureException, match="does not match"):
        fresh_glue.delete_resource_policy(PolicyHashCondition=first)
    assert fresh_glue.get_resource_policy()["PolicyHash"] == second


def test_policy_must_be_a_json_object(fresh_glue):
    for bad in ("{not json", "[1, 2]"):
        with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="PolicyInJson"):
            fresh_glue.put_resource_policy(PolicyInJson=bad)
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_resource_policy()


def test_get_resource_policies_lists_the_catalog_policy(fresh_glue):
    assert fresh_glue.get_resource_policies()["GetResourcePoliciesResponseList"] == []
    fresh_glue.put_resource_policy(PolicyInJson=POLICY)
    listed = fresh_glue.get_resource_policies(MaxResults=10)["GetResourcePoliciesResponseList"]
    got = fresh_glue.get_resource_policy()
    del got["ResponseMetadata"]
    assert listed == [got]
    pages = list(fresh_glue.get_paginator("get_resource_policies").paginate(PaginationConfig={"PageSize": 1}))
    assert [p["PolicyInJson"] for page in pages for p in page["GetResourcePoliciesResponseList"]] == [POLICY]


def test_resource_level_policies_are_refused_as_aws_refuses_them(fresh_glue, account):
    fresh_glue.create_database(DatabaseInput={"Name": "db1"})
    fresh_glue.create_table(DatabaseName="db1", TableInput=table_input("t1"))
    fresh_glue.put_resource_policy(PolicyInJson=POLICY)
    for resource in ("catalog", "database/db1", "table/db1/t1"):
        with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="resource level policy is not currently"):
            fresh_glue.put_resource_policy(PolicyInJson=OTHER_POLICY, ResourceArn=f"arn:aws:glue:{REGION}:{account}:{resource}")
    # A database or table has no policy of its own; the catalog ARN addresses the catalog's.
    for resource in ("database/db1", "table/db1/t1"):
        with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match=": Policy not found$"):
            fresh_glue.get_resource_policy(ResourceArn=f"arn:aws:glue:{REGION}:{account}:{resource}")
        with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match=": Policy not found$"):
            fresh_glue.delete_resource_policy(ResourceArn=f"arn:aws:glue:{REGION}:{account}:{resource}")
    catalog_arn = f"arn:aws:glue:{REGION}:{account}:catalog"
    assert fresh_glue.get_resource_policy(ResourceArn=catalog_arn)["PolicyInJson"] == POLICY
    fresh_glue.delete_resource_policy(ResourceArn=catalog_arn)
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match=": Policy not found$"):
        fresh_glue.get_resource_policy()


def test_resource_policy_arn_errors(fresh_glue, account):
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException, match="nothere"):
        fresh_glue.get_resource_policy(ResourceArn=f"arn:aws:glue:{REGION}:{account}:database/nothere")
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="cannot be given a resource policy"):
        fresh_glue.get_resource_policy(ResourceArn=f"arn:aws:glue:{REGION}:{account}:connection/c1")
    with pytest.raises(fresh_glue.exceptions.InvalidInputException, match="region"):
        fresh_glue.get_resource_policy(ResourceArn=f"arn:aws:glue:eu-west-1:{account}:catalog")
    with pytest.raises(fresh_glue.exceptions.AccessDeniedException):
        fresh_glue.get_resource_policy(ResourceArn=f"arn:aws:glue:{REGION}:000000000000:catalog")
