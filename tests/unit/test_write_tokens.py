"""write_tokens: a retried write that meets its own landed attempt answers success; a real
condition failure stays one (the end-to-end check is tests/integration/test_lost_replies.py)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from chalicelib.store.dynamo import write_tokens
from chalicelib.store.dynamo.write_tokens import ATTRIBUTE, TokenCaller, with_token


def failed(item: dict | None = None, attempts: int = 0) -> ClientError:
    response: dict[str, Any] = {"Error": {"Code": "ConditionalCheckFailedException", "Message": "failed"},
                                "ResponseMetadata": {"HTTPStatusCode": 400, "RetryAttempts": attempts}}
    if item is not None:
        response["Item"] = item
    return ClientError(response, "PutItem")


class Store:
    """A fake transport: the first ``lose`` sends land but their answers are lost (a read
    timeout); then the item as the first send left it fails the condition."""

    def __init__(self, lose: int = 1, existing: dict | None = None) -> None:
        self.lose, self.sent, self.item = lose, [], existing

    def __call__(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(params)
        if self.item is None:
            self.item = dict(params.get("Item") or {ATTRIBUTE: params["ExpressionAttributeValues"][":glue_wt"]})
            if self.lose:
                self.lose -= 1
                raise ReadTimeoutError(endpoint_url="http://ddb")
            return {}
        if self.lose:
            self.lose -= 1
            raise ReadTimeoutError(endpoint_url="http://ddb")
        raise failed(self.item, attempts=0)


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(write_tokens, "_RESEND", write_tokens.Policy(attempts=3, base_delay=0.0))


def test_a_put_whose_answer_was_lost_succeeds_when_its_resend_meets_it() -> None:
    store = Store(lose=1)
    call = TokenCaller(store)
    assert call("PutItem", {"TableName": "t", "Item": {"k": {"S": "a"}},
                            "ConditionExpression": "attribute_not_exists(k)"}) == {}
    assert len(store.sent) == 2 and store.sent[0] == store.sent[1]  # the same token both times
    assert store.item[ATTRIBUTE] == store.sent[0]["Item"][ATTRIBUTE]


def test_a_put_that_meets_someone_elses_item_still_fails() -> None:
    store = Store(lose=0, existing={"k": {"S": "a"}, ATTRIBUTE: {"S": "another call"}})
    with pytest.raises(ClientError):
        TokenCaller(store)("PutItem", {"TableName": "t", "Item": {"k": {"S": "a"}},
                                       "ConditionExpression": "attribute_not_exists(k)"})


def test_an_update_that_met_its_own_write_answers_the_item_as_new_values() -> None:
    params = with_token("UpdateItem", {"UpdateExpression": "SET v = :v", "ReturnValues": "ALL_NEW",
                                       "ConditionExpression": "v = :old",
                                       "ExpressionAttributeValues": {":v": {"N": "2"}, ":old": {"N": "1"}}}, "tok")
    own = write_tokens.own_write("UpdateItem", params, failed({"v": {"N": "2"}, ATTRIBUTE: {"S": "tok"}}), "tok")
    assert own == {"Attributes": {"v": {"N": "2"}}}
    assert write_tokens.own_write("UpdateItem", params, failed({"v": {"N": "3"}, ATTRIBUTE: {"S": "x"}}), "tok") is None


def test_the_token_goes_into_the_set_clause_and_the_condition() -> None:
    params = with_token("UpdateItem", {"UpdateExpression": "REMOVE a SET b = :b ADD c :one",
                                       "ConditionExpression": "b <> :b"}, "tok")
    assert params["UpdateExpression"] == "REMOVE a SET #glue_wt = :glue_wt, b = :b ADD c :one"
    assert params["ConditionExpression"] == (
        "(b <> :b) AND (attribute_not_exists(#glue_wt) OR #glue_wt <> :glue_wt)")
    assert params["ExpressionAttributeValues"] == {":glue_wt": {"S": "tok"}}
    # Never doubled: DynamoDB refuses "redundant parentheses".
    enclosed = with_token("PutItem", {"Item": {}, "ConditionExpression": "(attribute_not_exists (#0) OR #0 = :0)"}, "t")
    assert enclosed["ConditionExpression"] == (
        "(attribute_not_exists (#0) OR #0 = :0) AND (attribute_not_exists(#glue_wt) OR #glue_wt <> :glue_wt)")
    two = with_token("PutItem", {"Item": {}, "ConditionExpression": "(a = :a) OR (b = :b)"}, "t")
    assert two["ConditionExpression"].startswith("((a = :a) OR (b = :b)) AND ")
    added = with_token("UpdateItem", {"UpdateExpression": "ADD n :one", "ExpressionAttributeNames": {"#r": "reset"}},
                       "tok")
    assert added["UpdateExpression"] == "ADD n :one SET #glue_wt = :glue_wt"
    assert added["ConditionExpression"] == "(attribute_not_exists(#glue_wt) OR #glue_wt <> :glue_wt)"
    assert added["ExpressionAttributeNames"] == {"#r": "reset", "#glue_wt": ATTRIBUTE}
    assert with_token("UpdateItem", {"UpdateExpression": "set #reset = :s"}, "t")["UpdateExpression"] == (
        "set #glue_wt = :glue_wt, #reset = :s")


def test_a_retried_delete_that_finds_nothing_took_it_for_its_own() -> None:
    params = with_token("DeleteItem", {"ConditionExpression": "uid = :u"}, "tok")
    assert params["ConditionExpression"] == "uid = :u"  # nothing stored: the item goes
    assert write_tokens.own_write("DeleteItem", params, failed(None, attempts=1), "tok") == {}
    assert write_tokens.own_write("DeleteItem", params, failed(None, attempts=0), "tok") is None
    assert write_tokens.own_write("DeleteItem", params, failed(None, attempts=0), "tok", resent=True) == {}
    assert write_tokens.own_write("DeleteItem", params, failed({"uid": {"S": "other"}}, attempts=1), "tok") is None


def test_a_transaction_keeps_one_request_token_across_resends() -> None:
    sent: list[dict] = []

    def lossy(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        sent.append(params)
        if len(sent) < 3:
            raise ReadTimeoutError(endpoint_url="http://ddb")
        return {}
    assert TokenCaller(lossy)("TransactWriteItems", {"TransactItems": []}) == {}
    assert len({p["ClientRequestToken"] for p in sent}) == 1 and len(sent) == 3


def test_reads_and_refusals_are_not_sent_again() -> None:
    sent: list[str] = []

    def refuse(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        sent.append(operation)
        raise ReadTimeoutError(endpoint_url="http://ddb") if operation == "GetItem" else failed()
    with pytest.raises(ReadTimeoutError):
        TokenCaller(refuse)("GetItem", {})
    with pytest.raises(ClientError):
        TokenCaller(refuse)("PutItem", {"Item": {}})
    assert sent == ["GetItem", "PutItem"]


def test_an_error_answer_cut_short_is_a_lost_answer() -> None:
    """botocore reads a truncated error body as code "400" (the status) with the text as message."""
    sent: list[dict] = []

    def truncating(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        sent.append(params)
        if len(sent) == 1:
            raise ClientError({"Error": {"Code": "400", "Message": '{"__type":"com.amazonaws.dyn'},
                               "ResponseMetadata": {"HTTPStatusCode": 400}}, "PutItem")
        raise failed({"k": {"S": "a"}, ATTRIBUTE: params["Item"][ATTRIBUTE]})
    assert TokenCaller(truncating)("PutItem", {"Item": {"k": {"S": "a"}},
                                               "ConditionExpression": "attribute_not_exists(k)"}) == {}
    assert len(sent) == 2


def test_a_commit_point_whose_answer_was_lost_is_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """CommitTransaction: the store gave up on the commit point's answer; the transaction as
    stored tells whether it landed (COMMITTED with a seq), else the error stands."""
    from types import SimpleNamespace

    from chalicelib.errors import ConcurrentModificationException
    from chalicelib.service import transactions

    item = SimpleNamespace(catalog="c", transaction_id="t")
    stored: dict[str, Any] = {}
    reads: list[str] = []
    monkeypatch.setattr(transactions.store, "get_transaction",
                        lambda catalog, tid: reads.append(tid) or stored.get("item"))

    def lost(_: Any) -> int:
        raise ReadTimeoutError(endpoint_url="http://ddb")
    monkeypatch.setattr(transactions, "_commit_point", lost)
    stored["item"] = SimpleNamespace(status="COMMITTED", commit_seq=42)
    assert transactions._commit_point_or_landed(item) == 42  # type: ignore[arg-type]
    stored["item"] = SimpleNamespace(status="COMMIT_IN_PROGRESS", commit_seq=None)
    with pytest.raises(ReadTimeoutError):
        transactions._commit_point_or_landed(item)  # type: ignore[arg-type]

    def refused(_: Any) -> int:
        raise ConcurrentModificationException("moved")
    monkeypatch.setattr(transactions, "_commit_point", refused)
    reads.clear()
    with pytest.raises(ConcurrentModificationException):
        transactions._commit_point_or_landed(item)  # type: ignore[arg-type]
    assert not reads  # a refusal is no lost answer: nothing read back
