"""DynamoDB's data-plane calls sent over plain HTTP, without botocore's per-call machinery.

A botocore call walks the request through the service model, emits some twenty events, resolves
the endpoint ruleset, builds a user agent, signs with SigV4 and goes through urllib3; measured
here, that is 1.8 ms of CPU per TransactWriteItems and 2.4 ms per Query on top of the bytes
themselves. A CreateTable makes five such calls (about 12 of its 14 ms of CPU), an indexed
GetPartitions two. DynamoDB's protocol is simple: a POST of JSON with an ``X-Amz-Target``
header, signed with SigV4. So the operations the store sends on every request go out here:
the parameters as JSON (binary AttributeValues base64-encoded, as botocore does), the
signature computed as botocore's ``SigV4Auth`` computes it (tests/unit/test_dynamo_http.py
checks the two agree), one keep-alive connection per concurrent caller, spoken by
``http1`` (plain HTTP/1.1: ``http.client`` cost 300 µs of CPU more per round trip).

What stays botocore's: everything but a clean answer. An HTTP 200 is parsed here (one
decode, by orjson, binary values decoded); a refusal DynamoDB means (a failed condition, a
cancelled transaction, a validation error) is raised as botocore raises it, the same
exception class with the same ``response`` (``Error``, ``CancellationReasons``). Anything a
retry could cure (throttling, a 5xx, a dropped connection) makes the whole call go again
through the botocore client, whose standard retry mode then handles it as it always did.
Control-plane calls (CreateTable, DescribeTable...) always go through botocore. Setting
``GLUE_DDB_TRANSPORT=botocore`` sends everything through botocore (a way to rule this out).
Proxies (``HTTPS_PROXY`` and the like) are botocore's business too: with one set, nothing is
sent here.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import select
import ssl
import threading
import time
import uuid
import zlib
from typing import Any, Callable, Optional
from urllib.parse import quote, urlsplit


from botocore.exceptions import ClientError

from chalicelib import metrics, settings
from chalicelib.store import documents
from chalicelib.store.dynamo import fast_parse, http1

OPERATIONS = frozenset({"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
                        "BatchWriteItem", "TransactGetItems", "TransactWriteItems"})
ENABLED = settings.current().ddb_direct_transport
_MARK = "_glue_direct_http"
_TARGET_PREFIX = "DynamoDB_20120810."
_CONTENT_TYPE = "application/x-amz-json-1.0"
# Error codes a retry may cure: botocore's standard retry mode retries these (and every 5xx);
# such an answer sends the call again through botocore, which retries with its backoff.
_RETRYABLE_CODES = frozenset({
    "ProvisionedThroughputExceededException", "ThrottlingException", "Throttling", "ThrottledException",
    "RequestThrottledException", "TooManyRequestsException", "RequestLimitExceeded", "RequestThrottled",
    "TransactionInProgressException", "LimitExceededException", "BandwidthLimitExceeded", "SlowDown",
    "RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete", "InternalServerError",
    "ServiceUnavailable",
})
_THROTTLED = frozenset(code for code in _RETRYABLE_CODES if "Throttl" in code or "Limit" in code
                       or code in ("TransactionInProgressException", "SlowDown"))
_IDLE_CONNECTIONS = 32  # kept for reuse; more concurrent callers open (and then close) their own
# A connection idle longer than this is not reused: DynamoDB (and a thawed Lambda's peer) may
# have closed it, and a send on it would fail only to be sent again.
_IDLE_SECONDS = 20.0


class Retry(Exception):
    """This call's answer is one a retry may cure: send it again through botocore (after a
    short random pause when DynamoDB said "slow down": botocore's own first attempt is
    immediate)."""

    def __init__(self, throttled: bool = False) -> None:
        super().__init__()
        self.throttled = throttled

    def pause(self) -> None:
        """Wait a little before the call goes again, if DynamoDB asked to slow down."""
        if self.throttled:
            time.sleep(random.uniform(0.01, 0.05))


def _json_default(value: Any) -> Any:
    """Binary AttributeValues (the only bytes in a DynamoDB request) as botocore sends them."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (set, frozenset)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_json_default)


