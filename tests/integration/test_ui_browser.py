"""The catalog browser (/ui) in headless Chromium (Debian's chromium + chromium-driver, driven by
Selenium; nothing is downloaded): database -> table -> partitions, an Expression filter with the
API's own error wording and the DynamoDB items read, a version diff, statistics, keyboard use and
a phone's width, and a sign-in with an issued key when SigV4 is on. Each main view's screenshot
is kept in .artefacts/ui/ (git-ignored). The first screen of a 10,000-partition table is timed in
the log only (never asserted)."""

from __future__ import annotations

import concurrent.futures
import datetime
import json
import logging
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import boto3
import pytest
from botocore.exceptions import ClientError

from infra.local.stack import CLIENT_CONFIG, REGION, REPO, CatalogStack

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

log = logging.getLogger(__name__)
ARTEFACTS = REPO / ".artefacts" / "ui"
CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver")
# Without these Chromium stalls on a closed network (update checks, sync, QUIC probes).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]
ADMIN = "arn:aws:iam::123456789012:user/admin"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.add_argument("--window-size=1280,900")
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    driver.set_page_load_timeout(30)
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: Any, name: str) -> Path:
    path = ARTEFACTS / f"ui-{name}.png"
    driver.save_screenshot(str(path))
    return path


def wait(driver: Any, condition: Callable[[Any], Any], timeout: float = 20) -> Any:
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)


def view_text(driver: Any) -> str:
    return str(driver.find_element(By.ID, "view").text)


def ready(driver: Any) -> bool:
    return driver.find_element(By.ID, "view").get_attribute("data-ready") == "true"


def no_script_errors(driver: Any) -> None:
    errors = [e for e in driver.get_log("browser")
              if e["level"] == "SEVERE" and e.get("source") == "javascript"]
    assert not errors, errors


def _columns(*extra: dict[str, str]) -> list[dict[str, str]]:
    return [{"Name": "id", "Type": "bigint"}, {"Name": "amount", "Type": "double"},
            {"Name": "note", "Type": "string"}, *extra]


def _table_input(name: str, columns: list[dict[str, str]]) -> dict[str, Any]:
    return {"Name": name, "PartitionKeys": [{"Name": "year", "Type": "string"}, {"Name": "month", "Type": "string"}],
            "Parameters": {"classification": "parquet"},
            "StorageDescriptor": {"Columns": columns, "Location": f"s3://bucket/{name}/",
                                  "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                                  "SerdeInfo": {"SerializationLibrary":
                                                "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}}}


def _partitions(name: str, values: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"Values": list(v), "StorageDescriptor": {"Location": f"s3://bucket/{name}/year={v[0]}/month={v[1]}/"}}
            for v in values]


@pytest.fixture(scope="module")
def sales(glue: Any) -> str:
    """A database with one partitioned parquet table: 24 partitions, an index, two versions, statistics."""
    db = f"ui_sales_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": db, "Description": "orders for the browser test"})
    glue.create_table(DatabaseName=db, TableInput=_table_input("orders", _columns()))
    glue.batch_create_partition(DatabaseName=db, TableName="orders", PartitionInputList=_partitions(
        "orders", [(str(y), f"{m:02d}") for y in (2023, 2024) for m in range(1, 13)]))
    glue.create_partition_index(DatabaseName=db, TableName="orders",
                                PartitionIndex={"Keys": ["year", "month"], "IndexName": "by_year_month"})
    changed = _columns({"Name": "region", "Type": "string"})
    changed[2] = {"Name": "note", "Type": "varchar(200)"}
    glue.update_table(DatabaseName=db, TableInput=_table_input("orders", changed))
    now = datetime.datetime.now(datetime.timezone.utc)
    glue.update_column_statistics_for_table(DatabaseName=db, TableName="orders", ColumnStatisticsList=[
        {"ColumnName": "id", "ColumnType": "bigint", "AnalyzedTime": now, "StatisticsData": {
            "Type": "LONG", "LongColumnStatisticsData": {"MinimumValue": 1, "MaximumValue": 9000, "NumberOfNulls": 0,
                                                         "NumberOfDistinctValues": 9000}}},
        {"ColumnName": "amount", "ColumnType": "double", "AnalyzedTime": now, "StatisticsData": {
            "Type": "DOUBLE", "DoubleColumnStatisticsData": {"MinimumValue": 0.5, "MaximumValue": 990.0,
                                                             "NumberOfNulls": 120, "NumberOfDistinctValues": 4000}}}])
    glue.tag_resource(ResourceArn=f"arn:aws:glue:{REGION}:123456789012:database/{db}", TagsToAdd={"team": "finance"})
    return db


