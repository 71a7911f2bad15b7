"""Operations botocore's models have but this service does not serve: through boto3, each is a
clean UnknownOperationException naming the operation, for Glue (JSON 1.1) and Lake Formation
(REST-JSON). docs/compatibility.md lists them (infra/compatibility.py)."""

from __future__ import annotations

import botocore.exceptions
import pytest

from chalicelib.protocol import served


@pytest.mark.parametrize("service, operation, call", [
    ("glue", "CreateJob", lambda glue, lf: glue.create_job(Name="etl", Role="r", Command={"Name": "glueetl"})),
    ("lakeformation", "ListLFTags", lambda glue, lf: lf.list_lf_tags()),
])
def test_unserved_operation_is_unknown_operation_naming_it(glue, lakeformation, service, operation, call):
    assert (service, operation) not in served.implemented(), "pick an operation this service does not serve"
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        call(glue, lakeformation)
    error = raised.value.response["Error"]
    assert error["Code"] == "UnknownOperationException"
    assert f"{service}:{operation}" in error["Message"]
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert raised.value.operation_name == operation
