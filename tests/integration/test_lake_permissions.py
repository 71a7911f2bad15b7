"""Lake Formation permission operations through boto3: data lake settings and AWS's defaults,
grants that merge and revokes that remove only what they name, batches with per-entry failures,
who may grant what, ListPermissions' filters and paging, GetEffectivePermissionsForPath, and
registered locations.

The open session server serves the open-mode cases (the caller is the account root, which acts
as the account's IAM administrator). One extra server with SigV4 verification on serves several
issued principals of one account of this module's own: the identities administrator, a data lake
administrator, a steward holding grant options, and one with nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import boto3
import pytest
from botocore.exceptions import ClientError

from infra.local.stack import CLIENT_CONFIG, REGION, REPO, CatalogStack, ServerProcess
from tests.integration.conftest import random_account, table_input

NOT_AUTHORIZED = "Resource does not exist or requester is not authorized to access requested permissions."
INVALID = "Permissions modification is invalid."
NOTHING_REVOKED = "No permissions revoked. Grantee has no permissions and no grantable permissions on resource."
IAM_ALLOWED = {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"}


def _refused(call: Any, code: str, message: str | None = None, **kwargs: Any) -> ClientError:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    error = caught.value.response["Error"]
    assert error["Code"] == code, caught.value.response
    if message is not None:
        assert error["Message"] == message
    return caught.value


def _principal(arn: str) -> dict[str, str]:
    return {"DataLakePrincipalIdentifier": arn}


def _table(database: str, name: str | None = None) -> dict[str, Any]:
    return {"Table": {"DatabaseName": database, **({"Name": name} if name else {"TableWildcard": {}})}}


def _held(lf: Any, principal: str, resource: dict[str, Any]) -> list[tuple[list[str], list[str]]]:
    found = lf.list_permissions(Principal=_principal(principal), Resource=resource)["PrincipalResourcePermissions"]
    return [(sorted(p["Permissions"]), sorted(p["PermissionsWithGrantOption"])) for p in found]


# ------------------------------------------------------------------------------ open mode
def test_a_new_catalog_answers_aws_defaults_and_the_root_is_the_caller(make_client: Any) -> None:
    account = random_account()
    lf = make_client("lakeformation", account=account)
    settings = lf.get_data_lake_settings()["DataLakeSettings"]
    assert settings["DataLakeAdmins"] == []
    default = [{"Principal": IAM_ALLOWED, "Permissions": ["ALL"]}]
    assert settings["CreateDatabaseDefaultPermissions"] == default
    assert settings["CreateTableDefaultPermissions"] == default
    assert settings["Parameters"] == {"CROSS_ACCOUNT_VERSION": "1", "SET_CONTEXT": "TRUE"}
    assert settings["TrustedResourceOwners"] == [] and settings["AllowExternalDataFiltering"] is False
    assert lf.get_data_lake_principal()["Identity"] == f"arn:aws:iam::{account}:root"


def test_put_data_lake_settings_stores_every_member(make_client: Any) -> None:
    account = random_account()
    lf = make_client("lakeformation", account=account)
    settings = {
        "DataLakeAdmins": [_principal(f"arn:aws:iam::{account}:role/admin")],
        "ReadOnlyAdmins": [_principal(f"arn:aws:iam::{account}:role/auditor")],
        "CreateDatabaseDefaultPermissions": [],
        "CreateTableDefaultPermissions": [],
        "Parameters": {"CROSS_ACCOUNT_VERSION": "4", "SET_CONTEXT": "TRUE"},
        "TrustedResourceOwners": ["111122223333"],
        "AllowExternalDataFiltering": True,
        "AllowFullTableExternalDataAccess": True,
        "ExternalDataFilteringAllowList": [_principal("111122223333")],
        "AuthorizedSessionTagValueList": ["engine-a"],
    }
    lf.put_data_lake_settings(DataLakeSettings=settings)
    assert lf.get_data_lake_settings()["DataLakeSettings"] == settings
    # Another catalog is untouched; a member left out answers its default again.
    assert make_client("lakeformation", account=random_account()).get_data_lake_settings()[
        "DataLakeSettings"]["DataLakeAdmins"] == []
    lf.put_data_lake_settings(DataLakeSettings={"DataLakeAdmins": []})
    assert lf.get_data_lake_settings()["DataLakeSettings"]["CreateTableDefaultPermissions"] == [
        {"Principal": IAM_ALLOWED, "Permissions": ["ALL"]}]


def test_settings_are_checked(make_client: Any) -> None:
    lf = make_client("lakeformation", account=random_account())
    _refused(lf.put_data_lake_settings, "InvalidInputException",
             DataLakeSettings={"DataLakeAdmins": [IAM_ALLOWED]})
    _refused(lf.put_data_lake_settings, "InvalidInputException", INVALID, DataLakeSettings={
        "CreateDatabaseDefaultPermissions": [{"Principal": IAM_ALLOWED, "Permissions": ["SELECT"]}]})


def test_the_root_grants_once_it_made_itself_a_data_lake_administrator(make_client: Any) -> None:
    account = random_account()
    lf, glue = make_client("lakeformation", account=account), make_client("glue", account=account)
    database = f"db_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": database})
    analyst = f"arn:aws:iam::{account}:user/analyst"
    grant = {"Principal": _principal(analyst), "Resource": {"Database": {"Name": database}},
             "Permissions": ["DESCRIBE"]}
    _refused(lf.grant_permissions, "AccessDeniedException", NOT_AUTHORIZED, **grant)
    lf.put_data_lake_settings(DataLakeSettings={"DataLakeAdmins": [_principal(f"arn:aws:iam::{account}:root")]})
    lf.grant_permissions(**grant)
    assert _held(lf, analyst, {"Database": {"Name": database}}) == [(["DESCRIBE"], [])]


# ------------------------------------------------------------------------------ SigV4 principals
@dataclass
class Principals:
    """The SigV4 server and a Lake Formation / Glue client per issued principal of one account."""

    server: ServerProcess
    account: str
    keys: dict[str, tuple[str, str]]

    def arn(self, who: str) -> str:
        return f"arn:aws:iam::{self.account}:{'role' if who == 'steward' else 'user'}/{who}"

    def client(self, who: str, service: str = "lakeformation") -> Any:
        key = self.keys[who]
        return boto3.client(service, endpoint_url=self.server.endpoint, region_name=REGION,
                            aws_access_key_id=key[0], aws_secret_access_key=key[1], config=CLIENT_CONFIG)


@pytest.fixture(scope="module")
def people(stack: CatalogStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Principals]:
    key_file = tmp_path_factory.mktemp("lfperm") / "auth.key"
    server_env = {"GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)}
    env = {**stack.env, **server_env}
    account = random_account()
    running = Principals(stack.extra_server(server_env, name="lfperm"), account, {})

    def admin_command(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "infra.identities", *args], cwd=REPO, env=env,
                              capture_output=True, text=True, check=True).stdout

    for who in ("iam", "lakeadmin", "steward", "nobody"):
        admin_command("principals", "create", running.arn(who), *(["--admin"] if who == "iam" else []))
        answer = json.loads(admin_command("keys", "create", running.arn(who)))
        running.keys[who] = (answer["AccessKeyId"], answer["SecretAccessKey"])
    running.server.start()
    try:
        running.client("iam").put_data_lake_settings(DataLakeSettings={
            "DataLakeAdmins": [_principal(running.arn("lakeadmin"))],
            "CreateDatabaseDefaultPermissions": [], "CreateTableDefaultPermissions": []})
        yield running
    finally:
        running.server.stop()
        # The identities table is the session's: an administrator left behind would make a later
        # `admin bootstrap` (test_auth.py) find one and create none.
        for who in running.keys:
            admin_command("principals", "delete", running.arn(who))


@pytest.fixture
def tables(people: Principals) -> tuple[str, list[str]]:
    """A database of this account with two tables (columns id, value, partition key year)."""
    glue = people.client("iam", "glue")
    database = f"db_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": database})
    for name in ("orders", "customers"):
        glue.create_table(DatabaseName=database, TableInput=table_input(name))
    return database, ["orders", "customers"]


def test_who_may_read_and_put_the_settings(people: Principals) -> None:
    lakeadmin, nobody = people.client("lakeadmin"), people.client("nobody")
    assert people.client("iam").get_data_lake_settings()["DataLakeSettings"]["DataLakeAdmins"] == [
        _principal(people.arn("lakeadmin"))]
    assert lakeadmin.get_data_lake_settings()["DataLakeSettings"]["CreateTableDefaultPermissions"] == []
    error = _refused(nobody.get_data_lake_settings, "AccessDeniedException")
    assert error.response["Error"]["Message"].startswith(
        f"User: {people.arn('nobody')} is not authorized to perform: lakeformation:GetDataLakeSettings")
    _refused(nobody.put_data_lake_settings, "AccessDeniedException", DataLakeSettings={"DataLakeAdmins": []})
    # A data lake administrator is not the IAM administrator: it may not change who administers.
    _refused(lakeadmin.put_data_lake_settings, "AccessDeniedException", DataLakeSettings={"DataLakeAdmins": []})
    assert nobody.get_data_lake_principal()["Identity"] == people.arn("nobody")


def test_grants_merge_and_revokes_remove_only_what_they_name(people: Principals, tables: Any) -> None:
    database, (orders, _) = tables
    lf, nobody = people.client("lakeadmin"), people.arn("nobody")
    on_orders = _table(database, orders)
    lf.grant_permissions(Principal=_principal(nobody), Resource=on_orders, Permissions=["SELECT"])
    lf.grant_permissions(Principal=_principal(nobody), Resource=on_orders, Permissions=["INSERT"],
                         PermissionsWithGrantOption=["INSERT"])
    lf.grant_permissions(Principal=_principal(nobody), Resource=on_orders, Permissions=["SELECT"])  # held: no-op
    assert _held(lf, nobody, on_orders) == [(["INSERT", "SELECT"], ["INSERT"])]
    entry = lf.list_permissions(Principal=_principal(nobody), Resource=on_orders)["PrincipalResourcePermissions"][0]
    assert entry["Resource"] == {"Table": {"CatalogId": people.account, "DatabaseName": database, "Name": orders}}
    assert entry["LastUpdatedBy"] == people.arn("lakeadmin") and entry["LastUpdated"]

    lf.revoke_permissions(Principal=_principal(nobody), Resource=on_orders, Permissions=["SELECT"])
    assert _held(lf, nobody, on_orders) == [(["INSERT"], ["INSERT"])]
    _refused(lf.revoke_permissions, "InvalidInputException", NOTHING_REVOKED, Principal=_principal(nobody),
             Resource=on_orders, Permissions=["SELECT"])
    # Revoking the grant option alone keeps the permission.
    lf.revoke_permissions(Principal=_principal(nobody), Resource=on_orders, Permissions=[],
                          PermissionsWithGrantOption=["INSERT"])
    assert _held(lf, nobody, on_orders) == [(["INSERT"], [])]
    lf.revoke_permissions(Principal=_principal(nobody), Resource=on_orders, Permissions=["INSERT"])
    assert _held(lf, nobody, on_orders) == []
    # ALL is a permission of its own: revoking SELECT does not take a part of it.
    lf.grant_permissions(Principal=_principal(nobody), Resource=on_orders, Permissions=["ALL"])
    _refused(lf.revoke_permissions, "InvalidInputException", NOTHING_REVOKED, Principal=_principal(nobody),
             Resource=on_orders, Permissions=["SELECT"])


def test_what_cannot_be_granted_is_refused_as_aws_refuses_it(people: Principals, tables: Any) -> None:
    database, (orders, _) = tables
    lf, nobody = people.client("lakeadmin"), _principal(people.arn("nobody"))
    refusals = [
        ({"Database": {"Name": database}}, ["SELECT"], [], "InvalidInputException", INVALID),
        ({"Catalog": {}}, ["DROP"], [], "InvalidInputException", INVALID),
        (_table(database, orders), ["CREATE_TABLE"], [], "InvalidInputException", INVALID),
        (_table(database, orders), ["SELECT"], ["ALTER"], "InvalidInputException", INVALID),  # grant option outside
        ({"Table": {"DatabaseName": database}}, ["SELECT"], [], "InvalidInputException",
         "Table name and table wildcard cannot both be empty."),
        ({"Table": {"DatabaseName": database, "Name": orders, "TableWildcard": {}}}, ["SELECT"], [],
         "InvalidInputException", "Table name and table wildcard cannot both be present."),
        ({"Database": {"Name": "no_such_db"}}, ["DESCRIBE"], [], "EntityNotFoundException", None),
        (_table(database, "no_such_table"), ["SELECT"], [], "EntityNotFoundException", None),
        ({"TableWithColumns": {"DatabaseName": database, "Name": orders, "ColumnNames": ["nope"]}}, ["SELECT"], [],
         "InvalidInputException", None),
        ({"DataLocation": {"ResourceArn": "arn:aws:s3:::not-registered/x"}}, ["DATA_LOCATION_ACCESS"], [],
         "EntityNotFoundException", None),
        ({"LFTag": {"TagKey": "k", "TagValues": ["v"]}}, ["DESCRIBE"], [], "InvalidInputException", None),
    ]
    for resource, permissions, grantable, code, message in refusals:
        _refused(lf.grant_permissions, code, message, Principal=nobody, Resource=resource, Permissions=permissions,
                 PermissionsWithGrantOption=grantable)
    assert lf.list_permissions(Principal=nobody, Resource=_table(database, orders))[
        "PrincipalResourcePermissions"] == []


def test_a_grant_option_lets_its_holder_grant_and_revoke_that_and_nothing_more(people: Principals,
                                                                               tables: Any) -> None:
    database, (orders, customers) = tables
    admin, steward, nobody = people.client("lakeadmin"), people.client("steward"), people.client("nobody")
    on_orders = _table(database, orders)
    admin.grant_permissions(Principal=_principal(people.arn("steward")), Resource=on_orders,
                            Permissions=["SELECT", "DESCRIBE"], PermissionsWithGrantOption=["SELECT"])
    target = _principal(people.arn("nobody"))
    steward.grant_permissions(Principal=target, Resource=on_orders, Permissions=["SELECT"])
    for permissions, resource in ((["DESCRIBE"], on_orders), (["ALTER"], on_orders), (["SELECT"], _table(
            database, customers)), (["SELECT"], _table(database, "no_such_table"))):
        _refused(steward.grant_permissions, "AccessDeniedException", NOT_AUTHORIZED, Principal=target,
                 Resource=resource, Permissions=permissions)
    # The grant option is not passed on: the grantee may not grant further.
    _refused(nobody.grant_permissions, "AccessDeniedException", NOT_AUTHORIZED,
             Principal=_principal(people.arn("steward")), Resource=on_orders, Permissions=["SELECT"])

    # ListPermissions: each sees its own; the steward also what it could grant of others' grants.
    admin.grant_permissions(Principal=target, Resource=on_orders, Permissions=["ALTER"])
    mine = nobody.list_permissions(Resource=on_orders)["PrincipalResourcePermissions"]
    assert [(p["Principal"]["DataLakePrincipalIdentifier"], sorted(p["Permissions"])) for p in mine] == [
        (people.arn("nobody"), ["ALTER", "SELECT"])]
    seen = {p["Principal"]["DataLakePrincipalIdentifier"]: sorted(p["Permissions"])
            for p in steward.list_permissions(Resource=on_orders)["PrincipalResourcePermissions"]}
    assert seen == {people.arn("steward"): ["DESCRIBE", "SELECT"], people.arn("nobody"): ["SELECT"]}
    everything = {p["Principal"]["DataLakePrincipalIdentifier"]
                  for p in admin.list_permissions(Resource=on_orders)["PrincipalResourcePermissions"]}
    # Besides the grants made here: the table's creation grants (its creator's ALL, or
    # IAM_ALLOWED_PRINCIPALS' while the defaults hold).
    assert everything - {people.arn("iam"), "IAM_ALLOWED_PRINCIPALS"} == {people.arn("steward"), people.arn("nobody")}

    steward.revoke_permissions(Principal=target, Resource=on_orders, Permissions=["SELECT"])
    _refused(steward.revoke_permissions, "AccessDeniedException", NOT_AUTHORIZED, Principal=target,
             Resource=on_orders, Permissions=["ALTER"])
    assert _held(admin, people.arn("nobody"), on_orders) == [(["ALTER"], [])]
    # A grant option on the database's table wildcard covers each of its tables.
    admin.grant_permissions(Principal=_principal(people.arn("steward")), Resource=_table(database),
                            Permissions=["SELECT"], PermissionsWithGrantOption=["SELECT"])
    steward.grant_permissions(Principal=target, Resource=_table(database, customers), Permissions=["SELECT"])


def test_batches_answer_a_failure_per_entry_and_apply_the_rest(people: Principals, tables: Any) -> None:
    database, (orders, customers) = tables
    lf, nobody = people.client("lakeadmin"), _principal(people.arn("nobody"))
    entries = [
        {"Id": "1", "Principal": nobody, "Resource": _table(database, orders), "Permissions": ["SELECT"]},
        {"Id": "2", "Principal": nobody, "Resource": {"Database": {"Name": database}}, "Permissions": ["SELECT"]},
        {"Id": "3", "Principal": nobody, "Resource": _table(database, "missing"), "Permissions": ["SELECT"]},
        {"Id": "4", "Principal": nobody, "Resource": _table(database, customers), "Permissions": ["DROP"]},
    ]
    failures = lf.batch_grant_permissions(Entries=entries)["Failures"]
    assert [(f["RequestEntry"]["Id"], f["Error"]["ErrorCode"]) for f in failures] == [
        ("2", "InvalidInputException"), ("3", "EntityNotFoundException")]
    assert failures[0]["Error"]["ErrorMessage"] == INVALID
    assert failures[0]["RequestEntry"]["Resource"] == entries[1]["Resource"]
    assert _held(lf, people.arn("nobody"), _table(database, customers)) == [(["DROP"], [])]

    revokes = [entries[0], {**entries[3], "Permissions": ["ALTER"]}]
    failures = lf.batch_revoke_permissions(Entries=revokes)["Failures"]
    assert [(f["RequestEntry"]["Id"], f["Error"]["ErrorCode"], f["Error"]["ErrorMessage"]) for f in failures] == [
        ("4", "InvalidInputException", NOTHING_REVOKED)]
    assert _held(lf, people.arn("nobody"), _table(database, orders)) == []
    # Someone without grant options gets a failure per entry, not a refusal of the whole batch.
    failures = people.client("nobody").batch_grant_permissions(Entries=entries[:1])["Failures"]
    assert [(f["Error"]["ErrorCode"], f["Error"]["ErrorMessage"]) for f in failures] == [
        ("AccessDeniedException", NOT_AUTHORIZED)]


def test_column_grants_widen_and_narrow(people: Principals, tables: Any) -> None:
    database, (orders, _) = tables
    lf, nobody = people.client("lakeadmin"), people.arn("nobody")

    def columns(**scope: Any) -> dict[str, Any]:
        return {"TableWithColumns": {"DatabaseName": database, "Name": orders, **scope}}

    lf.grant_permissions(Principal=_principal(nobody), Resource=columns(ColumnNames=["id"]), Permissions=["SELECT"])
    lf.grant_permissions(Principal=_principal(nobody), Resource=columns(ColumnNames=["Value"]),
                         Permissions=["SELECT"])

    def shown() -> list[dict[str, Any]]:
        return [p["Resource"]["TableWithColumns"] for p in lf.list_permissions(
            Principal=_principal(nobody), ResourceType="TABLE")["PrincipalResourcePermissions"]
            if p["Resource"].get("TableWithColumns", {}).get("DatabaseName") == database]
    assert [c.get("ColumnNames") for c in shown()] == [["id", "value"]]
    lf.revoke_permissions(Principal=_principal(nobody), Resource=columns(ColumnNames=["id"]), Permissions=["SELECT"])
    assert [c.get("ColumnNames") for c in shown()] == [["value"]]
    lf.grant_permissions(Principal=_principal(nobody), Resource=columns(ColumnWildcard={
        "ExcludedColumnNames": ["id", "year"]}), Permissions=["SELECT"])
    assert [c.get("ColumnWildcard") for c in shown()] == [{"ExcludedColumnNames": ["id", "year"]}]
    lf.revoke_permissions(Principal=_principal(nobody), Resource=columns(ColumnNames=["value"]),
                          Permissions=["SELECT"])
    assert [c.get("ColumnWildcard") for c in shown()] == [{"ExcludedColumnNames": ["id", "value", "year"]}]
    _refused(lf.grant_permissions, "InvalidInputException", INVALID, Principal=_principal(nobody),
             Resource=columns(ColumnNames=["id"]), Permissions=["ALTER"])


def test_catalog_wildcard_and_location_grants(people: Principals, tables: Any) -> None:
    database, _ = tables
    lf, nobody = people.client("lakeadmin"), people.arn("nobody")
    lf.grant_permissions(Principal=_principal(nobody), Resource={"Catalog": {}}, Permissions=["CREATE_DATABASE"])
    lf.grant_permissions(Principal=_principal(nobody), Resource=_table(database), Permissions=["SELECT", "DESCRIBE"])
    bucket = f"arn:aws:s3:::lf-{uuid.uuid4().hex[:8]}"
    lf.register_resource(ResourceArn=bucket, RoleArn=f"arn:aws:iam::{people.account}:role/lf-access")
    lf.grant_permissions(Principal=_principal(nobody), Resource={"DataLocation": {"ResourceArn": bucket + "/raw"}},
                         Permissions=["DATA_LOCATION_ACCESS"])
    assert _held(lf, nobody, {"Catalog": {}}) == [(["CREATE_DATABASE"], [])]
    assert _held(lf, nobody, _table(database)) == [(["DESCRIBE", "SELECT"], [])]
    kinds = {p["Resource"].popitem()[0] for p in lf.list_permissions(
        Principal=_principal(nobody))["PrincipalResourcePermissions"]}
    assert {"Catalog", "Table", "DataLocation"} <= kinds
    locations = lf.list_permissions(ResourceType="DATA_LOCATION")["PrincipalResourcePermissions"]
    assert {"DataLocation": {"CatalogId": people.account, "ResourceArn": bucket + "/raw"}} in [
        p["Resource"] for p in locations]
    path = lf.get_effective_permissions_for_path(ResourceArn=bucket + "/raw/2026/")["Permissions"]
    assert [(p["Principal"]["DataLakePrincipalIdentifier"], p["Permissions"]) for p in path] == [
        (nobody, ["DATA_LOCATION_ACCESS"])]
    lf.deregister_resource(ResourceArn=bucket)


def test_list_permissions_pages_and_filters(people: Principals) -> None:
    glue, lf = people.client("iam", "glue"), people.client("lakeadmin")
    database = f"db_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": database})
    names = [f"t{i}" for i in range(7)]
    for name in names:
        glue.create_table(DatabaseName=database, TableInput=table_input(name))
    entries = [{"Id": name, "Principal": _principal(people.arn("nobody")), "Resource": _table(database, name),
                "Permissions": ["SELECT"]} for name in names]
    entries.append({"Id": "db", "Principal": _principal(people.arn("steward")),
                    "Resource": {"Database": {"Name": database}}, "Permissions": ["DESCRIBE"]})
    assert lf.batch_grant_permissions(Entries=entries)["Failures"] == []

    seen, token, pages = [], None, 0
    while True:
        page = lf.list_permissions(ResourceType="TABLE", MaxResults=3, **({"NextToken": token} if token else {}))
        assert len(page["PrincipalResourcePermissions"]) <= 3
        seen += [p["Resource"]["Table"]["Name"] for p in page["PrincipalResourcePermissions"]
                 if p["Resource"].get("Table", {}).get("DatabaseName") == database
                 and p["Principal"]["DataLakePrincipalIdentifier"] == people.arn("nobody")]
        pages += 1
        token = page.get("NextToken")
        if not token:
            break
    assert sorted(seen) == names and pages >= 3
    # botocore has no paginator for ListPermissions: follow NextToken by hand, by principal.
    by_principal, token = [], None
    while True:
        page = lf.list_permissions(Principal=_principal(people.arn("nobody")), MaxResults=2,
                                   **({"NextToken": token} if token else {}))
        by_principal += [p for p in page["PrincipalResourcePermissions"]
                         if p["Resource"].get("Table", {}).get("DatabaseName") == database]
        token = page.get("NextToken")
        if not token:
            break
    assert len(by_principal) == 7
    on_database = lf.list_permissions(Resource={"Database": {"Name": database}})["PrincipalResourcePermissions"]
    assert [(p["Principal"]["DataLakePrincipalIdentifier"], p["Permissions"]) for p in on_database
            if p["Principal"]["DataLakePrincipalIdentifier"] != people.arn("iam")] == [
        (people.arn("steward"), ["DESCRIBE"])]
    # A token is bound to its request's filters.
    first = lf.list_permissions(ResourceType="TABLE", MaxResults=1)
    _refused(lf.list_permissions, "InvalidInputException", ResourceType="DATABASE", NextToken=first["NextToken"])

    arn = f"arn:aws:glue:{REGION}:{people.account}"
    table_path = lf.get_effective_permissions_for_path(ResourceArn=f"{arn}:table/{database}/t3")["Permissions"]
    assert [p["Resource"]["Table"]["Name"] for p in table_path
            if p["Principal"]["DataLakePrincipalIdentifier"] != people.arn("iam")] == ["t3"]
    database_path = lf.get_effective_permissions_for_path(ResourceArn=f"{arn}:database/{database}", MaxResults=4)
    assert len(database_path["Permissions"]) == 4 and database_path["NextToken"]
    _refused(lf.get_effective_permissions_for_path, "EntityNotFoundException",
             ResourceArn=f"{arn}:database/no_such_database")


def test_registered_locations(people: Principals) -> None:
    lf, nobody = people.client("lakeadmin"), people.client("nobody")
    bucket = f"arn:aws:s3:::loc-{uuid.uuid4().hex[:8]}"
    role = f"arn:aws:iam::{people.account}:role/lf-access"
    lf.register_resource(ResourceArn=bucket, RoleArn=role)
    lf.register_resource(ResourceArn=bucket + "/service-linked", UseServiceLinkedRole=True, HybridAccessEnabled=True)
    _refused(lf.register_resource, "AlreadyExistsException", "Resource is already registered",
             ResourceArn=bucket, RoleArn=role)
    _refused(lf.register_resource, "InvalidInputException", "Unsupported resource ARN Format",
             ResourceArn="arn:aws:glue:us-east-1:123456789012:database/x", RoleArn=role)
    info = lf.describe_resource(ResourceArn=bucket)["ResourceInfo"]
    assert info["ResourceArn"] == bucket and info["RoleArn"] == role and info["LastModified"]
    linked = lf.describe_resource(ResourceArn=bucket + "/service-linked")["ResourceInfo"]
    assert linked["RoleArn"].endswith("/AWSServiceRoleForLakeFormationDataAccess") and linked["HybridAccessEnabled"]
    lf.update_resource(ResourceArn=bucket, RoleArn=role + "-2", WithFederation=True)
    updated = lf.describe_resource(ResourceArn=bucket)["ResourceInfo"]
    assert updated["RoleArn"] == role + "-2" and updated["WithFederation"] is True
    listed = lf.list_resources(FilterConditionList=[{"Field": "RESOURCE_ARN", "ComparisonOperator": "BEGINS_WITH",
                                                     "StringValueList": [bucket]}])["ResourceInfoList"]
    assert [r["ResourceArn"] for r in listed] == [bucket, bucket + "/service-linked"]
    paged = lf.list_resources(MaxResults=1)
    assert len(paged["ResourceInfoList"]) == 1 and paged["NextToken"]
    _refused(nobody.register_resource, "AccessDeniedException", ResourceArn=bucket + "/x", RoleArn=role)
    _refused(nobody.list_resources, "AccessDeniedException")
    for arn in (bucket, bucket + "/service-linked"):
        lf.deregister_resource(ResourceArn=arn)
    _refused(lf.describe_resource, "EntityNotFoundException", ResourceArn=bucket)
    _refused(lf.deregister_resource, "EntityNotFoundException", ResourceArn=bucket)
    _refused(lf.update_resource, "EntityNotFoundException", ResourceArn=bucket, RoleArn=role)


def test_the_store_api_the_enforcement_reads(stack: CatalogStack) -> None:
    """lookup: one BatchGetItem with the settings; on_database: one Query; conditional writes."""
    run = subprocess.run([sys.executable, "-m", "tests.integration.grants_store_checks"], cwd=REPO, env=stack.env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["lookup_requests"] == 1
    assert result["lookup"] == ["IAM_ALLOWED_PRINCIPALS:TABLE:orders:ALL", "alice:CATALOG:None:CREATE_DATABASE",
                                "alice:COLUMNS:orders:SELECT", "alice:DATABASE:None:DESCRIBE",
                                "alice:TABLE:None:SELECT", "alice:TABLE:orders:ALTER"]
    assert result["lookup_configured"] is False and result["lookup_admins"] == []
    assert result["database_lookup_requests"] == 1
    assert result["database_lookup"] == ["CATALOG:None", "DATABASE:None", "TABLE:None"]
    assert result["settings_admins"] == ["arn:aws:iam::123456789012:user/alice"]
    assert result["settings_defaults_kept"] == [{"Principal": IAM_ALLOWED, "Permissions": ["ALL"]}]
    assert result["on_database_requests"] == 1
    assert result["on_database"] == ["alice:COLUMNS:orders", "alice:DATABASE:None", "alice:TABLE:None",
                                     "alice:TABLE:orders", "alice:TABLE:other", "bob:TABLE:orders"]
    assert result["stale_put_lands"] is False and result["stale_delete_lands"] is False
    assert result["by_principal"] == ["TABLE"]
    assert result["purged"] == 7
    assert result["left"] == ["CATALOG:None", "TABLE:salesx"]


@pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is not on PATH")
def test_the_aws_cli_grants_lists_and_is_refused(people: Principals, tables: Any, tmp_path: Path) -> None:
    """The AWS CLI (v1, its own botocore) with issued keys: grant, list, revoke; a refusal for
    the principal who holds nothing."""
    database, (orders, _) = tables

    def aws(who: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID=people.keys[who][0], AWS_SECRET_ACCESS_KEY=people.keys[who][1],
                   AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
        return subprocess.run(["aws", "lakeformation", "--endpoint-url", people.server.endpoint, "--region", REGION,
                               "--output", "json", *args], env=env, check=check, capture_output=True, text=True)

    grantee = json.dumps(_principal(people.arn("steward")))
    resource = json.dumps(_table(database, orders))
    aws("lakeadmin", "grant-permissions", "--principal", grantee, "--resource", resource,
        "--permissions", "SELECT", "DESCRIBE", "--permissions-with-grant-option", "SELECT")
    listed = json.loads(aws("lakeadmin", "list-permissions", "--principal", grantee, "--resource", resource).stdout)
    assert [(sorted(p["Permissions"]), p["PermissionsWithGrantOption"])
            for p in listed["PrincipalResourcePermissions"]] == [(["DESCRIBE", "SELECT"], ["SELECT"])]
    settings = json.loads(aws("lakeadmin", "get-data-lake-settings").stdout)["DataLakeSettings"]
    assert settings["DataLakeAdmins"] == [_principal(people.arn("lakeadmin"))]
    aws("lakeadmin", "revoke-permissions", "--principal", grantee, "--resource", resource, "--permissions", "DESCRIBE")
    refused = aws("nobody", "grant-permissions", "--principal", grantee, "--resource", resource,
                  "--permissions", "ALTER", check=False)
    assert refused.returncode != 0 and "AccessDeniedException" in refused.stderr and NOT_AUTHORIZED in refused.stderr
    assert _held(people.client("lakeadmin"), people.arn("steward"), _table(database, orders)) == [
        (["SELECT"], ["SELECT"])]


def test_racing_grants_to_one_principal_all_land(people: Principals, tables: Any) -> None:
    """Each grant is a compare-and-set of its one item: grants racing on one (resource,
    principal) merge, none is lost."""
    database, (orders, _) = tables
    target = _principal(people.arn("nobody"))
    permissions = ["SELECT", "INSERT", "DELETE", "ALTER", "DROP", "DESCRIBE"]
    clients = [people.client("lakeadmin") for _ in permissions]
    errors: list[BaseException] = []

    def grant(lf: Any, permission: str) -> None:
        try:
            lf.grant_permissions(Principal=target, Resource=_table(database, orders), Permissions=[permission])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=grant, args=pair) for pair in zip(clients, permissions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert _held(clients[0], people.arn("nobody"), _table(database, orders)) == [(sorted(permissions), [])]