def test_database_table_partitions_expression_versions(browser: Any, endpoint: str, sales: str) -> None:
    browser.get(endpoint + "/")  # a browser at the root is led to the page
    wait(browser, lambda d: ready(d) and sales in view_text(d))
    assert browser.current_url.rstrip("/").endswith("/ui")
    assert "account 123456789012" in browser.find_element(By.ID, "who").text
    assert "us-east-1" in browser.find_element(By.ID, "who").text
    shot(browser, "databases")

    browser.find_element(By.ID, "search-text").send_keys("orders", Keys.ENTER)  # SearchTables
    wait(browser, lambda d: "Tables matching" in view_text(d) and f"orders\n{sales}" in view_text(d).replace(" ", "\n"))

    browser.find_element(By.LINK_TEXT, sales).click()
    wait(browser, lambda d: ready(d) and f"Database {sales}" in view_text(d) and "finance" in view_text(d))
    assert "Hive/parquet" in view_text(browser)
    shot(browser, "database")

    browser.find_element(By.LINK_TEXT, "orders").click()
    wait(browser, lambda d: "by_year_month" in view_text(d) and "ACTIVE" in view_text(d))
    text = view_text(browser)
    for expected in ("s3://bucket/orders/", "Hive/parquet", "classification=parquet", "varchar(200)", "region"):
        assert expected in text
    shot(browser, "table")

    browser.find_element(By.ID, "tab-partitions").click()
    wait(browser, lambda d: "Page 1: 24 partitions" in view_text(d))
    expression = browser.find_element(By.ID, "expression")
    expression.send_keys("year = '2024' AND month > '09'", Keys.ENTER)
    wait(browser, lambda d: "Page 1: 3 partitions" in view_text(d))
    items_read = int(browser.find_element(By.ID, "items-read").text)
    assert 3 <= items_read < 24  # served from the index: it read the matches, not the table
    assert "s3://bucket/orders/year=2024/month=12/" in view_text(browser)
    shot(browser, "partitions")

    expression = browser.find_element(By.ID, "expression")
    expression.clear()
    expression.send_keys("colour = 'red'", Keys.ENTER)
    wait(browser, lambda d: "InvalidInputException" in view_text(d))
    with pytest.raises(ClientError) as refused:
        boto3.client("glue", endpoint_url=endpoint, region_name=REGION, aws_access_key_id="testing",
                     aws_secret_access_key="x", config=CLIENT_CONFIG).get_partitions(
            DatabaseName=sales, TableName="orders", Expression="colour = 'red'")
    error = refused.value.response["Error"]
    assert f"{error['Code']}: {error['Message']}" in view_text(browser)  # the API's own words

    browser.find_element(By.ID, "tab-versions").click()
    wait(browser, lambda d: "Schema diff" in view_text(d))
    diff = browser.find_element(By.ID, "diff").text
    assert "changed note string varchar(200)" in diff and "added region string" in diff
    shot(browser, "versions")

    browser.find_element(By.ID, "tab-statistics").click()
    wait(browser, lambda d: "GetColumnStatisticsForTable" in view_text(d))
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.bar")) == 4  # nulls and distinct values of 2 columns
    assert "9000" in view_text(browser) and "990" in view_text(browser)
    shot(browser, "statistics")

    browser.find_element(By.ID, "tab-access").click()
    wait(browser, lambda d: "ListPermissions" in view_text(d) and "finance" in view_text(d))
    no_script_errors(browser)


