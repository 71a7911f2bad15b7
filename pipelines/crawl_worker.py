"""The crawl worker: claims queued crawl runs, runs the crawl engine on them, ends them
(docs/design.md, "Crawlers and crawl runs").

Locally it is a thread of the API server (``infra.local.server.start_crawl_worker``);
``python -m pipelines.crawl_worker`` runs one on its own. Deployed it is a function or job of its
own, never the API Lambda: the engine (``pipelines.crawl``, pyarrow) is imported here, lazily,
on the first run.

The engine gets a boto3 Glue client against this service acting as the crawler's account (in
the open mode the access key id names it: ``<account>:role:<role name>`` for the crawler's Role,
so Lake Formation checks the role's grants) and a boto3 S3 client (AWS_ENDPOINT_URL_S3).

A crawl with at least ``GLUE_CRAWL_SPARK_FILES`` files to classify (counted by the engine after
listing, before any write) goes to Spark: ``spark-submit pipelines/crawl/spark_driver.py`` as a
subprocess here (pyspark's spark-submit), or, deployed with ``GLUE_CRAWL_EMR_APPLICATION``, an EMR
Serverless job run of the same driver. The worker keeps owning the run either way (heartbeat,
StopCrawler kills the driver, the driver's result or one-line failure ends the run). Without
pyspark (or an EMR application) the worker crawls it itself and says so in the run's summary.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Optional

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
# How often the owner renews its claim, and how old a claim's heartbeat may be before another
# worker takes the run over (a crashed worker).
HEARTBEAT_SECONDS = float(os.environ.get("GLUE_CRAWL_HEARTBEAT_SECONDS", "5"))
STALE_SECONDS = float(os.environ.get("GLUE_CRAWL_STALE_SECONDS", "60"))
# How often a worker looks for schedules that are due (one Query of the schedule index).
SCHEDULE_SECONDS = float(os.environ.get("GLUE_CRAWL_SCHEDULE_SECONDS", "10"))
# The engine module (tests name a stub): it has run_crawl and CrawlFailed.
ENGINE = os.environ.get("GLUE_CRAWL_ENGINE", "pipelines.crawl")
# Files to classify from which a crawl is handed to Spark (0: never); read at each run.
SPARK_FILES_DEFAULT = "20000"
REPO = Path(__file__).resolve().parents[1]
SPARK_DRIVER = REPO / "pipelines" / "crawl" / "spark_driver.py"
QUIET_LOG4J = REPO / "pipelines" / "log4j2-quiet.properties"
# How long a Spark driver has to end after SIGTERM (StopCrawler) before it is killed.
SPARK_KILL_GRACE = 10.0
# A Role as CreateCrawler takes it: a name, with a path (service-role/Name), or an IAM role ARN.
_ROLE = re.compile(r"(?:arn:[^:]+:iam::\d{12}:role/)?(?:[\w+=,.@-]+/)*([\w+=,.@-]{1,64})")


def load_engine() -> Any:
    """The engine module; RuntimeError with a clear message if it (or pyarrow) is missing."""
    try:
        return importlib.import_module(ENGINE)
    except ImportError as exc:
        raise RuntimeError(f"The crawl engine ({ENGINE}) cannot be loaded: {exc}. Install the pipelines' "
                           "requirements (pipelines/requirements.txt: pyarrow) where the crawl worker runs.") from exc


def principal_key(account_id: str, role: str) -> str:
    """The open mode's access key id naming the crawler's role in the crawler's account. The
    crawl writes into the crawler's own catalog, whatever account a Role ARN names; a Role that
    names no role is ValueError (never the account's root: that would bypass Lake Formation)."""
    match = _ROLE.fullmatch(role or "")
    if not match:
        raise ValueError(f"The crawler's Role {role[:300]!r} is not an IAM role name or role ARN")
    return f"{account_id}:role:{match.group(1)}"


def signed() -> bool:
    """Whether the service verifies SigV4 (GLUE_AUTH=sigv4, or deployed): the crawl then signs
    with an internal key (``internal_key``), never the open mode's named key id."""
    from chalicelib.protocol.sigv4 import required

    return required()


def internal_key(account_id: str, role: str) -> tuple[str, str, Callable[[], None]]:
    """Under SigV4: an access key the worker issues itself, through the identities store, for the
    crawler's role ``arn:aws:iam::<account>:role/<name>`` (the principal is created, not an
    administrator, if it does not exist), so the crawl's writes are checked as that role's, as in
    the open mode. (key id, secret, revoke): the secret is only ever in this process's memory
    (stored sealed, as every key; never printed or logged); ``revoke`` deletes the key when the
    crawl ends. A worker killed mid-crawl leaves its key behind, sealed, unusable by anyone who
    never held the secret; ``python -m infra.identities keys list`` shows it."""
    from chalicelib.store import identities

    arn = f"arn:aws:iam::{account_id}:role/{principal_key(account_id, role).split(':role:', 1)[1]}"
    if identities.get_principal(arn) is None:
        try:
            identities.create_principal(arn)
        except identities.IdentityError:
            pass  # created meanwhile by another worker
    key, secret = identities.create_key(arn)

    def revoke() -> None:
        try:
            identities.delete_key(key.key_id)
        except identities.IdentityError:
            pass
    return key.key_id, secret, revoke


def clients(endpoint: str, region: str, account_id: str, role: str,
            verify: Optional[str] = None, credentials: Optional[tuple[str, str]] = None) -> tuple[Any, Any]:
    """(glue, s3) boto3 clients for a crawl: Glue against this service as the crawler's role
    (``verify``: the CA bundle of a local HTTPS endpoint; ``credentials``: the internal key of
    ``internal_key`` under SigV4, else the open mode's key id naming the role)."""
    import boto3

    key_id, secret = credentials or (principal_key(account_id, role), "crawler")
    session = boto3.session.Session(aws_access_key_id=key_id, aws_secret_access_key=secret, region_name=region)
    glue = session.client("glue", endpoint_url=endpoint, verify=verify)
    s3 = boto3.session.Session(region_name=region).client("s3")
    return glue, s3


def spark_files() -> int:
    """GLUE_CRAWL_SPARK_FILES: files to classify from which a crawl goes to Spark (0: never)."""
    try:
        return int(os.environ.get("GLUE_CRAWL_SPARK_FILES") or SPARK_FILES_DEFAULT)
    except ValueError:
        return int(SPARK_FILES_DEFAULT)


def spark_submit() -> Optional[str]:
    """The spark-submit to run (GLUE_CRAWL_SPARK_SUBMIT, else pyspark's own); None when pyspark
    is not installed here (``make run`` installs only the server)."""
    named = os.environ.get("GLUE_CRAWL_SPARK_SUBMIT")
    if named:
        return named
    try:
        spec = importlib.util.find_spec("pyspark")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None
    candidate = Path(list(spec.submodule_search_locations)[0]) / "bin" / "spark-submit"
    return str(candidate) if candidate.exists() else None


def emr_settings() -> Optional[dict[str, str]]:
    """The EMR Serverless application large crawls go to when deployed (GLUE_CRAWL_EMR_APPLICATION,
    GLUE_CRAWL_EMR_ROLE, GLUE_CRAWL_EMR_CODE: the s3:// folder holding spark_driver.py and
    pipelines.zip); None when not set."""
    names = {"Application": "GLUE_CRAWL_EMR_APPLICATION", "Role": "GLUE_CRAWL_EMR_ROLE", "Code": "GLUE_CRAWL_EMR_CODE"}
    found = {k: os.environ.get(v, "") for k, v in names.items()}
    return found if all(found.values()) else None


def data_dir() -> Path:
    """Where the worker keeps a Spark crawl's private files (GLUE_LOCAL_DATA_DIR, else .data)."""
    return Path(os.environ.get("GLUE_LOCAL_DATA_DIR") or REPO / ".data") / "crawl-spark"


def emr_job_request(settings: dict[str, str], crawl_id: str, crawler_name: str, spec_uri: str,
                    token: Optional[str] = None) -> dict[str, Any]:
    """The ``emr-serverless`` StartJobRun request of a crawl: the driver and the engine's zip from
    ``settings["Code"]``, the spec's S3 URI as its only argument (no secret: the spec holds the
    key's secret sealed with KMS)."""
    code = settings["Code"].rstrip("/")
    return {
        "applicationId": settings["Application"],
        "executionRoleArn": settings["Role"],
        "clientToken": token or crawl_id,  # a retried start is the same job run
        "name": f"crawl-{crawler_name}"[:256],
        "jobDriver": {"sparkSubmit": {
            "entryPoint": f"{code}/spark_driver.py",
            "entryPointArguments": ["--spec", spec_uri],
            "sparkSubmitParameters": f"--py-files {code}/pipelines.zip",
        }},
        "tags": {"glue-catalog:crawler": crawler_name[:256], "glue-catalog:crawl": crawl_id},
    }


def _note(result: dict[str, Any], runner: str, notes: list[str]) -> dict[str, Any]:
    """The result with its Summary saying where the crawl ran (and why)."""
    try:
        summary = json.loads(result.get("Summary") or "{}")
    except ValueError:
        summary = {"Text": result.get("Summary")}
    if not isinstance(summary, dict):
        summary = {"Text": summary}
    if notes:
        summary["Log"] = list(notes) + list(summary.get("Log") or [])
    # First, so the run's Summary (cut at 2,048 characters) keeps it.
    summary = {"Runner": runner, **{k: v for k, v in summary.items() if k != "Runner"}}
    return {**result, "Summary": json.dumps(summary)}


def run_spark_driver(spec: dict[str, Any], should_stop: Callable[[], bool],
                     progress: Callable[[dict[str, Any]], None], submit: str) -> dict[str, Any]:
    """Run the Spark driver on ``spec`` as a subprocess and wait for it: its progress lines go to
    ``progress``; ``should_stop()`` (polled twice a second) kills it and returns ``Cancelled``;
    a failure is RuntimeError with the driver's one-line message. The spec is a 0600 file in a
    0700 folder of the data dir (the secret is never on a command line), removed at the end."""
    from pipelines.crawl import spark_driver

    root = data_dir()
    root.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="crawl-", dir=root))  # mode 0700
    try:
        spec_path = folder / "spec.json"
        fd = os.open(spec_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(spec, handle)
        master = os.environ.get("GLUE_CRAWL_SPARK_MASTER") or "local[*]"
        command = [submit, "--master", master, "--conf", "spark.ui.showConsoleProgress=false"]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.setdefault("PYSPARK_PYTHON", sys.executable)
        env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        if master.startswith("local"):
            # As the pipelines' local sessions (pipelines/runtime.py): no UI, a loopback driver,
            # a quick-starting JVM, Spark's own logging to errors only.
            env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            java = f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dlog4j2.configurationFile=file:{QUIET_LOG4J}"
            command += ["--conf", "spark.ui.enabled=false", "--conf", f"spark.driver.host={env['SPARK_LOCAL_IP']}",
                        "--driver-java-options", java]
        command += [str(SPARK_DRIVER), "--spec", str(spec_path)]
        result: dict[str, Any] = {}
        failure: list[str] = []
        with open(folder / "driver.log", "wb") as errors:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors,
                                       env=env, start_new_session=True, text=True, bufsize=1,
                                       preexec_fn=_die_with_worker if sys.platform == "linux" else None)

            def read() -> None:
                assert process.stdout is not None
                for line in process.stdout:
                    kind, _, payload = line.rstrip("\n").partition(" ")
                    try:
                        if kind == spark_driver.PROGRESS:
                            progress(json.loads(payload))
                        elif kind == spark_driver.RESULT:
                            result.update(json.loads(payload))
                        elif kind == spark_driver.FAILED:
                            failure.append(payload)
                    except ValueError:
                        log.warning("the Spark driver wrote a line that is not JSON: %.200s", line)
            reader = threading.Thread(target=read, name="crawl-spark-output", daemon=True)
            reader.start()
            cancelled = False
            while process.poll() is None:
                if should_stop():
                    cancelled = True
                    _kill(process)
                    break
                time.sleep(0.5)
            process.wait()
            reader.join(timeout=5)
        if cancelled:
            return {"Cancelled": True, "Summary": json.dumps({"Cancelled": "StopCrawler: the Spark driver was stopped"})}
        if result:
            return result
        if failure:
            raise RuntimeError(failure[-1])
        raise RuntimeError(f"The Spark driver exited with status {process.returncode}"
                           + _last_error((folder / "driver.log").read_text(errors="replace")))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _last_error(log_text: str) -> str:
    """``: <line>`` of the driver's stderr that says what went wrong: its last line naming an
    exception or error, else its last line (stack frames left out); empty when it wrote nothing."""
    lines = [line.strip() for line in log_text.splitlines()
             if line.strip() and not line.startswith((" ", "\t"))]
    errors = [line for line in lines if re.search(r"Exception|Error", line)]
    chosen = (errors or lines or [""])[-1]
    return f": {chosen[:500]}" if chosen else ""


