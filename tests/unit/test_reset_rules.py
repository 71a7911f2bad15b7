"""chalicelib/store/reset.py's one-account reset: every model that holds catalog items says how
an item of it is known to be an account's (a model added without a rule would be left behind)."""

from __future__ import annotations

from chalicelib.store import reset
from chalicelib.store.dynamo.models import ALL_MODELS, SEP


def test_every_catalog_model_has_a_rule():
    rules = reset._belongs(reset._Account("111122223333"))
    assert set(rules) == set(ALL_MODELS) - set(reset.KEPT)


def test_catalog_keys_name_the_account_and_nothing_else():
    found = reset._Account("111122223333")
    assert found.owns(f"us-east-1{SEP}111122223333")
    assert found.owns(f"eu-west-1{SEP}111122223333{SEP}t{SEP}orders")  # a search term of its catalog
    assert not found.owns(f"us-east-1{SEP}1111222233334")
    assert not found.owns("111122223333") and not found.owns(None) and not found.owns("")
