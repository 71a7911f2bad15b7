"""Which output members every served read operation fills, against a reviewed allow-list.

A rich catalog (every input member given, partitions, an index, versions, statistics, a governed
table with a committed transaction, a Data Catalog view) is read through boto3 with every
implemented read operation. The members of the operation's botocore output shape that no
response carried are compared with ``unfilled_members.UNFILLED``: a member the service starts
filling, or stops filling, fails the test until the allow-list says so (with its reason).

How paths read: ``Table.StorageDescriptor.SerdeInfo`` is a member; ``TableList[].Name`` a member
of each list element. A member is listed only if its parent was present (a missing structure
is one entry, not one per nested member). Map values are not descended into (their keys are the
caller's), and of a structure the model marks as a union only the variants present count
(ColumnStatisticsData is not marked so: its unused variants are on the allow-list).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Callable, Iterator

import botocore.session
import pytest
from botocore import xform_name
from botocore.model import Shape

from chalicelib.protocol import served
from chalicelib.service.absent_resources import NEVER_HELD
from infra.local.stack import client
from tests.integration.conftest import random_account
from tests.integration.unfilled_members import UNFILLED

READ_PREFIXES = ("Get", "BatchGet", "Search", "List", "Describe")
WHEN = dt.datetime(2024, 5, 17, 8, 30, tzinfo=dt.timezone.utc)
_MODELS = {name: botocore.session.get_session().get_service_model(name) for name in ("glue", "lakeformation")}


def read_operations() -> list[tuple[str, str]]:
    """Every implemented (service, operation) that only reads."""
    return [(service, op) for service, op in served.implemented() if op.startswith(READ_PREFIXES)]


def filled_and_declared(shape: Shape, value: Any, path: str, seen: set[str], declared: set[str]) -> None:
    """Record in ``declared`` the member paths of ``shape`` under a present ``value`` and in
    ``seen`` those ``value`` carries (recursively)."""
    if shape.type_name == "structure" and isinstance(value, dict):
        union = shape.metadata.get("union", False)
        for name, member in shape.members.items():
            if name == "ResponseMetadata" or (union and name not in value):
                continue
            here = f"{path}.{name}" if path else name
            declared.add(here)
            if name in value:
                seen.add(here)
                filled_and_declared(member, value[name], here, seen, declared)
    elif shape.type_name == "list" and isinstance(value, list):
        for item in value:
            filled_and_declared(shape.member, item, f"{path}[]", seen, declared)


def unfilled(service: str, operation: str, responses: list[dict[str, Any]]) -> set[str]:
    """Output member paths of ``operation`` that none of ``responses`` filled."""
    output = _MODELS[service].operation_model(operation).output_shape
    seen: set[str] = set()
    declared: set[str] = set()
    for response in responses:
        filled_and_declared(output, response, "", seen, declared)
    return declared - seen


# ---------------------------------------------------------------------------------------------
# The catalog every recipe reads.

class Catalog:
    """Names and clients of the rich catalog (a fresh account of its own)."""

    def __init__(self, endpoint: str) -> None:
        account = random_account()
        self.account = account
        self.glue = client(endpoint, "glue", account=account)
        self.lf = client(endpoint, "lakeformation", account=account)
        self.db = f"out_{uuid.uuid4().hex[:8]}"
        self.link_db, self.federated_db = f"{self.db}_link", f"{self.db}_fed"
        self.table, self.view, self.governed, self.link = "full", "dialects", "governed", "link"
        self.failing = "failing"
        self.values = ["2024"]
        self.tx = ""


def _full_table_input(name: str) -> dict[str, Any]:
    return {
        "Name": name, "Description": "every member", "Owner": "analytics",
        "LastAccessTime": WHEN, "LastAnalyzedTime": WHEN, "Retention": 7,
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint", "Comment": "key", "Parameters": {"pii": "no"}}],
            "Location": f"s3://bucket/{name}/", "AdditionalLocations": ["s3://bucket/more/"],
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "Compressed": True, "NumberOfBuckets": 4,
            "SerdeInfo": {"Name": "s", "SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}},
            "BucketColumns": ["id"], "SortColumns": [{"Column": "id", "SortOrder": 1}],
            "Parameters": {"k": "v"},
            "SkewedInfo": {"SkewedColumnNames": ["id"], "SkewedColumnValues": ["1"],
                           "SkewedColumnValueLocationMaps": {"1": "s3://bucket/skew/"}},
            "StoredAsSubDirectories": True,
            "SchemaReference": {"SchemaId": {"SchemaName": "s", "RegistryName": "r"}, "SchemaVersionNumber": 1},
        },
        "PartitionKeys": [{"Name": "year", "Type": "int", "Comment": "c", "Parameters": {"p": "1"}}],
        "ViewOriginalText": "/* original */", "ViewExpandedText": "/* expanded */",
        "TableType": "EXTERNAL_TABLE", "Parameters": {"classification": "csv"},
    }


def _view_input(name: str) -> dict[str, Any]:
    return {
        "Name": name, "TableType": "VIRTUAL_VIEW",
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}]},
        "ViewDefinition": {
            "IsProtected": True, "IsManaged": False, "Definer": "arn:aws:iam::123456789012:role/definer",
            "ViewVersionId": 1, "ViewVersionToken": "token", "RefreshSeconds": 60, "LastRefreshType": "FULL",
            "SubObjects": ["arn:aws:glue:us-east-1:123456789012:table/db/base"], "SubObjectVersionIds": [0],
            "SubObjectsStatistics": [{"SourceType": "ICEBERG", "GlueVersionId": "0", "PartitionCount": 1,
                                      "FileCount": 1, "TotalFileBytes": 1}],
            "SparkPipelineInfo": {"k": "v"},
            "Representations": [{"Dialect": "SPARK", "DialectVersion": "1.0", "ViewOriginalText": "SELECT 1",
                                 "ViewExpandedText": "SELECT 1", "ValidationConnection": "conn"}],
        },
    }


@pytest.fixture(scope="module")
def catalog(endpoint: str) -> Catalog:
    c = Catalog(endpoint)
    glue, lf = c.glue, c.lf
    glue.create_database(DatabaseInput={"Name": c.db, "Description": "d", "LocationUri": "s3://bucket/",
                                        "Parameters": {"k": "v"}})
    # A resource link and a federated database: their only members are the ones given.
    glue.create_database(DatabaseInput={"Name": c.link_db, "TargetDatabase": {
        "CatalogId": "111122223333", "DatabaseName": "shared", "Region": "eu-west-1"}})
    glue.create_database(DatabaseInput={"Name": c.federated_db, "FederatedDatabase": {
        "Identifier": "arn:aws:redshift:us-east-1:111122223333:datashare:x/y", "ConnectionName": "aws:redshift",
        "ConnectionType": "REDSHIFT"}})
    glue.create_table(DatabaseName=c.db, TableInput=_full_table_input(c.table),
                      PartitionIndexes=[{"IndexName": "by_year", "Keys": ["year"]}])
    glue.update_table(DatabaseName=c.db, TableInput={**_full_table_input(c.table), "Description": "v1"})
    glue.create_table(DatabaseName=c.db, TableInput=_view_input(c.view))
    glue.create_table(DatabaseName=c.db, TableInput={"Name": c.link, "TargetTable": {
        "CatalogId": "111122223333", "DatabaseName": "shared", "Name": "t", "Region": "eu-west-1"}})
    glue.create_partition(DatabaseName=c.db, TableName=c.table, PartitionInput={"Values": ["2025"]})
    # An index whose backfill fails (a value that is no int), for BackfillErrors.
    glue.create_table(DatabaseName=c.db, TableInput={"Name": c.failing, "PartitionKeys": [{"Name": "year", "Type": "int"}]})
    glue.create_partition(DatabaseName=c.db, TableName=c.failing, PartitionInput={"Values": ["abc"]})
    glue.create_partition_index(DatabaseName=c.db, TableName=c.failing,
                                PartitionIndex={"IndexName": "by_year", "Keys": ["year"]})
    glue.create_partition(DatabaseName=c.db, TableName=c.table, PartitionInput={
        "Values": c.values, "LastAccessTime": WHEN, "LastAnalyzedTime": WHEN, "Parameters": {"p": "1"},
        "StorageDescriptor": _full_table_input(c.table)["StorageDescriptor"]})
    stats = [{"ColumnName": "id", "ColumnType": "bigint", "AnalyzedTime": WHEN, "StatisticsData": {
        "Type": "LONG", "LongColumnStatisticsData": {"MinimumValue": 1, "MaximumValue": 9,
                                                     "NumberOfNulls": 0, "NumberOfDistinctValues": 9}}}]
    glue.update_column_statistics_for_table(DatabaseName=c.db, TableName=c.table, ColumnStatisticsList=stats)
    glue.update_column_statistics_for_partition(DatabaseName=c.db, TableName=c.table, PartitionValues=c.values,
                                                ColumnStatisticsList=stats)
    glue.create_table(DatabaseName=c.db, TableInput={
        "Name": c.governed, "TableType": "GOVERNED", "PartitionKeys": [{"Name": "year", "Type": "int"}],
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": "s3://lake/g/"}})
    c.tx = lf.start_transaction()["TransactionId"]
    lf.update_table_objects(DatabaseName=c.db, TableName=c.governed, TransactionId=c.tx, WriteOperations=[
        {"AddObject": {"Uri": f"s3://lake/g/year=2024/{name}.parquet", "ETag": "e", "Size": 3,
                       "PartitionValues": ["2024"]}} for name in "ab"])
    lf.commit_transaction(TransactionId=c.tx)
    lf.cancel_transaction(TransactionId=lf.start_transaction()["TransactionId"])
    return c


# One recipe per read operation: the responses it collects (every page it reads).
Recipe = Callable[[Catalog], list[dict[str, Any]]]


def _table_reads(c: Catalog) -> dict[str, Recipe]:
    g, lf = c.glue, c.lf
    key = {"DatabaseName": c.db, "TableName": c.table}
    tables = (c.table, c.view, c.governed, c.link)
    return {
        "GetDatabase": lambda c: [g.get_database(Name=name) for name in (c.db, c.link_db, c.federated_db)],
        "GetDatabases": lambda c: [g.get_databases(MaxResults=1), g.get_databases()],
        "GetTable": lambda c: [g.get_table(DatabaseName=c.db, Name=name) for name in tables],
        "GetTables": lambda c: [g.get_tables(DatabaseName=c.db, MaxResults=2), g.get_tables(DatabaseName=c.db)],
        "GetTableVersion": lambda c: [g.get_table_version(DatabaseName=c.db, TableName=name, VersionId="0")
                                      for name in tables],
        "GetTableVersions": lambda c: [g.get_table_versions(**key, MaxResults=1)] + [
            g.get_table_versions(DatabaseName=c.db, TableName=name) for name in tables],
        "SearchTables": lambda c: [g.search_tables(MaxResults=1), g.search_tables()],
        "GetPartition": lambda c: [g.get_partition(**key, PartitionValues=c.values)],
        "GetPartitions": lambda c: [g.get_partitions(**key, MaxResults=1), g.get_partitions(**key), g.get_partitions(
            DatabaseName=c.db, TableName=c.governed)],
        "BatchGetPartition": lambda c: [g.batch_get_partition(**key, PartitionsToGet=[
            {"Values": c.values}, {"Values": ["1999"]}])],
        "GetPartitionIndexes": lambda c: [g.get_partition_indexes(DatabaseName=c.db, TableName=name)
                                          for name in (c.table, c.failing)],
        "GetColumnStatisticsForTable": lambda c: [g.get_column_statistics_for_table(**key, ColumnNames=["id", "nope"])],
        "GetColumnStatisticsForPartition": lambda c: [g.get_column_statistics_for_partition(
            **key, PartitionValues=c.values, ColumnNames=["id", "nope"])],
        "GetTableObjects": lambda c: [lf.get_table_objects(DatabaseName=c.db, TableName=c.governed, MaxResults=1)],
        "DescribeTransaction": lambda c: [lf.describe_transaction(TransactionId=c.tx)],
        "ListTransactions": lambda c: [lf.list_transactions(MaxResults=1), lf.list_transactions()],
    }


def _other_reads(c: Catalog) -> dict[str, Recipe]:
    """Reads of the families issue #14 adds (tags, functions, connections, catalog settings); each
    recipe writes what it reads first, and runs only once its operation is served."""
    g = c.glue
    region = g.meta.region_name
    db_arn = f"arn:aws:glue:{region}:{c.account}:database/{c.db}"

    def tags(c: Catalog) -> list[dict[str, Any]]:
        g.tag_resource(ResourceArn=db_arn, TagsToAdd={"team": "data"})
        return [g.get_tags(ResourceArn=db_arn)]

    done: set[str] = set()

    def once(setup: Callable[[], Any]) -> None:
        """Run a write shared by two reads only once per module, whichever read comes first."""
        if setup.__name__ not in done:
            done.add(setup.__name__)
            setup()

    def function() -> None:
        g.create_user_defined_function(DatabaseName=c.db, FunctionInput={
            "FunctionName": "f", "ClassName": "com.example.F", "OwnerName": "ana", "OwnerType": "USER",
            "FunctionType": "REGULAR_FUNCTION", "ArtifactLocation": "s3://b/artifacts/", "GovernanceMode": "IAM_ONLY",
            "ResourceUris": [{"ResourceType": "JAR", "Uri": "s3://b/f.jar", "LastModified": 1700000000}]})

    def connection() -> None:
        g.create_connection(ConnectionInput={
            "Name": "jdbc", "Description": "d", "ConnectionType": "JDBC", "MatchCriteria": ["m"],
            "ConnectionProperties": {"JDBC_CONNECTION_URL": "jdbc:postgresql://h:5432/db", "USERNAME": "u",
                                     "PASSWORD": "p"},
            "PhysicalConnectionRequirements": {"SubnetId": "subnet-1", "SecurityGroupIdList": ["sg-1"],
                                               "AvailabilityZone": "us-east-1a"},
            "SparkProperties": {"spark.k": "v"}, "AthenaProperties": {"athena.k": "v"},
            "PythonProperties": {"python.k": "v"},
            "AuthenticationConfiguration": {
                "AuthenticationType": "BASIC", "KmsKeyArn": f"arn:aws:kms:us-east-1:{c.account}:key/k",
                "SecretArn": f"arn:aws:secretsmanager:us-east-1:{c.account}:secret:s"}})

    def policy() -> None:
        g.put_resource_policy(PolicyInJson='{"Version": "2012-10-17", "Statement": []}')

    def encryption(c: Catalog) -> list[dict[str, Any]]:
        g.put_data_catalog_encryption_settings(DataCatalogEncryptionSettings={
            "EncryptionAtRest": {"CatalogEncryptionMode": "SSE-KMS", "SseAwsKmsKeyId": "alias/k",
                                 "CatalogEncryptionServiceRole": f"arn:aws:iam::{c.account}:role/r"},
            "ConnectionPasswordEncryption": {"ReturnConnectionPasswordEncrypted": True, "AwsKmsKeyId": "alias/k"}})
        return [g.get_data_catalog_encryption_settings()]

    lf = c.lf
    bucket = f"arn:aws:s3:::out-{c.account}"

    def lake() -> None:
        """Every data lake setting, a registered location and a grant on every kind of resource
        (the open mode's caller, the account root, makes itself a data lake administrator)."""
        grantee = {"DataLakePrincipalIdentifier": f"arn:aws:iam::{c.account}:role/analyst"}
        lf.put_data_lake_settings(DataLakeSettings={
            "DataLakeAdmins": [{"DataLakePrincipalIdentifier": f"arn:aws:iam::{c.account}:root"}],
            "ReadOnlyAdmins": [grantee],
            "CreateDatabaseDefaultPermissions": [{"Principal": grantee, "Permissions": ["DESCRIBE"]}],
            "CreateTableDefaultPermissions": [{"Principal": grantee, "Permissions": ["SELECT"]}],
            "Parameters": {"CROSS_ACCOUNT_VERSION": "4"}, "TrustedResourceOwners": ["111122223333"],
            "AllowExternalDataFiltering": True, "AllowFullTableExternalDataAccess": True,
            "ExternalDataFilteringAllowList": [grantee], "AuthorizedSessionTagValueList": ["engine"]})
        lf.register_resource(ResourceArn=bucket, RoleArn=f"arn:aws:iam::{c.account}:role/lf", WithFederation=True,
                             HybridAccessEnabled=True, WithPrivilegedAccess=True, ExpectedResourceOwnerAccount=c.account)
        lf.register_resource(ResourceArn=bucket + "-2", UseServiceLinkedRole=True)  # a second page
        resources = [{"Catalog": {}}, {"Database": {"Name": c.db}}, {"Table": {"DatabaseName": c.db, "Name": c.table}},
                     {"Table": {"DatabaseName": c.db, "TableWildcard": {}}},
                     {"TableWithColumns": {"DatabaseName": c.db, "Name": c.table, "ColumnNames": ["id"]}},
                     {"TableWithColumns": {"DatabaseName": c.db, "Name": c.governed,
                                           "ColumnWildcard": {"ExcludedColumnNames": ["id"]}}},
                     {"DataLocation": {"ResourceArn": bucket + "/data"}}]
        permissions = [["CREATE_DATABASE"], ["DESCRIBE"], ["SELECT"], ["SELECT"], ["SELECT"], ["SELECT"],
                       ["DATA_LOCATION_ACCESS"]]
        assert lf.batch_grant_permissions(Entries=[
            {"Id": str(i), "Principal": grantee, "Resource": resource, "Permissions": granted,
             "PermissionsWithGrantOption": granted}
            for i, (resource, granted) in enumerate(zip(resources, permissions))])["Failures"] == []

    def lake_reads(*reads: Callable[[], dict[str, Any]]) -> list[dict[str, Any]]:
        once(lake)
        return [read() for read in reads]

    db_path = f"arn:aws:glue:{region}:{c.account}:database/{c.db}"
    def crawler() -> None:
        """Every kind of classifier with every member, and a crawler with every member (never
        started: the session server's worker would crawl it with the real engine)."""
        g.create_classifier(CsvClassifier={
            "Name": "csv", "Delimiter": ";", "QuoteSymbol": "'", "ContainsHeader": "PRESENT", "Header": ["a", "b"],
            "DisableValueTrimming": True, "AllowSingleColumn": True, "CustomDatatypeConfigured": True,
            "CustomDatatypes": ["INT"], "Serde": "OpenCSVSerDe"})
        g.create_classifier(GrokClassifier={"Name": "grok", "Classification": "log", "GrokPattern": "%{WORD:w}",
                                            "CustomPatterns": "W [a-z]+"})
        g.create_classifier(JsonClassifier={"Name": "json", "JsonPath": "$[*]"})
        g.create_classifier(XMLClassifier={"Name": "xml", "Classification": "xml", "RowTag": "row"})
        g.create_crawler(
            Name="crawl", Role=f"arn:aws:iam::{c.account}:role/crawler", DatabaseName=c.db, Description="d",
            Targets={"S3Targets": [{"Path": "s3://bucket/data/", "Exclusions": ["**.tmp"], "SampleSize": 10}]},
            Schedule="cron(0 12 * * ? *)", Classifiers=["csv"], TablePrefix="p_",
            SchemaChangePolicy={"UpdateBehavior": "LOG", "DeleteBehavior": "LOG"},
            RecrawlPolicy={"RecrawlBehavior": "CRAWL_EVERYTHING"},
            LineageConfiguration={"CrawlerLineageSettings": "ENABLE"},
            LakeFormationConfiguration={"UseLakeFormationCredentials": True, "AccountId": c.account},
            Configuration='{"Version": 1.0}', CrawlerSecurityConfiguration="sec", Tags={"t": "v"})

    def crawler_reads(*reads: Callable[[], dict[str, Any]]) -> list[dict[str, Any]]:
        once(crawler)
        return [read() for read in reads]


    def after(setup: Callable[[], None], *reads: Callable[[], dict[str, Any]]) -> list[dict[str, Any]]:
        once(setup)
        return [read() for read in reads]

    return {
        "GetTags": tags,
        "GetUserDefinedFunction": lambda c: after(function, lambda: g.get_user_defined_function(
            DatabaseName=c.db, FunctionName="f")),
        "GetUserDefinedFunctions": lambda c: after(function, lambda: g.get_user_defined_functions(Pattern="*")),
        "GetConnection": lambda c: after(connection, lambda: g.get_connection(Name="jdbc")),
        "GetConnections": lambda c: after(connection, g.get_connections,
                                          lambda: g.get_connections(HidePassword=True)),
        "GetCrawler": lambda c: crawler_reads(lambda: g.get_crawler(Name="crawl")),
        "GetCrawlers": lambda c: crawler_reads(g.get_crawlers),
        "ListCrawlers": lambda c: crawler_reads(g.list_crawlers, lambda: g.list_crawlers(Tags={"t": "v"})),
        "BatchGetCrawlers": lambda c: crawler_reads(lambda: g.batch_get_crawlers(CrawlerNames=["crawl", "none"])),
        "GetCrawlerMetrics": lambda c: crawler_reads(g.get_crawler_metrics),
        "ListCrawls": lambda c: crawler_reads(lambda: g.list_crawls(CrawlerName="crawl")),
        "GetClassifier": lambda c: crawler_reads(*(lambda n=n: g.get_classifier(Name=n)
                                                   for n in ("csv", "grok", "json", "xml"))),
        "GetClassifiers": lambda c: crawler_reads(g.get_classifiers),
        "GetDataCatalogEncryptionSettings": encryption,
        "GetResourcePolicy": lambda c: after(policy, g.get_resource_policy),
        "GetResourcePolicies": lambda c: after(policy, g.get_resource_policies),
        "GetCatalogImportStatus": lambda c: [g.get_catalog_import_status()],
        "GetDataLakeSettings": lambda c: lake_reads(lf.get_data_lake_settings),
        "GetDataLakePrincipal": lambda c: lake_reads(lf.get_data_lake_principal),
        "ListPermissions": lambda c: lake_reads(lf.list_permissions, lambda: lf.list_permissions(MaxResults=1)),
        "GetEffectivePermissionsForPath": lambda c: lake_reads(
            lambda: lf.get_effective_permissions_for_path(ResourceArn=db_path),
            lambda: lf.get_effective_permissions_for_path(ResourceArn=db_path, MaxResults=1),
            lambda: lf.get_effective_permissions_for_path(ResourceArn=bucket + "/data/x")),
        "DescribeResource": lambda c: lake_reads(lambda: lf.describe_resource(ResourceArn=bucket)),
        "ListResources": lambda c: lake_reads(lf.list_resources, lambda: lf.list_resources(MaxResults=1)),
    }


def _never_held_reads(catalog: Catalog) -> dict[str, Recipe]:
    """The listings of what the service never holds (service/absent_resources.py): one empty page."""
    def read(operation: str) -> Recipe:
        method = getattr(catalog.glue, xform_name(operation))
        return lambda c: [method()]
    return {operation: read(operation) for operation in NEVER_HELD}


@pytest.fixture(scope="module")
def recipes(catalog: Catalog) -> dict[str, Recipe]:
    return {**_table_reads(catalog), **_other_reads(catalog), **_never_held_reads(catalog)}


def _cases() -> Iterator[Any]:
    for service, operation in read_operations():
        yield pytest.param(service, operation, id=f"{service}:{operation}")


@pytest.mark.parametrize("service, operation", list(_cases()))
def test_unfilled_output_members_are_the_reviewed_ones(catalog: Catalog, recipes: dict[str, Recipe],
                                                      service: str, operation: str) -> None:
    recipe = recipes.get(operation)
    if recipe is None:
        pytest.fail(f"{service}:{operation} is served but has no recipe in {__name__}: add one that reads a "
                    "catalog where every member it can fill is filled, then review its unfilled members")
    found = unfilled(service, operation, recipe(catalog))
    reviewed = UNFILLED.get(operation)
    if reviewed is None:
        listing = "\n".join(f'        "{path}": "<why>",' for path in sorted(found))
        pytest.fail(f"{operation} has no entry in tests/integration/unfilled_members.py; today it never "
                    f"fills:\n    \"{operation}\": {{\n{listing}\n    }},")
    assert not (found - set(reviewed)), (
        f"{operation} leaves members unfilled that the allow-list does not name (fill them, or add them "
        f"with a reason): {sorted(found - set(reviewed))}")
    assert not (set(reviewed) - found), (
        f"{operation} now fills members the allow-list says it leaves out: remove them from "
        f"tests/integration/unfilled_members.py: {sorted(set(reviewed) - found)}")


def test_allow_list_names_only_members_of_the_model() -> None:
    """A typo in the allow-list would hide nothing: every path it names must be a member path."""
    for operation, members in UNFILLED.items():
        service = "lakeformation" if operation in _MODELS["lakeformation"].operation_names else "glue"
        output = _MODELS[service].operation_model(operation).output_shape
        for path in members:
            shape: Shape = output
            for step in path.split("."):
                name = step.removesuffix("[]")
                assert shape.type_name == "structure" and name in shape.members, f"{operation}: {path}"
                shape = shape.members[name]
                if step.endswith("[]"):
                    assert shape.type_name == "list", f"{operation}: {path}"
                    shape = shape.member


# ---------------------------------------------------------------------------------------------
# The values of the members the service fills itself.

def test_members_glue_fills_on_every_table_read(make_client) -> None:
    account = random_account()
    glue = make_client("glue", account=account)
    db = f"fill_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput={"Name": "plain", "StorageDescriptor": {"Location": "s3://b/p/"}})
    given = {"Compressed": True, "NumberOfBuckets": 8, "StoredAsSubDirectories": True}
    glue.create_table(DatabaseName=db, TableInput={"Name": "given", "Retention": 3,
                                                   "StorageDescriptor": {"Location": "s3://b/g/", **given}})
    glue.create_table(DatabaseName=db, TableInput={"Name": "gov", "TableType": "GOVERNED"})
    glue.create_table(DatabaseName=db, TableInput=_view_input("view"))

    plain = glue.get_table(DatabaseName=db, Name="plain")["Table"]
    # What AWS answers for a TableInput that left these out.
    assert plain["Retention"] == 0
    assert plain["StorageDescriptor"] == {"Location": "s3://b/p/", "Compressed": False, "NumberOfBuckets": 0,
                                          "StoredAsSubDirectories": False}
    assert plain["CreatedBy"] == f"arn:aws:iam::{account}:root"
    assert plain["IsRegisteredWithLakeFormation"] is False
    assert plain["IsMultiDialectView"] is False and plain["IsMaterializedView"] is False
    assert plain["CatalogId"] == account and plain["VersionId"] == "0" and plain["DatabaseName"] == db
    assert plain["CreateTime"] == plain["UpdateTime"]
    assert "LastAccessTime" not in plain and "Owner" not in plain  # only when given

    stated = glue.get_table(DatabaseName=db, Name="given")["Table"]
    assert stated["Retention"] == 3
    assert {k: stated["StorageDescriptor"][k] for k in given} == given
    # Lake Formation manages governed tables: registered with it.
    assert glue.get_table(DatabaseName=db, Name="gov")["Table"]["IsRegisteredWithLakeFormation"] is True
    view = glue.get_table(DatabaseName=db, Name="view")["Table"]
    assert view["IsMultiDialectView"] is True and "StorageDescriptor" in view

    # Every other read of a table answers the same members.
    glue.update_table(DatabaseName=db, TableInput={"Name": "plain", "Description": "v1"})
    other = make_client("glue", account=account)
    for table in (glue.get_tables(DatabaseName=db)["TableList"] + other.search_tables()["TableList"]
                  + [v["Table"] for v in glue.get_table_versions(DatabaseName=db, TableName="plain")["TableVersions"]]
                  + [glue.get_table_version(DatabaseName=db, TableName="plain", VersionId="1")["TableVersion"]["Table"]]):
        assert table["CreatedBy"] == f"arn:aws:iam::{account}:root", table["Name"]  # the creator, kept on update
        assert table["Retention"] in (0, 3) and table["CatalogId"] == account
        assert table["IsRegisteredWithLakeFormation"] is (table["Name"] == "gov")
        assert table["IsMultiDialectView"] is (table["Name"] == "view") and table["IsMaterializedView"] is False