def test_keyboard_labels_and_a_phone_s_width(browser: Any, endpoint: str, sales: str) -> None:
    browser.get(f"{endpoint}/ui#/t/{sales}/orders/overview")
    wait(browser, lambda d: "by_year_month" in view_text(d))
    tab = browser.find_element(By.ID, "tab-overview")
    tab.send_keys(Keys.ARROW_RIGHT)  # the tab list moves focus with the arrow keys
    assert browser.switch_to.active_element.get_attribute("id") == "tab-partitions"
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait(browser, lambda d: "Page 1: 24 partitions" in view_text(d))
    # Every input has a label.
    for element in browser.find_elements(By.CSS_SELECTOR, "input, select"):
        ident = element.get_attribute("id")
        assert ident and browser.find_elements(By.CSS_SELECTOR, f"label[for='{ident}']"), ident
    browser.set_window_size(390, 844)
    try:
        browser.get(f"{endpoint}/ui#/t/{sales}/orders/partitions")
        wait(browser, lambda d: "Page 1: 24 partitions" in view_text(d))
        overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1  # wide tables scroll in their own box, the page does not
        shot(browser, "phone")
    finally:
        browser.set_window_size(1280, 900)


def test_iceberg_snapshots_and_governed_objects(browser: Any, endpoint: str, glue: Any, lakeformation: Any,
                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    db = f"ui_formats_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": db})
    location = (tmp_path_factory.mktemp("ui-iceberg") / "clicks").as_uri()
    glue.create_table(DatabaseName=db, Name="clicks", OpenTableFormatInput={"IcebergInput": {
        "MetadataOperation": "CREATE", "Version": "2", "CreateIcebergTableInput": {
            "Location": location, "Schema": {"Fields": [{"Id": 1, "Name": "id", "Type": "long", "Required": True}]}}}})
    browser.get(f"{endpoint}/ui#/t/{db}/clicks/history")  # Iceberg REST LoadTable, as the signed-in caller
    wait(browser, lambda d: ready(d) and "Metadata history" in view_text(d))
    text = view_text(browser)
    assert f"{location}/metadata/00000-" in text and "Current snapshot" in text

    glue.create_table(DatabaseName=db, TableInput={
        "Name": "objects", "TableType": "GOVERNED", "PartitionKeys": [{"Name": "year", "Type": "int"}],
        "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "bigint"}], "Location": "s3://lake/objects/"}})
    tx = lakeformation.start_transaction()["TransactionId"]
    lakeformation.update_table_objects(DatabaseName=db, TableName="objects", TransactionId=tx, WriteOperations=[
        {"AddObject": {"Uri": "s3://lake/objects/year=2021/a.parquet", "ETag": "e1", "Size": 42,
                       "PartitionValues": ["2021"]}}])
    lakeformation.commit_transaction(TransactionId=tx)
    browser.get(f"{endpoint}/ui#/t/{db}/objects/history")
    wait(browser, lambda d: ready(d) and "s3://lake/objects/year=2021/a.parquet" in view_text(d))
    assert tx in view_text(browser) and "COMMITTED" in view_text(browser)
    shot(browser, "governed")
    before = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    moment = browser.find_element(By.ID, "as-of")
    browser.execute_script("arguments[0].value = arguments[1]", moment, before.strftime("%Y-%m-%dT%H:%M:%S"))
    moment.send_keys(Keys.ENTER)
    wait(browser, lambda d: "a.parquet" not in view_text(d))  # the objects at that time: none, or the API's refusal
    no_script_errors(browser)


def test_paimon_schema_snapshots_tags_and_branches(browser: Any, endpoint: str, glue: Any) -> None:
    from pypaimon.catalog.catalog_factory import CatalogFactory
    from pypaimon.common.identifier import Identifier

    from tests.integration.test_paimon_catalog import simple_schema
    from tests.integration.test_paimon_protocol import options

    db = f"ui_paimon_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": db})
    CatalogFactory.create(options(endpoint)).create_table(Identifier.create(db, "logs"), simple_schema(True), False)
    browser.get(f"{endpoint}/ui#/t/{db}/logs/history")  # Paimon REST: table, snapshots, tags, branches
    wait(browser, lambda d: ready(d) and "Branches" in view_text(d))
    text = view_text(browser)
    assert "id INT" in text and "name STRING" in text and "dt STRING" in text
    assert not browser.find_elements(By.CSS_SELECTOR, "#view .error"), text
    shot(browser, "paimon")
    no_script_errors(browser)


