"""Glue Data Catalog resource ARNs (chalicelib/domain/arns.py)."""

from __future__ import annotations

import pytest

from chalicelib.domain.arns import GlueArn, format_arn, parse
from chalicelib.errors import InvalidInputException


@pytest.mark.parametrize("arn, expected", [
    ("arn:aws:glue:us-east-1:123456789012:catalog", GlueArn("aws", "us-east-1", "123456789012", "catalog", ())),
    ("arn:aws:glue:us-east-1:123456789012:database/db1",
     GlueArn("aws", "us-east-1", "123456789012", "database", ("db1",))),
    ("arn:aws-cn:glue:cn-north-1:123456789012:table/db1/t/with/slashes",
     GlueArn("aws-cn", "cn-north-1", "123456789012", "table", ("db1", "t/with/slashes"))),
    ("arn:aws:glue:eu-west-1:123456789012:connection/my conn",
     GlueArn("aws", "eu-west-1", "123456789012", "connection", ("my conn",))),
    ("arn:aws:glue:us-east-1:123456789012:userDefinedFunction/db1/fn",
     GlueArn("aws", "us-east-1", "123456789012", "userDefinedFunction", ("db1", "fn"))),
])
def test_parse(arn, expected):
    assert parse(arn) == expected
    assert format_arn(expected.region, expected.account, expected.kind, *expected.names,
                      partition=expected.partition) == arn


@pytest.mark.parametrize("arn", [
    "", "arn:aws:s3:::bucket", "arn:aws:glue:us-east-1:123456789012",
    "arn:aws:glue::123456789012:catalog", "arn:aws:glue:us-east-1:1234:catalog",
    "arn:aws:glue:us-east-1:123456789012:catalog/s3tablescatalog",
    "arn:aws:glue:us-east-1:123456789012:database", "arn:aws:glue:us-east-1:123456789012:database/",
    "arn:aws:glue:us-east-1:123456789012:table/db1", "arn:aws:glue:us-east-1:123456789012:table/db1/",
    "arn:aws:glue:us-east-1:123456789012:table//t1", "arn:aws:glue:us-east-1:123456789012:job/j1",
])
def test_malformed_is_invalid_input_naming_the_member(arn):
    with pytest.raises(InvalidInputException, match="ResourceArn"):
        parse(arn)
