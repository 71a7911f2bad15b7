"""The hand-off of large crawls to Spark (issue #51), without Spark: the engine's ``hand_off`` and
``classify_files`` hooks on fake clients, the worker's decision (and its fallback when pyspark is
missing), the driver subprocess's protocol with a fake spark-submit (progress, result, one-line
failure, StopCrawler's kill, the spec's 0600 file), and the EMR Serverless request the deployed
worker would send (untried on AWS). The real Spark run is tests/integration/test_crawl_on_spark.py.
"""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from pipelines import crawl_worker
from pipelines.crawl import run_crawl


class _Pages:
    def __init__(self, pages: list[dict[str, Any]]) -> None:
        self.pages = pages

    def paginate(self, **_: Any) -> list[dict[str, Any]]:
        return self.pages


class FakeS3:
    def __init__(self, keys: list[str]) -> None:
        self.keys = keys

    def get_paginator(self, name: str) -> _Pages:
        assert name == "list_objects_v2"
        return _Pages([{"Contents": [{"Key": k, "Size": 10} for k in self.keys]}])


class FakeGlue:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def get_database(self, **_: Any) -> dict[str, Any]:
        self.calls.append("get_database")
        return {"Database": {}}

    def get_paginator(self, name: str) -> _Pages:
        self.calls.append(name)
        return _Pages([{"TableList": []}])


CRAWLER = {"Name": "c", "DatabaseName": "db", "Targets": {"S3Targets": [
    {"Path": "s3://b/lake", "Exclusions": ["**/skip/**"]}, {"Path": "s3://b/other", "SampleSize": 1}]}}
KEYS = ["lake/t/a=1/f1", "lake/t/a=1/f2", "lake/t/a=2/f1", "lake/t/skip/x/f", "lake/t/_SUCCESS"]


def test_the_engine_counts_files_after_listing_and_hands_off_before_any_write() -> None:
    asked: list[int] = []
    glue = FakeGlue()
    s3 = FakeS3(KEYS)
    result = run_crawl(CRAWLER, classifiers=[], glue=glue, s3=s3, should_stop=lambda: False,
                       progress=lambda _: None, hand_off=lambda files: asked.append(files) or True)
    # lake: 3 visible files (the excluded and the hidden ones dropped); other (the same fake
    # listing, SampleSize 1): one file from each of its 3 folders.
    assert asked == [3 + 3]
    assert result == {"HandOff": True, "Files": 6}
    assert glue.calls == []  # not even the database is read


def test_the_engine_classifies_through_the_given_callable_reusing_its_listing() -> None:
    batches: list[list[tuple[str, int]]] = []
    listed = []
    s3 = FakeS3(KEYS)
    paginator = s3.get_paginator

    def counting(name: str) -> _Pages:
        listed.append(name)
        return paginator(name)
    s3.get_paginator = counting  # type: ignore[method-assign]

    def classify_files(bucket: str, files: list[tuple[str, int]], custom: list[dict[str, Any]]) -> list[Any]:
        assert bucket == "b" and custom == []
        batches.append(files)
        return [None] * len(files)  # every file UNKNOWN
    result = run_crawl(CRAWLER, classifiers=[], glue=FakeGlue(), s3=s3, should_stop=lambda: False,
                       progress=lambda _: None, classify_files=classify_files, classify_batch=2,
                       hand_off=lambda files: False)
    assert listed == ["list_objects_v2", "list_objects_v2"]  # once per target, for the count and the crawl
    assert [len(b) for b in batches] == [2, 1, 2, 1]
    assert result["FilesSkipped"] == 6 and result["TablesCreated"] == 0


