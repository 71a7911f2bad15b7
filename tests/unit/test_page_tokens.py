"""The page-token codec every protocol adapter pages with (chalicelib/page_tokens.py).

The token format is pinned: tokens handed out by a running server stay valid across a deploy,
so a change of format (or of the scope's canonical text) would break clients mid-listing.
"""

from __future__ import annotations

from typing import Iterator

import pytest
from chalicelib import page_tokens
from chalicelib.errors import InvalidInputException

SCOPE = page_tokens.request_scope("GetTables", "us-east-1", "cat", "uid", "", None, None, None)


@pytest.fixture(autouse=True)
def key() -> Iterator[None]:
    page_tokens.set_secret_loader(lambda: b"test-key")
    yield
    page_tokens.set_secret_loader(lambda: b"test-key")


def test_the_format_is_pinned() -> None:
    assert SCOPE == '["GetTables","us-east-1","cat","uid","",null,null,null]'
    assert page_tokens.encode_token(SCOPE, "orders") == "Im9yZGVycyI.jY8Haxs8ALrG_Qcl_9ny3w"


@pytest.mark.parametrize("position", ["orders", 41, ["a", 1, None], {"k": "v"}])
def test_a_token_carries_its_position_back(position: object) -> None:
    assert page_tokens.decode_token(SCOPE, page_tokens.encode_token(SCOPE, position)) == position


def test_a_token_of_another_scope_is_refused() -> None:
    token = page_tokens.encode_token(SCOPE, "orders")
    other = page_tokens.request_scope("GetTables", "us-east-1", "cat", "other-uid", "", None, None, None)
    with pytest.raises(InvalidInputException, match="not issued for this request"):
        page_tokens.decode_token(other, token)


@pytest.mark.parametrize("token", ["no-dot", "é.abc", "!!!.abc", "Im9yZGVycyI.forged"])
def test_malformed_or_forged_tokens_are_refused(token: str) -> None:
    with pytest.raises(InvalidInputException, match="Invalid NextToken"):
        page_tokens.decode_token(SCOPE, token)


def test_the_key_is_read_once_and_lazily() -> None:
    calls: list[int] = []

    def loader() -> bytes:
        calls.append(1)
        return b"test-key"

    page_tokens.set_secret_loader(loader)
    assert calls == []
    page_tokens.encode_token(SCOPE, 1)
    page_tokens.encode_token(SCOPE, 2)
    assert calls == [1]
