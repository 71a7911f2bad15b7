"""The TransactionId check every Glue request gets before its action runs (done once, by the
wire): it must be one of the caller's transactions, still usable, READ_AND_WRITE for a write,
and not combined with QueryAsOfTime. Through boto3 over HTTP, and raw HTTP for an operation
whose input has no TransactionId member (the check still applies, as it always has)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError

from tests.integration.conftest import table_input
from tests.integration.lf_helpers import Governed


@pytest.fixture
def gov(endpoint) -> Governed:
    """A catalog of its own with one governed table ``objects``."""
    return Governed.create(endpoint)


def _glue_raw(gov: Governed, operation: str, body: dict) -> tuple[int, dict]:
    headers = {"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": f"AWSGlue.{operation}",
               "Authorization": (f"AWS4-HMAC-SHA256 Credential={gov.account}/20260101/us-east-1/glue/"
                                 "aws4_request, SignedHeaders=host, Signature=0")}
    request = urllib.request.Request(gov.endpoint + "/", data=json.dumps(body).encode(), headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_write_in_a_read_only_transaction_is_refused(gov):
    tx = gov.lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    with pytest.raises(gov.glue.exceptions.InvalidInputException, match="READ_ONLY"):
        gov.glue.create_table(DatabaseName=gov.db, TableInput=table_input("t"), TransactionId=tx)
    # Reading in it is fine.
    assert gov.glue.get_table(DatabaseName=gov.db, Name="objects", TransactionId=tx)["Table"]["Name"] == "objects"


def test_transaction_id_and_query_as_of_time_exclude_each_other(gov):
    tx = gov.lf.start_transaction()["TransactionId"]
    with pytest.raises(gov.glue.exceptions.InvalidInputException, match="QueryAsOfTime"):
        gov.glue.get_table(DatabaseName=gov.db, Name="objects", TransactionId=tx, QueryAsOfTime=1)


def test_unknown_cancelled_and_committed_transactions_are_refused(gov):
    with pytest.raises(gov.glue.exceptions.EntityNotFoundException):
        gov.glue.get_tables(DatabaseName=gov.db, TransactionId="0" * 32)
    cancelled = gov.lf.start_transaction()["TransactionId"]
    gov.lf.cancel_transaction(TransactionId=cancelled)
    with pytest.raises(ClientError) as caught:
        gov.glue.get_tables(DatabaseName=gov.db, TransactionId=cancelled)
    assert caught.value.response["Error"]["Code"] == "TransactionCanceledException"
    committed = gov.lf.start_transaction()["TransactionId"]
    gov.lf.commit_transaction(TransactionId=committed)
    with pytest.raises(ClientError) as caught:
        gov.glue.delete_table(DatabaseName=gov.db, Name="objects", TransactionId=committed)
    # Glue's model names neither exception: botocore reports them by code only.
    assert caught.value.response["Error"]["Code"] == "TransactionCommittedException"
    assert gov.glue.get_table(DatabaseName=gov.db, Name="objects")["Table"]["Name"] == "objects"


def test_any_glue_operation_carrying_a_transaction_id_has_it_checked(gov):
    cancelled = gov.lf.start_transaction()["TransactionId"]
    gov.lf.cancel_transaction(TransactionId=cancelled)
    status, body = _glue_raw(gov, "GetDatabase", {"Name": gov.db, "TransactionId": cancelled})
    assert (status, body["__type"]) == (400, "TransactionCanceledException")
    status, body = _glue_raw(gov, "GetDatabase", {"Name": gov.db})
    assert status == 200 and body["Database"]["Name"] == gov.db