def test_who_may_see_or_change_a_table_as_another_principal(browser: Any, endpoint: str) -> None:
    # Open mode's "act as": an account of its own, whose data lake administrator sees every grant.
    account = "444455556666"
    steward = f"{account}:user:steward"
    glue = boto3.client("glue", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=account,
                        aws_secret_access_key="x", config=CLIENT_CONFIG)
    lf = boto3.client("lakeformation", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=account,
                      aws_secret_access_key="x", config=CLIENT_CONFIG)
    db = f"ui_grants_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=_table_input("orders", _columns()))
    settings = lf.get_data_lake_settings()["DataLakeSettings"]
    settings["DataLakeAdmins"] = [{"DataLakePrincipalIdentifier": f"arn:aws:iam::{account}:user/steward"}]
    lf.put_data_lake_settings(DataLakeSettings=settings)
    boto3.client("lakeformation", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=steward,
                 aws_secret_access_key="x", config=CLIENT_CONFIG).grant_permissions(
        Principal={"DataLakePrincipalIdentifier": f"arn:aws:iam::{account}:user/alice"},
        Resource={"Table": {"DatabaseName": db, "Name": "orders"}}, Permissions=["SELECT"])

    browser.get(f"{endpoint}/ui")
    wait(browser, ready)
    browser.find_element(By.XPATH, "//button[text()='act as…']").click()
    prompt = wait(browser, lambda d: d.switch_to.alert)
    prompt.send_keys(steward)
    prompt.accept()
    wait(browser, lambda d: f"account {steward}" in d.find_element(By.ID, "who").text)
    browser.get(f"{endpoint}/ui#/t/{db}/orders/access")
    browser.refresh()  # "act as" is the tab's own choice: a reload returns to the default account
    wait(browser, lambda d: ready(d) and "EntityNotFoundException" in view_text(d))
    browser.find_element(By.XPATH, "//button[text()='act as…']").click()
    prompt = wait(browser, lambda d: d.switch_to.alert)
    prompt.send_keys(steward)
    prompt.accept()
    wait(browser, lambda d: ready(d) and f"arn:aws:iam::{account}:user/alice" in view_text(d))
    text = view_text(browser)
    assert "SELECT" in text and "IAM_ALLOWED_PRINCIPALS" in text
    shot(browser, "access")
    no_script_errors(browser)