def test_the_worker_hands_off_from_the_threshold_and_crawls_itself_without_pyspark(monkeypatch) -> None:
    worker = crawl_worker.Worker("http://127.0.0.1:1")
    monkeypatch.setenv("GLUE_CRAWL_SPARK_FILES", "0")
    assert worker.hand_off_rule([]) is None
    monkeypatch.setenv("GLUE_CRAWL_SPARK_FILES", "10")
    monkeypatch.setattr(crawl_worker, "spark_submit", lambda: "/bin/spark-submit")
    notes: list[str] = []
    decide = worker.hand_off_rule(notes)
    assert decide is not None and not decide(9) and decide(10) and notes == []
    monkeypatch.setattr(crawl_worker, "spark_submit", lambda: None)
    for name in ("GLUE_CRAWL_EMR_APPLICATION", "GLUE_CRAWL_EMR_ROLE", "GLUE_CRAWL_EMR_CODE"):
        monkeypatch.delenv(name, raising=False)
    decide = worker.hand_off_rule(notes)
    assert decide is not None and not decide(50)
    assert notes and "pyspark is not installed" in notes[0] and "crawled by the worker" in notes[0]
    noted = json.loads(crawl_worker._note({"Summary": json.dumps({"Log": ["x"]})}, "worker", notes)["Summary"])
    assert noted["Runner"] == "worker" and noted["Log"] == [notes[0], "x"]


def test_spark_submit_is_pyspark_own_unless_named(monkeypatch) -> None:
    monkeypatch.delenv("GLUE_CRAWL_SPARK_SUBMIT", raising=False)
    found = crawl_worker.spark_submit()
    assert found is None or found.endswith(os.path.join("pyspark", "bin", "spark-submit"))
    monkeypatch.setenv("GLUE_CRAWL_SPARK_SUBMIT", "/opt/spark/bin/spark-submit")
    assert crawl_worker.spark_submit() == "/opt/spark/bin/spark-submit"


def _fake_submit(tmp_path: Path, body: str) -> str:
    """A spark-submit that records its arguments and the spec file's mode, then runs ``body``."""
    script = tmp_path / "spark-submit"
    script.write_text(textwrap.dedent("""\
        #!/bin/sh
        for last; do :; done
        echo "$@" > "{seen}/argv"
        stat -c %a "$last" > "{seen}/mode"
        cp "$last" "{seen}/spec"
        """).format(seen=tmp_path) + textwrap.dedent(body))
    script.chmod(0o755)
    return str(script)


SPEC = {"Crawler": {"Name": "c"}, "KeyId": "AKID", "Secret": "s3cr3t-value", "Region": "us-east-1"}


