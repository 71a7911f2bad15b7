"""The crawl worker: claims queued crawl runs, runs the crawl engine on them, ends them
(docs/design.md, "Crawlers and crawl runs").

Locally it is a thread of the API server (``infra.local.server.start_crawl_worker``);
``python -m pipelines.crawl_worker`` runs one on its own. Deployed it is a function or job of its
own, never the API Lambda: the engine (``pipelines.crawl``, pyarrow) is imported here, lazily,
on the first run.

The engine gets a boto3 Glue client against this service acting as the crawler's account (in
the open mode the access key id names it: ``<account>:role:<role name>`` for the crawler's Role,
so Lake Formation checks the role's grants) and a boto3 S3 client (AWS_ENDPOINT_URL_S3).
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import threading
import time
import uuid
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
            result = engine.run_crawl(claim.crawler, classifiers=found, glue=glue, s3=s3, should_stop=should_stop,
                                      progress=progress) or {}
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
