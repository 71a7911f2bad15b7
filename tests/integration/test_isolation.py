"""Catalogs of different accounts and regions never see each other's objects."""

from __future__ import annotations

import pytest

from tests.integration.conftest import table_input


def test_accounts_and_regions_are_separate_catalogs(make_client):
    alice = make_client("glue", account="111111111111")
    bob = make_client("glue", account="222222222222")
    alice_eu = make_client("glue", account="111111111111", region="eu-west-1")
    name = "shared_name_isolation"
    for client in (alice, bob):
        try:
            client.delete_database(Name=name)
        except client.exceptions.EntityNotFoundException:
            pass
    alice.create_database(DatabaseInput={"Name": name, "Description": "alice"})
    alice.create_table(DatabaseName=name, TableInput=table_input("secret"))
    with pytest.raises(bob.exceptions.EntityNotFoundException):
        bob.get_database(Name=name)
    with pytest.raises(alice_eu.exceptions.EntityNotFoundException):
        alice_eu.get_database(Name=name)
    bob.create_database(DatabaseInput={"Name": name, "Description": "bob"})
    assert bob.get_tables(DatabaseName=name)["TableList"] == []
    assert alice.get_database(Name=name)["Database"]["Description"] == "alice"
    assert bob.get_database(Name=name)["Database"]["CatalogId"] == "222222222222"
    # Naming another account's catalog is refused, as AWS does without a cross-account grant.
    with pytest.raises(bob.exceptions.AccessDeniedException, match="111111111111"):
        bob.get_database(CatalogId="111111111111", Name=name)
    assert alice.get_database(CatalogId="111111111111", Name=name)["Database"]["Description"] == "alice"
    bob.delete_database(Name=name)
    assert alice.get_table(DatabaseName=name, Name="secret")["Table"]["Name"] == "secret"