def test_the_driver_subprocess_reports_progress_and_its_result(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GLUE_LOCAL_DATA_DIR", str(tmp_path / "data"))
    submit = _fake_submit(tmp_path, """\
        echo 'some Spark chatter'
        echo 'CRAWL-PROGRESS {"TablesCreated": 1}'
        echo 'CRAWL-RESULT {"TablesCreated": 2, "Cancelled": false, "Summary": "{}"}'
        """)
    seen: list[dict[str, Any]] = []
    result = crawl_worker.run_spark_driver(SPEC, lambda: False, seen.append, submit)
    assert result == {"TablesCreated": 2, "Cancelled": False, "Summary": "{}"}
    assert seen == [{"TablesCreated": 1}]
    argv = (tmp_path / "argv").read_text()
    assert "s3cr3t-value" not in argv and "--spec" in argv and "spark_driver.py" in argv
    assert (tmp_path / "mode").read_text().strip() == "600"
    assert json.loads((tmp_path / "spec").read_text())["Secret"] == "s3cr3t-value"
    assert list((tmp_path / "data" / "crawl-spark").iterdir()) == []  # removed at the end


def test_a_driver_failure_is_its_one_line_message(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GLUE_LOCAL_DATA_DIR", str(tmp_path / "data"))
    failing = _fake_submit(tmp_path, """\
        echo 'CRAWL-FAILED Cannot read the target path s3://b/x: NoSuchBucket'
        exit 1
        """)
    with pytest.raises(RuntimeError, match=r"^Cannot read the target path s3://b/x: NoSuchBucket$"):
        crawl_worker.run_spark_driver(SPEC, lambda: False, lambda _: None, failing)
    crashed = _fake_submit(tmp_path, """\
        echo 'Exception in thread "main" java.lang.OutOfMemoryError' >&2
        exit 3
        """)
    with pytest.raises(RuntimeError, match=r"status 3: Exception in thread \"main\" java.lang.OutOfMemoryError"):
        crawl_worker.run_spark_driver(SPEC, lambda: False, lambda _: None, crashed)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie no parent reaped yet has ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def test_stop_kills_the_driver_and_returns_cancelled(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GLUE_LOCAL_DATA_DIR", str(tmp_path / "data"))
    submit = _fake_submit(tmp_path, """\
        echo $$ > "{seen}/pid"
        sleep 60 &
        echo $! > "{seen}/child"
        wait
        """.format(seen=tmp_path))
    started = time.monotonic()
    asked = {"n": 0}

    def should_stop() -> bool:
        asked["n"] += 1
        return (tmp_path / "child").exists()
    result = crawl_worker.run_spark_driver(SPEC, should_stop, lambda _: None, submit)
    assert result["Cancelled"] is True
    assert time.monotonic() - started < 30
    for name in ("pid", "child"):
        pid = int((tmp_path / name).read_text())
        for _ in range(50):  # the group got SIGTERM; give it a moment to end
            if not _alive(pid):
                break
            time.sleep(0.1)
        assert not _alive(pid), name
    assert list((tmp_path / "data" / "crawl-spark").iterdir()) == []


def test_the_emr_serverless_request_names_the_driver_and_the_spec_only() -> None:
    settings = {"Application": "00abc", "Role": "arn:aws:iam::123456789012:role/CrawlJob",
                "Code": "s3://ops/crawl-spark/"}
    request = crawl_worker.emr_job_request(settings, "crawl-1", "big", "s3://ops/crawl-spark/crawls/crawl-1/spec.json")
    assert request == {
        "applicationId": "00abc", "executionRoleArn": "arn:aws:iam::123456789012:role/CrawlJob",
        "clientToken": "crawl-1", "name": "crawl-big",
        "jobDriver": {"sparkSubmit": {
            "entryPoint": "s3://ops/crawl-spark/spark_driver.py",
            "entryPointArguments": ["--spec", "s3://ops/crawl-spark/crawls/crawl-1/spec.json"],
            "sparkSubmitParameters": "--py-files s3://ops/crawl-spark/pipelines.zip"}},
        "tags": {"glue-catalog:crawler": "big", "glue-catalog:crawl": "crawl-1"}}
    import botocore.session

    model = botocore.session.get_session().get_service_model("emr-serverless")
    shape = model.operation_model("StartJobRun").input_shape
    assert set(request) <= set(shape.members)
    assert set(shape.required_members) <= set(request)


def test_the_packages_hold_the_driver_the_engine_and_the_emr_model(tmp_path: Path) -> None:
    import zipfile

    from infra.package import WORKER_MODULES, crawl_spark_folder, crawl_worker_zip

    folder = crawl_spark_folder(tmp_path)
    assert (folder / "spark_driver.py").read_text().startswith('"""The Spark side of a crawl')
    with zipfile.ZipFile(folder / "pipelines.zip") as built:
        names = set(built.namelist())
    assert {"pipelines/__init__.py", "pipelines/crawl/__init__.py", "pipelines/crawl/classify.py",
            "pipelines/crawl/spark_driver.py", "pipelines/runtime.py"} <= names
    api = tmp_path / "deployment.zip"
    with zipfile.ZipFile(api, "w") as built:
        built.writestr("app.py", "")
        built.writestr("botocore/data/glue/2017-03-31/service-2.json.gz", "")
    with zipfile.ZipFile(crawl_worker_zip(api)) as built:
        names = set(built.namelist())
    assert "pipelines/crawl/spark_driver.py" in WORKER_MODULES and set(WORKER_MODULES) <= names
    assert any(n.startswith("botocore/data/emr-serverless/") and n.endswith("service-2.json.gz") for n in names)


def test_a_worker_killed_mid_crawl_takes_its_driver_with_it(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    submit = _fake_submit(tmp_path, """\
        echo $$ > "{seen}/pid"
        exec sleep 60
        """.format(seen=tmp_path))
    worker = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""\
        import os, sys
        os.environ["GLUE_LOCAL_DATA_DIR"] = {str(tmp_path / "data")!r}
        from pipelines import crawl_worker
        crawl_worker.run_spark_driver({SPEC!r}, lambda: False, lambda _: None, {submit!r})
        """)], cwd=str(Path(__file__).resolve().parents[2]))
    try:
        for _ in range(100):
            if (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip():
                break
            time.sleep(0.1)
        driver = int((tmp_path / "pid").read_text())
        assert _alive(driver)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
        for _ in range(50):
            if not _alive(driver):
                break
            time.sleep(0.1)
        assert not _alive(driver)
    finally:
        worker.kill()