def _die_with_worker() -> None:
    """Popen preexec_fn: Linux SIGKILLs the driver (spark-submit's JVM, exec'd in place) when the
    worker thread that started it dies, so a crashed worker leaves no crawl running on its own
    (the driver's Python process exits when the JVM is gone: spark_driver's watchdog)."""
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _kill(process: subprocess.Popen) -> None:
    """End the driver's process group: SIGTERM, then SIGKILL after SPARK_KILL_GRACE seconds."""
    for sig, grace in ((signal.SIGTERM, SPARK_KILL_GRACE), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


class Worker:
    """One worker: ``run_once`` claims and crawls at most one run."""

    def __init__(self, endpoint: str, stale_seconds: float = STALE_SECONDS,
                 heartbeat_seconds: float = HEARTBEAT_SECONDS,
                 make_clients: Callable[..., tuple[Any, Any]] = clients, verify: Optional[str] = None) -> None:
        self.endpoint = endpoint
        self.owner = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.stale_seconds = stale_seconds
        self.heartbeat_seconds = heartbeat_seconds
        self.make_clients = make_clients
        self.verify = verify
        self.schedules_checked = float("-inf")

    def fire_schedules(self, every: float = 0.0) -> int:
        """Queue the runs of schedules that are due (``crawl_runs.fire_due``), at most once
        every ``every`` seconds; the number queued."""
        if time.monotonic() - self.schedules_checked < every:
            return 0
        self.schedules_checked = time.monotonic()
        from chalicelib.service import crawl_runs

        return crawl_runs.fire_due()

    def run_once(self) -> bool:
        """Claim one run and crawl it to its end; False when none was waiting."""
        from chalicelib.service import crawl_runs

        claim = crawl_runs.claim_next(self.owner, self.stale_seconds)
        if claim is None:
            return False
        log.info("crawl %s of crawler %s claimed", claim.run.doc["CrawlId"], claim.crawler_name)
        lost = threading.Event()
        done = threading.Event()
        latest: dict[str, Any] = {}
        lock = threading.Lock()
        stop_seen = {"at": 0.0, "value": False}

        def beat() -> None:
            while not done.wait(self.heartbeat_seconds):
                with lock:
                    progress = dict(latest)
                if not crawl_runs.heartbeat(claim, progress):
                    lost.set()
                    return

        def should_stop() -> bool:
            if lost.is_set():
                return True
            if time.monotonic() - stop_seen["at"] >= 1.0:
                stop_seen.update(at=time.monotonic(), value=crawl_runs.stop_requested(claim))
            return bool(stop_seen["value"])

        def progress(update: dict[str, Any]) -> None:
            with lock:
                latest.update(update)

        beater = threading.Thread(target=beat, name="crawl-heartbeat", daemon=True)
        beater.start()
        outcome, error = "FAILED", None
        result: dict[str, Any] = {}
        revoke: Optional[Callable[[], None]] = None
        try:
            engine = load_engine()
            region = claim.catalog_key.split("\x01", 1)[0]
            role = claim.crawler.get("Role", "")
            credentials = None
            if signed():
                key_id, secret, revoke = internal_key(claim.account_id, role)
                credentials = (key_id, secret)
            glue, s3 = self.make_clients(self.endpoint, region, claim.account_id, role, self.verify, credentials)
            from chalicelib.service import classifiers
            found, missing = classifiers.find_classifiers(claim.catalog_key, list(claim.crawler.get("Classifiers") or ()))
            if missing:
                raise RuntimeError(f"Classifier {missing[0]} does not exist")
            notes: list[str] = []
            hand_off = self.hand_off_rule(notes) if _accepts(engine.run_crawl, "hand_off") else None
            extra: dict[str, Any] = {"hand_off": hand_off} if hand_off else {}
            result = engine.run_crawl(claim.crawler, classifiers=found, glue=glue, s3=s3, should_stop=should_stop,
                                      progress=progress, **extra) or {}
            if result.get("HandOff"):
                key_id, secret = credentials or (principal_key(claim.account_id, role), "crawler")
                spec = {"Crawler": claim.crawler, "Classifiers": found, "Endpoint": self.endpoint, "Region": region,
                        "Verify": self.verify, "KeyId": key_id, "Secret": secret,
                        "CrawlId": claim.run.doc["CrawlId"]}
                files = int(result.get("Files") or 0)
                emr = emr_settings()
                if emr is not None:
                    result = self.crawl_on_emr(emr, claim, spec, should_stop, progress)
                    where = f"{files} files to classify: crawled by EMR Serverless application {emr['Application']}"
                else:
                    result = run_spark_driver(spec, should_stop, progress, spark_submit() or "spark-submit")
                    where = f"{files} files to classify: crawled on Spark (spark-submit)"
                result = _note(result, "spark", [where])
            elif notes:
                result = _note(result, "worker", notes)
            outcome = "CANCELLED" if result.get("Cancelled") or should_stop() else "SUCCEEDED"
        except Exception as exc:  # noqa: BLE001 - any failure of the crawl ends the run FAILED with its message
            error = str(exc) or type(exc).__name__
            log.warning("crawl of crawler %s failed: %s", claim.crawler_name, error)
        finally:
            done.set()
            beater.join()
            if revoke is not None:
                revoke()
        if lost.is_set():
            log.warning("crawl of crawler %s was taken over by another worker", claim.crawler_name)
            return True
        with lock:
            counts = {**latest, **{k: v for k, v in result.items() if k != "Cancelled"}}
        crawl_runs.finish(claim, outcome, counts, error)
        return True

    def hand_off_rule(self, notes: list[str]) -> Optional[Callable[[int], bool]]:
        """The engine's ``hand_off``: True for at least GLUE_CRAWL_SPARK_FILES files when Spark
        is at hand (pyspark's spark-submit, or an EMR application); otherwise the worker crawls
        and ``notes`` says why. None when the setting is 0."""
        limit = spark_files()
        if limit <= 0:
            return None

        def decide(files: int) -> bool:
            if files < limit:
                return False
            if emr_settings() is not None or spark_submit() is not None:
                return True
            notes.append(f"{files} files to classify (GLUE_CRAWL_SPARK_FILES={limit}), but no Spark here "
                         "(pyspark is not installed, GLUE_CRAWL_EMR_APPLICATION is unset): crawled by the worker")
            log.info("%s", notes[-1])
            return False
        return decide

    def crawl_on_emr(self, emr: dict[str, str], claim: Any, spec: dict[str, Any], should_stop: Callable[[], bool],
                     progress: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Deployed: the crawl as an EMR Serverless job run of the same driver (untried on AWS;
        docs/design.md). The spec goes to ``<Code>/crawls/<crawl id>/spec.json`` with the secret
        sealed by KMS (GLUE_AUTH_KMS_KEY_ID, encryption context the crawl id); the job writes its
        result beside it. The worker watches the job run while it holds the run; StopCrawler
        cancels it."""
        import base64

        import boto3

        from pipelines.crawl import s3files

        crawl_id = spec["CrawlId"]
        folder = f"{emr['Code'].rstrip('/')}/crawls/{crawl_id}"
        sealed = dict(spec)
        secret = sealed.pop("Secret")
        kms = boto3.client("kms", region_name=spec["Region"])
        sealed["SecretCiphertext"] = base64.b64encode(kms.encrypt(
            KeyId=os.environ.get("GLUE_AUTH_KMS_KEY_ID", ""), Plaintext=secret.encode(),
            EncryptionContext={"crawl": crawl_id})["CiphertextBlob"]).decode()
        sealed["ResultUri"] = f"{folder}/result.json"
        sealed.pop("Verify", None)
        s3 = boto3.client("s3", region_name=spec["Region"])
        bucket, key = s3files.split_uri(f"{folder}/spec.json")
        s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(sealed).encode())
        emr_client = boto3.client("emr-serverless", region_name=spec["Region"])
        job = emr_client.start_job_run(**emr_job_request(emr, crawl_id, claim.crawler_name, f"s3://{bucket}/{key}"))
        job_id = job["jobRunId"]
        progress({"SparkJobRun": job_id})
        try:
            while True:
                state = emr_client.get_job_run(applicationId=emr["Application"], jobRunId=job_id)["jobRun"]
                if state["state"] in ("SUCCESS", "FAILED", "CANCELLED"):
                    break
                if should_stop():
                    emr_client.cancel_job_run(applicationId=emr["Application"], jobRunId=job_id)
                    return {"Cancelled": True, "Summary": json.dumps({"Cancelled": f"job run {job_id} cancelled"})}
                time.sleep(self.heartbeat_seconds)
            try:
                rbucket, rkey = s3files.split_uri(sealed["ResultUri"])
                answer = json.loads(s3.get_object(Bucket=rbucket, Key=rkey)["Body"].read())
            except Exception:  # noqa: BLE001 - no result file: the job's own state says why
                answer = {}
            if "Result" in answer:
                found: dict[str, Any] = answer["Result"]
                return found
            raise RuntimeError(answer.get("Error") or f"EMR Serverless job run {job_id} ended {state['state']}: "
                               f"{state.get('stateDetails', '')}")
        finally:
            for name in ("spec.json", "result.json"):
                try:
                    s3.delete_object(Bucket=bucket, Key=f"{key.rsplit('/', 1)[0]}/{name}")
                except Exception:  # noqa: BLE001 - best effort; the spec's secret is sealed anyway
                    pass

    def fire_schedules_forever(self, stop: threading.Event, every: float = 0.0) -> None:
        """Fire due schedules every ``every`` (default ``GLUE_CRAWL_SCHEDULE_SECONDS``) seconds
        until ``stop`` is set, whether or not this worker is crawling meanwhile."""
        while not stop.wait(every or SCHEDULE_SECONDS):
            try:
                self.fire_schedules()
            except Exception:  # noqa: BLE001 - a store error must not end the scheduler; retried next round
                log.exception("firing crawler schedules failed; retrying")

    def serve_forever(self, stop: threading.Event, poll_seconds: float = POLL_SECONDS) -> None:
        """Crawl runs as they are queued until ``stop`` is set: one Query every ``poll_seconds``
        while nothing waits."""
        scheduler = threading.Thread(target=self.fire_schedules_forever, args=(stop,), name="crawl-schedules",
                                     daemon=True)
        scheduler.start()
        while not stop.is_set():
            try:
                while self.run_once() and not stop.is_set():
                    pass
            except Exception:  # noqa: BLE001 - a store error must not end the worker; retried next round
                log.exception("crawl worker round failed; retrying")
            stop.wait(poll_seconds)


def _accepts(function: Callable[..., Any], name: str) -> bool:
    """Whether ``function`` takes the keyword ``name`` (a test's stub engine may not)."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def handler(event: Any, context: Any) -> dict[str, int]:
    """The entry point of a deployed worker (a function of its own, packaged with pipelines/ and
    pyarrow; invoked every minute): queue the runs of schedules that are due, then crawl queued runs while the invocation has more than
    ``GLUE_CRAWL_STALE_SECONDS`` left, so a run is never cut off holding a fresh claim for long
    (one cut off anyway is taken over by the next invocation once its heartbeat is stale)."""
    worker = Worker(os.environ.get("GLUE_CRAWL_ENDPOINT", "http://127.0.0.1:8000"))
    fired = worker.fire_schedules()
    crawled = 0
    remaining = getattr(context, "get_remaining_time_in_millis", lambda: 0)
    while remaining() / 1000.0 > worker.stale_seconds and worker.run_once():
        crawled += 1
    return {"fired": fired, "crawled": crawled}


def main(argv: Optional[list[str]] = None) -> None:
    """``python -m pipelines.crawl_worker --endpoint URL``: a worker on its own."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default=os.environ.get("GLUE_CRAWL_ENDPOINT", "http://127.0.0.1:8000"),
                        help="the Glue endpoint the engine writes tables through")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    stop = threading.Event()
    try:
        Worker(args.endpoint).serve_forever(stop)
    except KeyboardInterrupt:
        stop.set()


if __name__ == "__main__":
    main()
