"""The catalog survives a restart of the server and of DynamoDB Local (make run's data dir)."""

from __future__ import annotations

from tests.integration.conftest import table_input


def test_catalog_and_tokens_survive_restarts(persistent_stack) -> None:
    glue = persistent_stack.client("glue")
    glue.create_database(DatabaseInput={"Name": "kept", "Description": "survives"})
    for name in ("a", "b", "c"):
        glue.create_table(DatabaseName="kept", TableInput=table_input(name))
    glue.update_table(DatabaseName="kept", TableInput=table_input("a", Description="v1"))
    token = glue.get_tables(DatabaseName="kept", MaxResults=1)["NextToken"]

    persistent_stack.restart()  # both DynamoDB Local and the API server

    glue = persistent_stack.client("glue")
    assert glue.get_database(Name="kept")["Database"]["Description"] == "survives"
    versions = glue.get_table_versions(DatabaseName="kept", TableName="a")["TableVersions"]
    assert [v["VersionId"] for v in versions] == ["1", "0"]
    # The NextToken key is stored with the catalog, so a token outlives the server process.
    rest = glue.get_tables(DatabaseName="kept", MaxResults=5, NextToken=token)["TableList"]
    assert [t["Name"] for t in rest] == ["b", "c"]