@pytest.fixture(scope="module")
def sigv4_server(stack: CatalogStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, str]]:
    """A server with SigV4 verification on, and an issued admin key: (endpoint, key id, secret)."""
    key_file = tmp_path_factory.mktemp("ui-auth") / "auth.key"
    env = {**stack.env, "GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)}
    # An administrator of its own: `admin bootstrap` creates nothing once any test has made one in
    # the session's shared identities store.
    arn = f"{ADMIN}-{uuid.uuid4().hex[:8]}"

    def identities(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "infra.identities", *args], cwd=REPO, env=env,
                              capture_output=True, text=True, check=True).stdout

    identities("principals", "create", arn, "--admin")
    key = json.loads(identities("keys", "create", arn))
    server = stack.extra_server({"GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)}, name="ui-auth").start()
    try:
        yield server.endpoint, key["AccessKeyId"], key["SecretAccessKey"]
    finally:
        server.stop()


def test_sign_in_with_an_issued_key(browser: Any, sigv4_server: tuple[str, str, str]) -> None:
    endpoint, key_id, secret = sigv4_server
    signed = boto3.client("glue", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=key_id,
                          aws_secret_access_key=secret, config=CLIENT_CONFIG)
    db = f"ui_signed_{uuid.uuid4().hex[:8]}"
    signed.create_database(DatabaseInput={"Name": db})

    browser.get(endpoint + "/ui")
    wait(browser, lambda d: d.find_element(By.ID, "signin").is_displayed())
    assert "Not signed in" in browser.find_element(By.ID, "who").text
    browser.find_element(By.ID, "key-id").send_keys(key_id)
    browser.find_element(By.ID, "secret").send_keys(secret[:-1] + ("A" if secret[-1] != "A" else "B"), Keys.ENTER)
    # Glue's own words for a wrong secret.
    wait(browser, lambda d: "InvalidSignatureException: The request signature we calculated does not match"
         in d.find_element(By.ID, "signin-error").text)
    shot(browser, "signin")

    browser.find_element(By.ID, "secret").send_keys(secret, Keys.ENTER)
    wait(browser, lambda d: ready(d) and db in view_text(d))
    assert f"Signed in as {key_id}" in browser.find_element(By.ID, "who").text
    kept = browser.execute_script("return JSON.stringify(sessionStorage)")
    assert secret not in kept and key_id in kept  # only the derived signing keys and a bearer token
    assert browser.find_element(By.ID, "secret").get_attribute("value") == ""

    browser.find_element(By.LINK_TEXT, db).click()  # a signed Glue call, then a signed Lake Formation one
    wait(browser, lambda d: f"Database {db}" in view_text(d) and "ListPermissions" in view_text(d))
    assert "account 123456789012" in browser.find_element(By.ID, "who").text
    browser.refresh()  # the session survives a reload of the tab, without the secret
    wait(browser, lambda d: ready(d) and f"Database {db}" in view_text(d))
    no_script_errors(browser)
    browser.find_element(By.ID, "signout").click()
    wait(browser, lambda d: d.find_element(By.ID, "signin").is_displayed())
    assert browser.execute_script("return sessionStorage.length") == 0


@pytest.mark.slow
def test_first_screen_of_a_table_with_10000_partitions(browser: Any, endpoint: str, glue: Any) -> None:
    db = f"ui_big_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=_table_input("events", _columns()))
    values = [(str(2000 + i // 100), f"{i % 100:02d}") for i in range(10_000)]
    batches = [values[i:i + 100] for i in range(0, len(values), 100)]

    def create(batch: list[tuple[str, str]]) -> None:
        answer = glue.batch_create_partition(DatabaseName=db, TableName="events",
                                             PartitionInputList=_partitions("events", batch))
        assert not answer.get("Errors")

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(create, batches))

    timings = []
    for _ in range(3):
        browser.get("about:blank")
        browser.get(f"{endpoint}/ui#/t/{db}/events/partitions")
        wait(browser, lambda d: ready(d) and "Page 1: 100 partitions" in view_text(d), timeout=60)
        since_navigation = browser.execute_script("return performance.now()")
        route_ms = int(browser.find_element(By.ID, "view").get_attribute("data-ms"))
        timings.append((since_navigation, route_ms))
    shot(browser, "partitions-10000")
    for since_navigation, route_ms in timings:
        # Logged, never asserted: the figure the issue asks for (first screen <= 1 s on this machine).
        log.warning("first screen of a 10,000-partition table: %.0f ms from navigation (page load + GetTable + "
                    "GetPartitions 100), %d ms of it the view's API calls", since_navigation, route_ms)
        print(f"ui-first-screen-10000-partitions: {since_navigation:.0f} ms from navigation, {route_ms} ms calls")
    assert "Next page" in view_text(browser)
    browser.find_element(By.ID, "next-page").click()
    wait(browser, lambda d: "Page 2: 100 partitions" in view_text(d))
    time.sleep(0)  # keep the last page on screen for the screenshot above