class Signer:
    """SigV4 for one service and region, as botocore's ``SigV4Auth`` signs a DynamoDB POST
    (the signing key is derived once a day and secret)."""

    def __init__(self, region: str, service: str = "dynamodb") -> None:
        self.region, self.service = region, service
        self._key: tuple[str, str, bytes] = ("", "", b"")

    def _signing_key(self, secret: str, day: str) -> bytes:
        cached_secret, cached_day, key = self._key
        if cached_secret != secret or cached_day != day:
            key = hmac.new(("AWS4" + secret).encode("utf-8"), day.encode("utf-8"), hashlib.sha256).digest()
            for part in (self.region, self.service, "aws4_request"):
                key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
            self._key = (secret, day, key)
        return key

    def headers(self, host: str, path: str, target: str, body: bytes, access_key: str, secret: str,
                token: Optional[str], amz_date: str) -> dict[str, str]:
        """The headers of a signed POST of ``body`` (``amz_date``: ``YYYYMMDDTHHMMSSZ``)."""
        signed = {"content-type": _CONTENT_TYPE, "host": host, "x-amz-date": amz_date, "x-amz-target": target}
        if token:
            signed["x-amz-security-token"] = token
        names = sorted(signed)
        canonical = "\n".join([
            "POST", path, "",
            "".join(f"{name}:{signed[name]}\n" for name in names),
            ";".join(names),
            hashlib.sha256(body).hexdigest(),
        ])
        day = amz_date[:8]
        scope = f"{day}/{self.region}/{self.service}/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
        signature = hmac.new(self._signing_key(secret, day), to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
        headers = {"Content-Type": _CONTENT_TYPE, "Host": host, "X-Amz-Date": amz_date, "X-Amz-Target": target,
                   "Authorization": f"AWS4-HMAC-SHA256 Credential={access_key}/{scope}, "
                                    f"SignedHeaders={';'.join(names)}, Signature={signature}"}
        if token:
            headers["X-Amz-Security-Token"] = token
        return headers


class DirectCaller:
    """Stands in for one botocore DynamoDB client's ``_make_api_call``: the data-plane
    operations go out over plain HTTP, everything else (and every retry) to botocore."""

    def __init__(self, client: Any, botocore_call: Callable[[str, dict[str, Any]], dict[str, Any]],
                 verify: Any = True) -> None:
        self.client = client
        self.botocore_call = botocore_call
        url = urlsplit(client.meta.endpoint_url)
        self._https = url.scheme == "https"
        default_port = 443 if self._https else 80
        self._address = (url.hostname or "", url.port or default_port)
        # As botocore writes the Host header: the netloc (IPv6 brackets kept), default port left out.
        netloc = url.netloc.rsplit("@", 1)[-1]
        self._host = netloc[: -len(f":{default_port}")] if netloc.endswith(f":{default_port}") else netloc
        self._path = quote(url.path or "/", safe="/~")  # as signed and as sent
        self._verify = verify
        self._signer = Signer(client.meta.region_name)
        config = client.meta.config
        self._connect_timeout = config.connect_timeout
        self._read_timeout = config.read_timeout
        self._ssl: Optional[ssl.SSLContext] = None
        self._idle: list[tuple[float, http1.Connection]] = []
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- the botocore interface
    def __call__(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if operation not in OPERATIONS:
            return self.botocore_call(operation, params)
        if operation == "TransactWriteItems" and "ClientRequestToken" not in params:
            # botocore fills this idempotency token in; a retry then resends the same one.
            params = {**params, "ClientRequestToken": str(uuid.uuid4())}
        try:
            return self.send(operation, _ENCODER.encode(params).encode("utf-8"))
        except Retry as retry:
            retry.pause()
        try:
            return self.botocore_call(operation, params)
        except ClientError as error:
            # The attempt sent here counts as one before botocore's: it may have landed
            # (write_tokens reads this count).
            metadata = error.response.setdefault("ResponseMetadata", {})
            metadata["RetryAttempts"] = int(metadata.get("RetryAttempts") or 0) + 1
            raise

    def send(self, operation: str, body: bytes) -> dict[str, Any]:
        """POST ``body`` (the operation's JSON) and return the parsed answer; raises botocore's
        exception for a refusal, :class:`Retry` for what a retry may cure."""
        credentials = self.client._request_signer._credentials
        if credentials is None:
            raise Retry()  # botocore raises its NoCredentialsError
        frozen = credentials.get_frozen_credentials()
        amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        headers = self._signer.headers(self._host, self._path, _TARGET_PREFIX + operation, body,
                                       frozen.access_key, frozen.secret_key, frozen.token, amz_date)
        metrics.count_request()  # a round trip, as botocore's before-send counts one
        status, response_headers, data = self._post(body, headers)
        if status == 200:
            # botocore checks DynamoDB's CRC32 of the body and retries a mismatch (a damaged
            # answer); an answer that is no JSON object is retried the same way.
            checksum = response_headers.get("x-amz-crc32")
            if checksum is not None and checksum.isdigit() and zlib.crc32(data) & 0xFFFFFFFF != int(checksum):
                raise Retry()
            try:
                # By orjson (twice as fast on a Query's answer of 100 items): numbers in
                # AttributeValues are text, and the bare ones (counts, capacity units) small.
                parsed = documents.loads(data) if data else {}
            except ValueError:
                raise Retry() from None
            if not isinstance(parsed, dict):
                raise Retry()
            parsed = fast_parse.decode_binary(parsed)
            parsed["ResponseMetadata"] = {"RequestId": response_headers.get("x-amzn-requestid", ""),
                                          "HTTPStatusCode": 200, "HTTPHeaders": response_headers,
                                          "RetryAttempts": 0}
            return parsed
        raise self._error(operation, status, response_headers, data)

    # ------------------------------------------------------------------------- the wire
    def _post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        try:
            connection = self._take()
        except OSError:
            raise Retry() from None  # unreachable: botocore retries, then raises its own error
        head = "".join([f"POST {self._path} HTTP/1.1\r\n", *(f"{name}: {value}\r\n" for name, value in headers.items()),
                        f"Accept-Encoding: identity\r\nContent-Length: {len(body)}\r\n\r\n"])
        try:
            status, answer_headers, data, will_close = connection.post(head.encode("latin-1"), body)
        except OSError:
            connection.close()  # stale keep-alive, reset, timeout, a garbled answer: botocore retries it
            raise Retry() from None
        if will_close:
            connection.close()
        else:
            self._give_back(connection)
        return status, answer_headers, data

    def _take(self) -> http1.Connection:
        now = time.monotonic()
        while True:
            with self._lock:
                if not self._idle:
                    break
                since, idle = self._idle.pop()
            if now - since < _IDLE_SECONDS and not _closed_by_peer(idle):
                return idle
            idle.close()
        host, port = self._address
        context = None
        if self._https:
            if self._ssl is None:
                from botocore.httpsession import get_cert_path  # only where DynamoDB is HTTPS
                # The client's own CA bundle (AWS_CA_BUNDLE, ca_bundle) or botocore's default.
                self._ssl = ssl.create_default_context(cafile=get_cert_path(self._verify))
            context = self._ssl
        return http1.Connection(host, port, self._connect_timeout, self._read_timeout, context).open()

    def _give_back(self, connection: http1.Connection) -> None:
        with self._lock:
            if len(self._idle) < _IDLE_CONNECTIONS:
                self._idle.append((time.monotonic(), connection))
                return
        connection.close()

    def _error(self, operation: str, status: int, headers: dict[str, str], data: bytes) -> Exception:
        """The exception botocore raises for this refusal (or Retry)."""
        try:
            body = json.loads(data) if data else {}
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        code = str(body.get("__type") or status).rsplit("#", 1)[-1].split(":", 1)[0]
        if status >= 500 or code in _RETRYABLE_CODES or not body:
            return Retry(throttled=code in _THROTTLED)
        response: dict[str, Any] = {
            key: value for key, value in body.items() if key not in ("__type", "message", "Message")}
        for reason in response.get("CancellationReasons") or ():
            if isinstance(reason, dict) and isinstance(reason.get("Item"), dict):
                fast_parse.decode_item(reason["Item"])
        if isinstance(response.get("Item"), dict):
            fast_parse.decode_item(response["Item"])
        response["Error"] = {"Message": body.get("message", body.get("Message", "")), "Code": code}
        response["ResponseMetadata"] = {"RequestId": headers.get("x-amzn-requestid", ""),
                                        "HTTPStatusCode": status, "HTTPHeaders": headers, "RetryAttempts": 0}
        return self.client.exceptions.from_code(code)(response, operation)



def _closed_by_peer(connection: http1.Connection) -> bool:
    """Whether an idle connection's socket is readable: the peer closed or reset it (an idle
    keep-alive connection has nothing else to read). As urllib3 checks before reusing one."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _uses_proxy() -> bool:
    return settings.current().proxy is not None


def install(client: Any) -> Any:
    """Route ``client``'s data-plane calls through a :class:`DirectCaller` (once); returns it.
    Left to botocore entirely: clients behind a proxy, and clients told not to verify TLS."""
    if not ENABLED or getattr(client, _MARK, False) or _uses_proxy():
        return client
    verify = getattr(getattr(client, "_endpoint", None), "http_session", None)
    verify = getattr(verify, "_verify", True)
    if verify is False:
        return client
    client._make_api_call = DirectCaller(client, client._make_api_call, verify)
    setattr(client, _MARK, True)
    return client


def caller(client: Any) -> Optional[DirectCaller]:
    """The client's DirectCaller, if it has one."""
    call = client.__dict__.get("_make_api_call")
    call = getattr(call, "inner", call)  # under write_tokens.TokenCaller
    return call if isinstance(call, DirectCaller) else None
