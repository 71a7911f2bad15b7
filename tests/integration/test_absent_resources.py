"""Listings of Glue resources this service never holds (jobs, triggers, workflows, ...): through
boto3 each answers what AWS answers an account that has none, an empty list and no NextToken, its
input still validated against the model; creating one stays UnknownOperationException."""

from __future__ import annotations

import botocore.exceptions
import pytest

from chalicelib.service.absent_resources import NEVER_HELD

# operation -> the boto3 method, and the output members that must be present and empty.
LISTINGS = {
    "GetJobs": ("get_jobs", ["Jobs"]),
    "ListJobs": ("list_jobs", ["JobNames"]),
    "GetTriggers": ("get_triggers", ["Triggers"]),
    "ListTriggers": ("list_triggers", ["TriggerNames"]),
    "ListWorkflows": ("list_workflows", ["Workflows"]),
    "GetDevEndpoints": ("get_dev_endpoints", ["DevEndpoints"]),
    "ListDevEndpoints": ("list_dev_endpoints", ["DevEndpointNames"]),
    "GetMLTransforms": ("get_ml_transforms", ["Transforms"]),
    "ListMLTransforms": ("list_ml_transforms", ["TransformIds"]),
    "GetSecurityConfigurations": ("get_security_configurations", ["SecurityConfigurations"]),
    "ListSessions": ("list_sessions", ["Ids", "Sessions"]),
    "ListBlueprints": ("list_blueprints", ["Blueprints"]),
    "ListDataQualityRulesets": ("list_data_quality_rulesets", ["Rulesets"]),
    "ListCustomEntityTypes": ("list_custom_entity_types", ["CustomEntityTypes"]),
    "ListUsageProfiles": ("list_usage_profiles", ["Profiles"]),
}


def test_the_listings_are_the_service_s_never_held_operations() -> None:
    assert set(LISTINGS) == set(NEVER_HELD)


@pytest.mark.parametrize("operation", sorted(LISTINGS))
def test_listing_answers_empty(glue, operation: str) -> None:
    method, members = LISTINGS[operation]
    answer = getattr(glue, method)()
    assert {k: v for k, v in answer.items() if k != "ResponseMetadata"} == {m: [] for m in members}
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_paginators_and_filters_answer_empty(glue) -> None:
    """DataHub pages GetJobs with boto3's paginator; the filters a model allows change nothing."""
    pages = list(glue.get_paginator("get_jobs").paginate())
    assert [page["Jobs"] for page in pages] == [[]]
    assert glue.list_jobs(MaxResults=1000, Tags={"team": "data"})["JobNames"] == []
    assert glue.get_triggers(DependentJobName="etl", MaxResults=200)["Triggers"] == []
    assert glue.get_ml_transforms(Filter={"Name": "x", "TransformType": "FIND_MATCHES"},
                                  Sort={"Column": "NAME", "SortDirection": "ASCENDING"})["Transforms"] == []


@pytest.mark.parametrize("call, member", [
    (lambda glue: glue.get_jobs(MaxResults=0), "MaxResults"),
    (lambda glue: glue.get_jobs(MaxResults=1001), "MaxResults"),
    (lambda glue: glue.list_workflows(MaxResults=26), "MaxResults"),
    (lambda glue: glue.get_triggers(DependentJobName=""), "DependentJobName"),
    (lambda glue: glue.list_jobs(Tags={f"k{i}": "v" for i in range(51)}), "Tags"),
    (lambda glue: glue.get_ml_transforms(Sort={"Column": "NAME", "SortDirection": "SIDEWAYS"}), "SortDirection"),
])
def test_input_is_validated_as_the_model_says(glue, call, member: str) -> None:
    raw = _unvalidated(glue)  # boto3 checks some ranges itself: the service's own check is the one seen
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        call(raw)
    error = raised.value.response["Error"]
    assert error["Code"] == "InvalidInputException"
    assert member.lower() in error["Message"].lower()


def test_a_next_token_is_refused_since_none_is_ever_issued(glue) -> None:
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        glue.get_jobs(NextToken="made-up")
    assert raised.value.response["Error"]["Code"] == "InvalidInputException"
    assert "NextToken" in raised.value.response["Error"]["Message"]


@pytest.mark.parametrize("call, operation", [
    (lambda glue: glue.create_job(Name="etl", Role="role", Command={"Name": "glueetl"}), "CreateJob"),
    (lambda glue: glue.create_trigger(Name="t", Type="ON_DEMAND", Actions=[{"JobName": "etl"}]), "CreateTrigger"),
    (lambda glue: glue.create_workflow(Name="w"), "CreateWorkflow"),
])
def test_creating_one_stays_unknown(glue, call, operation: str) -> None:
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        call(glue)
    assert raised.value.response["Error"]["Code"] == "UnknownOperationException"
    assert operation in raised.value.response["Error"]["Message"]


def _unvalidated(glue):
    """The same client with boto3's own parameter validation off, so the service's is seen."""
    import boto3
    from botocore.config import Config

    credentials = glue._request_signer._credentials
    return boto3.client("glue", endpoint_url=glue.meta.endpoint_url, region_name=glue.meta.region_name,
                        aws_access_key_id=credentials.access_key, aws_secret_access_key=credentials.secret_key,
                        config=Config(parameter_validation=False, retries={"max_attempts": 1}))
