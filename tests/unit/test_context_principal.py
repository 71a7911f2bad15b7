"""Who a request's caller is, as Glue records it in CreatedBy."""

from __future__ import annotations

from chalicelib.context import context_from_bearer, context_from_request

SIGNED = {"authorization": "AWS4-HMAC-SHA256 Credential=111122223333/20260101/eu-west-1/glue/aws4_request, x"}


def test_locally_the_caller_is_the_account_root() -> None:
    ctx = context_from_request(SIGNED, None)
    assert ctx.principal_arn == "arn:aws:iam::111122223333:root"


def test_a_verified_identity_names_the_caller() -> None:
    gateway = {"identity": {"accountId": "444455556666", "userArn": "arn:aws:iam::444455556666:user/ana"}}
    assert context_from_request(SIGNED, gateway).principal_arn == "arn:aws:iam::444455556666:user/ana"
    bearer = context_from_bearer({"authorization": "Bearer 111122223333"}, gateway)
    assert bearer.principal_arn == "arn:aws:iam::444455556666:user/ana"
    assert context_from_bearer({"authorization": "Bearer 111122223333"}, None).principal_arn == \
        "arn:aws:iam::111122223333:root"
